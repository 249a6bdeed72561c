//! The seed's names, kept so code written against them keeps working: the `execute_*`
//! methods, their `_via_sandbox` forms, `parse_func_expr`, and the definition methods named
//! one per format. Each is a thin wrapper (but `parse_func_expr`, which parses and evaluates
//! the arguments of one call without running it); prefer [`ToolManager::run`] (with
//! [`Request::sandboxed`](crate::dispatch::request::Request::sandboxed) for the sandbox) and
//! [`ToolManager::definitions`]. Nothing in the engine calls these; they live here alone, as
//! rhai keeps its old names in `api/deprecated.rs`.

use serde_json::Value as Json;

use crate::call::{Function, FunctionExpression, FunctionOutput};
use crate::dispatch::manager::ToolManager;
use crate::dispatch::request::Input;
use crate::dispatch::session::Session;
use crate::error::{clip, Error, ErrorKind};
use crate::{eval, syntax};

/// The seed's run methods: one call or several, natively.
impl ToolManager {
    /// Run a [`Function`] the program built (name + evaluated arguments): `run(Input::function(func))`.
    /// For JSON a model wrote, use [`Input::json`]: it reads the text within the limits first.
    ///
    /// ```
    /// use fexpr::{Function, Value};
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let func = Function::from_json(&serde_json::json!({"name": "add", "kwargs": {"a": 2, "b": 3}})).unwrap();
    /// assert_eq!(rt.block_on(manager.execute_func(func)).output, Ok(Value::Int(5)));
    /// ```
    pub async fn execute_func(&self, func: Function) -> FunctionOutput {
        self.run(Input::function(func)).one().await
    }

    /// Parse and run one call expression, exactly as written: its text (`&str`, `String`) or
    /// a [`FunctionExpression`] (its `action`): `run(Input::expr(expr))`. A text holding
    /// several calls gives one error output (use [`run`](ToolManager::run) for a list).
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let out = rt.block_on(manager.execute_func_expr("add(a=2, b=x)"));
    /// assert_eq!(out.output, Ok(fexpr::Value::Int(4)));
    /// ```
    pub async fn execute_func_expr(&self, expr: impl AsRef<str>) -> FunctionOutput {
        self.run(Input::expr(expr.as_ref())).one().await
    }

    /// Run several call expressions concurrently, each exactly as written; one output per
    /// expression, in the same order: `run(Input::func_exprs(exprs))`.
    ///
    /// ```
    /// use fexpr::FunctionExpression;
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let exprs = [FunctionExpression::new("add(a=1, b=2)"), FunctionExpression::new("multiply(a=2, b=3)")];
    /// let outs = rt.block_on(manager.execute_func_exprs(&exprs));
    /// assert_eq!(outs[1].output, Ok(fexpr::Value::Int(6)));
    /// ```
    pub async fn execute_func_exprs(&self, exprs: &[FunctionExpression]) -> Vec<FunctionOutput> {
        self.run(Input::func_exprs(exprs.to_vec())).await.outputs
    }

    /// Parse one call expression and evaluate its arguments, without running the tool.
    /// Arguments that are themselves tool calls are refused here (they would have to run).
    /// To validate a call without running it, prefer [`check`](ToolManager::check).
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let func = manager.parse_func_expr("add(a=x, b=3)")?;
    /// assert_eq!(func.name, "add");
    /// assert_eq!(func.kwarg("a"), Some(&fexpr::Value::Int(2)));
    /// assert!(manager.parse_func_expr("add(a=add(a=1, b=2), b=3)").is_err());
    /// assert!(manager.parse_func_expr("add(a=1, a=2)").is_err());
    /// # Ok::<(), fexpr::Error>(())
    /// ```
    pub fn parse_func_expr(&self, expr: &str) -> Result<Function, Error> {
        let parsed = syntax::parse(expr, self.limits())?;
        let call = parsed.as_call()?;
        // As Python refuses `f(a=1, a=2)`: a `Function` holds each keyword once.
        let names = call.kwargs.iter().map(|k| Some(k.name.as_str()));
        let repeat = crate::call::first_repeat(names).and_then(|(_, again)| call.kwargs.get(again));
        if let Some(k) = repeat {
            return Err(Error::new(
                ErrorKind::Arguments,
                format!("keyword argument `{}` repeated", clip(&k.name, 40)),
            )
            .at(k.name_span));
        }
        let args = call
            .args
            .iter()
            .map(|a| eval::eval_pure(a, self.context(), self.limits()))
            .collect::<Result<Vec<_>, _>>()?;
        let kwargs = call
            .kwargs
            .iter()
            .map(|k| {
                eval::eval_pure(&k.value, self.context(), self.limits())
                    .map(|v| (k.name.clone(), v))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Function {
            name: call.func.clone(),
            args,
            kwargs,
        })
    }
}

/// The seed's run methods inside the sandbox: `run(...).sandboxed()`.
#[cfg(feature = "sandbox")]
impl ToolManager {
    /// [`execute_func`](ToolManager::execute_func) inside the sandbox: the call's JSON form
    /// is evaluated in a fresh guest instance: `run(Input::function(func)).sandboxed()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Runtime::new().unwrap();
    /// let func = fexpr::Function::from_json(&serde_json::json!({"name": "add", "args": [2, 3]})).unwrap();
    /// let out = rt.block_on(manager.execute_func_via_sandbox(func));
    /// assert_eq!(out.output, Ok(fexpr::Value::Int(5)));
    /// assert!(out.receipt.is_some());
    /// ```
    pub async fn execute_func_via_sandbox(&self, func: Function) -> FunctionOutput {
        self.run(Input::function(func)).sandboxed().one().await
    }

    /// [`execute_func_expr`](ToolManager::execute_func_expr) inside the sandbox: one call
    /// expression in a fresh guest instance: `run(Input::expr(expr)).sandboxed()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Runtime::new().unwrap();
    /// let out = rt.block_on(manager.execute_func_expr_via_sandbox(
    ///     "add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})",
    /// ));
    /// assert_eq!(out.output.unwrap().repr(), "Point(x=4, y=6)");
    /// ```
    pub async fn execute_func_expr_via_sandbox(&self, expr: impl AsRef<str>) -> FunctionOutput {
        self.run(Input::expr(expr.as_ref())).sandboxed().one().await
    }

    /// [`execute_func_exprs`](ToolManager::execute_func_exprs) inside the sandbox: each
    /// expression in its own fresh instance, all concurrently; outputs in the same order:
    /// `run(Input::func_exprs(exprs)).sandboxed()`.
    ///
    /// ```
    /// use fexpr::FunctionExpression;
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Runtime::new().unwrap();
    /// let exprs = [FunctionExpression::new("add(a=1, b=2)"), FunctionExpression::new("multiply(a=2, b=3)")];
    /// let outs = rt.block_on(manager.execute_func_exprs_via_sandbox(&exprs));
    /// assert_eq!(outs[0].output, Ok(fexpr::Value::Int(3)));
    /// ```
    pub async fn execute_func_exprs_via_sandbox(
        &self,
        exprs: &[FunctionExpression],
    ) -> Vec<FunctionOutput> {
        self.run(Input::func_exprs(exprs.to_vec()))
            .sandboxed()
            .await
            .outputs
    }
}

/// The seed's definition methods, one per format: each is `definitions()` (or
/// `definitions_in(session)`) and one of the renderings of
/// [`Definitions`](crate::dispatch::definitions::Definitions).
impl ToolManager {
    /// AdalFlow's `FunctionDefinition` objects: `definitions().functions()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// assert_eq!(manager.function_definitions(), manager.definitions().functions());
    /// ```
    pub fn function_definitions(&self) -> Vec<Json> {
        self.definitions().functions()
    }

    /// AdalFlow's `FunctionDefinition` objects of the tools available in `session`: `definitions_in(session).functions()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let s = fexpr::Session::new();
    /// assert_eq!(manager.function_definitions_in(&s), manager.definitions_in(&s).functions());
    /// ```
    pub fn function_definitions_in(&self, session: &Session) -> Vec<Json> {
        self.definitions_in(session).functions()
    }

    /// OpenAI `tools`: `definitions().openai()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// assert_eq!(manager.openai_tools(), manager.definitions().openai());
    /// ```
    pub fn openai_tools(&self) -> Json {
        self.definitions().openai()
    }

    /// OpenAI `tools` available in `session`: `definitions_in(session).openai()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let s = fexpr::Session::new();
    /// assert_eq!(manager.openai_tools_in(&s), manager.definitions_in(&s).openai());
    /// ```
    pub fn openai_tools_in(&self, session: &Session) -> Json {
        self.definitions_in(session).openai()
    }

    /// OpenAI `tools` in strict mode: `definitions().openai_strict()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// assert_eq!(manager.openai_tools_strict(), manager.definitions().openai_strict());
    /// ```
    pub fn openai_tools_strict(&self) -> Json {
        self.definitions().openai_strict()
    }

    /// Anthropic `tools`: `definitions().anthropic()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// assert_eq!(manager.anthropic_tools(), manager.definitions().anthropic());
    /// ```
    pub fn anthropic_tools(&self) -> Json {
        self.definitions().anthropic()
    }

    /// The function definitions as pretty JSON: `definitions().json()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// assert_eq!(manager.json_definitions(), manager.definitions().json());
    /// ```
    pub fn json_definitions(&self) -> String {
        self.definitions().json()
    }

    /// The function definitions as YAML: `definitions().yaml()`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// assert_eq!(manager.yaml_definitions(), manager.definitions().yaml());
    /// ```
    pub fn yaml_definitions(&self) -> String {
        self.definitions().yaml()
    }
}

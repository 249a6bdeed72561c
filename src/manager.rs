//! [`ToolManager`]: tools plus context, definitions for prompts, and execution of what a model
//! wrote (expressions, `Function` JSON, `FunctionExpression` JSON), natively on tokio.

use indexmap::IndexMap;
use serde_json::Value as Json;
use std::sync::Arc;

use crate::call::{Function, FunctionExpression, FunctionOutput};
use crate::context::{Context, Entry};
use crate::error::{clip, closest, Error, ErrorKind, Span};
use crate::eval::{self, Dispatch, ToolRequest, UnitOutcome};
use crate::limits::Limits;
use crate::syntax::{self, ExprKind};
use crate::tool::{Tool, ToolDefinition};
use crate::value::Value;

/// Tools, the context expressions may use, and limits.
///
/// ```
/// use fexpr::{Context, FunctionTool, ToolManager};
/// let manager = ToolManager::new()
///     .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b))
///     .context(Context::new().variable("x", 2));
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let out = rt.block_on(manager.execute_func_expr("add(a=x, b=3)"));
/// assert_eq!(out.output, Some(fexpr::Value::Int(5)));
/// let bad = rt.block_on(manager.execute_func_expr("add(a=1, c=2)"));
/// assert_eq!(bad.error.unwrap().kind, fexpr::ErrorKind::Arguments);
/// ```
#[derive(Clone, Default)]
pub struct ToolManager {
    tools: IndexMap<String, Arc<dyn Tool>>,
    context: Context,
    limits: Limits,
    #[cfg(feature = "sandbox")]
    pub(crate) sandboxed: crate::sandbox::ManagerSandbox,
}

impl ToolManager {
    /// A manager with no tools, an empty context and default limits.
    pub fn new() -> ToolManager {
        ToolManager::default()
    }

    /// Add (or replace) a tool.
    pub fn tool(mut self, tool: impl Tool + 'static) -> ToolManager {
        self.add_tool(Arc::new(tool));
        self
    }

    /// Add (or replace) a shared tool.
    pub fn add_tool(&mut self, tool: Arc<dyn Tool>) -> &mut ToolManager {
        let def = tool.definition();
        self.context
            .insert(def.name.clone(), Entry::Tool(def.signature.clone()));
        self.tools.insert(def.name.clone(), tool);
        self.changed();
        self
    }

    /// Add the names of `context` (variables, record types, functions); tools stay.
    pub fn context(mut self, context: Context) -> ToolManager {
        for (name, entry) in context.entries() {
            self.context.insert(name, entry.clone());
        }
        self.changed();
        self
    }

    /// Replace the limits.
    pub fn limits(mut self, limits: Limits) -> ToolManager {
        self.limits = limits;
        self.changed();
        self
    }

    /// The tools, context or limits changed: what was prepared from them is stale.
    fn changed(&mut self) {
        #[cfg(feature = "sandbox")]
        self.sandboxed.reset();
    }

    /// The limits in force.
    pub fn get_limits(&self) -> &Limits {
        &self.limits
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values()
    }

    /// The tool called `name`.
    pub fn get_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Everything an expression can reach: tools, variables, record types, functions.
    pub fn get_context(&self) -> &Context {
        &self.context
    }

    /// The tools' definitions.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools.values().map(|t| t.definition())
    }

    /// AdalFlow's `FunctionDefinition` objects.
    pub fn function_definitions(&self) -> Vec<Json> {
        self.definitions()
            .map(ToolDefinition::function_definition)
            .collect()
    }

    /// The function definitions as pretty JSON.
    pub fn json_definitions(&self) -> String {
        serde_json::to_string_pretty(&self.function_definitions()).unwrap_or_default()
    }

    /// The function definitions as YAML (more compact in a prompt).
    pub fn yaml_definitions(&self) -> String {
        serde_yaml_ng::to_string(&self.function_definitions()).unwrap_or_default()
    }

    /// OpenAI `tools`.
    pub fn openai_tools(&self) -> Json {
        Json::Array(self.definitions().map(ToolDefinition::openai).collect())
    }

    /// Anthropic `tools`.
    pub fn anthropic_tools(&self) -> Json {
        Json::Array(self.definitions().map(ToolDefinition::anthropic).collect())
    }

    /// Parse one call expression and evaluate its arguments, without running the tool.
    /// Arguments that are themselves tool calls are refused here (they would have to run).
    pub fn parse_func_expr(&self, expr: &str) -> Result<Function, Error> {
        let parsed = syntax::parse(expr, &self.limits)?;
        let ExprKind::Call(call) = &parsed.kind else {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "expected a function call like `name(arg=...)`",
            )
            .at(parsed.span));
        };
        let args = call
            .args
            .iter()
            .map(|a| eval::eval_pure(a, &self.context, &self.limits))
            .collect::<Result<Vec<_>, _>>()?;
        let kwargs = call
            .kwargs
            .iter()
            .map(|k| {
                eval::eval_pure(&k.value, &self.context, &self.limits).map(|v| (k.name.clone(), v))
            })
            .collect::<Result<IndexMap<_, _>, _>>()?;
        Ok(Function {
            name: call.func.clone(),
            args,
            kwargs,
        })
    }

    /// Run a [`Function`] (name + evaluated arguments, e.g. from a model's JSON).
    pub async fn execute_func(&self, func: Function) -> FunctionOutput {
        let input = func.to_json().to_string();
        let span = Span::default();
        let request = ToolRequest {
            name: func.name.clone(),
            span,
            args: func.args.iter().cloned().map(|v| (v, span)).collect(),
            kwargs: func
                .kwargs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone(), span))
                .collect(),
        };
        let mut results = NativeDispatch { manager: self }
            .dispatch(vec![request])
            .await;
        let result = results
            .pop()
            .unwrap_or_else(|| Err(Error::new(ErrorKind::Sandbox, "no result")));
        output(func.name.clone(), input, Some(func), result)
    }

    /// Parse and run one call expression.
    pub async fn execute_func_expr(&self, expr: impl Into<FunctionExpression>) -> FunctionOutput {
        let expr = expr.into();
        let outputs = self.execute(&expr.action).await;
        single_output(&expr.action, outputs)
    }

    /// Run several call expressions concurrently; outputs in the same order.
    pub async fn execute_func_exprs(&self, exprs: &[FunctionExpression]) -> Vec<FunctionOutput> {
        let texts: Vec<&str> = exprs.iter().map(|e| e.action.as_str()).collect();
        self.execute_sources(&texts).await
    }

    /// Run what a model wrote: one call, or a list/tuple of calls (run concurrently).
    /// One output per call, in order.
    pub async fn execute(&self, text: &str) -> Vec<FunctionOutput> {
        self.execute_sources(&[text]).await
    }

    /// Run the JSON forms: a `Function` (`{"name", "kwargs"}`), a `FunctionExpression`
    /// (`{"action"}`), or a list of either.
    pub async fn execute_json(&self, json: &Json) -> Vec<FunctionOutput> {
        self.execute_json_with(json, |expr| self.execute_func_expr(expr))
            .await
    }

    /// The JSON forms, with `FunctionExpression`s run by `run_expr`.
    pub(crate) async fn execute_json_with<F, Fut>(
        &self,
        json: &Json,
        run_expr: F,
    ) -> Vec<FunctionOutput>
    where
        F: Fn(FunctionExpression) -> Fut,
        Fut: std::future::Future<Output = FunctionOutput>,
    {
        let items: Vec<&Json> = match json {
            Json::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        let run_expr = &run_expr;
        let futures = items.into_iter().map(|item| async move {
            if item.get("action").is_some() {
                match FunctionExpression::from_json(item) {
                    Ok(fe) => run_expr(fe).await,
                    Err(e) => FunctionOutput::failed("", item.to_string(), e),
                }
            } else {
                match Function::from_json(item) {
                    Ok(f) => self.execute_func(f).await,
                    Err(e) => FunctionOutput::failed("", item.to_string(), e),
                }
            }
        });
        futures_util::future::join_all(futures).await
    }

    async fn execute_sources(&self, texts: &[&str]) -> Vec<FunctionOutput> {
        let parsed: Vec<Result<syntax::Expr, Error>> = texts
            .iter()
            .map(|t| syntax::parse(t, &self.limits))
            .collect();
        let mut units = Vec::new();
        for (i, p) in parsed.iter().enumerate() {
            if let Ok(expr) = p {
                units.extend(eval::units(expr).into_iter().map(|u| (i, u)));
            }
        }
        let exprs: Vec<&syntax::Expr> = units.iter().map(|(_, u)| *u).collect();
        let outcomes = eval::run(
            &exprs,
            &self.context,
            &self.limits,
            &NativeDispatch { manager: self },
        )
        .await;
        let owners: Vec<usize> = units.iter().map(|(i, _)| *i).collect();
        drop(units);
        let mut outcomes = owners.into_iter().zip(outcomes).peekable();
        let mut outputs = Vec::new();
        for (i, p) in parsed.into_iter().enumerate() {
            match p {
                Err(e) => outputs.push(FunctionOutput::failed(clip(texts[i], 60), texts[i], e)),
                Ok(_) => {
                    while let Some((_, outcome)) = outcomes.next_if(|(owner, _)| *owner == i) {
                        outputs.push(unit_output(texts[i], outcome));
                    }
                }
            }
        }
        outputs
    }

    /// Bind, check and run one request against the registered tool.
    async fn run_request(&self, request: ToolRequest) -> Result<crate::tool::ToolOutput, Error> {
        let Some(tool) = self.tools.get(&request.name) else {
            let mut e = Error::new(
                ErrorKind::UnknownTool,
                format!("tool `{}` is not defined", clip(&request.name, 60)),
            )
            .at(request.span);
            if let Some(near) = closest(&request.name, self.tools.keys().map(String::as_str)) {
                e = e.with_hint(format!("did you mean `{near}`?"));
            }
            return Err(e);
        };
        let def = tool.definition();
        let args = def
            .signature
            .bind(request.args, request.kwargs, request.span)?;
        let mut out = tool.call(args).await.map_err(|e| e.at(request.span))?;
        let size = out.output.approx_size();
        if size > self.limits.max_output_bytes {
            return Err(
                Error::limit("max_output_bytes", self.limits.max_output_bytes, size)
                    .at(request.span),
            );
        }
        out.output = def.return_type.coerce_result(out.output);
        Ok(out)
    }
}

/// The one output of a text that should hold one call, or an error saying it held several.
pub(crate) fn single_output(text: &str, mut outputs: Vec<FunctionOutput>) -> FunctionOutput {
    if outputs.len() == 1 {
        if let Some(output) = outputs.pop() {
            return output;
        }
    }
    FunctionOutput::failed(
        clip(text, 60),
        text,
        Error::new(
            ErrorKind::Unsupported,
            format!("expected one call, found {}", outputs.len()),
        )
        .with_hint("use ToolManager::execute for a list of calls"),
    )
}

/// Turn a unit's outcome into the output a caller sees.
pub(crate) fn unit_output(source: &str, outcome: UnitOutcome) -> FunctionOutput {
    let input = source
        .get(outcome.span.range())
        .unwrap_or(source)
        .to_string();
    let name = outcome
        .call
        .as_ref()
        .map_or_else(|| clip(&input, 60), |f| f.name.clone());
    output(name, input, outcome.call, outcome.result)
}

fn output(
    name: String,
    input: String,
    call: Option<Function>,
    result: Result<Value, Error>,
) -> FunctionOutput {
    let (output, observation, error) = match result {
        Ok(v) => (Some(v), None, None),
        Err(e) => (None, None, Some(e)),
    };
    FunctionOutput {
        name,
        input,
        parsed_input: call,
        output,
        observation,
        error,
        receipt: None,
    }
}

/// Runs a batch of requests concurrently on the current task.
pub(crate) struct NativeDispatch<'m> {
    pub(crate) manager: &'m ToolManager,
}

impl Dispatch for NativeDispatch<'_> {
    async fn dispatch(&self, requests: Vec<ToolRequest>) -> Vec<Result<Value, Error>> {
        if let [_] = requests.as_slice() {
            let request = requests.into_iter().next();
            return match request {
                Some(r) => vec![self.manager.run_request(r).await.map(|o| o.output)],
                None => vec![],
            };
        }
        let futures = requests.into_iter().map(|r| self.manager.run_request(r));
        futures_util::future::join_all(futures)
            .await
            .into_iter()
            .map(|r| r.map(|o| o.output))
            .collect()
    }
}

//! Tools: the [`Tool`] trait, [`FunctionTool`] for ordinary Rust functions, and the
//! [`ToolDefinition`] shown to models in every common format.
//!
//! A tool's parameters are a JSON Schema (generated from the Rust argument types by
//! `schemars`, or given by an MCP server); the same schema becomes the record type that
//! arguments are bound and coerced against before the tool runs.

use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

pub use crate::call::ToolOutput;
use crate::dispatch::session::{CallContext, Session};
use crate::error::{clip, Error, ErrorKind};
use crate::types::{RecordType, Type};
use crate::value::Value;

/// The future a tool returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, Error>> + Send>>;

/// Something a model can call.
///
/// Implement it for tools whose shape is not a Rust function (an MCP server's tool, a tool
/// defined by JSON Schema); use [`FunctionTool`] for functions.
pub trait Tool: Send + Sync {
    /// Name, description, parameter schema and signature.
    fn definition(&self) -> &ToolDefinition;
    /// Run with bound, coerced arguments: one entry per parameter in signature order, `None`
    /// for an optional parameter that was not given.
    fn call(&self, args: Vec<Option<Value>>) -> ToolFuture;

    /// What the tool needs beyond a plain call (a [`CallContext`], an observation formatter,
    /// an availability predicate, `ends_turn`, memoisation). `None`, the default, for plain
    /// tools: the manager then calls [`call`](Tool::call) directly.
    fn features(&self) -> Option<&ToolFeatures> {
        None
    }

    /// Run with the call's context; the manager uses this when [`features`](Tool::features)
    /// is `Some` (except for a cached tool: see [`ToolFeatures::cached`]). The default ignores
    /// the context.
    fn call_in(&self, args: Vec<Option<Value>>, context: CallContext) -> ToolFuture {
        let _ = context;
        self.call(args)
    }

    /// Whether the tool can be used as it was configured; `Err` says everything that is wrong
    /// (for a [`FunctionTool`]: a default of the wrong type, a parameter name it does not have,
    /// `.cached()` on a tool that receives a [`CallContext`]), as [`ErrorKind::Config`] errors.
    /// [`ToolManagerBuilder::build`](crate::dispatch::manager::ToolManagerBuilder::build) refuses a tool
    /// with problems. The default: no problems.
    ///
    /// ```
    /// use fexpr::{CallContext, FunctionTool, Tool};
    /// let whoami = FunctionTool::with_context("whoami", [], |ctx: CallContext| {
    ///     ctx.session().get_id().unwrap_or("").to_string()
    /// });
    /// assert!(whoami.check().is_ok());
    /// let error = whoami.cached(100).check().unwrap_err();
    /// assert_eq!(error.message, "tool `whoami` receives injected values (CallContext) and cannot be cached: its result may differ per session");
    /// ```
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// How a tool is described to a model, and the signature its arguments are bound to.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The name a model calls.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the parameters: an object with `properties` and `required`.
    pub parameters: Json,
    /// JSON Schema of the result, when known.
    pub returns: Option<Json>,
    /// The parameters as a signature (derived from `parameters`).
    pub signature: Arc<RecordType>,
    /// The result type (derived from `returns`), used to give results their record types.
    pub return_type: Type,
}

impl ToolDefinition {
    /// A definition from a name, description and parameter schema.
    ///
    /// ```
    /// let def = fexpr::ToolDefinition::new("echo", "Echo a message.", serde_json::json!({
    ///     "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}));
    /// assert_eq!(def.python_signature(), "echo(message: str)");
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Json,
    ) -> ToolDefinition {
        let name = name.into();
        let signature = Arc::new(RecordType::from_schema(&name, &parameters));
        ToolDefinition {
            name,
            description: description.into(),
            parameters,
            returns: None,
            signature,
            return_type: Type::Any,
        }
    }

    /// The same definition with a result schema.
    pub fn with_returns(mut self, returns: Json) -> ToolDefinition {
        self.return_type = Type::from_schema(&returns, &returns);
        self.returns = Some(returns);
        self
    }

    /// `add(a: int, b: int) -> int`
    pub fn python_signature(&self) -> String {
        match &self.return_type {
            Type::Any => self.signature.to_string(),
            t => format!("{} -> {t}", self.signature),
        }
    }

    /// AdalFlow's `FunctionDefinition`: `func_name`, `func_desc` (signature + docstring),
    /// `func_parameters`.
    pub fn function_definition(&self) -> Json {
        json!({
            "func_name": self.name,
            "func_desc": format!("{}\n{}", self.python_signature(), self.description),
            "func_parameters": self.parameters,
        })
    }

    /// OpenAI's `tools` entry.
    pub fn openai(&self) -> Json {
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}})
    }

    /// OpenAI's `tools` entry in strict mode (`"strict": true`): every object closed
    /// (`additionalProperties: false`) and listing all its fields in `required` (an optional
    /// parameter of type `T | None` allows `null`), no `default` (named in the description
    /// instead) and no `format`; `$defs` and `$ref` are kept, as OpenAI accepts them. The
    /// rules and their sources (OpenAI's Structured Outputs and function-calling guides) are
    /// cited at `schema::strict_schema`.
    ///
    /// ```
    /// use fexpr::{FunctionTool, Tool};
    /// let f = FunctionTool::new("scale", ["x", "by"], |x: f64, by: Option<f64>| x * by.unwrap_or(2.0))
    ///     .param_description("by", "The factor.")
    ///     .default("by", 2.0);
    /// let tool = f.definition().openai_strict();
    /// assert_eq!(tool["function"]["strict"], true);
    /// let parameters = &tool["function"]["parameters"];
    /// assert_eq!(parameters["required"], serde_json::json!(["x", "by"]));
    /// assert_eq!(parameters["additionalProperties"], false);
    /// assert_eq!(parameters["properties"]["by"], serde_json::json!(
    ///     {"type": ["number", "null"], "description": "The factor. (default: 2.0)"}));
    /// ```
    pub fn openai_strict(&self) -> Json {
        let mut parameters = self.parameters.clone();
        crate::types::schema::strict_schema(&mut parameters);
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": parameters,
            "strict": true}})
    }

    /// Anthropic's `tools` entry.
    pub fn anthropic(&self) -> Json {
        json!({"name": self.name, "description": self.description, "input_schema": self.parameters})
    }

    /// MCP's `Tool` object.
    pub fn mcp(&self) -> Json {
        let mut tool = json!({"name": self.name, "description": self.description, "inputSchema": self.parameters});
        if let (Some(returns), Some(map)) = (&self.returns, tool.as_object_mut()) {
            map.insert("outputSchema".into(), returns.clone());
        }
        tool
    }

    /// One signature line plus the description: the compact form for prompts.
    pub fn python(&self) -> String {
        let doc = self.description.trim();
        if doc.is_empty() {
            format!("def {}", self.python_signature())
        } else {
            format!(
                "def {}\n    \"\"\"{}\"\"\"",
                self.python_signature(),
                doc.replace("\"\"\"", "\\\"\\\"\\\"")
            )
        }
    }
}

/// Marks [`ToolReturn`] for a value returned as it is (`T: Serialize + JsonSchema`).
pub enum Plain {}
/// Marks [`ToolReturn`] for a [`ToolOutput`] (an output with its own observation).
pub enum Output {}
/// Marks [`ToolReturn`] for a `Result` whose `Ok` value is returned as `M` says.
pub struct Fallible<M>(std::marker::PhantomData<M>);

/// What a tool function may return, sync or async, with or without a [`CallContext`]:
///
/// - `T` where `T: Serialize + JsonSchema` (its schema is the tool's result schema);
/// - [`ToolOutput`]: an output with the text the model should see;
/// - `Result<T, E>` or `Result<ToolOutput, E>` for any `E: Into<ToolError>`: a [`ToolError`],
///   an [`Error`] (its kind and hint are kept: a pool's `Limit` stays `Limit`), any
///   `std::error::Error + Send + Sync` (`std::io::Error`, `anyhow::Error`, …), a `String`.
///
/// `M` is a marker that keeps these apart; it is inferred. One case is ambiguous: a
/// `Result` whose error type is itself serializable (`Result<T, String>`) is both a value and
/// a failure to the compiler ("type annotations needed"); return a [`ToolError`]
/// (`.map_err(ToolError::new)`) instead. `#[fexpr::tool]` functions have no such case.
///
/// ```
/// use fexpr::{FunctionTool, ToolOutput, Value};
/// use fexpr::tool::ToolError;
/// let half = FunctionTool::new("half", ["n"], |n: i64| -> Result<i64, ToolError> {
///     if n % 2 == 1 { return Err(ToolError::new("odd")); }
///     Ok(n / 2)
/// });
/// let read = FunctionTool::new("read", ["path"], |path: String| -> Result<String, std::io::Error> {
///     std::fs::read_to_string(path)
/// });
/// let shown = FunctionTool::new("shown", [], || ToolOutput::new(Value::Int(3)).with_observation("three"));
/// # let _ = (half, read, shown);
/// ```
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`",
    label = "this is returned by the tool",
    note = "a tool returns `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E: Into<fexpr::tool::ToolError>` (a `ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync`, a `String`)"
)]
pub trait ToolReturn<M>: Send + 'static {
    /// The JSON Schema of the value (`{}`, anything, for a [`ToolOutput`]).
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json;
    /// The output, or the tool's failure.
    fn into_output(self) -> Result<ToolOutput, Error>;
}

impl<T: Serialize + schemars::JsonSchema + Send + 'static> ToolReturn<Plain> for T {
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        generator.subschema_for::<T>().to_value()
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        Value::from_serialize(&self).map(ToolOutput::from)
    }
}

impl ToolReturn<Output> for ToolOutput {
    fn schema(_: &mut schemars::SchemaGenerator) -> Json {
        json!({})
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        Ok(self)
    }
}

impl<T, E, M> ToolReturn<Fallible<M>> for Result<T, E>
where
    T: ToolReturn<M>,
    E: Into<ToolError> + Send + 'static,
{
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        T::schema(generator)
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        match self {
            Ok(value) => value.into_output(),
            Err(e) => Err(e.into().0),
        }
    }
}

/// A tool's failure: the [`Error`] the call reports to the model.
///
/// [`ToolError::new`] makes a `ToolFailed` error from a message. Any error converts with `?`
/// or `.into()`: an [`Error`] keeps its kind and hint (the `Limit` error of an empty
/// [`EnvPool`](crate::dispatch::pool::EnvPool) stays `Limit`; its span, which points into another
/// text, is dropped), any other error (`std::io::Error`, `anyhow::Error`, a `String`, a
/// `&str`) becomes a `ToolFailed` error with its message.
///
/// ```
/// use fexpr::tool::ToolError;
/// use fexpr::{Error, ErrorKind, LimitKind};
/// fn divide(a: f64, b: f64) -> Result<f64, ToolError> {
///     if b == 0.0 { return Err(ToolError::new("cannot divide by zero")); }
///     Ok(a / b)
/// }
/// assert_eq!(divide(1.0, 0.0).unwrap_err().error().message, "cannot divide by zero");
///
/// fn parse(text: &str) -> Result<i64, ToolError> {
///     Ok(text.parse::<i64>()?) // a ParseIntError: `ToolFailed`, with its message
/// }
/// assert_eq!(parse("x").unwrap_err().error().kind, ErrorKind::ToolFailed);
///
/// let busy = ToolError::from(Error::limit(LimitKind::PoolWait, "2 s", "2.5 s"));
/// assert_eq!(busy.error().kind, ErrorKind::Limit);
/// assert_eq!(busy.error().limit, Some(LimitKind::PoolWait));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError(Error);

impl ToolError {
    /// A `ToolFailed` error with a message the model can read.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(Error::new(ErrorKind::ToolFailed, message))
    }

    /// The same failure with a hint: what the model could do instead.
    pub fn with_hint(self, hint: impl Into<String>) -> ToolError {
        ToolError(self.0.with_hint(hint))
    }

    /// The error the call reports.
    pub fn error(&self) -> &Error {
        &self.0
    }
}

impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for ToolError {
    fn from(error: E) -> ToolError {
        match error.into().downcast::<Error>() {
            Ok(error) => ToolError(Error {
                span: None,
                ..*error
            }),
            Err(other) => ToolError::new(other.to_string()),
        }
    }
}

impl From<ToolError> for Error {
    fn from(error: ToolError) -> Error {
        error.0
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

type BoundArgs = Vec<Option<Value>>;
/// A sync function behind the bound arguments (and the call's context, for context tools).
type SyncBody = dyn Fn(BoundArgs, Option<CallContext>) -> Result<ToolOutput, Error> + Send + Sync;
/// An async function behind the bound arguments (and the call's context).
type AsyncBody = dyn Fn(BoundArgs, Option<CallContext>) -> ToolFuture + Send + Sync;

/// The function a [`FunctionTool`] runs.
#[derive(Clone)]
enum Body {
    Sync(Arc<SyncBody>),
    Async(Arc<AsyncBody>),
}

/// A tool made from a Rust function or closure, sync or async.
///
/// Parameter names are given with the function (Rust keeps no names at run time; the
/// `#[fexpr::tool]` attribute reads them from the signature); their types
/// give the JSON Schema. `Option<T>` parameters are optional.
///
/// A sync function runs on tokio's blocking thread pool, so the calls of one response run
/// concurrently and a deadline can return while the function still runs; mark cheap,
/// non-blocking functions [`inline`](FunctionTool::inline) to run them on the calling task.
///
/// Configuration mistakes (a default of the wrong type, a parameter name that does not
/// exist, a cached tool that receives a [`CallContext`]) are not panics: they are recorded
/// and reported by [`Tool::check`], which the manager runs for every tool.
///
/// ```
/// use fexpr::{FunctionTool, Tool};
/// let add = FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b).description("Add two numbers.");
/// assert_eq!(add.definition().python_signature(), "add(a: int, b: int) -> int");
/// ```
pub struct FunctionTool {
    definition: ToolDefinition,
    body: Body,
    /// Run a sync body on the calling task rather than on the blocking pool.
    inline: bool,
    /// Made with `with_context*`: the function receives a [`CallContext`].
    takes_context: bool,
    features: Option<Box<ToolFeatures>>,
    /// What [`Tool::check`] reports: how the tool was misconfigured.
    problems: Vec<Error>,
}

impl FunctionTool {
    /// A tool from a sync function. It runs on tokio's blocking thread pool (see
    /// [`inline`](FunctionTool::inline) for cheap functions).
    pub fn new<Args, M, F: SyncFn<Args, M>>(
        name: impl Into<String>,
        params: F::Names,
        f: F,
    ) -> FunctionTool {
        let names = F::names(&params);
        let (parameters, returns) = schema_for(&names, F::schemas);
        let body: Arc<SyncBody> = Arc::new(move |args, _| f.invoke(&names, args));
        FunctionTool::build(name.into(), parameters, returns, Body::Sync(body), false)
    }

    /// A tool from an async function (a closure returning a future). It runs on the calling
    /// task, as futures do.
    pub fn new_async<Args, M, F: AsyncFn<Args, M>>(
        name: impl Into<String>,
        params: F::Names,
        f: F,
    ) -> FunctionTool {
        let names = F::names(&params);
        let (parameters, returns) = schema_for(&names, F::schemas);
        let body: Arc<AsyncBody> = Arc::new(move |args, _| f.invoke(&names, args));
        FunctionTool::build(name.into(), parameters, returns, Body::Async(body), false)
    }

    /// A tool from a sync function that also receives the call's [`CallContext`] as its first
    /// argument: the injected `tool_call_id`, the caller's state, registered dependencies,
    /// status and partial-result reporting. The context is not a parameter: it is not in
    /// the schema and an expression cannot set it. Called outside a manager
    /// ([`Tool::call`]), the function gets a detached context.
    ///
    /// ```
    /// use fexpr::{CallContext, FunctionTool, Tool};
    /// let echo = FunctionTool::with_context("echo", ["text"], |ctx: CallContext, text: String| {
    ///     format!("{text} (call {})", ctx.tool_call_id())
    /// });
    /// assert_eq!(echo.definition().python_signature(), "echo(text: str) -> str");
    /// ```
    pub fn with_context<Args, M, F: ContextFn<Args, M>>(
        name: impl Into<String>,
        params: F::Names,
        f: F,
    ) -> FunctionTool {
        let name = name.into();
        let names = F::names(&params);
        let (parameters, returns) = schema_for(&names, F::schemas);
        let tool = name.clone();
        let body: Arc<SyncBody> = Arc::new(move |args, context: Option<CallContext>| {
            let context = context.unwrap_or_else(|| CallContext::detached(&tool));
            f.invoke(context, &names, args)
        });
        FunctionTool::build(name, parameters, returns, Body::Sync(body), true)
    }

    /// A tool from an async function that receives the call's [`CallContext`] first (see
    /// [`with_context`](FunctionTool::with_context)).
    pub fn with_context_async<Args, M, F: AsyncContextFn<Args, M>>(
        name: impl Into<String>,
        params: F::Names,
        f: F,
    ) -> FunctionTool {
        let name = name.into();
        let names = F::names(&params);
        let (parameters, returns) = schema_for(&names, F::schemas);
        let tool = name.clone();
        let body: Arc<AsyncBody> = Arc::new(move |args, context: Option<CallContext>| {
            let context = context.unwrap_or_else(|| CallContext::detached(&tool));
            f.invoke(context, &names, args)
        });
        FunctionTool::build(name, parameters, returns, Body::Async(body), true)
    }

    fn build(
        name: String,
        parameters: Json,
        returns: Json,
        body: Body,
        takes_context: bool,
    ) -> FunctionTool {
        let mut tool = FunctionTool {
            definition: ToolDefinition::new(name, "", parameters).with_returns(returns),
            body,
            inline: false,
            takes_context,
            // A context tool is called with its context: it has features (none set yet).
            features: takes_context.then(Box::default),
            problems: Vec::new(),
        };
        tool.refresh();
        tool
    }

    /// Set the description the model sees.
    pub fn description(mut self, description: impl Into<String>) -> FunctionTool {
        self.definition.description = description.into();
        self
    }

    /// Describe one parameter. A name the tool does not have is a problem [`Tool::check`]
    /// reports.
    pub fn param_description(self, param: &str, description: &str) -> FunctionTool {
        if self.definition.signature.field(param).is_none() {
            return self.unknown_param("param_description", param);
        }
        self.edit_param(param, |schema| {
            schema.insert("description".into(), Json::String(description.into()));
        })
    }

    /// Give a parameter a default, making it optional. The value is converted to the
    /// parameter's type now (`1` for a `float` parameter becomes `1.0`, a dict for a record
    /// parameter becomes the record); a value of another type, or a name the tool does not
    /// have, is a problem [`Tool::check`] reports and the manager's
    /// [`build`](crate::dispatch::manager::ToolManagerBuilder::build) refuses.
    ///
    /// A default before a parameter that has none makes the later parameters keyword-only,
    /// as Python requires (`def f(a: int = 1, *, b: int)`): they are shown after a `*` and
    /// cannot be given by position.
    ///
    /// ```
    /// use fexpr::{FunctionTool, Tool};
    /// let f = FunctionTool::new("f", ["n", "k"], |n: Option<i64>, k: i64| n.unwrap_or(0) + k)
    ///     .default("n", 1);
    /// assert_eq!(f.definition().python_signature(), "f(n: int | None = 1, *, k: int) -> int");
    /// assert!(f.check().is_ok());
    ///
    /// let wrong = FunctionTool::new("f", ["n"], |n: Option<i64>| n).default("n", "one");
    /// assert_eq!(wrong.check().unwrap_err().message, "tool `f`: default for `n` is 'one', not an int | None");
    /// let misspelled = FunctionTool::new("f", ["n", "k"], |n: i64, k: i64| n + k).default("m", 1);
    /// let problem = misspelled.check().unwrap_err();
    /// assert_eq!(problem.message, "`FunctionTool::default`: tool `f` has no parameter `m`; its parameters are `n`, `k`");
    /// assert_eq!(problem.hint.as_deref(), Some("did you mean `n`?"));
    /// ```
    pub fn default(mut self, param: &str, value: impl Serialize) -> FunctionTool {
        let Some(field) = self.definition.signature.field(param) else {
            return self.unknown_param("default", param);
        };
        let name = &self.definition.name;
        let value = match Value::from_serialize(&value) {
            Ok(value) => value,
            Err(e) => {
                let problem = format!(
                    "tool `{name}`: the default for `{param}` has no Python value: {}",
                    e.message
                );
                self.problems.push(Error::new(ErrorKind::Config, problem));
                return self;
            }
        };
        let value = match field.ty.coerce(value.clone(), param) {
            Ok(value) => value,
            Err(_) => {
                let ty = field.ty.to_string();
                let problem = format!(
                    "tool `{name}`: default for `{param}` is {}, not {} {ty}",
                    clip(&value.repr(), 60),
                    article(&ty)
                );
                self.problems.push(Error::new(ErrorKind::Config, problem));
                return self;
            }
        };
        let mut tool = self.edit_param(param, |schema| {
            schema.insert("default".into(), value.to_json());
        });
        if let Some(required) = tool
            .definition
            .parameters
            .get_mut("required")
            .and_then(Json::as_array_mut)
        {
            required.retain(|r| r != param);
        }
        tool.refresh();
        tool
    }

    /// Run this sync function on the calling task, with no thread hop: for cheap functions
    /// that never block (arithmetic, formatting). Such a call cannot be interrupted: a
    /// deadline is noticed only when it returns, and the other calls of the response wait
    /// while it runs. No effect on async functions, which always run on the calling task.
    ///
    /// ```
    /// use fexpr::FunctionTool;
    /// let add = FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b).inline();
    /// # let _ = add;
    /// ```
    pub fn inline(mut self) -> FunctionTool {
        self.inline = true;
        self
    }

    /// Record that `method` named a parameter the tool does not have.
    fn unknown_param(mut self, method: &str, param: &str) -> FunctionTool {
        let names: Vec<&str> = self
            .definition
            .signature
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        let known = if names.is_empty() {
            "it has no parameters".to_string()
        } else {
            let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("its parameters are {}", listed.join(", "))
        };
        let problem = Error::new(
            ErrorKind::Config,
            format!(
                "`FunctionTool::{method}`: tool `{}` has no parameter `{}`; {known}",
                self.definition.name,
                clip(param, 40)
            ),
        );
        self.problems
            .push(problem.suggest(param, names.iter().copied()));
        self
    }

    fn edit_param(
        mut self,
        param: &str,
        edit: impl FnOnce(&mut serde_json::Map<String, Json>),
    ) -> FunctionTool {
        if let Some(schema) = self
            .definition
            .parameters
            .get_mut("properties")
            .and_then(|p| p.get_mut(param))
            .and_then(Json::as_object_mut)
        {
            edit(schema);
        }
        self.refresh();
        self
    }

    /// Rebuild the signature from the parameter schema, with each default as a value of its
    /// parameter's type (`1.0` for a float, a record for a record type).
    fn refresh(&mut self) {
        let mut signature =
            RecordType::from_schema(&self.definition.name, &self.definition.parameters);
        for field in &mut signature.fields {
            if let Some(default) = field.default.take() {
                field.default = Some(
                    field
                        .ty
                        .coerce(default.clone(), &field.name)
                        .unwrap_or(default),
                );
            }
        }
        self.definition.signature = Arc::new(signature);
    }

    /// Run the function with bound arguments, and the call's context if it takes one.
    fn run(&self, args: BoundArgs, context: Option<CallContext>) -> ToolFuture {
        match &self.body {
            Body::Async(f) => catch_async(|| f(args, context)),
            Body::Sync(f) if self.inline => {
                Box::pin(std::future::ready(catch_sync(|| f(args, context))))
            }
            Body::Sync(f) => on_blocking_thread(Arc::clone(f), args, context),
        }
    }
}

/// "an int", "a str": the article for a type's name.
fn article(ty: &str) -> &'static str {
    match ty.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u' | 'A' | 'E' | 'I' | 'O' | 'U') => "an",
        _ => "a",
    }
}

impl Tool for FunctionTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Vec<Option<Value>>) -> ToolFuture {
        self.run(args, None)
    }

    fn features(&self) -> Option<&ToolFeatures> {
        self.features.as_deref()
    }

    fn call_in(&self, args: Vec<Option<Value>>, context: CallContext) -> ToolFuture {
        self.run(args, self.takes_context.then_some(context))
    }

    fn check(&self) -> Result<(), Error> {
        match self.problems.as_slice() {
            [] => Ok(()),
            [problem] => Err(problem.clone()),
            [first, ..] => {
                let messages: Vec<&str> =
                    self.problems.iter().map(|p| p.message.as_str()).collect();
                let hints: Vec<&str> = self
                    .problems
                    .iter()
                    .filter_map(|p| p.hint.as_deref())
                    .collect();
                let mut error = Error::new(first.kind, messages.join("; "));
                if !hints.is_empty() {
                    error = error.with_hint(hints.join("; "));
                }
                Err(error)
            }
        }
    }
}

/// Run a sync function on tokio's blocking thread pool, so that it neither stalls the other
/// calls of its response nor keeps a deadline from returning. If the caller stops waiting,
/// the thread still runs the function to its end and the result is dropped (nothing can stop
/// a running thread). Outside a tokio runtime (or without the `native` feature, as in
/// the wasm guest) it runs on the calling thread.
fn on_blocking_thread(
    f: Arc<SyncBody>,
    args: BoundArgs,
    context: Option<CallContext>,
) -> ToolFuture {
    Box::pin(async move {
        let run = move || catch_sync(|| f(args, context));
        #[cfg(feature = "native")]
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            return runtime.spawn_blocking(run).await.unwrap_or_else(|e| {
                Err(Error::new(
                    ErrorKind::ToolFailed,
                    format!("the tool's thread was stopped: {e}"),
                ))
            });
        }
        run()
    })
}

/// Runs a sync tool body; a panic becomes a `ToolFailed` error of the call.
fn catch_sync(run: impl FnOnce() -> Result<ToolOutput, Error>) -> Result<ToolOutput, Error> {
    std::panic::catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|panic| Err(panicked(panic)))
}

/// Starts an async tool body and runs it; a panic while starting or while running becomes a
/// `ToolFailed` error of the call.
fn catch_async(start: impl FnOnce() -> ToolFuture) -> ToolFuture {
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(fut) => fut,
        Err(panic) => return Box::pin(std::future::ready(Err(panicked(panic)))),
    };
    Box::pin(async move {
        AssertUnwindSafe(fut)
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| Err(panicked(panic)))
    })
}

fn panicked(panic: Box<dyn std::any::Any + Send>) -> Error {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    Error::new(
        ErrorKind::ToolFailed,
        format!("the tool panicked: {}", crate::error::clip(&detail, 200)),
    )
}

/// The parameters object schema (with `$defs`) and the return schema. Every object schema
/// with properties is closed (`additionalProperties: false`), as it is when called: a
/// keyword or record field that is not declared is an error.
fn schema_for(
    names: &[&'static str],
    schemas: fn(&mut schemars::SchemaGenerator) -> (Vec<Json>, Json),
) -> (Json, Json) {
    let mut generator = schemars::SchemaGenerator::default();
    let (params, returns) = schemas(&mut generator);
    let mut defs = generator.take_definitions(true);
    defs.values_mut()
        .for_each(crate::types::schema::close_records);
    let root = json!({"$defs": defs.clone()});
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, mut schema) in names.iter().zip(params) {
        if !Type::from_schema(&schema, &root).accepts_none() {
            required.push(Json::String(name.to_string()));
        }
        crate::types::schema::close_records(&mut schema);
        properties.insert(name.to_string(), schema);
    }
    let mut parameters = json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    let mut returns = returns;
    if !defs.is_empty() {
        if let Some(map) = parameters.as_object_mut() {
            map.insert("$defs".into(), Json::Object(defs.clone()));
        }
        // The result's schema carries the definitions only when it refers to them: a tool
        // returning `ToolOutput` (`{}`, anything) shows no parameter's definitions there.
        let returns_refer = refers(&returns);
        if let (Some(map), true) = (returns.as_object_mut(), returns_refer) {
            map.insert("$defs".into(), Json::Object(defs));
        }
    }
    (parameters, returns)
}

/// Whether `schema` holds a `$ref` anywhere (walked without recursion).
fn refers(schema: &Json) -> bool {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Json::Object(map) if map.contains_key("$ref") => return true,
            Json::Object(map) => stack.extend(map.values()),
            Json::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// The next bound argument as the parameter's Rust type; an error names the parameter
/// (`` `a` = 18446744073709551616 does not fit a 64-bit integer ``).
fn arg<T: DeserializeOwned + 'static>(
    args: &mut std::vec::IntoIter<Option<Value>>,
    names: &mut std::slice::Iter<&'static str>,
) -> Result<T, Error> {
    let name = names.next().copied().unwrap_or("argument");
    args.next()
        .flatten()
        .unwrap_or(Value::None)
        .into_rust()
        .map_err(|e| Error::new(ErrorKind::Type, format!("`{name}` = {}", e.message)))
}

/// A sync function usable as a tool: `Fn(A, B, ...) -> R` with up to 8 parameters, each
/// `DeserializeOwned + JsonSchema`, returning any [`ToolReturn`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a sync tool function",
    label = "not `Fn(A, B, ...) -> R` with tool parameters and result",
    note = "`FunctionTool::new` takes `Fn(A, B, ...) -> R` with up to 8 parameters, each `serde::de::DeserializeOwned + schemars::JsonSchema` (an `Option<T>` parameter is optional), and one name per parameter",
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E: Into<fexpr::tool::ToolError>` (a `ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync`, a `String`)",
    note = "an async function goes to `FunctionTool::new_async`; one taking a `CallContext` first to `FunctionTool::with_context` (or `with_context_async`)"
)]
pub trait SyncFn<Args, M>: Send + Sync + 'static {
    /// `[&str; N]`: one name per parameter.
    type Names;
    /// The names as a list.
    fn names(names: &Self::Names) -> Vec<&'static str>;
    /// Parameter schemas and the return schema.
    fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json);
    /// Call with bound arguments; `names` are the parameters' names, for errors.
    fn invoke(&self, names: &[&'static str], args: BoundArgs) -> Result<ToolOutput, Error>;
}

/// An async function usable as a tool: `Fn(A, B, ...) -> impl Future<Output = R> + Send`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an async tool function",
    label = "not `Fn(A, B, ...) -> impl Future<Output = R> + Send + 'static` with tool parameters and result",
    note = "`FunctionTool::new_async` takes `Fn(A, B, ...) -> impl Future<Output = R> + Send + 'static` with up to 8 parameters, each `serde::de::DeserializeOwned + schemars::JsonSchema` (an `Option<T>` parameter is optional), and one name per parameter",
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E: Into<fexpr::tool::ToolError>` (a `ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync`, a `String`)",
    note = "a sync function goes to `FunctionTool::new`; one taking a `CallContext` first to `FunctionTool::with_context_async`"
)]
pub trait AsyncFn<Args, M>: Send + Sync + 'static {
    /// `[&str; N]`: one name per parameter.
    type Names;
    /// The names as a list.
    fn names(names: &Self::Names) -> Vec<&'static str>;
    /// Parameter schemas and the return schema.
    fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json);
    /// Call with bound arguments; `names` are the parameters' names, for errors.
    fn invoke(&self, names: &[&'static str], args: BoundArgs) -> ToolFuture;
}

/// A sync function with a [`CallContext`] first: `Fn(CallContext, A, B, ...) -> R`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a sync tool function taking a `CallContext`",
    label = "not `Fn(CallContext, A, B, ...) -> R` with tool parameters and result",
    note = "`FunctionTool::with_context` takes `Fn(CallContext, A, B, ...) -> R` with up to 6 parameters after the context, each `serde::de::DeserializeOwned + schemars::JsonSchema` (an `Option<T>` parameter is optional), and one name per parameter after the context",
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E: Into<fexpr::tool::ToolError>` (a `ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync`, a `String`)",
    note = "an async function goes to `FunctionTool::with_context_async`; one without a `CallContext` to `FunctionTool::new`"
)]
pub trait ContextFn<Args, M>: Send + Sync + 'static {
    /// `[&str; N]`: one name per parameter after the context.
    type Names;
    /// The names as a list.
    fn names(names: &Self::Names) -> Vec<&'static str>;
    /// Parameter schemas and the return schema.
    fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json);
    /// Call with the context and bound arguments; `names` are the parameters' names, for
    /// errors.
    fn invoke(
        &self,
        context: CallContext,
        names: &[&'static str],
        args: BoundArgs,
    ) -> Result<ToolOutput, Error>;
}

/// An async function with a [`CallContext`] first.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an async tool function taking a `CallContext`",
    label = "not `Fn(CallContext, A, B, ...) -> impl Future<Output = R> + Send + 'static` with tool parameters and result",
    note = "`FunctionTool::with_context_async` takes `Fn(CallContext, A, B, ...) -> impl Future<Output = R> + Send + 'static` with up to 6 parameters after the context, each `serde::de::DeserializeOwned + schemars::JsonSchema` (an `Option<T>` parameter is optional), and one name per parameter after the context",
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E: Into<fexpr::tool::ToolError>` (a `ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync`, a `String`)",
    note = "a sync function goes to `FunctionTool::with_context`; one without a `CallContext` to `FunctionTool::new_async`"
)]
pub trait AsyncContextFn<Args, M>: Send + Sync + 'static {
    /// `[&str; N]`: one name per parameter after the context.
    type Names;
    /// The names as a list.
    fn names(names: &Self::Names) -> Vec<&'static str>;
    /// Parameter schemas and the return schema.
    fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json);
    /// Call with the context and bound arguments; `names` are the parameters' names, for
    /// errors.
    fn invoke(&self, context: CallContext, names: &[&'static str], args: BoundArgs) -> ToolFuture;
}

/// The JSON Schemas of a parameter list, one per type.
macro_rules! param_schemas {
    ($generator:ident; $($a:ident),*) => {{
        let _ = &$generator;
        vec![$($generator.subschema_for::<$a>().to_value(),)*]
    }};
}

/// Converts the bound arguments to the parameters' types (`$a`: one type and binding per
/// parameter) or returns the conversion error as `$fail(error)`.
macro_rules! bind_args {
    ($args:ident, $names:ident, $fail:expr; $($a:ident),*) => {
        #[allow(unused_mut, unused_variables)]
        let mut it = $args.into_iter();
        #[allow(unused_mut, unused_variables)]
        let mut names = $names.iter();
        $(let $a: $a = match arg(&mut it, &mut names) {
            Ok(v) => v,
            Err(e) => return $fail(e),
        };)*
    };
}

fn failed(error: Error) -> ToolFuture {
    Box::pin(std::future::ready(Err(error)))
}

macro_rules! tool_fns {
    ($n:literal; $($a:ident),*) => {
        impl<F, R, M, $($a,)*> SyncFn<($($a,)*), M> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: ToolReturn<M>,
            $($a: DeserializeOwned + schemars::JsonSchema + Send + 'static,)*
        {
            type Names = [&'static str; $n];
            fn names(names: &Self::Names) -> Vec<&'static str> {
                names.to_vec()
            }
            fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json) {
                (param_schemas!(generator; $($a),*), R::schema(generator))
            }
            #[allow(non_snake_case)]
            fn invoke(&self, names: &[&'static str], args: BoundArgs) -> Result<ToolOutput, Error> {
                bind_args!(args, names, Err; $($a),*);
                (self)($($a),*).into_output()
            }
        }

        impl<F, Fut, R, M, $($a,)*> AsyncFn<($($a,)*), M> for F
        where
            F: Fn($($a),*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: ToolReturn<M>,
            $($a: DeserializeOwned + schemars::JsonSchema + Send + 'static,)*
        {
            type Names = [&'static str; $n];
            fn names(names: &Self::Names) -> Vec<&'static str> {
                names.to_vec()
            }
            fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json) {
                (param_schemas!(generator; $($a),*), R::schema(generator))
            }
            #[allow(non_snake_case)]
            fn invoke(&self, names: &[&'static str], args: BoundArgs) -> ToolFuture {
                bind_args!(args, names, failed; $($a),*);
                let fut = (self)($($a),*);
                Box::pin(async move { fut.await.into_output() })
            }
        }
    };
}

tool_fns!(0;);
tool_fns!(1; A1);
tool_fns!(2; A1, A2);
tool_fns!(3; A1, A2, A3);
tool_fns!(4; A1, A2, A3, A4);
tool_fns!(5; A1, A2, A3, A4, A5);
tool_fns!(6; A1, A2, A3, A4, A5, A6);
tool_fns!(7; A1, A2, A3, A4, A5, A6, A7);
tool_fns!(8; A1, A2, A3, A4, A5, A6, A7, A8);

macro_rules! context_fns {
    ($n:literal; $($a:ident),*) => {
        impl<F, R, M, $($a,)*> ContextFn<($($a,)*), M> for F
        where
            F: Fn(CallContext, $($a),*) -> R + Send + Sync + 'static,
            R: ToolReturn<M>,
            $($a: DeserializeOwned + schemars::JsonSchema + Send + 'static,)*
        {
            type Names = [&'static str; $n];
            fn names(names: &Self::Names) -> Vec<&'static str> {
                names.to_vec()
            }
            fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json) {
                (param_schemas!(generator; $($a),*), R::schema(generator))
            }
            #[allow(non_snake_case)]
            fn invoke(&self, context: CallContext, names: &[&'static str], args: BoundArgs) -> Result<ToolOutput, Error> {
                bind_args!(args, names, Err; $($a),*);
                (self)(context, $($a),*).into_output()
            }
        }

        impl<F, Fut, R, M, $($a,)*> AsyncContextFn<($($a,)*), M> for F
        where
            F: Fn(CallContext, $($a),*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: ToolReturn<M>,
            $($a: DeserializeOwned + schemars::JsonSchema + Send + 'static,)*
        {
            type Names = [&'static str; $n];
            fn names(names: &Self::Names) -> Vec<&'static str> {
                names.to_vec()
            }
            fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json) {
                (param_schemas!(generator; $($a),*), R::schema(generator))
            }
            #[allow(non_snake_case)]
            fn invoke(&self, context: CallContext, names: &[&'static str], args: BoundArgs) -> ToolFuture {
                bind_args!(args, names, failed; $($a),*);
                let fut = (self)(context, $($a),*);
                Box::pin(async move { fut.await.into_output() })
            }
        }
    };
}

context_fns!(0;);
context_fns!(1; A1);
context_fns!(2; A1, A2);
context_fns!(3; A1, A2, A3);
context_fns!(4; A1, A2, A3, A4);
context_fns!(5; A1, A2, A3, A4, A5);
context_fns!(6; A1, A2, A3, A4, A5, A6);

impl FunctionTool {
    fn features_mut(&mut self) -> &mut ToolFeatures {
        self.features.get_or_insert_with(Box::default)
    }

    /// Write the model's observation of each output with `format` (unless the tool returned
    /// a [`ToolOutput`] with its own). The full output stays in `FunctionOutput::output`.
    pub fn observe(
        mut self,
        format: impl Fn(&Value) -> String + Send + Sync + 'static,
    ) -> FunctionTool {
        let features = std::mem::take(self.features_mut());
        *self.features_mut() = features.observe(format);
        self
    }

    /// Offer the tool only while `available` holds for the caller's session (see
    /// [`ToolFeatures::available_when`]).
    pub fn available_when(
        mut self,
        available: impl Fn(&Session) -> bool + Send + Sync + 'static,
        when: impl Into<String>,
    ) -> FunctionTool {
        let features = std::mem::take(self.features_mut());
        *self.features_mut() = features.available_when(available, when);
        self
    }

    /// Mark the tool as one that can end the turn (see [`ToolManager::ends_turn`](crate::ToolManager::ends_turn)).
    pub fn ends_turn(mut self) -> FunctionTool {
        self.features_mut().ends_turn = true;
        self
    }

    /// Remember up to `max_entries` outputs keyed by canonical arguments (see
    /// [`ToolFeatures::cached`] for what the key holds and what it does not).
    ///
    /// A tool made with [`with_context`](FunctionTool::with_context) or
    /// [`with_context_async`](FunctionTool::with_context_async) cannot be cached: its result
    /// may depend on the session, state, dependencies or `tool_call_id` it receives, and a
    /// cache keyed by arguments would give one session's result to another. It is not cached
    /// but refused: [`Tool::check`] reports the problem, and every call of the tool fails with
    /// it (a `ToolFailed` error) rather than run.
    pub fn cached(mut self, max_entries: usize) -> FunctionTool {
        if self.takes_context {
            let problem = Error::new(
                ErrorKind::Config,
                format!(
                    "tool `{}` receives injected values (CallContext) and cannot be cached: its result may differ per session",
                    self.definition.name
                ),
            )
            .with_hint("remove `.cached(..)` from this tool");
            self.problems.push(problem);
            return self;
        }
        self.features_mut().memo = Some(Arc::new(Memo::new(max_entries)));
        self
    }
}

/// A struct whose methods are tools: configuration, clients, credentials and state stay in
/// the struct, hidden from the model; only the tools' own parameters are in their schemas.
/// A component's tool marked `.cached()` is keyed by its arguments only, never by the state
/// on `self`: cache only those whose result does not depend on it.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU32, Ordering}};
/// use fexpr::{tool::Component, FunctionTool, ToolManager};
///
/// struct Counter { step: u32, total: AtomicU32 }
/// impl Component for Counter {
///     fn tools(self: Arc<Self>) -> Vec<FunctionTool> {
///         let this = self.clone();
///         vec![FunctionTool::new("bump", [], move || this.total.fetch_add(this.step, Ordering::Relaxed) + this.step)]
///     }
/// }
/// let manager = ToolManager::builder()
///     .component(Arc::new(Counter { step: 2, total: AtomicU32::new(0) }))
///     .build()
///     .unwrap();
/// assert_eq!(manager.definitions().next().unwrap().python_signature(), "bump() -> int");
/// ```
pub trait Component: Send + Sync + 'static {
    /// The tools, each holding a clone of `self`.
    fn tools(self: Arc<Self>) -> Vec<FunctionTool>;
}

type Observe = dyn Fn(&Value) -> String + Send + Sync;
type Available = dyn Fn(&Session) -> bool + Send + Sync;

/// What a tool needs beyond a plain call; see [`Tool::features`]. Build it with the methods
/// below (or the same methods on [`FunctionTool`]).
///
/// ```
/// use fexpr::tool::ToolFeatures;
/// let features = ToolFeatures::new().ends_turn().cached(100).observe(|v| format!("got {}", v.repr()));
/// assert!(features.is_ends_turn());
/// assert_eq!(features.observation(&fexpr::Value::Int(3)).as_deref(), Some("got 3"));
/// ```
#[derive(Clone, Default)]
pub struct ToolFeatures {
    observe: Option<Arc<Observe>>,
    available: Option<(Arc<Available>, String)>,
    ends_turn: bool,
    memo: Option<Arc<Memo>>,
}

impl ToolFeatures {
    /// No features beyond receiving a [`CallContext`].
    pub fn new() -> ToolFeatures {
        ToolFeatures::default()
    }

    /// Write the model's observation of an output (unless the tool gave one itself).
    pub fn observe(
        mut self,
        format: impl Fn(&Value) -> String + Send + Sync + 'static,
    ) -> ToolFeatures {
        self.observe = Some(Arc::new(format));
        self
    }

    /// Offer the tool only while `available` holds for the caller's session: otherwise it is
    /// left out of the definitions and a call is refused with a message that includes `when`
    /// (say when it becomes available, e.g. "after a search has returned results").
    pub fn available_when(
        mut self,
        available: impl Fn(&Session) -> bool + Send + Sync + 'static,
        when: impl Into<String>,
    ) -> ToolFeatures {
        self.available = Some((Arc::new(available), when.into()));
        self
    }

    /// Mark the tool as one that can end the agent's turn (a final answer, say).
    pub fn ends_turn(mut self) -> ToolFeatures {
        self.ends_turn = true;
        self
    }

    /// Remember up to `max_entries` outputs keyed by the canonical bound arguments (the oldest
    /// entry is dropped first). Only successful outputs are remembered.
    ///
    /// The key is the arguments and nothing else, so a cached result is given to every caller
    /// that passes the same arguments, whatever its session. Cache only tools whose result
    /// depends on their arguments alone:
    /// - a cached tool is called through [`Tool::call`], never [`Tool::call_in`]: it receives
    ///   no [`CallContext`] (session, state, dependencies, `tool_call_id`), so no session's
    ///   data can reach another through the cache;
    /// - [`FunctionTool::cached`] refuses tools made with `with_context*`, whose function takes
    ///   a `CallContext`: see there;
    /// - state a tool keeps itself (a [`Component`]'s fields, a client's connection) is not in
    ///   the key either: a component tool whose result depends on that state must not be cached.
    pub fn cached(mut self, max_entries: usize) -> ToolFeatures {
        self.memo = Some(Arc::new(Memo::new(max_entries)));
        self
    }

    /// The formatter's observation of `output`, if there is a formatter.
    pub fn observation(&self, output: &Value) -> Option<String> {
        self.observe.as_ref().map(|f| f(output))
    }

    /// Whether the tool is available in `session`; `Err` holds when it becomes available.
    pub fn availability(&self, session: &Session) -> Result<(), &str> {
        match &self.available {
            Some((available, when)) if !available(session) => Err(when),
            _ => Ok(()),
        }
    }

    /// Whether the tool can end the turn.
    pub fn is_ends_turn(&self) -> bool {
        self.ends_turn
    }

    /// The memo, when the tool is cached.
    pub fn memo(&self) -> Option<&Memo> {
        self.memo.as_deref()
    }
}

/// Remembered outputs of a cached tool, keyed by canonical arguments, bounded in entries.
pub struct Memo {
    max_entries: usize,
    entries: std::sync::Mutex<indexmap::IndexMap<String, ToolOutput>>,
}

impl Memo {
    fn new(max_entries: usize) -> Memo {
        Memo {
            max_entries,
            entries: std::sync::Mutex::new(indexmap::IndexMap::new()),
        }
    }

    /// The key of bound arguments: their Python forms, with dict and set entries sorted so
    /// that equal values give equal keys.
    pub fn key(args: &[Option<Value>]) -> String {
        let mut key = String::new();
        for arg in args {
            match arg {
                Some(v) => canonical(v, &mut key),
                None => key.push('-'),
            }
            key.push('\u{1f}');
        }
        key
    }

    /// The remembered output for `key`.
    pub fn get(&self, key: &str) -> Option<ToolOutput> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    /// Remember `output` under `key`, dropping the oldest entry when full.
    pub fn put(&self, key: String, output: ToolOutput) {
        if self.max_entries == 0 {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if !entries.contains_key(&key) && entries.len() >= self.max_entries {
                entries.shift_remove_index(0);
            }
            entries.insert(key, output);
        }
    }

    /// Entries remembered now.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Append the canonical form of `v`: its repr, except that dict and set entries are sorted.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Dict(map) => {
            let mut items: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    let mut item = String::new();
                    canonical(k, &mut item);
                    item.push_str(": ");
                    canonical(v, &mut item);
                    item
                })
                .collect();
            items.sort();
            out.push('{');
            out.push_str(&items.join(", "));
            out.push('}');
        }
        Value::Set(set) => {
            let mut items: Vec<String> = set
                .iter()
                .map(|v| {
                    let mut item = String::new();
                    canonical(v, &mut item);
                    item
                })
                .collect();
            items.sort();
            out.push_str("set(");
            out.push_str(&items.join(", "));
            out.push(')');
        }
        Value::List(items) | Value::Tuple(items) => {
            out.push(if matches!(v, Value::List(_)) {
                '['
            } else {
                '('
            });
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                canonical(item, out);
            }
            out.push(if matches!(v, Value::List(_)) {
                ']'
            } else {
                ')'
            });
        }
        Value::Record(r) => {
            out.push_str(&r.name);
            out.push('(');
            for (i, (name, v)) in r.fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push('=');
                canonical(v, out);
            }
            out.push(')');
        }
        other => out.push_str(&other.repr()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(pairs: &[(&str, i64)]) -> Value {
        Value::Dict(
            pairs
                .iter()
                .map(|(k, v)| (Value::Str(k.to_string()), Value::Int(*v)))
                .collect(),
        )
    }

    #[test]
    fn memo_keys_are_canonical() {
        let a = Memo::key(&[Some(dict(&[("x", 1), ("y", 2)])), None]);
        let b = Memo::key(&[Some(dict(&[("y", 2), ("x", 1)])), None]);
        assert_eq!(a, b);
        // Position, absence and type still count.
        assert_ne!(a, Memo::key(&[None, Some(dict(&[("x", 1), ("y", 2)]))]));
        assert_ne!(
            Memo::key(&[Some(Value::Int(1))]),
            Memo::key(&[Some(Value::Str("1".into()))])
        );
        assert_ne!(
            Memo::key(&[Some(Value::List(vec![]))]),
            Memo::key(&[Some(Value::Tuple(vec![]))])
        );
    }

    #[test]
    fn the_memo_keeps_at_most_its_bound() {
        let memo = Memo::new(2);
        for i in 0..5 {
            memo.put(format!("k{i}"), ToolOutput::new(Value::Int(i)));
        }
        assert_eq!(memo.len(), 2);
        assert_eq!(memo.get("k0"), None);
        assert_eq!(memo.get("k4"), Some(ToolOutput::new(Value::Int(4))));
        let none = Memo::new(0);
        none.put("k".into(), ToolOutput::new(Value::None));
        assert!(none.is_empty());
    }

    #[test]
    fn plain_tools_have_no_features_and_context_tools_do() {
        let plain = FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b);
        assert!(plain.features().is_none());
        let ctx = FunctionTool::with_context("who", [], |c: CallContext| c.tool().to_string());
        assert!(ctx.features().is_some());
        assert_eq!(ctx.definition().parameters["properties"], json!({}));
        // Called outside a manager, a context tool gets a detached context.
        let out = futures_util::FutureExt::now_or_never(ctx.call(vec![]));
        assert_eq!(
            out.and_then(Result::ok).map(|o| o.output),
            Some(Value::Str("who".into()))
        );
        let session = Session::new();
        let hidden = plain.available_when(|_| false, "later");
        assert_eq!(
            hidden.features().map(|f| f.availability(&session)),
            Some(Err("later"))
        );
    }
}

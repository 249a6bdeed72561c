//! [`FunctionTool`]: an ordinary Rust function (sync or async, with or without a
//! [`CallContext`]) as a tool: its parameter schema from the argument types, its arguments
//! bound and deserialized, panics caught, blocking bodies on worker threads.

use super::*;

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
    pub(super) definition: ToolDefinition,
    body: Body,
    /// Run a sync body on the calling task rather than on the blocking pool.
    pub(super) inline: bool,
    /// Made with `with_context*`: the function receives a [`CallContext`].
    pub(super) takes_context: bool,
    pub(super) features: Option<Box<ToolFeatures>>,
    /// What [`Tool::check`] reports: how the tool was misconfigured.
    pub(super) problems: Vec<Error>,
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
        let mut definition = ToolDefinition::new(name, "", parameters).with_returns(returns);
        // The signature just read from `parameters` (every parameter listed as required, see
        // `schema_for`): a parameter whose type takes `None` is optional, here and in the schema.
        let signature = Arc::make_mut(&mut definition.signature);
        let optional: Vec<&str> = signature
            .fields
            .iter_mut()
            .filter(|field| field.ty.accepts_none())
            .map(|field| {
                field.required = false;
                field.name.as_str()
            })
            .collect();
        not_required(&mut definition.parameters, |name| optional.contains(&name));
        coerce_defaults(signature);
        FunctionTool {
            definition,
            body,
            inline: false,
            takes_context,
            // A context tool is called with its context: it has features (none set yet).
            features: takes_context.then(Box::default),
            problems: Vec::new(),
        }
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
        let mut tool = self.edit_param(param, |schema| {
            schema.insert("description".into(), Json::String(description.into()));
        });
        tool.refresh();
        tool
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
        not_required(&mut tool.definition.parameters, |name| name == param);
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

    /// Edit one parameter's schema in place (nothing if there is no such parameter); the
    /// caller refreshes the signature once its edits are done.
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
        self
    }

    /// Rebuild the signature from the parameter schema, with each default as a value of its
    /// parameter's type (`1.0` for a float, a record for a record type).
    fn refresh(&mut self) {
        let mut signature =
            RecordType::from_schema(&self.definition.name, &self.definition.parameters);
        coerce_defaults(&mut signature);
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

    fn call_now(&self, args: BoundArgs) -> Result<Result<ToolOutput, Error>, BoundArgs> {
        match &self.body {
            // What `run` boxes in a ready future for such a tool.
            Body::Sync(f) if self.inline => Ok(catch_sync(|| f(args, None))),
            _ => Err(args),
        }
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

/// Drop the parameters `drop` picks from the `required` list of the parameters schema.
fn not_required(parameters: &mut Json, drop: impl Fn(&str) -> bool) {
    if let Some(required) = parameters.get_mut("required").and_then(Json::as_array_mut) {
        required.retain(|name| !name.as_str().is_some_and(&drop));
    }
}

/// Each default of `signature` as a value of its parameter's type (`1.0` for a float, a record
/// for a record type); a default of another type stays as it is.
fn coerce_defaults(signature: &mut RecordType) {
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
}

/// The parameters object schema (with `$defs`) and the return schema. Every object schema
/// with properties is closed (`additionalProperties: false`), as it is when called: a
/// keyword or record field that is not declared is an error. Every parameter is listed as
/// required: [`FunctionTool::build`] drops the ones whose type takes `None` once it has read
/// their types (reading each parameter's type here as well cost as much again).
fn schema_for(
    names: &[&'static str],
    schemas: fn(&mut schemars::SchemaGenerator) -> (Vec<Json>, Json),
) -> (Json, Json) {
    let mut generator = schemars::SchemaGenerator::default();
    let (params, returns) = schemas(&mut generator);
    let mut defs = generator.take_definitions(true);
    defs.values_mut()
        .for_each(crate::types::schema::close_records);
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, mut schema) in names.iter().zip(params) {
        required.push(Json::String(name.to_string()));
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
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E` is a `String`, a `&str`, a `fexpr::ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync` or a pointer to one (`anyhow::Error`, `Box<dyn Error + Send + Sync>`)",
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
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E` is a `String`, a `&str`, a `fexpr::ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync` or a pointer to one (`anyhow::Error`, `Box<dyn Error + Send + Sync>`)",
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
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E` is a `String`, a `&str`, a `fexpr::ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync` or a pointer to one (`anyhow::Error`, `Box<dyn Error + Send + Sync>`)",
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
    note = "R is `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E` is a `String`, a `&str`, a `fexpr::ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync` or a pointer to one (`anyhow::Error`, `Box<dyn Error + Send + Sync>`)",
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

//! Tools: the [`Tool`] trait, [`FunctionTool`] for ordinary Rust functions, and the
//! [`ToolDefinition`] shown to models in every common format.
//!
//! A tool's parameters are a JSON Schema (generated from the Rust argument types by
//! `schemars`, or given by an MCP server); the same schema becomes the [`RecordType`] that
//! arguments are bound and coerced against before the tool runs.

use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use crate::types::{RecordType, Type};
use crate::value::Value;

/// The future a tool returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, Error>> + Send>>;

/// What a tool returns: the full output, and optionally the short text a model should see.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// The full result, for the program.
    pub output: Value,
    /// The text for the model, when it should differ from the output.
    pub observation: Option<String>,
}

impl ToolOutput {
    /// An output the model sees as it is.
    ///
    /// ```
    /// let out = fexpr::ToolOutput::new(fexpr::Value::Int(3)).with_observation("three");
    /// assert_eq!(out.observation.as_deref(), Some("three"));
    /// ```
    pub fn new(output: Value) -> ToolOutput {
        ToolOutput {
            output,
            observation: None,
        }
    }

    /// The same output with the text a model should see instead of the full output.
    pub fn with_observation(mut self, observation: impl Into<String>) -> ToolOutput {
        self.observation = Some(observation.into());
        self
    }
}

impl From<Value> for ToolOutput {
    fn from(output: Value) -> ToolOutput {
        ToolOutput {
            output,
            observation: None,
        }
    }
}

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

/// Marks [`ToolReturn`] for plain values.
pub enum Plain {}
/// Marks [`ToolReturn`] for `Result<T, ToolError>`.
pub enum Fallible {}

/// What a tool function may return: a value, or `Result<value, ToolError>`. (`M` is a
/// marker that keeps the two implementations apart; it is inferred.)
pub trait ToolReturn<M>: Send + 'static {
    /// The JSON Schema of the value.
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json;
    /// The value, or the tool's failure.
    fn into_value(self) -> Result<Value, Error>;
}

impl<T: Serialize + schemars::JsonSchema + Send + 'static> ToolReturn<Plain> for T {
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        generator.subschema_for::<T>().to_value()
    }
    fn into_value(self) -> Result<Value, Error> {
        Value::from_serialize(&self)
    }
}

/// A tool's own failure, reported to the model as a `ToolFailed` error with this message.
///
/// ```
/// use fexpr::tool::ToolError;
/// fn divide(a: f64, b: f64) -> Result<f64, ToolError> {
///     if b == 0.0 { return Err(ToolError::new("cannot divide by zero")); }
///     Ok(a / b)
/// }
/// assert!(divide(1.0, 0.0).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError(pub String);

impl ToolError {
    /// A failure with a message the model can read.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }
}

impl<E: std::fmt::Display> From<E> for ToolError {
    fn from(e: E) -> ToolError {
        ToolError(e.to_string())
    }
}

impl<T: Serialize + schemars::JsonSchema + Send + 'static> ToolReturn<Fallible>
    for Result<T, ToolError>
{
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        generator.subschema_for::<T>().to_value()
    }
    fn into_value(self) -> Result<Value, Error> {
        match self {
            Ok(v) => Value::from_serialize(&v),
            Err(e) => Err(Error::new(ErrorKind::ToolFailed, e.0)),
        }
    }
}

type Invoke = dyn Fn(Vec<Option<Value>>) -> ToolFuture + Send + Sync;

/// A tool made from a Rust function or closure, sync or async.
///
/// Parameter names are given with the function (Rust keeps no names at run time); their
/// types give the JSON Schema. `Option<T>` parameters are optional.
///
/// ```
/// use fexpr::{FunctionTool, Tool};
/// let add = FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b).description("Add two numbers.");
/// assert_eq!(add.definition().python_signature(), "add(a: int, b: int) -> int");
/// ```
pub struct FunctionTool {
    definition: ToolDefinition,
    invoke: Arc<Invoke>,
}

impl FunctionTool {
    /// A tool from a sync function. It runs on the calling task; mark slow functions
    /// [`blocking`](FunctionTool::blocking) so they run on a worker thread instead.
    pub fn new<Args, M, F: SyncFn<Args, M>>(
        name: impl Into<String>,
        params: F::Names,
        f: F,
    ) -> FunctionTool {
        let (parameters, returns) = schema_for(F::names(&params), F::schemas);
        let f = Arc::new(f);
        let invoke: Arc<Invoke> = Arc::new(move |args| {
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| f.invoke(args)))
                .unwrap_or_else(|panic| Err(panicked(panic)));
            Box::pin(std::future::ready(result.map(ToolOutput::from)))
        });
        FunctionTool::build(name.into(), parameters, returns, invoke)
    }

    /// A tool from an async function (a closure returning a future).
    pub fn new_async<Args, M, F: AsyncFn<Args, M>>(
        name: impl Into<String>,
        params: F::Names,
        f: F,
    ) -> FunctionTool {
        let (parameters, returns) = schema_for(F::names(&params), F::schemas);
        let f = Arc::new(f);
        let invoke: Arc<Invoke> = Arc::new(move |args| {
            let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| f.invoke(args))) {
                Ok(fut) => fut,
                Err(panic) => return Box::pin(std::future::ready(Err(panicked(panic)))),
            };
            Box::pin(async move {
                AssertUnwindSafe(fut)
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|panic| Err(panicked(panic)))
                    .map(ToolOutput::from)
            })
        });
        FunctionTool::build(name.into(), parameters, returns, invoke)
    }

    fn build(name: String, parameters: Json, returns: Json, invoke: Arc<Invoke>) -> FunctionTool {
        FunctionTool {
            definition: ToolDefinition::new(name, "", parameters).with_returns(returns),
            invoke,
        }
    }

    /// Set the description the model sees.
    pub fn description(mut self, description: impl Into<String>) -> FunctionTool {
        self.definition.description = description.into();
        self
    }

    /// Describe one parameter.
    pub fn param_description(self, param: &str, description: &str) -> FunctionTool {
        self.edit_param(param, |schema| {
            schema.insert("description".into(), Json::String(description.into()));
        })
    }

    /// Give a parameter a default, making it optional.
    pub fn default(self, param: &str, value: impl Serialize) -> FunctionTool {
        let value = serde_json::to_value(value).unwrap_or(Json::Null);
        let mut tool = self.edit_param(param, |schema| {
            schema.insert("default".into(), value);
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

    /// Run the function on tokio's blocking thread pool, so slow sync work does not stall
    /// other calls of the same response.
    #[cfg(feature = "native")]
    pub fn blocking(mut self) -> FunctionTool {
        let inner = self.invoke.clone();
        self.invoke = Arc::new(move |args| {
            let inner = inner.clone();
            Box::pin(async move {
                match tokio::task::spawn_blocking(move || {
                    futures_util::FutureExt::now_or_never(inner(args))
                })
                .await
                {
                    Ok(Some(result)) => result,
                    Ok(None) => Err(Error::new(
                        ErrorKind::ToolFailed,
                        "a blocking tool did not complete",
                    )),
                    Err(e) => Err(Error::new(
                        ErrorKind::ToolFailed,
                        format!("the tool's thread failed: {e}"),
                    )),
                }
            })
        });
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

    fn refresh(&mut self) {
        self.definition.signature = Arc::new(RecordType::from_schema(
            &self.definition.name,
            &self.definition.parameters,
        ));
    }
}

impl Tool for FunctionTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Vec<Option<Value>>) -> ToolFuture {
        (self.invoke)(args)
    }
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

/// The parameters object schema (with `$defs`) and the return schema.
fn schema_for(
    names: Vec<&'static str>,
    schemas: fn(&mut schemars::SchemaGenerator) -> (Vec<Json>, Json),
) -> (Json, Json) {
    let mut generator = schemars::SchemaGenerator::default();
    let (params, returns) = schemas(&mut generator);
    let defs = generator.take_definitions(true);
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, schema) in names.iter().zip(params) {
        let root = json!({"$defs": defs.clone()});
        if !Type::from_schema(&schema, &root)
            .to_string()
            .contains("None")
        {
            required.push(Json::String(name.to_string()));
        }
        properties.insert(name.to_string(), schema);
    }
    let mut parameters = json!({"type": "object", "properties": properties, "required": required});
    let mut returns = returns;
    if !defs.is_empty() {
        if let Some(map) = parameters.as_object_mut() {
            map.insert("$defs".into(), Json::Object(defs.clone()));
        }
        if let Some(map) = returns.as_object_mut() {
            map.insert("$defs".into(), Json::Object(defs));
        }
    }
    (parameters, returns)
}

fn arg<T: DeserializeOwned + 'static>(
    args: &mut std::vec::IntoIter<Option<Value>>,
    name: &str,
) -> Result<T, Error> {
    args.next()
        .flatten()
        .unwrap_or(Value::None)
        .into_rust()
        .map_err(|e| Error::new(ErrorKind::Type, format!("`{name}`: {}", e.message)))
}

/// A sync function usable as a tool: `Fn(A, B, ...) -> R` (up to 8 parameters).
pub trait SyncFn<Args, M>: Send + Sync + 'static {
    /// `[&str; N]`: one name per parameter.
    type Names;
    /// The names as a list.
    fn names(names: &Self::Names) -> Vec<&'static str>;
    /// Parameter schemas and the return schema.
    fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json);
    /// Call with bound arguments.
    fn invoke(&self, args: Vec<Option<Value>>) -> Result<Value, Error>;
}

/// An async function usable as a tool: `Fn(A, B, ...) -> impl Future<Output = R>`.
pub trait AsyncFn<Args, M>: Send + Sync + 'static {
    /// `[&str; N]`: one name per parameter.
    type Names;
    /// The names as a list.
    fn names(names: &Self::Names) -> Vec<&'static str>;
    /// Parameter schemas and the return schema.
    fn schemas(generator: &mut schemars::SchemaGenerator) -> (Vec<Json>, Json);
    /// Call with bound arguments.
    fn invoke(
        &self,
        args: Vec<Option<Value>>,
    ) -> Pin<Box<dyn Future<Output = Result<Value, Error>> + Send>>;
}

/// The JSON Schemas of a parameter list, one per type.
macro_rules! param_schemas {
    ($generator:ident; $($a:ident),*) => {{
        let _ = &$generator;
        vec![$($generator.subschema_for::<$a>().to_value(),)*]
    }};
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
            #[allow(unused_variables, unused_mut, non_snake_case)]
            fn invoke(&self, args: Vec<Option<Value>>) -> Result<Value, Error> {
                let mut it = args.into_iter();
                $(let $a: $a = arg(&mut it, stringify!($a))?;)*
                (self)($($a),*).into_value()
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
            #[allow(unused_variables, unused_mut, non_snake_case)]
            fn invoke(&self, args: Vec<Option<Value>>) -> Pin<Box<dyn Future<Output = Result<Value, Error>> + Send>> {
                let mut it = args.into_iter();
                $(let $a: $a = match arg(&mut it, stringify!($a)) {
                    Ok(v) => v,
                    Err(e) => return Box::pin(std::future::ready(Err(e))),
                };)*
                let fut = (self)($($a),*);
                Box::pin(async move { fut.await.into_value() })
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

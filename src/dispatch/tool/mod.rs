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

mod definition;
mod features;
mod function;

pub use self::definition::ToolDefinition;
pub use self::features::{Memo, ToolFeatures};
pub use self::function::{AsyncContextFn, AsyncFn, ContextFn, FunctionTool, SyncFn};

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

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
mod returns;

pub use self::definition::ToolDefinition;
pub use self::features::{Memo, ToolFeatures};
pub use self::function::{AsyncContextFn, AsyncFn, ContextFn, FunctionTool, SyncFn};
pub use self::returns::{
    Fallible, FallibleDyn, FallibleMessage, FallibleTool, Output, Plain, ToolReturn,
};

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

    /// Run at once on the caller's thread, when the tool answers without waiting (a
    /// [`FunctionTool`] of a sync function run [`inline`](FunctionTool::inline)): its result,
    /// or the arguments given back (`Err`) for [`call`](Tool::call). The manager asks this
    /// first for a plain call (no [`features`](Tool::features), nobody listening), which then
    /// needs no boxed future. The default gives the arguments back.
    ///
    /// ```
    /// use fexpr::{FunctionTool, Tool, Value};
    /// let add = FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b);
    /// let args = vec![Some(Value::Int(2)), Some(Value::Int(3))];
    /// // Not inline: it runs on the blocking pool, through `call`.
    /// let args = add.call_now(args).unwrap_err();
    /// let out = add.inline().call_now(args).unwrap().unwrap();
    /// assert_eq!(out.output, Value::Int(5));
    /// ```
    #[allow(clippy::type_complexity)]
    fn call_now(
        &self,
        args: Vec<Option<Value>>,
    ) -> Result<Result<ToolOutput, Error>, Vec<Option<Value>>> {
        Err(args)
    }

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

/// A tool's failure: the [`Error`] the call reports to the model.
///
/// [`ToolError::new`] makes a `ToolFailed` error from a message. Any error converts with `?`
/// or `.into()`: an [`Error`] keeps its kind and hint (the `Limit` error of an empty
/// [`EnvPool`](crate::dispatch::pool::EnvPool) stays `Limit`; its span, which points into another
/// text, is dropped), any other error (`std::io::Error`, `anyhow::Error`, a `String`, a
/// `&str`) becomes a `ToolFailed` error with its message.
///
/// ```
/// use fexpr::ToolError;
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

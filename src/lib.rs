//! fexpr runs the function calls a language model writes: safely and fast.
//!
//! A model answers with text such as `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))`.
//! fexpr parses it with a real Python parser into a small typed IR ([`syntax`]), resolves
//! names only against an allow-listed [`Context`], evaluates with every allocation bounded
//! ([`eval`], [`Limits`]), binds arguments to each tool's JSON-Schema signature ([`types`]),
//! and runs the tools natively on tokio ([`ToolManager`]) — or everything inside a wasmtime
//! guest. Every call yields a [`FunctionOutput`] with an output or a structured [`Error`].
//!
//! ```
//! use fexpr::{Context, FunctionTool, ToolManager, Value};
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Point { x: i64, y: i64 }
//!
//! let manager = ToolManager::new()
//!     .tool(FunctionTool::new("add_points", ["p1", "p2"], |p1: Point, p2: Point| Point { x: p1.x + p2.x, y: p1.y + p2.y }))
//!     .context(Context::new().record::<Point>());
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let out = rt.block_on(manager.execute_func_expr("add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})"));
//! assert_eq!(out.output.unwrap().repr(), "Point(x=4, y=6)");
//! ```

pub mod builtins;
pub mod call;
pub mod check;
pub mod context;
#[cfg(feature = "diagnostics")]
pub mod diagnostic;
pub mod error;
pub mod eval;
pub mod front;
pub mod json_input;
pub mod limits;
pub mod repair;
#[cfg(feature = "sandbox")]
pub mod sandbox;
pub mod syntax;
pub mod types;
pub mod value;
pub mod wire;

#[cfg(feature = "native")]
pub mod demo;
#[cfg(feature = "native")]
pub mod manager;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "native")]
pub mod observe;
#[cfg(feature = "native")]
pub mod pool;
#[cfg(feature = "native")]
pub mod session;
#[cfg(feature = "native")]
pub mod tool;
#[cfg(feature = "native")]
pub mod tooldefs;

pub use call::{Function, FunctionExpression, FunctionOutput};
pub use context::Context;
pub use error::{Error, ErrorKind, LimitKind, Span};
pub use limits::Limits;
pub use value::{NdArray, Record, Value};

#[cfg(feature = "native")]
pub use manager::ToolManager;
#[cfg(feature = "native")]
pub use session::{CallContext, EventKind, Session, ToolEvent, ToolEvents};
#[cfg(feature = "native")]
pub use tool::{FunctionTool, Tool, ToolDefinition, ToolOutput};

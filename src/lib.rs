//! fexpr runs the function calls a language model writes: safely and fast.
//!
//! A model answers with text such as `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))`.
//! fexpr parses it with a real Python parser into a small typed IR, resolves names only
//! against an allow-listed [`Context`], evaluates with every allocation bounded
//! ([`Limits`]), binds arguments to each tool's JSON-Schema signature ([`ToolDefinition`]),
//! and runs the tools natively on tokio ([`ToolManager`]) — or everything inside a wasmtime
//! guest ([`sandbox`]). Every call yields a [`FunctionOutput`] with an output or a structured
//! [`Error`]. ARCHITECTURE.md maps the stages (`syntax`, `resolve`, `eval`, `types`, ...).
//!
//! ```
//! use fexpr::{Context, FunctionTool, ToolManager, Value};
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Point { x: i64, y: i64 }
//!
//! let manager = ToolManager::builder()
//!     .tool(FunctionTool::new("add_points", ["p1", "p2"], |p1: Point, p2: Point| Point { x: p1.x + p2.x, y: p1.y + p2.y }))
//!     .context(Context::new().record::<Point>())
//!     .build()?;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let out = rt.block_on(manager.execute_func_expr("add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})"));
//! assert_eq!(out.output.unwrap().repr(), "Point(x=4, y=6)");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The stages, in the order the data flows (ARCHITECTURE.md): front -> syntax -> resolve -> eval
// -> dispatch, with value, types, sandbox and mcp beside them. Their paths are internal (the
// guest, the Python package, tests and benchmarks use them) and may change; what users need is
// re-exported below.
#[doc(hidden)]
pub mod call;
#[cfg(feature = "native")]
#[doc(hidden)]
pub mod dispatch;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod eval;
#[doc(hidden)]
pub mod front;
#[cfg(feature = "native")]
pub mod grammar;
#[doc(hidden)]
pub mod limits;
#[doc(hidden)]
pub mod resolve;
#[cfg(feature = "native")]
#[doc(hidden)]
pub mod runtime;
#[doc(hidden)]
pub mod syntax;
#[doc(hidden)]
pub mod types;
#[doc(hidden)]
pub mod value;

#[cfg(feature = "mcp")]
pub mod mcp;
pub mod sandbox;

pub use call::{Function, FunctionExpression, FunctionOutput, Receipt};
pub use error::{Error, ErrorKind, LimitKind, Span};
#[cfg(feature = "diagnostics")]
pub use front::diagnostic;
/// The path `fexpr::json_input` had before the stage move; `fexpr::front::json_input` now.
#[doc(hidden)]
pub use front::json_input;
pub use front::{check, repair};
pub use limits::{LimitInfo, LimitMode, Limits};
pub use resolve::context;
pub use resolve::context::Context;
#[cfg(feature = "native")]
pub use runtime::block_on;
pub use value::{NdArray, Record, Value};

#[cfg(feature = "demo")]
pub use dispatch::demo;
#[cfg(feature = "native")]
pub use dispatch::{definitions, manager, observe, pool, request, session, stream, tool, tooldefs};
#[cfg(feature = "native")]
pub use manager::ToolManager;
#[cfg(feature = "native")]
pub use request::{Input, Request, Response};
#[cfg(feature = "native")]
pub use session::{CallContext, EventKind, Session, ToolEvent, ToolEvents};
#[cfg(feature = "native")]
pub use tool::{FunctionTool, Tool, ToolDefinition, ToolError, ToolOutput};

/// A tool from a function: `#[fexpr::tool] fn add(..)` keeps `add` and adds `fn add_tool() ->
/// FunctionTool`, the [`FunctionTool`] a model calls as `add`.
///
/// - **Parameters** come from the signature, by name and type (each `DeserializeOwned +
///   JsonSchema`; an `Option<T>` is optional), in order; up to 8 (6 beside a `CallContext`).
/// - **Descriptions** come from the doc comment: the text before its first heading describes
///   the tool; the items of an `# Arguments` (or `# Parameters`) list describe the parameters
///   (`` * `city` - The city. ``, `* city: The city.`). An item naming no parameter is a compile
///   error.
/// - **Defaults**: `#[default(value)] unit: String` gives the parameter a default, as
///   [`FunctionTool::default`] does (any `Serialize` value, converted to the parameter's type
///   when the tool is built; a value of another type is reported by [`Tool::check`]).
/// - **Injected**: a parameter of type [`CallContext`], anywhere in the list, receives the
///   call's context; it is not in the schema and the model cannot set it.
/// - **`async fn`** works as it is (its future must be `Send`); **`#[fexpr::tool(inline)]`**
///   marks a cheap sync function to run on the calling task ([`FunctionTool::inline`]);
///   **`#[fexpr::tool(name = "lookup")]`** gives the model another name.
///
/// The constructor has the function's visibility. Methods are tools of their type with
/// [`tools`](macro@tools). A parameter without a plain name (`_`, a pattern), a borrowed
/// parameter (`&str`), a generic function, `self` or a `#[default]` on the `CallContext` is a
/// compile error at that spot.
///
/// ```
/// use fexpr::{CallContext, Tool, ToolManager};
///
/// /// Today's weather in a city.
/// ///
/// /// # Arguments
/// ///
/// /// * `city` - The city, in English.
/// /// * `unit` - `C` or `F`.
/// #[fexpr::tool]
/// fn weather(ctx: CallContext, city: String, #[default("C")] unit: String) -> String {
///     format!("{city}: 21 °{unit} (call {})", ctx.tool_call_id())
/// }
///
/// /// Add two numbers.
/// #[fexpr::tool(inline)]
/// fn add(a: i64, #[default(0)] b: i64) -> i64 {
///     a + b
/// }
///
/// let manager = ToolManager::builder().tool(weather_tool()).tool(add_tool()).build().unwrap();
/// let definition = weather_tool();
/// assert_eq!(definition.definition().python_signature(), "weather(city: str, unit: str = 'C') -> str");
/// assert_eq!(definition.definition().description, "Today's weather in a city.");
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// let out = rt.block_on(manager.execute_func_expr("add(a=2)"));
/// assert_eq!(out.output.unwrap().repr(), "2");
/// let out = rt.block_on(manager.execute_func_expr("weather('Oslo')"));
/// assert!(out.output.unwrap().repr().starts_with("'Oslo: 21 °C"));
/// ```
#[cfg(feature = "macros")]
pub use fexpr_macros::tool;

/// Methods as tools: on an inherent `impl` block, makes every method marked `#[tool]` (or
/// `#[tool(inline)]`, `#[tool(name = "..")]`) a tool of the type, by implementing
/// [`Component`](tool::Component): `ToolManager::builder().component(Arc::new(value))` registers them,
/// each holding a clone of the `Arc`. Configuration, clients and state stay in the struct,
/// hidden from the model. Each method is read as [`tool`](macro@tool) reads a function; it
/// takes `&self` (calls may run concurrently: keep mutable state behind a `Mutex` or an
/// atomic) or no `self`. Other methods are left alone.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicI64, Ordering};
/// use fexpr::ToolManager;
///
/// struct Counter { step: i64, total: AtomicI64 }
///
/// #[fexpr::tools]
/// impl Counter {
///     /// Add the step `times` times; returns the new total.
///     #[tool]
///     fn bump(&self, #[default(1)] times: i64) -> i64 {
///         self.total.fetch_add(self.step * times, Ordering::Relaxed) + self.step * times
///     }
///
///     /// The total so far.
///     #[tool]
///     async fn total(&self) -> i64 {
///         self.total.load(Ordering::Relaxed)
///     }
/// }
///
/// let manager = ToolManager::builder()
///     .component(Arc::new(Counter { step: 2, total: AtomicI64::new(0) }))
///     .build()
///     .unwrap();
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// for (call, total) in [("bump()", "2"), ("bump(times=3)", "8"), ("total()", "8")] {
///     let out = rt.block_on(manager.execute_func_expr(call));
///     assert_eq!(out.output.unwrap().repr(), total);
/// }
/// ```
#[cfg(feature = "macros")]
pub use fexpr_macros::tools;

//! Dispatch: tools and how calls reach them. A [`Tool`](tool::Tool) (from a function, a
//! component's methods, an MCP server), sessions and the context a call sees, environment
//! pools, bounded observations, the [`ToolManager`](manager::ToolManager) that runs a
//! [`Request`](request::Request) natively or in the sandbox, and tool definitions for providers
//! and from their JSON.

mod compat;
pub mod definitions;
pub mod deltas;
#[cfg(feature = "demo")]
pub mod demo;
pub mod manager;
pub mod observe;
pub mod pool;
pub mod request;
#[cfg(feature = "sandbox")]
pub(crate) mod sandboxed;
pub mod session;
pub mod stream;
pub mod tool;
pub mod tooldefs;

use std::future::Future;
use std::pin::Pin;

/// `future` in a box of its own, written there in place. `Box::pin(future)` builds the future
/// on the stack and copies it in, and the copy is as large as the future's type (its largest
/// state), though a future not yet polled holds only its arguments. Written into an
/// uninitialised box, only the arguments are stored (callgrind, a native `add`: the request's
/// box had cost a 1.2 KB copy, 184 of the call's 10.3 k instructions).
#[inline(always)]
pub(crate) fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::into_pin(Box::write(Box::new_uninit(), make()))
}

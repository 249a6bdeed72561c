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

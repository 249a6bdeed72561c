//! The wasmtime sandbox: evaluations run inside a fresh instance of the fexpr guest module,
//! bounded in fuel, wall-clock time, memory, stack, host calls and output size.
//!
//! The host keeps one [`Sandbox`]: a wasmtime engine (with a pooling allocator, or instances
//! mapped on demand: [`Allocation`]), the guest module compiled once (and cached on disk), an
//! `InstancePre` with the imports linked, and one thread that ticks the engine's epoch and
//! drops finished evaluations' stores.
//! [`Sandbox::run`] gives every evaluation a fresh instance in its own store, which is dropped
//! afterwards whatever happened (on that thread, after the outcome is returned); a trapped
//! instance is never reused. Every way the guest can
//! stop early becomes a structured [`Error`](crate::Error): a budget ([`ErrorKind::Limit`](crate::ErrorKind::Limit), naming the
//! [`Limits`](crate::Limits) field, the budget and what was used) or anything else ([`ErrorKind::Sandbox`](crate::ErrorKind::Sandbox)).
//!
//! # The guest ABI
//!
//! The guest is a `wasm32-wasip1` reactor module. It exports `memory`, optionally
//! `_initialize` (called once per instance, before anything else; the fexpr guest has none),
//! and
//! - `fexpr_evaluate(len: i32) -> i64`: evaluates the request of `len` bytes, which the host
//!   holds pending for the guest to copy into its memory with `host_take`; returns
//!   `(resp_ptr << 32) | resp_len` of the response. One call per evaluation.
//!
//! It imports from module `"fexpr"`:
//! - `host_call(ptr: i32, len: i32) -> i32`: the host runs the request at `ptr..ptr+len`
//!   with [`HostCalls::call`] (awaiting it on the caller's runtime), keeps the reply pending
//!   and returns its length;
//! - `host_take(ptr: i32)`: the host copies the pending bytes (the request, then each reply)
//!   to `ptr..ptr+len`;
//! - `host_lookup(key_ptr: i32, key_len: i32, out_ptr: i32, out_len: i32) -> i32`: the host's
//!   answer for the key at `key_ptr..key_ptr+key_len` ([`HostCalls::lookup`]: data it prepared,
//!   such as the manager's context entries), written to `out_ptr` when it fits in `out_len`
//!   bytes; its length either way, or -1 when there is none;
//!
//! and at most the WASI functions in [`ALLOWED_IMPORTS`], which the host implements without
//! capabilities. The bytes are opaque here.
//!
//! ```no_run
//! # async fn demo() -> Result<(), fexpr::Error> {
//! use fexpr::sandbox::{HostCalls, Sandbox, SandboxConfig};
//! use std::{future::Future, pin::Pin, sync::Arc};
//!
//! struct Echo;
//! impl HostCalls for Echo {
//!     fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
//!         Box::pin(async move { request })
//!     }
//! }
//!
//! let sandbox = Sandbox::new(SandboxConfig::default())?;
//! let outcome = sandbox.run(b"request", &fexpr::Limits::default(), Arc::new(Echo)).await;
//! println!("{:?} used {} fuel", outcome.result, outcome.receipt.fuel_used);
//! # Ok(()) }
//! ```
//!
//! [`wire`] is the request and response format between the host and the guest; it is compiled
//! into both (the guest builds this crate without the `sandbox` feature).

#[cfg(feature = "sandbox")]
mod cache;
#[cfg(feature = "sandbox")]
mod engine;
#[cfg(feature = "sandbox")]
mod guest;
#[cfg(feature = "sandbox")]
mod runner;
#[doc(hidden)]
pub mod wire;

#[cfg(feature = "sandbox")]
pub use cache::{ModuleCache, ModuleSource, MODULE_CACHE_ENV};
#[cfg(feature = "sandbox")]
pub use engine::Allocation;
#[cfg(feature = "sandbox")]
pub use guest::{ALLOWED_IMPORTS, HOST_MODULE};
#[cfg(feature = "sandbox")]
pub(crate) use runner::GUEST_WASM_INFO;
#[cfg(feature = "sandbox")]
pub use runner::{
    HostCalls, Receipt, Sandbox, SandboxConfig, SandboxOutcome, GUEST_WASM, GUEST_WASM_ENV,
};

//! Cold start of the sandbox: a process that starts, loads the (cached) guest module, runs one
//! evaluation and exits. Time the whole process with
//! `hyperfine -N --warmup 3 target/release/examples/sandbox_cold_start`; it also prints its
//! own split (build the sandbox / one evaluation) to stderr.

use fexpr::sandbox::{HostCalls, Sandbox, SandboxConfig};
use fexpr::Limits;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

struct Echo;

impl HostCalls for Echo {
    fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
        Box::pin(async move { request })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let sandbox = Sandbox::new(SandboxConfig::default())?;
    let built = started.elapsed();
    let outcome =
        runtime.block_on(sandbox.run(b"add(a=2, b=3)", &Limits::default(), Arc::new(Echo)));
    let response = outcome.result?;
    eprintln!(
        "module {:?}: sandbox ready in {built:?}, evaluation in {:?} ({} bytes back), total {:?}",
        sandbox.module_source(),
        outcome.receipt.wall_time,
        response.len(),
        started.elapsed()
    );
    Ok(())
}

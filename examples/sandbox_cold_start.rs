//! Cold start of the sandbox: a process that starts, loads the (cached) guest module, runs one
//! sandboxed call with the demo tools and exits. Such a process has no use for an instance
//! pool, so it maps its one instance on demand, as `fexpr exec --sandbox` does.
//! `cargo bench --bench sandbox` measures the whole process (`cold_start/process_on_demand`,
//! and `cold_start/process` with the default pool); this example prints its own split to
//! stderr: `cargo run --release --example sandbox_cold_start`.

use fexpr::sandbox::{Sandbox, SandboxConfig};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let sandbox = Sandbox::new(SandboxConfig::on_demand())?;
    let built = started.elapsed();
    let manager = fexpr::demo::builder().sandbox(sandbox.clone()).build()?;
    let out = runtime.block_on(manager.execute_func_expr_via_sandbox("add(a=2, b=3)"));
    println!("{}", out.to_json());
    eprintln!(
        "module {:?}: sandbox ready in {built:?}, first call in {:?}, total {:?}",
        sandbox.module_source(),
        out.receipt.map(|r| r.wall_time).unwrap_or_default(),
        started.elapsed()
    );
    Ok(())
}

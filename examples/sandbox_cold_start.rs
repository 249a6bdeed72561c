//! Cold start of the sandbox: a process that starts, loads the (cached) guest module, runs one
//! sandboxed call with the demo tools and exits. Such a process has no use for an instance
//! pool, so it maps its one instance on demand, as `fexpr exec --sandbox` does.
//! `cargo bench --bench sandbox` measures the whole process (`cold_start/process_on_demand`,
//! and `cold_start/process` with the default pool); this example prints its own split to
//! stderr, after the result on stdout (flushed before anything is torn down):
//! `cargo run --release --example sandbox_cold_start`. It allocates with mimalloc, or glibc's
//! malloc with `FEXPR_ALLOCATOR=system`.

#[path = "../benches/common/allocator.rs"]
mod allocator;

use fexpr::sandbox::{Sandbox, SandboxConfig};
use std::io::Write;
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let sandbox = Sandbox::new(SandboxConfig::on_demand())?;
    let built = started.elapsed();
    let manager = fexpr::demo::builder().sandbox(sandbox.clone()).build()?;
    let managed = started.elapsed();
    let out = runtime.block_on(manager.execute_func_expr_via_sandbox("add(a=2, b=3)"));
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", out.to_json())?;
    stdout.flush()?;
    eprintln!(
        "module {:?}, {}: sandbox ready in {built:?}, manager built in {:?}, first call in {:?}, \
         total {:?}",
        sandbox.module_source(),
        allocator::name(),
        managed - built,
        out.receipt.map(|r| r.wall_time).unwrap_or_default(),
        started.elapsed()
    );
    Ok(())
}

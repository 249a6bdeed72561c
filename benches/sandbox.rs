//! The sandbox side by side with the native path, and its cold start.
//!
//! - `sandbox_round_trip/echo_wat`: the engine's floor — a fresh instance of a tiny guest that
//!   answers with its request (instantiate, `fexpr_evaluate`, which takes the request with
//!   `host_take`, copy out; the store is dropped on the sandbox's thread).
//! - `execute/{native,sandbox}/{add,add_points,numpy_sum}`: the seed's three calls through
//!   `ToolManager::execute_func_expr` and `execute_func_expr_via_sandbox` (a fresh instance of
//!   the real guest per call: parse, evaluate, one host call, the tool on the host).
//!   `execute/sandbox_on_demand/*`: the same with `SandboxConfig::on_demand()` (each instance
//!   mapped and unmapped around its call instead of taken from the pool).
//! - `cold_start/process`: a new process (this executable, re-run with `FEXPR_COLD_START` set)
//!   from spawn to its first sandboxed result, the compiled guest loaded from the disk cache,
//!   with the default (pooled) sandbox; `cold_start/process_on_demand` with
//!   `SandboxConfig::on_demand()`, as `fexpr exec --sandbox` builds it.
//!
//! Run with `cargo bench --bench sandbox`. The medians are in
//! `target/criterion/*/new/estimates.json`.
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

use criterion::{criterion_group, Criterion};
use fexpr::sandbox::{HostCalls, ModuleCache, Sandbox, SandboxConfig};
use fexpr::Limits;
use std::future::Future;
use std::pin::Pin;
use std::process::Command;
use std::sync::Arc;

/// The ABI with a bump allocator; `fexpr_evaluate` takes the request and answers with it.
const ECHO_WAT: &str = r#"(module
  (import "fexpr" "host_call" (func $host_call (param i32 i32) (result i32)))
  (import "fexpr" "host_take" (func $host_take (param i32)))
  (memory (export "memory") 1)
  (global $bump (mut i32) (i32.const 1024))
  (func $alloc (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $bump))
    (global.set $bump (i32.add (local.get $p) (local.get $len)))
    (local.get $p))
  (func (export "fexpr_evaluate") (param $len i32) (result i64)
    (local $ptr i32)
    (local.set $ptr (call $alloc (local.get $len)))
    (call $host_take (local.get $ptr))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (local.get $len)))))"#;

/// The same, but it hands the request to the host once and answers with the reply.
const RELAY_WAT: &str = r#"(module
  (import "fexpr" "host_call" (func $host_call (param i32 i32) (result i32)))
  (import "fexpr" "host_take" (func $host_take (param i32)))
  (memory (export "memory") 1)
  (global $bump (mut i32) (i32.const 1024))
  (func $alloc (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $bump))
    (global.set $bump (i32.add (local.get $p) (local.get $len)))
    (local.get $p))
  (func (export "fexpr_evaluate") (param $len i32) (result i64)
    (local $ptr i32) (local $n i32) (local $p i32)
    (local.set $ptr (call $alloc (local.get $len)))
    (call $host_take (local.get $ptr))
    (local.set $n (call $host_call (local.get $ptr) (local.get $len)))
    (local.set $p (call $alloc (local.get $n)))
    (call $host_take (local.get $p))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32))
            (i64.extend_i32_u (local.get $n)))))"#;

struct Echo;

impl HostCalls for Echo {
    fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
        Box::pin(async move { request })
    }
}

const REQUEST: &[u8] = b"add(a=2, b=3)";

fn round_trips(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let config = SandboxConfig::default().module_cache(ModuleCache::Off);
    let limits = Limits::default();
    let host: Arc<dyn HostCalls> = Arc::new(Echo);
    let sandboxes = [
        (
            "echo_wat",
            Sandbox::from_module_bytes(config.clone(), ECHO_WAT.as_bytes()),
        ),
        (
            "relay_wat",
            Sandbox::from_module_bytes(config.clone(), RELAY_WAT.as_bytes()),
        ),
    ];
    let mut group = c.benchmark_group("sandbox_round_trip");
    for (name, sandbox) in sandboxes {
        let sandbox = sandbox.expect("sandbox");
        let check = rt.block_on(sandbox.run(REQUEST, &limits, host.clone()));
        assert_eq!(check.result.as_deref(), Ok(REQUEST), "{name}");
        group.bench_function(name, |b| {
            b.iter(|| rt.block_on(sandbox.run(REQUEST, &limits, host.clone())))
        });
    }
    group.finish();
}

const CALLS: [(&str, &str); 3] = [
    ("add", "add(a=2, b=3)"),
    (
        "add_points",
        "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
    ),
    ("numpy_sum", "numpy_sum(arr=np.array([[1, 2], [3, 4]]))"),
];

fn native_and_sandboxed(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let manager = fexpr::demo::manager();
    let on_demand = fexpr::demo::builder()
        .sandbox(on_demand_sandbox())
        .build()
        .unwrap();
    let mut group = c.benchmark_group("execute");
    for (name, text) in CALLS {
        let native = rt.block_on(manager.execute_func_expr(text));
        let sandboxed = rt.block_on(manager.execute_func_expr_via_sandbox(text));
        let mapped = rt.block_on(on_demand.execute_func_expr_via_sandbox(text));
        assert!(native.output.is_ok(), "{name}: {native}");
        assert_eq!(native.output, sandboxed.output, "{name}: {sandboxed}");
        assert_eq!(native.output, mapped.output, "{name}: {mapped}");
        group.bench_function(format!("native/{name}"), |b| {
            b.iter(|| rt.block_on(manager.execute_func_expr(text)))
        });
        group.bench_function(format!("sandbox/{name}"), |b| {
            b.iter(|| rt.block_on(manager.execute_func_expr_via_sandbox(text)))
        });
        group.bench_function(format!("sandbox_on_demand/{name}"), |b| {
            b.iter(|| rt.block_on(on_demand.execute_func_expr_via_sandbox(text)))
        });
    }
    group.finish();
}

/// The default sandbox configuration with instances mapped on demand.
fn on_demand_sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::on_demand()).expect("sandbox")
}

/// What the child process does: build the sandbox (the guest from the disk cache; the default
/// pooled one, or an on-demand one when `$FEXPR_COLD_START` is `on_demand`), run one sandboxed
/// call, print its output.
fn cold_start_child(how: &std::ffi::OsStr) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let manager = match how.to_str() {
        Some("on_demand") => fexpr::demo::builder()
            .sandbox(on_demand_sandbox())
            .build()
            .unwrap(),
        _ => fexpr::demo::manager(),
    };
    let out = rt.block_on(manager.execute_func_expr_via_sandbox("add(a=2, b=3)"));
    println!("{}", out.to_json());
}

fn cold_start(c: &mut Criterion) {
    let exe = std::env::current_exe().expect("the bench executable");
    let run = |how: &str| {
        let out = Command::new(&exe)
            .env("FEXPR_COLD_START", how)
            .output()
            .expect("spawn the child");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(r#""output":5"#),
            "the child answered {:?} {:?}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run("pooled"); // fills the module cache
    let mut group = c.benchmark_group("cold_start");
    group.sample_size(20);
    group.bench_function("process", |b| b.iter(|| run("pooled")));
    group.bench_function("process_on_demand", |b| b.iter(|| run("on_demand")));
    group.finish();
}

criterion_group!(benches, round_trips, native_and_sandboxed, cold_start);

fn main() {
    if let Some(how) = std::env::var_os("FEXPR_COLD_START") {
        cold_start_child(&how);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

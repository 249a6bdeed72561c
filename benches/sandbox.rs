//! Fresh-instance round trips through the sandbox: instantiate, `_initialize` (if any),
//! `fexpr_alloc`, copy in, `fexpr_evaluate`, copy out, drop the store.
//!
//! Run with `env -u RUST_BACKTRACE cargo bench --bench sandbox` (a backtrace setting makes
//! wasmtime slower). The medians are in `target/criterion/*/new/estimates.json`.

use criterion::{criterion_group, criterion_main, Criterion};
use fexpr::sandbox::{HostCalls, ModuleCache, Sandbox, SandboxConfig};
use fexpr::Limits;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The ABI with a bump allocator; `fexpr_evaluate` answers with the request.
const ECHO_WAT: &str = r#"(module
  (import "fexpr" "host_call" (func $host_call (param i32 i32) (result i32)))
  (import "fexpr" "host_take" (func $host_take (param i32)))
  (memory (export "memory") 1)
  (global $bump (mut i32) (i32.const 1024))
  (func $alloc (export "fexpr_alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $bump))
    (global.set $bump (i32.add (local.get $p) (local.get $len)))
    (local.get $p))
  (func (export "fexpr_evaluate") (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (local.get $len)))))"#;

/// The same, but it hands the request to the host once and answers with the reply.
const RELAY_WAT: &str = r#"(module
  (import "fexpr" "host_call" (func $host_call (param i32 i32) (result i32)))
  (import "fexpr" "host_take" (func $host_take (param i32)))
  (memory (export "memory") 1)
  (global $bump (mut i32) (i32.const 1024))
  (func $alloc (export "fexpr_alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $bump))
    (global.set $bump (i32.add (local.get $p) (local.get $len)))
    (local.get $p))
  (func (export "fexpr_evaluate") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32) (local $p i32)
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
    let config = SandboxConfig {
        module_cache: ModuleCache::Off,
        ..SandboxConfig::default()
    };
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
        ("real_guest", Sandbox::new(config)),
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

criterion_group!(benches, round_trips);
criterion_main!(benches);

//! The sandbox engine against small WAT guests that implement the guest ABI (well or badly),
//! and a smoke test of the real guest module.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step
#![cfg(feature = "sandbox")]

use fexpr::sandbox::{
    HostCalls, ModuleCache, ModuleSource, Sandbox, SandboxConfig, SandboxOutcome, ALLOWED_IMPORTS,
};
use fexpr::{ErrorKind, Limits};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Guests

/// The ABI scaffold: imports, one page of memory and a bump allocator that grows memory,
/// around the body of `fexpr_evaluate(len) -> i64`, which has taken the request into
/// `$ptr..$ptr+$len` first (locals `$n`, `$p` are free to use).
fn guest(evaluate_body: &str) -> String {
    guest_with("", evaluate_body)
}

fn guest_with(extra: &str, evaluate_body: &str) -> String {
    format!(
        r#"(module
  (import "fexpr" "host_call" (func $host_call (param i32 i32) (result i32)))
  (import "fexpr" "host_take" (func $host_take (param i32)))
  (memory (export "memory") 1)
  (global $bump (mut i32) (i32.const 1024))
  (func $alloc (param $len i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p (global.get $bump))
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then (drop (memory.grow
        (i32.div_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                   (i32.const 65536))))))
    (global.set $bump (local.get $end))
    (local.get $p))
  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (local.get $len))))
  {extra}
  (func (export "fexpr_evaluate") (param $len i32) (result i64)
    (local $ptr i32) (local $n i32) (local $p i32)
    (local.set $ptr (call $alloc (local.get $len)))
    (call $host_take (local.get $ptr))
    {evaluate_body}))"#
    )
}

/// [`guest`] with more imports (which must precede the functions).
fn guest_importing(imports: &str, evaluate_body: &str) -> String {
    guest(evaluate_body).replacen(
        "  (memory (export \"memory\") 1)",
        &format!("  {imports}\n  (memory (export \"memory\") 1)"),
        1,
    )
}

/// Answers with the request.
fn echo_guest() -> String {
    guest("(call $pack (local.get $ptr) (local.get $len))")
}

/// Hands the request to the host once and answers with the reply.
fn relay_guest() -> String {
    guest(
        "(local.set $n (call $host_call (local.get $ptr) (local.get $len)))
         (local.set $p (call $alloc (local.get $n)))
         (call $host_take (local.get $p))
         (call $pack (local.get $p) (local.get $n))",
    )
}

/// Calls the host `count` times, then echoes.
fn chatty_guest(count: u32) -> String {
    guest(&format!(
        "(block $done (loop $again
           (br_if $done (i32.ge_u (local.get $n) (i32.const {count})))
           (local.set $p (call $alloc (call $host_call (local.get $ptr) (local.get $len))))
           (call $host_take (local.get $p))
           (local.set $n (i32.add (local.get $n) (i32.const 1)))
           (br $again)))
         (call $pack (local.get $ptr) (local.get $len))"
    ))
}

fn loop_forever_guest() -> String {
    guest("(loop $forever (br $forever)) (unreachable)")
}

fn memory_bomb_guest() -> String {
    // Grows by 1 MiB at a time for as long as memory.grow succeeds.
    guest(
        "(loop $more (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
         (call $pack (i32.const 0) (i32.const 0))",
    )
}

fn deep_recursion_guest() -> String {
    guest_with(
        "(func $down (param $depth i64) (result i64)
           (i64.add (call $down (i64.add (local.get $depth) (i64.const 1))) (i64.const 1)))",
        "(drop (call $down (i64.const 0))) (call $pack (i32.const 0) (i32.const 0))",
    )
}

fn sandbox_for(wat: &str) -> Sandbox {
    Sandbox::from_module_bytes(wat_config(), wat.as_bytes()).expect("test guest compiles")
}

fn wat_config() -> SandboxConfig {
    SandboxConfig::default()
        .max_instances(8)
        .module_cache(ModuleCache::Off)
}

// ---------------------------------------------------------------------------------------------
// Hosts

/// Replies with the request reversed, counting calls.
#[derive(Default)]
struct Reverse {
    calls: AtomicU32,
}

impl HostCalls for Reverse {
    fn call(&self, mut request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        request.reverse();
        Box::pin(async move { request })
    }
}

/// Sleeps, then replies with the request.
struct Sleepy(Duration);

impl HostCalls for Sleepy {
    fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
        let pause = self.0;
        Box::pin(async move {
            tokio::time::sleep(pause).await;
            request
        })
    }
}

fn reverse() -> Arc<dyn HostCalls> {
    Arc::new(Reverse::default())
}

async fn run(sandbox: &Sandbox, request: &[u8], limits: &Limits) -> SandboxOutcome {
    sandbox.run(request, limits, reverse()).await
}

#[track_caller]
fn expect_error(outcome: &SandboxOutcome, kind: ErrorKind, words: &[&str]) {
    let error = outcome
        .result
        .as_ref()
        .expect_err("the evaluation should have failed");
    assert_eq!(error.kind, kind, "{error}");
    for word in words {
        assert!(error.message.contains(word), "{word:?} not in: {error}");
    }
}

// ---------------------------------------------------------------------------------------------
// The ABI, working

#[tokio::test]
async fn echo_round_trip() {
    let sandbox = sandbox_for(&echo_guest());
    let outcome = run(&sandbox, b"add(a=2, b=3)", &Limits::default()).await;
    assert_eq!(outcome.result.as_deref(), Ok(&b"add(a=2, b=3)"[..]));
    assert!(outcome.receipt.fuel_used > 0);
    assert_eq!(outcome.receipt.peak_memory_bytes, 1 << 16);
    assert_eq!(outcome.receipt.host_calls, 0);
}

#[tokio::test]
async fn empty_request_and_response() {
    let sandbox = sandbox_for(&echo_guest());
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    assert_eq!(outcome.result, Ok(vec![]));
}

#[tokio::test]
async fn large_request_grows_guest_memory() {
    let sandbox = sandbox_for(&echo_guest());
    let request = vec![7u8; 3 << 20];
    let outcome = run(&sandbox, &request, &Limits::default()).await;
    assert_eq!(outcome.result.as_deref(), Ok(&request[..]));
    assert!(outcome.receipt.peak_memory_bytes >= 3 << 20);
}

#[tokio::test]
async fn host_call_round_trip() {
    let sandbox = sandbox_for(&relay_guest());
    let host = Arc::new(Reverse::default());
    let outcome = sandbox.run(b"abc", &Limits::default(), host.clone()).await;
    assert_eq!(outcome.result.as_deref(), Ok(&b"cba"[..]));
    assert_eq!(outcome.receipt.host_calls, 1);
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn each_evaluation_gets_a_fresh_instance() {
    // The guest answers with a global counter it increments: 1 every time, never 2.
    let wat = guest_with(
        "(global $runs (mut i32) (i32.const 0))",
        "(global.set $runs (i32.add (global.get $runs) (i32.const 1)))
         (local.set $p (call $alloc (i32.const 1)))
         (i32.store8 (local.get $p) (global.get $runs))
         (call $pack (local.get $p) (i32.const 1))",
    );
    let sandbox = sandbox_for(&wat);
    for _ in 0..3 {
        let outcome = run(&sandbox, b"x", &Limits::default()).await;
        assert_eq!(outcome.result, Ok(vec![1]));
    }
}

#[tokio::test]
async fn initialize_runs_once_before_evaluate() {
    let wat = guest_with(
        "(global $ready (mut i32) (i32.const 0))
         (func (export \"_initialize\")
           (global.set $ready (i32.add (global.get $ready) (i32.const 1))))",
        "(local.set $p (call $alloc (i32.const 1)))
         (i32.store8 (local.get $p) (global.get $ready))
         (call $pack (local.get $p) (i32.const 1))",
    );
    let sandbox = sandbox_for(&wat);
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    assert_eq!(outcome.result, Ok(vec![1]));
}

#[tokio::test]
async fn a_trap_does_not_spoil_the_next_evaluation() {
    // Traps (unreachable) when the request is empty, echoes otherwise.
    let wat = guest(
        "(if (i32.eqz (local.get $len)) (then (unreachable)))
         (call $pack (local.get $ptr) (local.get $len))",
    );
    let sandbox = sandbox_for(&wat);
    let limits = Limits::default();
    expect_error(
        &run(&sandbox, b"", &limits).await,
        ErrorKind::Sandbox,
        &["unreachable"],
    );
    assert_eq!(
        run(&sandbox, b"ok", &limits).await.result,
        Ok(b"ok".to_vec())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_concurrent_evaluations_than_pool_slots() {
    let sandbox =
        Sandbox::from_module_bytes(wat_config().max_instances(2), relay_guest().as_bytes())
            .unwrap();
    let host: Arc<dyn HostCalls> = Arc::new(Sleepy(Duration::from_millis(20)));
    let tasks: Vec<_> = (0..12u8)
        .map(|i| {
            let (sandbox, host) = (sandbox.clone(), host.clone());
            tokio::spawn(async move { sandbox.run(&[i], &Limits::default(), host).await })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().result, Ok(vec![i as u8]));
    }
}

// ---------------------------------------------------------------------------------------------
// Limits

#[tokio::test]
async fn infinite_loop_runs_out_of_fuel() {
    let sandbox = sandbox_for(&loop_forever_guest());
    let limits = Limits::default().fuel(1_000_000);
    let outcome = run(&sandbox, b"", &limits).await;
    expect_error(&outcome, ErrorKind::Limit, &["fuel", "1000000"]);
    assert_eq!(outcome.receipt.fuel_used, 1_000_000);
}

#[tokio::test]
async fn infinite_loop_with_huge_fuel_hits_the_deadline() {
    let sandbox = sandbox_for(&loop_forever_guest());
    let limits = Limits::default()
        .fuel(u64::MAX)
        .deadline(Duration::from_millis(100));
    let started = Instant::now();
    let outcome = run(&sandbox, b"", &limits).await;
    let took = started.elapsed();
    expect_error(&outcome, ErrorKind::Limit, &["deadline", "100ms"]);
    assert!(took >= Duration::from_millis(100), "{took:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(outcome.receipt.fuel_used > 0);
}

#[tokio::test]
async fn extreme_budgets_are_accepted() {
    let sandbox = sandbox_for(&echo_guest());
    let generous = Limits::default()
        .fuel(u64::MAX)
        .deadline(Duration::MAX)
        .memory_bytes(usize::MAX)
        .max_output_bytes(usize::MAX)
        .max_host_calls(u32::MAX);
    assert_eq!(
        run(&sandbox, b"hi", &generous).await.result,
        Ok(b"hi".to_vec())
    );

    let stingy = Limits::default()
        .fuel(0)
        .deadline(Duration::ZERO)
        .memory_bytes(0)
        .max_output_bytes(0)
        .max_host_calls(0);
    let outcome = run(&sandbox, b"hi", &stingy).await;
    assert_eq!(outcome.result.unwrap_err().kind, ErrorKind::Limit);
}

#[tokio::test]
async fn memory_bomb_is_refused_at_the_cap() {
    let sandbox = sandbox_for(&memory_bomb_guest());
    let limits = Limits::default().memory_bytes(8 << 20);
    let outcome = run(&sandbox, b"", &limits).await;
    expect_error(
        &outcome,
        ErrorKind::Limit,
        &["memory_bytes", &(8 << 20).to_string()],
    );
    assert!(outcome.receipt.peak_memory_bytes <= 8 << 20);
    assert!(outcome.receipt.peak_memory_bytes > 6 << 20);
}

#[tokio::test]
async fn memory_limit_is_cut_to_the_sandbox_ceiling() {
    let sandbox = Sandbox::from_module_bytes(
        wat_config().max_memory_bytes(4 << 20),
        memory_bomb_guest().as_bytes(),
    )
    .unwrap();
    let limits = Limits::default().memory_bytes(1 << 30);
    let outcome = run(&sandbox, b"", &limits).await;
    expect_error(&outcome, ErrorKind::Limit, &["memory_bytes"]);
    assert!(outcome.receipt.peak_memory_bytes <= 4 << 20);
}

#[tokio::test]
async fn initial_memory_over_the_cap_is_refused() {
    let wat = echo_guest().replace(
        "(memory (export \"memory\") 1)",
        "(memory (export \"memory\") 200)",
    );
    let sandbox = sandbox_for(&wat);
    let limits = Limits::default().memory_bytes(1 << 20);
    expect_error(
        &run(&sandbox, b"", &limits).await,
        ErrorKind::Limit,
        &["memory_bytes"],
    );
}

#[tokio::test]
async fn deep_recursion_overflows_the_stack() {
    let sandbox = sandbox_for(&deep_recursion_guest());
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(&outcome, ErrorKind::Limit, &["wasm_stack_bytes"]);
}

#[tokio::test]
async fn too_many_host_calls() {
    let sandbox = sandbox_for(&chatty_guest(1000));
    let limits = Limits::default().max_host_calls(5);
    let host = Arc::new(Reverse::default());
    let outcome = sandbox.run(b"q", &limits, host.clone()).await;
    expect_error(&outcome, ErrorKind::Limit, &["max_host_calls", "6 > 5"]);
    assert_eq!(outcome.receipt.host_calls, 5);
    assert_eq!(host.calls.load(Ordering::SeqCst), 5);

    // At the limit exactly is fine.
    let sandbox = sandbox_for(&chatty_guest(5));
    assert_eq!(
        sandbox.run(b"q", &limits, host).await.result,
        Ok(b"q".to_vec())
    );
}

#[tokio::test]
async fn oversized_response_is_refused_before_copying() {
    // Claims a 2 GiB response: refused on its length, never read.
    let sandbox = sandbox_for(&guest("(call $pack (i32.const 0) (i32.const 0x7fffffff))"));
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Limit,
        &["max_output_bytes", "2147483647"],
    );

    let sandbox = sandbox_for(&echo_guest());
    let limits = Limits::default().max_output_bytes(3);
    expect_error(
        &run(&sandbox, b"abcd", &limits).await,
        ErrorKind::Limit,
        &["4 > 3"],
    );
    assert_eq!(
        run(&sandbox, b"abc", &limits).await.result,
        Ok(b"abc".to_vec())
    );
}

#[tokio::test]
async fn slow_host_call_completes_within_the_deadline() {
    let sandbox = sandbox_for(&relay_guest());
    let host = Arc::new(Sleepy(Duration::from_millis(50)));
    let outcome = sandbox.run(b"zz", &Limits::default(), host).await;
    assert_eq!(outcome.result, Ok(b"zz".to_vec()));
    assert!(outcome.receipt.wall_time >= Duration::from_millis(50));
}

#[tokio::test]
async fn deadline_cancels_a_slow_host_call() {
    let sandbox = sandbox_for(&relay_guest());
    let host = Arc::new(Sleepy(Duration::from_secs(30)));
    let limits = Limits::default().deadline(Duration::from_millis(50));
    let started = Instant::now();
    let outcome = sandbox.run(b"zz", &limits, host).await;
    expect_error(&outcome, ErrorKind::Limit, &["deadline"]);
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(outcome.receipt.host_calls, 1, "started, then cancelled");
    // The sandbox is still fine.
    let outcome = sandbox.run(b"ok", &Limits::default(), reverse()).await;
    assert_eq!(outcome.result, Ok(b"ko".to_vec()));
}

#[test]
fn sandbox_is_shareable() {
    fn shareable<T: Clone + Send + Sync + 'static>() {}
    shareable::<Sandbox>();
}

#[tokio::test]
async fn wasi_has_no_environment_and_discards_output() {
    // environ_sizes_get reports zero variables; fd_write to stdout "succeeds" into nothing.
    let wat = guest_importing(
        r#"(import "wasi_snapshot_preview1" "environ_sizes_get"
             (func $environ_sizes_get (param i32 i32) (result i32)))
           (import "wasi_snapshot_preview1" "fd_write"
             (func $fd_write (param i32 i32 i32 i32) (result i32)))"#,
        "(local.set $p (i32.and (i32.add (call $alloc (i32.const 48)) (i32.const 7))
                                (i32.const -8)))
         ;; p+0: environment count, p+4: environment bytes
         (drop (call $environ_sizes_get (local.get $p) (i32.add (local.get $p) (i32.const 4))))
         ;; p+8: iovec {ptr, len} of the request, p+16: bytes written, p+20: errno
         (i32.store (i32.add (local.get $p) (i32.const 8)) (local.get $ptr))
         (i32.store (i32.add (local.get $p) (i32.const 12)) (local.get $len))
         (i32.store (i32.add (local.get $p) (i32.const 20))
           (call $fd_write (i32.const 1) (i32.add (local.get $p) (i32.const 8)) (i32.const 1)
                           (i32.add (local.get $p) (i32.const 16))))
         ;; answer: count, bytes, written, errno
         (i64.store (i32.add (local.get $p) (i32.const 8)) (i64.load (i32.add (local.get $p) (i32.const 16))))
         (call $pack (local.get $p) (i32.const 16))",
    );
    let sandbox = sandbox_for(&wat);
    let outcome = run(&sandbox, b"to stdout", &Limits::default()).await;
    let bytes = outcome.result.expect("runs");
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [0, 0, 9, 0], "env count, env bytes, written, errno");
}

#[tokio::test]
async fn fd_write_has_no_files_and_checks_its_buffers() {
    let import = r#"(import "wasi_snapshot_preview1" "fd_write"
             (func $fd_write (param i32 i32 i32 i32) (result i32)))"#;
    // p+0: iovec {request, len}, p+8: bytes written; answer: errno of fd 3, errno of 2000
    // iovecs on stdout, bytes written to stderr.
    let wat = guest_importing(
        import,
        "(local.set $p (i32.and (i32.add (call $alloc (i32.const 32)) (i32.const 7))
                                (i32.const -8)))
         (i32.store (local.get $p) (local.get $ptr))
         (i32.store (i32.add (local.get $p) (i32.const 4)) (local.get $len))
         (i32.store (i32.add (local.get $p) (i32.const 12))
           (call $fd_write (i32.const 3) (local.get $p) (i32.const 1)
                           (i32.add (local.get $p) (i32.const 8))))
         (i32.store (i32.add (local.get $p) (i32.const 16))
           (call $fd_write (i32.const 1) (local.get $p) (i32.const 2000)
                           (i32.add (local.get $p) (i32.const 8))))
         (drop (call $fd_write (i32.const 2) (local.get $p) (i32.const 1)
                               (i32.add (local.get $p) (i32.const 20))))
         (call $pack (i32.add (local.get $p) (i32.const 12)) (i32.const 12))",
    );
    let outcome = run(&sandbox_for(&wat), b"to stderr", &Limits::default()).await;
    let bytes = outcome.result.expect("runs");
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [8, 28, 9], "EBADF, EINVAL, bytes written");

    // A buffer outside guest memory stops the guest, naming the function.
    let wat = guest_importing(
        import,
        "(i32.store (i32.const 0) (i32.const 0xfffffff0))
         (i32.store (i32.const 4) (i32.const 100))
         (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
         (call $pack (i32.const 0) (i32.const 0))",
    );
    let outcome = run(&sandbox_for(&wat), b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["fd_write", "0xfffffff0+100"],
    );
}

#[tokio::test]
async fn wasi_misuse_is_a_sandbox_error_with_its_cause() {
    let wat = guest_importing(
        r#"(import "wasi_snapshot_preview1" "environ_sizes_get"
             (func $environ_sizes_get (param i32 i32) (result i32)))"#,
        "(drop (call $environ_sizes_get (i32.const 1) (i32.const 5)))
         (call $pack (i32.const 0) (i32.const 0))",
    );
    let outcome = run(&sandbox_for(&wat), b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["environ_sizes_get", "aligned"],
    );
    let message = &outcome.result.unwrap_err().message;
    assert!(!message.contains("backtrace"), "{message}");
}

#[tokio::test]
async fn proc_exit_is_a_sandbox_error() {
    let wat = guest_importing(
        r#"(import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))"#,
        "(call $exit (i32.const 3)) (unreachable)",
    );
    let sandbox = sandbox_for(&wat);
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(&outcome, ErrorKind::Sandbox, &["exited with status 3"]);
}

// ---------------------------------------------------------------------------------------------
// Malicious or broken guests

#[tokio::test]
async fn host_call_with_out_of_bounds_request() {
    let sandbox = sandbox_for(&guest(
        "(drop (call $host_call (i32.const 0xfffffff0) (i32.const 100)))
         (call $pack (i32.const 0) (i32.const 0))",
    ));
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["host_call", "out of bounds"],
    );
}

#[tokio::test]
async fn host_call_with_negative_length() {
    let sandbox = sandbox_for(&guest(
        "(drop (call $host_call (i32.const 16) (i32.const -1)))
         (call $pack (i32.const 0) (i32.const 0))",
    ));
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["host_call", "out of bounds"],
    );
}

#[tokio::test]
async fn host_take_to_out_of_bounds_pointer() {
    let sandbox = sandbox_for(&guest(
        "(drop (call $host_call (local.get $ptr) (local.get $len)))
         (call $host_take (i32.const 65535))
         (call $pack (i32.const 0) (i32.const 0))",
    ));
    let outcome = run(&sandbox, b"four", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["host_take", "out of bounds"],
    );
}

/// Answers a few keys, and calls as [`Reverse`] does.
struct Dictionary;

impl HostCalls for Dictionary {
    fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
        Box::pin(async move { request })
    }

    fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        match key {
            b"greeting" => Some(b"hello"),
            b"long" => Some(b"an answer longer than the buffer"),
            _ => None,
        }
    }
}

/// Looks the request up (`host_lookup` into a buffer of 8 bytes) and answers with the buffer:
/// as long as the answer when it fit, all of it when it did not, nothing when there was none.
fn lookup_guest(key: &str) -> String {
    guest_importing(
        r#"(import "fexpr" "host_lookup" (func $host_lookup (param i32 i32 i32 i32) (result i32)))"#,
        &format!(
            "(local.set $p (call $alloc (i32.const 8)))
             (local.set $n (call $host_lookup {key} (local.get $p) (i32.const 8)))
             (if (i32.lt_s (local.get $n) (i32.const 0))
               (then (return (call $pack (i32.const 0) (i32.const 0)))))
             (if (i32.gt_u (local.get $n) (i32.const 8))
               (then (return (call $pack (local.get $p) (i32.const 8)))))
             (call $pack (local.get $p) (local.get $n))"
        ),
    )
}

#[tokio::test]
async fn host_lookup_answers_from_the_hosts_data() {
    let sandbox = sandbox_for(&lookup_guest("(local.get $ptr) (local.get $len)"));
    let limits = Limits::default();
    let ask = |key: &'static [u8]| sandbox.run(key, &limits, Arc::new(Dictionary));
    assert_eq!(ask(b"greeting").await.result, Ok(b"hello".to_vec()));
    // None: -1. Too long for the buffer: its length, and the buffer left as it was.
    assert_eq!(ask(b"unknown").await.result, Ok(vec![]));
    assert_eq!(ask(b"long").await.result, Ok(vec![0; 8]));
    // A host without data answers nothing.
    let outcome = sandbox.run(b"greeting", &limits, reverse()).await;
    assert_eq!(outcome.result, Ok(vec![]));
    assert_eq!(outcome.receipt.host_calls, 0);
}

#[tokio::test]
async fn host_lookup_checks_the_guests_pointers() {
    let sandbox = sandbox_for(&lookup_guest("(i32.const -8) (i32.const 16)"));
    let outcome = sandbox
        .run(b"greeting", &Limits::default(), Arc::new(Dictionary))
        .await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["host_lookup: key", "out of bounds"],
    );
}

#[tokio::test]
async fn host_take_without_a_pending_reply() {
    let sandbox = sandbox_for(&guest(
        "(call $host_take (i32.const 0)) (call $pack (i32.const 0) (i32.const 0))",
    ));
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(&outcome, ErrorKind::Sandbox, &["no pending reply"]);
}

#[tokio::test]
async fn response_out_of_bounds() {
    let sandbox = sandbox_for(&guest("(call $pack (i32.const 65000) (i32.const 1000))"));
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["fexpr_evaluate", "out of bounds"],
    );
}

#[tokio::test]
async fn taking_the_request_to_a_bad_pointer() {
    let wat = echo_guest().replace(
        "(local.get $p))\n  (func $pack",
        "(drop (local.get $p)) (i32.const -8))\n  (func $pack",
    );
    assert_ne!(wat, echo_guest());
    let sandbox = sandbox_for(&wat);
    let outcome = run(&sandbox, b"hello", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["host_take", "out of bounds"],
    );
}

#[tokio::test]
async fn guest_memory_fault_is_a_sandbox_error() {
    let sandbox = sandbox_for(&guest(
        "(drop (i32.load (i32.const 0x7ffffff0))) (call $pack (i32.const 0) (i32.const 0))",
    ));
    let outcome = run(&sandbox, b"", &Limits::default()).await;
    expect_error(
        &outcome,
        ErrorKind::Sandbox,
        &["out of bounds memory access"],
    );
}

#[tokio::test]
async fn missing_or_mistyped_exports_are_refused() {
    let no_evaluate = echo_guest().replace("(export \"fexpr_evaluate\")", "");
    let error = Sandbox::from_module_bytes(wat_config(), no_evaluate.as_bytes()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Sandbox);
    assert!(error.message.contains("fexpr_evaluate"), "{error}");

    let no_memory = echo_guest().replace("(export \"memory\")", "");
    let error = Sandbox::from_module_bytes(wat_config(), no_memory.as_bytes()).unwrap_err();
    assert!(error.message.contains("memory"), "{error}");

    // The ABI before the request was pulled with `host_take`: `fexpr_evaluate(ptr, len)`.
    let wrong = r#"(module (memory (export "memory") 1)
        (func (export "fexpr_alloc") (param i32) (result i32) (i32.const 0))
        (func (export "fexpr_evaluate") (param i32 i32) (result i64) (i64.const 0)))"#;
    let error = Sandbox::from_module_bytes(wat_config(), wrong.as_bytes()).unwrap_err();
    assert!(error.message.contains("fexpr_evaluate"), "{error}");
    assert!(error.message.contains("wrong type"), "{error}");
}

#[tokio::test]
async fn imports_outside_the_allow_list_are_refused() {
    let wat = echo_guest().replace(
        "(memory (export \"memory\") 1)",
        "(import \"wasi_snapshot_preview1\" \"path_open\"
           (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
         (memory (export \"memory\") 1)",
    );
    let error = Sandbox::from_module_bytes(wat_config(), wat.as_bytes()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Sandbox);
    assert!(error.message.contains("path_open"), "{error}");
}

#[tokio::test]
async fn garbage_module_is_refused() {
    let error = Sandbox::from_module_bytes(wat_config(), b"\0asm\x01\0\0\0garbage").unwrap_err();
    assert_eq!(error.kind, ErrorKind::Sandbox);
}

// ---------------------------------------------------------------------------------------------
// The module cache

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fexpr-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn compiled_module_is_cached_on_disk() {
    let dir = temp_dir("cache");
    let config = wat_config().module_cache(ModuleCache::Dir(dir.clone()));
    let wat = echo_guest();
    let first = Sandbox::from_module_bytes(config.clone(), wat.as_bytes()).unwrap();
    assert_eq!(first.module_source(), ModuleSource::Compiled);
    let second = Sandbox::from_module_bytes(config.clone(), wat.as_bytes()).unwrap();
    assert_eq!(second.module_source(), ModuleSource::Cached);
    assert_eq!(
        run(&second, b"hi", &Limits::default()).await.result,
        Ok(b"hi".to_vec())
    );

    // Entries are read-only: a mapped entry must never shrink under a running process.
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&entries[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o400);
    }
    // A corrupt entry (replaced, as anything but truncating a mapped file in place) is not
    // trusted: the module is compiled again and the entry rewritten.
    std::fs::remove_file(&entries[0]).unwrap();
    std::fs::write(&entries[0], b"not a module").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let read_only = std::fs::Permissions::from_mode(0o400);
        std::fs::set_permissions(&entries[0], read_only).unwrap();
    }
    let third = Sandbox::from_module_bytes(config.clone(), wat.as_bytes()).unwrap();
    assert_eq!(third.module_source(), ModuleSource::Compiled);
    assert_eq!(
        run(&third, b"hi", &Limits::default()).await.result,
        Ok(b"hi".to_vec())
    );
    let fourth = Sandbox::from_module_bytes(config, wat.as_bytes()).unwrap();
    assert_eq!(fourth.module_source(), ModuleSource::Cached);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[tokio::test]
async fn cache_entries_others_can_write_are_not_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("cache-perms");
    let config = wat_config().module_cache(ModuleCache::Dir(dir.clone()));
    let wat = echo_guest();
    Sandbox::from_module_bytes(config.clone(), wat.as_bytes()).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let again = Sandbox::from_module_bytes(config, wat.as_bytes()).unwrap();
    assert_eq!(again.module_source(), ModuleSource::Compiled);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn unusable_cache_dir_falls_back_to_memory() {
    let file = temp_dir("cache-is-a-file");
    std::fs::write(&file, b"").unwrap();
    let config = wat_config().module_cache(ModuleCache::Dir(file.join("sub")));
    let sandbox = Sandbox::from_module_bytes(config, echo_guest().as_bytes()).unwrap();
    assert_eq!(sandbox.module_source(), ModuleSource::Compiled);
    assert_eq!(
        run(&sandbox, b"hi", &Limits::default()).await.result,
        Ok(b"hi".to_vec())
    );
    let _ = std::fs::remove_file(&file);
}

/// Processes starting together on an empty cache (here threads, each building its own
/// `Sandbox` from the real guest, as separate processes would) compile it once: the first takes
/// the cache's lock, the others wait for its entry and map it. Nothing but the entry is left.
#[test]
fn concurrent_cold_starts_compile_the_guest_once() {
    let dir = temp_dir("cache-concurrent");
    let config = SandboxConfig::on_demand().module_cache(ModuleCache::Dir(dir.clone()));
    let start = Arc::new(std::sync::Barrier::new(4));
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let (config, start) = (config.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                Sandbox::new(config).map(|s| s.module_source())
            })
        })
        .collect();
    let mut sources: Vec<ModuleSource> = starts
        .into_iter()
        .map(|t| t.join().expect("no panic").expect("the guest loads"))
        .collect();
    sources.sort_by_key(|s| *s != ModuleSource::Compiled);
    assert_eq!(
        sources,
        [
            ModuleSource::Compiled,
            ModuleSource::Cached,
            ModuleSource::Cached,
            ModuleSource::Cached
        ]
    );
    let entries: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].ends_with(".cwasm"), "{entries:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// The real guest

fn real_guest() -> Sandbox {
    let config = SandboxConfig::default().module_cache(ModuleCache::Dir(
        std::env::temp_dir().join("fexpr-test-guest-cache"),
    ));
    Sandbox::new(config).expect("the guest module loads")
}

#[test]
fn real_guest_imports_exactly_the_allow_list() {
    let sandbox = real_guest();
    let mut imports: Vec<(&str, &str)> = sandbox
        .imports()
        .iter()
        .map(|(m, n)| (m.as_str(), n.as_str()))
        .collect();
    imports.sort();
    let mut allowed = ALLOWED_IMPORTS.to_vec();
    allowed.sort();
    assert_eq!(imports, allowed, "update ALLOWED_IMPORTS only after review");
}

#[tokio::test]
async fn real_guest_answers_unreadable_requests_with_an_error() {
    let sandbox = real_guest();
    let host = Arc::new(Reverse::default());
    let limits = Limits::default();
    // Not a `GuestRequest`: the guest answers with a decodable `Failed` response, no host call.
    for request in [&b""[..], b"add(a=2, b=3)", &[0xff; 300_000]] {
        let outcome = sandbox.run(request, &limits, host.clone()).await;
        let bytes = outcome.result.expect("the guest answers");
        match fexpr::sandbox::wire::decode::<fexpr::sandbox::wire::GuestResponse>(&bytes) {
            Ok(fexpr::sandbox::wire::GuestResponse::Failed(e)) => {
                assert_eq!(e.kind, ErrorKind::Sandbox, "{e}");
                assert!(e.message.contains("sandbox wire"), "{e}");
            }
            other => panic!("expected a Failed response, got {other:?}"),
        }
        assert_eq!(outcome.receipt.host_calls, 0);
        assert!(outcome.receipt.fuel_used > 0);
        assert!(outcome.receipt.peak_memory_bytes >= 1 << 16);
    }
}

#[tokio::test]
async fn real_guest_respects_fuel() {
    let sandbox = real_guest();
    let limits = Limits::default().fuel(10);
    let outcome = sandbox.run(b"x", &limits, reverse()).await;
    expect_error(&outcome, ErrorKind::Limit, &["fuel"]);
}

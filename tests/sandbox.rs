//! The sandbox through `ToolManager`: bombs end in structured errors in both modes with the
//! host alive and small, every budget stops the guest with a `Limit` error naming it, receipts
//! account for the work, and a broken guest is an error, not a crash. (Every expression of
//! `tests/core.rs` also runs both ways: see `common`.)
#![cfg(feature = "sandbox")]

mod common;

use fexpr::sandbox::{Allocation, ModuleCache, Sandbox, SandboxConfig};
use fexpr::Input;
use fexpr::{ErrorKind, FunctionOutput, FunctionTool, Limits, ToolManager, Value};
use std::time::{Duration, Instant};

fn sandboxed(manager: &ToolManager, text: &str, limits: &Limits) -> Vec<FunctionOutput> {
    common::runtime().block_on(async {
        manager
            .run(Input::expr(text))
            .limits(limits.clone())
            .sandboxed()
            .await
            .outputs
    })
}

fn one_sandboxed(manager: &ToolManager, text: &str, limits: &Limits) -> FunctionOutput {
    let mut outputs = sandboxed(manager, text, limits);
    assert_eq!(outputs.len(), 1, "{text}: {outputs:?}");
    outputs.remove(0)
}

/// The error of `output`, asserting its kind and that its message names `words`.
fn expect_error(output: &FunctionOutput, kind: ErrorKind, words: &[&str]) {
    let error = output
        .output
        .as_ref()
        .err()
        .unwrap_or_else(|| panic!("expected a {kind:?} error, got {output}"));
    assert_eq!(error.kind, kind, "{error}");
    for word in words {
        assert!(error.message.contains(word), "{word:?} not in {error}");
    }
    assert!(output.output.is_err());
}

/// The process's peak resident memory (Linux `VmHWM`), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn bombs_end_in_structured_errors_in_both_modes_with_the_host_small() {
    let manager = fexpr::demo::manager();
    let deep = |open: &str, close: &str| {
        format!(
            "add(a={}1{}, b=1)",
            open.repeat(100_000),
            close.repeat(100_000)
        )
    };
    let bombs = [
        deep("(", ")"),
        deep("[", "]"),
        deep("{1: ", "}"),
        deep("abs(", ")"),
        deep("-", ""),
        "add(a=9**9**9, b=1)".to_string(),
        "search(query='a' * 10**10)".to_string(),
        "numpy_sum(arr=[0] * 10**9)".to_string(),
        format!("search(query='{}')", "a".repeat(10 << 20)),
    ];
    // The first sandboxed evaluation compiles the guest (slow in a debug build when the
    // module cache is cold); that is not what the time bound below is about.
    common::run_expr(&manager, "add(a=1, b=2)");
    for bomb in &bombs {
        let started = Instant::now();
        // Native and sandboxed outputs are asserted equal by `common::execute`.
        let outputs = common::run_expr(&manager, bomb);
        assert_eq!(outputs.len(), 1);
        expect_error(&outputs[0], ErrorKind::Limit, &["limit exceeded"]);
        // A hang detector (each bomb unchecked takes minutes), loose for a loaded machine.
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{:?} took {:?}",
            fexpr::error::clip(bomb, 40),
            started.elapsed()
        );
    }
    if let Some(peak) = peak_rss() {
        assert!(peak < 512 << 20, "the host grew to {peak} bytes");
    }
}

#[test]
fn fuel_bounds_the_guest() {
    let manager = fexpr::demo::manager();
    // Far below what reading and binding `add(a=2, b=3)` takes in the guest (a 20,000 budget
    // reached the tool once the guest got cheaper), so the guest stops before any host call.
    let limits = Limits::default().fuel(5_000);
    let out = one_sandboxed(&manager, "add(a=2, b=3)", &limits);
    expect_error(&out, ErrorKind::Limit, &["fuel", "5000"]);
    let receipt = out.receipt.expect("a receipt");
    assert_eq!(receipt.fuel_used, 5_000);
    assert_eq!(receipt.host_calls, 0);
}

#[test]
fn the_deadline_covers_slow_tools() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new_async(
            "slow",
            ["seconds"],
            |seconds: f64| async move {
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                seconds
            },
        ))
        .build()
        .unwrap();
    let limits = Limits::default().deadline(Duration::from_millis(200));
    let started = Instant::now();
    let out = one_sandboxed(&manager, "slow(seconds=30)", &limits);
    expect_error(&out, ErrorKind::Limit, &["deadline"]);
    // Well under the tool's 30 s: the deadline ended it, however loaded the machine.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.receipt.expect("a receipt").host_calls, 1);
    // Within the deadline the same tool answers.
    let out = one_sandboxed(&manager, "slow(seconds=0.01)", &limits);
    assert_eq!(out.output, Ok(Value::Float(0.01)), "{out}");
}

#[test]
fn the_deadline_returns_on_time_while_a_sync_tool_runs() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("spin", ["ms"], |ms: u64| {
            std::thread::sleep(Duration::from_millis(ms));
            ms
        }))
        .build()
        .unwrap();
    // One runtime for both runs, dropped without waiting for the threads still spinning
    // (dropping a runtime waits for its blocking pool; a server's runtime lives on).
    let rt = common::runtime();
    let timed = |limits: Limits| {
        let started = Instant::now();
        let mut outputs = rt.block_on(async {
            manager
                .run(Input::expr("spin(ms=700)"))
                .limits(limits.clone())
                .sandboxed()
                .await
                .outputs
        });
        (outputs.remove(0), started.elapsed())
    };
    let (out, took) = timed(Limits::default().deadline(Duration::from_millis(50)));
    expect_error(&out, ErrorKind::Limit, &["deadline"]);
    assert!(took < Duration::from_millis(500), "{took:?}");
    // A tool call's own deadline holds in the sandbox too.
    let (out, took) = timed(Limits::default().call_deadline(Duration::from_millis(50)));
    expect_error(&out, ErrorKind::Limit, &["call_deadline"]);
    assert!(took < Duration::from_millis(500), "{took:?}");
    rt.shutdown_background();
}

#[test]
fn the_memory_cap_stops_a_legal_but_large_evaluation() {
    let manager = fexpr::demo::manager();
    let text = "search(query='a' * 1000000)";
    let natively =
        common::runtime().block_on(async { manager.run(Input::expr(text)).await.outputs });
    assert!(natively[0].output.is_ok(), "{}", natively[0]);
    let limits = Limits::default().memory_bytes(4 << 20);
    let out = one_sandboxed(&manager, text, &limits);
    expect_error(&out, ErrorKind::Limit, &["memory_bytes"]);
    let receipt = out.receipt.expect("a receipt");
    assert!(receipt.peak_memory_bytes <= 4 << 20, "{receipt:?}");
    // With the default cap it runs.
    let out = one_sandboxed(&manager, text, &Limits::default());
    assert!(out.output.is_ok(), "{out}");
}

#[test]
fn host_calls_are_counted_and_bounded() {
    let manager = fexpr::demo::manager();
    let nested = "add(a=add(a=1, b=2), b=multiply(a=2, b=add(a=1, b=1)))";
    let out = one_sandboxed(&manager, nested, &Limits::default());
    assert_eq!(out.output, Ok(Value::Int(7)), "{out}");
    // Three waves: the innermost add, then multiply and the other add, then the outer add.
    assert_eq!(out.receipt.as_ref().map(|r| r.host_calls), Some(3));
    // `max_host_calls` counts tool invocations (four), not waves (three).
    let limits = Limits::default().max_host_calls(3);
    let out = one_sandboxed(&manager, nested, &limits);
    expect_error(&out, ErrorKind::Limit, &["max_host_calls", "4 > 3"]);
    assert_eq!(
        out.output.as_ref().err().and_then(|e| e.limit),
        Some(fexpr::error::LimitKind::HostCalls)
    );
    let limits = Limits::default().max_host_calls(4);
    let out = one_sandboxed(&manager, nested, &limits);
    assert_eq!(out.output, Ok(Value::Int(7)), "{out}");
}

#[test]
fn an_impossible_memory_cap_is_refused_with_the_minimum() {
    let manager = fexpr::demo::manager();
    let limits = Limits::default().memory_bytes(1 << 20);
    let out = one_sandboxed(&manager, "add(a=1, b=2)", &limits);
    expect_error(&out, ErrorKind::Config, &["memory_bytes", "3670016"]);
    assert!(out.receipt.is_none(), "nothing ran: {out}");
    let config = fexpr::sandbox::SandboxConfig::default().max_memory_bytes(1 << 20);
    let error = fexpr::sandbox::Sandbox::new(config).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Config);
    assert!(error.message.contains("3670016"), "{error}");
}

#[test]
fn output_size_is_bounded_the_same_way_in_both_modes() {
    let manager = fexpr::demo::builder()
        .limits(Limits::default().max_output_bytes(10_000))
        .build()
        .unwrap();
    let outputs = common::run_expr(&manager, "search(query='a' * 100000)");
    expect_error(&outputs[0], ErrorKind::Limit, &["max_output_bytes"]);
}

#[test]
fn manager_limits_apply_unless_the_call_overrides_them() {
    let manager = fexpr::demo::builder()
        .limits(Limits::default().fuel(10_000))
        .build()
        .unwrap();
    let rt = common::runtime();
    let out = rt.block_on(manager.execute_func_expr_via_sandbox("add(a=2, b=3)"));
    expect_error(&out, ErrorKind::Limit, &["fuel"]);
    let out = one_sandboxed(&manager, "add(a=2, b=3)", &Limits::default());
    assert_eq!(out.output, Ok(Value::Int(5)), "{out}");
}

#[test]
fn receipts_account_for_the_work() {
    let manager = fexpr::demo::manager();
    let outputs = sandboxed(
        &manager,
        "[add(a=2, b=3), search(query='q')]",
        &Limits::default(),
    );
    assert_eq!(outputs.len(), 2);
    let receipt = outputs[0].receipt.clone().expect("a receipt");
    // One evaluation: both calls in one wave, one host call, the same receipt on both.
    assert_eq!(Some(&receipt), outputs[1].receipt.as_ref());
    assert_eq!(receipt.host_calls, 1);
    assert!(receipt.fuel_used > 0 && receipt.fuel_used < Limits::default().fuel);
    assert!(receipt.peak_memory_bytes >= 64 << 10);
    assert!(receipt.wall_time > Duration::ZERO);
    let json = outputs[0].to_json();
    assert_eq!(json["receipt"]["host_calls"], 1);
}

#[test]
fn many_concurrent_evaluations_each_get_a_fresh_instance() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let config = SandboxConfig::default()
        .max_instances(4)
        .module_cache(ModuleCache::Default);
    let manager = fexpr::demo::builder()
        .sandbox(Sandbox::new(config).expect("sandbox"))
        .build()
        .unwrap();
    let exprs: Vec<fexpr::FunctionExpression> = (0..64)
        .map(|i| format!("add(a={i}, b={i})").into())
        .collect();
    let outputs = rt.block_on(manager.execute_func_exprs_via_sandbox(&exprs));
    for (i, out) in outputs.iter().enumerate() {
        assert_eq!(out.output, Ok(Value::Int(2 * i as i64)), "{out}");
        // A fresh instance starts from the module's initial state every time.
        assert_eq!(out.receipt.as_ref().map(|r| r.host_calls), Some(1));
    }
    let fuel: Vec<u64> = outputs
        .iter()
        .filter_map(|o| o.receipt.as_ref().map(|r| r.fuel_used))
        .collect();
    assert!(
        fuel.windows(2).all(|w| w[0].abs_diff(w[1]) < 2_000),
        "{fuel:?}"
    );
}

#[test]
fn on_demand_allocation_evaluates_and_limits_as_the_pool_does() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let sandbox = |allocation| {
        let config = SandboxConfig::default()
            .allocation(allocation)
            .max_instances(2);
        fexpr::demo::builder()
            .sandbox(Sandbox::new(config).expect("sandbox"))
            .build()
            .unwrap()
    };
    let (pooled, on_demand) = (sandbox(Allocation::Pooled), sandbox(Allocation::OnDemand));
    // More evaluations than instances at once: they wait for one another, each in a fresh one.
    let exprs: Vec<fexpr::FunctionExpression> = (0..16)
        .map(|i| format!("add_points(p1=Point(x={i}, y=1), p2=Point(x=1, y={i}))").into())
        .collect();
    let a = rt.block_on(pooled.execute_func_exprs_via_sandbox(&exprs));
    let b = rt.block_on(on_demand.execute_func_exprs_via_sandbox(&exprs));
    assert_eq!(a.len(), 16);
    for (a, b) in a.iter().zip(&b) {
        assert!(a.output.is_ok(), "{a}");
        assert_eq!(
            (&a.output, &a.output.as_ref().err()),
            (&b.output, &b.output.as_ref().err())
        );
        let (ra, rb) = (a.receipt.as_ref(), b.receipt.as_ref());
        assert_eq!(ra.map(|r| r.fuel_used), rb.map(|r| r.fuel_used));
        assert_eq!(ra.map(|r| r.host_calls), rb.map(|r| r.host_calls));
    }
    // The per-evaluation limits hold the same way.
    let big = "search(query='a' * 1000000)";
    let small_memory = Limits::default().memory_bytes(4 << 20);
    let little_fuel = Limits::default().fuel(20_000);
    let bomb = "add(a=9**9**9, b=1)";
    let cases = [
        (big, &small_memory, "memory_bytes"),
        ("add(a=2, b=3)", &little_fuel, "fuel"),
        (bomb, &Limits::default(), "limit exceeded"),
    ];
    for (text, limits, word) in cases {
        for manager in [&pooled, &on_demand] {
            let out = sandboxed(manager, text, limits);
            expect_error(&out[0], ErrorKind::Limit, &[word]);
        }
    }
}

#[test]
fn a_broken_guest_is_an_error_not_a_crash() {
    // A module that implements the ABI but answers with its request: not a response.
    const ECHO: &str = r#"(module
      (import "fexpr" "host_call" (func (param i32 i32) (result i32)))
      (import "fexpr" "host_take" (func $take (param i32)))
      (memory (export "memory") 1)
      (global $bump (mut i32) (i32.const 1024))
      (func (export "fexpr_evaluate") (param $len i32) (result i64)
        (call $take (global.get $bump))
        (i64.or (i64.shl (i64.extend_i32_u (global.get $bump)) (i64.const 32))
                (i64.extend_i32_u (local.get $len)))))"#;
    let config = SandboxConfig::default().module_cache(ModuleCache::Off);
    let sandbox = Sandbox::from_module_bytes(config, ECHO.as_bytes()).expect("valid module");
    let manager = fexpr::demo::builder().sandbox(sandbox).build().unwrap();
    let out = one_sandboxed(&manager, "add(a=2, b=3)", &Limits::default());
    expect_error(&out, ErrorKind::Sandbox, &[]);
}

/// A record type whose fields carry schema patterns, constructed inside the guest.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Tag {
    #[schemars(regex(pattern = r"^\w+$"))]
    word: String,
    #[schemars(regex(pattern = r"^\p{Greek}+-[0-9]{2}$"))]
    greek: String,
    #[schemars(regex(pattern = r"needle|pin"))]
    hay: String,
}

/// A schema's `pattern` matches the same in the guest, which searches with the PikeVM alone,
/// as natively, where the lazy DFA, the one-pass DFA and literal prefilters run too: Unicode
/// word characters and scripts, anchors, alternated literals, matches and refusals alike.
#[test]
fn patterns_match_the_same_in_the_guest() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("tag", ["t"], |t: Tag| {
            format!("{}|{}|{}", t.word, t.greek, t.hay)
        }))
        .context(fexpr::Context::new().record::<Tag>())
        .build()
        .expect("builds");
    let calls = [
        (
            "tag(t=Tag(word='héllo_1', greek='αβγ-42', hay='a pin here'))",
            true,
        ),
        (
            "tag(t=Tag(word='two words', greek='αβγ-42', hay='needle'))",
            false,
        ),
        ("tag(t=Tag(word='ok', greek='abc-42', hay='needle'))", false),
        (
            "tag(t=Tag(word='ok', greek='Ωμέγα-07', hay='haystack'))",
            false,
        ),
        ("tag(t=Tag(word='Σ', greek='Ω-00', hay='xxneedlexx'))", true),
    ];
    for (call, runs) in calls {
        // `run_expr` asserts the sandboxed outputs equal the native ones.
        let out = common::run_expr(&manager, call).remove(0);
        assert_eq!(out.output.is_ok(), runs, "{call}: {out:?}");
        if let Err(e) = &out.output {
            assert!(
                e.message.contains("does not match the pattern"),
                "{call}: {e}"
            );
        }
    }
}

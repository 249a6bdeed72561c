//! Tool features (issue 5): concurrency of one response's calls, and the manager's per-call
//! cost around a trivial tool with and without the new features, side by side.
//!
//! `cargo bench --bench tools` (needs only the `native` feature:
//! `cargo bench --bench tools --no-default-features --features native`).
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

use criterion::{criterion_group, criterion_main, Criterion};
use fexpr::Input;
use std::future::IntoFuture;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use fexpr::{CallContext, FunctionTool, Session, ToolManager, Value};

fn sleepy(name: &'static str) -> FunctionTool {
    FunctionTool::new_async(name, [], move || async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        name
    })
}

/// Three async tools that each wait 100 ms, called in one response, against the same three
/// called one response after another.
fn parallel(c: &mut Criterion) {
    let manager = ToolManager::builder()
        .tool(sleepy("a"))
        .tool(sleepy("b"))
        .tool(sleepy("c"))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("tools/three_100ms_calls");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("one_response", |b| {
        b.iter(|| {
            let outs = rt
                .block_on(
                    manager
                        .run(Input::expr(black_box("[a(), b(), c()]")))
                        .into_future(),
                )
                .outputs;
            assert!(outs.iter().all(|o| o.output.is_ok()));
            outs
        })
    });
    group.bench_function("one_after_another", |b| {
        b.iter(|| {
            for text in ["a()", "b()", "c()"] {
                let out = rt.block_on(manager.execute_func_expr(black_box(text)));
                assert!(out.output.is_ok());
            }
        })
    });
    group.finish();
}

/// `add(a=2, b=3)` through the plain path and through tools using the new features.
fn overhead(c: &mut Criterion) {
    let plain = ToolManager::builder()
        .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b))
        .build()
        .unwrap();
    let with_context = ToolManager::builder()
        .dependency(Arc::new(7_i64))
        .tool(FunctionTool::with_context(
            "add",
            ["a", "b"],
            |ctx: CallContext, a: i64, b: i64| {
                black_box(ctx.tool_call_id());
                a + b
            },
        ))
        .build()
        .unwrap();
    let featured = ToolManager::builder()
        .tool(
            FunctionTool::with_context("add", ["a", "b"], |_ctx: CallContext, a: i64, b: i64| {
                a + b
            })
            .observe(|v: &Value| format!("the sum is {}", v.repr()))
            .available_when(|_s: &Session| true, "always"),
        )
        .build()
        .unwrap();
    let cached = ToolManager::builder()
        .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b).cached(100))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("tools/add_overhead");
    let cases = [
        ("plain", &plain, false),
        ("plain_with_session", &plain, true),
        ("with_context", &with_context, true),
        ("context_observe_available", &featured, true),
        ("cached_hit", &cached, false),
    ];
    for (name, manager, session) in cases {
        group.bench_function(name, |b| {
            b.iter(|| {
                let out = if session {
                    let session = Session::new().id("session_1");
                    let request = manager.run(Input::expr(black_box("add(a=2, b=3)")));
                    let mut outs = rt.block_on(request.session(session).into_future()).outputs;
                    outs.remove(0)
                } else {
                    rt.block_on(manager.execute_func_expr(black_box("add(a=2, b=3)")))
                };
                assert_eq!(out.output, Ok(Value::Int(5)));
                out
            })
        });
    }
    group.finish();
}

criterion_group!(benches, parallel, overhead);
criterion_main!(benches);

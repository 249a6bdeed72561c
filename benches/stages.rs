//! One benchmark per internal stage of a call, on the seed's three calls, so that a change
//! shows where its time went. `cargo bench --bench stages` (add `-- --quick` for a fast run).
//!
//! - `parse/*`: text → IR ([`fexpr::syntax::parse`]): size precheck, ruff, conversion.
//! - `eval/*`: resolve + evaluate the call's arguments ([`fexpr::eval::eval_pure`] on each
//!   parsed argument: name lookup, `Point(...)` construction, `np.array(...)`).
//! - `bind/*`: bind + coerce the evaluated arguments to the tool's signature
//!   ([`fexpr::types::RecordType::bind`]).
//! - `tool_call/*`: the tool itself through the [`fexpr::Tool`] trait: arguments converted to
//!   the Rust types, the function, the result converted back.
//! - `dispatch/*`: a [`fexpr::Function`] run through the manager
//!   ([`fexpr::ToolManager::execute_func`]: lookup, bind, tool call, result typing, output).
//! - `wire/*`: the sandbox wire ([`fexpr::sandbox::wire`]): a request encoded and decoded (the
//!   context stays on the host), a host-call batch encoded and decoded.
//! - `sandbox/*` (feature `sandbox`): a fresh guest instance evaluating a call that needs no
//!   tool (`Point(x=1, y=2)`), and one that makes one host call (`add(a=2, b=3)`).
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use fexpr::eval::ToolRequest;
use fexpr::syntax::{self, ExprKind};
use fexpr::{Limits, Span, Value};
use std::hint::black_box;

const CALLS: [(&str, &str); 3] = [
    ("add", "add(a=2, b=3)"),
    (
        "add_points",
        "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
    ),
    ("numpy_sum", "numpy_sum(arr=np.array([[1, 2], [3, 4]]))"),
];

/// Keyword arguments as the evaluator hands them to binding.
type Kwargs = Vec<(String, Value, Span)>;

fn stages(c: &mut Criterion) {
    let manager = fexpr::demo::manager();
    let limits = Limits::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");

    let mut group = c.benchmark_group("parse");
    for (name, text) in CALLS {
        group.bench_function(name, |b| b.iter(|| syntax::parse(black_box(text), &limits)));
    }
    group.finish();

    let mut group = c.benchmark_group("eval");
    for (name, text) in CALLS {
        let parsed = syntax::parse(text, &limits).expect("parses");
        let ExprKind::Call(call) = parsed.kind else {
            panic!("{name} is a call")
        };
        let ctx = manager.context();
        group.bench_function(name, |b| {
            b.iter(|| {
                call.kwargs
                    .iter()
                    .map(|k| fexpr::eval::eval_pure(&k.value, ctx, &limits))
                    .collect::<Result<Vec<_>, _>>()
                    .expect("evaluates")
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("bind");
    for (name, text) in CALLS {
        let function = manager.parse_func_expr(text).expect("parses");
        let kwargs: Kwargs = function
            .kwargs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), Span::default()))
            .collect();
        let tool = manager.tool(name).expect("demo tool");
        let signature = tool.definition().signature.clone();
        group.bench_function(name, |b| {
            b.iter_batched(
                || kwargs.clone(),
                |kwargs| {
                    signature
                        .bind(Vec::new(), kwargs, Span::default())
                        .expect("binds")
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();

    let mut group = c.benchmark_group("tool_call");
    for (name, text) in CALLS {
        let function = manager.parse_func_expr(text).expect("parses");
        let tool = manager.tool(name).expect("demo tool");
        let kwargs: Kwargs = function
            .kwargs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), Span::default()))
            .collect();
        let bound = tool
            .definition()
            .signature
            .bind(Vec::new(), kwargs, Span::default())
            .expect("binds");
        group.bench_function(name, |b| {
            b.iter_batched(
                || bound.clone(),
                |args| rt.block_on(tool.call(args)).expect("runs"),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();

    let mut group = c.benchmark_group("dispatch");
    for (name, text) in CALLS {
        let function = manager.parse_func_expr(text).expect("parses");
        group.bench_function(name, |b| {
            b.iter_batched(
                || function.clone(),
                |f| {
                    let out = rt.block_on(manager.execute_func(f));
                    assert!(out.output.is_ok());
                    out
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();

    let mut group = c.benchmark_group("wire");
    for (name, text) in CALLS {
        group.bench_function(format!("request/{name}"), |b| {
            b.iter(|| {
                let bytes = fexpr::sandbox::wire::encode_request(
                    &fexpr::sandbox::wire::GuestInput::Expression(black_box(text)),
                    &limits,
                )
                .expect("ok");
                let request: fexpr::sandbox::wire::GuestRequest =
                    fexpr::sandbox::wire::decode(&bytes).expect("decodes");
                black_box(request.limits.max_calls)
            })
        });
        let function = manager.parse_func_expr(text).expect("parses");
        let batch = vec![ToolRequest {
            name: function.name.clone(),
            span: Span::default(),
            args: Vec::new(),
            kwargs: function
                .kwargs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone(), Span::default()))
                .collect(),
        }];
        group.bench_function(format!("host_call/{name}"), |b| {
            b.iter(|| {
                let bytes = fexpr::sandbox::wire::encode(black_box(&batch)).expect("encodes");
                fexpr::sandbox::wire::decode::<Vec<ToolRequest>>(&bytes).expect("decodes")
            })
        });
    }
    group.finish();

    #[cfg(feature = "sandbox")]
    {
        let mut group = c.benchmark_group("sandbox");
        for (name, text) in [("no_tool", "Point(x=1, y=2)"), ("add", "add(a=2, b=3)")] {
            let out = rt.block_on(manager.execute_func_expr_via_sandbox(text));
            assert!(out.output.is_ok(), "{name}: {out}");
            group.bench_function(name, |b| {
                b.iter(|| rt.block_on(manager.execute_func_expr_via_sandbox(black_box(text))))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, stages);
criterion_main!(benches);

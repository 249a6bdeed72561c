//! Parse + execute of the seed's calls through the demo toolset, natively.
//!
//! `cargo bench --bench core` (add `-- --quick` for a fast run). Each iteration parses the
//! text, checks names and signatures, evaluates arguments, binds and coerces them, runs the
//! tool and builds the `FunctionOutput`, on a current-thread tokio runtime.
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
use std::hint::black_box;

const CALLS: [(&str, &str); 3] = [
    ("add", "add(a=2, b=3)"),
    (
        "add_points",
        "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
    ),
    ("numpy_sum", "numpy_sum(arr=np.array([[1, 2], [3, 4]]))"),
];

fn execute(c: &mut Criterion) {
    let manager = fexpr::demo::manager();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("native/execute_func_expr");
    for (name, expr) in CALLS {
        group.bench_function(name, |b| {
            b.iter(|| {
                let out = rt.block_on(manager.execute_func_expr(black_box(expr)));
                assert!(out.output.is_ok());
                out
            })
        });
    }
    group.finish();

    let limits = fexpr::Limits::default();
    let mut group = c.benchmark_group("native/parse");
    for (name, expr) in CALLS {
        group.bench_function(name, |b| {
            b.iter(|| fexpr::syntax::parse(black_box(expr), &limits))
        });
    }
    group.finish();

    // The same texts through ruff only (no fast path): the reference parser's cost.
    let mut group = c.benchmark_group("native/parse_with_ruff");
    for (name, expr) in CALLS {
        group.bench_function(name, |b| {
            b.iter(|| fexpr::syntax::parse_with_ruff(black_box(expr), &limits))
        });
    }
    group.finish();
}

criterion_group!(benches, execute);
criterion_main!(benches);

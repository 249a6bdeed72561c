//! The grammar export: how long `manager.grammar(...)` takes to write a grammar, and how long
//! llguidance takes to compile it (parser creation and the first token mask, over a byte-level
//! token environment), for 1, 10, 100 and 400 tools.
//!
//! `cargo bench --bench grammar` (add `-- --quick` for a fast run).
//!
//! The tools are made up, each with the parameter kinds real tool sets have (a string with a
//! length bound, an enum, an integer range, a float, a boolean, an optional nested object, an
//! array of strings with an item bound): about 7 parameters a tool, as BFCL's and MCP servers'
//! tools have. `grammar/generate/<markup>/<n>` writes the Lark grammar (pythonic, `required`;
//! hermes uses `%json`); `grammar/compile/<markup>/<n>` compiles it in llguidance and computes
//! the first mask.
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fexpr::grammar::{GrammarOptions, Markup, ToolChoice};
use fexpr::Context;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::ApproximateTokEnv;
use llguidance::{Matcher, ParserFactory};
use serde_json::json;
use std::hint::black_box;

/// `n` made-up tools.
fn tools(n: usize) -> Context {
    let defs: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            json!({"type": "function", "function": {
                "name": format!("tool_{i}_lookup"),
                "description": "A made-up tool.",
                "parameters": {"type": "object", "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 200},
                    "mode": {"type": "string", "enum": ["fast", "exact", format!("mode_{i}")]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100 + i},
                    "threshold": {"type": "number"},
                    "verbose": {"type": "boolean", "default": false},
                    "filter": {"type": "object", "properties": {
                        "field": {"type": "string"}, "value": {"type": ["string", "integer"]}},
                        "required": ["field"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5}},
                    "required": ["query", "mode"]}}})
        })
        .collect();
    let defs = fexpr::tooldefs::from_json(&serde_json::Value::Array(defs)).unwrap();
    fexpr::tooldefs::context(&defs)
}

fn bench(c: &mut Criterion) {
    let env = ApproximateTokEnv::single_byte_env();
    let mut factory = ParserFactory::new_simple(&env).unwrap();
    factory.set_stderr_log_level(0);
    let mut group = c.benchmark_group("grammar");
    group.sample_size(10);
    for markup in [Markup::Pythonic, Markup::Hermes] {
        for n in [1, 10, 100, 400] {
            let ctx = tools(n);
            let options = GrammarOptions::default()
                .markup(markup)
                .tool_choice(ToolChoice::Required);
            group.bench_with_input(
                BenchmarkId::new(format!("generate/{markup}"), n),
                &ctx,
                |b, ctx| b.iter(|| fexpr::grammar::grammar(black_box(ctx), &options).unwrap()),
            );
            let text = fexpr::grammar::grammar(&ctx, &options).unwrap().text;
            eprintln!("{markup} {n} tools: {} bytes of Lark", text.len());
            group.bench_with_input(
                BenchmarkId::new(format!("compile/{markup}"), n),
                &text,
                |b, text| {
                    b.iter(|| {
                        let parser =
                            factory.create_parser(TopLevelGrammar::from_lark(text.clone()));
                        let mut m = Matcher::new(parser);
                        assert!(!m.is_error(), "{:?}", m.get_error());
                        black_box(m.compute_mask().unwrap())
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

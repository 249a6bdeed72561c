//! The front-end and `fexpr check`.
//!
//! `cargo bench --bench front` (add `-- --quick` for a fast run).
//!
//! - `front/check_bfcl_ground_truth`: every BFCL Python ground-truth case (written as one list
//!   expression per case, as in `tests/bfcl.rs`) extracted, repaired, evaluated, bound and
//!   coerced against its function docs — what `fexpr check` does per input, minus process
//!   start and JSON printing. Throughput is reported in calls per second. Needs the data from
//!   `scripts/ci-bfcl.sh` (or `BFCL_DATA`); skipped with a message when it is absent.
//! - `front/extract/*`: extraction alone on a few realistic outputs.
//! - `front/door/*`: one plain call (`add(a=2, b=3)`) run natively through each door: the
//!   expression, the same call as model text (Hermes `<tool_call>` JSON), and an OpenAI
//!   assistant message; the doors other than the expression hand their call tree on as read.
//!   Each input is cloned in the setup of `iter_batched`, outside the timed routine (the
//!   OpenAI message's clone alone is about 3.5k instructions, a fifth of the expression door).
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use fexpr::check::check_text;
use fexpr::repair::RepairOptions;
use fexpr::{Context, Limits, Value};
use serde_json::Value as Json;
use std::future::IntoFuture;
use std::hint::black_box;
use std::path::PathBuf;

const CATEGORIES: &[&str] = &[
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
];

fn first(v: &Json) -> Json {
    match v {
        Json::Object(map) => Json::Object(
            map.iter()
                .filter_map(|(k, alts)| match alts {
                    Json::Array(alts) => alts
                        .iter()
                        .find(|a| *a != &Json::String(String::new()))
                        .map(|a| (k.clone(), first(a))),
                    other => Some((k.clone(), first(other))),
                })
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(first).collect()),
        other => other.clone(),
    }
}

fn lines(path: PathBuf) -> Vec<Json> {
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// (context, expression, number of calls) per ground-truth case.
fn bfcl_corpus() -> Option<Vec<(Context, String, usize)>> {
    let dir = std::env::var_os("BFCL_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bfcl/bfcl_eval/data"),
        PathBuf::from,
    );
    if !dir.join("BFCL_v4_simple_python.json").is_file() {
        return None;
    }
    let mut corpus = Vec::new();
    for category in CATEGORIES {
        let answers = lines(dir.join(format!("possible_answer/BFCL_v4_{category}.json")));
        let questions = lines(dir.join(format!("BFCL_v4_{category}.json")));
        for (q, a) in questions.iter().zip(&answers) {
            let Ok(defs) = fexpr::tooldefs::from_json(&q["function"]) else {
                continue;
            };
            let calls: Vec<String> = a["ground_truth"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|call| call.as_object()?.iter().next())
                .map(|(name, params)| {
                    let args: Vec<String> = first(params)
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| format!("{k}={}", Value::from_json(v).repr()))
                        .collect();
                    format!("{name}({})", args.join(", "))
                })
                .collect();
            corpus.push((
                fexpr::tooldefs::context(&defs),
                format!("[{}]", calls.join(", ")),
                calls.len(),
            ));
        }
    }
    Some(corpus)
}

fn check_bfcl(c: &mut Criterion) {
    let Some(corpus) = bfcl_corpus() else {
        eprintln!("front/check_bfcl_ground_truth: SKIPPED, no BFCL data (run scripts/ci-bfcl.sh)");
        return;
    };
    let calls: usize = corpus.iter().map(|(_, _, n)| n).sum();
    let limits = Limits::default();
    let options = RepairOptions::default();
    let mut group = c.benchmark_group("front");
    group.throughput(Throughput::Elements(calls as u64));
    group.sample_size(20);
    group.bench_function("check_bfcl_ground_truth", |b| {
        b.iter(|| {
            let mut valid = 0usize;
            for (ctx, text, _) in &corpus {
                let checked = check_text(black_box(text), ctx, &limits, &options);
                valid += checked.verdicts.iter().filter(|v| v.valid).count();
            }
            valid
        })
    });
    group.finish();
}

const TEXTS: [(&str, &str); 4] = [
    ("bare_call", "get_weather(city=\"Paris\", unit=\"celsius\")"),
    (
        "fenced_list_with_prose",
        "Sure! I'll check both cities for you.\n```python\n[get_weather(city=\"Paris\", include_forecast=true), get_weather(city=\"Lyon\")]\n```\nLet me know if you need anything else.<|eot_id|>",
    ),
    (
        "openai_message",
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"rust\", \"max_results\": 5}"}}]}"#,
    ),
    (
        "prose_only",
        "I'm sorry, but none of the available functions can compute the area of a triangle (they only cover weather and search). Could you provide more details?",
    ),
];

fn extract(c: &mut Criterion) {
    let limits = Limits::default();
    let mut group = c.benchmark_group("front/extract");
    for (name, text) in TEXTS {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| fexpr::front::extract(black_box(text), &limits, &|n| n != "print"))
        });
    }
    group.finish();
}

fn doors(c: &mut Criterion) {
    let manager = fexpr::demo::manager();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let openai = serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]});
    let doors = [
        ("expression", fexpr::Input::expr("add(a=2, b=3)")),
        (
            "model_text_hermes",
            fexpr::Input::model_output(
                "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n</tool_call>",
            ),
        ),
        ("openai_message", fexpr::Input::openai(openai)),
    ];
    let mut group = c.benchmark_group("front/door");
    for (name, input) in doors {
        // The input is cloned in the setup, outside the timed routine: a caller hands its
        // message (or text) over once; the clone is the bench's, not the door's.
        group.bench_function(name, |b| {
            b.iter_batched(
                || input.clone(),
                |input| {
                    let done = rt.block_on(manager.run(black_box(input)).into_future());
                    assert_eq!(done.outputs[0].output, Ok(Value::Int(5)));
                    done
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, check_bfcl, extract, doors);
criterion_main!(benches);

//! The adversarial corpus (`tests/adversarial/cases.jsonl`): escape attempts, denial of service
//! and parser confusion. Every case runs natively and — with the `sandbox` feature — inside the
//! sandbox (`common::execute` asserts both give the same outputs), and must end in a structured
//! error of the expected kind, with no output value, no tool run, and within its time budget.

mod common;

use fexpr::demo::{Number, Point};
use fexpr::{ErrorKind, FunctionTool, NdArray, ToolManager};
use serde::Deserialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The corpus, one JSON object per line.
const CASES: &str = include_str!("adversarial/cases.jsonl");

/// Native and sandboxed together must finish within this (debug build, shared machine).
const BUDGET: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
struct Case {
    group: String,
    kind: ErrorKind,
    source: Option<String>,
    /// `[text, times]` pieces concatenated, for inputs too large to write out.
    parts: Option<Vec<(String, usize)>>,
}

impl Case {
    fn text(&self) -> String {
        match (&self.source, &self.parts) {
            (Some(source), _) => source.clone(),
            (None, Some(parts)) => parts.iter().map(|(t, n)| t.repeat(*n)).collect(),
            (None, None) => panic!("a case needs `source` or `parts`"),
        }
    }
}

fn cases() -> Vec<Case> {
    CASES
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The demo toolset with tools that count their runs: same names, signatures and context.
fn recording_manager(runs: &Arc<AtomicUsize>) -> ToolManager {
    let r = runs.clone();
    let add = move |a: i64, b: i64| {
        r.fetch_add(1, Ordering::SeqCst);
        a.wrapping_add(b)
    };
    let r = runs.clone();
    let multiply = move |a: i64, b: i64| {
        r.fetch_add(1, Ordering::SeqCst);
        a.wrapping_mul(b)
    };
    let r = runs.clone();
    let divide = move |a: f64, b: f64| {
        r.fetch_add(1, Ordering::SeqCst);
        a / b
    };
    let r = runs.clone();
    let search = move |query: String| {
        r.fetch_add(1, Ordering::SeqCst);
        vec![query]
    };
    let r = runs.clone();
    let numpy_sum = move |arr: NdArray| {
        r.fetch_add(1, Ordering::SeqCst);
        Number::Float(arr.to_f64().sum())
    };
    let r = runs.clone();
    let add_points = move |p1: Point, p2: Point| {
        r.fetch_add(1, Ordering::SeqCst);
        Point {
            x: p1.x.wrapping_add(p2.x),
            y: p1.y.wrapping_add(p2.y),
        }
    };
    ToolManager::new()
        .tool(FunctionTool::new("add", ["a", "b"], add))
        .tool(FunctionTool::new("multiply", ["a", "b"], multiply))
        .tool(FunctionTool::new("divide", ["a", "b"], divide))
        .tool(FunctionTool::new("search", ["query"], search))
        .tool(FunctionTool::new("numpy_sum", ["arr"], numpy_sum))
        .tool(FunctionTool::new("add_points", ["p1", "p2"], add_points))
        .context(fexpr::demo::context())
}

/// Run every case of `group`; collect the failures so one run reports them all.
fn run_group(group: &str) {
    let runs = Arc::new(AtomicUsize::new(0));
    let manager = recording_manager(&runs);
    let mut failures = Vec::new();
    let mut count = 0;
    for (i, case) in cases().iter().enumerate() {
        if case.group != group {
            continue;
        }
        count += 1;
        let text = case.text();
        let shown = fexpr::error::clip(&text, 60);
        let started = Instant::now();
        let outputs = common::execute(&manager, &text);
        let elapsed = started.elapsed();
        if outputs.is_empty() {
            failures.push(format!("#{i} {shown:?}: no output at all"));
        }
        for out in &outputs {
            match &out.error {
                Some(e) if e.kind == case.kind && out.output.is_none() => {}
                Some(e) => failures.push(format!(
                    "#{i} {shown:?}: expected {:?}, got {e} (output {:?})",
                    case.kind, out.output
                )),
                None => failures.push(format!(
                    "#{i} {shown:?}: expected {:?}, got the value {:?}",
                    case.kind, out.output
                )),
            }
        }
        let ran = runs.swap(0, Ordering::SeqCst);
        if ran != 0 {
            failures.push(format!("#{i} {shown:?}: {ran} tool runs"));
        }
        if elapsed > BUDGET {
            failures.push(format!("#{i} {shown:?}: took {elapsed:?}"));
        }
    }
    assert!(count > 0, "no cases in group {group}");
    assert!(
        failures.is_empty(),
        "{} of {count} {group} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_corpus_has_at_least_100_cases_of_every_group() {
    let cases = cases();
    assert!(cases.len() >= 100, "{}", cases.len());
    for group in ["escape", "dos", "parser"] {
        assert!(cases.iter().any(|c| c.group == group), "{group}");
    }
    assert!(cases
        .iter()
        .all(|c| ["escape", "dos", "parser"].contains(&c.group.as_str())));
}

#[test]
fn escape_attempts_end_in_errors_with_nothing_run() {
    run_group("escape");
}

#[test]
fn denial_of_service_ends_in_errors_within_budget() {
    run_group("dos");
}

#[test]
fn parser_confusion_ends_in_errors_with_nothing_run() {
    run_group("parser");
}

#[test]
fn the_recording_tools_do_record() {
    // The check above means something only if a legitimate call is counted.
    let runs = Arc::new(AtomicUsize::new(0));
    let manager = recording_manager(&runs);
    let outputs = common::execute(&manager, "[add(a=1, b=2), search(query='q')]");
    assert!(outputs.iter().all(|o| o.error.is_none()), "{outputs:?}");
    let expected = if cfg!(feature = "sandbox") { 4 } else { 2 };
    assert_eq!(runs.load(Ordering::SeqCst), expected);
}

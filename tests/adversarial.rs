//! The adversarial corpus (`tests/adversarial/cases.jsonl`): escape attempts, denial of service
//! and parser confusion, as expressions, as fexpr's JSON forms and as raw model output. Every
//! case runs natively and — with the `sandbox` feature — inside the sandbox, and must end in a structured error of the expected kind, with no output value, no
//! tool run, within its time budget, and with the same outputs in both modes (unless the sandbox
//! stopped on a budget of its own).

mod common;

use fexpr::demo::{Number, Point};
use fexpr::{ErrorKind, FunctionOutput, FunctionTool, NdArray, ToolManager};
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
    /// The door: an expression (absent), `json` or `model_output`.
    form: Option<String>,
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

/// Budgets only the sandbox has: an input can hit them sandboxed and a shared limit natively
/// (a 600 KB list parses to more than the guest's 64 MiB). Both are then `Limit` errors.
const SANDBOX_ONLY_LIMITS: &[&str] = &["memory_bytes", "fuel", "deadline", "max_host_calls"];

/// What is wrong with `outputs` for `case`, if anything.
fn check(case: &Case, outputs: &[FunctionOutput], mode: &str, failures: &mut Vec<String>) {
    let shown = fexpr::error::clip(&case.text(), 60);
    if outputs.is_empty() {
        failures.push(format!("{mode} {shown:?}: no output at all"));
    }
    for out in outputs {
        match &out.error {
            Some(e) if e.kind == case.kind && out.output.is_none() => {}
            Some(e) => failures.push(format!(
                "{mode} {shown:?}: expected {:?}, got {e} (output {:?})",
                case.kind, out.output
            )),
            None => failures.push(format!(
                "{mode} {shown:?}: expected {:?}, got the value {:?}",
                case.kind, out.output
            )),
        }
    }
}

/// Run every case of `group` natively and sandboxed; collect the failures so one run reports
/// them all. Sandboxed outputs must equal the native ones (receipts aside), unless the sandbox
/// stopped on one of its own budgets.
fn run_group(group: &str) {
    let runs = Arc::new(AtomicUsize::new(0));
    let manager = recording_manager(&runs);
    let rt = common::runtime();
    // Compile the guest (or load it from the cache) outside the cases' time budget.
    #[cfg(feature = "sandbox")]
    let _ = rt.block_on(manager.execute_via_sandbox("add(a=1, b=2)"));
    runs.store(0, Ordering::SeqCst);
    let mut failures = Vec::new();
    let mut count = 0;
    for case in cases().iter().filter(|c| c.group == group) {
        count += 1;
        let text = case.text();
        let shown = fexpr::error::clip(&text, 60);
        let started = Instant::now();
        let native = rt.block_on(async {
            match case.form.as_deref() {
                None => manager.execute(&text).await,
                Some("json") => manager.execute_json_text(&text).await,
                Some("model_output") => manager.execute_model_output(&text).await.outputs,
                Some(other) => panic!("unknown form {other}"),
            }
        });
        if started.elapsed() > BUDGET {
            failures.push(format!("native {shown:?}: took {:?}", started.elapsed()));
        }
        check(case, &native, "native", &mut failures);
        #[cfg(feature = "sandbox")]
        {
            let started = Instant::now();
            let mut sandboxed = rt.block_on(async {
                match case.form.as_deref() {
                    Some("json") => manager.execute_json_text_via_sandbox(&text).await,
                    Some("model_output") => {
                        let options = fexpr::repair::RepairOptions::default();
                        let run = manager.execute_model_output_via_sandbox(&text, &options);
                        run.await.outputs
                    }
                    _ => manager.execute_via_sandbox(&text).await,
                }
            });
            if started.elapsed() > BUDGET {
                failures.push(format!("sandbox {shown:?}: took {:?}", started.elapsed()));
            }
            check(case, &sandboxed, "sandbox", &mut failures);
            sandboxed.iter_mut().for_each(|o| o.receipt = None);
            let own_budget = sandboxed.iter().any(|o| {
                o.error.as_ref().is_some_and(|e| {
                    e.kind == ErrorKind::Limit
                        && SANDBOX_ONLY_LIMITS.iter().any(|l| e.message.starts_with(l))
                })
            });
            if sandboxed != native && !own_budget {
                failures.push(format!(
                    "{shown:?}: native and sandboxed outputs differ:\n native: {}\nsandbox: {}",
                    fexpr::error::clip(&format!("{native:?}"), 600),
                    fexpr::error::clip(&format!("{sandboxed:?}"), 600)
                ));
            }
        }
        let ran = runs.swap(0, Ordering::SeqCst);
        if ran != 0 {
            failures.push(format!("{shown:?}: {ran} tool runs"));
        }
    }
    assert!(count > 0, "no cases in group {group}");
    assert!(
        failures.is_empty(),
        "{} failures in {count} {group} cases:\n{}",
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

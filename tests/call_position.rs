//! Call position: a call runs only where the text presents it as the model's action. The corpora
//! `tests/data/call_position.jsonl` and `tests/data/markup_in_data.jsonl` list model text and the tool calls that must run (none for
//! comments, strings, dead code, definitions, code around calls, mentions in a sentence and
//! ambiguous JSON). Every case runs natively, sandboxed, through `check` (its valid verdicts are
//! exactly the calls that run) and through `fexpr exec --tools demo -`; the tools count what
//! really ran.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::{FunctionTool, Input, ToolManager};
use serde_json::Value as Json;
use std::future::IntoFuture;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// The names of the tools that ran, in the order they were called.
type Ran = Arc<Mutex<Vec<&'static str>>>;

fn manager(ran: &Ran) -> ToolManager {
    let r = ran.clone();
    let add = move |a: i64, b: i64| {
        r.lock().unwrap().push("add");
        a.wrapping_add(b)
    };
    let r = ran.clone();
    let multiply = move |a: i64, b: i64| {
        r.lock().unwrap().push("multiply");
        a.wrapping_mul(b)
    };
    let r = ran.clone();
    let search = move |query: String| {
        r.lock().unwrap().push("search");
        format!("results for {query}")
    };
    ToolManager::builder()
        .tool(FunctionTool::new("add", ["a", "b"], add))
        .tool(FunctionTool::new("multiply", ["a", "b"], multiply))
        .tool(FunctionTool::new("search", ["query"], search))
        .context(fexpr::demo::context())
        .build()
        .unwrap()
}

struct Case {
    id: String,
    text: String,
    runs: Vec<String>,
}

/// The call-position corpus, and the generated corpus of every format's markup inside data
/// and reasoning (`scripts/gen-markup-in-data.py`: nothing in the data runs).
fn cases() -> Vec<Case> {
    let corpus = [
        include_str!("data/call_position.jsonl"),
        include_str!("data/markup_in_data.jsonl"),
    ]
    .concat();
    corpus
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let v: Json = serde_json::from_str(l).unwrap();
            Case {
                id: v["id"].as_str().unwrap().to_string(),
                text: v["text"].as_str().unwrap().to_string(),
                runs: v["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[test]
fn only_calls_in_call_position_run() {
    let ran: Ran = Arc::default();
    let manager = manager(&ran);
    let rt = common::runtime();
    let mut wrong = Vec::new();
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for case in &cases {
        let modes: &[bool] = if cfg!(feature = "sandbox") {
            &[false, true]
        } else {
            &[false]
        };
        for &sandboxed in modes {
            ran.lock().unwrap().clear();
            let request = manager.run(Input::model_output(case.text.clone()));
            let request = if sandboxed {
                request.sandboxed()
            } else {
                request
            };
            let response = rt.block_on(request.into_future());
            let got: Vec<String> = ran.lock().unwrap().iter().map(|s| s.to_string()).collect();
            if sorted(got.clone()) != sorted(case.runs.clone()) {
                wrong.push(format!(
                    "{} (sandboxed: {sandboxed}): ran {got:?}, want {:?}\n  outputs {:?}",
                    case.id, case.runs, response.outputs
                ));
            }
            // Every output of a case where nothing may run is an error.
            if case.runs.is_empty() && response.outputs.iter().any(|o| o.output.is_ok()) {
                wrong.push(format!(
                    "{}: an output has a value: {:?}",
                    case.id, response.outputs
                ));
            }
        }
        // `check` agrees with running: the valid verdicts are the top-level calls that ran.
        let checked = manager.check(Input::model_output(case.text.clone()));
        let valid: Vec<String> = checked
            .verdicts
            .iter()
            .filter(|v| v.valid)
            .map(|v| v.name.clone())
            .collect();
        let top: Vec<String> = case
            .runs
            .iter()
            .filter(|n| !(case.id == "nested_call_data_flow" && *n == "multiply"))
            .cloned()
            .collect();
        let nested_only_error = case.id == "nested_call_data_flow";
        if !nested_only_error && sorted(valid.clone()) != sorted(top) {
            wrong.push(format!(
                "{}: check's valid verdicts {valid:?}, runs {:?}",
                case.id, case.runs
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The CLI runs what the library runs: each case through `fexpr exec --tools demo -` gives a
/// value exactly for the calls that must run.
#[test]
fn exec_runs_only_calls_in_call_position() {
    let mut wrong = Vec::new();
    for case in cases() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fexpr"))
            .args(["exec", "--tools", "demo", "--format", "json", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(case.text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let rows: Vec<Json> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let ran: Vec<String> = rows
            .iter()
            .filter(|r| !r["output"].is_null() && r["error"].is_null())
            .map(|r| r["name"].as_str().unwrap_or_default().to_string())
            .collect();
        let want: Vec<String> = case
            .runs
            .iter()
            .filter(|n| !(case.id == "nested_call_data_flow" && *n == "multiply"))
            .cloned()
            .collect();
        if sorted(ran.clone()) != sorted(want.clone()) {
            wrong.push(format!(
                "{}: exec gave values for {ran:?}, want {want:?}\n  {rows:?}",
                case.id
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A one-call door refuses a list before anything in it runs.
#[test]
fn a_refused_list_runs_nothing() {
    let ran: Ran = Arc::default();
    let manager = manager(&ran);
    let rt = common::runtime();
    let out = rt.block_on(manager.execute_func_expr("[search(query='x'), add(a=1, b=2)]"));
    let error = out.output.as_ref().expect_err("refused");
    assert!(
        error.message.contains("expected one call, found 2"),
        "{error}"
    );
    assert!(ran.lock().unwrap().is_empty(), "{:?}", ran.lock().unwrap());
    // A bare tuple too, with its top-level comma after a string holding `,)`.
    for text in [
        "search(query='x'), add(a=1, b=2)",
        "search(query='x,)') ,add(a=1, b=2)",
    ] {
        let out = rt.block_on(manager.execute_func_expr(text));
        let error = out.output.as_ref().expect_err("refused");
        assert!(
            error.message.contains("expected one call, found 2"),
            "{text}: {error}"
        );
        assert!(
            ran.lock().unwrap().is_empty(),
            "{text}: {:?}",
            ran.lock().unwrap()
        );
    }
    let outs = rt.block_on(manager.execute_func_exprs(&[fexpr::FunctionExpression::new(
        "(add(a=1, b=2), multiply(a=2, b=3))",
    )]));
    assert!(outs[0].output.as_ref().err().is_some());
    assert!(ran.lock().unwrap().is_empty());
    #[cfg(feature = "sandbox")]
    {
        let out =
            rt.block_on(manager.execute_func_expr_via_sandbox("[add(a=1, b=2), add(a=3, b=4)]"));
        assert!(out.output.as_ref().err().is_some());
        assert!(ran.lock().unwrap().is_empty());
    }
}

/// More calls than `max_calls`: one `Limit` row per call, ids kept, none runs.
#[test]
fn a_list_over_max_calls_gives_a_row_per_call() {
    let ran: Ran = Arc::default();
    let manager = manager(&ran);
    let rt = common::runtime();
    let calls: Vec<String> = (0..257)
        .map(|i| {
            format!(r#"{{"id": "call_{i}", "type": "function", "function": {{"name": "add", "arguments": "{{\"a\": 1, \"b\": 2}}"}}}}"#)
        })
        .collect();
    let message = format!(
        r#"{{"role": "assistant", "tool_calls": [{}]}}"#,
        calls.join(", ")
    );
    let response = rt.block_on(manager.run(Input::json(message)).into_future());
    assert_eq!(response.outputs.len(), 257);
    assert!(ran.lock().unwrap().is_empty());
    for (i, out) in response.outputs.iter().enumerate() {
        assert_eq!(out.call_id, format!("call_{i}"));
        assert_eq!(
            out.output.as_ref().err().unwrap().kind,
            fexpr::ErrorKind::Limit
        );
    }
}

/// Every item of a list that tries to be a call gets a row; two call forms in one message are
/// an error naming both.
#[test]
fn json_lists_give_a_row_per_item_and_make_no_silent_choice() {
    let ran: Ran = Arc::default();
    let manager = manager(&ran);
    let rt = common::runtime();
    let text =
        r#"[{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "bogus"}, {"name": 5}]"#;
    let response = rt.block_on(manager.run(Input::json(text)).into_future());
    assert_eq!(response.outputs.len(), 3, "{:?}", response.outputs);
    assert_eq!(response.outputs[0].output, Ok(fexpr::Value::Int(3)));
    assert!(response.outputs[1].output.as_ref().err().is_some());
    let error = response.outputs[2].output.as_ref().err().unwrap();
    assert!(error.message.contains("not a string"), "{error}");
    let both = r#"{"name": "add", "tool_name": "multiply", "arguments": {"a": 1, "b": 2}}"#;
    let checked = manager.check(Input::json(both));
    let error = checked.verdicts[0].error.as_ref().unwrap();
    assert!(error.message.contains("`name` and `tool_name`"), "{error}");
}

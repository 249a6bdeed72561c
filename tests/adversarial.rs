//! The adversarial corpus (`tests/adversarial/cases.jsonl`): escape attempts, denial of service,
//! parser confusion and values fexpr refuses (non-finite floats, ints beyond a parameter's
//! range), as expressions, as fexpr's JSON forms and as raw model output. Every case runs
//! natively and — with the `sandbox` feature — inside the sandbox, and must end in a structured
//! error of the expected kind, with no output value, no tool run (unless the case is about a
//! tool's result), within its time budget, and with the same outputs in both modes (unless the
//! sandbox stopped on a budget of its own).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::demo::{Number, Point};
use fexpr::Input;
use fexpr::{ErrorKind, FunctionOutput, FunctionTool, NdArray, ToolManager};
use serde::Deserialize;
use std::future::IntoFuture;
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
    /// `[text, times]` pieces concatenated, for inputs too large to write out (`{i}` in a
    /// piece becomes the repetition's number: `k{i}=1,` makes `k0=1,k1=1,…`).
    parts: Option<Vec<(String, usize)>>,
    /// The door: an expression (absent), `json` or `model_output`.
    form: Option<String>,
    /// Whether the tools may run: the case is about what a tool returned.
    #[serde(default)]
    runs: bool,
    /// The case's own time budget in seconds, for each mode (default: [`BUDGET`]).
    within: Option<f64>,
}

impl Case {
    fn text(&self) -> String {
        match (&self.source, &self.parts) {
            (Some(source), _) => source.clone(),
            (None, Some(parts)) => parts.iter().map(|(t, n)| repeat(t, *n)).collect(),
            (None, None) => panic!("a case needs `source` or `parts`"),
        }
    }

    fn budget(&self) -> Duration {
        self.within.map_or(BUDGET, Duration::from_secs_f64)
    }
}

/// `piece` `times` times, `{i}` numbered.
fn repeat(piece: &str, times: usize) -> String {
    if !piece.contains("{i}") {
        return piece.repeat(times);
    }
    (0..times)
        .map(|i| piece.replace("{i}", &i.to_string()))
        .collect()
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
    ToolManager::builder()
        .tool(FunctionTool::new("add", ["a", "b"], add))
        .tool(FunctionTool::new("multiply", ["a", "b"], multiply))
        .tool(FunctionTool::new("divide", ["a", "b"], divide))
        .tool(FunctionTool::new("search", ["query"], search))
        .tool(FunctionTool::new("numpy_sum", ["arr"], numpy_sum))
        .tool(FunctionTool::new("add_points", ["p1", "p2"], add_points))
        .context(fexpr::demo::context())
        .build()
        .unwrap()
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
        match &out.output.as_ref().err() {
            Some(e) if e.kind == case.kind && out.output.is_err() => {}
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
    let _ = rt.block_on(async {
        manager
            .run(Input::expr("add(a=1, b=2)"))
            .sandboxed()
            .await
            .outputs
    });
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
                None => async { manager.run(Input::expr(&text)).await.outputs }.await,
                Some("json") => async { manager.run(Input::json(&text)).await.outputs }.await,
                Some("model_output") => {
                    manager
                        .run(Input::model_output(&text))
                        .into_future()
                        .await
                        .outputs
                }
                Some(other) => panic!("unknown form {other}"),
            }
        });
        if started.elapsed() > case.budget() {
            failures.push(format!("native {shown:?}: took {:?}", started.elapsed()));
        }
        check(case, &native, "native", &mut failures);
        #[cfg(feature = "sandbox")]
        {
            let started = Instant::now();
            let mut sandboxed = rt.block_on(async {
                match case.form.as_deref() {
                    Some("json") => {
                        async { manager.run(Input::json(&text)).sandboxed().await.outputs }.await
                    }
                    Some("model_output") => {
                        let options = fexpr::repair::RepairOptions::default();
                        let run = manager
                            .run(Input::model_output(&text))
                            .repair(options)
                            .sandboxed()
                            .into_future();
                        run.await.outputs
                    }
                    _ => async { manager.run(Input::expr(&text)).sandboxed().await.outputs }.await,
                }
            });
            if started.elapsed() > case.budget() {
                failures.push(format!("sandbox {shown:?}: took {:?}", started.elapsed()));
            }
            check(case, &sandboxed, "sandbox", &mut failures);
            sandboxed.iter_mut().for_each(|o| o.receipt = None);
            // Each run generates its own call ids: compare the rest.
            for (s, n) in sandboxed.iter_mut().zip(&native) {
                if s.call_id.starts_with("call_") && s.call_id.len() == 29 {
                    s.call_id.clone_from(&n.call_id);
                }
            }
            let own_budget = sandboxed.iter().any(|o| {
                o.output.as_ref().err().is_some_and(|e| {
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
        if ran != 0 && !case.runs {
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

/// The groups of cases.
const GROUPS: &[&str] = &["escape", "dos", "parser", "values"];

#[test]
fn the_corpus_has_at_least_100_cases_of_every_group() {
    let cases = cases();
    assert!(cases.len() >= 100, "{}", cases.len());
    for group in GROUPS {
        assert!(cases.iter().any(|c| c.group == *group), "{group}");
    }
    assert!(cases.iter().all(|c| GROUPS.contains(&c.group.as_str())));
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
fn values_fexpr_refuses_end_in_errors() {
    run_group("values");
}

#[test]
fn the_recording_tools_do_record() {
    // The check above means something only if a legitimate call is counted.
    let runs = Arc::new(AtomicUsize::new(0));
    let manager = recording_manager(&runs);
    let outputs = common::run_expr(&manager, "[add(a=1, b=2), search(query='q')]");
    assert!(outputs.iter().all(|o| o.output.is_ok()), "{outputs:?}");
    let expected = if cfg!(feature = "sandbox") { 4 } else { 2 };
    assert_eq!(runs.load(Ordering::SeqCst), expected);
}

/// A tool defined by JSON (OpenAI, MCP) that counts its runs.
struct JsonTool {
    definition: fexpr::ToolDefinition,
    runs: Arc<AtomicUsize>,
}

impl fexpr::Tool for JsonTool {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.definition
    }

    fn call(&self, _args: Vec<Option<fexpr::Value>>) -> fexpr::tool::ToolFuture {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(Ok(fexpr::ToolOutput::new(
            fexpr::Value::None,
        ))))
    }
}

/// `query(filter)` with `Filter = And | Or | Not | Cond` through `$defs`, as OpenAI and MCP
/// write it, and `pick(xs)` whose items are one of 200,000 strings.
fn schema_tools() -> Vec<fexpr::ToolDefinition> {
    let filter = serde_json::json!({
        "type": "object",
        "properties": {"filter": {"$ref": "#/$defs/Filter"}},
        "required": ["filter"],
        "$defs": {
            "Filter": {"anyOf": [{"$ref": "#/$defs/And"}, {"$ref": "#/$defs/Or"},
                {"$ref": "#/$defs/Not"}, {"$ref": "#/$defs/Cond"}]},
            "And": {"type": "object", "required": ["and"], "additionalProperties": false,
                "properties": {"and": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}},
            "Or": {"type": "object", "required": ["or"], "additionalProperties": false,
                "properties": {"or": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}},
            "Not": {"type": "object", "required": ["not"], "additionalProperties": false,
                "properties": {"not": {"$ref": "#/$defs/Filter"}}},
            "Cond": {"type": "object", "required": ["field", "op", "value"],
                "additionalProperties": false, "properties": {"field": {"type": "string"},
                "op": {"enum": ["=", "<", ">"]}, "value": {}}}
        }
    });
    let members: Vec<String> = (0..200_000).map(|i| format!("v{i}")).collect();
    let json = serde_json::json!([
        {"type": "function", "function": {"name": "query", "parameters": filter}},
        {"name": "query_mcp", "inputSchema": filter},
        {"type": "function", "function": {"name": "pick", "parameters": {"type": "object",
            "properties": {"xs": {"type": "array", "items": {"type": "string", "enum": members}}},
            "required": ["xs"]}}},
        {"name": "grep", "inputSchema": {"type": "object", "required": ["pattern"],
            "properties": {"pattern": {"type": "string", "pattern": "^[a-z]+$"}}}},
    ]);
    fexpr::tooldefs::from_json(&json).expect("the definitions read")
}

#[test]
fn schemas_fexpr_cannot_check_refuse_and_recursive_ones_are_checked() {
    let defs = schema_tools();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut builder = ToolManager::builder();
    for definition in &defs {
        builder.add_tool(Arc::new(JsonTool {
            definition: definition.clone(),
            runs: runs.clone(),
        }));
    }
    let manager = builder.build().unwrap();
    let ctx = fexpr::tooldefs::context(&defs);
    let limits = fexpr::Limits::default();
    let options = fexpr::repair::RepairOptions::default();
    let rt = common::runtime();
    let mut deep = "{'field': 'a', 'op': '=', 'value': 1}".to_string();
    for _ in 0..45 {
        deep = format!("{{'not': {deep}}}");
    }
    let refused = [
        ("query(filter=5)", ErrorKind::Type),
        ("query(filter='DROP TABLE users')", ErrorKind::Type),
        (
            "query_mcp(filter={'and': [{'field': 'a', 'op': '=', 'value': 1}, 5]})",
            ErrorKind::Type,
        ),
        (
            "query(filter={'not': {'field': 'a', 'op': 'LIKE', 'value': 1}})",
            ErrorKind::Type,
        ),
        // A `pattern` is checked (with the `regex` crate, in linear time).
        ("grep(pattern='ABC')", ErrorKind::Value),
        ("pick(xs=['v1', 'w2'])", ErrorKind::Type),
    ];
    let mut failures = Vec::new();
    let big_pick = format!(
        "pick(xs=[{}, 'nope'])",
        (0..99_999)
            .map(|i| format!("'v{}'", i * 2))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let accepted = [
        format!("query(filter={deep})"),
        "pick(xs=['v1', 'v199999'])".into(),
    ];
    for (text, kind) in refused
        .iter()
        .map(|(t, k)| (t.to_string(), Some(*k)))
        .chain([(big_pick, Some(ErrorKind::Type))])
        .chain(accepted.iter().map(|t| (t.clone(), None)))
    {
        let shown = fexpr::error::clip(&text, 60);
        let started = Instant::now();
        let checked = fexpr::check::check_text(&text, &ctx, &limits, &options);
        let native = rt.block_on(async { manager.run(Input::expr(&text)).await.outputs });
        #[cfg(feature = "sandbox")]
        let sandboxed =
            rt.block_on(async { manager.run(Input::expr(&text)).sandboxed().await.outputs });
        #[cfg(not(feature = "sandbox"))]
        let sandboxed = native.clone();
        if started.elapsed() > Duration::from_secs(3) {
            failures.push(format!(
                "{shown}: took {:?} in three modes",
                started.elapsed()
            ));
        }
        let verdict = checked.verdicts.first();
        // The sandbox may stop first on a budget of its own (the 200,000 values of the enum
        // and a 1 MB call fill much of the guest's 64 MiB).
        let own_budget = sandboxed
            .first()
            .and_then(|o| o.output.as_ref().err())
            .is_some_and(|e| {
                e.kind == ErrorKind::Limit
                    && SANDBOX_ONLY_LIMITS.iter().any(|l| e.message.starts_with(l))
            });
        let outputs = if own_budget {
            [native.first(), native.first()]
        } else {
            [native.first(), sandboxed.first()]
        };
        let verdict_shown = fexpr::error::clip(&format!("{:?}", verdict.map(|v| &v.error)), 300);
        let shown_out = |o: Option<&fexpr::FunctionOutput>| {
            fexpr::error::clip(&format!("{:?}", o.map(|o| &o.output)), 300)
        };
        match kind {
            Some(kind) => {
                if verdict.is_none_or(|v| v.valid || v.error.as_ref().map(|e| e.kind) != Some(kind))
                {
                    failures.push(format!("{shown}: check said {verdict_shown}"));
                }
                for out in outputs {
                    if out.is_none_or(|o| o.output.as_ref().err().map(|e| e.kind) != Some(kind)) {
                        failures.push(format!("{shown}: ran to {}", shown_out(out)));
                    }
                }
                let ran = runs.swap(0, Ordering::SeqCst);
                if ran != 0 {
                    failures.push(format!("{shown}: {ran} tool runs"));
                }
            }
            None => {
                if verdict.is_none_or(|v| !v.valid) {
                    failures.push(format!("{shown}: check said {verdict_shown}"));
                }
                for out in outputs {
                    if out.is_none_or(|o| o.output.is_err()) {
                        failures.push(format!("{shown}: ran to {}", shown_out(out)));
                    }
                }
                runs.store(0, Ordering::SeqCst);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Tool definitions fexpr cannot use as written: an unknown `type` refuses every value (a name
/// neither JSON Schema nor BFCL has is never read as "anything"), a bound of the wrong kind
/// refuses the definition naming the keyword, two tools of one name are an error, and 3,000
/// properties with an oversized `pattern` are refused fast.
#[test]
fn tool_definitions_fexpr_cannot_use_are_refused() {
    let limits = fexpr::Limits::default();
    let options = fexpr::repair::RepairOptions::strict();
    for ty in ["frobnicate", "int32", "Integer32"] {
        let json = serde_json::json!([{"name": "f", "parameters": {"type": "object",
            "properties": {"x": {"type": ty}}, "required": ["x"]}}]);
        let defs = fexpr::tooldefs::from_json(&json).expect("the definition reads");
        let ctx = fexpr::tooldefs::context(&defs);
        for text in ["f(x=1)", "f(x='a')", "f(x=None)", "f(x=[1])"] {
            let checked = fexpr::check::check_text(text, &ctx, &limits, &options);
            let verdict = checked.verdicts.first().expect("a verdict");
            let error = verdict.error.as_ref().expect("refused");
            assert!(!verdict.valid, "{ty} {text}");
            assert!(
                error
                    .message
                    .contains(&format!("its `type` `{ty}` is unknown")),
                "{ty} {text}: {error}"
            );
        }
    }
    for (keyword, value, message) in [
        (
            "maxLength",
            serde_json::json!("3"),
            "its `maxLength` must be a whole number >= 0, not \"3\"",
        ),
        (
            "maxLength",
            serde_json::json!(-1),
            "its `maxLength` must be a whole number >= 0, not -1",
        ),
        (
            "maxLength",
            serde_json::json!(2.5),
            "its `maxLength` must be a whole number >= 0, not 2.5",
        ),
        (
            "minimum",
            serde_json::json!("5"),
            "its `minimum` must be a number, not \"5\"",
        ),
        (
            "multipleOf",
            serde_json::json!(0),
            "its `multipleOf` must be a number > 0, not 0",
        ),
        (
            "multipleOf",
            serde_json::json!(-2),
            "its `multipleOf` must be a number > 0, not -2",
        ),
        (
            "maxItems",
            serde_json::json!("2"),
            "its `maxItems` must be a whole number >= 0, not \"2\"",
        ),
    ] {
        let json = serde_json::json!([{"name": "f", "parameters": {"type": "object",
            "properties": {"x": {"type": "array", "items": {"type": "string", keyword: value}}}}}]);
        let error = fexpr::tooldefs::from_json(&json).expect_err("refused");
        assert_eq!(
            error.message,
            format!("tool definition 0: tool `f`: its parameter schema is invalid: properties.x.items: {message}"),
        );
        // Read directly (an MCP server's schema, a Rust tool's), the schema refuses every value.
        let schema = serde_json::json!({"type": "string", keyword: value});
        let ty = fexpr::types::Type::from_schema(&schema, &schema);
        let refused = ty
            .coerce(fexpr::Value::Str("ab".into()), "x")
            .expect_err("refused");
        assert!(refused.message.contains(message), "{refused}");
    }
    // `"maxLength": 3.0` is a whole number.
    let json = serde_json::json!([{"name": "f", "parameters": {"type": "object",
        "properties": {"x": {"type": "string", "maxLength": 3.0}}}}]);
    assert!(fexpr::tooldefs::from_json(&json).is_ok());
    // Two definitions of one name, and two tools of one name in one builder.
    let json = serde_json::json!([{"name": "f"}, {"name": "g"}, {"name": "f"}]);
    let error = fexpr::tooldefs::from_json(&json).expect_err("refused");
    assert_eq!(
        error.message,
        "tool definition 2: the tool name `f` is defined twice (also by definition 0)"
    );
    let built = ToolManager::builder()
        .tool(FunctionTool::new("f", ["n"], |n: i64| n))
        .tool(FunctionTool::new("f", ["n"], |n: i64| -n))
        .build();
    let Err(problems) = built else {
        panic!("two tools of one name were accepted")
    };
    assert_eq!(
        problems.problems()[0].message,
        "the tool `f` is registered twice"
    );
    // 3,000 properties, each with an oversized pattern (the same one, then all different).
    for distinct in [false, true] {
        let properties: serde_json::Map<String, serde_json::Value> = (0..3000)
            .map(|i| {
                let tail = if distinct {
                    format!("{i}")
                } else {
                    String::new()
                };
                let pattern = format!("(\\w{{100}}){{100}}{tail}");
                (
                    format!("p{i}"),
                    serde_json::json!({"type": "string", "pattern": pattern}),
                )
            })
            .collect();
        let json = serde_json::json!([{"name": "f", "parameters": {"type": "object",
            "properties": properties}}]);
        let started = Instant::now();
        let defs = fexpr::tooldefs::from_json(&json).expect("the definition reads");
        let ctx = fexpr::tooldefs::context(&defs);
        let checked = fexpr::check::check_text("f(p0='a', p2999='b')", &ctx, &limits, &options);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "{distinct}: {took:?}");
        let verdict = checked.verdicts.first().expect("a verdict");
        assert!(!verdict.valid, "{distinct}");
    }
}

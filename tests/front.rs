//! The front-end on realistic model outputs: `tests/data/model_outputs.jsonl` (hand-written,
//! one case per line: the raw output and the calls it correctly contains) run through
//! `fexpr check --tools-json tests/data/corpus_tools.json`. Every expected call must come back
//! valid with its arguments, and no other call may be valid. Plus the front-end's own
//! guarantees: spans, ignored text, limits, the sandbox path.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::front::{extract, IgnoreReason, Origin};
use fexpr::Input;
use fexpr::{Limits, ToolManager, Value};
use serde_json::{json, Value as Json};
use std::future::IntoFuture;
use std::path::PathBuf;
use std::process::Command;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Numbers compared as numbers (`5` and `5.0` are the same value).
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn fexpr_check(output: &str) -> Vec<Json> {
    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .arg("check")
        .arg("--tools-json")
        .arg(data("corpus_tools.json"))
        .arg(output)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn corpus_valid_calls_are_exactly_the_expected_ones() {
    let corpus = std::fs::read_to_string(data("model_outputs.jsonl")).unwrap();
    let mut wrong = Vec::new();
    let (mut cases, mut expected_calls) = (0, 0);
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let case: Json = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        // `fexpr_expected` (with `why`): what fexpr deliberately returns instead of the
        // intended calls, e.g. no guess where BFCL's decoder guesses.
        let expected = case
            .get("fexpr_expected")
            .unwrap_or(&case["expected"])
            .as_array()
            .unwrap();
        let verdicts = fexpr_check(case["output"].as_str().unwrap());
        let valid: Vec<Json> = verdicts
            .iter()
            .filter(|v| v["valid"] == json!(true))
            .map(|v| json!({"name": v["name"], "kwargs": v["kwargs"]}))
            .collect();
        let matches =
            valid.len() == expected.len() && valid.iter().zip(expected).all(|(v, e)| same(v, e));
        if !matches {
            wrong.push(format!(
                "{id}: got {valid:?}\n   want {expected:?}\n   verdicts {verdicts:?}"
            ));
        }
        cases += 1;
        expected_calls += expected.len();
    }
    assert!(cases >= 50, "{cases} cases");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!("corpus: {cases} outputs, {expected_calls} calls, all recovered, none extra");
}

#[test]
fn repairs_are_reported_with_spans() {
    let text = "[search(query=\"rust\", exact=true, max_results=3.0)]";
    let verdicts = fexpr_check(text);
    let repairs = verdicts[0]["repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 2);
    assert_eq!(repairs[0]["kind"], "JsonLiteral");
    // Every span indexes the checked text, the verdict's and its repairs' alike.
    assert_eq!(repairs[0]["span"], json!({"start": 28, "end": 32}));
    assert_eq!(&text[28..32], "true");
    assert_eq!(verdicts[0]["span"], json!({"start": 1, "end": 50}));
    assert_eq!(repairs[1]["span"], json!({"start": 46, "end": 49}));
    assert_eq!(&text[46..49], "3.0");
    assert_eq!(repairs[1]["kind"], "IntegralFloat");
    assert_eq!(repairs[1]["to"], "3");
    let strict = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["check", "--strict", "--tools-json"])
        .arg(data("corpus_tools.json"))
        .arg("search(query='x', exact=true)")
        .output()
        .unwrap();
    let verdict: Json = serde_json::from_slice(&strict.stdout).unwrap();
    assert_eq!(verdict["valid"], false);
    assert_eq!(verdict["error"]["kind"], "UnknownName");
}

#[test]
fn check_reads_stdin_and_reports_ignored_text_on_stderr() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["check", "--tools-json"])
        .arg(data("corpus_tools.json"))
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Checking.\nget_weather(city='Oslo')<|eot_id|>")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let verdict: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["kwargs"], json!({"city": "Oslo"}));
    let ignored: Vec<Json> = String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reasons: Vec<&Json> = ignored.iter().map(|i| &i["ignored"]["reason"]).collect();
    assert_eq!(reasons, [&json!("Prose"), &json!("ChatToken")]);
}

#[test]
fn ignored_text_is_reported_not_dropped() {
    let text = "Let me check <tool_call>[f(a=1)]</tool_call> ```x``` {\"k\": 1} g(2) <|im_end|>";
    let found = extract(text, &Limits::default(), &|n| n == "f");
    assert_eq!(found.calls.len(), 1);
    assert_eq!(&text[found.calls[0].span.range()], "f(a=1)");
    let reasons: Vec<IgnoreReason> = found.ignored.iter().map(|i| i.reason).collect();
    // The tag is an explicit call form; what follows it on the line is prose (a fence opens
    // only at a line's start).
    assert_eq!(
        reasons,
        [
            IgnoreReason::Prose,
            IgnoreReason::Tag,
            IgnoreReason::Tag,
            IgnoreReason::Prose,
            IgnoreReason::ChatToken,
        ]
    );
    assert_eq!(found.ignored[0].text, "Let me check");
}

#[test]
fn a_lone_call_to_an_unknown_tool_is_kept_for_its_error() {
    let found = extract("[get_wether(city='x')]", &Limits::default(), &|n| {
        n == "get_weather"
    });
    assert_eq!(found.calls.len(), 1);
    assert_eq!(found.calls[0].name, "get_wether");
    let prose = extract("See figure(3) below.", &Limits::default(), &|n| {
        n == "get_weather"
    });
    assert!(prose.calls.is_empty());
    let reasons: Vec<IgnoreReason> = prose.ignored.iter().map(|i| i.reason).collect();
    assert_eq!(reasons, [IgnoreReason::Prose]);
}

#[test]
fn cut_off_and_unparsable_calls_are_reported_with_errors() {
    let found = extract("f(a=1, b=", &Limits::default(), &|_| true);
    assert_eq!(found.calls.len(), 1);
    assert_eq!(
        found.calls[0].parsed.as_ref().unwrap_err().kind,
        fexpr::ErrorKind::Syntax
    );
    let found = extract("f(a=lambda: 1)", &Limits::default(), &|_| true);
    assert_eq!(
        found.calls[0].parsed.as_ref().unwrap_err().kind,
        fexpr::ErrorKind::Unsupported
    );
}

#[test]
fn json_forms_record_their_origin() {
    let cases = [
        (r#"{"name": "f", "kwargs": {"a": 1}}"#, Origin::Function),
        (r#"{"action": "f(a=1)"}"#, Origin::FunctionExpression),
        (
            r#"{"name": "f", "arguments": "{\"a\": 1}"}"#,
            Origin::OpenAi,
        ),
        (
            r#"{"name": "f", "parameters": {"a": 1}}"#,
            Origin::NameParameters,
        ),
        (
            r#"{"tool": "f", "tool_input": {"a": 1}}"#,
            Origin::NameParameters,
        ),
        (
            r#"{"function": "f", "params": {"a": 1}}"#,
            Origin::NameParameters,
        ),
        (
            r#"{"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}"#,
            Origin::Anthropic,
        ),
    ];
    for (text, origin) in cases {
        let found = extract(text, &Limits::default(), &|_| true);
        assert_eq!(found.calls.len(), 1, "{text}");
        assert_eq!(found.calls[0].origin, origin, "{text}");
        // The call's own text is its JSON as written; its tree is the call.
        assert_eq!(found.calls[0].source, text, "{text}");
        let tree = found.calls[0].parsed.as_ref().unwrap();
        assert_eq!(tree.to_string(), "f(a=1)", "{text}");
    }
    let positional = extract(
        r#"{"name": "f", "args": [1, "x"], "kwargs": {"b": 2}}"#,
        &Limits::default(),
        &|_| true,
    );
    let tree = positional.calls[0].parsed.as_ref().unwrap();
    assert_eq!(tree.to_string(), r#"f(1, "x", b=2)"#);
    let data = extract(r#"{"name": "Bob", "age": 3}"#, &Limits::default(), &|_| {
        true
    });
    assert!(data.calls.is_empty());
    assert_eq!(data.ignored[0].reason, IgnoreReason::JsonData);
    let bad = extract(
        r#"{"name": "f", "arguments": "{not json"}"#,
        &Limits::default(),
        &|_| true,
    );
    assert_eq!(
        bad.calls[0].parsed.as_ref().unwrap_err().kind,
        fexpr::ErrorKind::Syntax
    );
    // Any key is a keyword named exactly so, spans into the JSON as written.
    let text = r#"{"name": "f", "arguments": {"a-b": 1, "from": 2, "城市": 3}}"#;
    let odd_keys = extract(text, &Limits::default(), &|_| true);
    let tree = odd_keys.calls[0].parsed.as_ref().unwrap();
    assert_eq!(tree.to_string(), r#"f(**{"a-b": 1, "from": 2, "城市": 3})"#);
    let fexpr::syntax::ExprKind::Call(call) = &tree.kind else {
        panic!("a call")
    };
    assert_eq!(&text[call.kwargs[1].name_span.range()], r#""from""#);
    assert_eq!(&text[call.func_span.range()], r#""f""#);
}

#[test]
fn json_forms_go_through_the_json_door() {
    let limits = Limits::default();
    let first_error = |text: &str| {
        let found = extract(text, &limits, &|_| true);
        let call = found
            .calls
            .first()
            .unwrap_or_else(|| panic!("a call in {text}"));
        let error = call.parsed.clone().expect_err(text);
        // The error's span indexes the call's source: the JSON form as written.
        let at = error
            .span
            .and_then(|s| call.source.get(s.range()))
            .map(str::to_string);
        (error.kind, error.message, at)
    };
    // Duplicate keys in OpenAI's `arguments` string, named and located through the escapes.
    let (kind, message, at) =
        first_error(r#"{"name": "add", "arguments": "{\"a\": 1, \"a\": 1000, \"b\": 2}"}"#);
    assert_eq!(kind, fexpr::ErrorKind::Syntax);
    assert!(message.starts_with("JSON: duplicate key `a`"), "{message}");
    assert_eq!(at.as_deref(), Some(r#"\"a\""#));
    let (_, message, at) = first_error(r#"{"name": "add", "name": "multiply", "arguments": {}}"#);
    assert!(
        message.starts_with("JSON: duplicate key `name`"),
        "{message}"
    );
    assert_eq!(at.as_deref(), Some(r#""name""#));
    // Also in a Python-literal form, which is parsed, not evaluated, so nothing is lost.
    let (_, message, _) = first_error("{'name': 'add', 'arguments': {'a': 1, 'a': 2}}");
    assert!(message.starts_with("JSON: duplicate key `a`"), "{message}");
    let (kind, message, at) = first_error("{'name': 'divide', 'arguments': {'a': 1e400, 'b': 1}}");
    assert_eq!(
        (kind, message.as_str()),
        (
            fexpr::ErrorKind::Value,
            "JSON: number 1e400 is out of range for a float"
        )
    );
    assert_eq!(at.as_deref(), Some("1e400"));
    // The calls of the whole text count against max_calls; JSON over a limit refuses the text.
    let many = format!(
        r#"{{"role": "assistant", "tool_calls": [{}]}}"#,
        vec![r#"{"type": "function", "function": {"name": "add", "arguments": "{}"}}"#; 300]
            .join(", ")
    );
    // Each call is a row carrying the limit: none runs, and a reply can answer each id.
    let refused = extract(&many, &limits, &|_| true);
    assert_eq!(refused.calls.len(), 300);
    assert!(refused.error.is_none());
    assert!(refused.calls.iter().all(|c| c
        .parsed
        .as_ref()
        .is_err_and(|e| e.message == "max_calls limit exceeded: 300 > 256")));
    let deep = format!("Here: {}{}", "[".repeat(150), "]".repeat(150));
    let refused = extract(&deep, &limits, &|_| true);
    let error = refused.error.expect("refused");
    assert!(error.message.starts_with("max_depth"), "{error}");
    assert_eq!(error.span, Some(fexpr::Span::new(105, 106)));
}

#[test]
fn work_is_bounded() {
    let limits = Limits::default().max_source_bytes(1000);
    let big = "f(a=1) ".repeat(200);
    let refused = extract(&big, &limits, &|_| true);
    assert_eq!(refused.error.unwrap().kind, fexpr::ErrorKind::Limit);
    // Deeply nested unclosed brackets: no call, finishes quickly, reported.
    let nested = format!("{}x", "[f(".repeat(100_000));
    let started = std::time::Instant::now();
    let found = extract(&nested, &Limits::default(), &|_| false);
    assert!(found.calls.iter().all(|c| c.parsed.is_err()));
    assert!(!found.ignored.is_empty() || !found.calls.is_empty());
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn text_of_only_brackets_is_reported_not_answered_with_nothing() {
    let text = format!(" {}\n", "(".repeat(1_000_000));
    let found = extract(&text, &Limits::default(), &|_| true);
    assert!(found.calls.is_empty());
    assert_eq!(found.ignored.len(), 1);
    assert_eq!(found.ignored[0].reason, IgnoreReason::Punctuation);
    assert_eq!(found.ignored[0].span.range(), 1..1_000_001);
    // Between calls, brackets and separators are still skipped quietly.
    let calls = extract("(f(a=1)), ; (f(a=2))", &Limits::default(), &|_| true);
    assert_eq!(calls.calls.len(), 2);
    assert!(calls.ignored.is_empty(), "{:?}", calls.ignored);
}

#[test]
fn manager_runs_model_output_natively_and_in_the_sandbox() {
    let manager: ToolManager = fexpr::demo::manager();
    let text = "Adding.\n```python\n[add(a=2.0, b=3), add(a=1, b=1)]\n```<|eot_id|>";
    let rt = tokio::runtime::Runtime::new().unwrap();
    let native = rt.block_on(manager.run(Input::model_output(text)).into_future());
    let outputs: Vec<Option<Value>> = native
        .outputs
        .iter()
        .map(|o| o.output.clone().ok())
        .collect();
    assert_eq!(outputs, [Some(Value::Int(5)), Some(Value::Int(2))]);
    assert_eq!(native.outputs[0].repairs.len(), 1);
    assert_eq!(
        native.outputs[0].to_json()["repairs"][0]["kind"],
        "IntegralFloat"
    );
    let sandboxed = rt.block_on(
        manager
            .run(Input::model_output(text))
            .repair(fexpr::repair::RepairOptions::default())
            .sandboxed()
            .into_future(),
    );
    let outputs: Vec<Option<Value>> = sandboxed
        .outputs
        .iter()
        .map(|o| o.output.clone().ok())
        .collect();
    assert_eq!(outputs, [Some(Value::Int(5)), Some(Value::Int(2))]);
    assert!(sandboxed.outputs[0].receipt.is_some());
    assert_eq!(sandboxed.ignored, native.ignored);
}

/// The corpus's tools as a context (for the library-level tests).
fn corpus_context() -> fexpr::Context {
    let defs: Json =
        serde_json::from_str(&std::fs::read_to_string(data("corpus_tools.json")).unwrap()).unwrap();
    fexpr::tooldefs::context(&fexpr::tooldefs::from_json(&defs).unwrap())
}

#[test]
fn invalid_verdicts_keep_the_call_as_written() {
    let tools = json!([{"name": "find", "parameters": {"type": "object", "properties": {
        "show_type": {"type": "string", "enum": ["regular", "3d", "imax"]},
        "n": {"type": "integer"}}}}]);
    let ctx = fexpr::tooldefs::context(&fexpr::tooldefs::from_json(&tools).unwrap());
    let check = |text: &str| {
        fexpr::check::check_text(text, &ctx, &Limits::default(), &Default::default()).verdicts
    };
    // Repaired (each repair reported): the issue's example is now valid.
    let v = &check(r#"find(show_type="IMAX", n=2.0)"#)[0];
    assert!(v.valid, "{:?}", v.error);
    assert_eq!(v.to_json()["kwargs"], json!({"show_type": "imax", "n": 2}));
    assert_eq!(v.repairs.len(), 2);
    // Invalid: the arguments as written, an unreadable one marked with its source.
    let v = &check(r#"find("Comic", n=2.5, when=tomorrow)"#)[0];
    assert!(!v.valid);
    assert_eq!(
        v.to_json()["kwargs"],
        json!({"show_type": "Comic", "n": 2.5, "when": {"$unreadable": "tomorrow"}})
    );
    let v = &check(r#"find(show_type="Comic")"#)[0];
    let error = v.error.as_ref().unwrap();
    assert_eq!(error.kind, fexpr::ErrorKind::Type);
    assert_eq!(error.hint.as_deref(), Some("use one of 'regular', '3d', 'imax'; signature: find(show_type: Literal['regular', '3d', 'imax'] | None = None, n: int | None = None)"));
    // An unknown tool: positional arguments have no names, so they stay positional.
    let v = check("fnd(1, 'x', n=2)")[0].to_json();
    assert_eq!(v["name"], "fnd");
    assert_eq!(v["args"], json!([1, "x"]));
    assert_eq!(v["kwargs"], json!({"n": 2}));
}

#[test]
fn calls_are_not_lifted_out_of_enclosing_expressions() {
    let tools = |n: &str| matches!(n, "add" | "multiply" | "search");
    // Code around calls: one rejected item saying what it is; nothing in it runs.
    for (text, says) in [
        (
            r#"__import__("os").system(search(query="x"))"#,
            "attribute access",
        ),
        ("(lambda: add(a=1, b=2))()", "can be called"),
        (
            "add(a=1, b=2) if False else multiply(a=1, b=1)",
            "conditional",
        ),
        ("lambda: add(a=1, b=2)", "lambda"),
        ("add(a=1, b=2).real", "attribute access"),
        ("add(a=1, b=2) + os", "operation"),
        ("x = 1 * add(a=1, b=2)", "assignment"),
        ("[add(a=1, b=2), x]", "not only calls"),
    ] {
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls.len(), 1, "{text}: {:?}", found.calls);
        let call = &found.calls[0];
        assert_eq!(&text[call.span.range()], text);
        let error = call.parsed.as_ref().expect_err(text);
        assert!(error.message.contains(says), "{text}: {error}");
        assert!(
            error.message.contains("nothing in it ran"),
            "{text}: {error}"
        );
    }
    // In a sentence they are mentions: reported, not calls.
    for text in [
        "Sure: y = None if flag else add(a=1, b=2)<|eot_id|>",
        "Done: lambda: add(a=1, b=2)",
        "run [add(a=1, b=2), x] now",
        "I'll run (lambda: add(a=1, b=2))() now.",
        "Let me show(add(a=1, b=2)) for you",
    ] {
        let found = extract(text, &Limits::default(), &tools);
        assert!(found.calls.is_empty(), "{text}: {:?}", found.calls);
        assert!(
            found
                .ignored
                .iter()
                .any(|i| i.reason == IgnoreReason::Mention),
            "{text}"
        );
    }
    // A call to a name that is not a tool, standing alone: that call is the item (its error is
    // that it is not a tool).
    let found = extract("print(add(a=1, b=2), 3)", &Limits::default(), &tools);
    assert_eq!(found.calls[0].name, "print");
    // `print` around calls (Gemma's `tool_code`) is the one wrapper looked into.
    let found = extract(
        "```tool_code\nprint(add(a=1, b=2))\n```",
        &Limits::default(),
        &tools,
    );
    assert_eq!(found.calls[0].source, "add(a=1, b=2)");
    // Calls in a sentence are taken only by the lenient reading.
    let text = "Sure! add(a=1, b=2) then multiply(a=3, b=4) (add(a=5, b=6)).";
    assert!(extract(text, &Limits::default(), &tools).calls.is_empty());
    let found = fexpr::front::extract_with(
        text,
        &Limits::default(),
        &tools,
        fexpr::front::ReadOptions {
            lenient: true,
            ..Default::default()
        },
    );
    let sources: Vec<&str> = found.calls.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(
        sources,
        ["add(a=1, b=2)", "multiply(a=3, b=4)", "add(a=5, b=6)"]
    );
    assert!(found.calls.iter().all(|c| c.parsed.is_ok()));
}

#[test]
fn a_cut_off_copy_of_the_calls_is_read_once() {
    let tools = |n: &str| matches!(n, "f" | "g");
    let text = "[f(a=1), g(b={'k': true})]\n[f(a=1), g(b={'k'";
    let found = extract(text, &Limits::default(), &tools);
    let sources: Vec<&str> = found.calls.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(sources, ["f(a=1)", "g(b={'k': true})"]);
    assert!(found.calls.iter().all(|c| c.parsed.is_ok()));
    assert_eq!(found.ignored.len(), 1);
    assert_eq!(found.ignored[0].reason, IgnoreReason::Duplicate);
    assert_eq!(&text[found.ignored[0].span.range()], "[f(a=1), g(b={'k'");
    let found = extract("f(a=1)\nf(a=", &Limits::default(), &tools);
    assert_eq!(found.calls.len(), 1);
    assert_eq!(found.ignored[0].reason, IgnoreReason::Duplicate);
    // Not a copy: the cut-off call is reported with its error, never guessed.
    let found = extract("[f(a=1)]\n[g(b=", &Limits::default(), &tools);
    assert_eq!(found.calls.len(), 2);
    assert!(found.calls[1].parsed.is_err());
    // A whole second copy is two calls: the model wrote them.
    let found = extract("[f(a=1)]\n[f(a=1)]", &Limits::default(), &tools);
    assert_eq!(found.calls.len(), 2);
}

/// A tool of the corpus that runs nothing: it answers `None`.
struct Echo(fexpr::ToolDefinition);

impl fexpr::Tool for Echo {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.0
    }
    fn call(&self, _: Vec<Option<Value>>) -> fexpr::tool::ToolFuture {
        Box::pin(async { Ok(Value::None.into()) })
    }
}

/// `exec` and `check` read the same text the same way: over the whole corpus, one output per
/// verdict, the same name, valid exactly when the call ran, the same arguments, the same
/// error and repairs.
#[test]
fn exec_and_check_agree_on_the_corpus() {
    let defs: Json =
        serde_json::from_str(&std::fs::read_to_string(data("corpus_tools.json")).unwrap()).unwrap();
    let mut builder = ToolManager::builder();
    for def in fexpr::tooldefs::from_json(&defs).unwrap() {
        builder.add_tool(std::sync::Arc::new(Echo(def)));
    }
    let manager = builder.build().unwrap();
    let ctx = corpus_context();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let corpus = std::fs::read_to_string(data("model_outputs.jsonl")).unwrap();
    let mut compared = 0;
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let case: Json = serde_json::from_str(line).unwrap();
        let (id, text) = (
            case["id"].as_str().unwrap(),
            case["output"].as_str().unwrap(),
        );
        let checked = fexpr::check::check_text(text, &ctx, &Limits::default(), &Default::default());
        let run = rt.block_on(manager.run(Input::model_output(text)).into_future());
        assert_eq!(run.ignored, checked.ignored, "{id}");
        if checked.verdicts.is_empty() {
            // No call: no row (but JSON's reader's error for JSON that is no form).
            assert!(run.outputs.len() <= 1, "{id}: {:?}", run.outputs);
            assert!(
                run.outputs.is_empty() || text.trim_start().starts_with(['{', '[']),
                "{id}"
            );
            assert!(run.outputs.iter().all(|o| o.output.is_err()), "{id}");
            continue;
        }
        assert_eq!(
            run.outputs.len(),
            checked.verdicts.len(),
            "{id}: {:?}",
            run.outputs
        );
        for (out, verdict) in run.outputs.iter().zip(&checked.verdicts) {
            assert_eq!(out.name, verdict.name, "{id}");
            assert_eq!(
                out.output.is_ok(),
                verdict.valid,
                "{id}: {out:?} vs {verdict:?}"
            );
            assert_eq!(out.repairs, verdict.repairs, "{id}");
            if !verdict.valid {
                assert_eq!(out.output.as_ref().err(), verdict.error.as_ref(), "{id}");
            }
            // The arguments: positional ones named by their parameter, as a verdict does. A
            // call that could not be read has none: its input is the text as written.
            let Some(call) = out.parsed_input.as_ref() else {
                assert!(verdict.kwargs.is_empty() && verdict.args.is_empty(), "{id}");
                assert_eq!(out.input, verdict.input, "{id}");
                continue;
            };
            let sig = ctx.get(&out.name).and_then(|e| match e {
                fexpr::context::Entry::Tool(sig) => Some(sig.clone()),
                _ => None,
            });
            let mut kwargs = indexmap::IndexMap::new();
            let mut args = call.args.iter();
            if let Some(sig) = &sig {
                for field in sig.fields.iter().take(call.args.len()) {
                    kwargs.insert(field.name.clone(), args.next().unwrap().clone());
                }
            }
            let args: Vec<Value> = args.cloned().collect();
            kwargs.extend(call.kwargs.clone());
            let kwargs: Vec<(String, Value)> = kwargs.into_iter().collect();
            assert_eq!(kwargs, verdict.kwargs, "{id}");
            assert_eq!(args, verdict.args, "{id}");
            compared += 1;
        }
    }
    assert!(compared >= 60, "{compared} calls compared");
}

mod properties {
    use fexpr::front::extract;
    use fexpr::Limits;
    use proptest::prelude::*;

    /// Pieces real outputs are made of, glued at random: calls, JSON, tokens, quotes,
    /// unbalanced brackets, fences, reasoning tags, non-ASCII text.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("f(a=1)".to_string()),
            Just("[g(b='x)'), f(a=true)]".to_string()),
            Just("{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}".to_string()),
            Just("{'tool': 'f', 'input': {'a': None}}".to_string()),
            Just("<|eot_id|>".to_string()),
            Just("```python\n".to_string()),
            Just("<think>".to_string()),
            Just("</think>".to_string()),
            Just("<tool_call>".to_string()),
            Just("print(".to_string()),
            Just("é漢字🙂".to_string()),
            Just("\"'".to_string()),
            Just("([{".to_string()),
            Just(")]}".to_string()),
            "[a-z_.(){}\\[\\]'\",=:<>|# \n0-9]{0,12}",
        ]
    }

    proptest! {
        #[test]
        fn extraction_never_panics_and_spans_are_sound(pieces in proptest::collection::vec(piece(), 0..24)) {
            let text: String = pieces.concat();
            let found = extract(&text, &Limits::default(), &|n| n.starts_with('f') || n == "g");
            for call in &found.calls {
                prop_assert!(text.is_char_boundary(call.span.start as usize));
                prop_assert!(text.is_char_boundary(call.span.end as usize));
                prop_assert!(call.span.start <= call.span.end && call.span.end as usize <= text.len());
            }
            for ig in &found.ignored {
                prop_assert!(text.get(ig.span.range()).is_some(), "{:?} in {:?}", ig, text);
                prop_assert!(!ig.text.is_empty());
            }
            // Text that is not blank yields a call or a report: never nothing.
            prop_assert!(text.trim().is_empty() || !found.calls.is_empty() || !found.ignored.is_empty(), "{:?}", text);
            // Ignored stretches never overlap a call's own text.
            for ig in &found.ignored {
                for call in &found.calls {
                    let inside = ig.span.start >= call.span.start && ig.span.end <= call.span.end;
                    prop_assert!(!inside, "{:?} inside {:?} in {:?}", ig, call.span, text);
                }
            }
        }
    }
}

/// The ids a model gives its calls come back on the outputs, in both modes; calls without
/// one get a generated id, unique per call.
#[test]
fn call_ids_are_the_models_or_fresh() {
    let manager = fexpr::demo::manager();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let call = |id: &str, a: i64| {
        json!({"id": id, "type": "function",
               "function": {"name": "add", "arguments": format!("{{\"a\": {a}, \"b\": 1}}")}})
    };
    let openai = json!({"role": "assistant", "content": null,
                        "tool_calls": [call("call_a", 1), call("call_b", 2), call("call_c", 3)]});
    let anthropic = json!({"role": "assistant", "content": [
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {"a": 1, "b": 1}},
        {"type": "tool_use", "id": "toolu_b", "name": "add", "input": {"a": "two", "b": 1}},
    ]});
    for (message, ids) in [
        (&openai, &["call_a", "call_b", "call_c"][..]),
        (&anthropic, &["toolu_a", "toolu_b"][..]),
    ] {
        let text = message.to_string();
        let native = rt.block_on(manager.run(Input::model_output(&text)).into_future());
        let sandboxed = rt.block_on(
            manager
                .run(Input::model_output(&text))
                .repair(fexpr::repair::RepairOptions::default())
                .sandboxed()
                .into_future(),
        );
        for run in [native, sandboxed] {
            let got: Vec<&str> = run.outputs.iter().map(|o| o.call_id.as_str()).collect();
            assert_eq!(got, ids, "{text}");
            assert_eq!(run.outputs[0].to_json()["call_id"], ids[0]);
        }
    }
    // A failed call keeps its id and its name.
    let run = rt.block_on(
        manager
            .run(Input::model_output(anthropic.to_string()))
            .into_future(),
    );
    assert!(run.outputs[1].output.is_err(), "{}", run.outputs[1]);
    assert_eq!(run.outputs[1].name, "add");
    // Calls written as Python have none: each gets a fresh one.
    let outputs = rt.block_on(async {
        manager
            .run(Input::expr("[add(a=1, b=2), add(a=1, b=2)]"))
            .await
            .outputs
    });
    assert!(outputs
        .iter()
        .all(|o| o.call_id.starts_with("call_") && o.call_id.len() == 29));
    assert_ne!(outputs[0].call_id, outputs[1].call_id);
}

/// `tests/data/model_formats.jsonl`: raw outputs in each model format (Qwen3-Coder, GLM, Kimi
/// K2, DeepSeek, Harmony, Mistral, Llama 3.1, Granite, Phi-4, xLAM, Gemma, Hermes, pythonic),
/// read by the front door found by their markers and with the format named: the valid verdicts
/// are exactly the expected calls, and running gives a value for exactly those.
#[test]
fn model_formats_are_read_checked_and_run() {
    let manager = fexpr::demo::manager();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let corpus = std::fs::read_to_string(data("model_formats.jsonl")).unwrap();
    let mut wrong = Vec::new();
    let mut cases = 0;
    for line in corpus
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let case: Json = serde_json::from_str(line).unwrap();
        let (id, text) = (
            case["id"].as_str().unwrap(),
            case["output"].as_str().unwrap(),
        );
        // `fexpr_expected` (with `why`): where the front door's rules read more than the
        // format's own reader does.
        let expected = case
            .get("fexpr_expected")
            .unwrap_or(&case["expected"])
            .as_array()
            .unwrap();
        let format: fexpr::front::formats::ModelFormat =
            case["format"].as_str().unwrap().parse().unwrap();
        for named in [None, Some(format)] {
            let options = fexpr::repair::RepairOptions {
                model_format: named,
                ..Default::default()
            };
            let checked = manager
                .run(Input::model_output(text))
                .repair(options)
                .check();
            let valid: Vec<Json> = checked
                .verdicts
                .iter()
                .filter(|v| v.valid)
                .map(|v| json!({"name": v.name, "kwargs": v.to_json()["kwargs"]}))
                .collect();
            let matches = valid.len() == expected.len()
                && valid.iter().zip(expected).all(|(v, e)| same(v, e));
            if !matches {
                wrong.push(format!(
                    "{id} ({named:?}): got {valid:?}\n   want {expected:?}\n   {:?}",
                    checked.verdicts
                ));
            }
            let run = rt.block_on(
                manager
                    .run(Input::model_output(text))
                    .repair(options)
                    .into_future(),
            );
            let ran = run.outputs.iter().filter(|o| o.output.is_ok()).count();
            if ran != expected.len() {
                wrong.push(format!(
                    "{id} ({named:?}): {ran} ran, want {}: {:?}",
                    expected.len(),
                    run.outputs
                ));
            }
        }
        cases += 1;
    }
    assert!(cases >= 40, "{cases} cases");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A Qwen3-Coder string parameter of 540 KB of newlines is inside every limit as written (the
/// text under `max_source_bytes`, the string under `max_str_bytes`): it binds as written,
/// natively and sandboxed. (Printed back as Python, `"\n\n…"`, it was twice as long and over
/// `max_source_bytes`.)
#[test]
fn a_long_text_parameter_is_held_to_the_limits_as_written() {
    let manager = fexpr::demo::manager();
    let value = "\n".repeat(540_000);
    let text = format!(
        "<tool_call>\n<function=search>\n<parameter=query>\n{value}\n</parameter>\n</function>\n</tool_call>"
    );
    let checked = manager.check(text.as_str());
    assert!(checked.verdicts[0].valid, "{:?}", checked.verdicts[0].error);
    assert_eq!(
        checked.verdicts[0].kwarg("query"),
        Some(&Value::Str(value.clone()))
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let native = rt.block_on(manager.run(text.as_str()).into_future());
    assert!(
        native.outputs[0].output.is_ok(),
        "{:?}",
        native.outputs[0].output
    );
    let sandboxed = rt.block_on(manager.run(text.as_str()).sandboxed().into_future());
    assert_eq!(sandboxed.outputs[0].output, native.outputs[0].output);
}

/// A case the property above once found: a fence opened twice, a prose line of other
/// scripts, then `[]f(a=1)`: what is reported ignored never lies inside a call's own text.
#[test]
fn a_report_never_lies_inside_a_call() {
    let text = "```python\né漢字🙂```python\n[]f(a=1)";
    let found = extract(text, &Limits::default(), &|n| n.starts_with('f'));
    for ig in &found.ignored {
        for call in &found.calls {
            let inside = ig.span.start >= call.span.start && ig.span.end <= call.span.end;
            assert!(!inside, "{ig:?} inside {:?}", call.span);
        }
    }
    assert!(!found.calls.is_empty() || !found.ignored.is_empty());
}

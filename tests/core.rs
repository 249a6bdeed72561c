//! The core's acceptance: the seed's calls through the demo toolset, and every class of error
//! with its kind and span.

//!
//! With the `sandbox` feature every expression also runs inside the sandbox, and the outputs
//! must be identical (see `common`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::{ErrorKind, FunctionOutput, Span, Value};

fn run(expr: &str) -> Vec<FunctionOutput> {
    common::run_expr(&fexpr::demo::manager(), expr)
}

fn one(expr: &str) -> FunctionOutput {
    let mut outs = run(expr);
    assert_eq!(outs.len(), 1, "{expr}: {outs:?}");
    outs.remove(0)
}

fn ok(expr: &str) -> Value {
    let out = one(expr);
    assert!(
        out.output.is_ok(),
        "{expr}: {:?}",
        out.output.as_ref().err()
    );
    out.output.expect("an output")
}

/// The error's kind and the source text its span covers.
fn err(expr: &str) -> (ErrorKind, String) {
    let out = one(expr);
    assert!(out.output.is_err(), "{expr} must not produce output");
    let e = out
        .output
        .err()
        .unwrap_or_else(|| panic!("{expr}: no error"));
    let span = e
        .span
        .unwrap_or_else(|| panic!("{expr}: error without span: {e}"));
    let text = expr
        .get(span.range())
        .unwrap_or_else(|| panic!("{expr}: span {span:?} out of range"))
        .to_string();
    (e.kind, text)
}

#[test]
fn seed_calls_give_the_seed_results() {
    assert_eq!(ok("add(a=2, b=3)"), Value::Int(5));
    assert_eq!(ok("multiply(a=2, b=x)"), Value::Int(4));
    assert_eq!(ok("add(a=y, b=5)"), Value::Int(5));
    assert_eq!(ok("divide(a=2.0, b=3.0)"), Value::Float(2.0 / 3.0));
    assert_eq!(
        ok("search(query=\"something\")").repr(),
        "['result1something', 'result2something']"
    );
    assert_eq!(
        ok("add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))").repr(),
        "Point(x=4, y=6)"
    );
    assert_eq!(
        ok("add_points(p1={'x': 1, 'y': 2}, p2=Point(x=3, y=4))").repr(),
        "Point(x=4, y=6)"
    );
    assert_eq!(
        ok("numpy_sum(arr=np.array([[1, 2], [3, 4]]))"),
        Value::Int(10)
    );
    assert_eq!(ok("numpy_sum(arr=[[1, 2], [3, 4]])"), Value::Int(10));
    assert_eq!(
        ok("divide(2, 4)"),
        Value::Float(0.5),
        "positional args, ints coerced to float"
    );
}

#[test]
fn a_list_of_calls_gives_outputs_in_order() {
    let outs = run("[add(a=2, b=3), search(query=\"q\")]");
    assert_eq!(outs.len(), 2);
    assert_eq!(outs[0].name, "add");
    assert_eq!(outs[0].output, Ok(Value::Int(5)));
    assert_eq!(outs[1].name, "search");
    assert_eq!(
        outs[1].output.as_ref().unwrap().repr(),
        "['result1q', 'result2q']"
    );
    // Errors are isolated per call.
    let outs = run("[add(a=1, b=2), add(a='s', b=2), multiply(a=3, b=3)]");
    assert_eq!(outs[0].output, Ok(Value::Int(3)));
    assert_eq!(outs[1].output.as_ref().err().unwrap().kind, ErrorKind::Type);
    assert_eq!(outs[2].output, Ok(Value::Int(9)));
}

#[test]
fn nested_tool_calls_run_innermost_first() {
    assert_eq!(
        ok("add(a=multiply(a=2, b=3), b=add(a=1, b=1))"),
        Value::Int(8)
    );
    assert_eq!(ok("add(a=add(a=add(a=1, b=1), b=1), b=1)"), Value::Int(4));
}

#[test]
fn arithmetic_follows_python() {
    assert_eq!(ok("add(a=2**10, b=-3 // 2)"), Value::Int(1022));
    assert_eq!(ok("add(a=7 % -3, b=0)"), Value::Int(-2));
    assert_eq!(ok("divide(a=1, b=3)"), Value::Float(1.0 / 3.0));
    assert_eq!(
        ok("search(query='ab' * 2 + 'c')").repr(),
        "['result1ababc', 'result2ababc']"
    );
}

#[test]
fn trailing_statements_are_errors_not_dropped() {
    let (kind, _) = err("add(a=1, b=2); import os");
    assert!(
        matches!(kind, ErrorKind::Unsupported | ErrorKind::Syntax),
        "{kind:?}"
    );
}

#[test]
fn unknown_names_and_tools_have_spans_and_hints() {
    assert_eq!(err("add(a=z, b=1)"), (ErrorKind::UnknownName, "z".into()));
    assert_eq!(err("ad(a=1, b=2)"), (ErrorKind::UnknownTool, "ad".into()));
    let out = one("ad(a=1, b=2)");
    assert_eq!(
        out.output.unwrap_err().hint.as_deref(),
        Some("did you mean `add`?")
    );
    assert_eq!(
        err("os.system(cmd='id')"),
        (ErrorKind::UnknownTool, "os.system".into())
    );
    assert_eq!(
        err("numpy_sum(arr=np.f2py())"),
        (ErrorKind::UnknownTool, "np.f2py".into())
    );
    assert_eq!(err("eval(s='1')"), (ErrorKind::UnknownTool, "eval".into()));
}

#[test]
fn bad_arity_and_keywords_are_argument_errors() {
    assert_eq!(err("add(a=1, c=2)"), (ErrorKind::Arguments, "c".into()));
    assert_eq!(err("add(1, 2, 3)").0, ErrorKind::Arguments);
    assert_eq!(err("add(a=1)"), (ErrorKind::Arguments, "add(a=1)".into()));
    assert_eq!(err("add(1, a=2)"), (ErrorKind::Arguments, "a".into()));
    assert_eq!(err("add(a=1, a=2)"), (ErrorKind::Arguments, "a".into()));
    assert_eq!(err("Point(x=1, z=2)"), (ErrorKind::Arguments, "z".into()));
    let e = one("add(a=1, c=2)").output.unwrap_err();
    assert!(e.hint.unwrap().contains("add(a: int, b: int)"));
}

#[test]
fn type_mismatches_point_at_the_argument() {
    assert_eq!(err("add(a='x', b=1)"), (ErrorKind::Type, "'x'".into()));
    assert_eq!(err("add(a=1.5, b=1)"), (ErrorKind::Type, "1.5".into()));
    assert_eq!(
        err("add_points(p1={'x': 1}, p2=Point(x=1, y=2))"),
        (ErrorKind::Type, "{'x': 1}".into())
    );
    assert_eq!(
        err("add_points(p1=Point(x='a', y=2), p2=Point(x=1, y=2))").0,
        ErrorKind::Type
    );
    assert_eq!(
        err("numpy_sum(arr=[[1, 2], [3]])"),
        (ErrorKind::Value, "[[1, 2], [3]]".into())
    );
    assert_eq!(err("add(a=x, b=add)"), (ErrorKind::Type, "add".into()));
    assert_eq!(
        err("add(a=1 + 'a', b=1)"),
        (ErrorKind::Type, "1 + 'a'".into())
    );
    assert_eq!(err("add(a=1 / 0, b=1)"), (ErrorKind::Value, "1 / 0".into()));
    assert_eq!(err("x(a=1)"), (ErrorKind::Type, "x".into()));
}

#[test]
fn rejected_constructs_name_the_construct() {
    for (src, construct) in [
        ("add(a=(lambda: 1), b=2)", "lambda: 1"),
        ("add(a=[i for i in y], b=2)", "[i for i in y]"),
        ("search(query=f'{x}')", "f'{x}'"),
        ("add(a=y[0], b=2)", "y[0]"),
        ("add(a=().__class__, b=2)", "().__class__"),
        ("add(a=(z := 1), b=2)", "z := 1"),
        ("add(a=1 if x else 2, b=2)", "1 if x else 2"),
        ("add(a=x == 1, b=2)", "x == 1"),
    ] {
        let (kind, text) = err(src);
        assert_eq!(kind, ErrorKind::Unsupported, "{src}");
        assert!(
            text.contains(construct) || construct.contains(&text),
            "{src}: span covers {text:?}"
        );
    }
}

#[test]
fn limits_stop_bombs_before_allocating() {
    for src in [
        "search(query='a' * 10**10)",
        "numpy_sum(arr=[0] * 10**9)",
        "add(a=9**9**9, b=1)",
    ] {
        let out = one(src);
        assert_eq!(
            out.output.as_ref().err().map(|e| e.kind),
            Some(ErrorKind::Limit),
            "{src}: {out:?}"
        );
    }
    let deep = format!(
        "add(a={}1{}, b=1)",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert_eq!(one(&deep).output.unwrap_err().kind, ErrorKind::Limit);
    let big = format!("search(query='{}')", "a".repeat(10 << 20));
    assert_eq!(one(&big).output.unwrap_err().kind, ErrorKind::Limit);
}

#[test]
fn repeating_empty_sequences_is_instant_whatever_the_count() {
    for src in [
        "search(query=[] * 10**18)",
        "search(query=() * 10**18)",
        "search(query=b'' * 10**18)",
    ] {
        // `search` wants a str: the value is built (empty) and then refused by type.
        assert_eq!(one(src).output.unwrap_err().kind, ErrorKind::Type, "{src}");
    }
    assert_eq!(
        ok("search(query='' * 10**18)").repr(),
        "['result1', 'result2']"
    );
}

#[test]
fn failures_are_never_silent() {
    for src in [
        "",
        "   ",
        "1",
        "x",
        "[1, 2]",
        "Point",
        "add",
        "divide(a=1, b=0)",
    ] {
        let out = one(src);
        assert!(out.output.is_err(), "{src:?} should fail");
    }
    assert_eq!(
        one("divide(a=1, b=0)").output.unwrap_err().kind,
        ErrorKind::ToolFailed
    );
}

#[test]
fn json_forms_run_like_expressions() {
    let m = fexpr::demo::manager();
    let json = serde_json::json!([
        {"name": "add_points", "kwargs": {"p1": {"x": 1, "y": 2}, "p2": {"x": 3, "y": 4}}},
        {"action": "multiply(a=2, b=x)"},
        {"name": "add", "kwargs": {"a": 1}, "extra": 1}
    ]);
    let outs = common::run_json_value(&m, &json);
    assert_eq!(outs[0].output.as_ref().unwrap().repr(), "Point(x=4, y=6)");
    assert_eq!(outs[1].output, Ok(Value::Int(4)));
    assert_eq!(
        outs[2].output.as_ref().err().unwrap().kind,
        ErrorKind::Syntax
    );
}

#[test]
fn parse_func_expr_evaluates_arguments_without_running() {
    let m = fexpr::demo::manager();
    let f = m
        .parse_func_expr("add_points(p1=Point(x=1, y=2), p2=Point(x=x, y=y))")
        .unwrap();
    assert_eq!(f.name, "add_points");
    assert_eq!(
        f.kwarg("p2").map(|v| v.repr()).as_deref(),
        Some("Point(x=2, y=0)")
    );
    let e = m.parse_func_expr("add(a=add(a=1, b=2), b=1)").unwrap_err();
    assert_eq!(
        (e.kind, e.span),
        (ErrorKind::Unsupported, Some(Span::new(6, 19)))
    );
}

#[test]
fn definitions_are_generated_from_types() {
    let m = fexpr::demo::manager();
    let tools = m.definitions().openai();
    let add_points = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "add_points")
        .unwrap();
    let params = &add_points["function"]["parameters"];
    assert_eq!(params["required"], serde_json::json!(["p1", "p2"]));
    assert!(params["$defs"]["Point"]["properties"]["x"].is_object());
    let anthropic = m.definitions().anthropic();
    assert_eq!(anthropic[0]["name"], "multiply");
    assert_eq!(
        anthropic[0]["input_schema"]["properties"]["a"]["type"],
        "integer"
    );
    assert!(m.definitions().yaml().contains("func_name: numpy_sum"));
    let sig = m
        .tool("add_points")
        .unwrap()
        .definition()
        .python_signature();
    assert_eq!(sig, "add_points(p1: Point, p2: Point) -> Point");
}

/// "Did you mean" suggests only a field the call has not given already.
#[test]
fn a_suggestion_names_a_field_not_given_yet() {
    let manager = fexpr::demo::manager();
    for text in [
        "add_points(p1=Point(x=3, z=4), p2=Point(x=1, y=2))",
        "add_points(p1=Point(z=4, x=3), p2=Point(x=1, y=2))",
    ] {
        let out = common::runtime()
            .block_on(async { manager.run(fexpr::Input::expr(text)).await.outputs });
        let error = out[0].output.as_ref().expect_err("an error");
        assert_eq!(error.kind, ErrorKind::Arguments, "{text}: {error}");
        let hint = error.hint.as_deref().unwrap_or_default();
        assert!(hint.starts_with("did you mean `y`?"), "{text}: {error}");
    }
}

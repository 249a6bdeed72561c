//! The JSON door (`Input::json`, `Input::openai`, natively and sandboxed, and the
//! CLI's JSON input): the same limits as an expression, before anything runs; duplicate keys and
//! numbers out of range are errors; errors say what is wrong with the JSON and where.
//! Every case runs natively and sandboxed (`common::run_json`), with the same outputs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::{ErrorKind, FunctionTool, Span, ToolManager, Value};
use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `add` that counts its runs, with the demo context.
fn counting() -> (ToolManager, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let manager = ToolManager::builder()
        .tool(FunctionTool::new(
            "add",
            ["a", "b"],
            move |a: i64, b: i64| {
                r.fetch_add(1, Ordering::SeqCst);
                a + b
            },
        ))
        .context(fexpr::demo::context())
        .build()
        .unwrap();
    (manager, runs)
}

/// The text an error's span covers.
fn covered<'t>(text: &'t str, error: &fexpr::Error) -> &'t str {
    error
        .span
        .and_then(|s| text.get(s.range()))
        .unwrap_or("<no span>")
}

#[test]
fn a_list_over_max_calls_runs_none_of_its_calls() {
    let (manager, runs) = counting();
    let call = r#"{"name": "add", "kwargs": {"a": 1, "b": 2}}"#;
    let text = format!("[{}]", vec![call; 300].join(", "));
    let outputs = common::run_json(&manager, &text);
    assert_eq!(outputs.len(), 1);
    let error = outputs[0].output.as_ref().expect_err("an error");
    assert_eq!(error.kind, ErrorKind::Limit);
    assert_eq!(error.message, "max_calls limit exceeded: 300 > 256");
    // At the first call past the limit.
    let start = 1 + 256 * (call.len() + 2);
    assert_eq!(
        error.span,
        Some(Span::new(start as u32, (start + call.len()) as u32))
    );
    // Calls hidden in actions count too: 129 actions of two calls each.
    let action = r#"{"action": "add(a=add(a=1, b=2), b=1)"}"#;
    let outputs = common::run_json(&manager, &format!("[{}]", vec![action; 129].join(",")));
    assert!(outputs.iter().all(|o| o
        .output
        .as_ref()
        .err()
        .as_ref()
        .is_some_and(|e| e.message.starts_with("max_calls"))));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // At the limit, everything runs.
    let outputs = common::run_json(&manager, &format!("[{}]", vec![call; 256].join(",")));
    assert!(outputs.iter().all(|o| o.output == Ok(Value::Int(3))));
}

#[test]
fn duplicate_keys_are_errors_naming_the_key_at_any_depth() {
    let (manager, runs) = counting();
    for (text, key) in [
        (
            r#"{"name": "add", "name": "multiply", "kwargs": {"a": 1, "b": 2}}"#,
            "name",
        ),
        (
            r#"{"name": "add", "kwargs": {"a": 1, "a": 1000, "b": 2}}"#,
            "a",
        ),
        (
            r#"{"name": "add", "kwargs": {"a": 1, "b": 2}, "kwargs": {"a": 3, "b": 4}}"#,
            "kwargs",
        ),
        (
            r#"{"name": "add", "kwargs": {"a": {"x": [{"y": 1, "y": 2}]}, "b": 2}}"#,
            "y",
        ),
        (
            r#"{"action": "add(a=1, b=2)", "action": "add(a=3, b=4)"}"#,
            "action",
        ),
    ] {
        let outputs = common::run_json(&manager, text);
        let error = outputs[0].output.as_ref().expect_err("an error");
        assert_eq!(error.kind, ErrorKind::Syntax, "{text}");
        assert!(
            error.message.starts_with(&format!(
                "JSON: duplicate key `{key}` in an object (first at "
            )),
            "{text}: {error}"
        );
        // The span is the second occurrence.
        assert_eq!(covered(text, error), format!("\"{key}\""), "{text}");
        assert_eq!(
            error.span.map(|s| s.start as usize),
            text.rfind(&format!("\"{key}\""))
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn numbers_out_of_range_are_errors_never_null() {
    let manager = fexpr::demo::manager();
    for (text, number) in [
        (
            r#"{"name": "divide", "kwargs": {"a": 1e400, "b": 1}}"#,
            "1e400",
        ),
        (
            r#"{"name": "divide", "kwargs": {"a": 1, "b": -1e400}}"#,
            "-1e400",
        ),
        (
            r#"{"name": "numpy_sum", "kwargs": {"arr": [1e308, 1.5E+309]}}"#,
            "1.5E+309",
        ),
    ] {
        let outputs = common::run_json(&manager, text);
        let error = outputs[0].output.as_ref().expect_err("an error");
        assert_eq!(error.kind, ErrorKind::Value);
        assert_eq!(
            error.message,
            format!("JSON: number {number} is out of range for a float")
        );
        assert_eq!(covered(text, error), number);
    }
}

#[test]
fn malformed_json_gets_a_json_error_with_its_place() {
    let manager = fexpr::demo::manager();
    for (text, message, at) in [
        (
            r#"{"name": "add", "kwargs": {"a": 1, "b": 2}"#,
            "JSON: the text ends where `,` or `}` should be",
            "",
        ),
        (
            r#"{"name": "add", "kwargs": {"a": 1, "b": 2,}}"#,
            "JSON: expected a key in double quotes after `,`, found `}`",
            "}",
        ),
        (
            "{'name': 'add'}",
            "JSON: expected a key in double quotes after `{`, found `'`",
            "'",
        ),
        (
            r#"{"name": "add", "kwargs": {"a": NaN}}"#,
            "JSON: expected a JSON value, found `N`",
            "N",
        ),
        (
            r#"{"name": "add", "kwargs": {"a": 1, "b": 2}} add(a=1, b=2)"#,
            "JSON: expected the end of the JSON text, found `a`",
            "a",
        ),
    ] {
        let outputs = common::run_json(&manager, text);
        let error = outputs[0].output.as_ref().expect_err("an error");
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::Syntax, message),
            "{text}"
        );
        assert_eq!(covered(text, error), at, "{text}");
        assert_ne!(error.span, Some(Span::default()), "{text}");
    }
}

#[test]
fn limits_hold_before_anything_is_kept() {
    let manager = fexpr::demo::manager();
    let limit = |text: &str| {
        let outputs = common::run_json(&manager, text);
        let error = outputs[0].output.as_ref().err().cloned().expect("an error");
        assert_eq!(error.kind, ErrorKind::Limit, "{error}");
        error
            .message
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let big = format!(
        r#"{{"name": "search", "kwargs": {{"query": "{}"}}}}"#,
        "x".repeat(10 << 20)
    );
    assert_eq!(limit(&big), "max_source_bytes");
    // Leading blanks count: the size is checked on the text as given.
    let padded = format!(
        "{}{}",
        " ".repeat(1 << 20),
        r#"{"name": "add", "kwargs": {"a": 1, "b": 2}}"#
    );
    assert_eq!(limit(&padded), "max_source_bytes");
    let wide = format!(
        r#"{{"name": "numpy_sum", "kwargs": {{"arr": [{}0]}}}}"#,
        "0,".repeat(150_000)
    );
    assert_eq!(limit(&wide), "max_collection_len");
    let deep = format!(
        r#"{{"name": "search", "kwargs": {{"query": {}{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert_eq!(limit(&deep), "max_depth");
    let digits = format!(
        r#"{{"name": "add", "kwargs": {{"a": {}, "b": 1}}}}"#,
        "9".repeat(5000)
    );
    assert_eq!(limit(&digits), "max_int_digits");
    let tight = fexpr::demo::builder()
        .limits(fexpr::Limits::default().max_str_bytes(8))
        .build()
        .unwrap();
    let outputs = common::run_json(
        &tight,
        r#"{"name": "search", "kwargs": {"query": "123456789"}}"#,
    );
    assert!(outputs[0]
        .output
        .as_ref()
        .err()
        .as_ref()
        .is_some_and(|e| e.message.starts_with("max_str_bytes")));
}

#[test]
fn json_runs_like_the_equivalent_expression() {
    let manager = fexpr::demo::manager();
    let text = r#"[{"name": "add_points", "kwargs": {"p1": {"x": 1, "y": 2}, "p2": {"x": 3, "y": 4}}},
        {"action": "multiply(a=2, b=x)", "thought": "x is 2"},
        {"name": "search", "args": ["q \"é\" \u00e9 😀"]},
        {"name": "numpy_sum", "kwargs": {"arr": [[1, 2], [3, 4.5]]}},
        {"name": "add", "kwargs": {"a": 9223372036854775808, "b": 1}}]"#;
    let outputs = common::run_json(&manager, text);
    let expr = r#"[add_points(p1={'x': 1, 'y': 2}, p2={'x': 3, 'y': 4}), multiply(a=2, b=x),
        search('q "é" é 😀'), numpy_sum(arr=[[1, 2], [3, 4.5]]), add(a=9223372036854775808, b=1)]"#;
    let expected = common::run_expr(&manager, expr);
    let strip = |outputs: &[fexpr::FunctionOutput]| {
        outputs
            .iter()
            .map(|o| {
                (
                    o.name.clone(),
                    o.output.clone().ok(),
                    o.output.as_ref().err().map(|e| e.kind),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&outputs), strip(&expected));
    assert_eq!(
        outputs[0].output.as_ref().map(Value::repr).as_deref(),
        Ok("Point(x=4, y=6)")
    );
    // Each row's input is its item, as given; spans index the text.
    assert!(outputs[0].input.starts_with(r#"{"name": "add_points""#));
    assert_eq!(outputs[1].input, "multiply(a=2, b=x)");
    assert!(outputs[4].output.is_err(), "2**63 does not fit an i64");
}

#[test]
fn keys_that_are_not_identifiers_work_in_the_guest_too() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new(
            "get_weather",
            ["city-name"],
            |city: String| format!("sunny in {city}"),
        ))
        .build()
        .unwrap();
    let outputs = common::run_json(
        &manager,
        r#"{"name": "get_weather", "kwargs": {"city-name": "Oslo"}}"#,
    );
    assert_eq!(outputs[0].output, Ok(Value::Str("sunny in Oslo".into())));
}

#[test]
fn parsed_json_gets_the_same_limits_with_spans_into_its_compact_text() {
    let (manager, runs) = counting();
    let call = serde_json::json!({"name": "add", "kwargs": {"a": 1, "b": 2}});
    let many = serde_json::Value::Array(vec![call.clone(); 300]);
    let outputs = common::run_json_value(&manager, &many);
    assert!(outputs[0]
        .output
        .as_ref()
        .err()
        .as_ref()
        .is_some_and(|e| e.message.starts_with("max_calls")));
    let mut deep = serde_json::json!(1);
    for _ in 0..1000 {
        deep = serde_json::json!([deep]);
    }
    let outputs = common::run_json_value(
        &manager,
        &serde_json::json!({"name": "add", "kwargs": {"a": deep, "b": 1}}),
    );
    assert!(outputs[0]
        .output
        .as_ref()
        .err()
        .as_ref()
        .is_some_and(|e| e.message.starts_with("max_depth")));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let bad = serde_json::json!({"name": "add", "kwargs": {"a": "one", "b": 2}});
    let outputs = common::run_json_value(&manager, &bad);
    let error = outputs[0].output.as_ref().expect_err("a type error");
    assert_eq!(covered(&bad.to_string(), error), "\"one\"");
}

/// A tool defined by its JSON schema alone (as `--tools-json` and MCP servers define them) that
/// answers with the arguments it received, by parameter name.
struct Echo(fexpr::ToolDefinition);

impl fexpr::tool::Tool for Echo {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.0
    }

    fn call(&self, args: Vec<Option<Value>>) -> fexpr::tool::ToolFuture {
        let mut out = fexpr::value::Dict::default();
        for (field, value) in self.0.signature.fields.iter().zip(args) {
            if let Some(value) = value {
                out.insert(Value::Str(field.name.clone()), value);
            }
        }
        Box::pin(async move { Ok(fexpr::ToolOutput::new(Value::Dict(out))) })
    }
}

/// `convert`, whose parameters are named as JSON Schema allows and Python does not.
fn keyed_manager() -> ToolManager {
    let defs = fexpr::tooldefs::from_json(&serde_json::json!([{"type": "function", "function": {
        "name": "convert", "description": "Convert an amount.",
        "parameters": {"type": "object", "properties": {
            "from": {"type": "string"}, "class": {"type": "string"},
            "max-results": {"type": "integer"}, "$filter": {"type": "string"},
            "城市": {"type": "string"}},
            "required": ["from"]}}}]))
    .unwrap();
    let mut builder = ToolManager::builder();
    for def in defs {
        builder = builder.tool(Echo(def));
    }
    builder.build().unwrap()
}

/// Keys any JSON Schema may declare (`from`, `class`, `max-results`, `$filter`, `城市`) bind
/// exactly as written from every door: Python call text through `**{...}`, fexpr's JSON forms,
/// an OpenAI message, an Anthropic `tool_use` block, Hermes `<tool_call>` JSON, Qwen3-Coder and
/// GLM XML, Kimi's JSON, a `Function`; natively and sandboxed (the same outputs), and `check`
/// gives each the same verdict.
#[test]
fn every_door_binds_keys_as_the_schema_declares_them() {
    let manager = keyed_manager();
    let args = serde_json::json!({"from": "USD", "class": "eco", "max-results": 3,
        "$filter": "a eq 1", "城市": "北京"});
    let json_args = args.to_string();
    let qwen = "<tool_call>\n<function=convert>\n<parameter=from>\nUSD\n</parameter>\n<parameter=class>\neco\n</parameter>\n<parameter=max-results>\n3\n</parameter>\n<parameter=$filter>\na eq 1\n</parameter>\n<parameter=城市>\n北京\n</parameter>\n</function>\n</tool_call>";
    let glm = "<tool_call>convert\n<arg_key>from</arg_key>\n<arg_value>USD</arg_value>\n<arg_key>class</arg_key>\n<arg_value>eco</arg_value>\n<arg_key>max-results</arg_key>\n<arg_value>3</arg_value>\n<arg_key>$filter</arg_key>\n<arg_value>a eq 1</arg_value>\n<arg_key>城市</arg_key>\n<arg_value>北京</arg_value>\n</tool_call>";
    let function =
        fexpr::Function::from_json(&serde_json::json!({"name": "convert", "kwargs": args.clone()}))
            .unwrap();
    let inputs = [
        fexpr::Input::model_output(
            r#"convert(**{"from": "USD", "class": "eco"}, **{'max-results': 3, "$filter": "a eq 1", "城市": "北京"})"#,
        ),
        fexpr::Input::model_output(format!("Sure:\n```python\n{}\n```", function.to_expr())),
        fexpr::Input::json(serde_json::json!({"name": "convert", "kwargs": args}).to_string()),
        fexpr::Input::openai(serde_json::json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "convert", "arguments": json_args}}]})),
        fexpr::Input::anthropic(serde_json::json!({"type": "tool_use", "id": "toolu_1",
            "name": "convert", "input": args})),
        fexpr::Input::model_output(format!(
            "<tool_call>\n{}\n</tool_call>",
            serde_json::json!({"name": "convert", "arguments": args})
        )),
        fexpr::Input::model_output(qwen),
        fexpr::Input::model_output(glm),
        fexpr::Input::model_output(format!("<|tool_calls_section_begin|><|tool_call_begin|>functions.convert:0<|tool_call_argument_begin|>{json_args}<|tool_call_end|><|tool_calls_section_end|>")),
        fexpr::Input::function(function),
    ];
    let want = Value::from_json(&args);
    for input in inputs {
        let shown = format!("{input:?}");
        let outputs = common::run(&manager, input.clone());
        assert_eq!(outputs.len(), 1, "{shown}: {outputs:?}");
        assert_eq!(outputs[0].output, Ok(want.clone()), "{shown}");
        let parsed = outputs[0]
            .parsed_input
            .as_ref()
            .expect("the call as written");
        assert_eq!(parsed.name, "convert", "{shown}");
        let keys: Vec<&str> = parsed.kwargs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["from", "class", "max-results", "$filter", "城市"],
            "{shown}"
        );
        let checked = manager.run(input).check();
        assert!(checked.verdicts[0].valid, "{shown}: {checked:?}");
        assert_eq!(
            checked.verdicts[0].to_json()["kwargs"],
            Value::Dict(match want.clone() {
                Value::Dict(d) => d,
                _ => unreachable!(),
            })
            .to_json(),
            "{shown}"
        );
    }
}

/// `input` run natively and sandboxed, with the same outputs (a call refused before running
/// has no receipt).
fn both(manager: &ToolManager, input: fexpr::Input) -> Vec<fexpr::FunctionOutput> {
    let rt = common::runtime();
    let native = rt
        .block_on(manager.run(input.clone()).into_future())
        .outputs;
    #[cfg(feature = "sandbox")]
    {
        let sandboxed = rt
            .block_on(manager.run(input.clone()).sandboxed().into_future())
            .outputs;
        common::assert_same(&format!("{input:?}"), &native, &sandboxed);
    }
    native
}

/// A key the tool does not declare, or one given twice (by keyword and in `**{...}`, or twice
/// in JSON), is refused with the key as written; the hint names the parameter as a call writes
/// it.
#[test]
fn keys_are_checked_like_any_argument() {
    let manager = keyed_manager();
    let out = both(
        &manager,
        fexpr::Input::model_output(r#"convert(**{"frm": "USD"})"#),
    );
    let e = out[0].output.as_ref().expect_err("an error");
    assert_eq!(e.kind, ErrorKind::Arguments);
    assert_eq!(
        e.message,
        "convert() got an unexpected keyword argument `frm`"
    );
    assert!(
        e.hint
            .as_deref()
            .unwrap()
            .starts_with(r#"did you mean `**{"from": …}`?"#),
        "{e:?}"
    );
    let text = r#"convert(**{"from": "USD"}, **{"from": "EUR"})"#;
    let out = both(&manager, fexpr::Input::model_output(text));
    let e = out[0].output.as_ref().expect_err("an error");
    assert_eq!(
        e.message,
        "convert() got multiple values for argument `from`"
    );
    assert_eq!(covered(text, e), r#""from""#);
    let text = r#"{"name": "convert", "arguments": {"class": "eco"}}"#;
    let out = both(&manager, fexpr::Input::json(text));
    let e = out[0].output.as_ref().expect_err("an error");
    assert_eq!(
        e.message,
        r#"convert() missing 1 required argument: `**{"from": …}`"#
    );
    // The input of a JSON call is its JSON as written; errors point into it.
    assert_eq!(out[0].input, text);
    let text = r#"{"name": "convert", "arguments": {"from": "USD", "max-results": "many"}}"#;
    let out = both(&manager, fexpr::Input::json(text));
    assert_eq!(
        covered(text, out[0].output.as_ref().expect_err("an error")),
        r#""many""#
    );
}

/// A parsed message (`Input::openai`, `Input::anthropic`) runs as its compact text does
/// (`Input::json(value.to_string())`), which is how it was read before it was written out
/// with its tree: the same outputs (call ids aside where the model gave none: each run makes
/// fresh ones), the same text not used and the same verdicts (`check`), for calls that run, calls that
/// are refused, messages that ask for no call, fexpr's own forms and documents over a limit.
#[test]
fn a_parsed_message_runs_as_its_compact_text_does() {
    let (manager, _) = counting();
    let call = |name: &str, args: &str| {
        serde_json::json!({"id": "call_1", "type": "function",
            "function": {"name": name, "arguments": args}})
    };
    let messages = [
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [call("add", r#"{"a": 2, "b": 3}"#)]}),
        serde_json::json!({"role": "assistant", "content": "Let me add: add(a=1, b=1)", "tool_calls": [call("add", r#"{"a": 2.0, "b": "3"}"#), call("add", r#"{"a": 1}"#)]}),
        serde_json::json!({"role": "assistant", "content": "Done.", "tool_calls": []}),
        serde_json::json!({"role": "assistant", "content": null, "refusal": "I cannot do that."}),
        serde_json::json!({"role": "assistant", "tool_calls": [call("add", r#"{"a": 1, "a": 2}"#)]}),
        serde_json::json!({"role": "assistant", "tool_calls": [call("add", r#"{"a": 1e400, "b": 1}"#)]}),
        serde_json::json!({"role": "assistant", "tool_calls": [call("add", "{\"a\": 1,")]}),
        serde_json::json!({"role": "assistant", "tool_calls": [call("add", "[1, 2]")]}),
        serde_json::json!({"role": "assistant", "tool_calls": [call("ad", r#"{"a": 1, "b": 2}"#)]}),
        serde_json::json!({"role": "assistant", "tool_calls": [call("add", r#"{"a": 1, "b": 2, "c": 3}"#)], "function_call": {"name": "add", "arguments": "{}"}}),
        serde_json::json!({"role": "assistant", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "add", "arguments": {"a": [1, {"k": null}], "b": 18446744073709551615_u64}}}]}),
        serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "<think>add(a=1)</think>"}, {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": "two\n\"2\""}}]}),
        serde_json::json!({"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"a": -0.0, "b": 1.5e300}}),
        serde_json::json!([{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "add", "parameters": {"a": 3, "b": 4}}, 7]),
        serde_json::json!({"name": "add", "kwargs": {"a": 1, "b": 2}}),
        serde_json::json!({"note": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1}}</tool_call>"}),
        serde_json::json!("add(a=1, b=2)"),
        serde_json::json!([1, 2, 3]),
    ];
    let limits = [
        fexpr::Limits::default(),
        fexpr::Limits::default().max_str_bytes(4),
        fexpr::Limits::default().max_collection_len(6),
        fexpr::Limits::default().max_eval_bytes(200),
        fexpr::Limits::default().max_int_digits(5),
        fexpr::Limits::default().max_source_bytes(60),
        fexpr::Limits::default().max_depth(2),
    ];
    // Fresh call ids (a call the model gave none) differ run to run.
    let steady = |mut response: fexpr::Response| {
        for out in &mut response.outputs {
            if !["call_1", "x", "toolu_1", "toolu_2"].contains(&out.call_id.as_str()) {
                out.call_id.clear();
            }
        }
        response
    };
    let rt = common::runtime();
    for message in &messages {
        for limits in &limits {
            let parsed_only = manager
                .run(fexpr::Input::openai(message.clone()))
                .limits(limits.clone());
            // Too deep or too long to be written out: refused as before, nothing read.
            let text = match fexpr::front::json_input::to_text(message, limits) {
                Ok(text) => text,
                Err(e) => {
                    let outputs = rt.block_on(parsed_only.into_future()).outputs;
                    assert_eq!(outputs.len(), 1, "{message} within {limits:?}");
                    assert_eq!(outputs[0].output, Err(e), "{message} within {limits:?}");
                    continue;
                }
            };
            assert_eq!(text, message.to_string());
            let check = |input: fexpr::Input| manager.run(input).limits(limits.clone()).check();
            assert_eq!(
                check(fexpr::Input::openai(message.clone())),
                check(fexpr::Input::json(text.clone())),
                "check: {text} within {limits:?}"
            );
            let parsed = manager
                .run(fexpr::Input::openai(message.clone()))
                .limits(limits.clone());
            let written = manager
                .run(fexpr::Input::json(text.clone()))
                .limits(limits.clone());
            let (parsed, written) = (
                steady(rt.block_on(parsed.into_future())),
                steady(rt.block_on(written.into_future())),
            );
            assert_eq!(parsed, written, "{text} within {limits:?}");
        }
    }
}

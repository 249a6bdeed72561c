//! One way to run: `ToolManager::run(input)` with its options, for every input form, natively
//! and sandboxed (`common::run` checks that both give the same outputs); call ids from the
//! model reach the outputs, the reply messages and the tools.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::call::{Function, FunctionExpression};
use fexpr::repair::RepairOptions;
use fexpr::{CallContext, ErrorKind, FunctionTool, Input, Limits, Session, ToolManager, Value};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn add(a: i64, b: i64) -> Function {
    Function {
        name: "add".into(),
        args: vec![],
        kwargs: [("a".into(), Value::Int(a)), ("b".into(), Value::Int(b))]
            .into_iter()
            .collect(),
    }
}

fn values(outputs: &[fexpr::FunctionOutput]) -> Vec<Option<Value>> {
    outputs.iter().map(|o| o.output.clone().ok()).collect()
}

/// An OpenAI assistant message with three `add` calls, ids `call_a`, `call_b`, `call_c`.
fn openai_message() -> serde_json::Value {
    let call = |id: &str, a: i64| {
        json!({"id": id, "type": "function",
               "function": {"name": "add", "arguments": format!("{{\"a\": {a}, \"b\": 1}}")}})
    };
    json!({"role": "assistant", "content": null,
           "tool_calls": [call("call_a", 1), call("call_b", 2), call("call_c", 3)]})
}

/// An Anthropic assistant message with three `tool_use` blocks.
fn anthropic_message() -> serde_json::Value {
    let block = |id: &str, a: i64| json!({"type": "tool_use", "id": id, "name": "add", "input": {"a": a, "b": 1}});
    json!({"role": "assistant", "content": [
        {"type": "text", "text": "Adding."},
        block("toolu_a", 1), block("toolu_b", 2), block("toolu_c", 3)]})
}

#[test]
fn every_input_form_runs_natively_and_sandboxed_alike() {
    let manager = fexpr::demo::manager();
    let three = vec![
        Some(Value::Int(2)),
        Some(Value::Int(3)),
        Some(Value::Int(4)),
    ];
    let inputs = [
        Input::expr("[add(a=1, b=1), add(a=2, b=1), add(a=3, b=1)]"),
        Input::model_output(
            "Sure!\n```python\n[add(a=1, b=1), add(a=2.0, b=1), add(a=3, b=1)]\n```",
        ),
        Input::functions(vec![add(1, 1), add(2, 1), add(3, 1)]),
        Input::func_exprs(vec![
            FunctionExpression::new("add(a=1, b=1)"),
            FunctionExpression::new("add(a=2, b=1)"),
            FunctionExpression::new("add(a=3, b=1)"),
        ]),
        Input::json(
            r#"[{"name": "add", "kwargs": {"a": 1, "b": 1}}, {"action": "add(a=2, b=1)"}, {"name": "add", "args": [3, 1]}]"#,
        ),
        Input::json(openai_message().to_string()),
        Input::openai(openai_message()),
        Input::anthropic(anthropic_message()),
    ];
    for input in inputs {
        let shown = format!("{input:?}");
        let outputs = common::run(&manager, input);
        assert_eq!(values(&outputs), three, "{shown}");
    }
    let one = common::run(&manager, Input::function(add(2, 3)));
    assert_eq!(values(&one), [Some(Value::Int(5))]);
    let text = common::run(&manager, "add(a=2, b=x)".into());
    assert_eq!(values(&text), [Some(Value::Int(4))]);
}

#[test]
fn openai_call_ids_reach_the_outputs_and_the_replies() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    for sandboxed in [false, true] {
        let request = manager.run(Input::openai(openai_message()));
        let request = if sandboxed && cfg!(feature = "sandbox") {
            sandbox(request)
        } else {
            request
        };
        let response = rt.block_on(async { request.await });
        let ids: Vec<&str> = response
            .outputs
            .iter()
            .map(|o| o.call_id.as_str())
            .collect();
        assert_eq!(ids, ["call_a", "call_b", "call_c"]);
        assert_eq!(
            response.openai_messages(&manager),
            [
                json!({"role": "tool", "tool_call_id": "call_a", "content": "2"}),
                json!({"role": "tool", "tool_call_id": "call_b", "content": "3"}),
                json!({"role": "tool", "tool_call_id": "call_c", "content": "4"}),
            ]
        );
    }
}

#[test]
fn anthropic_tool_use_ids_reach_the_outputs_and_the_blocks() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    let mut message = anthropic_message();
    message["content"][3]["input"]["b"] = json!("one");
    let response = rt.block_on(async { manager.run(Input::anthropic(message)).await });
    let ids: Vec<&str> = response
        .outputs
        .iter()
        .map(|o| o.call_id.as_str())
        .collect();
    assert_eq!(ids, ["toolu_a", "toolu_b", "toolu_c"]);
    let blocks = response.anthropic_blocks(&manager);
    assert_eq!(
        blocks[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_a", "content": "2", "is_error": false})
    );
    assert_eq!(blocks[2]["tool_use_id"], "toolu_c");
    assert_eq!(blocks[2]["is_error"], true);
}

#[test]
fn a_json_call_keeps_its_id() {
    let manager = fexpr::demo::manager();
    let outputs = common::run(
        &manager,
        Input::json(
            r#"[{"id": "c1", "name": "add", "kwargs": {"a": 1, "b": 2}}, {"id": "c2", "name": "add", "arguments": {"a": 2, "b": 2}}]"#,
        ),
    );
    let ids: Vec<&str> = outputs.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2"]);
    assert_eq!(values(&outputs), [Some(Value::Int(3)), Some(Value::Int(4))]);
}

/// `count()` adds one to the caller's state; `whoami()` and `pair(a, b)` report the call id
/// their context gives them.
fn stateful() -> ToolManager {
    ToolManager::builder()
        .tool(FunctionTool::with_context(
            "count",
            [],
            |ctx: CallContext| {
                let state = ctx.state::<Mutex<i64>>()?;
                let mut n = state
                    .lock()
                    .map_err(|_| fexpr::tool::ToolError::new("poisoned"))?;
                *n += 1;
                Ok::<i64, fexpr::tool::ToolError>(*n)
            },
        ))
        .tool(FunctionTool::with_context(
            "whoami",
            [],
            |ctx: CallContext| ctx.tool_call_id().to_string(),
        ))
        .tool(FunctionTool::with_context(
            "pair",
            ["a", "b"],
            |ctx: CallContext, a: String, b: String| format!("{a}|{b}|{}", ctx.tool_call_id()),
        ))
        .build()
        .unwrap()
}

#[test]
fn state_using_tools_work_on_every_input_form() {
    let manager = stateful();
    let rt = common::runtime();
    let state = Arc::new(Mutex::new(0_i64));
    let inputs = [
        Input::model_output("Counting:\n[count(), count()]"),
        Input::expr("[count(), count()]"),
        Input::json(r#"[{"name": "count"}, {"name": "count"}]"#),
        Input::openai(json!({"tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "count", "arguments": "{}"}},
            {"id": "y", "type": "function", "function": {"name": "count", "arguments": "{}"}}]})),
    ];
    for input in inputs {
        for sandboxed in [false, true] {
            let shown = format!("{input:?} sandboxed={sandboxed}");
            let session = Session::new().state(state.clone());
            let request = manager.run(input.clone()).session(session);
            let request = if sandboxed { sandbox(request) } else { request };
            let before = *state.lock().unwrap();
            let response = rt.block_on(async { request.await });
            assert!(
                response.outputs.iter().all(|o| o.output.is_ok()),
                "{shown}: {:?}",
                response.outputs
            );
            assert_eq!(*state.lock().unwrap(), before + 2, "{shown}");
        }
    }
}

#[test]
fn a_tool_sees_the_call_id_of_its_output() {
    let manager = stateful();
    // Natively: every call of one top-level call, nested ones too, shares its id.
    let rt = common::runtime();
    let response = rt.block_on(async {
        manager
            .run(Input::expr("[whoami(), pair(a=whoami(), b=whoami())]"))
            .await
    });
    let [first, second] = &response.outputs[..] else {
        panic!("{response:?}")
    };
    assert_eq!(first.output, Ok(Value::Str(first.call_id.clone())));
    let id = &second.call_id;
    assert_eq!(second.output, Ok(Value::Str(format!("{id}|{id}|{id}"))));
    assert_ne!(first.call_id, second.call_id);
    // Through the model's ids, natively and sandboxed.
    let message = json!({"tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "whoami", "arguments": "{}"}},
        {"id": "call_2", "type": "function", "function": {"name": "whoami", "arguments": "{}"}}]});
    let outputs = common::run(&manager, Input::openai(message));
    assert_eq!(
        values(&outputs),
        [
            Some(Value::Str("call_1".into())),
            Some(Value::Str("call_2".into()))
        ]
    );
    // Generated ids, natively and sandboxed: one per top-level call.
    for sandboxed in [false, true] {
        let request = manager.run(Input::expr("[whoami(), whoami()]"));
        let request = if sandboxed { sandbox(request) } else { request };
        let outputs = rt.block_on(async { request.await }).outputs;
        assert_eq!(outputs.len(), 2);
        for out in &outputs {
            assert_eq!(out.output, Ok(Value::Str(out.call_id.clone())));
        }
        assert_ne!(outputs[0].call_id, outputs[1].call_id);
    }
}

#[test]
fn repairs_default_by_input_form_and_can_be_overridden() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    let run = |request: fexpr::Request| rt.block_on(async { request.await }).outputs;
    let text = "add(a=2.0, b=3)";
    let repaired = run(manager.run(Input::model_output(text)));
    assert_eq!(repaired[0].output, Ok(Value::Int(5)));
    assert_eq!(repaired[0].repairs[0].from, "2.0");
    let strict = run(manager.run(Input::expr(text)));
    assert_eq!(
        strict[0].output.as_ref().err().map(|e| e.kind),
        Some(ErrorKind::Type)
    );
    let asked = run(manager
        .run(Input::expr(text))
        .repair(RepairOptions::default()));
    assert_eq!(asked[0].output, Ok(Value::Int(5)));
    let refused = run(manager
        .run(Input::model_output(text))
        .repair(RepairOptions::strict()));
    assert_eq!(
        refused[0].output.as_ref().err().map(|e| e.kind),
        Some(ErrorKind::Type)
    );
}

#[test]
fn request_limits_replace_the_managers_on_every_form() {
    let manager = fexpr::demo::manager();
    let tight = Limits::default().max_calls(1);
    let inputs = [
        Input::expr("[add(a=1, b=1), add(a=2, b=1)]"),
        Input::model_output("[add(a=1, b=1), add(a=2, b=1)]"),
        Input::json(r#"[{"name": "add", "args": [1, 1]}, {"name": "add", "args": [2, 1]}]"#),
        Input::openai(openai_message()),
    ];
    let rt = common::runtime();
    for input in inputs {
        for sandboxed in [false, true] {
            let shown = format!("{input:?} sandboxed={sandboxed}");
            let request = manager.run(input.clone()).limits(tight.clone());
            let request = if sandboxed { sandbox(request) } else { request };
            let outputs = rt.block_on(async { request.await }).outputs;
            assert!(
                outputs.iter().all(|o| o
                    .output
                    .as_ref()
                    .err()
                    .is_some_and(|e| e.kind == ErrorKind::Limit)),
                "{shown}: {outputs:?}"
            );
        }
    }
}

#[test]
fn check_takes_the_same_inputs_and_runs_nothing() {
    let manager = stateful();
    let state = Arc::new(Mutex::new(0_i64));
    for input in [
        Input::model_output("Sure:\ncount()"),
        Input::expr("count()"),
        Input::json(r#"{"name": "count"}"#),
        Input::function(Function {
            name: "count".into(),
            ..Function::default()
        }),
    ] {
        let checked = manager.check(input);
        assert!(checked.verdicts[0].valid, "{checked:?}");
    }
    assert_eq!(*state.lock().unwrap(), 0);
    let checked = manager.check(Input::expr("count(extra=1)"));
    assert!(!checked.verdicts[0].valid);
}

#[test]
fn every_span_indexes_the_text_given() {
    let manager = fexpr::demo::manager();
    // Python in prose, a repaired call, and a JSON form: the error's, the repair's and the
    // verdict's spans all index the whole text, natively and sandboxed alike.
    let text = "Sure:\n[add(a=1, c=2), add(a=1.0, b=\"x\")]\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\nthen:\ndivide(a=1, b=0)";
    let rt = common::runtime();
    let outputs = rt.block_on(async { manager.run(text).await.outputs });
    let sandboxed = rt.block_on(async { sandbox(manager.run(text)).await.outputs });
    for (native, sandboxed) in outputs.iter().zip(&sandboxed) {
        assert_eq!(
            native.output.as_ref().err(),
            sandboxed.output.as_ref().err()
        );
        assert_eq!(native.repairs, sandboxed.repairs);
    }
    let at = |span: Option<fexpr::Span>| span.and_then(|s| text.get(s.range()));
    assert_eq!(
        at(outputs[0].output.as_ref().err().and_then(|e| e.span)),
        Some("c")
    );
    assert_eq!(at(Some(outputs[1].repairs[0].span)), Some("1.0"));
    assert_eq!(
        at(outputs[1].output.as_ref().err().and_then(|e| e.span)),
        Some("\"x\"")
    );
    // A JSON form is not Python in the text: its call's spans stand for the whole object.
    assert_eq!(
        at(outputs[2].output.as_ref().err().and_then(|e| e.span)),
        Some("{\"name\": \"add\", \"arguments\": {\"a\": 1}}")
    );
    // What running reports (the tool's error) is located too.
    assert_eq!(
        at(outputs[3].output.as_ref().err().and_then(|e| e.span)),
        Some("divide(a=1, b=0)")
    );
    assert!(sandboxed[3].receipt.is_some() || !cfg!(feature = "sandbox"));
    let checked = manager.check(Input::model_output(text));
    for (verdict, output) in checked.verdicts.iter().zip(&outputs[..3]) {
        assert_eq!(
            verdict.error.as_ref().and_then(|e| e.span),
            output.output.as_ref().err().and_then(|e| e.span)
        );
        assert_eq!(verdict.repairs, output.repairs);
    }
}

/// `request.sandboxed()`, or the request as it is without the sandbox feature.
fn sandbox(request: fexpr::Request) -> fexpr::Request {
    #[cfg(feature = "sandbox")]
    return request.sandboxed();
    #[cfg(not(feature = "sandbox"))]
    request
}

/// A text or message without a call has no output on the request API, natively and
/// sandboxed: `ignored` holds its text and `Response::nothing_to_run` says why. Prose is prose
/// however long its chains of `and` and `is`: never a limit error.
#[test]
fn a_text_without_a_call_has_no_output() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    let prose = "We did it and it is done. ".repeat(60);
    let texts = [
        ("All done.", "no call to run: the text is prose"),
        (prose.as_str(), "no call to run: the text is prose"),
        ("", "no call to run: the text is blank"),
        (
            "You could call add(a=1, b=2) for that.",
            "is mentioned inside a sentence, not written as a call of its own",
        ),
        (
            r#"{"role": "assistant", "content": "Done.", "tool_calls": []}"#,
            "no call to run: the JSON holds no call (an assistant message without tool calls asks for none)",
        ),
    ];
    for (text, why) in texts {
        for sandboxed in [false, true] {
            let request = manager.run(Input::model_output(text));
            let request = if sandboxed {
                request.sandboxed()
            } else {
                request
            };
            let response = rt.block_on(async { request.await });
            assert!(
                response.outputs.is_empty(),
                "{text:?}: {:?}",
                response.outputs
            );
            let error = response.nothing_to_run().expect("says why");
            assert!(error.message.starts_with("no call to run: "), "{error}");
            assert!(error.message.ends_with(why), "{text:?}: {error}");
        }
    }
    let request = manager.run(Input::model_output("add(a=1, b=2)"));
    let response = rt.block_on(async { request.await });
    assert!(response.nothing_to_run().is_none());
}

//! Structured tool-call deltas streamed into `ToolManager::stream`: OpenAI Chat Completions
//! `delta.tool_calls` fragments, Responses API argument deltas and Anthropic `input_json_delta`
//! events, mixed with text. Each call runs the moment its arguments are a whole JSON object,
//! before the stream ends, with the provider's id; the outputs are those of the whole message
//! through `Input::openai`; bad input, limits and cut-off calls give error rows; the CLI reads
//! JSON lines and SSE `data:` lines from stdin.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::stream::{StreamChunk, StreamEvent, WireLines};
use fexpr::{ErrorKind, FunctionOutput, FunctionTool, Input, Limits, ToolManager, Value};
use futures_util::StreamExt;
use serde_json::{json, Value as Json};
use std::time::Duration;

/// A Chat Completions chunk holding `delta`.
fn chat(delta: Json) -> StreamChunk {
    StreamChunk::Event(json!({"object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}))
}

/// A Chat Completions `tool_calls` fragment.
fn frag(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> StreamChunk {
    let mut function = json!({"arguments": args});
    if let Some(name) = name {
        function["name"] = json!(name);
    }
    let mut call = json!({"index": index, "function": function});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    chat(json!({"tool_calls": [call]}))
}

/// The last Chat Completions chunk.
fn finish() -> StreamChunk {
    StreamChunk::Event(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    )
}

/// All the events of a stream of `chunks`.
fn events(
    manager: &ToolManager,
    chunks: Vec<StreamChunk>,
    limits: Option<Limits>,
) -> Vec<StreamEvent> {
    let rt = common::runtime();
    let mut request = manager.stream(futures_util::stream::iter(chunks));
    if let Some(limits) = limits {
        request = request.limits(limits);
    }
    rt.block_on(request.events().collect())
}

/// The outputs among `events`, sorted by call id (calls run concurrently).
fn outputs(events: &[StreamEvent]) -> Vec<FunctionOutput> {
    let mut outs: Vec<FunctionOutput> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Output(o) => Some((**o).clone()),
            _ => None,
        })
        .collect();
    outs.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    outs
}

/// `(call_id, name, output or error kind)` of each output.
fn summary(events: &[StreamEvent]) -> Vec<(String, String, Result<Value, ErrorKind>)> {
    outputs(events)
        .into_iter()
        .map(|o| (o.call_id, o.name, o.output.map_err(|e| e.kind)))
        .collect()
}

fn ok(id: &str, name: &str, value: i64) -> (String, String, Result<Value, ErrorKind>) {
    (id.into(), name.into(), Ok(Value::Int(value)))
}

fn err(id: &str, name: &str, kind: ErrorKind) -> (String, String, Result<Value, ErrorKind>) {
    (id.into(), name.into(), Err(kind))
}

/// The error of the output named `name`.
fn error_of(events: &[StreamEvent], name: &str) -> fexpr::Error {
    outputs(events)
        .into_iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no output named {name}: {events:?}"))
        .output
        .unwrap_err()
}

/// Interleaved fragments of two calls, cut anywhere in their arguments, give the outputs of the
/// whole assistant message through `Input::openai`: the same checks (a repair included), the
/// same ids.
#[test]
fn chat_fragments_in_any_cut_give_the_whole_message_outputs() {
    let manager = fexpr::demo::manager();
    let a = r#"{"a": 1, "b": "2"}"#;
    let b = r#"{"a": 2, "b": 3.0, "c": {"x": "}"}}"#;
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": a}},
        {"id": "call_b", "type": "function", "function": {"name": "multiply", "arguments": b}}]});
    let rt = common::runtime();
    let whole = rt.block_on(async { manager.run(Input::openai(message)).await });
    let mut expected = whole.outputs.clone();
    expected.sort_by(|x, y| x.call_id.cmp(&y.call_id));
    let shown = |outs: &[FunctionOutput]| -> Vec<(String, String, Result<Value, String>)> {
        outs.iter()
            .map(|o| {
                let out = o
                    .output
                    .clone()
                    .map_err(|e| format!("{:?}: {}", e.kind, e.message));
                (o.call_id.clone(), o.name.clone(), out)
            })
            .collect()
    };
    for cut in 0..=a.len().min(b.len()) {
        let chunks = vec![
            frag(0, Some("call_a"), Some("add"), ""),
            frag(1, Some("call_b"), Some("multiply"), &b[..cut]),
            frag(0, None, None, &a[..cut]),
            frag(1, None, None, &b[cut..]),
            frag(0, None, None, &a[cut..]),
            finish(),
        ];
        let got = outputs(&events(&manager, chunks, None));
        assert_eq!(shown(&got), shown(&expected), "cut at {cut}");
    }
}

/// Text chunks and `delta.content` are the text stream; the calls in the text and the
/// structured calls all run.
#[test]
fn text_and_structured_calls_mix() {
    let manager = fexpr::demo::manager();
    let chunks = vec![
        StreamChunk::Text("I will add.\n".into()),
        chat(json!({"content": "add(a=5, b=6)\n"})),
        frag(0, Some("call_x"), Some("add"), r#"{"a": 1, "b": 2}"#),
        finish(),
    ];
    let got = events(&manager, chunks, None);
    let mut values: Vec<_> = outputs(&got)
        .into_iter()
        .map(|o| o.output.unwrap())
        .collect();
    values.sort_by_key(|v| format!("{v:?}"));
    assert_eq!(values, [Value::Int(11), Value::Int(3)]);
    assert!(got
        .iter()
        .any(|e| matches!(e, StreamEvent::Ignored(i) if i.text == "I will add.")));
}

/// The Responses API's events: the item added carries the call id and name, the deltas the
/// arguments; the output keeps `call_id`.
#[test]
fn responses_events_run_their_function_calls() {
    let manager = fexpr::demo::manager();
    let ev = |v: Json| StreamChunk::Event(v);
    let chunks = vec![
        ev(json!({"type": "response.created", "response": {"id": "resp_1"}})),
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        ),
        ev(
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "delta": "Computing."}),
        ),
        ev(
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call",
            "id": "fc_1", "call_id": "call_r1", "name": "multiply", "arguments": "", "status": "in_progress"}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"a\": 6,"}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": " \"b\": 7}"}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "arguments": "{\"a\": 6, \"b\": 7}"}),
        ),
        ev(
            json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call",
            "id": "fc_1", "call_id": "call_r1", "name": "multiply", "arguments": "{\"a\": 6, \"b\": 7}", "status": "completed"}}),
        ),
        // Only the `.done` event carries the arguments of this one.
        ev(
            json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call",
            "id": "fc_2", "call_id": "call_r2", "name": "add", "arguments": ""}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_2", "output_index": 2, "arguments": "{\"a\": 1, \"b\": 1}"}),
        ),
        ev(json!({"type": "response.completed", "response": {"id": "resp_1"}})),
    ];
    let got = events(&manager, chunks, None);
    assert_eq!(
        summary(&got),
        [ok("call_r1", "multiply", 42), ok("call_r2", "add", 2)]
    );
    assert!(got
        .iter()
        .any(|e| matches!(e, StreamEvent::Ignored(i) if i.text == "Computing.")));
}

/// Anthropic's events: a `tool_use` block opened, its `input_json_delta` pieces, its stop; a
/// tool without arguments sends none (`{}`); `text_delta` is text; thinking is passed over.
#[test]
fn anthropic_events_run_their_tool_use_blocks() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b))
        .tool(FunctionTool::new("ping", [], || "pong".to_string()))
        .build()
        .unwrap();
    let ev = |v: Json| StreamChunk::Event(v);
    let chunks = vec![
        ev(
            json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}}),
        ),
        ev(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        ev(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "add(a=9, b=9)"}}),
        ),
        ev(json!({"type": "content_block_stop", "index": 0})),
        ev(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        ev(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Let me add."}}),
        ),
        ev(json!({"type": "content_block_stop", "index": 1})),
        ev(
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        ),
        ev(
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        ev(
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 2"}}),
        ),
        ev(
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ", \"b\": 40}"}}),
        ),
        ev(json!({"type": "content_block_stop", "index": 2})),
        ev(
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "ping", "input": {}}}),
        ),
        ev(json!({"type": "content_block_stop", "index": 3})),
        ev(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})),
        ev(json!({"type": "message_stop"})),
    ];
    let got = events(&manager, chunks, None);
    assert_eq!(
        summary(&got),
        [
            ok("toolu_1", "add", 42),
            (
                "toolu_2".into(),
                "ping".into(),
                Ok(Value::Str("pong".into()))
            )
        ]
    );
    assert!(got
        .iter()
        .any(|e| matches!(e, StreamEvent::Ignored(i) if i.text == "Let me add.")));
}

/// The first call starts while the source is still blocked: its tool runs before the next
/// fragment is sent, and its output comes before the stream ends.
#[test]
fn the_first_call_starts_before_the_stream_ends() {
    let (ran_tx, ran_rx) = std::sync::mpsc::channel::<i64>();
    let ran_tx = std::sync::Mutex::new(ran_tx);
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("record", ["n"], move |n: i64| {
            ran_tx.lock().unwrap().send(n).unwrap();
            n
        }))
        .build()
        .unwrap();
    let rt = common::runtime();
    rt.block_on(async {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<StreamChunk>();
        let chunks =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|c| (c, rx)) },
            );
        let mut events = manager.stream(Box::pin(chunks)).events();
        tx.send(frag(0, Some("call_1"), Some("record"), "{\"n\": "))
            .unwrap();
        tx.send(frag(0, None, None, "1}")).unwrap();
        tx.send(frag(1, Some("call_2"), Some("record"), "{\"n\": "))
            .unwrap();
        let first = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("the first call's output while the stream is open")
            .unwrap();
        let StreamEvent::Output(first) = first else {
            panic!("{first:?}")
        };
        assert_eq!(
            (first.call_id.as_str(), first.output.clone()),
            ("call_1", Ok(Value::Int(1)))
        );
        assert_eq!(
            ran_rx.try_recv(),
            Ok(1),
            "the tool ran before the stream ended"
        );
        tx.send(frag(1, None, None, "2}")).unwrap();
        tx.send(finish()).unwrap();
        drop(tx);
        let rest: Vec<StreamEvent> = events.collect().await;
        assert_eq!(summary(&rest), [ok("call_2", "record", 2)]);
    });
}

/// A call whose arguments never close is reported cut off under its own name and id: at the
/// end of the stream, at `finish_reason`, at its Anthropic block's stop.
#[test]
fn a_cut_off_call_is_reported_under_its_own_name() {
    let manager = fexpr::demo::manager();
    let at_end = vec![
        frag(0, Some("call_a"), Some("add"), "{\"a\": 1, \"b\": 2}"),
        frag(1, Some("call_m"), Some("multiply"), "{\"a\": 2, \"b\": "),
    ];
    let got = events(&manager, at_end, None);
    assert_eq!(
        summary(&got),
        [
            ok("call_a", "add", 3),
            err("call_m", "multiply", ErrorKind::Syntax)
        ]
    );
    assert!(error_of(&got, "multiply").message.contains("cut off"));
    let at_finish = vec![
        frag(0, Some("call_m"), Some("multiply"), "{\"a\": 2"),
        finish(),
    ];
    assert_eq!(
        summary(&events(&manager, at_finish, None)),
        [err("call_m", "multiply", ErrorKind::Syntax)]
    );
    let block = vec![
        StreamChunk::Event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}}})),
        StreamChunk::Event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"a\": [1"}})),
        StreamChunk::Event(json!({"type": "content_block_stop", "index": 0})),
    ];
    assert_eq!(
        summary(&events(&manager, block, None)),
        [err("toolu_9", "add", ErrorKind::Syntax)]
    );
}

/// Bad input gets a structured error row each, and the good calls around it still run.
#[test]
fn bad_deltas_give_error_rows() {
    let manager = fexpr::demo::manager();
    let chunks = vec![
        StreamChunk::Event(json!({"hello": "world"})),
        StreamChunk::Event(json!({"type": "response.teleport.delta"})),
        frag(3, None, None, "{\"a\": 1}"),
        frag(0, Some("call_list"), Some("add"), "[1, 2]"),
        frag(1, Some("call_name"), Some("multiply"), "{\"a\""),
        frag(1, None, Some("_again"), ": 1}"),
        frag(2, Some("call_json"), Some("add"), "{\"a\": tru}"),
        frag(
            4,
            Some("call_ok"),
            Some("add"),
            "{\"a\": 1, \"b\": 1} extra",
        ),
        StreamChunk::Wire("{not json".into()),
        finish(),
    ];
    let got = events(&manager, chunks, None);
    let mut rows: Vec<(String, String)> = outputs(&got)
        .into_iter()
        .filter(|o| o.output.is_err())
        .map(|o| (o.name.clone(), fexpr::Response::reply_content(&manager, &o)))
        .collect();
    rows.sort();
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "add",
            "add",
            "event",
            "event",
            "multiply",
            "response.teleport.delta",
            "tool_calls"
        ],
        "{rows:#?}"
    );
    assert!(summary(&got).contains(&ok("call_ok", "add", 2)));
    // The text after the complete arguments is reported, not dropped.
    assert!(got
        .iter()
        .any(|e| matches!(e, StreamEvent::Ignored(i) if i.text.contains("extra"))));
    // Every row a model reads (its reply content), in a snapshot.
    let shown: Vec<String> = rows
        .iter()
        .map(|(name, content)| format!("{name}: {content}"))
        .collect();
    insta::with_settings!({snapshot_path => "snapshots/deltas"}, {
        insta::assert_snapshot!("bad_deltas", shown.join("\n"));
    });
}

/// A name that is not a tool, or arguments the tool's signature refuses, get the checks of a
/// whole message: the same error, the call's own id.
#[test]
fn structured_calls_are_checked_as_a_whole_message_is() {
    let manager = fexpr::demo::manager();
    let chunks = vec![
        frag(0, Some("call_u"), Some("sub"), "{\"a\": 1}"),
        frag(1, Some("call_v"), Some("add"), "{\"a\": 1}"),
        finish(),
    ];
    let got = events(&manager, chunks, None);
    assert_eq!(
        summary(&got),
        [
            err("call_u", "sub", ErrorKind::UnknownTool),
            err("call_v", "add", ErrorKind::Arguments)
        ]
    );
}

/// Every door goes through the same limits: `max_calls` over the whole stream, the bytes of the
/// arguments gathered (`max_source_bytes`), their nesting (`max_depth`).
#[test]
fn structured_calls_are_bounded_by_the_limits() {
    let manager = fexpr::demo::manager();
    let calls = vec![
        frag(0, Some("call_1"), Some("add"), "{\"a\": 1, \"b\": 1}"),
        frag(1, Some("call_2"), Some("add"), "{\"a\": 1, \"b\": 2}"),
        frag(2, Some("call_3"), Some("add"), "{\"a\": 1, \"b\": 3}"),
    ];
    let got = events(&manager, calls, Some(Limits::default().max_calls(2)));
    assert_eq!(
        summary(&got),
        [
            ok("call_1", "add", 2),
            ok("call_2", "add", 3),
            err("call_3", "add", ErrorKind::Limit)
        ]
    );
    let big = format!("{{\"a\": 1, \"b\": 1, \"pad\": \"{}\"}}", "x".repeat(200));
    let got = events(
        &manager,
        vec![frag(0, Some("call_big"), Some("add"), &big)],
        Some(Limits::default().max_source_bytes(100)),
    );
    assert_eq!(summary(&got), [err("call_big", "add", ErrorKind::Limit)]);
    let deep = format!("{{\"a\": {}1{}}}", "[".repeat(20), "]".repeat(20));
    let got = events(
        &manager,
        vec![frag(0, Some("call_deep"), Some("add"), &deep)],
        Some(Limits::default().max_depth(10)),
    );
    assert_eq!(summary(&got), [err("call_deep", "add", ErrorKind::Limit)]);
    let wire = format!("{{\"choices\": [], \"pad\": \"{}\"}}", "x".repeat(200));
    let got = events(
        &manager,
        vec![StreamChunk::Wire(wire)],
        Some(Limits::default().max_source_bytes(100)),
    );
    assert_eq!(error_of(&got, "event").kind, ErrorKind::Limit);
}

/// A source that fails mid-call: the calls that ran keep their one row; the open one gets a
/// row saying it did not run and why.
#[test]
fn a_failing_source_reports_the_open_call() {
    let manager = fexpr::demo::manager();
    let chunks = futures_util::stream::iter(vec![
        Ok(frag(0, Some("call_a"), Some("add"), "{\"a\": 1, \"b\": 2}")),
        Ok(frag(1, Some("call_m"), Some("multiply"), "{\"a\": 2")),
        Err(fexpr::Error::new(
            ErrorKind::Unsupported,
            "the connection was reset",
        )),
    ]);
    let rt = common::runtime();
    let got: Vec<StreamEvent> = rt.block_on(manager.stream(chunks).events().collect());
    assert_eq!(
        summary(&got),
        [
            ok("call_a", "add", 3),
            err("call_m", "multiply", ErrorKind::Unsupported)
        ]
    );
    assert!(error_of(&got, "multiply")
        .message
        .contains("the connection was reset"));
}

/// The wire: JSON lines and SSE `data:` lines become events, the rest stays text (passed on
/// at once unless it may be an event), a JSON call written as text stays text.
#[test]
fn wire_lines_split_events_from_text() {
    let mut lines = WireLines::default();
    let mut chunks = Vec::new();
    for piece in [
        "Sure, ",
        "[add(a=1, b=2)]\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n{\"type\": \"message_st",
        "op\"}\ndata: {\"type\": \"ping\"}\n\nevent: ping\n: comment\ndata: [DONE]\n\nbye",
    ] {
        chunks.extend(lines.push(piece));
    }
    chunks.extend(lines.finish());
    assert_eq!(
        chunks,
        [
            StreamChunk::Text("Sure, ".into()),
            StreamChunk::Text(
                "[add(a=1, b=2)]\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n".into()
            ),
            StreamChunk::Wire("{\"type\": \"message_stop\"}".into()),
            StreamChunk::Wire("{\"type\": \"ping\"}".into()),
            StreamChunk::Text("bye".into()),
        ]
    );
}

/// `fexpr exec -` reads Chat Completions chunks as SSE lines on stdin: the first call's row is
/// printed while stdin is still open, the second after; ids kept.
#[test]
fn exec_reads_streamed_deltas_on_stdin() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let line = |chunk: StreamChunk| match chunk {
        StreamChunk::Event(v) => format!("data: {v}\n\n"),
        _ => unreachable!(),
    };
    let mut stdin = child.stdin.take().unwrap();
    for chunk in [
        chat(json!({"role": "assistant", "content": "Adding."})),
        frag(0, Some("call_A"), Some("add"), "{\"a\": 1,"),
        frag(0, None, None, " \"b\": 2}"),
        frag(1, Some("call_B"), Some("multiply"), "{\"a\": 2,"),
    ] {
        stdin.write_all(line(chunk).as_bytes()).unwrap();
    }
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let first: Json = serde_json::from_str(
        &rx.recv_timeout(Duration::from_secs(30))
            .expect("add's row while stdin is open"),
    )
    .unwrap();
    assert_eq!(
        (first["call_id"].as_str(), &first["output"]),
        (Some("call_A"), &json!(3))
    );
    stdin
        .write_all(line(frag(1, None, None, " \"b\": 3}")).as_bytes())
        .unwrap();
    stdin.write_all(line(finish()).as_bytes()).unwrap();
    stdin.write_all(b"data: [DONE]\n\n").unwrap();
    drop(stdin);
    let second: Json =
        serde_json::from_str(&rx.recv_timeout(Duration::from_secs(30)).unwrap()).unwrap();
    assert_eq!(
        (second["call_id"].as_str(), &second["output"]),
        (Some("call_B"), &json!(6))
    );
    assert!(child.wait().unwrap().success());
}

/// JSON lines (not SSE) on stdin, as a file: the rows, and a cut-off call's row.
#[test]
fn exec_reads_json_lines() {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for chunk in [
        frag(0, Some("call_A"), Some("add"), "{\"a\": 1, \"b\": 2}"),
        frag(1, Some("call_B"), Some("multiply"), "{\"a\": 2, \"b\""),
    ] {
        let StreamChunk::Event(v) = chunk else {
            unreachable!()
        };
        input.push_str(&format!("{v}\n"));
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let mut rows: Vec<Json> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    rows.sort_by_key(|r| r["call_id"].as_str().unwrap().to_string());
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["output"], 3);
    assert_eq!(
        (rows[1]["name"].as_str(), rows[1]["error"]["kind"].as_str()),
        (Some("multiply"), Some("Syntax"))
    );
}

/// Servers that repeat the id and the name in every fragment, or send a call whole in one
/// fragment without an `index`, are read as the same calls.
#[test]
fn repeated_names_and_whole_calls_are_read() {
    let manager = fexpr::demo::manager();
    let repeated = vec![
        frag(0, Some("call_r"), Some("add"), ""),
        frag(0, Some("call_r"), Some("add"), "{\"a\": 4,"),
        frag(0, Some("call_r"), Some("add"), " \"b\": 4}"),
        chat(json!({"tool_calls": [{"id": "call_w", "type": "function",
            "function": {"name": "multiply", "arguments": "{\"a\": 3, \"b\": 3}"}}]})),
        finish(),
    ];
    assert_eq!(
        summary(&events(&manager, repeated, None)),
        [ok("call_r", "add", 8), ok("call_w", "multiply", 9)]
    );
}

/// The `delta` of each chunk given alone (`chunk.choices[0].delta`) is read as the chunk.
#[test]
fn bare_deltas_are_read_as_chunks() {
    let manager = fexpr::demo::manager();
    let delta = |v: Json| StreamChunk::Event(v);
    let chunks = vec![
        delta(json!({"role": "assistant", "content": "On it.", "tool_calls": null})),
        delta(
            json!({"content": null, "tool_calls": [{"index": 0, "id": "call_d", "type": "function",
            "function": {"name": "add", "arguments": "{\"a\": 2,"}}]}),
        ),
        delta(
            json!({"content": null, "tool_calls": [{"index": 0, "function": {"arguments": " \"b\": 2}"}}]}),
        ),
    ];
    let got = events(&manager, chunks, None);
    assert_eq!(summary(&got), [ok("call_d", "add", 4)]);
    assert!(got
        .iter()
        .any(|e| matches!(e, StreamEvent::Ignored(i) if i.text == "On it.")));
}

//! Streaming: model text read as it arrives. Reading in pieces gives exactly the reading of the
//! whole text, for every corpus in `tests/data` cut at random bytes (inside tokens, tags and
//! multi-byte characters); a call starts while the rest of the text is still to come; a stream
//! over `max_source_bytes` stops with a `Limit` error; the CLI prints a row before the rest of
//! its input arrives.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::dispatch::stream::StreamEvent;
use fexpr::front::check::plan;
use fexpr::front::stream::StreamReader;
use fexpr::repair::RepairOptions;
use fexpr::{Input, Limits};
use futures_util::StreamExt;
use serde_json::Value as Json;
use std::future::IntoFuture;
use std::time::Duration;

/// Every model text of the corpora in `tests/data`.
fn corpus_texts() -> Vec<String> {
    let mut texts = Vec::new();
    for (file, key) in [
        ("call_position.jsonl", "text"),
        ("model_outputs.jsonl", "output"),
        ("model_formats.jsonl", "output"),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(file);
        for line in std::fs::read_to_string(path).unwrap().lines() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let case: Json = serde_json::from_str(line).unwrap();
            texts.push(case[key].as_str().unwrap().to_string());
        }
    }
    texts
}

/// `text` cut at the byte offsets `cuts` (kept on char boundaries, as a UTF-8 stream decoder
/// hands them out).
fn pieces(text: &str, cuts: &[usize]) -> Vec<String> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut c = c % (text.len() + 1);
            while !text.is_char_boundary(c) {
                c -= 1;
            }
            c
        })
        .collect();
    at.push(0);
    at.push(text.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2)
        .map(|w| text[w[0]..w[1]].to_string())
        .collect()
}

/// A small deterministic generator (no dependency): cut points for case `i`, split `k`.
fn cuts(seed: u64, n: usize) -> Vec<usize> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as usize
        })
        .collect()
}

#[test]
fn reading_in_pieces_is_reading_the_whole_text() {
    let manager = fexpr::demo::manager();
    let (ctx, limits) = (manager.context(), manager.limits());
    let options = RepairOptions::default();
    let texts = corpus_texts();
    assert!(texts.len() > 200, "{} texts", texts.len());
    for (i, text) in texts.iter().enumerate() {
        let whole = plan(text, ctx, limits, &options);
        for split in 0..12u64 {
            let n = 1 + (split as usize * 3) % 40;
            let mut reader = StreamReader::new(options);
            for piece in pieces(text, &cuts(i as u64 * 100 + split, n)) {
                reader.push(&piece, ctx, limits).unwrap();
            }
            // Every byte alone too, for the first split.
            if split == 0 {
                let mut bytewise = StreamReader::new(options);
                for c in text.chars() {
                    bytewise.push(&c.to_string(), ctx, limits).unwrap();
                }
                assert_eq!(bytewise.finish(ctx, limits), whole, "{text:?} char by char");
            }
            assert_eq!(reader.finish(ctx, limits), whole, "{text:?} in {n} pieces");
        }
    }
}

/// Cases whose early calls the whole text rules out, and why the stream cannot know it.
const RULED_OUT_LATER: &[(&str, &str)] = &[
    (
        "qwen3coder_no_run_before_template_close",
        "the chat template opened the reasoning: only the `</think>` still to come says so",
    ),
    (
        "functionary_no_run_in_text",
        "Functionary's first part has no `>>>` (the prompt ended with it): unless the format is \
         named, only a later `>>>` says that `all` began text to the user",
    ),
];

/// The model-format corpus read in pieces with each case's format named (its own reader, for
/// the formats the front door reads by its own rules too) and not: the final reading is the
/// whole text's, and every call handed out early is one the whole text runs.
#[test]
fn every_model_format_reads_in_pieces_as_a_whole() {
    let manager = fexpr::demo::manager();
    let (ctx, limits) = (manager.context(), manager.limits());
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/model_formats.jsonl");
    let mut formats = std::collections::HashSet::new();
    for (i, line) in std::fs::read_to_string(path).unwrap().lines().enumerate() {
        let case: Json = serde_json::from_str(line).unwrap();
        let (id, text) = (
            case["id"].as_str().unwrap(),
            case["output"].as_str().unwrap(),
        );
        let format: fexpr::front::formats::ModelFormat =
            case["format"].as_str().unwrap().parse().unwrap();
        formats.insert(format);
        let ruled_out_later = RULED_OUT_LATER.iter().any(|(known, _)| *known == id);
        for named in [None, Some(format)] {
            let options = RepairOptions {
                model_format: named,
                ..RepairOptions::default()
            };
            let whole = plan(text, ctx, limits, &options);
            let runs = |call: &fexpr::front::check::Planned| {
                whole.calls.iter().any(|c| {
                    c.verdict.valid
                        && c.verdict.span.start == call.verdict.span.start
                        && c.run == call.run
                })
            };
            for split in 0..4u64 {
                let mut reader = StreamReader::new(options);
                for piece in pieces(text, &cuts(i as u64 * 10 + split, 1 + split as usize * 5)) {
                    for call in reader.push(&piece, ctx, limits).unwrap() {
                        assert!(
                            runs(&call) || ruled_out_later,
                            "{id} ({named:?}): {call:?} started early"
                        );
                    }
                }
                assert_eq!(reader.finish(ctx, limits), whole, "{id} ({named:?})");
            }
        }
    }
    assert_eq!(formats.len(), fexpr::front::formats::ModelFormat::ALL.len());
}

/// Running a stream whose pieces are all at hand gives the outputs of running the whole text:
/// nothing starts early, nothing runs that the whole reading would not run.
#[test]
fn a_stream_at_hand_runs_what_the_whole_text_runs() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    for (i, text) in corpus_texts().iter().enumerate() {
        let whole = rt.block_on(manager.run(Input::model_output(text.clone())).into_future());
        let chunks = futures_util::stream::iter(pieces(text, &cuts(i as u64, 7)));
        let events: Vec<StreamEvent> = rt.block_on(manager.stream(chunks).events().collect());
        let mut streamed: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Output(o) => Some(format!("{} {:?}", o.name, o.output)),
                _ => None,
            })
            .collect();
        let mut ran: Vec<String> = whole
            .outputs
            .iter()
            .map(|o| format!("{} {:?}", o.name, o.output))
            .collect();
        streamed.sort();
        ran.sort();
        assert_eq!(streamed, ran, "{text:?}");
        let ignored: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Ignored(i) => Some(i.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(ignored, whole.ignored, "{text:?}");
    }
}

/// A call starts while the model is still writing: the first output arrives before the rest
/// of the text is sent.
#[test]
fn a_call_starts_before_the_rest_of_the_text_arrives() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    rt.block_on(async {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let chunks =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|c| (c, rx)) },
            );
        let mut events = manager.stream(Box::pin(chunks)).events();
        tx.send("[add(a=1, b=2), ".into()).unwrap();
        let first = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("add's output before the rest of the text")
            .unwrap();
        let StreamEvent::Output(first) = first else {
            panic!("{first:?}")
        };
        assert_eq!(first.output, Ok(fexpr::Value::Int(3)));
        tx.send("multiply(a=2, b=3)]".into()).unwrap();
        drop(tx);
        let rest: Vec<StreamEvent> = events.collect().await;
        let outputs: Vec<_> = rest
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Output(o) => Some(o.output.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(outputs, [Ok(fexpr::Value::Int(6))]);
    });
}

/// Over `max_source_bytes`, the stream stops with a `Limit` error and what had not started
/// does not start.
#[test]
fn a_stream_over_the_limit_stops() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    let limits = Limits::default().max_source_bytes(64);
    let chunks = futures_util::stream::iter(vec![
        "[add(a=1, b=2), ".to_string(),
        "multiply(a=2, b=3), ".repeat(10),
    ]);
    let events: Vec<StreamEvent> =
        rt.block_on(manager.stream(chunks).limits(limits).events().collect());
    assert_eq!(events.len(), 1, "{events:?}");
    let StreamEvent::Output(out) = &events[0] else {
        panic!()
    };
    assert_eq!(
        out.output.as_ref().err().unwrap().kind,
        fexpr::ErrorKind::Limit
    );
}

/// `fexpr exec -` prints a call's row as soon as that call finishes, before its input ends.
#[test]
fn exec_prints_a_row_before_the_input_ends() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"[add(a=1, b=2), ").unwrap();
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("add's row while stdin is still open");
    let row: Json = serde_json::from_str(&first).unwrap();
    assert_eq!(row["output"], 3);
    stdin.write_all(b"multiply(a=2, b=3)]").unwrap();
    drop(stdin);
    let second: Json =
        serde_json::from_str(&rx.recv_timeout(Duration::from_secs(30)).unwrap()).unwrap();
    assert_eq!(second["output"], 6);
    assert!(child.wait().unwrap().success());
}

/// Texts whose start already rules out what follows as a call, each followed by a list of
/// calls written item by item (the call-position cases of streaming).
const CODE_BEFORE: &[&str] = &[
    "\"\"\"\n",
    "x = (\n",
    "{'k':\n",
    "if False:\n    ",
    "def f(): return ",
    "print(\n",
    "```python\nimport os\n",
    "x = 1\n",
    "<think>\n",
    "# comment\nsearch(query='''\n",
];

/// Every corpus text, and the call-position cases of streaming.
fn early_corpus() -> Vec<String> {
    let mut texts = corpus_texts();
    let markup =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/markup_in_data.jsonl");
    for line in std::fs::read_to_string(markup).unwrap().lines() {
        if !line.starts_with('#') {
            let case: Json = serde_json::from_str(line).unwrap();
            texts.push(case["text"].as_str().unwrap().to_string());
        }
    }
    for before in CODE_BEFORE {
        texts.push(format!(
            "{before}[multiply(a=9, b=9), add(a=1, b=2), multiply(a=2, b=3)]\n"
        ));
        texts.push(format!("{before}multiply(a=9, b=9)\nadd(a=1, b=2)\n"));
    }
    texts
}

/// Whether the whole reading of `prefix` runs a call starting at `start` as `call` would run.
fn prefix_runs(prefix: &str, call: &fexpr::front::check::Planned, options: &RepairOptions) -> bool {
    let manager = fexpr::demo::manager();
    let read = plan(prefix, manager.context(), manager.limits(), options);
    read.calls.iter().any(|c| {
        c.verdict.valid && c.verdict.span.start == call.verdict.span.start && c.run == call.run
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// No call starts early that the whole reading of the text before it (plus the call: to
    /// the end of its line, or its list closed after it) would not run.
    #[test]
    fn no_call_starts_early_that_the_text_before_it_rules_out(
        which in 0usize..10_000,
        cut_seed in 0u64..1_000_000,
        n in 1usize..40,
    ) {
        let texts = early_corpus();
        let text = &texts[which % texts.len()];
        let manager = fexpr::demo::manager();
        let (ctx, limits) = (manager.context(), manager.limits());
        let options = RepairOptions::default();
        let mut reader = StreamReader::new(options);
        for piece in pieces(text, &cuts(cut_seed, n)) {
            for call in reader.push(&piece, ctx, limits).unwrap() {
                let so_far = reader.text();
                let end = call.verdict.span.end as usize;
                let line = so_far[end..].find('\n').map_or(so_far.len(), |p| end + p + 1);
                let item = so_far[end..].find(',').map(|p| &so_far[..end + p]);
                let runs = prefix_runs(&so_far[..line], &call, &options)
                    || item.is_some_and(|item| {
                        prefix_runs(&format!("{item}]"), &call, &options)
                            || prefix_runs(&format!("{item})"), &call, &options)
                    });
                proptest::prop_assert!(runs, "{text:?}: {call:?} started early after {so_far:?}");
            }
        }
    }
}

/// Calls separated by prose are counted over the whole stream: no more than `max_calls` start
/// early, and the rows of the ones that started say why the whole text does not run them.
#[test]
fn max_calls_counts_the_whole_stream() {
    let manager = fexpr::demo::manager();
    let mut limits = manager.limits().clone();
    limits.max_calls = 5;
    let mut reader = StreamReader::new(RepairOptions::default());
    let mut started = 0;
    for i in 0..12 {
        let piece = format!("add(a={i}, b=1)\nThat was step {i}.\n");
        for c in piece.chars() {
            started += reader
                .push(&c.to_string(), manager.context(), &limits)
                .unwrap()
                .len();
        }
    }
    assert!(started <= 5, "{started} calls started under max_calls=5");
    let whole = reader.finish(manager.context(), &limits);
    assert!(whole.calls.iter().all(|c| c.run.is_none()));
}

/// A GLM call whose format may still go on (no `</tool_call>` yet) does not start before more
/// text or the end of the stream.
#[test]
fn a_glm_call_waits_for_its_end() {
    let manager = fexpr::demo::manager();
    let (ctx, limits) = (manager.context(), manager.limits());
    let mut reader = StreamReader::new(RepairOptions::default());
    let text = "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n";
    assert!(reader.push(text, ctx, limits).unwrap().is_empty());
    let more = "<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n";
    let started = reader.push(more, ctx, limits).unwrap();
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0].verdict.kwargs.len(), 2);
}

/// Functionary's raw code for `python` runs to the end of the text: it does not start while
/// more code may come, whatever lines are complete; its JSON calls start as soon as they close.
#[test]
fn functionary_raw_code_waits_for_the_end() {
    use fexpr::FunctionTool;
    let manager = fexpr::ToolManager::builder()
        .tool(FunctionTool::new("python", ["code"], |code: String| {
            code.len() as i64
        }))
        .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b))
        .build()
        .unwrap();
    let (ctx, limits) = (manager.context(), manager.limits());
    let options = RepairOptions {
        model_format: "functionary-v3.2".parse().ok(),
        ..RepairOptions::default()
    };
    let mut reader = StreamReader::new(options);
    let started = reader
        .push("add\n{\"a\": 1, \"b\": 2}\n", ctx, limits)
        .unwrap();
    assert_eq!(started.len(), 1, "{started:?}");
    for chunk in [">>>python\n", "import math\n", "print(math.pi)\n"] {
        assert!(
            reader.push(chunk, ctx, limits).unwrap().is_empty(),
            "{chunk:?}"
        );
    }
    let whole = reader.finish(ctx, limits);
    let names: Vec<&str> = whole
        .calls
        .iter()
        .map(|c| c.verdict.name.as_str())
        .collect();
    assert_eq!(names, ["add", "python"]);
    assert!(
        whole.calls.iter().all(|c| c.verdict.valid),
        "{:?}",
        whole.calls
    );
}

/// A bracket left open in prose carries nothing over lines (only code's brackets do): the
/// call on the next line still starts early.
#[test]
fn a_bracket_left_open_in_prose_does_not_hold_the_stream() {
    let manager = fexpr::demo::manager();
    let (ctx, limits) = (manager.context(), manager.limits());
    let mut reader = StreamReader::new(RepairOptions::default());
    assert!(reader
        .push("Here it is (see below\n", ctx, limits)
        .unwrap()
        .is_empty());
    let started = reader.push("add(a=1, b=2)\n", ctx, limits).unwrap();
    assert_eq!(started.len(), 1, "{started:?}");
    // In code, an open bracket holds the lines after it.
    let mut reader = StreamReader::new(RepairOptions::default());
    reader.push("x = (\n", ctx, limits).unwrap();
    assert!(reader
        .push("add(a=1, b=2)\n", ctx, limits)
        .unwrap()
        .is_empty());
}

/// The events of `events` that are outputs.
fn outputs(events: &[StreamEvent]) -> Vec<&fexpr::FunctionOutput> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Output(o) => Some(&**o),
            _ => None,
        })
        .collect()
}

/// A list cut off while streaming: the call that started early keeps its one row (no second,
/// contradicting one under its id), and the cut-off item is reported under its own name.
#[test]
fn a_cut_off_list_reports_its_cut_off_item_and_no_second_row() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    rt.block_on(async {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let chunks =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|c| (c, rx)) },
            );
        let mut events = manager.stream(Box::pin(chunks)).events();
        tx.send("[add(a=1, b=2), ".into()).unwrap();
        let first = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("add's output before the rest")
            .unwrap();
        tx.send("multiply(a=2, b=".into()).unwrap();
        drop(tx);
        let mut all = vec![first];
        all.extend(events.collect::<Vec<_>>().await);
        let rows = outputs(&all);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            (rows[0].name.as_str(), &rows[0].output),
            ("add", &Ok(fexpr::Value::Int(3)))
        );
        assert_eq!(rows[1].name, "multiply");
        let error = rows[1].output.as_ref().unwrap_err();
        assert_eq!(error.kind, fexpr::ErrorKind::Syntax, "{error}");
        assert!(error.message.contains("`add` started"), "{error}");
        assert_ne!(rows[0].call_id, rows[1].call_id);
    });
    // Read whole, the cut-off list is named after its cut-off item too.
    let whole = rt.block_on(
        manager
            .run(Input::model_output("[add(a=1, b=2), multiply(a=2, b="))
            .into_future(),
    );
    assert_eq!(whole.outputs.len(), 1);
    assert_eq!(whole.outputs[0].name, "multiply");
}

/// A source that fails (`Result` chunks) ends the stream: what started finishes and is
/// reported; what had not started never runs, and its output says why.
#[test]
fn a_failing_source_runs_nothing_further_and_reports_each_pending_call() {
    use fexpr::{Error, ErrorKind};
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    rt.block_on(async {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<String, Error>>();
        let chunks =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|c| (c, rx)) },
            );
        let mut events = manager.stream(Box::pin(chunks)).events();
        tx.send(Ok("add(a=1, b=2)\n".into())).unwrap();
        let first = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("add's output")
            .unwrap();
        tx.send(Ok("multiply(a=2, b=3)\nadd(a=5, ".into())).unwrap();
        tx.send(Err(Error::new(ErrorKind::Unsupported, "connection reset")))
            .unwrap();
        tx.send(Ok("b=6)\n".into())).unwrap();
        let mut all = vec![first];
        all.extend(events.collect::<Vec<_>>().await);
        let rows = outputs(&all);
        assert_eq!(rows[0].output, Ok(fexpr::Value::Int(3)));
        assert_eq!(rows.len(), 3, "{rows:?}");
        let multiply = rows.iter().find(|o| o.name == "multiply").unwrap();
        let error = multiply.output.as_ref().unwrap_err();
        assert!(error.message.contains("connection reset"), "{error}");
        // The call cut off by the failure is reported with its own error; nothing else ran.
        let cut = rows.last().unwrap();
        assert!(cut.output.is_err(), "{cut:?}");
    });
}

/// A text without a call gives no output while streaming either, only its ignored text.
#[test]
fn a_stream_without_a_call_gives_no_output() {
    let manager = fexpr::demo::manager();
    let rt = common::runtime();
    for text in [
        "All done, thanks.",
        "",
        "{\"role\": \"assistant\", \"content\": \"Done.\"}",
    ] {
        let chunks = futures_util::stream::iter([text.to_string()]);
        let events: Vec<StreamEvent> = rt.block_on(manager.stream(chunks).events().collect());
        assert!(outputs(&events).is_empty(), "{text:?}: {events:?}");
    }
}

/// `fexpr exec -` on a list cut off after its first call ran: add's row, then multiply's,
/// never a second row for add.
#[test]
fn exec_reports_a_cut_off_list_under_the_cut_off_name() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"[add(a=1, b=2), ").unwrap();
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let first: Json =
        serde_json::from_str(&rx.recv_timeout(Duration::from_secs(30)).unwrap()).unwrap();
    assert_eq!(
        (first["name"].as_str(), first["output"].as_i64()),
        (Some("add"), Some(3))
    );
    stdin.write_all(b"multiply(a=2, b=").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // The reader thread ends (and the channel with it) at the end of stdout.
    let rest: Vec<Json> = rx
        .iter()
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["name"], "multiply");
    assert_eq!(rest[0]["error"]["kind"], "Syntax");
    assert_ne!(rest[0]["call_id"], first["call_id"]);
}

/// `max_calls` is counted over the whole stream: of 8 calls separated by prose under
/// `max_calls=5`, the first 5 start while the text arrives and no more; read whole, none runs,
/// and every row says so with the limit, naming the ones that had started and ran.
#[test]
fn max_calls_over_a_stream_gives_the_limit_as_the_reason() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args([
            "exec",
            "--tools",
            "demo",
            "--format",
            "json",
            "--limit",
            "max_calls=5",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let mut rows: Vec<Json> = Vec::new();
    for i in 1..=8 {
        write!(stdin, "add(a={i}, b=1)\nThat was step {i}.\n").unwrap();
        stdin.flush().unwrap();
        if i <= 5 {
            // Within the limit so far: the call starts before the rest arrives.
            let row = rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the call's row while stdin is still open");
            rows.push(serde_json::from_str(&row).unwrap());
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    rows.extend(rx.iter().map(|l| serde_json::from_str::<Json>(&l).unwrap()));
    let ran: Vec<&Json> = rows.iter().filter(|r| r["output"].is_i64()).collect();
    let limited: Vec<&Json> = rows
        .iter()
        .filter(|r| r["error"]["kind"] == "Limit")
        .collect();
    assert_eq!(ran.len(), 5, "{rows:?}");
    assert_eq!(limited.len(), 8, "{rows:?}");
    let started = limited
        .iter()
        .filter(|r| r["error"]["message"].as_str().unwrap().contains("started"))
        .count();
    assert_eq!(started, 5, "{limited:?}");
}

/// After text that leaves what follows out of call position (an open string, bracket, dead
/// branch, definition, `print(`, an import in the same fence, reasoning, a comment's string),
/// an item of a list of calls does not start early, nor a line of calls, whatever the pieces.
#[test]
fn nothing_starts_early_after_text_that_rules_it_out() {
    let manager = fexpr::demo::manager();
    let (ctx, limits) = (manager.context(), manager.limits());
    for before in CODE_BEFORE {
        for rest in ["[multiply(a=9, b=9), ", "multiply(a=9, b=9)\n"] {
            for by_char in [false, true] {
                let mut reader = StreamReader::new(RepairOptions::default());
                let mut started = reader.push(before, ctx, limits).unwrap();
                if by_char {
                    for c in rest.chars() {
                        started.extend(reader.push(&c.to_string(), ctx, limits).unwrap());
                    }
                } else {
                    started.extend(reader.push(rest, ctx, limits).unwrap());
                }
                assert!(started.is_empty(), "{before:?} then {rest:?}: {started:?}");
            }
        }
    }
    // After prose, the same text starts its call early.
    for rest in ["[multiply(a=9, b=9), ", "multiply(a=9, b=9)\n"] {
        let mut reader = StreamReader::new(RepairOptions::default());
        reader.push("Sure.\n", ctx, limits).unwrap();
        assert_eq!(reader.push(rest, ctx, limits).unwrap().len(), 1, "{rest:?}");
    }
}

/// Every format's markup inside data or reasoning (`tests/data/markup_in_data.jsonl`) read in
/// pieces, and char by char: no call starts early that the case does not run, and the final
/// reading is the whole text's.
#[test]
fn markup_in_data_never_starts_streamed() {
    let manager = fexpr::demo::manager();
    let (ctx, limits) = (manager.context(), manager.limits());
    let options = RepairOptions::default();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/markup_in_data.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let cases: Vec<Json> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cases.len() > 400, "{} cases", cases.len());
    for (i, case) in cases.iter().enumerate() {
        let (id, text) = (case["id"].as_str().unwrap(), case["text"].as_str().unwrap());
        let runs: Vec<&str> = case["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        let whole = plan(text, ctx, limits, &options);
        let by_char: Vec<String> = text.chars().map(String::from).collect();
        for pieces in [pieces(text, &cuts(i as u64, 9)), by_char] {
            let mut reader = StreamReader::new(options);
            for piece in &pieces {
                for call in reader.push(piece, ctx, limits).unwrap() {
                    assert!(
                        runs.contains(&call.verdict.name.as_str()),
                        "{id}: {} started early",
                        call.verdict.name
                    );
                }
            }
            assert_eq!(reader.finish(ctx, limits), whole, "{id}");
        }
    }
}

//! What every reader must keep: spans in bounds and on character boundaries, no panic on any
//! text, and the prefix rule (a prefix reads as the complete calls of the whole text plus at
//! most one broken call, last).

use proptest::prelude::*;

use super::{detect, read, FormatArgs, FormatCall, FormatReading, ModelFormat};
use crate::error::Span;
use crate::limits::Limits;

pub(super) fn read_as(format: ModelFormat, text: &str) -> FormatReading {
    let reading = read(format, text, &Limits::default());
    check_spans(text, &reading);
    reading
}

pub(super) fn names(reading: &FormatReading) -> Vec<&str> {
    reading.calls.iter().map(|c| c.name.as_str()).collect()
}

/// The key/value pairs of a call whose values are text.
pub(super) fn args_text<'a>(call: &'a FormatCall, text: &str) -> Vec<(&'a str, &'a str)> {
    let FormatArgs::Text(args) = &call.args else {
        panic!("not text arguments: {:?}", call.args);
    };
    for arg in args {
        assert_eq!(&text[arg.key_span.range()], arg.key);
        assert_eq!(&text[arg.value_span.range()], arg.value);
    }
    args.iter()
        .map(|a| (a.key.as_str(), a.value.as_str()))
        .collect()
}

/// The text of a call's JSON or Python arguments.
pub(super) fn args_src<'t>(call: &FormatCall, text: &'t str) -> &'t str {
    match &call.args {
        FormatArgs::Json(s) | FormatArgs::Python(s) => &text[s.range()],
        other => panic!("not JSON or Python arguments: {other:?}"),
    }
}

pub(super) fn is_broken(call: &FormatCall) -> bool {
    matches!(call.args, FormatArgs::Broken(_))
}

fn check_span(text: &str, s: Span) {
    assert!(s.start <= s.end, "{s:?} runs backwards");
    assert!((s.end as usize) <= text.len(), "{s:?} past the text");
    assert!(
        text.is_char_boundary(s.start as usize),
        "{s:?} not on a boundary"
    );
    assert!(
        text.is_char_boundary(s.end as usize),
        "{s:?} not on a boundary"
    );
}

fn check_spans(text: &str, r: &FormatReading) {
    for call in &r.calls {
        check_span(text, call.span);
        if let Some(s) = call.name_span {
            check_span(text, s);
            let written = &text[s.range()];
            // A JSON name is written quoted; one with escapes is not compared.
            let unquoted = written
                .strip_prefix('"')
                .and_then(|w| w.strip_suffix('"'))
                .unwrap_or(written);
            if !written.contains('\\') {
                assert!(written == call.name || unquoted == call.name, "{written:?}");
            }
        }
        match &call.args {
            FormatArgs::Json(s) | FormatArgs::Python(s) => check_span(text, *s),
            FormatArgs::Text(args) => {
                for a in args {
                    check_span(text, a.key_span);
                    check_span(text, a.value_span);
                }
            }
            FormatArgs::Broken(e) => check_span(text, e.span.expect("a broken call has a span")),
        }
    }
    for (s, _) in &r.markup {
        check_span(text, *s);
    }
    for s in r.reasoning.iter().chain(&r.claimed) {
        check_span(text, *s);
    }
    for pair in r.claimed.windows(2) {
        assert!(pair[0].end < pair[1].start, "claimed regions overlap");
    }
}

/// Valid texts of every format, with the names of their calls.
pub(super) const EXAMPLES: &[(ModelFormat, &str, &[&str])] = &[
    (ModelFormat::QwenXml, "Sure.\n<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=search>\n<parameter=query>\nrust é\n</parameter>\n</function>\n</tool_call>", &["multiply", "search"]),
    (ModelFormat::Glm, "<think>Add them.</think>\n<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n</tool_call><tool_call>search\n<arg_key>query</arg_key>\n<arg_value>café</arg_value>\n</tool_call>", &["add", "search"]),
    (ModelFormat::KimiK2, "Let me compute.<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": 8, \"b\": 1}<|tool_call_end|><|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>{\"query\": \"é\"}<|tool_call_end|><|tool_calls_section_end|>", &["add", "search"]),
    (ModelFormat::DeepSeek, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{\"a\": 1, \"b\": 2}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"x\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>", &["add", "search"]),
    (ModelFormat::DeepSeek, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 1, \"b\": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", &["add"]),
    (ModelFormat::Harmony, "<|channel|>analysis<|message|>Need to call multiply(a=9, b=9)? No: 5*5.<|end|><|start|>assistant<|channel|>commentary to=functions.multiply <|constrain|>json<|message|>{\"a\": 5, \"b\": 5}<|call|>", &["multiply"]),
    (ModelFormat::Mistral, "[TOOL_CALLS]add{\"a\": 3, \"b\": 4}[TOOL_CALLS]search[ARGS]{\"query\": \"é\"}", &["add", "search"]),
    (ModelFormat::Mistral, "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {\"a\": 3, \"b\": 4}}, {\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]</s>", &["add", "search"]),
    (ModelFormat::Llama31, "<function=add>{\"a\": 5, \"b\": 5}</function><function=search>{\"query\": \"x\"}</function>", &["add", "search"]),
    (ModelFormat::Llama31, "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}; {\"name\": \"search\", \"parameters\": {\"query\": \"é\"}}<|eom_id|>", &["add", "search"]),
    (ModelFormat::Granite, "<|tool_call|>[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]", &["add", "search"]),
    (ModelFormat::Granite, "<tool_call>[{\"name\": \"add\", \"arguments\": {\"a\": 1}}]</tool_call>", &["add"]),
    (ModelFormat::Xlam, "Sure: ```json\n[{\"name\": \"add\", \"arguments\": {}}]\n``` [TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"é\"}}]", &["add", "search"]),
    (ModelFormat::Phi4, "functools[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]", &["add", "search"]),
    (ModelFormat::Xlam, "```json\n[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"search\", \"arguments\": {\"query\": \"é\"}}]\n```", &["add", "search"]),
    (ModelFormat::Gemma, "```tool_code\nprint(add(a=1, b=2))\n```\n```tool_code\nsearch(query=\"é\")\n```", &["add", "search"]),
    (ModelFormat::Hermes, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"é\"}}\n</tool_call>", &["add", "search"]),
    (ModelFormat::Pythonic, "<|python_start|>[add(a=1, b=2), search(query=\"é, ]\")]<|python_end|>", &["add", "search"]),
    (ModelFormat::Gemma4, "<|channel>thought\nI could call <|tool_call>call:multiply{a:9}<tool_call|><channel|>Sure. <|tool_call>call:add{a:1,b:2}<tool_call|><|tool_call>call:search{query:<|\"|>é, {x}<|\"|>,opts:{k:[1,<|\"|>]<|\"|>]}}<tool_call|>", &["add", "search"]),
    (ModelFormat::FunctionGemma, "<start_function_call>call:add{a:<escape>1<escape>,b:<escape>2<escape>}<end_function_call><start_function_call>call:search{query:<escape>é<escape>}<end_function_call>", &["add", "search"]),
    (ModelFormat::DeepSeekDsml, "<think>Two calls.</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"add\">\n<｜DSML｜parameter name=\"a\" string=\"false\">1</｜DSML｜parameter>\n<｜DSML｜parameter name=\"b\" string=\"false\">2</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">杭州</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>", &["add", "search"]),
    (ModelFormat::MiniMaxM2, "<think>Add, then search.</think>\n<minimax:tool_call>\n<invoke name=\"add\">\n<parameter name=\"a\">1</parameter>\n<parameter name=\"b\">2</parameter>\n</invoke>\n<invoke name=\"search\">\n<parameter name=\"query\">é </parameter>\n</invoke>\n</minimax:tool_call>", &["add", "search"]),
    (ModelFormat::Step3, "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"add\"><steptml:parameter name=\"a\">1</steptml:parameter><steptml:parameter name=\"b\">2</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke name=\"search\"><steptml:parameter name=\"query\">é</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>", &["add", "search"]),
    (ModelFormat::CommandR, "<|START_THINKING|>Both.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"é\"}}\n]<|END_ACTION|>", &["add", "search"]),
    (ModelFormat::SeedOss, "<seed:think>Quote <seed:tool_call>\n<function=multiply>\n</function>\n</seed:tool_call> no.</seed:think><seed:tool_call>\n<function=add>\n<parameter=a>1</parameter>\n<parameter=b>2</parameter>\n</function>\n</seed:tool_call><seed:tool_call>\n<function=search>\n<parameter=query>\né\n</parameter>\n</function>\n</seed:tool_call>", &["add", "search"]),
    (ModelFormat::Granite, "<function_call> {\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n<function_call> {\"name\": \"search\", \"arguments\": {\"query\": \"é\"}}", &["add", "search"]),
    (ModelFormat::Llama31, "{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}; {\"name\": \"search\", \"parameters\": {\"query\": \"é\"}}", &["add", "search"]),
    (ModelFormat::KimiK3, "<|open|>think<|sep|>Two.<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"integer\"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"search\" index=\"2\"<|sep|><|open|>argument key=\"query\" type=\"string\"<|sep|>é<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>", &["add", "search"]),
    (ModelFormat::Apertus, "<|inner_prefix|>Both.<|inner_suffix|><|tools_prefix|>[{\"add\": {\"a\": 1, \"b\": 2}}, {\"search\": {\"query\": \"é\"}}]<|tools_suffix|>", &["add", "search"]),
    (ModelFormat::Functionary, "all\nSure, both.>>>add\n{\"a\": 1, \"b\": 2}\n>>>search\n{\"query\": \"é\"}", &["add", "search"]),
    (ModelFormat::Functionary, "add\n{\"a\": 1, \"b\": 2}>>>python\nprint(\"é\")\n", &["add", "python"]),
    (ModelFormat::MiniCpm5, "<function name=\"add\">{\"a\": 1, \"b\": 2}</function>\n<function name=\"search\"> {\"query\": \"é\"} </function>", &["add", "search"]),
    (ModelFormat::MiniCpm5, "<think>Both.</think>\n<function name=\"add\"><param name=\"a\">1</param><param name=\"b\">2</param></function>\n<function name=\"search\"><param name=\"query\"><![CDATA[é]]></param></function>\n", &["add", "search"]),
];

#[test]
fn examples_read_whole() {
    for (format, text, expected) in EXAMPLES {
        let r = read_as(*format, text);
        assert_eq!(names(&r), *expected, "{format}: {text}");
        assert!(!r.calls.iter().any(is_broken), "{format}: {r:?}");
    }
}

#[test]
fn examples_are_detected() {
    for (format, text, _) in EXAMPLES {
        if *format != ModelFormat::Xlam {
            assert_eq!(detect(text).first(), Some(format), "{text}");
        }
    }
}

/// Searching a format only in text holding one of its marker starts finds what searching every
/// format finds: on the examples and the model-format corpus (each text alone and inside prose).
#[test]
fn every_marker_begins_with_a_marker_start() {
    let corpus = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/model_formats.jsonl"),
    )
    .unwrap();
    let mut texts: Vec<String> = EXAMPLES.iter().map(|(_, t, _)| t.to_string()).collect();
    // JSON documents, whose byte pairs share filter bits with tag formats' marker starts.
    texts.extend([
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\": 2, \"b\": 3}"}}]}"#.to_string(),
        r#"{"name": "add", "parameters": {"a": 1}}; {"name": "add", "parameters": {"a": 2}}"#.to_string(),
        r#"[{"type":"tool_use","id":"toolu_1","name":"add","input":{"a":"<|python_tag|>"}}]"#.to_string(),
    ]);
    for line in corpus.lines().filter(|l| l.starts_with('{')) {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(text) = case["output"].as_str() {
            texts.push(text.to_string());
            texts.push(format!("[f(a=[1])] then {text} and `x`"));
        }
    }
    let mut found = 0;
    for text in &texts {
        let every: Vec<ModelFormat> = ModelFormat::ALL
            .iter()
            .copied()
            .filter(|f| super::holds_markers(*f, text))
            .collect();
        assert_eq!(detect(text), every, "{text}");
        found += every.len();
    }
    assert!(found > 50, "{found}");
}

/// Every prefix reads as the whole text's calls that end within it, plus at most one call,
/// last: broken (cut off), or complete as far as the text goes (a GLM call whose next
/// argument or `</tool_call>` is still to come: one of the whole text's calls starts there).
#[test]
fn every_prefix_reads_as_complete_calls_and_one_broken() {
    for (format, text, _) in EXAMPLES {
        let whole = read_as(*format, text);
        for cut in (0..=text.len()).filter(|k| text.is_char_boundary(*k)) {
            let prefix = &text[..cut];
            let r = read_as(*format, prefix);
            let mut complete: Vec<&FormatCall> = r.calls.iter().filter(|c| !is_broken(c)).collect();
            let expected: Vec<&FormatCall> = whole
                .calls
                .iter()
                .filter(|c| c.span.end as usize <= cut)
                .collect();
            let grows = |c: &&FormatCall| whole.calls.iter().any(|w| w.span.start == c.span.start);
            if complete.len() == expected.len() + 1 && complete.last().is_some_and(grows) {
                complete.pop();
                assert!(!r.calls.iter().any(is_broken), "{format} at {cut}: {r:?}");
            }
            assert_eq!(complete, expected, "{format} cut at {cut}: {prefix:?}");
            let broken = r.calls.iter().filter(|c| is_broken(c)).count();
            assert!(broken <= 1, "{format} cut at {cut}: {r:?}");
            if broken == 1 {
                assert!(
                    r.calls.last().is_some_and(is_broken),
                    "{format} at {cut}: {r:?}"
                );
            }
        }
    }
}

#[test]
fn names_round_trip_and_unknown_names_are_explained() {
    for format in ModelFormat::ALL {
        assert_eq!(format.name().parse::<ModelFormat>().ok(), Some(*format));
        let json = serde_json::to_value(format).unwrap_or_default();
        assert_eq!(json, format.name());
    }
    let e = "qwen3coder".parse::<ModelFormat>().unwrap_err();
    assert!(e
        .hint
        .as_deref()
        .unwrap_or_default()
        .contains("qwen3-coder"));
}

#[test]
fn text_over_the_source_limit_is_refused() {
    let limits = Limits::default().max_source_bytes(8);
    let r = read(ModelFormat::Hermes, "<tool_call>{}</tool_call>", &limits);
    assert!(matches!(&r.calls[0].args, FormatArgs::Broken(e) if e.kind == crate::ErrorKind::Limit));
}

/// Pieces of every format's markup, to build texts that exercise the readers.
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<think>",
    "</think>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|call|>",
    "<|end|>",
    " to=functions.",
    "commentary",
    "analysis",
    "<|constrain|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "<|python_tag|>",
    "<|eom_id|>",
    "<|tool_call|>",
    "functools[",
    "```tool_code\n",
    "```json\n",
    "```",
    "<|python_start|>",
    "<|python_end|>",
    "<|tool_call>",
    "call:",
    "<|\"|>",
    "<tool_call|>",
    "<|channel>thought",
    "<channel|>",
    "<start_function_call>",
    "<escape>",
    "<end_function_call>",
    "<｜DSML｜function_calls>",
    "<｜DSML｜invoke name=\"",
    "<｜DSML｜parameter name=\"",
    "\" string=\"true\">",
    "</｜DSML｜parameter>",
    "</｜DSML｜invoke>",
    "<minimax:tool_call>",
    "<invoke name=",
    "<parameter name=",
    "</invoke>",
    "<｜tool_calls_begin｜>",
    "<｜tool_call_begin｜>",
    "<steptml:invoke name=\"",
    "<steptml:parameter name=\"",
    "</steptml:parameter>",
    "</steptml:invoke>",
    "<｜tool_call_end｜>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "\"tool_name\"",
    "\"tool_call_id\"",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<seed:think>",
    "</seed:think>",
    "[THINK]",
    "[/THINK]",
    "<function_call>",
    "<|open|>tools<|sep|>",
    "<|open|>call tool=\"",
    "<|open|>argument key=\"",
    "<|sep|>",
    "<|close|>argument<|sep|>",
    "<|close|>call<|sep|>",
    "<|open|>think<|sep|>",
    "<function name=\"",
    "<param name=\"",
    "</param>",
    "<![CDATA[",
    "]]>",
    ">>>",
    "<|tools_prefix|>",
    "<|tools_suffix|>",
    "<|inner_prefix|>",
    "<|inner_suffix|>",
    "all\n",
    "python\n",
    ">",
    "print(",
    "add",
    "(a=1",
    ")",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "\\",
    ",",
    ";",
    "\"name\"",
    ": ",
    "\"arguments\"",
    "\"tool_calls\"",
    "\n",
    " ",
    "é",
    "'",
    "#",
];

fn texts() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(PIECES).prop_map(str::to_string),
        1 => any::<String>(),
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn never_panics_and_spans_stay_in_the_text(text in texts()) {
        for format in ModelFormat::ALL {
            let _ = read_as(*format, &text);
        }
        let _ = detect(&text);
    }
}

/// A value as JSON (what the corpus writes).
fn scalar_json(value: &crate::Value) -> serde_json::Value {
    use crate::Value;
    match value {
        Value::None => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(n) => (*n).into(),
        Value::Float(x) => (*x).into(),
        Value::Str(s) => s.as_str().into(),
        other => other.to_json(),
    }
}

/// The keyword arguments of a call, as JSON: JSON arguments as written, text values converted
/// as for a parameter of unknown type, Python keywords evaluated.
fn kwargs_json(call: &FormatCall, text: &str) -> serde_json::Value {
    let limits = Limits::default();
    let mut out = serde_json::Map::new();
    match &call.args {
        FormatArgs::Json(s) => return serde_json::from_str(&text[s.range()]).unwrap_or_default(),
        FormatArgs::Text(args) => {
            for arg in args {
                let ctx = crate::resolve::context::Context::new();
                let value = super::convert_text_arg(arg, None, &limits)
                    .and_then(|tree| crate::eval::eval_pure(&tree, &ctx, &limits));
                out.insert(
                    arg.key.clone(),
                    scalar_json(&value.unwrap_or(crate::Value::None)),
                );
            }
        }
        FormatArgs::Python(s) => {
            let tree = crate::syntax::parse(&text[s.range()], &limits);
            let Ok(crate::syntax::Expr {
                kind: crate::syntax::ExprKind::Call(c),
                ..
            }) = tree
            else {
                panic!("not a call: {}", &text[s.range()]);
            };
            let ctx = crate::resolve::context::Context::new();
            for k in &c.kwargs {
                let value = crate::eval::eval_pure(&k.value, &ctx, &limits);
                out.insert(
                    k.name.clone(),
                    scalar_json(&value.unwrap_or(crate::Value::None)),
                );
            }
        }
        FormatArgs::Broken(e) => panic!("broken: {e}"),
    }
    out.into()
}

/// Whether a call's Python arguments parse (an item of a list whose brackets do not pair is
/// handed on as written; the front door reports it as a `Syntax` row of its own).
fn parses(call: &FormatCall, text: &str) -> bool {
    match &call.args {
        FormatArgs::Python(s) => crate::syntax::parse(&text[s.range()], &Limits::default()).is_ok(),
        _ => true,
    }
}

/// `tests/data/model_formats.jsonl`: each output read as its format gives the expected calls
/// (and the must-not-run outputs give no complete call); each is detected as its format when
/// it has markers of its own.
#[test]
fn the_corpus_reads_as_expected() {
    let corpus = include_str!("../../../tests/data/model_formats.jsonl");
    let mut formats = std::collections::HashSet::new();
    for line in corpus.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let id = case["id"].as_str().unwrap_or_default();
        let format: ModelFormat = case["format"].as_str().unwrap_or_default().parse().unwrap();
        formats.insert(format);
        let output = case["output"].as_str().unwrap_or_default();
        let reading = read_as(format, output);
        let got: Vec<serde_json::Value> = reading
            .calls
            .iter()
            .filter(|c| !is_broken(c) && parses(c, output))
            .map(|c| serde_json::json!({"name": c.name, "kwargs": kwargs_json(c, output)}))
            .collect();
        assert_eq!(serde_json::Value::from(got), case["expected"], "{id}");
    }
    assert_eq!(formats.len(), ModelFormat::ALL.len());
}

/// The README's formats table lists every format by its name, with an example.
#[test]
fn the_readme_lists_every_format() {
    let readme = include_str!("../../../README.md");
    for format in ModelFormat::ALL {
        let row = format!("| `{}` |", format.name());
        let line = readme.lines().find(|l| l.starts_with(&row));
        assert!(
            line.is_some_and(|l| l.matches(" | ").count() >= 2 && l.trim_end().ends_with('|')),
            "README.md's formats table has no row for `{format}`"
        );
    }
}

/// The CLI's `--model-format` help names every format.
#[test]
fn the_cli_help_names_every_format() {
    let args = include_str!("../../bin/fexpr/args.rs");
    let words: std::collections::HashSet<&str> = args
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
        .collect();
    for format in ModelFormat::ALL {
        assert!(words.contains(format.name()), "{format}");
    }
}

/// The names are the ones the CLI and earlier releases take.
#[test]
fn names_are_stable() {
    let names: Vec<&str> = ModelFormat::ALL.iter().map(|f| f.name()).collect();
    for name in [
        "qwen3-coder",
        "glm",
        "kimi-k2",
        "deepseek",
        "harmony",
        "mistral",
        "llama3.1",
        "granite",
        "phi4",
        "xlam",
        "gemma",
        "hermes",
        "pythonic",
    ] {
        assert!(names.contains(&name), "{name}");
    }
    let json = serde_json::to_string(&ModelFormat::QwenXml).unwrap_or_default();
    assert_eq!(json, "\"qwen3-coder\"");
    let back: ModelFormat = serde_json::from_str("\"seed-oss\"").unwrap_or(ModelFormat::Hermes);
    assert_eq!(back, ModelFormat::SeedOss);
    assert!(serde_json::from_str::<ModelFormat>("\"qwen3coder\"").is_err());
}

#[test]
fn every_marker_start_begins_with_an_ascii_byte() {
    // `detect` finds a start by `memchr` of its first byte, as a `char`.
    for spec in super::FORMATS {
        for start in spec.marker_starts {
            assert!(
                start.first().is_some_and(u8::is_ascii) && start.len() <= 2,
                "{}: {start:?}",
                spec.name
            );
        }
    }
}

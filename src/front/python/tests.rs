//! The one-line reading of the common case ([`Reader::read_call_line`]) against the full
//! reading by regions and logical lines: the same extraction for every text of the corpora.

use crate::front::{read_text, Extraction, ReadOptions, Reader};
use crate::limits::Limits;

/// Every text of the corpora of model text: the call-position, model-output and model-format
/// corpora and the adversarial cases written out (`source`).
pub(crate) fn corpus() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = Vec::new();
    for file in [
        "tests/data/call_position.jsonl",
        "tests/data/model_outputs.jsonl",
        "tests/data/model_formats.jsonl",
        "tests/adversarial/cases.jsonl",
    ] {
        let body = std::fs::read_to_string(root.join(file)).unwrap();
        for line in body.lines().filter(|l| l.starts_with('{')) {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            for key in ["text", "output", "source"] {
                if let Some(text) = case[key].as_str() {
                    texts.push(text.to_string());
                }
            }
        }
    }
    // The edges of the one-line reading: what it takes, and the near misses it leaves.
    for text in [
        "add(a=1, b=2)",
        "add(a=1, b=2)  \n",
        " add(a=1, b=2)",
        "[add(a=1), multiply(a=2, b=3)]",
        "(add(a=1), multiply(a=2, b=3))",
        "(add(a=1),)",
        "[]",
        "()",
        "add(a=add(a=1))",
        "print(add(a=1))",
        "print([add(a=1), multiply(a=2, b=3)])",
        "math.hypot(x=3, y=4)",
        "Point(x=1, y=2)",
        "add(a=np.array([1, 2]))",
        "add(a=\")\", b='(')",
        "add(s=\"[INST]\")",
        "add(s=\"[TOOL_CALLS]\")",
        "add(s=\"</think>\")",
        "add(s='# no')",
        "add(a=1)  # multiply(a=9, b=9)",
        "éadd(a=1, b=2)",
        "add(a=1)(b=2)",
        "add(a=1) + multiply(a=2, b=3)",
        "add(a=1); multiply(a=2, b=3)",
        "[add(a=1)][add(a=",
        "add(a=1",
        "functools[{\"name\": \"add\", \"arguments\": {\"a\": 1}}]",
        "[{\"name\": \"add\", \"arguments\": {\"a\": 1}}]",
        "{'name': 'add', 'arguments': {'a': 1}}",
        "[add(a=1), {'name': 'add'}]",
        "add(a=1)\r",
        "lambda: add(a=1)",
        "(await add(a=1))",
        "not_a_tool(x=1)",
        "[not_a_tool(x=1), add(a=1)]",
        "add(**{'a': 1})",
        "add(*[1, 2])",
    ] {
        texts.push(text.to_string());
    }
    texts
}

fn read(text: &str, tools: &dyn Fn(&str) -> bool, options: ReadOptions, line: bool) -> Extraction {
    read_text(
        text,
        &Limits::default(),
        tools,
        &|_, _| None,
        options,
        crate::front::route::Reading::default(),
        line,
    )
}

#[test]
fn call_line_is_read_as_lines() {
    let demo = |n: &str| {
        [
            "add",
            "multiply",
            "get_weather",
            "search",
            "touch",
            "math.hypot",
        ]
        .contains(&n)
    };
    let every = |_: &str| true;
    let tight = Limits::default().max_calls(1);
    let mut taken = 0;
    for text in corpus() {
        for tools in [&demo as &dyn Fn(&str) -> bool, &every] {
            for lenient in [false, true] {
                let options = ReadOptions {
                    lenient,
                    ..ReadOptions::default()
                };
                assert_eq!(
                    read(&text, tools, options, true),
                    read(&text, tools, options, false),
                    "{text:?}"
                );
            }
            let one = |line| {
                read_text(
                    &text,
                    &tight,
                    tools,
                    &|_, _| None,
                    ReadOptions::default(),
                    crate::front::route::Reading::default(),
                    line,
                )
            };
            assert_eq!(one(true), one(false), "max_calls=1: {text:?}");
        }
        let limits = Limits::default();
        let mut reader = Reader::new(&text, &limits, &every, &|_, _| None, ReadOptions::default());
        taken += usize::from(reader.read_call_line());
    }
    // The comparison is not empty: many texts take the one-line reading.
    assert!(taken > 40, "{taken}");
}

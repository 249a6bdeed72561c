//! Kimi K3: XTML, calls in a `tools` channel built of special tokens, as its chat template
//! writes them and vLLM's `kimi_k3` parser reads them:
//!
//! ```text
//! <|open|>tools<|sep|><|open|>call tool="search" index="1"<|sep|><|open|>argument key="query" type="string"<|sep|>x<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>
//! ```
//!
//! Values are kept as written and read by their parameter's type (`invoke.rs`); attribute
//! values' `&quot;` and `&amp;` are read. The `think` channel (`<|open|>think<|sep|>`) is
//! reasoning.

use super::invoke::{invoke, Tags};
use super::scan::{sections, Out, Src};
use super::{ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::KimiK3,
    name: "kimi-k3",
    marker_starts: &[b"<|"],
    found_by_markers: true,
    holds_markers,
    read,
};

const TOOLS: &str = "<|open|>tools<|sep|>";
const END_TOOLS: &str = "<|close|>tools<|sep|>";
const TAGS: Tags = Tags {
    what: "Kimi K3",
    invoke: "<|open|>call",
    name: "tool",
    end_invoke: "<|close|>call<|sep|>",
    parameter: "<|open|>argument",
    key: "key",
    end_parameter: "<|close|>argument<|sep|>",
    tag_end: "<|sep|>",
    cdata: false,
};

fn holds_markers(text: &str) -> bool {
    text.contains(TOOLS)
}

fn read(text: &str, out: &mut Out) {
    sections(
        text,
        Src::ending_at(text, &[TOOLS]),
        &[TOOLS],
        (TAGS.invoke, &[END_TOOLS]),
        call,
        out,
    );
}

fn call(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    invoke(&TAGS, text, (start, start), out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::KimiK3;

    #[test]
    fn the_parser_s_documented_call() {
        // vLLM's kimi_k3 tool parser (its documented shape).
        let text = "<|open|>tools<|sep|>\n  <|open|>call tool=\"python\" index=\"1\"<|sep|>\n    <|open|>argument key=\"code\" type=\"string\"<|sep|>print(1)<|close|>argument<|sep|>\n    <|open|>argument key=\"opts\" type=\"object\"<|sep|>{\"a\":1}<|close|>argument<|sep|>\n  <|close|>call<|sep|>\n<|close|>tools<|sep|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["python"]);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("code", "print(1)"), ("opts", "{\"a\":1}")]
        );
    }

    #[test]
    fn a_response_then_calls_and_the_think_channel() {
        let text = "<|open|>think<|sep|>Maybe <|open|>tools<|sep|><|open|>call tool=\"multiply\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>?<|close|>think<|sep|><|open|>response<|sep|>On it.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"integer\"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|><|open|>call index=\"2\" tool=\"search\"<|sep|><|open|>argument type=\"string\" key=\"query\"<|sep|> K3 <|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "search"]);
        assert_eq!(args_text(&r.calls[1], text), [("query", " K3 ")]);
        assert_eq!(r.reasoning.len(), 1);
    }

    #[test]
    fn complete_at_the_call_s_close_and_cut_off() {
        let text =
            "<|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|close|>call<|sep|>";
        assert!(!is_broken(&read_as(F, text).calls[0]));
        let r = read_as(F, "<|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"integer\"<|sep|>1<|close|>arg");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
    }
}

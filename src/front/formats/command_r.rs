//! Command R7B and Command A (Cohere): a JSON list of calls between `<|START_ACTION|>` and
//! `<|END_ACTION|>`, each with its own id, as their chat templates write them and vLLM's
//! `cohere_command` parser reads them:
//!
//! ```text
//! <|START_THINKING|>I will look it up.<|END_THINKING|><|START_ACTION|>[
//!     {"tool_call_id": "0", "tool_name": "search", "parameters": {"query": "x"}}
//! ]<|END_ACTION|>
//! ```
//!
//! The `tool_call_id` is kept as the call's id. `<|START_THINKING|>` blocks are reasoning. A
//! call is complete where its object closes; the list's `]` and `<|END_ACTION|>` may be left
//! out when the text ends.

use super::scan::{
    char_end, cut, json_call_list_with, json_call_with, malformed, may_continue, skip_ws, span,
    Keys, Out, Src,
};
use super::{ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::CommandR,
    name: "command-r7b",
    marker_starts: &[b"<|"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Command R";
const START: &str = "<|START_ACTION|>";
const END: &str = "<|END_ACTION|>";
const KEYS: Keys = Keys {
    name: &["tool_name"],
    args: &["parameters"],
    id: &["tool_call_id"],
    other: &[],
};

fn holds_markers(text: &str) -> bool {
    text.contains(START)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[START]) {
        let after = start + START.len();
        out.markup(start, after, IgnoreReason::ChatToken);
        let i = skip_ws(b, after);
        let end = match b.get(i) {
            Some(b'[') => json_call_list_with(&KEYS, text, i, WHAT, out),
            Some(b'{') => json_call_with(&KEYS, text, i, WHAT, out),
            _ if may_continue(text, i, &["[", END]) => {
                if i < text.len() {
                    out.broken("", None, i, text.len(), cut(WHAT, "", END));
                }
                None
            }
            _ => {
                let error = malformed(
                    WHAT,
                    "",
                    "expected a JSON list of calls after `<|START_ACTION|>`",
                )
                .at(span(i, char_end(text, i)));
                let stop = super::scan::find(text, i, END).unwrap_or(text.len());
                out.broken("", None, i, stop.max(char_end(text, i)), error);
                Some(stop.max(char_end(text, i)))
            }
        };
        let Some(mut end) = end else {
            out.claim(start, text.len());
            break;
        };
        let close = skip_ws(b, end);
        if text[close..].starts_with(END) {
            out.markup(close, close + END.len(), IgnoreReason::ChatToken);
            end = close + END.len();
        }
        out.claim(start, end);
        pos = end;
    }
    src.report_reasoning(out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::CommandR;

    #[test]
    fn vllm_calls_with_their_ids() {
        // vLLM's tests/tool_parsers/test_cohere_command_tool_parser.py.
        let text = "<|START_THINKING|> i will call foo with query1<|END_THINKING|><|START_ACTION|>\n[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"foo\", \"parameters\": {\"query\": \"query1\"}}\n]\n<|END_ACTION|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["foo"]);
        assert_eq!(r.calls[0].id.as_deref(), Some("0"));
        assert_eq!(args_src(&r.calls[0], text), "{\"query\": \"query1\"}");
        assert_eq!(r.reasoning.len(), 1);
        let text = "<|START_THINKING|>first I think about foo<|END_THINKING|><|START_ACTION|>\n[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"foo\", \"parameters\": {\"query\": \"query1\"}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"bar\", \"parameters\": {\"x\": 42}}\n]\n<|END_ACTION|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["foo", "bar"]);
        assert_eq!(r.calls[1].id.as_deref(), Some("1"));
        for text in [
            "<|START_THINKING|>This is a rainbow <co>emoji: 🌈</co: 0:[1]><|END_THINKING|>\n<|START_RESPONSE|>foo <co>bar</co: 0:[1,2],1:[3,4]><|END_RESPONSE|>",
            "<|START_THINKING|>just think, no response<|END_THINKING|>",
        ] {
            assert!(read_as(F, text).calls.is_empty());
        }
    }

    #[test]
    fn llama_cpp_and_transformers_outputs() {
        // llama.cpp's test-chat.cpp (command-r7b) and transformers' Cohere response template.
        let text = "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"special_function\", \"parameters\": {\"arg1\": 1}}\n]<|END_ACTION|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function"]);
        assert_eq!(r.calls[0].id.as_deref(), Some("0"));
        let text = "<|START_THINKING|>I should call a tool.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"simple_tool\", \"parameters\": {\"temperature_format\": \"Celsius\"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>";
        let r = read_as(F, text);
        assert_eq!(
            args_src(&r.calls[0], text),
            "{\"temperature_format\": \"Celsius\"}"
        );
        let text = "<|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>";
        assert!(read_as(F, text).calls.is_empty());
    }

    #[test]
    fn complete_without_the_end_token_and_cut_off() {
        let text = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"add\", \"parameters\": {\"a\": 1}}]";
        let r = read_as(F, text);
        assert!(!is_broken(&r.calls[0]));
        let r = read_as(F, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"add\", \"parameters\": {\"a\": ");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        // The generic keys are not this format's.
        let r = read_as(
            F,
            "<|START_ACTION|>[{\"name\": \"add\", \"arguments\": {}}]<|END_ACTION|>",
        );
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn an_action_in_the_thinking_is_reasoning() {
        let text = "<|START_THINKING|>Maybe <|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"multiply\", \"parameters\": {}}]<|END_ACTION|><|END_THINKING|><|START_RESPONSE|>No.<|END_RESPONSE|>";
        assert!(read_as(F, text).calls.is_empty());
    }
}

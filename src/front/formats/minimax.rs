//! MiniMax-M2 (and M2.1, M2.5): calls as `<invoke>` tags in a `<minimax:tool_call>` section, as
//! its chat template writes them and vLLM's `minimax_m2` parser reads them:
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="city">Seattle</parameter>
//! <parameter name="days">5</parameter>
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! Values are kept as written (`invoke.rs`); `<think>` blocks are reasoning.

use super::invoke::{invoke, xml_tags, Tags};
use super::scan::{sections, Out, Src};
use super::{ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::MiniMaxM2,
    name: "minimax-m2",
    marker_starts: &[b"<m"],
    found_by_markers: true,
    holds_markers,
    read,
};

const SECTION: &str = "<minimax:tool_call>";
const END_SECTION: &str = "</minimax:tool_call>";
const TAGS: Tags = xml_tags(
    "MiniMax",
    ("<invoke", "</invoke>"),
    ("<parameter", "</parameter>"),
);

fn holds_markers(text: &str) -> bool {
    text.contains(SECTION)
}

fn read(text: &str, out: &mut Out) {
    sections(
        text,
        Src::new(text),
        &[SECTION],
        (TAGS.invoke, &[END_SECTION]),
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

    const F: ModelFormat = ModelFormat::MiniMaxM2;

    #[test]
    fn vllm_calls() {
        // vLLM's tests/tool_parsers/test_minimax_m2_tool_parser.py.
        let text = "Let me check. <minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"city\">Seattle</parameter><parameter name=\"days\">5</parameter></invoke></minimax:tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("city", "Seattle"), ("days", "5")]
        );
        let text = "<minimax:tool_call><invoke name=\"search_web\"><parameter name=\"query\">OpenAI</parameter></invoke><invoke name=\"search_web\"><parameter name=\"query\">Gemini</parameter></invoke></minimax:tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search_web", "search_web"]);
        assert_eq!(args_text(&r.calls[1], text), [("query", "Gemini")]);
    }

    #[test]
    fn the_guide_s_example_with_newlines_and_json_values() {
        // MiniMax's tool-calling guide.
        let text = "<minimax:tool_call>\n<invoke name=\"search_web\">\n<parameter name=\"query_tag\">[\"technology\", \"events\"]</parameter>\n<parameter name=\"query_list\">[\"\\\"OpenAI\\\" \\\"latest\\\" \\\"release\\\"\"]</parameter>\n</invoke>\n<invoke name=\"search_web\">\n<parameter name=\"query_tag\">[\"technology\", \"events\"]</parameter>\n<parameter name=\"query_list\">[\"\\\"Gemini\\\" \\\"latest\\\" \\\"release\\\"\"]</parameter>\n</invoke>\n</minimax:tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search_web", "search_web"]);
        assert_eq!(
            args_text(&r.calls[0], text)[0],
            ("query_tag", "[\"technology\", \"events\"]")
        );
    }

    #[test]
    fn llama_cpp_calls() {
        // llama.cpp's tests/chat-parsers/test-minimax-m2.cpp.
        let call = "<minimax:tool_call>\n<invoke name=\"special_function\">\n<parameter name=\"arg1\">1</parameter>\n</invoke>\n</minimax:tool_call>";
        for text in [
            call.to_string(),
            format!("I'm\nthinking</think>{call}"),
            format!("{call}Hello, world!\nWhat's up?"),
            format!("I'm\nthinking</think>{call}Hello, world!\nWhat's up?"),
            format!("I'm\nthinking\n</think>\n\nHello, world!\nWhat's up?\n\n{call}\n"),
            "<minimax:tool_call><invoke name=\"special_function\"><parameter name=\"arg1\">1</parameter></invoke></minimax:tool_call>".to_string(),
        ] {
            let r = read_as(F, &text);
            assert_eq!(names(&r), ["special_function"], "{text}");
            assert_eq!(args_text(&r.calls[0], &text), [("arg1", "1")]);
        }
        let text = "<minimax:tool_call>\n<invoke name=\"special_function_with_opt\">\n<parameter name=\"arg1\">1</parameter>\n<parameter name=\"arg2\">2</parameter>\n</invoke>\n</minimax:tool_call>";
        assert_eq!(
            args_text(&read_as(F, text).calls[0], text),
            [("arg1", "1"), ("arg2", "2")]
        );
    }

    #[test]
    fn values_are_kept_as_written() {
        let text = "<minimax:tool_call><invoke name='edit'><parameter name=\"old\">    if x:\n        return 1\n</parameter><parameter name=\"note\"> a </parameter></invoke></minimax:tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("old", "    if x:\n        return 1\n"), ("note", " a ")]
        );
    }

    #[test]
    fn complete_at_the_invoke_s_close_and_cut_off_with_its_name() {
        let text = "<think>Use <minimax:tool_call><invoke name=\"multiply\"></invoke></minimax:tool_call>?</think><minimax:tool_call>\n<invoke name=\"add\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert!(!is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<minimax:tool_call><invoke name=\"add\"><parameter name=\"a\">1",
        );
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<minimax:tool_call><invoke nam=\"add\"></invoke><invoke name=\"x\"><p>",
        );
        assert!(r.calls.iter().all(is_broken));
    }
}

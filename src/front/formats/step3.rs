//! Step3 (StepFun): `<steptml:invoke>` calls between full-width special tokens, as its chat
//! template writes them and vLLM's `step3` parser reads them:
//!
//! ```text
//! <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
//! <steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
//! ```
//!
//! Calls are read inside the section only, as vLLM reads them. The `function<｜tool_sep｜>` head
//! (with the name after it, in newer templates) may be left out; a `<｜tool_sep｜>` between
//! calls is markup. Values are kept as written (`invoke.rs`).
//! `<think>` blocks are reasoning.

use super::invoke::{invoke, xml_tags, Tags};
use super::scan::{char_end, ident_end, may_continue, sections, skip_ws, span, Out, Reading, Src};
use super::{ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Step3,
    name: "step3",
    marker_starts: &[b"<\xEF"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Step3";
const CALLS_BEGIN: &str = "<｜tool_calls_begin｜>";
const CALLS_END: &str = "<｜tool_calls_end｜>";
const CALL_BEGIN: &str = "<｜tool_call_begin｜>";
const CALL_END: &str = "<｜tool_call_end｜>";
const SEP: &str = "<｜tool_sep｜>";
const TAGS: Tags = xml_tags(
    WHAT,
    ("<steptml:invoke", "</steptml:invoke>"),
    ("<steptml:parameter", "</steptml:parameter>"),
);

fn holds_markers(text: &str) -> bool {
    text.contains(CALLS_BEGIN)
}

fn read(text: &str, out: &mut Out) {
    sections(
        text,
        Src::new(text),
        &[CALLS_BEGIN],
        (CALL_BEGIN, &[CALLS_END]),
        call,
        out,
    );
}

/// Read the call whose `<｜tool_call_begin｜>` is at `start`: complete at its
/// `</steptml:invoke>`, the `<｜tool_call_end｜>` (and a `<｜tool_sep｜>`) after it markup.
fn call(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, start + CALL_BEGIN.len());
    if text[i..].starts_with("function") {
        let sep = skip_ws(b, i + "function".len());
        if text[sep..].starts_with(SEP) {
            // The name the newer templates repeat before the invoke.
            i = skip_ws(b, ident_end(b, skip_ws(b, sep + SEP.len())));
        }
    }
    if !text[i..].starts_with(TAGS.invoke) {
        let call = Reading::new(text, WHAT, start, CALL_END);
        if may_continue(text, i, &["function", SEP, TAGS.invoke]) {
            return call.cut(out);
        }
        let problem = "expected `<steptml:invoke name=…>`";
        return call.malformed(problem, span(i, char_end(text, i)), i, out);
    }
    let mut end = invoke(&TAGS, text, (start, i), out)?;
    for token in [CALL_END, SEP] {
        let k = skip_ws(b, end);
        if text[k..].starts_with(token) {
            out.markup(k, k + token.len(), IgnoreReason::ChatToken);
            out.claim(start, k + token.len());
            end = k + token.len();
        }
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::Step3;

    #[test]
    fn vllm_calls() {
        // vLLM's tests/tool_parsers/test_step3_tool_parser.py.
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(args_text(&r.calls[0], text), [("city", "Tokyo")]);
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke name=\"get_time\"><steptml:parameter name=\"timezone\">Asia/Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "get_time"]);
        assert_eq!(r.claimed.len(), 1);
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"refresh\"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
        assert_eq!(read_as(F, text).calls[0].args, FormatArgs::Text(Vec::new()));
        let text = "Let me check the weather for you.\n\n<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>\n\nI'll get that information.";
        assert_eq!(names(&read_as(F, text)), ["get_weather"]);
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"test_function\"><steptml:parameter name=\"quoted\">He said \"hello\"</steptml:parameter><steptml:parameter name=\"path\">C:\\Users\\file.txt</steptml:parameter><steptml:parameter name=\"newline\">line1\nline2</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [
                ("quoted", "He said \"hello\""),
                ("path", "C:\\Users\\file.txt"),
                ("newline", "line1\nline2")
            ]
        );
    }

    #[test]
    fn values_keep_their_whitespace_after_a_function_head() {
        // vLLM's TestStep3ParameterWhitespace.
        for value in [
            "    if x:",
            "return 1\n",
            "    if x:\n        return 1\n",
            "hello ",
            "hello\u{a0}",
        ] {
            let text = format!("<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>edit_file\n<steptml:invoke name=\"edit_file\"><steptml:parameter name=\"old_string\">{value}</steptml:parameter><steptml:parameter name=\"indent\"> 4 </steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>");
            let r = read_as(F, &text);
            assert_eq!(
                args_text(&r.calls[0], &text),
                [("old_string", value), ("indent", " 4 ")]
            );
        }
    }

    #[test]
    fn malformed_cut_off_and_reasoning() {
        // vLLM's malformed inputs: cut inside the invoke; a call outside a section (no call).
        let r = read_as(
            F,
            "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"func\">",
        );
        assert_eq!(names(&r), ["func"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, "<｜tool_call_begin｜><steptml:invoke name=\"func\"></steptml:invoke><｜tool_call_end｜>");
        assert!(r.calls.is_empty());
        let r = read_as(F, "<think>maybe <｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"func\"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜></think>No.");
        assert!(r.calls.is_empty());
    }
}

//! Qwen3-Coder: XML-style calls whose values are written as text, as its chat template writes
//! them and vLLM's `qwen3_coder` parser reads them:
//!
//! ```text
//! <tool_call>
//! <function=multiply>
//! <parameter=a>
//! 6
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! A value loses one leading and one trailing newline. A `</parameter>` ends the value only
//! when the next thing is `<parameter=` or `</function>` (so a value may hold the text
//! `</parameter>`). The `<tool_call>` wrapper may be left out. A parameter given twice is an
//! error (no silent choice).

use super::scan::{char_end, malformed, may_continue, skip_ws, slice, span, Out, Reading, Src};
use super::{FormatArgs, TextArg};
use crate::front::IgnoreReason;

const WHAT: &str = "Qwen3-Coder";
const FUNCTION: &str = "<function=";
const PARAMETER: &str = "<parameter=";
const END_PARAMETER: &str = "</parameter>";
const END_FUNCTION: &str = "</function>";
const END_TOOL_CALL: &str = "</tool_call>";

pub(super) fn read(text: &str, out: &mut Out) {
    let src = Src::new(text, "<think>", "</think>");
    src.report_reasoning(out);
    let mut pos = 0;
    while let Some((start, which)) = src.find_any(pos, &["<tool_call>", FUNCTION]) {
        match call(text, start, which == 0, out) {
            Some(end) => pos = end,
            None => return,
        }
    }
}

/// Read the call at `start` (`<tool_call>` when `wrapped`, else `<function=`); where to go on,
/// or `None` when the text ends inside it.
///
/// Long (about 110 lines) for a reason: one scan of the call's `<parameter=...>` tags, whose
/// steps share the position, the call's own close and what was read so far.
fn call(text: &str, start: usize, wrapped: bool, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let closing = if wrapped { END_TOOL_CALL } else { END_FUNCTION };
    // A malformed call ends at its closing tag, or the text's end.
    let call = Reading::new(text, WHAT, start, closing);
    let func = if wrapped {
        skip_ws(b, start + "<tool_call>".len())
    } else {
        start
    };
    if !text[func..].starts_with(FUNCTION) {
        if may_continue(text, func, &[FUNCTION]) {
            return call.cut(out);
        }
        let at = span(func, char_end(text, func));
        return call.malformed("expected `<function=NAME>`", at, func, out);
    }
    let name_start = func + FUNCTION.len();
    let problem = "the function name is missing or holds a blank";
    let name_close = match call.tag_name(name_start, problem, out) {
        Ok(close) => close,
        Err(next) => return next,
    };
    let call = call.named(name_start, name_close);
    let (name, name_span) = (call.name, call.name_span);
    let mut args: Vec<TextArg> = Vec::new();
    let mut i = name_close + 1;
    let function_end = loop {
        i = skip_ws(b, i);
        let rest = &text[i..];
        if rest.starts_with(END_FUNCTION) {
            break i + END_FUNCTION.len();
        }
        if !rest.starts_with(PARAMETER) {
            if may_continue(text, i, &[END_FUNCTION, PARAMETER]) {
                return call.cut(out);
            }
            let problem = "expected `<parameter=NAME>` or `</function>`";
            return call.malformed(problem, span(i, char_end(text, i)), i, out);
        }
        let key_start = i + PARAMETER.len();
        let problem = "a parameter name is missing or holds a blank";
        let key_close = match call.tag_name(key_start, problem, out) {
            Ok(close) => close,
            Err(next) => return next,
        };
        let key = &text[key_start..key_close];
        // The value ends at the first of: a `</parameter>` followed by `<parameter=` or
        // `</function>`; a `<parameter=` opening a line, or a `</function>` followed by
        // `</tool_call>`, when the model left `</parameter>` out (as vLLM reads them).
        let value_start = key_close + 1;
        let mut from = value_start;
        let ends = [END_PARAMETER, "\n<parameter=", END_FUNCTION];
        let (value_end, next) = loop {
            let Some((q, which)) = Src::plain(text).find_any(from, &ends) else {
                return call.cut(out);
            };
            let (after, structure): (usize, &[&str]) = match which {
                0 => (q + END_PARAMETER.len(), &[PARAMETER, END_FUNCTION]),
                1 => break (q + 1, q + 1),
                _ => (q + END_FUNCTION.len(), &[END_TOOL_CALL]),
            };
            let k = skip_ws(b, after);
            if structure.iter().any(|t| text[k..].starts_with(t)) {
                break if which == 0 { (q, after) } else { (q, q) };
            }
            if may_continue(text, k, structure) {
                return call.cut(out);
            }
            from = after;
        };
        let (mut a, mut z) = (value_start, value_end);
        if b.get(a) == Some(&b'\n') {
            a += 1;
        }
        if z > a && b[z - 1] == b'\n' {
            z -= 1;
        }
        if let Some(first) = args.iter().find(|arg| arg.key == key) {
            let problem = format!("parameter `{key}` is given twice");
            let at = first.key_span.to(span(key_start, key_close));
            return call.malformed(&problem, at, value_end, out);
        }
        args.push(TextArg {
            key: key.to_string(),
            key_span: span(key_start, key_close),
            value: slice(text, a, z),
            value_span: span(a, z),
        });
        i = next;
    };
    let end = if wrapped {
        let j = skip_ws(b, function_end);
        if text[j..].starts_with(END_TOOL_CALL) {
            j + END_TOOL_CALL.len()
        } else if may_continue(text, j, &[END_TOOL_CALL]) {
            return call.cut(out);
        } else {
            let error = malformed(WHAT, name, "expected `</tool_call>` after `</function>`")
                .at(span(j, char_end(text, j)));
            out.broken(name, name_span, start, function_end, error);
            return Some(function_end);
        }
    } else {
        // A bare function is often followed by the `</tool_call>` of the opener left out.
        let j = skip_ws(b, function_end);
        if text[j..].starts_with(END_TOOL_CALL) {
            out.markup(j, j + END_TOOL_CALL.len(), IgnoreReason::Tag);
            out.claim(start, j + END_TOOL_CALL.len());
        }
        function_end
    };
    out.call(name, name_span, (start, end), FormatArgs::Text(args), None);
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::QwenXml;

    #[test]
    fn one_call_with_values_as_text() {
        let text = "<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["multiply"]);
        assert_eq!(args_text(&r.calls[0], text), [("a", "6"), ("b", "7")]);
        assert_eq!(r.calls[0].span.end as usize, text.len());
    }

    #[test]
    fn several_calls_prose_and_multiline_values() {
        let text = "I'll look both up.\n<tool_call>\n<function=search>\n<parameter=query>\nrust\nlifetimes\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search", "get_weather"]);
        assert_eq!(args_text(&r.calls[0], text), [("query", "rust\nlifetimes")]);
        assert_eq!(
            args_text(&r.calls[1], text),
            [("city", "Paris"), ("unit", "celsius")]
        );
        // The prose is not claimed.
        assert!(r.claimed[0].start > 0);
    }

    #[test]
    fn a_value_may_hold_a_closing_tag() {
        let text = "<tool_call>\n<function=search>\n<parameter=query>\na </parameter> b\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("query", "a </parameter> b")]
        );
    }

    #[test]
    fn a_missing_closing_parameter_tag_ends_at_the_next_tag() {
        // vLLM's test_extract_tool_calls_missing_closing_parameter_tag, and vLLM issue 57699.
        let text = "Let me check:\n<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("city", "Dallas"), ("unit", "fahrenheit")]
        );
        let text = "<tool_call>\n<function=set>\n<parameter=body>\n{\"on\": true}\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(args_text(&r.calls[0], text), [("body", "{\"on\": true}")]);
        assert_eq!(r.calls[0].span.end as usize, text.len());
    }

    #[test]
    fn a_bare_function_and_its_stray_closing_tag() {
        let text = "I'll list them.\n\n<function=glob>\n<parameter=pattern>\n**/*.md\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(args_text(&r.calls[0], text), [("pattern", "**/*.md")]);
        assert_eq!(r.markup.len(), 1);
        assert_eq!(r.claimed[0].end as usize, text.len());
    }

    #[test]
    fn unwrapped_function_and_no_parameters() {
        let text = "<function=get_time>\n</function>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_time"]);
        assert_eq!(r.calls[0].args, FormatArgs::Text(Vec::new()));
    }

    #[test]
    fn cut_off_call_keeps_its_name() {
        let text =
            "<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["multiply"]);
        assert!(matches!(&r.calls[0].args, FormatArgs::Broken(e) if e.message.contains("cut off")));
    }

    #[test]
    fn malformed_and_duplicate_parameters_are_broken() {
        let text = "<tool_call>\n<function=add>\nnot a parameter\n</function>\n</tool_call>\n<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(r.calls.len(), 2);
        for call in &r.calls {
            assert_eq!(call.name, "add");
            assert!(matches!(&call.args, FormatArgs::Broken(e) if e.message.contains("malformed")));
        }
    }

    #[test]
    fn calls_in_a_think_block_are_reasoning() {
        let text = "<think>maybe <tool_call>\n<function=add>\n</function>\n</tool_call></think>\nNo tool needed.";
        let r = read_as(F, text);
        assert!(r.calls.is_empty());
        assert_eq!(r.reasoning.len(), 1);
    }

    #[test]
    fn nothing_of_the_format_reads_as_nothing() {
        let r = read_as(F, "The answer is 42.");
        assert_eq!(r, Default::default());
    }
}

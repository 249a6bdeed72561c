//! Qwen3-Coder: XML-style calls whose values are written as text, as its chat template writes
//! them and vLLM's `qwen3_coder` parser reads them (Seed-OSS writes the same calls in its own
//! wrapper, `seed_oss.rs`):
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
//! A value is kept exactly as written but for the newlines the template writes around it: one
//! after `<parameter=…>` and one before `</parameter>`, taken off as a pair (a value written
//! inline, `<parameter=a>6</parameter>`, keeps its own newlines; code keeps its indentation).
//! A `</parameter>` ends the value only when the next thing is `<parameter=` or `</function>`
//! (so a value may hold the text `</parameter>`). A call is complete at its `</function>`: the
//! wrapper may be left out or left open, and one wrapper may hold several functions. A
//! parameter given twice is an error (no silent choice).

use super::scan::{char_end, may_continue, skip_ws, slice, span, Out, Reading, Src};
use super::{FormatArgs, ModelFormat, Spec, TextArg};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::QwenXml,
    name: "qwen3-coder",
    marker_starts: &[b"<f"],
    found_by_markers: true,
    holds_markers,
    read,
};

const QWEN: Wrapper = Wrapper {
    what: "Qwen3-Coder",
    open: "<tool_call>",
    close: "</tool_call>",
};
const FUNCTION: &str = "<function=";
const PARAMETER: &str = "<parameter=";
const END_PARAMETER: &str = "</parameter>";
const END_FUNCTION: &str = "</function>";

/// The tags a format wraps its functions in.
pub(super) struct Wrapper {
    pub what: &'static str,
    pub open: &'static str,
    pub close: &'static str,
}

/// A `<function=NAME>` tag followed by `<parameter=` or `</function>`.
pub(super) fn holds_markers(text: &str) -> bool {
    let b = text.as_bytes();
    super::scan::function_tags(text).any(|(_, body)| {
        let rest = &text[skip_ws(b, body)..];
        rest.starts_with(PARAMETER) || rest.starts_with(END_FUNCTION)
    })
}

fn read(text: &str, out: &mut Out) {
    read_as(&QWEN, text, &mut Src::new(text), out);
}

/// Read the functions of `text`, wrapped in `wrapper` or bare.
pub(super) fn read_as(wrapper: &Wrapper, text: &str, src: &mut Src<'_>, out: &mut Out) {
    let mut pos = 0;
    while let Some((start, which)) = src.find_any(pos, &[wrapper.open, FUNCTION]) {
        if which == 0 {
            if let Some(end) = json_body_end(text, start + wrapper.open.len()) {
                pos = end;
                continue;
            }
        }
        match call(wrapper, text, start, which == 0, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Where the JSON body after a `<tool_call>` tag ending at `body` ends, when it has one: that
/// is another format's call (Hermes), whose strings are its own, and not this reader's to read.
pub(super) fn json_body_end(text: &str, body: usize) -> Option<usize> {
    let b = text.as_bytes();
    let at = skip_ws(b, body);
    (b.get(at) == Some(&b'{')).then(|| super::scan::json_end(b, at).unwrap_or(b.len()))
}

/// Read the call at `start` (the wrapper's opening tag when `wrapped`, else `<function=`);
/// where to go on, or `None` when the text ends inside it.
///
/// Long (about 110 lines) for a reason: one scan of the call's `<parameter=...>` tags, whose
/// steps share the position, the call's own close and what was read so far.
fn call(
    wrapper: &Wrapper,
    text: &str,
    start: usize,
    wrapped: bool,
    out: &mut Out,
) -> Option<usize> {
    let b = text.as_bytes();
    // A malformed call ends at its closing tag, or the text's end.
    let call = Reading::new(text, wrapper.what, start, END_FUNCTION);
    let func = if wrapped {
        skip_ws(b, start + wrapper.open.len())
    } else {
        start
    };
    if !text[func..].starts_with(FUNCTION) {
        if may_continue(text, func, &[FUNCTION]) {
            return call.cut(out);
        }
        let at = span(func, char_end(text, func));
        let call = Reading {
            closing: wrapper.close,
            ..call
        };
        return call.malformed("expected `<function=NAME>`", at, func, out);
    }
    let name_start = func + FUNCTION.len();
    let problem = "the function name is missing or holds a blank";
    let name_close = match call.tag_name(name_start, problem, out) {
        Ok(close) => close,
        Err(next) => return next,
    };
    let call = call.named(name_start, name_close);
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
        // the wrapper's close, when the model left `</parameter>` out (as vLLM reads them).
        let value_start = key_close + 1;
        let mut from = value_start;
        let ends = [END_PARAMETER, "\n<parameter=", END_FUNCTION];
        let (value_end, next) = loop {
            let Some((q, which)) = Src::plain(text).find_any(from, &ends) else {
                return call.cut(out);
            };
            let close = [wrapper.close];
            let (after, structure): (usize, &[&str]) = match which {
                0 => (q + END_PARAMETER.len(), &[PARAMETER, END_FUNCTION]),
                1 => break (q + 1, q + 1),
                _ => (q + END_FUNCTION.len(), &close),
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
        let (a, z) = unwrap_newlines(b, value_start, value_end);
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
            quoted: false,
        });
        i = next;
    };
    out.call(
        call.name,
        call.name_span,
        (start, function_end),
        FormatArgs::Text(args),
        None,
    );
    // The wrapper's close (also the stray close of a bare function whose opener was left
    // out) is the format's markup.
    let j = skip_ws(b, function_end);
    if text[j..].starts_with(wrapper.close) {
        out.markup(j, j + wrapper.close.len(), IgnoreReason::Tag);
        out.claim(start, j + wrapper.close.len());
        return Some(j + wrapper.close.len());
    }
    Some(function_end)
}

/// The value written between `a` and `z`: the newline after `<parameter=…>` and the one
/// before `</parameter>`, which the template writes, taken off as a pair.
fn unwrap_newlines(b: &[u8], a: usize, z: usize) -> (usize, usize) {
    let lead = if b[a..z].starts_with(b"\r\n") {
        2
    } else {
        usize::from(b[a..z].starts_with(b"\n"))
    };
    if lead == 0 {
        return (a, z);
    }
    let trail = if b[a + lead..z].ends_with(b"\r\n") {
        2
    } else {
        usize::from(b[a + lead..z].ends_with(b"\n"))
    };
    (a + lead, z - trail)
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
        assert!(text[..r.calls[0].span.end as usize].ends_with("</function>"));
        assert_eq!(r.claimed[0].end as usize, text.len());
    }

    #[test]
    fn values_keep_their_own_newlines() {
        // Only the template's pair of newlines around a value is syntax.
        let text = "<tool_call>\n<function=write>\n<parameter=code>\ndef f():\n    return 1\n\n</parameter>\n<parameter=inline>  x\n</parameter>\n<parameter=n>\n\n</parameter>\n</function>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [
                ("code", "def f():\n    return 1\n"),
                ("inline", "  x\n"),
                ("n", "")
            ]
        );
    }

    #[test]
    fn complete_at_its_function_s_close_and_several_in_one_wrapper() {
        let text = "<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n</function>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert!(!super::super::tests::is_broken(&r.calls[0]));
        let text = "<tool_call>\n<function=add>\n</function>\n<function=multiply>\n</function>\n</tool_call>";
        assert_eq!(names(&read_as(F, text)), ["add", "multiply"]);
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
        assert_eq!(r.claimed[0].end as usize, text.len());
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

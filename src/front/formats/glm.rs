//! GLM-4.5, 4.6 and 4.7: the name after `<tool_call>`, then keys and values as text, as the
//! models' chat template writes them and vLLM's `glm45` parser reads them:
//!
//! ```text
//! <tool_call>add
//! <arg_key>a</arg_key>
//! <arg_value>1</arg_value>
//! </tool_call>
//! ```
//!
//! (GLM-4.7 writes no newline after the name.) Values are kept as written (the template writes
//! no newline inside `<arg_value>`); a key given twice is an error. A call whose last value is
//! closed when the text ends is complete without its `</tool_call>`.

use super::scan::{
    char_end, cut, find, malformed, may_continue, skip_ws, slice, span, trim, Out, Src,
};
use super::{FormatArgs, ModelFormat, Spec, TextArg};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Glm,
    name: "glm",
    marker_starts: &[b"<t"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "GLM";
const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
const KEY: &str = "<arg_key>";
const END_KEY: &str = "</arg_key>";
const VALUE: &str = "<arg_value>";
const END_VALUE: &str = "</arg_value>";

/// A `<tool_call>` followed by a name and then `<arg_key>` or `</tool_call>` (a call with no
/// arguments), as no other format writes it.
fn holds_markers(text: &str) -> bool {
    super::tag_then(text, |rest| {
        let name = rest
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
            .count();
        let after = &rest[skip_ws(rest.as_bytes(), name)..];
        name > 0 && (after.starts_with(KEY) || after.starts_with(CLOSE))
    })
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[OPEN]) {
        if let Some(end) = super::qwen_xml::json_body_end(text, start + OPEN.len()) {
            pos = end;
            continue;
        }
        match call(text, start, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the call at `start`; where to go on, or `None` when the text ends inside it.
///
/// Long (about 100 lines) for a reason: one scan of the call's keys and values, whose steps
/// share the position, the name and the arguments read so far.
fn call(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let skip_to = |from: usize| find(text, from, CLOSE).map(|p| p + CLOSE.len());
    let name_from = start + OPEN.len();
    // The name runs to the line's end or the first tag.
    let line_end = text[name_from..].find(['\n', '<']).map(|p| name_from + p);
    let Some(name_stop) = line_end else {
        out.broken("", None, start, text.len(), cut(WHAT, "", CLOSE));
        return None;
    };
    let (a, z) = trim(b, name_from, name_stop);
    let name = &text[a..z];
    let name_span = Some(span(a, z));
    if name.is_empty() || name.contains(char::is_whitespace) || name.starts_with('{') {
        if name.is_empty() && may_continue(text, name_stop, &[CLOSE]) {
            out.broken("", None, start, text.len(), cut(WHAT, "", CLOSE));
            return None;
        }
        let error = malformed(WHAT, "", "expected the function's name after `<tool_call>`")
            .at(span(a, z.max(char_end(text, a))));
        let end = skip_to(name_from);
        out.broken("", None, start, end.unwrap_or(text.len()), error);
        return end;
    }
    let mut args: Vec<TextArg> = Vec::new();
    let mut i = name_stop;
    // Where the content read so far ends: the call's stretch, its close left out.
    let mut whole = name_stop;
    loop {
        i = skip_ws(b, i);
        let rest = &text[i..];
        if rest.starts_with(CLOSE) {
            // The call is complete where its content is; its close is the format's markup.
            out.markup(i, i + CLOSE.len(), IgnoreReason::Tag);
            out.claim(start, i + CLOSE.len());
            out.call(
                name,
                name_span,
                (start, whole),
                FormatArgs::Text(args),
                None,
            );
            return Some(i + CLOSE.len());
        }
        if CLOSE.starts_with(rest) {
            // The text ends after a complete argument (or the name's line), maybe inside
            // the close: the call is complete without its `</tool_call>`.
            out.claim(start, text.len());
            out.call(
                name,
                name_span,
                (start, whole),
                FormatArgs::Text(args),
                None,
            );
            return None;
        }
        if !rest.starts_with(KEY) {
            if may_continue(text, i, &[CLOSE, KEY]) {
                out.broken(name, name_span, start, text.len(), cut(WHAT, name, CLOSE));
                return None;
            }
            let error = malformed(WHAT, name, "expected `<arg_key>` or `</tool_call>`")
                .at(span(i, char_end(text, i)));
            let end = skip_to(i);
            out.broken(name, name_span, start, end.unwrap_or(text.len()), error);
            return end;
        }
        let key_start = i + KEY.len();
        let Some(key_end) = find(text, key_start, END_KEY) else {
            out.broken(name, name_span, start, text.len(), cut(WHAT, name, CLOSE));
            return None;
        };
        let (ka, kz) = trim(b, key_start, key_end);
        let value_tag = skip_ws(b, key_end + END_KEY.len());
        if !text[value_tag..].starts_with(VALUE) {
            if may_continue(text, value_tag, &[VALUE]) {
                out.broken(name, name_span, start, text.len(), cut(WHAT, name, CLOSE));
                return None;
            }
            let error = malformed(WHAT, name, "expected `<arg_value>` after `</arg_key>`")
                .at(span(value_tag, char_end(text, value_tag)));
            let end = skip_to(value_tag);
            out.broken(name, name_span, start, end.unwrap_or(text.len()), error);
            return end;
        }
        let value_start = value_tag + VALUE.len();
        let Some(value_end) = find(text, value_start, END_VALUE) else {
            out.broken(name, name_span, start, text.len(), cut(WHAT, name, CLOSE));
            return None;
        };
        let key = &text[ka..kz];
        if let Some(first) = args.iter().find(|arg| arg.key == key) {
            let error = malformed(WHAT, name, &format!("argument `{key}` is given twice"))
                .at(first.key_span.to(span(ka, kz)));
            let end = skip_to(value_end);
            out.broken(name, name_span, start, end.unwrap_or(text.len()), error);
            return end;
        }
        args.push(TextArg {
            key: key.to_string(),
            key_span: span(ka, kz),
            value: slice(text, value_start, value_end),
            value_span: span(value_start, value_end),
            quoted: false,
        });
        i = value_end + END_VALUE.len();
        whole = i;
    }
}

/// Whether a call whose own text is `own`, with `rest` after it so far, may still grow: a GLM
/// call is complete without its `</tool_call>` once its last value closes, so one that reaches
/// the end of the text so far may get more arguments; see [`super::may_go_on`].
pub(super) fn goes_on(own: &str, rest: &str) -> bool {
    own.starts_with('<') && own.trim_end().ends_with("</arg_value>") && rest.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Glm;

    #[test]
    fn one_call() {
        let text = "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert_eq!(args_text(&r.calls[0], text), [("a", "1"), ("b", "2")]);
    }

    #[test]
    fn several_calls_glm47_style_and_prose() {
        let text = "Checking both.\n<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call><tool_call>search<arg_key>query</arg_key><arg_value>[\"a\", 1]</arg_value></tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "search"]);
        assert_eq!(args_text(&r.calls[1], text), [("query", "[\"a\", 1]")]);
    }

    #[test]
    fn cut_off_keeps_the_name() {
        let r = read_as(F, "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn malformed_and_duplicates_are_broken() {
        let text = "<tool_call>add\nhello</tool_call><tool_call>add\n<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>a</arg_key><arg_value>2</arg_value></tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "add"]);
        assert!(r.calls.iter().all(is_broken));
    }

    #[test]
    fn a_call_with_no_arguments_after_reasoning_is_glm() {
        let text = "<think>I need the time.</think>\n<tool_call>get_time</tool_call>";
        assert_eq!(super::super::detect(text), [F]);
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_time"]);
        assert_eq!(r.calls[0].args, super::super::FormatArgs::Text(Vec::new()));
        // A Hermes tag is not GLM's.
        assert!(!super::super::detect("<tool_call>{\"name\": \"f\"}</tool_call>").contains(&F));
    }

    #[test]
    fn complete_when_the_text_ends_after_a_value() {
        let text = "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool";
        let r = read_as(F, text);
        assert_eq!(args_text(&r.calls[0], text), [("a", "1")]);
        assert!(!is_broken(&r.calls[0]));
    }

    #[test]
    fn think_blocks_and_plain_text_hold_no_calls() {
        let r = read_as(F, "<think><tool_call>add\n</tool_call></think>Done.");
        assert!(r.calls.is_empty());
        assert_eq!(r.reasoning.len(), 1);
        assert_eq!(read_as(F, "no calls here"), Default::default());
    }
}

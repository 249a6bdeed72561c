//! DeepSeek V3, R1 and V3.1: calls between full-width special tokens, as their chat templates
//! write them and vLLM's `deepseek_v3` and `deepseek_v31` parsers read them. V3 and R1:
//!
//! ```text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add
//! ```json
//! {"a": 1}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ```
//!
//! and V3.1: `<｜tool▁call▁begin｜>add<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>`. R1's
//! `<think>` block is reasoning.

use super::scan::{cut, find, malformed, section, skip_ws, span, trim, Out, Src};
use super::{FormatArgs, ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::DeepSeek,
    name: "deepseek",
    marker_starts: &[b"<\xEF"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "DeepSeek";
const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const CALLS_END: &str = "<｜tool▁calls▁end｜>";
const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const SEP: &str = "<｜tool▁sep｜>";
const CALL_END: &str = "<｜tool▁call▁end｜>";

fn holds_markers(text: &str) -> bool {
    text.contains(CALL_BEGIN)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while let Some((start, which)) = src.find_any(pos, &[CALLS_BEGIN, CALL_BEGIN]) {
        if which == 1 {
            match call(text, start, out) {
                Some(end) => pos = end,
                None => break,
            }
            continue;
        }
        let token = (start, start + CALLS_BEGIN.len());
        match section(text, &mut src, token, (CALL_BEGIN, &[CALLS_END]), call, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the call whose `<｜tool▁call▁begin｜>` is at `start`.
fn call(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let head = start + CALL_BEGIN.len();
    let Some(end_token) = find(text, head, CALL_END) else {
        // Cut off: the name, if it was read whole.
        let (name, name_span) = match find(text, head, SEP) {
            Some(sep) => {
                let (name, name_span, _) = name_and_body(text, head, sep, text.len());
                let complete = name_span.is_some_and(|s| (s.end as usize) < text.len());
                if complete {
                    (name, name_span)
                } else {
                    ("", None)
                }
            }
            None => ("", None),
        };
        out.broken(
            name,
            name_span,
            start,
            text.len(),
            cut(WHAT, name, CALL_END),
        );
        return None;
    };
    let end = end_token + CALL_END.len();
    let Some(sep) = text[head..end_token].find(SEP).map(|p| head + p) else {
        let error = malformed(WHAT, "", "no `<｜tool▁sep｜>`").at(span(head, end_token));
        out.broken("", None, start, end, error);
        return Some(end);
    };
    let (name, name_span, body) = name_and_body(text, head, sep, end_token);
    let Some((a, z)) = body else {
        let error = malformed(WHAT, name, "the arguments are not in a ```json block")
            .at(span(sep, end_token));
        out.broken(name, name_span, start, end, error);
        return Some(end);
    };
    if name.is_empty() {
        let error = malformed(WHAT, "", "no function name").at(span(head, end_token));
        out.broken("", None, start, end, error);
        return Some(end);
    }
    let args = if a == z {
        FormatArgs::Text(Vec::new())
    } else {
        FormatArgs::Json(span(a, z))
    };
    out.call(name, name_span, (start, end), args, None);
    Some(end)
}

/// The name and the arguments' stretch of a call whose head runs from `head` to the separator
/// at `sep` and whose body from there to `stop`. V3 and R1 write the type (`function`) before
/// the separator and the name on the body's first line, the arguments fenced; V3.1 the name
/// before it. `None` for the body when a V3 body has no fence.
fn name_and_body(
    text: &str,
    head: usize,
    sep: usize,
    stop: usize,
) -> (&str, Option<crate::error::Span>, Option<(usize, usize)>) {
    let b = text.as_bytes();
    let (ha, hz) = trim(b, head, sep);
    let body = sep + SEP.len();
    let first = skip_ws(b, body);
    let v31 = &text[ha..hz] != "function" || b.get(first) == Some(&b'{');
    if v31 {
        let name = &text[ha..hz];
        let name_span = Some(span(ha, hz)).filter(|_| !name.is_empty());
        return (name, name_span, Some(trim(b, body, stop)));
    }
    let line_end = find(text, body, "\n").filter(|p| *p < stop).unwrap_or(stop);
    let (na, nz) = trim(b, body, line_end);
    let name = &text[na..nz];
    let name_span = Some(span(na, nz)).filter(|_| !name.is_empty());
    let (ba, bz) = trim(b, line_end, stop);
    let inner = &text[ba..bz];
    let fenced = inner
        .strip_prefix("```json")
        .or_else(|| inner.strip_prefix("```"))
        .and_then(|s| s.strip_suffix("```"));
    let args = fenced.map(|s| {
        let from = bz - 3 - s.len();
        trim(b, from, bz - 3)
    });
    (name, name_span, args)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::DeepSeek;

    #[test]
    fn v3_call_with_a_fenced_object() {
        let text = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"city\": \"Tokyo\"}");
    }

    #[test]
    fn v31_calls_and_r1_reasoning() {
        let text = "<think>Maybe <｜tool▁call▁begin｜>multiply<｜tool▁sep｜>{}<｜tool▁call▁end｜></think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 1, \"b\": 2}<｜tool▁call▁end｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"query\": \"x\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "search"]);
        assert_eq!(r.reasoning.len(), 1);
        assert_eq!(args_src(&r.calls[1], text), "{\"query\": \"x\"}");
    }

    #[test]
    fn cut_off_keeps_the_name() {
        let r = read_as(F, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{\"a\": 1");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn a_body_without_its_fence_is_broken() {
        let r = read_as(
            F,
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>add\na=1<｜tool▁call▁end｜>",
        );
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "The sum is 3."), Default::default());
    }
}

//! Gemma: calls as Python in a ```` ```tool_code ```` block, as Google's function-calling guide
//! for Gemma asks (and `print(...)` around a call, the form it shows, is looked through):
//!
//! ````text
//! ```tool_code
//! print(get_weather(city="Paris"))
//! ```
//! ````
//!
//! Each call is handed on as Python call text; anything else in the block is a broken call.

use super::scan::{
    char_end, cut, find, malformed, may_continue, python_call, skip_ws, span, Out, PyCall, Src,
};
use super::{FormatArgs, ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Gemma,
    name: "gemma",
    marker_starts: &[b"``"],
    found_by_markers: false,
    holds_markers,
    read,
};

const WHAT: &str = "Gemma";
const OPEN: &str = "```tool_code";
const CLOSE: &str = "```";

fn holds_markers(text: &str) -> bool {
    text.contains(OPEN)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[OPEN]) {
        match block(text, start, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the block whose fence is at `start`.
fn block(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let tag_end = start + OPEN.len();
    out.markup(start, tag_end, IgnoreReason::Fence);
    let mut i = tag_end;
    loop {
        i = skip_ws(b, i);
        if text[i..].starts_with(CLOSE) {
            out.markup(i, i + CLOSE.len(), IgnoreReason::Fence);
            out.claim(start, i + CLOSE.len());
            return Some(i + CLOSE.len());
        }
        match python_call(b, i) {
            PyCall::Call(name_end, end) => {
                let (name, args) = unwrap_print(text, i, name_end, end);
                out.call(
                    &text[name.0..name.1],
                    Some(span(name.0, name.1)),
                    (i, end),
                    FormatArgs::Python(span(args.0, args.1)),
                    None,
                );
                i = end;
            }
            PyCall::Cut(name_end) => {
                let mut name = (i, name_end);
                if &text[i..name_end] == "print" {
                    let inner = skip_ws(b, name_end + 1);
                    if let PyCall::Cut(e) | PyCall::Call(e, _) = python_call(b, inner) {
                        name = (inner, e);
                    }
                }
                let (name, name_span) = if name.1 < text.len() && name.0 < name.1 {
                    (&text[name.0..name.1], Some(span(name.0, name.1)))
                } else {
                    ("", None)
                };
                out.broken(name, name_span, i, text.len(), cut(WHAT, name, ")"));
                out.claim(start, text.len());
                return None;
            }
            PyCall::NotACall => {
                if may_continue(text, i, &[CLOSE]) {
                    out.claim(start, text.len());
                    return None;
                }
                let stop = find(text, i, CLOSE);
                let error = malformed(
                    WHAT,
                    "",
                    "a `tool_code` block holds something other than calls",
                )
                .at(span(i, char_end(text, i)));
                out.broken("", None, i, stop.unwrap_or(text.len()), error);
                i = stop.unwrap_or(text.len());
                if stop.is_none() {
                    out.claim(start, text.len());
                    return None;
                }
            }
        }
    }
}

/// The name and the call text of the call at `start..end` whose name ends at `name_end`:
/// those of the call inside when it is `print(call)`.
fn unwrap_print(
    text: &str,
    start: usize,
    name_end: usize,
    end: usize,
) -> ((usize, usize), (usize, usize)) {
    let b = text.as_bytes();
    if &text[start..name_end] == "print" {
        let inner = skip_ws(b, name_end + 1);
        if let PyCall::Call(inner_name, inner_end) = python_call(b, inner) {
            if skip_ws(b, inner_end) + 1 == end {
                return ((inner, inner_name), (inner, inner_end));
            }
        }
    }
    ((start, name_end), (start, end))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Gemma;

    #[test]
    fn print_is_looked_through() {
        let text = "```tool_code\nprint(get_weather(city=\"Paris\"))\n```";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(args_src(&r.calls[0], text), "get_weather(city=\"Paris\")");
    }

    #[test]
    fn several_calls_and_prose() {
        let text = "I'll compute both.\n```tool_code\nadd(a=1, b=2)\nprint(multiply(a=2, b=\"x)\"))\n```\nDone.";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "multiply"]);
    }

    #[test]
    fn cut_off_and_other_code() {
        let r = read_as(F, "```tool_code\nprint(add(a=1, b=");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, "```tool_code\nimport os\n```");
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "```python\nadd(a=1)\n```"), Default::default());
    }
}

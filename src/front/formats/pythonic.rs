//! Llama 3.2 and Llama 4's pythonic calls: a Python list of calls, as Meta's prompt format
//! writes them and vLLM's `pythonic` and `llama4_pythonic` parsers read them, in Llama 4
//! between `<|python_start|>` and `<|python_end|>`:
//!
//! ```text
//! <|python_start|>[get_weather(city="Paris"), add(a=1, b=2)]<|python_end|>
//! ```
//!
//! Each call is handed on as Python call text (complete at its closing parenthesis); an item
//! that is not a call is a broken call. Without the tokens, a list that opens the text is read.

use super::scan::{
    char_end, cut, malformed, python_call, python_group_end, python_item_end, skip_ws, span, Out,
    PyCall, Src,
};
use super::{FormatArgs, ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Pythonic,
    name: "pythonic",
    marker_starts: &[b"<|"],
    found_by_markers: false,
    holds_markers,
    read,
};

const WHAT: &str = "pythonic";
const START: &str = "<|python_start|>";
const END: &str = "<|python_end|>";

fn holds_markers(text: &str) -> bool {
    text.contains(START)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    let mut pos = 0;
    if !text.contains(START) {
        // A list that opens the answer, after any reasoning.
        let lead = src.find_any(skip_ws(b, 0), &[""]).map_or(0, |(p, _)| p);
        let i = skip_ws(b, lead);
        if b.get(i) == Some(&b'[') {
            let end = list(text, i, out);
            out.claim(i, end.unwrap_or(text.len()));
        }
        src.report_reasoning(out);
        return;
    }
    while let Some((start, _)) = src.find_any(pos, &[START]) {
        let after = start + START.len();
        out.markup(start, after, IgnoreReason::ChatToken);
        let i = skip_ws(b, after);
        let end = match b.get(i) {
            Some(b'[') => list(text, i, out),
            None => None,
            Some(_) => single(text, i, out),
        };
        let Some(end) = end else {
            out.claim(start, text.len());
            break;
        };
        let close = skip_ws(b, end);
        if text[close..].starts_with(END) {
            out.markup(close, close + END.len(), IgnoreReason::ChatToken);
            out.claim(start, close + END.len());
            pos = close + END.len();
        } else {
            out.claim(start, end);
            pos = end;
        }
    }
    src.report_reasoning(out);
}

/// One call at `i` (Llama 4 may leave out the brackets).
fn single(text: &str, i: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    match python_call(b, i) {
        PyCall::Call(name_end, end) => {
            out.call(
                &text[i..name_end],
                Some(span(i, name_end)),
                (i, end),
                FormatArgs::Python(span(i, end)),
                None,
            );
            Some(end)
        }
        PyCall::Cut(name_end) => {
            broken_cut(text, i, name_end, out);
            None
        }
        PyCall::NotACall => {
            let error =
                malformed(WHAT, "", "expected a list of calls").at(span(i, char_end(text, i)));
            out.broken("", None, i, char_end(text, i), error);
            Some(char_end(text, i))
        }
    }
}

fn broken_cut(text: &str, i: usize, name_end: usize, out: &mut Out) {
    let (name, name_span) = if name_end < text.len() && i < name_end {
        (&text[i..name_end], Some(span(i, name_end)))
    } else {
        ("", None)
    };
    out.broken(name, name_span, i, text.len(), cut(WHAT, name, ")"));
}

/// The list of calls opening at `open`; its end, or `None` when the text ends inside it.
fn list(text: &str, open: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, open + 1);
    loop {
        match b.get(i) {
            None => {
                out.broken("", None, i.min(text.len()), text.len(), cut(WHAT, "", "]"));
                return None;
            }
            Some(b']') => return Some(i + 1),
            Some(_) => {}
        }
        let end = match python_call(b, i) {
            PyCall::Call(name_end, end) => {
                out.call(
                    &text[i..name_end],
                    Some(span(i, name_end)),
                    (i, end),
                    FormatArgs::Python(span(i, end)),
                    None,
                );
                end
            }
            PyCall::Cut(name_end) => {
                broken_cut(text, i, name_end, out);
                return None;
            }
            PyCall::NotACall => {
                let Some(e) = python_item_end(b, i) else {
                    out.broken("", None, i, text.len(), cut(WHAT, "", "]"));
                    return None;
                };
                let e = e.max(char_end(text, i));
                let error = malformed(WHAT, "", "an item of the list is not a call");
                out.broken("", None, i, e, error);
                e
            }
        };
        let next = skip_ws(b, end);
        match b.get(next) {
            None => {
                out.broken("", None, end, text.len(), cut(WHAT, "", "]"));
                return None;
            }
            Some(b',') => i = skip_ws(b, next + 1),
            Some(b']') => return Some(next + 1),
            Some(_) => {
                let stop = python_group_end(b, open);
                let error = malformed(WHAT, "", "expected `,` or `]` after a call")
                    .at(span(next, char_end(text, next)));
                out.broken(
                    "",
                    None,
                    next,
                    stop.unwrap_or(text.len()).max(char_end(text, next)),
                    error,
                );
                return stop;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Pythonic;

    #[test]
    fn llama4_tokens_and_a_list() {
        let text = "<|python_start|>[get_weather(city=\"San Francisco\", metric=\"celsius\"), add(a=1, b=2)]<|python_end|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "add"]);
        assert_eq!(args_src(&r.calls[1], text), "add(a=1, b=2)");
        assert_eq!(r.markup.len(), 2);
    }

    #[test]
    fn a_bare_list_and_nested_values() {
        let text = "[search(query=\"a, b]\"), add(a=[1, (2)], b={'k': 3},)]";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search", "add"]);
    }

    #[test]
    fn cut_off_after_a_complete_call() {
        let r = read_as(F, "[add(a=1, b=2), multiply(a=2");
        assert_eq!(names(&r), ["add", "multiply"]);
        assert!(!is_broken(&r.calls[0]) && is_broken(&r.calls[1]));
    }

    #[test]
    fn items_that_are_not_calls_are_broken() {
        let r = read_as(F, "[add(a=1, b=2), 5, x.y + 1]");
        assert_eq!(r.calls.len(), 3);
        assert!(r.calls[1..].iter().all(is_broken));
    }

    #[test]
    fn prose_is_not_read() {
        assert_eq!(read_as(F, "Call add(a=1) later."), Default::default());
    }
}

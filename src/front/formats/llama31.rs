//! Llama 3.1: the custom-tool form and the JSON form of Meta's prompt format (vLLM's
//! `llama3_json` parser reads the latter):
//!
//! ```text
//! <function=add>{"a": 5, "b": 5}</function>
//! <|python_tag|>{"name": "add", "parameters": {"a": 5, "b": 5}}; {"name": "search", "parameters": {…}}
//! ```
//!
//! After `<|python_tag|>` a built-in tool's Python call (`brave_search.call(query="x")`) is a
//! Python call. A text that starts with a JSON call (`{"name": …, "parameters": …}`), after
//! any reasoning, is read the same way, and so are several separated by `;` (which vLLM's
//! `llama3_json` reads and the rest of the front door does not).

use super::scan::{
    self, char_end, cut, find, json_call, json_end, malformed, may_continue, python_call, skip_ws,
    span, Out, PyCall, Reading, Src,
};
use super::{FormatArgs, ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Llama31,
    name: "llama3.1",
    marker_starts: &[b"<|", b"<f", b";"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Llama 3.1";
pub(super) const FUNCTION: &str = "<function=";
const END_FUNCTION: &str = "</function>";
const PYTHON_TAG: &str = "<|python_tag|>";
const CODE_ENDS: &[&str] = &["<|eom_id|>", "<|eot_id|>"];

/// `<|python_tag|>`, a `<function=NAME>` tag followed by a JSON object, or a text that starts
/// with JSON objects separated by `;`.
fn holds_markers(text: &str) -> bool {
    let b = text.as_bytes();
    text.contains(PYTHON_TAG)
        || scan::function_tags(text).any(|(_, body)| b.get(skip_ws(b, body)) == Some(&b'{'))
        || {
            let first = skip_ws(b, 0);
            b.get(first) == Some(&b'{')
                && json_end(b, first).is_some_and(|end| {
                    let semi = skip_ws(b, end);
                    b.get(semi) == Some(&b';') && b.get(skip_ws(b, semi + 1)) == Some(&b'{')
                })
        }
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    let mut pos = 0;
    // The answer's start, after any reasoning.
    let lead = src.find_any(skip_ws(b, 0), &[""]).map_or(0, |(p, _)| p);
    let first = skip_ws(b, lead);
    if b.get(first) == Some(&b'{') {
        match json_calls(text, first, out) {
            Some(end) => {
                out.claim(first, end);
                pos = end;
            }
            None => pos = text.len(),
        }
    }
    while let Some((start, which)) = src.find_any(pos, &[FUNCTION, PYTHON_TAG]) {
        let next = if which == 0 {
            function(text, start, out)
        } else {
            python_tag(text, start, out)
        };
        match next {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// JSON calls separated by `;` from `i`; where they end, or `None` if the text ends in one.
fn json_calls(text: &str, mut i: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'{') {
            return Some(i);
        }
        let end = json_call(text, i, WHAT, out)?;
        i = skip_ws(b, end);
        if b.get(i) != Some(&b';') {
            return Some(end);
        }
        i += 1;
    }
}

/// Read `<|python_tag|>` at `start` and what follows it.
fn python_tag(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let after = start + PYTHON_TAG.len();
    out.markup(start, after, IgnoreReason::ChatToken);
    let i = skip_ws(b, after);
    if b.get(i) == Some(&b'{') {
        let end = json_calls(text, i, out);
        out.claim(start, end.unwrap_or(text.len()));
        return end;
    }
    match python_call(b, i) {
        PyCall::Call(name_end, end) => {
            let name = &text[i..name_end];
            out.call(
                name,
                Some(span(i, name_end)),
                (i, end),
                FormatArgs::Python(span(i, end)),
                None,
            );
            out.claim(start, end);
            Some(end)
        }
        PyCall::Cut(name_end) => {
            let (name, name_span) = if name_end < text.len() {
                (&text[i..name_end], Some(span(i, name_end)))
            } else {
                ("", None)
            };
            out.broken(name, name_span, i, text.len(), cut(WHAT, name, ")"));
            out.claim(start, text.len());
            None
        }
        PyCall::NotACall => {
            if may_continue(text, i, &["{"]) {
                out.claim(start, text.len());
                return None;
            }
            let stop = CODE_ENDS.iter().filter_map(|t| find(text, i, t)).min();
            let error = malformed(
                WHAT,
                "",
                "expected a JSON call or a Python call after `<|python_tag|>`",
            )
            .at(span(i, stop.unwrap_or(text.len())));
            out.broken("", None, i, stop.unwrap_or(text.len()), error);
            out.claim(start, stop.unwrap_or(text.len()));
            stop
        }
    }
}

/// Read `<function=NAME>{…}</function>` at `start` (the Hermes reader too, as llama.cpp's does).
pub(super) fn function(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let name_start = start + FUNCTION.len();
    let call = Reading::new(text, WHAT, start, END_FUNCTION);
    let problem = "the function name is missing or holds a blank";
    let close = match call.tag_name(name_start, problem, out) {
        Ok(close) => close,
        Err(next) => return next,
    };
    let call = call.named(name_start, close);
    let open = skip_ws(b, close + 1);
    if b.get(open) != Some(&b'{') {
        if may_continue(text, open, &["{"]) {
            return call.cut(out);
        }
        let problem = "expected a JSON object of arguments";
        return call.malformed(problem, span(open, char_end(text, open)), open, out);
    }
    let Some(args_end) = json_end(b, open) else {
        return call.cut(out);
    };
    let tail = skip_ws(b, args_end);
    if !text[tail..].starts_with(END_FUNCTION) {
        if may_continue(text, tail, &[END_FUNCTION]) {
            return call.cut(out);
        }
        let error = malformed(
            WHAT,
            call.name,
            "expected `</function>` after the arguments",
        )
        .at(span(tail, char_end(text, tail)));
        out.broken(call.name, call.name_span, start, args_end, error);
        return Some(args_end);
    }
    let end = tail + END_FUNCTION.len();
    out.call(
        call.name,
        call.name_span,
        (start, end),
        FormatArgs::Json(span(open, args_end)),
        None,
    );
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::Llama31;

    #[test]
    fn function_tags() {
        let text = "Let me add them. <function=add>{\"a\": 5, \"b\": 5}</function>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"a\": 5, \"b\": 5}");
    }

    #[test]
    fn python_tag_json_calls_and_a_builtin_python_call() {
        let text = "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1}}; {\"name\": \"search\", \"parameters\": {\"query\": \"x\"}}<|eom_id|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "search"]);
        let text = "<|python_tag|>brave_search.call(query=\"weather in Paris\")<|eom_id|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["brave_search.call"]);
        assert!(matches!(r.calls[0].args, FormatArgs::Python(_)));
    }

    #[test]
    fn a_leading_json_call() {
        let text = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
    }

    #[test]
    fn cut_off_and_malformed() {
        let r = read_as(F, "<function=add>{\"a\": 5");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<function=add>a=5</function><|python_tag|>import os<|eom_id|>",
        );
        assert_eq!(r.calls.len(), 2);
        assert!(r.calls.iter().all(is_broken));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "Paris is sunny."), Default::default());
    }
}

//! Apertus (Swiss AI), as its chat template writes calls and llama.cpp's `apertus` parser reads
//! them: a JSON list between `<|tools_prefix|>` and `<|tools_suffix|>`, each call an object
//! of one member, the tool's name and the object of its arguments. Its reasoning,
//! `<|inner_prefix|>…<|inner_suffix|>`, is a reasoning block of every format.
//!
//! ```text
//! <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"add": {"a": 1, "b": 2}}]<|tools_suffix|>
//! ```

use super::scan::{
    char_end, cut, json_end, json_list, json_str, json_string_end, malformed, may_continue,
    members, skip_ws, span, Out, Src, Stop,
};
use super::{FormatArgs, ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Apertus,
    name: "apertus",
    marker_starts: &[b"<|"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Apertus";
const PREFIX: &str = "<|tools_prefix|>";
const SUFFIX: &str = "<|tools_suffix|>";

fn holds_markers(text: &str) -> bool {
    text.contains(PREFIX)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[PREFIX]) {
        let after = start + PREFIX.len();
        out.markup(start, after, IgnoreReason::ChatToken);
        let list = skip_ws(b, after);
        let end = if b.get(list) == Some(&b'[') {
            json_list(text, list, WHAT, out, call)
        } else if may_continue(text, list, &["["]) {
            out.broken("", None, start, text.len(), cut(WHAT, "", "]"));
            None
        } else {
            let error = malformed(
                WHAT,
                "",
                "expected a JSON list of calls after `<|tools_prefix|>`",
            )
            .at(span(list, char_end(text, list)));
            let stop = src
                .find_any(list, &[SUFFIX, PREFIX])
                .map_or(text.len(), |(p, _)| p);
            out.broken("", None, start, stop, error);
            Some(stop)
        };
        let Some(end) = end else {
            out.claim(start, text.len());
            break;
        };
        let tail = skip_ws(b, end);
        let close = if text[tail..].starts_with(SUFFIX) {
            out.markup(tail, tail + SUFFIX.len(), IgnoreReason::ChatToken);
            tail + SUFFIX.len()
        } else {
            end
        };
        out.claim(start, close);
        pos = close;
    }
    src.report_reasoning(out);
}

/// The call object opening at `open`, `{"name": {…}}`: where it ends, or `None` when the text
/// ends within it.
fn call(text: &str, open: usize, out: &mut Out) -> Option<usize> {
    let (members, end) = members(text, open);
    // The name, also of a call cut off within its arguments (no whole member yet).
    let first = members
        .first()
        .map(|m| (m.key.clone(), m.key_span))
        .or_else(|| first_key(text, open));
    let name = first.as_ref().map_or("", |(k, _)| k.as_str());
    let name_span = first.as_ref().map(|(_, (a, z))| span(*a, *z));
    match end {
        Ok(end) => {
            match members.as_slice() {
                [m] if text.as_bytes().get(m.value.0) == Some(&b'{') => out.call(
                    name,
                    name_span,
                    (open, end),
                    FormatArgs::Json(span(m.value.0, m.value.1)),
                    None,
                ),
                _ => {
                    let problem = "a call is an object of one member: the tool's name, and the \
                                   object of its arguments";
                    out.broken(name, name_span, open, end, malformed(WHAT, name, problem));
                }
            }
            Some(end)
        }
        Err(Stop::Cut) => {
            out.broken(name, name_span, open, text.len(), cut(WHAT, name, "}"));
            None
        }
        Err(Stop::Bad(problem, at)) => {
            let end = json_end(text.as_bytes(), open);
            let error = malformed(WHAT, name, &problem).at(span(at, char_end(text, at)));
            out.broken(name, name_span, open, end.unwrap_or(text.len()), error);
            end
        }
    }
}

/// The first key of the object opening at `open`, when it is a whole JSON string followed by
/// `:`, and where it is.
fn first_key(text: &str, open: usize) -> Option<(String, (usize, usize))> {
    let b = text.as_bytes();
    let key = skip_ws(b, open + 1);
    if b.get(key) != Some(&b'"') {
        return None;
    }
    let key_end = json_string_end(b, key)?;
    let colon = skip_ws(b, key_end);
    (b.get(colon) == Some(&b':')).then_some(())?;
    Some((json_str(text, key, key_end)?, (key, key_end)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Apertus;

    #[test]
    fn llama_cpp_cases() {
        // llama.cpp's tests/test-chat.cpp, Apertus.
        let text = "<|tools_prefix|>[{\"special_function\": {\"arg1\": 1}}]<|tools_suffix|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"arg1\": 1}");
        let text = "<|inner_prefix|>I'm\nthinking<|inner_suffix|><|tools_prefix|>[{\"special_function\": {\"arg1\": 1}}]<|tools_suffix|>Hello, world!\nWhat's up?";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function"]);
        assert_eq!(r.reasoning.len(), 1);
        assert!(read_as(F, "Hello, world!\nWhat's up?").calls.is_empty());
    }

    #[test]
    fn calls_in_reasoning_do_not_count() {
        let text = "<|inner_prefix|>Maybe <|tools_prefix|>[{\"multiply\": {\"a\": 9}}]<|tools_suffix|>? No.<|inner_suffix|><|tools_prefix|>[{\"add\": {\"a\": 1}}, {\"search\": {\"query\": \"é\"}}]<|tools_suffix|>";
        assert_eq!(names(&read_as(F, text)), ["add", "search"]);
    }

    #[test]
    fn cut_off_and_malformed() {
        let r = read_as(F, "<|tools_prefix|>[{\"add\": {\"a\": 1");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, "<|tools_prefix|>[{\"add\": 1}, {\"name\": \"x\", \"arguments\": {}}, {\"search\": {}}]");
        assert_eq!(names(&r), ["add", "name", "search"]);
        assert!(is_broken(&r.calls[0]) && is_broken(&r.calls[1]) && !is_broken(&r.calls[2]));
        let r = read_as(F, "<|tools_prefix|>add(a=1)<|tools_suffix|>");
        assert!(is_broken(&r.calls[0]));
    }
}

//! Hermes, Qwen2.5 and Qwen3 (and Granite 4): one JSON call per `<tool_call>` tag, as their
//! chat templates write them and vLLM's `hermes` parser reads them:
//!
//! ```text
//! <tool_call>
//! {"name": "add", "arguments": {"a": 1, "b": 2}}
//! </tool_call>
//! ```
//!
//! A call is complete where its object closes: the `</tool_call>` after it is the format's
//! markup, and a call the text ends after (vLLM's `..._until_eos`) is complete without it.
//! Reasoning blocks are reasoning. Named, it also reads what llama.cpp's Hermes 2 Pro reader
//! takes besides: `<function=f>{…}</function>` and `<function name="f">{…}</function>`.

use super::scan::{
    char_end, cut, find, json_call, malformed, may_continue, skip_ws, span, Out, Src,
};
use super::{ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Hermes,
    name: "hermes",
    marker_starts: &[b"<t"],
    found_by_markers: false,
    holds_markers,
    read,
};

const WHAT: &str = "Hermes";
pub(super) const OPEN: &str = "<tool_call>";
pub(super) const CLOSE: &str = "</tool_call>";

fn holds_markers(text: &str) -> bool {
    super::tag_then(text, |rest| rest.starts_with('{'))
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    let tags = [OPEN, super::llama31::FUNCTION, super::minicpm::OPEN];
    while let Some((start, which)) = src.find_any(pos, &tags) {
        let next = match which {
            0 => tag_call(text, start, (OPEN, CLOSE), WHAT, out),
            1 => super::llama31::function(text, start, out),
            // Not followed by a JSON object: not a call of this format.
            _ => super::minicpm::json_call(text, start, out).unwrap_or(Some(start + 1)),
        };
        match next {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the JSON call after the tag `open` at `start` (its `close` after it optional); where
/// to go on, or `None` when the text ends inside it.
pub(super) fn tag_call(
    text: &str,
    start: usize,
    (open, close): (&str, &str),
    what: &str,
    out: &mut Out,
) -> Option<usize> {
    let b = text.as_bytes();
    let object = skip_ws(b, start + open.len());
    if b.get(object) != Some(&b'{') {
        if may_continue(text, object, &["{"]) {
            out.broken("", None, start, text.len(), cut(what, "", "}"));
            return None;
        }
        let problem = format!("expected a JSON object after `{open}`");
        let error = malformed(what, "", &problem).at(span(object, char_end(text, object)));
        let end = find(text, object, close).map(|p| p + close.len());
        out.broken("", None, start, end.unwrap_or(text.len()), error);
        return end;
    }
    let object_end = json_call(text, object, what, out);
    // The call's stretch starts at its tag.
    let mut call = out.take_last()?;
    call.span = span(start, call.span.end as usize);
    out.push(call);
    let object_end = object_end?;
    let k = skip_ws(b, object_end);
    if text[k..].starts_with(close) {
        out.markup(k, k + close.len(), IgnoreReason::Tag);
        out.claim(start, k + close.len());
        return Some(k + close.len());
    }
    Some(object_end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Hermes;

    #[test]
    fn one_call() {
        let text =
            "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"a\": 1, \"b\": 2}");
        // The call ends where its object does; the closing tag is markup it claims.
        assert_eq!(&text[r.calls[0].span.range()], &text[..text.len() - 13]);
        assert_eq!(r.claimed[0].end as usize, text.len());
    }

    #[test]
    fn complete_at_the_end_of_the_text_without_its_closing_tag() {
        // vLLM's test_extract_tool_calls_..._until_eos.
        let text = "<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\"}}";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_current_weather"]);
        assert!(!is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool",
        );
        assert!(!is_broken(&r.calls[0]));
    }

    #[test]
    fn several_calls_with_prose_and_thinking() {
        let text = "<think>\nTry <tool_call>{\"name\": \"multiply\"}</tool_call>?\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", \"arguments\": \"{\\\"query\\\": \\\"x\\\"}\"}\n</tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "search"]);
        // Arguments written as a JSON string are handed on as that string.
        assert!(args_src(&r.calls[1], text).starts_with('"'));
        assert_eq!(r.reasoning.len(), 1);
    }

    #[test]
    fn cut_off_keeps_the_name() {
        let r = read_as(
            F,
            "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"x\": true}",
        );
        assert_eq!(names(&r), ["final_answer"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn ambiguous_or_malformed_objects_are_broken() {
        let text = "<tool_call>{\"name\": \"add\", \"name\": \"multiply\"}</tool_call><tool_call>{\"name\": \"add\", \"arguments\": {}, \"kwargs\": {}}</tool_call><tool_call>add(a=1)</tool_call>";
        let r = read_as(F, text);
        assert_eq!(r.calls.len(), 3);
        assert!(r.calls.iter().all(is_broken));
    }

    #[test]
    fn function_tags_as_llama_cpp_reads_them() {
        // llama.cpp's Hermes 2 Pro cases.
        let text = "<function=special_function>{\"arg1\": 1}</function>\n<function name=\"search\">{\"query\": \"x\"}</function>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function", "search"]);
        assert_eq!(args_src(&r.calls[1], text), "{\"query\": \"x\"}");
        assert!(!r.calls.iter().any(is_broken));
        // MiniCPM5's `<param>` form is not this format's.
        let r = read_as(
            F,
            "<function name=\"add\"><param name=\"a\">1</param></function>",
        );
        assert!(r.calls.is_empty());
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "Just text."), Default::default());
    }
}

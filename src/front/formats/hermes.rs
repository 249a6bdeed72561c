//! Hermes, Qwen2.5 and Qwen3 (and Granite 4): one JSON call per `<tool_call>` tag, as their
//! chat templates write them and vLLM's `hermes` parser reads them:
//!
//! ```text
//! <tool_call>
//! {"name": "add", "arguments": {"a": 1, "b": 2}}
//! </tool_call>
//! ```
//!
//! `<think>` blocks are reasoning.

use super::scan::{
    char_end, cut, find, json_call, malformed, may_continue, skip_ws, span, Out, Src,
};
use super::FormatArgs;

const WHAT: &str = "Hermes";
pub(super) const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

pub(super) fn read(text: &str, out: &mut Out) {
    let src = Src::new(text, "<think>", "</think>");
    src.report_reasoning(out);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[OPEN]) {
        match tag_call(text, start, WHAT, out) {
            Some(end) => pos = end,
            None => return,
        }
    }
}

/// Read `<tool_call>{…}</tool_call>` at `start`; where to go on, or `None` when the text ends
/// inside it.
pub(super) fn tag_call(text: &str, start: usize, what: &str, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let open = skip_ws(b, start + OPEN.len());
    if b.get(open) != Some(&b'{') {
        if may_continue(text, open, &["{"]) {
            out.broken("", None, start, text.len(), cut(what, "", CLOSE));
            return None;
        }
        let error = malformed(what, "", "expected a JSON object after `<tool_call>`")
            .at(span(open, char_end(text, open)));
        let end = find(text, open, CLOSE).map(|p| p + CLOSE.len());
        out.broken("", None, start, end.unwrap_or(text.len()), error);
        return end;
    }
    let object_end = json_call(text, open, what, out);
    // The call is complete at its closing tag: take it back to give it its whole stretch.
    let mut call = out.take_last()?;
    call.span = span(start, call.span.end as usize);
    let Some(object_end) = object_end else {
        out.push(call);
        return None;
    };
    let close = skip_ws(b, object_end);
    if text[close..].starts_with(CLOSE) {
        call.span = span(start, close + CLOSE.len());
        out.push(call);
        return Some(close + CLOSE.len());
    }
    let (error, end) = if may_continue(text, close, &[CLOSE]) {
        (cut(what, &call.name, CLOSE), None)
    } else {
        let error = malformed(what, &call.name, "expected `</tool_call>` after the call")
            .at(span(close, char_end(text, close)));
        (error, Some(object_end))
    };
    if !matches!(call.args, FormatArgs::Broken(_)) {
        call.args = FormatArgs::Broken(error.at(span(start, end.unwrap_or(text.len()))));
        call.id = None;
    }
    call.span = span(start, end.unwrap_or(text.len()));
    out.push(call);
    end
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
        assert_eq!(r.calls[0].span.end as usize, text.len());
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
        let r = read_as(
            F,
            "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool",
        );
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
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "Just text."), Default::default());
    }
}

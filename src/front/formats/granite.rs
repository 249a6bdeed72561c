//! IBM Granite: Granite 3's `<|tool_call|>` token followed by a JSON list of calls (or one
//! call), as its chat template writes it and vLLM's `granite` parser reads it, and Granite 4's
//! Hermes-style `<tool_call>{…}</tool_call>`:
//!
//! ```text
//! <|tool_call|>[{"name": "add", "arguments": {"a": 1, "b": 2}}]
//! ```

use super::scan::{
    char_end, cut, json_call, json_call_list, malformed, may_continue, skip_ws, span, Out, Src,
};
use crate::front::IgnoreReason;

const WHAT: &str = "Granite";
const TOKEN: &str = "<|tool_call|>";

pub(super) fn read(text: &str, out: &mut Out) {
    let src = Src::new(text, "<think>", "</think>");
    src.report_reasoning(out);
    let b = src.b;
    let mut pos = 0;
    while let Some((start, which)) = src.find_any(pos, &[TOKEN, super::hermes::OPEN]) {
        // Granite 3.1 writes its list after `<tool_call>`, with no closing tag.
        let list_after_tag =
            which == 1 && b.get(skip_ws(b, start + super::hermes::OPEN.len())) == Some(&b'[');
        if which == 1 && !list_after_tag {
            match super::hermes::tag_call(text, start, WHAT, out) {
                Some(end) => pos = end,
                None => return,
            }
            continue;
        }
        let after = start
            + if which == 1 {
                super::hermes::OPEN.len()
            } else {
                TOKEN.len()
            };
        out.markup(start, after, IgnoreReason::ChatToken);
        let i = skip_ws(b, after);
        let end = match b.get(i) {
            Some(b'[') => json_call_list(text, i, WHAT, out),
            Some(b'{') => json_call(text, i, WHAT, out),
            _ if may_continue(text, i, &["["]) => {
                out.broken("", None, i, text.len(), cut(WHAT, "", "]"));
                None
            }
            _ => {
                let error = malformed(
                    WHAT,
                    "",
                    "expected a JSON list of calls after `<|tool_call|>`",
                )
                .at(span(i, char_end(text, i)));
                out.broken("", None, i, char_end(text, i), error);
                Some(char_end(text, i))
            }
        };
        let Some(mut end) = end else {
            out.claim(start, text.len());
            return;
        };
        let close = skip_ws(b, end);
        if list_after_tag && text[close..].starts_with("</tool_call>") {
            out.markup(close, close + "</tool_call>".len(), IgnoreReason::Tag);
            end = close + "</tool_call>".len();
        }
        out.claim(start, end);
        pos = end;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Granite;

    #[test]
    fn a_list_of_calls() {
        let text = "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Boston\"}}, {\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}]";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "add"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"city\": \"Boston\"}");
    }

    #[test]
    fn granite31_list_after_a_tag() {
        let text = "<tool_call>[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}]";
        assert_eq!(names(&read_as(F, text)), ["add"]);
    }

    #[test]
    fn granite4_tags_and_prose() {
        let text = "Sure!\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>";
        assert_eq!(names(&read_as(F, text)), ["search"]);
    }

    #[test]
    fn cut_off_and_malformed_items() {
        let r = read_as(
            F,
            "<|tool_call|>[{\"name\": \"add\", \"arguments\": {\"a\": 1",
        );
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<|tool_call|>[{\"name\": \"add\", \"arguments\": {}}, 5, {\"name\": 7}]",
        );
        assert_eq!(r.calls.len(), 3);
        assert!(!is_broken(&r.calls[0]));
        assert!(is_broken(&r.calls[1]) && is_broken(&r.calls[2]));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "I can't help with that."), Default::default());
    }
}

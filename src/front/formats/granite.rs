//! IBM Granite: Granite 3's `<|tool_call|>` token followed by a JSON list of calls (or one
//! call), as its chat template writes it and vLLM's `granite` parser reads it; Granite 3.1's
//! list after `<tool_call>`; Granite 4's Hermes-style `<tool_call>{…}</tool_call>`; and Granite
//! 20B FC's `<function_call>` before each call, with no closing tag (vLLM's `granite-20b-fc`):
//!
//! ```text
//! <|tool_call|>[{"name": "add", "arguments": {"a": 1, "b": 2}}]
//! <function_call> {"name": "add", "arguments": {"a": 1, "b": 2}}
//! ```

use super::hermes::{tag_call, CLOSE as END_TAG, OPEN as TAG};
use super::scan::{
    char_end, cut, json_call, json_call_list, malformed, may_continue, skip_ws, span, Out, Src,
};
use super::{ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Granite,
    name: "granite",
    marker_starts: &[b"<|", b"<t", b"<f"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Granite";
const TOKEN: &str = "<|tool_call|>";
const FUNCTION_CALL: &str = "<function_call>";
const END_FUNCTION_CALL: &str = "</function_call>";

/// `<|tool_call|>`, a JSON list of objects after `<tool_call>` (Granite 3.1's form, not a
/// Python list of calls in a tag), or a JSON object after `<function_call>`.
fn holds_markers(text: &str) -> bool {
    let list_of_objects = |rest: &str| {
        rest.strip_prefix('[')
            .is_some_and(|r| r.trim_start().starts_with('{'))
    };
    text.contains(TOKEN)
        || super::tag_then(text, list_of_objects)
        || text.match_indices(FUNCTION_CALL).any(|(p, _)| {
            text[p + FUNCTION_CALL.len()..]
                .trim_start()
                .starts_with('{')
        })
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    let mut pos = 0;
    while let Some((start, which)) = src.find_any(pos, &[TOKEN, TAG, FUNCTION_CALL]) {
        // Granite 3.1 writes its list after `<tool_call>`, with no closing tag.
        let list_after_tag = which == 1 && b.get(skip_ws(b, start + TAG.len())) == Some(&b'[');
        let tags = match which {
            1 if !list_after_tag => Some((TAG, END_TAG)),
            2 => Some((FUNCTION_CALL, END_FUNCTION_CALL)),
            _ => None,
        };
        if let Some(tags) = tags {
            match tag_call(text, start, tags, WHAT, out) {
                Some(end) => pos = end,
                None => break,
            }
            continue;
        }
        let after = start + if which == 1 { TAG.len() } else { TOKEN.len() };
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
            break;
        };
        let close = skip_ws(b, end);
        if list_after_tag && text[close..].starts_with(END_TAG) {
            out.markup(close, close + END_TAG.len(), IgnoreReason::Tag);
            end = close + END_TAG.len();
        }
        out.claim(start, end);
        pos = end;
    }
    src.report_reasoning(out);
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

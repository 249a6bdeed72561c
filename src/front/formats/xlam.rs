//! Salesforce xLAM: the calls as plain JSON, as its chat template asks and vLLM's `xlam` parser
//! reads them: a list of `{"name", "arguments"}` objects, one such object, or
//! `{"tool_calls": […]}`, possibly in a ```` ```json ```` fence and after a `<think>` block.
//! The JSON must open the answer (or its first fence): JSON later in prose is not a call.

use super::scan::{find, json_call, json_call_list, skip_ws, Out, Src};
use crate::front::IgnoreReason;

const WHAT: &str = "xLAM";

pub(super) fn read(text: &str, out: &mut Out) {
    let src = Src::new(text, "<think>", "</think>");
    src.report_reasoning(out);
    let b = src.b;
    // The answer starts after a leading reasoning block.
    let mut i = skip_ws(b, 0);
    if let Some(s) = out_of_reasoning(&src, i) {
        i = skip_ws(b, s);
    }
    let rest = &text[i..];
    if rest.starts_with("```") {
        let tag_end = find(text, i, "\n").unwrap_or(text.len());
        out.markup(i, tag_end, IgnoreReason::Fence);
        let start = skip_ws(b, tag_end);
        let Some(end) = json(text, start, out) else {
            out.claim(i, text.len());
            return;
        };
        let close = skip_ws(b, end);
        if text[close..].starts_with("```") {
            out.markup(close, close + 3, IgnoreReason::Fence);
            out.claim(i, close + 3);
        } else {
            out.claim(i, end);
        }
        return;
    }
    if let Some(end) = json(text, i, out) {
        out.claim(i, end);
    } else if i < text.len() && matches!(b.get(i), Some(b'[' | b'{')) {
        out.claim(i, text.len());
    }
}

/// Where the reasoning block covering `i` ends, if one does.
fn out_of_reasoning(src: &Src<'_>, i: usize) -> Option<usize> {
    let (found, _) = src.find_any(i, &[""])?;
    (found > i).then_some(found)
}

/// The calls of the JSON at `i`; where they end, or `None` when there are none there or the
/// text ends inside them.
fn json(text: &str, i: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    match b.get(i)? {
        b'[' => json_call_list(text, i, WHAT, out),
        b'{' => {
            // `{"tool_calls": [...]}`: the list is read as it comes.
            let key = skip_ws(b, i + 1);
            if text[key..].starts_with("\"tool_calls\"") {
                let colon = skip_ws(b, key + "\"tool_calls\"".len());
                let list = skip_ws(b, colon + 1);
                if b.get(colon) == Some(&b':') && b.get(list) == Some(&b'[') {
                    let end = json_call_list(text, list, WHAT, out)?;
                    let close = skip_ws(b, end);
                    return (b.get(close) == Some(&b'}')).then_some(close + 1);
                }
            }
            json_call(text, i, WHAT, out)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Xlam;

    #[test]
    fn a_list_and_a_single_object() {
        let text = "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "search"]);
        assert_eq!(args_src(&r.calls[1], text), "{\"query\": \"x\"}");
        let r = read_as(
            F,
            "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}",
        );
        assert_eq!(names(&r), ["add"]);
    }

    #[test]
    fn fenced_tool_calls_after_thinking() {
        let text = "<think>Two calls.</think>\n```json\n{\"tool_calls\": [{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"multiply\", \"arguments\": {\"a\": 2, \"b\": 3}}]}\n```";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "multiply"]);
        assert_eq!(r.reasoning.len(), 1);
        assert_eq!(r.markup.len(), 2);
    }

    #[test]
    fn cut_off_and_malformed() {
        let r = read_as(
            F,
            "[{\"name\": \"add\", \"arguments\": {\"a\": 1}}, {\"name\": \"multiply\", \"argu",
        );
        assert_eq!(names(&r), ["add", "multiply"]);
        assert!(is_broken(&r.calls[1]));
        let r = read_as(F, "[{\"function\": \"add\"}]");
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn prose_is_not_read() {
        assert_eq!(
            read_as(F, "Here: [{\"name\": \"add\"}]"),
            Default::default()
        );
    }
}

//! Salesforce xLAM: the calls as plain JSON, as its chat template asks and vLLM's `xlam` parser
//! reads them: a list of `{"name", "arguments"}` objects, one such object, or
//! `{"tool_calls": […]}`, opening the answer (after a `<think>` block), or in a
//! ```` ```json ```` fence, after `[TOOL_CALLS]` or inside `<tool_call>…</tool_call>`
//! anywhere. JSON in the middle of prose is not a call.

use super::scan::{find, json_call, json_call_list, may_continue, skip_ws, Out, Src};
use super::{ModelFormat, Spec};
use crate::front::IgnoreReason;

/// Plain JSON has no markers: xLAM is read only by name.
pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Xlam,
    name: "xlam",
    marker_starts: &[],
    found_by_markers: false,
    holds_markers: |_| false,
    read,
};

const WHAT: &str = "xLAM";
const MARKERS: &[&str] = &["```", "[TOOL_CALLS]", "<tool_call>"];

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    // The answer starts after a leading reasoning block.
    let lead = src.find_any(skip_ws(b, 0), &[""]).map_or(0, |(p, _)| p);
    let mut pos = skip_ws(b, lead);
    if matches!(b.get(pos), Some(b'[' | b'{')) {
        let end = json(text, pos, out);
        out.claim(pos, end.unwrap_or(text.len()));
        match end {
            Some(end) => pos = end,
            None => {
                src.report_reasoning(out);
                return;
            }
        }
    }
    while let Some((start, which)) = src.find_any(pos, MARKERS) {
        let (open_end, reason, close) = match which {
            0 => match find(text, start, "\n") {
                Some(line_end) => (line_end, IgnoreReason::Fence, "```"),
                None => {
                    out.claim(start, text.len());
                    break;
                }
            },
            1 => (start + MARKERS[1].len(), IgnoreReason::ChatToken, ""),
            _ => (start + MARKERS[2].len(), IgnoreReason::Tag, "</tool_call>"),
        };
        let j = skip_ws(b, open_end);
        if !matches!(b.get(j), Some(b'[' | b'{')) {
            if may_continue(text, j, &["[", "{"]) {
                out.claim(start, text.len());
                break;
            }
            // A fence of something else: past its closing fence.
            pos = match which {
                0 => find(text, open_end, "```").map_or(text.len(), |p| p + 3),
                _ => open_end,
            };
            continue;
        }
        out.markup(start, open_end, reason);
        let Some(end) = json(text, j, out) else {
            out.claim(start, text.len());
            break;
        };
        let k = skip_ws(b, end);
        if !close.is_empty() && text[k..].starts_with(close) {
            out.markup(k, k + close.len(), reason);
            out.claim(start, k + close.len());
            pos = k + close.len();
        } else {
            out.claim(start, end);
            pos = end;
        }
    }
    src.report_reasoning(out);
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
    fn fences_and_tokens_after_prose() {
        let text = "Sure, here you go:\n```json\n[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}]\n```\nand [TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "search"]);
        let r = read_as(F, "```python\nprint(1)\n```\n<tool_call>[{\"name\": \"add\", \"arguments\": {}}]</tool_call>");
        assert_eq!(names(&r), ["add"]);
    }

    #[test]
    fn prose_is_not_read() {
        assert_eq!(
            read_as(F, "Here: [{\"name\": \"add\"}]"),
            Default::default()
        );
    }
}

//! Mistral: calls after the `[TOOL_CALLS]` token, as `mistral_common` writes them and vLLM's
//! `mistral` parser reads them. Before tokenizer v11, one JSON list:
//!
//! ```text
//! [TOOL_CALLS] [{"name": "add", "arguments": {"a": 3, "b": 4}}]
//! ```
//!
//! and from v11, the name then the JSON arguments, one `[TOOL_CALLS]` per call, with
//! `[ARGS]` (and an id after `[CALL_ID]`) between them in some versions:
//! `[TOOL_CALLS]add{"a": 3}`, `[TOOL_CALLS]add[ARGS]{"a": 3}`,
//! `[TOOL_CALLS]add[CALL_ID]a1b2c3d4e[ARGS]{"a": 3}`. Magistral's `[THINK]…[/THINK]` is
//! reasoning.

use super::scan::{
    char_end, cut, json_call_list, json_end, malformed, may_continue, skip_ws, slice, span, Out,
    Src,
};
use super::{FormatArgs, ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Mistral,
    name: "mistral",
    marker_starts: &[b"[T"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Mistral";
const TOOL_CALLS: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";

fn holds_markers(text: &str) -> bool {
    text.contains(TOOL_CALLS)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[TOOL_CALLS]) {
        let after = start + TOOL_CALLS.len();
        let i = skip_ws(b, after);
        if b.get(i) == Some(&b'[')
            && !text[i..].starts_with(ARGS)
            && !text[i..].starts_with(CALL_ID)
        {
            // Before v11: one list of calls.
            out.markup(start, after, IgnoreReason::ChatToken);
            match json_call_list(text, i, WHAT, out) {
                Some(end) => {
                    out.claim(start, end);
                    pos = end;
                }
                None => {
                    out.claim(start, text.len());
                    break;
                }
            }
            continue;
        }
        match call(text, start, after, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read a v11 call: `[TOOL_CALLS]` at `start`, the name from `from`.
fn call(text: &str, start: usize, from: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let i = skip_ws(b, from);
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'-' | b'.')) {
        j += 1;
    }
    let name = &text[i..j];
    // The name is whole once something follows it.
    if j >= b.len() {
        out.broken("", None, start, text.len(), cut(WHAT, "", "}"));
        return None;
    }
    let name_span = Some(span(i, j)).filter(|_| !name.is_empty());
    let mut k = j;
    let mut id = None;
    if text[k..].starts_with(CALL_ID) {
        let id_start = k + CALL_ID.len();
        let mut e = id_start;
        while e < b.len() && b[e].is_ascii_alphanumeric() {
            e += 1;
        }
        if e >= b.len() {
            out.broken(name, name_span, start, text.len(), cut(WHAT, name, "}"));
            return None;
        }
        id = Some(slice(text, id_start, e));
        k = e;
    }
    let marked = id.is_some() || text[k..].starts_with(ARGS);
    if text[k..].starts_with(ARGS) {
        k += ARGS.len();
    }
    let open = skip_ws(b, k);
    if name.is_empty() || b.get(open) != Some(&b'{') {
        if may_continue(text, k, &[ARGS, CALL_ID, "{"]) {
            out.broken(name, name_span, start, text.len(), cut(WHAT, name, "}"));
            return None;
        }
        if !marked {
            // Words after the token, not a name and its arguments (`[TOOL_CALLS] not json at
            // all`): no call, as vLLM reads it; the words are the front door's to read.
            out.markup(start, from, IgnoreReason::ChatToken);
            return Some(from);
        }
        let problem = if name.is_empty() {
            "expected a function name after `[TOOL_CALLS]`"
        } else {
            "expected its JSON arguments after the name"
        };
        let error = malformed(WHAT, name, problem).at(span(open, char_end(text, open)));
        out.broken(name, name_span, start, open.max(j), error);
        return Some(open.max(j));
    }
    let Some(end) = json_end(b, open) else {
        out.broken(name, name_span, start, text.len(), cut(WHAT, name, "}"));
        return None;
    };
    out.call(
        name,
        name_span,
        (start, end),
        FormatArgs::Json(span(open, end)),
        id,
    );
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Mistral;

    #[test]
    fn v11_calls() {
        let text =
            "[TOOL_CALLS]add{\"a\": 3, \"b\": 4}[TOOL_CALLS]multiply[ARGS]{\"a\": 2, \"b\": 5}";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "multiply"]);
        assert_eq!(args_src(&r.calls[1], text), "{\"a\": 2, \"b\": 5}");
    }

    #[test]
    fn call_ids_are_kept() {
        let text = "Sure.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}</s>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(r.calls[0].id.as_deref(), Some("a1b2c3d4e"));
    }

    #[test]
    fn pre_v11_list() {
        let text = "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {\"a\": 3}, \"id\": \"abc123def\"}, {\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "search"]);
        assert_eq!(r.calls[0].id.as_deref(), Some("abc123def"));
        assert_eq!(args_src(&r.calls[1], text), "{\"query\": \"x\"}");
    }

    #[test]
    fn cut_off_and_malformed() {
        let r = read_as(F, "[TOOL_CALLS]add{\"a\": 3");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "[TOOL_CALLS]add[ARGS]please[TOOL_CALLS] [{\"name\": \"x\", \"bogus\": 1}]",
        );
        assert_eq!(names(&r), ["add", "x"]);
        assert!(r.calls.iter().all(is_broken));
    }

    #[test]
    fn words_after_the_token_are_not_a_call() {
        let r = read_as(F, "[TOOL_CALLS] not json at all");
        assert!(r.calls.is_empty());
        assert_eq!(r.markup.len(), 1);
        assert!(r.claimed.is_empty());
    }

    #[test]
    fn thinking_and_plain_text() {
        let r = read_as(F, "[THINK]maybe [TOOL_CALLS]add{}[/THINK]No call.");
        assert!(r.calls.is_empty());
        assert_eq!(read_as(F, "No call."), Default::default());
    }
}

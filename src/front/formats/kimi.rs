//! Kimi K2: calls between special tokens, each with an id `functions.NAME:INDEX` and JSON
//! arguments, as Moonshot's chat template writes them and vLLM's `kimi_k2` parser reads them:
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{"a": 8}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! The name is the id without `functions.` and `:INDEX`; the id is kept whole. The arguments
//! run to `<|tool_call_end|>`. Kimi K2-Thinking's template ends reasoning where the calls
//! begin: a `<think>` block left open ends at `<|tool_calls_section_begin|>`.

use super::scan::{cut, find, malformed, may_continue, section, span, trim, Out, Src};
use crate::error::clip;

use super::{FormatArgs, ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::KimiK2,
    name: "kimi-k2",
    marker_starts: &[b"<|"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Kimi K2";
const SECTIONS: &[&str] = &[
    "<|tool_calls_section_begin|>",
    "<|tool_call_section_begin|>",
];
/// Where an open reasoning block ends: where the calls begin.
const REASONING_ENDS: &[&str] = &[
    "<|tool_calls_section_begin|>",
    "<|tool_call_section_begin|>",
    "<|tool_call_begin|>",
];
const SECTION_ENDS: &[&str] = &["<|tool_calls_section_end|>", "<|tool_call_section_end|>"];
const BEGIN: &str = "<|tool_call_begin|>";
const ARGS: &str = "<|tool_call_argument_begin|>";
const END: &str = "<|tool_call_end|>";

fn holds_markers(text: &str) -> bool {
    text.contains(BEGIN)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::ending_at(text, REASONING_ENDS);
    let mut pos = 0;
    let patterns = [SECTIONS[0], SECTIONS[1], BEGIN];
    while let Some((start, which)) = src.find_any(pos, &patterns) {
        if which == 2 {
            // A call outside a section.
            match call(text, start, out) {
                Some(end) => pos = end,
                None => break,
            }
            continue;
        }
        let token = (start, start + patterns[which].len());
        match section(text, &mut src, token, (BEGIN, SECTION_ENDS), call, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the call whose `<|tool_call_begin|>` is at `start`.
fn call(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let id_start = start + BEGIN.len();
    // The id runs to the next token, which must be `<|tool_call_argument_begin|>`.
    let args_token = match find(text, id_start, "<|") {
        Some(t) if text[t..].starts_with(ARGS) => t,
        Some(t) if !may_continue(text, t, &[ARGS]) => {
            let (name, name_span, _) = parse_id(text, id_start, t);
            let error = malformed(WHAT, name, "no `<|tool_call_argument_begin|>`").at(span(t, t));
            let end = find(text, t, END).map(|p| p + END.len());
            out.broken(name, name_span, start, end.unwrap_or(text.len()), error);
            return end;
        }
        Some(t) => {
            let (name, name_span, _) = parse_id(text, id_start, t);
            out.broken(name, name_span, start, text.len(), cut(WHAT, name, END));
            return None;
        }
        None => {
            out.broken("", None, start, text.len(), cut(WHAT, "", END));
            return None;
        }
    };
    let (name, name_span, id) = parse_id(text, id_start, args_token);
    let args_start = args_token + ARGS.len();
    let Some(args_end) = find(text, args_start, END) else {
        out.broken(name, name_span, start, text.len(), cut(WHAT, name, END));
        return None;
    };
    let end = args_end + END.len();
    if name.is_empty() {
        let written = id.as_deref().map_or(String::new(), |id| clip(id, 40));
        let error = malformed(
            WHAT,
            "",
            &format!("its id `{written}` is not `functions.NAME:INDEX`"),
        )
        .at(span(id_start, args_token));
        out.broken("", None, start, end, error);
        return Some(end);
    }
    let (a, z) = trim(b, args_start, args_end);
    let args = if a == z {
        FormatArgs::Text(Vec::new())
    } else {
        FormatArgs::Json(span(a, z))
    };
    out.call(name, name_span, (start, end), args, id);
    Some(end)
}

/// The name, its span and the id written between `start` and `stop`: `functions.add:0` (or
/// `add:0`) names `add`; an id without its `:INDEX` (`functions.add.0`, `0`) names nothing, as
/// the name cannot be told from it.
fn parse_id(
    text: &str,
    start: usize,
    stop: usize,
) -> (&str, Option<crate::error::Span>, Option<String>) {
    let (a, z) = trim(text.as_bytes(), start, stop);
    let id = &text[a..z];
    let mut name_start = a;
    if id.starts_with("functions.") {
        name_start += "functions.".len();
    }
    let mut name_end = name_start;
    if let Some(colon) = id.rfind(':') {
        let index = &id[colon + 1..];
        if !index.is_empty() && index.bytes().all(|c| c.is_ascii_digit()) && a + colon >= name_start
        {
            name_end = a + colon;
        }
    }
    let name = &text[name_start..name_end];
    let id = (!id.is_empty()).then(|| id.to_string());
    (
        name,
        Some(span(name_start, name_end)).filter(|_| !name.is_empty()),
        id,
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::KimiK2;

    #[test]
    fn one_call_with_its_id() {
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": 8, \"b\": 1}<|tool_call_end|><|tool_calls_section_end|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert_eq!(r.calls[0].id.as_deref(), Some("functions.add:0"));
        assert_eq!(args_src(&r.calls[0], text), "{\"a\": 8, \"b\": 1}");
        assert_eq!(r.markup.len(), 2);
        assert_eq!(r.claimed.len(), 1);
    }

    #[test]
    fn several_calls_with_blanks_and_prose() {
        let text = "I'll check the weather.\n<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|> {\"city\": \"Beijing\"} <|tool_call_end|>\n<|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>{}<|tool_call_end|>\n<|tool_calls_section_end|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "search"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"city\": \"Beijing\"}");
        assert_eq!(r.calls[1].id.as_deref(), Some("functions.search:1"));
    }

    #[test]
    fn cut_off_call_keeps_its_name() {
        let r = read_as(F, "<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": 8");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn malformed_arguments_are_left_to_the_json_reader() {
        // The arguments' text is handed on as it is: the JSON reader reports `{"a": }`.
        let text = "<|tool_call_begin|>add:3<|tool_call_argument_begin|>{\"a\": }<|tool_call_end|>";
        let r = read_as(F, text);
        assert_eq!(r.calls[0].id.as_deref(), Some("add:3"));
        assert!(matches!(r.calls[0].args, FormatArgs::Json(_)));
        let missing = read_as(F, "<|tool_call_begin|>functions.add:0<|tool_call_end|>");
        assert!(is_broken(&missing.calls[0]));
    }

    #[test]
    fn an_id_without_its_index_names_nothing() {
        for id in ["functions.get_weather.0", "0"] {
            let text = format!("<|tool_calls_section_begin|><|tool_call_begin|>{id} <|tool_call_argument_begin|>{{\"city\": \"Tokyo\"}}<|tool_call_end|><|tool_calls_section_end|>");
            let r = read_as(F, &text);
            assert_eq!(names(&r), [""]);
            assert!(matches!(&r.calls[0].args, FormatArgs::Broken(e) if e.message.contains(id)));
        }
    }

    #[test]
    fn reasoning_and_plain_text() {
        let r = read_as(F, "<think>call <|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{}<|tool_call_end|>?</think>No.");
        assert!(r.calls.is_empty());
        assert_eq!(read_as(F, "hello"), Default::default());
    }
}

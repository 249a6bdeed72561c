//! MiniCPM5: `<function>` calls with `<param>` values, standing alone in the text, as its chat
//! template writes them and vLLM's `minicpm5` parser reads them:
//!
//! ```text
//! <function name="get_weather"><param name="city">上海</param><param name="date">2024-06-27</param></function>
//! ```
//!
//! Values are kept as written (a value wrapped in `<![CDATA[…]]>` loses the wrapper) and read
//! by their parameter's type (`invoke.rs`); a call is complete at its `</function>`.
//! `<think>` blocks are reasoning.
//!
//! The same tag around a JSON object of arguments, `<function name="f">{"a": 1}</function>`,
//! is a call too: llama.cpp's Hermes 2 Pro reader takes it (Qwen2.5 and Hermes models write it).

use super::invoke::{invoke, Tags};
use super::scan::{char_end, cut, json_end, malformed, may_continue, skip_ws, span, Out, Src};
use super::{FormatArgs, ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::MiniCpm5,
    name: "minicpm5",
    marker_starts: &[b"<f"],
    found_by_markers: true,
    holds_markers,
    read,
};

pub(super) const OPEN: &str = "<function name=";
const TAGS: Tags = Tags {
    what: "MiniCPM5",
    invoke: "<function",
    name: "name",
    end_invoke: "</function>",
    parameter: "<param",
    key: "name",
    end_parameter: "</param>",
    tag_end: ">",
    cdata: true,
};

fn holds_markers(text: &str) -> bool {
    text.contains(OPEN)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[OPEN]) {
        let next = match json_call(text, start, out) {
            Some(next) => next,
            None => invoke(&TAGS, text, (start, start), out),
        };
        match next {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// The call at `start` when its `<function name="f">` tag is followed by a JSON object: where
/// to go on (`Some(None)` when the text ends within it); `None` when the tag is not followed
/// by one (a MiniCPM5 call, or not a call).
pub(super) fn json_call(text: &str, start: usize, out: &mut Out) -> Option<Option<usize>> {
    let b = text.as_bytes();
    let quote = start + OPEN.len();
    if b.get(quote) != Some(&b'"') {
        return None;
    }
    let name_start = quote + 1;
    let name_len = b
        .get(name_start..)?
        .iter()
        .position(|c| matches!(c, b'"' | b'<' | b'>' | b'{' | b'\n'))?;
    let name_end = name_start + name_len;
    if b.get(name_end) != Some(&b'"') || b.get(name_end + 1) != Some(&b'>') || name_len == 0 {
        return None;
    }
    let open = skip_ws(b, name_end + 2);
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let name = &text[name_start..name_end];
    let name_span = Some(span(name_start, name_end));
    let Some(args_end) = json_end(b, open) else {
        let error = cut(TAGS.what, name, END);
        out.broken(name, name_span, start, text.len(), error);
        return Some(None);
    };
    let tail = skip_ws(b, args_end);
    if text[tail..].starts_with(END) {
        let end = tail + END.len();
        out.call(
            name,
            name_span,
            (start, end),
            FormatArgs::Json(span(open, args_end)),
            None,
        );
        return Some(Some(end));
    }
    if may_continue(text, tail, &[END]) {
        let error = cut(TAGS.what, name, END);
        out.broken(name, name_span, start, text.len(), error);
        return Some(None);
    }
    let error = malformed(
        TAGS.what,
        name,
        "expected `</function>` after the arguments",
    )
    .at(span(tail, char_end(text, tail)));
    out.broken(name, name_span, start, args_end, error);
    Some(Some(args_end))
}

const END: &str = "</function>";

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, args_text, is_broken, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::MiniCpm5;

    #[test]
    fn vllm_calls() {
        // vLLM's tests/tool_parsers/test_minicpm5xml_tool_parser.py.
        let text = "Intro before.\n<function name=\"get_weather\"><param name=\"city\">上海</param><param name=\"date\">2024-06-27</param></function>\nOutro after.\n";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("city", "上海"), ("date", "2024-06-27")]
        );
        let text = "<function name=\"get_weather\"><param name=\"city\"><![CDATA[北\n京]]></param><param name=\"date\">2024-06-27</param></function>\n";
        let r = read_as(F, text);
        assert_eq!(args_text(&r.calls[0], text)[0], ("city", "北\n京"));
        let text = "<function name=\"sum_values\"><param name=\"nums\">[1, 2, 3]</param><param name=\"exact\">true</param></function>\n";
        assert_eq!(
            args_text(&read_as(F, text).calls[0], text),
            [("nums", "[1, 2, 3]"), ("exact", "true")]
        );
        let text = "Head\n<function name=\"get_weather\"><param name=\"city\">北京</param></function>\nTXT\n<function name=\"sum_values\"><param name=\"nums\">[7,8,9]</param><param name=\"exact\">false</param></function>\nTail\n";
        assert_eq!(names(&read_as(F, text)), ["get_weather", "sum_values"]);
        let r = read_as(F, "<function name=\"noop\"></function>\n");
        assert_eq!(r.calls[0].args, FormatArgs::Text(Vec::new()));
    }

    #[test]
    fn what_vllm_refuses_is_not_a_call() {
        for text in [
            "<function name=\"get_weather\"><param name=\"city\">北京</param>",
            "<function name=\"get_weather\"><param>北京</param><param name=\"date\">2024-06-27</param></function>\n",
            "<function name=\"get_weather\"><param name=\"city\">北京</param><param name=\"city\">上海</param></function>\n",
        ] {
            let r = read_as(F, text);
            assert_eq!(names(&r), ["get_weather"], "{text}");
            assert!(is_broken(&r.calls[0]), "{text}");
        }
        assert!(read_as(F, "How can I help you?").calls.is_empty());
    }

    #[test]
    fn a_json_object_in_the_tag() {
        // llama.cpp's Hermes 2 Pro reader: `<function name="f">` and JSON arguments.
        let text = "<function name=\"special_function\">{\"arg1\": 1}</function>\n<function name=\"search\"><param name=\"query\">x</param></function>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function", "search"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"arg1\": 1}");
        assert!(!r.calls.iter().any(is_broken));
        let r = read_as(F, "<function name=\"add\">{\"a\": 1");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, "<function name=\"add\">{\"a\": 1} then more");
        assert!(is_broken(&r.calls[0]));
    }
}

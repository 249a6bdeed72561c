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

use super::invoke::{invoke, Tags};
use super::scan::{Out, Src};
use super::{ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::MiniCpm5,
    name: "minicpm5",
    marker_starts: &[b"<f"],
    found_by_markers: true,
    holds_markers,
    read,
};

const OPEN: &str = "<function name=";
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
        match invoke(&TAGS, text, (start, start), out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
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
}

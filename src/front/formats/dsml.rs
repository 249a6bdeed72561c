//! DeepSeek V3.2 and V4: DSML, `<｜DSML｜invoke>` tags in a section, as their chat templates
//! write them and vLLM's `deepseek_v32` and `deepseek_v4` parsers read them:
//!
//! ```text
//! <｜DSML｜function_calls>
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="location" string="true">杭州</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜function_calls>
//! ```
//!
//! (V4 writes `<｜DSML｜tool_calls>`.) Values are kept as written: a `string="true"` one is
//! that string, whatever its parameter's type (DeepSeek's encoder writes it for string values
//! only); a `string="false"` one is converted by its parameter's type (`invoke.rs`).
//! `<think>` blocks are reasoning.

use super::invoke::{invoke, xml_tags, Tags};
use super::scan::{sections, Out, Src};
use super::{ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::DeepSeekDsml,
    name: "deepseek-dsml",
    marker_starts: &[b"<\xEF"],
    found_by_markers: true,
    holds_markers,
    read,
};

const SECTIONS: &[&str] = &["<｜DSML｜function_calls>", "<｜DSML｜tool_calls>"];
const END_SECTIONS: &[&str] = &["</｜DSML｜function_calls>", "</｜DSML｜tool_calls>"];
const TAGS: Tags = xml_tags(
    "DeepSeek DSML",
    ("<｜DSML｜invoke", "</｜DSML｜invoke>"),
    ("<｜DSML｜parameter", "</｜DSML｜parameter>"),
);

fn holds_markers(text: &str) -> bool {
    SECTIONS.iter().any(|s| text.contains(s))
}

fn read(text: &str, out: &mut Out) {
    sections(
        text,
        Src::new(text),
        SECTIONS,
        (TAGS.invoke, END_SECTIONS),
        call,
        out,
    );
}

fn call(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    invoke(&TAGS, text, (start, start), out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::DeepSeekDsml;

    fn call(name: &str, params: &[(&str, &str)]) -> String {
        let params: String = params
            .iter()
            .map(|(k, v)| {
                format!("<｜DSML｜parameter name=\"{k}\" string=\"true\">{v}</｜DSML｜parameter>")
            })
            .collect();
        format!("<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"{name}\">\n{params}\n</｜DSML｜invoke>\n</｜DSML｜function_calls>")
    }

    #[test]
    fn vllm_calls() {
        // vLLM's tests/tool_parsers/test_deepseekv32_tool_parser.py.
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_time"]);
        assert_eq!(r.calls[0].args, FormatArgs::Text(Vec::new()));
        let text = call("get_weather", &[("location", "SF"), ("date", "2024-01-16")]);
        let r = read_as(F, &text);
        assert_eq!(
            args_text(&r.calls[0], &text),
            [("location", "SF"), ("date", "2024-01-16")]
        );
        let text = format!(
            "Sure, let me check! {}",
            call("get_weather", &[("location", "NYC")])
        );
        assert_eq!(names(&read_as(F, &text)), ["get_weather"]);
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">SF</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather", "get_weather"]);
        assert_eq!(args_text(&r.calls[1], text), [("location", "NYC")]);
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"toggle\">\n<｜DSML｜parameter name=\"enabled\" string=\"false\">true</｜DSML｜parameter>\n<｜DSML｜parameter name=\"count\" string=\"false\">42</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("enabled", "true"), ("count", "42")]
        );
    }

    #[test]
    fn v4_sections_reasoning_and_values_as_written() {
        let text = "<think>I could <｜DSML｜tool_calls><｜DSML｜invoke name=\"multiply\"></｜DSML｜invoke></｜DSML｜tool_calls></think>Here.<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">  杭州 天气\n</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search"]);
        assert_eq!(args_text(&r.calls[0], text), [("query", "  杭州 天气\n")]);
        assert_eq!(r.reasoning.len(), 1);
    }

    #[test]
    fn complete_without_the_section_s_close_and_cut_off() {
        let text =
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n";
        let r = read_as(F, text);
        assert!(!is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜param",
        );
        assert_eq!(names(&r), ["get_time"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn a_string_true_value_is_the_string_written() {
        use crate::types::Type;
        use crate::{Limits, Value};
        let limits = Limits::default();
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"zip\" string=\"true\">007</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">7</｜DSML｜parameter>\n<｜DSML｜parameter name=\"any\" string=\"true\">[1, 2]</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let r = read_as(F, text);
        let FormatArgs::Text(args) = &r.calls[0].args else {
            panic!("{r:?}");
        };
        let convert = |i: usize, ty: Option<&Type>| {
            super::super::convert_text_arg(&args[i], ty, &limits).and_then(|t| {
                crate::eval::eval_pure(&t, &crate::resolve::context::Context::new(), &limits)
            })
        };
        assert_eq!(convert(0, Some(&Type::Int)), Ok(Value::Str("007".into())));
        assert_eq!(convert(1, Some(&Type::Int)), Ok(Value::Int(7)));
        assert_eq!(convert(2, None), Ok(Value::Str("[1, 2]".into())));
    }
}

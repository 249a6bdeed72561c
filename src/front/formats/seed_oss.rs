//! Seed-OSS (ByteDance): Qwen3-Coder's XML calls in its own wrapper, with its reasoning in
//! `<seed:think>`, as its chat template writes them and vLLM's `seed_oss` and llama.cpp's
//! parsers read them:
//!
//! ```text
//! <seed:think>The user wants the weather.</seed:think>
//! <seed:tool_call>
//! <function=get_weather>
//! <parameter=location>Barcelona, Spain</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! Values are read as Qwen3-Coder's are (`qwen_xml.rs`): as written, the template's pair of
//! newlines around them taken off; a call quoted in the reasoning is reasoning.

use super::qwen_xml::{read_as, Wrapper};
use super::scan::{Out, Src};
use super::{ModelFormat, Spec};

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::SeedOss,
    name: "seed-oss",
    marker_starts: &[b"<s"],
    found_by_markers: true,
    holds_markers,
    read,
};

const SEED: Wrapper = Wrapper {
    what: "Seed-OSS",
    open: "<seed:tool_call>",
    close: "</seed:tool_call>",
};

fn holds_markers(text: &str) -> bool {
    text.contains(SEED.open)
}

fn read(text: &str, out: &mut Out) {
    read_as(&SEED, text, &mut Src::new(text), out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::SeedOss;

    #[test]
    fn llama_cpp_calls() {
        // llama.cpp's tests/chat-parsers/test-seed-oss.cpp.
        let text = "<seed:tool_call>\n<function=special_function>\n<parameter=arg1>\n42\n</parameter>\n</function>\n</seed:tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function"]);
        assert_eq!(args_text(&r.calls[0], text), [("arg1", "42")]);
        let text = "<seed:think>I need to call the special function</seed:think><seed:tool_call>\n<function=process_data>\n<parameter=input>\ntest\n</parameter>\n<parameter=format>\njson\n</parameter>\n</function>\n</seed:tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("input", "test"), ("format", "json")]
        );
        assert_eq!(r.reasoning.len(), 1);
        // Cut inside the reasoning: no call.
        assert!(read_as(F, "<seed:think>I was thinking").calls.is_empty());
    }

    #[test]
    fn vllm_calls_and_a_call_quoted_in_the_reasoning() {
        // vLLM's tests/tool_parsers/test_seed_oss_tool_parser.py.
        let text = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("location", "Barcelona, Spain")]
        );
        let text = "<seed:think>\nLet me format the function call correctly. The format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>. Let me go with that.</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("location", "Barcelona, Spain"), ("unit", "celsius")]
        );
        let text = "<seed:think>\n</seed:cot_budget_reflect>\n</seed:cot_budget_reflect>\nThe current thinking budget is 0, so I will directly start answering the question.\n</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>";
        assert_eq!(names(&read_as(F, text)), ["get_weather"]);
        // Budget reflections inside the reasoning are its text.
        let text = "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze.\n<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n The unit can be omitted.</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>";
        assert_eq!(names(&read_as(F, text)), ["get_weather"]);
    }

    #[test]
    fn a_value_keeps_its_own_newlines_and_indentation() {
        let text = "<seed:tool_call>\n<function=write>\n<parameter=code>def f():\n    return 1\n</parameter>\n</function>\n</seed:tool_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("code", "def f():\n    return 1\n")]
        );
    }

    #[test]
    fn complete_without_its_closing_tag_and_cut_off() {
        let text = "<seed:tool_call>\n<function=add>\n<parameter=a>1</parameter>\n</function>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add"]);
        assert!(!is_broken(&r.calls[0]));
        let r = read_as(F, "<seed:tool_call>\n<function=add>\n<parameter=a>1");
        assert!(is_broken(&r.calls[0]));
        assert_eq!(names(&r), ["add"]);
    }
}

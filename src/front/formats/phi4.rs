//! Phi-4-mini: `functools` followed by a JSON list of calls, as its chat template asks and
//! vLLM's `phi4_mini_json` parser reads it:
//!
//! ```text
//! functools[{"name": "add", "arguments": {"a": 1, "b": 2}}]
//! ```

use super::scan::{json_call_list, Out, Src};
use super::{ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Phi4,
    name: "phi4",
    marker_starts: &[b"s["],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Phi-4";
const TOKEN: &str = "functools[";

fn holds_markers(text: &str) -> bool {
    text.contains(TOKEN)
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[TOKEN]) {
        let list = start + TOKEN.len() - 1;
        out.markup(start, list, IgnoreReason::ChatToken);
        let end = json_call_list(text, list, WHAT, out);
        out.claim(start, end.unwrap_or(text.len()));
        match end {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Phi4;

    #[test]
    fn one_and_several_calls() {
        let text = "functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"city\": \"Paris\"}");
        let text = "I will call two tools. functools[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"multiply\", \"parameters\": {\"a\": 2, \"b\": 3}}]";
        assert_eq!(names(&read_as(F, text)), ["add", "multiply"]);
    }

    #[test]
    fn cut_off_and_malformed() {
        let r = read_as(F, "functools[{\"name\": \"add\", \"arguments\": {\"a\": ");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, "functools[{\"name\": \"add\" \"arguments\": {}}]");
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(
            read_as(F, "functools is a Python module."),
            Default::default()
        );
    }
}

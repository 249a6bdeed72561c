//! The one routing decision: how a request runs a text it was given as model output or as
//! JSON. The text is read as JSON at most once here, and that reading is handed on to the
//! front-end's reading of the calls ([`check::plan`](super::check::plan)), which does not read
//! it again.
//!
//! ```
//! use fexpr::front::route::{route, Door, Route};
//! use fexpr::Limits;
//!
//! let limits = Limits::default();
//! assert!(matches!(route("add(a=1)", &limits, Door::ModelOutput), Route::Read(r) if !r.is_json()));
//! assert!(matches!(route(r#"{"name": "add", "kwargs": {"a": 1}}"#, &limits, Door::Json), Route::Evaluate));
//! assert!(matches!(route(r#"{"role": "assistant", "content": "Hi!"}"#, &limits, Door::ModelOutput), Route::NoCall(_)));
//! ```

use crate::front::json_input;
use crate::limits::Limits;
use crate::syntax::{Expr, ExprKind};

/// Which door a text came in by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door {
    /// Model output (`Input::model_output`, a string): any text.
    ModelOutput,
    /// JSON (`Input::json`, `Input::openai`, `Input::anthropic`): text that must be JSON.
    Json,
}

/// How a text runs.
#[derive(Debug)]
#[non_exhaustive]
pub enum Route {
    /// Evaluate the text as fexpr's own JSON forms, as written ([`json_input::run`]): on the
    /// JSON door, a `Function` (`{"name", "args", "kwargs"}`), a `FunctionExpression`
    /// (`{"action"}`) or a list of them — an object with `action`, `args` or `kwargs` and no
    /// `id`, or with only `name` (and `thought`) — and text that is not JSON, which gets the
    /// JSON reader's error. Other JSON forms (OpenAI, Anthropic, Llama, calls with an `id`) are
    /// read for their calls, which keeps their ids.
    Evaluate,
    /// A provider's assistant message (`"role": "assistant"`) that asks for no call: no
    /// `tool_calls` (or `null`, or `[]`), no `function_call`, no Anthropic `tool_use` block in
    /// its `content`. Nothing runs and there is no output: a reply to one would answer a call
    /// the model never made. The reading says what the text holds.
    NoCall(Reading),
    /// Read the text for the calls the model asked to run, and run them.
    Read(Reading),
}

/// A text on its way to the front-end's reading, with what the routing learnt of it.
#[derive(Debug, Default)]
pub struct Reading {
    /// Whether the text looks like JSON (an object, or a list of objects).
    json: bool,
    /// The whole text read as JSON, when it starts with its first byte: the front-end's reading
    /// takes it instead of reading the same bytes again.
    pub(crate) tree: Option<Expr>,
    /// Whether `tree` was written from a parsed document ([`json_input::to_text_read`]): it
    /// holds no duplicate key (a parsed object has none) and no number out of a float's range,
    /// so [`json_input::check_call_tree`] has nothing to find in it.
    pub(crate) checked: bool,
}

impl Reading {
    /// Whether the text looks like JSON (an object, or a list of objects): when no call is
    /// found in it, it runs as JSON, for the JSON reader's own error.
    pub fn is_json(&self) -> bool {
        self.json
    }
}

/// What a reading of `text`, the text [`json_input::to_text_read`] wrote of a parsed document,
/// is handed: its tree (`None`: the reader reads the text itself), as [`route`] hands it on.
#[cfg(feature = "native")]
pub(crate) fn written(text: &str, tree: Option<Expr>) -> Reading {
    let json = json_input::looks_like_json(text);
    let whole = json && text.starts_with(['{', '[']);
    Reading {
        json,
        checked: tree.is_some() && whole,
        tree: tree.filter(|_| whole),
    }
}

/// How `text`, come in by `door`, runs.
pub fn route(text: &str, limits: &Limits, door: Door) -> Route {
    route_read(text, limits, door, None)
}

/// [`route`], given the tree [`json_input::read`] reads from `text` when the caller has it
/// already (`read`: a parsed document written out by [`json_input::to_text_read`]), so that
/// the text is not read again.
pub(crate) fn route_read(text: &str, limits: &Limits, door: Door, read: Option<Expr>) -> Route {
    if !json_input::looks_like_json(text) {
        return match door {
            Door::Json => Route::Evaluate,
            Door::ModelOutput => Route::Read(Reading::default()),
        };
    }
    let checked = read.is_some();
    let read = match read {
        Some(tree) => Ok(tree),
        None => json_input::read(text, limits),
    };
    let Ok(tree) = read else {
        return match door {
            Door::Json => Route::Evaluate,
            Door::ModelOutput => Route::Read(Reading {
                json: true,
                tree: None,
                checked: false,
            }),
        };
    };
    if door == Door::Json && fexpr_forms(&tree) {
        return Route::Evaluate;
    }
    let no_call = holds_no_call(&tree);
    // The front-end reads JSON from its first byte: a tree read after leading blanks would
    // index the text differently, so it is read again there.
    let reading = Reading {
        json: true,
        tree: text.starts_with(['{', '[']).then_some(tree),
        checked,
    };
    if no_call {
        Route::NoCall(reading)
    } else {
        Route::Read(reading)
    }
}

/// Whether the JSON `tree` is in fexpr's own forms (see [`Route::Evaluate`]).
fn fexpr_forms(tree: &Expr) -> bool {
    let is_form = |node: &Expr| {
        let ExprKind::Dict(pairs) = &node.kind else {
            return false;
        };
        let has = |key: &str| json_input::get(pairs, key).is_some();
        let only_name = pairs
            .iter()
            .all(|(k, _)| json_input::as_str(k).is_some_and(|k| k == "name" || k == "thought"));
        !has("id") && (has("action") || has("args") || has("kwargs") || only_name)
    };
    match &tree.kind {
        ExprKind::List(items) => !items.is_empty() && items.iter().all(is_form),
        _ => is_form(tree),
    }
}

/// Whether the JSON `tree` is an assistant message that asks for no call (see
/// [`Route::NoCall`]).
fn holds_no_call(tree: &Expr) -> bool {
    let ExprKind::Dict(pairs) = &tree.kind else {
        return false;
    };
    let absent = |key: &str| match json_input::get(pairs, key).map(|v| &v.kind) {
        None | Some(ExprKind::None) => true,
        Some(ExprKind::List(items)) => items.is_empty(),
        Some(_) => false,
    };
    let tool_use = |block: &Expr| match &block.kind {
        ExprKind::Dict(block) => json_input::get(block, "type")
            .and_then(json_input::as_str)
            .is_some_and(|t| t == "tool_use"),
        _ => false,
    };
    let content_calls = match json_input::get(pairs, "content").map(|v| &v.kind) {
        Some(ExprKind::List(blocks)) => blocks.iter().any(tool_use),
        _ => false,
    };
    json_input::get(pairs, "role").and_then(json_input::as_str) == Some("assistant")
        && absent("tool_calls")
        && absent("function_call")
        && !content_calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::check::plan_to_run;
    use crate::front::repair::RepairOptions;

    /// The JSON routing read is handed to the reading of the calls: the plan is the same as
    /// when that reading reads the text itself.
    #[test]
    fn the_json_read_is_read_once() {
        let mut ctx = crate::resolve::context::Context::new();
        for (name, params) in [
            ("add", ["a", "b"]),
            ("multiply", ["a", "b"]),
            ("get_weather", ["city", "unit"]),
            ("search", ["query", "limit"]),
        ] {
            let schema = serde_json::json!({"type": "object", "properties": {
                params[0]: {}, params[1]: {}}, "required": [params[0]]});
            let sig = crate::types::RecordType::from_schema(name, &schema);
            ctx.insert(
                name,
                crate::resolve::context::Entry::Tool(std::sync::Arc::new(sig)),
            );
        }
        let limits = Limits::default();
        let options = RepairOptions::default();
        let mut handed = 0;
        // JSON documents whose strings hold what would be markup, reasoning, fences, comments
        // or a format's markers outside them: read as data, as without the routing's tree.
        let markup_in_strings = [
            r#"{"name": "add", "arguments": {"a": "<tool_call>{\"name\": \"multiply\", \"arguments\": {}}</tool_call>", "b": 2}}"#,
            r#"{"role": "assistant", "content": "let me think</think>", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": \"</think> # x\", \"b\": 1}"}}]}"#,
            "{\"name\": \"search\", \"arguments\": {\"query\": \"```python\\nadd(a=1)\\n```<|eot_id|>[TOOL_CALLS]\"}}\n\n  ",
            "[\n  {\"name\": \"add\", \"arguments\": {\"a\": 1}},\n\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"<think>Paris\"}}\n]",
            r#"{"role": "assistant", "content": [{"type": "text", "text": "[THINK]x[/THINK] see add(a=1)"}, {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "a": 2}}]}"#,
            r#"{"name": "add", "arguments": "{\"a\": 1e400}"}"#,
            r#"{"note": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1}}</tool_call>"}"#,
        ];
        for text in markup_in_strings {
            let (Route::Read(reading) | Route::NoCall(reading)) =
                route(text, &limits, Door::ModelOutput)
            else {
                panic!("{text:?} is not read")
            };
            assert!(reading.tree.is_some(), "{text:?} is not handed whole");
        }
        let texts = crate::front::python::tests::corpus()
            .into_iter()
            .chain(markup_in_strings.iter().map(|t| t.to_string()));
        for text in texts {
            for door in [Door::ModelOutput, Door::Json] {
                let (Route::Read(reading) | Route::NoCall(reading)) = route(&text, &limits, door)
                else {
                    continue;
                };
                handed += usize::from(reading.tree.is_some());
                let with = plan_to_run(&text, &ctx, &limits, &options, reading);
                let without = plan_to_run(&text, &ctx, &limits, &options, Reading::default());
                assert_eq!(with, without, "{text:?}");
            }
        }
        assert!(handed > 10, "{handed}");
    }
}

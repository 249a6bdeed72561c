//! The JSON call forms of model text, next to [`json_input`] which reads them: fexpr's
//! `Function` and `FunctionExpression`, `{"name", "arguments"}` (OpenAI functions, Hermes/Qwen
//! tool calls), `{"name", "parameters"}` (Llama), OpenAI `tool_calls` and assistant messages
//! (also the legacy `function_call`), Anthropic `tool_use` blocks and messages, and lists of
//! any of these — also written as Python literals.
//!
//! No silent choice: an object with two keys naming the function (`name` and `tool_name`), two
//! keys holding the arguments (`arguments` and `kwargs`; fexpr's `args` beside `kwargs` is one
//! call's positional and keyword arguments; `input` and `arguments` in a `tool_use` block), a
//! message holding two call forms (`tool_calls` and `function_call`, or `tool_calls` and
//! Anthropic `tool_use` blocks), or a message that is also a bare call object (`role` or
//! `tool_calls` beside `name` and `arguments`) is one error row naming both, and nothing in it
//! runs. In a list that holds calls, every other item gets its own error row, so a provider
//! reply can answer each one.
//!
//! Every call is handed on as the tree [`json_input::call_of`] makes of its name and arguments:
//! the name and every key exactly as written (`from`, `max-results`, `城市`), values as read,
//! spans into the call's JSON object as written — never printed as Python text and read again.

use crate::error::{clip, Error, ErrorKind, Span};
use crate::front::{json_input, moved_back, FoundCall, Origin};
use crate::limits::Limits;
use crate::syntax::{Expr, ExprKind, UnaryOp};

/// How many levels of JSON wrapping (message → `tool_calls` → call → `function`) are looked
/// into for calls.
pub const MAX_JSON_NESTING: usize = 8;

/// Keys that name the function in a JSON call (`name` first).
const NAME_KEYS: &[&str] = &["name", "function", "function_name", "tool_name", "tool"];

/// Keys that hold the arguments in a JSON call, in order of preference.
const ARGS_KEYS: &[&str] = &[
    "arguments",
    "kwargs",
    "parameters",
    "params",
    "input",
    "tool_input",
    "args",
];

/// Other keys a call object may carry.
const EXTRA_KEYS: &[&str] = &["thought", "id", "type", "description", "index"];

/// Arguments of a JSON call form.
enum JsonArgs {
    /// Positional arguments and the object of keyword arguments (`null` for none), for
    /// [`json_input::call_of`].
    Object(Vec<Expr>, Expr),
    /// A `FunctionExpression`'s action: its string.
    Action(Expr),
    /// Arguments that cannot be read, or an object that tries to be a call and is not one: the
    /// error, its span in the JSON text.
    Invalid(Error),
}

/// One call (or item that tries to be one) of a JSON form.
struct JsonCall {
    origin: Origin,
    name: String,
    /// Where the name's string is in the JSON text.
    name_span: Span,
    args: JsonArgs,
    id: Option<String>,
    /// The object it was read from, in the JSON text.
    span: Span,
}

/// The calls of the JSON call form `tree`, read from `json` (which starts at byte `start` of the
/// text; `tree`'s spans index `json`); `None` if it is not one. Each call is the tree
/// [`json_input::call_of`] makes of its name and arguments (a `FunctionExpression`'s action
/// parsed), its source the JSON object it was read from as written, which its spans index.
/// When the form is ambiguous (a duplicate key) or holds a number out of range, each of its
/// calls fails with that error, and its source is the JSON text, which the error's span indexes;
/// `checked`: `tree` is known to hold neither (written from a parsed document), so it is not
/// looked for. (An `arguments` string is read, and checked, either way.)
///
/// Long (about 100 lines) for a reason: one walk of the form's calls with one error policy
/// (a duplicate key or an out-of-range number fails every call of the form, each keeping its
/// id), shared by all of them.
pub(super) fn calls(
    tree: &Expr,
    json: &str,
    start: usize,
    limits: &Limits,
    checked: bool,
) -> Option<Vec<FoundCall>> {
    let mut found = Vec::new();
    let base = u32::try_from(start).unwrap_or(u32::MAX);
    if !json_calls(tree, json, base, limits, 0, &mut found) {
        return None;
    }
    let whole = super::span(start, start + json.len());
    let shift = |s: Span| Span::new(s.start.saturating_add(base), s.end.saturating_add(base));
    let check = if checked {
        Ok(())
    } else {
        json_input::check_call_tree(tree, json, base)
    };
    if let Err(e) = check {
        return Some(
            found
                .into_iter()
                .map(|c| FoundCall {
                    name: c.name,
                    span: whole,
                    origin: c.origin,
                    source: json.to_string(),
                    parsed: Err(e.clone()),
                    id: c.id,
                })
                .collect(),
        );
    }
    let mut out = Vec::with_capacity(found.len());
    for JsonCall {
        origin,
        name,
        name_span,
        args,
        id,
        span,
    } in found
    {
        let at = shift(span);
        // The call's own text is its object as written; every span moves into it.
        let source = json.get(span.range()).unwrap_or(json);
        let tree = match args {
            JsonArgs::Action(action) => json_input::read_action(&action, json, limits),
            JsonArgs::Object(positional, kwargs) => {
                json_input::call_of(name.clone(), name_span, positional, kwargs, span)
            }
            JsonArgs::Invalid(e) => Err(e),
        };
        let parsed = moved_back(tree, span.start);
        // A FunctionExpression's action may hold a list of calls: one call each, all with the
        // object as their source.
        let items = match parsed {
            Ok(Expr {
                kind: ExprKind::List(items) | ExprKind::Tuple(items),
                ..
            }) if origin == Origin::FunctionExpression
                && !items.is_empty()
                && items.iter().all(|e| matches!(e.kind, ExprKind::Call(_))) =>
            {
                items.into_iter().map(Ok).collect()
            }
            parsed => vec![parsed.and_then(|e| {
                e.as_call()?;
                Ok(e)
            })],
        };
        for parsed in items {
            let name = match &parsed {
                Ok(Expr {
                    kind: ExprKind::Call(call),
                    ..
                }) => call.func.clone(),
                _ => name.clone(),
            };
            out.push(FoundCall {
                name,
                span: at,
                origin,
                source: source.to_string(),
                parsed,
                id: id.clone(),
            });
        }
    }
    Some(out)
}

/// The call to `name` (at `name_span` of the text; an empty span where none was written) whose
/// arguments are the JSON object at `args` of `text` (a JSON string holding the object is
/// read too), as [`json_input::call_of`] makes it: spans index `text`; `span` is the call's.
pub(super) fn call_from_args(
    name: &str,
    name_span: Span,
    args: Span,
    span: Span,
    text: &str,
    limits: &Limits,
) -> Result<Expr, Error> {
    let json = text.get(args.range()).unwrap_or_default();
    let shift = |s: Span| {
        Span::new(
            s.start.saturating_add(args.start),
            s.end.saturating_add(args.start),
        )
    };
    let mut tree = json_input::read(json, limits).map_err(|e| Error {
        span: e.span.map(shift),
        ..e
    })?;
    json_input::map_spans(&mut tree, &shift);
    if let ExprKind::Str(_) = &tree.kind {
        // The object written as a JSON string: read from the string's text, spans through its
        // escapes.
        tree = json_input::read_nested(&tree, text, limits)?;
    }
    json_input::check_call_tree(&tree, text, 0)?;
    json_input::call_of(name.to_string(), name_span, Vec::new(), tree, span)
}

/// The one tool call of an OpenAI assistant message given as a parsed document, when the
/// message holds nothing else: `{"role": "assistant", "content": null, "tool_calls": [{"id",
/// "type": "function", "function": {"name", "arguments"}}]}` (`content` and `type` may be left
/// out), the id, name and arguments strings. Of such a message the reading ([`calls`]) finds
/// that one call, with that id, and ignores nothing. `None` for any other document. One pass
/// over the few keys (no lookup by hashing), which counts the message's strings too.
#[cfg(feature = "native")]
pub(crate) fn lone_tool_call(message: &serde_json::Value) -> Option<LoneCall<'_>> {
    use serde_json::Value as J;
    let mut strings = Strings::default();
    let (mut role, mut tool_calls) = (None, None);
    for (key, value) in message.as_object()? {
        strings.add(key);
        match (key.as_str(), value) {
            ("role", J::String(s)) => role = Some(s),
            ("content", J::Null) => {}
            ("tool_calls", J::Array(items)) => tool_calls = Some(items),
            _ => return None,
        }
    }
    let [call] = tool_calls?.as_slice() else {
        return None;
    };
    let (mut id, mut function) = (None, None);
    for (key, value) in call.as_object()? {
        strings.add(key);
        match (key.as_str(), value) {
            ("id", J::String(s)) => id = Some(s),
            ("type", J::String(s)) if s == "function" => strings.add(s),
            ("function", J::Object(fields)) => function = Some((value, fields)),
            _ => return None,
        }
    }
    let (function, fields) = function?;
    let (mut name, mut arguments) = (None, None);
    for (key, value) in fields {
        strings.add(key);
        match (key.as_str(), value) {
            ("name", J::String(s)) => name = Some(s),
            ("arguments", J::String(s)) => arguments = Some(s),
            _ => return None,
        }
    }
    let (role, id, name, arguments) = (role?, id?, name?, arguments?);
    if role != "assistant" {
        return None;
    }
    for s in [role, id, name, arguments] {
        strings.add(s);
    }
    Some(LoneCall {
        id,
        function,
        name,
        arguments,
        strings,
    })
}

/// What [`lone_tool_call`] finds in a message.
#[cfg(feature = "native")]
pub(crate) struct LoneCall<'a> {
    /// The model's id for the call.
    pub(crate) id: &'a str,
    /// The call's `{"name", "arguments"}` object.
    pub(crate) function: &'a serde_json::Value,
    /// The tool's name as written.
    pub(crate) name: &'a str,
    /// The arguments: JSON text, the object of name → value.
    pub(crate) arguments: &'a str,
    /// The message's strings, keys and values.
    strings: Strings,
}

#[cfg(feature = "native")]
impl LoneCall<'_> {
    /// The call's `{"name", "arguments"}` object as [`json_input::to_text`] writes it in the
    /// message's text (serde_json's compact form), in one buffer: its two keys in their order
    /// (`name` and `arguments`, which [`lone_tool_call`] allows alone, need no escape), each
    /// value string as serde_json escapes it.
    pub(crate) fn function_text(&self) -> Option<String> {
        let mut text = Vec::with_capacity(self.strings.bytes.saturating_add(32));
        text.push(b'{');
        for (i, (key, value)) in self.function.as_object()?.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            let key = match key.as_str() {
                "name" => &b"\"name\":"[..],
                "arguments" => &b"\"arguments\":"[..],
                _ => return None,
            };
            text.extend_from_slice(key);
            serde_json::to_writer(&mut text, value.as_str()?).ok()?;
        }
        text.push(b'}');
        String::from_utf8(text).ok()
    }

    /// Whether the message, written out, is surely within `limits` as
    /// [`json_input::to_text_read`] and the reader check it: its text's length and the
    /// reader's charges bounded from above (every string as if each of its bytes were escaped
    /// `\u00XX`). `false` says only that it may not be: writing it out tells.
    pub(crate) fn surely_fits(&self, limits: &Limits) -> bool {
        /// Nesting of the `function` object, the deepest collection of such a message.
        const DEPTH: usize = 4;
        /// Nodes (keys, values, items) such a message has at most.
        const NODES: usize = 17;
        /// Bytes of such a message's text besides its strings' bytes, at most: each string's
        /// quotes and a separator, brackets and `null`.
        const FRAME: usize = 64;
        let Strings { bytes, longest } = self.strings;
        let text = bytes.saturating_mul(6).saturating_add(FRAME);
        let charged = (bytes as u64).saturating_add(NODES as u64 * crate::value::NODE_BYTES as u64);
        DEPTH <= limits.max_depth
            && longest <= limits.max_str_bytes
            && text <= limits.max_source_bytes
            && u32::try_from(text).is_ok()
            && NODES <= limits.max_collection_len
            && charged <= limits.max_eval_bytes as u64
    }
}

/// The bytes of a message's strings (keys and values), and its longest string's.
#[cfg(feature = "native")]
#[derive(Clone, Copy, Default)]
struct Strings {
    bytes: usize,
    longest: usize,
}

#[cfg(feature = "native")]
impl Strings {
    fn add(&mut self, s: &str) {
        self.bytes = self.bytes.saturating_add(s.len());
        self.longest = self.longest.max(s.len());
    }
}

/// The name a cut-off JSON call was given, if its `"name": "…"` was written whole: a cut-off
/// call's verdict names its tool.
pub(super) fn cut_off_name(json: &str) -> Option<String> {
    for key in ["\"name\"", "'name'"] {
        let Some(at) = json.find(key) else {
            continue;
        };
        let rest = json.get(at + key.len()..)?.trim_start();
        let rest = rest.strip_prefix(':')?.trim_start();
        let quote = rest.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let body = rest.get(1..)?;
        let end = body.find(quote)?;
        let name = body.get(..end)?;
        if !name.is_empty() && !name.chars().any(char::is_control) {
            return Some(name.to_string());
        }
    }
    None
}

/// The string under `key` in an object's pairs.
fn field<'a>(pairs: &'a [(Expr, Expr)], key: &str) -> Option<&'a str> {
    json_input::get(pairs, key).and_then(json_input::as_str)
}

/// An error row for `node`, an item that tries to be a call and is not one.
fn not_a_call(node: &Expr, message: String) -> JsonCall {
    let (name, id) = match &node.kind {
        ExprKind::Dict(pairs) => (
            NAME_KEYS
                .iter()
                .find_map(|k| field(pairs, k))
                .unwrap_or_default()
                .to_string(),
            field(pairs, "id").map(str::to_string),
        ),
        _ => (String::new(), None),
    };
    JsonCall {
        origin: Origin::OpenAi,
        name,
        name_span: node.span,
        args: JsonArgs::Invalid(
            Error::new(ErrorKind::Syntax, message)
                .at(node.span)
                .with_hint("write each call as {\"name\": \"tool\", \"arguments\": {...}}; nothing in this item ran"),
        ),
        id,
        span: node.span,
    }
}

/// Whether `node` is an Anthropic text block (content blocks mix text with `tool_use`).
fn is_text_block(node: &Expr) -> bool {
    matches!(&node.kind, ExprKind::Dict(pairs) if field(pairs, "type") == Some("text"))
}

/// Collect the calls of a JSON call form (a tree read from `text`, which starts at byte `base` of
/// the input) into `out`; false if `json` is not one.
fn json_calls(
    json: &Expr,
    text: &str,
    base: u32,
    limits: &Limits,
    depth: usize,
    out: &mut Vec<JsonCall>,
) -> bool {
    if depth > MAX_JSON_NESTING {
        return false;
    }
    match &json.kind {
        ExprKind::List(items) => {
            let before = out.len();
            let mut calls = false;
            for item in items {
                if is_text_block(item) {
                    continue;
                }
                let at = out.len();
                if json_calls(item, text, base, limits, depth + 1, out) {
                    calls = true;
                } else {
                    out.truncate(at);
                    out.push(not_a_call(
                        item,
                        format!(
                            "this item of a list of calls is not a call: `{}`",
                            clip(text.get(item.span.range()).unwrap_or_default(), 60)
                        ),
                    ));
                }
            }
            if !calls {
                out.truncate(before);
            }
            calls
        }
        ExprKind::Dict(obj) => dict_calls(json, obj, text, base, limits, depth, out),
        _ => false,
    }
}

/// [`json_calls`] of an object: an assistant message's calls, an Anthropic `tool_use` block,
/// OpenAI's tool call, a ReAct `action`, or a call object (a name key and an arguments key).
fn dict_calls(
    json: &Expr,
    obj: &[(Expr, Expr)],
    text: &str,
    base: u32,
    limits: &Limits,
    depth: usize,
    out: &mut Vec<JsonCall>,
) -> bool {
    let get = |key: &str| json_input::get(obj, key);
    let only = |allowed: &[&str]| {
        obj.iter()
            .all(|(k, _)| json_input::as_str(k).is_some_and(|k| allowed.contains(&k)))
    };
    if let Some(found) = message_calls(json, obj, text, base, limits, depth, out) {
        return found;
    }
    let names: Vec<&str> = NAME_KEYS
        .iter()
        .copied()
        .filter(|k| get(k).is_some_and(|v| !matches!(v.kind, ExprKind::Dict(_))))
        .collect();
    let name = names
        .first()
        .and_then(|k| field(obj, k))
        .map(str::to_string);
    if field(obj, "type") == Some("tool_use") {
        out.push(tool_use_call(json, obj, name));
        return true;
    }
    if let Some(function) = get("function").filter(|e| matches!(e.kind, ExprKind::Dict(_))) {
        if only(&["id", "type", "function", "index"]) {
            // OpenAI's tool call: its `id` is beside the `function`.
            let before = out.len();
            let found = json_calls(function, text, base, limits, depth + 1, out);
            if let (true, Some(id)) = (out.len() == before + 1, field(obj, "id")) {
                if let Some(call) = out.last_mut() {
                    call.id = Some(id.to_string());
                }
            }
            return found;
        }
    }
    if let Some(action) = get("action").filter(|a| matches!(a.kind, ExprKind::Str(_))) {
        if only(&["action", "thought"]) {
            out.push(JsonCall {
                origin: Origin::FunctionExpression,
                name: String::new(),
                name_span: action.span,
                args: JsonArgs::Action(action.clone()),
                id: None,
                span: json.span,
            });
            return true;
        }
    }
    match call_object(json, obj, &names, name, text, base, limits) {
        Some(call) => {
            out.push(call);
            true
        }
        None => false,
    }
}

/// The call an object `obj` is when every key is one a call has (`names`: its keys that name
/// the function, `name`: the first one's string), or an error row when its keys conflict;
/// `None` when it is not a call.
fn call_object(
    json: &Expr,
    obj: &[(Expr, Expr)],
    names: &[&str],
    name: Option<String>,
    text: &str,
    base: u32,
    limits: &Limits,
) -> Option<JsonCall> {
    let get = |key: &str| json_input::get(obj, key);
    let only = |allowed: &[&str]| {
        obj.iter()
            .all(|(k, _)| json_input::as_str(k).is_some_and(|k| allowed.contains(&k)))
    };
    // From here on the object is a call only if every key is one a call has.
    if names.is_empty()
        || !obj.iter().all(|(k, _)| {
            json_input::as_str(k).is_some_and(|k| {
                NAME_KEYS.contains(&k) || ARGS_KEYS.contains(&k) || EXTRA_KEYS.contains(&k)
            })
        })
    {
        return None;
    }
    if let [first, second, ..] = names {
        return Some(not_a_call(
            json,
            format!("two keys name the function, `{first}` and `{second}`: which one the model meant is not clear"),
        ));
    }
    let Some(name) = name else {
        return Some(not_a_call(
            json,
            format!(
                "the function's `{}` is not a string",
                names.first().copied().unwrap_or("name")
            ),
        ));
    };
    // `args` beside `kwargs` is one call's positional and keyword arguments; any other two
    // keys holding arguments are a conflict.
    let args_keys: Vec<&str> = ARGS_KEYS
        .iter()
        .copied()
        .filter(|k| get(k).is_some())
        .filter(|k| !(*k == "args" && get("kwargs").is_some()))
        .collect();
    if let [first, second, ..] = args_keys.as_slice() {
        return Some(not_a_call(
            json,
            format!("two keys hold the arguments of `{}`, `{first}` and `{second}`: which ones the model meant is not clear", clip(&name, 40)),
        ));
    }
    // Which key holds the arguments decides the form; none at all is a call without
    // arguments only when nothing but the name (and a thought) is there.
    let null = Expr {
        kind: ExprKind::None,
        span: json.span,
    };
    let (origin, args) = match args_keys
        .first()
        .copied()
        .or_else(|| get("args").map(|_| "args"))
    {
        Some(key @ "arguments") => (Origin::OpenAi, get(key).unwrap_or(&null)),
        Some(key @ ("kwargs" | "args")) => (Origin::Function, get(key).unwrap_or(&null)),
        Some(key) => (Origin::NameParameters, get(key).unwrap_or(&null)),
        None if only(&["name", "thought"]) => (Origin::Function, &null),
        None => return None,
    };
    // fexpr's `Function` may carry positional `args` next to `kwargs`.
    let positional = match get("args") {
        Some(Expr {
            kind: ExprKind::List(items),
            ..
        }) => items.clone(),
        _ => Vec::new(),
    };
    let args = match get("kwargs") {
        Some(kwargs) => kwargs,
        None if matches!(args.kind, ExprKind::List(_)) => &null,
        None => args,
    };
    let args = call_args(args, positional, &name, text, base, limits);
    let name_span = names
        .first()
        .and_then(|k| get(k))
        .map_or(json.span, |e| e.span);
    Some(JsonCall {
        origin,
        name,
        name_span,
        args,
        id: field(obj, "id").map(str::to_string),
        span: json.span,
    })
}

/// The calls of an assistant message `obj`: `tool_calls`, the legacy `function_call`, or
/// Anthropic content blocks (whether any were found), or `None` when it holds none of these.
/// Two of them in one message are one error row: which the model meant is not clear.
fn message_calls(
    json: &Expr,
    obj: &[(Expr, Expr)],
    text: &str,
    base: u32,
    limits: &Limits,
    depth: usize,
    out: &mut Vec<JsonCall>,
) -> Option<bool> {
    let get = |key: &str| json_input::get(obj, key);
    let tool_calls = get("tool_calls").filter(|e| matches!(e.kind, ExprKind::List(_)));
    let function_call = get("function_call").filter(|e| matches!(e.kind, ExprKind::Dict(_)));
    let content_calls = get("content")
        .filter(|e| matches!(e.kind, ExprKind::List(_)))
        .filter(|content| {
            field(obj, "role") == Some("assistant") && {
                let mut probe = Vec::new();
                json_calls(content, text, base, limits, depth + 1, &mut probe)
            }
        });
    let forms: Vec<&str> = [
        ("tool_calls", tool_calls.is_some()),
        ("function_call", function_call.is_some()),
        ("content", content_calls.is_some()),
    ]
    .iter()
    .filter(|(_, present)| *present)
    .map(|(key, _)| *key)
    .collect();
    if let [first, second, ..] = forms.as_slice() {
        out.push(not_a_call(
            json,
            format!("the message holds calls in both `{first}` and `{second}`: which ones the model meant is not clear"),
        ));
        return Some(true);
    }
    // A message (its `role`, or the calls it holds) that is also a bare call object (a
    // string name and arguments beside them) is two readings of one object.
    let message = forms
        .first()
        .copied()
        .or_else(|| get("role").map(|_| "role"));
    let bare_name = NAME_KEYS.iter().find(|k| field(obj, k).is_some());
    let bare_args = ARGS_KEYS.iter().find(|k| get(k).is_some());
    if let (Some(message), Some(name), Some(args)) = (message, bare_name, bare_args) {
        out.push(not_a_call(
            json,
            format!("the object is both a message (`{message}`) and a call (`{name}` and `{args}`): which one the model meant is not clear"),
        ));
        return Some(true);
    }
    let calls = tool_calls.or(function_call).or(content_calls)?;
    Some(json_calls(calls, text, base, limits, depth + 1, out))
}

/// The call of an Anthropic `tool_use` block `obj` (`name`: its string `name`, if any), or
/// the error row saying why it is not one. Its arguments are its `input`; another key that
/// holds arguments beside it (`arguments`, ...) is an error naming both.
fn tool_use_call(json: &Expr, obj: &[(Expr, Expr)], name: Option<String>) -> JsonCall {
    let Some(name) = name else {
        return not_a_call(json, "a `tool_use` block without a string `name`".into());
    };
    if let Some(other) = ARGS_KEYS
        .iter()
        .find(|k| **k != "input" && json_input::get(obj, k).is_some())
    {
        return not_a_call(
            json,
            format!(
                "the `tool_use` block `{}` holds arguments in both `input` and `{other}`: which ones the model meant is not clear",
                clip(&name, 40)
            ),
        );
    }
    let input = match json_input::get(obj, "input") {
        Some(
            input @ Expr {
                kind: ExprKind::Dict(_),
                ..
            },
        ) => input.clone(),
        _ => {
            return not_a_call(
                json,
                format!(
                    "the `input` of the `tool_use` block `{}` is not an object",
                    clip(&name, 40)
                ),
            )
        }
    };
    let name_span = json_input::get(obj, "name").map_or(json.span, |e| e.span);
    JsonCall {
        origin: Origin::Anthropic,
        name,
        name_span,
        args: JsonArgs::Object(Vec::new(), input),
        id: field(obj, "id").map(str::to_string),
        span: json.span,
    }
}

/// The arguments of the call `name` written as `args` (an object, nothing, or OpenAI's JSON
/// string, read by the same reader and checked the same way, spans into the text through the
/// string's escapes), after the `positional` ones; [`JsonArgs::Invalid`] says why they cannot
/// be read.
fn call_args(
    args: &Expr,
    positional: Vec<Expr>,
    name: &str,
    text: &str,
    base: u32,
    limits: &Limits,
) -> JsonArgs {
    let ExprKind::Str(s) = &args.kind else {
        // An object, `null`, or what `call_of` refuses as not an object.
        return JsonArgs::Object(positional, args.clone());
    };
    if s.trim().is_empty() {
        let none = Expr {
            kind: ExprKind::None,
            span: args.span,
        };
        return JsonArgs::Object(positional, none);
    }
    match json_input::read_nested(args, text, limits) {
        Ok(
            nested @ Expr {
                kind: ExprKind::Dict(_),
                ..
            },
        ) => match json_input::check_call_tree(&nested, text, base) {
            Ok(()) => JsonArgs::Object(positional, nested),
            Err(e) => JsonArgs::Invalid(e),
        },
        Ok(_) => JsonArgs::Invalid(not_an_object(name, s).at(args.span)),
        Err(e) if e.kind == ErrorKind::Syntax => JsonArgs::Invalid(Error {
            message: format!(
                "the arguments of `{}` are not a JSON object: {}",
                clip(name, 40),
                e.message
            ),
            ..e
        }),
        Err(e) => JsonArgs::Invalid(e),
    }
}

fn not_an_object(name: &str, args: &str) -> Error {
    Error::new(
        ErrorKind::Syntax,
        format!(
            "the arguments of `{}` are not a JSON object: {}",
            clip(name, 40),
            clip(args, 60)
        ),
    )
}

/// A parsed Python literal as the tree [`json_input::read`] gives for JSON: `None`, bools,
/// numbers (a sign folded in), strings, lists and tuples (as lists) and dicts of these; `None`
/// for anything else (names, calls, operators, sets, bytes). Recursion is bounded by the
/// parser's depth limit.
pub(super) fn literal_tree(expr: Expr) -> Option<Expr> {
    let span = expr.span;
    let kind = match expr.kind {
        kind @ (ExprKind::None
        | ExprKind::Bool(_)
        | ExprKind::Int(_)
        | ExprKind::BigInt(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)) => kind,
        ExprKind::List(items) | ExprKind::Tuple(items) => ExprKind::List(
            items
                .into_iter()
                .map(literal_tree)
                .collect::<Option<Vec<_>>>()?,
        ),
        ExprKind::Dict(pairs) => ExprKind::Dict(
            pairs
                .into_iter()
                .map(|(k, v)| Some((literal_tree(k)?, literal_tree(v)?)))
                .collect::<Option<Vec<_>>>()?,
        ),
        ExprKind::Unary(op @ (UnaryOp::Neg | UnaryOp::Pos), operand) => {
            let negate = op == UnaryOp::Neg;
            match operand.kind {
                ExprKind::Int(n) if negate => ExprKind::Int(n.checked_neg()?),
                ExprKind::BigInt(n) if negate => ExprKind::BigInt(-n),
                ExprKind::Float(x) if negate => ExprKind::Float(-x),
                kind @ (ExprKind::Int(_) | ExprKind::BigInt(_) | ExprKind::Float(_)) => kind,
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(Expr { kind, span })
}

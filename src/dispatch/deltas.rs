//! Structured tool-call deltas, streamed: the one accumulator that turns a provider's streaming
//! events into complete calls. [`ToolManager::stream`](crate::ToolManager::stream) takes them
//! beside text chunks ([`StreamChunk::Event`], or [`StreamChunk::Wire`] for the same events as
//! written on the wire), and runs each call the moment its arguments are one complete JSON
//! object, through the same checks as a whole assistant message
//! ([`Input::openai`](crate::Input::openai)): the provider's id is the output's `call_id`.
//!
//! Read, from any mix of these (the SDKs' objects once dumped to JSON, or the chunks decoded
//! from the wire):
//!
//! - OpenAI Chat Completions chunks: `choices[0].delta.tool_calls` fragments by `index` (the
//!   first carries `id` and `function.name`, the next ones more `function.arguments`),
//!   `delta.content` (text), `finish_reason` (every open call ends); or the `delta` alone;
//! - OpenAI Responses events: `response.output_item.added` with a `function_call` item
//!   (`call_id`, `name`), `response.function_call_arguments.delta` / `.done`,
//!   `response.output_item.done`, `response.output_text.delta` (text);
//! - Anthropic Messages events: `content_block_start` with a `tool_use` block (`id`, `name`),
//!   `content_block_delta` with `input_json_delta.partial_json` (or `text_delta`: text),
//!   `content_block_stop`, `message_stop`.
//!
//! Events that carry nothing to run (lifecycle, reasoning, usage, the SDK helpers' derived
//! events that repeat a raw one, tools the provider runs itself) are passed over. Anything
//! else gives an output row with a structured error, never a panic: an unknown event, a
//! fragment for a call never opened, arguments that are not (or never become) one JSON object,
//! a name fragment after the arguments began. A call whose arguments are incomplete when its
//! block, its choice or the stream ends is reported cut off, under its own name and id.
//! The outputs' errors carry no span (a call's arguments are in no text the stream was
//! given). Limits: [`Limits::max_calls`] bounds the calls of the whole stream (and so the calls open
//! at once), [`Limits::max_source_bytes`] the bytes of names and arguments gathered and each
//! event read from the wire, [`Limits::max_depth`] the nesting of the arguments.
//!
//! ```
//! use fexpr::stream::{StreamChunk, StreamEvent};
//! use futures_util::StreamExt;
//! use serde_json::json;
//!
//! let manager = fexpr::demo::manager();
//! let chunk = |delta: serde_json::Value| StreamChunk::Event(json!({"choices": [{"index": 0, "delta": delta}]}));
//! let chunks = futures_util::stream::iter([
//!     chunk(json!({"content": "Adding."})),
//!     chunk(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
//!         "function": {"name": "add", "arguments": ""}}]})),
//!     chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\": 1, "}}]})),
//!     chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\": 2}"}}]})),
//! ]);
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let events: Vec<StreamEvent> = rt.block_on(manager.stream(chunks).events().collect());
//! let out = events.iter().find_map(|e| match e { StreamEvent::Output(o) => Some(o), _ => None }).unwrap();
//! assert_eq!((out.call_id.as_str(), out.output.clone()), ("call_1", Ok(fexpr::Value::Int(3))));
//! // The text is read as text: here, prose not used.
//! assert!(events.iter().any(|e| matches!(e, StreamEvent::Ignored(i) if i.text == "Adding.")));
//! ```

use serde_json::{json, Value as Json};

use crate::call::FunctionOutput;
use crate::error::{clip, Error, ErrorKind, Span};
use crate::front::{IgnoreReason, Ignored};
use crate::limits::{LimitKind, Limits};

/// One item of a stream to run: model text, or a structured event a provider streams.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamChunk {
    /// A chunk of the model's text (what a `String` chunk is).
    Text(String),
    /// A provider's streaming event, decoded: an OpenAI Chat Completions chunk, a Responses
    /// API event or an Anthropic Messages event (see [the module](self)).
    Event(Json),
    /// The same event as written on the wire: the JSON of a JSON line, or of an SSE line's
    /// `data:`. Decoded within [`Limits::max_source_bytes`]; JSON that cannot be read gives
    /// an error row.
    Wire(String),
}

/// What the accumulator made of an event: text for the text stream, a call ready to run, a
/// row for a call that cannot run, or text not used.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    Text(String),
    Call(DeltaCall),
    Row(Box<FunctionOutput>),
    Ignored(Ignored),
}

/// A call whose arguments are complete: the provider's id, the name, the arguments' JSON.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DeltaCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

impl DeltaCall {
    /// The call as an OpenAI tool call, the form the message door reads.
    pub(crate) fn to_json_text(&self) -> String {
        json!({"id": self.id, "type": "function",
            "function": {"name": self.name, "arguments": self.arguments}})
        .to_string()
    }
}

/// Which provider's stream a call came from, and its key there.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    /// Chat Completions: the tool call's `index`.
    Chat(u64),
    /// Responses: the item's `id` (when given) and `output_index`.
    Item(Option<String>, Option<u64>),
    /// Anthropic: the content block's `index`.
    Block(u64),
}

impl Key {
    /// Whether an event addressed to `other` is for this call.
    fn matches(&self, other: &Key) -> bool {
        match (self, other) {
            (Key::Item(id, at), Key::Item(oid, oat)) => match (id, oid) {
                (Some(a), Some(b)) => a == b,
                _ => at.is_some() && at == oat,
            },
            _ => self == other,
        }
    }
}

/// Where a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Gathering its name and arguments.
    Open,
    /// Handed on to run, or reported: later fragments are not its arguments.
    Closed,
    /// A block the provider runs itself (Anthropic `server_tool_use`): its deltas are passed
    /// over.
    Server,
}

/// One call being gathered.
#[derive(Debug)]
struct Call {
    key: Key,
    id: String,
    name: String,
    args: Args,
    /// Arguments the opening event gave whole (Anthropic `input`, a Responses item's
    /// `arguments`), used when no fragment comes.
    given: Option<String>,
    phase: Phase,
    /// Whether it was handed on to run (else, once closed, its row said why not).
    ran: bool,
}

/// A call's arguments as they arrive, scanned for the end of their JSON object.
#[derive(Debug, Default)]
struct Args {
    text: String,
    depth: usize,
    in_str: bool,
    escaped: bool,
    complete: bool,
}

impl Args {
    /// Add `fragment`: `Ok(Some(rest))` when it completes the object (`rest`: the text after
    /// it, which is not the arguments), `Ok(None)` when more is needed; an error when the text
    /// is not the start of one JSON object, or nests deeper than `max_depth`.
    fn feed<'f>(&mut self, fragment: &'f str, max_depth: usize) -> Result<Option<&'f str>, Error> {
        for (at, c) in fragment.char_indices() {
            if self.in_str {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '"' {
                    self.in_str = false;
                }
                continue;
            }
            match c {
                '{' | '[' => {
                    if self.depth == 0 && c == '[' {
                        return Err(not_object(&self.text, fragment));
                    }
                    self.depth += 1;
                    if self.depth > max_depth {
                        return Err(Error::limit(LimitKind::Depth, max_depth, self.depth));
                    }
                }
                '}' | ']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        let end = at + c.len_utf8();
                        self.text.push_str(fragment.get(..end).unwrap_or_default());
                        self.complete = true;
                        return Ok(Some(fragment.get(end..).unwrap_or_default()));
                    }
                }
                '"' if self.depth > 0 => self.in_str = true,
                c if c.is_whitespace() => {}
                _ if self.depth == 0 => return Err(not_object(&self.text, fragment)),
                _ => {}
            }
        }
        self.text.push_str(fragment);
        Ok(None)
    }
}

/// The error for arguments that do not start a JSON object.
fn not_object(before: &str, fragment: &str) -> Error {
    Error::new(
        ErrorKind::Syntax,
        format!(
            "the arguments are not a JSON object: `{}`",
            clip(&format!("{before}{fragment}"), 60)
        ),
    )
    .with_hint("a tool call's arguments are one JSON object of named arguments, such as {\"a\": 1}")
}

/// The accumulator: the calls of one stream, gathered from its events.
#[derive(Debug, Default)]
pub(crate) struct Deltas {
    calls: Vec<Call>,
    /// Bytes of names, ids and arguments gathered over the stream.
    bytes: usize,
}

/// A field of a JSON object, `null` read as absent (the SDKs' dumps write every field).
fn get<'a>(value: &'a Json, key: &str) -> Option<&'a Json> {
    value.get(key).filter(|v| !v.is_null())
}

fn get_str<'a>(value: &'a Json, key: &str) -> Option<&'a str> {
    get(value, key).and_then(Json::as_str)
}

fn get_u64(value: &Json, key: &str) -> Option<u64> {
    get(value, key).and_then(Json::as_u64)
}

/// Events that carry nothing to run: lifecycle, usage, reasoning, text given again whole, and
/// the SDK stream helpers' derived events (each repeats a raw event the helper also yields).
const PASSED_OVER: &[&str] = &[
    "response.created",
    "response.in_progress",
    "response.completed",
    "response.queued",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "message_start",
    "message_delta",
    "ping",
    // Anthropic's `MessageStream` helper events.
    "text",
    "input_json",
    "citation",
    "thinking",
    "signature",
    // OpenAI's `chat.completions.stream` helper events.
    "content.delta",
    "content.done",
    "refusal.delta",
    "refusal.done",
    "tool_calls.function.arguments.delta",
    "tool_calls.function.arguments.done",
    "logprobs.content.delta",
    "logprobs.content.done",
    "logprobs.refusal.delta",
    "logprobs.refusal.done",
];

/// Responses events of tools the provider runs itself (web search, file search, code
/// interpreter, image generation, remote MCP): nothing for fexpr to run.
const PROVIDER_TOOLS: &[&str] = &[
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.mcp_call",
    "response.mcp_list_tools.",
    "response.audio.",
];

impl Deltas {
    /// Read one decoded `event`.
    pub(crate) fn push(&mut self, event: &Json, limits: &Limits) -> Vec<Step> {
        let mut steps = Vec::new();
        self.event(event, limits, &mut steps);
        steps
    }

    /// Read one event as written on the wire (`text`: its JSON), within the limits.
    pub(crate) fn push_wire(&mut self, text: &str, limits: &Limits) -> Vec<Step> {
        match decode(text, limits) {
            Ok(event) => self.push(&event, limits),
            Err(error) => vec![row("event", text, None, error)],
        }
    }

    /// The stream ended: each call still open ends (run when its arguments are whole or
    /// empty-and-ended, else reported cut off).
    pub(crate) fn finish(&mut self, limits: &Limits) -> Vec<Step> {
        let mut steps = Vec::new();
        for i in 0..self.calls.len() {
            self.end(i, limits, &mut steps);
        }
        steps
    }

    /// The source failed with `error`: nothing further runs; each call still gathering gets a
    /// row saying it did not run and why.
    pub(crate) fn stop(&mut self, error: &Error) -> Vec<Step> {
        let mut steps = Vec::new();
        for call in &mut self.calls {
            if call.phase != Phase::Open {
                continue;
            }
            call.phase = Phase::Closed;
            let stopped = Error::new(
                ErrorKind::Unsupported,
                format!(
                    "not run: the stream stopped before the arguments of `{}` were complete ({})",
                    call.name,
                    clip(&error.message, 200)
                ),
            )
            .with_hint("nothing after the failure runs; run the call again once the model's whole response is at hand");
            steps.push(row(&call.name, &call.args.text, Some(&call.id), stopped));
        }
        steps
    }

    fn event(&mut self, event: &Json, limits: &Limits, steps: &mut Vec<Step>) {
        if let Some(choices) = get(event, "choices") {
            return self.chat(event, choices, limits, steps);
        }
        let Some(kind) = get_str(event, "type") else {
            // A chunk's `choices[0].delta` given alone (`chunk.choices[0].delta for chunk in
            // stream`): read as the delta of the first choice.
            if event.get("tool_calls").is_some()
                || event.get("role").is_some()
                || event.get("content").is_some()
            {
                let choices = json!([{"index": 0, "delta": event}]);
                return self.chat(event, &choices, limits, steps);
            }
            return steps.push(unknown(event, "it has neither `choices` nor `type`"));
        };
        match kind {
            // OpenAI's `chat.completions.stream` helper: the raw chunk inside.
            "chunk" => match get(event, "chunk") {
                Some(chunk) => self.event(chunk, limits, steps),
                None => steps.push(unknown(event, "a `chunk` event without its `chunk`")),
            },
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(text) = get_str(event, "delta") {
                    steps.push(Step::Text(text.to_string()));
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                self.item(kind == "response.output_item.done", event, limits, steps)
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let key = Key::Item(
                    get_str(event, "item_id").map(str::to_string),
                    get_u64(event, "output_index"),
                );
                let done = kind.ends_with(".done");
                let field = if done { "arguments" } else { "delta" };
                let fragment = get_str(event, field).unwrap_or_default();
                let Some(i) = self.find(&key) else {
                    // `.done` repeats whole the arguments of a call that ran already.
                    if !self.late(&key, if done { "" } else { fragment }, steps) {
                        steps.push(never_opened(event, "an item never added"));
                    }
                    return;
                };
                if done {
                    self.given(i, fragment);
                    self.end(i, limits, steps);
                } else {
                    self.arguments(i, fragment, limits, steps);
                }
            }
            "response.incomplete" | "message_stop" => {
                for i in 0..self.calls.len() {
                    self.end(i, limits, steps);
                }
            }
            "error" | "response.failed" => {
                let message = get(event, "error")
                    .or_else(|| get(event, "response").and_then(|r| get(r, "error")))
                    .and_then(|e| get_str(e, "message"))
                    .or_else(|| get_str(event, "message"))
                    .unwrap_or("the provider reported an error");
                let error = Error::new(
                    ErrorKind::Unsupported,
                    format!("the provider's stream failed: {}", clip(message, 200)),
                );
                steps.extend(self.stop(&error));
                steps.push(row(kind, &event.to_string(), None, error));
            }
            "content_block_start" => self.block_start(event, limits, steps),
            "content_block_delta" => self.block_delta(event, limits, steps),
            "content_block_stop" => {
                let key = Key::Block(get_u64(event, "index").unwrap_or(0));
                if let Some(i) = self.find(&key) {
                    self.end(i, limits, steps);
                }
            }
            kind if PASSED_OVER.contains(&kind) => {}
            kind if PROVIDER_TOOLS.iter().any(|p| kind.starts_with(p)) => {}
            _ => steps.push(unknown(event, "its `type` is not one fexpr reads")),
        }
    }

    /// A Chat Completions chunk.
    fn chat(&mut self, event: &Json, choices: &Json, limits: &Limits, steps: &mut Vec<Step>) {
        let Some(choices) = choices.as_array() else {
            return steps.push(unknown(event, "its `choices` is not a list"));
        };
        for choice in choices {
            if get_u64(choice, "index").unwrap_or(0) != 0 {
                steps.push(unknown(
                    event,
                    "it holds a choice other than the first (n > 1): stream one choice",
                ));
                continue;
            }
            if let Some(delta) = get(choice, "delta") {
                if let Some(text) = get_str(delta, "content") {
                    if !text.is_empty() {
                        steps.push(Step::Text(text.to_string()));
                    }
                }
                if get(delta, "function_call").is_some() {
                    steps.push(unknown(
                        event,
                        "`delta.function_call` is the legacy functions API: ask for `tools`",
                    ));
                }
                match get(delta, "tool_calls") {
                    Some(Json::Array(fragments)) => {
                        for fragment in fragments {
                            self.fragment(fragment, limits, steps);
                        }
                    }
                    Some(_) => steps.push(unknown(event, "its `delta.tool_calls` is not a list")),
                    None => {}
                }
            }
            if get(choice, "finish_reason").is_some() {
                for i in 0..self.calls.len() {
                    if matches!(self.calls.get(i), Some(c) if matches!(c.key, Key::Chat(_))) {
                        self.end(i, limits, steps);
                    }
                }
            }
        }
    }

    /// One `delta.tool_calls` fragment.
    fn fragment(&mut self, fragment: &Json, limits: &Limits, steps: &mut Vec<Step>) {
        let id = get_str(fragment, "id").filter(|id| !id.is_empty());
        let function = get(fragment, "function");
        let name = function
            .and_then(|f| get_str(f, "name"))
            .filter(|n| !n.is_empty());
        let arguments = function.and_then(|f| get_str(f, "arguments"));
        let index = match get_u64(fragment, "index") {
            Some(index) => index,
            // No index (some servers send whole calls): a fragment with an id is a new call,
            // one without continues the last.
            None => {
                let last = self.calls.iter().rev().find_map(|c| match c.key {
                    Key::Chat(i) => Some(i),
                    _ => None,
                });
                match (id, last) {
                    (None, Some(last)) => last,
                    (_, last) => last.map_or(0, |l| l + 1),
                }
            }
        };
        let key = Key::Chat(index);
        let i = match self.find(&key) {
            Some(i) => {
                if let (Some(id), Some(call)) = (id, self.calls.get(i)) {
                    if id != call.id {
                        let error = Error::new(
                            ErrorKind::Syntax,
                            format!(
                                "tool call {index} got a second id `{}` (it opened as `{}`)",
                                clip(id, 60),
                                call.id
                            ),
                        );
                        return self.fail(i, error, steps);
                    }
                }
                if let Some(name) = name {
                    if !self.name(i, name, limits, steps) {
                        return;
                    }
                }
                i
            }
            None if id.is_some() || name.is_some() => {
                match self.open(key, id, name.unwrap_or_default(), None, limits, steps) {
                    Some(i) => i,
                    None => return,
                }
            }
            None => {
                if !self.late(&key, arguments.unwrap_or_default(), steps) {
                    steps.push(never_opened(
                        fragment,
                        "an index never opened (the first fragment of a call carries `id` and `function.name`)",
                    ));
                }
                return;
            }
        };
        if let Some(arguments) = arguments {
            self.arguments(i, arguments, limits, steps);
        }
    }

    /// A Responses output item, added or done.
    fn item(&mut self, done: bool, event: &Json, limits: &Limits, steps: &mut Vec<Step>) {
        let Some(item) = get(event, "item") else {
            return steps.push(unknown(event, "it has no `item`"));
        };
        match get_str(item, "type") {
            Some("function_call") => {}
            Some("custom_tool_call") => {
                return steps.push(unknown(
                    event,
                    "a custom (free-form) tool call: fexpr runs function tools",
                ))
            }
            // Messages, reasoning, and the tools the provider runs itself.
            _ => return,
        }
        let key = Key::Item(
            get_str(item, "id").map(str::to_string),
            get_u64(event, "output_index"),
        );
        let arguments = get_str(item, "arguments").filter(|a| !a.is_empty());
        let i = match self.find(&key) {
            Some(i) => i,
            None if done && self.calls.iter().any(|c| c.key.matches(&key)) => return,
            None => {
                let id = get_str(item, "call_id").or_else(|| get_str(item, "id"));
                let name = get_str(item, "name").unwrap_or_default();
                match self.open(key, id, name, arguments.map(str::to_string), limits, steps) {
                    Some(i) => i,
                    None => return,
                }
            }
        };
        if done {
            if let Some(arguments) = arguments {
                self.given(i, arguments);
            }
            self.end(i, limits, steps);
        }
    }

    /// An Anthropic `content_block_start`.
    fn block_start(&mut self, event: &Json, limits: &Limits, steps: &mut Vec<Step>) {
        let key = Key::Block(get_u64(event, "index").unwrap_or(0));
        let Some(block) = get(event, "content_block") else {
            return steps.push(unknown(event, "it has no `content_block`"));
        };
        match get_str(block, "type") {
            Some("tool_use") => {
                let given = get(block, "input")
                    .filter(|input| input.as_object().is_some_and(|o| !o.is_empty()))
                    .map(Json::to_string);
                let id = get_str(block, "id");
                let name = get_str(block, "name").unwrap_or_default();
                self.open(key, id, name, given, limits, steps);
            }
            Some("text") => {
                if let Some(text) = get_str(block, "text").filter(|t| !t.is_empty()) {
                    steps.push(Step::Text(text.to_string()));
                }
            }
            Some("thinking" | "redacted_thinking") => {}
            Some(kind) if kind.starts_with("server_") || kind.ends_with("_tool_use") => {
                self.calls.retain(|c| c.key != key);
                // Counted with the calls: the stream's blocks stay bounded.
                if self.calls.len() >= limits.max_calls {
                    let error =
                        Error::limit(LimitKind::Calls, limits.max_calls, self.calls.len() + 1);
                    return steps.push(row(kind, "", None, error));
                }
                self.calls.push(Call {
                    key,
                    id: String::new(),
                    name: kind.to_string(),
                    args: Args::default(),
                    given: None,
                    phase: Phase::Server,
                    ran: false,
                });
            }
            Some(kind) if kind.ends_with("_tool_result") => {}
            _ => steps.push(unknown(event, "its block's `type` is not one fexpr reads")),
        }
    }

    /// An Anthropic `content_block_delta`.
    fn block_delta(&mut self, event: &Json, limits: &Limits, steps: &mut Vec<Step>) {
        let key = Key::Block(get_u64(event, "index").unwrap_or(0));
        let Some(delta) = get(event, "delta") else {
            return steps.push(unknown(event, "it has no `delta`"));
        };
        match get_str(delta, "type") {
            Some("text_delta") => {
                if let Some(text) = get_str(delta, "text") {
                    steps.push(Step::Text(text.to_string()));
                }
            }
            Some("input_json_delta") => {
                let fragment = get_str(delta, "partial_json").unwrap_or_default();
                match self.find(&key) {
                    Some(i) => self.arguments(i, fragment, limits, steps),
                    None if self
                        .calls
                        .iter()
                        .any(|c| c.key == key && c.phase == Phase::Server) => {}
                    None if self.late(&key, fragment, steps) => {}
                    None => steps.push(never_opened(
                        event,
                        "a block never opened (its `content_block_start` carries the `tool_use` id and name)",
                    )),
                }
            }
            Some("thinking_delta" | "signature_delta" | "citations_delta") => {}
            _ => steps.push(unknown(event, "its delta's `type` is not one fexpr reads")),
        }
    }

    /// A fragment for a call `key` names that is closed already: `false` when there is none.
    /// Blank text is nothing; other text after a call that ran is reported as not used (the
    /// call keeps its one row); after a call that failed, it is part of what its row refused.
    fn late(&self, key: &Key, fragment: &str, steps: &mut Vec<Step>) -> bool {
        let Some(call) = self.calls.iter().rev().find(|c| c.key.matches(key)) else {
            return false;
        };
        if call.ran {
            self.after(&call.name, fragment, steps);
        }
        true
    }

    /// The open call for `key`.
    fn find(&self, key: &Key) -> Option<usize> {
        self.calls
            .iter()
            .position(|c| c.phase == Phase::Open && c.key.matches(key))
    }

    /// Open a call, within the limits: its index, or `None` when it is refused (its row given).
    fn open(
        &mut self,
        key: Key,
        id: Option<&str>,
        name: &str,
        given: Option<String>,
        limits: &Limits,
        steps: &mut Vec<Step>,
    ) -> Option<usize> {
        let id = id.map_or_else(crate::call::fresh_call_id, str::to_string);
        let calls = self.calls.len() + 1;
        if calls > limits.max_calls {
            let error = Error::limit(LimitKind::Calls, limits.max_calls, calls);
            steps.push(row(name, "", Some(&id), error));
            return None;
        }
        if !self.take_bytes(id.len() + name.len(), limits, name, &id, steps) {
            return None;
        }
        self.calls.push(Call {
            key,
            id,
            name: name.to_string(),
            args: Args::default(),
            given,
            phase: Phase::Open,
            ran: false,
        });
        Some(self.calls.len() - 1)
    }

    /// Count `n` more bytes gathered; `false` (the row given) past `max_source_bytes`.
    fn take_bytes(
        &mut self,
        n: usize,
        limits: &Limits,
        name: &str,
        id: &str,
        steps: &mut Vec<Step>,
    ) -> bool {
        let total = self.bytes.saturating_add(n);
        if total > limits.max_source_bytes {
            let error = Error::limit_message(
                LimitKind::SourceBytes,
                format!(
                    "max_source_bytes limit exceeded: the tool calls' names and arguments streamed \
                     so far hold {total} bytes > {}",
                    limits.max_source_bytes
                ),
            );
            steps.push(row(name, "", Some(id), error));
            return false;
        }
        self.bytes = total;
        true
    }

    /// A name fragment for call `i`: the same name again is nothing (some servers repeat it in
    /// every fragment); another is appended before the arguments begin, and an error after.
    /// `false` when the call failed.
    fn name(&mut self, i: usize, name: &str, limits: &Limits, steps: &mut Vec<Step>) -> bool {
        let Some(call) = self.calls.get(i) else {
            return false;
        };
        if call.name == name {
            return true;
        }
        if call.args.text.trim().is_empty() && call.args.depth == 0 {
            let (id, current) = (call.id.clone(), call.name.clone());
            if !self.take_bytes(name.len(), limits, &current, &id, steps) {
                self.close(i);
                return false;
            }
            if let Some(call) = self.calls.get_mut(i) {
                call.name.push_str(name);
            }
            return true;
        }
        let error = Error::new(
            ErrorKind::Syntax,
            format!(
                "a name fragment `{}` came after the arguments of `{}` began",
                clip(name, 60),
                call.name
            ),
        )
        .with_hint("a call's name comes whole, in its first fragment, before its arguments");
        self.fail(i, error, steps);
        false
    }

    /// An arguments fragment for call `i`: the call runs the moment its object is complete.
    fn arguments(&mut self, i: usize, fragment: &str, limits: &Limits, steps: &mut Vec<Step>) {
        let Some(call) = self.calls.get(i) else {
            return;
        };
        if call.phase != Phase::Open || fragment.is_empty() {
            return;
        }
        let (id, name) = (call.id.clone(), call.name.clone());
        if name.is_empty() && !fragment.trim().is_empty() {
            let error = Error::new(ErrorKind::Syntax, "arguments came before the tool's name")
                .with_hint("a call's first fragment carries its name");
            return self.fail(i, error, steps);
        }
        if !self.take_bytes(fragment.len(), limits, &name, &id, steps) {
            return self.close(i);
        }
        let Some(call) = self.calls.get_mut(i) else {
            return;
        };
        match call.args.feed(fragment, limits.max_depth) {
            Ok(None) => {}
            Ok(Some(rest)) => {
                let rest = rest.to_string();
                self.ready(i, steps);
                self.after(&name, &rest, steps);
            }
            Err(error) => self.fail(i, error, steps),
        }
    }

    /// Text after a call's complete arguments: not the arguments; reported as not used.
    fn after(&self, name: &str, rest: &str, steps: &mut Vec<Step>) {
        let text = rest.trim();
        if !text.is_empty() {
            // No span: the text is in no text the stream was given.
            steps.push(Step::Ignored(Ignored {
                span: Span::new(0, 0),
                reason: IgnoreReason::JsonData,
                text: clip(&format!("after the arguments of `{name}`: {text}"), 80),
            }));
        }
    }

    /// Arguments call `i`'s event gave whole: taken when no fragment came.
    fn given(&mut self, i: usize, arguments: &str) {
        if let Some(call) = self.calls.get_mut(i) {
            if call.args.text.trim().is_empty() && !arguments.is_empty() {
                call.given = Some(arguments.to_string());
            }
        }
    }

    /// Call `i`'s block, item or choice ended: it runs when its arguments are whole (or none
    /// came: `{}`), else it is reported cut off.
    fn end(&mut self, i: usize, limits: &Limits, steps: &mut Vec<Step>) {
        let Some(call) = self.calls.get_mut(i) else {
            return;
        };
        match call.phase {
            Phase::Open => {}
            Phase::Server => {
                call.phase = Phase::Closed;
                return;
            }
            Phase::Closed => return,
        }
        if call.args.text.trim().is_empty() {
            let given = call.given.take().unwrap_or_else(|| "{}".to_string());
            call.args = Args::default();
            self.arguments(i, &given, limits, steps);
            // Whole arguments ran (or were refused): nothing is left to cut off.
            if !matches!(self.calls.get(i), Some(c) if c.phase == Phase::Open) {
                return;
            }
        }
        let Some(call) = self.calls.get(i) else {
            return;
        };
        let error = Error::new(
            ErrorKind::Syntax,
            format!(
                "the arguments of `{}` were cut off: its JSON object never closed",
                call.name
            ),
        )
        .with_hint("the model's output ended inside the call; ask again with a higher max_tokens");
        self.fail(i, error, steps);
    }

    /// Call `i`'s arguments are complete: check they are JSON, hand the call on.
    fn ready(&mut self, i: usize, steps: &mut Vec<Step>) {
        let Some(call) = self.calls.get_mut(i) else {
            return;
        };
        call.phase = Phase::Closed;
        if let Err(e) = serde_json::from_str::<serde_json::Map<String, Json>>(&call.args.text) {
            let error = Error::new(
                ErrorKind::Syntax,
                format!("the arguments of `{}` are not valid JSON: {e}", call.name),
            )
            .with_hint("a tool call's arguments are one JSON object of named arguments");
            let (name, text, id) = (call.name.clone(), call.args.text.clone(), call.id.clone());
            return steps.push(row(&name, &text, Some(&id), error));
        }
        call.ran = true;
        steps.push(Step::Call(DeltaCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: std::mem::take(&mut call.args.text),
        }));
    }

    /// Call `i` cannot run: its row, under its name and id.
    fn fail(&mut self, i: usize, error: Error, steps: &mut Vec<Step>) {
        if let Some(call) = self.calls.get_mut(i) {
            call.phase = Phase::Closed;
            steps.push(row(&call.name, &call.args.text, Some(&call.id), error));
        }
    }

    /// Call `i` takes no more (its row was given).
    fn close(&mut self, i: usize) {
        if let Some(call) = self.calls.get_mut(i) {
            call.phase = Phase::Closed;
        }
    }
}

/// A row for what cannot run: `name`, `input`, the provider's `id` when there is one.
fn row(name: &str, input: &str, id: Option<&str>, error: Error) -> Step {
    let mut out = FunctionOutput::failed(name, clip(input, 2000), error);
    if let Some(id) = id {
        out.call_id = id.to_string();
    }
    Step::Row(Box::new(out))
}

/// The hint of every row about an event fexpr does not read.
const EVENTS_HINT: &str =
    "stream text chunks, OpenAI Chat Completions chunks (`choices[0].delta`), \
     Responses API events (`response.output_item.added`, `response.function_call_arguments.delta`) \
     or Anthropic Messages events (`content_block_start`, `content_block_delta`)";

/// The row for an event fexpr does not read.
fn unknown(event: &Json, why: &str) -> Step {
    let kind = get_str(event, "type").unwrap_or("event");
    let error = Error::new(
        ErrorKind::Unsupported,
        format!("a streamed event fexpr cannot read: {why}"),
    )
    .with_hint(EVENTS_HINT);
    row(kind, &clip(&event.to_string(), 200), None, error)
}

/// The row for a fragment addressed to no open call.
fn never_opened(event: &Json, what: &str) -> Step {
    let kind = get_str(event, "type").unwrap_or("tool_calls");
    let error = Error::new(
        ErrorKind::Syntax,
        format!("an arguments fragment for {what}: it belongs to no call"),
    )
    .with_hint(EVENTS_HINT);
    row(kind, &clip(&event.to_string(), 200), None, error)
}

/// An event as written on the wire, decoded within `max_source_bytes` (and serde_json's own
/// nesting bound).
fn decode(text: &str, limits: &Limits) -> Result<Json, Error> {
    if text.len() > limits.max_source_bytes {
        return Err(Error::limit(
            LimitKind::SourceBytes,
            limits.max_source_bytes,
            text.len(),
        ));
    }
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::Syntax,
            format!("a streamed event is not valid JSON: {e}"),
        )
        .with_hint(EVENTS_HINT)
    })
}

/// Whether decoded JSON is a provider's streaming event (the shapes [`StreamChunk::Event`]
/// reads) rather than model text that happens to be JSON (a call written as JSON).
fn is_event(value: &Json) -> bool {
    if value.get("choices").is_some_and(Json::is_array) {
        return true;
    }
    let Some(kind) = get_str(value, "type") else {
        return false;
    };
    kind.starts_with("response.")
        || matches!(
            kind,
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "ping"
                | "error"
        )
}

/// Model output written to a pipe, split into what
/// [`ToolManager::stream`](crate::ToolManager::stream) takes: the lines that are streaming
/// events (SSE `data:` lines, and JSON lines in an event's shape) become
/// [`StreamChunk::Wire`], everything else stays text, passed on as it arrives (a line is held
/// back only while it may still turn out to be an event: it starts with `{` or `data:`). SSE
/// framing (`event:` lines, `:` comments, `data: [DONE]`) is passed over once a `data:` line
/// was seen. `fexpr exec -` reads stdin so.
///
/// ```
/// use fexpr::stream::{StreamChunk, WireLines};
/// let mut lines = WireLines::default();
/// let mut chunks = lines.push("Let me add.\ndata: {\"choices\": [{\"index\": 0, \"delta\": {}}]}\n\n");
/// chunks.extend(lines.finish());
/// assert_eq!(chunks, [StreamChunk::Text("Let me add.\n".into()),
///     StreamChunk::Wire("{\"choices\": [{\"index\": 0, \"delta\": {}}]}".into())]);
/// ```
#[derive(Debug, Default)]
pub struct WireLines {
    /// Text not passed on yet: the start of a line that may be an event.
    held: String,
    /// Whether `held` starts a line.
    mid_line: bool,
    /// Whether an SSE `data:` line was seen.
    sse: bool,
}

impl WireLines {
    /// Split `text` (the next piece of the input) into chunks.
    pub fn push(&mut self, text: &str) -> Vec<StreamChunk> {
        self.held.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.held.is_empty() {
                break;
            }
            let newline = self.held.find('\n');
            if !self.mid_line && self.may_be_event() {
                let Some(end) = newline else { break };
                let line: String = self.held.drain(..=end).collect();
                self.line(line, &mut out);
                continue;
            }
            let end = newline.map_or(self.held.len(), |n| n + 1);
            let text: String = self.held.drain(..end).collect();
            self.mid_line = newline.is_none();
            push_text(&mut out, text);
        }
        out
    }

    /// The input ended: what was held back.
    pub fn finish(&mut self) -> Vec<StreamChunk> {
        let mut out = Vec::new();
        let line = std::mem::take(&mut self.held);
        if !line.is_empty() {
            self.line(line, &mut out);
        }
        out
    }

    /// Whether the held text, at a line start, may still be an event line.
    fn may_be_event(&self) -> bool {
        let held = self.held.as_str();
        let prefix = |p: &str| held.starts_with(p) || p.starts_with(held);
        held.starts_with('{')
            || prefix("data:")
            || (self.sse
                && (held.starts_with(':')
                    || prefix("event:")
                    || prefix("id:")
                    || prefix("retry:")
                    || held.starts_with('\n')
                    || held.starts_with("\r\n")))
    }

    /// One whole line held back: an event, SSE framing, or text after all.
    fn line(&mut self, line: String, out: &mut Vec<StreamChunk>) {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(data) = content.strip_prefix("data:") {
            self.sse = true;
            let data = data.trim();
            if data != "[DONE]" && !data.is_empty() {
                out.push(StreamChunk::Wire(data.to_string()));
            }
            return;
        }
        if self.sse
            && (content.is_empty()
                || content.starts_with(':')
                || ["event:", "id:", "retry:"]
                    .iter()
                    .any(|p| content.starts_with(p)))
        {
            return;
        }
        if content.starts_with('{') {
            if let Ok(value) = serde_json::from_str::<Json>(content) {
                if is_event(&value) {
                    out.push(StreamChunk::Wire(content.to_string()));
                    return;
                }
            }
        }
        self.mid_line = !line.ends_with('\n');
        push_text(out, line);
    }
}

/// Append `text` to `out`, joined to a text chunk just before it.
fn push_text(out: &mut Vec<StreamChunk>, text: String) {
    match out.last_mut() {
        Some(StreamChunk::Text(last)) => last.push_str(&text),
        _ => out.push(StreamChunk::Text(text)),
    }
}

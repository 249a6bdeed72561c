//! Front-end: raw model text → the calls the model asked to run, and an account of everything
//! else.
//!
//! A call runs only where the text presents it as the model's action. [`extract`] reads the
//! text by its grammar, in one bounded linear pass:
//!
//! - **Explicit tool-call forms** are call positions wherever they stand apart: the JSON forms
//!   (fexpr's `Function` `{"name", "kwargs"}` and `FunctionExpression` `{"action"}`,
//!   `{"name", "arguments"}` as OpenAI functions and Hermes/Qwen tool calls write it,
//!   `{"name", "parameters"}`, OpenAI `tool_calls` and assistant messages, Anthropic
//!   `tool_use` blocks and messages, lists of these, also written as Python literals; see
//!   [`json_form`](self::json_form)), and the bodies of `<tool_call>…</tool_call>`,
//!   `<|python_start|>…<|python_end|>`, `<|python_tag|>…` and `[TOOL_CALLS]…`.
//! - **Python-like text** is read in *units*: the body of a fenced code block, or a run of lines
//!   standing apart from prose. A unit runs only if it consists of calls (`f(a=1)`,
//!   `math.hypot(x=3, y=4)`) and lists or tuples of calls as expression statements, with
//!   comments and blank lines between them. It is read with Python's lexical rules, so
//!   comments and string literals never hold calls. Any other statement or expression in the
//!   unit — `if`/`for`/`while`/`def`/`class`/`try`/`with`/`import`, an assignment, `await`, a
//!   lambda, a walrus, an operator, a subscript, `*` unpacking, a call of a call — makes the
//!   whole unit one rejected item whose error says what it is and that nothing in it ran.
//! - **Prose**: a line that is not Python. A call written inside a sentence (`I will not call
//!   f(x) because…`) is a *mention*: reported as [`IgnoreReason::Mention`], never run. The
//!   lenient reading ([`ReadOptions::lenient`], for harnesses that score text) takes mentions
//!   as calls.
//!
//! Names are whole identifiers (`éadd(…)` is a call to `éadd`, not `add`). Reasoning blocks
//! (`<think>…</think>`, `<thinking>`, `<reasoning>`, or everything before a `</think>` whose
//! opening tag the chat template wrote) are reported as [`IgnoreReason::Reasoning`].
//!
//! Nothing is dropped silently: every stretch of non-blank text that is not part of a call is
//! listed in [`Extraction::ignored`] with an [`IgnoreReason`]. A call whose text does not parse
//! (a cut-off response) is still reported, with its error; so is a cut-off JSON call, named
//! when its name was written whole. A call to a name that is not a tool is kept (so its
//! "unknown tool" error reaches the model) only when the response has no prose. A response
//! that repeats its calls and is cut off in the copy (`[f(a=1)]\n[f(a=`) is read once: the
//! copy is reported as [`IgnoreReason::Duplicate`].
//!
//! Every JSON form is read by [`json_input`](self::json_input) within the same limits as an
//! expression: JSON over a limit refuses the whole text, as a text over
//! [`Limits::max_source_bytes`] is refused. More calls in the whole text than
//! [`Limits::max_calls`] (or more record constructors and builtin calls in their arguments
//! than [`Limits::max_constructors`]) make every call an error row with that limit (ids
//! kept): none runs.
//!
//! All work is bounded: the scan does at most a fixed multiple of the text's length in steps
//! (past it the rest is reported as [`IgnoreReason::Budget`]), and nothing recurses on input but
//! the JSON forms (at most [`MAX_JSON_NESTING`] levels) and Python literals, whose depth the
//! parser bounds. The module is pure (no I/O, no runtime): it runs on the host or inside the
//! wasm guest.
//!
//! ```
//! use fexpr::front::{extract, IgnoreReason};
//! use fexpr::Limits;
//!
//! let text = "Sure! Here you go:\n```python\n[get_weather(city=\"Paris\"), get_time(tz='CET')]  # both\n```<|eot_id|>";
//! let found = extract(text, &Limits::default(), &|name| name.starts_with("get_"));
//! let names: Vec<&str> = found.calls.iter().map(|c| c.name.as_str()).collect();
//! assert_eq!(names, ["get_weather", "get_time"]);
//! assert_eq!(&text[found.calls[1].span.range()], "get_time(tz='CET')");
//! let reasons: Vec<IgnoreReason> = found.ignored.iter().map(|i| i.reason).collect();
//! assert_eq!(reasons, [IgnoreReason::Prose, IgnoreReason::Fence, IgnoreReason::Comment, IgnoreReason::Fence, IgnoreReason::ChatToken]);
//!
//! // A mention in a sentence, a call in a comment, a call inside other code: none is taken.
//! let text = "I will not call get_weather(city='Oslo') today.\n# get_time(tz='CET')\nx = get_time(tz='UTC')";
//! let found = extract(text, &Limits::default(), &|name| name.starts_with("get_"));
//! assert_eq!(found.calls.len(), 1);
//! assert!(found.calls[0].parsed.as_ref().unwrap_err().message.contains("nothing in it ran"));
//! assert_eq!(found.ignored[1].reason, IgnoreReason::Mention);
//! ```

pub mod check;
#[cfg(feature = "diagnostics")]
pub mod diagnostic;
pub mod formats;
pub mod json_form;
pub mod json_input;
pub mod lex;
mod markup;
mod model;
pub(crate) mod python;
pub mod repair;
pub mod route;
pub mod stream;

use serde::{Deserialize, Serialize};

use crate::error::{clip, Error, LimitKind, Span};
use crate::limits::Limits;
use crate::syntax::lex::{dotted_ident_end, is_ident_start};
use crate::syntax::{Expr, ExprKind};

pub use json_form::MAX_JSON_NESTING;
pub use markup::CHAT_TOKENS;

/// Scan steps allowed per byte of text (plus a constant); past it the rest is reported as
/// [`IgnoreReason::Budget`]. Ordinary text needs a few steps per byte.
const STEPS_PER_BYTE: usize = 16;

/// How model text is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadOptions {
    /// Take calls mentioned in prose (`Use f(x) to…`) as calls, as harnesses that score text
    /// want. Off by default: a mention is reported, never run.
    pub lenient: bool,
    /// Read the text as this model format only. `None` (the default): every format whose
    /// markers the text holds ([`formats::detect`]) is read.
    #[serde(default)]
    pub format: Option<formats::ModelFormat>,
}

/// What a model's response holds: its calls in order, and what was not used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    /// The calls, in the order they appear.
    pub calls: Vec<FoundCall>,
    /// Every stretch of non-blank text not used, in order, with why.
    pub ignored: Vec<Ignored>,
    /// Set when the text was refused as a whole (too large).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Error>,
}

/// One call found in the text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoundCall {
    /// The callee (`get_weather`, `math.hypot`).
    pub name: String,
    /// Where the call is in the text (for a JSON form: the JSON object it came from).
    pub span: Span,
    /// Which form it was written in.
    pub origin: Origin,
    /// The call's own text as written: its stretch of the text (Python call text, a JSON
    /// form's object, a model format's call with its markup).
    pub source: String,
    /// The call as the tree every reader hands on (spans index `source`): Python call text
    /// parsed, a JSON form's or model format's name and arguments as written (any key, a
    /// keyword named exactly so; JSON values as read, text values read by the parameter's
    /// type), or why it could not be read.
    pub parsed: Result<Expr, Error>,
    /// The id the model gave the call (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`,
    /// a JSON call's `id`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The form a call was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Origin {
    /// Python call syntax.
    Python,
    /// `{"name", "kwargs", "args"}`: fexpr's `Function`.
    Function,
    /// `{"action"}`: fexpr's `FunctionExpression`.
    FunctionExpression,
    /// `{"name", "arguments"}` or `{"function": {...}}`: OpenAI (and Hermes-style tags).
    OpenAi,
    /// `{"name", "parameters"}`: Llama's JSON tool call.
    NameParameters,
    /// `{"type": "tool_use", "name", "input"}`: Anthropic.
    Anthropic,
    /// A model's own tool-call format ([`formats`]).
    Format(formats::ModelFormat),
}

/// A stretch of text that is not part of any call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ignored {
    /// Where it is.
    pub span: Span,
    /// Why it was not used.
    pub reason: IgnoreReason,
    /// The text, clipped to 80 characters.
    pub text: String,
}

/// Why a stretch of text was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum IgnoreReason {
    /// A chat-template token (`<end_of_turn>`, `<|eot_id|>`, `</s>`, ...).
    ChatToken,
    /// A code fence line marker (```` ``` ```` with its language tag).
    Fence,
    /// A markup tag (`<tool_call>`, `</tool_call>`).
    Tag,
    /// Prose: words that are not a call.
    Prose,
    /// Well-formed JSON that is not a call form.
    JsonData,
    /// A call to a name that is not a tool, in a response that also has prose.
    NotATool,
    /// Reasoning (`<think>…</think>`, `<thinking>`, `<reasoning>`): not the answer, so calls
    /// written there are not taken.
    Reasoning,
    /// The scan's step budget ran out (adversarial input); the rest was not looked at.
    Budget,
    /// Brackets and separators (`(`, `]`, `,`, `;`) with no call: the whole text when it
    /// holds nothing else. Between calls they are skipped.
    Punctuation,
    /// A cut-off copy of the call list just before it (a model that started to repeat
    /// itself): the calls are read once.
    Duplicate,
    /// A call written inside a sentence (prose before or after it on its line): the model
    /// mentioned it, it did not ask for it. Never run (unless the reading is lenient).
    Mention,
    /// Python code that holds no call to a tool (`x = 1`, `import os`, a docstring): not a
    /// call, nothing runs.
    Code,
    /// A comment beside calls that run (`add(a=1)  # then divide(a=1, b=0)`): never read for
    /// calls.
    Comment,
}

/// Find the calls the model asked to run in `text`, read strictly. `is_tool` says which callee
/// names are tools (pass `&|_| true` when every name counts). See the [module docs](self).
pub fn extract(text: &str, limits: &Limits, is_tool: &dyn Fn(&str) -> bool) -> Extraction {
    extract_with(text, limits, is_tool, ReadOptions::default())
}

/// [`extract`] with [`ReadOptions`] (the lenient reading).
///
/// ```
/// use fexpr::front::{extract_with, ReadOptions};
/// use fexpr::Limits;
///
/// let text = "You could use add(a=1, b=2) here.";
/// let strict = extract_with(text, &Limits::default(), &|n| n == "add", ReadOptions::default());
/// assert!(strict.calls.is_empty());
/// let lenient = extract_with(text, &Limits::default(), &|n| n == "add", ReadOptions { lenient: true, ..ReadOptions::default() });
/// assert_eq!(lenient.calls[0].source, "add(a=1, b=2)");
/// ```
pub fn extract_with(
    text: &str,
    limits: &Limits,
    is_tool: &dyn Fn(&str) -> bool,
    options: ReadOptions,
) -> Extraction {
    extract_typed(text, limits, is_tool, &|_, _| None, options)
}

/// [`extract_with`], with the type of each tool's parameters (`param_type(tool, parameter)`):
/// values a model format writes as text (Qwen3-Coder's and GLM's XML) are read by that type,
/// as the models' own parsers do. [`check::plan`] reads with the tools' signatures.
pub fn extract_typed(
    text: &str,
    limits: &Limits,
    is_tool: &dyn Fn(&str) -> bool,
    param_type: &dyn Fn(&str, &str) -> Option<crate::types::Type>,
    options: ReadOptions,
) -> Extraction {
    read_text(
        text,
        limits,
        is_tool,
        param_type,
        options,
        route::Reading::default(),
        true,
    )
}

/// [`extract_typed`], given the whole text already read as JSON (`reading`, by
/// [`route`](route::route): not read again), with the one-line reading of the common case
/// ([`Reader::read_call_line`]) or without it (`call_line: false`: every text cut into regions
/// and logical lines; the test that compares the two passes false).
fn read_text(
    text: &str,
    limits: &Limits,
    is_tool: &dyn Fn(&str) -> bool,
    param_type: &dyn Fn(&str, &str) -> Option<crate::types::Type>,
    options: ReadOptions,
    reading: route::Reading,
    call_line: bool,
) -> Extraction {
    if text.len() > limits.max_source_bytes {
        return Extraction {
            calls: Vec::new(),
            ignored: Vec::new(),
            error: Some(Error::limit(
                LimitKind::SourceBytes,
                limits.max_source_bytes,
                text.len(),
            )),
        };
    }
    let mut reader = Reader::new(text, limits, is_tool, param_type, options);
    reader.json = reading.tree;
    reader.json_checked = reading.checked;
    if !(call_line && reader.read_call_line()) {
        reader.read();
    }
    reader.finish()
}

/// The reading's state: what was found so far, in order.
struct Reader<'a> {
    text: &'a str,
    limits: &'a Limits,
    is_tool: &'a dyn Fn(&str) -> bool,
    /// The type of a tool's parameter, when known.
    param_type: &'a dyn Fn(&str, &str) -> Option<crate::types::Type>,
    options: ReadOptions,
    /// Steps left (a step is about a byte looked at).
    steps: usize,
    /// The calls found, and the rejected items (a unit of code around calls, an explicit form
    /// that holds no call: each fails), in the order read.
    found: Vec<FoundCall>,
    /// Which of `found` are rejected items, by index (ascending).
    rejected: Vec<usize>,
    ignored: Vec<Ignored>,
    /// The source of the last call statement taken: a cut-off copy of it is a duplicate.
    last_taken: Option<Span>,
    /// Where the step budget ran out.
    budget_from: Option<usize>,
    /// Why the whole text is refused (JSON in it over a limit).
    refused: Option<Error>,
    /// The whole text read as JSON, if it was before: taken by the JSON at its first byte.
    json: Option<Expr>,
    /// Whether `json` is known to hold no duplicate key and no float out of range
    /// ([`route::Reading`]'s `checked`).
    json_checked: bool,
}

impl<'a> Reader<'a> {
    fn new(
        text: &'a str,
        limits: &'a Limits,
        is_tool: &'a dyn Fn(&str) -> bool,
        param_type: &'a dyn Fn(&str, &str) -> Option<crate::types::Type>,
        options: ReadOptions,
    ) -> Reader<'a> {
        Reader {
            text,
            limits,
            is_tool,
            param_type,
            options,
            steps: STEPS_PER_BYTE
                .saturating_mul(text.len())
                .saturating_add(4096),
            found: Vec::new(),
            rejected: Vec::new(),
            ignored: Vec::new(),
            last_taken: None,
            budget_from: None,
            refused: None,
            json: None,
            json_checked: false,
        }
    }

    /// Charge `n` steps; false (and nothing charged) when the budget cannot pay them.
    fn charge(&mut self, n: usize) -> bool {
        match self.steps.checked_sub(n) {
            Some(left) => {
                self.steps = left;
                true
            }
            None => false,
        }
    }

    /// Read every region of the text: the model formats' first, then the rest.
    fn read(&mut self) {
        let claimed = self.read_formats();
        // A text that is one JSON document of calls holds no markup to look for.
        let untouched = claimed.is_empty()
            && self.found.is_empty()
            && self.ignored.is_empty()
            && self.budget_from.is_none()
            && self.refused.is_none();
        if untouched && self.read_whole_json() {
            return;
        }
        let mut regions = Vec::new();
        let mut from = 0;
        for c in &claimed {
            markup::regions_in(self.text, from, c.start as usize, &mut regions);
            from = c.end as usize;
        }
        markup::regions_in(self.text, from, self.text.len(), &mut regions);
        for region in regions {
            if self.budget_from.is_some() || self.refused.is_some() {
                return;
            }
            match region {
                markup::Region::Reasoning(s) => self.ignore(s, IgnoreReason::Reasoning),
                markup::Region::Markup(s, reason) => self.ignore(s, reason),
                markup::Region::Fence(s) => self.read_lines(s, python::Block::Fence),
                markup::Region::Explicit(s, missing) => {
                    let before = self.found.len();
                    self.read_lines(s, python::Block::Explicit);
                    if let Some(close) = missing {
                        // Cut off before its closing tag: what it holds does not run.
                        for call in self.found.iter_mut().skip(before) {
                            let error = Error::new(
                                crate::error::ErrorKind::Syntax,
                                format!("the tool call `{}` is cut off", clip(&call.name, 40)),
                            )
                            .with_hint(format!("the text ends before its closing `{close}`"));
                            call.parsed = Err(error);
                        }
                    }
                }
                markup::Region::Plain(s) => self.read_lines(s, python::Block::Plain),
            }
        }
    }

    /// Report `text[s]` as not used, for `reason` (adjacent prose merged).
    fn ignore(&mut self, s: Span, reason: IgnoreReason) {
        let (a, z) = (s.start as usize, s.end as usize);
        let Some(piece) = self.text.get(a..z) else {
            return;
        };
        // Blanks around a stretch are not part of it.
        let lead = piece.len() - piece.trim_start().len();
        let (a, z) = (a + lead, a + piece.trim_end().len());
        if a >= z {
            return;
        }
        if let Some(last) = self.ignored.last_mut() {
            let gap = self.text.get(last.span.end as usize..a).unwrap_or("x");
            if last.reason == reason
                && reason == IgnoreReason::Prose
                && gap.bytes().all(|c| c.is_ascii_whitespace())
            {
                last.span.end = span(0, z).end;
                last.text = clip(self.text.get(last.span.range()).unwrap_or_default(), 80);
                return;
            }
        }
        self.ignored.push(ignored_at(self.text, a, z, reason));
    }

    fn finish(self) -> Extraction {
        let Reader {
            text,
            limits,
            is_tool,
            found,
            rejected,
            mut ignored,
            budget_from,
            refused,
            ..
        } = self;
        if let Some(error) = refused {
            return Extraction {
                calls: Vec::new(),
                ignored: Vec::new(),
                error: Some(error),
            };
        }
        if let Some(from) = budget_from {
            ignored.retain(|i| (i.span.start as usize) < from);
            // A stretch that runs past where the budget ran out ends there.
            for i in &mut ignored {
                if i.span.end as usize > from {
                    *i = ignored_at(text, i.span.start as usize, from, i.reason);
                }
            }
            ignored.push(ignored_at(text, from, text.len(), IgnoreReason::Budget));
        }
        let prose = ignored
            .iter()
            .any(|i| matches!(i.reason, IgnoreReason::Prose | IgnoreReason::Mention));
        // Calls to names that are not tools: kept (for their "unknown tool" error) only when
        // the response has no prose; in prose, `see figure(3)` is not a call.
        let mut calls = found;
        if prose {
            let mut index = 0;
            calls.retain(|call| {
                let rejected = rejected.binary_search(&index).is_ok();
                index += 1;
                let keep = rejected || is_tool(&call.name) || call.parsed.is_err();
                if !keep {
                    ignored.push(ignored_at(
                        text,
                        call.span.start as usize,
                        call.span.end as usize,
                        IgnoreReason::NotATool,
                    ));
                }
                keep
            });
        }
        calls.sort_by_key(|c| c.span.start);
        ignored.sort_by_key(|i| i.span.start);
        // A stretch inside a call's own text is that call's (its row reports it, as a call or
        // as the rejected unit): never reported a second time.
        ignored.retain(|i| {
            let before = calls.partition_point(|c| c.span.start <= i.span.start);
            !before
                .checked_sub(1)
                .and_then(|k| calls.get(k))
                .is_some_and(|c| c.span.start < c.span.end && i.span.end <= c.span.end)
        });
        // `max_calls` and `max_constructors` bound the whole text, as they bound an
        // expression's units together: past either, every call is an error row (ids kept) and
        // none runs. Each call found counts as a tool call; the calls in its arguments count
        // as tool calls or as constructors (record types, builtins) by what they call.
        let (tools, constructors) = calls
            .iter()
            .map(|c| {
                let (tools, constructors) = c
                    .parsed
                    .as_ref()
                    .map_or((0, 0), |e| nested_calls(e, is_tool));
                (tools.saturating_add(1), constructors)
            })
            .fold((0usize, 0usize), |(t, k), (a, b)| {
                (t.saturating_add(a), k.saturating_add(b))
            });
        let over = if tools > limits.max_calls {
            Some(Error::limit(LimitKind::Calls, limits.max_calls, tools))
        } else if constructors > limits.max_constructors {
            Some(Error::limit(
                LimitKind::Constructors,
                limits.max_constructors,
                constructors,
            ))
        } else {
            None
        };
        if let Some(error) = over {
            for call in &mut calls {
                call.parsed = Err(error.clone());
            }
        }
        Extraction {
            calls,
            ignored,
            error: None,
        }
    }
}

/// The calls inside `expr`'s arguments (not `expr` itself): to tools, and to anything else
/// (record types, builtins: what [`Limits::max_constructors`] counts).
fn nested_calls(expr: &Expr, is_tool: &dyn Fn(&str) -> bool) -> (usize, usize) {
    let (mut tools, mut constructors) = (0usize, 0usize);
    // Only nodes with children are stacked: a flat call's arguments allocate nothing.
    let mut stack: Vec<&Expr> = Vec::new();
    let mut node = Some(expr);
    while let Some(e) = node {
        for child in e.children() {
            if let ExprKind::Call(call) = &child.kind {
                if is_tool(&call.func) {
                    tools += 1;
                } else {
                    constructors += 1;
                }
            }
            if child.children().next().is_some() {
                stack.push(child);
            }
        }
        node = stack.pop();
    }
    (tools, constructors)
}

fn span(start: usize, end: usize) -> Span {
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

fn ignored_at(text: &str, start: usize, end: usize, reason: IgnoreReason) -> Ignored {
    Ignored {
        span: span(start, end),
        reason,
        text: clip(text.get(start..end).unwrap_or_default(), 80),
    }
}

/// `s` moved back by `base` bytes (an element cut out of a longer source).
fn shift_back(s: Span, base: u32) -> Span {
    Span::new(s.start.saturating_sub(base), s.end.saturating_sub(base))
}

/// A call read from a longer text (its tree, or why it cannot be read) with every span moved
/// back by `base` bytes, into the call's own text.
fn moved_back(read: Result<Expr, Error>, base: u32) -> Result<Expr, Error> {
    let local = |s: Span| shift_back(s, base);
    match read {
        Ok(mut tree) => {
            json_input::map_spans(&mut tree, &local);
            Ok(tree)
        }
        Err(e) => Err(Error {
            span: e.span.map(local),
            ..e
        }),
    }
}

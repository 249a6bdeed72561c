//! Front-end: raw model text → the calls it contains, and an account of everything else.
//!
//! Models rarely answer with one clean expression. [`extract`] finds, in one bounded linear
//! scan, every call a response holds:
//!
//! - Python calls (`f(a=1)`, `math.hypot(x=3, y=4)`), alone, in a list or tuple, separated by
//!   newlines, commas or `;`, inside fenced code blocks (any language tag), inside
//!   `<tool_call>…</tool_call>`-style tags, or surrounded by prose;
//! - the JSON forms: fexpr's `Function` (`{"name", "kwargs"}`) and `FunctionExpression`
//!   (`{"action"}`), `{"name", "arguments"}` (OpenAI functions, Hermes/Qwen tool calls, with
//!   `arguments` an object or a JSON string), `{"name", "parameters"}` (Llama; the name may
//!   also be under `function`, `function_name`, `tool_name` or `tool`, the arguments under
//!   `params`, `input` or `tool_input`), OpenAI `tool_calls` and messages holding them,
//!   Anthropic `tool_use` blocks and messages, and lists of any of these — also written as
//!   Python literals (single quotes, `True`, `None`).
//!
//! Reasoning blocks (`<think>…</think>`, `<thinking>`, `<reasoning>`, or everything before a
//! `</think>` whose opening tag the chat template wrote) are reported as
//! [`IgnoreReason::Reasoning`]; calls written there are not taken.
//!
//! Nothing is dropped silently: every stretch of non-blank text that is not part of a call is
//! listed in [`Extraction::ignored`] with a [`IgnoreReason`] (chat-template token such as
//! `<|eot_id|>`, code fence, markup tag, prose, JSON that is not a call, a call to a name that is
//! not a tool; brackets and separators between calls are skipped, and reported only when the
//! text holds nothing else). A call whose text does not parse is still reported, with its error.
//!
//! A call to a name that is not a tool is kept (so its "unknown tool" error reaches the model)
//! only when the response has no prose; in prose, `see figure(3)` is not a call.
//!
//! A call is never lifted out of an expression that is not itself a call to a tool or a list
//! of calls: a call to another name (`show(get_weather(city="Paris"))`,
//! `__import__("os").system(search(query="x"))`; `print(...)` around one call or a list of
//! calls, Gemma's `tool_code` convention, is the one wrapper looked into), an attribute chain or a call of a call
//! (`f(x).y`, `f(x)()`), a lambda (`(lambda: f(x))()`), a conditional (`f(x) if c else g(y)`)
//! or a list that is not all calls (`[f(x), y]`). That whole expression is one call in
//! [`Extraction::calls`] whose `parsed` is the error saying what it is, so nothing inside it
//! runs.
//!
//! A response that repeats its list of calls and is cut off in the copy (`[f(a=1)]\n[f(a=`)
//! is read once: the copy is reported as [`IgnoreReason::Duplicate`].
//!
//! Every JSON form (and OpenAI's `arguments` JSON string) is read by [`crate::front::json_input`], within
//! the same limits as an expression: JSON over a limit (deeper than `max_depth`, a collection
//! over `max_collection_len`, ...) refuses the whole text, as a text over
//! [`Limits::max_source_bytes`] is refused. A duplicate key anywhere in a JSON form, or a number
//! out of a float's range, makes each call of that form an error naming the key or the number
//! (the call's `source` is then the form's JSON text, which the error's span indexes); the
//! Python-literal forms are checked the same way. More calls in the whole text than
//! [`Limits::max_calls`] refuse it too: none of them runs.
//!
//! All work is bounded: the text is refused past [`Limits::max_source_bytes`], the scan does at
//! most a fixed multiple of the text's length in steps, nothing recurses on input except the
//! calls of JSON forms, looked into at most [`MAX_JSON_NESTING`] levels deep, and Python
//! literals, whose depth the parser bounds.
//!
//! The module is pure (no I/O, no runtime): it runs on the host or inside the wasm guest.
//!
//! ```
//! use fexpr::front::{extract, IgnoreReason};
//! use fexpr::Limits;
//!
//! let text = "Sure! Here you go:\n```python\n[get_weather(city=\"Paris\"), get_time(tz='CET')]\n```<|eot_id|>";
//! let found = extract(text, &Limits::default(), &|name| name.starts_with("get_"));
//! let names: Vec<&str> = found.calls.iter().map(|c| c.name.as_str()).collect();
//! assert_eq!(names, ["get_weather", "get_time"]);
//! assert_eq!(&text[found.calls[1].span.range()], "get_time(tz='CET')");
//! let reasons: Vec<IgnoreReason> = found.ignored.iter().map(|i| i.reason).collect();
//! assert_eq!(reasons, [IgnoreReason::Prose, IgnoreReason::Fence, IgnoreReason::Fence, IgnoreReason::ChatToken]);
//! ```

pub mod check;
#[cfg(feature = "diagnostics")]
pub mod diagnostic;
pub mod formats;
pub mod json_input;
pub mod repair;

use serde::{Deserialize, Serialize};

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::limits::Limits;
use crate::syntax::{self, Expr, ExprKind, UnaryOp, PYTHON_KEYWORDS};

/// Chat-template tokens recognised (and reported as [`IgnoreReason::ChatToken`]) wherever they
/// appear outside a call. Any other `<|…|>` token is recognised too.
pub const CHAT_TOKENS: &[&str] = &[
    "<end_of_turn>",
    "<start_of_turn>",
    "<eos>",
    "<bos>",
    "</s>",
    "<s>",
    "[TOOL_CALLS]",
    "[/TOOL_CALLS]",
    "[INST]",
    "[/INST]",
];

/// How many levels of JSON wrapping (message → `tool_calls` → call → `function`) are looked
/// into for calls.
pub const MAX_JSON_NESTING: usize = 8;

/// Scan steps allowed per byte of text (plus a constant); past it the rest is reported as
/// [`IgnoreReason::Budget`]. Ordinary text needs one or two steps per byte.
const STEPS_PER_BYTE: usize = 16;

/// Bytes looked at on each side of a call to see whether it is part of a conditional or a
/// lambda on its line.
const ENCLOSURE_WINDOW: usize = 512;

/// Longest markup tag recognised (`<tool_call>`, `</function_calls>`), in bytes.
const MAX_TAG_BYTES: usize = 48;

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
    /// Python source of the call alone: a slice of the text, a `FunctionExpression`'s
    /// `action`, or written from a JSON form's name and arguments.
    pub source: String,
    /// `source` parsed (spans index `source`), or why it could not be.
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
}

/// Find the calls in a model's `text`. `is_tool` says which callee names are tools (pass
/// `&|_| true` when every name counts). See the [module docs](self) for what is recognised.
pub fn extract(text: &str, limits: &Limits, is_tool: &dyn Fn(&str) -> bool) -> Extraction {
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
    let mut scan = Scanner {
        text,
        bytes: text.as_bytes(),
        limits,
        is_tool,
        steps: STEPS_PER_BYTE
            .saturating_mul(text.len())
            .saturating_add(4096),
        found: Vec::new(),
        used: Vec::new(),
        json_data: Vec::new(),
        wrappers: Vec::new(),
        duplicate_from: None,
        last_taken: None,
        content_end: text.trim_end().len(),
        budget_from: None,
        reasoning: reasoning_spans(text),
        refused: None,
    };
    scan.run();
    scan.finish()
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    limits: &'a Limits,
    is_tool: &'a dyn Fn(&str) -> bool,
    steps: usize,
    found: Vec<FoundCall>,
    /// Spans taken by calls (Python candidates whole, JSON objects whole).
    used: Vec<Span>,
    /// Well-formed JSON that is not a call.
    json_data: Vec<Span>,
    /// Outermost enclosing expressions that are not calls to tools, looked into: (span,
    /// calls found before it, whether it is a bracket group rather than a call to a name).
    wrappers: Vec<(Span, usize, bool)>,
    /// Where a truncated copy of the call list before it starts (read once: the copy is
    /// reported as [`IgnoreReason::Duplicate`]).
    duplicate_from: Option<usize>,
    /// The last Python call or list of calls taken: a cut-off copy of it is a duplicate.
    last_taken: Option<Span>,
    /// The end of the text without trailing blanks.
    content_end: usize,
    budget_from: Option<usize>,
    /// Reasoning blocks, in order.
    reasoning: Vec<Span>,
    /// Why the whole text is refused (JSON in it over a limit).
    refused: Option<Error>,
}

impl Scanner<'_> {
    fn step(&mut self) -> bool {
        match self.steps.checked_sub(1) {
            Some(left) => {
                self.steps = left;
                true
            }
            None => false,
        }
    }

    fn run(&mut self) {
        let n = self.bytes.len();
        let mut i = 0;
        // End of the outermost non-tool call being looked into.
        let mut wrapper_end = 0;
        let mut next_reasoning = 0;
        while i < n {
            if !self.step() {
                self.budget_from = Some(i);
                return;
            }
            while self
                .reasoning
                .get(next_reasoning)
                .is_some_and(|r| r.end as usize <= i)
            {
                next_reasoning += 1;
            }
            if let Some(r) = self.reasoning.get(next_reasoning) {
                if r.start as usize <= i {
                    i = r.end as usize;
                    continue;
                }
            }
            let c = self.bytes[i];
            if is_ident_start(c) && (i == 0 || !is_ident_byte(self.bytes[i - 1])) {
                let name_end = dotted_ident_end(self.bytes, i);
                if self.bytes.get(name_end) == Some(&b'(') {
                    let name = &self.text[i..name_end];
                    let matched = self.match_python(name_end);
                    if matched.is_none() && (self.is_tool)(name) && self.steps > 0 {
                        // A tool call that never closes (a cut-off response): reported with
                        // the parser's error rather than taken for prose, unless it is a
                        // cut-off copy of the calls just taken.
                        if self.is_truncated_copy(i) {
                            self.duplicate_from = Some(i);
                        } else {
                            self.take_python_call(i, n);
                        }
                        return;
                    }
                    if let Some(end) = matched {
                        let chain = self.chain_end(end);
                        if (self.is_tool)(name) {
                            if i < wrapper_end {
                                // Inside an enclosing expression: that one is the item.
                                self.take_python_call(i, end);
                                i = end;
                                continue;
                            }
                            if let Some((a, z)) = self.enclosure(i, end) {
                                self.reject(a, z);
                                i = z;
                                continue;
                            }
                            if chain == end {
                                self.take_python_call(i, end);
                                self.last_taken = Some(span(i, end));
                                i = end;
                                continue;
                            }
                        }
                        if i >= wrapper_end {
                            self.wrappers
                                .push((span(i, chain), self.found.len(), false));
                            wrapper_end = chain;
                        }
                        i = name_end + 1;
                        continue;
                    }
                }
                i = name_end.max(i + 1);
                continue;
            }
            if c == b'[' || c == b'(' {
                let j = skip_blank(self.bytes, i + 1);
                if j < n && is_ident_start(self.bytes[j]) {
                    let name_end = dotted_ident_end(self.bytes, j);
                    let lambda = &self.text[j..name_end] == "lambda";
                    if self.bytes.get(name_end) == Some(&b'(') || lambda {
                        match self.match_python(i) {
                            Some(end) if i >= wrapper_end => {
                                let chain = self.chain_end(end);
                                // An argument list or a subscript: `x.system(...)`, `x[...]`.
                                let after_name = i > 0 && {
                                    let p = self.bytes[i - 1];
                                    is_ident_byte(p) || matches!(p, b')' | b']')
                                };
                                if chain == end && !after_name && !lambda {
                                    if let Some((a, z)) = self.enclosure(i, end) {
                                        self.reject(a, z);
                                        i = z;
                                        continue;
                                    }
                                    if self.take_python_sequence(i, end) {
                                        self.last_taken = Some(span(i, end));
                                        i = end;
                                        continue;
                                    }
                                }
                                // A group that is Python but not calls (`[f(x), y]`, a
                                // lambda, an argument list, a called or indexed group): the
                                // calls in it are not taken out of it.
                                if after_name || chain > end || lambda || self.is_python(i, end) {
                                    self.wrappers.push((span(i, chain), self.found.len(), true));
                                    wrapper_end = chain;
                                }
                            }
                            None if c == b'[' && self.is_truncated_copy(i) => {
                                self.duplicate_from = Some(i);
                                return;
                            }
                            _ => {}
                        }
                    }
                }
            }
            if c == b'{' || c == b'[' {
                if let Some(end) = self.match_json(i) {
                    match json_input::read(&self.text[i..end], self.limits) {
                        Ok(tree) => {
                            if self.take_json(&tree, i, end) {
                                self.used.push(span(i, end));
                            } else {
                                self.json_data.push(span(i, end));
                            }
                            i = end;
                            continue;
                        }
                        // JSON over a limit refuses the whole text, as an expression's would.
                        Err(e) if e.kind == ErrorKind::Limit => {
                            let shift = |s: Span| span(i + s.start as usize, i + s.end as usize);
                            self.refused = Some(Error {
                                span: e.span.map(shift),
                                ..e
                            });
                            return;
                        }
                        Err(_) => {}
                    }
                }
                // The same forms written as Python literals (`{'name': 'f', 'arguments': {...}}`,
                // `True`/`None`): parsed, and taken when they hold nothing but literals.
                if let Some((tree, len)) = self.python_literal(i) {
                    if self.take_json(&tree, i, i + len) {
                        self.used.push(span(i, i + len));
                        i += len;
                        continue;
                    }
                }
            }
            i += 1;
        }
    }

    /// Past the suffixes that make the call or group ending at `end` part of a larger
    /// expression: `.name`, `(...)`, `[...]` right after it (`f(x).system(y)`, `g()()`).
    fn chain_end(&mut self, mut end: usize) -> usize {
        loop {
            match self.bytes.get(end) {
                Some(b'.') if self.bytes.get(end + 1).is_some_and(|c| is_ident_start(*c)) => {
                    end = dotted_ident_end(self.bytes, end + 1);
                }
                Some(b'(' | b'[') => match self.match_python(end) {
                    Some(next) => end = next,
                    None => return end,
                },
                _ => return end,
            }
        }
    }

    /// Whether `text[start..end]` reads as Python (it parses, or the parser names a construct
    /// it does not accept) rather than prose in brackets.
    fn is_python(&mut self, start: usize, end: usize) -> bool {
        match self.steps.checked_sub(end - start) {
            Some(left) => self.steps = left,
            None => return false,
        }
        match syntax::parse(&self.text[start..end], self.limits) {
            Ok(_) => true,
            Err(e) => e.kind == ErrorKind::Unsupported,
        }
    }

    /// The conditional expression, lambda or binary operation the call (or list) at
    /// `start..end` is a part of, on its line: `add() if c else g()`, `x if c else add()`,
    /// `lambda: add()`, `add() + x`. `None` when it stands alone.
    ///
    /// Only [`ENCLOSURE_WINDOW`] bytes on each side are looked at, so a long line of calls
    /// costs a fixed amount per call.
    fn enclosure(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        let text = self.text;
        // Most calls stand alone: nothing but blanks, punctuation or a line end around them.
        let blank = |c: &&u8| **c != b' ' && **c != b'\t';
        let next = self.bytes.get(end..).and_then(|b| b.iter().find(blank));
        let prev = self
            .bytes
            .get(..start)
            .and_then(|b| b.iter().rev().find(blank));
        let operator = |c: u8| b"+*/%@&^=!<>".contains(&c);
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if !next.is_some_and(|c| word(*c) || operator(*c))
            && !prev.is_some_and(|c| word(*c) || operator(*c) || *c == b':')
        {
            return None;
        }
        let mut w0 = start.saturating_sub(ENCLOSURE_WINDOW);
        while !text.is_char_boundary(w0) {
            w0 += 1;
        }
        let mut w1 = end.saturating_add(ENCLOSURE_WINDOW).min(text.len());
        while !text.is_char_boundary(w1) {
            w1 -= 1;
        }
        let line_start = text[w0..start].rfind('\n').map_or(w0, |p| w0 + p + 1);
        let window_end = text[end..w1].find('\n').map_or(w1, |p| end + p);
        let before = text[line_start..start].trim_end();
        let after = text[end..window_end].trim_start();
        let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let last_word = before
            .rsplit(|c: char| !is_word(c))
            .next()
            .unwrap_or_default();
        let first_word = after
            .split(|c: char| !is_word(c))
            .next()
            .unwrap_or_default();
        let has_word = |s: &str, w: &str| s.split(|c: char| !is_word(c)).any(|x| x == w);
        let conditional_after = first_word == "if" && has_word(after, "else");
        let conditional_before = (last_word == "else" && has_word(before, "if"))
            || (last_word == "if" && has_word(after, "else"));
        let lambda = before.ends_with(':') && has_word(before, "lambda");
        // An operand of a binary operator written as code (spaced: `f(x) + y`, `y * f(x)`); not
        // the first thing on its line (`> quote`), not markdown (`**bold**`), not a dash.
        let operator = |s: &str| {
            [
                "+", "*", "/", "%", "@", "&", "^", "==", "!=", "<=", ">=", "<", ">", "**", "//",
            ]
            .contains(&s)
        };
        let operator_after = after.split_once(' ').is_some_and(|(op, _)| operator(op));
        let operator_before = before
            .rsplit_once(' ')
            .is_some_and(|(left, op)| operator(op) && !left.trim().is_empty());
        if !(conditional_after || conditional_before || lambda || operator_after || operator_before)
        {
            return None;
        }
        let from = if conditional_after || (operator_after && !operator_before) {
            start
        } else if lambda && !conditional_before {
            // From the last `lambda` on the line.
            before
                .rmatch_indices("lambda")
                .next()
                .map_or(start, |(p, _)| line_start + p)
        } else {
            start - text[line_start..start].trim_start().len()
        };
        // To the end of the line's code (found once: the scan goes on from there): chat
        // tokens, fences and tags after it are not part of it.
        let line_end = text[end..].find('\n').map_or(text.len(), |p| end + p);
        let rest = &text[end..line_end];
        let stop = ["<|", "```", "</", "<end_of_turn>", "<eos>"]
            .iter()
            .filter_map(|t| rest.find(t))
            .min()
            .map_or(line_end, |p| end + p);
        let to = end.max(start + text[start..stop].trim_end().len());
        Some((from, to))
    }

    /// Take `text[start..end]`, an expression that encloses a tool call but is not itself a
    /// call or list of calls, as one item that fails (nothing inside it runs). Calls taken
    /// earlier inside it are dropped.
    fn reject(&mut self, start: usize, end: usize) {
        let at = start as u32;
        self.found.retain(|c| c.span.start < at);
        self.used.retain(|s| s.start < at);
        self.wrappers.retain(|(s, _, _)| s.start < at);
        let source = &self.text[start..end];
        self.found
            .push(enclosing_item(source, span(start, end), self.limits));
        self.used.push(span(start, end));
    }

    /// Whether the unclosed call or list at `start` (to the end of the text) is a cut-off
    /// copy of the call or list of calls taken just before: a model that repeated itself.
    fn is_truncated_copy(&self, start: usize) -> bool {
        let Some(last) = self.last_taken else {
            return false;
        };
        let tail = self.text.get(start..self.content_end).unwrap_or_default();
        let taken = self.text.get(last.range()).unwrap_or_default();
        !tail.is_empty() && tail.len() < taken.len() && taken.starts_with(tail)
    }

    /// The Python literal (dict or list of literals: no names, calls or operators but a sign)
    /// starting at `open`, as the tree [`json_input::read`] gives for JSON (spans from `open`),
    /// and its length.
    fn python_literal(&mut self, open: usize) -> Option<(Expr, usize)> {
        let end = self.match_python(open)?;
        // Parsing costs about a step per byte: charged to the scan's budget.
        self.steps = self.steps.checked_sub(end - open)?;
        let expr = syntax::parse(&self.text[open..end], self.limits).ok()?;
        if !matches!(expr.kind, ExprKind::Dict(_) | ExprKind::List(_)) {
            return None;
        }
        Some((literal_tree(expr)?, end - open))
    }

    /// Take `text[start..end]`, a call to a tool, whether or not it parses.
    fn take_python_call(&mut self, start: usize, end: usize) {
        let source = &self.text[start..end];
        let parsed = syntax::parse(source, self.limits);
        let name = match &parsed {
            Ok(Expr {
                kind: ExprKind::Call(call),
                ..
            }) => call.func.clone(),
            _ => source[..dotted_ident_end(source.as_bytes(), 0)].to_string(),
        };
        let parsed = parsed.and_then(|e| {
            e.as_call()?;
            Ok(e)
        });
        self.found.push(FoundCall {
            name,
            span: span(start, end),
            origin: Origin::Python,
            source: source.to_string(),
            parsed,
            id: None,
        });
        self.used.push(span(start, end));
    }

    /// Take `text[start..end]` if it is a list or tuple of calls (each becomes one call);
    /// otherwise take nothing and say so.
    fn take_python_sequence(&mut self, start: usize, end: usize) -> bool {
        // Parsing costs about a step per byte: charged to the scan's budget.
        match self.steps.checked_sub(end - start) {
            Some(left) => self.steps = left,
            None => return false,
        }
        let source = &self.text[start..end];
        let Ok(expr) = syntax::parse(source, self.limits) else {
            return false;
        };
        let items = match &expr.kind {
            ExprKind::List(items) | ExprKind::Tuple(items) => items,
            // `(f(x))`: one call in parentheses.
            ExprKind::Call(_) => std::slice::from_ref(&expr),
            _ => return false,
        };
        if items.is_empty() || !items.iter().all(|e| matches!(e.kind, ExprKind::Call(_))) {
            return false;
        }
        for item in items {
            let ExprKind::Call(call) = &item.kind else {
                continue;
            };
            let (a, b) = (
                start + item.span.start as usize,
                start + item.span.end as usize,
            );
            if !(self.is_tool)(&call.func) {
                // Looked at like any other call to a non-tool: kept only without prose.
                self.wrappers.push((span(a, b), self.found.len(), false));
                continue;
            }
            let mut parsed = item.clone();
            let base = item.span.start;
            json_input::map_spans(&mut parsed, &|s| shift_back(s, base));
            self.found.push(FoundCall {
                name: call.func.clone(),
                span: span(a, b),
                origin: Origin::Python,
                source: self.text[a..b].to_string(),
                parsed: Ok(parsed),
                id: None,
            });
        }
        self.used.push(span(start, end));
        true
    }

    /// The end (exclusive) of the Python bracket group opening at `open`, strings and
    /// comments skipped; `None` if it does not close.
    fn match_python(&mut self, open: usize) -> Option<usize> {
        let b = self.bytes;
        let mut depth = 0usize;
        let mut i = open;
        while i < b.len() {
            if !self.step() {
                return None;
            }
            match b[i] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                q @ (b'\'' | b'"') => {
                    i = self.skip_python_string(i, q)?;
                    continue;
                }
                b'#' => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// Past the string literal starting at `i` (quote `q`, single or triple).
    fn skip_python_string(&mut self, i: usize, q: u8) -> Option<usize> {
        let b = self.bytes;
        let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
        let mut j = if triple { i + 3 } else { i + 1 };
        while j < b.len() {
            if !self.step() {
                return None;
            }
            match b[j] {
                b'\\' => j += 2,
                c if c == q => {
                    if !triple {
                        return Some(j + 1);
                    }
                    if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                        return Some(j + 3);
                    }
                    j += 1;
                }
                // An unterminated one-line string: stop at the line's end, the parser reports it.
                b'\n' if !triple => return Some(j),
                _ => j += 1,
            }
        }
        Some(b.len())
    }

    /// The end (exclusive) of the JSON object or array starting at `open`.
    fn match_json(&mut self, open: usize) -> Option<usize> {
        let b = self.bytes;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut i = open;
        while i < b.len() {
            if !self.step() {
                return None;
            }
            let c = b[i];
            if in_string {
                match c {
                    b'\\' => i += 1,
                    b'"' => in_string = false,
                    _ => {}
                }
            } else {
                match c {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        None
    }

    /// Take the calls of the JSON call form `tree` read from `text[start..end]` (its spans
    /// index that slice); false (nothing taken) if it is not one. When the form is ambiguous
    /// (a duplicate key) or holds a number out of range, each of its calls fails with that
    /// error, and its source is the JSON text, which the error's span indexes.
    fn take_json(&mut self, tree: &Expr, start: usize, end: usize) -> bool {
        let at = span(start, end);
        let json = &self.text[start..end];
        let mut calls = Vec::new();
        let base = u32::try_from(start).unwrap_or(u32::MAX);
        if !json_calls(tree, json, base, self.limits, 0, &mut calls) {
            return false;
        }
        if let Err(e) = json_input::check_call_tree(tree, json, base) {
            for (origin, name, _, id) in calls {
                self.found.push(FoundCall {
                    name,
                    span: at,
                    origin,
                    source: json.to_string(),
                    parsed: Err(e.clone()),
                    id,
                });
            }
            return true;
        }
        for (origin, name, args, id) in calls {
            let (source, parsed) = match args {
                JsonArgs::Expr(action) => {
                    let parsed = syntax::parse(&action, self.limits);
                    (action, parsed)
                }
                JsonArgs::Object(positional, args) => {
                    match call_source(&name, &positional, &args, self.limits) {
                        Ok(source) => {
                            let parsed = syntax::parse(&source, self.limits);
                            (source, parsed)
                        }
                        Err(e) => (json.to_string(), Err(e)),
                    }
                }
                JsonArgs::Invalid(e) => (json.to_string(), Err(e)),
            };
            // A FunctionExpression's action may hold a list of calls.
            match parsed {
                Ok(Expr {
                    kind: ExprKind::List(items) | ExprKind::Tuple(items),
                    ..
                }) if origin == Origin::FunctionExpression
                    && !items.is_empty()
                    && items.iter().all(|e| matches!(e.kind, ExprKind::Call(_))) =>
                {
                    for item in items {
                        let ExprKind::Call(call) = &item.kind else {
                            continue;
                        };
                        let name = call.func.clone();
                        let mut item = item;
                        let piece = source
                            .get(item.span.range())
                            .unwrap_or_default()
                            .to_string();
                        let base = item.span.start;
                        json_input::map_spans(&mut item, &|s| shift_back(s, base));
                        self.found.push(FoundCall {
                            name,
                            span: at,
                            origin,
                            source: piece,
                            parsed: Ok(item),
                            id: None,
                        });
                    }
                }
                parsed => {
                    let name = match &parsed {
                        Ok(Expr {
                            kind: ExprKind::Call(call),
                            ..
                        }) => call.func.clone(),
                        _ => name,
                    };
                    let parsed = parsed.and_then(|e| {
                        e.as_call()?;
                        Ok(e)
                    });
                    self.found.push(FoundCall {
                        name,
                        span: at,
                        origin,
                        source,
                        parsed,
                        id,
                    });
                }
            }
        }
        true
    }

    fn finish(self) -> Extraction {
        let Scanner {
            text,
            limits,
            is_tool,
            mut found,
            mut used,
            json_data,
            wrappers,
            duplicate_from,
            budget_from,
            reasoning,
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
        let end = duplicate_from.or(budget_from).unwrap_or(text.len());
        // An enclosing expression that holds calls (a call to a non-tool, an attribute chain,
        // a lambda, a list that is not all calls) is one failing item: nothing in it runs.
        let mut enclosing: Vec<Span> = Vec::new();
        let mut printed = Vec::new();
        let mut plain = Vec::new();
        for (wspan, before, group) in &wrappers {
            // Calls are found in order: those inside the wrapper come right after `before`.
            let holds = found
                .iter()
                .skip(*before)
                .take_while(|c| c.span.start < wspan.end)
                .any(|c| c.span.start >= wspan.start && c.span.end <= wspan.end);
            let source = text.get(wspan.range()).unwrap_or_default();
            if holds && !group && is_printed_calls(source, limits, is_tool) {
                printed.push(*wspan);
            } else if holds {
                enclosing.push(*wspan);
            } else if !group {
                plain.push(*wspan);
            }
        }
        if !enclosing.is_empty() {
            // Outermost wrappers do not overlap and come in order: one binary search each.
            found.retain(|c| {
                let k = enclosing.partition_point(|w| w.start <= c.span.start);
                k.checked_sub(1)
                    .and_then(|k| enclosing.get(k))
                    .is_none_or(|w| c.span.end > w.end)
            });
            for w in &enclosing {
                let source = text.get(w.range()).unwrap_or_default();
                found.push(enclosing_item(source, *w, limits));
            }
        }
        // The gaps between used spans and calls to non-tools, classified.
        used.extend(enclosing.iter().chain(&printed).chain(&plain).copied());
        used.extend(reasoning.iter().copied());
        used.sort_by_key(|s| s.start);
        let mut ignored = Vec::new();
        let mut json_data = json_data.into_iter().peekable();
        let mut pos = 0usize;
        let mut spans_iter = used.iter().map(|s| s.range()).peekable();
        while pos < end {
            let next_used = spans_iter.peek().map_or(end, |r| r.start.min(end));
            if pos < next_used {
                classify_gap(text, pos, next_used, &mut json_data, &mut ignored);
            }
            match spans_iter.next() {
                Some(r) => pos = pos.max(r.end),
                None => break,
            }
        }
        for r in &reasoning {
            if (r.start as usize) < end {
                ignored.push(ignored_at(
                    text,
                    r.start as usize,
                    r.end as usize,
                    IgnoreReason::Reasoning,
                ));
            }
        }
        if let Some(from) = budget_from {
            ignored.push(ignored_at(text, from, text.len(), IgnoreReason::Budget));
        }
        if let Some(from) = duplicate_from {
            let to = text.trim_end().len().max(from);
            ignored.push(ignored_at(text, from, to, IgnoreReason::Duplicate));
        }
        // `print(f(x))`: the calls are taken, the wrapper's own text around them is not used.
        for wspan in &printed {
            let inner = found
                .iter()
                .filter(|c| c.span.start >= wspan.start && c.span.end <= wspan.end);
            let first = inner.clone().map(|c| c.span.start).min();
            let last = inner.map(|c| c.span.end).max();
            if let (Some(first), Some(last)) = (first, last) {
                for (a, z) in [(wspan.start, first), (last, wspan.end)] {
                    if a < z {
                        ignored.push(ignored_at(
                            text,
                            a as usize,
                            z as usize,
                            IgnoreReason::NotATool,
                        ));
                    }
                }
            }
        }
        let prose = ignored.iter().any(|i| i.reason == IgnoreReason::Prose);
        // Calls to non-tools: kept only when they wrap no tool call and the text has no prose.
        let mut extra = Vec::new();
        for wspan in &plain {
            let source = text.get(wspan.range()).unwrap_or_default();
            if prose {
                ignored.push(ignored_at(
                    text,
                    wspan.start as usize,
                    wspan.end as usize,
                    IgnoreReason::NotATool,
                ));
            } else {
                let parsed = syntax::parse(source, limits);
                extra.push(FoundCall {
                    name: source[..dotted_ident_end(source.as_bytes(), 0)].to_string(),
                    span: *wspan,
                    origin: Origin::Python,
                    source: source.to_string(),
                    parsed: parsed.and_then(|e| match e.kind {
                        ExprKind::Call(_) => Ok(e),
                        _ => Err(Error::new(
                            ErrorKind::Unsupported,
                            "expected a function call",
                        )),
                    }),
                    id: None,
                });
            }
        }
        // JSON calls to non-tools follow the same rule.
        let mut kept = Vec::with_capacity(found.len() + extra.len());
        for call in found.drain(..).chain(extra) {
            if prose && call.origin != Origin::Python && !is_tool(&call.name) {
                ignored.push(ignored_at(
                    text,
                    call.span.start as usize,
                    call.span.end as usize,
                    IgnoreReason::NotATool,
                ));
            } else {
                kept.push(call);
            }
        }
        kept.sort_by_key(|c| c.span.start);
        ignored.sort_by_key(|i| i.span.start);
        // Ignored stretches inside a wrapper that was kept are part of that call: inside a
        // call that starts before them and ends after (by binary search over the calls'
        // starts, with the furthest end reached so far).
        let reach: Vec<u32> = kept
            .iter()
            .scan(0u32, |end, c| {
                *end = (*end).max(c.span.end);
                Some(*end)
            })
            .collect();
        ignored.retain(|ig| {
            let before = kept.partition_point(|c| c.span.start <= ig.span.start);
            before
                .checked_sub(1)
                .and_then(|last| reach.get(last))
                .is_none_or(|end| *end < ig.span.end)
        });
        // `max_calls` bounds the whole text: more calls than that run none of them.
        let calls = kept
            .iter()
            .map(|c| c.parsed.as_ref().map_or(1, count_calls))
            .fold(0usize, usize::saturating_add);
        if calls > limits.max_calls {
            return Extraction {
                calls: Vec::new(),
                ignored: Vec::new(),
                error: Some(Error::limit(LimitKind::Calls, limits.max_calls, calls)),
            };
        }
        // Brackets and separators are skipped between calls; text of nothing else (`((((`) is
        // reported rather than answered with nothing at all.
        let content = text.trim_start();
        if kept.is_empty() && ignored.is_empty() && !content.is_empty() {
            let start = text.len() - content.len();
            let end = text.trim_end().len();
            ignored.push(ignored_at(text, start, end, IgnoreReason::Punctuation));
        }
        Extraction {
            calls: kept,
            ignored,
            error: None,
        }
    }
}

/// Whether `source` is `print(...)` around one call to a tool or a list of them: Gemma's
/// `tool_code` convention, the one wrapper whose calls are taken.
fn is_printed_calls(source: &str, limits: &Limits, is_tool: &dyn Fn(&str) -> bool) -> bool {
    let Ok(Expr {
        kind: ExprKind::Call(print),
        ..
    }) = syntax::parse(source, limits)
    else {
        return false;
    };
    let tool_call = |e: &Expr| matches!(&e.kind, ExprKind::Call(c) if is_tool(&c.func));
    print.func == "print"
        && print.kwargs.is_empty()
        && match print.args.as_slice() {
            [arg] => match &arg.kind {
                ExprKind::List(items) | ExprKind::Tuple(items) => {
                    !items.is_empty() && items.iter().all(tool_call)
                }
                _ => tool_call(arg),
            },
            _ => false,
        }
}

/// The one failing item for `source`, an expression that encloses tool calls but is not a call
/// to a tool or a list of calls (`__import__("os").system(f(x))`, `(lambda: f(x))()`,
/// `f(x) if c else g(y)`, `[f(x), y]`): its error says what it is; nothing in it runs.
fn enclosing_item(source: &str, at: Span, limits: &Limits) -> FoundCall {
    let name_end = dotted_ident_end(source.as_bytes(), 0);
    let name = match source.get(..name_end) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => clip(source, 60),
    };
    let parsed = match syntax::parse(source, limits) {
        // A call to a name that is not a tool: checking says so.
        Ok(
            call @ Expr {
                kind: ExprKind::Call(_),
                ..
            },
        ) => Ok(call),
        Ok(expr) => Err(Error::new(
            ErrorKind::Unsupported,
            format!("`{}` is not a call or a list of calls", clip(source, 60)),
        )
        .at(expr.span)),
        Err(e) => Err(e),
    }
    .map_err(|e| match e.hint {
        Some(_) => e,
        None => e.with_hint(
            "the tool calls inside it are not run: write each call on its own, or a list of calls",
        ),
    });
    FoundCall {
        name,
        span: at,
        origin: Origin::Python,
        source: source.to_string(),
        parsed,
        id: None,
    }
}

/// The calls in `expr` (at least one for a call).
fn count_calls(expr: &Expr) -> usize {
    let mut count = 0usize;
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        count += usize::from(matches!(e.kind, ExprKind::Call(_)));
        stack.extend(e.children());
    }
    count
}

/// Reasoning blocks: `<think>…</think>` (also `thinking`, `reasoning`), and everything
/// before a closing `</think>` whose opening tag the chat template wrote. An unclosed block is
/// not reasoning (the answer may be cut off inside it; its calls are taken).
fn reasoning_spans(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    for tag in ["think", "thinking", "reasoning"] {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let mut from = 0;
        while let Some(c) = text.get(from..).and_then(|t| t.find(&close)) {
            let close_at = from + c;
            let start = text[from..close_at].find(&open).map_or(
                if from == 0 && !text[..close_at].contains(&open) {
                    0
                } else {
                    close_at
                },
                |o| from + o,
            );
            let end = close_at + close.len();
            spans.push(span(start, end));
            from = end;
        }
    }
    spans.sort_by_key(|s| s.start);
    // Overlapping blocks (a `<thinking>` inside a `<think>`) are merged.
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match merged.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

/// Arguments of a JSON call form.
enum JsonArgs {
    /// Positional arguments and the pairs of an object of keyword arguments.
    Object(Vec<Expr>, Vec<(Expr, Expr)>),
    /// A `FunctionExpression`'s action.
    Expr(String),
    /// Arguments that cannot be read (an `arguments` string that is not a JSON object).
    Invalid(Error),
}

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

/// The string under `key` in an object's pairs.
fn field<'a>(pairs: &'a [(Expr, Expr)], key: &str) -> Option<&'a str> {
    json_input::get(pairs, key).and_then(json_input::as_str)
}

/// Collect the calls of a JSON call form (a tree read from `text`, which starts at byte `base` of
/// the input) into `out`; false if `json` is not one.
fn json_calls(
    json: &Expr,
    text: &str,
    base: u32,
    limits: &Limits,
    depth: usize,
    out: &mut Vec<(Origin, String, JsonArgs, Option<String>)>,
) -> bool {
    if depth > MAX_JSON_NESTING {
        return false;
    }
    match &json.kind {
        ExprKind::List(items) => {
            if items.is_empty() {
                return false;
            }
            let before = out.len();
            for item in items {
                // Anthropic content blocks mix text with tool_use; text blocks are not calls.
                let is_text_block = matches!(&item.kind, ExprKind::Dict(pairs) if field(pairs, "type") == Some("text"));
                if !json_calls(item, text, base, limits, depth + 1, out) && !is_text_block {
                    out.truncate(before);
                    return false;
                }
            }
            out.len() > before
        }
        ExprKind::Dict(obj) => {
            let get = |key: &str| json_input::get(obj, key);
            let name = NAME_KEYS
                .iter()
                .find_map(|k| field(obj, k))
                .map(str::to_string);
            let only = |allowed: &[&str]| {
                obj.iter()
                    .all(|(k, _)| json_input::as_str(k).is_some_and(|k| allowed.contains(&k)))
            };
            if let Some(
                calls @ Expr {
                    kind: ExprKind::List(_),
                    ..
                },
            ) = get("tool_calls")
            {
                return json_calls(calls, text, base, limits, depth + 1, out);
            }
            if field(obj, "type") == Some("tool_use") {
                let (
                    Some(name),
                    Some(Expr {
                        kind: ExprKind::Dict(input),
                        ..
                    }),
                ) = (name, get("input"))
                else {
                    return false;
                };
                out.push((
                    Origin::Anthropic,
                    name,
                    JsonArgs::Object(Vec::new(), input.clone()),
                    field(obj, "id").map(str::to_string),
                ));
                return true;
            }
            if let Some(
                content @ Expr {
                    kind: ExprKind::List(_),
                    ..
                },
            ) = get("content")
            {
                if field(obj, "role") == Some("assistant") {
                    return json_calls(content, text, base, limits, depth + 1, out);
                }
            }
            if let Some(
                function @ Expr {
                    kind: ExprKind::Dict(_),
                    ..
                },
            ) = get("function")
            {
                if only(&["id", "type", "function", "index"]) {
                    // OpenAI's tool call: its `id` is beside the `function`.
                    let before = out.len();
                    let found = json_calls(function, text, base, limits, depth + 1, out);
                    if let (true, Some(id)) = (out.len() == before + 1, field(obj, "id")) {
                        if let Some(call) = out.last_mut() {
                            call.3 = Some(id.to_string());
                        }
                    }
                    return found;
                }
            }
            if let Some(action) = field(obj, "action") {
                if only(&["action", "thought"]) {
                    out.push((
                        Origin::FunctionExpression,
                        String::new(),
                        JsonArgs::Expr(action.to_string()),
                        None,
                    ));
                    return true;
                }
            }
            let Some(name) = name else {
                return false;
            };
            let extra = ["thought", "id", "type", "description", "index"];
            if !obj.iter().all(|(k, _)| {
                json_input::as_str(k).is_some_and(|k| {
                    NAME_KEYS.contains(&k) || ARGS_KEYS.contains(&k) || extra.contains(&k)
                })
            }) {
                return false;
            }
            // Which key holds the arguments decides the form; none at all is a call without
            // arguments only when nothing but the name (and a thought) is there.
            let null = Expr {
                kind: ExprKind::None,
                span: json.span,
            };
            let (origin, args) = match ARGS_KEYS.iter().find_map(|k| get(k).map(|a| (*k, a))) {
                Some(("arguments", args)) => (Origin::OpenAi, args),
                Some(("kwargs" | "args", args)) => (Origin::Function, args),
                Some((_, args)) => (Origin::NameParameters, args),
                None if only(&["name", "thought"]) => (Origin::Function, &null),
                None => return false,
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
            let args = match &args.kind {
                ExprKind::None => JsonArgs::Object(positional, Vec::new()),
                ExprKind::Dict(pairs) => JsonArgs::Object(positional, pairs.clone()),
                ExprKind::Str(s) if s.trim().is_empty() => JsonArgs::Object(positional, Vec::new()),
                // OpenAI's `arguments` as a JSON string: read by the same reader, checked the
                // same way, spans into the text through the string's escapes.
                ExprKind::Str(s) => match json_input::read_nested(args, text, limits) {
                    Ok(Expr {
                        kind: ExprKind::Dict(pairs),
                        span,
                    }) => {
                        let nested = Expr {
                            kind: ExprKind::Dict(pairs),
                            span,
                        };
                        match json_input::check_call_tree(&nested, text, base) {
                            Ok(()) => match nested.kind {
                                ExprKind::Dict(pairs) => JsonArgs::Object(positional, pairs),
                                _ => JsonArgs::Object(positional, Vec::new()),
                            },
                            Err(e) => JsonArgs::Invalid(e),
                        }
                    }
                    Ok(_) => JsonArgs::Invalid(not_an_object(&name, s).at(args.span)),
                    Err(e) if e.kind == ErrorKind::Syntax => JsonArgs::Invalid(Error {
                        message: format!(
                            "the arguments of `{}` are not a JSON object: {}",
                            clip(&name, 40),
                            e.message
                        ),
                        ..e
                    }),
                    Err(e) => JsonArgs::Invalid(e),
                },
                _ => JsonArgs::Invalid(
                    Error::new(
                        ErrorKind::Syntax,
                        format!("the arguments of `{}` are not an object", clip(&name, 40)),
                    )
                    .at(args.span),
                ),
            };
            out.push((origin, name, args, field(obj, "id").map(str::to_string)));
            true
        }
        _ => false,
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

/// `name(k=v, ...)` written from a JSON call's name and arguments.
fn call_source(
    name: &str,
    positional: &[Expr],
    args: &[(Expr, Expr)],
    limits: &Limits,
) -> Result<String, Error> {
    // Values as Python writes them (`'x'`, `{'k': None}`): literals evaluate without a context.
    let repr = |value: &Expr| {
        crate::eval::eval_pure(value, &crate::resolve::context::Context::new(), limits)
            .map(|v| v.repr())
    };
    if !is_dotted_identifier(name) {
        return Err(Error::new(
            ErrorKind::Syntax,
            format!("`{}` is not a function name", clip(name, 40)),
        ));
    }
    let mut source = format!("{name}(");
    for (i, value) in positional.iter().enumerate() {
        if i > 0 {
            source.push_str(", ");
        }
        source.push_str(&repr(value)?);
    }
    for (i, (key, value)) in args.iter().enumerate() {
        let key = json_input::as_str(key).unwrap_or_default();
        if !is_identifier(key) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "argument name `{}` of `{}` cannot be written as a Python keyword argument",
                    clip(key, 40),
                    clip(name, 40)
                ),
            ));
        }
        if i > 0 || !positional.is_empty() {
            source.push_str(", ");
        }
        source.push_str(key);
        source.push('=');
        source.push_str(&repr(value)?);
    }
    source.push(')');
    Ok(source)
}

/// A parsed Python literal as the tree [`json_input::read`] gives for JSON: `None`, bools,
/// numbers (a sign folded in), strings, lists and tuples (as lists) and dicts of these; `None`
/// for anything else (names, calls, operators, sets, bytes). Recursion is bounded by the
/// parser's depth limit.
fn literal_tree(expr: Expr) -> Option<Expr> {
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

/// An ASCII Python identifier that is not a reserved word.
pub fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_ident_start(b[0])
        && b.iter().all(|c| is_ident_byte(*c) && *c != b'.')
        && !PYTHON_KEYWORDS.contains(&s)
}

fn is_dotted_identifier(s: &str) -> bool {
    s.split('.').all(is_identifier)
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

/// The end of the dotted identifier starting at `i` (`a.b_c.d`), not counting a trailing dot.
fn dotted_ident_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    loop {
        if j >= b.len() || !is_ident_start(b[j]) {
            return j;
        }
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(|c| is_ident_start(*c)) {
            j += 1;
        } else {
            return j;
        }
    }
}

fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
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

/// Classify the text between calls: blanks and separators are skipped, the rest is reported
/// piece by piece (adjacent pieces of the same kind merged).
fn classify_gap(
    text: &str,
    start: usize,
    end: usize,
    json_data: &mut std::iter::Peekable<std::vec::IntoIter<Span>>,
    out: &mut Vec<Ignored>,
) {
    let b = text.as_bytes();
    let mut i = start;
    let push = |out: &mut Vec<Ignored>, a: usize, z: usize, reason: IgnoreReason| {
        if let Some(last) = out.last_mut() {
            let gap = text.get(last.span.end as usize..a).unwrap_or("x");
            if last.reason == reason
                && reason == IgnoreReason::Prose
                && gap.bytes().all(|c| c.is_ascii_whitespace())
            {
                last.span.end = span(0, z).end;
                last.text = clip(text.get(last.span.range()).unwrap_or_default(), 80);
                return;
            }
        }
        out.push(ignored_at(text, a, z, reason));
    };
    while i < end {
        while json_data.peek().is_some_and(|s| (s.end as usize) <= i) {
            json_data.next();
        }
        if let Some(s) = json_data.peek().copied() {
            if s.start as usize == i && s.end as usize <= end {
                push(out, i, s.end as usize, IgnoreReason::JsonData);
                i = s.end as usize;
                continue;
            }
        }
        let rest = &text[i..end];
        let c = b[i];
        if c.is_ascii_whitespace() || matches!(c, b',' | b';' | b'[' | b']' | b'(' | b')') {
            i += 1;
            continue;
        }
        if let Some(token) = CHAT_TOKENS.iter().find(|t| rest.starts_with(**t)) {
            push(out, i, i + token.len(), IgnoreReason::ChatToken);
            i += token.len();
            continue;
        }
        if rest.starts_with("<|") {
            if let Some(close) = rest.get(2..).and_then(|r| r.find("|>")) {
                if close <= MAX_TAG_BYTES && !rest[2..2 + close].contains(char::is_whitespace) {
                    push(out, i, i + close + 4, IgnoreReason::ChatToken);
                    i += close + 4;
                    continue;
                }
            }
        }
        if let Some(after) = rest.strip_prefix("```") {
            let tag_end = after
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+'))
                .count();
            push(out, i, i + 3 + tag_end, IgnoreReason::Fence);
            i += 3 + tag_end;
            continue;
        }
        if c == b'<' {
            let tag_len = rest[1..]
                .bytes()
                .take(MAX_TAG_BYTES)
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'/' | b':'))
                .count();
            if tag_len > 0 && rest.as_bytes().get(1 + tag_len) == Some(&b'>') {
                push(out, i, i + tag_len + 2, IgnoreReason::Tag);
                i += tag_len + 2;
                continue;
            }
        }
        // Prose: up to the next blank or the next thing recognised above.
        let mut j = i + 1;
        // (The bytes it stops at are ASCII, so `j` stays on a character boundary.)
        while j < end && !b[j].is_ascii_whitespace() && !matches!(b[j], b'<' | b'`' | b'[') {
            j += 1;
        }
        push(out, i, j, IgnoreReason::Prose);
        i = j;
    }
}

/// `s` moved back by `base` bytes (an element cut out of a longer source).
fn shift_back(s: Span, base: u32) -> Span {
    Span::new(s.start.saturating_sub(base), s.end.saturating_sub(base))
}

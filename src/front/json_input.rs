//! The JSON door: every JSON input fexpr accepts is read here, within the same [`Limits`] as an
//! expression, before anything runs.
//!
//! [`read`] turns JSON text into the IR of the equivalent Python literal (objects become dict
//! displays, arrays lists, `null`/`true`/`false` `None`/`True`/`False`), with byte spans into the
//! text as given. It is a small iterative reader (no recursion, so no stack to exhaust; serde_json
//! reports no positions, which every error here carries) that checks, as it goes and before
//! keeping anything over a budget:
//!
//! - [`Limits::max_source_bytes`] on the raw text, before anything else;
//! - [`Limits::max_depth`]: nesting of arrays and objects;
//! - [`Limits::max_str_bytes`]: every string, keys included, decoded;
//! - [`Limits::max_collection_len`]: every array and object counted recursively as the
//!   evaluator counts a value (a scalar is 1, a collection 1 plus its elements, an object's keys
//!   included); the whole document is one value, so it holds at most that many nodes;
//! - [`Limits::max_eval_bytes`]: the document's size as the evaluator charges a literal;
//! - [`Limits::max_int_digits`]: every integer.
//!
//! What a call means is checked where a tree is taken as a call ([`check_call_tree`]): a
//! duplicate key in any object of a call (`{"name": "add", "name": "multiply"}`,
//! `{"a": 1, "a": 1000}`) is an error naming the key, and a number out of a float's range
//! (`1e400`) is an error saying so — never `inf`, never `null`.
//!
//! [`units`] reads fexpr's own forms — a `Function` (`{"name", "args", "kwargs"}`), a
//! `FunctionExpression` (`{"action"}`) or a list of them — into evaluation units, and counts the
//! calls of the whole input against [`Limits::max_calls`]: a list of 300 calls runs none. [`run`]
//! evaluates them with [`eval::run`], the expression path's evaluator, in the native manager
//! and inside the sandbox guest alike. The front-end ([`crate::front`]) reads every JSON form it
//! recognises (OpenAI, Anthropic, Llama, and OpenAI's `arguments` JSON string through
//! [`read_nested`]) with the same reader and checks.
//!
//! ```
//! use fexpr::front::json_input::read;
//! use fexpr::{ErrorKind, Limits, Span};
//!
//! let tree = read(r#"{"name": "add", "kwargs": {"a": 1, "b": [2.5, null]}}"#, &Limits::default())?;
//! assert_eq!(tree.to_string(), r#"{"name": "add", "kwargs": {"a": 1, "b": [2.5, None]}}"#);
//!
//! let deep = "[".repeat(101) + &"]".repeat(101);
//! let err = read(&deep, &Limits::default()).unwrap_err();
//! assert_eq!((err.kind, err.span), (ErrorKind::Limit, Some(Span::new(100, 101))));
//! # Ok::<(), fexpr::Error>(())
//! ```

use num_bigint::BigInt;

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::eval::{self, Dispatch, UnitOutcome};
use crate::limits::Limits;
use crate::resolve::context::Resolve;
use crate::syntax::{self, Call, Expr, ExprKind, Keyword};
use crate::value::NODE_BYTES;

/// Bytes the evaluator charges per element of a list, and per key and per value of a dict.
const NODE: u64 = NODE_BYTES as u64;

/// Longest piece of input quoted in a message, in characters.
const QUOTE_CHARS: usize = 40;

/// Read JSON `text` into the IR of the equivalent Python literal, within `limits` (see the
/// [module docs](self)). Spans index `text`. A leading byte order mark is skipped; any other
/// text around the value but JSON whitespace is an error.
///
/// ```
/// use fexpr::front::json_input::read;
/// use fexpr::{ErrorKind, Limits, Span};
///
/// let err = read(r#"{"a": 1,}"#, &Limits::default()).unwrap_err();
/// assert_eq!((err.kind, err.span), (ErrorKind::Syntax, Some(Span::new(8, 9))));
/// assert_eq!(err.message, "JSON: expected a key in double quotes after `,`, found `}`");
/// ```
pub fn read(text: &str, limits: &Limits) -> Result<Expr, Error> {
    if text.len() > limits.max_source_bytes {
        return Err(Error::limit(
            LimitKind::SourceBytes,
            limits.max_source_bytes,
            text.len(),
        ));
    }
    if u32::try_from(text.len()).is_err() {
        return Err(Error::limit(LimitKind::SourceBytes, u32::MAX, text.len()));
    }
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    Reader {
        text,
        bytes: text.as_bytes(),
        pos: start,
        limits,
        used: 0,
    }
    .document()
}

/// Read the JSON held in the string literal `node` of a tree read from `text` (OpenAI's
/// `arguments`), within `limits`. Spans — of the tree and of an error — index `text`, through
/// the string's escapes.
///
/// ```
/// use fexpr::front::json_input::{read, read_nested};
/// use fexpr::syntax::ExprKind;
/// use fexpr::{Limits, Span};
///
/// let text = r#"{"arguments": "{\"a\": 1, \"a\": 2}"}"#;
/// let tree = read(text, &Limits::default())?;
/// let ExprKind::Dict(pairs) = &tree.kind else { unreachable!() };
/// let nested = read_nested(&pairs[0].1, text, &Limits::default())?;
/// let err = fexpr::front::json_input::check_call_tree(&nested, text, 0).unwrap_err();
/// assert_eq!(err.message, "JSON: duplicate key `a` in an object (first at 16..21)");
/// assert_eq!(&text[err.span.unwrap().range()], r#"\"a\""#);
/// # Ok::<(), fexpr::Error>(())
/// ```
pub fn read_nested(node: &Expr, text: &str, limits: &Limits) -> Result<Expr, Error> {
    let ExprKind::Str(inner) = &node.kind else {
        return Err(
            Error::new(ErrorKind::Syntax, "JSON: expected a string holding JSON").at(node.span),
        );
    };
    let to_outer = string_spans(node, inner, text);
    match read(inner, limits) {
        Ok(mut tree) => {
            map_spans(&mut tree, &to_outer);
            Ok(tree)
        }
        Err(mut e) => {
            e.span = Some(e.span.map_or(node.span, &to_outer));
            Err(e)
        }
    }
}

/// Spans in `value`, the string held by the literal `node` of `text`, mapped to spans of
/// `text` through the literal's escapes; to the whole literal when its text is not the JSON
/// string of `value` (a Python literal, say).
fn string_spans<'a>(node: &Expr, value: &str, text: &'a str) -> impl Fn(Span) -> Span + 'a {
    let whole = node.span;
    let raw_start = whole.start.saturating_add(1);
    let raw = text
        .get(raw_start as usize..whole.end.saturating_sub(1) as usize)
        .filter(|_| text.as_bytes().get(whole.start as usize) == Some(&b'"'));
    let marks = raw
        .and_then(|raw| decode_marked(raw, raw_start as usize).ok())
        .filter(|(decoded, _)| decoded == value)
        .map(|(_, marks)| marks);
    move |s: Span| match &marks {
        Some(marks) => Span::new(
            raw_start + outer_offset(marks, s.start),
            raw_start + outer_offset(marks, s.end),
        ),
        None => whole,
    }
}

/// Check a tree read by [`read`] from `text` that is taken as a call (or a call's arguments):
/// no object in it has a duplicate key, and no number is out of a float's range. The error names
/// the key or quotes the number, at its span (which indexes `text`). `text` starts at byte `base`
/// of what the user gave: a message that names a place (the first of two equal keys) names it
/// there, as every span fexpr reports does.
///
/// ```
/// use fexpr::front::json_input::{check_call_tree, read};
/// use fexpr::{ErrorKind, Limits};
///
/// let text = r#"{"name": "divide", "kwargs": {"a": 1e400, "b": 1}}"#;
/// let err = check_call_tree(&read(text, &Limits::default())?, text, 0).unwrap_err();
/// assert_eq!(err.kind, ErrorKind::Value);
/// assert_eq!(err.message, "JSON: number 1e400 is out of range for a float");
/// # Ok::<(), fexpr::Error>(())
/// ```
pub fn check_call_tree(tree: &Expr, text: &str, base: u32) -> Result<(), Error> {
    let mut stack = vec![tree];
    while let Some(node) = stack.pop() {
        match &node.kind {
            ExprKind::Float(x) if !x.is_finite() => {
                let written = text.get(node.span.range()).unwrap_or("this number");
                return Err(Error::new(
                    ErrorKind::Value,
                    format!(
                        "JSON: number {} is out of range for a float",
                        clip(written, QUOTE_CHARS)
                    ),
                )
                .with_hint("a float is at most about 1.8e308 in magnitude")
                .at(node.span));
            }
            ExprKind::Dict(pairs) => {
                // Sorted rather than hashed: no seed to guess, no clock for one in the guest,
                // n log n whatever the keys.
                let mut keys: Vec<(&str, Span)> = pairs
                    .iter()
                    .filter_map(|(k, _)| as_str(k).map(|name| (name, k.span)))
                    .collect();
                keys.sort_by_key(|(name, at)| (*name, at.start));
                let twice = keys.windows(2).find_map(|pair| match pair {
                    [(a, first), (b, again)] if a == b => Some((*a, *first, *again)),
                    _ => None,
                });
                if let Some((name, first, again)) = twice {
                    return Err(duplicate_key(name, first, again, base));
                }
                for (key, value) in pairs {
                    stack.push(key);
                    stack.push(value);
                }
            }
            ExprKind::List(items) | ExprKind::Tuple(items) => stack.extend(items),
            _ => {}
        }
    }
    Ok(())
}

fn duplicate_key(name: &str, first: Span, again: Span, base: u32) -> Error {
    Error::new(
        ErrorKind::Syntax,
        format!(
            "JSON: duplicate key `{}` in an object (first at {}..{})",
            clip(name, QUOTE_CHARS),
            first.start.saturating_add(base),
            first.end.saturating_add(base)
        ),
    )
    .with_hint("write each key once: which of the values was meant is unknown")
    .at(again)
}

/// Whether the CLI should read `text` as JSON: it starts (after whitespace and a byte order
/// mark) with an object — `{` then a quote or `}` — or with `[` and such an object. A call
/// expression never starts so; a JSON input that then does not decode gets a JSON error (what
/// is wrong, where), not a Python one.
///
/// ```
/// use fexpr::front::json_input::looks_like_json;
/// assert!(looks_like_json(" [ {\"name\": \"add\"}]"));
/// assert!(looks_like_json("{'name': 'add'}"));
/// assert!(!looks_like_json("[add(a=1, b=2)]"));
/// assert!(!looks_like_json("{{{{"));
/// ```
pub fn looks_like_json(text: &str) -> bool {
    let blank = |c: char| c.is_whitespace() || c == '\u{feff}';
    let object = |s: &str| {
        s.strip_prefix('{').is_some_and(|inner| {
            inner
                .trim_start_matches(blank)
                .starts_with(['"', '\'', '}'])
        })
    };
    let rest = text.trim_start_matches(blank);
    match rest.strip_prefix('[') {
        Some(inner) => object(inner.trim_start_matches(blank)),
        None => object(rest),
    }
}

/// A JSON document as compact text, for the entry points that receive parsed JSON: refused
/// (before writing it out) when nested deeper than [`Limits::max_depth`] or longer than
/// [`Limits::max_source_bytes`]. [`read`] then applies every other limit to the text.
///
/// ```
/// let limits = fexpr::Limits::default().max_source_bytes(16);
/// let ok = fexpr::front::json_input::to_text(&serde_json::json!({"a": [1, 2]}), &limits);
/// assert_eq!(ok.unwrap(), r#"{"a":[1,2]}"#);
/// let long = fexpr::front::json_input::to_text(&serde_json::json!({"a": "0123456789"}), &limits);
/// assert_eq!(long.unwrap_err().kind, fexpr::ErrorKind::Limit);
/// ```
pub fn to_text(json: &serde_json::Value, limits: &Limits) -> Result<String, Error> {
    use serde_json::Value as J;
    // Every node takes at least one byte of text: past that many, the text is too long.
    let mut nodes = 0usize;
    let mut stack = vec![(json, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        if nodes > limits.max_source_bytes {
            return Err(Error::limit(
                LimitKind::SourceBytes,
                limits.max_source_bytes,
                "a longer text",
            ));
        }
        match node {
            J::Array(_) | J::Object(_) if depth > limits.max_depth => {
                return Err(Error::limit(LimitKind::Depth, limits.max_depth, depth))
            }
            J::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            J::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    let mut out = Bounded {
        bytes: Vec::new(),
        max: limits.max_source_bytes,
    };
    serde_json::to_writer(&mut out, json).map_err(|_| {
        Error::limit(
            LimitKind::SourceBytes,
            limits.max_source_bytes,
            "a longer text",
        )
    })?;
    String::from_utf8(out.bytes)
        .map_err(|_| Error::new(ErrorKind::Syntax, "JSON: the document is not UTF-8"))
}

/// A writer that refuses to grow past `max` bytes.
struct Bounded {
    bytes: Vec<u8>,
    max: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > self.max {
            return Err(std::io::Error::other("too long"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One item of a JSON input in fexpr's forms: its span, and the unit to evaluate or why there
/// is none.
pub type Item = (Span, Result<Expr, Error>);

/// Read `text` as fexpr's JSON forms — a `Function` object (`{"name", "args", "kwargs"}`, a
/// `thought` allowed), a `FunctionExpression` object (`{"action"}`, a `thought` allowed), or a
/// non-empty list of them — into one evaluation unit per item.
///
/// The whole input fails (nothing runs) when the text breaks a limit or is not one of these
/// shapes, or when it holds more items than [`Limits::max_calls`]; an item that is not a valid
/// call form (an unknown field, a duplicate key, a number out of range, an `action` that does
/// not parse or holds several calls) fails alone, as a unit of an expression does.
///
/// A `Function` becomes the call `name(*args, **kwargs)` with its values as literals (spans
/// into `text`: the call is the object, the callee its `name` string, each keyword its key); a
/// `FunctionExpression`'s action is parsed as an expression, its spans mapped into `text`.
///
/// ```
/// use fexpr::front::json_input::units;
/// use fexpr::{ErrorKind, Limits};
///
/// let items = units(r#"[{"name": "add", "kwargs": {"a": 1, "b": 2}}, {"action": "add(a=1, b=x)"}]"#, &Limits::default())?;
/// assert_eq!(items[0].1.as_ref().unwrap().to_string(), "add(a=1, b=2)");
/// assert_eq!(items[1].1.as_ref().unwrap().to_string(), "add(a=1, b=x)");
///
/// let many = format!("[{}]", vec![r#"{"name": "add"}"#; 300].join(","));
/// assert_eq!(units(&many, &Limits::default()).unwrap_err().kind, ErrorKind::Limit);
/// # Ok::<(), fexpr::Error>(())
/// ```
pub fn units(text: &str, limits: &Limits) -> Result<Vec<Item>, Error> {
    let tree = read(text, limits)?;
    let items = match tree.kind {
        ExprKind::List(items) if !items.is_empty() => items,
        ExprKind::Dict(_) => vec![tree],
        _ => {
            return Err(Error::new(
                ErrorKind::Syntax,
                "JSON: expected a Function object ({\"name\", \"args\", \"kwargs\"}), a \
                 FunctionExpression object ({\"action\"}), or a non-empty list of them",
            )
            .at(tree.span))
        }
    };
    if let Some(extra) = items.get(limits.max_calls) {
        return Err(Error::limit(LimitKind::Calls, limits.max_calls, items.len()).at(extra.span));
    }
    Ok(items
        .into_iter()
        .map(|item| (item.span, item_unit(item, text, limits)))
        .collect())
}

/// Evaluate JSON `text` in fexpr's forms ([`units`]) against `ctx`, sending tool calls to
/// `dispatch`: all units in one [`eval::run`], so the call count, the evaluation budget and the
/// waves of tool calls span the whole input as they do for an expression. One outcome per item,
/// spans into `text`; `Err` when the input as a whole is refused.
pub async fn run<D: Dispatch>(
    text: &str,
    ctx: &dyn Resolve,
    limits: &Limits,
    dispatch: &D,
) -> Result<Vec<UnitOutcome>, Error> {
    let items = units(text, limits)?;
    let roots: Vec<&Expr> = items
        .iter()
        .filter_map(|(_, unit)| unit.as_ref().ok())
        .collect();
    let mut outcomes = eval::run(&roots, ctx, limits, dispatch).await.into_iter();
    Ok(items
        .into_iter()
        .map(|(span, unit)| {
            let failed = |e: Error| UnitOutcome {
                span,
                call: None,
                result: Err(e),
            };
            match unit {
                Ok(_) => outcomes.next().unwrap_or_else(|| {
                    failed(Error::new(ErrorKind::Sandbox, "no outcome for this call"))
                }),
                Err(e) => failed(e),
            }
        })
        .collect())
}

/// One item of fexpr's forms as a unit.
fn item_unit(item: Expr, text: &str, limits: &Limits) -> Result<Expr, Error> {
    check_call_tree(&item, text, 0)?;
    let span = item.span;
    let ExprKind::Dict(pairs) = item.kind else {
        return Err(Error::new(
            ErrorKind::Syntax,
            "JSON: each item must be an object: a Function ({\"name\", \"args\", \"kwargs\"}) \
             or a FunctionExpression ({\"action\"})",
        )
        .at(span));
    };
    if pairs.iter().any(|(k, _)| key_is(k, "action")) {
        return action_unit(pairs, span, text, limits);
    }
    let mut name = None;
    let mut args = Vec::new();
    let mut kwargs = Vec::new();
    for (key, value) in pairs {
        let key_name = key_text(&key);
        match (key_name, value.kind) {
            ("name", ExprKind::Str(s)) => name = Some((s, value.span)),
            ("name", _) => {
                return Err(form_error(
                    "a Function's `name` must be a string",
                    value.span,
                ))
            }
            ("args", ExprKind::List(items)) => args = items,
            ("args", ExprKind::None) => {}
            ("args", _) => {
                return Err(form_error("a Function's `args` must be a list", value.span))
            }
            ("kwargs", ExprKind::Dict(pairs)) => {
                kwargs = pairs
                    .into_iter()
                    .map(|(k, v)| Keyword {
                        name: key_text(&k).to_string(),
                        name_span: k.span,
                        value: v,
                    })
                    .collect()
            }
            ("kwargs", ExprKind::None) => {}
            ("kwargs", _) => {
                return Err(form_error(
                    "a Function's `kwargs` must be an object",
                    value.span,
                ))
            }
            ("thought", _) => {}
            (other, _) => {
                return Err(Error::new(
                    ErrorKind::Syntax,
                    format!(
                        "JSON: unknown field `{}` in a Function object",
                        clip(other, QUOTE_CHARS)
                    ),
                )
                .with_hint("a Function has `name`, `args`, `kwargs` and `thought`")
                .at(key.span))
            }
        }
    }
    let Some((func, func_span)) = name else {
        return Err(form_error("a Function needs a string `name`", span));
    };
    Ok(Expr {
        kind: ExprKind::Call(Call {
            func,
            func_span,
            args,
            kwargs,
        }),
        span,
    })
}

/// A `FunctionExpression` item: its action parsed, spans mapped into `text`.
fn action_unit(
    pairs: Vec<(Expr, Expr)>,
    span: Span,
    text: &str,
    limits: &Limits,
) -> Result<Expr, Error> {
    let mut action = None;
    for (key, value) in pairs {
        match key_text(&key) {
            "action" => action = Some(value),
            "thought" => {}
            other => {
                return Err(Error::new(
                    ErrorKind::Syntax,
                    format!(
                        "JSON: unknown field `{}` in a FunctionExpression object",
                        clip(other, QUOTE_CHARS)
                    ),
                )
                .with_hint("a FunctionExpression has `action` and `thought`")
                .at(key.span))
            }
        }
    }
    let Some(Expr {
        kind: ExprKind::Str(source),
        span: at,
    }) = action
    else {
        return Err(form_error(
            "a FunctionExpression's `action` must be a string",
            span,
        ));
    };
    let to_text = string_spans(
        &Expr {
            kind: ExprKind::None,
            span: at,
        },
        &source,
        text,
    );
    let mut expr = syntax::parse(&source, limits).map_err(|mut e| {
        e.span = Some(e.span.map_or(at, &to_text));
        e
    })?;
    map_spans(&mut expr, &to_text);
    let found = eval::units(&expr).len();
    if found != 1 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("expected one call in a FunctionExpression's `action`, found {found}"),
        )
        .with_hint("write one FunctionExpression per call")
        .at(expr.span));
    }
    Ok(expr)
}

fn form_error(what: &str, span: Span) -> Error {
    Error::new(ErrorKind::Syntax, format!("JSON: {what}")).at(span)
}

/// The text of a key (JSON keys are always strings).
fn key_text(key: &Expr) -> &str {
    match &key.kind {
        ExprKind::Str(s) => s,
        _ => "",
    }
}

fn key_is(key: &Expr, name: &str) -> bool {
    key_text(key) == name
}

/// The first value under `key` in an object's pairs.
pub fn get<'a>(pairs: &'a [(Expr, Expr)], key: &str) -> Option<&'a Expr> {
    pairs.iter().find(|(k, _)| key_is(k, key)).map(|(_, v)| v)
}

/// The string a node holds, if it is a string.
pub fn as_str(node: &Expr) -> Option<&str> {
    match &node.kind {
        ExprKind::Str(s) => Some(s),
        _ => None,
    }
}

/// Apply `f` to every span in `expr` (nodes, callees, keywords), without recursion.
pub(crate) fn map_spans(expr: &mut Expr, f: &dyn Fn(Span) -> Span) {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        e.span = f(e.span);
        if let ExprKind::Call(call) = &mut e.kind {
            call.func_span = f(call.func_span);
            for k in call.kwargs.iter_mut() {
                k.name_span = f(k.name_span);
            }
        }
        stack.extend(e.children_mut());
    }
}

/// The offset in a string literal's raw text of `decoded` bytes into its decoded text, from
/// the marks [`decode_marked`] left after each escape.
fn outer_offset(marks: &[(u32, u32)], decoded: u32) -> u32 {
    match marks.binary_search_by_key(&decoded, |m| m.0) {
        Ok(i) => marks.get(i).map_or(decoded, |m| m.1),
        Err(0) => decoded,
        Err(i) => marks
            .get(i - 1)
            .map_or(decoded, |(d, r)| r.saturating_add(decoded - d)),
    }
}

fn span(start: usize, end: usize) -> Span {
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

/// A container being read.
struct Frame {
    start: usize,
    object: bool,
    items: Vec<Expr>,
    pairs: Vec<(Expr, Expr)>,
    /// The key whose value comes next (objects).
    key: Option<Expr>,
    /// Elements so far, counted recursively as the evaluator counts them.
    count: usize,
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    limits: &'a Limits,
    /// Bytes charged as the evaluator charges literals.
    used: u64,
}

impl Reader<'_> {
    fn document(mut self) -> Result<Expr, Error> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            self.skip_blank();
            let start = self.pos;
            let (mut value, mut count) = match self.bytes.get(start) {
                Some(open @ (b'{' | b'[')) => {
                    if stack.len() >= self.limits.max_depth {
                        return Err(Error::limit(
                            LimitKind::Depth,
                            self.limits.max_depth,
                            stack.len() + 1,
                        )
                        .at(span(start, start + 1)));
                    }
                    let object = *open == b'{';
                    self.pos += 1;
                    self.skip_blank();
                    let close = if object { b'}' } else { b']' };
                    if self.bytes.get(self.pos) == Some(&close) {
                        self.pos += 1;
                        let kind = if object {
                            ExprKind::Dict(Vec::new())
                        } else {
                            ExprKind::List(Vec::new())
                        };
                        (
                            Expr {
                                kind,
                                span: span(start, self.pos),
                            },
                            1,
                        )
                    } else {
                        let key = if object { Some(self.key("`{`")?) } else { None };
                        stack.push(Frame {
                            start,
                            object,
                            items: Vec::new(),
                            pairs: Vec::new(),
                            key,
                            count: 0,
                        });
                        continue;
                    }
                }
                Some(b'"') => (self.string()?, 1),
                Some(b'-' | b'0'..=b'9') => (self.number()?, 1),
                Some(b't' | b'f' | b'n') => (self.word()?, 1),
                Some(_) => return Err(self.unexpected("a JSON value")),
                None => return Err(self.early_end("a JSON value", &stack)),
            };
            // Attach the value, closing every container it completes.
            loop {
                let Some(frame) = stack.last_mut() else {
                    self.skip_blank();
                    if self.pos < self.bytes.len() {
                        return Err(self.unexpected("the end of the JSON text"));
                    }
                    return Ok(value);
                };
                // A dict's key counts as an element too.
                frame.count = frame
                    .count
                    .saturating_add(count)
                    .saturating_add(usize::from(frame.object));
                if frame.count > self.limits.max_collection_len {
                    return Err(Error::limit(
                        LimitKind::CollectionLen,
                        self.limits.max_collection_len,
                        frame.count,
                    )
                    .at(span(frame.start, self.pos)));
                }
                match frame.key.take() {
                    Some(key) => frame.pairs.push((key, value)),
                    None => frame.items.push(value),
                }
                let object = frame.object;
                self.skip_blank();
                let close = if object { b'}' } else { b']' };
                match self.bytes.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        if object {
                            let key = self.key("`,`")?;
                            if let Some(frame) = stack.last_mut() {
                                frame.key = Some(key);
                            }
                        }
                        break;
                    }
                    Some(c) if *c == close => {
                        self.pos += 1;
                        let Some(frame) = stack.pop() else {
                            break;
                        };
                        let at = span(frame.start, self.pos);
                        let (kind, charge) = if frame.object {
                            let n = frame.pairs.len() as u64;
                            (ExprKind::Dict(frame.pairs), n.saturating_mul(2 * NODE))
                        } else {
                            let n = frame.items.len() as u64;
                            (ExprKind::List(frame.items), n.saturating_mul(NODE))
                        };
                        self.charge(charge, at)?;
                        value = Expr { kind, span: at };
                        count = frame.count.saturating_add(1);
                    }
                    Some(_) => {
                        let expected = if object {
                            "`,` or `}` after a value in an object"
                        } else {
                            "`,` or `]` after a value in a list"
                        };
                        return Err(self.unexpected(expected));
                    }
                    None => {
                        let expected = if object { "`,` or `}`" } else { "`,` or `]`" };
                        return Err(self.early_end(expected, &stack));
                    }
                }
            }
        }
    }

    fn skip_blank(&mut self) {
        while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn charge(&mut self, bytes: u64, at: Span) -> Result<(), Error> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.limits.max_eval_bytes as u64 {
            return Err(
                Error::limit(LimitKind::EvalBytes, self.limits.max_eval_bytes, self.used).at(at),
            );
        }
        Ok(())
    }

    /// An object's key and its `:`, after `after` (`{` or `,`).
    fn key(&mut self, after: &str) -> Result<Expr, Error> {
        self.skip_blank();
        if self.bytes.get(self.pos) != Some(&b'"') {
            return Err(match self.bytes.get(self.pos) {
                None => self.early_end("a key", &[]),
                Some(_) => self.unexpected(&format!("a key in double quotes after {after}")),
            });
        }
        let key = self.string()?;
        self.skip_blank();
        match self.bytes.get(self.pos) {
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            Some(_) => Err(self.unexpected("`:` after a key")),
            None => Err(self.early_end("`:` after a key", &[])),
        }
    }

    /// A string starting at the current `"`.
    fn string(&mut self) -> Result<Expr, Error> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = start + 1;
        let mut escaped = false;
        loop {
            match b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    i += 2;
                }
                Some(c) if *c < 0x20 => {
                    return Err(Error::new(
                        ErrorKind::Syntax,
                        format!(
                            "JSON: control character U+{:04X} in a string; write it as an \
                             escape (`\\n`, `\\t`, `\\u00XX`)",
                            c
                        ),
                    )
                    .at(span(i, i + 1)));
                }
                Some(_) => i += 1,
                None => {
                    return Err(Error::new(ErrorKind::Syntax, "JSON: unterminated string")
                        .with_hint("a string ends with `\"`")
                        .at(span(start, b.len())))
                }
            }
        }
        let end = i + 1;
        self.pos = end;
        let at = span(start, end);
        let raw = self.text.get(start + 1..i).unwrap_or_default();
        let max = self.limits.max_str_bytes;
        let value = if escaped {
            // Escapes only shrink: a raw text within the limit decodes within it.
            decode(raw, start + 1, (raw.len() > max).then_some(max)).map_err(|e| e.at(at))?
        } else {
            if raw.len() > max {
                return Err(Error::limit(LimitKind::StrBytes, max, raw.len()).at(at));
            }
            raw.to_string()
        };
        self.charge(value.len() as u64, at)?;
        Ok(Expr {
            kind: ExprKind::Str(value),
            span: at,
        })
    }

    /// A number starting at the current byte (`-` or a digit).
    fn number(&mut self) -> Result<Expr, Error> {
        let b = self.bytes;
        let start = self.pos;
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let mut i = start + usize::from(b.get(start) == Some(&b'-'));
        let int_start = i;
        i = match b.get(i) {
            Some(b'0') => i + 1,
            Some(b'1'..=b'9') => digits(i),
            _ => return Err(self.bad_number(start, i + 1, "a digit after `-`")),
        };
        let int_end = i;
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            let after = digits(i + 1);
            if after == i + 1 {
                return Err(self.bad_number(start, i + 1, "a digit after `.`"));
            }
            i = after;
            float = true;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let after = digits(i);
            if after == i {
                return Err(self.bad_number(start, i, "a digit in the exponent"));
            }
            i = after;
            float = true;
        }
        if b.get(int_start) == Some(&b'0') && b.get(int_start + 1).is_some_and(u8::is_ascii_digit) {
            return Err(self.bad_number(start, digits(int_start), "no leading zero"));
        }
        self.pos = i;
        let at = span(start, i);
        let written = self.text.get(start..i).unwrap_or("0");
        let kind = if float {
            // Out of range becomes infinity here; `check_call_tree` refuses it with the text.
            ExprKind::Float(written.parse::<f64>().unwrap_or(f64::INFINITY))
        } else if let Ok(n) = written.parse::<i64>() {
            ExprKind::Int(n)
        } else {
            let count = int_end - int_start;
            if count > self.limits.max_int_digits {
                return Err(
                    Error::limit(LimitKind::IntDigits, self.limits.max_int_digits, count).at(at),
                );
            }
            match written.parse::<BigInt>() {
                Ok(n) => ExprKind::BigInt(n),
                Err(_) => return Err(self.bad_number(start, i, "an integer")),
            }
        };
        Ok(Expr { kind, span: at })
    }

    fn bad_number(&self, start: usize, end: usize, expected: &str) -> Error {
        // `end` may fall inside the character after the number: quote all of it.
        let mut end = end.min(self.bytes.len());
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        let written = self.text.get(start..end).unwrap_or_default();
        Error::new(
            ErrorKind::Syntax,
            format!(
                "JSON: malformed number `{}`: expected {expected}",
                clip(written, QUOTE_CHARS)
            ),
        )
        .at(span(start, end))
    }

    /// `true`, `false` or `null`.
    fn word(&mut self) -> Result<Expr, Error> {
        let start = self.pos;
        let rest = self.bytes.get(start..).unwrap_or_default();
        let (kind, len) = if rest.starts_with(b"true") {
            (ExprKind::Bool(true), 4)
        } else if rest.starts_with(b"false") {
            (ExprKind::Bool(false), 5)
        } else if rest.starts_with(b"null") {
            (ExprKind::None, 4)
        } else {
            return Err(self.unexpected("a JSON value"));
        };
        if self
            .bytes
            .get(start + len)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            return Err(self.unexpected("a JSON value"));
        }
        self.pos = start + len;
        Ok(Expr {
            kind,
            span: span(start, self.pos),
        })
    }

    /// An error at the current character: what was expected and what is there.
    fn unexpected(&self, expected: &str) -> Error {
        let found = self.text.get(self.pos..).and_then(|r| r.chars().next());
        let (message, len) = match found {
            Some(c) if c.is_ascii_graphic() => (format!("found `{c}`"), 1),
            Some(c) => (format!("found U+{:04X}", c as u32), c.len_utf8()),
            None => ("the text ends".to_string(), 0),
        };
        let mut e = Error::new(
            ErrorKind::Syntax,
            format!("JSON: expected {expected}, {message}"),
        )
        .at(span(self.pos, self.pos + len));
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        if found == Some('\'') {
            e = e.with_hint("JSON strings take double quotes");
        } else if let Some(word) = ["True", "False", "None"]
            .iter()
            .find(|w| rest.starts_with(w.as_bytes()))
        {
            e = e.with_hint(format!(
                "`{word}` is Python: JSON writes true, false and null"
            ));
        }
        e
    }

    /// The text ended while `expected` was still to come.
    fn early_end(&self, expected: &str, open: &[Frame]) -> Error {
        let mut e = Error::new(
            ErrorKind::Syntax,
            format!("JSON: the text ends where {expected} should be"),
        )
        .at(span(self.bytes.len(), self.bytes.len()));
        if let Some(frame) = open.last() {
            let what = if frame.object { "`{`" } else { "`[`" };
            e = e.with_hint(format!("{what} at {} is not closed", frame.start));
        }
        e
    }
}

/// Decode a string literal's raw text (between the quotes; `base` is its offset in the input,
/// for error spans). With `max`, stop with a `max_str_bytes` error once the decoded text is
/// longer.
fn decode(raw: &str, base: usize, max: Option<usize>) -> Result<String, Error> {
    decode_into(raw, base, max, None)
}

/// Decode a string literal's raw text and mark, after each escape, the decoded and raw offsets
/// (to map spans in the decoded text back to the raw one).
fn decode_marked(raw: &str, base: usize) -> Result<(String, Vec<(u32, u32)>), Error> {
    let mut marks = Vec::new();
    let decoded = decode_into(raw, base, None, Some(&mut marks))?;
    Ok((decoded, marks))
}

fn decode_into(
    raw: &str,
    base: usize,
    max: Option<usize>,
    mut marks: Option<&mut Vec<(u32, u32)>>,
) -> Result<String, Error> {
    let mut out = String::with_capacity(raw.len().min(max.unwrap_or(usize::MAX)));
    let mut consumed = 0usize;
    let mut rest = raw;
    while let Some(k) = rest.find('\\') {
        out.push_str(&rest[..k]);
        let esc = &rest[k..];
        let at = base + consumed + k;
        let bad = |len: usize, what: String| {
            Error::new(ErrorKind::Syntax, format!("JSON: {what}"))
                .with_hint("JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
                .at(span(at, at + len))
        };
        let (c, len) = match esc.as_bytes().get(1) {
            Some(b'"') => ('"', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'/') => ('/', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'u') => {
                let unit = hex4(esc.get(2..6))
                    .ok_or_else(|| bad(2, "`\\u` needs four hex digits".into()))?;
                match unit {
                    0xD800..=0xDBFF => {
                        let low = esc
                            .get(6..8)
                            .filter(|s| *s == "\\u")
                            .and_then(|_| hex4(esc.get(8..12)))
                            .filter(|low| (0xDC00..=0xDFFF).contains(low));
                        match low {
                            Some(low) => {
                                let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                let c = char::from_u32(code)
                                    .ok_or_else(|| bad(12, "invalid surrogate pair".into()))?;
                                (c, 12)
                            }
                            None => {
                                return Err(bad(
                                    6,
                                    format!("lone surrogate `\\u{unit:04x}` in a string"),
                                ))
                            }
                        }
                    }
                    0xDC00..=0xDFFF => {
                        return Err(bad(
                            6,
                            format!("lone surrogate `\\u{unit:04x}` in a string"),
                        ))
                    }
                    _ => (
                        char::from_u32(unit).ok_or_else(|| bad(6, "invalid escape".into()))?,
                        6,
                    ),
                }
            }
            _ => {
                let shown: String = esc.chars().take(2).collect();
                return Err(bad(
                    shown.len(),
                    format!("invalid escape `{shown}` in a string"),
                ));
            }
        };
        out.push(c);
        consumed += k + len;
        rest = esc.get(len..).unwrap_or_default();
        if let Some(max) = max {
            if out.len() > max {
                return Err(Error::limit(LimitKind::StrBytes, max, "a longer string"));
            }
        }
        if let Some(marks) = marks.as_deref_mut() {
            marks.push((
                u32::try_from(out.len()).unwrap_or(u32::MAX),
                u32::try_from(consumed).unwrap_or(u32::MAX),
            ));
        }
    }
    out.push_str(rest);
    if let Some(max) = max {
        if out.len() > max {
            return Err(Error::limit(LimitKind::StrBytes, max, out.len()));
        }
    }
    Ok(out)
}

fn hex4(digits: Option<&str>) -> Option<u32> {
    let digits = digits?;
    if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    fn err(text: &str) -> Error {
        read(text, &limits()).expect_err(text)
    }

    /// The error's span, as the text it covers.
    fn at<'t>(text: &'t str, e: &Error) -> &'t str {
        e.span
            .and_then(|s| text.get(s.range()))
            .unwrap_or("<no span>")
    }

    #[test]
    fn values_become_python_literals_with_spans_into_the_text() {
        let text = " \u{feff}";
        assert!(read(text, &limits()).is_err());
        let text = "\u{feff}{\"s\": \"a\\\"b\\u00e9\\ud83d\\ude00\\n\", \"n\": [-0, 12345678901234567890, 1.5e3, true, null]}";
        let tree = read(text, &limits()).expect("reads");
        assert_eq!(
            tree.to_string(),
            r#"{"s": "a\"bé😀\n", "n": [0, 12345678901234567890, 1500.0, True, None]}"#
        );
        let ExprKind::Dict(pairs) = &tree.kind else {
            panic!("a dict")
        };
        assert_eq!(&text[pairs[0].0.span.range()], "\"s\"");
        assert_eq!(
            &text[pairs[1].1.span.range()],
            "[-0, 12345678901234567890, 1.5e3, true, null]"
        );
    }

    #[test]
    fn malformed_json_says_what_and_where() {
        for (text, message, covered) in [
            ("{\"a\": 1", "JSON: the text ends where `,` or `}` should be", ""),
            ("[1, 2,]", "JSON: expected a JSON value, found `]`", "]"),
            ("{'a': 1}", "JSON: expected a key in double quotes after `{`, found `'`", "'"),
            ("{\"a\" 1}", "JSON: expected `:` after a key, found `1`", "1"),
            ("[1 2]", "JSON: expected `,` or `]` after a value in a list, found `2`", "2"),
            ("[01]", "JSON: malformed number `01`: expected no leading zero", "01"),
            ("[1.]", "JSON: malformed number `1.`: expected a digit after `.`", "1."),
            ("[-]", "JSON: malformed number `-]`: expected a digit after `-`", "-]"),
            ("-\u{ec0}", "JSON: malformed number `-\u{ec0}`: expected a digit after `-`", "-\u{ec0}"),
            ("[True]", "JSON: expected a JSON value, found `T`", "T"),
            ("[nul]", "JSON: expected a JSON value, found `n`", "n"),
            ("{} x", "JSON: expected the end of the JSON text, found `x`", "x"),
            ("[\"a\\x\"]", "JSON: invalid escape `\\x` in a string", "\\x"),
            ("[\"\\ud800\"]", "JSON: lone surrogate `\\ud800` in a string", "\\ud800"),
            ("[\"a\nb\"]", "JSON: control character U+000A in a string; write it as an escape (`\\n`, `\\t`, `\\u00XX`)", "\n"),
            ("[\"abc", "JSON: unterminated string", "\"abc"),
            ("\u{3000}{}", "JSON: expected a JSON value, found U+3000", "\u{3000}"),
        ] {
            let e = err(text);
            assert_eq!((e.kind, e.message.as_str()), (ErrorKind::Syntax, message), "{text}");
            assert_eq!(at(text, &e), covered, "{text}");
        }
        assert_eq!(
            err("[True]").hint.as_deref(),
            Some("`True` is Python: JSON writes true, false and null")
        );
        assert_eq!(
            err("{\"a\": [1").hint.as_deref(),
            Some("`[` at 6 is not closed")
        );
    }

    #[test]
    fn every_limit_is_checked_while_reading() {
        let tight = Limits {
            max_depth: 3,
            max_str_bytes: 4,
            max_collection_len: 6,
            max_int_digits: 25,
            max_source_bytes: 64,
            ..limits()
        };
        let limit = |text: &str| {
            let e = read(text, &tight).expect_err(text);
            assert_eq!(e.kind, ErrorKind::Limit, "{text}: {e}");
            e.message.split(' ').next().unwrap_or_default().to_string()
        };
        assert!(read("[[[1]]]", &tight).is_ok());
        assert_eq!(limit("[[[[1]]]]"), "max_depth");
        assert!(read("[\"abcd\", \"\\u00e9\\u00e9\"]", &tight).is_ok());
        assert_eq!(limit("[\"abcde\"]"), "max_str_bytes");
        assert_eq!(limit("[\"\\u00e9\\u00e9a\"]"), "max_str_bytes");
        assert_eq!(limit("{\"abcde\": 1}"), "max_str_bytes");
        // Counted as the evaluator counts: [1, [2, 3]] is 4 elements; {"a": [1]} is 3.
        assert!(read("[1, 2, [3, 4], 5]", &tight).is_ok());
        assert_eq!(limit("[1, 2, [3, 4], 5, 6]"), "max_collection_len");
        assert!(read("{\"a\": [1, 2], \"b\": 3}", &tight).is_ok());
        assert_eq!(limit("{\"a\": [1, 2], \"b\": [3]}"), "max_collection_len");
        assert!(read("[1234567890123456789012345]", &tight).is_ok());
        assert_eq!(limit("[12345678901234567890123456]"), "max_int_digits");
        assert_eq!(limit(&" ".repeat(65)), "max_source_bytes");
        let small = Limits {
            max_eval_bytes: 100,
            ..limits()
        };
        // Two list elements (24 bytes each) and two strings of 20 bytes: 88.
        let twenty = "a".repeat(20);
        assert!(read(&format!("[\"{twenty}\", \"{twenty}\"]"), &small).is_ok());
        let e = read(&format!("[\"{twenty}\", \"{twenty}\", 1]"), &small).expect_err("over");
        assert!(e.message.starts_with("max_eval_bytes"), "{e}");
    }

    #[test]
    fn a_deep_or_huge_document_ends_in_an_error_without_recursion() {
        let deep = "[".repeat(1_000_000);
        let e = err(&deep);
        assert_eq!(
            (e.kind, e.span),
            (ErrorKind::Limit, Some(Span::new(100, 101)))
        );
        let wide = format!("[{}0]", "0,".repeat(200_000));
        assert_eq!(err(&wide).kind, ErrorKind::Limit);
    }

    #[test]
    fn calls_with_duplicate_keys_or_numbers_out_of_range_are_refused() {
        for (text, message, covered) in [
            (
                r#"{"name": "add", "name": "multiply"}"#,
                "JSON: duplicate key `name` in an object (first at 1..7)",
                "\"name\"",
            ),
            (
                r#"{"kwargs": {"b": 1, "a": 1, "a": 1000}}"#,
                "JSON: duplicate key `a` in an object (first at 20..23)",
                "\"a\"",
            ),
            (
                r#"{"args": [{"x": 1, "x": 2}]}"#,
                "JSON: duplicate key `x` in an object (first at 11..14)",
                "\"x\"",
            ),
        ] {
            let tree = read(text, &limits()).expect(text);
            let e = check_call_tree(&tree, text, 0).expect_err(text);
            assert_eq!(
                (e.kind, e.message.as_str()),
                (ErrorKind::Syntax, message),
                "{text}"
            );
            assert_eq!(at(text, &e), covered, "{text}");
            assert_eq!(
                e.span.map(|s| s.start as usize),
                text.rfind(covered),
                "{text}"
            );
        }
        for number in ["1e400", "-1e400", "123e999999999999999999"] {
            let text = format!("{{\"a\": [1, {number}]}}");
            let e = check_call_tree(&read(&text, &limits()).expect("reads"), &text, 0)
                .expect_err(&text);
            assert_eq!(e.kind, ErrorKind::Value);
            assert_eq!(
                e.message,
                format!("JSON: number {number} is out of range for a float")
            );
            assert_eq!(at(&text, &e), number);
        }
        // Tiny numbers round to zero as in Python; keys repeated in different objects are fine.
        let text = r#"{"a": 1e-400, "b": {"a": 1}, "c": [{"a": 1}, {"a": 2}]}"#;
        assert!(check_call_tree(&read(text, &limits()).expect("reads"), text, 0).is_ok());
    }

    #[test]
    fn nested_json_maps_its_spans_through_the_escapes() {
        let text = r#"{"arguments": "{\"city\": \"Z\u00fcrich\", \"n\": [1, 2}"}"#;
        let tree = read(text, &limits()).expect("reads");
        let ExprKind::Dict(pairs) = &tree.kind else {
            panic!("a dict")
        };
        let e = read_nested(&pairs[0].1, text, &limits()).expect_err("malformed");
        assert_eq!(
            e.message,
            "JSON: expected `,` or `]` after a value in a list, found `}`"
        );
        assert_eq!(at(text, &e), "}");
        assert_eq!(e.span.map(|s| s.start as usize), text.rfind("}\""));
        let text = r#"{"arguments": "{\"city\": \"Z\u00fcrich\", \"n\": 7}"}"#;
        let tree = read(text, &limits()).expect("reads");
        let ExprKind::Dict(pairs) = &tree.kind else {
            panic!("a dict")
        };
        let nested = read_nested(&pairs[0].1, text, &limits()).expect("reads");
        let ExprKind::Dict(args) = &nested.kind else {
            panic!("a dict")
        };
        assert_eq!(args[0].1.to_string(), "\"Z\u{fc}rich\"");
        assert_eq!(
            at(text, &Error::new(ErrorKind::Value, "").at(args[0].1.span)),
            r#"\"Z\u00fcrich\""#
        );
        assert_eq!(
            at(text, &Error::new(ErrorKind::Value, "").at(args[1].1.span)),
            "7"
        );
    }

    #[test]
    fn fexprs_forms_become_units() {
        let text = r#"[{"name": "add", "args": [1], "kwargs": {"b": {"k": [null]}}, "thought": "t"},
            {"action": "multiply(a=2, b=x)", "thought": null},
            {"name": "add", "extra": 1},
            {"action": "[add(a=1, b=2), add(a=3, b=4)]"},
            {"action": "add(a=1, b=\"\u00e9\")) "},
            {"kwargs": {}},
            [1]]"#;
        let items = units(text, &limits()).expect("forms");
        let shown: Vec<String> = items
            .iter()
            .map(|(span, unit)| match unit {
                Ok(e) => format!("{} @ {}", e, &text[span.range()].len()),
                Err(e) => format!("{:?}: {} [{}]", e.kind, e.message, at(text, e)),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "add(1, b={\"k\": [None]}) @ 76".to_string(),
                "multiply(a=2, b=x) @ 49".into(),
                "Syntax: JSON: unknown field `extra` in a Function object [\"extra\"]".into(),
                "Unsupported: expected one call in a FunctionExpression's `action`, found 2 [[add(a=1, b=2), add(a=3, b=4)]]".into(),
                "Syntax: Unexpected token at the end of an expression [)]".into(),
                "Syntax: JSON: a Function needs a string `name` [{\"kwargs\": {}}]".into(),
                "Syntax: JSON: each item must be an object: a Function ({\"name\", \"args\", \"kwargs\"}) or a FunctionExpression ({\"action\"}) [[1]]".into(),
            ]
        );
        let ExprKind::Call(call) = &items[1].1.as_ref().expect("a call").kind else {
            panic!("a call")
        };
        assert_eq!(&text[call.kwargs[1].value.span.range()], "x");
        for bad in ["[]", "1", "\"add(a=1)\"", "null"] {
            assert_eq!(
                units(bad, &limits()).expect_err(bad).kind,
                ErrorKind::Syntax,
                "{bad}"
            );
        }
    }

    #[test]
    fn to_text_bounds_what_it_writes() {
        let mut deep = serde_json::json!(1);
        for _ in 0..101 {
            deep = serde_json::json!([deep]);
        }
        let e = to_text(&deep, &limits()).expect_err("too deep");
        assert!(e.message.starts_with("max_depth"), "{e}");
        let wide = serde_json::Value::Array(vec![serde_json::json!(0); 600_000]);
        let e = to_text(&wide, &limits()).expect_err("too long");
        assert!(e.message.starts_with("max_source_bytes"), "{e}");
    }
}

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

mod forms;
mod reader;
#[cfg(test)]
mod tests;

use self::forms::key_is;
pub use self::forms::{run, units, Item};
use self::reader::{decode_marked, Reader};

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
    let marks = raw.and_then(|raw| {
        short_escape_marks(raw, value).or_else(|| {
            decode_marked(raw, raw_start as usize)
                .ok()
                .filter(|(decoded, _)| decoded == value)
                .map(|(_, marks)| marks)
        })
    });
    move |s: Span| match &marks {
        Some(marks) => Span::new(
            raw_start + outer_offset(marks, s.start),
            raw_start + outer_offset(marks, s.end),
        ),
        None => whole,
    }
}

/// The marks [`decode_marked`] leaves in `raw`, a JSON string's text, when it decodes to
/// `value` and each of its escapes is two bytes (`\"`, `\n`, ...: how serde_json writes a
/// string, but for control characters): found comparing in place, nothing decoded. `None`
/// otherwise (a `\u` escape, a malformed one, another text): [`decode_marked`] says then.
fn short_escape_marks(raw: &str, value: &str) -> Option<Vec<(u32, u32)>> {
    let (raw, value) = (raw.as_bytes(), value.as_bytes());
    let escapes = raw.iter().filter(|b| **b == b'\\').count();
    let mut marks = Vec::with_capacity(escapes);
    let (mut r, mut d) = (0usize, 0usize);
    while let Some(k) = raw.get(r..)?.iter().position(|b| *b == b'\\') {
        if raw.get(r..r + k)? != value.get(d..d + k)? {
            return None;
        }
        let decoded = match raw.get(r + k + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            _ => return None,
        };
        if value.get(d + k)? != &decoded {
            return None;
        }
        r += k + 2;
        d += k + 1;
        marks.push((
            u32::try_from(d).unwrap_or(u32::MAX),
            u32::try_from(r).unwrap_or(u32::MAX),
        ));
    }
    (raw.get(r..)? == value.get(d..)?).then_some(marks)
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
    // Only what can hold an error is visited: a float, an object, a list. The stack holds only
    // collections (a call of scalars allocates nothing here).
    let may_fail = |node: &&Expr| {
        matches!(
            node.kind,
            ExprKind::Float(_) | ExprKind::Dict(_) | ExprKind::List(_) | ExprKind::Tuple(_)
        )
    };
    let mut stack = Vec::new();
    let mut next = Some(tree);
    while let Some(node) = next.take().or_else(|| stack.pop()) {
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
                let names = pairs.iter().map(|(key, _)| as_str(key));
                let repeat = crate::call::first_repeat(names);
                if let Some(((first, _), (again, _))) =
                    repeat.and_then(|(first, again)| pairs.get(first).zip(pairs.get(again)))
                {
                    return Err(duplicate_key(first, again.span, base));
                }
                let nodes = pairs.iter().flat_map(|(key, value)| [key, value]);
                stack.extend(nodes.filter(may_fail));
            }
            ExprKind::List(items) | ExprKind::Tuple(items) => {
                stack.extend(items.iter().filter(may_fail));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The error for a key given again at `again`, first given as `first`.
fn duplicate_key(first: &Expr, again: Span, base: u32) -> Error {
    let name = as_str(first).unwrap_or_default();
    let first = first.span;
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
    let size = written_size(json, limits)?;
    let mut out = Bounded {
        bytes: Vec::with_capacity(size.min(limits.max_source_bytes)),
        max: limits.max_source_bytes,
    };
    serde_json::to_writer(&mut out, json).map_err(|_| too_long(limits))?;
    String::from_utf8(out.bytes)
        .map_err(|_| Error::new(ErrorKind::Syntax, "JSON: the document is not UTF-8"))
}

/// The text [`to_text`] writes of `json`, with the tree [`read`] reads from that text (spans
/// and all), built as the text is written: a JSON document already parsed is not read again.
/// The tree is `None` when a limit of [`read`] may refuse the text (a string, a collection
/// or the whole document over its limit, an integer beyond `i64`): the caller reads the text
/// then, for the reader's own error. Errors are [`to_text`]'s.
///
/// ```
/// use fexpr::front::json_input::{read, to_text, to_text_read};
/// let limits = fexpr::Limits::default();
/// let json = serde_json::json!({"name": "add", "arguments": "{\"a\": 1}", "ok": [true, null, 2.5]});
/// let (text, tree) = to_text_read(&json, &limits)?;
/// assert_eq!(text, to_text(&json, &limits)?);
/// assert_eq!(tree, Some(read(&text, &limits)?));
/// let short = limits.clone().max_str_bytes(2);
/// assert_eq!(to_text_read(&json, &short)?.1, None);
/// # Ok::<(), fexpr::Error>(())
/// ```
///
/// # Errors
///
/// A `Limit` error when `json` is nested deeper than [`Limits::max_depth`] or its text is
/// longer than [`Limits::max_source_bytes`].
pub fn to_text_read(
    json: &serde_json::Value,
    limits: &Limits,
) -> Result<(String, Option<Expr>), Error> {
    // Written in one pass, the limits checked on the way; past one of them the writing stops
    // and the error is the one the check before writing (`written_size`) gives, which
    // [`to_text`] gives too.
    let mut writer = Writer {
        out: Vec::with_capacity(FIRST_BUFFER.min(limits.max_source_bytes)),
        limits,
        used: 0,
        fits: true,
        over: false,
    };
    let (tree, _) = writer.value(json, 1);
    if writer.over || writer.out.len() > limits.max_source_bytes {
        written_size(json, limits)?;
        return Err(too_long(limits));
    }
    let fits = writer.fits
        && writer.used <= limits.max_eval_bytes as u64
        && u32::try_from(writer.out.len()).is_ok();
    let text = String::from_utf8(writer.out)
        .map_err(|_| Error::new(ErrorKind::Syntax, "JSON: the document is not UTF-8"))?;
    Ok((text, fits.then_some(tree)))
}

/// The first buffer [`to_text_read`] writes into: a provider message with a call or two fits.
const FIRST_BUFFER: usize = 512;

/// The error of a document whose text is longer than [`Limits::max_source_bytes`].
fn too_long(limits: &Limits) -> Error {
    Error::limit(
        LimitKind::SourceBytes,
        limits.max_source_bytes,
        "a longer text",
    )
}

/// About the bytes `json`'s text takes, or the error when it is nested deeper than
/// [`Limits::max_depth`] or has more nodes than [`Limits::max_source_bytes`] (every node takes
/// a byte at least), found before anything is written.
fn written_size(json: &serde_json::Value, limits: &Limits) -> Result<usize, Error> {
    use serde_json::Value as J;
    // Every node takes at least one byte of text: past that many, the text is too long.
    let mut nodes = 0usize;
    // About the bytes the text takes, to write it in one buffer.
    let mut size = 0usize;
    let mut stack = vec![(json, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        size = size.saturating_add(match node {
            J::String(s) => s.len() + 2,
            J::Object(map) => map.keys().map(|k| k.len() + 4).sum::<usize>() + 2,
            J::Array(items) => items.len() + 2,
            _ => 8,
        });
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
    Ok(size)
}

/// Writes a document as [`to_text`] does (serde_json's compact form: each scalar and key by
/// serde_json itself) and builds the tree [`read`] would read from the text, charging what
/// the reader charges; `fits` turns false when the reader might refuse the text.
struct Writer<'a> {
    out: Vec<u8>,
    limits: &'a Limits,
    /// Bytes charged as the reader charges them (strings, keys, elements).
    used: u64,
    /// Whether every string, collection and integer is within the reader's limits.
    fits: bool,
    /// Whether the writing stopped: a collection nested deeper than [`Limits::max_depth`],
    /// or a text longer than [`Limits::max_source_bytes`].
    over: bool,
}

impl Writer<'_> {
    /// Write `json`, at nesting `depth` (the document is at 1): its tree, and its elements
    /// counted as the reader counts them. Recursion is bounded by [`Limits::max_depth`], as
    /// the evaluator's is: a collection deeper (or any value once the text is longer than
    /// [`Limits::max_source_bytes`]) is not written, and `over` says so.
    fn value(&mut self, json: &serde_json::Value, depth: usize) -> (Expr, usize) {
        use serde_json::Value as J;
        let start = self.out.len();
        let deep = matches!(json, J::Array(_) | J::Object(_)) && depth > self.limits.max_depth;
        if self.over || deep || start > self.limits.max_source_bytes {
            self.over = true;
            let span = span_of(start, start);
            return (
                Expr {
                    kind: ExprKind::None,
                    span,
                },
                1,
            );
        }
        let (kind, count) = match json {
            J::Null => {
                self.out.extend_from_slice(b"null");
                (ExprKind::None, 1)
            }
            J::Bool(b) => {
                self.out
                    .extend_from_slice(if *b { b"true" as &[u8] } else { b"false" });
                (ExprKind::Bool(*b), 1)
            }
            J::Number(n) => {
                self.scalar(json);
                let written = std::str::from_utf8(self.out.get(start..).unwrap_or_default())
                    .unwrap_or_default();
                // As the reader reads it: a fraction or an exponent is a float.
                let kind = if written.contains(['.', 'e', 'E']) {
                    written.parse::<f64>().map(ExprKind::Float).ok()
                } else {
                    n.as_i64().map(ExprKind::Int)
                };
                // An integer beyond `i64` (digits, `BigInt`) is left to the reader.
                self.fits &= kind.is_some();
                (kind.unwrap_or(ExprKind::None), 1)
            }
            J::String(text) => (self.string(text), 1),
            J::Array(items) => {
                self.out.push(b'[');
                let mut elements = Vec::with_capacity(items.len());
                let mut count = 0usize;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let (element, n) = self.value(item, depth + 1);
                    count = count.saturating_add(n);
                    elements.push(element);
                }
                self.out.push(b']');
                self.collection(count, items.len(), NODE);
                (ExprKind::List(elements), count.saturating_add(1))
            }
            J::Object(map) => {
                self.out.push(b'{');
                let mut pairs = Vec::with_capacity(map.len());
                let mut count = 0usize;
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let key_start = self.out.len();
                    let key = Expr {
                        kind: self.string(key),
                        span: span_of(key_start, self.out.len()),
                    };
                    self.out.push(b':');
                    let (value, n) = self.value(item, depth + 1);
                    // A dict's key counts as an element too.
                    count = count.saturating_add(n).saturating_add(1);
                    pairs.push((key, value));
                }
                self.out.push(b'}');
                self.collection(count, map.len(), 2 * NODE);
                (ExprKind::Dict(pairs), count.saturating_add(1))
            }
        };
        let span = span_of(start, self.out.len());
        (Expr { kind, span }, count)
    }

    /// Write a scalar or a key as serde_json writes it.
    fn scalar<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        self.fits &= serde_json::to_writer(&mut self.out, value).is_ok();
    }

    /// Write the string `text`; its node, charged as the reader charges it.
    fn string(&mut self, text: &str) -> ExprKind {
        self.scalar(text);
        self.fits &= text.len() <= self.limits.max_str_bytes;
        self.used = self.used.saturating_add(text.len() as u64);
        ExprKind::Str(text.to_string())
    }

    /// Charge a collection of `len` elements (`count` counted recursively), `per` bytes each.
    fn collection(&mut self, count: usize, len: usize, per: u64) {
        self.fits &= count <= self.limits.max_collection_len;
        self.used = self.used.saturating_add((len as u64).saturating_mul(per));
    }
}

fn span_of(start: usize, end: usize) -> Span {
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
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

/// The call a JSON call object writes: the function `name` (its string's span `name_span`)
/// called with the positional arguments `args` and the keyword arguments of the object
/// `kwargs` (`null` for none), each key a keyword named exactly as written (`from`,
/// `max-results`, `城市`: any string), its value the literal tree as read; `span` is the
/// call's. The one reading of a call object's name and arguments: fexpr's own forms
/// ([`units`]) and every other JSON form and model format of the front door build their calls
/// with it. An error when `kwargs` is not an object or one of its keys is not a string (a Python
/// literal read as JSON may have any key).
///
/// ```
/// use fexpr::front::json_input::{call_of, read};
/// use fexpr::{Limits, Span};
///
/// let args = read(r#"{"from": "USD", "max-results": 3}"#, &Limits::default())?;
/// let call = call_of("convert".into(), Span::new(0, 7), Vec::new(), args, Span::new(0, 40))?;
/// assert_eq!(call.to_string(), r#"convert(**{"from": "USD", "max-results": 3})"#);
/// # Ok::<(), fexpr::Error>(())
/// ```
///
/// # Errors
///
/// A `Syntax` error at `kwargs` (or the key) when it is not an object of string keys.
pub fn call_of(
    name: String,
    name_span: Span,
    args: Vec<Expr>,
    kwargs: Expr,
    span: Span,
) -> Result<Expr, Error> {
    let pairs = match kwargs.kind {
        ExprKind::Dict(pairs) => pairs,
        ExprKind::None => Vec::new(),
        _ => {
            return Err(Error::new(
                ErrorKind::Syntax,
                format!(
                    "the arguments of `{}` are not an object",
                    clip(&name, QUOTE_CHARS)
                ),
            )
            .with_hint("write the arguments as an object of name → value")
            .at(kwargs.span))
        }
    };
    // Filled by hand: collecting in place into the pairs' buffer would shrink it by a realloc.
    let mut kwargs = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let ExprKind::Str(key_name) = key.kind else {
            return Err(Error::new(
                ErrorKind::Syntax,
                format!(
                    "an argument name of `{}` is not a string",
                    clip(&name, QUOTE_CHARS)
                ),
            )
            .at(key.span));
        };
        kwargs.push(Keyword {
            name: key_name,
            name_span: key.span,
            value,
        });
    }
    Ok(Expr {
        kind: ExprKind::Call(Call {
            func: name,
            func_span: name_span,
            args,
            kwargs,
        }),
        span,
    })
}

/// A `FunctionExpression`'s `action` (the string node `action` of a tree read from `text`)
/// parsed as an expression within `limits`, its spans and its error's mapped into `text`
/// through the string's escapes.
///
/// # Errors
///
/// `action` is not a string, or what [`syntax::parse`] says of its text.
pub(crate) fn read_action(action: &Expr, text: &str, limits: &Limits) -> Result<Expr, Error> {
    let ExprKind::Str(source) = &action.kind else {
        return Err(Error::new(
            ErrorKind::Syntax,
            "JSON: a FunctionExpression's `action` must be a string",
        )
        .at(action.span));
    };
    let to_text = string_spans(action, source, text);
    let mut expr = syntax::parse(source, limits).map_err(|mut e| {
        e.span = Some(e.span.map_or(action.span, &to_text));
        e
    })?;
    map_spans(&mut expr, &to_text);
    Ok(expr)
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

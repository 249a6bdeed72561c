//! Errors as data: every failure fexpr reports is an [`Error`] with a closed [`ErrorKind`],
//! a message, the byte [`Span`] of the source it concerns, and an optional hint.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A half-open byte range `start..end` into the source text an error or IR node refers to.
///
/// ```
/// let span = fexpr::Span::new(4, 9);
/// assert_eq!(&"add(a=1)x"[span.range()], "a=1)x");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// The span as a `Range<usize>` for slicing the source.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// What went wrong, as a small closed set a program (or a model) can branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorKind {
    /// The text is not valid Python expression syntax.
    Syntax,
    /// Valid Python, but outside the accepted subset (lambda, attribute access, `;`, ...).
    Unsupported,
    /// A name that is not in the allow-listed context.
    UnknownName,
    /// A call to a name that is not a registered tool or constructor.
    UnknownTool,
    /// Arguments do not fit the signature: missing, unknown, duplicate, too many.
    Arguments,
    /// A value has the wrong type for a parameter or an operator.
    Type,
    /// A value of the right type that cannot be used (division by zero, ragged array, ...).
    Value,
    /// A resource limit was hit (size, depth, digits, calls, fuel, memory, time).
    Limit,
    /// The tool ran and reported failure (or panicked, or its server failed).
    ToolFailed,
    /// The sandbox itself failed: a trap other than a limit, or a broken guest reply.
    Sandbox,
}

/// A structured error: kind, message, where, and how to fix it.
///
/// Messages never echo unbounded input: quoted source is cut to a few dozen characters.
///
/// ```
/// use fexpr::{Error, ErrorKind, Span};
/// let e = Error::new(ErrorKind::UnknownName, "name `z` is not defined").at(Span::new(6, 7));
/// assert_eq!(e.kind, ErrorKind::UnknownName);
/// assert_eq!(e.span, Some(Span::new(6, 7)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct Error {
    /// The category.
    pub kind: ErrorKind,
    /// A human- and model-readable description.
    pub message: String,
    /// The source bytes concerned, when there is a source.
    pub span: Option<Span>,
    /// A suggestion: the expected signature, the closest name, the limit to raise.
    pub hint: Option<String>,
}

impl Error {
    /// An error of `kind` with `message`, no span and no hint.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            span: None,
            hint: None,
        }
    }

    /// The same error located at `span` (an existing span is kept).
    pub fn at(mut self, span: Span) -> Error {
        self.span.get_or_insert(span);
        self
    }

    /// The same error with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// A [`ErrorKind::Limit`] error naming the budget, its value and what was asked for.
    pub fn limit(what: &str, limit: impl fmt::Display, used: impl fmt::Display) -> Error {
        Error::new(
            ErrorKind::Limit,
            format!("{what} limit exceeded: {used} > {limit}"),
        )
        .with_hint(format!("raise Limits::{what} if this input is legitimate"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)?;
        if let Some(span) = self.span {
            write!(f, " (at {}..{})", span.start, span.end)?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "; hint: {hint}")?;
        }
        Ok(())
    }
}

/// Cut `text` to at most `max` characters for quoting in a message, marking the cut with `…`.
///
/// ```
/// assert_eq!(fexpr::error::clip("abcdef", 3), "abc…");
/// assert_eq!(fexpr::error::clip("abc", 3), "abc");
/// ```
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The closest of `candidates` to `name` by edit distance, if it is close enough to suggest.
///
/// ```
/// assert_eq!(fexpr::error::closest("ad", ["add", "multiply"]), Some("add"));
/// assert_eq!(fexpr::error::closest("zzzz", ["add"]), None);
/// ```
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name_len = name.chars().count();
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, c)| *d <= (name_len.max(c.chars().count()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars, bounded in cost by the callers (names are clipped).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

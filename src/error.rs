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

/// What went wrong, as a small set a program (or a model) can branch on. New kinds may be
/// added: match with a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// The program's configuration cannot work: a default of the wrong type or for a parameter
    /// the tool does not have, a cached tool that reads its context, a limit no evaluation can
    /// meet. Reported when the manager is built
    /// ([`ToolManagerBuilder::build`](crate::dispatch::manager::ToolManagerBuilder::build)) or, for a
    /// request's own limits, by that request; never for something a model wrote.
    Config,
}

pub use crate::limits::LimitKind;
use crate::limits::Limits;

impl Limits {
    /// Whether these limits can work at all; an [`ErrorKind::Config`] error says why not: a
    /// [`memory_bytes`](Limits::memory_bytes) below
    /// [`MIN_MEMORY_BYTES`](Limits::MIN_MEMORY_BYTES), or a limit above its ceiling
    /// ([`CEILINGS`](Limits::CEILINGS)). The manager's builder, every request and the CLI's
    /// `--limit` check them before anything runs. (It lives beside [`Error`]: the limits
    /// module knows no errors, errors name limits.)
    ///
    /// # Errors
    ///
    /// A [`ErrorKind::Config`] error naming the limit, when one cannot work.
    ///
    /// ```
    /// let error = fexpr::Limits::default().memory_bytes(1 << 20).check().unwrap_err();
    /// assert_eq!(error.message, "Limits::memory_bytes is 1048576 bytes, below the 3670016 bytes (3.5 MiB) the sandbox's guest starts with: no evaluation could run");
    /// let error = fexpr::Limits::default().max_depth(1_000_000).check().unwrap_err();
    /// assert_eq!(error.message, "Limits::max_depth is 1000000, above its ceiling of 256");
    /// assert!(fexpr::Limits::default().max_depth(256).check().is_ok());
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        match self.problem() {
            Some((message, hint)) => Err(Error::new(ErrorKind::Config, message).with_hint(hint)),
            None => Ok(()),
        }
    }
}

/// A structured error: kind, message, where, and how to fix it; for a [`ErrorKind::Limit`]
/// error, which budget ([`LimitKind`]).
///
/// Messages never echo unbounded input: quoted source is cut to a few dozen characters.
///
/// In JSON, `limit` is written only when set: `{"kind", "message", "span", "hint"}` plus
/// `"limit": "max_calls"` for a limit error.
///
/// ```
/// use fexpr::{Error, ErrorKind, Span};
/// let e = Error::new(ErrorKind::UnknownName, "name `z` is not defined").at(Span::new(6, 7));
/// assert_eq!(e.kind, ErrorKind::UnknownName);
/// assert_eq!(e.span, Some(Span::new(6, 7)));
/// assert!(serde_json::to_value(&e).unwrap().get("limit").is_none());
/// let limit = Error::limit(fexpr::error::LimitKind::Calls, 256, 300);
/// assert_eq!(serde_json::to_value(&limit).unwrap()["limit"], "max_calls");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, thiserror::Error)]
pub struct Error {
    /// The category.
    pub kind: ErrorKind,
    /// A human- and model-readable description.
    pub message: String,
    /// The source bytes concerned, when there is a source.
    pub span: Option<Span>,
    /// A suggestion: the expected signature, the closest name, the limit to raise.
    pub hint: Option<String>,
    /// For a [`ErrorKind::Limit`] error, the budget that was hit (when it is one of
    /// [`LimitKind`]'s).
    #[serde(default)]
    pub limit: Option<LimitKind>,
}

/// Every field in a compact (binary) encoding, which has no field names to skip by (the
/// sandbox wire); `limit` only when set in a readable one (JSON).
impl Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let with_limit = self.limit.is_some() || !serializer.is_human_readable();
        let mut s = serializer.serialize_struct("Error", 4 + usize::from(with_limit))?;
        s.serialize_field("kind", &self.kind)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("span", &self.span)?;
        s.serialize_field("hint", &self.hint)?;
        if with_limit {
            s.serialize_field("limit", &self.limit)?;
        } else {
            s.skip_field("limit")?;
        }
        s.end()
    }
}

impl Error {
    /// An error of `kind` with `message`, no span and no hint.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            span: None,
            hint: None,
            limit: None,
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

    /// The same error, its hint led by "did you mean `x`?" when one of `candidates` is close
    /// to `name` (see [`closest`]): the one way every unknown name is answered.
    ///
    /// ```
    /// use fexpr::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::UnknownTool, "tool `ad` is not defined");
    /// let e = e.with_hint("signature: add(a, b)").suggest("ad", ["add", "multiply"]);
    /// assert_eq!(e.hint.as_deref(), Some("did you mean `add`? signature: add(a, b)"));
    /// ```
    pub fn suggest<'a>(self, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Error {
        self.suggest_as(name, candidates, str::to_string)
    }

    /// [`Error::suggest`], the name suggested shown as `written` writes it (a keyword argument
    /// as a call writes it: `**{"from": …}` for a key Python cannot name).
    pub fn suggest_as<'a>(
        mut self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
        written: impl Fn(&str) -> String,
    ) -> Error {
        if let Some(near) = closest(name, candidates) {
            let guess = format!("did you mean `{}`?", written(near));
            self.hint = Some(match self.hint.take() {
                Some(hint) => format!("{guess} {hint}"),
                None => guess,
            });
        }
        self
    }

    /// A [`ErrorKind::Limit`] error naming the budget, its value and what was asked for.
    ///
    /// ```
    /// use fexpr::error::{Error, LimitKind};
    /// let e = Error::limit(LimitKind::Calls, 256, 300);
    /// assert_eq!(e.message, "max_calls limit exceeded: 300 > 256");
    /// assert_eq!(e.hint.as_deref(), Some("raise Limits::max_calls if this input is legitimate"));
    /// assert_eq!(e.limit, Some(LimitKind::Calls));
    /// ```
    pub fn limit(kind: LimitKind, limit: impl fmt::Display, used: impl fmt::Display) -> Error {
        Error::limit_message(
            kind,
            format!("{} limit exceeded: {used} > {limit}", kind.field()),
        )
    }

    /// A [`ErrorKind::Limit`] error about `kind` with its own `message`, and the usual hint.
    pub fn limit_message(kind: LimitKind, message: impl Into<String>) -> Error {
        let mut e = Error::new(ErrorKind::Limit, message).with_hint(format!(
            "raise {} if this input is legitimate",
            kind.setting()
        ));
        e.limit = Some(kind);
        e
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

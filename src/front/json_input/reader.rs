//! The iterative JSON reader behind [`read`]: containers on an explicit stack, strings
//! decoded with their escapes, numbers and words, every limit charged as it goes.

use super::*;

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

pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) limits: &'a Limits,
    /// Bytes charged as the evaluator charges literals.
    pub(super) used: u64,
}

impl Reader<'_> {
    /// Read the whole text as one JSON value, within the limits (see [`read`]).
    //
    // Over 100 lines on purpose: the reader does not recurse, so opening a container, reading a
    // scalar and returning to the enclosing container are the steps of one loop over one
    // explicit stack (`stack`, the current `value` and its `count`); split into functions, each
    // would take and hand back all three. Scalars, keys and errors are methods of their own.
    pub(super) fn document(mut self) -> Result<Expr, Error> {
        // A call's arguments nest a container or two: those frames need no allocation.
        let mut stack: smallvec::SmallVec<[Frame; 2]> = smallvec::SmallVec::new();
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
pub(super) fn decode_marked(raw: &str, base: usize) -> Result<(String, Vec<(u32, u32)>), Error> {
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

//! The pre-parse scan: size, NUL bytes and a conservative nesting-depth bound, in one linear
//! pass with no recursion, so that no deep input ever reaches the (recursive) parser or the
//! recursive drop of its tree.
//!
//! The scan is a small tokenizer that follows `ruff_python_parser`'s lexer wherever the two must
//! agree: where strings, comments and numbers begin and end, and which words are keywords. Where it
//! cannot be exact it errs towards counting *more* depth, never less.
//!
//! # The estimate
//!
//! Brackets `(` `[` `{` open levels. Within each level, the tokens of the current comma-separated
//! segment that can add a level to the syntax tree are counted: operators (`+ - * / % @ & | ^ ~ < >
//! = ! . :` and their multi-character forms such as `**` or `//`, one count per token), the
//! keywords `not and or if else lambda await in is yield for async from as`, and an opening
//! bracket right after an operand (a call or subscript trailer such as `f()()` or `x[0][0]`).
//!
//! The estimate is the operators counted at the top level plus, for each open bracket, one plus
//! the operators counted in its current segment. A `,` starts a new segment, except in a level
//! that has seen `lambda` (whose parameters are separated by commas too) or `yield` (whose value
//! is a comma-separated list, so `yield a, yield b, ...` nests). A newline outside all
//! brackets starts a new logical line and so a new count. Any estimate above
//! [`Limits::max_depth`] is a [`ErrorKind::Limit`] error at the token that crossed it.
//!
//! Each counted token adds at most a few levels to ruff's tree, error-recovered trees included; a
//! property test checks that whatever passes the scan parses to a tree at most
//! `2 * max_depth + 6` deep (statements included, in module mode when indentation is bounded).
//!
//! f-strings and t-strings are rejected here as [`ErrorKind::Unsupported`]: they contain nested
//! expressions whose extent only a full f-string lexer can find, and they are never accepted
//! anyway.

use super::lex::{is_double_prefix, is_prefix, is_quote, string_end};
use crate::error::{Error, ErrorKind, LimitKind, Span};
use crate::limits::Limits;
use smallvec::SmallVec;

/// Keywords that can add a level to the tree. After `lambda` (whose parameters are separated by
/// commas) and `yield` (whose value is a comma-separated list) commas no longer reset a level.
const DEPTH_KEYWORDS: &[&[u8]] = &[
    b"not", b"and", b"or", b"if", b"else", b"lambda", b"await", b"in", b"is", b"yield", b"for",
    b"async", b"from", b"as",
];

/// Three-character operator tokens, as ruff's lexer munches them.
const OPERATORS_3: &[&[u8]] = &[b"**=", b"//=", b"<<=", b">>="];

/// Two-character operator tokens, as ruff's lexer munches them.
const OPERATORS_2: &[&[u8]] = &[
    b"==", b"!=", b"<=", b">=", b"<<", b">>", b"**", b"//", b"->", b":=", b"+=", b"-=", b"*=",
    b"/=", b"%=", b"|=", b"^=", b"&=", b"@=",
];

/// The UTF-8 byte order mark.
const BOM: &str = "\u{feff}";

/// Check what can be checked before parsing: the source size, NUL bytes, f-strings, and a
/// conservative upper bound on the nesting depth (see the module documentation).
///
/// Runs in time linear in `source.len()` and allocates at most `max_depth + 2` small frames.
/// Gives the escapes written in keyword argument names ([`KeywordEscape`]), for the parser.
pub(crate) fn precheck(source: &str, limits: &Limits) -> Result<Vec<KeywordEscape>, Error> {
    check_size(source, limits)?;
    if let Some(at) = source.bytes().position(|b| b == 0) {
        return Err(
            Error::new(ErrorKind::Syntax, "the source contains a NUL byte").at(span(at, at + 1)),
        );
    }
    let start = if source.starts_with(BOM) {
        BOM.len()
    } else {
        0
    };
    Scanner::new(source, start, limits.max_depth).run()
}

/// The source size ([`Limits::max_source_bytes`], and at most `u32::MAX`: spans are `u32`),
/// the scan's first check; the parser's fast path needs no other (see [`super::fast`]).
pub(crate) fn check_size(source: &str, limits: &Limits) -> Result<(), Error> {
    // Spans are `u32`; the parser cannot address more either.
    let max_bytes = limits
        .max_source_bytes
        .min(usize::try_from(u32::MAX).unwrap_or(usize::MAX));
    if source.len() > max_bytes {
        return Err(Error::limit(
            LimitKind::SourceBytes,
            limits.max_source_bytes,
            source.len(),
        ));
    }
    Ok(())
}

/// The largest number of indentation characters (space, tab, form feed) at the start of any
/// physical line. The nesting depth of indented blocks in a module is at most this.
pub(crate) fn max_indentation(source: &str) -> usize {
    let mut max = 0;
    let mut run = 0;
    let mut at_line_start = true;
    for b in source.bytes() {
        match b {
            b'\n' | b'\r' => {
                at_line_start = true;
                run = 0;
            }
            b' ' | b'\t' | b'\x0C' if at_line_start => {
                run += 1;
                max = usize::max(max, run);
            }
            _ => at_line_start = false,
        }
    }
    max
}

/// A span from `usize` offsets (the source length was checked to fit in `u32`).
fn span(start: usize, end: usize) -> Span {
    let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Span::new(clamp(start), clamp(end))
}

/// One bracket level (or the top level): its counted tokens in the current segment.
#[derive(Clone, Copy, Default)]
struct Level {
    /// The closing bracket that ends this level (`0` for the top level).
    closer: u8,
    /// Depth-adding tokens counted in the current comma-separated segment.
    ops: usize,
    /// Set by `lambda` and `yield`: commas no longer start a new segment in this level.
    pinned: bool,
}

/// The open levels, the first 16 without allocating (ordinary calls nest less).
type Levels = SmallVec<[Level; 16]>;

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    /// The first level is the top level and is never popped.
    levels: Levels,
    /// The current estimate: top-level ops plus, per open bracket, one plus its ops.
    depth: usize,
    /// Whether the previous token ends an operand, so that a following bracket is a trailer.
    after_operand: bool,
    /// Tokens no Python expression holds (see [`MAX_CERTAIN_ERRORS`]) and the first of them.
    errors: usize,
    first_error: Option<(usize, &'static str)>,
    /// The `\u` escapes written in keyword argument names, in order.
    escapes: Vec<KeywordEscape>,
    /// The end of the last name an escape was found in, and whether it is a keyword's.
    name: Option<(usize, bool)>,
}

/// A `\uXXXX` (or `\UXXXXXXXX`) escape written in the name of a keyword argument, outside any
/// string (`a\u00f1o_vehiculo=2024`): a model that copied the name from JSON-escaped tool
/// definitions. Python has no escapes in names; the name meant is the one decoded
/// (`año_vehiculo`), which the parser reads (spans still index the text as written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeywordEscape {
    /// Where the escape starts (its backslash).
    pub start: usize,
    /// Where it ends.
    pub end: usize,
    /// The character it stands for.
    pub char: char,
}

/// The escape at `at`: its end and the character, when it escapes a letter, a digit or `_`.
fn name_escape(bytes: &[u8], at: usize) -> Option<(usize, char)> {
    let digits = match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'\\'), Some(b'u')) => 4,
        (Some(b'\\'), Some(b'U')) => 8,
        _ => return None,
    };
    let hex = std::str::from_utf8(bytes.get(at + 2..at + 2 + digits)?).ok()?;
    let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
    (c.is_alphanumeric() || c == '_').then_some((at + 2 + digits, c))
}

/// The run of name characters and escapes around the escape at `at`: where it ends, and
/// whether it is a keyword argument's name (it follows `(` or `,` and `=`, not `==`, follows
/// it).
fn escaped_name(bytes: &[u8], at: usize) -> (usize, bool) {
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut start = at;
    while start > 0
        && bytes
            .get(start - 1)
            .is_some_and(|b| name_byte(*b) || *b == b'\\')
    {
        start -= 1;
    }
    let mut end = at;
    loop {
        match bytes.get(end) {
            Some(b) if name_byte(*b) => end += 1,
            Some(b'\\') => match name_escape(bytes, end) {
                Some((after, _)) => end = after,
                None => break,
            },
            _ => break,
        }
    }
    let before = bytes
        .get(..start)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|b| !b" \t\r\n".contains(b));
    let mut after = end;
    while matches!(bytes.get(after), Some(b' ' | b'\t')) {
        after += 1;
    }
    let keyword = matches!(before, Some(b'(' | b','))
        && bytes.get(after) == Some(&b'=')
        && bytes.get(after + 1) != Some(&b'=');
    (end, keyword)
}

/// How many tokens that no Python expression can hold (a closer that closes nothing open, a
/// backslash that does not end its line, `$`, `?`, a backtick) the scan lets through to the
/// parser. The parser recovers from each and reports them all, which for a megabyte of them
/// (`')]}' * 300000`, a million backslashes, thousands of markdown fences) costs far more
/// memory and time than the text: past this many, the scan refuses the input as a `Syntax`
/// error at the first one, the same natively and in the sandbox's guest.
pub(crate) const MAX_CERTAIN_ERRORS: usize = 1000;

impl<'a> Scanner<'a> {
    fn new(source: &'a str, start: usize, max_depth: usize) -> Scanner<'a> {
        let mut levels = Levels::new();
        levels.push(Level::default());
        Scanner {
            bytes: source.as_bytes(),
            pos: start,
            max_depth,
            levels,
            depth: 0,
            after_operand: false,
            errors: 0,
            first_error: None,
            escapes: Vec::new(),
            name: None,
        }
    }

    /// Note a token at `at` that no expression can hold (`what` names it).
    fn certain_error(&mut self, at: usize, what: &'static str) -> Result<(), Error> {
        self.errors += 1;
        let (first, what) = *self.first_error.get_or_insert((at, what));
        if self.errors > MAX_CERTAIN_ERRORS {
            let end = self.bytes.len().min(first + 1);
            return Err(Error::new(
                ErrorKind::Syntax,
                format!(
                    "the text is not an expression: it holds more than {MAX_CERTAIN_ERRORS} \
                     tokens that no expression can hold (the first: {what})"
                ),
            )
            .at(span(first, end)));
        }
        Ok(())
    }

    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    /// Scan the whole source: one step per token, each kind of token handled by its own method
    /// below (the depth estimate kept as the parser would nest), stopping at the first limit.
    /// The escapes in keyword names found on the way.
    fn run(mut self) -> Result<Vec<KeywordEscape>, Error> {
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\x0C' => self.pos += 1,
                b'\n' | b'\r' => self.newline(),
                b'\\' => self.backslash()?,
                b'#' => {
                    while !matches!(self.byte(self.pos), b'\n' | b'\r' | 0) {
                        self.pos += 1;
                    }
                }
                b'\'' | b'"' => {
                    self.pos = string_end(self.bytes, self.pos).0;
                    self.after_operand = true;
                }
                b'0'..=b'9' => {
                    self.pos = skip_number(self.bytes, self.pos);
                    self.after_operand = true;
                }
                b'.' if self.byte(self.pos + 1).is_ascii_digit() => {
                    self.pos = skip_number(self.bytes, self.pos);
                    self.after_operand = true;
                }
                b'.' if self.byte(self.pos + 1) == b'.' && self.byte(self.pos + 2) == b'.' => {
                    // `...` is one token, an operand.
                    self.pos += 3;
                    self.after_operand = true;
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word()?,
                b'(' | b'[' | b'{' => self.open(b)?,
                b')' | b']' | b'}' => self.close(b)?,
                b',' => self.comma(),
                b';' => {
                    self.pos += 1;
                    self.after_operand = false;
                }
                b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^' | b'~' | b'<'
                | b'>' | b'=' | b'!' | b':' | b'.' => {
                    let len = operator_len(self.bytes.get(self.pos..).unwrap_or_default());
                    self.count(self.pos, len)?;
                    self.pos += len;
                    self.after_operand = false;
                }
                _ if b.is_ascii() => {
                    // `$`, `?`, a backtick, control characters: the lexer reports them; treating
                    // them as operands can only over-count.
                    if matches!(b, b'$' | b'?' | b'`') {
                        self.certain_error(self.pos, "a character no expression holds")?;
                    }
                    self.pos += 1;
                    self.after_operand = true;
                }
                _ => {
                    // Non-ASCII: skip the whole character; an identifier part or an error token.
                    self.pos += 1;
                    while self.byte(self.pos) & 0xC0 == 0x80 {
                        self.pos += 1;
                    }
                    self.after_operand = true;
                }
            }
        }
        Ok(self.escapes)
    }

    /// A line break: at the top level, a new logical line, where the parser starts afresh.
    fn newline(&mut self) {
        self.pos += 1;
        if self.levels.len() == 1 {
            // A new logical line: the parser starts afresh (or stops).
            self.depth = 0;
            if let Some(top) = self.levels.first_mut() {
                *top = Level::default();
            }
            self.after_operand = false;
        }
    }

    /// A backslash: a line continuation, an escape in a keyword argument's name (see
    /// [`KeywordEscape`]), or a stray backslash (which the lexer skips).
    fn backslash(&mut self) -> Result<(), Error> {
        if let Some((end, char)) = name_escape(self.bytes, self.pos) {
            // The name around it is looked at once, however many escapes it holds.
            let (name_end, keyword) = match self.name {
                Some((name_end, keyword)) if self.pos < name_end => (name_end, keyword),
                _ => escaped_name(self.bytes, self.pos),
            };
            self.name = Some((name_end, keyword));
            if keyword {
                self.escapes.push(KeywordEscape {
                    start: self.pos,
                    end,
                    char,
                });
                self.pos = end;
                self.after_operand = true;
                return Ok(());
            }
        }
        self.pos += 1;
        if self.byte(self.pos) == b'\r' {
            self.pos += 1;
            if self.byte(self.pos) == b'\n' {
                self.pos += 1;
            }
        } else if self.byte(self.pos) == b'\n' {
            self.pos += 1;
        } else {
            self.certain_error(self.pos - 1, "a backslash that does not end its line")?;
        }
        Ok(())
    }

    /// An opening bracket `b`: a new level, one deeper (a call or subscript after an operand
    /// counts the operator too).
    fn open(&mut self, b: u8) -> Result<(), Error> {
        if self.after_operand {
            self.count(self.pos, 1)?;
        }
        let closer = match b {
            b'(' => b')',
            b'[' => b']',
            _ => b'}',
        };
        self.levels.push(Level {
            closer,
            ops: 0,
            pinned: false,
        });
        self.depth += 1;
        self.check(self.pos, 1)?;
        self.pos += 1;
        self.after_operand = false;
        Ok(())
    }

    /// A closing bracket `b`. A closer that does not match is left for the parser to report;
    /// keeping the level open can only over-count.
    fn close(&mut self, b: u8) -> Result<(), Error> {
        if self.levels.len() > 1 && self.levels.last().map(|l| l.closer) == Some(b) {
            if let Some(level) = self.levels.pop() {
                self.depth = self.depth.saturating_sub(1 + level.ops);
            }
        } else {
            self.certain_error(self.pos, "a closing bracket that closes nothing open")?;
        }
        self.pos += 1;
        self.after_operand = true;
        Ok(())
    }

    /// A comma: the operators of the element before it no longer nest (unless pinned).
    fn comma(&mut self) {
        if let Some(level) = self.levels.last_mut() {
            if !level.pinned {
                self.depth = self.depth.saturating_sub(level.ops);
                level.ops = 0;
            }
        }
        self.pos += 1;
        self.after_operand = false;
    }

    /// An ASCII word: a string prefix followed by a quote, a keyword, or a name.
    fn word(&mut self) -> Result<(), Error> {
        let start = self.pos;
        let first = self.byte(start);
        let second = self.byte(start + 1);
        let prefix_len = if is_prefix(first) && is_quote(second) {
            1
        } else if is_double_prefix(first, second) && is_quote(self.byte(start + 2)) {
            2
        } else {
            0
        };
        if prefix_len > 0 {
            let quote = start + prefix_len;
            let end = string_end(self.bytes, quote).0;
            // For a one-character prefix `second` is the quote, so these tests see the prefix only.
            if is_interpolated(first) || is_interpolated(second) {
                let what = if is_f(first) || is_f(second) {
                    "f-strings are not accepted"
                } else {
                    "t-strings are not accepted"
                };
                return Err(Error::new(ErrorKind::Unsupported, what)
                    .at(span(start, end))
                    .with_hint("build the text with `+` or pass the parts as arguments"));
            }
            self.pos = end;
            self.after_operand = true;
            return Ok(());
        }
        let mut end = start;
        while matches!(self.byte(end), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            end += 1;
        }
        let word = self.bytes.get(start..end).unwrap_or_default();
        self.pos = end;
        if DEPTH_KEYWORDS.contains(&word) {
            if word == b"lambda" || word == b"yield" {
                if let Some(level) = self.levels.last_mut() {
                    level.pinned = true;
                }
            }
            self.count(start, end - start)?;
            self.after_operand = false;
        } else {
            self.after_operand = true;
        }
        Ok(())
    }

    /// Count one depth-adding token at `start..start + len` in the current segment.
    fn count(&mut self, start: usize, len: usize) -> Result<(), Error> {
        if let Some(level) = self.levels.last_mut() {
            level.ops += 1;
        }
        self.depth += 1;
        self.check(start, len)
    }

    fn check(&self, start: usize, len: usize) -> Result<(), Error> {
        if self.depth > self.max_depth {
            return Err(Error::limit(LimitKind::Depth, self.max_depth, self.depth)
                .at(span(start, start + len)));
        }
        Ok(())
    }
}

fn is_interpolated(b: u8) -> bool {
    matches!(b.to_ascii_lowercase(), b'f' | b't')
}

fn is_f(b: u8) -> bool {
    b.eq_ignore_ascii_case(&b'f')
}

/// The length of the operator token at the start of `rest` (at least 1).
fn operator_len(rest: &[u8]) -> usize {
    if OPERATORS_3.iter().any(|op| rest.starts_with(op)) {
        3
    } else if OPERATORS_2.iter().any(|op| rest.starts_with(op)) {
        2
    } else {
        1
    }
}

/// The end of the number literal starting at `start` (a digit, or `.` before a digit), as ruff's
/// lexer finds it. Letters after it start a new token (`1if` is `1` then `if`).
fn skip_number(bytes: &[u8], start: usize) -> usize {
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let run = |mut i: usize, digit: fn(u8) -> bool| loop {
        // A digit, or an underscore between digits.
        if digit(at(i)) || (at(i) == b'_' && digit(at(i + 1))) {
            i += 1;
        } else {
            return i;
        }
    };
    let first = at(start);
    let mut i = start + 1;
    if first == b'0' {
        let radix: Option<fn(u8) -> bool> = match at(i).to_ascii_lowercase() {
            b'x' => Some(|b: u8| b.is_ascii_hexdigit()),
            b'o' => Some(|b: u8| matches!(b, b'0'..=b'7')),
            b'b' => Some(|b: u8| matches!(b, b'0' | b'1')),
            _ => None,
        };
        if let Some(digit) = radix {
            return run(i + 1, digit);
        }
    }
    let decimal = |b: u8| b.is_ascii_digit();
    let fraction = if first == b'.' {
        true
    } else {
        i = run(i, decimal);
        if at(i) == b'.' {
            i += 1;
            true
        } else {
            false
        }
    };
    if fraction {
        if at(i) == b'_' {
            // The lexer reports `1._` and resumes after the underscore.
            return i + 1;
        }
        i = run(i, decimal);
    }
    let exponent = matches!(at(i), b'e' | b'E')
        && (at(i + 1).is_ascii_digit()
            || (matches!(at(i + 1), b'+' | b'-') && at(i + 2).is_ascii_digit()));
    if exponent {
        i += 1;
        if matches!(at(i), b'+' | b'-') {
            i += 1;
        }
        i = run(i, decimal);
    }
    if matches!(at(i), b'j' | b'J') {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    #[test]
    fn levels_keep_their_order_past_the_inline_ones() {
        let mut levels = super::Levels::new();
        let closers: Vec<u8> = (0..40u8).collect();
        for &closer in &closers {
            levels.push(super::Level {
                closer,
                ..Default::default()
            });
            assert_eq!(levels.last().map(|l| l.closer), Some(closer));
        }
        assert_eq!(levels.len(), 40);
        assert_eq!(levels.first_mut().map(|l| l.closer), Some(0));
        for &closer in closers.iter().rev() {
            assert_eq!(levels.last_mut().map(|l| l.closer), Some(closer));
            assert_eq!(levels.pop().map(|l| l.closer), Some(closer));
        }
        assert_eq!(levels.len(), 0);
        assert!(levels.pop().is_none() && levels.last().is_none());
    }

    use super::*;

    fn limits(max_depth: usize) -> Limits {
        Limits {
            max_depth,
            ..Limits::default()
        }
    }

    /// The error of `precheck`, which must fail.
    fn fails(source: &str, limits: &Limits) -> Error {
        match precheck(source, limits) {
            Ok(_) => panic!("precheck accepted {:?}", clip(source)),
            Err(e) => e,
        }
    }

    fn clip(s: &str) -> String {
        crate::error::clip(s, 60)
    }

    fn assert_depth_error(source: &str, limits: &Limits, at: usize, len: usize) {
        let e = fails(source, limits);
        assert_eq!(e.kind, ErrorKind::Limit, "{e}");
        assert!(e.message.starts_with("max_depth limit exceeded"), "{e}");
        assert_eq!(e.span, Some(span(at, at + len)), "{e}");
    }

    const N: usize = 100_000;

    #[test]
    fn source_size_edge() {
        let limits = Limits {
            max_source_bytes: 10,
            ..Limits::default()
        };
        assert!(precheck("1234567890", &limits).is_ok());
        let e = fails("12345678901", &limits);
        assert_eq!(e.kind, ErrorKind::Limit);
        assert!(e.message.contains("max_source_bytes"), "{e}");
        assert!(e.message.contains("11 > 10"), "{e}");
    }

    #[test]
    fn nul_byte_is_a_syntax_error() {
        let e = fails("f(1)\0", &Limits::default());
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert_eq!(e.span, Some(Span::new(4, 5)));
        // Inside a string too: the lexer would take it, the scan does not.
        let e = fails("'a\0'", &Limits::default());
        assert_eq!(e.span, Some(Span::new(2, 3)));
    }

    #[test]
    fn depth_edge_for_unary_chains() {
        let l = limits(10);
        assert!(precheck(&format!("{}1", "-".repeat(10)), &l).is_ok());
        assert_depth_error(&format!("{}1", "-".repeat(11)), &l, 10, 1);
        assert!(precheck(&format!("{}x", "not ".repeat(10)), &l).is_ok());
        assert_depth_error(&format!("{}x", "not ".repeat(11)), &l, 40, 3);
    }

    #[test]
    fn depth_edge_for_brackets() {
        let l = limits(10);
        for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
            let ok = format!("{}1{}", open.repeat(10), close.repeat(10));
            assert!(precheck(&ok, &l).is_ok(), "{ok}");
            let deep = format!("{}1{}", open.repeat(11), close.repeat(11));
            assert_depth_error(&deep, &l, 10, 1);
        }
    }

    #[test]
    fn depth_edge_for_binary_chains_and_trailers() {
        let l = limits(10);
        let chain = |n: usize| format!("1{}", "+1".repeat(n));
        assert!(precheck(&chain(10), &l).is_ok());
        assert_depth_error(&chain(11), &l, 21, 1);
        // `f()` counts the trailer at the top level, then the open bracket: 2 while open.
        let calls = |n: usize| format!("f{}", "()".repeat(n));
        assert!(precheck(&calls(9), &l).is_ok());
        assert_depth_error(&calls(10), &l, 19, 1);
        // Multi-character operators count once.
        assert!(precheck(&format!("2{}", " ** 2".repeat(10)), &l).is_ok());
        assert_depth_error(&format!("2{}", " // 2".repeat(11)), &l, 52, 2);
    }

    #[test]
    fn rejects_deep_inputs_quickly() {
        let l = Limits::default();
        let started = std::time::Instant::now();
        let inputs = [
            "(".repeat(N),
            "[".repeat(N),
            "{".repeat(N),
            format!("{}1{}", "(".repeat(N), ")".repeat(N)),
            format!("1{}", "+1".repeat(N)),
            format!("{}1", "-".repeat(N)),
            format!("{}x", "not ".repeat(N)),
            format!("a{}", ".b".repeat(N)),
            format!("f{}", "()".repeat(N)),
            format!("x{}", "[0]".repeat(N)),
            format!("{}0", "lambda a, b: ".repeat(N / 2)),
            format!("{}0", "lambda: ".repeat(N)),
            format!("{}x", "await ".repeat(N)),
            format!("{}1", "x if y else ".repeat(N / 2)),
            format!("{}1", "yield a, ".repeat(N)),
            format!("[{}1]", "yield a, ".repeat(N)),
            "(]".repeat(N),
            format!("[{}]", "(1,".repeat(N)),
        ];
        for input in &inputs {
            let e = fails(input, &l);
            assert_eq!(e.kind, ErrorKind::Limit, "{}: {e}", clip(input));
            assert!(e.message.starts_with("max_depth"), "{}: {e}", clip(input));
        }
        // A guard against quadratic or hanging scans, not a speed claim: generous for a loaded
        // machine running a debug build.
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }

    #[test]
    fn accepts_flat_and_ordinary_inputs() {
        let l = Limits::default();
        let negatives: Vec<String> = (1..=5000).map(|i| format!("-{i}")).collect();
        let list = format!("[{}]", negatives.join(", "));
        assert!(precheck(&list, &l).is_ok());
        let inputs = [
            "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))".to_string(),
            "np.array([[1.5, -2.5e-3], [3, 4]], dtype='float64')".to_string(),
            format!("f('{}')", "((([[[{{{".repeat(N)),
            format!("f(\"\"\"{}\"\"\")", "(\n[\n{".repeat(N)),
            format!("f(r'\\'{}')", "(".repeat(N)),
            format!("f(b'{}')", "(".repeat(N)),
            format!("f(x)  # {}", "(".repeat(N)),
            format!("f({})", "'a' 'b' ".repeat(N)),
            format!("f({})", "1, ".repeat(N)),
            format!("{{{}}}", "'k': -1, ".repeat(N)),
        ];
        for input in &inputs {
            assert!(precheck(input, &l).is_ok(), "{}", clip(input));
        }
    }

    #[test]
    fn top_level_newlines_start_a_new_count() {
        let l = limits(10);
        let lines = "x = -a + b + c\n".repeat(100);
        assert!(precheck(&lines, &l).is_ok());
        // Inside brackets a newline continues the line.
        let open = format!("(\n{}", "1 +\n".repeat(10));
        assert_depth_error(&open, &l, 40, 1);
        // A backslash continuation continues it too.
        let continued = "1 + \\\n".repeat(11);
        assert_depth_error(&continued, &l, 62, 1);
    }

    #[test]
    fn strings_end_where_the_lexer_ends_them() {
        let l = limits(10);
        let deep = "(".repeat(11);
        // An escaped quote does not end a string; an escaped backslash does not escape.
        assert!(precheck(&format!("'\\'{deep}'"), &l).is_ok());
        // (A bracket right after a string is a trailer: it counts twice.)
        assert_depth_error(&format!("'\\\\'{deep}"), &l, 13, 1);
        // A single-quoted string ends (unterminated) at a newline; brackets after it count.
        assert_depth_error(&format!("('abc\n{deep}"), &l, 14, 1);
        // An escaped newline continues it, CRLF too.
        assert!(precheck(&format!("'abc\\\r\n{deep}'"), &l).is_ok());
        // Triple-quoted strings span lines and end at three unescaped quotes.
        assert!(precheck(&format!("'''a\n'' \\''' {deep}'''"), &l).is_ok());
        assert_depth_error(&format!("'''a'''{deep}"), &l, 16, 1);
        // An unterminated string runs to the end.
        assert!(precheck(&format!("'''{deep}"), &l).is_ok());
        // A name before a quote is not a prefix unless it is one: `xf'..'` is a name and a
        // plain string (a syntax error for the parser, not an f-string).
        assert!(precheck("xf'{x}'", &l).is_ok());
        assert!(precheck("Rb'{x}' + U'x' + bR'\\'' + br''", &l).is_ok());
    }

    #[test]
    fn comments_are_skipped_to_the_end_of_line() {
        let l = limits(10);
        let deep = "(".repeat(11);
        assert!(precheck(&format!("f(x) # {deep}"), &l).is_ok());
        assert_depth_error(&format!("f(x) # c\r{deep}"), &l, 19, 1);
    }

    #[test]
    fn numbers_end_where_the_lexer_ends_them() {
        let l = limits(2);
        // `1if` is `1` then the keyword `if`; `1e5else` is `1e5` then `else`.
        assert_depth_error("1if 1e5else 0 if 1", &l, 14, 2);
        // `0x1f` is one hex literal; `1_0.5e-3j` one complex literal.
        assert!(precheck("0x1f + 1_0.5e-3j", &l).is_ok());
        // `1.` is a float, and the dots after it are attribute access.
        assert_depth_error("1..a.b.c", &l, 6, 1);
        // `...` is one operand.
        assert!(precheck("f(...)", &l).is_ok());
    }

    #[test]
    fn mismatched_closers_do_not_close_levels() {
        let l = limits(10);
        // `]` does not close `(` but ends an operand, so the next `(` is a trailer too.
        assert_depth_error(&"(]".repeat(11), &l, 10, 1);
        // Stray closers with nothing open are ignored.
        assert!(precheck(&")]}".repeat(100), &l).is_ok());
    }

    #[test]
    fn commas_reset_the_segment_except_after_lambda_and_yield() {
        let l = limits(4);
        assert!(precheck(&format!("[{}]", "-1, ".repeat(100)), &l).is_ok());
        assert!(precheck(&format!("f({})", "a=-1, ".repeat(100)), &l).is_ok());
        let e = fails(&format!("[lambda a, b: {}0]", "-1, ".repeat(10)), &l);
        assert_eq!(e.kind, ErrorKind::Limit);
        // The parser's recovery nests `yield a, yield b, ...` (a yield's value is a list).
        let e = fails(&format!("[{}0]", "yield a, ".repeat(10)), &l);
        assert_eq!(e.kind, ErrorKind::Limit);
    }

    #[test]
    fn f_and_t_strings_are_rejected() {
        let l = Limits::default();
        for (source, end) in [
            ("f'{x}'", 6),
            ("F\"{x}\"", 6),
            ("rf'{x}'", 7),
            ("fR'{x}'", 7),
            ("t'{x}'", 6),
            ("Rt'''{x}'''", 11),
            ("f'{x}\n", 5),
        ] {
            let e = fails(source, &l);
            assert_eq!(e.kind, ErrorKind::Unsupported, "{source}");
            assert_eq!(e.span, Some(span(0, end)), "{source}");
            let word = if source.to_ascii_lowercase().contains('f') {
                "f-strings"
            } else {
                "t-strings"
            };
            assert!(e.message.starts_with(word), "{source}: {e}");
        }
        let e = fails("g(1, f'{x}')", &l);
        assert_eq!(e.span, Some(Span::new(5, 11)));
    }

    /// The depth of ruff's tree (statements and expressions), error-recovered parts included.
    fn ruff_tree_depth(source: &str, mode: ruff_python_parser::Mode) -> usize {
        use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
        struct Meter {
            depth: usize,
            max: usize,
        }
        impl<'a> Visitor<'a> for Meter {
            fn visit_expr(&mut self, expr: &'a ruff_python_ast::Expr) {
                self.depth += 1;
                self.max = self.max.max(self.depth);
                walk_expr(self, expr);
                self.depth -= 1;
            }
            fn visit_stmt(&mut self, stmt: &'a ruff_python_ast::Stmt) {
                self.depth += 1;
                self.max = self.max.max(self.depth);
                walk_stmt(self, stmt);
                self.depth -= 1;
            }
        }
        let options = ruff_python_parser::ParseOptions::from(mode);
        let parsed = ruff_python_parser::parse_unchecked(source, options);
        let mut meter = Meter { depth: 0, max: 0 };
        match parsed.syntax() {
            ruff_python_ast::Mod::Module(module) => {
                module.body.iter().for_each(|s| meter.visit_stmt(s));
            }
            ruff_python_ast::Mod::Expression(expr) => meter.visit_expr(&expr.body),
        }
        meter.max
    }

    /// Fragments that stress the scan: every counted token, keywords where the parser's error
    /// recovery turns them into names, strings of each kind, comments, newlines, indentation.
    const FRAGMENTS: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "f",
        "x",
        "1",
        "1.",
        "1e5",
        "0x",
        "1j",
        "_",
        "'s'",
        "b'x'",
        "\"\"\"",
        "'",
        "f'{",
        "+",
        "-",
        "*",
        "**",
        "~",
        "@",
        "<",
        "=",
        ":=",
        ":",
        ".",
        "...",
        ",",
        ";",
        "$",
        "é",
        " ",
        "\n",
        "\n ",
        "\n  ",
        "\n\t",
        "\\\n",
        "#c\n",
        "not ",
        " and ",
        " if ",
        " else ",
        " for ",
        " in ",
        " is ",
        "lambda a, b: ",
        "lambda: ",
        "lambda a=(",
        "yield ",
        "yield a, ",
        "yield from ",
        "await ",
        "async ",
        "def ",
        "class ",
        "return ",
        "del ",
        "if ",
        "with a, b:\n ",
        "match x:\n case ",
        "case [",
        "@d\n",
        "x[",
        "f(",
        "a, ",
        "*a, ",
        "**a, ",
        "x.y",
        "x[a, b:c, ",
        "{a: ",
        "a, b = ",
        "not a, ",
        "f(*a, **b, ",
        "is[",
        "for(",
        "if[",
        "not(",
        "in{",
        "lambda[",
        "yield(",
        "else[0]",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Whatever passes the scan parses (even with errors) to a tree not much deeper than
        /// `max_depth`: the bound the scan exists to give.
        #[test]
        fn the_scan_bounds_the_parsers_tree(
            fragments in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..80),
            max_depth in 2usize..12,
        ) {
            let source = fragments.concat();
            if precheck(&source, &limits(max_depth)).is_ok() {
                let bound = 2 * max_depth + 6;
                let depth = ruff_tree_depth(&source, ruff_python_parser::Mode::Expression);
                proptest::prop_assert!(depth <= bound, "expression depth {} in {:?}", depth, source);
                if max_indentation(&source) <= max_depth {
                    let depth = ruff_tree_depth(&source, ruff_python_parser::Mode::Module);
                    proptest::prop_assert!(depth <= bound, "module depth {} in {:?}", depth, source);
                }
            }
        }
    }

    #[test]
    fn bom_is_skipped() {
        let l = limits(1);
        assert!(precheck("\u{feff}(1)", &l).is_ok());
    }

    #[test]
    fn indentation_is_measured_per_line() {
        assert_eq!(max_indentation("f(1)"), 0);
        assert_eq!(max_indentation("if x:\n    if y:\n\t\t  z\n"), 4);
        assert_eq!(max_indentation("a\r\n   b"), 3);
        assert_eq!(max_indentation("a   b"), 0);
    }
}

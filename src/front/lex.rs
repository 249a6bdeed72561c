//! The lexical reading of model text: what is *data* — a string (any quote style, prefixed,
//! triple-quoted, unterminated), a comment, inline code, a model format's own quoted value
//! (Gemma 4's `<|"|>…<|"|>`, FunctionGemma's `<escape>…<escape>`) — and what is reasoning,
//! decided before any reader looks for markup. A marker of any format inside data or reasoning
//! never starts a call: the model-format readers ([`super::formats`]), the markup cutter
//! (`front::markup`) and the stream all step over data with [`data_end`], and over reasoning
//! with `reasoning_at` and `opened_by_template`.
//!
//! Model text mixes prose, code and markup, so a quote is read as Python reads it where it may
//! open a string, and as prose otherwise: a quote right after a word (`don't`, `users'`, `5"`)
//! is an apostrophe, unless the word is a string prefix (`f"…"`, `rb'…'`); a `#` right after a
//! word (`C#`, `&#39;`) opens no comment. A single-quoted string ends at its line's end, so an
//! apostrophe read as a quote holds at most the rest of its line.
//!
//! Every function looks forward from where it is asked (and at most three bytes back), so a
//! reader that moves forward through the text stays linear.
//!
//! ```
//! use fexpr::front::lex::data_end;
//! let text = "search(query='<tool_call>x</tool_call>')  # then <tool_call>";
//! assert_eq!(data_end(text.as_bytes(), 13), Some(39)); // the string
//! assert_eq!(data_end(text.as_bytes(), 42), Some(text.len())); // the comment
//! assert_eq!(data_end(b"Let's go", 3), None); // an apostrophe
//! ```

use crate::error::Span;
use crate::front::formats::reasoning::{Marker, MARKERS};
use crate::syntax::lex::{
    continues_word, dotted_ident_end, is_ident_start, is_prefix_word, string_end,
};
use crate::syntax::PYTHON_KEYWORDS;

/// Gemma 4's string delimiter.
const GEMMA4_QUOTE: &str = "<|\"|>";
/// FunctionGemma's string delimiter.
const ESCAPE: &str = "<escape>";
/// How far back (or, for a line's first word, forward) a decision looks, in bytes: bounded, so
/// that a reader moving forward stays linear.
const LOOK: usize = 256;
/// The longest inline code looked for, in bytes.
const MAX_INLINE_CODE: usize = 4096;

/// Where the data that starts at `i` ends (exclusive), or `None` when no data starts there: a
/// string, a comment, inline code or a format's quoted value (see the [module docs](self)).
pub fn data_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'\'' | b'"' => opens_string(b, i).then(|| string_end(b, i).0.max(i + 1)),
        b'#' => opens_comment(b, i).then(|| line_end(b, i)),
        b'`' => inline_code_end(b, i),
        b'<' => [GEMMA4_QUOTE, ESCAPE].iter().find_map(|q| {
            b.get(i..)?
                .starts_with(q.as_bytes())
                .then(|| find(b, i + q.len(), q.as_bytes()).map_or(b.len(), |p| p + q.len()))
        }),
        _ => None,
    }
}

/// Whether the quote at `i` opens a string: not after a backslash, nor right after a word
/// that is not a string prefix (an apostrophe: `don't`, `users'`).
fn opens_string(b: &[u8], i: usize) -> bool {
    if i > 0 && b.get(i - 1) == Some(&b'\\') {
        return false;
    }
    // The word right before the quote, up to three bytes back.
    let mut w = i;
    while i - w < 3 && w > 0 && b.get(w - 1).copied().is_some_and(continues_word) {
        w -= 1;
    }
    if w == i {
        return true;
    }
    let whole = w == 0 || !b.get(w - 1).copied().is_some_and(continues_word);
    whole && is_prefix_word(b.get(w..i).unwrap_or_default())
}

/// Whether the `#` at `i` opens a comment as Python's would: not right after a word (`C#`) or
/// `&` (`&#39;`), and where prose would not write one (`Step #1`): first on its line, after a
/// closing bracket or quote, or followed by a blank.
fn opens_comment(b: &[u8], i: usize) -> bool {
    if i > 0
        && b.get(i - 1)
            .is_some_and(|p| continues_word(*p) || *p == b'&')
    {
        return false;
    }
    let before = b
        .get(i.saturating_sub(LOOK)..i)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|c| !matches!(c, b' ' | b'\t'));
    matches!(
        before,
        None | Some(b'\n' | b')' | b']' | b'}' | b'\'' | b'"')
    ) || b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace())
}

/// The end of the inline code (a run of one or two backticks, or a longer one not opening its
/// line) starting at `i`, closed by the same run on the same line; `None` when it does not
/// close there (a lone backtick is text) or the run is a fence.
fn inline_code_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && b.get(i - 1) == Some(&b'`') {
        return None;
    }
    let run = b.get(i..)?.iter().take_while(|c| **c == b'`').count();
    // Looked at a bounded stretch back (a long run of blanks counts as the line's start).
    let line_start = b
        .get(i.saturating_sub(LOOK)..i)?
        .iter()
        .rev()
        .find(|c| !matches!(c, b' ' | b'\t'))
        .is_none_or(|c| *c == b'\n');
    if run >= 3 && line_start {
        return None;
    }
    // Inline code is short: its close is looked for within a bounded stretch of its line.
    let stop = (i + run + MAX_INLINE_CODE).min(b.len());
    let mut j = i + run;
    while j < stop {
        match b.get(j) {
            Some(b'`') => {
                let close = b.get(j..stop)?.iter().take_while(|c| **c == b'`').count();
                if close == run {
                    return Some(j + run);
                }
                j += close;
            }
            Some(b'\n') | None => return None,
            Some(_) => j += 1,
        }
    }
    None
}

/// The `\n` ending the line that holds `i` (or the end of the text).
fn line_end(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .and_then(|rest| rest.iter().position(|c| *c == b'\n'))
        .map_or(b.len(), |p| i + p)
}

/// The first `pattern` in `b` at or after `from`.
fn find(b: &[u8], from: usize, pattern: &[u8]) -> Option<usize> {
    let rest = b.get(from..)?;
    if pattern.is_empty() || rest.len() < pattern.len() {
        return None;
    }
    rest.windows(pattern.len())
        .position(|w| w == pattern)
        .map(|p| from + p)
}

/// The reasoning markers a reader steps over: every marker but those opening with one of
/// `except` (the ones a reader reads itself).
pub(crate) fn markers(except: &[&str]) -> Vec<&'static Marker> {
    MARKERS
        .iter()
        .filter(|m| !except.contains(&m.open))
        .collect()
}

/// The reasoning block that opens at `i` with one of `markers`: it runs to the first of its
/// closing markers (a closing marker is one wherever it stands: reasoning holds no strings),
/// or, left open, to the first of `ends` after its opening marker, or to the end of the text.
pub(crate) fn reasoning_at(
    text: &str,
    i: usize,
    markers: &[&'static Marker],
    ends: &[&str],
) -> Option<Span> {
    let rest = text.get(i..)?;
    if !matches!(rest.as_bytes().first(), Some(b'<' | b'[' | 0xE2)) {
        return None;
    }
    let marker = markers.iter().find(|m| rest.starts_with(m.open))?;
    let body = i + marker.open.len();
    let first = |patterns: &[&str]| {
        patterns
            .iter()
            .filter_map(|p| text.get(body..)?.find(p).map(|at| (body + at, p.len())))
            .min()
    };
    let end = match first(marker.closes) {
        Some((at, len)) => at + len,
        None => first(ends).map_or(text.len(), |(at, _)| at),
    };
    Some(span(i, end))
}

/// The block the chat template opened, in `text[from..to]`: when the first reasoning marker
/// (of `markers`) outside data is a closing one whose opening marker a template writes in the
/// prompt (Qwen3, DeepSeek R1: `…</think>`), from `from` to that marker's end.
pub(crate) fn opened_by_template(
    text: &str,
    from: usize,
    to: usize,
    markers: &[&'static Marker],
) -> Option<Span> {
    let b = text.as_bytes();
    let to = to.min(b.len());
    // Most texts hold no closing marker at all, and take no scan.
    let closes = || {
        markers
            .iter()
            .filter(|m| m.template_opened)
            .flat_map(|m| m.closes.iter())
    };
    let piece = text.get(from..to)?;
    // Every closing marker holds a `/` or a `|`: one pass rules most texts out.
    if !piece.bytes().any(|c| c == b'/' || c == b'|') || !closes().any(|c| piece.contains(c)) {
        return None;
    }
    let mut i = from;
    while i < to {
        // Reasoning is prose: a quote left open on its line there is an apostrophe or a
        // quotation mark, not a string that would hide the closing marker.
        let open_quote = matches!(b.get(i), Some(b'\'' | b'"')) && {
            let triple = b.get(i + 1) == b.get(i) && b.get(i + 2) == b.get(i);
            !triple && !string_end(b, i).1
        };
        if let Some(end) = data_end(b, i).filter(|_| !open_quote) {
            i = end.max(i + 1);
            continue;
        }
        let rest = text.get(i..to).unwrap_or_default();
        if matches!(b.get(i), Some(b'<' | b'[' | 0xE2)) {
            if markers.iter().any(|m| rest.starts_with(m.open)) {
                return None;
            }
            if let Some(close) = closes().find(|c| rest.starts_with(**c)) {
                return Some(span(from, i + close.len()));
            }
        }
        i += 1;
    }
    None
}

/// Whether the line whose first non-blank byte is at `i` starts like code, as the unit reader
/// decides where brackets carry a line: a bracket, a quote, a decorator, a keyword, or a
/// (dotted) name followed at once by `(`, `[`, `.` or `:`, or by `=`; `None` when the bytes that
/// decide it have not arrived.
fn starts_code(b: &[u8], i: usize) -> Option<bool> {
    let c = *b.get(i)?;
    if matches!(c, b'[' | b'(' | b'{' | b'@' | b'"' | b'\'') {
        return Some(true);
    }
    if !is_ident_start(c) {
        return Some(false);
    }
    // A name longer than any a line of code starts with is prose (and bounds the look).
    let near = b.get(..(i + LOOK).min(b.len()))?;
    let end = dotted_ident_end(near, i);
    if end - i >= LOOK - 1 {
        return Some(false);
    }
    let after = *b.get(end)?;
    let word = std::str::from_utf8(b.get(i..end)?).unwrap_or_default();
    if PYTHON_KEYWORDS.contains(&word) || matches!(after, b'(' | b'[' | b'.' | b':') {
        return Some(true);
    }
    let blanks = b
        .get(end..)?
        .iter()
        .take(LOOK)
        .take_while(|c| **c == b' ')
        .count();
    if blanks == LOOK {
        return Some(false);
    }
    match b.get(end + blanks)? {
        b'=' => Some(*b.get(end + blanks + 1)? != b'='),
        _ => Some(false),
    }
}

/// Where a [`Scanner`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Outside data and reasoning.
    Top,
    /// In a string opened by `quote` (three of them when `triple`).
    Str { quote: u8, triple: bool },
    /// In a comment.
    Comment,
    /// In a reasoning block, closed by the first of `closes`.
    Reasoning { closes: &'static [&'static str] },
}

/// The lexical reading of a text that grows (a stream), kept incrementally: each byte is read
/// once, whatever the chunks. It knows where the last complete line of code ends (a newline
/// outside data, reasoning and brackets), and for a line that opens a list or tuple, where its
/// last complete item ends (a `,` at the list's own level). It reads strings, comments, brackets
/// and reasoning as [`data_end`] and `reasoning_at` do (inline code and a format's quoted
/// values aside: it is a gate for starting calls early, and the reading of the text decides
/// which calls there are). Where a decision needs bytes not arrived yet (a quote that may be
/// the first of three, a marker cut in the middle), it waits for them.
///
/// ```
/// use fexpr::front::lex::Scanner;
/// let (mut s, mut text) = (Scanner::default(), String::from("x = \"\"\"\n[add(a=1, b=2), "));
/// s.read(&text);
/// assert_eq!(s.lines_end(), 0); // inside a string: no line of code is complete
/// text.push_str("\"\"\"\n[add(a=1, b=2), mul");
/// s.read(&text);
/// assert_eq!((s.lines_end(), s.open_list()), (28, Some((28, 42))));
/// ```
#[derive(Clone, Debug)]
pub struct Scanner {
    /// The next byte to read.
    pos: usize,
    mode: Mode,
    /// Open brackets outside data.
    depth: usize,
    /// Past the last newline that ended a line of code.
    lines_end: usize,
    /// Whether the current line holds only blanks so far.
    blank: bool,
    /// Whether the current line starts like code: only then do its brackets carry it over
    /// lines (in prose, `(see below` opens nothing).
    code: bool,
    /// The bracket that opened the current line's list, and its last complete item's `,`.
    list: Option<(usize, Option<usize>)>,
}

impl Default for Scanner {
    fn default() -> Scanner {
        Scanner {
            pos: 0,
            mode: Mode::Top,
            depth: 0,
            lines_end: 0,
            blank: true,
            code: false,
            list: None,
        }
    }
}

impl Scanner {
    /// Read `text` (the whole text so far: what was read before is its start) up to its end
    /// or to a decision that needs more bytes.
    pub fn read(&mut self, text: &str) {
        let b = text.as_bytes();
        let markers = markers(&[]);
        while self.pos < b.len() {
            let i = self.pos;
            let c = b[i];
            let rest = &b[i..];
            match self.mode {
                Mode::Top => {
                    if matches!(c, b'<' | b'[' | 0xE2) {
                        if let Some(m) =
                            markers.iter().find(|m| rest.starts_with(m.open.as_bytes()))
                        {
                            self.mode = Mode::Reasoning { closes: m.closes };
                            self.pos += m.open.len();
                            self.blank = false;
                            continue;
                        }
                        if markers.iter().any(|m| m.open.as_bytes().starts_with(rest)) {
                            return;
                        }
                    }
                    if self.blank && self.depth == 0 && !c.is_ascii_whitespace() {
                        match starts_code(b, i) {
                            Some(code) => self.code = code,
                            None => return,
                        }
                    }
                    match c {
                        b'\'' | b'"' if opens_string(b, i) => {
                            if rest.len() < 3 && rest.iter().all(|x| *x == c) {
                                return;
                            }
                            let triple = rest.starts_with(&[c, c, c]);
                            self.mode = Mode::Str { quote: c, triple };
                            self.pos += if triple { 3 } else { 1 };
                        }
                        b'#' if opens_comment(b, i) => {
                            self.mode = Mode::Comment;
                            self.pos += 1;
                        }
                        b'(' | b'[' | b'{' => {
                            if self.depth == 0 && self.blank && c != b'{' {
                                self.list = Some((i, None));
                            }
                            self.depth += 1;
                            self.pos += 1;
                        }
                        b')' | b']' | b'}' => {
                            self.depth = self.depth.saturating_sub(1);
                            if self.depth == 0 {
                                self.list = None;
                            }
                            self.pos += 1;
                        }
                        b',' if self.depth == 1 => {
                            if let Some((_, last)) = &mut self.list {
                                *last = Some(i);
                            }
                            self.pos += 1;
                        }
                        b'\n' if self.depth == 0 || !self.code => {
                            self.pos += 1;
                            self.lines_end = self.pos;
                            self.list = None;
                            self.depth = 0;
                        }
                        _ => self.pos += 1,
                    }
                    if !c.is_ascii_whitespace() {
                        self.blank = false;
                    } else if c == b'\n' && self.depth == 0 {
                        self.blank = true;
                    }
                }
                Mode::Str { quote, triple } => match c {
                    b'\\' => {
                        if rest.len() < 2 {
                            return;
                        }
                        self.pos += 2;
                    }
                    b'\n' | b'\r' if !triple => self.mode = Mode::Top,
                    _ if c == quote && !triple => {
                        self.mode = Mode::Top;
                        self.pos += 1;
                    }
                    _ if c == quote => {
                        if rest.len() < 3 && rest.iter().all(|x| *x == quote) {
                            return;
                        }
                        if rest.starts_with(&[quote, quote, quote]) {
                            self.mode = Mode::Top;
                            self.pos += 3;
                        } else {
                            self.pos += 1;
                        }
                    }
                    _ => self.pos += 1,
                },
                Mode::Comment => {
                    if c == b'\n' {
                        self.mode = Mode::Top;
                    } else {
                        self.pos += 1;
                    }
                }
                Mode::Reasoning { closes } => {
                    if let Some(close) = closes.iter().find(|x| rest.starts_with(x.as_bytes())) {
                        self.mode = Mode::Top;
                        self.pos += close.len();
                    } else if closes.iter().any(|x| x.as_bytes().starts_with(rest)) {
                        return;
                    } else {
                        self.pos += 1;
                    }
                }
            }
        }
    }

    /// Past the last newline that ended a line of code (outside data, reasoning and brackets).
    pub fn lines_end(&self) -> usize {
        self.lines_end
    }

    /// For a line that opens a list or tuple, not closed yet and with a complete item: where
    /// the list opens and the `,` after its last complete item.
    pub fn open_list(&self) -> Option<(usize, usize)> {
        self.list.and_then(|(open, comma)| comma.map(|c| (open, c)))
    }

    /// Whether the text read so far ends inside a reasoning block.
    pub fn in_reasoning(&self) -> bool {
        matches!(self.mode, Mode::Reasoning { .. })
    }
}

fn span(start: usize, end: usize) -> Span {
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data stretches of `text`, read from its start.
    fn data(text: &str) -> Vec<&str> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match data_end(b, i) {
                Some(end) => {
                    out.push(&text[i..end]);
                    i = end;
                }
                None => i += 1,
            }
        }
        out
    }

    #[test]
    fn strings_comments_and_inline_code() {
        assert_eq!(
            data("f(a='x', b=\"y\", c=rb'z')  # c"),
            ["'x'", "\"y\"", "'z'", "# c"]
        );
        assert_eq!(data("x = '''a\n'b'''\ny"), ["'''a\n'b'''"]);
        assert_eq!(data("cut = \"\"\"never\nends"), ["\"\"\"never\nends"]);
        assert_eq!(data("one 'line\nnext"), ["'line"]);
        // Apostrophes, `C#`, `#1` and entities are prose.
        assert!(data("Let's see: users' data, 5\" and C# &#39; step #1").is_empty());
        assert_eq!(data("f(x)# c\n  # d"), ["# c", "# d"]);
        assert_eq!(data("I'll use `add`</think>"), ["`add`"]);
        assert!(data("a lone ` tick").is_empty());
        assert!(data("```python\nx\n```").is_empty());
        assert_eq!(
            data("call:f{a:<|\"|>x 'y<|\"|>} <escape>z<escape>"),
            ["<|\"|>x 'y<|\"|>", "<escape>z<escape>"]
        );
    }

    #[test]
    fn markup_in_a_string_is_kept_exactly() {
        use crate::front::{extract, IgnoreReason};
        let call = "search(query=\"a <|eot_id|> b [TOOL_CALLS] <tool_call></think>\")";
        let text = format!("{call}  # then <think> divide(a=1, b=0)");
        let found = extract(&text, &crate::Limits::default(), &|n| n == "search");
        assert_eq!(found.calls.len(), 1, "{found:?}");
        assert_eq!(found.calls[0].source, call);
        assert!(found.calls[0].parsed.is_ok(), "{found:?}");
        let reasons: Vec<IgnoreReason> = found.ignored.iter().map(|i| i.reason).collect();
        assert_eq!(reasons, [IgnoreReason::Comment]);
    }

    #[test]
    fn reasoning_blocks_and_the_template() {
        // `opened_by_template`'s first test relies on it.
        assert!(MARKERS
            .iter()
            .flat_map(|m| m.closes)
            .all(|c| c.contains('/') || c.contains('|')));
        let all = markers(&[]);
        let text = "a <think>x \"</think> b";
        let s = reasoning_at(text, 2, &all, &[]).unwrap();
        assert_eq!(&text[s.range()], "<think>x \"</think>");
        let s = reasoning_at("<think>open", 0, &all, &[]).unwrap();
        assert_eq!(s.end, 11);
        let text = "I'll use `add`</think>add(a=1)";
        let s = opened_by_template(text, 0, text.len(), &all).unwrap();
        assert_eq!(&text[s.range()], "I'll use `add`</think>");
        assert!(opened_by_template("search(query=\"</think>\")", 0, 24, &all).is_none());
        let text = "so I'll say \"done</think>\nadd(a=1)";
        let s = opened_by_template(text, 0, text.len(), &all).unwrap();
        assert_eq!(&text[s.range()], "so I'll say \"done</think>");
        assert!(opened_by_template("<think>a</think>", 0, 16, &all).is_none());
    }
}

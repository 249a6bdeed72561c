//! Diagnostics: errors, repairs and ignored text rendered for people, with the source line and
//! the span underlined, the way rustc and ruff show them (via `annotate-snippets`).
//!
//! An [`Error`] is data for programs and models; [`Error::render`] is the same error for a
//! person at a terminal. A [`Repair`] renders as a warning, an [`Ignored`] stretch as a note:
//! build a [`Diagnostic`] from either with `From`.
//!
//! ```
//! use fexpr::{Error, ErrorKind, Span};
//!
//! let source = "add(a=1, c=2)";
//! let error = Error::new(ErrorKind::Arguments, "add() got an unexpected keyword argument `c`")
//!     .at(Span::new(9, 10))
//!     .with_hint("did you mean `b`? signature: add(a: int, b: int)");
//! assert_eq!(
//!     error.render(source),
//!     "\
//! error[Arguments]: add() got an unexpected keyword argument `c`
//!   |
//! 1 | add(a=1, c=2)
//!   |          ^
//!   |
//!   = help: did you mean `b`? signature: add(a: int, b: int)"
//! );
//! ```
//!
//! Rendering is for people only: what a model reads stays the JSON of the error. Spans are
//! clamped to the source and to character boundaries, so a span from another text never
//! panics; control characters (C0 and C1) and bidirectional overrides, in the source and in
//! messages, are shown as visible symbols, never sent to the terminal.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::error::{Error, Span};
use crate::front::repair::Repair;
use crate::front::{IgnoreReason, Ignored};

/// How serious a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Severity {
    /// The call did not run (an [`Error`]).
    Error,
    /// The call was changed before it ran (a [`Repair`]).
    Warning,
    /// Text that was not used (an [`Ignored`] stretch).
    Note,
}

/// One message for a person: a title, the source bytes it concerns, and a hint. Made with
/// `From` (fields may be added: it is `#[non_exhaustive]`), then adjusted field by field.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error, warning or note.
    pub severity: Severity,
    /// A short code shown after the severity (`error[Arguments]`): the [`ErrorKind`](crate::ErrorKind).
    pub code: Option<String>,
    /// The first line.
    pub title: String,
    /// The source bytes to underline.
    pub span: Option<Span>,
    /// Text beside the underline.
    pub label: Option<String>,
    /// A `help:` line under the source.
    pub help: Option<String>,
}

impl Diagnostic {
    /// The diagnostic as plain text, with `source` (the text its span indexes) quoted.
    pub fn render(&self, source: &str) -> String {
        self.render_with(&Renderer::plain(), source)
    }

    /// The diagnostic with ANSI colours, for a terminal.
    pub fn render_styled(&self, source: &str) -> String {
        self.render_with(&Renderer::styled(), source)
    }

    fn render_with(&self, renderer: &Renderer, source: &str) -> String {
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
            Severity::Note => Level::NOTE,
        };
        let mut title = level.primary_title(visible_text(&self.title));
        if let Some(code) = &self.code {
            title = title.id(code.as_str());
        }
        let mut group = Group::with_title(title);
        if let Some(span) = self.span {
            let (excerpt, first_line, range) = excerpt(source, span);
            let mut annotation = AnnotationKind::Primary.span(range);
            if let Some(label) = &self.label {
                annotation = annotation.label(visible_text(label));
            }
            let snippet = Snippet::source(excerpt).line_start(first_line);
            group = group.element(snippet.annotation(annotation));
        }
        if let Some(help) = &self.help {
            group = group.element(Level::HELP.message(visible_text(help)));
        }
        renderer.render(&[group])
    }
}

/// Bytes of source shown before a span's start on its line, and at most after it: the rest of
/// a long line or of a long span is cut (marked `…` within a line), so that a megabyte of input
/// renders in a few lines (and in time linear in the source).
const BEFORE: usize = 80;
const AFTER: usize = 240;
/// Lines quoted after the span's first line, at most.
const LINES: usize = 4;

/// What to quote of `source` for `span`: the lines it covers, cut to a window around its start,
/// the number of the first line quoted, and the span as a byte range of that excerpt. The span
/// is clamped to the source and to character boundaries first.
fn excerpt(source: &str, span: Span) -> (String, usize, std::ops::Range<usize>) {
    let end = source.floor_char_boundary(span.range().end);
    let start = source.floor_char_boundary(span.range().start.min(end));
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[end..].find('\n').map_or(source.len(), |i| end + i);
    let from = source.floor_char_boundary(line_start.max(start.saturating_sub(BEFORE)));
    let to = source.floor_char_boundary(line_end.min(start.saturating_add(AFTER)));
    let to = source[start..to]
        .match_indices('\n')
        .nth(LINES)
        .map_or(to, |(i, _)| start + i);
    let mut excerpt = String::with_capacity(to - from + 6);
    if from > line_start {
        excerpt.push('…');
    }
    let mut range = usize::MAX..usize::MAX;
    for (i, c) in source[from..to].char_indices() {
        if from + i == start {
            range.start = excerpt.len();
        }
        if from + i == end {
            range.end = excerpt.len();
        }
        excerpt.push(visible(c));
    }
    range.start = range.start.min(excerpt.len());
    range.end = range.end.min(excerpt.len()).max(range.start);
    if to < line_end {
        excerpt.push('…');
    }
    let first_line = 1 + source[..from].bytes().filter(|&b| b == b'\n').count();
    (excerpt, first_line, range)
}

/// `c`, or `�` for a C1 control character (U+0080–U+009F: some terminals read U+009B as the
/// start of an escape sequence). annotate-snippets shows C0 controls and bidi overrides as
/// visible symbols itself.
fn visible(c: char) -> char {
    match c {
        '\u{80}'..='\u{9f}' => '\u{fffd}',
        c => c,
    }
}

/// `text` with [`visible`] characters only.
fn visible_text(text: &str) -> String {
    text.chars().map(visible).collect()
}

impl From<&Error> for Diagnostic {
    fn from(error: &Error) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code: Some(format!("{:?}", error.kind)),
            title: error.message.clone(),
            span: error.span,
            label: None,
            help: error.hint.clone(),
        }
    }
}

impl From<&Repair> for Diagnostic {
    fn from(repair: &Repair) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            code: Some(format!("{:?}", repair.kind)),
            title: format!(
                "`{}` repaired: `{}` read as `{}`",
                repair.path, repair.from, repair.to
            ),
            span: Some(repair.span),
            label: Some(repair.reason.clone()),
            help: None,
        }
    }
}

impl From<&Ignored> for Diagnostic {
    fn from(ignored: &Ignored) -> Diagnostic {
        let what = match ignored.reason {
            IgnoreReason::ChatToken => "a chat-template token",
            IgnoreReason::Fence => "a code fence marker",
            IgnoreReason::Tag => "a markup tag",
            IgnoreReason::Prose => "prose",
            IgnoreReason::JsonData => "JSON that is not a call",
            IgnoreReason::NotATool => "a call to a name that is not a tool",
            IgnoreReason::Reasoning => "reasoning, where calls are not taken",
            IgnoreReason::Budget => "text past the scan's step budget",
            IgnoreReason::Punctuation => "punctuation with no call",
            IgnoreReason::Duplicate => "a repeated copy of the calls before it",
            IgnoreReason::Mention => "a call mentioned in a sentence, not asked for: not run",
            IgnoreReason::Code => "code that holds no call",
            IgnoreReason::Comment => "a comment, not read for calls",
        };
        Diagnostic {
            severity: Severity::Note,
            code: Some(format!("{:?}", ignored.reason)),
            title: format!("ignored: {what}"),
            span: Some(ignored.span),
            label: None,
            help: None,
        }
    }
}

impl Error {
    /// This error for a person: the message, the line of `source` (the text the span indexes)
    /// with the span underlined, and the hint. See the [module docs](crate::front::diagnostic).
    pub fn render(&self, source: &str) -> String {
        Diagnostic::from(self).render(source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn spans_outside_the_source_or_inside_a_character_are_clamped() {
        let e = Error::new(ErrorKind::Syntax, "bad").at(Span::new(2, 99));
        assert!(e.render("é=1").contains("é=1"));
        let e = Error::new(ErrorKind::Syntax, "bad").at(Span::new(50, 60));
        assert!(e.render("").starts_with("error[Syntax]: bad"));
    }

    #[test]
    fn a_long_line_or_span_is_cut_around_the_span_start() {
        let source = format!("{}f(a=1, c=2){}", "x".repeat(5000), "\ny".repeat(5000));
        let e = Error::new(ErrorKind::Arguments, "bad").at(Span::new(5007, 10_000));
        let text = e.render(&source);
        assert!(text.len() < 1000, "{} bytes: {text}", text.len());
        assert!(text.contains("1 |   …xxx"), "{text}");
        assert!(
            text.contains("xf(a=1, c=2)\n") && text.contains("5 | | y…\n"),
            "{text}"
        );
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let e = Error::new(ErrorKind::Syntax, "bad").at(Span::new(4, 5));
        let text = e.render("f(a=\u{1b}[31m, b=\u{202e}1, c=\u{9b}31m)");
        assert!(!text.contains(['\u{1b}', '\u{202e}', '\u{9b}']), "{text}");
        let e = Error::new(ErrorKind::Arguments, "unknown `\u{1b}[31m\u{9b}31m`")
            .at(Span::new(2, 4))
            .with_hint("\u{9b}");
        let text = e.render("f(\u{9b}=1)");
        assert!(!text.contains(['\u{1b}', '\u{9b}']), "{text}");
        assert!(text.contains("1 | f(\u{fffd}=1)\n  |   ^\n"), "{text}");
    }

    #[test]
    fn an_error_without_span_is_its_message_and_hint() {
        let e =
            Error::new(ErrorKind::Limit, "max_calls limit exceeded: 9 > 8").with_hint("raise it");
        assert_eq!(
            e.render("f()"),
            "error[Limit]: max_calls limit exceeded: 9 > 8\n |\n = help: raise it"
        );
    }
}

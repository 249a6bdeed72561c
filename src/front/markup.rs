//! The markup of model text, found before anything is read as a call: reasoning blocks, code
//! fences, chat-template tokens, markup tags, and the explicit tool-call forms
//! (`<tool_call>…</tool_call>`, `<|python_tag|>…`, `[TOOL_CALLS]…`). The text is cut into
//! [`Region`]s in one linear pass; what lies between is plain text, read line by line by
//! [`super::python`].

use crate::error::Span;
use crate::front::formats::reasoning::Marker;
use crate::front::{lex, span, IgnoreReason};

/// Chat-template tokens recognised (and reported as [`IgnoreReason::ChatToken`]) wherever they
/// appear outside a call. Any other `<|…|>` token is recognised too.
pub const CHAT_TOKENS: &[&str] = &[
    "<end_of_turn>",
    "<start_of_turn>",
    "<eos>",
    "<bos>",
    "</s>",
    "<s>",
    "[/TOOL_CALLS]",
    "[INST]",
    "[/INST]",
];

/// Longest markup tag recognised (`<tool_call>`, `</function_calls>`), in bytes.
pub(super) const MAX_TAG_BYTES: usize = 48;

/// The explicit tool-call forms: an opening token or tag, and what ends its body (the first of
/// these; the end of the text when none follows). The body is a call position.
/// Whether the form must be closed: a body that runs to the end of the text without its
/// closing tag was cut off, and its calls do not run, unless the body is a whole JSON value or
/// list of calls (`<tool_call>{…}`, `<|python_start|>[…]`): what it holds is complete, and a
/// server stops at the stop token before the close.
const EXPLICIT: &[(&str, &[&str], bool)] = &[
    ("<tool_call>", &["</tool_call>"], true),
    ("<tool_calls>", &["</tool_calls>"], true),
    ("<function_call>", &["</function_call>"], true),
    ("<function_calls>", &["</function_calls>"], true),
    ("<|python_start|>", &["<|python_end|>"], true),
    ("<|python_tag|>", &["<|eom_id|>", "<|eot_id|>"], false),
    ("[TOOL_CALLS]", &["[/TOOL_CALLS]", "</s>"], false),
];

/// A piece of the text, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Region {
    /// Reasoning (`<think>…</think>`): reported, never read for calls.
    Reasoning(Span),
    /// A chat token, a markup tag or a fence marker: reported with its reason.
    Markup(Span, IgnoreReason),
    /// The body of a fenced code block: one unit.
    Fence(Span),
    /// The body of an explicit tool-call form: a call position, one unit. With the closing
    /// tag it needs, when that is missing (cut off: its calls do not run).
    Explicit(Span, Option<&'static str>),
    /// Everything else, read line by line.
    Plain(Span),
}

/// Cut `text[a..b]` into regions, in order, appended to `out` (blank plain stretches may be
/// left out). Read by the lexical reading ([`super::lex`]): markup inside data (a string, a
/// comment, inline code) or inside reasoning is not markup.
pub(super) fn regions_in(text: &str, a: usize, b: usize, out: &mut Vec<Region>) {
    // Everything below looks no further than `b`.
    let Some(text) = text.get(..b) else {
        return;
    };
    if text.get(a..).is_none() {
        return;
    }
    let markers = lex::markers(&[]);
    let mut from = a;
    if let Some(s) = lex::opened_by_template(text, a, b, &markers) {
        out.push(Region::Reasoning(s));
        from = s.end as usize;
    }
    split(text, from, &markers, out);
}

/// Regions of `text[a..]`, past any block the chat template opened.
///
/// Long (about 120 lines) for a reason: one pass over the bytes, whose arms (data, reasoning,
/// fence, explicit form, chat token, tag) share the line's state (`blank_before`,
/// `line_start`); split into functions, each arm would take and give back all of it.
fn split(text: &str, a: usize, markers: &[&'static Marker], out: &mut Vec<Region>) {
    let bytes = text.as_bytes();
    let b = text.len();
    let mut plain = a;
    let mut i = a;
    // Nothing but blanks (or markup) since the line started.
    let mut blank_before = true;
    // Nothing but blanks since the line started (markup included): where a fence may open.
    let mut line_start = true;
    let plain_until = |out: &mut Vec<Region>, from: usize, to: usize| {
        if text.get(from..to).is_some_and(|s| !s.trim().is_empty()) {
            out.push(Region::Plain(span(from, to)));
        }
    };
    while i < b {
        let c = bytes[i];
        // Reasoning, then data: part of the plain text around it, never markup.
        if matches!(c, b'<' | b'[' | 0xE2) {
            if let Some(s) = lex::reasoning_at(text, i, markers, &[]) {
                plain_until(out, plain, i);
                out.push(Region::Reasoning(s));
                i = (s.end as usize).max(i + 1);
                plain = i;
                blank_before = true;
                continue;
            }
        }
        if matches!(c, b'\'' | b'"' | b'#' | b'`' | b'<') {
            if let Some(end) = lex::data_end(bytes, i) {
                i = end.max(i + 1);
                blank_before = false;
                line_start = false;
                continue;
            }
        }
        match c {
            b'\n' => {
                blank_before = true;
                line_start = true;
                i += 1;
                continue;
            }
            b'`' if line_start && text[i..b].starts_with("```") => {
                plain_until(out, plain, i);
                let open_end = line_end(text, i, b);
                let tag_end = i + 3 + text[i + 3..open_end].trim_end().len();
                out.push(Region::Markup(span(i, tag_end), IgnoreReason::Fence));
                let body = (open_end + 1).min(b);
                let language = text[i + 3..tag_end].trim();
                let close = fence_close(text, body, b);
                let body_end = close.map_or(b, |(close, _)| close);
                if wraps_calls(language, &text[body..body_end]) {
                    // Its body's markup is read as outside a fence (the closing fence ends
                    // what is read: no fence opens inside it).
                    split(&text[..body_end], body, markers, out);
                } else {
                    out.push(Region::Fence(span(body, body_end)));
                }
                let next = match close {
                    Some((close, close_end)) => {
                        out.push(Region::Markup(span(close, close_end), IgnoreReason::Fence));
                        close_end
                    }
                    None => b,
                };
                i = next;
                plain = next;
                blank_before = false;
                continue;
            }
            b'<' | b'[' => {
                let rest = &text[i..b];
                {
                    if let Some((open, closes, needed)) =
                        EXPLICIT.iter().find(|(o, _, _)| rest.starts_with(o))
                    {
                        plain_until(out, plain, i);
                        let reason = token_reason(open);
                        out.push(Region::Markup(span(i, i + open.len()), reason));
                        let body = i + open.len();
                        let (close, close_end) = explicit_close(text, body, b, closes);
                        let missing =
                            (*needed && close == close_end && !whole_value(text, body, close))
                                .then(|| closes[0]);
                        out.push(Region::Explicit(span(body, close), missing));
                        if close < close_end {
                            let reason = token_reason(&text[close..close_end]);
                            out.push(Region::Markup(span(close, close_end), reason));
                        }
                        i = close_end;
                        plain = i;
                        blank_before = true;
                        continue;
                    }
                }
                if let Some(len) = chat_token(rest) {
                    plain_until(out, plain, i);
                    out.push(Region::Markup(span(i, i + len), IgnoreReason::ChatToken));
                    i += len;
                    plain = i;
                    blank_before = true;
                    continue;
                }
                if c == b'<' {
                    if let Some(len) = tag(rest) {
                        // A tag standing apart on its line (at its start, or with only markup
                        // and blanks after it), not one inside code or prose.
                        let after = &text[i + len..line_end(text, i + len, b)];
                        if blank_before || only_markup(after) {
                            plain_until(out, plain, i);
                            out.push(Region::Markup(span(i, i + len), IgnoreReason::Tag));
                            i += len;
                            plain = i;
                            blank_before = true;
                            continue;
                        }
                    }
                }
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            blank_before = false;
            line_start = false;
        }
        i += 1;
    }
    plain_until(out, plain, b);
}

/// Whether `text` may hold markup [`regions_in`] cuts out: a `<`, a backtick, or a chat
/// token or explicit form that starts with `[` (`[TOOL_CALLS]`, `[INST]`). False means the
/// whole text is one plain region.
pub(super) fn may_hold_markup(text: &str) -> bool {
    text.bytes().enumerate().any(|(i, c)| match c {
        b'<' | b'`' => true,
        b'[' => text.get(i..).is_some_and(|rest| {
            chat_token(rest).is_some() || EXPLICIT.iter().any(|(open, _, _)| rest.starts_with(open))
        }),
        _ => false,
    })
}

/// How a token or tag is reported: `<|…|>` and `[…]` tokens are chat tokens, the rest tags.
fn token_reason(token: &str) -> IgnoreReason {
    if token.starts_with("<|") || token.starts_with('[') || CHAT_TOKENS.contains(&token) {
        IgnoreReason::ChatToken
    } else {
        IgnoreReason::Tag
    }
}

/// The end of the line holding `i` (the `\n`'s position), at most `b`.
pub(super) fn line_end(text: &str, i: usize, b: usize) -> usize {
    text.get(i..b)
        .and_then(|s| s.find('\n'))
        .map_or(b, |p| i + p)
}

/// Tags that wrap a JSON call, which models also put in an `xml` or `json` fence (or one with no
/// language), as llama.cpp's Hermes 2 Pro reader takes them.
const FENCED_CALL_TAGS: &[&str] = &[
    "<tool_call>",
    "<function_call>",
    "<function=",
    "<function name=",
    "<tools>",
    "<tool>",
    "<response>",
    "<json>",
    "<xml>",
    "<JSON>",
];

/// Whether a fence of `language` whose body is `body` wraps a tool-call form (its body starts
/// with one of [`FENCED_CALL_TAGS`]) rather than holding code.
fn wraps_calls(language: &str, body: &str) -> bool {
    matches!(language, "" | "xml" | "json")
        && FENCED_CALL_TAGS
            .iter()
            .any(|t| body.trim_start().starts_with(t))
}

/// The closing fence of a fenced block whose body starts at `body`: a line whose text starts
/// with ```` ``` ````; its start and end.
fn fence_close(text: &str, body: usize, b: usize) -> Option<(usize, usize)> {
    let mut line = body;
    while line < b {
        let end = line_end(text, line, b);
        let content = &text[line..end];
        let lead = content.len() - content.trim_start().len();
        if content.trim_start().starts_with("```") {
            let at = line + lead;
            return Some((at, at + 3));
        }
        line = end + 1;
    }
    None
}

/// Where the body of an explicit form starting at `body` ends, and where its closing token
/// ends. A body that is JSON is matched as JSON first, so a closing tag inside one of its
/// strings does not end it; in any other body, a closing tag inside data (a string, a comment)
/// does not end it either.
fn explicit_close(text: &str, body: usize, b: usize, closes: &[&str]) -> (usize, usize) {
    let rest = &text[body..b];
    let lead = rest.len() - rest.trim_start().len();
    let mut i = match rest.trim_start().as_bytes().first() {
        Some(b'{' | b'[') => json_end(text.as_bytes(), body + lead, b).unwrap_or(body),
        _ => body,
    };
    let bytes = text.as_bytes();
    while i < b {
        let rest = &bytes[i..b];
        if let Some(close) = closes.iter().find(|c| rest.starts_with(c.as_bytes())) {
            return (i, i + close.len());
        }
        i = lex::data_end(bytes, i).map_or(i + 1, |end| end.max(i + 1));
    }
    (b, b)
}

/// Whether `text[body..end]` is, past blanks, one whole bracketed value (a JSON object or a
/// list) with only blanks after it.
fn whole_value(text: &str, body: usize, end: usize) -> bool {
    let rest = &text[body..end];
    let lead = rest.len() - rest.trim_start().len();
    matches!(rest.trim_start().as_bytes().first(), Some(b'{' | b'['))
        && json_end(text.as_bytes(), body + lead, end)
            .is_some_and(|z| text[z..end].trim().is_empty())
}

/// The end (exclusive) of the JSON object or array opening at `open`, strings skipped; `None`
/// if it does not close before `b`. Linear.
pub(super) fn json_end(bytes: &[u8], open: usize, b: usize) -> Option<usize> {
    crate::syntax::lex::json_end(bytes.get(..b)?, open)
}

/// The length of the chat-template token `rest` starts with, if any.
fn chat_token(rest: &str) -> Option<usize> {
    if let Some(token) = CHAT_TOKENS.iter().find(|t| rest.starts_with(**t)) {
        return Some(token.len());
    }
    let inner = rest.strip_prefix("<|")?;
    let close = inner.find("|>")?;
    (close <= MAX_TAG_BYTES && !inner[..close].contains(char::is_whitespace)).then_some(close + 4)
}

/// The length of the markup tag (`<answer>`, `</tool_call>`) `rest` starts with, if any.
fn tag(rest: &str) -> Option<usize> {
    let name = rest.get(1..)?;
    let len = name
        .bytes()
        .take(MAX_TAG_BYTES)
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'/' | b':'))
        .count();
    let first = name.bytes().next()?;
    (len > 0
        && (first.is_ascii_alphabetic() || first == b'/')
        && name.as_bytes().get(len) == Some(&b'>'))
    .then_some(len + 2)
}

/// Whether `s` holds nothing but blanks, tags and chat tokens.
fn only_markup(s: &str) -> bool {
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        match chat_token(rest).or_else(|| {
            if rest.starts_with('<') {
                tag(rest)
            } else {
                None
            }
        }) {
            Some(len) => rest = rest[len..].trim_start(),
            None => return false,
        }
    }
    true
}

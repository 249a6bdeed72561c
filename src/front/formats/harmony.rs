//! gpt-oss (OpenAI's Harmony format): messages with a header and a channel, as the model writes
//! them and `openai_harmony` (vLLM's `openai` parser) reads them:
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants 5*5.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.multiply <|constrain|>json<|message|>{"a": 5, "b": 5}<|call|>
//! ```
//!
//! A message addressed to `functions.NAME` (`to=` before or after the channel) is a call of
//! `NAME` with the message's JSON as its arguments, on whatever channel (as vLLM reads it); a
//! message addressed elsewhere (a built-in tool such as `python` or `browser.search`) is a
//! call of that name. The `analysis` channel is reasoning; every message is the format's own
//! (claimed), so nothing in an `analysis` or `final` message is read as a call. A message
//! ends at `<|end|>`, `<|call|>` or `<|return|>` (or where the next one starts).

use super::scan::{cut, find, span, trim, Out, Src};
use super::FormatArgs;
use crate::front::IgnoreReason;

const WHAT: &str = "Harmony";
const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const ENDS: &[&str] = &["<|end|>", "<|call|>", "<|return|>"];

pub(super) fn read(text: &str, out: &mut Out) {
    let src = Src::plain(text);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[START, CHANNEL, MESSAGE]) {
        match message(text, start, out) {
            Some(end) => pos = end,
            None => return,
        }
    }
}

/// What a header says.
#[derive(Default)]
struct Header<'a> {
    channel: &'a str,
    /// The recipient and where it is.
    to: Option<(&'a str, usize)>,
}

fn header(text: &str, start: usize, end: usize) -> Header<'_> {
    let h = &text[start..end];
    let word = |from: usize| {
        let rest = &h[from..];
        let len = rest
            .find(|c: char| c.is_whitespace() || c == '<')
            .unwrap_or(rest.len());
        &rest[..len]
    };
    let mut out = Header::default();
    if let Some(c) = h.find(CHANNEL) {
        out.channel = word(c + CHANNEL.len());
    }
    if let Some(t) = h.find("to=") {
        if t == 0 || h[..t].ends_with(|c: char| c.is_whitespace() || c == '>') {
            let at = t + 3;
            out.to = Some((word(at), start + at));
        }
    }
    out
}

/// Read the message whose header starts at `start`; where the next one may start, or `None`
/// when the text ends inside this one.
fn message(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    // The header runs to `<|message|>`; a new `<|start|>` first means this one had no body.
    let Some(body_token) = find(text, start, MESSAGE) else {
        let h = header(text, start, text.len());
        let name =
            h.to.map_or("", |(to, _)| to.strip_prefix("functions.").unwrap_or(to));
        if !name.is_empty() {
            let name_span =
                h.to.map(|(to, at)| span(at + to.len() - name.len(), at + to.len()));
            // Only a name followed by more of the header is known whole.
            let whole = name_span.is_some_and(|s| (s.end as usize) < text.len());
            let (name, name_span) = if whole { (name, name_span) } else { ("", None) };
            out.broken(
                name,
                name_span,
                start,
                text.len(),
                cut(WHAT, name, "<|call|>"),
            );
        }
        out.claim(start, text.len());
        return None;
    };
    let h = header(text, start, body_token);
    let body = body_token + MESSAGE.len();
    // The body runs to an end token, or to the next message's start.
    let mut stop = None;
    let mut from = body;
    while let Some(p) = find(text, from, "<|") {
        if let Some(t) = ENDS.iter().find(|t| text[p..].starts_with(**t)) {
            stop = Some((p, p + t.len()));
            break;
        }
        if text[p..].starts_with(START) || text[p..].starts_with(CHANNEL) {
            stop = Some((p, p));
            break;
        }
        from = p + 2;
    }
    let end = stop.map_or(text.len(), |(_, e)| e);
    let body_end = stop.map_or(text.len(), |(p, _)| p);
    match h.to {
        Some((to, at)) if !to.is_empty() => {
            let name = to.strip_prefix("functions.").unwrap_or(to);
            let name_span = Some(span(at + to.len() - name.len(), at + to.len()));
            if stop.is_none() {
                out.broken(
                    name,
                    name_span,
                    start,
                    text.len(),
                    cut(WHAT, name, "<|call|>"),
                );
                return None;
            }
            let (a, z) = trim(b, body, body_end);
            let args = if a == z {
                FormatArgs::Text(Vec::new())
            } else {
                FormatArgs::Json(span(a, z))
            };
            out.call(name, name_span, (start, end), args, None);
        }
        _ => {
            out.markup(start, body, IgnoreReason::ChatToken);
            if body_end < end {
                out.markup(body_end, end, IgnoreReason::ChatToken);
            }
            if h.channel == "analysis" {
                out.reasoning(body, body_end);
            }
            out.claim(start, end);
        }
    }
    stop.map(|_| end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::ModelFormat;

    const F: ModelFormat = ModelFormat::Harmony;

    #[test]
    fn a_call_on_the_commentary_channel() {
        let text = "<|start|>assistant<|channel|>commentary to=functions.multiply <|constrain|>json<|message|>{\"a\": 5, \"b\": 5}<|call|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["multiply"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"a\": 5, \"b\": 5}");
    }

    #[test]
    fn analysis_is_reasoning_and_its_mentions_are_not_calls() {
        let text = "<|channel|>analysis<|message|>I could call functions.add or <|call|> nothing.<|end|><|start|>assistant<|channel|>final<|message|>It is 4.<|return|>";
        let r = read_as(F, text);
        assert!(r.calls.is_empty());
        let text = "<|channel|>analysis<|message|>Think about add(a=1, b=2).<|end|><|start|>assistant<|channel|>final<|message|>It is 3.<|return|>";
        let r = read_as(F, text);
        assert!(r.calls.is_empty());
        assert_eq!(r.reasoning.len(), 1);
        assert_eq!(r.claimed.len(), 1);
    }

    #[test]
    fn recipient_before_the_channel_and_several_calls() {
        let text = "<|channel|>analysis<|message|>Two lookups.<|end|><|start|>assistant to=functions.search<|channel|>commentary json<|message|>{\"query\": \"a\"}<|call|><|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search", "get_weather"]);
    }

    #[test]
    fn cut_off_keeps_the_name() {
        let r = read_as(F, "<|start|>assistant<|channel|>commentary to=functions.add <|constrain|>json<|message|>{\"a\": 1");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "Hello there."), Default::default());
    }
}

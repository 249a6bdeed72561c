//! gpt-oss (OpenAI's Harmony format): messages with a header and a channel, as the model writes
//! them and `openai_harmony` (vLLM's `openai` parser) reads them:
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants 5*5.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.multiply <|constrain|>json<|message|>{"a": 5, "b": 5}<|call|>
//! ```
//!
//! A message addressed to `functions.NAME` (`to=` in the role part or after the channel, also
//! in a header the prompt began: ` to=functions.f<|channel|>…`) is a call of `NAME` with the
//! message's JSON as its arguments, on whatever channel (as vLLM reads it). A message to a
//! built-in tool (`python`, `browser.search`) is not a function call, as in vLLM and llama.cpp.
//! The `analysis` channel is reasoning; every message is the format's own (claimed), so
//! nothing in an `analysis` or `final` message is read as a call. A call's JSON ends where the
//! object closes (the stop token `<|call|>` is often stripped); another message ends at
//! `<|end|>` or `<|return|>`, or where the next one starts. Garbage before a header's
//! `<|start|>` (`<|channel|>??<|end|>`) is reported and stepped over.

use super::reasoning::HARMONY_ANALYSIS;
use super::scan::{cut, find, json_end, skip_ws, span, trim, Out, Src};
use super::{FormatArgs, ModelFormat, Spec};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Harmony,
    name: "harmony",
    marker_starts: &[b"<|"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Harmony";
const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const ENDS: &[&str] = &["<|end|>", "<|call|>", "<|return|>"];

fn holds_markers(text: &str) -> bool {
    text.contains(CHANNEL) || text.contains("<|start|>assistant")
}

/// Read the messages; reasoning in other formats' markers (`<think>`, …) outside them is
/// stepped over.
fn read(text: &str, out: &mut Out) {
    let mut src = Src::except(text, &[HARMONY_ANALYSIS]);
    let mut pos = 0;
    while let Some((mut start, _)) = src.find_any(pos, &[START, CHANNEL, MESSAGE]) {
        // The rest of a header the prompt began with `<|start|>assistant`: ` to=functions.f`.
        let skipped = &text[pos..start];
        let word = skipped.trim();
        if word.starts_with("to=") && !word.contains(char::is_whitespace) {
            start = pos + (skipped.len() - skipped.trim_start().len());
        }
        match message(text, start, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
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
    // The last of each: a stray header before the real one (`<|channel|>commentary
    // to=assistant<|channel|>analysis`) does not count.
    if let Some(c) = h.rfind(CHANNEL) {
        out.channel = word(c + CHANNEL.len());
    }
    let to = h
        .match_indices("to=")
        .filter(|(t, _)| *t == 0 || h[..*t].ends_with(|c: char| c.is_whitespace() || c == '>'))
        .last();
    if let Some((t, _)) = to {
        out.to = Some((word(t + 3), start + t + 3));
    }
    out
}

impl<'a> Header<'a> {
    /// The function the message is addressed to, and where its name is.
    fn function(&self) -> Option<(&'a str, crate::error::Span)> {
        let (to, at) = self.to?;
        let name = to.strip_prefix("functions.")?;
        let from = at + "functions.".len();
        (!name.is_empty()).then(|| (name, span(from, from + name.len())))
    }
}

/// Read the message whose header starts at `start`; where the next one may start, or `None`
/// when the text ends inside this one.
fn message(text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    // The header runs to `<|message|>`; a new `<|start|>` first means this one had no body.
    let Some(body_token) = find(text, start, MESSAGE) else {
        if let Some((name, name_span)) = header(text, start, text.len()).function() {
            // Only a name followed by more of the header is known whole.
            let whole = (name_span.end as usize) < text.len();
            let (name, name_span) = if whole {
                (name, Some(name_span))
            } else {
                ("", None)
            };
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
    // A header holds no `<|start|>` but its own: what comes before the last one is garbage.
    let start = match text[start..body_token].rfind(START) {
        Some(p) if p > 0 => {
            out.markup(start, start + p, IgnoreReason::Prose);
            out.claim(start, start + p);
            start + p
        }
        _ => start,
    };
    let h = header(text, start, body_token);
    let body = body_token + MESSAGE.len();
    if let Some((name, name_span)) = h.function() {
        let name_span = Some(name_span);
        // JSON arguments end where the object closes (markers inside its strings are text),
        // and the call with them: a server strips the stop token `<|call|>`.
        let first = skip_ws(b, body);
        if b.get(first) == Some(&b'{') {
            let Some(json_end) = json_end(b, first) else {
                out.broken(name, name_span, start, text.len(), cut(WHAT, name, "}"));
                out.claim(start, text.len());
                return None;
            };
            out.call(
                name,
                name_span,
                (start, json_end),
                FormatArgs::Json(span(first, json_end)),
                None,
            );
            let k = skip_ws(b, json_end);
            return match ENDS.iter().find(|t| text[k..].starts_with(**t)) {
                Some(t) => {
                    out.markup(k, k + t.len(), IgnoreReason::ChatToken);
                    out.claim(start, k + t.len());
                    Some(k + t.len())
                }
                None => Some(json_end),
            };
        }
        // Other arguments (code for a built-in tool, or none) run to an end token.
        let Some((body_end, end)) = body_end(text, body, ENDS) else {
            out.broken(
                name,
                name_span,
                start,
                text.len(),
                cut(WHAT, name, "<|call|>"),
            );
            out.claim(start, text.len());
            return None;
        };
        let (a, z) = trim(b, body, body_end);
        let args = if a == z {
            FormatArgs::Text(Vec::new())
        } else {
            FormatArgs::Json(span(a, z))
        };
        out.call(name, name_span, (start, end), args, None);
        return Some(end);
    }
    // A message to the user or reasoning ends at `<|end|>` or `<|return|>` (a `<|call|>` or a
    // header in its text is text), or at the next message; cut off, at the text's end.
    let stop = body_end(text, body, &["<|end|>", "<|return|>"]);
    let (body_end, end) = stop.unwrap_or((text.len(), text.len()));
    out.markup(start, body, IgnoreReason::ChatToken);
    out.markup(body_end, end, IgnoreReason::ChatToken);
    if h.channel == "analysis" {
        out.reasoning(body, body_end);
    }
    out.claim(start, end);
    stop.map(|_| end)
}

/// Where a body from `body` ends: the first of `ends` (its start and end), or the next
/// `<|start|>` (twice its start); `None` if the text ends first.
fn body_end(text: &str, body: usize, ends: &[&str]) -> Option<(usize, usize)> {
    let mut from = body;
    while let Some(p) = find(text, from, "<|") {
        if let Some(t) = ends.iter().find(|t| text[p..].starts_with(**t)) {
            return Some((p, p + t.len()));
        }
        if text[p..].starts_with(START) {
            return Some((p, p));
        }
        from = p + 2;
    }
    None
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
    fn markers_inside_arguments_and_reasoning_are_text() {
        let text = "<|channel|>analysis<|message|>I must not write <|call|> or <|channel|>final myself.<|end|><|start|>assistant to=functions.write_file<|channel|>commentary <|constrain|>json<|message|>{\"content\": \"ends with <|call|>; <|start|>assistant<|channel|>commentary to=functions.get_time<|message|>{}<|end|>\"}<|call|>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["write_file"]);
        assert!(args_src(&r.calls[0], text).ends_with("<|end|>\"}"));
        assert_eq!(r.reasoning.len(), 1);
        assert!(text[r.reasoning[0].range()].ends_with("final myself."));
    }

    #[test]
    fn a_call_is_complete_without_its_stop_token() {
        // A server strips `<|call|>`, the stop token, from the text it returns.
        let text = "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert!(!is_broken(&r.calls[0]));
        let r = read_as(
            F,
            "<|channel|>final<|message|>{\"name\": \"get_weather\", \"arguments\": {}}",
        );
        assert!(r.calls.is_empty());
        assert_eq!(r.claimed.len(), 1);
    }

    #[test]
    fn headers_begun_by_the_prompt_stray_or_garbled() {
        // llama.cpp's tests: the output starts after the prompt's `<|start|>assistant`.
        let text = " to=functions.add<|channel|>analysis <|constrain|>json<|message|>{\"a\": 1}";
        assert_eq!(names(&read_as(F, text)), ["add"]);
        let text = "<|channel|>analysis to=functions.add<|message|>{\"a\": 1}";
        assert_eq!(names(&read_as(F, text)), ["add"]);
        // A stray header, garbage before a header, a built-in tool: no call.
        for text in [
            "<|channel|>commentary to=assistant<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>Hi",
            "<|channel|>??<|end|><|start|>assistant<|channel|>analysis<|message|>We must comply.",
            "<|channel|>analysis<|message|>Say hello.<|end|><|start|>assistant<|channel|>commentary to=python <|constrain|>code<|message|>print(\"hello\")",
        ] {
            let r = read_as(F, text);
            assert!(r.calls.is_empty(), "{text}: {r:?}");
            assert!(!r.reasoning.is_empty(), "{text}");
        }
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

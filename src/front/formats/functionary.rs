//! Functionary v3.2 (MeetKai), as its chat template asks and llama.cpp's `functionary-v3.2`
//! parser reads it: each part of the answer starts with `>>>` and its recipient on a line of
//! its own, `all` for text to the user, a tool's name for that call's JSON arguments,
//! `python` for code given to a `python` tool (as its `code` argument). The template ends the
//! prompt with `>>>`, so the answer's first part comes without one:
//!
//! ```text
//! all
//! Let me look that up.>>>get_weather
//! {"city": "Paris"}
//! >>>python
//! print(1 + 1)
//! ```
//!
//! The text to the user is prose: a call written in it does not run. Code after `python`
//! (when it is not a JSON object) runs to the end of the text, as llama.cpp reads it.

use super::scan::{char_end, cut, json_end, malformed, skip_ws, span, trim, Out, Src};
use super::{FormatArgs, ModelFormat, Spec, TextArg};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Functionary,
    name: "functionary-v3.2",
    marker_starts: &[b">>"],
    found_by_markers: true,
    holds_markers,
    read,
};

const WHAT: &str = "Functionary";
const START: &str = ">>>";
/// The recipient of text to the user.
const ALL: &str = "all";
/// The recipient of raw code.
const PYTHON: &str = "python";

/// A `>>>` header whose part the format alone writes: `all` or `python` on their own line, or
/// a name whose line is followed by a JSON object.
fn holds_markers(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(p) = text.get(from..).and_then(|t| t.find(START)) {
        let name = from + p + START.len();
        if let Recipient::Line(end) = recipient(b, name) {
            let who = &text[name..end];
            if who == ALL || who == PYTHON || b.get(end + 1) == Some(&b'{') {
                return true;
            }
        }
        from = name;
    }
    false
}

/// What follows a part's start.
enum Recipient {
    /// A recipient ending here, at its line's `\n`.
    Line(usize),
    /// The text ends within the recipient or before its `\n`.
    Cut,
    /// Not a recipient's line.
    Not,
}

/// The recipient whose name starts at `i`: letters, digits and `_ - . :` (a tool name's
/// characters), then a newline.
fn recipient(b: &[u8], i: usize) -> Recipient {
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'-' | b'.' | b':'))
    {
        j += 1;
    }
    match b.get(j) {
        None => Recipient::Cut,
        Some(b'\n') if j > i => Recipient::Line(j),
        Some(b'\r') if j > i && b.get(j + 1) == Some(&b'\n') => Recipient::Line(j),
        Some(b'\r') if j > i && j + 1 == b.len() => Recipient::Cut,
        _ => Recipient::Not,
    }
}

/// Past the newline that ends a recipient's line at `end`.
fn after_line(b: &[u8], end: usize) -> usize {
    if b.get(end) == Some(&b'\r') {
        end + 2
    } else {
        end + 1
    }
}

fn read(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let b = src.b;
    // The first part has no `>>>`: the prompt ended with it. It is read only when it is one
    // the format writes (text to the user, code, or a name and its JSON object).
    let lead = src.find_any(0, &[""]).map_or(0, |(p, _)| p);
    let first = skip_ws(b, lead);
    let mut pos = first;
    if let Recipient::Line(end) = recipient(b, first) {
        let who = &text[first..end];
        let body = after_line(b, end);
        if who == ALL || who == PYTHON || b.get(body) == Some(&b'{') {
            match part(text, &mut src, (first, first, end), out) {
                Some(next) => pos = next,
                None => {
                    src.report_reasoning(out);
                    return;
                }
            }
        }
    }
    while let Some((start, _)) = src.find_any(pos, &[START]) {
        let name = start + START.len();
        match recipient(b, name) {
            Recipient::Line(end) => match part(text, &mut src, (start, name, end), out) {
                Some(next) => pos = next,
                None => break,
            },
            Recipient::Cut => {
                out.markup(start, name, IgnoreReason::ChatToken);
                let error = cut(WHAT, "", "\\n");
                out.broken("", None, start, text.len(), error);
                break;
            }
            Recipient::Not => pos = name,
        }
    }
    src.report_reasoning(out);
}

/// Read the part whose header runs from `start` (its `>>>`, if any) through the recipient at
/// `name..end`: where the next part may start, or `None` when the text ends within this one.
fn part(
    text: &str,
    src: &mut Src<'_>,
    (start, name, end): (usize, usize, usize),
    out: &mut Out,
) -> Option<usize> {
    let b = text.as_bytes();
    let who = &text[name..end];
    let body = after_line(b, end);
    out.markup(start, body, IgnoreReason::ChatToken);
    if who == ALL {
        // Text to the user, up to the next part.
        let stop = next_part(text, src, body);
        out.markup(body, stop, IgnoreReason::Prose);
        out.claim(start, stop);
        return (stop < text.len()).then_some(stop);
    }
    let open = skip_ws(b, body);
    if b.get(open) != Some(&b'{') {
        if who == PYTHON {
            // Raw code: the rest of the text is the `python` tool's `code` (a key the text
            // does not write: its span is empty, where the code starts).
            let arg = TextArg {
                key: "code".to_string(),
                key_span: span(body, body),
                value: text[body..].to_string(),
                value_span: span(body, text.len()),
                quoted: true,
            };
            out.call(
                who,
                Some(span(name, end)),
                (start, text.len()),
                FormatArgs::Text(vec![arg]),
                None,
            );
            return None;
        }
        if open >= text.len() {
            let error = cut(WHAT, who, "}");
            out.broken(who, Some(span(name, end)), start, text.len(), error);
            return None;
        }
        let error = malformed(
            WHAT,
            who,
            "expected a JSON object of arguments on the line after the name",
        )
        .at(span(open, char_end(text, open)));
        let stop = next_part(text, src, open);
        out.broken(who, Some(span(name, end)), start, stop, error);
        return (stop < text.len()).then_some(stop);
    }
    let Some(args_end) = json_end(b, open) else {
        let error = cut(WHAT, who, "}");
        out.broken(who, Some(span(name, end)), start, text.len(), error);
        return None;
    };
    out.call(
        who,
        Some(span(name, end)),
        (start, args_end),
        FormatArgs::Json(span(open, args_end)),
        None,
    );
    // What follows up to the next part is text to the user.
    let next = next_part(text, src, args_end);
    let (from, to) = trim(b, args_end, next);
    out.markup(from, to, IgnoreReason::Prose);
    out.claim(start, next);
    Some(next)
}

/// Where the next part starts at or after `from`: a `>>>` and a recipient's line, or one the
/// text ends within; the end of the text when there is none. A `>>>` followed by anything else
/// (a doctest's `>>> f(1)`) is part of the text before it.
fn next_part(text: &str, src: &mut Src<'_>, from: usize) -> usize {
    let mut pos = from;
    while let Some((start, _)) = src.find_any(pos, &[START]) {
        match recipient(text.as_bytes(), start + START.len()) {
            Recipient::Not => pos = start + START.len(),
            Recipient::Line(_) | Recipient::Cut => return start,
        }
    }
    text.len()
}

/// Whether a call whose own text is `own` may still grow (`python` raw code runs to the end of
/// the text: more may come while the model writes); see [`super::may_go_on`].
pub(super) fn goes_on(own: &str, _rest: &str) -> bool {
    let rest = own.strip_prefix(START).unwrap_or(own);
    rest.strip_prefix(PYTHON)
        .and_then(|r| r.strip_prefix('\n').or_else(|| r.strip_prefix("\r\n")))
        .is_some_and(|code| !code.trim_start().starts_with('{'))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_src, is_broken, names, read_as};
    use super::super::{detect, FormatArgs, ModelFormat};

    const F: ModelFormat = ModelFormat::Functionary;

    #[test]
    fn llama_cpp_cases() {
        // llama.cpp's tests/test-chat.cpp, Functionary v3.2.
        let text = "all\nHello, world!\nnono\nWhat's up?>>>special_function\n{\"arg1\": 1}\n";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function"]);
        assert_eq!(args_src(&r.calls[0], text), "{\"arg1\": 1}");
        let text = "special_function\n{\"arg1\": 1} \n                    ";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["special_function"]);
        let text = "python\n# This is a program:\nprint('hey')";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["python"]);
        let FormatArgs::Text(args) = &r.calls[0].args else {
            panic!("{r:?}")
        };
        assert_eq!(args[0].key, "code");
        assert_eq!(args[0].value, "# This is a program:\nprint('hey')");
        assert!(args[0].quoted);
        let r = read_as(F, "all\nHello, world!\nWhat's up?");
        assert!(r.calls.is_empty());
    }

    #[test]
    fn several_parts_and_text_between() {
        let text = "add\n{\"a\": 1, \"b\": 2}>>>all\nAnd now: multiply(a=9, b=9)>>>search\n{\"query\": \"é\"}";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["add", "search"]);
        assert_eq!(detect(text), [F]);
        // The call written in the text to the user is prose, claimed.
        assert!(r
            .claimed
            .iter()
            .any(|s| s.start as usize <= text.find("multiply").unwrap()));
    }

    #[test]
    fn markers_inside_data_or_a_doctest_are_not_parts() {
        let text = "search(query='>>>multiply\n{\"a\": 9}')";
        assert!(read_as(F, text).calls.is_empty());
        assert!(detect(">>> add(1, 2)\n3").is_empty());
        // A doctest in the text to the user stays in it: the line after it is claimed too.
        let text = "all\nTry:\n>>> add(1, 2)\nmultiply(a=9, b=9)\n>>>search\n{\"query\": \"x\"}";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["search"]);
        let at = text.find("multiply").unwrap() as u32;
        assert!(
            r.claimed.iter().any(|s| s.start <= at && at < s.end),
            "{r:?}"
        );
    }

    #[test]
    fn cut_off_and_malformed() {
        let r = read_as(F, "all\nOne moment.>>>multi");
        assert_eq!(r.calls.len(), 1);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, ">>>add\n{\"a\": 1");
        assert_eq!(names(&r), ["add"]);
        assert!(is_broken(&r.calls[0]));
        let r = read_as(F, ">>>add\nnot json>>>search\n{\"query\": \"x\"}");
        assert_eq!(names(&r), ["add", "search"]);
        assert!(is_broken(&r.calls[0]) && !is_broken(&r.calls[1]));
    }

    #[test]
    fn plain_text_has_nothing() {
        assert_eq!(read_as(F, "Paris is sunny."), Default::default());
    }
}

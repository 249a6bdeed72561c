//! The `<invoke name="f"><parameter name="a">1</parameter></invoke>` calls that MiniMax-M2,
//! Step3 (`<steptml:invoke …>`) and DeepSeek's DSML (`<｜DSML｜invoke …>`) write, each in its
//! own section: one reader for the three, given each one's tags.
//!
//! A value is kept exactly as written (the templates write it inline, so the text around it
//! is data: an edit tool's `old_string` keeps its spaces, code its indentation and trailing
//! newline) and converted by its parameter's type. A `</parameter>` ends the value only when
//! the next thing is another parameter or the invoke's close (so a value may hold the text
//! `</parameter>`). The call is complete at its `</invoke>`. Other attributes of a parameter
//! tag (DSML's `string="true"`) are read over: the parameter's type decides.

use super::scan::{char_end, may_continue, skip_ws, slice, span, Out, Reading};
use super::{FormatArgs, TextArg};

/// A format's tags.
pub(super) struct Tags {
    /// The format, for messages.
    pub what: &'static str,
    /// The invoke tag's start, `<invoke`.
    pub invoke: &'static str,
    pub end_invoke: &'static str,
    /// A parameter tag's start, `<parameter`.
    pub parameter: &'static str,
    pub end_parameter: &'static str,
}

/// Read the invoke at `at` (the call's stretch starting at `start`); where it ends, or `None`
/// when the text ends inside it (a broken call is pushed either way when it is not a call).
///
/// Long (about 90 lines) for a reason: one scan of the invoke's parameter tags, whose steps
/// share the position, the call being read and the arguments read so far.
pub(super) fn invoke(
    tags: &Tags,
    text: &str,
    (start, at): (usize, usize),
    out: &mut Out,
) -> Option<usize> {
    let b = text.as_bytes();
    let call = Reading::new(text, tags.what, start, tags.end_invoke);
    let (name, close) = match attribute(text, at + tags.invoke.len(), "name") {
        Attr::Found(a, z, close) => (span(a, z), close),
        Attr::Cut(Some((a, z))) => return call.named(a, z).cut(out),
        Attr::Cut(None) => return call.cut(out),
        Attr::Bad(p) => {
            let problem = "expected `name=\"…\"` in the invoke tag";
            return call.malformed(problem, span(p, char_end(text, p)), p, out);
        }
    };
    let call = call.named(name.start as usize, name.end as usize);
    if call.name.is_empty() {
        return call.malformed("the invoke names no function", name, close, out);
    }
    let mut args: Vec<TextArg> = Vec::new();
    let mut i = close + 1;
    let end = loop {
        i = skip_ws(b, i);
        let rest = &text[i..];
        if rest.starts_with(tags.end_invoke) {
            break i + tags.end_invoke.len();
        }
        if !opens(rest, tags.parameter) {
            if may_continue(text, i, &[tags.end_invoke, tags.parameter]) {
                return call.cut(out);
            }
            let problem = format!(
                "expected `{} name=…>` or `{}`",
                tags.parameter, tags.end_invoke
            );
            return call.malformed(&problem, span(i, char_end(text, i)), i, out);
        }
        let (key, key_close) = match attribute(text, i + tags.parameter.len(), "name") {
            Attr::Found(a, z, close) => ((a, z), close),
            Attr::Cut(_) => return call.cut(out),
            Attr::Bad(p) => {
                let problem = "expected `name=\"…\"` in a parameter tag";
                return call.malformed(problem, span(p, char_end(text, p)), p, out);
            }
        };
        let value_start = key_close + 1;
        let mut from = value_start;
        let value_end = loop {
            let Some(q) = super::scan::find(text, from, tags.end_parameter) else {
                return call.cut(out);
            };
            let k = skip_ws(b, q + tags.end_parameter.len());
            if opens(&text[k..], tags.parameter) || text[k..].starts_with(tags.end_invoke) {
                break q;
            }
            if may_continue(text, k, &[tags.parameter, tags.end_invoke]) {
                return call.cut(out);
            }
            from = q + tags.end_parameter.len();
        };
        let key_text = &text[key.0..key.1];
        if let Some(first) = args.iter().find(|arg| arg.key == key_text) {
            let problem = format!("parameter `{key_text}` is given twice");
            let at = first.key_span.to(span(key.0, key.1));
            return call.malformed(&problem, at, value_end, out);
        }
        args.push(TextArg {
            key: key_text.to_string(),
            key_span: span(key.0, key.1),
            value: slice(text, value_start, value_end),
            value_span: span(value_start, value_end),
        });
        i = value_end + tags.end_parameter.len();
    };
    out.call(
        call.name,
        call.name_span,
        (start, end),
        FormatArgs::Text(args),
        None,
    );
    Some(end)
}

/// Whether `rest` opens the tag whose start is `tag` (`<parameter` then a blank or `>`).
fn opens(rest: &str, tag: &str) -> bool {
    rest.strip_prefix(tag)
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_whitespace() || c == '>'))
}

/// An attribute's value read in a tag.
enum Attr {
    /// The value is at `.0..​.1`; the tag's `>` at `.2`.
    Found(usize, usize, usize),
    /// The text ends inside the tag (after the whole value, here, if it was read).
    Cut(Option<(usize, usize)>),
    /// Not the attribute, here.
    Bad(usize),
}

/// The value of the attribute `key` (`name="add"`, `name='add'` or `name=add`) right after
/// the tag's start, before `i`'s blanks; other attributes after it are read over up to the
/// tag's `>`.
fn attribute(text: &str, i: usize, key: &str) -> Attr {
    let b = text.as_bytes();
    let k = skip_ws(b, i);
    if k >= b.len() {
        return Attr::Cut(None);
    }
    let rest = &text[k..];
    if k == i || !rest.starts_with(key) {
        return if key.starts_with(rest) {
            Attr::Cut(None)
        } else {
            Attr::Bad(k)
        };
    }
    let eq = k + key.len();
    match b.get(eq) {
        None => return Attr::Cut(None),
        Some(b'=') => {}
        Some(_) => return Attr::Bad(eq),
    }
    let v = eq + 1;
    let (a, z, after) = match b.get(v) {
        None => return Attr::Cut(None),
        Some(&q @ (b'"' | b'\'')) => match text[v + 1..].find(char::from(q)) {
            Some(p) => (v + 1, v + 1 + p, v + 2 + p),
            None => return Attr::Cut(None),
        },
        Some(_) => {
            let len = text[v..]
                .find(|c: char| c.is_ascii_whitespace() || c == '>')
                .unwrap_or(text.len() - v);
            (v, v + len, v + len)
        }
    };
    // The value holds no tag's bracket; the tag ends at the next `>`.
    if text[a..z].contains(['<', '>']) {
        return Attr::Bad(a);
    }
    match text[after..].find(['>', '<']) {
        Some(p) if b[after + p] == b'>' => Attr::Found(a, z, after + p),
        Some(p) => Attr::Bad(after + p),
        // An unquoted value is whole only once something follows it.
        None if after < text.len() || b.get(v).is_some_and(|c| matches!(c, b'"' | b'\'')) => {
            Attr::Cut(Some((a, z)))
        }
        None => Attr::Cut(None),
    }
}

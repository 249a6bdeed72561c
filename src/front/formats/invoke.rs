//! The `<invoke name="f"><parameter name="a">1</parameter></invoke>` calls that MiniMax-M2,
//! Step3 (`<steptml:invoke …>`), DeepSeek's DSML (`<｜DSML｜invoke …>`), MiniCPM5
//! (`<function name="f"><param name="a">`) and Kimi K3 (`<|open|>call tool="f"<|sep|>…`)
//! write, each in its own section: one reader for them all, given each one's tags.
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
    /// The invoke tag's start, `<invoke`, and the attribute naming the function.
    pub invoke: &'static str,
    pub name: &'static str,
    pub end_invoke: &'static str,
    /// A parameter tag's start, `<parameter`, and the attribute naming the parameter.
    pub parameter: &'static str,
    pub key: &'static str,
    pub end_parameter: &'static str,
    /// What ends an opening tag (`>`; Kimi K3's `<|sep|>`).
    pub tag_end: &'static str,
    /// Whether a value may be wrapped in `<![CDATA[…]]>` (MiniCPM5), which is taken off.
    pub cdata: bool,
}

/// The tags of the `<invoke>` formats, with `>` ending a tag and no CDATA.
pub(super) const fn xml_tags(
    what: &'static str,
    (invoke, end_invoke): (&'static str, &'static str),
    (parameter, end_parameter): (&'static str, &'static str),
) -> Tags {
    Tags {
        what,
        invoke,
        name: "name",
        end_invoke,
        parameter,
        key: "name",
        end_parameter,
        tag_end: ">",
        cdata: false,
    }
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
    let (name, close) = match attribute(tags, text, at + tags.invoke.len(), tags.name) {
        Attr::Found(a, z, close) => (span(a, z), close),
        Attr::Cut(Some((a, z))) => return call.named(a, z).cut(out),
        Attr::Cut(None) => return call.cut(out),
        Attr::Bad(p) => {
            let problem = format!("expected `{}=\"…\"` in the invoke tag", tags.name);
            return call.malformed(&problem, span(p, char_end(text, p)), p, out);
        }
    };
    let call = call.named(name.start as usize, name.end as usize);
    if call.name.is_empty() {
        return call.malformed("the invoke names no function", name, close, out);
    }
    let mut args: Vec<TextArg> = Vec::new();
    let mut i = close;
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
                "expected `{} {}=…` or `{}`",
                tags.parameter, tags.key, tags.end_invoke
            );
            return call.malformed(&problem, span(i, char_end(text, i)), i, out);
        }
        let (key, key_close) = match attribute(tags, text, i + tags.parameter.len(), tags.key) {
            Attr::Found(a, z, close) => ((a, z), close),
            Attr::Cut(_) => return call.cut(out),
            Attr::Bad(p) => {
                let problem = format!("expected `{}=\"…\"` in a parameter tag", tags.key);
                return call.malformed(&problem, span(p, char_end(text, p)), p, out);
            }
        };
        let value_start = key_close;
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
        let key_text = unescape(&text[key.0..key.1]);
        if let Some(first) = args.iter().find(|arg| arg.key == key_text) {
            let problem = format!("parameter `{key_text}` is given twice");
            let at = first.key_span.to(span(key.0, key.1));
            return call.malformed(&problem, at, value_end, out);
        }
        let (a, z) = if tags.cdata {
            cdata(text, value_start, value_end)
        } else {
            (value_start, value_end)
        };
        args.push(TextArg {
            key: key_text,
            key_span: span(key.0, key.1),
            value: slice(text, a, z),
            value_span: span(a, z),
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

/// Whether `rest` opens the tag whose start is `tag` (`<parameter` then a blank).
fn opens(rest: &str, tag: &str) -> bool {
    rest.strip_prefix(tag)
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_whitespace()))
}

/// An attribute value's escapes (`&quot;`, `&amp;`, as Kimi K3 writes them) read.
fn unescape(raw: &str) -> String {
    if raw.contains('&') {
        raw.replace("&quot;", "\"").replace("&amp;", "&")
    } else {
        raw.to_string()
    }
}

/// A value `a..z` without the `<![CDATA[…]]>` around it, if it is so wrapped.
fn cdata(text: &str, a: usize, z: usize) -> (usize, usize) {
    const OPEN: &str = "<![CDATA[";
    const CLOSE: &str = "]]>";
    let v = &text[a..z];
    if v.len() >= OPEN.len() + CLOSE.len() && v.starts_with(OPEN) && v.ends_with(CLOSE) {
        (a + OPEN.len(), z - CLOSE.len())
    } else {
        (a, z)
    }
}

/// An attribute's value read in a tag.
enum Attr {
    /// The value is at `.0..​.1`; the tag ends at `.2`.
    Found(usize, usize, usize),
    /// The text ends inside the tag (after the whole value, here, if it was read).
    Cut(Option<(usize, usize)>),
    /// Not the attribute, here.
    Bad(usize),
}

/// The value of the attribute `key` (`name="add"`, `name='add'` or `name=add`) among the
/// blank-separated attributes of the tag whose name ends at `i`, and where the tag ends.
fn attribute(tags: &Tags, text: &str, i: usize, key: &str) -> Attr {
    let b = text.as_bytes();
    let mut found: Option<(usize, usize)> = None;
    let mut j = i;
    loop {
        let k = skip_ws(b, j);
        let rest = &text[k..];
        if rest.starts_with(tags.tag_end) {
            return match found {
                Some((a, z)) => Attr::Found(a, z, k + tags.tag_end.len()),
                None => Attr::Bad(k),
            };
        }
        if tags.tag_end.starts_with(rest) {
            return Attr::Cut(found);
        }
        // Attributes stand apart.
        if k == j {
            return Attr::Bad(k);
        }
        let name_end = k + rest
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
            .count();
        match b.get(name_end) {
            None => return Attr::Cut(found),
            Some(b'=') if name_end > k => {}
            Some(_) => return Attr::Bad(name_end),
        }
        let v = name_end + 1;
        let (a, z, after) = match b.get(v) {
            None => return Attr::Cut(found),
            Some(&q @ (b'"' | b'\'')) => match text[v + 1..].find(char::from(q)) {
                Some(p) => (v + 1, v + 1 + p, v + 2 + p),
                None => return Attr::Cut(found),
            },
            Some(_) => {
                let len = text[v..]
                    .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '<')
                    .unwrap_or(text.len() - v);
                if v + len >= text.len() {
                    return Attr::Cut(found);
                }
                (v, v + len, v + len)
            }
        };
        // A value holds no tag's bracket.
        if text[a..z].contains(['<', '>']) {
            return Attr::Bad(a);
        }
        if found.is_none() && &text[k..name_end] == key {
            found = Some((a, z));
        }
        j = after;
    }
}

//! Python's `repr()` of a [`Value`]: floats, strings and bytes written as Python writes them.

use super::*;

impl Value {
    /// Python `repr()` of the value, e.g. `Point(x=4, y=6)` or `[1, 'a']`.
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            Value::None => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::BigInt(b) => {
                let _ = write!(out, "{b}");
            }
            Value::Float(f) => out.push_str(&float_repr(*f)),
            Value::Str(s) => out.push_str(&str_repr(s)),
            Value::Bytes(b) => out.push_str(&bytes_repr(b)),
            Value::List(items) => write_seq(out, "[", items.iter(), "]"),
            Value::Tuple(items) if items.len() == 1 => write_seq(out, "(", items.iter(), ",)"),
            Value::Tuple(items) => write_seq(out, "(", items.iter(), ")"),
            Value::Set(items) if items.is_empty() => out.push_str("set()"),
            Value::Set(items) => write_seq(out, "{", items.iter(), "}"),
            Value::Dict(d) => {
                out.push('{');
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_repr(out);
                    out.push_str(": ");
                    v.write_repr(out);
                }
                out.push('}');
            }
            Value::Record(r) => write_call(
                out,
                &r.name,
                &[],
                r.fields.iter().map(|(k, v)| (k.as_str(), v)),
            ),
            Value::Array(a) => {
                out.push_str("array(");
                out.push_str(&a.to_json().to_string().replace(',', ", "));
                out.push(')');
            }
        }
    }
}

/// Python's reserved words: never names, keyword-argument names or tool names.
pub const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether a keyword argument named `name` is written `name=value` in Python call text: an
/// ASCII identifier that is neither a reserved word nor a dunder name. Any other key (`from`,
/// `max-results`, `$filter`, `城市`, a dunder name) is written as a string key of a dict
/// display after `**` (`f(**{"from": "USD"})`), which fexpr's parser reads as keyword
/// arguments with exactly those names; every printer of calls writes such keywords so.
///
/// ```
/// use fexpr::value::is_keyword_name;
/// assert!(is_keyword_name("max_results"));
/// assert!(!is_keyword_name("from") && !is_keyword_name("max-results") && !is_keyword_name("城市"));
/// ```
pub fn is_keyword_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        && !PYTHON_KEYWORDS.contains(&name)
        && !(name.starts_with("__") && name.ends_with("__"))
}

/// `name(args, k=v)` with values as Python writes them, a keyword that is not a
/// [keyword name](is_keyword_name) as a string key after `**` (`f(**{'from': 'USD'})`).
pub(crate) fn write_call<'a>(
    out: &mut String,
    name: &str,
    args: &[Value],
    kwargs: impl Iterator<Item = (&'a str, &'a Value)>,
) {
    out.push_str(name);
    out.push('(');
    let mut first = true;
    for v in args {
        if !first {
            out.push_str(", ");
        }
        first = false;
        v.write_repr(out);
    }
    let mut in_dict = false;
    for (k, v) in kwargs {
        let plain = is_keyword_name(k);
        if in_dict && plain {
            out.push('}');
            in_dict = false;
        }
        if !first {
            out.push_str(", ");
        }
        first = false;
        if plain {
            out.push_str(k);
            out.push('=');
        } else {
            if !in_dict {
                out.push_str("**{");
                in_dict = true;
            }
            out.push_str(&str_repr(k));
            out.push_str(": ");
        }
        v.write_repr(out);
    }
    if in_dict {
        out.push('}');
    }
    out.push(')');
}

fn write_seq<'a>(
    out: &mut String,
    open: &str,
    items: impl Iterator<Item = &'a Value>,
    close: &str,
) {
    out.push_str(open);
    for (i, v) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        v.write_repr(out);
    }
    out.push_str(close);
}

/// Python's repr of a float: `1.0`, `0.1`, `1e+300`, `inf`, `nan`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else if f != 0.0 && (f.abs() >= 1e16 || f.abs() < 1e-4) {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e:0>2}"),
            Some((m, e)) => format!("{m}e-{:0>2}", &e[1..]),
            None => s,
        }
    } else {
        format!("{f:?}")
    }
}

/// Python's repr of a str (single quotes unless the text has one and no double quote).
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn bytes_repr(b: &[u8]) -> String {
    let mut out = String::from("b'");
    for &x in b {
        match x {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(x as char),
            _ => {
                let _ = write!(out, "\\x{x:02x}");
            }
        }
    }
    out.push('\'');
    out
}

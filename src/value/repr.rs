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
            Value::Record(r) => {
                out.push_str(&r.name);
                out.push('(');
                for (i, (k, v)) in r.fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push('=');
                    v.write_repr(out);
                }
                out.push(')');
            }
            Value::Array(a) => {
                out.push_str("array(");
                out.push_str(&a.to_json().to_string().replace(',', ", "));
                out.push(')');
            }
        }
    }
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

//! Direct serde conversion between [`Value`] and ordinary Rust types (tool parameters and
//! results), without building a `serde_json::Value` in between.
//!
//! The conversion is defined as the JSON one (`serde_json::to_value` + [`Value::from_json`],
//! and `serde_json::from_value` of [`Value::to_json`]): every case here produces what that
//! detour produces, including its errors, except that [`Build`] keeps an infinite or NaN float
//! as it is where JSON writes `null` (the tool manager then refuses the result, saying where the
//! float is; see [`Value`]). The common shapes (scalars, strings, sequences,
//! records into structs, structs into dicts) are converted directly; the rare ones (dicts into
//! maps, enums, ndarrays into nested lists) still take the JSON detour, which is exact by
//! construction.

use serde_json::Error;

use super::{Dict, Value};

mod deserialize;
mod serialize;
#[cfg(test)]
mod tests;

pub(super) use self::deserialize::Owned;
pub(super) use self::serialize::Build;

/// A value described in a few words for a conversion error ([`Before::brief`]: scalars as
/// written, cut short; containers by kind and size), and how serde's messages describe a
/// value of its kind.
pub(super) struct Brief {
    text: String,
    serde_kinds: &'static [&'static str],
}

/// How serde's messages describe a value of `v`'s kind.
fn serde_kinds(v: &Value) -> &'static [&'static str] {
    match v {
        Value::None => &["null", "unit"],
        Value::Bool(_) => &["boolean"],
        Value::Int(_) | Value::BigInt(_) => &["integer", "string"],
        Value::Float(_) => &["floating point", "null"],
        Value::Str(_) => &["string", "char"],
        Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::Bytes(_) | Value::Array(_) => {
            &["sequence"]
        }
        Value::Dict(_) | Value::Record(_) => &["map"],
    }
}

/// What [`Brief`] needs of a value about to be consumed by a conversion, taken without
/// formatting anything (a conversion runs for every argument of every tool call; its [`Brief`]
/// is written only if it fails): a container's kind and size, a record's name, or a copy of a
/// small value (a scalar, a short str).
pub(super) struct Before {
    held: Held,
    serde_kinds: &'static [&'static str],
}

enum Held {
    /// `{what} {count} {unit}`: `a list of 3 items`.
    Sized {
        what: &'static str,
        count: usize,
        unit: &'static str,
    },
    /// A record's name.
    Record(String),
    /// A small value, described as written.
    Kept(Value),
}

impl Before {
    /// What the [`Brief`] of `v` will need.
    pub(super) fn of(v: &Value) -> Before {
        Before::sized(v).unwrap_or_else(|| Before {
            held: Held::Kept(v.clone()),
            serde_kinds: serde_kinds(v),
        })
    }

    /// `v` by its kind and size (a record by its name); `None` for a value described as
    /// written (a scalar, a str of at most 40 bytes).
    fn sized(v: &Value) -> Option<Before> {
        let sized = |what, count, unit| Held::Sized { what, count, unit };
        let held = match v {
            Value::List(items) => sized("a list of", items.len(), "items"),
            Value::Tuple(items) => sized("a tuple of", items.len(), "items"),
            Value::Set(items) => sized("a set of", items.len(), "items"),
            Value::Dict(d) => sized("a dict of", d.len(), "keys"),
            Value::Record(r) => Held::Record(crate::error::clip(&r.name, 40)),
            Value::Array(a) => sized("an ndarray of", a.len(), "elements"),
            Value::Bytes(b) => sized("a bytes value of", b.len(), "bytes"),
            Value::Str(s) if s.len() > 40 => sized("a str of", s.chars().count(), "characters"),
            _ => return None,
        };
        Some(Before {
            held,
            serde_kinds: serde_kinds(v),
        })
    }

    /// The [`Brief`] of the value this was taken from.
    pub(super) fn brief(self) -> Brief {
        let text = match self.held {
            Held::Sized { what, count, unit } => format!("{what} {count} {unit}"),
            Held::Record(name) => format!("a {name} record"),
            Held::Kept(v) => crate::error::clip(&v.repr(), 40),
        };
        Brief {
            text,
            serde_kinds: self.serde_kinds,
        }
    }
}

/// Why `shown` did not convert, in Python's terms: serde's standard messages ("invalid type:
/// string \"x\", expected i64") name Rust types and do not say whether they are about the value
/// or something inside it; a message of the target type's own (a custom `Deserialize`) is kept.
pub(super) fn reason(shown: &Brief, e: &Error) -> String {
    let message = e.to_string();
    let after = |prefix: &str| message.strip_prefix(prefix);
    let expected = |rest: &str| {
        rest.rsplit_once(", expected ")
            .map_or("the parameter's type".to_string(), |(_, e)| {
                expected_words(e)
            })
    };
    let kinds = shown.serde_kinds;
    let shown = &shown.text;
    if let Some(rest) = after("invalid type: ").or_else(|| after("invalid value: ")) {
        return if kinds.iter().any(|k| rest.starts_with(k)) {
            format!("{shown} does not fit {}", expected(rest))
        } else {
            format!("{shown} holds a value that does not fit {}", expected(rest))
        };
    }
    if let Some(rest) = after("invalid length ") {
        return format!("{shown} does not fit {}", expected(rest));
    }
    let quoted = |rest: &str| rest.split('`').nth(1).unwrap_or_default().to_string();
    if let Some(rest) = after("missing field ") {
        return format!("{shown} is missing field `{}`", quoted(rest));
    }
    if let Some(rest) = after("unknown field ") {
        return format!("{shown} has no field `{}`", quoted(rest));
    }
    if let Some(rest) = after("duplicate field ") {
        return format!("{shown} gives field `{}` twice", quoted(rest));
    }
    if let Some(rest) = after("unknown variant ") {
        let listed = rest.split_once("expected ").map_or("", |(_, l)| l);
        return format!(
            "{shown} is not {}",
            listed.replace("one of", "one of the values")
        );
    }
    format!("{shown} is refused by the parameter's type: {message}")
}

/// serde's name for what a Rust type expects, in Python's terms.
fn expected_words(expected: &str) -> String {
    let bits = |t: &str| t.trim_start_matches(['i', 'u']).to_string();
    match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" => format!("a {}-bit integer", bits(expected)),
        "u8" | "u16" | "u32" | "u64" | "u128" => {
            format!("an unsigned {}-bit integer", bits(expected))
        }
        "isize" | "usize" => "an integer of the machine's size".into(),
        "f32" | "f64" => "a float".into(),
        "a boolean" => "a bool".into(),
        "a string" | "a borrowed string" | "string" => "a str".into(),
        "a character" | "a char" => "a single-character str".into(),
        "a sequence" => "a list".into(),
        "a map" => "a dict".into(),
        "unit" => "None".into(),
        "a byte array" | "byte array" => "bytes".into(),
        other => match other.strip_prefix("struct ") {
            Some(name) => format!("a {name} record"),
            None => match other.strip_prefix("a tuple of size ") {
                Some(n) => format!("a tuple of {n} items"),
                None if other.starts_with("enum ") || other.starts_with("variant ") => {
                    "one of the parameter's variants".into()
                }
                None => "the parameter's type".into(),
            },
        },
    }
}

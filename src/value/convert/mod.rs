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

/// A value described in a few words for a conversion error (scalars as written, cut short;
/// containers by kind and size), and how serde's messages describe a value of its kind.
pub(super) struct Brief {
    text: String,
    serde_kinds: &'static [&'static str],
}

/// See [`Brief`].
pub(super) fn brief(v: &Value) -> Brief {
    let text = match v {
        Value::List(items) => format!("a list of {} items", items.len()),
        Value::Tuple(items) => format!("a tuple of {} items", items.len()),
        Value::Set(items) => format!("a set of {} items", items.len()),
        Value::Dict(d) => format!("a dict of {} keys", d.len()),
        Value::Record(r) => format!("a {} record", crate::error::clip(&r.name, 40)),
        Value::Array(a) => format!("an ndarray of {} elements", a.len()),
        Value::Bytes(b) => format!("a bytes value of {} bytes", b.len()),
        Value::Str(s) if s.len() > 40 => format!("a str of {} characters", s.chars().count()),
        other => crate::error::clip(&other.repr(), 40),
    };
    let serde_kinds: &[&str] = match v {
        Value::None => &["null", "unit"],
        Value::Bool(_) => &["boolean"],
        Value::Int(_) | Value::BigInt(_) => &["integer", "string"],
        Value::Float(_) => &["floating point", "null"],
        Value::Str(_) => &["string", "char"],
        Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::Bytes(_) | Value::Array(_) => {
            &["sequence"]
        }
        Value::Dict(_) | Value::Record(_) => &["map"],
    };
    Brief { text, serde_kinds }
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

//! Observations: the short text a model sees for a tool's result, as opposed to the full
//! output the program keeps.
//!
//! A tool may give its own observation ([`ToolOutput::with_observation`](crate::ToolOutput::with_observation))
//! or a per-tool formatter ([`FunctionTool::observe`](crate::FunctionTool::observe)); otherwise
//! [`summarize`] writes one: the value's Python form, with long strings cut, long collections
//! shown by their first items and a count, arrays by shape, and the whole bounded in size.

use crate::error::clip;
use crate::value::Value;

/// Items of a collection shown before the rest is counted.
const SHOWN_ITEMS: usize = 8;
/// Characters of one string shown before it is cut.
const SHOWN_STR: usize = 200;
/// Nesting shown before inner values become `…`.
const SHOWN_DEPTH: usize = 6;

/// A model-facing summary of `value` of at most `max_chars` characters (plus a trailing `…`
/// when cut).
///
/// ```
/// use fexpr::Value;
/// let big = Value::List((0..10_000).map(Value::Int).collect());
/// let text = fexpr::observe::summarize(&big, 200);
/// assert_eq!(text, "[0, 1, 2, 3, 4, 5, 6, 7, … (9992 more of 10000 items)]");
/// assert_eq!(fexpr::observe::summarize(&Value::Str("hi".into()), 200), "'hi'");
/// ```
pub fn summarize(value: &Value, max_chars: usize) -> String {
    let mut out = String::new();
    write_summary(value, 0, max_chars.saturating_add(1), &mut out);
    clip(&out, max_chars)
}

/// Append the summary of `value` to `out`, stopping once `out` holds `budget` bytes.
fn write_summary(value: &Value, depth: usize, budget: usize, out: &mut String) {
    if out.len() >= budget {
        return;
    }
    if depth >= SHOWN_DEPTH {
        out.push('…');
        return;
    }
    match value {
        Value::Str(s) if s.chars().count() > SHOWN_STR => {
            out.push_str(&Value::Str(clip(s, SHOWN_STR)).repr());
            out.push_str(&format!(" ({} chars)", s.chars().count()));
        }
        Value::Bytes(b) if b.len() > SHOWN_STR => {
            out.push_str(&format!("<{} bytes>", b.len()));
        }
        Value::List(items) => {
            write_items(items.iter(), items.len(), ("[", "]"), depth, budget, out)
        }
        Value::Tuple(items) => {
            write_items(items.iter(), items.len(), ("(", ")"), depth, budget, out)
        }
        Value::Set(items) => write_items(items.iter(), items.len(), ("{", "}"), depth, budget, out),
        Value::Dict(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if i == SHOWN_ITEMS || out.len() >= budget {
                    out.push_str(&format!("… ({} more of {} keys)", map.len() - i, map.len()));
                    break;
                }
                write_summary(k, depth + 1, budget, out);
                out.push_str(": ");
                write_summary(v, depth + 1, budget, out);
            }
            out.push('}');
        }
        Value::Record(r) => {
            out.push_str(&r.name);
            out.push('(');
            for (i, (name, v)) in r.fields.iter().enumerate() {
                if out.len() >= budget {
                    out.push('…');
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push('=');
                write_summary(v, depth + 1, budget, out);
            }
            out.push(')');
        }
        Value::Array(a) if a.len() > SHOWN_ITEMS => {
            out.push_str(&format!(
                "<array shape={:?} dtype={}>",
                a.shape(),
                a.dtype()
            ));
        }
        other => out.push_str(&other.repr()),
    }
}

fn write_items<'v>(
    items: impl Iterator<Item = &'v Value>,
    len: usize,
    (open, close): (&str, &str),
    depth: usize,
    budget: usize,
    out: &mut String,
) {
    out.push_str(open);
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if i == SHOWN_ITEMS || out.len() >= budget {
            out.push_str(&format!("… ({} more of {len} items)", len - i));
            break;
        }
        write_summary(item, depth + 1, budget, out);
    }
    out.push_str(close);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_their_repr() {
        for v in [
            Value::Int(5),
            Value::None,
            Value::Str("x".into()),
            Value::List(vec![Value::Int(1), Value::Float(2.5)]),
        ] {
            assert_eq!(summarize(&v, 100), v.repr());
        }
    }

    #[test]
    fn large_values_are_summarised_and_bounded() {
        let long = Value::Str("a".repeat(100_000));
        let text = summarize(&long, 2000);
        assert!(text.contains("(100000 chars)"), "{text}");
        assert!(text.chars().count() < 300);

        // Wide and deep at once: every level is cut, the whole is bounded.
        let mut v = Value::List((0..1000).map(|i| Value::Str(format!("item {i}"))).collect());
        for _ in 0..50 {
            v = Value::List(vec![v, Value::Int(0)]);
        }
        let text = summarize(&v, 500);
        assert!(text.chars().count() <= 501, "{}", text.chars().count());
        assert!(text.contains('…'));
    }

    #[test]
    fn dicts_show_their_first_keys() {
        let d: crate::value::Dict = (0..100)
            .map(|i| (Value::Int(i), Value::Int(i * i)))
            .collect();
        let text = summarize(&Value::Dict(d), 2000);
        assert!(text.starts_with("{0: 0, 1: 1, "), "{text}");
        assert!(text.ends_with("… (92 more of 100 keys)}"), "{text}");
    }
}

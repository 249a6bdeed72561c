//! The checks that run before the parser: size, NUL bytes, and a conservative bound on
//! nesting depth computed by one linear pass with no recursion, so that no deep input ever
//! reaches the parser's (or anyone's) recursive code.

use crate::error::{Error, ErrorKind, Span};
use crate::limits::Limits;

/// Words that chain like operators (each may add a level to the tree).
const OPERATOR_WORDS: [&str; 9] = [
    "not", "and", "or", "if", "else", "lambda", "await", "in", "is",
];

/// Check `source` against the size limit and bound its nesting depth.
///
/// Depth is estimated as, for every open bracket level, 1 plus the number of operators and
/// call/subscript trailers seen in that level's current comma-separated segment. This bounds
/// the depth of any tree the parser could build (`((((x))))`, `1+1+...+1`, `--------x`,
/// `a.b.c.d...`, `f()()()...`), while a long flat list such as `[-1, -2, ...]` stays shallow.
pub(crate) fn precheck(source: &str, limits: &Limits) -> Result<(), Error> {
    if source.len() > limits.max_source_bytes {
        return Err(Error::limit(
            "max_source_bytes",
            limits.max_source_bytes,
            source.len(),
        ));
    }
    let bytes = source.as_bytes();
    // Per open level: the number of depth-adding tokens in its current segment.
    let mut levels: Vec<usize> = vec![0];
    let mut total: usize = 1;
    let mut after_operand = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let start = i;
        match b {
            0 => return Err(Error::new(ErrorKind::Syntax, "NUL byte in source").at(span(i, i + 1))),
            b'#' => {
                while bytes.get(i).is_some_and(|c| *c != b'\n') {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                i = skip_string(bytes, i);
                after_operand = true;
                continue;
            }
            b'(' | b'[' | b'{' => {
                if after_operand {
                    bump(&mut levels, &mut total);
                }
                levels.push(0);
                total += 1;
                after_operand = false;
            }
            b')' | b']' | b'}' => {
                if levels.len() > 1 {
                    total -= 1 + levels.pop().unwrap_or(0);
                }
                after_operand = true;
            }
            b',' => {
                if let Some(last) = levels.last_mut() {
                    total -= *last;
                    *last = 0;
                }
                after_operand = false;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^' | b'~' | b'<' | b'>'
            | b'=' | b'!' | b'.' | b':' => {
                // A dot inside a number (`1.5`) is not an operator.
                let in_number =
                    b == b'.' && i > 0 && bytes.get(i - 1).is_some_and(u8::is_ascii_digit);
                if !in_number {
                    bump(&mut levels, &mut total);
                }
                after_operand = in_number;
            }
            c if c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80 => {
                while bytes
                    .get(i)
                    .is_some_and(|c| *c == b'_' || c.is_ascii_alphanumeric() || *c >= 0x80)
                {
                    i += 1;
                }
                let word = &source[start..i];
                // String prefixes: r'..', b"..", f'..', rb'..' and so on.
                if word.len() <= 2
                    && word.chars().all(|c| "rRbBuUfFtT".contains(c))
                    && matches!(bytes.get(i), Some(b'\'' | b'"'))
                {
                    i = skip_string(bytes, i);
                    after_operand = true;
                    continue;
                }
                if OPERATOR_WORDS.contains(&word) {
                    bump(&mut levels, &mut total);
                    after_operand = false;
                } else {
                    after_operand = true;
                }
                if total > limits.max_depth {
                    return Err(depth_error(limits, start, i));
                }
                continue;
            }
            _ => {}
        }
        i += 1;
        if total > limits.max_depth {
            return Err(depth_error(limits, start, i));
        }
    }
    Ok(())
}

fn bump(levels: &mut [usize], total: &mut usize) {
    if let Some(last) = levels.last_mut() {
        *last += 1;
        *total += 1;
    }
}

fn span(start: usize, end: usize) -> Span {
    Span::new(start as u32, end as u32)
}

fn depth_error(limits: &Limits, start: usize, end: usize) -> Error {
    Error::limit("max_depth", limits.max_depth, "deeper nesting")
        .at(span(start, end))
        .with_hint("nesting of brackets and operator chains is bounded by Limits::max_depth")
}

/// Skip a string literal starting at the quote at `i`; returns the index after it (or the
/// end of the input for an unterminated string, which the parser then reports).
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    let Some(&quote) = bytes.get(i) else { return i };
    let triple = bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote);
    i += if triple { 3 } else { 1 };
    while let Some(&c) = bytes.get(i) {
        if c == b'\\' {
            i += 2;
            continue;
        }
        if c == quote {
            if !triple {
                return i + 1;
            }
            if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                return i + 3;
            }
        } else if c == b'\n' && !triple {
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(src: &str) -> bool {
        precheck(src, &Limits::default()).is_ok()
    }

    #[test]
    fn deep_inputs_are_refused_before_parsing() {
        let n = 100_000;
        for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
            assert!(!depth_ok(&format!(
                "{}1{}",
                open.repeat(n),
                close.repeat(n)
            )));
        }
        assert!(!depth_ok(&vec!["1"; n].join("+")));
        assert!(!depth_ok(&format!("{}1", "-".repeat(n))));
        assert!(!depth_ok(&format!("{}x", "not ".repeat(n))));
        assert!(!depth_ok(&vec!["a"; n].join(".")));
        assert!(!depth_ok(&format!("f{}", "()".repeat(n))));
    }

    #[test]
    fn flat_and_quoted_inputs_pass() {
        let list = (1..5000)
            .map(|i| format!("-{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        assert!(depth_ok(&format!("[{list}]")));
        assert!(depth_ok(&format!(
            "search(query='{}')",
            "((((".repeat(1000)
        )));
        assert!(depth_ok(&format!(
            "search(query=\"\"\"{}\"\"\")",
            ")))".repeat(1000)
        )));
        assert!(depth_ok(
            "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))"
        ));
    }

    #[test]
    fn depth_limit_edge() {
        let limits = Limits {
            max_depth: 10,
            ..Limits::default()
        };
        // f( adds a trailer (1) and a level (1) on top of the base level (1): depth 2k+1.
        let at = |k: usize| format!("{}x{}", "f(".repeat(k), ")".repeat(k));
        assert!(precheck(&at(4), &limits).is_ok());
        assert_eq!(
            precheck(&at(5), &limits).unwrap_err().kind,
            ErrorKind::Limit
        );
    }

    #[test]
    fn size_limit_edge() {
        let limits = Limits {
            max_source_bytes: 8,
            ..Limits::default()
        };
        assert!(precheck("f(a=123)", &limits).is_ok());
        assert_eq!(
            precheck("f(a=1234)", &limits).unwrap_err().kind,
            ErrorKind::Limit
        );
    }
}

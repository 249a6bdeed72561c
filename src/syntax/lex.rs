//! The lexical pieces every reader of model text shares, written once: where a Python string
//! ends (as ruff's lexer ends it), whether a word is a string prefix, where a (dotted)
//! identifier ends, and where a JSON string or bracketed JSON value ends. The pre-parse scanner
//! ([`super::scan`]), the front door's lexical reading (`front::lex`), its Python unit reader
//! and the model-format readers all use these. Every function looks forward only from where it
//! is asked, so a caller that moves forward through a text stays linear.

/// Whether `b` is a quote that can open a Python string.
pub(crate) fn is_quote(b: u8) -> bool {
    b == b'\'' || b == b'"'
}

/// A one-character string prefix, as in ruff's lexer.
pub(crate) fn is_prefix(b: u8) -> bool {
    matches!(b.to_ascii_lowercase(), b'f' | b't' | b'u' | b'b' | b'r')
}

/// A two-character string prefix: `r` with one of `f`, `t`, `b`, in either order and any case.
pub(crate) fn is_double_prefix(a: u8, b: u8) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    (a == b'r' && matches!(b, b'f' | b't' | b'b')) || (b == b'r' && matches!(a, b'f' | b't' | b'b'))
}

/// Whether `word` (the identifier bytes right before a quote) is a string prefix.
pub(crate) fn is_prefix_word(word: &[u8]) -> bool {
    match word {
        [a] => is_prefix(*a),
        [a, b] => is_double_prefix(*a, *b),
        _ => false,
    }
}

/// The end of the string literal whose opening quote is at `quote`, as ruff's lexer finds it,
/// and whether it closed.
///
/// A single-quoted string ends at its unescaped closing quote or before an unescaped newline
/// (unterminated: the newline is not part of it); a triple-quoted one at its unescaped closing
/// triple quote. Either ends at the end of input if unterminated. A backslash escapes the next
/// character in every string form, raw or not.
pub(crate) fn string_end(bytes: &[u8], quote: usize) -> (usize, bool) {
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let q = at(quote);
    let triple = at(quote + 1) == q && at(quote + 2) == q;
    let mut i = if triple { quote + 3 } else { quote + 1 };
    loop {
        let rest = bytes.get(i..).unwrap_or_default();
        let found = if triple {
            rest.iter().position(|&b| b == q)
        } else {
            rest.iter()
                .position(|&b| b == q || b == b'\n' || b == b'\r')
        };
        let Some(offset) = found else {
            return (bytes.len(), false);
        };
        let before = rest.get(..offset).unwrap_or_default();
        let backslashes = before.iter().rev().take_while(|&&b| b == b'\\').count();
        let c = at(i + offset);
        i += offset + 1;
        if backslashes % 2 == 1 {
            if c == b'\r' && at(i) == b'\n' {
                i += 1;
            }
            continue;
        }
        if triple {
            if at(i) == q && at(i + 1) == q {
                return (i + 2, true);
            }
        } else if c == q {
            return (i, true);
        } else {
            return (i - 1, false);
        }
    }
}

/// Whether `c` starts an ASCII identifier.
pub(crate) fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// Whether `c` continues a name as a reader of model text sees it: an ASCII letter, digit or
/// `_`, or a byte of a non-ASCII character (`é` in `éadd`).
pub(crate) fn continues_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The end of the dotted ASCII identifier starting at `i` (`a.b_c.d`), not counting a trailing
/// dot; `i` when none starts there.
pub(crate) fn dotted_ident_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    loop {
        if !b.get(j).copied().is_some_and(is_ident_start) {
            return j;
        }
        while b
            .get(j)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            j += 1;
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).copied().is_some_and(is_ident_start) {
            j += 1;
        } else {
            return j;
        }
    }
}

/// The end (exclusive) of the JSON string whose quote is at `open`; `None` if the text ends.
pub(crate) fn json_string_end(b: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end (exclusive) of the JSON object or array opening at `open`, strings skipped; `None`
/// if the text ends first. Brackets are counted, not paired: the JSON reader the text goes to
/// reports a mismatch.
pub(crate) fn json_end(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = json_string_end(b, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_end_as_ruff_ends_them() {
        let end = |s: &str| string_end(s.as_bytes(), 0);
        assert_eq!(end(r#"'a\'b' x"#), (6, true));
        assert_eq!(end("'ab\ncd'"), (3, false));
        assert_eq!(end("'''a\n'b'''x"), (10, true));
        assert_eq!(end("\"\"\"never"), (8, false));
        assert_eq!(end(r#""a\\" x"#), (5, true));
    }

    #[test]
    fn names_and_json_values() {
        assert_eq!(dotted_ident_end(b"math.hypot(", 0), 10);
        assert_eq!(dotted_ident_end(b"a.(", 0), 1);
        assert!(is_prefix_word(b"rb") && is_prefix_word(b"F") && !is_prefix_word(b"don"));
        assert_eq!(json_end(br#"{"a": "}", "b": [1]} x"#, 0), Some(20));
        assert_eq!(json_end(br#"{"a": "#, 0), None);
        assert_eq!(json_string_end(br#""a\"b" "#, 0), Some(6));
    }
}

//! Syntax: model text → the typed [`Expr`] IR, with byte spans, limits checked before parsing.
//!
//! The text is parsed by Astral's `ruff_python_parser` in expression mode and converted into
//! fexpr's own small IR. The plainest shapes (`f(a=1, p=Point(x=2, y=3))`) are built into the
//! same IR by a strict fast path first, which leaves everything else to ruff ([`parse_with_ruff`]
//! is the reference it is tested against). Anything outside the accepted subset is an error that
//! names the construct and its span. [`Expr`] implements `Display`, printing Python source that parses
//! back to the same tree.

mod fast;
mod ir;
pub(crate) mod lex;
mod parse;
mod print;
mod scan;

pub use ir::{BinaryOp, Call, Children, ChildrenMut, Expr, ExprKind, Keyword, UnaryOp};
#[cfg(feature = "native")]
pub(crate) use parse::parse_fast;
pub use parse::{parse, parse_with_ruff};

pub use crate::value::is_keyword_name;
pub(crate) use crate::value::PYTHON_KEYWORDS;

/// Whether the expression `text` may hold several items at its top level (`[a(), b()]`,
/// `(a(), b())` or a bare `a(), b()`), told without parsing it: `false` only when it starts with
/// a name and has no comma outside brackets and string literals, as `add(a=2, b=3)`. Every
/// doubt (another first character, a bracket closed too often, a string not closed, an
/// f-string or t-string, whose quotes may nest, a comment, a line break, `;`) answers `true`:
/// parse the text to know. A single-call method refuses a list before anything runs with it.
///
/// ```
/// use fexpr::syntax::may_hold_several;
/// assert!(!may_hold_several("add(a=2, b='x, y')"));
/// assert!(may_hold_several("add(a=2), add(a=3)"));
/// assert!(may_hold_several("[add(a=2)]"));
/// assert!(may_hold_several("add(a=f'{x}', b=1)"));
/// ```
pub fn may_hold_several(text: &str) -> bool {
    let bytes = text.trim_start().as_bytes();
    if !bytes.first().copied().is_some_and(lex::is_ident_start) {
        return true;
    }
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            },
            b',' if depth == 0 => return true,
            b'\\' | b'#' | b';' | b'\n' | b'\r' => return true,
            b'"' | b'\'' => {
                let word = bytes.get(..at).unwrap_or_default();
                let prefix = word.get(word.len().saturating_sub(2)..).unwrap_or_default();
                if prefix
                    .iter()
                    .any(|c| matches!(c.to_ascii_lowercase(), b'f' | b't'))
                {
                    return true;
                }
                match lex::string_end(bytes, at) {
                    (end, true) => {
                        at = end;
                        continue;
                    }
                    (_, false) => return true,
                }
            }
            _ => {}
        }
        at += 1;
    }
    false
}

/// A dunder name (`__import__`, `__`, `___`): rejected wherever a name is accepted.
pub(crate) fn is_dunder(name: &str) -> bool {
    name.starts_with("__") && name.ends_with("__")
}

/// How a model writes the keyword argument `name` in Python call text, for messages and hints:
/// `name` itself when it is a [keyword name](is_keyword_name), else the key in a dict display
/// after `**` (`**{"from": …}`).
///
/// ```
/// use fexpr::syntax::keyword_in_call;
/// assert_eq!(keyword_in_call("city"), "city");
/// assert_eq!(keyword_in_call("from"), r#"**{"from": …}"#);
/// ```
pub fn keyword_in_call(name: &str) -> String {
    if is_keyword_name(name) {
        name.to_string()
    } else {
        format!("**{{{}: …}}", string_literal(&crate::error::clip(name, 40)))
    }
}

/// `s` as a double-quoted Python string literal, as [`Expr`]'s `Display` writes strings.
pub(crate) fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing to a `String` cannot fail.
    let _ = print::write_str(&mut out, s);
    out
}

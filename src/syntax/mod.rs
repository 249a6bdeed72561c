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
pub use parse::{parse, parse_with_ruff};

pub use crate::value::is_keyword_name;
pub(crate) use crate::value::PYTHON_KEYWORDS;

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

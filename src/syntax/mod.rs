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

/// Python's reserved words: never names, keyword-argument names or tool names.
pub(crate) const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// A dunder name (`__import__`, `__`, `___`): rejected wherever a name is accepted.
pub(crate) fn is_dunder(name: &str) -> bool {
    name.starts_with("__") && name.ends_with("__")
}

//! The typed IR that the rest of fexpr works on: a small closed expression tree with spans.
//!
//! It is produced only by [`crate::syntax::parse`], which rejects everything outside the
//! accepted subset, so every consumer can match exhaustively without a "not supported" arm, and
//! by [`crate::front::json_input`], which builds literals, lists, dicts and calls from JSON.

use crate::error::{Error, ErrorKind, Span};
use num_bigint::BigInt;
use serde::{Deserialize, Serialize};

/// One expression node and the source bytes it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    /// What the node is.
    pub kind: ExprKind,
    /// Where it is in the source.
    pub span: Span,
}

impl Expr {
    /// The direct children of this node, in source order, without allocating: items,
    /// dict keys and values, operands, call arguments then keyword values. The one walk over
    /// the IR: every pass that visits subexpressions uses it (or [`Expr::children_mut`]) with
    /// a stack of its own, so no pass recurses on input depth.
    ///
    /// ```
    /// let limits = fexpr::Limits::default();
    /// let e = fexpr::syntax::parse("f(1, b=[2, 3])", &limits).unwrap();
    /// assert_eq!(e.children().count(), 2);
    /// ```
    #[inline]
    pub fn children(&self) -> Children<'_> {
        match &self.kind {
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Set(items) => {
                Children::Items(items.iter())
            }
            ExprKind::Dict(pairs) => Children::Pairs(pairs.iter(), None),
            ExprKind::Unary(_, x) => Children::Two(Some(x), None),
            ExprKind::Binary(_, a, b) => Children::Two(Some(a), Some(b)),
            ExprKind::Call(c) => Children::Call(c.args.iter(), c.kwargs.iter()),
            _ => Children::Two(None, None),
        }
    }

    /// [`Expr::children`], mutably.
    #[inline]
    pub fn children_mut(&mut self) -> ChildrenMut<'_> {
        match &mut self.kind {
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Set(items) => {
                ChildrenMut::Items(items.iter_mut())
            }
            ExprKind::Dict(pairs) => ChildrenMut::Pairs(pairs.iter_mut(), None),
            ExprKind::Unary(_, x) => ChildrenMut::Two(Some(x), None),
            ExprKind::Binary(_, a, b) => ChildrenMut::Two(Some(a), Some(b)),
            ExprKind::Call(c) => ChildrenMut::Call(c.args.iter_mut(), c.kwargs.iter_mut()),
            _ => ChildrenMut::Two(None, None),
        }
    }

    /// A literal leaf (`None`, a bool, a number, a string, bytes): nothing in it to resolve.
    pub fn is_literal(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::None
                | ExprKind::Bool(_)
                | ExprKind::Int(_)
                | ExprKind::BigInt(_)
                | ExprKind::Float(_)
                | ExprKind::Str(_)
                | ExprKind::Bytes(_)
        )
    }

    /// The call this expression is, or an `Unsupported` error at its span saying that a call
    /// was expected.
    ///
    /// ```
    /// let limits = fexpr::Limits::default();
    /// let call = fexpr::syntax::parse("add(a=1)", &limits).unwrap();
    /// assert_eq!(call.as_call().unwrap().func, "add");
    /// let name = fexpr::syntax::parse("add", &limits).unwrap();
    /// assert_eq!(name.as_call().unwrap_err().kind, fexpr::ErrorKind::Unsupported);
    /// ```
    pub fn as_call(&self) -> Result<&Call, Error> {
        match &self.kind {
            ExprKind::Call(call) => Ok(call),
            _ => Err(Error::new(
                ErrorKind::Unsupported,
                "expected a function call like `name(arg=...)`",
            )
            .at(self.span)),
        }
    }
}

/// The accepted expression forms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    /// `None`
    None,
    /// `True` / `False`
    Bool(bool),
    /// An integer literal that fits in `i64`.
    Int(i64),
    /// An integer literal that does not fit in `i64` (digits bounded by `Limits::max_int_digits`).
    BigInt(BigInt),
    /// A float literal (`1.5`, `1e-3`, `1_000.5`).
    Float(f64),
    /// A string literal, all forms decoded and implicit concatenation joined.
    Str(String),
    /// A bytes literal.
    Bytes(Vec<u8>),
    /// A name or a dotted name (`x`, `np.array`), resolved as a whole path in the context.
    Name(String),
    /// `[a, b]`
    List(Vec<Expr>),
    /// `(a, b)` or `a, b`
    Tuple(Vec<Expr>),
    /// `{a, b}`
    Set(Vec<Expr>),
    /// `{k: v}`
    Dict(Vec<(Expr, Expr)>),
    /// `-x`, `+x`, `not x`
    Unary(UnaryOp, Box<Expr>),
    /// `a + b` and the other arithmetic operators.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `f(1, b=2)` or `np.array([1])`: the callee is always a (dotted) name.
    Call(Call),
}

/// The children of a node: see [`Expr::children`].
#[derive(Debug)]
pub enum Children<'e> {
    #[doc(hidden)]
    Items(std::slice::Iter<'e, Expr>),
    /// Dict pairs, and the value of the pair whose key was just returned.
    #[doc(hidden)]
    Pairs(std::slice::Iter<'e, (Expr, Expr)>, Option<&'e Expr>),
    #[doc(hidden)]
    Two(Option<&'e Expr>, Option<&'e Expr>),
    #[doc(hidden)]
    Call(std::slice::Iter<'e, Expr>, std::slice::Iter<'e, Keyword>),
}

impl<'e> Iterator for Children<'e> {
    type Item = &'e Expr;

    #[inline]
    fn next(&mut self) -> Option<&'e Expr> {
        match self {
            Children::Items(items) => items.next(),
            Children::Pairs(pairs, value) => match value.take() {
                Some(v) => Some(v),
                None => pairs.next().map(|(k, v)| {
                    *value = Some(v);
                    k
                }),
            },
            Children::Two(a, b) => a.take().or_else(|| b.take()),
            Children::Call(args, kwargs) => args.next().or_else(|| kwargs.next().map(|k| &k.value)),
        }
    }
}

/// The children of a node, mutably: see [`Expr::children_mut`].
#[derive(Debug)]
pub enum ChildrenMut<'e> {
    #[doc(hidden)]
    Items(std::slice::IterMut<'e, Expr>),
    #[doc(hidden)]
    Pairs(std::slice::IterMut<'e, (Expr, Expr)>, Option<&'e mut Expr>),
    #[doc(hidden)]
    Two(Option<&'e mut Expr>, Option<&'e mut Expr>),
    #[doc(hidden)]
    Call(
        std::slice::IterMut<'e, Expr>,
        std::slice::IterMut<'e, Keyword>,
    ),
}

impl<'e> Iterator for ChildrenMut<'e> {
    type Item = &'e mut Expr;

    #[inline]
    fn next(&mut self) -> Option<&'e mut Expr> {
        match self {
            ChildrenMut::Items(items) => items.next(),
            ChildrenMut::Pairs(pairs, value) => match value.take() {
                Some(v) => Some(v),
                None => pairs.next().map(|(k, v)| {
                    *value = Some(v);
                    k
                }),
            },
            ChildrenMut::Two(a, b) => a.take().or_else(|| b.take()),
            ChildrenMut::Call(args, kwargs) => {
                args.next().or_else(|| kwargs.next().map(|k| &mut k.value))
            }
        }
    }
}

/// A call: callee path, positional arguments, keyword arguments, in source order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// The callee as a dotted path (`add`, `np.array`).
    pub func: String,
    /// Where the callee name is.
    pub func_span: Span,
    /// Positional arguments.
    pub args: Vec<Expr>,
    /// Keyword arguments.
    pub kwargs: Vec<Keyword>,
}

/// `name=value` in a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Keyword {
    /// The keyword.
    pub name: String,
    /// Where the keyword is.
    pub name_span: Span,
    /// The argument.
    pub value: Expr,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `+x`
    Pos,
    /// `not x`
    Not,
}

/// Binary arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `//`
    FloorDiv,
    /// `%`
    Mod,
    /// `**`
    Pow,
}

impl UnaryOp {
    /// The operator as written in Python.
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Pos => "+",
            UnaryOp::Not => "not ",
        }
    }
}

impl BinaryOp {
    /// The operator as written in Python.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "**",
        }
    }
}

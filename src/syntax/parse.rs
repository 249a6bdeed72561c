//! ruff's AST → fexpr's IR. Only the accepted subset converts; everything else is an error
//! that names the construct and its span.

use num_bigint::BigInt;
use num_traits::Num;
use ruff_python_ast as ast;
use ruff_text_size::{Ranged, TextRange};

use super::ir::{BinaryOp, Call, Expr, ExprKind, Keyword, UnaryOp};
use super::scan::precheck;
use crate::error::{clip, Error, ErrorKind, Span};
use crate::limits::Limits;

/// Parse model text into the IR.
///
/// Size and nesting depth are checked before the parser runs; constructs outside the subset
/// are `Unsupported` errors naming the construct; statements after the expression are errors,
/// never dropped.
///
/// ```
/// use fexpr::syntax::{parse, ExprKind};
/// let expr = parse("np.array([1, 2])", &fexpr::Limits::default()).unwrap();
/// let ExprKind::Call(call) = expr.kind else { panic!() };
/// assert_eq!(call.func, "np.array");
/// let err = parse("add(a=1); import os", &fexpr::Limits::default()).unwrap_err();
/// assert_eq!(err.kind, fexpr::ErrorKind::Unsupported);
/// ```
pub fn parse(source: &str, limits: &Limits) -> Result<Expr, Error> {
    precheck(source, limits)?;
    let (text, offset) = match source.strip_prefix('\u{feff}') {
        Some(rest) => (rest, 3u32),
        None => (source, 0),
    };
    let parsed = match ruff_python_parser::parse_expression(text) {
        Ok(parsed) => parsed,
        Err(err) => return Err(diagnose(text, err).shift(offset)),
    };
    let converter = Converter { offset, limits };
    converter.expr(parsed.expr(), 0)
}

trait Shift {
    fn shift(self, offset: u32) -> Self;
}

impl Shift for Error {
    fn shift(mut self, offset: u32) -> Error {
        if let Some(s) = self.span.as_mut() {
            s.start += offset;
            s.end += offset;
        }
        self
    }
}

fn span_of(range: TextRange) -> Span {
    Span::new(range.start().to_u32(), range.end().to_u32())
}

/// Explain why expression mode failed: statements, or plain syntax errors.
fn diagnose(text: &str, err: ruff_python_parser::ParseError) -> Error {
    if let Ok(module) = ruff_python_parser::parse_module(text) {
        let suite = module.suite();
        let offending = suite
            .iter()
            .enumerate()
            .find(|(i, stmt)| *i > 0 || !matches!(stmt, ast::Stmt::Expr(_)))
            .map(|(_, stmt)| stmt);
        if let Some(stmt) = offending {
            let s = span_of(stmt.range());
            let quoted = clip(text.get(s.range()).unwrap_or(""), 40);
            return Error::new(
                ErrorKind::Unsupported,
                format!("statements are not accepted, only one expression: found `{quoted}`"),
            )
            .at(s)
            .with_hint("write one call, or a list of calls like `[f(a=1), g(b=2)]`");
        }
    }
    Error::new(ErrorKind::Syntax, clip(&err.error.to_string(), 200)).at(span_of(err.location))
}

struct Converter<'a> {
    offset: u32,
    limits: &'a Limits,
}

impl Converter<'_> {
    fn span(&self, range: TextRange) -> Span {
        let s = span_of(range);
        Span::new(s.start + self.offset, s.end + self.offset)
    }

    fn unsupported(&self, what: &str, range: TextRange) -> Error {
        Error::new(ErrorKind::Unsupported, format!("{what} is not accepted"))
            .at(self.span(range))
            .with_hint("accepted: calls, names, literals, lists, tuples, dicts, sets, and + - * / // % ** not")
    }

    fn expr(&self, e: &ast::Expr, depth: usize) -> Result<Expr, Error> {
        let range = e.range();
        // The pre-scan bounds depth already; this guards the recursion on its own.
        if depth > self.limits.max_depth.saturating_mul(2) {
            return Err(
                Error::limit("max_depth", self.limits.max_depth, depth).at(self.span(range))
            );
        }
        let d = depth + 1;
        let kind = match e {
            ast::Expr::BoolOp(_) => {
                return Err(self.unsupported("a boolean operator (`and`/`or`)", range))
            }
            ast::Expr::Named(_) => {
                return Err(self.unsupported("an assignment expression (`:=`)", range))
            }
            ast::Expr::BinOp(b) => {
                let op = match b.op {
                    ast::Operator::Add => BinaryOp::Add,
                    ast::Operator::Sub => BinaryOp::Sub,
                    ast::Operator::Mult => BinaryOp::Mul,
                    ast::Operator::Div => BinaryOp::Div,
                    ast::Operator::FloorDiv => BinaryOp::FloorDiv,
                    ast::Operator::Mod => BinaryOp::Mod,
                    ast::Operator::Pow => BinaryOp::Pow,
                    other => {
                        return Err(
                            self.unsupported(&format!("the operator `{}`", other.as_str()), range)
                        )
                    }
                };
                ExprKind::Binary(
                    op,
                    Box::new(self.expr(&b.left, d)?),
                    Box::new(self.expr(&b.right, d)?),
                )
            }
            ast::Expr::UnaryOp(u) => {
                let op = match u.op {
                    ast::UnaryOp::USub => UnaryOp::Neg,
                    ast::UnaryOp::UAdd => UnaryOp::Pos,
                    ast::UnaryOp::Not => UnaryOp::Not,
                    ast::UnaryOp::Invert => return Err(self.unsupported("the operator `~`", range)),
                };
                ExprKind::Unary(op, Box::new(self.expr(&u.operand, d)?))
            }
            ast::Expr::Lambda(_) => return Err(self.unsupported("a lambda", range)),
            ast::Expr::If(_) => {
                return Err(self.unsupported("a conditional expression (`a if c else b`)", range))
            }
            ast::Expr::Dict(dict) => {
                let mut pairs = Vec::with_capacity(dict.items.len());
                for item in &dict.items {
                    let Some(key) = &item.key else {
                        return Err(self.unsupported("dict unpacking (`**`)", item.value.range()));
                    };
                    pairs.push((self.expr(key, d)?, self.expr(&item.value, d)?));
                }
                ExprKind::Dict(pairs)
            }
            ast::Expr::Set(s) => ExprKind::Set(self.list(&s.elts, d)?),
            ast::Expr::ListComp(_) | ast::Expr::SetComp(_) | ast::Expr::DictComp(_) => {
                return Err(self.unsupported("a comprehension", range))
            }
            ast::Expr::Generator(_) => {
                return Err(self.unsupported("a generator expression", range))
            }
            ast::Expr::Await(_) => return Err(self.unsupported("`await`", range)),
            ast::Expr::Yield(_) | ast::Expr::YieldFrom(_) => {
                return Err(self.unsupported("`yield`", range))
            }
            ast::Expr::Compare(_) => return Err(self.unsupported("a comparison", range)),
            ast::Expr::Call(call) => ExprKind::Call(self.call(call, d)?),
            ast::Expr::FString(_) => return Err(self.unsupported("an f-string", range)),
            ast::Expr::TString(_) => return Err(self.unsupported("a t-string", range)),
            ast::Expr::StringLiteral(s) => ExprKind::Str(s.value.to_str().to_string()),
            ast::Expr::BytesLiteral(b) => ExprKind::Bytes(b.value.bytes().collect()),
            ast::Expr::NumberLiteral(n) => match &n.value {
                ast::Number::Int(i) => match i.as_i64() {
                    Some(v) => ExprKind::Int(v),
                    None => ExprKind::BigInt(self.big_int(&i.to_string(), range)?),
                },
                ast::Number::Float(f) => ExprKind::Float(*f),
                ast::Number::Complex { .. } => {
                    return Err(self.unsupported("a complex number", range))
                }
            },
            ast::Expr::BooleanLiteral(b) => ExprKind::Bool(b.value),
            ast::Expr::NoneLiteral(_) => ExprKind::None,
            ast::Expr::EllipsisLiteral(_) => return Err(self.unsupported("`...`", range)),
            ast::Expr::Attribute(_) | ast::Expr::Name(_) => ExprKind::Name(self.path(e)?),
            ast::Expr::Subscript(_) => {
                return Err(self.unsupported("a subscript (`x[...]`)", range))
            }
            ast::Expr::Starred(_) => return Err(self.unsupported("unpacking (`*`)", range)),
            ast::Expr::List(l) => ExprKind::List(self.list(&l.elts, d)?),
            ast::Expr::Tuple(t) => ExprKind::Tuple(self.list(&t.elts, d)?),
            ast::Expr::Slice(_) => return Err(self.unsupported("a slice", range)),
            ast::Expr::IpyEscapeCommand(_) => {
                return Err(self.unsupported("an IPython command", range))
            }
        };
        Ok(Expr {
            kind,
            span: self.span(range),
        })
    }

    fn list(&self, items: &[ast::Expr], depth: usize) -> Result<Vec<Expr>, Error> {
        items.iter().map(|e| self.expr(e, depth)).collect()
    }

    fn call(&self, call: &ast::ExprCall, depth: usize) -> Result<Call, Error> {
        let func = match &*call.func {
            f @ (ast::Expr::Name(_) | ast::Expr::Attribute(_)) => self.path(f)?,
            other => {
                return Err(self.unsupported("calling anything but a (dotted) name", other.range()));
            }
        };
        let mut args = Vec::with_capacity(call.arguments.args.len());
        for arg in call.arguments.args.iter() {
            if let ast::Expr::Starred(_) = arg {
                return Err(self.unsupported("argument unpacking (`*args`)", arg.range()));
            }
            args.push(self.expr(arg, depth)?);
        }
        let mut kwargs = Vec::with_capacity(call.arguments.keywords.len());
        for kw in call.arguments.keywords.iter() {
            let Some(name) = &kw.arg else {
                return Err(self.unsupported("keyword unpacking (`**kwargs`)", kw.range()));
            };
            let name_str = name.id.as_str();
            if is_dunder(name_str) {
                return Err(self.unsupported("a dunder name", name.range()));
            }
            kwargs.push(Keyword {
                name: name_str.to_string(),
                name_span: self.span(name.range()),
                value: self.expr(&kw.value, depth)?,
            });
        }
        Ok(Call {
            func,
            func_span: self.span(call.func.range()),
            args,
            kwargs,
        })
    }

    /// `a` or `a.b.c` where every part is a name; anything else is attribute access.
    fn path(&self, e: &ast::Expr) -> Result<String, Error> {
        let mut parts = Vec::new();
        let mut cur = e;
        loop {
            match cur {
                ast::Expr::Name(n) => {
                    parts.push(n.id.as_str());
                    break;
                }
                ast::Expr::Attribute(a) => {
                    parts.push(a.attr.id.as_str());
                    cur = &a.value;
                }
                _ => return Err(self.unsupported("attribute access on a value", e.range())),
            }
            if parts.len() > self.limits.max_depth {
                return Err(
                    Error::limit("max_depth", self.limits.max_depth, parts.len())
                        .at(self.span(e.range())),
                );
            }
        }
        if parts.iter().any(|p| is_dunder(p)) {
            return Err(self.unsupported("a dunder name", e.range()));
        }
        parts.reverse();
        Ok(parts.join("."))
    }

    /// An int literal beyond i64, digits checked before conversion.
    fn big_int(&self, token: &str, range: TextRange) -> Result<BigInt, Error> {
        let token: String = token.chars().filter(|c| *c != '_').collect();
        let lower = token.to_ascii_lowercase();
        let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
            (d, 16)
        } else if let Some(d) = lower.strip_prefix("0o") {
            (d, 8)
        } else if let Some(d) = lower.strip_prefix("0b") {
            (d, 2)
        } else {
            (lower.as_str(), 10)
        };
        let decimal_digits = (digits.len() as f64 * (radix as f64).log10()).ceil() as usize;
        if decimal_digits > self.limits.max_int_digits {
            return Err(
                Error::limit("max_int_digits", self.limits.max_int_digits, decimal_digits)
                    .at(self.span(range)),
            );
        }
        BigInt::from_str_radix(digits, radix).map_err(|e| {
            Error::new(ErrorKind::Syntax, format!("invalid integer literal: {e}"))
                .at(self.span(range))
        })
    }
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

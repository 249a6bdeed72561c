//! Source text → [`Expr`]: the pre-parse scan, `ruff_python_parser` in expression mode, and a
//! conversion of ruff's tree into fexpr's IR that rejects everything outside the accepted subset.

use super::ir::{BinaryOp, Call, Expr, ExprKind, Keyword, UnaryOp};
use super::{fast, scan};
use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::limits::Limits;
use num_bigint::BigInt;
use ruff_python_ast as ast;
use ruff_python_ast::token::{TokenKind, Tokens};
use ruff_python_parser::{LexicalErrorType, ParseError, ParseErrorType};
use ruff_text_size::{Ranged, TextRange, TextSize};

/// How much deeper than [`Limits::max_depth`] the converted tree may be before the converter
/// stops with a [`ErrorKind::Limit`] error. The scan's estimate already bounds the tree to about
/// `max_depth + 2` (a leaf, and an unbracketed top-level tuple, are not counted); the converter's
/// own check is a backstop.
const DEPTH_MARGIN: usize = 8;

/// Longest parser message kept, in characters.
const MESSAGE_CHARS: usize = 200;

/// Longest piece of source quoted in a message, in characters.
const QUOTE_CHARS: usize = 40;

/// Parse one expression of the accepted subset into the IR, with byte spans into `source`.
///
/// Limits are checked before the parser runs ([`Limits::max_source_bytes`],
/// [`Limits::max_depth`]) and while converting ([`Limits::max_int_digits`]). A leading UTF-8
/// byte order mark and leading whitespace are skipped; spans still index `source` itself.
///
/// Accepted: calls of a name or dotted name with positional and keyword arguments, `None`,
/// `True`, `False`, int, float, string and bytes literals (every literal form ruff decodes,
/// implicit concatenation joined), list, tuple, set and dict displays, unary `-` `+` `not`,
/// binary `+ - * / // % **`, names and dotted names. Everything else is an
/// [`ErrorKind::Unsupported`] error naming the construct, with its span; text that is not
/// Python is an [`ErrorKind::Syntax`] error with the parser's message.
///
/// ```
/// use fexpr::syntax::{parse, ExprKind};
/// use fexpr::{ErrorKind, Limits, Span};
///
/// let expr = parse("add(a=1, b=np.array([2.5]))", &Limits::default())?;
/// let ExprKind::Call(call) = &expr.kind else { unreachable!() };
/// assert_eq!(call.func, "add");
/// assert_eq!(call.kwargs[0].name, "a");
/// assert_eq!(call.kwargs[1].value.span, Span::new(11, 26));
///
/// let err = parse("add(1); import os", &Limits::default()).unwrap_err();
/// assert_eq!(err.kind, ErrorKind::Unsupported);
/// assert_eq!(err.span, Some(Span::new(6, 7)));
/// # Ok::<(), fexpr::Error>(())
/// ```
pub fn parse(source: &str, limits: &Limits) -> Result<Expr, Error> {
    scan::precheck(source, limits)?;
    if let Some(expr) = fast::parse(source, limits) {
        return Ok(expr);
    }
    ruff_path(source, limits)
}

/// [`parse`] without its fast path: every input goes through `ruff_python_parser`. The two
/// give the same result on every input; this one is the reference the tests and the `parse`
/// fuzz target compare the fast path with.
///
/// ```
/// use fexpr::syntax::{parse, parse_with_ruff};
/// use fexpr::Limits;
///
/// let text = "add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})";
/// assert_eq!(parse(text, &Limits::default()), parse_with_ruff(text, &Limits::default()));
/// ```
pub fn parse_with_ruff(source: &str, limits: &Limits) -> Result<Expr, Error> {
    scan::precheck(source, limits)?;
    ruff_path(source, limits)
}

/// `ruff_python_parser` and the conversion of its tree; the scan has run.
fn ruff_path(source: &str, limits: &Limits) -> Result<Expr, Error> {
    let start = body_start(source);
    let range = TextRange::new(text_size(start), text_size(source.len()));
    match guarded(|| ruff_python_parser::parse_expression_range(source, range))? {
        Ok(parsed) => {
            let converter = Converter {
                source,
                tokens: parsed.tokens(),
                max_depth: limits.max_depth,
                max_int_digits: limits.max_int_digits,
            };
            converter.expr(parsed.expr(), 1)
        }
        Err(error) => Err(diagnose(source, start, &error, limits)),
    }
}

/// Where the expression may start: after a byte order mark and leading whitespace.
fn body_start(source: &str) -> usize {
    let bom = if source.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = source.get(bom..).unwrap_or_default();
    let blank = rest
        .bytes()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C'))
        .count();
    bom + blank
}

/// Turn an expression-mode parse error into fexpr's error: a construct we name, statements
/// (valid Python, but not one expression), or a syntax error with the parser's message.
fn diagnose(source: &str, start: usize, error: &ParseError, limits: &Limits) -> Error {
    let at = span_of(error.location);
    match error.error {
        ParseErrorType::InvalidYieldExpressionUsage => {
            return unsupported("`yield` expressions are not accepted", at);
        }
        ParseErrorType::InvalidStarredExpressionUsage => {
            return unsupported("`*` unpacking is not accepted", at);
        }
        _ => {}
    }
    let message = match error.error {
        // A character Python has no token for, named by its code point as CPython names it
        // (an invisible one, such as U+3000, would otherwise be quoted as a blank).
        ParseErrorType::Lexical(LexicalErrorType::UnrecognizedToken { tok }) => {
            let what = if tok.is_whitespace() || tok.is_control() {
                "invalid non-printable character"
            } else {
                "invalid character"
            };
            format!("{what} U+{:04X} `{}`", u32::from(tok), tok.escape_debug())
        }
        ref other => clip(&other.to_string(), MESSAGE_CHARS),
    };
    let syntax = Error::new(ErrorKind::Syntax, message).at(at);
    let body = source.get(start..).unwrap_or_default();
    // Blocks nest by indentation, which the depth scan does not see; only run the module parser
    // when that nesting is bounded too.
    if scan::max_indentation(body) > limits.max_depth {
        return syntax;
    }
    match guarded(|| ruff_python_parser::parse_module(body).map(|m| m.suite().is_empty())) {
        Ok(Ok(false)) => unsupported("statements are not accepted; only one expression", at)
            .with_hint("send a single expression, such as one call: `tool(a=1)`"),
        _ => syntax,
    }
}

/// Run the parser, turning a panic in it (a parser bug) into an error rather than a crash.
fn guarded<T>(run: impl FnOnce() -> T) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).map_err(|_| {
        Error::new(
            ErrorKind::Syntax,
            "the parser failed on this input; it was rejected",
        )
    })
}

/// The first escape of a surrogate code point (`\ud800`, `\U0000dfff`) in the source of
/// a string literal that is not raw, and its byte offset in `text`.
fn surrogate_escape(text: &str) -> Option<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(k) = bytes.get(i..)?.iter().position(|b| *b == b'\\') {
        let at = i + k;
        let digits = match bytes.get(at + 1) {
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => {
                i = at + 2; // an escaped character, `\\` included
                continue;
            }
        };
        let escape = text.get(at..at + 2 + digits)?;
        let code = escape
            .get(2..)
            .and_then(|hex| u32::from_str_radix(hex, 16).ok());
        if code.is_some_and(|c| (0xD800..=0xDFFF).contains(&c)) {
            return Some((at, escape));
        }
        i = at + 2;
    }
    None
}

fn text_size(offset: usize) -> TextSize {
    // The scan rejected sources longer than `u32::MAX`.
    TextSize::try_from(offset).unwrap_or(TextSize::new(u32::MAX))
}

fn span_of(range: TextRange) -> Span {
    Span::new(range.start().to_u32(), range.end().to_u32())
}

fn unsupported(message: impl Into<String>, span: Span) -> Error {
    Error::new(ErrorKind::Unsupported, message).at(span)
}

/// Reject dunder names (`__import__`, `__class__`): defense in depth against reflection.
fn checked_name(name: &str, span: Span) -> Result<String, Error> {
    if super::is_dunder(name) {
        return Err(unsupported(
            format!(
                "dunder names are not accepted: `{}`",
                clip(name, QUOTE_CHARS)
            ),
            span,
        ));
    }
    Ok(name.to_owned())
}

/// Converts ruff's tree into the IR. Recursion is bounded by `max_depth + DEPTH_MARGIN`.
struct Converter<'a> {
    source: &'a str,
    tokens: &'a Tokens,
    /// [`Limits::max_depth`].
    max_depth: usize,
    max_int_digits: usize,
}

impl Converter<'_> {
    /// A string literal's value. ruff decodes an escape of a lone surrogate (`'\ud800'`,
    /// which Python keeps and UTF-8 cannot hold) as U+FFFD; that would change the text
    /// silently, so such an escape is a `Value` error naming it.
    fn string(&self, s: &ast::ExprStringLiteral) -> Result<String, Error> {
        let value = s.value.to_str();
        if value.contains(char::REPLACEMENT_CHARACTER) {
            for part in s.value.iter() {
                if part.flags.prefix().is_raw() {
                    continue;
                }
                let start = part.range.start().to_usize();
                let text = self.source.get(start..part.range.end().to_usize());
                if let Some((at, escape)) = text.and_then(surrogate_escape) {
                    let at = u32::try_from(start + at).unwrap_or(u32::MAX);
                    let end = at.saturating_add(u32::try_from(escape.len()).unwrap_or(0));
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!(
                            "the escape `{escape}` is a lone surrogate, which is not text: \
                             a string cannot hold it"
                        ),
                    )
                    .at(Span::new(at, end))
                    .with_hint(
                        "write the character itself, or a code point outside U+D800..U+DFFF",
                    ));
                }
            }
        }
        Ok(value.to_owned())
    }

    fn expr(&self, expr: &ast::Expr, depth: usize) -> Result<Expr, Error> {
        let span = span_of(expr.range());
        if depth > self.max_depth.saturating_add(DEPTH_MARGIN) {
            return Err(Error::limit(LimitKind::Depth, self.max_depth, depth).at(span));
        }
        let next = depth + 1;
        let kind = match expr {
            ast::Expr::NoneLiteral(_) => ExprKind::None,
            ast::Expr::BooleanLiteral(b) => ExprKind::Bool(b.value),
            ast::Expr::NumberLiteral(n) => match &n.value {
                ast::Number::Int(int) => self.int(int, span)?,
                ast::Number::Float(x) => ExprKind::Float(*x),
                ast::Number::Complex { .. } => {
                    return Err(unsupported("complex numbers are not accepted", span));
                }
            },
            ast::Expr::StringLiteral(s) => ExprKind::Str(self.string(s)?),
            ast::Expr::BytesLiteral(b) => ExprKind::Bytes(b.value.bytes().collect()),
            ast::Expr::Name(name) => ExprKind::Name(checked_name(name.id.as_str(), span)?),
            ast::Expr::Attribute(attribute) => ExprKind::Name(self.dotted(attribute)?),
            ast::Expr::List(list) => ExprKind::List(self.exprs(&list.elts, next)?),
            ast::Expr::Tuple(tuple) => ExprKind::Tuple(self.exprs(&tuple.elts, next)?),
            ast::Expr::Set(set) => ExprKind::Set(self.exprs(&set.elts, next)?),
            ast::Expr::Dict(dict) => ExprKind::Dict(self.dict(dict, next)?),
            ast::Expr::UnaryOp(unary) => {
                let op = match unary.op {
                    ast::UnaryOp::USub => UnaryOp::Neg,
                    ast::UnaryOp::UAdd => UnaryOp::Pos,
                    ast::UnaryOp::Not => UnaryOp::Not,
                    ast::UnaryOp::Invert => {
                        return Err(unsupported(
                            "the bitwise operator `~` is not accepted",
                            span,
                        ));
                    }
                };
                ExprKind::Unary(op, Box::new(self.expr(&unary.operand, next)?))
            }
            ast::Expr::BinOp(binary) => {
                let op = binary_op(binary.op).ok_or_else(|| {
                    let what = match binary.op {
                        ast::Operator::MatMult => "the matrix multiplication operator",
                        _ => "the bitwise operator",
                    };
                    unsupported(
                        format!("{what} `{}` is not accepted", binary.op.as_str()),
                        span,
                    )
                })?;
                let left = self.expr(&binary.left, next)?;
                let right = self.expr(&binary.right, next)?;
                ExprKind::Binary(op, Box::new(left), Box::new(right))
            }
            ast::Expr::Call(call) => ExprKind::Call(self.call(call, next)?),
            ast::Expr::BoolOp(_) => {
                return Err(unsupported("`and` and `or` are not accepted", span));
            }
            ast::Expr::Named(_) => {
                return Err(unsupported(
                    "assignment expressions (`:=`) are not accepted",
                    span,
                ));
            }
            ast::Expr::Lambda(_) => {
                return Err(unsupported("lambda expressions are not accepted", span));
            }
            ast::Expr::If(_) => {
                return Err(unsupported(
                    "conditional expressions (`a if c else b`) are not accepted",
                    span,
                ));
            }
            ast::Expr::ListComp(_) | ast::Expr::SetComp(_) | ast::Expr::DictComp(_) => {
                return Err(unsupported("comprehensions are not accepted", span));
            }
            ast::Expr::Generator(_) => {
                return Err(unsupported("generator expressions are not accepted", span));
            }
            ast::Expr::Await(_) => {
                return Err(unsupported("`await` is not accepted", span));
            }
            ast::Expr::Yield(_) | ast::Expr::YieldFrom(_) => {
                return Err(unsupported("`yield` expressions are not accepted", span));
            }
            ast::Expr::Compare(_) => {
                return Err(unsupported("comparisons are not accepted", span));
            }
            ast::Expr::FString(_) => {
                return Err(unsupported("f-strings are not accepted", span));
            }
            ast::Expr::TString(_) => {
                return Err(unsupported("t-strings are not accepted", span));
            }
            ast::Expr::EllipsisLiteral(_) => {
                return Err(unsupported("`...` (Ellipsis) is not accepted", span));
            }
            ast::Expr::Subscript(_) => {
                return Err(unsupported("subscripts (`x[i]`) are not accepted", span));
            }
            ast::Expr::Slice(_) => {
                return Err(unsupported("slices are not accepted", span));
            }
            ast::Expr::Starred(_) => {
                return Err(unsupported("`*` unpacking is not accepted", span));
            }
            ast::Expr::IpyEscapeCommand(_) => {
                return Err(unsupported(
                    "IPython escape commands are not accepted",
                    span,
                ));
            }
        };
        Ok(Expr { kind, span })
    }

    fn exprs(&self, exprs: &[ast::Expr], depth: usize) -> Result<Vec<Expr>, Error> {
        exprs.iter().map(|e| self.expr(e, depth)).collect()
    }

    fn dict(&self, dict: &ast::ExprDict, depth: usize) -> Result<Vec<(Expr, Expr)>, Error> {
        let mut pairs = Vec::with_capacity(dict.items.len());
        for item in &dict.items {
            let Some(key) = &item.key else {
                return Err(unsupported(
                    "`**` unpacking is not accepted",
                    self.splat_span(&item.value),
                ));
            };
            pairs.push((self.expr(key, depth)?, self.expr(&item.value, depth)?));
        }
        Ok(pairs)
    }

    /// The span of `**value` in a dict display: from the `**` token to the end of the value.
    fn splat_span(&self, value: &ast::Expr) -> Span {
        let value_span = span_of(value.range());
        let before = self.tokens.partition_point(|t| t.start() < value.start());
        let star = self.tokens.get(..before).and_then(|tokens| {
            tokens
                .iter()
                .rev()
                .find(|t| !t.kind().is_trivia() && t.kind() != TokenKind::Lpar)
        });
        match star {
            Some(token) if token.kind() == TokenKind::DoubleStar => {
                span_of(token.range()).to(value_span)
            }
            _ => value_span,
        }
    }

    fn call(&self, call: &ast::ExprCall, depth: usize) -> Result<Call, Error> {
        let func_span = span_of(call.func.range());
        let func = match &*call.func {
            ast::Expr::Name(name) => checked_name(name.id.as_str(), func_span)?,
            ast::Expr::Attribute(attribute) => self.dotted(attribute)?,
            _ => {
                return Err(unsupported(
                    "only a name or a dotted name can be called",
                    func_span,
                ));
            }
        };
        let args = self.exprs(&call.arguments.args, depth)?;
        let mut kwargs = Vec::with_capacity(call.arguments.keywords.len());
        for keyword in &call.arguments.keywords {
            let Some(name) = &keyword.arg else {
                return Err(unsupported(
                    "`**` unpacking is not accepted",
                    span_of(keyword.range),
                ));
            };
            let name_span = span_of(name.range);
            if keyword.range.start() != name.range.start() {
                return Err(self.parenthesized_keyword(keyword.range.start(), name.range.end()));
            }
            kwargs.push(Keyword {
                name: checked_name(name.as_str(), name_span)?,
                name_span,
                value: self.expr(&keyword.value, depth)?,
            });
        }
        Ok(Call {
            func,
            func_span,
            args,
            kwargs,
        })
    }

    /// `f((a)=1)`: ruff reads a keyword argument `a`; CPython refuses it (a keyword's name is a
    /// plain identifier), and so does fexpr, at the bytes from the first `(` to the last `)`.
    fn parenthesized_keyword(&self, start: TextSize, name_end: TextSize) -> Error {
        let after = self.tokens.partition_point(|t| t.start() < name_end);
        let end = self
            .tokens
            .get(after..)
            .unwrap_or_default()
            .iter()
            .take_while(|t| t.kind() == TokenKind::Rpar || t.kind().is_trivia())
            .filter(|t| t.kind() == TokenKind::Rpar)
            .last()
            .map_or(name_end, Ranged::end);
        Error::new(
            ErrorKind::Syntax,
            "expression cannot contain assignment, perhaps you meant \"==\"?",
        )
        .at(span_of(TextRange::new(start, end)))
        .with_hint("a keyword argument's name is a plain identifier: `f(a=1)`")
    }

    /// `a.b.c` as the path `"a.b.c"`; any other attribute access is rejected.
    fn dotted(&self, attribute: &ast::ExprAttribute) -> Result<String, Error> {
        let mut attrs = vec![&attribute.attr];
        let mut outer = attribute;
        let base = loop {
            match &*outer.value {
                ast::Expr::Attribute(inner) => {
                    attrs.push(&inner.attr);
                    outer = inner;
                }
                ast::Expr::Name(name) => break name,
                _ => {
                    return Err(unsupported(
                        "attribute access is only accepted on dotted names such as `np.array`",
                        span_of(outer.range),
                    ));
                }
            }
        };
        let mut path = checked_name(base.id.as_str(), span_of(base.range))?;
        for attr in attrs.iter().rev() {
            path.push('.');
            path.push_str(&checked_name(attr.as_str(), span_of(attr.range))?);
        }
        Ok(path)
    }

    /// An int literal as `Int` or `BigInt`, its digits checked before the conversion.
    fn int(&self, int: &ast::Int, span: Span) -> Result<ExprKind, Error> {
        let text = self.source.get(span.range()).unwrap_or_default();
        let (radix, digits) = split_radix(text);
        let digits: String = digits.chars().filter(|&c| c != '_').collect();
        let too_many = |used: String| Error::limit(LimitKind::IntDigits, self.max_int_digits, used);
        if radix == 10 {
            if digits.len() > self.max_int_digits {
                return Err(too_many(digits.len().to_string()).at(span));
            }
            if let Some(value) = int.as_i64() {
                return Ok(ExprKind::Int(value));
            }
            return parse_big(&digits, radix, span).map(ExprKind::BigInt);
        }
        // Hex, octal, binary: bound the decimal digits of the value by its bit length.
        let significant = digits.trim_start_matches('0').len();
        let bits_per_digit = match radix {
            16 => 4,
            8 => 3,
            _ => 1,
        };
        let min_bits = significant.saturating_sub(1).saturating_mul(bits_per_digit);
        let at_least = decimal_digits_at_least(min_bits);
        if at_least > self.max_int_digits {
            return Err(too_many(format!("at least {at_least}")).at(span));
        }
        let value = parse_big(&digits, radix, span)?;
        let bits = usize::try_from(value.bits()).unwrap_or(usize::MAX);
        if decimal_digits_at_most(bits) > self.max_int_digits {
            // Close to the limit: compare with `10^max_int_digits`, a number no longer than
            // the literal itself.
            if let Ok(max) = u32::try_from(self.max_int_digits) {
                if value >= BigInt::from(10u32).pow(max) {
                    let used = format!("at least {}", self.max_int_digits.saturating_add(1));
                    return Err(too_many(used).at(span));
                }
            }
        }
        Ok(match i64::try_from(&value) {
            Ok(small) => ExprKind::Int(small),
            Err(_) => ExprKind::BigInt(value),
        })
    }
}

/// The radix and digits of an int literal's text (`0x1F` → `(16, "1F")`).
fn split_radix(text: &str) -> (u32, &str) {
    let prefix = text.get(..2).map(str::to_ascii_lowercase);
    let digits = text.get(2..).unwrap_or_default();
    match prefix.as_deref() {
        Some("0x") => (16, digits),
        Some("0o") => (8, digits),
        Some("0b") => (2, digits),
        _ => (10, text),
    }
}

fn parse_big(digits: &str, radix: u32, span: Span) -> Result<BigInt, Error> {
    BigInt::parse_bytes(digits.as_bytes(), radix)
        .ok_or_else(|| Error::new(ErrorKind::Syntax, "invalid integer literal").at(span))
}

/// A lower bound on the decimal digits of a number at least `2^bits` (`log10 2 > 0.30102`).
fn decimal_digits_at_least(bits: usize) -> usize {
    bits.saturating_mul(30_102) / 100_000 + 1
}

/// An upper bound on the decimal digits of a number below `2^bits` (`log10 2 < 0.30103`).
fn decimal_digits_at_most(bits: usize) -> usize {
    bits.saturating_mul(30_103) / 100_000 + 1
}

fn binary_op(op: ast::Operator) -> Option<BinaryOp> {
    Some(match op {
        ast::Operator::Add => BinaryOp::Add,
        ast::Operator::Sub => BinaryOp::Sub,
        ast::Operator::Mult => BinaryOp::Mul,
        ast::Operator::Div => BinaryOp::Div,
        ast::Operator::FloorDiv => BinaryOp::FloorDiv,
        ast::Operator::Mod => BinaryOp::Mod,
        ast::Operator::Pow => BinaryOp::Pow,
        ast::Operator::MatMult
        | ast::Operator::LShift
        | ast::Operator::RShift
        | ast::Operator::BitOr
        | ast::Operator::BitXor
        | ast::Operator::BitAnd => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sp(start: u32, end: u32) -> Span {
        Span::new(start, end)
    }

    fn ok(source: &str) -> Expr {
        match parse(source, &Limits::default()) {
            Ok(expr) => expr,
            Err(e) => panic!("{source:?} was rejected: {e}"),
        }
    }

    fn err_with(source: &str, limits: &Limits) -> Error {
        match parse(source, limits) {
            Ok(expr) => panic!("{:?} was accepted: {expr:?}", clip(source, 60)),
            Err(e) => e,
        }
    }

    fn err(source: &str) -> Error {
        err_with(source, &Limits::default())
    }

    fn node(kind: ExprKind, start: u32, end: u32) -> Expr {
        Expr {
            kind,
            span: sp(start, end),
        }
    }

    fn int(n: i64, start: u32, end: u32) -> Expr {
        node(ExprKind::Int(n), start, end)
    }

    fn name(n: &str, start: u32, end: u32) -> Expr {
        node(ExprKind::Name(n.into()), start, end)
    }

    /// Assert that `source` parses to a single leaf `kind` spanning the whole text.
    fn leaf(source: &str, kind: ExprKind) {
        let end = u32::try_from(source.len()).unwrap_or(u32::MAX);
        assert_eq!(ok(source), node(kind, 0, end), "{source:?}");
    }

    fn call(source: &str) -> Call {
        match ok(source).kind {
            ExprKind::Call(call) => call,
            other => panic!("{source:?} is not a call: {other:?}"),
        }
    }

    fn assert_unsupported(source: &str, start: u32, end: u32, words: &str) {
        let e = err(source);
        assert_eq!(e.kind, ErrorKind::Unsupported, "{source:?}: {e}");
        assert_eq!(e.span, Some(sp(start, end)), "{source:?}: {e}");
        assert!(e.message.contains(words), "{source:?}: {e}");
    }

    fn assert_syntax(source: &str, start: u32, end: u32) -> Error {
        let e = err(source);
        assert_eq!(e.kind, ErrorKind::Syntax, "{source:?}: {e}");
        assert_eq!(e.span, Some(sp(start, end)), "{source:?}: {e}");
        assert!(e.message.chars().count() <= MESSAGE_CHARS + 1, "{e}");
        e
    }

    fn assert_limit(source: &str, limits: &Limits, what: &str) -> Error {
        let e = err_with(source, limits);
        assert_eq!(e.kind, ErrorKind::Limit, "{:?}: {e}", clip(source, 60));
        assert!(e.message.starts_with(what), "{e}");
        e
    }

    #[test]
    fn constants() {
        leaf("None", ExprKind::None);
        leaf("True", ExprKind::Bool(true));
        leaf("False", ExprKind::Bool(false));
    }

    #[test]
    fn int_literals() {
        leaf("0", ExprKind::Int(0));
        leaf("42", ExprKind::Int(42));
        leaf("1_000", ExprKind::Int(1000));
        leaf("0x_ff", ExprKind::Int(255));
        leaf("0O17", ExprKind::Int(15));
        leaf("0b101", ExprKind::Int(5));
        leaf("000", ExprKind::Int(0));
        leaf("9223372036854775807", ExprKind::Int(i64::MAX));
        leaf(
            "9223372036854775808",
            ExprKind::BigInt(BigInt::from(i64::MAX) + 1),
        );
        leaf(
            "0xFFFF_FFFF_FFFF_FFFF_F",
            ExprKind::BigInt(BigInt::from(u64::MAX) * 16 + 15),
        );
        let big = "123456789".repeat(10);
        leaf(&big, ExprKind::BigInt(big.parse().unwrap_or_default()));
    }

    #[test]
    fn float_literals() {
        leaf("1.5", ExprKind::Float(1.5));
        leaf("1e-3", ExprKind::Float(1e-3));
        leaf("1_000.5", ExprKind::Float(1000.5));
        leaf(".5", ExprKind::Float(0.5));
        leaf("1.", ExprKind::Float(1.0));
        leaf("2E+2", ExprKind::Float(200.0));
        leaf("1e999", ExprKind::Float(f64::INFINITY));
    }

    #[test]
    fn string_literals() {
        leaf("'a'", ExprKind::Str("a".into()));
        leaf("\"\"", ExprKind::Str(String::new()));
        leaf(r#""a\nb\t\\\"""#, ExprKind::Str("a\nb\t\\\"".into()));
        leaf(r"'\x41\u00e9\U0001F600\101'", ExprKind::Str("Aé😀A".into()));
        leaf(r"'\N{BULLET}\N{EM DASH}'", ExprKind::Str("•—".into()));
        leaf(r"'\q'", ExprKind::Str("\\q".into()));
        leaf(r"r'\n\''", ExprKind::Str("\\n\\'".into()));
        leaf("u'x'", ExprKind::Str("x".into()));
        leaf("'''a\n\"b\"'''", ExprKind::Str("a\n\"b\"".into()));
        leaf("'a\\\nb'", ExprKind::Str("ab".into()));
        leaf("'a' \"b\" '''c'''", ExprKind::Str("abc".into()));
        leaf("'é😀'", ExprKind::Str("é😀".into()));
        assert_eq!(ok("('a'\n 'b')"), node(ExprKind::Str("ab".into()), 1, 9));
    }

    #[test]
    fn bytes_literals() {
        leaf("b'a'", ExprKind::Bytes(b"a".to_vec()));
        leaf(r"b'\xff\x00\n'", ExprKind::Bytes(vec![0xff, 0, b'\n']));
        leaf(r"rb'\n'", ExprKind::Bytes(b"\\n".to_vec()));
        leaf(r"BR'\n'", ExprKind::Bytes(b"\\n".to_vec()));
        leaf("b'a' b'b'", ExprKind::Bytes(b"ab".to_vec()));
    }

    #[test]
    fn names_and_dotted_names() {
        leaf("x", ExprKind::Name("x".into()));
        leaf("_private", ExprKind::Name("_private".into()));
        leaf("np.array", ExprKind::Name("np.array".into()));
        leaf("a.b.c.d", ExprKind::Name("a.b.c.d".into()));
        leaf("a . b", ExprKind::Name("a.b".into()));
        leaf("μ", ExprKind::Name("μ".into()));
        // Python normalizes identifiers (NFKC): the full-width `ｘ` is `x`.
        leaf("ｘ", ExprKind::Name("x".into()));
    }

    #[test]
    fn displays() {
        assert_eq!(
            ok("[1, x]"),
            node(ExprKind::List(vec![int(1, 1, 2), name("x", 4, 5)]), 0, 6)
        );
        leaf("[]", ExprKind::List(vec![]));
        leaf("()", ExprKind::Tuple(vec![]));
        assert_eq!(ok("(1,)"), node(ExprKind::Tuple(vec![int(1, 1, 2)]), 0, 4));
        assert_eq!(
            ok("1, 2"),
            node(ExprKind::Tuple(vec![int(1, 0, 1), int(2, 3, 4)]), 0, 4)
        );
        assert_eq!(ok("{1}"), node(ExprKind::Set(vec![int(1, 1, 2)]), 0, 3));
        leaf("{}", ExprKind::Dict(vec![]));
        assert_eq!(
            ok("{'a': 1, 2: x,}"),
            node(
                ExprKind::Dict(vec![
                    (node(ExprKind::Str("a".into()), 1, 4), int(1, 6, 7)),
                    (int(2, 9, 10), name("x", 12, 13)),
                ]),
                0,
                15
            )
        );
        // Parentheses only group: the span is the inner expression's.
        assert_eq!(ok("((1))"), int(1, 2, 3));
    }

    #[test]
    fn unary_operators() {
        for (source, op) in [("-1", UnaryOp::Neg), ("+1", UnaryOp::Pos)] {
            assert_eq!(
                ok(source),
                node(ExprKind::Unary(op, Box::new(int(1, 1, 2))), 0, 2)
            );
        }
        assert_eq!(
            ok("not x"),
            node(
                ExprKind::Unary(UnaryOp::Not, Box::new(name("x", 4, 5))),
                0,
                5
            )
        );
        assert_eq!(
            ok("--1"),
            node(
                ExprKind::Unary(
                    UnaryOp::Neg,
                    Box::new(node(
                        ExprKind::Unary(UnaryOp::Neg, Box::new(int(1, 2, 3))),
                        1,
                        3
                    ))
                ),
                0,
                3
            )
        );
    }

    #[test]
    fn binary_operators() {
        for (symbol, op) in [
            ("+", BinaryOp::Add),
            ("-", BinaryOp::Sub),
            ("*", BinaryOp::Mul),
            ("/", BinaryOp::Div),
            ("//", BinaryOp::FloorDiv),
            ("%", BinaryOp::Mod),
            ("**", BinaryOp::Pow),
        ] {
            let source = format!("a {symbol} b");
            let end = u32::try_from(source.len()).unwrap_or(0);
            assert_eq!(
                ok(&source),
                node(
                    ExprKind::Binary(
                        op,
                        Box::new(name("a", 0, 1)),
                        Box::new(name("b", end - 1, end))
                    ),
                    0,
                    end
                )
            );
        }
        // Precedence and associativity are Python's.
        let mut e = ok("1 + 2 * 3 ** -4 ** 5 - 6");
        e.strip_spans();
        let mut expected = ok("(1 + (2 * (3 ** (-(4 ** 5))))) - 6");
        expected.strip_spans();
        assert_eq!(e, expected);
    }

    #[test]
    fn calls() {
        let c = call("f()");
        assert_eq!((c.func.as_str(), c.func_span), ("f", sp(0, 1)));
        assert!(c.args.is_empty() && c.kwargs.is_empty());

        let c = call("add(1, x, k=2, other=[3])");
        assert_eq!(c.func, "add");
        assert_eq!(c.args, vec![int(1, 4, 5), name("x", 7, 8)]);
        assert_eq!(c.kwargs.len(), 2);
        assert_eq!(
            c.kwargs[0],
            Keyword {
                name: "k".into(),
                name_span: sp(10, 11),
                value: int(2, 12, 13),
            }
        );
        assert_eq!(c.kwargs[1].name, "other");
        assert_eq!(c.kwargs[1].name_span, sp(15, 20));
        assert_eq!(c.kwargs[1].value.span, sp(21, 24));

        let c = call("np.linalg.norm(v)");
        assert_eq!(
            (c.func.as_str(), c.func_span),
            ("np.linalg.norm", sp(0, 14))
        );

        // Duplicate keywords are the binder's business: kept, in order.
        let c = call("f(a=1, a=2)");
        let names: Vec<&str> = c.kwargs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["a", "a"]);
        assert_eq!(c.kwargs[1].value, int(2, 9, 10));

        // Nested calls, whitespace, comments, a trailing comma.
        let source = "add_points(\n  p1=Point(x=1, y=2),  # first\n  p2=Point(x=3, y=4),\n)";
        let c = call(source);
        assert_eq!(c.kwargs.len(), 2);
        let ExprKind::Call(inner) = &c.kwargs[1].value.kind else {
            panic!("not a call")
        };
        assert_eq!(inner.func, "Point");
        assert_eq!(&source[c.kwargs[1].value.span.range()], "Point(x=3, y=4)");
        assert_eq!(ok(source).span.range(), 0..source.len());
    }

    #[test]
    fn bom_and_leading_whitespace_are_skipped() {
        let c = call("\u{feff}f(1)");
        assert_eq!(c.func_span, sp(3, 4));
        assert_eq!(c.args, vec![int(1, 5, 6)]);
        assert_eq!(ok("\u{feff}f(1)").span, sp(3, 7));
        assert_eq!(ok("\n  \t f(1)\n").span, sp(5, 9));
        assert_eq!(ok("# the call\nf(1)  # done\n").span, sp(11, 15));
        assert_eq!(ok("\u{feff}  1").span, sp(5, 6));
        let e = err("\u{feff}f(1); g()");
        assert_eq!((e.kind, e.span), (ErrorKind::Unsupported, Some(sp(7, 8))));
        // A BOM anywhere else is not whitespace.
        assert_syntax("f(\u{feff}1)", 2, 5);
    }

    #[test]
    fn characters_python_has_no_token_for_are_named_where_they_are() {
        // U+3000 is three bytes; the span indexes the text as given.
        let e = assert_syntax("\u{3000}add(a=zz, b=1)", 0, 3);
        assert_eq!(
            e.message,
            "invalid non-printable character U+3000 `\\u{3000}`"
        );
        let e = assert_syntax("add(a=1€)", 7, 10);
        assert_eq!(e.message, "invalid character U+20AC `€`");
    }

    #[test]
    fn keyword_names_are_plain_identifiers() {
        let e = assert_syntax("add((a)=1, b=2)", 4, 7);
        assert!(
            e.message
                .starts_with("expression cannot contain assignment"),
            "{e}"
        );
        assert_syntax("f(( a ) =1)", 2, 7);
        assert_syntax("f(a=1, ((b))=2)", 7, 12);
        // A parenthesised name is a positional argument as usual.
        assert_eq!(call("f((a), b=2)").args, vec![name("a", 3, 4)]);
    }

    #[test]
    fn identifiers_are_nfkc_normalised_as_cpython_does() {
        // `ａ` (U+FF41) is three bytes; spans index the text as written.
        let c = call("ａdd(ｂ=1)");
        assert_eq!((c.func.as_str(), c.func_span), ("add", sp(0, 5)));
        assert_eq!(
            (c.kwargs[0].name.as_str(), c.kwargs[0].name_span),
            ("b", sp(6, 9))
        );
        assert_eq!(call("np.ａrray([1])").func, "np.array");
        // Lookalikes from other scripts are other names.
        assert_eq!(call("аdd(a=1)").func, "\u{430}dd");
    }

    #[test]
    fn rejected_constructs() {
        let cases: &[(&str, u32, u32, &str)] = &[
            ("lambda: 1", 0, 9, "lambda"),
            ("f(lambda x: x)", 2, 13, "lambda"),
            ("[x for x in y]", 0, 14, "comprehensions"),
            ("{x for x in y}", 0, 14, "comprehensions"),
            ("{k: v for k, v in y}", 0, 20, "comprehensions"),
            ("f(x for x in y)", 2, 14, "generator"),
            ("(x for x in y)", 0, 14, "generator"),
            ("f'{x}'", 0, 6, "f-strings"),
            ("'a' f'{x}'", 4, 10, "f-strings"),
            ("t'{x}'", 0, 6, "t-strings"),
            ("x[0]", 0, 4, "subscripts"),
            ("f(1)[0]", 0, 7, "subscripts"),
            ("x[1:2]", 0, 6, "subscripts"),
            ("().__class__", 0, 12, "attribute access"),
            ("'a'.upper", 0, 9, "attribute access"),
            ("'a'.upper()", 0, 9, "attribute access"),
            ("f().x", 0, 5, "attribute access"),
            ("f().x.y", 0, 5, "attribute access"),
            ("[a.b][0]", 0, 8, "subscripts"),
            ("(a := 1)", 1, 7, ":="),
            ("f(y := 1)", 2, 8, ":="),
            ("a < b", 0, 5, "comparisons"),
            ("a == b", 0, 6, "comparisons"),
            ("a in b", 0, 6, "comparisons"),
            ("a is not b", 0, 10, "comparisons"),
            ("a and b", 0, 7, "`and` and `or`"),
            ("a or b", 0, 6, "`and` and `or`"),
            ("a if c else b", 0, 13, "conditional"),
            ("await x", 0, 7, "await"),
            ("f(await x)", 2, 9, "await"),
            ("(yield x)", 1, 8, "yield"),
            ("yield x", 0, 7, "yield"),
            ("f(*a)", 2, 4, "`*` unpacking"),
            ("[1, *a]", 4, 6, "`*` unpacking"),
            ("*a, b", 0, 2, "`*` unpacking"),
            ("f(**kw)", 2, 6, "`**` unpacking"),
            ("f(a=1, ** kw)", 7, 12, "`**` unpacking"),
            ("{**d}", 1, 4, "`**` unpacking"),
            ("{1: 2, ** (d)}", 7, 12, "`**` unpacking"),
            ("a & b", 0, 5, "bitwise operator `&`"),
            ("a | b", 0, 5, "bitwise operator `|`"),
            ("a ^ b", 0, 5, "bitwise operator `^`"),
            ("a << b", 0, 6, "bitwise operator `<<`"),
            ("a >> b", 0, 6, "bitwise operator `>>`"),
            ("~a", 0, 2, "bitwise operator `~`"),
            ("a @ b", 0, 5, "matrix multiplication operator `@`"),
            ("...", 0, 3, "Ellipsis"),
            ("f(...)", 2, 5, "Ellipsis"),
            ("1j", 0, 2, "complex"),
            ("1 + 2.5J", 4, 8, "complex"),
            ("f()()", 0, 3, "only a name or a dotted name can be called"),
            (
                "(lambda: 1)()",
                1,
                10,
                "only a name or a dotted name can be called",
            ),
            ("'a'()", 0, 3, "only a name or a dotted name can be called"),
            ("__import__('os')", 0, 10, "dunder names"),
            ("__x__", 0, 5, "dunder names"),
            ("x.__class__", 2, 11, "dunder names"),
            ("__b__.c", 0, 5, "dunder names"),
            ("f(__class__=1)", 2, 11, "dunder names"),
            ("np.__dict__.get(1)", 3, 11, "dunder names"),
        ];
        for &(source, start, end, words) in cases {
            assert_unsupported(source, start, end, words);
        }
    }

    #[test]
    fn statements_are_rejected_at_the_first_byte_after_the_expression() {
        let cases: &[(&str, u32, u32)] = &[
            ("add(a=1, b=2); import os", 13, 14),
            ("x = 1", 2, 3),
            ("x += 1", 2, 4),
            ("x: int = 1", 1, 2),
            ("import os", 0, 6),
            ("from os import path", 0, 4),
            ("del x", 0, 3),
            ("pass", 0, 4),
            ("def f():\n    return 1\n", 0, 3),
            ("f(1)\ng(2)", 5, 6),
            ("f(1)\r\ng(2)\n", 6, 7),
            ("f(1);", 4, 5),
            ("\n\nprint(1)\nx = 2\n", 11, 12),
        ];
        for &(source, start, end) in cases {
            let e = err(source);
            assert_eq!(e.kind, ErrorKind::Unsupported, "{source:?}: {e}");
            assert_eq!(
                e.message, "statements are not accepted; only one expression",
                "{source:?}"
            );
            assert_eq!(e.span, Some(sp(start, end)), "{source:?}: {e}");
        }
    }

    #[test]
    fn syntax_errors_keep_the_parser_message_and_span() {
        assert!(assert_syntax("f(1, 2", 6, 6).message.contains("EOF"));
        assert!(assert_syntax("'abc", 0, 4).message.contains("quote"));
        assert!(assert_syntax("'abc\n'", 0, 4).message.contains("quote"));
        assert!(assert_syntax("\"\"\"abc", 0, 6).message.contains("quote"));
        assert_syntax("f(1))", 4, 5);
        assert_syntax(")", 0, 1);
        assert_syntax("(]", 1, 2);
        assert_syntax("[1, 2)", 5, 6);
        assert_syntax("{1: }", 4, 5);
        assert_syntax("1 +", 3, 3);
        assert_syntax("print 1", 6, 7);
        assert_syntax("a := 1", 2, 4);
        assert_syntax("f(a=1, 2)", 7, 8);
        assert_syntax("xf'a'", 2, 5);
        assert_syntax("'a' b'b'", 0, 8);
        assert_syntax("1 2", 2, 3);
        assert_syntax("0777", 0, 4);
        assert_syntax("$x", 0, 1);
        assert!(assert_syntax("", 0, 0)
            .message
            .contains("Expected an expression"));
        assert_syntax("  \n ", 4, 4);
        assert_syntax("# only a comment", 16, 16);
        // Deep indentation is not given to the module parser: plain syntax error.
        let indented = format!("f(1)\n{}x = 1", " ".repeat(200));
        assert_eq!(err(&indented).kind, ErrorKind::Syntax);
    }

    #[test]
    fn nul_bytes_are_rejected_before_parsing() {
        let e = err("f('a\0b')");
        assert_eq!((e.kind, e.span), (ErrorKind::Syntax, Some(sp(4, 5))));
    }

    #[test]
    fn source_size_limit() {
        let limits = Limits {
            max_source_bytes: 6,
            ..Limits::default()
        };
        assert!(parse("f(123)", &limits).is_ok());
        assert_limit("f(1234)", &limits, "max_source_bytes");
    }

    #[test]
    fn int_digit_limit_edges() {
        let limits = Limits {
            max_int_digits: 5,
            ..Limits::default()
        };
        let digits = |s: &str| parse(s, &limits);
        assert!(digits("99999").is_ok());
        assert!(digits("9_9_9_9_9").is_ok());
        assert!(digits("00000").is_ok());
        let e = assert_limit("f(123456)", &limits, "max_int_digits");
        assert_eq!(e.span, Some(sp(2, 8)));
        assert_limit("000000", &limits, "max_int_digits");
        // Other radixes are limited by the decimal digits of their value.
        assert!(digits("0x1869F").is_ok()); // 99999
        assert!(digits("0x0000001869F").is_ok());
        assert_limit("0x186A0", &limits, "max_int_digits"); // 100000
        assert!(digits("0b11000011010011111").is_ok()); // 99999
        assert_limit("0b11000011010100000", &limits, "max_int_digits");
        assert_limit("0o303240", &limits, "max_int_digits"); // 100000
                                                             // Floats are not ints.
        assert!(digits("123456.0").is_ok());

        let default = Limits::default();
        assert!(parse(&"9".repeat(4300), &default).is_ok());
        assert_limit(&"9".repeat(4301), &default, "max_int_digits");
        let started = std::time::Instant::now();
        assert_limit(
            &format!("0x{}", "f".repeat(500_000)),
            &default,
            "max_int_digits",
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn depth_limit_edges() {
        let limits = Limits {
            max_depth: 10,
            ..Limits::default()
        };
        let minus = |n: usize| format!("{}1", "-".repeat(n));
        assert!(parse(&minus(10), &limits).is_ok());
        assert_limit(&minus(11), &limits, "max_depth");
        let lists = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&lists(10), &limits).is_ok());
        assert_limit(&lists(11), &limits, "max_depth");
        let calls = |n: usize| format!("{}1{}", "f(".repeat(n), ")".repeat(n));
        assert!(parse(&calls(5), &limits).is_ok());
        assert_limit(&calls(6), &limits, "max_depth");
        let default = Limits::default();
        assert!(parse(&format!("{}1", "-".repeat(100)), &default).is_ok());
        assert_limit(&format!("{}1", "-".repeat(101)), &default, "max_depth");
    }

    #[test]
    fn converter_depth_backstop() {
        // Unreachable through `parse` (the scan's bound is tighter); exercised directly. With
        // `max_depth` 0 the converter accepts `DEPTH_MARGIN` levels and stops at the next one.
        let source = format!("{}1{}", "[".repeat(12), "]".repeat(12));
        let Ok(parsed) = ruff_python_parser::parse_expression(&source) else {
            panic!("ruff rejected the input")
        };
        let converter = Converter {
            source: &source,
            tokens: parsed.tokens(),
            max_depth: 0,
            max_int_digits: 10,
        };
        let e = converter
            .expr(parsed.expr(), 1)
            .err()
            .unwrap_or_else(|| Error::new(ErrorKind::Value, "accepted"));
        let margin = u32::try_from(DEPTH_MARGIN).unwrap_or(0);
        assert_eq!(e.kind, ErrorKind::Limit, "{e}");
        assert_eq!(e.span, Some(sp(margin, 25 - margin)), "{e}");
        assert!(
            e.message.ends_with(&format!("{} > 0", DEPTH_MARGIN + 1)),
            "{e}"
        );
    }

    #[test]
    fn deep_inputs_are_limit_errors_without_recursion() {
        const N: usize = 100_000;
        let started = std::time::Instant::now();
        let inputs = [
            "(".repeat(N),
            "[".repeat(N),
            "{".repeat(N),
            format!("{}1{}", "[".repeat(N), "]".repeat(N)),
            format!("1{}", "+1".repeat(N)),
            format!("{}1", "-".repeat(N)),
            format!("{}x", "not ".repeat(N)),
            format!("a{}", ".b".repeat(N)),
            format!("f{}", "()".repeat(N)),
            format!("x{}", "[0]".repeat(N)),
            format!("{}0", "lambda a, b: ".repeat(N / 2)),
            format!("{}1{}", "f(".repeat(N), ")".repeat(N)),
            format!("2{}", "**2".repeat(N)),
            "(]".repeat(N),
        ];
        for input in &inputs {
            assert_limit(input, &Limits::default(), "max_depth");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn flat_inputs_are_accepted() {
        let negatives: Vec<String> = (1..=5000).map(|i| format!("-{i}")).collect();
        let source = format!("[{}]", negatives.join(", "));
        let ExprKind::List(items) = ok(&source).kind else {
            panic!("not a list")
        };
        assert_eq!(items.len(), 5000);
        let text = format!("f('{}')", "([{".repeat(30_000));
        assert_eq!(call(&text).args.len(), 1);
    }

    #[test]
    fn messages_quote_little_source() {
        let long = format!("__{}__", "x".repeat(1000));
        let e = err(&long);
        assert!(e.message.chars().count() < 100, "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Arbitrary text never panics, and ruff never panics on what the scan lets through.
        #[test]
        fn arbitrary_text_never_panics(source in "[ -~\\n\\t\\u{e9}\\u{feff}]{0,40}") {
            if let Err(e) = parse(&source, &Limits::default()) {
                prop_assert!(!e.message.contains("parser failed"), "{}", e);
            }
        }

        #[test]
        fn python_like_text_never_panics(
            source in "[()\\[\\]{}abfrt0-9_+\\-*/%@&|^~<>=!.:,;'\"#\\\\ \\n]{0,60}"
        ) {
            if let Err(e) = parse(&source, &Limits::default()) {
                prop_assert!(!e.message.contains("parser failed"), "{}", e);
                if let Some(span) = e.span {
                    prop_assert!(source.get(span.range()).is_some(), "{} in {:?}", e, source);
                }
            }
        }
    }
}

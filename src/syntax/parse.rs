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
/// Accepted: calls of a name or dotted name with positional and keyword arguments (a keyword
/// Python cannot write as `name=`, such as `from`, as a string key of a dict display after
/// `**`: `f(**{"from": "USD"})`; nothing else after `**`; a keyword's name written with `\u`
/// escapes, `a\u00f1o=1`, copied from JSON, is the name they spell), `None`,
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
    // The fast path keeps the scan's depth estimate itself and accepts nothing else the scan
    // refuses: the scan runs only before the ruff path.
    scan::check_size(source, limits)?;
    if let Some(expr) = fast::parse(source, limits) {
        return Ok(expr);
    }
    let escapes = scan::precheck(source, limits)?;
    if !escapes.is_empty() {
        return unescaped(source, &escapes, limits, true);
    }
    ruff_path(source, limits)
}

/// [`parse`]'s fast path alone: the tree of `source` when it is in the fast parser's strict
/// subset (plain calls of names with literal, record and list arguments; see the `fast`
/// module), within `limits`; `None` for any other text, which [`parse`] would hand to ruff.
/// The front-end uses it to know a text is nothing but that one expression: the subset
/// holds no comment, no line break outside a string and no other statement.
#[cfg(feature = "native")]
pub(crate) fn parse_fast(source: &str, limits: &Limits) -> Option<Expr> {
    scan::check_size(source, limits).ok()?;
    fast::parse(source, limits)
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
    let escapes = scan::precheck(source, limits)?;
    if !escapes.is_empty() {
        return unescaped(source, &escapes, limits, false);
    }
    ruff_path(source, limits)
}

/// `source` whose keyword argument names hold escapes (`a\u00f1o_vehiculo=2024`, see
/// [`scan::KeywordEscape`]) parsed with each escape read as its character, spans mapped back
/// into `source` as written.
fn unescaped(
    source: &str,
    escapes: &[scan::KeywordEscape],
    limits: &Limits,
    fast_path: bool,
) -> Result<Expr, Error> {
    let mut text = String::with_capacity(source.len());
    // Offsets in `text` and in `source` that correspond: each escape's start and end.
    let mut marks: Vec<(u32, u32)> = Vec::with_capacity(2 * escapes.len());
    let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let mut from = 0;
    for escape in escapes {
        text.push_str(source.get(from..escape.start).unwrap_or_default());
        marks.push((at(text.len()), at(escape.start)));
        text.push(escape.char);
        marks.push((at(text.len()), at(escape.end)));
        from = escape.end;
    }
    text.push_str(source.get(from..).unwrap_or_default());
    let back = |offset: u32| match marks.partition_point(|(t, _)| *t <= offset) {
        0 => offset,
        i => marks.get(i - 1).map_or(offset, |(t, s)| {
            // Inside an escape's character: its start.
            let inside = i % 2 == 1 && offset > *t;
            if inside {
                *s
            } else {
                s.saturating_add(offset - t)
            }
        }),
    };
    let span = |s: Span| Span::new(back(s.start), back(s.end));
    let parsed = match fast_path.then(|| fast::parse(&text, limits)).flatten() {
        Some(expr) => Ok(expr),
        None => ruff_path(&text, limits),
    };
    match parsed {
        Ok(mut expr) => {
            let mut stack = vec![&mut expr];
            while let Some(e) = stack.pop() {
                e.span = span(e.span);
                if let ExprKind::Call(call) = &mut e.kind {
                    call.func_span = span(call.func_span);
                    for keyword in &mut call.kwargs {
                        keyword.name_span = span(keyword.name_span);
                    }
                }
                stack.extend(e.children_mut());
            }
            Ok(expr)
        }
        Err(mut e) => {
            e.span = e.span.map(span);
            Err(e)
        }
    }
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

/// A name in expression position (a variable, a called name, a part of a dotted name):
/// [`checked_name`], and not a reserved word. ruff (as CPython) reads `ａｓ` or `Ｎｏｎｅ`,
/// written with compatibility characters, as the name `as` / `None` once NFKC-normalised;
/// no tool, variable or record can be called so, and printed back it would read as the
/// keyword, so such a name is refused.
fn checked_ident(name: &str, span: Span) -> Result<String, Error> {
    if crate::value::PYTHON_KEYWORDS.contains(&name) {
        return Err(Error::new(
            ErrorKind::Syntax,
            format!(
                "this name reads as the reserved word `{name}` once Python normalises its compatibility characters (NFKC); a name cannot be a reserved word"
            ),
        )
        .at(span));
    }
    checked_name(name, span)
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

    /// Convert one ruff expression, or say why it is outside the accepted subset.
    //
    // Over 100 lines on purpose: one match over ruff's closed `ast::Expr` enum, an arm of a few
    // lines per kind of expression, read as a table; the larger conversions (`call`, `dict`,
    // `int`, `string`, `dotted`) are methods of their own.
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
            ast::Expr::Name(name) => ExprKind::Name(checked_ident(name.id.as_str(), span)?),
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
            ast::Expr::Name(name) => checked_ident(name.id.as_str(), func_span)?,
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
                self.splatted_dict(keyword, depth, &mut kwargs)?;
                continue;
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

    /// `**{"from": 1, "to": 2}` in a call: each pair of the dict display a keyword argument
    /// named by its key, a string literal (the keyword's span); `**` before anything else is
    /// refused.
    fn splatted_dict(
        &self,
        keyword: &ast::Keyword,
        depth: usize,
        kwargs: &mut Vec<Keyword>,
    ) -> Result<(), Error> {
        let refused = |span: Span| {
            unsupported(
                "`**` is accepted only before a dict display whose keys are strings",
                span,
            )
            .with_hint(r#"write keyword arguments, or their names as string keys: `f(**{"from": "USD"}, amount=3)`"#)
        };
        let ast::Expr::Dict(dict) = &keyword.value else {
            return Err(refused(span_of(keyword.range)));
        };
        for item in &dict.items {
            let Some(ast::Expr::StringLiteral(key)) = &item.key else {
                let at = item
                    .key
                    .as_ref()
                    .map_or_else(|| self.splat_span(&item.value), |k| span_of(k.range()));
                return Err(refused(at));
            };
            kwargs.push(Keyword {
                name: self.string(key)?,
                name_span: span_of(key.range),
                value: self.expr(&item.value, depth)?,
            });
        }
        Ok(())
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
        let mut path = checked_ident(base.id.as_str(), span_of(base.range))?;
        for attr in attrs.iter().rev() {
            path.push('.');
            path.push_str(&checked_ident(attr.as_str(), span_of(attr.range))?);
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
mod tests;

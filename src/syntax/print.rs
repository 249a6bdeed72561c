//! IR → Python source: `Display` for [`Expr`], printing text that [`parse`](super::parse) reads
//! back to the same tree, spans aside.
//!
//! Every unary and binary operand that is itself a unary or binary expression is parenthesized,
//! so the printed text keeps the tree's structure whatever the precedence rules. A few values
//! have no literal form and do not round-trip exactly:
//!
//! - a negative number literal (only built by hand: the parser makes `-1` a unary minus) prints
//!   as `-1`, which reads back as `Unary(Neg, 1)`; as an operand it is parenthesized, `(-1)`;
//! - infinity prints as `1e999` (reads back as the float `inf`), negative infinity as `-1e999`
//!   (reads back as `Unary(Neg, inf)`), NaN as `(1e999 - 1e999)` (reads back as that subtraction,
//!   which evaluates to NaN);
//! - an empty set prints as `set()` (reads back as a call to `set`);
//! - names are printed as they are: a hand-built name that is not an identifier (or dotted
//!   identifiers) prints as text that does not parse.
//!
//! A keyword argument whose name Python cannot write as `name=` (`from`, `max-results`, `城市`)
//! prints in a dict display after `**` (`f(**{"from": "USD"}, amount=3)`), which parses back to
//! the same keyword.
//!
//! Printing recurses once per level of the tree, which [`parse`](super::parse) bounds.

use super::ir::{Call, Expr, ExprKind};
use crate::error::Span;
use std::fmt::{self, Write};

impl fmt::Display for Expr {
    /// Python source for this expression.
    ///
    /// ```
    /// use fexpr::syntax::parse;
    /// use fexpr::Limits;
    ///
    /// let expr = parse("f(x=-1, y=(1, ), z='a\\n' 'b')", &Limits::default())?;
    /// assert_eq!(expr.to_string(), r#"f(x=-1, y=(1,), z="a\nb")"#);
    /// # Ok::<(), fexpr::Error>(())
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, false)
    }
}

impl Expr {
    /// Set every span in the tree (node, callee and keyword spans) to `Span::default()`, so two
    /// trees can be compared for structure alone.
    ///
    /// ```
    /// use fexpr::syntax::parse;
    /// use fexpr::Limits;
    ///
    /// let mut a = parse("f(1, k=[2])", &Limits::default())?;
    /// let mut b = parse("f( 1 , k = [ 2 ] )", &Limits::default())?;
    /// assert_ne!(a, b);
    /// a.strip_spans();
    /// b.strip_spans();
    /// assert_eq!(a, b);
    /// # Ok::<(), fexpr::Error>(())
    /// ```
    pub fn strip_spans(&mut self) {
        self.span = Span::default();
        match &mut self.kind {
            ExprKind::None
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::BigInt(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bytes(_)
            | ExprKind::Name(_) => {}
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Set(items) => {
                items.iter_mut().for_each(Expr::strip_spans);
            }
            ExprKind::Dict(pairs) => {
                for (key, value) in pairs {
                    key.strip_spans();
                    value.strip_spans();
                }
            }
            ExprKind::Unary(_, operand) => operand.strip_spans(),
            ExprKind::Binary(_, left, right) => {
                left.strip_spans();
                right.strip_spans();
            }
            ExprKind::Call(call) => {
                call.func_span = Span::default();
                call.args.iter_mut().for_each(Expr::strip_spans);
                for keyword in &mut call.kwargs {
                    keyword.name_span = Span::default();
                    keyword.value.strip_spans();
                }
            }
        }
    }
}

/// Write `expr`; `operand` is true when it is the operand of a unary or binary operator.
fn write_expr(f: &mut fmt::Formatter<'_>, expr: &Expr, operand: bool) -> fmt::Result {
    match &expr.kind {
        ExprKind::None => f.write_str("None"),
        ExprKind::Bool(true) => f.write_str("True"),
        ExprKind::Bool(false) => f.write_str("False"),
        ExprKind::Int(n) if operand && *n < 0 => write!(f, "({n})"),
        ExprKind::Int(n) => write!(f, "{n}"),
        ExprKind::BigInt(n) if operand && n.sign() == num_bigint::Sign::Minus => {
            write!(f, "({n})")
        }
        ExprKind::BigInt(n) => write!(f, "{n}"),
        ExprKind::Float(x) => write_float(f, *x, operand),
        ExprKind::Str(s) => write_str(f, s),
        ExprKind::Bytes(b) => write_bytes(f, b),
        ExprKind::Name(name) => f.write_str(name),
        ExprKind::List(items) => {
            f.write_char('[')?;
            write_list(f, items)?;
            f.write_char(']')
        }
        ExprKind::Tuple(items) => {
            f.write_char('(')?;
            write_list(f, items)?;
            if items.len() == 1 {
                f.write_char(',')?;
            }
            f.write_char(')')
        }
        ExprKind::Set(items) if items.is_empty() => f.write_str("set()"),
        ExprKind::Set(items) => {
            f.write_char('{')?;
            write_list(f, items)?;
            f.write_char('}')
        }
        ExprKind::Dict(pairs) => {
            f.write_char('{')?;
            for (i, (key, value)) in pairs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_expr(f, key, false)?;
                f.write_str(": ")?;
                write_expr(f, value, false)?;
            }
            f.write_char('}')
        }
        ExprKind::Unary(op, inner) => {
            if operand {
                f.write_char('(')?;
            }
            f.write_str(op.symbol())?;
            write_expr(f, inner, true)?;
            if operand {
                f.write_char(')')?;
            }
            Ok(())
        }
        ExprKind::Binary(op, left, right) => {
            if operand {
                f.write_char('(')?;
            }
            write_expr(f, left, true)?;
            write!(f, " {} ", op.symbol())?;
            write_expr(f, right, true)?;
            if operand {
                f.write_char(')')?;
            }
            Ok(())
        }
        ExprKind::Call(call) => write_call(f, call),
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_expr(f, item, false)?;
    }
    Ok(())
}

/// A call; a keyword whose name is not a [keyword name](super::is_keyword_name) (`from`,
/// `max-results`) is written in a dict display after `**`, keywords side by side in one
/// (`f(a=1, **{"from": "x", "to": "y"})`), which parses back to the same keywords.
fn write_call(f: &mut fmt::Formatter<'_>, call: &Call) -> fmt::Result {
    f.write_str(&call.func)?;
    f.write_char('(')?;
    write_list(f, &call.args)?;
    let mut in_dict = false;
    for (i, keyword) in call.kwargs.iter().enumerate() {
        let plain = super::is_keyword_name(&keyword.name);
        if in_dict && plain {
            f.write_char('}')?;
            in_dict = false;
        }
        if i > 0 || !call.args.is_empty() {
            f.write_str(", ")?;
        }
        if plain {
            write!(f, "{}=", keyword.name)?;
        } else {
            if !in_dict {
                f.write_str("**{")?;
                in_dict = true;
            }
            write_str(f, &keyword.name)?;
            f.write_str(": ")?;
        }
        write_expr(f, &keyword.value, false)?;
    }
    if in_dict {
        f.write_char('}')?;
    }
    f.write_char(')')
}

/// Floats print with Rust's shortest round-trip form (`1.0`, `1e-7`), which Python reads back
/// as the same float; see the module documentation for infinities and NaN.
fn write_float(f: &mut fmt::Formatter<'_>, x: f64, operand: bool) -> fmt::Result {
    let negative = x.is_sign_negative() && !x.is_nan();
    if operand && negative {
        f.write_char('(')?;
    }
    if x.is_nan() {
        f.write_str("(1e999 - 1e999)")?;
    } else if x.is_infinite() {
        f.write_str(if negative { "-1e999" } else { "1e999" })?;
    } else {
        write!(f, "{x:?}")?;
    }
    if operand && negative {
        f.write_char(')')?;
    }
    Ok(())
}

/// A double-quoted Python string literal; control characters are escaped.
pub(super) fn write_str(f: &mut impl Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '\\' => f.write_str("\\\\")?,
            '"' => f.write_str("\\\"")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            '\0'..='\x1f' | '\x7f'..='\u{9f}' => write!(f, "\\x{:02x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// A double-quoted Python bytes literal; bytes outside printable ASCII are `\xNN`.
fn write_bytes(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    f.write_str("b\"")?;
    for &b in bytes {
        match b {
            b'\\' => f.write_str("\\\\")?,
            b'"' => f.write_str("\\\"")?,
            b'\n' => f.write_str("\\n")?,
            b'\r' => f.write_str("\\r")?,
            b'\t' => f.write_str("\\t")?,
            b' '..=b'~' => f.write_char(char::from(b))?,
            _ => write!(f, "\\x{b:02x}")?,
        }
    }
    f.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{parse, BinaryOp, Keyword, UnaryOp};
    use crate::Limits;
    use num_bigint::BigInt;
    use proptest::prelude::*;

    fn parsed(source: &str) -> Expr {
        match parse(source, &Limits::default()) {
            Ok(mut expr) => {
                expr.strip_spans();
                expr
            }
            Err(e) => panic!("{source:?} was rejected: {e}"),
        }
    }

    fn e(kind: ExprKind) -> Expr {
        Expr {
            kind,
            span: Span::default(),
        }
    }

    /// `source` parses, prints as `printed`, and that parses back to the same tree.
    fn round_trip(source: &str, printed: &str) {
        let tree = parsed(source);
        assert_eq!(tree.to_string(), printed, "{source:?}");
        assert_eq!(parsed(printed), tree, "{printed:?}");
    }

    #[test]
    fn round_trips() {
        let cases = [
            ("None", "None"),
            ("True", "True"),
            ("False", "False"),
            ("42", "42"),
            ("0xff", "255"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("1.0", "1.0"),
            ("1_000.5", "1000.5"),
            ("1e-3", "0.001"),
            ("1e-7", "1e-7"),
            ("1e16", "1e16"),
            ("5e-324", "5e-324"),
            ("0.1", "0.1"),
            ("1e999", "1e999"),
            ("'it\\'s'", r#""it's""#),
            (
                r#"'\\ \" \n \r \t \x00 \x7f \x85 é 😀'"#,
                r#""\\ \" \n \r \t \x00 \x7f \x85 é 😀""#,
            ),
            ("'a' 'b'", r#""ab""#),
            (r#"b'\x00\xff a\"\\'"#, r#"b"\x00\xff a\"\\""#),
            ("np.array", "np.array"),
            ("[]", "[]"),
            ("[1, [2]]", "[1, [2]]"),
            ("()", "()"),
            ("(1, )", "(1,)"),
            ("1, 2", "(1, 2)"),
            ("{1, 2}", "{1, 2}"),
            ("{}", "{}"),
            ("{'a': [1], 2: {}}", r#"{"a": [1], 2: {}}"#),
            ("-1", "-1"),
            ("--1", "-(-1)"),
            ("not not x", "not (not x)"),
            ("+x", "+x"),
            ("1 + 2 * 3", "1 + (2 * 3)"),
            ("(1 + 2) * 3", "(1 + 2) * 3"),
            ("1 - 2 - 3", "(1 - 2) - 3"),
            ("1 - (2 - 3)", "1 - (2 - 3)"),
            ("2 ** 3 ** 2", "2 ** (3 ** 2)"),
            ("-2 ** 2", "-(2 ** 2)"),
            ("(-2) ** 2", "(-2) ** 2"),
            ("a // b % c / d", "((a // b) % c) / d"),
            ("f()", "f()"),
            ("f(1, x, k=-1, j=[2])", "f(1, x, k=-1, j=[2])"),
            ("f(k=1)", "f(k=1)"),
            (
                "f(**{'from': 1}, a=2, **{'max-results': 3}, **{'to': 4}, **{'__x__': 5})",
                r#"f(**{"from": 1}, a=2, **{"max-results": 3}, to=4, **{"__x__": 5})"#,
            ),
            (
                "f(**{'from': 1, 'max-results': 2}, **{'$filter': 3})",
                r#"f(**{"from": 1, "max-results": 2, "$filter": 3})"#,
            ),
            ("g(1, **{'城市': '北京'})", r#"g(1, **{"城市": "北京"})"#),
            ("m.f(g(1), h(y=(2,)))", "m.f(g(1), h(y=(2,)))"),
            (
                "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
                "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
            ),
        ];
        for (source, printed) in cases {
            round_trip(source, printed);
        }
    }

    #[test]
    fn values_without_a_literal_form() {
        let inf = e(ExprKind::Float(f64::INFINITY));
        assert_eq!(inf.to_string(), "1e999");
        assert_eq!(e(ExprKind::Float(f64::NEG_INFINITY)).to_string(), "-1e999");
        assert_eq!(e(ExprKind::Float(f64::NAN)).to_string(), "(1e999 - 1e999)");
        assert_eq!(e(ExprKind::Float(-0.0)).to_string(), "-0.0");
        assert_eq!(e(ExprKind::Set(vec![])).to_string(), "set()");
        // Negative literals read back as unary minus; as operands they keep their meaning.
        assert_eq!(e(ExprKind::Int(-5)).to_string(), "-5");
        let pow = e(ExprKind::Binary(
            BinaryOp::Pow,
            Box::new(e(ExprKind::Int(-5))),
            Box::new(e(ExprKind::Float(-0.5))),
        ));
        assert_eq!(pow.to_string(), "(-5) ** (-0.5)");
        let big = e(ExprKind::Unary(
            UnaryOp::Neg,
            Box::new(e(ExprKind::BigInt(BigInt::from(-7)))),
        ));
        assert_eq!(big.to_string(), "-(-7)");
    }

    #[test]
    fn strip_spans_clears_every_span() {
        let mut tree = parse("f(1, k=[{2: (3,)}], j=-a.b + 1)", &Limits::default())
            .unwrap_or_else(|e| panic!("{e}"));
        tree.strip_spans();
        // `Display` does not look at spans; `Debug` does.
        assert!(!format!("{tree:?}").contains("start: 1"));
        let ExprKind::Call(call) = &tree.kind else {
            panic!("not a call")
        };
        assert_eq!(call.func_span, Span::default());
        assert!(call.kwargs.iter().all(|k| k.name_span == Span::default()));
    }

    fn name_strategy() -> impl Strategy<Value = String> {
        "[a-z_][a-z0-9_]{0,6}".prop_filter("a Python name", |n| {
            !crate::syntax::is_dunder(n) && !crate::syntax::PYTHON_KEYWORDS.contains(&n.as_str())
        })
    }

    fn dotted_strategy() -> impl Strategy<Value = String> {
        prop::collection::vec(name_strategy(), 1..4).prop_map(|parts| parts.join("."))
    }

    /// Trees the parser can produce: no negative or non-finite literals, no empty sets.
    fn expr_strategy() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            Just(ExprKind::None),
            any::<bool>().prop_map(ExprKind::Bool),
            (0..=i64::MAX).prop_map(ExprKind::Int),
            any::<u64>().prop_map(|n| ExprKind::BigInt(BigInt::from(i64::MAX) + 1 + n)),
            (0.0..f64::MAX).prop_map(ExprKind::Float),
            prop_oneof![
                Just(0.0),
                Just(1.0),
                Just(1e-300),
                Just(5e-324),
                Just(1e300)
            ]
            .prop_map(ExprKind::Float),
            any::<String>().prop_map(|s| ExprKind::Str(s.replace('\0', "\u{1}"))),
            any::<Vec<u8>>().prop_map(ExprKind::Bytes),
            dotted_strategy().prop_map(ExprKind::Name),
        ]
        .prop_map(e);
        leaf.prop_recursive(4, 48, 4, |inner| {
            let unary = prop_oneof![Just(UnaryOp::Neg), Just(UnaryOp::Pos), Just(UnaryOp::Not)];
            let binary = prop_oneof![
                Just(BinaryOp::Add),
                Just(BinaryOp::Sub),
                Just(BinaryOp::Mul),
                Just(BinaryOp::Div),
                Just(BinaryOp::FloorDiv),
                Just(BinaryOp::Mod),
                Just(BinaryOp::Pow),
            ];
            let items = prop::collection::vec(inner.clone(), 0..4);
            // Any key: a Python name, or one written as a string key after `**`.
            let key = prop_oneof![
                name_strategy(),
                any::<String>().prop_map(|s| s.replace('\0', "\u{1}")),
                Just("from".to_string()),
            ];
            let keyword = (key, inner.clone()).prop_map(|(name, value)| Keyword {
                name,
                name_span: Span::default(),
                value,
            });
            prop_oneof![
                items.clone().prop_map(ExprKind::List),
                items.clone().prop_map(ExprKind::Tuple),
                prop::collection::vec(inner.clone(), 1..4).prop_map(ExprKind::Set),
                prop::collection::vec((inner.clone(), inner.clone()), 0..3)
                    .prop_map(ExprKind::Dict),
                (unary, inner.clone()).prop_map(|(op, x)| ExprKind::Unary(op, Box::new(x))),
                (binary, inner.clone(), inner.clone()).prop_map(|(op, l, r)| ExprKind::Binary(
                    op,
                    Box::new(l),
                    Box::new(r)
                )),
                (
                    dotted_strategy(),
                    items,
                    prop::collection::vec(keyword, 0..3)
                )
                    .prop_map(|(func, args, kwargs)| ExprKind::Call(Call {
                        func,
                        func_span: Span::default(),
                        args,
                        kwargs,
                    })),
            ]
            .prop_map(e)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn printed_trees_parse_back(tree in expr_strategy()) {
            let printed = tree.to_string();
            let mut back = parse(&printed, &Limits::default())
                .map_err(|e| TestCaseError::fail(format!("{printed:?}: {e}")))?;
            back.strip_spans();
            prop_assert_eq!(back, tree, "{}", printed);
        }
    }
}

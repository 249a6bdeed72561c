//! Tests of the parser: every accepted construct, every rejected one, limits and messages.

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
fn keywords_python_cannot_name_are_the_string_keys_of_a_dict_after_double_star() {
    let source = r#"convert(**{"from": "USD", 'to': 'EUR'}, amount=3, **{'$filter': None})"#;
    let c = call(source);
    let names: Vec<&str> = c.kwargs.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["from", "to", "amount", "$filter"]);
    // A key's span is its string literal's; the values are as written.
    assert_eq!(&source[c.kwargs[0].name_span.range()], r#""from""#);
    assert_eq!(&source[c.kwargs[1].value.span.range()], "'EUR'");
    assert_eq!(&source[c.kwargs[3].name_span.range()], "'$filter'");
    // Any string: escapes decoded, implicit concatenation joined, no dunder check (a key is
    // data, matched against the tool's parameters).
    let c = call(r#"f(**{"城市": 1, 'max' '-results': 2, "__class__": 3})"#);
    let names: Vec<&str> = c.kwargs.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["城市", "max-results", "__class__"]);
    // Nothing but keywords: an empty dict adds none, a key given twice is kept twice (the
    // binder refuses it, as it refuses `f(a=1, **{"a": 2})`).
    assert!(call("f(**{})").kwargs.is_empty());
    assert_eq!(call("f(a=1, **{'a': 2, 'a': 3})").kwargs.len(), 3);
    // As after a keyword, no positional argument after it.
    assert_syntax("f(**{'a': 1}, 2)", 14, 15);
}

#[test]
fn a_keyword_name_written_with_escapes_is_the_name_they_spell() {
    // A model that copied `año_vehiculo` from JSON-escaped definitions.
    let source = r"calcular(monto=1, a\u00f1o_vehiculo=2024, \U000057ce\u5e02='x')";
    for c in [
        call(source),
        parse_with_ruff(source, &Limits::default())
            .map(|e| match e.kind {
                ExprKind::Call(c) => c,
                _ => panic!("not a call"),
            })
            .unwrap(),
    ] {
        let names: Vec<&str> = c.kwargs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["monto", "año_vehiculo", "城市"]);
        // Spans index the text as written.
        assert_eq!(&source[c.kwargs[1].name_span.range()], r"a\u00f1o_vehiculo");
        assert_eq!(&source[c.kwargs[1].value.span.range()], "2024");
        assert_eq!(&source[c.kwargs[2].name_span.range()], r"\U000057ce\u5e02");
        assert_eq!(&source[c.kwargs[2].value.span.range()], "'x'");
    }
    // Only in a keyword's name: escapes elsewhere stay errors, strings keep their own.
    assert_eq!(err(r"f(a\u00f1o)").kind, ErrorKind::Syntax);
    assert_eq!(err(r"f(a\u00f1o == 1)").kind, ErrorKind::Syntax);
    assert_eq!(err(r"f(a\u0020b=1)").kind, ErrorKind::Syntax);
    assert_eq!(err(r"a\u00f1o=1").kind, ErrorKind::Syntax);
    let c = call(r"f(a='\u00f1')");
    assert_eq!(c.kwargs[0].value.kind, ExprKind::Str("ñ".into()));
    // An error after the escape is located in the text as written.
    let e = err(r"f(a\u00f1o=1, b=)");
    assert_eq!(e.span.map(|s| s.start), Some(16));
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
    // A name that normalises to a reserved word would print back as the keyword: refused
    // (fuzz `parse` found `ａｓ(p1=...)`). A keyword argument so named is a key like `from`.
    for (text, span) in [
        ("ａｓ(p=1)", sp(0, 6)),
        ("f(x=Ｎｏｎｅ)", sp(4, 16)),
        ("np.ｉｆ(1)", sp(3, 9)),
        ("ｆｏｒ.x()", sp(0, 9)),
        ("[ｔｒｙ]", sp(1, 10)),
    ] {
        let e = err(text);
        assert_eq!((e.kind, e.span), (ErrorKind::Syntax, Some(span)), "{text}");
        assert!(e.message.contains("reserved word"), "{}", e.message);
    }
    assert_eq!(call("f(ｆｒｏｍ=1)").kwargs[0].name, "from");
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
        (
            "f(**kw)",
            2,
            6,
            "`**` is accepted only before a dict display",
        ),
        (
            "f(a=1, ** kw)",
            7,
            12,
            "`**` is accepted only before a dict display",
        ),
        (
            "f(**dict(a=1))",
            2,
            13,
            "`**` is accepted only before a dict display",
        ),
        (
            "f(**{k: 1})",
            5,
            6,
            "`**` is accepted only before a dict display",
        ),
        (
            "f(**{1: 1})",
            5,
            6,
            "`**` is accepted only before a dict display",
        ),
        (
            "f(**{b'k': 1})",
            5,
            9,
            "`**` is accepted only before a dict display",
        ),
        (
            "f(**{**d})",
            5,
            8,
            "`**` is accepted only before a dict display",
        ),
        ("f(**{f'{x}': 1})", 5, 11, "f-strings"),
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

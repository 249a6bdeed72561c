//! Tests of the JSON reader and of fexpr's JSON forms: spans, every limit, errors.

use super::*;

fn limits() -> Limits {
    Limits::default()
}

fn err(text: &str) -> Error {
    read(text, &limits()).expect_err(text)
}

/// The error's span, as the text it covers.
fn at<'t>(text: &'t str, e: &Error) -> &'t str {
    e.span
        .and_then(|s| text.get(s.range()))
        .unwrap_or("<no span>")
}

#[test]
fn values_become_python_literals_with_spans_into_the_text() {
    let text = " \u{feff}";
    assert!(read(text, &limits()).is_err());
    let text = "\u{feff}{\"s\": \"a\\\"b\\u00e9\\ud83d\\ude00\\n\", \"n\": [-0, 12345678901234567890, 1.5e3, true, null]}";
    let tree = read(text, &limits()).expect("reads");
    assert_eq!(
        tree.to_string(),
        r#"{"s": "a\"bé😀\n", "n": [0, 12345678901234567890, 1500.0, True, None]}"#
    );
    let ExprKind::Dict(pairs) = &tree.kind else {
        panic!("a dict")
    };
    assert_eq!(&text[pairs[0].0.span.range()], "\"s\"");
    assert_eq!(
        &text[pairs[1].1.span.range()],
        "[-0, 12345678901234567890, 1.5e3, true, null]"
    );
}

#[test]
fn malformed_json_says_what_and_where() {
    for (text, message, covered) in [
        ("{\"a\": 1", "JSON: the text ends where `,` or `}` should be", ""),
        ("[1, 2,]", "JSON: expected a JSON value, found `]`", "]"),
        ("{'a': 1}", "JSON: expected a key in double quotes after `{`, found `'`", "'"),
        ("{\"a\" 1}", "JSON: expected `:` after a key, found `1`", "1"),
        ("[1 2]", "JSON: expected `,` or `]` after a value in a list, found `2`", "2"),
        ("[01]", "JSON: malformed number `01`: expected no leading zero", "01"),
        ("[1.]", "JSON: malformed number `1.`: expected a digit after `.`", "1."),
        ("[-]", "JSON: malformed number `-]`: expected a digit after `-`", "-]"),
        ("-\u{ec0}", "JSON: malformed number `-\u{ec0}`: expected a digit after `-`", "-\u{ec0}"),
        ("[True]", "JSON: expected a JSON value, found `T`", "T"),
        ("[nul]", "JSON: expected a JSON value, found `n`", "n"),
        ("{} x", "JSON: expected the end of the JSON text, found `x`", "x"),
        ("[\"a\\x\"]", "JSON: invalid escape `\\x` in a string", "\\x"),
        ("[\"\\ud800\"]", "JSON: lone surrogate `\\ud800` in a string", "\\ud800"),
        ("[\"a\nb\"]", "JSON: control character U+000A in a string; write it as an escape (`\\n`, `\\t`, `\\u00XX`)", "\n"),
        ("[\"abc", "JSON: unterminated string", "\"abc"),
        ("\u{3000}{}", "JSON: expected a JSON value, found U+3000", "\u{3000}"),
    ] {
        let e = err(text);
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::Syntax, message), "{text}");
        assert_eq!(at(text, &e), covered, "{text}");
    }
    assert_eq!(
        err("[True]").hint.as_deref(),
        Some("`True` is Python: JSON writes true, false and null")
    );
    assert_eq!(
        err("{\"a\": [1").hint.as_deref(),
        Some("`[` at 6 is not closed")
    );
}

#[test]
fn every_limit_is_checked_while_reading() {
    let tight = Limits {
        max_depth: 3,
        max_str_bytes: 4,
        max_collection_len: 6,
        max_int_digits: 25,
        max_source_bytes: 64,
        ..limits()
    };
    let limit = |text: &str| {
        let e = read(text, &tight).expect_err(text);
        assert_eq!(e.kind, ErrorKind::Limit, "{text}: {e}");
        e.message.split(' ').next().unwrap_or_default().to_string()
    };
    assert!(read("[[[1]]]", &tight).is_ok());
    assert_eq!(limit("[[[[1]]]]"), "max_depth");
    assert!(read("[\"abcd\", \"\\u00e9\\u00e9\"]", &tight).is_ok());
    assert_eq!(limit("[\"abcde\"]"), "max_str_bytes");
    assert_eq!(limit("[\"\\u00e9\\u00e9a\"]"), "max_str_bytes");
    assert_eq!(limit("{\"abcde\": 1}"), "max_str_bytes");
    // Counted as the evaluator counts: [1, [2, 3]] is 4 elements; {"a": [1]} is 3.
    assert!(read("[1, 2, [3, 4], 5]", &tight).is_ok());
    assert_eq!(limit("[1, 2, [3, 4], 5, 6]"), "max_collection_len");
    assert!(read("{\"a\": [1, 2], \"b\": 3}", &tight).is_ok());
    assert_eq!(limit("{\"a\": [1, 2], \"b\": [3]}"), "max_collection_len");
    assert!(read("[1234567890123456789012345]", &tight).is_ok());
    assert_eq!(limit("[12345678901234567890123456]"), "max_int_digits");
    assert_eq!(limit(&" ".repeat(65)), "max_source_bytes");
    let small = Limits {
        max_eval_bytes: 100,
        ..limits()
    };
    // Two list elements (24 bytes each) and two strings of 20 bytes: 88.
    let twenty = "a".repeat(20);
    assert!(read(&format!("[\"{twenty}\", \"{twenty}\"]"), &small).is_ok());
    let e = read(&format!("[\"{twenty}\", \"{twenty}\", 1]"), &small).expect_err("over");
    assert!(e.message.starts_with("max_eval_bytes"), "{e}");
}

#[test]
fn a_deep_or_huge_document_ends_in_an_error_without_recursion() {
    let deep = "[".repeat(1_000_000);
    let e = err(&deep);
    assert_eq!(
        (e.kind, e.span),
        (ErrorKind::Limit, Some(Span::new(100, 101)))
    );
    let wide = format!("[{}0]", "0,".repeat(200_000));
    assert_eq!(err(&wide).kind, ErrorKind::Limit);
}

#[test]
fn calls_with_duplicate_keys_or_numbers_out_of_range_are_refused() {
    for (text, message, covered) in [
        (
            r#"{"name": "add", "name": "multiply"}"#,
            "JSON: duplicate key `name` in an object (first at 1..7)",
            "\"name\"",
        ),
        (
            r#"{"kwargs": {"b": 1, "a": 1, "a": 1000}}"#,
            "JSON: duplicate key `a` in an object (first at 20..23)",
            "\"a\"",
        ),
        (
            r#"{"args": [{"x": 1, "x": 2}]}"#,
            "JSON: duplicate key `x` in an object (first at 11..14)",
            "\"x\"",
        ),
    ] {
        let tree = read(text, &limits()).expect(text);
        let e = check_call_tree(&tree, text, 0).expect_err(text);
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::Syntax, message),
            "{text}"
        );
        assert_eq!(at(text, &e), covered, "{text}");
        assert_eq!(
            e.span.map(|s| s.start as usize),
            text.rfind(covered),
            "{text}"
        );
    }
    for number in ["1e400", "-1e400", "123e999999999999999999"] {
        let text = format!("{{\"a\": [1, {number}]}}");
        let e =
            check_call_tree(&read(&text, &limits()).expect("reads"), &text, 0).expect_err(&text);
        assert_eq!(e.kind, ErrorKind::Value);
        assert_eq!(
            e.message,
            format!("JSON: number {number} is out of range for a float")
        );
        assert_eq!(at(&text, &e), number);
    }
    // Tiny numbers round to zero as in Python; keys repeated in different objects are fine.
    let text = r#"{"a": 1e-400, "b": {"a": 1}, "c": [{"a": 1}, {"a": 2}]}"#;
    assert!(check_call_tree(&read(text, &limits()).expect("reads"), text, 0).is_ok());
}

#[test]
fn nested_json_maps_its_spans_through_the_escapes() {
    let text = r#"{"arguments": "{\"city\": \"Z\u00fcrich\", \"n\": [1, 2}"}"#;
    let tree = read(text, &limits()).expect("reads");
    let ExprKind::Dict(pairs) = &tree.kind else {
        panic!("a dict")
    };
    let e = read_nested(&pairs[0].1, text, &limits()).expect_err("malformed");
    assert_eq!(
        e.message,
        "JSON: expected `,` or `]` after a value in a list, found `}`"
    );
    assert_eq!(at(text, &e), "}");
    assert_eq!(e.span.map(|s| s.start as usize), text.rfind("}\""));
    let text = r#"{"arguments": "{\"city\": \"Z\u00fcrich\", \"n\": 7}"}"#;
    let tree = read(text, &limits()).expect("reads");
    let ExprKind::Dict(pairs) = &tree.kind else {
        panic!("a dict")
    };
    let nested = read_nested(&pairs[0].1, text, &limits()).expect("reads");
    let ExprKind::Dict(args) = &nested.kind else {
        panic!("a dict")
    };
    assert_eq!(args[0].1.to_string(), "\"Z\u{fc}rich\"");
    assert_eq!(
        at(text, &Error::new(ErrorKind::Value, "").at(args[0].1.span)),
        r#"\"Z\u00fcrich\""#
    );
    assert_eq!(
        at(text, &Error::new(ErrorKind::Value, "").at(args[1].1.span)),
        "7"
    );
}

#[test]
fn fexprs_forms_become_units() {
    let text = r#"[{"name": "add", "args": [1], "kwargs": {"b": {"k": [null]}}, "thought": "t"},
        {"action": "multiply(a=2, b=x)", "thought": null},
        {"name": "add", "extra": 1},
        {"action": "[add(a=1, b=2), add(a=3, b=4)]"},
        {"action": "add(a=1, b=\"\u00e9\")) "},
        {"kwargs": {}},
        [1]]"#;
    let items = units(text, &limits()).expect("forms");
    let shown: Vec<String> = items
        .iter()
        .map(|(span, unit)| match unit {
            Ok(e) => format!("{} @ {}", e, &text[span.range()].len()),
            Err(e) => format!("{:?}: {} [{}]", e.kind, e.message, at(text, e)),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "add(1, b={\"k\": [None]}) @ 76".to_string(),
            "multiply(a=2, b=x) @ 49".into(),
            "Syntax: JSON: unknown field `extra` in a Function object [\"extra\"]".into(),
            "Unsupported: expected one call in a FunctionExpression's `action`, found 2 [[add(a=1, b=2), add(a=3, b=4)]]".into(),
            "Syntax: Unexpected token at the end of an expression [)]".into(),
            "Syntax: JSON: a Function needs a string `name` [{\"kwargs\": {}}]".into(),
            "Syntax: JSON: each item must be an object: a Function ({\"name\", \"args\", \"kwargs\"}) or a FunctionExpression ({\"action\"}) [[1]]".into(),
        ]
    );
    let ExprKind::Call(call) = &items[1].1.as_ref().expect("a call").kind else {
        panic!("a call")
    };
    assert_eq!(&text[call.kwargs[1].value.span.range()], "x");
    for bad in ["[]", "1", "\"add(a=1)\"", "null"] {
        assert_eq!(
            units(bad, &limits()).expect_err(bad).kind,
            ErrorKind::Syntax,
            "{bad}"
        );
    }
}

#[test]
fn to_text_bounds_what_it_writes() {
    let mut deep = serde_json::json!(1);
    for _ in 0..101 {
        deep = serde_json::json!([deep]);
    }
    let e = to_text(&deep, &limits()).expect_err("too deep");
    assert!(e.message.starts_with("max_depth"), "{e}");
    assert_eq!(to_text_read(&deep, &limits()).map(|w| w.0), Err(e));
    let wide = serde_json::Value::Array(vec![serde_json::json!(0); 600_000]);
    let e = to_text(&wide, &limits()).expect_err("too long");
    assert!(e.message.starts_with("max_source_bytes"), "{e}");
    assert_eq!(to_text_read(&wide, &limits()).map(|w| w.0), Err(e));
    // Long but with few nodes: written, then found too long.
    let long = serde_json::json!(["x".repeat(1 << 20)]);
    let e = to_text(&long, &limits()).expect_err("too long");
    assert_eq!(to_text_read(&long, &limits()).map(|w| w.0), Err(e));
}

/// A JSON document of up to a few levels: every kind of scalar (escapes, non-ASCII, floats,
/// integers past `i64`), arrays and objects.
fn json_doc() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value as J;
    let scalar = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        any::<u64>().prop_map(J::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(J::from),
        "[a-z\"\\\\\n\t\u{1}é😀 ]{0,12}".prop_map(J::String),
    ];
    scalar.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            proptest::collection::vec(("[a-z\"é]{0,4}", inner), 0..6)
                .prop_map(|pairs| J::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    /// A parsed document written out with its tree ([`to_text_read`]) is what [`to_text`]
    /// writes, and its tree what [`read`] reads from that text, spans and all; under tight
    /// limits the tree is left out whenever the reader refuses the text (and the caller reads
    /// it for that error).
    #[test]
    fn a_document_written_with_its_tree_is_read_as_its_text_is(
        doc in json_doc(),
        str_bytes in 0usize..16,
        collection in 0usize..40,
        eval_bytes in 0usize..4000,
        int_digits in 1usize..22,
        depth in 1usize..6,
        source_bytes in 1usize..300,
        tight in proptest::bool::ANY,
    ) {
        // Under tight limits the document may also be too deep or too long to write: the
        // one-pass writer gives the error the check before writing gives.
        let limits = if tight {
            limits()
                .max_str_bytes(str_bytes)
                .max_collection_len(collection)
                .max_eval_bytes(eval_bytes)
                .max_int_digits(int_digits)
                .max_depth(depth)
                .max_source_bytes(source_bytes)
        } else {
            limits()
        };
        let written = to_text_read(&doc, &limits);
        let text = to_text(&doc, &limits);
        match (written, text) {
            (Ok((written, tree)), Ok(text)) => {
                proptest::prop_assert_eq!(&written, &text);
                let read = read(&text, &limits);
                match (tree, read) {
                    (Some(tree), Ok(read)) => proptest::prop_assert_eq!(tree, read),
                    (Some(_), Err(e)) => proptest::prop_assert!(false, "the reader refuses: {e}"),
                    (None, read) => proptest::prop_assert!(
                        tight || read.is_err() || text.contains(|c: char| c.is_ascii_digit()),
                        "no tree for {text}"
                    ),
                }
            }
            (Err(a), Err(b)) => proptest::prop_assert_eq!(a, b),
            (a, b) => proptest::prop_assert!(false, "{a:?} but {b:?}"),
        }
    }
}

proptest::proptest! {
    /// The in-place marks of a string with two-byte escapes are the ones decoding it leaves,
    /// and there are none for a text that does not decode to the value.
    #[test]
    fn short_escape_marks_are_the_decoded_marks(
        value in "[a-z\"\\\\/\n\t\u{8}\u{c}\r\u{1}é😀 ]{0,16}",
        other in "[a-z\"é]{0,4}",
        slash in proptest::bool::ANY,
    ) {
        let written = serde_json::to_string(&value).expect("a string");
        let mut raw = written[1..written.len() - 1].to_string();
        if slash {
            raw = raw.replace('/', "\\/");
        }
        let (decoded, marks) = super::reader::decode_marked(&raw, 0).expect("decodes");
        proptest::prop_assert_eq!(&decoded, &value);
        match super::short_escape_marks(&raw, &value) {
            Some(short) => proptest::prop_assert_eq!(short, marks),
            None => proptest::prop_assert!(raw.contains("\\u"), "{raw:?}"),
        }
        let different = format!("{value}{other}x");
        proptest::prop_assert_eq!(super::short_escape_marks(&raw, &different), None);
    }
}

//! Properties over random inputs (proptest):
//! - random IR → printed source → parsed → the same IR (spans stripped);
//! - random values → JSON → the same value (for the JSON-shaped values, where it is lossless),
//!   and any value → the sandbox wire → the same value;
//! - native result ≡ sandboxed result for random well-formed expressions over the demo toolset
//!   (`common::execute` asserts it);
//! - the parser's fast path and the ruff path give the same result (tree with spans, or
//!   error) on random text built from fragments, tokens at the fast path's edges and calls;
//! - no random text or byte string makes parsing or executing panic.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::syntax::{parse, parse_with_ruff, BinaryOp, Call, Expr, ExprKind, Keyword, UnaryOp};
use fexpr::Input;
use fexpr::{Limits, Span, Value};
use num_bigint::BigInt;
use proptest::prelude::*;

// ---------------------------------------------------------------- IR round trip

fn node(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
    }
}

/// Names and dotted names that are identifiers (never keywords or dunders).
const NAMES: &[&str] = &[
    "x",
    "y",
    "np.array",
    "Point",
    "a_b",
    "f1",
    "match",
    "np.ma.core",
];

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(ExprKind::None),
        any::<bool>().prop_map(ExprKind::Bool),
        (0..=i64::MAX).prop_map(ExprKind::Int),
        // Ints beyond i64 (digits well under max_int_digits).
        "[1-9][0-9]{19,60}".prop_filter_map("beyond i64", |digits| {
            let big: BigInt = digits.parse().ok()?;
            (i64::try_from(&big).is_err()).then_some(ExprKind::BigInt(big))
        }),
        // Non-negative finite floats (the parser makes `-1.5` a unary minus).
        (0.0..f64::MAX).prop_map(ExprKind::Float),
        prop_oneof![Just(0.0), Just(1e-310), Just(5e-324), Just(1e300)].prop_map(ExprKind::Float),
        any::<String>().prop_map(ExprKind::Str),
        proptest::collection::vec(any::<u8>(), 0..20).prop_map(ExprKind::Bytes),
        proptest::sample::select(NAMES).prop_map(|n| ExprKind::Name(n.to_string())),
    ]
    .prop_map(node)
}

fn unary_op() -> impl Strategy<Value = UnaryOp> {
    prop_oneof![Just(UnaryOp::Neg), Just(UnaryOp::Pos), Just(UnaryOp::Not)]
}

fn binary_op() -> impl Strategy<Value = BinaryOp> {
    prop_oneof![
        Just(BinaryOp::Add),
        Just(BinaryOp::Sub),
        Just(BinaryOp::Mul),
        Just(BinaryOp::Div),
        Just(BinaryOp::FloorDiv),
        Just(BinaryOp::Mod),
        Just(BinaryOp::Pow),
    ]
}

fn ir() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(4, 48, 5, |inner| {
        let items = proptest::collection::vec(inner.clone(), 0..5);
        prop_oneof![
            items.clone().prop_map(|v| node(ExprKind::List(v))),
            items.clone().prop_map(|v| node(ExprKind::Tuple(v))),
            // A set literal needs an element (`set()` is a call).
            proptest::collection::vec(inner.clone(), 1..5).prop_map(|v| node(ExprKind::Set(v))),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..4)
                .prop_map(|v| node(ExprKind::Dict(v))),
            (unary_op(), inner.clone()).prop_map(|(op, x)| node(ExprKind::Unary(op, Box::new(x)))),
            (binary_op(), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| node(ExprKind::Binary(op, Box::new(a), Box::new(b)))),
            (
                proptest::sample::select(NAMES),
                items,
                // Any key: printed as `k=` or, for one Python cannot name, as `**{"k": …}`.
                proptest::collection::btree_map(
                    "[a-z][a-z0-9_]{0,5}|from|class|max-results|[$][a-z]{1,4}|城市|__x__| ",
                    inner,
                    0..3
                )
            )
                .prop_map(|(func, args, kwargs)| node(ExprKind::Call(Call {
                    func: func.to_string(),
                    func_span: Span::default(),
                    args,
                    kwargs: kwargs
                        .into_iter()
                        .map(|(name, value)| Keyword {
                            name,
                            name_span: Span::default(),
                            value,
                        })
                        .collect(),
                }))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn printed_ir_parses_back_to_the_same_ir(expr in ir()) {
        let printed = expr.to_string();
        let mut parsed = parse(&printed, &Limits::default())
            .map_err(|e| TestCaseError::fail(format!("{printed:?} does not parse: {e}")))?;
        parsed.strip_spans();
        prop_assert_eq!(parsed, expr, "printed as {:?}", printed);
    }
}

// ---------------------------------------------------------------- values

/// Values with a lossless JSON form: None, bools, ints, finite floats (JSON keeps `1.0` a
/// float), strings, lists, and dicts with str keys in sorted order.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::None),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::Float),
        any::<String>().prop_map(Value::Str),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::List),
            // Keys in sorted order: serde_json's map (without `preserve_order`) sorts them.
            proptest::collection::btree_map(any::<String>(), inner, 0..6).prop_map(|pairs| {
                Value::Dict(pairs.into_iter().map(|(k, v)| (Value::Str(k), v)).collect())
            }),
        ]
    })
}

/// Any value: the JSON-shaped ones plus big ints, bytes, tuples, sets, records and arrays.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        json_value(),
        "-?[1-9][0-9]{19,40}".prop_map(|d| Value::from_bigint(d.parse().expect("digits"))),
        any::<f64>().prop_map(Value::Float),
        proptest::collection::vec(any::<u8>(), 0..10).prop_map(Value::Bytes),
        proptest::collection::vec(any::<i64>(), 0..6).prop_map(|v| {
            Value::from(fexpr::NdArray::Int(
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[v.len()]), v)
                    .expect("a 1-D array"),
            ))
        }),
    ];
    leaf.prop_recursive(3, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Tuple),
            proptest::collection::vec(any::<i64>(), 0..4)
                .prop_map(|v| Value::Set(v.into_iter().map(Value::Int).collect())),
            (inner.clone(), inner).prop_map(|(x, y)| Value::Record(fexpr::Record {
                name: "Point".into(),
                fields: vec![("x".into(), x), ("y".into(), y)],
            })),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn json_shaped_values_survive_json(value in json_value()) {
        let json = value.to_json();
        let text = json.to_string();
        let back: serde_json::Value = serde_json::from_str(&text).expect("our JSON parses");
        prop_assert_eq!(Value::from_json(&back), value);
    }

    #[test]
    fn every_value_survives_the_sandbox_wire(value in any_value()) {
        let bytes = fexpr::sandbox::wire::encode(&value).expect("encodes");
        let back: Value = fexpr::sandbox::wire::decode(&bytes).expect("decodes");
        prop_assert_eq!(back, value);
    }
}

// ---------------------------------------------------------------- native ≡ sandbox

/// An int-valued expression over literals, the context's `x` and `y`, and the operators.
fn int_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (-1000i64..1000).prop_map(|i| i.to_string()),
        Just("x".to_string()),
        Just("y".to_string()),
        Just("9223372036854775807".to_string()),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                proptest::sample::select(&["+", "-", "*", "//", "%"][..]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (inner.clone(), 0u32..5).prop_map(|(a, e)| format!("({a} ** {e})")),
            inner.clone().prop_map(|a| format!("-{a}")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("add(a={a}, b={b})")),
        ]
    })
}

fn str_expr() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zé😀 ]{0,8}".prop_map(|s| format!("{s:?}")),
        ("[a-z]{0,4}", 0usize..4).prop_map(|(s, n)| format!("'{s}' * {n}")),
        ("[a-z]{0,4}", "[a-z]{0,4}").prop_map(|(a, b)| format!("'{a}' + \"{b}\"")),
    ]
}

/// A call of the demo toolset with random (sometimes wrong) arguments.
fn demo_call() -> impl Strategy<Value = String> {
    prop_oneof![
        (int_expr(), int_expr()).prop_map(|(a, b)| format!("add(a={a}, b={b})")),
        (int_expr(), int_expr()).prop_map(|(a, b)| format!("multiply(a={a}, b={b})")),
        (int_expr(), int_expr()).prop_map(|(a, b)| format!("divide(a={a}, b={b})")),
        str_expr().prop_map(|q| format!("search(query={q})")),
        proptest::collection::vec(int_expr(), 0..4)
            .prop_map(|v| format!("numpy_sum(arr=np.array([{}]))", v.join(", "))),
        (int_expr(), int_expr(), int_expr(), int_expr()).prop_map(|(a, b, c, d)| format!(
            "add_points(p1=Point(x={a}, y={b}), p2={{'x': {c}, 'y': {d}}})"
        )),
        // Wrong on purpose: unknown tools, missing and extra arguments, wrong types.
        Just("add(a=1)".to_string()),
        Just("add(a=1, b=2, c=3)".to_string()),
        Just("nope(a=1)".to_string()),
        str_expr().prop_map(|q| format!("add(a={q}, b=1)")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn native_and_sandboxed_results_agree(calls in proptest::collection::vec(demo_call(), 1..4)) {
        let manager = fexpr::demo::manager();
        let text = if calls.len() == 1 {
            calls[0].clone()
        } else {
            format!("[{}]", calls.join(", "))
        };
        // `common::execute` runs both ways and asserts equal outputs.
        let outputs = common::run_expr(&manager, &text);
        prop_assert_eq!(outputs.len(), calls.len(), "{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A call on its own (the evaluator's single-call path when no argument calls a tool) and
    /// the same call first in a list of two (the general path) give the same result.
    #[test]
    fn a_call_alone_and_in_a_list_agree(call in demo_call(), other in demo_call()) {
        let manager = fexpr::demo::manager();
        let rt = common::runtime();
        let alone = rt.block_on(async { manager.run(Input::expr(&call)).await.outputs });
        let listed = rt.block_on(async { manager.run(Input::expr(format!("[{call}, {other}]"))).await.outputs });
        prop_assert_eq!(alone.len(), 1);
        prop_assert_eq!(listed.len(), 2);
        let (a, b) = (&alone[0], &listed[0]);
        prop_assert_eq!(a.output.as_ref().ok(), b.output.as_ref().ok(), "{}", call);
        prop_assert_eq!(&a.parsed_input, &b.parsed_input, "{}", call);
        let error = |o: &fexpr::FunctionOutput| o.output.as_ref().err().map(|e| (e.kind, e.message.clone()));
        prop_assert_eq!(error(a), error(b), "{}", call);
    }
}

// ---------------------------------------------------------------- no panics

/// Fragments that reach deep into the parser and evaluator when combined, and tokens at the
/// edges of the parser's fast path: what it takes, and the near misses it must leave to ruff
/// (keywords, dunders, numeric forms, string prefixes, escapes, comments, line breaks).
const FRAGMENTS: &[&str] = &[
    "add(",
    "a=",
    "b=",
    ")",
    "(",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "1",
    "0",
    "-",
    "+",
    "*",
    "**",
    "/",
    "//",
    "%",
    "x",
    "y",
    "np.array(",
    "np.zeros(",
    "np.arange(",
    "Point(",
    "x=",
    "'a'",
    "b'b'",
    "\"s\"",
    "10**",
    "9",
    "not ",
    "1.5",
    "1e308",
    "True",
    "None",
    " ",
    "\n",
    ";",
    "__class__",
    ".",
    "search(query=",
    "numpy_sum(arr=",
    "lambda",
    "if",
    "else",
    "\\",
    "#",
    "'''",
    "\u{feff}",
    "é",
    "0x",
    "1_0",
    "[add(a=1, b=2), ",
    "f",
    "add",
    "np",
    "array",
    "Point",
    "_",
    "__",
    "__x__",
    "x_1",
    "False",
    "not",
    "match",
    "type",
    "=",
    "==",
    "00",
    "12",
    "007",
    "0.0",
    "1.",
    ".5",
    "1e3",
    "1j",
    "0x1f",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999",
    "\"b c\"",
    "''",
    "\"\"",
    "'''t'''",
    "'é'",
    "'\\n'",
    "b'x'",
    "f'x'",
    "r'x'",
    "'",
    "\"",
    "  ",
    "\t",
    "\r\n",
    "\\\n",
    "#c",
    "(a)=",
    "((x))=",
    "ａ",
    "ﬁ=",
    "\u{3000}",
    "\u{a0}",
    "**{}",
    "**{'from': ",
    "**{\"max-results\": 1}",
    "**{'a' 'b': ",
    "**{1: 2}",
    "**{**",
    "*x",
    " for x in y",
];

fn fragments() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_text_panics(text in prop_oneof![fragments(), any::<String>()]) {
        let _ = parse(&text, &Limits::default());
        let manager = fexpr::demo::manager();
        let _ = common::runtime().block_on(async { manager.run(Input::expr(&text)).await.outputs });
    }

    #[test]
    fn no_bytes_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text, &Limits::default());
        let _ = fexpr::sandbox::wire::decode::<fexpr::sandbox::wire::GuestResponse>(&bytes);
        let _ = fexpr::sandbox::wire::decode::<Vec<fexpr::eval::ToolRequest>>(&bytes);
        let _ = fexpr::sandbox::wire::decode::<Value>(&bytes);
        let manager = fexpr::demo::manager();
        let _ = common::runtime().block_on(async { manager.run(Input::expr(text.as_ref())).await.outputs });
    }
}

// ---------------------------------------------------------------- fast path ≡ ruff path

/// Mostly well-formed calls with edge tokens in argument position.
fn edge_call() -> impl Strategy<Value = String> {
    let arg = proptest::collection::vec(proptest::sample::select(FRAGMENTS), 1..4)
        .prop_map(|v| v.concat());
    let kwarg = (
        // Plain names, reserved words, soft keywords, and what CPython refuses as a keyword's
        // name: parenthesised names, dotted names, literals; non-ASCII names NFKC-normalise.
        proptest::sample::select(
            &[
                "a", "b", "x", "if", "True", "__", "match", "type", "(a)", "((b))", "a.b", "1",
                "'a'", "ａ", "ﬁ", "é", "a b", "*a", "**a",
            ][..],
        ),
        arg.clone(),
    )
        .prop_map(|(k, v)| format!("{k}={v}"));
    (
        proptest::sample::select(&["f", "np.array", "[f", "f ", " f"][..]),
        proptest::collection::vec(prop_oneof![arg, kwarg], 0..4),
        proptest::sample::select(&[")", ",)", ")]", ") \n", ")x"][..]),
    )
        .prop_map(|(head, args, tail)| format!("{head}({}{tail}", args.join(", ")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn fast_path_and_ruff_agree(text in prop_oneof![fragments(), edge_call(), demo_call()]) {
        let limits = Limits::default();
        prop_assert_eq!(parse(&text, &limits), parse_with_ruff(&text, &limits), "{:?}", text);
    }

    /// The fast path runs before the pre-parse scan and keeps its depth estimate itself: at
    /// small depth limits it must refuse (leave to the scan and ruff) whatever the scan refuses.
    #[test]
    fn fast_path_and_ruff_agree_at_small_depths(
        text in prop_oneof![fragments(), edge_call(), demo_call()],
        depth in 1usize..12,
    ) {
        let limits = Limits::default().max_depth(depth);
        prop_assert_eq!(parse(&text, &limits), parse_with_ruff(&text, &limits), "{:?} at {}", text, depth);
    }
}

// --- The JSON door (`fexpr::front::json_input`, `Input::json`) ---

/// A `Function` in JSON form for the demo tools (or an unknown one), and the same call as an
/// expression (`Function::to_expr`: values as Python literals).
fn json_function() -> impl Strategy<Value = (String, String)> {
    let name = prop_oneof![
        Just("search"),
        Just("add"),
        Just("numpy_sum"),
        Just("add_points"),
        Just("nope")
    ];
    let key = prop_oneof![Just("a"), Just("b"), Just("query"), Just("arr"), Just("p1")];
    (
        name,
        proptest::collection::vec(json_value(), 0..2),
        proptest::collection::btree_map(key, json_value(), 0..3),
    )
        .prop_map(|(name, args, kwargs)| {
            let function = fexpr::Function {
                name: name.to_string(),
                args,
                kwargs: kwargs
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            };
            (function.to_json().to_string(), function.to_expr())
        })
}

/// Depth, longest string, and whether every collection and the total size are within `limits`,
/// counted as the evaluator counts a value.
fn json_within(json: &serde_json::Value, limits: &Limits) -> bool {
    use serde_json::Value as J;
    // (depth, element count, bytes charged); `ok` turns false on any breach.
    fn walk(json: &J, limits: &Limits, ok: &mut bool) -> (usize, usize, usize) {
        match json {
            J::String(s) => {
                *ok &= s.len() <= limits.max_str_bytes;
                (0, 1, s.len())
            }
            J::Array(items) => {
                let (mut depth, mut count, mut bytes) = (0, 0, 24 * items.len());
                for item in items {
                    let (d, c, b) = walk(item, limits, ok);
                    depth = depth.max(d);
                    count += c;
                    bytes += b;
                }
                *ok &= count <= limits.max_collection_len;
                (depth + 1, count + 1, bytes)
            }
            J::Object(map) => {
                let (mut depth, mut count, mut bytes) = (0, 0, 48 * map.len());
                for (key, value) in map {
                    *ok &= key.len() <= limits.max_str_bytes;
                    let (d, c, b) = walk(value, limits, ok);
                    depth = depth.max(d);
                    count += c + 1;
                    bytes += b + key.len();
                }
                *ok &= count <= limits.max_collection_len;
                (depth + 1, count + 1, bytes)
            }
            _ => (0, 1, 0),
        }
    }
    let mut ok = true;
    let (depth, _, bytes) = walk(json, limits, &mut ok);
    ok && depth <= limits.max_depth && bytes <= limits.max_eval_bytes
}

/// Text made of JSON pieces, valid or not.
fn json_fragments() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{"),
        Just("}"),
        Just("["),
        Just("]"),
        Just(":"),
        Just(","),
        Just(" "),
        Just("\"name\""),
        Just("\"add\""),
        Just("\"kwargs\""),
        Just("\"args\""),
        Just("\"a\""),
        Just("\"b\""),
        Just("\"action\""),
        Just("\"add(a=1, b=2)\""),
        Just("1"),
        Just("-2.5e3"),
        Just("1e400"),
        Just("12345678901234567890"),
        Just("true"),
        Just("null"),
        Just("\"\\u00e9\""),
        Just("\"\\ud83d\\ude00\""),
        Just("\"\\ud800\""),
        Just("\"\\x\""),
        Just("'"),
        Just("\u{3000}"),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A `Function` in JSON runs exactly like the call written as an expression, natively and
    /// (through `common::run_json`) sandboxed alike: same value, same parsed call,
    /// same error.
    #[test]
    fn json_forms_run_like_their_expression((json, expr) in json_function()) {
        let manager = fexpr::demo::manager();
        let from_json = common::run_json(&manager, &json);
        let from_expr = common::runtime().block_on(async { manager.run(Input::expr(&expr)).await.outputs });
        prop_assert_eq!(from_json.len(), 1);
        prop_assert_eq!(from_expr.len(), 1);
        let (a, b) = (&from_json[0], &from_expr[0]);
        prop_assert_eq!(a.output.as_ref().ok(), b.output.as_ref().ok(), "{} vs {}", json, expr);
        prop_assert_eq!(&a.parsed_input, &b.parsed_input, "{} vs {}", json, expr);
        let error = |o: &fexpr::FunctionOutput| o.output.as_ref().err().map(|e| (e.kind, e.message.clone()));
        prop_assert_eq!(error(a), error(b), "{} vs {}", json, expr);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The reader accepts a document exactly when it is within every limit, counted as the
    /// evaluator counts a value, and refuses it with a `Limit` error otherwise.
    #[test]
    fn the_json_reader_holds_the_limits(value in json_value()) {
        let limits = Limits::default().max_depth(3).max_str_bytes(8).max_collection_len(12).max_eval_bytes(400);
        let json = value.to_json();
        let text = json.to_string();
        match fexpr::front::json_input::read(&text, &limits) {
            Ok(_) => prop_assert!(json_within(&json, &limits), "accepted {}", text),
            Err(e) => {
                prop_assert_eq!(e.kind, fexpr::ErrorKind::Limit, "{}: {}", text, e);
                prop_assert!(!json_within(&json, &limits), "refused {}: {}", text, e);
            }
        }
    }

    /// No JSON-ish text makes the door panic; every output has a value or an error, and every
    /// span lies inside the text on character boundaries.
    #[test]
    fn no_json_text_panics(text in prop_oneof![json_fragments(), any::<String>()]) {
        let limits = Limits::default();
        if let Err(e) = fexpr::front::json_input::read(&text, &limits) {
            if let Some(span) = e.span {
                prop_assert!(text.get(span.range()).is_some(), "{:?} in {:?}", span, text);
            }
        }
        let manager = fexpr::demo::manager();
        let outputs = common::runtime().block_on(async { manager.run(Input::json(&text)).await.outputs });
        prop_assert!(!outputs.is_empty());
        for out in &outputs {
            if let Some(span) = out.output.as_ref().err().and_then(|e| e.span) {
                prop_assert!(text.get(span.range()).is_some(), "{:?} in {:?}", span, text);
            }
        }
    }
}

// ------------------------------------------------- one call tree for every door

/// A parameter's JSON Schema type and a value of that type.
fn typed_value() -> impl Strategy<Value = (serde_json::Value, serde_json::Value)> {
    use serde_json::json;
    prop_oneof![
        "[a-zA-Z0-9.,é€あ-][a-zA-Z0-9 .,é€あ\n-]{0,12}|42|true|null|\\[1\\]"
            .prop_map(|s| (json!({"type": "string"}), json!(s))),
        any::<i32>().prop_map(|n| (json!({"type": "integer"}), json!(n))),
        (-1.0e6..1.0e6f64).prop_map(|x| (json!({"type": "number"}), json!(x))),
        any::<bool>().prop_map(|b| (json!({"type": "boolean"}), json!(b))),
        proptest::collection::vec(any::<i16>(), 0..4).prop_map(|v| (
            json!({"type": "array", "items": {"type": "integer"}}),
            json!(v)
        )),
        proptest::collection::btree_map("[a-z]{1,4}", "[a-z ]{0,6}", 0..3).prop_map(|m| (
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!(m)
        )),
    ]
}

/// Numbers compared as numbers (a `number` parameter reads `3` as `3.0`).
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any call its schema accepts, whatever its keys (`from`, `max-results`, `城市`), binds to
    /// the same arguments through the JSON door (an OpenAI message, an Anthropic `tool_use`
    /// block) and through the model formats (every format carrying JSON arguments, and
    /// Qwen3-Coder XML with its values as text): every reader hands on the same call tree.
    #[test]
    fn a_json_call_binds_alike_through_every_door(
        params in proptest::collection::btree_map(
            "[a-z][a-z0-9_]{0,6}|from|class|max-results|[$]filter|城市",
            typed_value(),
            1..5,
        )
    ) {
        use serde_json::json;
        let properties: serde_json::Map<_, _> =
            params.iter().map(|(k, (schema, _))| (k.clone(), schema.clone())).collect();
        let args: serde_json::Map<_, _> =
            params.iter().map(|(k, (_, value))| (k.clone(), value.clone())).collect();
        let keys: Vec<&String> = params.keys().collect();
        let defs = fexpr::tooldefs::from_json(&json!([{"type": "function", "function": {
            "name": "f", "parameters": {"type": "object", "properties": properties,
            "required": keys}}}])).unwrap();
        let ctx = fexpr::tooldefs::context(&defs);
        let openai = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c",
            "type": "function", "function": {"name": "f",
            "arguments": serde_json::Value::Object(args.clone()).to_string()}}]}).to_string();
        let hermes = format!("<tool_call>\n{}\n</tool_call>", json!({"name": "f", "arguments": args}));
        let mut qwen = String::from("<tool_call>\n<function=f>\n");
        for (key, value) in &args {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            qwen.push_str(&format!("<parameter={key}>\n{text}\n</parameter>\n"));
        }
        qwen.push_str("</function>\n</tool_call>");
        let j = serde_json::Value::Object(args.clone()).to_string();
        let call = json!({"name": "f", "arguments": args}).to_string();
        // Every model format that carries its arguments as JSON.
        let formats = [
            format!("<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{j}<|call|>"),
            format!("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{j}<|tool_call_end|><|tool_calls_section_end|>"),
            format!("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{j}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
            format!("<|START_ACTION|>[{}]<|END_ACTION|>", json!({"tool_call_id": "0", "tool_name": "f", "parameters": args})),
            format!("<function=f>{j}</function>"),
            format!("<|python_tag|>{}", json!({"name": "f", "parameters": args})),
            format!("<|tool_call|>[{call}]"),
            format!("[TOOL_CALLS] [{call}]"),
            format!("[TOOL_CALLS]f[ARGS]{j}"),
            format!("functools[{call}]"),
            format!("[{call}]"),
            json!({"type": "tool_use", "id": "toolu_1", "name": "f", "input": args}).to_string(),
        ];
        let want = serde_json::Value::Object(args);
        for text in [&openai, &hermes, &qwen].into_iter().chain(&formats) {
            let checked = fexpr::check::check_text(
                text, &ctx, &Limits::default(), &fexpr::repair::RepairOptions::default());
            prop_assert_eq!(checked.verdicts.len(), 1, "{}", text);
            let verdict = &checked.verdicts[0];
            prop_assert!(verdict.valid, "{}: {:?}", text, verdict.error);
            let got = verdict.to_json()["kwargs"].clone();
            prop_assert!(same_json(&got, &want), "{}: {} != {}", text, got, want);
        }
    }
}

//! Tests of the type model: schemas read, arguments bound, values coerced.

use super::*;
use serde_json::json;

fn point_schema() -> Json {
    json!({
        "type": "object",
        "properties": {"p1": {"$ref": "#/$defs/Point"}, "p2": {"$ref": "#/$defs/Point"}},
        "required": ["p1", "p2"],
        "$defs": {"Point": {"type": "object", "properties": {
            "x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}
    })
}

fn s() -> Span {
    Span::new(0, 1)
}

#[test]
fn dict_becomes_record_and_int_stays_an_int_for_a_float() {
    let sig = RecordType::from_schema("add_points", &point_schema());
    assert_eq!(sig.to_string(), "add_points(p1: Point, p2: Point)");
    let p = Value::from_json(&json!({"x": 1, "y": 2}));
    let bound = sig
        .bind(
            vec![],
            vec![("p1".into(), p.clone(), s()), ("p2".into(), p, s())],
            s(),
        )
        .unwrap();
    assert_eq!(bound[0].as_ref().unwrap().repr(), "Point(x=1, y=2)");
    assert_eq!(
        Type::Float.coerce(Value::Int(2), "a").unwrap(),
        Value::Int(2)
    );
    assert_eq!(
        Type::Int.coerce(Value::Float(2.0), "a").unwrap_err().kind,
        ErrorKind::Type
    );
}

#[test]
fn binding_in_field_order_and_out_of_it_agree() {
    let sig = RecordType::from_schema(
        "f",
        &json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "integer"},
                "c": {"type": "integer", "default": 7}}, "required": ["a", "b"]}),
    );
    let kw = |names: &[&str], values: &[i64]| -> Vec<(String, Value, Span)> {
        names
            .iter()
            .zip(values)
            .map(|(n, v)| (n.to_string(), Value::Int(*v), s()))
            .collect()
    };
    let expected = Ok(vec![
        Some(Value::Int(1)),
        Some(Value::Int(2)),
        Some(Value::Int(3)),
    ]);
    // In field order (the direct path), reordered, and mixed with positionals.
    assert_eq!(
        sig.bind(vec![], kw(&["a", "b", "c"], &[1, 2, 3]), s()),
        expected
    );
    assert_eq!(
        sig.bind(vec![], kw(&["c", "b", "a"], &[3, 2, 1]), s()),
        expected
    );
    let positional = vec![(Value::Int(1), s())];
    assert_eq!(
        sig.bind(positional, kw(&["b", "c"], &[2, 3]), s()),
        expected
    );
    // A default fills the field not given; coercion errors are the same either way.
    let defaulted = sig.bind(vec![], kw(&["a", "b"], &[1, 2]), s()).unwrap();
    assert_eq!(defaulted[2], Some(Value::Int(7)));
    let bad = |kwargs| sig.bind(vec![], kwargs, s()).unwrap_err().kind;
    let text = |n: &str| (n.to_string(), Value::Str("x".into()), s());
    let one = |n: &str| (n.to_string(), Value::Int(1), s());
    assert_eq!(bad(vec![one("a"), text("b"), one("c")]), ErrorKind::Type);
    assert_eq!(bad(vec![one("c"), text("b"), one("a")]), ErrorKind::Type);
}

#[test]
fn binding_errors_are_precise() {
    let sig = RecordType::from_schema(
        "add",
        &json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
    );
    let e = sig
        .check_shape(0, &[("a", s()), ("c", Span::new(5, 6))], s())
        .unwrap_err();
    assert_eq!(
        (e.kind, e.span),
        (ErrorKind::Arguments, Some(Span::new(5, 6)))
    );
    assert!(
        e.message.contains("unexpected keyword argument `c`"),
        "{}",
        e.message
    );
    let e = sig.check_shape(3, &[], s()).unwrap_err();
    assert!(e
        .message
        .contains("takes 2 positional arguments but 3 were given"));
    let e = sig.check_shape(1, &[("a", s())], s()).unwrap_err();
    assert!(e.message.contains("multiple values for argument `a`"));
    let e = sig.check_shape(1, &[], s()).unwrap_err();
    assert!(e.message.contains("missing 1 required argument: `b`"));
    assert_eq!(e.hint.as_deref(), Some("signature: add(a: int, b: int)"));
}

#[test]
fn unions_prefer_exact_alternatives() {
    let t = Type::from_schema(
        &json!({"anyOf": [{"type": "number"}, {"type": "integer"}]}),
        &json!({}),
    );
    assert_eq!(t.coerce(Value::Int(3), "x").unwrap(), Value::Int(3));
    let arr = Type::from_schema(&json!({"type": "array", "format": "ndarray"}), &json!({}));
    let v = arr
        .coerce(Value::from_json(&json!([[1, 2], [3, 4]])), "arr")
        .unwrap();
    assert!(matches!(v, Value::Array(_)));
}

#[test]
fn recursive_schemas_are_read_once_and_checked_lazily() {
    let root = json!({"$defs": {"T": {"type": "object", "properties": {
        "a": {"$ref": "#/$defs/T"}, "b": {"$ref": "#/$defs/T"}, "c": {"$ref": "#/$defs/T"}}}}, "$ref": "#/$defs/T"});
    let t = Type::from_schema(&root, &root);
    assert_eq!(t.to_string(), "T");
    let nested = Value::from_json(&json!({"a": {"b": {"c": {}}}}));
    assert_eq!(t.coerce(nested, "t").unwrap().repr(), "T(a=T(b=T(c=T())))");
    let e = t
        .coerce(Value::from_json(&json!({"a": {"b": 5}})), "t")
        .unwrap_err();
    assert_eq!(e.message, "`t.a.b` expects T, got int 5");
}

/// `query(filter: Filter)` where `Filter = And | Or | Not | Cond`, through `$defs`.
fn query_schema() -> Json {
    json!({
        "type": "object",
        "properties": {"filter": {"$ref": "#/$defs/Filter"}},
        "required": ["filter"],
        "$defs": {
            "Filter": {"anyOf": [
                {"$ref": "#/$defs/And"}, {"$ref": "#/$defs/Or"},
                {"$ref": "#/$defs/Not"}, {"$ref": "#/$defs/Cond"}]},
            "And": {"type": "object", "additionalProperties": false, "required": ["and"],
                "properties": {"and": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}},
            "Or": {"type": "object", "additionalProperties": false, "required": ["or"],
                "properties": {"or": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}},
            "Not": {"type": "object", "additionalProperties": false, "required": ["not"],
                "properties": {"not": {"$ref": "#/$defs/Filter"}}},
            "Cond": {"type": "object", "additionalProperties": false,
                "required": ["field", "op", "value"],
                "properties": {"field": {"type": "string"},
                    "op": {"enum": ["=", "<", ">"]}, "value": {}}}
        }
    })
}

fn bind_filter(sig: &RecordType, filter: Json) -> Result<Value, Error> {
    let mut bound = sig.bind(
        vec![],
        vec![("filter".into(), Value::from_json(&filter), s())],
        s(),
    )?;
    Ok(bound.remove(0).unwrap_or(Value::None))
}

#[test]
fn a_recursive_filter_schema_is_checked_not_taken_as_any() {
    let sig = RecordType::from_schema("query", &query_schema());
    assert_eq!(sig.to_string(), "query(filter: Filter)");
    for bad in [
        json!(5),
        json!("DROP TABLE users"),
        json!({}),
        json!([]),
        json!(null),
        json!({"and": [{"field": "a", "op": "=", "value": 1}, {"op": "="}]}),
        json!({"not": {"not": {"field": "a", "op": "~", "value": 1}}}),
        json!({"or": [{"and": [5]}]}),
    ] {
        let e = bind_filter(&sig, bad.clone()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Type, "{bad}: {e}");
    }
    let e = bind_filter(&sig, json!(5)).unwrap_err();
    assert_eq!(
        e.message,
        "`filter` expects And | Or | Not | Cond, got int 5"
    );
    let ok = bind_filter(
        &sig,
        json!({"and": [{"field": "a", "op": "=", "value": 1},
        {"not": {"or": [{"field": "b", "op": ">", "value": 2.5}]}}]}),
    )
    .unwrap();
    assert_eq!(
        ok.repr(),
        // `and`, `not`, `or` are reserved words: the repr writes them as Python can.
        "And(**{'and': [Cond(field='a', op='=', value=1), Not(**{'not': Or(**{'or': [Cond(field='b', op='>', value=2.5)]})})]})"
    );
    // As deep as the value goes: 100 `not`s (a model's expression nests less).
    let mut deep = json!({"field": "a", "op": "=", "value": 1});
    for _ in 0..100 {
        deep = json!({"not": deep});
    }
    assert!(bind_filter(&sig, deep.clone()).is_ok());
    // Beyond the check's depth: refused, never accepted unchecked.
    let mut deeper = deep;
    for _ in 0..200 {
        deeper = json!({"not": deeper});
    }
    let e = bind_filter(&sig, deeper).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(
        e.message
            .contains("nests deeper than its schema is checked"),
        "{e}"
    );
}

#[test]
fn recursive_types_cross_the_sandbox_wire() {
    let sig = RecordType::from_schema("query", &query_schema());
    let bytes = postcard::to_allocvec(&sig).unwrap();
    let decoded: RecordType = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(decoded, sig);
    assert_eq!(decoded.to_string(), "query(filter: Filter)");
    let filter = json!({"not": {"not": {"field": "a", "op": "<", "value": 0}}});
    assert_eq!(
        bind_filter(&decoded, filter.clone()),
        bind_filter(&sig, filter)
    );
    assert!(bind_filter(&decoded, json!("DROP TABLE users")).is_err());
}

#[test]
fn retrying_alternatives_on_nested_values_is_bounded() {
    // Two alternatives that agree on everything but a field checked last: a naive check
    // retries both at every level (2^depth); the step budget stops it.
    let schema = json!({"$defs": {"F": {"anyOf": [
        {"type": "object", "required": ["k", "a"], "properties": {
            "k": {"type": "array", "items": {"$ref": "#/$defs/F"}}, "a": {"type": "integer"}}},
        {"type": "object", "required": ["k", "b"], "properties": {
            "k": {"type": "array", "items": {"$ref": "#/$defs/F"}}, "b": {"type": "integer"}}}
    ]}}, "$ref": "#/$defs/F"});
    let t = Type::from_schema(&schema, &schema);
    let mut value = json!({"k": []});
    for _ in 0..60 {
        value = json!({"k": [value]});
    }
    let e = t.coerce(Value::from_json(&value), "f").unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Limit | ErrorKind::Type), "{e}");
}

#[test]
fn a_pattern_is_searched_for_in_linear_time_and_a_huge_one_refused() {
    let t = Type::from_schema(
        &json!({"type": "string", "pattern": "[0-9]{3}"}),
        &json!({}),
    );
    assert!(t.coerce(Value::Str("room 101".into()), "x").is_ok());
    let e = t.coerce(Value::Str("room".into()), "x").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Value);
    assert_eq!(
        e.message,
        "`x` does not match the pattern `[0-9]{3}`, got 'room'"
    );
    // A pattern that backtracks exponentially elsewhere is linear here.
    let t = Type::from_schema(&json!({"type": "string", "pattern": "^(a+)+$"}), &json!({}));
    let text = format!("{}!", "a".repeat(100_000));
    assert!(t.coerce(Value::Str(text), "x").is_err());
    // Compiling is bounded: a pattern too large to compile refuses every value.
    let t = Type::from_schema(
        &json!({"type": "string", "pattern": "(\\w{100}){100}"}),
        &json!({}),
    );
    let e = t.coerce(Value::Str("a".into()), "x").unwrap_err();
    assert!(e.message.contains("too large to compile"), "{e}");
}

#[test]
fn schemas_that_cannot_be_checked_refuse_every_value() {
    let cases = [
        (
            json!({"type": "string", "pattern": "^(?!a)b"}),
            "`pattern` `^(?!a)b` cannot be used",
        ),
        (json!({"not": {"type": "string"}}), "`not`"),
        (
            json!({"type": "integer", "if": {"minimum": 0}, "then": {"maximum": 9}}),
            "`if`",
        ),
        (
            json!({"type": "object", "patternProperties": {"^x": {}}}),
            "`patternProperties`",
        ),
        (
            json!({"type": "array", "contains": {"type": "integer"}}),
            "`contains`",
        ),
        (json!({"type": "dict"}), "`type` `dict` is unknown"),
        (json!({"$ref": "#/$defs/Missing"}), "does not resolve"),
        (
            json!({"$ref": "https://example.com/schema.json"}),
            "does not resolve",
        ),
        (json!(false), "`false`"),
        (json!({"anyOf": []}), "no alternative"),
        (
            json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}),
            "refers to itself without nesting",
        ),
    ];
    for (schema, why) in cases {
        let t = Type::from_schema(&schema, &schema);
        for value in [json!(1), json!("a"), json!([1]), json!({}), json!(null)] {
            let e = t.coerce(Value::from_json(&value), "x").unwrap_err();
            assert!(e.message.contains(why), "{schema} with {value}: {e}");
            assert!(e.message.contains("cannot be checked"), "{e}");
        }
    }
    // An alternative that cannot be checked is never chosen; the others still are.
    let schema = json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "integer"}]}},
        "$ref": "#/$defs/A"});
    let t = Type::from_schema(&schema, &schema);
    assert!(t.coerce(Value::Int(1), "x").is_ok());
    assert!(t.coerce(Value::Str("a".into()), "x").is_err());
    // A part that cannot be checked refuses the values that reach it.
    let t = Type::from_schema(
        &json!({"type": "array", "items": {"type": "string", "not": {"const": "x"}}}),
        &json!({}),
    );
    assert!(t.coerce(Value::List(vec![]), "x").is_ok());
    let e = t.coerce(Value::from_json(&json!(["a"])), "x").unwrap_err();
    assert!(e.message.starts_with("`x[0]` cannot be checked"), "{e}");
    // Nested deeper than MAX_SCHEMA_DEPTH.
    let mut deep = json!({"type": "integer"});
    for _ in 0..=MAX_SCHEMA_DEPTH {
        deep = json!({"type": "array", "items": deep});
    }
    let t = Type::from_schema(&deep, &deep);
    let mut value = json!(1);
    for _ in 0..=MAX_SCHEMA_DEPTH {
        value = json!([value]);
    }
    let e = t.coerce(Value::from_json(&value), "x").unwrap_err();
    assert!(e.message.contains("nests deeper than 64 levels"), "{e}");
    // `required` without `properties`: a dict holding those keys, and maybe others.
    let t = Type::from_schema(
        &json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        &json!({}),
    );
    assert!(t
        .coerce(Value::from_json(&json!({"a": 1, "c": 2})), "x")
        .is_ok());
    assert!(t.coerce(Value::from_json(&json!({"c": 2})), "x").is_err());
    // Keywords fexpr does not know are annotations, as in JSON Schema.
    let t = Type::from_schema(&json!({"type": "integer", "x-unit": "cm"}), &json!({}));
    assert_eq!(t, Type::Int);
}

#[test]
fn a_parameter_schema_with_unchecked_constraints_refuses_calls() {
    let sig = RecordType::from_schema(
        "f",
        &json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
    );
    let e = sig.check_shape(0, &[("a", s())], s()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Type);
    assert!(e.message.contains("`anyOf` beside the parameters"), "{e}");
    let e = sig
        .bind(vec![], vec![("a".into(), Value::Int(1), s())], s())
        .unwrap_err();
    assert!(e.message.contains("cannot be checked"), "{e}");
}

#[test]
fn bounds_are_checked_through_refs_items_and_nested_properties() {
    let sig = RecordType::from_schema(
        "f",
        &json!({
            "type": "object",
            "properties": {
                "points": {"type": "array", "maxItems": 3, "items": {"$ref": "#/$defs/Point"}},
                "name": {"type": "string", "minLength": 2, "maxLength": 4},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "old": {"type": "number", "maximum": 5, "exclusiveMaximum": true},
                "step": {"type": "integer", "multipleOf": 5},
                "tags": {"type": "object", "maxProperties": 1},
            },
            "$defs": {"Point": {"type": "object", "minProperties": 1,
                "properties": {"x": {"type": "integer", "minimum": 0}}}},
        }),
    );
    let check = |name: &str, value: Json| {
        let bound = sig.bind(
            vec![],
            vec![(name.into(), Value::from_json(&value), s())],
            s(),
        );
        bound.map(|_| ()).map_err(|e| {
            assert_eq!(e.kind, ErrorKind::Value, "{e}");
            e.message
        })
    };
    assert_eq!(check("points", json!([{"x": 0}, {"x": 3}])), Ok(()));
    assert_eq!(
        check("points", json!([{"x": 0}, {"x": -1}])),
        Err("`points[1].x` must be at least 0, got -1".into())
    );
    assert_eq!(
        check("points", json!([{"x": 1}, {"x": 1}, {"x": 1}, {"x": 1}])),
        Err("`points` must have at most 3 items, got 4".into())
    );
    assert_eq!(check("name", json!("été")), Ok(()));
    assert_eq!(
        check("name", json!("a")),
        Err("`name` must have at least 2 characters, got 1".into())
    );
    assert_eq!(
        check("name", json!("abcde")),
        Err("`name` must have at most 4 characters, got 5".into())
    );
    assert_eq!(check("ratio", json!(0.5)), Ok(()));
    assert_eq!(
        check("ratio", json!(0)),
        Err("`ratio` must be greater than 0, got 0".into())
    );
    assert_eq!(
        check("ratio", json!(1.0)),
        Err("`ratio` must be less than 1, got 1.0".into())
    );
    assert_eq!(check("old", json!(4.5)), Ok(()));
    assert_eq!(
        check("old", json!(5)),
        Err("`old` must be less than 5, got 5".into())
    );
    assert_eq!(check("step", json!(15)), Ok(()));
    assert_eq!(
        check("step", json!(7)),
        Err("`step` must be a multiple of 5, got 7".into())
    );
    assert_eq!(
        check("tags", json!({"a": 1, "b": 2})),
        Err("`tags` must have at most 1 keys, got 2".into())
    );
}

#[test]
fn integer_formats_are_ranges() {
    let sig = RecordType::from_schema(
        "add",
        &json!({"type": "object", "properties": {
        "a": {"type": "integer", "format": "int64"}, "n": {"type": "integer", "format": "uint8"}}}),
    );
    let big = Value::from_bigint(num_bigint::BigInt::from(u64::MAX) + 1);
    let e = sig
        .bind(vec![], vec![("a".into(), big, Span::new(6, 10))], s())
        .unwrap_err();
    assert_eq!(
        e.message,
        "`a` = 18446744073709551616 does not fit a 64-bit integer (int64)"
    );
    assert_eq!(e.span, Some(Span::new(6, 10)));
    let e = sig
        .bind(vec![], vec![("n".into(), Value::Int(256), s())], s())
        .unwrap_err();
    assert_eq!(
        e.message,
        "`n` = 256 does not fit an unsigned 8-bit integer (uint8)"
    );
    assert!(sig
        .bind(vec![], vec![("a".into(), Value::Int(i64::MIN), s())], s())
        .is_ok());
}

#[test]
fn enums_are_sets() {
    let values: Vec<Json> = (0..1000).map(|i| json!(format!("v{i}"))).collect();
    let t = Type::from_schema(&json!({"enum": values}), &json!({}));
    assert!(t.coerce(Value::Str("v999".into()), "x").is_ok());
    let e = t.coerce(Value::Str("w".into()), "x").unwrap_err();
    // Signatures and hints list a bounded number of the values.
    assert!(
        e.message.ends_with("… 936 more], got str 'w'"),
        "{}",
        e.message
    );
    // `type` beside `enum` keeps the values of that type.
    let t = Type::from_schema(&json!({"type": "string", "enum": ["a", 1]}), &json!({}));
    assert_eq!(t.to_string(), "Literal['a']");
    // A `type` that no listed value has is a slip: the list stands.
    let t = Type::from_schema(
        &json!({"type": "boolean", "enum": ["True", "x"]}),
        &json!({}),
    );
    assert_eq!(t.to_string(), "Literal['True', 'x']");
}

#[test]
fn many_fields_are_found_by_name() {
    let props: serde_json::Map<String, Json> = (0..200)
        .map(|i| (format!("f{i}"), json!({"type": "integer"})))
        .collect();
    let sig = RecordType::from_schema("wide", &json!({"type": "object", "properties": props}));
    let kwargs = (0..200)
        .rev()
        .map(|i| (format!("f{i}"), Value::Int(i), s()))
        .collect();
    let bound = sig.bind(vec![], kwargs, s()).unwrap();
    assert_eq!(bound[7], Some(Value::Int(7)));
    let e = sig
        .check_shape(0, &[("f1", s()), ("f1", s())], s())
        .unwrap_err();
    assert!(
        e.message.contains("multiple values for argument `f1`"),
        "{e}"
    );
}

#[test]
fn signatures_write_keys_python_cannot_name_as_a_call_does() {
    let sig = RecordType::from_schema(
        "convert",
        &json!({"type": "object", "properties": {"from": {"type": "string"},
            "to": {"type": "string"}, "amount": {"type": "number"}, "max-results": {"type": "integer"}},
            "required": ["from", "to"]}),
    );
    assert_eq!(
        sig.to_string(),
        r#"convert(**{"from": str}, to: str, amount: float | None = None, **{"max-results": int | None = None})"#
    );
}

/// The fast path of `Type::coerce` (`fits`: a value already of its type, taken as it is;
/// `take_fitting`: that, or a dict of a record's fields in order, made the record)
/// gives exactly what the full check gives, for values that fit and values that do not.
#[test]
fn a_value_that_fits_is_what_the_full_check_returns() {
    let schema = point_schema();
    let point = match &RecordType::from_schema("add_points", &schema).fields[0].ty {
        Type::Record(rt) => Type::Record(rt.clone()),
        other => panic!("expected a record, got {other}"),
    };
    let types = [
        Type::Any,
        Type::Int,
        Type::Float,
        Type::Str,
        Type::Bool,
        point,
        Type::from_schema(&json!({"type": "integer", "format": "int64"}), &json!({})),
        Type::from_schema(&json!({"type": "integer", "format": "uint8"}), &json!({})),
        Type::from_schema(
            &json!({"type": "integer", "minimum": 0, "maximum": 10}),
            &json!({}),
        ),
        Type::from_schema(
            &json!({"type": "number", "exclusiveMinimum": 0}),
            &json!({}),
        ),
        Type::from_schema(&json!({"type": "string", "maxLength": 3}), &json!({})),
        Type::from_schema(&json!({"type": "string", "pattern": "^a+$"}), &json!({})),
        Type::from_schema(&json!({"type": ["integer", "null"]}), &json!({})),
    ];
    let record = |fields: Vec<(&str, Value)>| {
        Value::Record(Record {
            name: "Point".into(),
            fields: fields.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        })
    };
    let values = [
        Value::None,
        Value::Bool(true),
        Value::Int(5),
        Value::Int(-1),
        Value::Int(300),
        Value::Int(11),
        Value::from_bigint(num_bigint::BigInt::from(u64::MAX)),
        Value::Float(1.5),
        Value::Float(-0.5),
        Value::Float(f64::NAN),
        Value::Str("aa".into()),
        Value::Str("abcd".into()),
        Value::List(vec![Value::Int(1)]),
        record(vec![("x", Value::Int(1)), ("y", Value::Int(2))]),
        record(vec![("y", Value::Int(2)), ("x", Value::Int(1))]),
        record(vec![("x", Value::Int(1)), ("y", Value::Str("2".into()))]),
        record(vec![("x", Value::Int(1))]),
        Value::from_json(&json!({"x": 1, "y": 2})),
        Value::from_json(&json!({"y": 2, "x": 1})),
        Value::from_json(&json!({"x": 1, "y": 2.5})),
        Value::from_json(&json!({"x": 1})),
    ];
    let mut fitted = 0;
    for ty in &types {
        for value in &values {
            let full = {
                let checker = Checker::for_value(value);
                coerce(ty, value.clone(), &Path::Name("v"), 0, &checker)
            };
            if coerce::fits(ty, value) {
                fitted += 1;
                assert_eq!(full.as_ref(), Ok(value), "{ty} fits {}", value.repr());
            }
            if let Ok(taken) = take_fitting(ty, value.clone()) {
                assert_eq!(full.as_ref(), Ok(&taken), "{ty} takes {}", value.repr());
            }
            assert_eq!(
                ty.coerce(value.clone(), "v"),
                full,
                "{ty} of {}",
                value.repr()
            );
        }
    }
    assert!(fitted > 10, "only {fitted} pairs took the fast path");
}

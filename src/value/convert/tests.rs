//! The direct conversions must give exactly what the JSON detour gives, errors included.

use super::*;
use crate::value::{NdArray, Record};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Point {
    x: i64,
    y: i64,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Strict {
    b: Option<String>,
    a: f64,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Shape {
    Empty,
    Circle(f64),
    Rect { w: i64, h: i64 },
    Pair(i64, i64),
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum Number {
    Int(i64),
    Float(f64),
    Text(String),
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Wrapper(Vec<u8>);

/// `into_rust` and the JSON detour agree on `v`.
fn same<T: DeserializeOwned + Debug + PartialEq + 'static>(v: &Value) {
    let direct = v.clone().into_rust::<T>().map_err(|e| e.message);
    let detour =
        serde_json::from_value::<T>(v.to_json()).map_err(|e| reason(&Before::of(v).brief(), &e));
    assert_eq!(
        direct,
        detour,
        "{} into {}",
        v.repr(),
        std::any::type_name::<T>()
    );
}

fn into_all(v: &Value) {
    same::<i64>(v);
    same::<u8>(v);
    same::<i128>(v);
    same::<f64>(v);
    same::<bool>(v);
    same::<String>(v);
    same::<char>(v);
    same::<()>(v);
    same::<Option<i64>>(v);
    same::<Option<Vec<i64>>>(v);
    same::<Vec<i64>>(v);
    same::<Vec<f64>>(v);
    same::<Vec<u8>>(v);
    same::<Vec<Option<bool>>>(v);
    same::<(i64, String)>(v);
    same::<Point>(v);
    same::<Option<Point>>(v);
    same::<Vec<Point>>(v);
    same::<Strict>(v);
    same::<Shape>(v);
    same::<Number>(v);
    same::<Wrapper>(v);
    same::<HashMap<String, i64>>(v);
    same::<BTreeMap<i64, f64>>(v);
    same::<serde_json::Value>(v);
    same::<NdArray>(v);
    same::<Vec<NdArray>>(v);
}

fn record(fields: &[(&str, Value)]) -> Value {
    Value::Record(Record {
        name: "R".into(),
        fields: fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    })
}

fn array(json: serde_json::Value) -> Value {
    Value::from(NdArray::from_nested(&Value::from_json(&json), 100).unwrap())
}

#[test]
fn chosen_values_convert_as_json_does() {
    let values = vec![
        Value::None,
        Value::Bool(true),
        Value::Int(0),
        Value::Int(-3),
        Value::Int(300),
        Value::Int(i64::MAX),
        Value::from_bigint(num_bigint::BigInt::from(u64::MAX)),
        Value::from_bigint(num_bigint::BigInt::from(u128::MAX)),
        Value::Float(1.0),
        Value::Float(-2.5),
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Str("a".into()),
        Value::Str("Empty".into()),
        Value::Str("12".into()),
        Value::Bytes(vec![1, 255]),
        Value::List(vec![Value::Int(1), Value::Int(2)]),
        Value::Tuple(vec![Value::Int(1), Value::Str("s".into())]),
        Value::Tuple(vec![Value::Int(1), Value::Str("s".into()), Value::None]),
        Value::Set([Value::Int(3), Value::Int(1)].into_iter().collect()),
        Value::List(vec![Value::Float(1.5), Value::None]),
        record(&[("x", Value::Int(1)), ("y", Value::Int(2))]),
        record(&[("y", Value::Int(2)), ("x", Value::Int(1))]),
        record(&[("x", Value::Int(1))]),
        record(&[("x", Value::Int(1)), ("y", Value::Str("2".into()))]),
        record(&[("x", Value::Str("a".into())), ("y", Value::Str("b".into()))]),
        record(&[
            ("a", Value::Int(1)),
            ("b", Value::None),
            ("c", Value::Int(3)),
        ]),
        record(&[("a", Value::Int(1)), ("b", Value::Str("t".into()))]),
        record(&[("x", Value::Int(1)), ("x", Value::Int(2))]),
        record(&[("w", Value::Int(1)), ("h", Value::Int(2))]),
        Value::List(vec![
            record(&[("x", Value::Int(1)), ("y", Value::Int(2))]),
            record(&[("x", Value::Int(3)), ("y", Value::Int(4))]),
        ]),
        Value::from_json(&serde_json::json!({"x": 1, "y": 2})),
        Value::from_json(&serde_json::json!({"y": 2, "x": 1})),
        Value::from_json(&serde_json::json!({"Circle": 2.0})),
        Value::from_json(&serde_json::json!({"Rect": {"w": 1, "h": 2}})),
        Value::from_json(&serde_json::json!({"Pair": [1, 2]})),
        Value::from_json(&serde_json::json!({"1": 2.5, "-3": 1})),
        Value::Dict(
            [
                (Value::Int(1), Value::Int(2)),
                (Value::Str("1".into()), Value::Int(3)),
            ]
            .into_iter()
            .collect(),
        ),
        array(serde_json::json!([[1, 2], [3, 4]])),
        array(serde_json::json!([1.5, 2.0])),
        array(serde_json::json!([true, false])),
        array(serde_json::json!([])),
        array(serde_json::json!(7)),
        Value::from(NdArray::Float(
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[2]), vec![1.0, f64::NAN]).unwrap(),
        )),
        Value::from(NdArray::Float(
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[0]), vec![]).unwrap(),
        )),
        Value::List(vec![array(serde_json::json!([1, 2]))]),
    ];
    for v in &values {
        into_all(v);
    }
}

/// `from_serialize` and the JSON detour agree on `x`.
fn built<T: Serialize + ?Sized>(x: &T) {
    let direct = Value::from_serialize(x).map_err(|e| e.message);
    let detour = serde_json::to_value(x)
        .map(|j| Value::from_json(&j))
        .map_err(|e| format!("cannot convert result: {e}"));
    assert_eq!(direct, detour);
}

#[test]
fn chosen_results_build_as_json_does() {
    built(&5i64);
    built(&u64::MAX);
    built(&(i128::from(u64::MAX) + 1));
    built(&(i128::from(i64::MIN) - 1));
    built(&-7i128);
    built(&(u128::from(u64::MAX) + 1));
    built(&1.5f32);
    built(&0.1f32);
    built(&'c');
    built("text");
    built(&serde_bytes_like());
    built(&Option::<i64>::None);
    built(&Some(3u8));
    built(&());
    built(&(1, "a", 2.5));
    built(&vec![Point { x: 1, y: 2 }]);
    built(&Strict {
        b: Some("s".into()),
        a: 1.0,
    });
    built(&Shape::Empty);
    built(&Shape::Circle(1.0));
    built(&Shape::Rect { w: 2, h: 1 });
    built(&Shape::Pair(1, 2));
    built(&Number::Text("t".into()));
    built(&Wrapper(vec![1, 2]));
    built(&HashMap::from([(1i64, "a"), (-2, "b")]));
    built(&BTreeMap::from([(true, 1)]));
    built(&BTreeMap::from([('k', 1)]));
    built(&vec![(0.5f64, 1)].into_iter().collect::<Vec<_>>());
    built(&indexmap::IndexMap::from([("b", 1), ("a", 2)]));
    built(&FloatKeys(0.1f32));
    built(&FloatKeys(1.5f64));
    built(&FloatKeys(1e300f64));
    built(&FloatKeys(f64::NAN));
    built(&BTreeMap::from([((1, 2), 3)]));
    built(&BTreeMap::from([(Some(1), 3)]));
    built(&HashMap::from(
        [(Shape::Empty, 1)].map(|(k, v)| (format!("{k:?}"), v)),
    ));
    built(&NdArray::from_nested(&Value::from_json(&serde_json::json!([[1, 2]])), 10).unwrap());
    built(&Value::Int(3));
}

#[test]
fn conversion_errors_speak_python() {
    let fails = |v: Value| -> String {
        match v.into_rust::<(i64, Point, Vec<u8>, Shape)>() {
            Ok(_) => "converted".into(),
            Err(e) => e.message,
        }
    };
    let big = Value::from_bigint(num_bigint::BigInt::from(u64::MAX) + 1);
    let cases = [
        (
            big.clone(),
            "18446744073709551616 does not fit a 64-bit integer",
        ),
        (Value::Str("x".into()), "'x' does not fit a 64-bit integer"),
        (Value::Float(1.5), "1.5 does not fit a 64-bit integer"),
        (Value::None, "None does not fit a 64-bit integer"),
    ];
    for (v, expected) in cases {
        assert_eq!(v.into_rust::<i64>().unwrap_err().message, expected);
    }
    assert_eq!(
        Value::Int(300).into_rust::<u8>().unwrap_err().message,
        "300 does not fit an unsigned 8-bit integer"
    );
    let no_y = Value::from_json(&serde_json::json!({"x": 1}));
    assert_eq!(
        no_y.into_rust::<Point>().unwrap_err().message,
        "a dict of 1 keys is missing field `y`"
    );
    let list = Value::from_json(&serde_json::json!([1, 2, 3]));
    assert_eq!(
        fails(list),
        "a list of 3 items holds a value that does not fit a Point record"
    );
    let short = Value::from_json(&serde_json::json!([1]));
    assert_eq!(
        short.into_rust::<(i64, i64)>().unwrap_err().message,
        "a list of 1 items does not fit a tuple of 2 items"
    );
    let shape = Value::Str("Hexagon".into());
    let e = shape.into_rust::<Shape>().unwrap_err().message;
    assert!(e.starts_with("'Hexagon' is not one of the values"), "{e}");
    assert!(!e.contains("invalid") && !e.contains("expected"), "{e}");
}

#[test]
fn non_finite_results_are_kept_for_the_manager_to_refuse() {
    let nan = Value::from_serialize(&f64::NAN).unwrap();
    assert!(matches!(nan, Value::Float(f) if f.is_nan()));
    assert_eq!(
        Value::from_serialize(&f32::INFINITY).unwrap(),
        Value::Float(f64::INFINITY)
    );
    let v = Value::from_serialize(&vec![(1.5f64, f64::NEG_INFINITY)]).unwrap();
    let bad = v.find_non_finite().unwrap();
    assert_eq!((bad.path.as_str(), bad.what()), ("[0][1]", "-infinite"));
    // A float map key cannot be written at all.
    assert!(Value::from_serialize(&FloatKeys(f64::NAN)).is_err());
}

/// A map with one float key.
struct FloatKeys<F>(F);

impl<F: Serialize> Serialize for FloatKeys<F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.0, &1)?;
        map.end()
    }
}

fn serde_bytes_like() -> impl Serialize {
    struct Bytes;
    impl Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&[1, 2, 3])
        }
    }
    Bytes
}

fn value_strategy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::None),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        (-5i64..300).prop_map(Value::Int),
        any::<f64>().prop_map(Value::Float),
        "[a-z]{0,3}".prop_map(Value::Str),
        proptest::collection::vec(any::<u8>(), 0..3).prop_map(Value::Bytes),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Tuple),
            proptest::collection::vec(("[a-z]{1,2}", inner.clone()), 0..4).prop_map(|kv| {
                Value::Dict(kv.into_iter().map(|(k, v)| (Value::Str(k), v)).collect())
            }),
            proptest::collection::vec(("[xy]", inner), 0..3).prop_map(|fields| {
                Value::Record(Record {
                    name: "Point".into(),
                    fields,
                })
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn arbitrary_values_convert_as_json_does(v in value_strategy()) {
        into_all(&v);
    }
}

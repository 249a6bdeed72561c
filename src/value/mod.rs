//! Values: the closed universe every expression evaluates to and every tool receives.
//!
//! `Value` converts losslessly to and from JSON for the JSON-shaped subset, and to and from
//! ordinary Rust types through serde, so a tool is an ordinary Rust function. Its derived
//! serde form (used for the sandbox wire with postcard) is exact: tuples, sets, records,
//! bytes and ndarrays keep their identity.

use indexmap::{IndexMap, IndexSet};
use ndarray::{ArrayD, IxDyn};
use num_bigint::BigInt;
use num_traits::{FromPrimitive, ToPrimitive};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::fmt::{self, Write as _};
use std::hash::{Hash, Hasher};

use crate::error::{Error, ErrorKind, LimitKind};

mod array;
pub mod builtins;
mod convert;
mod repr;

pub use self::array::NdArray;
pub(crate) use self::repr::write_call;
pub use self::repr::{float_repr, is_keyword_name, str_repr, PYTHON_KEYWORDS};

/// An ordered Python dict. Keys are hashable values (`Value::is_hashable`).
pub type Dict = IndexMap<Value, Value>;
/// An ordered Python set (insertion order is kept so output is deterministic).
pub type Set = IndexSet<Value>;

/// A value: None, bool, int, float, str, bytes, list, tuple, dict, set, record or ndarray.
///
/// **Floats are finite.** Evaluation never produces an infinite or NaN float: a float literal
/// that overflows (`1e309`), an operator (`1e308 * 10`) or a built-in (`np.sum(...)`) whose
/// result is not finite is an [`ErrorKind::Value`] error at that point, and a tool result that
/// holds one anywhere is an error of that call ([`Value::find_non_finite`] says where). JSON has
/// no such numbers, and writing them as `null` would turn a result into "no result".
///
/// ```
/// use fexpr::Value;
/// let v = Value::from_json(&serde_json::json!({"x": 1, "y": [2.5, "a"]}));
/// assert_eq!(v.to_json(), serde_json::json!({"x": 1, "y": [2.5, "a"]}));
/// assert_eq!(v.repr(), "{'x': 1, 'y': [2.5, 'a']}");
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub enum Value {
    /// `None`
    None,
    /// `True` / `False`
    Bool(bool),
    /// An int that fits in `i64`.
    Int(i64),
    /// An int outside `i64` (never used for values that fit, see [`Value::from_bigint`]).
    BigInt(Box<BigInt>),
    /// A float.
    Float(f64),
    /// A str.
    Str(String),
    /// A bytes value.
    Bytes(Vec<u8>),
    /// A list.
    List(Vec<Value>),
    /// A tuple.
    Tuple(Vec<Value>),
    /// A dict, in insertion order.
    Dict(Dict),
    /// A set, in insertion order.
    Set(Set),
    /// An instance of a record type (a dataclass-like struct such as `Point`).
    Record(Record),
    /// An n-dimensional array (`np.array`), boxed: an array's shape and strides would make
    /// every value three times the size of the others (each move copies it). Build one
    /// with `Value::from(array)`.
    Array(Box<NdArray>),
}

/// A deserialized array without elements may have other dimensions whose product (zero
/// dimensions counted as 1) is at most this: `Limits::default().max_collection_len`, which
/// bounds the same product in `np.zeros` and `np.ones`.
const MAX_DECODE_EMPTY_EXTENT: usize = 100_000;

/// An array has at most this many dimensions (numpy 1.x's limit): `np.array`, `np.zeros` and
/// decoding all refuse more, since walking an array costs its rows times its dimensions.
pub(crate) const MAX_NDIM: usize = 32;

/// `inner` (the payload of the value `wrap` makes) as a `T`: handed over as it is when `T`
/// is its own type, else deserialized from the value, as [`Value::into_rust`] does.
fn hand_over<S: 'static, T: serde::de::DeserializeOwned + 'static>(
    inner: S,
    wrap: fn(S) -> Value,
) -> Result<T, Error> {
    let mut slot = Some(inner);
    if let Some(taken) = (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<T>>()
        .and_then(Option::take)
    {
        return Ok(taken);
    }
    match slot {
        Some(inner) => wrap(inner).deserialize_owned(),
        None => Err(Error::new(ErrorKind::Type, "value already taken")),
    }
}

/// Values nested deeper than this do not deserialize: decoding (postcard from a sandbox guest,
/// JSON, YAML) recurses once per level, and so would dropping, printing and sizing the value.
pub const MAX_DECODE_DEPTH: usize = 256;

// `Limits::max_depth` may not exceed the depth a value can be decoded at.
const _: () = assert!(crate::limits::Limits::CEILINGS[1].1 == MAX_DECODE_DEPTH);

thread_local! {
    /// The nesting depth of the `Value` being deserialized on this thread.
    static DECODE_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of `Value` deserialization; leaving the level (also on error) pops it.
struct DecodeLevel;

impl DecodeLevel {
    fn enter() -> Option<DecodeLevel> {
        let depth = DECODE_DEPTH.with(|d| d.get());
        if depth >= MAX_DECODE_DEPTH {
            return None;
        }
        DECODE_DEPTH.with(|d| d.set(depth + 1));
        Some(DecodeLevel)
    }
}

impl Drop for DecodeLevel {
    fn drop(&mut self) {
        DECODE_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

impl<'de> Deserialize<'de> for Value {
    /// The derived form, with nesting bounded by [`MAX_DECODE_DEPTH`].
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        use serde::de::Error as _;
        let _level = DecodeLevel::enter().ok_or_else(|| {
            D::Error::custom(format!(
                "value nested deeper than {MAX_DECODE_DEPTH} levels"
            ))
        })?;
        ValueDef::deserialize(d)
    }
}

/// `Value`'s derived deserialization, which [`Value::deserialize`] wraps with a depth bound.
#[derive(Deserialize)]
#[serde(remote = "Value")]
enum ValueDef {
    None,
    Bool(bool),
    Int(i64),
    BigInt(Box<BigInt>),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Dict(Dict),
    Set(Set),
    Record(Record),
    Array(Box<NdArray>),
}

/// An infinite or NaN float inside a value, found by [`Value::find_non_finite`].
#[derive(Clone, Debug, PartialEq)]
pub struct NonFinite {
    /// Where it is: empty for the value itself, else subscripts such as `[3]`, `['k'].x` or,
    /// for an array element, `[1, 2]`.
    pub path: String,
    /// The float.
    pub value: f64,
}

impl NonFinite {
    /// `infinite`, `-infinite` or `NaN`.
    pub fn what(&self) -> &'static str {
        if self.value.is_nan() {
            "NaN"
        } else if self.value < 0.0 {
            "-infinite"
        } else {
            "infinite"
        }
    }

    /// The [`ErrorKind::Value`] error for it inside `whole` (e.g. "the result of `divide`"):
    /// "the result of `divide` is infinite", "element \[3\] of the result is NaN".
    pub fn error(&self, whole: &str) -> Error {
        let message = if self.path.is_empty() {
            format!("{whole} is {}", self.what())
        } else {
            format!("element {} of {whole} is {}", self.path, self.what())
        };
        Error::new(ErrorKind::Value, message)
    }
}

/// Bytes accounted per value node in budgets. Fixed (the size of `Value` on 64-bit targets)
/// rather than `size_of::<Value>()`, so that native and sandboxed (wasm32) evaluation reach
/// `max_eval_bytes` and `max_output_bytes` at the same point.
pub(crate) const NODE_BYTES: usize = 24;

/// Room on the stack for the walks over a value ([`Value::approx_size`],
/// [`Value::element_count`], [`Value::find_non_finite`]): the pending nodes of a typical tool
/// result fit, so checking it allocates nothing; a deeper or wider value spills to the heap.
const WALK: usize = 16;

/// An instance of a record type: its type name and its fields in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Record {
    /// The record type's name, e.g. `Point`.
    pub name: String,
    /// Field names and values in declaration order.
    pub fields: Vec<(String, Value)>,
}

impl Record {
    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

impl Value {
    /// An int, as `Int` when it fits in `i64` and `BigInt` otherwise.
    pub fn from_bigint(b: BigInt) -> Value {
        match b.to_i64() {
            Some(i) => Value::Int(i),
            None => Value::BigInt(Box::new(b)),
        }
    }

    /// The Python type name: `int`, `str`, `Point`, `ndarray`, ...
    pub fn type_name(&self) -> &str {
        match self {
            Value::Record(r) => &r.name,
            other => other.builtin_type_name(),
        }
    }

    /// The type name of a built-in value (`record` for a record).
    fn builtin_type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Set(_) => "set",
            Value::Record(_) => "record",
            Value::Array(_) => "ndarray",
        }
    }

    /// Whether the value may be a dict key or set element (as in Python, plus records are not).
    pub fn is_hashable(&self) -> bool {
        match self {
            Value::Tuple(items) => items.iter().all(Value::is_hashable),
            v => v.is_scalar(),
        }
    }

    /// Whether the value holds no other value (the walks over a value stop here at once).
    fn is_scalar(&self) -> bool {
        match self {
            Value::None
            | Value::Bool(_)
            | Value::Int(_)
            | Value::BigInt(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Bytes(_) => true,
            Value::List(_)
            | Value::Tuple(_)
            | Value::Dict(_)
            | Value::Set(_)
            | Value::Record(_)
            | Value::Array(_) => false,
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::BigInt(_) => true,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(v) | Value::Tuple(v) => !v.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Set(s) => !s.is_empty(),
            Value::Record(_) => true,
            Value::Array(a) => !a.is_empty(),
        }
    }

    /// The first infinite or NaN float in this value (depth first, in order), with its place:
    /// `None` when every float in it is finite. Array elements are found too.
    ///
    /// ```
    /// use fexpr::Value;
    /// let v = Value::List(vec![Value::Float(1.0), Value::Float(f64::NAN)]);
    /// let bad = v.find_non_finite().unwrap();
    /// assert_eq!(bad.error("the result").message, "element [1] of the result is NaN");
    /// assert!(Value::Float(2.5).find_non_finite().is_none());
    /// ```
    pub fn find_non_finite(&self) -> Option<NonFinite> {
        /// One step from a container to an element.
        enum Step<'a> {
            Index(usize),
            Key(&'a Value),
            DictKey,
            Field(&'a str),
        }
        match self {
            Value::Float(f) if !f.is_finite() => {
                return Some(NonFinite {
                    path: String::new(),
                    value: *f,
                })
            }
            // Scalars (most tool results) need no walk.
            v if v.is_scalar() => return None,
            _ => {}
        }
        // On the stack unless the value is deep or wide: a walk of a typical result
        // allocates nothing.
        let mut path: SmallVec<[Step; WALK]> = SmallVec::new();
        let mut stack: SmallVec<[(&Value, usize, Option<Step>); WALK]> = SmallVec::new();
        stack.push((self, 0, None));
        let found = |path: &[Step], cell: Option<Vec<usize>>, value: f64| {
            let mut at = String::new();
            for step in path {
                match step {
                    Step::Index(i) => at.push_str(&format!("[{i}]")),
                    Step::Key(k) => {
                        at.push_str(&format!("[{}]", crate::error::clip(&k.repr(), 40)))
                    }
                    Step::DictKey => at.push_str(" (a dict key)"),
                    Step::Field(name) => at.push_str(&format!(".{name}")),
                }
            }
            if let Some(cell) = cell {
                let cell: Vec<String> = cell.iter().map(usize::to_string).collect();
                at.push_str(&format!("[{}]", cell.join(", ")));
            }
            NonFinite { path: at, value }
        };
        while let Some((v, depth, step)) = stack.pop() {
            path.truncate(depth.saturating_sub(1));
            path.extend(step);
            let deeper = depth.saturating_add(1);
            match v {
                Value::Float(f) if !f.is_finite() => return Some(found(&path, None, *f)),
                Value::List(items) | Value::Tuple(items) => stack.extend(
                    items
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, item)| (item, deeper, Some(Step::Index(i)))),
                ),
                Value::Set(items) => stack.extend(
                    items
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, item)| (item, deeper, Some(Step::Index(i)))),
                ),
                Value::Dict(d) => {
                    for (k, item) in d.iter().rev() {
                        stack.push((item, deeper, Some(Step::Key(k))));
                        stack.push((k, deeper, Some(Step::DictKey)));
                    }
                }
                Value::Record(r) => stack.extend(
                    r.fields
                        .iter()
                        .rev()
                        .map(|(name, item)| (item, deeper, Some(Step::Field(name)))),
                ),
                Value::Array(array) => {
                    let NdArray::Float(a) = &**array else {
                        continue;
                    };
                    if let Some((cell, x)) = a.indexed_iter().find(|(_, x)| !x.is_finite()) {
                        return Some(found(
                            &path,
                            Some(ndarray::Dimension::slice(&cell).to_vec()),
                            *x,
                        ));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// An approximate count of bytes this value occupies, for budgets.
    pub fn approx_size(&self) -> usize {
        const NODE: usize = NODE_BYTES;
        // Scalars (most tool results) need no stack.
        match self {
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => return NODE,
            Value::Str(s) => return NODE.saturating_add(s.len()),
            _ => {}
        }
        let mut total = 0usize;
        let mut stack: SmallVec<[&Value; WALK]> = SmallVec::new();
        stack.push(self);
        while let Some(v) = stack.pop() {
            total = total.saturating_add(NODE);
            match v {
                Value::BigInt(b) => total = total.saturating_add(b.bits() as usize / 8),
                Value::Str(s) => total = total.saturating_add(s.len()),
                Value::Bytes(b) => total = total.saturating_add(b.len()),
                Value::List(items) | Value::Tuple(items) => stack.extend(items),
                Value::Set(items) => stack.extend(items),
                Value::Dict(d) => d.iter().for_each(|(k, v)| stack.extend([k, v])),
                Value::Record(r) => {
                    for (name, v) in &r.fields {
                        total = total.saturating_add(name.len());
                        stack.push(v);
                    }
                }
                Value::Array(a) => total = total.saturating_add(a.len().saturating_mul(8)),
                _ => {}
            }
        }
        total
    }

    /// The number of elements in this value counted recursively (scalars count 1).
    pub fn element_count(&self) -> usize {
        // Scalars (most arguments) need no stack.
        if self.is_scalar() {
            return 1;
        }
        let mut total = 0usize;
        let mut stack: SmallVec<[&Value; WALK]> = SmallVec::new();
        stack.push(self);
        while let Some(v) = stack.pop() {
            total = total.saturating_add(1);
            match v {
                Value::List(items) | Value::Tuple(items) => stack.extend(items),
                Value::Set(items) => stack.extend(items),
                Value::Dict(d) => d.iter().for_each(|(k, v)| stack.extend([k, v])),
                Value::Record(r) => stack.extend(r.fields.iter().map(|(_, v)| v)),
                Value::Array(a) => total = total.saturating_add(a.len()),
                _ => {}
            }
        }
        total
    }

    /// JSON for this value: the shape a tool or a program expects.
    ///
    /// Tuples and sets become arrays, records and dicts objects (non-string keys are written
    /// as Python's `json.dumps` writes them), bytes an array of numbers, ndarrays nested arrays.
    /// Ints outside 64 bits become decimal strings. Floats are finite (see [`Value`]); a value
    /// built by hand that holds an infinite or NaN float writes it as `null`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::None => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::BigInt(b) => match b.to_u64() {
                Some(u) => J::from(u),
                None => J::String(b.to_string()),
            },
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Bytes(b) => J::Array(b.iter().map(|x| J::from(*x)).collect()),
            Value::List(items) | Value::Tuple(items) => {
                J::Array(items.iter().map(Value::to_json).collect())
            }
            Value::Set(items) => J::Array(items.iter().map(Value::to_json).collect()),
            Value::Dict(d) => {
                J::Object(d.iter().map(|(k, v)| (json_key(k), v.to_json())).collect())
            }
            Value::Record(r) => J::Object(
                r.fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            Value::Array(a) => a.to_json(),
        }
    }

    /// The value for a JSON document: objects become dicts, arrays lists.
    pub fn from_json(json: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match json {
            J::Null => Value::None,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Value::Int(i),
                (None, Some(u), _) => Value::BigInt(Box::new(BigInt::from(u))),
                (_, _, Some(f)) => Value::Float(f),
                _ => Value::None,
            },
            J::String(s) => Value::Str(s.clone()),
            J::Array(items) => Value::List(items.iter().map(Value::from_json).collect()),
            J::Object(map) => Value::Dict(
                map.iter()
                    .map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Convert any serializable Rust value (a tool's return value) into a `Value`.
    ///
    /// The result is what the JSON form gives (`Value::from_json(&serde_json::to_value(x))`):
    /// structs and maps become dicts with str keys, sequences lists. The one exception: an
    /// infinite or NaN float is kept as it is (JSON would write `null`), so that the tool
    /// manager refuses such a result with an error saying where it is, instead of losing it.
    ///
    /// ```
    /// let v = fexpr::Value::from_serialize(&(1u8, "a", Some(2.5))).unwrap();
    /// assert_eq!(v.repr(), "[1, 'a', 2.5]");
    /// ```
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Result<Value, Error> {
        value
            .serialize(convert::Build)
            .map_err(|e| Error::new(ErrorKind::ToolFailed, format!("cannot convert result: {e}")))
    }

    /// Convert into a Rust type (a tool's parameter) through its `Deserialize` impl.
    pub fn deserialize_into<T: serde::de::DeserializeOwned>(&self) -> Result<T, Error> {
        self.clone().deserialize_owned()
    }

    /// Convert into a Rust type (a tool's parameter), consuming the value.
    ///
    /// The result is what the JSON form gives (`serde_json::from_value(self.to_json())`), so
    /// a record or a dict becomes a struct, a list or tuple a `Vec`, an int a float. An error
    /// ([`ErrorKind::Type`]) says what the value is and what would fit, in Python's terms.
    ///
    /// ```
    /// let v = fexpr::Value::from_json(&serde_json::json!([1, 2.5]));
    /// let pair: (f64, f64) = v.into_rust().unwrap();
    /// assert_eq!(pair, (1.0, 2.5));
    /// let big = fexpr::Value::from_json(&serde_json::json!(18446744073709551615u64));
    /// let e = big.into_rust::<i64>().unwrap_err();
    /// assert_eq!(e.message, "18446744073709551615 does not fit a 64-bit integer");
    /// // A scalar asked for as its own type is handed over as it is, with the same result.
    /// use fexpr::Value;
    /// assert_eq!(Value::Int(-3).into_rust::<i64>().unwrap(), -3);
    /// assert_eq!(Value::Int(3).into_rust::<f64>().unwrap(), 3.0);
    /// assert_eq!(Value::Str("a".into()).into_rust::<String>().unwrap(), "a");
    /// assert!(Value::Float(f64::NAN).into_rust::<f64>().is_err());
    /// assert!(Value::Int(-1).into_rust::<u8>().is_err());
    /// ```
    pub fn into_rust<T: serde::de::DeserializeOwned + 'static>(self) -> Result<T, Error> {
        // An ndarray parameter takes the array as it is when the JSON form would rebuild the
        // same array (non-empty, finite elements); the detour would only copy it twice.
        if let Value::Array(a) = self {
            let same = !a.is_empty()
                && match &*a {
                    NdArray::Float(f) => f.iter().all(|x| x.is_finite()),
                    NdArray::Int(_) | NdArray::Bool(_) => true,
                };
            return match same {
                true => hand_over(*a, Value::from),
                false => Value::Array(a).deserialize_owned(),
            };
        }
        // A scalar asked for as its own Rust type (`i64` from an int, `String` from a str) is
        // handed over as it is: what deserializing it would give, without the detour.
        match self {
            Value::Int(i) => hand_over(i, Value::Int),
            // A non-finite float deserializes as JSON's null: that path says so.
            Value::Float(f) if f.is_finite() => hand_over(f, Value::Float),
            Value::Bool(b) => hand_over(b, Value::Bool),
            Value::Str(s) => hand_over(s, Value::Str),
            other => other.deserialize_owned(),
        }
    }

    /// The conversion; an error says what the value is and what the Rust type would take,
    /// in Python's terms ("18446744073709551616 does not fit a 64-bit integer").
    fn deserialize_owned<T: serde::de::DeserializeOwned>(self) -> Result<T, Error> {
        // The conversion takes the value, so what the message shows is taken before it: a
        // container's kind and size, a record's name, a copy of a scalar or a short str. It is
        // written out only if the conversion fails: this runs for every argument of every
        // tool call.
        let before = convert::Before::of(&self);
        T::deserialize(convert::Owned(self)).map_err(|e| {
            let shown = before.brief();
            Error::new(ErrorKind::Type, convert::reason(&shown, &e))
        })
    }
}

/// A dict key as `json.dumps` writes it.
fn json_key(k: &Value) -> String {
    match k {
        Value::Str(s) => s.clone(),
        Value::None => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => float_repr(*f),
        other => other.repr(),
    }
}

// Equality and hashing are structural; floats compare by bit pattern so that `Value` is `Eq`
// and can key a dict (so `1` and `1.0` are different keys, unlike Python).
impl Value {
    /// The other values Python treats as the same set element or dict key as this number
    /// (`1`, `1.0` and `True`; `0.0` and `-0.0`): `{1, 1.0, True}` has one element. Empty for
    /// what is not a number.
    ///
    /// ```
    /// use fexpr::Value;
    /// assert_eq!(Value::Bool(true).same_keys(), [Value::Int(1), Value::Float(1.0)]);
    /// assert!(Value::Float(0.5).same_keys().is_empty());
    /// ```
    pub fn same_keys(&self) -> Vec<Value> {
        let int = |i: i64| {
            let mut keys = Vec::new();
            let f = i as f64;
            if f.to_i64() == Some(i) && f as i128 == i128::from(i) {
                keys.push(Value::Float(f));
            }
            if i == 0 {
                keys.push(Value::Float(-0.0));
            }
            if i == 0 || i == 1 {
                keys.push(Value::Bool(i == 1));
            }
            keys
        };
        match self {
            Value::Bool(b) => vec![
                Value::Int(i64::from(*b)),
                Value::Float(f64::from(u8::from(*b))),
            ],
            Value::Int(i) => int(*i),
            Value::BigInt(b) => b
                .to_f64()
                .filter(|f| f.is_finite() && BigInt::from_f64(*f).as_ref() == Some(&**b))
                .map(Value::Float)
                .into_iter()
                .collect(),
            Value::Float(f) if f.fract() == 0.0 => match f.to_i64() {
                Some(i) if (i as f64) == *f => {
                    let mut keys: Vec<Value> = int(i)
                        .into_iter()
                        .filter(|k| !matches!(k, Value::Float(g) if g.to_bits() == f.to_bits()))
                        .collect();
                    keys.insert(0, Value::Int(i));
                    keys
                }
                _ => BigInt::from_f64(*f)
                    .map(|b| Value::BigInt(Box::new(b)))
                    .into_iter()
                    .collect(),
            },
            _ => Vec::new(),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::None, Value::None) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::BigInt(a), Value::BigInt(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) => a == b,
            (Value::Dict(a), Value::Dict(b)) => a.len() == b.len() && a.iter().eq(b.iter()),
            (Value::Set(a), Value::Set(b)) => a.len() == b.len() && a.iter().eq(b.iter()),
            (Value::Record(a), Value::Record(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::None => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(i) => i.hash(state),
            Value::BigInt(b) => b.hash(state),
            Value::Float(f) => f.to_bits().hash(state),
            Value::Str(s) => s.hash(state),
            Value::Bytes(b) => b.hash(state),
            Value::List(items) | Value::Tuple(items) => items.hash(state),
            Value::Set(items) => items.iter().for_each(|v| v.hash(state)),
            Value::Dict(d) => d.iter().for_each(|kv| kv.hash(state)),
            Value::Record(r) => r.hash(state),
            Value::Array(a) => a.shape().hash(state),
        }
    }
}

macro_rules! from_scalar {
    ($($t:ty => $variant:ident as $cast:ty),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$variant(x as $cast)
            }
        }
    )*};
}

from_scalar!(i64 => Int as i64, i32 => Int as i64, u32 => Int as i64, f64 => Float as f64, f32 => Float as f64);

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl From<NdArray> for Value {
    fn from(a: NdArray) -> Value {
        Value::Array(Box::new(a))
    }
}

impl From<Record> for Value {
    fn from(r: Record) -> Value {
        Value::Record(r)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_round_trip_keeps_json_shapes() {
        let doc =
            json!({"a": [1, 2.5, "s", null, true], "b": {"c": -3}, "big": 18446744073709551615u64});
        assert_eq!(Value::from_json(&doc).to_json(), doc);
    }

    #[test]
    fn repr_matches_python() {
        let v = Value::Tuple(vec![Value::Float(1.0), Value::Str("it's".into())]);
        assert_eq!(v.repr(), "(1.0, \"it's\")");
        assert_eq!(Value::Tuple(vec![Value::Int(1)]).repr(), "(1,)");
        assert_eq!(float_repr(1e300), "1e+300");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(0.1), "0.1");
    }

    #[test]
    fn arrays_from_nested_lists() {
        let v = Value::from_json(&json!([[1, 2], [3, 4.5]]));
        let a = NdArray::from_nested(&v, 10).unwrap();
        assert_eq!(a.dtype(), "float64");
        assert_eq!(a.to_json(), json!([[1.0, 2.0], [3.0, 4.5]]));
        let ragged = Value::from_json(&json!([[1, 2], [3]]));
        assert_eq!(
            NdArray::from_nested(&ragged, 10).unwrap_err().kind,
            ErrorKind::Value
        );
        let too_many = Value::from_json(&json!([1, 2, 3]));
        assert_eq!(
            NdArray::from_nested(&too_many, 2).unwrap_err().kind,
            ErrorKind::Limit
        );
    }

    #[test]
    fn decoded_arrays_have_at_most_32_dimensions() {
        let array = |ndim: usize| {
            let a = ArrayD::<i64>::zeros(IxDyn(&vec![1; ndim]));
            postcard::to_allocvec(&Value::from(NdArray::Int(a))).unwrap()
        };
        assert!(postcard::from_bytes::<Value>(&array(32)).is_ok());
        assert!(postcard::from_bytes::<Value>(&array(33)).is_err());
    }

    #[test]
    fn wire_form_is_exact() {
        let v = Value::Tuple(vec![
            Value::Set([Value::Int(1)].into_iter().collect()),
            Value::Record(Record {
                name: "P".into(),
                fields: vec![("x".into(), Value::Int(1))],
            }),
            Value::from(NdArray::from_nested(&Value::from_json(&json!([[true]])), 10).unwrap()),
            Value::Bytes(vec![0, 255]),
            Value::from_bigint(BigInt::from(u128::MAX)),
        ]);
        let bytes = postcard::to_allocvec(&v).unwrap();
        assert_eq!(postcard::from_bytes::<Value>(&bytes).unwrap(), v);
    }

    #[test]
    fn ndarray_parameter_accepts_nested_lists() {
        let v = Value::from_json(&json!([[1, 2], [3, 4]]));
        let a: NdArray = v.deserialize_into().unwrap();
        assert_eq!(a.to_f64().sum(), 10.0);
    }
}

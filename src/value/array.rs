//! [`NdArray`]: the n-dimensional arrays `np.array` makes (int64, float64, bool), read from
//! nested lists within a length bound, compared, and written as nested lists.

use super::*;

/// An n-dimensional array of ints, floats or bools (the values `np.array` makes).
///
/// As a tool parameter it deserializes from nested lists (`[[1, 2], [3, 4]]`), so a
/// tool can take `NdArray` and receive either `np.array(...)` or a plain nested list.
///
/// ```
/// use fexpr::NdArray;
/// let a = NdArray::from_nested(&fexpr::Value::from_json(&serde_json::json!([[1, 2], [3, 4]])), 100).unwrap();
/// assert_eq!(a.shape(), &[2, 2]);
/// assert_eq!(a.to_f64().sum(), 10.0);
/// ```
#[derive(Clone, Debug)]
pub enum NdArray {
    /// `dtype=int64`
    Int(ArrayD<i64>),
    /// `dtype=float64`
    Float(ArrayD<f64>),
    /// `dtype=bool`
    Bool(ArrayD<bool>),
}

impl NdArray {
    /// The shape, e.g. `[2, 2]`.
    pub fn shape(&self) -> &[usize] {
        match self {
            NdArray::Int(a) => a.shape(),
            NdArray::Float(a) => a.shape(),
            NdArray::Bool(a) => a.shape(),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The numpy dtype name: `int64`, `float64` or `bool`.
    pub fn dtype(&self) -> &'static str {
        match self {
            NdArray::Int(_) => "int64",
            NdArray::Float(_) => "float64",
            NdArray::Bool(_) => "bool",
        }
    }

    /// The elements as floats (ints and bools converted).
    pub fn to_f64(&self) -> ArrayD<f64> {
        match self {
            NdArray::Int(a) => a.mapv(|x| x as f64),
            NdArray::Float(a) => a.clone(),
            NdArray::Bool(a) => a.mapv(|x| f64::from(u8::from(x))),
        }
    }

    /// Build an array from nested lists/tuples of numbers or bools (numpy's `np.array(obj)`).
    ///
    /// The nesting must be rectangular; the dtype is bool if every element is a bool, float if
    /// any is a float, int otherwise. At most `max_len` elements.
    pub fn from_nested(value: &Value, max_len: usize) -> Result<NdArray, Error> {
        let mut shape = Vec::new();
        let mut probe = value;
        while let Value::List(items) | Value::Tuple(items) = probe {
            shape.push(items.len());
            match items.first() {
                Some(first) => probe = first,
                None => break,
            }
            if shape.len() > MAX_NDIM {
                return Err(Error::new(
                    ErrorKind::Value,
                    format!("array has more than {MAX_NDIM} dimensions"),
                ));
            }
        }
        let mut leaves = Vec::new();
        collect_leaves(value, &shape, 0, &mut leaves, max_len)?;
        let dim = IxDyn(&shape);
        let bad_shape =
            |e: ndarray::ShapeError| Error::new(ErrorKind::Value, format!("bad array shape: {e}"));
        if !leaves.is_empty() && leaves.iter().all(|v| matches!(v, Value::Bool(_))) {
            let data = leaves
                .iter()
                .map(|v| matches!(v, Value::Bool(true)))
                .collect();
            return ArrayD::from_shape_vec(dim, data)
                .map(NdArray::Bool)
                .map_err(bad_shape);
        }
        if leaves.iter().any(|v| matches!(v, Value::Float(_))) {
            let data = leaves.iter().map(number_f64).collect::<Result<_, _>>()?;
            return ArrayD::from_shape_vec(dim, data)
                .map(NdArray::Float)
                .map_err(bad_shape);
        }
        let data = leaves.iter().map(number_i64).collect::<Result<_, _>>()?;
        ArrayD::from_shape_vec(dim, data)
            .map(NdArray::Int)
            .map_err(bad_shape)
    }

    /// Nested JSON arrays of the elements.
    pub fn to_json(&self) -> serde_json::Value {
        fn nest<T: Copy>(a: &ArrayD<T>, f: &dyn Fn(T) -> serde_json::Value) -> serde_json::Value {
            if a.ndim() == 0 {
                return a.iter().next().map_or(serde_json::Value::Null, |x| f(*x));
            }
            serde_json::Value::Array(a.outer_iter().map(|sub| nest(&sub.to_owned(), f)).collect())
        }
        match self {
            NdArray::Int(a) => nest(a, &|x| serde_json::Value::from(x)),
            NdArray::Float(a) => nest(a, &|x| {
                serde_json::Number::from_f64(x)
                    .map_or(serde_json::Value::Null, serde_json::Value::Number)
            }),
            NdArray::Bool(a) => nest(a, &serde_json::Value::Bool),
        }
    }
}

fn collect_leaves<'a>(
    value: &'a Value,
    shape: &[usize],
    level: usize,
    out: &mut Vec<&'a Value>,
    max_len: usize,
) -> Result<(), Error> {
    match (value, shape.get(level)) {
        (Value::List(items) | Value::Tuple(items), Some(&n)) => {
            if items.len() != n {
                return Err(Error::new(
                    ErrorKind::Value,
                    "array is ragged: nested lists have different lengths",
                ));
            }
            items
                .iter()
                .try_for_each(|item| collect_leaves(item, shape, level + 1, out, max_len))
        }
        (Value::List(_) | Value::Tuple(_), None) => Err(Error::new(
            ErrorKind::Value,
            "array is ragged: nested lists have different depths",
        )),
        (_, Some(_)) => Err(Error::new(
            ErrorKind::Value,
            "array is ragged: nested lists have different depths",
        )),
        (leaf, None) => {
            if out.len() >= max_len {
                return Err(Error::limit(
                    LimitKind::CollectionLen,
                    max_len,
                    "more elements",
                ));
            }
            out.push(leaf);
            Ok(())
        }
    }
}

fn number_f64(v: &&Value) -> Result<f64, Error> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        Value::Bool(b) => Ok(f64::from(u8::from(*b))),
        Value::BigInt(b) => Ok(b.to_f64().unwrap_or(f64::INFINITY)),
        other => Err(array_element_error(other)),
    }
}

fn number_i64(v: &&Value) -> Result<i64, Error> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::BigInt(_) => Err(Error::new(
            ErrorKind::Value,
            "array element does not fit in int64",
        )),
        other => Err(array_element_error(other)),
    }
}

fn array_element_error(v: &Value) -> Error {
    Error::new(
        ErrorKind::Type,
        format!(
            "array elements must be numbers or bools, not {}",
            v.type_name()
        ),
    )
}

impl PartialEq for NdArray {
    fn eq(&self, other: &NdArray) -> bool {
        match (self, other) {
            (NdArray::Int(a), NdArray::Int(b)) => a == b,
            (NdArray::Bool(a), NdArray::Bool(b)) => a == b,
            (NdArray::Float(a), NdArray::Float(b)) => {
                a.shape() == b.shape()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.to_bits() == y.to_bits())
            }
            _ => false,
        }
    }
}

impl Eq for NdArray {}

/// The exact wire form of an array: dtype, shape and flat data.
#[derive(Serialize, Deserialize)]
enum ArrayWire {
    Int(Vec<usize>, Vec<i64>),
    Float(Vec<usize>, Vec<f64>),
    Bool(Vec<usize>, Vec<bool>),
}

impl Serialize for NdArray {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return self.to_json().serialize(s);
        }
        let wire = match self {
            NdArray::Int(a) => ArrayWire::Int(a.shape().to_vec(), a.iter().copied().collect()),
            NdArray::Float(a) => ArrayWire::Float(a.shape().to_vec(), a.iter().copied().collect()),
            NdArray::Bool(a) => ArrayWire::Bool(a.shape().to_vec(), a.iter().copied().collect()),
        };
        wire.serialize(s)
    }
}

impl<'de> Deserialize<'de> for NdArray {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NdArray, D::Error> {
        use serde::de::Error as _;
        if d.is_human_readable() {
            let json = serde_json::Value::deserialize(d)?;
            return NdArray::from_nested(&Value::from_json(&json), usize::MAX)
                .map_err(|e| D::Error::custom(e.message));
        }
        let shape_err = |e: ndarray::ShapeError| D::Error::custom(format!("bad array: {e}"));
        // An empty array can have any other dimensions; walking it (printing, JSON) visits
        // their product. Bound that product as if the zero dimensions were 1.
        let check = |shape: &[usize], len: usize| {
            if shape.len() > MAX_NDIM {
                return Err(D::Error::custom(format!(
                    "bad array: {} dimensions (at most {MAX_NDIM})",
                    shape.len()
                )));
            }
            let extent = shape
                .iter()
                .fold(1usize, |n, d| n.saturating_mul((*d).max(1)));
            if extent > len.max(MAX_DECODE_EMPTY_EXTENT) {
                return Err(D::Error::custom("bad array: too many empty rows"));
            }
            Ok(())
        };
        match ArrayWire::deserialize(d)? {
            ArrayWire::Int(shape, data) => check(&shape, data.len())
                .and_then(|()| ArrayD::from_shape_vec(IxDyn(&shape), data).map_err(shape_err))
                .map(NdArray::Int),
            ArrayWire::Float(shape, data) => check(&shape, data.len())
                .and_then(|()| ArrayD::from_shape_vec(IxDyn(&shape), data).map_err(shape_err))
                .map(NdArray::Float),
            ArrayWire::Bool(shape, data) => check(&shape, data.len())
                .and_then(|()| ArrayD::from_shape_vec(IxDyn(&shape), data).map_err(shape_err))
                .map(NdArray::Bool),
        }
    }
}

impl schemars::JsonSchema for NdArray {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ndarray".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "array",
            "format": "ndarray",
            "description": "An n-dimensional array of numbers, as nested lists or np.array(...)",
            "items": {}
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

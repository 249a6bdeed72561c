//! Values between Python and fexpr.
//!
//! Python to [`Value`]: tool results, context variables and the arguments of a `Function` the
//! program built. Bounded: every object is charged (as [`Value::approx_size`] charges it) against
//! a byte budget before it is copied, and nesting is bounded by [`MAX_DECODE_DEPTH`], so a huge
//! or self-referencing result is an error, not an unbounded copy.
//!
//! [`Value`] to Python: tool arguments and outputs. Records become instances of the Python class
//! registered under their name ([`Records`]), ndarrays numpy arrays (the Rust array is handed to
//! numpy without a copy).

use std::collections::HashMap;

use fexpr::value::MAX_DECODE_DEPTH;
use fexpr::{Error, ErrorKind, NdArray, Record, Value};
use num_bigint::BigInt;
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple, PyType,
};

/// Bytes charged per value, as [`Value::approx_size`] charges them.
const NODE_BYTES: usize = 24;

/// The most dimensions an array may have (fexpr's `np.array` bound, numpy 1.x's).
const MAX_NDIM: usize = 32;

/// The record types a manager knows: how to build each from its fields, and which name a
/// Python class has as a record.
pub struct Records {
    /// Record type name → a callable building the Python object from keyword arguments.
    builders: HashMap<String, Py<PyAny>>,
    /// Python class → record type name.
    names: Py<PyDict>,
    /// The dataclasses and pydantic models among `names`' classes, by the address of their
    /// type object (kept alive by `names`, so never reused meanwhile): their fields, read
    /// once here rather than for every object a tool returns (`dataclasses.fields` alone was
    /// ~5 k instructions a `Point`).
    layouts: HashMap<usize, Layout>,
}

/// A record class's name and fields, in order: each as the `str` to read the attribute
/// with and as the field's name.
struct Layout {
    name: String,
    fields: Vec<(Py<PyString>, String)>,
}

impl Records {
    /// Records from `builders` (name → callable) and `names` (class → name).
    ///
    /// # Errors
    /// What Python raised while a class's fields were read.
    pub fn new(builders: &Bound<'_, PyDict>, names: &Bound<'_, PyDict>) -> PyResult<Records> {
        let mut map = HashMap::new();
        for (name, builder) in builders.iter() {
            map.insert(name.extract::<String>()?, builder.unbind());
        }
        let mut layouts = HashMap::new();
        for (class, name) in names.iter() {
            let Ok(class) = class.cast_into::<PyType>() else {
                continue;
            };
            if let Some(layout) = Layout::of(&class, || name.extract())? {
                layouts.insert(class.as_ptr() as usize, layout);
            }
        }
        Ok(Records {
            builders: map,
            names: names.copy()?.unbind(),
            layouts,
        })
    }

    /// No records: records become dicts, and Python objects' records are named by their class.
    pub fn empty(py: Python<'_>) -> Records {
        Records {
            builders: HashMap::new(),
            names: PyDict::new(py).unbind(),
            layouts: HashMap::new(),
        }
    }

    fn name_of(&self, ty: &Bound<'_, PyType>) -> PyResult<String> {
        let py = ty.py();
        match self.names.bind(py).get_item(ty)? {
            Some(name) => name.extract(),
            None => Ok(ty.name()?.to_string()),
        }
    }
}

/// Why a Python object did not become a [`Value`].
pub enum Unconverted {
    /// A budget or the nesting bound: a [`ErrorKind::Limit`] error.
    Limit(Error),
    /// An object fexpr has no value for (a socket, a custom class): its type name.
    Unsupported(String),
    /// Python raised while the object was read (a property, `model_dump`, ...).
    Raised(PyErr),
    /// Two keys of a dict (or members of a set) that Python keeps apart are one fexpr value:
    /// the repr of the key (or set), clipped.
    Collision(String),
}

impl Unconverted {
    /// The failure as a fexpr error of `kind` (limits stay `Limit`), naming `what`.
    pub fn into_error(self, py: Python<'_>, kind: ErrorKind, what: &str) -> Error {
        match self {
            Unconverted::Limit(e) => e,
            Unconverted::Unsupported(ty) => Error::new(
                kind,
                format!("{what}: fexpr has no value for a `{ty}` object"),
            )
            .with_hint(
                "use None, bool, int, float, str, bytes, list, tuple, dict, set, a dataclass, \
                 a pydantic model, an Enum or a numpy array",
            ),
            Unconverted::Raised(e) => Error::new(kind, format!("{what}: {}", describe(py, &e))),
            Unconverted::Collision(key) => Error::new(
                kind,
                format!("{what}: `{key}` would merge with another key or member of equal value"),
            )
            .with_hint(
                "use keys (and set members) that stay distinct as plain values: str, int, ...",
            ),
        }
    }
}

impl From<PyErr> for Unconverted {
    fn from(e: PyErr) -> Unconverted {
        Unconverted::Raised(e)
    }
}

/// `ValueError: message`, clipped: how an exception is named in an error message.
pub fn describe(py: Python<'_>, e: &PyErr) -> String {
    let ty = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let text = if message.is_empty() {
        ty
    } else {
        format!("{ty}: {message}")
    };
    fexpr::error::clip(&text, 2000)
}

/// The Python classes conversion recognises, imported once.
struct Known {
    enum_type: Py<PyAny>,
    dataclass_fields: Py<PyAny>,
}

fn known(py: Python<'_>) -> PyResult<&Known> {
    static KNOWN: PyOnceLock<Known> = PyOnceLock::new();
    KNOWN.get_or_try_init(py, || {
        Ok(Known {
            enum_type: py.import("enum")?.getattr("Enum")?.unbind(),
            dataclass_fields: py.import("dataclasses")?.getattr("fields")?.unbind(),
        })
    })
}

/// Convert `obj` into a [`Value`], charging `budget` (bytes, [`Value::approx_size`]'s
/// measure) and failing with a `Limit` error naming `limit` when it runs out.
pub fn from_py(
    obj: &Bound<'_, PyAny>,
    records: &Records,
    budget: &mut Budget,
) -> Result<Value, Unconverted> {
    from_py_at(obj, records, budget, 0)
}

/// What a conversion may still use, and the limit to name when it runs out.
pub struct Budget {
    left: usize,
    limit: usize,
    name: fexpr::LimitKind,
    /// The refusal's message, when not the default `{name} limit exceeded: more than {limit}
    /// bytes`.
    message: Option<String>,
    /// The most decimal digits an int may have (`Limits::max_int_digits`): printing an int
    /// costs time quadratic in its digits, as CPython's `int_max_str_digits` bounds.
    int_digits: usize,
}

impl Budget {
    /// `limit` bytes, reported as the `name` limit; ints up to the default
    /// `Limits::max_int_digits`.
    pub fn new(name: fexpr::LimitKind, limit: usize) -> Budget {
        Budget {
            left: limit,
            limit,
            name,
            message: None,
            int_digits: fexpr::Limits::default().max_int_digits,
        }
    }

    /// The same budget, refused with `message`.
    pub fn message(mut self, message: String) -> Budget {
        self.message = Some(message);
        self
    }

    /// Bytes charged so far.
    pub fn used(&self) -> usize {
        self.limit - self.left
    }

    /// Ints up to `digits` decimal digits.
    pub fn int_digits(mut self, digits: usize) -> Budget {
        self.int_digits = digits;
        self
    }

    fn charge(&mut self, bytes: usize) -> Result<(), Unconverted> {
        self.fits(bytes)?;
        self.left -= bytes;
        Ok(())
    }

    /// Whether `bytes` more would fit, without charging them.
    fn fits(&self, bytes: usize) -> Result<(), Unconverted> {
        if bytes <= self.left {
            Ok(())
        } else {
            Err(Unconverted::Limit(Error::limit_message(
                self.name,
                self.message.clone().unwrap_or_else(|| {
                    format!(
                        "{} limit exceeded: more than {} bytes",
                        self.name.field(),
                        self.limit
                    )
                }),
            )))
        }
    }
}

/// [`from_py`] at nesting `depth`: the exact built-in types, then enums and records, then
/// subclasses of the built-in types and the other containers, in that order (a richer type
/// wins over the built-in type it subclasses).
fn from_py_at(
    obj: &Bound<'_, PyAny>,
    records: &Records,
    budget: &mut Budget,
    depth: usize,
) -> Result<Value, Unconverted> {
    budget.charge(NODE_BYTES)?;
    if depth >= MAX_DECODE_DEPTH {
        return Err(Unconverted::Limit(Error::new(
            ErrorKind::Limit,
            format!("a value nested deeper than {MAX_DECODE_DEPTH} levels"),
        )));
    }
    if let Some(value) = exact_value(obj, records, budget, depth) {
        return value;
    }
    if let Some(value) = record_value(obj, records, budget, depth)? {
        return Ok(value);
    }
    subclass_value(obj, records, budget, depth)
}

/// The value of an object of an exact built-in type (the common case, and no subclass can
/// change its meaning) or a numpy array; `None` for any other object.
fn exact_value(
    obj: &Bound<'_, PyAny>,
    records: &Records,
    budget: &mut Budget,
    depth: usize,
) -> Option<Result<Value, Unconverted>> {
    if obj.is_none() {
        return Some(Ok(Value::None));
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return Some(Ok(Value::Bool(b.is_true())));
    }
    if let Ok(i) = obj.cast_exact::<PyInt>() {
        return Some(int_value(i, budget));
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Some(Ok(Value::Float(f.value())));
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return Some(str_value(s, budget));
    }
    if let Ok(list) = obj.cast_exact::<PyList>() {
        return Some(items(list.iter(), list.len(), records, budget, depth).map(Value::List));
    }
    if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
        return Some(items(tuple.iter(), tuple.len(), records, budget, depth).map(Value::Tuple));
    }
    if let Ok(dict) = obj.cast_exact::<PyDict>() {
        return Some(dict_value(dict, records, budget, depth));
    }
    if let Ok(array) = obj.cast::<PyUntypedArray>() {
        return Some(array_value(array, budget));
    }
    None
}

/// The value of an Enum member (its value), a dataclass or a pydantic model (a record of its
/// fields); `None` for any other object.
fn record_value(
    obj: &Bound<'_, PyAny>,
    records: &Records,
    budget: &mut Budget,
    depth: usize,
) -> Result<Option<Value>, Unconverted> {
    let py = obj.py();
    let ty = obj.get_type();
    // One of the manager's record classes (never an Enum: see `Layout::of`).
    if let Some(layout) = records.layouts.get(&(ty.as_ptr() as usize)) {
        return layout.read(obj, records, budget, depth).map(Some);
    }
    let known = known(py)?;
    // Enum members (also `IntEnum`, `StrEnum`) are their values.
    if obj.is_instance(known.enum_type.bind(py))? {
        return from_py_at(&obj.getattr("value")?, records, budget, depth + 1).map(Some);
    }
    // A class is never a record (a dataclass's or a model's class object is kept as it is).
    if obj.is_instance_of::<PyType>() {
        return Ok(None);
    }
    match Layout::of(&ty, || records.name_of(&ty))? {
        Some(layout) => layout.read(obj, records, budget, depth).map(Some),
        None => Ok(None),
    }
}

impl Layout {
    /// The layout of `class` when it is a dataclass or a pydantic (v2) model, named `name()`;
    /// `None` for any other class, an Enum (its members are their values) and a metaclass
    /// (its objects are classes).
    fn of(
        class: &Bound<'_, PyType>,
        name: impl FnOnce() -> PyResult<String>,
    ) -> PyResult<Option<Layout>> {
        let py = class.py();
        let known = known(py)?;
        if class.is_subclass(known.enum_type.bind(py))? || class.is_subclass_of::<PyType>()? {
            return Ok(None);
        }
        let mut names: Vec<String> = Vec::new();
        if class.hasattr("__dataclass_fields__")? {
            let fields = known.dataclass_fields.bind(py).call1((class,))?;
            for field in fields.try_iter()? {
                names.push(field?.getattr("name")?.extract()?);
            }
        } else if class.hasattr("model_fields")? && class.hasattr("model_dump")? {
            for name in class.getattr("model_fields")?.try_iter()? {
                names.push(name?.extract()?);
            }
        } else {
            return Ok(None);
        }
        let fields = names
            .into_iter()
            .map(|field| (PyString::intern(py, &field).unbind(), field))
            .collect();
        Ok(Some(Layout {
            name: name()?,
            fields,
        }))
    }

    /// `obj`'s record: its fields read by name, in order.
    fn read(
        &self,
        obj: &Bound<'_, PyAny>,
        records: &Records,
        budget: &mut Budget,
        depth: usize,
    ) -> Result<Value, Unconverted> {
        let py = obj.py();
        let mut out = Vec::with_capacity(self.fields.len());
        for (key, name) in &self.fields {
            budget.charge(name.len())?;
            let value = from_py_at(&obj.getattr(key.bind(py))?, records, budget, depth + 1)?;
            out.push((name.clone(), value));
        }
        Ok(Value::Record(Record {
            name: self.name.clone(),
            fields: out,
        }))
    }
}

/// The value of a subclass of a built-in type (a named tuple is a record), bytes, a set, or a
/// numpy scalar; an `Unsupported` error for anything else.
fn subclass_value(
    obj: &Bound<'_, PyAny>,
    records: &Records,
    budget: &mut Budget,
    depth: usize,
) -> Result<Value, Unconverted> {
    let ty = obj.get_type();
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return int_value(i, budget);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return str_value(s, budget);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        budget.charge(bytes.len())?;
        return Ok(Value::Bytes(bytes.to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        budget.charge(b.len())?;
        return Ok(Value::Bytes(b.to_vec()));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return items(list.iter(), list.len(), records, budget, depth).map(Value::List);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        // Named tuples are records: their class name and fields.
        if ty.hasattr("_fields")? {
            let names: Vec<String> = ty.getattr("_fields")?.extract()?;
            let mut out = Vec::with_capacity(names.len());
            for (name, item) in names.into_iter().zip(tuple.iter()) {
                budget.charge(name.len())?;
                out.push((name, from_py_at(&item, records, budget, depth + 1)?));
            }
            return Ok(Value::Record(Record {
                name: records.name_of(&ty)?,
                fields: out,
            }));
        }
        return items(tuple.iter(), tuple.len(), records, budget, depth).map(Value::Tuple);
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        return dict_value(dict, records, budget, depth);
    }
    if let Ok(set) = obj.cast::<PySet>() {
        let values = items(set.iter(), set.len(), records, budget, depth)?;
        return set_value(obj, values);
    }
    if let Ok(set) = obj.cast::<PyFrozenSet>() {
        let values = items(set.iter(), set.len(), records, budget, depth)?;
        return set_value(obj, values);
    }
    // numpy scalars (`np.int64(3)`, `np.float32(0.5)`, `np.bool_(True)`): their Python value.
    if ty
        .getattr("__module__")?
        .extract::<String>()
        .ok()
        .as_deref()
        == Some("numpy")
        && obj.hasattr("item")?
    {
        let item = obj.call_method0("item")?;
        if !item.is(obj) {
            return from_py_at(&item, records, budget, depth + 1);
        }
    }
    Err(Unconverted::Unsupported(ty.name()?.to_string()))
}

fn int_value(i: &Bound<'_, PyInt>, budget: &mut Budget) -> Result<Value, Unconverted> {
    if let Ok(small) = i.extract::<i64>() {
        return Ok(Value::Int(small));
    }
    // Decimal digits from the bit length (over-estimating by at most one) before any copy.
    let bits = i.call_method0("bit_length")?.extract::<u64>()?;
    let digits = bits.saturating_mul(30_103) / 100_000 + 1;
    if digits > budget.int_digits as u64 {
        return Err(Unconverted::Limit(Error::limit(
            fexpr::LimitKind::IntDigits,
            budget.int_digits,
            format!("an int of about {digits} digits"),
        )));
    }
    budget.charge((bits / 8) as usize)?;
    let big: BigInt = i.extract()?;
    Ok(Value::from_bigint(big))
}

fn str_value(s: &Bound<'_, PyString>, budget: &mut Budget) -> Result<Value, Unconverted> {
    let text = s.to_str()?;
    budget.charge(text.len())?;
    Ok(Value::Str(text.to_string()))
}

fn items<'py>(
    iter: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    records: &Records,
    budget: &mut Budget,
    depth: usize,
) -> Result<Vec<Value>, Unconverted> {
    // Each item is charged as it is converted; refuse at once what cannot fit.
    budget.fits(len.saturating_mul(NODE_BYTES))?;
    let mut out = Vec::with_capacity(len);
    for item in iter {
        out.push(from_py_at(&item, records, budget, depth + 1)?);
    }
    Ok(out)
}

fn dict_value(
    dict: &Bound<'_, PyDict>,
    records: &Records,
    budget: &mut Budget,
    depth: usize,
) -> Result<Value, Unconverted> {
    let mut out = fexpr::value::Dict::with_capacity(dict.len().min(1 << 16));
    for (k, v) in dict.iter() {
        let key = from_py_at(&k, records, budget, depth + 1)?;
        if !key.is_hashable() {
            return Err(Unconverted::Unsupported(format!(
                "dict with a {} key",
                key.type_name()
            )));
        }
        let value = from_py_at(&v, records, budget, depth + 1)?;
        // Keys Python keeps apart may be one fexpr value (`Color.RED` and `1`, two `str`
        // subclasses of the same text): refused, never merged.
        if out.insert(key, value).is_some() {
            return Err(Unconverted::Collision(repr_clipped(&k)));
        }
    }
    Ok(Value::Dict(out))
}

fn set_value(set: &Bound<'_, PyAny>, values: Vec<Value>) -> Result<Value, Unconverted> {
    if let Some(bad) = values.iter().find(|v| !v.is_hashable()) {
        return Err(Unconverted::Unsupported(format!(
            "set of {}",
            bad.type_name()
        )));
    }
    let len = values.len();
    let out: fexpr::value::Set = values.into_iter().collect();
    // As for dict keys: members Python keeps apart are not merged.
    if out.len() != len {
        return Err(Unconverted::Collision(repr_clipped(set)));
    }
    Ok(Value::Set(out))
}

/// A short repr of `obj` for a message.
fn repr_clipped(obj: &Bound<'_, PyAny>) -> String {
    bounded_repr(obj, 60)
}

/// `obj`'s repr, built bounded (`reprlib`: a few items of each collection, long strings cut),
/// then clipped to `max` characters: how an object fexpr has no value for is shown.
pub fn bounded_repr(obj: &Bound<'_, PyAny>, max: usize) -> String {
    let py = obj.py();
    let text = (|| {
        let short = py.import("reprlib")?.getattr("Repr")?.call0()?;
        short.setattr("maxstring", max.min(200))?;
        short.setattr("maxother", max)?;
        short.call_method1("repr", (obj,))?.extract::<String>()
    })();
    fexpr::error::clip(&text.unwrap_or_else(|_| "?".into()), max)
}

/// A numpy array as an [`NdArray`]: bool arrays as bools, integer arrays as int64, float
/// arrays as float64 (numpy converts the dtype once; no Python object per element).
fn array_value(
    array: &Bound<'_, PyUntypedArray>,
    budget: &mut Budget,
) -> Result<Value, Unconverted> {
    let shape = array.shape();
    // numpy 2 allows 64 dimensions; fexpr's arrays (and rust-numpy's views) 32.
    if shape.len() > MAX_NDIM {
        return Err(Unconverted::Unsupported(format!(
            "ndarray of {} dimensions (at most {MAX_NDIM})",
            shape.len()
        )));
    }
    // Charged before any copy: 8 bytes an element, and a node for every row of the nested
    // lists the array prints as (`np.zeros((10**8, 0))` has no element but 10**8 rows).
    let mut rows: usize = 0;
    let mut level: usize = 1;
    for &extent in &shape[..shape.len().saturating_sub(1)] {
        level = level.saturating_mul(extent);
        rows = rows.saturating_add(level);
    }
    let elements = shape.iter().fold(1usize, |n, &e| n.saturating_mul(e));
    budget.charge(
        elements
            .saturating_mul(8)
            .saturating_add(rows.saturating_mul(NODE_BYTES)),
    )?;
    let kind = array.dtype().kind();
    let as_type =
        |dtype: &str| -> PyResult<Bound<'_, PyAny>> { array.call_method1("astype", (dtype,)) };
    let array = match kind {
        b'b' => NdArray::Bool(
            as_type("bool")?
                .cast_into::<PyArrayDyn<bool>>()
                .map_err(PyErr::from)?
                .readonly()
                .as_array()
                .to_owned(),
        ),
        b'i' | b'u' => {
            if kind == b'u' && array.dtype().itemsize() >= 8 && !array.is_empty() {
                let max: u64 = array.call_method0("max")?.extract()?;
                if i64::try_from(max).is_err() {
                    return Err(Unconverted::Unsupported(
                        "uint64 array with values above 2**63 - 1".into(),
                    ));
                }
            }
            NdArray::Int(
                as_type("int64")?
                    .cast_into::<PyArrayDyn<i64>>()
                    .map_err(PyErr::from)?
                    .readonly()
                    .as_array()
                    .to_owned(),
            )
        }
        b'f' => NdArray::Float(
            as_type("float64")?
                .cast_into::<PyArrayDyn<f64>>()
                .map_err(PyErr::from)?
                .readonly()
                .as_array()
                .to_owned(),
        ),
        _ => {
            return Err(Unconverted::Unsupported(format!(
                "ndarray of dtype {}",
                array.dtype().str()?
            )))
        }
    };
    Ok(Value::from(array))
}

/// How a record whose class refuses its fields is handed over.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Strict {
    /// The class's exception propagates (tool arguments, outputs).
    Yes,
    /// The record becomes a dict of its fields (what a call was given, for display).
    No,
}

/// Convert `value` into a Python object: records through their registered classes (a dict of
/// fields for a record type with none), ndarrays as numpy arrays.
pub fn to_py<'py>(
    py: Python<'py>,
    value: Value,
    records: &Records,
    strict: Strict,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::BigInt(b) => (*b).into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, f).into_any(),
        Value::Str(s) => PyString::new(py, &s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, &b).into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item, records, strict)?)?;
            }
            list.into_any()
        }
        Value::Tuple(items) => {
            let items = items
                .into_iter()
                .map(|v| to_py(py, v, records, strict))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any()
        }
        Value::Dict(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(
                    to_py(py, k, records, strict)?,
                    to_py(py, v, records, strict)?,
                )?;
            }
            dict.into_any()
        }
        Value::Set(items) => {
            let set = PySet::empty(py)?;
            for item in items {
                set.add(to_py(py, item, records, strict)?)?;
            }
            set.into_any()
        }
        Value::Record(record) => record_to_py(py, record, records, strict)?,
        Value::Array(array) => match *array {
            NdArray::Int(a) => PyArrayDyn::from_owned_array(py, a).into_any(),
            NdArray::Float(a) => PyArrayDyn::from_owned_array(py, a).into_any(),
            NdArray::Bool(a) => PyArrayDyn::from_owned_array(py, a).into_any(),
        },
        // `Value` may grow; a kind this binding does not know yet is an error, not a guess.
        other => {
            return Err(PyTypeError::new_err(format!(
                "no Python form for a {} value",
                other.type_name()
            )))
        }
    })
}

fn record_to_py<'py>(
    py: Python<'py>,
    record: Record,
    records: &Records,
    strict: Strict,
) -> PyResult<Bound<'py, PyAny>> {
    let fields = PyDict::new(py);
    for (name, value) in record.fields {
        fields.set_item(name, to_py(py, value, records, strict)?)?;
    }
    let Some(builder) = records.builders.get(&record.name) else {
        return Ok(fields.into_any());
    };
    match builder.bind(py).call((), Some(&fields)) {
        Ok(obj) => Ok(obj),
        Err(e) if strict == Strict::No => {
            let _ = e;
            Ok(fields.into_any())
        }
        Err(e) => Err(e),
    }
}

/// A `TypeError` for an argument of the wrong type given to fexpr's own API.
pub fn type_error(what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    PyTypeError::new_err(format!("{what}, not {ty}"))
}

//! Built-in functions an expression may call when the context allows them: numpy-like array
//! helpers and Python's pure numeric built-ins. Every allocation is size-checked first.

use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, LimitKind, Span};
use crate::limits::Limits;
use crate::value::{NdArray, Value, MAX_NDIM};

/// A built-in function, a closed set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Builtin {
    /// `np.array(object)`
    NpArray,
    /// `np.zeros(shape)`
    NpZeros,
    /// `np.ones(shape)`
    NpOnes,
    /// `np.arange([start,] stop[, step])`
    NpArange,
    /// `np.sum(a)`
    NpSum,
    /// `np.mean(a)`
    NpMean,
    /// `np.min(a)`
    NpMin,
    /// `np.max(a)`
    NpMax,
    /// `abs(x)`
    Abs,
    /// `len(x)`
    Len,
    /// `min(a, b, ...)` or `min(iterable)`
    Min,
    /// `max(a, b, ...)` or `max(iterable)`
    Max,
    /// `round(x[, ndigits])`
    Round,
    /// `sum(iterable)`
    Sum,
}

impl Builtin {
    /// The numpy-like functions.
    pub const NUMPY: &'static [Builtin] = &[
        Builtin::NpArray,
        Builtin::NpZeros,
        Builtin::NpOnes,
        Builtin::NpArange,
        Builtin::NpSum,
        Builtin::NpMean,
        Builtin::NpMin,
        Builtin::NpMax,
    ];
    /// Python's pure built-ins.
    pub const PYTHON: &'static [Builtin] = &[
        Builtin::Abs,
        Builtin::Len,
        Builtin::Min,
        Builtin::Max,
        Builtin::Round,
        Builtin::Sum,
    ];

    /// The function's own name (without a namespace prefix).
    pub fn name(self) -> &'static str {
        match self {
            Builtin::NpArray => "array",
            Builtin::NpZeros => "zeros",
            Builtin::NpOnes => "ones",
            Builtin::NpArange => "arange",
            Builtin::NpSum | Builtin::Sum => "sum",
            Builtin::NpMean => "mean",
            Builtin::NpMin | Builtin::Min => "min",
            Builtin::NpMax | Builtin::Max => "max",
            Builtin::Abs => "abs",
            Builtin::Len => "len",
            Builtin::Round => "round",
        }
    }

    /// Positional parameter names; `None` means "one or more values".
    fn params(self) -> Option<&'static [&'static str]> {
        match self {
            Builtin::NpArray => Some(&["object"]),
            Builtin::NpZeros | Builtin::NpOnes => Some(&["shape"]),
            Builtin::NpArange => Some(&["start", "stop", "step"]),
            Builtin::NpSum | Builtin::NpMean | Builtin::NpMin | Builtin::NpMax => Some(&["a"]),
            Builtin::Abs => Some(&["x"]),
            Builtin::Len => Some(&["obj"]),
            Builtin::Round => Some(&["number", "ndigits"]),
            Builtin::Sum => Some(&["iterable"]),
            Builtin::Min | Builtin::Max => None,
        }
    }

    fn required(self) -> usize {
        match self {
            Builtin::Round => 1,
            _ => 1,
        }
    }

    /// Check the call's shape before anything runs.
    pub fn check_shape(
        self,
        name: &str,
        positional: usize,
        keywords: &[(&str, Span)],
        call: Span,
    ) -> Result<(), Error> {
        let signature = self.signature(name);
        let err = |msg: String, span: Span| {
            Error::new(ErrorKind::Arguments, msg)
                .at(span)
                .with_hint(format!("signature: {signature}"))
        };
        let Some(params) = self.params() else {
            if let Some((k, span)) = keywords.first() {
                return Err(err(
                    format!("{name}() got an unexpected keyword argument `{k}`"),
                    *span,
                ));
            }
            if positional == 0 {
                return Err(err(
                    format!("{name}() expected at least 1 argument, got 0"),
                    call,
                ));
            }
            return Ok(());
        };
        if positional > params.len() {
            return Err(err(
                format!(
                    "{name}() takes at most {} arguments ({positional} given)",
                    params.len()
                ),
                call,
            ));
        }
        let mut given = positional;
        for (k, span) in keywords {
            match params.iter().position(|p| p == k) {
                Some(i) if i < positional => {
                    return Err(err(
                        format!("{name}() got multiple values for argument `{k}`"),
                        *span,
                    ))
                }
                Some(_) => given += 1,
                None => {
                    return Err(err(
                        format!("{name}() got an unexpected keyword argument `{k}`"),
                        *span,
                    ))
                }
            }
        }
        if given < self.required() {
            return Err(err(
                format!("{name}() missing required argument `{}`", params[0]),
                call,
            ));
        }
        Ok(())
    }

    /// `np.array(object)`: the signature shown in hints.
    pub fn signature(self, name: &str) -> String {
        match self.params() {
            Some(params) => format!("{name}({})", params.join(", ")),
            None => format!("{name}(*values)"),
        }
    }

    /// Call with already-evaluated arguments (shape already checked).
    pub fn call(
        self,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        limits: &Limits,
    ) -> Result<Value, Error> {
        let mut slots: Vec<Option<Value>> = args.into_iter().map(Some).collect();
        if let Some(params) = self.params() {
            slots.resize(params.len(), None);
            for (k, v) in kwargs {
                if let Some(i) = params.iter().position(|p| *p == k) {
                    slots[i] = Some(v);
                }
            }
        }
        let arg = |i: usize| slots.get(i).cloned().flatten();
        let first = arg(0).unwrap_or(Value::None);
        match self {
            Builtin::NpArray => match first {
                Value::Array(a) => Ok(Value::Array(a)),
                other => NdArray::from_nested(&other, limits.max_collection_len).map(Value::Array),
            },
            Builtin::NpZeros | Builtin::NpOnes => {
                let shape = shape_of(&first, limits)?;
                let fill = if self == Builtin::NpZeros { 0.0 } else { 1.0 };
                Ok(Value::Array(NdArray::Float(ArrayD::from_elem(
                    IxDyn(&shape),
                    fill,
                ))))
            }
            Builtin::NpArange => arange(arg(0), arg(1), arg(2), limits),
            Builtin::NpSum | Builtin::NpMean | Builtin::NpMin | Builtin::NpMax => {
                reduce(self, first, limits)
            }
            Builtin::Abs => match first {
                Value::Int(i) => Ok(i.checked_abs().map_or_else(
                    || Value::from_bigint(num_bigint::BigInt::from(i).magnitude().clone().into()),
                    Value::Int,
                )),
                Value::BigInt(b) => Ok(Value::from_bigint(b.magnitude().clone().into())),
                Value::Float(f) => Ok(Value::Float(f.abs())),
                Value::Bool(b) => Ok(Value::Int(i64::from(b))),
                other => Err(type_error("abs", &other)),
            },
            Builtin::Len => match &first {
                Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
                Value::Bytes(b) => Ok(Value::Int(b.len() as i64)),
                Value::List(v) | Value::Tuple(v) => Ok(Value::Int(v.len() as i64)),
                Value::Dict(d) => Ok(Value::Int(d.len() as i64)),
                Value::Set(s) => Ok(Value::Int(s.len() as i64)),
                Value::Array(a) => Ok(Value::Int(a.shape().first().copied().unwrap_or(0) as i64)),
                other => Err(type_error("len", other)),
            },
            Builtin::Round => {
                let ndigits = match arg(1) {
                    None | Some(Value::None) => None,
                    Some(Value::Int(n)) => Some(n),
                    Some(other) => return Err(type_error("round", &other)),
                };
                match (first, ndigits) {
                    (Value::Float(f), None) => Ok(round_half_even(f, 0)
                        .and_then(|r| (r.abs() < 9.2e18).then_some(Value::Int(r as i64)))
                        .unwrap_or(Value::Float(f))),
                    (Value::Float(f), Some(n)) => {
                        Ok(Value::Float(round_half_even(f, n).unwrap_or(f)))
                    }
                    (v @ (Value::Int(_) | Value::BigInt(_)), _) => Ok(v),
                    (other, _) => Err(type_error("round", &other)),
                }
            }
            Builtin::Min | Builtin::Max | Builtin::Sum => {
                let items = match (self, slots.len(), first) {
                    (Builtin::Sum, _, v) | (_, 1, v) => iterable(self.name(), v)?,
                    _ => slots.into_iter().flatten().collect(),
                };
                fold(self, items)
            }
        }
    }
}

fn type_error(name: &str, v: &Value) -> Error {
    Error::new(
        ErrorKind::Type,
        format!("{name}() does not accept {}", v.type_name()),
    )
}

fn iterable(name: &str, v: Value) -> Result<Vec<Value>, Error> {
    match v {
        Value::List(items) | Value::Tuple(items) => Ok(items),
        Value::Set(items) => Ok(items.into_iter().collect()),
        Value::Array(a) => Ok(a.to_f64().iter().map(|x| Value::Float(*x)).collect()),
        other => Err(Error::new(
            ErrorKind::Type,
            format!("{name}() expects an iterable, got {}", other.type_name()),
        )),
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// `min`, `max` and `sum` over ints and floats (ints stay ints while every item is an int).
fn fold(which: Builtin, items: Vec<Value>) -> Result<Value, Error> {
    if items.is_empty() {
        return match which {
            Builtin::Sum => Ok(Value::Int(0)),
            _ => Err(Error::new(
                ErrorKind::Value,
                format!("{}() arg is an empty sequence", which.name()),
            )),
        };
    }
    let all_int = items
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::Bool(_)));
    let mut floats = Vec::with_capacity(items.len());
    for v in &items {
        floats.push(as_f64(v).ok_or_else(|| type_error(which.name(), v))?);
    }
    if all_int {
        let mut ints = items.iter().map(|v| match v {
            Value::Int(i) => *i,
            Value::Bool(b) => i64::from(*b),
            _ => 0,
        });
        let result = match which {
            Builtin::Min => ints.min(),
            Builtin::Max => ints.max(),
            _ => ints.try_fold(0i64, i64::checked_add),
        };
        if let Some(r) = result {
            return Ok(Value::Int(r));
        }
    }
    let result = match which {
        Builtin::Min => floats.iter().copied().fold(f64::INFINITY, f64::min),
        Builtin::Max => floats.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        _ => floats.iter().sum(),
    };
    Ok(Value::Float(result))
}

fn reduce(which: Builtin, v: Value, limits: &Limits) -> Result<Value, Error> {
    let array = match v {
        Value::Array(a) => a,
        other => NdArray::from_nested(&other, limits.max_collection_len)?,
    };
    if array.is_empty() && which != Builtin::NpSum {
        return Err(Error::new(
            ErrorKind::Value,
            format!("np.{}() of an empty array", which.name()),
        ));
    }
    Ok(match (&array, which) {
        (NdArray::Int(a), Builtin::NpSum) => a
            .iter()
            .try_fold(0i64, |acc, x| acc.checked_add(*x))
            .map_or_else(|| Value::Float(array.to_f64().sum()), Value::Int),
        (NdArray::Int(a), Builtin::NpMin) => Value::Int(a.iter().copied().min().unwrap_or(0)),
        (NdArray::Int(a), Builtin::NpMax) => Value::Int(a.iter().copied().max().unwrap_or(0)),
        (NdArray::Bool(a), Builtin::NpSum) => Value::Int(a.iter().filter(|b| **b).count() as i64),
        (_, Builtin::NpSum) => Value::Float(array.to_f64().sum()),
        (_, Builtin::NpMin) => {
            Value::Float(array.to_f64().iter().copied().fold(f64::INFINITY, f64::min))
        }
        (_, Builtin::NpMax) => Value::Float(
            array
                .to_f64()
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
        ),
        _ => Value::Float(array.to_f64().mean().unwrap_or(f64::NAN)),
    })
}

fn shape_of(v: &Value, limits: &Limits) -> Result<Vec<usize>, Error> {
    let dims: Vec<i64> = match v {
        Value::Int(n) => vec![*n],
        Value::List(items) | Value::Tuple(items) if items.len() <= MAX_NDIM => items
            .iter()
            .map(|d| match d {
                Value::Int(n) => Ok(*n),
                other => Err(type_error("shape", other)),
            })
            .collect::<Result<_, _>>()?,
        other => return Err(type_error("shape", other)),
    };
    // Counted in u64 (so that a 32-bit guest and a 64-bit host agree), zero dimensions as 1:
    // `np.zeros((10**5, 10**5, 0))` has no elements, but walking it visits 10**10 empty rows.
    let too_many = |n: u64| Error::limit(LimitKind::CollectionLen, limits.max_collection_len, n);
    let mut total: u64 = 1;
    let mut shape = Vec::with_capacity(dims.len());
    for d in dims {
        let d = u64::try_from(d)
            .map_err(|_| Error::new(ErrorKind::Value, "negative dimensions are not allowed"))?;
        total = total.saturating_mul(d.max(1));
        match usize::try_from(d) {
            Ok(d) if d <= limits.max_collection_len => shape.push(d),
            _ => return Err(too_many(d)),
        }
    }
    if total > limits.max_collection_len as u64 {
        return Err(too_many(total));
    }
    Ok(shape)
}

fn arange(
    a: Option<Value>,
    b: Option<Value>,
    c: Option<Value>,
    limits: &Limits,
) -> Result<Value, Error> {
    let (start, stop) = match (a, b) {
        (Some(stop), None | Some(Value::None)) => (Value::Int(0), stop),
        (Some(start), Some(stop)) => (start, stop),
        _ => return Err(Error::new(ErrorKind::Arguments, "arange() requires stop")),
    };
    let step = c.unwrap_or(Value::Int(1));
    let num = |v: &Value| as_f64(v).ok_or_else(|| type_error("arange", v));
    let (s, e, st) = (num(&start)?, num(&stop)?, num(&step)?);
    if st == 0.0 || !st.is_finite() || !s.is_finite() || !e.is_finite() {
        return Err(Error::new(
            ErrorKind::Value,
            "arange() needs finite bounds and a non-zero step",
        ));
    }
    let count = ((e - s) / st).ceil().max(0.0);
    if count > limits.max_collection_len as f64 {
        return Err(Error::limit(
            LimitKind::CollectionLen,
            limits.max_collection_len,
            count,
        ));
    }
    let n = count as usize;
    let all_int = [&start, &stop, &step]
        .iter()
        .all(|v| matches!(v, Value::Int(_)));
    Ok(Value::Array(if all_int {
        let (s, st) = (s as i64, st as i64);
        NdArray::Int(ArrayD::from_shape_fn(IxDyn(&[n]), |i| s + st * i[0] as i64))
    } else {
        NdArray::Float(ArrayD::from_shape_fn(IxDyn(&[n]), |i| s + st * i[0] as f64))
    }))
}

/// Round half to even at `ndigits` decimals, as Python's `round` does.
fn round_half_even(f: f64, ndigits: i64) -> Option<f64> {
    if !f.is_finite() {
        return None;
    }
    let scale = 10f64.powi(ndigits.clamp(-308, 308) as i32);
    let x = f * scale;
    if !x.is_finite() {
        return Some(f);
    }
    let r = x.round();
    let r = if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    };
    Some(r / scale)
}

//! Built-in functions an expression may call when the context allows them: numpy-like array
//! helpers and Python's pure numeric built-ins. Every allocation is size-checked first.

use ndarray::{ArrayD, IxDyn};
use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::ToPrimitive;
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
    /// `sum(iterable, start=0)`
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

    /// The built-in a name denotes: `numpy.max` (or `np.max`) numpy's, `max` Python's, so
    /// that a context entry acts as the function it was given (`max(3, 5)` is 5).
    ///
    /// ```
    /// use fexpr::value::builtins::Builtin;
    /// assert_eq!(Builtin::from_name("max"), Some(Builtin::Max));
    /// assert_eq!(Builtin::from_name("numpy.max"), Some(Builtin::NpMax));
    /// assert_eq!(Builtin::from_name("np.zeros"), Some(Builtin::NpZeros));
    /// assert_eq!(Builtin::from_name("zeros"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Builtin> {
        let (set, name) = match name.split_once('.') {
            Some(("numpy" | "np", name)) => (Builtin::NUMPY, name),
            Some(_) => return None,
            None => (Builtin::PYTHON, name),
        };
        set.iter().copied().find(|b| b.name() == name)
    }

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
            Builtin::Sum => Some(&["iterable", "start"]),
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
                other => NdArray::from_nested(&other, limits.max_collection_len).map(Value::from),
            },
            Builtin::NpZeros | Builtin::NpOnes => {
                let shape = shape_of(&first, limits)?;
                array_fits(shape.iter().product(), limits)?;
                let fill = if self == Builtin::NpZeros { 0.0 } else { 1.0 };
                Ok(Value::from(NdArray::Float(ArrayD::from_elem(
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
                    // Beyond any float's or int's digits: as far as it goes.
                    Some(Value::BigInt(n)) => Some(if n.sign() == Sign::Minus {
                        i64::MIN
                    } else {
                        i64::MAX
                    }),
                    Some(other) => return Err(type_error("round", &other)),
                };
                match (first, ndigits) {
                    (Value::Float(f), None) => round_float(f, 0)
                        .map(|q| Value::from_bigint(q.0))
                        .ok_or_else(|| {
                            Error::new(
                                ErrorKind::Value,
                                "cannot convert a non-finite float to an int",
                            )
                        }),
                    (Value::Float(f), Some(n)) => Ok(Value::Float(round_float_to(f, n))),
                    (Value::Bool(b), n) => Ok(round_int(BigInt::from(i64::from(b)), n)),
                    (Value::Int(i), n) => Ok(round_int(BigInt::from(i), n)),
                    (Value::BigInt(b), n) => Ok(round_int(*b, n)),
                    (other, _) => Err(type_error("round", &other)),
                }
            }
            Builtin::Sum => {
                // Python adds `start` first: `sum([1, 2], 10)` is `10 + 1 + 2`.
                let start = arg(1).unwrap_or(Value::Int(0));
                let mut items = iterable(self.name(), first)?;
                items.insert(0, start);
                fold(self, items, limits)
            }
            Builtin::Min | Builtin::Max => {
                let items = match (slots.len(), first) {
                    (1, v) => iterable(self.name(), v)?,
                    _ => slots.into_iter().flatten().collect(),
                };
                fold(self, items, limits)
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

/// `min`, `max` and `sum` as Python computes them: ints stay (big) ints, an int and a float
/// sum to a float, `min`/`max` return the item itself (`max(3, 2.5)` is `3`).
fn fold(which: Builtin, items: Vec<Value>, limits: &Limits) -> Result<Value, Error> {
    if items.is_empty() {
        return match which {
            Builtin::Sum => Ok(Value::Int(0)),
            _ => Err(Error::new(
                ErrorKind::Value,
                format!("{}() arg is an empty sequence", which.name()),
            )),
        };
    }
    for v in &items {
        if !matches!(
            v,
            Value::Int(_) | Value::BigInt(_) | Value::Bool(_) | Value::Float(_)
        ) {
            return Err(type_error(which.name(), v));
        }
    }
    if which != Builtin::Sum {
        let mut best = 0;
        for (i, v) in items.iter().enumerate().skip(1) {
            let order = items
                .get(best)
                .map_or(std::cmp::Ordering::Equal, |b| compare(v, b));
            let better = match which {
                Builtin::Min => order == std::cmp::Ordering::Less,
                _ => order == std::cmp::Ordering::Greater,
            };
            if better {
                best = i;
            }
        }
        return Ok(items.into_iter().nth(best).unwrap_or(Value::None));
    }
    // Python adds left to right: exactly while the items are ints, in floats from the first
    // float on.
    let mut small: Option<i64> = Some(0);
    let mut big = BigInt::from(0);
    let mut float: Option<f64> = None;
    for v in &items {
        let item = match v {
            Value::Int(i) => BigInt::from(*i),
            Value::Bool(b) => BigInt::from(i64::from(*b)),
            Value::BigInt(b) => (**b).clone(),
            Value::Float(f) => {
                let so_far = float.unwrap_or_else(|| big.to_f64().unwrap_or(f64::INFINITY));
                float = Some(so_far + f);
                continue;
            }
            _ => BigInt::from(0),
        };
        match float.as_mut() {
            Some(total) => *total += item.to_f64().unwrap_or(f64::INFINITY),
            None => {
                small = small.and_then(|s| item.to_i64().and_then(|i| s.checked_add(i)));
                big += item;
            }
        }
    }
    if let Some(total) = float {
        return Ok(Value::Float(total));
    }
    if let Some(total) = small {
        return Ok(Value::Int(total));
    }
    let digits = (big.bits() as f64 * std::f64::consts::LOG10_2).floor() as usize + 1;
    if digits > limits.max_int_digits {
        return Err(Error::limit(
            LimitKind::IntDigits,
            limits.max_int_digits,
            digits,
        ));
    }
    Ok(Value::from_bigint(big))
}

/// The order of two numbers (ints of any size, floats, bools), exact where they are ints.
fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    let int = |v: &Value| match v {
        Value::Int(i) => Some(BigInt::from(*i)),
        Value::Bool(x) => Some(BigInt::from(i64::from(*x))),
        Value::BigInt(x) => Some((**x).clone()),
        _ => None,
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let f = |v: &Value| match v {
                Value::BigInt(x) => x.to_f64().unwrap_or(f64::NAN),
                other => as_f64(other).unwrap_or(f64::NAN),
            };
            f(a).partial_cmp(&f(b)).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
}

fn reduce(which: Builtin, v: Value, limits: &Limits) -> Result<Value, Error> {
    let array = match v {
        Value::Array(a) => *a,
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

/// An array of `elements` (8 bytes each, as evaluation charges it) is within
/// `max_eval_bytes`: checked before it is allocated.
fn array_fits(elements: usize, limits: &Limits) -> Result<(), Error> {
    let bytes = (elements as u64)
        .saturating_mul(8)
        .saturating_add(crate::value::NODE_BYTES as u64);
    if bytes > limits.max_eval_bytes as u64 {
        return Err(Error::limit_message(
            LimitKind::EvalBytes,
            format!(
                "max_eval_bytes limit exceeded: an array of {elements} elements would take \
                 {bytes} bytes > {} (refused before it is made)",
                limits.max_eval_bytes
            ),
        ));
    }
    Ok(())
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
    let too_many =
        |count: f64| Error::limit(LimitKind::CollectionLen, limits.max_collection_len, count);
    if let (Value::Int(start), Value::Int(stop), Value::Int(step)) = (&start, &stop, &step) {
        // Ints are counted and made exactly (past 2**53 a float cannot tell them apart).
        let (start, stop, step) = (i128::from(*start), i128::from(*stop), i128::from(*step));
        let count = match step > 0 {
            true => (stop - start + step - 1).div_euclid(step),
            false => (start - stop - step - 1).div_euclid(-step),
        }
        .max(0);
        let n = match usize::try_from(count) {
            Ok(n) if n <= limits.max_collection_len => n,
            _ => return Err(too_many(count as f64)),
        };
        array_fits(n, limits)?;
        // Every element lies between `start` and `stop`, so it is an i64.
        let at = |i: usize| i64::try_from(start + step * i as i128).unwrap_or_default();
        return Ok(Value::from(NdArray::Int(ArrayD::from_shape_fn(
            IxDyn(&[n]),
            |i| at(i[0]),
        ))));
    }
    let count = ((e - s) / st).ceil().max(0.0);
    if count > limits.max_collection_len as f64 {
        return Err(too_many(count));
    }
    let n = count as usize;
    array_fits(n, limits)?;
    Ok(Value::from(NdArray::Float(ArrayD::from_shape_fn(
        IxDyn(&[n]),
        |i| s + st * i[0] as f64,
    ))))
}

/// `f` rounded half to even at `ndigits` decimals, as Python's `round(f, ndigits)`: on the
/// exact binary value of `f` (`round(4.35, 1)` is 4.3, since 4.35 is 4.3499999...), then back
/// to the nearest float. `None` for a float that is not finite. The result is the scaled
/// integer `q` (the value is `q * 10**-ndigits`).
fn round_float(f: f64, ndigits: i64) -> Option<(BigInt, i64)> {
    if !f.is_finite() {
        return None;
    }
    // f = mantissa * 2**exponent exactly.
    let bits = f.abs().to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, exponent) = match raw_exp {
        0 => (fraction, -1074),
        e => (fraction | (1u64 << 52), e - 1075),
    };
    let two = |k: i64| BigInt::from(1) << usize::try_from(k.max(0)).unwrap_or(0);
    let ten = |k: i64| BigInt::from(10).pow(u32::try_from(k.max(0)).unwrap_or(0));
    // f * 10**ndigits = num / den.
    let num = BigInt::from(mantissa) * two(exponent) * ten(ndigits);
    let den = two(-exponent) * ten(-ndigits);
    let (mut q, r) = num.div_rem(&den);
    let twice = r * 2;
    if twice > den || (twice == den && q.is_odd()) {
        q += 1;
    }
    if f.is_sign_negative() {
        q = -q;
    }
    Some((q, ndigits))
}

/// Python's `round(f, ndigits)` for a float: the same float when `ndigits` is past every
/// digit a float has, a zero of `f`'s sign when it is before them.
fn round_float_to(f: f64, ndigits: i64) -> f64 {
    if !f.is_finite() || ndigits > 323 {
        return f;
    }
    if ndigits < -308 {
        return 0.0 * f;
    }
    match round_float(f, ndigits) {
        // The decimal `q`e`-ndigits` read back as the nearest float; a zero keeps its sign.
        Some((q, n)) if q.sign() != Sign::NoSign => format!("{q}e{}", -n).parse().unwrap_or(f),
        _ => 0.0 * f,
    }
}

/// Python's `round(i, ndigits)` for an int: itself for `ndigits >= 0`, else the nearest
/// multiple of `10**-ndigits`, halves to the even multiple (`round(25, -1)` is 20).
fn round_int(i: BigInt, ndigits: Option<i64>) -> Value {
    let k = match ndigits {
        Some(n) if n < 0 => n.unsigned_abs(),
        _ => return Value::from_bigint(i),
    };
    // Past the int's own digits the result is 0 (without computing 10**k).
    let digits = (i.bits() as f64 * std::f64::consts::LOG10_2).floor() as u64 + 1;
    if k > digits {
        return Value::Int(0);
    }
    let unit = BigInt::from(10).pow(u32::try_from(k).unwrap_or(u32::MAX));
    let (mut q, r) = i.div_mod_floor(&unit);
    let twice = r * 2;
    if twice > unit || (twice == unit && q.is_odd()) {
        q += 1;
    }
    Value::from_bigint(q * unit)
}

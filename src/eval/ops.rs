//! Operators: binary and unary operators on values by Python's rules (ints of any size,
//! finite floats, sequences repeated and concatenated, sets), every result size-checked.

use super::*;

impl Evaluator<'_> {
    pub(super) fn binary(
        &self,
        op: BinaryOp,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<Value, Error> {
        use Value as V;
        let limits = self.limits;
        let result = match (op, a, b) {
            (BinaryOp::Add, V::Str(x), V::Str(y)) => {
                self.check_bytes(wide(x.len()).saturating_add(wide(y.len())), span)?;
                V::Str(x + &y)
            }
            (BinaryOp::Add, V::Bytes(mut x), V::Bytes(y)) => {
                self.check_bytes(wide(x.len()).saturating_add(wide(y.len())), span)?;
                x.extend(y);
                V::Bytes(x)
            }
            (BinaryOp::Add, V::List(mut x), V::List(y)) => {
                self.check_elements(&x, &y, 1, span)?;
                x.extend(y);
                V::List(x)
            }
            (BinaryOp::Add, V::Tuple(mut x), V::Tuple(y)) => {
                self.check_elements(&x, &y, 1, span)?;
                x.extend(y);
                V::Tuple(x)
            }
            (
                BinaryOp::Mul,
                V::Int(n),
                s @ (V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_)),
            )
            | (
                BinaryOp::Mul,
                s @ (V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_)),
                V::Int(n),
            ) => {
                // Sizes are checked in 64 bits, so that the guest (32-bit) reports what native does.
                let times = n.max(0).unsigned_abs();
                let n = usize::try_from(times).unwrap_or(usize::MAX);
                match s {
                    V::Str(x) => {
                        self.check_bytes(wide(x.len()).saturating_mul(times), span)?;
                        V::Str(x.repeat(n))
                    }
                    V::Bytes(x) => {
                        self.check_bytes(wide(x.len()).saturating_mul(times), span)?;
                        V::Bytes(x.repeat(n))
                    }
                    V::List(x) => {
                        self.check_elements(&x, &[], times, span)?;
                        V::List(repeat(&x, n))
                    }
                    V::Tuple(x) => {
                        self.check_elements(&x, &[], times, span)?;
                        V::Tuple(repeat(&x, n))
                    }
                    _ => V::None,
                }
            }
            (BinaryOp::Mul, V::BigInt(_), V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_))
            | (BinaryOp::Mul, V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_), V::BigInt(_)) => {
                return Err(Error::limit(
                    LimitKind::CollectionLen,
                    limits.max_collection_len,
                    "a repeat count beyond 64 bits",
                )
                .at(span))
            }
            (op, a, b) => return self.arith(op, a, b, span),
        };
        self.charge(shallow_size(&result), span)?;
        Ok(result)
    }

    pub(super) fn check_bytes(&self, len: u64, span: Span) -> Result<(), Error> {
        if len > wide(self.limits.max_str_bytes) {
            return Err(Error::limit(LimitKind::StrBytes, self.limits.max_str_bytes, len).at(span));
        }
        Ok(())
    }

    fn check_elements(
        &self,
        x: &[Value],
        y: &[Value],
        times: u64,
        span: Span,
    ) -> Result<(), Error> {
        let count = |items: &[Value]| {
            items
                .iter()
                .map(|v| wide(v.element_count()))
                .fold(0u64, u64::saturating_add)
        };
        let total = count(x).saturating_mul(times).saturating_add(count(y));
        if total > wide(self.limits.max_collection_len) {
            return Err(Error::limit(
                LimitKind::CollectionLen,
                self.limits.max_collection_len,
                total,
            )
            .at(span));
        }
        let bytes = x
            .iter()
            .map(|v| wide(v.approx_size()))
            .fold(0u64, u64::saturating_add)
            .saturating_mul(times);
        self.charge_wide(bytes, span)
    }

    fn arith(&self, op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value, Error> {
        let (x, y) = match (num(&a), num(&b)) {
            (Some(x), Some(y)) => (x, y),
            _ => {
                return Err(Error::new(
                    ErrorKind::Type,
                    format!(
                        "unsupported operand types for {}: `{}` and `{}`",
                        op.symbol(),
                        a.type_name(),
                        b.type_name()
                    ),
                )
                .at(span))
            }
        };
        let result = match (x, y) {
            (Num::Int(x), Num::Int(y)) => self.int_op(op, x, y),
            (x, y) => float_op(op, x.to_f64(), y.to_f64()),
        };
        let v = result.map_err(|e| e.at(span))?;
        if let Some(bad) = v.find_non_finite() {
            let operation = format!(
                "`{} {} {}`",
                clip(&a.repr(), 40),
                op.symbol(),
                clip(&b.repr(), 40)
            );
            return Err(not_finite(&bad, &operation, span));
        }
        if let Value::BigInt(b) = &v {
            self.check_digits(b, span)?;
            self.charge((b.bits() / 8) as usize, span)?;
        }
        Ok(v)
    }

    fn check_digits(&self, b: &BigInt, span: Span) -> Result<(), Error> {
        let digits = (b.bits() as f64 * std::f64::consts::LOG10_2).floor() as usize + 1;
        if digits > self.limits.max_int_digits {
            return Err(
                Error::limit(LimitKind::IntDigits, self.limits.max_int_digits, digits).at(span),
            );
        }
        Ok(())
    }

    fn int_op(&self, op: BinaryOp, x: BigInt, y: BigInt) -> Result<Value, Error> {
        let zero = || Error::new(ErrorKind::Value, "division by zero");
        Ok(match op {
            BinaryOp::Add => Value::from_bigint(x + y),
            BinaryOp::Sub => Value::from_bigint(x - y),
            BinaryOp::Mul => {
                let bits = x.bits().saturating_add(y.bits());
                if bits as f64 * std::f64::consts::LOG10_2 > self.limits.max_int_digits as f64 + 1.0
                {
                    return Err(Error::limit(
                        LimitKind::IntDigits,
                        self.limits.max_int_digits,
                        "the product's digits",
                    ));
                }
                Value::from_bigint(x * y)
            }
            BinaryOp::Div => {
                if y.is_zero() {
                    return Err(zero());
                }
                Value::Float(int_true_div(&x, &y))
            }
            BinaryOp::FloorDiv => {
                if y.is_zero() {
                    return Err(zero());
                }
                Value::from_bigint(x.div_floor(&y))
            }
            BinaryOp::Mod => {
                if y.is_zero() {
                    return Err(zero());
                }
                Value::from_bigint(x.mod_floor(&y))
            }
            BinaryOp::Pow => {
                if y.is_negative() {
                    if x.is_zero() {
                        return Err(Error::new(
                            ErrorKind::Value,
                            "0 cannot be raised to a negative power",
                        ));
                    }
                    return float_op(
                        op,
                        x.to_f64().unwrap_or(f64::INFINITY),
                        y.to_f64().unwrap_or(f64::NEG_INFINITY),
                    );
                }
                let magnitude = x.magnitude();
                if magnitude.bits() <= 1 {
                    // 0, 1 and -1 to any power.
                    let odd = y.is_odd();
                    return Ok(Value::from_bigint(if x.is_zero() && !y.is_zero() {
                        BigInt::zero()
                    } else if x.is_negative() && odd {
                        BigInt::from(-1)
                    } else {
                        BigInt::from(1)
                    }));
                }
                let exp = y.to_u64().unwrap_or(u64::MAX);
                let digits = (magnitude.bits() - 1) as f64 * exp as f64 * std::f64::consts::LOG10_2;
                if digits > self.limits.max_int_digits as f64 {
                    return Err(Error::limit(
                        LimitKind::IntDigits,
                        self.limits.max_int_digits,
                        format!("about {digits:.0} digits"),
                    ));
                }
                Value::from_bigint(num_traits::pow(x, exp as usize))
            }
        })
    }
}

pub(super) const NODE: usize = crate::value::NODE_BYTES;

/// Why a value with an infinite or NaN float is refused.
pub(super) const FINITE_HINT: &str =
    "fexpr's floats are finite (JSON has no inf or NaN): use smaller operands or an int";

/// The error for a non-finite float in `whole` (an operation, a result, a variable) at `span`.
pub(super) fn not_finite(bad: &crate::value::NonFinite, whole: &str, span: Span) -> Error {
    let mut e = bad.error(whole);
    e.message.push_str(": floats must be finite");
    e.at(span).with_hint(FINITE_HINT)
}

fn shallow_size(v: &Value) -> usize {
    match v {
        Value::Str(s) => s.len(),
        Value::Bytes(b) => b.len(),
        Value::List(items) | Value::Tuple(items) => items.len().saturating_mul(NODE),
        _ => NODE,
    }
}

/// `usize` as `u64` (lossless on every target fexpr runs on).
pub(super) fn wide(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn repeat(items: &[Value], n: usize) -> Vec<Value> {
    if items.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(items.len().saturating_mul(n));
    for _ in 0..n {
        out.extend_from_slice(items);
    }
    out
}

pub(super) fn unhashable(v: &Value, span: Span) -> Error {
    Error::new(
        ErrorKind::Type,
        format!("unhashable type: `{}`", v.type_name()),
    )
    .at(span)
}

/// A number operand: ints (bools count as ints, as in Python) or floats.
enum Num {
    Int(BigInt),
    Float(f64),
}

impl Num {
    fn to_f64(&self) -> f64 {
        match self {
            Num::Int(i) => i.to_f64().unwrap_or(if i.is_negative() {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }),
            Num::Float(f) => *f,
        }
    }
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(BigInt::from(u8::from(*b)))),
        Value::Int(i) => Some(Num::Int(BigInt::from(*i))),
        Value::BigInt(b) => Some(Num::Int((**b).clone())),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

fn int_true_div(x: &BigInt, y: &BigInt) -> f64 {
    match (x.to_f64(), y.to_f64()) {
        (Some(a), Some(b)) if a.abs() < 9e15 && b.abs() < 9e15 => a / b,
        _ => {
            // Scale both down to keep precision for large operands.
            let shift = x.bits().max(y.bits()).saturating_sub(60);
            let a = (x >> shift).to_f64().unwrap_or(0.0);
            let b = (y >> shift).to_f64().unwrap_or(0.0);
            a / b
        }
    }
}

fn float_op(op: BinaryOp, x: f64, y: f64) -> Result<Value, Error> {
    let zero = || Error::new(ErrorKind::Value, "float division by zero");
    let r = match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => {
            if y == 0.0 {
                return Err(zero());
            }
            x / y
        }
        BinaryOp::FloorDiv => {
            if y == 0.0 {
                return Err(zero());
            }
            (x / y).floor()
        }
        BinaryOp::Mod => {
            if y == 0.0 {
                return Err(Error::new(ErrorKind::Value, "float modulo by zero"));
            }
            let m = x % y;
            if m != 0.0 && (m < 0.0) != (y < 0.0) {
                m + y
            } else {
                m
            }
        }
        BinaryOp::Pow => {
            if x == 0.0 && y < 0.0 {
                return Err(Error::new(
                    ErrorKind::Value,
                    "0.0 cannot be raised to a negative power",
                ));
            }
            if x < 0.0 && y.fract() != 0.0 {
                return Err(Error::new(
                    ErrorKind::Value,
                    "a negative number to a fractional power is complex",
                ));
            }
            let r = x.powf(y);
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(Error::new(
                    ErrorKind::Value,
                    "numerical result out of range",
                ));
            }
            r
        }
    };
    Ok(Value::Float(r))
}

pub(super) fn unary(op: UnaryOp, v: Value) -> Result<Value, Error> {
    match (op, v) {
        (UnaryOp::Not, v) => Ok(Value::Bool(!v.truthy())),
        (UnaryOp::Pos, Value::Bool(b)) => Ok(Value::Int(i64::from(b))),
        (UnaryOp::Pos, v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_))) => Ok(v),
        (UnaryOp::Neg, Value::Bool(b)) => Ok(Value::Int(-i64::from(b))),
        (UnaryOp::Neg, Value::Int(i)) => Ok(i
            .checked_neg()
            .map_or_else(|| Value::from_bigint(-BigInt::from(i)), Value::Int)),
        (UnaryOp::Neg, Value::BigInt(b)) => Ok(Value::from_bigint(-*b)),
        (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnaryOp::Neg | UnaryOp::Pos, Value::Array(a)) if op == UnaryOp::Pos => Ok(Value::Array(a)),
        (UnaryOp::Neg, Value::Array(a)) => Ok(Value::from(match *a {
            NdArray::Int(x) => NdArray::Int(x.mapv(i64::wrapping_neg)),
            NdArray::Float(x) => NdArray::Float(x.mapv(|f| -f)),
            NdArray::Bool(_) => {
                return Err(Error::new(
                    ErrorKind::Type,
                    "the numpy boolean negative is not supported",
                ))
            }
        })),
        (op, v) => Err(Error::new(
            ErrorKind::Type,
            format!(
                "bad operand type for unary {}: `{}`",
                op.symbol().trim(),
                v.type_name()
            ),
        )),
    }
}

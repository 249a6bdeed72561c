//! Checking and coercing one value against a [`Type`]: a dict becomes a record, an int a
//! float, a nested list an ndarray; bounds, enums, unions and recursive definitions checked
//! within a depth and a step budget.

use super::*;

/// How deep a value is checked: value levels plus the alternatives and definitions passed on
/// the way (about three per level of a recursive filter). Every input path bounds the values
/// it makes to `Limits::max_depth` levels (100); the check is recursive, and this keeps it
/// within a thread's stack in a debug build (about 10 KiB per filter level there).
const MAX_CHECK_DEPTH: usize = 384;

/// Steps one check may take per element of the value (plus a constant): enough for every
/// alternative of a few unions per value, not for retrying them on every nested level.
const CHECK_STEPS_PER_ELEMENT: usize = 16;
/// Where a value sits inside an argument, for error messages (`p1`, `p1.x`, `arr[0]`, `d['k']`);
/// written out only when an error names it.
pub(super) enum Path<'a> {
    /// The argument or value itself.
    Name(&'a str),
    /// A field of a record (or a record read as a dict).
    Field(&'a Path<'a>, &'a str),
    /// An element of a list, tuple or set.
    Index(&'a Path<'a>, usize),
    /// The value under a dict key.
    Key(&'a Path<'a>, &'a Value),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Paths are at most MAX_CHECK_DEPTH long: `coerce` stops descending past it.
        match self {
            Path::Name(name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
            Path::Key(parent, key) => write!(f, "{parent}[{}]", clip(&key.repr(), 40)),
        }
    }
}

/// The budget of one check: steps taken, and the most it may take.
pub(super) struct Checker {
    steps: Cell<usize>,
    max_steps: usize,
}

impl Checker {
    /// A budget proportional to the value's size.
    pub(super) fn for_value(value: &Value) -> Checker {
        Checker {
            steps: Cell::new(0),
            max_steps: value
                .element_count()
                .saturating_mul(CHECK_STEPS_PER_ELEMENT)
                .saturating_add(4096),
        }
    }

    /// One step of the check of `path`, `depth` levels down.
    fn step(&self, path: &Path, depth: usize) -> Result<(), Error> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > self.max_steps {
            return Err(Error::new(
                ErrorKind::Limit,
                format!(
                    "checking `{}` against its schema takes more than {} steps \
                     (alternatives retried on nested values); it is refused",
                    clip(&path.to_string(), 60),
                    self.max_steps
                ),
            ));
        }
        if depth > MAX_CHECK_DEPTH {
            return Err(Error::new(
                ErrorKind::Limit,
                format!(
                    "`{}` nests deeper than its schema is checked ({MAX_CHECK_DEPTH} levels); \
                     it is refused",
                    clip(&path.to_string(), 60)
                ),
            ));
        }
        Ok(())
    }
}

/// Check `value` against `ty`, `depth` levels down. Each kind of type has its own function,
/// so that the frames of this recursion stay small (a value may nest as deep as the check).
pub(super) fn coerce(
    ty: &Type,
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    cx.step(path, depth)?;
    let next = depth + 1;
    match ty {
        Type::Any => Ok(value),
        Type::List(item) => match value {
            Value::List(items) | Value::Tuple(items) => {
                coerce_items(item, items, path, next, cx).map(Value::List)
            }
            other => Err(mismatch(ty, &other, path)),
        },
        Type::Set(item) => coerce_set(ty, item, value, path, next, cx),
        Type::Tuple(types) => coerce_tuple(ty, types, value, path, next, cx),
        Type::Dict(item) => coerce_dict(ty, item, value, path, next, cx),
        Type::Record(rt) => coerce_to_record(ty, rt, value, path, next, cx),
        Type::Union(alts) => coerce_union(ty, alts, value, path, next, cx),
        Type::Bounded(inner, bounds) => coerce_bounded(inner, bounds, value, path, next, cx),
        Type::All(parts) => coerce_all(parts, value, path, next, cx),
        Type::Recursive(r) => coerce_recursive(r, value, path, next, cx),
        Type::Unchecked(reason) => Err(cannot_check(path, reason)),
        _ => coerce_scalar(ty, value, path),
    }
}

/// `` `x` expects int, got str 'a' ``.
#[inline(never)]
fn mismatch(ty: &Type, value: &Value, path: &Path) -> Error {
    let e = Error::new(
        ErrorKind::Type,
        format!(
            "`{}` expects {}, got {}",
            clip(&path.to_string(), 60),
            ty,
            describe(value)
        ),
    );
    match ty {
        // The members (the first few of a long enum, each clipped), so a model can pick one.
        Type::Enum(values) => {
            let mut members: Vec<String> = values
                .iter()
                .take(HINT_MEMBERS)
                .map(|v| clip(&v.repr(), 40))
                .collect();
            if values.len() > HINT_MEMBERS {
                members.push(format!("… {} more", values.len() - HINT_MEMBERS));
            }
            e.with_hint(format!("use one of {}", members.join(", ")))
        }
        _ => e,
    }
}

#[inline(never)]
fn cannot_check(path: &Path, reason: &str) -> Error {
    Error::new(
        ErrorKind::Type,
        format!(
            "`{}` cannot be checked: {reason}; no value is accepted",
            clip(&path.to_string(), 60)
        ),
    )
    .with_hint("fexpr refuses what it cannot check; simplify the schema or use another tool")
}

/// Scalars, arrays and enums: no recursion.
#[inline(never)]
fn coerce_scalar(ty: &Type, value: Value, path: &Path) -> Result<Value, Error> {
    match (ty, value) {
        (Type::None, Value::None) => Ok(Value::None),
        (Type::Bool, v @ Value::Bool(_)) => Ok(v),
        (Type::Int, v @ (Value::Int(_) | Value::BigInt(_))) => Ok(v),
        (Type::Float, v @ Value::Float(_)) => Ok(v),
        // PEP 484's numeric tower: an int is a float argument as it is (Python passes `1` to
        // `def f(x: float)`; Rust's `f64` parameters read it as 1.0).
        (Type::Float, v @ Value::Int(_)) => Ok(v),
        // As Python's `float(n)`: the nearest float, if there is a finite one.
        (Type::Float, Value::BigInt(b)) => match num_traits::ToPrimitive::to_f64(&*b) {
            Some(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => Err(Error::new(
                ErrorKind::Value,
                format!(
                    "`{}` = {} is too large for a float (beyond 1.8e308)",
                    clip(&path.to_string(), 60),
                    clip(&b.to_string(), 40)
                ),
            )),
        },
        (Type::Str, v @ Value::Str(_)) => Ok(v),
        (Type::Bytes, v @ Value::Bytes(_)) => Ok(v),
        (Type::Array, v @ Value::Array(_)) => Ok(v),
        (Type::Array, v @ (Value::List(_) | Value::Tuple(_))) => {
            NdArray::from_nested(&v, usize::MAX)
                .map(Value::from)
                .map_err(|e| Error::new(e.kind, format!("`{path}`: {}", e.message)))
        }
        (Type::Enum(values), v) if values.contains(&v) => Ok(v),
        (Type::Enum(values), Value::Int(i)) if values.contains(&Value::Float(i as f64)) => {
            Ok(Value::Float(i as f64))
        }
        (_, v) => Err(mismatch(ty, &v, path)),
    }
}

#[inline(never)]
fn coerce_set(
    ty: &Type,
    item: &Type,
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    match value {
        Value::Set(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| coerce(item, v, &Path::Index(path, i), depth, cx))
            .collect::<Result<_, _>>()
            .map(Value::Set),
        Value::List(items) | Value::Tuple(items) => {
            let items = coerce_items(item, items, path, depth, cx)?;
            if let Some(bad) = items.iter().find(|v| !v.is_hashable()) {
                return Err(Error::new(
                    ErrorKind::Type,
                    format!("`{path}`: unhashable type `{}` in a set", bad.type_name()),
                ));
            }
            Ok(Value::Set(items.into_iter().collect()))
        }
        other => Err(mismatch(ty, &other, path)),
    }
}

#[inline(never)]
fn coerce_tuple(
    ty: &Type,
    types: &[Type],
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    match value {
        Value::List(items) | Value::Tuple(items) if types.len() == items.len() => types
            .iter()
            .zip(items)
            .enumerate()
            .map(|(i, (t, v))| coerce(t, v, &Path::Index(path, i), depth, cx))
            .collect::<Result<_, _>>()
            .map(Value::Tuple),
        other => Err(mismatch(ty, &other, path)),
    }
}

#[inline(never)]
fn coerce_dict(
    ty: &Type,
    item: &Type,
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    match value {
        Value::Dict(map) => map
            .into_iter()
            .map(|(k, v)| {
                let v = coerce(item, v, &Path::Key(path, &k), depth, cx)?;
                Ok((k, v))
            })
            .collect::<Result<_, _>>()
            .map(Value::Dict),
        Value::Record(r) => r
            .fields
            .into_iter()
            .map(|(k, v)| {
                let v = coerce(item, v, &Path::Field(path, &k), depth, cx)?;
                Ok((Value::Str(k), v))
            })
            .collect::<Result<_, _>>()
            .map(Value::Dict),
        other => Err(mismatch(ty, &other, path)),
    }
}

#[inline(never)]
fn coerce_to_record(
    ty: &Type,
    rt: &RecordType,
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    match value {
        Value::Record(r) if r.name == rt.name => {
            coerce_record(rt, r.name, r.fields, path, depth, cx)
        }
        Value::Dict(map) => {
            let fields = dict_fields(ty, map, path)?;
            coerce_record(rt, rt.name.clone(), fields, path, depth, cx)
        }
        other => Err(mismatch(ty, &other, path)),
    }
}

/// A dict's entries as record fields: its keys must be strings.
#[inline(never)]
fn dict_fields(
    ty: &Type,
    map: crate::value::Dict,
    path: &Path,
) -> Result<Vec<(String, Value)>, Error> {
    let mut fields = Vec::with_capacity(map.len());
    for (k, v) in map {
        match k {
            Value::Str(k) => fields.push((k, v)),
            other => {
                return Err(Error::new(
                    ErrorKind::Type,
                    format!(
                        "`{path}` expects {ty}, got a dict with a {} key",
                        other.type_name()
                    ),
                ))
            }
        }
    }
    Ok(fields)
}

#[inline(never)]
fn coerce_union(
    ty: &Type,
    alts: &[Type],
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    // An alternative that takes the value as it is wins over one that converts it.
    if let Some(exact) = alts.iter().find(|t| exact_match(t, &value)) {
        return coerce(exact, value, path, depth, cx);
    }
    for alt in alts {
        match coerce(alt, value.clone(), path, depth, cx) {
            Ok(done) => return Ok(done),
            Err(e) if e.kind == ErrorKind::Limit => return Err(e),
            Err(_) => {}
        }
    }
    Err(mismatch(ty, &value, path))
}

#[inline(never)]
fn coerce_bounded(
    inner: &Type,
    bounds: &Bounds,
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    let value = coerce(inner, value, path, depth, cx)?;
    check_bounds(bounds, &value, path)?;
    Ok(value)
}

#[inline(never)]
fn coerce_recursive(
    r: &Recursive,
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    match r.definition() {
        Some(def) => coerce(def.resolved(), value, path, depth, cx),
        None => Err(cannot_check(path, "its recursive type outlived its schema")),
    }
}

#[inline(never)]
fn coerce_all(
    parts: &[Type],
    value: Value,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    let Some((first, rest)) = parts.split_first() else {
        return Ok(value);
    };
    for part in rest {
        coerce(part, value.clone(), path, depth, cx)?;
    }
    coerce(first, value, path, depth, cx)
}

/// Whether a value keeps `bounds` (its type already checked).
fn check_bounds(bounds: &Bounds, value: &Value, path: &Path) -> Result<(), Error> {
    number_bounds(bounds, value)
        .and_then(|()| size_bounds(bounds, value))
        .map_err(|what| {
            Error::new(
                ErrorKind::Value,
                format!("`{}` {what}", clip(&path.to_string(), 60)),
            )
            .with_hint("the tool's schema rules this value out")
        })
}

/// The bounds on a number (an integer format's range, minimum, maximum, `multipleOf`): what
/// the value fails, if anything.
fn number_bounds(bounds: &Bounds, value: &Value) -> Result<(), String> {
    let number = match value {
        Value::Int(i) => Some(*i as f64),
        Value::BigInt(b) => Some(num_traits::ToPrimitive::to_f64(&**b).unwrap_or(f64::INFINITY)),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    if let Some((lo, hi, format)) = &bounds.int_range {
        let fits = match value {
            Value::Int(i) => (*lo..=*hi).contains(&i128::from(*i)),
            Value::BigInt(b) => i128::try_from(&**b).is_ok_and(|i| (*lo..=*hi).contains(&i)),
            _ => true,
        };
        if !fits {
            let bits = format.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let kind = if format.starts_with('u') {
                "an unsigned"
            } else {
                "a"
            };
            return Err(format!(
                "= {} does not fit {kind} {bits}-bit integer ({format})",
                clip(&value.repr(), 40)
            ));
        }
    }
    if let Some(x) = number {
        let shown = || clip(&value.repr(), 40);
        if let Some(min) = bounds.minimum.filter(|min| x < *min) {
            return Err(format!("must be at least {min}, got {}", shown()));
        }
        if let Some(min) = bounds.exclusive_minimum.filter(|min| x <= *min) {
            return Err(format!("must be greater than {min}, got {}", shown()));
        }
        if let Some(max) = bounds.maximum.filter(|max| x > *max) {
            return Err(format!("must be at most {max}, got {}", shown()));
        }
        if let Some(max) = bounds.exclusive_maximum.filter(|max| x >= *max) {
            return Err(format!("must be less than {max}, got {}", shown()));
        }
        if let Some(m) = bounds.multiple_of {
            let multiple = match value {
                Value::Int(i) if m.fract() == 0.0 && m <= 9e15 => *i % (m as i64) == 0,
                _ => (x / m).fract() == 0.0,
            };
            if !multiple {
                return Err(format!("must be a multiple of {m}, got {}", shown()));
            }
        }
    }
    Ok(())
}

/// The bounds on a size (characters, items, keys), a string's pattern and a dict's required
/// keys: what the value fails, if anything.
fn size_bounds(bounds: &Bounds, value: &Value) -> Result<(), String> {
    let counted = |len: usize, min: Option<u64>, max: Option<u64>, unit: &str| {
        let len = len as u64;
        if let Some(min) = min.filter(|min| len < *min) {
            return Err(format!("must have at least {min} {unit}, got {len}"));
        }
        if let Some(max) = max.filter(|max| len > *max) {
            return Err(format!("must have at most {max} {unit}, got {len}"));
        }
        Ok(())
    };
    match value {
        Value::Str(s) => {
            counted(
                s.chars().count(),
                bounds.min_length,
                bounds.max_length,
                "characters",
            )?;
            match &bounds.pattern {
                Some(pattern) if !pattern.is_match(s) => Err(format!(
                    "does not match the pattern `{}`, got {}",
                    clip(pattern.as_str(), 60),
                    clip(&value.repr(), 40)
                )),
                _ => Ok(()),
            }
        }
        Value::List(items) | Value::Tuple(items) => {
            counted(items.len(), bounds.min_items, bounds.max_items, "items")
        }
        Value::Set(items) => counted(items.len(), bounds.min_items, bounds.max_items, "items"),
        Value::Array(a) => counted(
            a.shape().first().copied().unwrap_or(0),
            bounds.min_items,
            bounds.max_items,
            "items",
        ),
        Value::Dict(d) => {
            let missing = bounds
                .required
                .iter()
                .find(|k| !d.contains_key(&Value::Str((*k).clone())));
            if let Some(key) = missing {
                return Err(format!("is missing key `{}`", clip(key, 40)));
            }
            counted(
                d.len(),
                bounds.min_properties,
                bounds.max_properties,
                "keys",
            )
        }
        Value::Record(r) => counted(
            r.fields.len(),
            bounds.min_properties,
            bounds.max_properties,
            "keys",
        ),
        _ => Ok(()),
    }
}

fn coerce_items(
    item: &Type,
    items: Vec<Value>,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Vec<Value>, Error> {
    if matches!(item, Type::Any) {
        return Ok(items);
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| coerce(item, v, &Path::Index(path, i), depth, cx))
        .collect()
}

#[inline(never)]
fn no_field_error(rt: &RecordType, name: &str, path: &Path) -> Error {
    Error::new(
        ErrorKind::Type,
        format!("`{path}`: {} has no field `{}`", rt.name, clip(name, 40)),
    )
    .with_hint(format!("fields: {rt}"))
    .suggest(name, rt.fields.iter().map(|f| f.name.as_str()))
}

#[inline(never)]
fn missing_field_error(rt: &RecordType, field: &Field, path: &Path) -> Error {
    Error::new(
        ErrorKind::Type,
        format!("`{path}`: {} is missing field `{}`", rt.name, field.name),
    )
    .with_hint(format!("fields: {rt}"))
}

/// `name` is `rt.name` (passed in so that a record of this type keeps its own string).
#[inline(never)]
fn coerce_record(
    rt: &RecordType,
    name: String,
    given: Vec<(String, Value)>,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    if let Some(reason) = &rt.unchecked {
        return Err(rt.refused(reason));
    }
    // Every field given once, in declaration order (a record built as this type): coerce the
    // values in place, keeping the names. Same result and errors as the general case.
    if given.len() == rt.fields.len()
        && given
            .iter()
            .zip(&rt.fields)
            .all(|((name, _), field)| *name == field.name)
    {
        record_in_order(rt, name, given, path, depth, cx)
    } else {
        record_by_name(rt, given, path, depth, cx)
    }
}

#[inline(never)]
fn record_in_order(
    rt: &RecordType,
    name: String,
    mut given: Vec<(String, Value)>,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    for ((name, slot), field) in given.iter_mut().zip(&rt.fields) {
        let value = std::mem::replace(slot, Value::None);
        *slot = coerce(&field.ty, value, &Path::Field(path, name), depth, cx)?;
    }
    Ok(Value::Record(Record {
        name,
        fields: given,
    }))
}

#[inline(never)]
fn record_by_name(
    rt: &RecordType,
    given: Vec<(String, Value)>,
    path: &Path,
    depth: usize,
    cx: &Checker,
) -> Result<Value, Error> {
    let mut slots: Vec<Option<Value>> = vec![None; rt.fields.len()];
    for (name, value) in given {
        match rt.field_index(&name) {
            Some(i) => {
                let (Some(field), Some(slot)) = (rt.fields.get(i), slots.get_mut(i)) else {
                    continue;
                };
                *slot = Some(coerce(
                    &field.ty,
                    value,
                    &Path::Field(path, &name),
                    depth,
                    cx,
                )?);
            }
            None if rt.closed || !rt.fields.is_empty() => {
                return Err(no_field_error(rt, &name, path));
            }
            None => {}
        }
    }
    let mut fields = Vec::with_capacity(rt.fields.len());
    for (field, slot) in rt.fields.iter().zip(slots) {
        match slot.or_else(|| field.default.clone()) {
            Some(v) => fields.push((field.name.clone(), v)),
            None if field.required => return Err(missing_field_error(rt, field, path)),
            None if field.ty.accepts_none() => fields.push((field.name.clone(), Value::None)),
            None => {}
        }
    }
    Ok(Value::Record(Record {
        name: rt.name.clone(),
        fields,
    }))
}

/// Whether [`coerce`] would accept `value` for `ty` and return it unchanged, known without
/// converting, stepping or formatting anything: any value for `Any`, a scalar of its exact
/// type within its bounds, a record of this type with every field in declaration order, each
/// fitting (recursion follows the record types, whose nesting the schema reader bounds). The
/// fast path of binding an argument already of its parameter's type (`add(a=2, b=3)`); `false`
/// sends the value through [`coerce`], which gives the same value or the error.
pub(super) fn fits(ty: &Type, value: &Value) -> bool {
    match ty {
        Type::Any => true,
        Type::None | Type::Bool | Type::Int | Type::Float | Type::Str | Type::Bytes => {
            exact_match(ty, value)
        }
        Type::Bounded(inner, bounds) => {
            fits(inner, value)
                && number_bounds(bounds, value).is_ok()
                && size_bounds(bounds, value).is_ok()
        }
        Type::Record(rt) => is_record_of(rt, value, fits),
        _ => false,
    }
}

/// Whether `value` is a record of `rt` (a checked record type) with every field in
/// declaration order, each value passing `field` for its field's type.
pub(super) fn is_record_of(
    rt: &RecordType,
    value: &Value,
    field: impl Fn(&Type, &Value) -> bool,
) -> bool {
    match value {
        Value::Record(r) => {
            rt.unchecked.is_none()
                && r.name == rt.name
                && r.fields.len() == rt.fields.len()
                && r.fields
                    .iter()
                    .zip(&rt.fields)
                    .all(|((name, v), f)| *name == f.name && field(&f.ty, v))
        }
        _ => false,
    }
}

/// `value` as [`coerce`] returns it for `ty`, when that is known without a check that could
/// fail or format anything: a value that [`fits`], or a dict whose keys are the record's field
/// names in declaration order, each value fitting (a struct a Rust tool returned, serialized as
/// a dict; `p2={'x': 3, 'y': 4}`), made the record of its entries. Any other value is handed
/// back for [`coerce`].
pub(super) fn take_fitting(ty: &Type, value: Value) -> Result<Value, Value> {
    if fits(ty, &value) {
        return Ok(value);
    }
    let Type::Record(rt) = ty else {
        return Err(value);
    };
    match value {
        Value::Dict(map) if dict_fits(rt, &map) => {
            let fields = map
                .into_iter()
                .filter_map(|(k, v)| match k {
                    Value::Str(k) => Some((k, v)),
                    _ => None,
                })
                .collect();
            Ok(Value::Record(Record {
                name: rt.name.clone(),
                fields,
            }))
        }
        other => Err(other),
    }
}

/// Whether `map`'s keys are `rt`'s field names in declaration order, each value fitting.
fn dict_fits(rt: &RecordType, map: &crate::value::Dict) -> bool {
    rt.unchecked.is_none()
        && map.len() == rt.fields.len()
        && map
            .iter()
            .zip(&rt.fields)
            .all(|((k, v), f)| matches!(k, Value::Str(k) if *k == f.name) && fits(&f.ty, v))
}

pub(super) fn exact_match(ty: &Type, v: &Value) -> bool {
    if let Type::Bounded(inner, _) = ty {
        return exact_match(inner, v);
    }
    matches!(
        (ty, v),
        (Type::None, Value::None)
            | (Type::Bool, Value::Bool(_))
            | (Type::Int, Value::Int(_) | Value::BigInt(_))
            | (Type::Float, Value::Float(_))
            | (Type::Str, Value::Str(_))
            | (Type::Bytes, Value::Bytes(_))
            | (Type::List(_), Value::List(_))
            | (Type::Tuple(_), Value::Tuple(_))
            | (Type::Set(_), Value::Set(_))
            | (Type::Dict(_), Value::Dict(_))
            | (Type::Array, Value::Array(_))
    ) || matches!((ty, v), (Type::Record(rt), Value::Record(r)) if rt.name == r.name)
}

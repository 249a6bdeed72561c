//! Schema-aware repair: fix the few slips models make that the tool's schema settles beyond
//! doubt, before anything is evaluated, and record each fix.
//!
//! A pass over one parsed call with the tool's signature in hand rewrites literal nodes of the
//! IR; nothing else changes, and every rewrite is a [`Repair`] saying what, where and why:
//!
//! - [`RepairKind::JsonLiteral`]: a bare `true` / `false` / `null` (JSON spelling) becomes
//!   `True` / `False` / `None` — only where the parameter's type accepts a bool (resp. `None`)
//!   and no context name is called that;
//! - [`RepairKind::IntegralFloat`]: a float with an integral value (`5.0`) becomes an int where
//!   an integer is expected and a float is not accepted;
//! - [`RepairKind::SingleToList`]: a single literal becomes a one-element list where the type
//!   is a list or set and nothing else (an optional list too; a union with another non-array
//!   alternative is left alone);
//! - [`RepairKind::EnumName`]: a bare name that is not defined becomes a string where the type
//!   is an enum listing exactly that string (`unit=celsius` for `["celsius", "fahrenheit"]`);
//! - [`RepairKind::BoolToEnum`]: a bool (`True`, or JSON's `true`) becomes the string member
//!   that spells it where the type is an enum of strings listing `"True"` and `"False"` (or
//!   `"true"` and `"false"`) and no bool (`['True', 'False', 'dontcare']`);
//! - [`RepairKind::EnumSpelling`]: a string that is not a member becomes the one member it
//!   matches when case, spaces, `-` and `_` are ignored (`"IMAX"` for `['regular', 'imax']`);
//!   a string that matches none (or several) stays an error, whose hint lists the members.
//!   (Both look at enums of at most 64 members, so a long list of values stays cheap.)
//!
//! Inside a parameter whose schema leaves a part open (`{"type": "object"}` without
//! properties, an array without `items`), JSON's `true` / `false` / `null` are read as
//! `True` / `False` / `None` at any depth.
//!
//! An int where a float is expected needs no repair: [`Type::coerce`] converts it, as Python
//! would. [`RepairOptions::default`] turns every repair on; [`RepairOptions::strict`] turns
//! them all off (no rewriting at all).
//!
//! ```
//! use fexpr::repair::{repair_call, RepairKind, RepairOptions};
//! use fexpr::types::RecordType;
//! use fexpr::{Context, Limits};
//!
//! let sig = RecordType::from_schema("search", &serde_json::json!({"type": "object", "properties": {
//!     "exact": {"type": "boolean"}, "limit": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}}));
//! let mut call = fexpr::syntax::parse("search(exact=true, limit=10.0, tags='news')", &Limits::default())?;
//! let repairs = repair_call(&mut call, &sig, &Context::new(), &RepairOptions::default());
//! assert_eq!(call.to_string(), r#"search(exact=True, limit=10, tags=["news"])"#);
//! let kinds: Vec<RepairKind> = repairs.iter().map(|r| r.kind).collect();
//! assert_eq!(kinds, [RepairKind::JsonLiteral, RepairKind::IntegralFloat, RepairKind::SingleToList]);
//!
//! let mut strict = fexpr::syntax::parse("search(exact=true)", &Limits::default())?;
//! assert!(repair_call(&mut strict, &sig, &Context::new(), &RepairOptions::strict()).is_empty());
//! # Ok::<(), fexpr::Error>(())
//! ```

use serde::{Deserialize, Serialize};

pub use crate::call::{Repair, RepairKind};
use crate::error::{clip, Span};
use crate::resolve::context::{Entry, Resolve};
use crate::syntax::{Expr, ExprKind, UnaryOp};
use crate::types::{RecordType, Type};
use crate::value::Value;

/// How deep into nested arguments repairs look.
const MAX_REPAIR_DEPTH: usize = 64;

/// Members an enum may have for [`RepairKind::BoolToEnum`] and [`RepairKind::EnumSpelling`]
/// to look at it.
const MAX_REPAIR_MEMBERS: usize = 64;

/// The type of a part of a value its schema leaves open.
static ANY: Type = Type::Any;

/// Largest float magnitude turned into an int (every integer up to 2^53 is exact in a float).
const MAX_EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

/// Which repairs run. The default runs all of them; [`RepairOptions::strict`] none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairOptions {
    /// `true` / `false` / `null` → `True` / `False` / `None` where the type allows it.
    pub json_literals: bool,
    /// `5.0` → `5` where an int (and no float) is expected.
    pub integral_floats: bool,
    /// `x` → `[x]` where only a list or set is accepted.
    pub single_to_list: bool,
    /// `celsius` → `'celsius'` where the type is an enum listing that string.
    pub enum_names: bool,
    /// `True` → `'True'` where the type is an enum of strings spelling the two bools.
    pub bool_enums: bool,
    /// `'IMAX'` → `'imax'` where exactly one member matches, ignoring case, spaces, `-`, `_`.
    pub enum_spelling: bool,
    /// Not a repair but how model text is read: take calls mentioned in prose (`You could use
    /// f(x)`) as calls, as a harness that scores text wants. Off by default (also in
    /// [`RepairOptions::default`]): a mention is reported, never run. See
    /// [`ReadOptions`](crate::front::ReadOptions).
    pub lenient: bool,
    /// Not a repair either: read the text as this model format only (`None`: every format
    /// whose markers the text holds). See [`ReadOptions`](crate::front::ReadOptions).
    pub model_format: Option<crate::front::formats::ModelFormat>,
}

impl Default for RepairOptions {
    /// Every repair on (each is recorded in the output).
    fn default() -> RepairOptions {
        RepairOptions {
            json_literals: true,
            integral_floats: true,
            single_to_list: true,
            enum_names: true,
            bool_enums: true,
            enum_spelling: true,
            lenient: false,
            model_format: None,
        }
    }
}

impl RepairOptions {
    /// No repair at all: the text is taken exactly as written.
    pub fn strict() -> RepairOptions {
        RepairOptions {
            json_literals: false,
            integral_floats: false,
            single_to_list: false,
            enum_names: false,
            bool_enums: false,
            enum_spelling: false,
            lenient: false,
            model_format: None,
        }
    }

    /// Whether no repair is on.
    pub fn is_strict(&self) -> bool {
        !(self.json_literals
            || self.integral_floats
            || self.single_to_list
            || self.enum_names
            || self.bool_enums
            || self.enum_spelling)
    }
}

/// Repair the arguments of `call` (an [`ExprKind::Call`]; anything else is left alone) against
/// `signature`, resolving names in `ctx`. Returns the repairs made, in source order.
pub fn repair_call(
    call: &mut Expr,
    signature: &RecordType,
    ctx: &dyn Resolve,
    options: &RepairOptions,
) -> Vec<Repair> {
    let mut out = Vec::new();
    if options.is_strict() {
        return out;
    }
    let mut pass = Pass {
        ctx,
        options,
        out: &mut out,
    };
    pass.call_args(call, signature, &Path::Root, 0);
    out.sort_by_key(|r| r.span.start);
    out
}

struct Pass<'a> {
    ctx: &'a dyn Resolve,
    options: &'a RepairOptions,
    out: &'a mut Vec<Repair>,
}

impl Pass<'_> {
    fn call_args(&mut self, call: &mut Expr, rt: &RecordType, prefix: &Path<'_>, depth: usize) {
        let ExprKind::Call(call) = &mut call.kind else {
            return;
        };
        for (i, arg) in call.args.iter_mut().enumerate() {
            if let Some(field) = rt.fields.get(i) {
                self.value(arg, &field.ty, &Path::Field(prefix, &field.name), depth + 1);
            }
        }
        for kw in call.kwargs.iter_mut() {
            if let Some(field) = rt.field(&kw.name) {
                self.value(
                    &mut kw.value,
                    &field.ty,
                    &Path::Field(prefix, &field.name),
                    depth + 1,
                );
            }
        }
    }

    /// Repair the value `expr` written for a parameter of type `ty` (at `path`, for the
    /// repair's report).
    ///
    /// Long (about 100 lines) for a reason: one match over the closed `Type` enum, an arm
    /// per type, each a few lines.
    fn value(&mut self, expr: &mut Expr, ty: &Type, path: &Path<'_>, depth: usize) {
        let ty = ty.shape();
        if depth > MAX_REPAIR_DEPTH || matches!(ty, Type::Any) && !self.options.json_literals {
            return;
        }
        if self.enum_member(expr, ty, path) {
            return;
        }
        if matches!(&expr.kind, ExprKind::Name(_)) && !self.options.json_literals {
            self.enum_name(expr, ty, path);
            return;
        }
        match &mut expr.kind {
            ExprKind::Name(name) if self.options.json_literals && self.ctx.get(name).is_none() => {
                let (literal, value) = match name.as_str() {
                    "true" => (ExprKind::Bool(true), Value::Bool(true)),
                    "false" => (ExprKind::Bool(false), Value::Bool(false)),
                    "null" => (ExprKind::None, Value::None),
                    _ => return self.enum_name(expr, ty, path),
                };
                if !accepts(ty, &value, 0) {
                    return;
                }
                let from = name.clone();
                expr.kind = literal;
                self.record(
                    RepairKind::JsonLiteral,
                    path,
                    expr.span,
                    from.clone(),
                    value.repr(),
                    format!(
                        "`{from}` is JSON; `{}` accepts {} and no name `{from}` is defined",
                        clip(&path.to_string(), 60),
                        ty
                    ),
                );
            }
            ExprKind::Float(f) if self.options.integral_floats && wants_int(ty, *f, 0) => {
                let f = *f;
                #[allow(clippy::cast_possible_truncation)]
                let i = f as i64;
                expr.kind = ExprKind::Int(i);
                self.record(
                    RepairKind::IntegralFloat,
                    path,
                    expr.span,
                    crate::value::float_repr(f),
                    i.to_string(),
                    format!(
                        "`{}` expects {ty}; {} has an integral value",
                        clip(&path.to_string(), 60),
                        crate::value::float_repr(f)
                    ),
                );
            }
            // `-5.0` where an int is expected: the operand is the literal (unless the whole
            // value is to be wrapped in a list first).
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, operand)
                if matches!(operand.kind, ExprKind::Float(_))
                    && !(self.options.single_to_list && single_list_item(ty).is_some()) =>
            {
                self.value(operand, ty, path, depth + 1);
                return;
            }
            _ => {}
        }
        if self.options.single_to_list {
            if let Some(item) = single_list_item(ty) {
                if is_single_literal(expr) {
                    let from = expr.to_string();
                    let span = expr.span;
                    let inner = std::mem::replace(
                        expr,
                        Expr {
                            kind: ExprKind::None,
                            span,
                        },
                    );
                    *expr = Expr {
                        kind: ExprKind::List(vec![inner]),
                        span,
                    };
                    self.record(
                        RepairKind::SingleToList,
                        path,
                        span,
                        from.clone(),
                        format!("[{from}]"),
                        format!(
                            "`{}` expects {ty} and nothing else; a single value was given",
                            clip(&path.to_string(), 60)
                        ),
                    );
                    if let ExprKind::List(items) = &mut expr.kind {
                        for (i, it) in items.iter_mut().enumerate() {
                            self.value(it, item, &Path::Index(path, i), depth + 1);
                        }
                    }
                    return;
                }
            }
        }
        self.children(expr, ty, path, depth);
    }

    /// A bool where the type is an enum of strings spelling bools, or a string that is one
    /// member but for case, spaces, `-` and `_`: rewritten to that member. Whether it was.
    fn enum_member(&mut self, expr: &mut Expr, ty: &Type, path: &Path<'_>) -> bool {
        // The text as written is only rendered once a member is found: most strings are
        // not enum values, and this runs for every string argument of a checked call.
        let (kind, member) = match &expr.kind {
            ExprKind::Bool(b) if self.options.bool_enums => {
                (RepairKind::BoolToEnum, bool_member(ty, *b))
            }
            ExprKind::Name(name)
                if self.options.bool_enums
                    && self.options.json_literals
                    && matches!(name.as_str(), "true" | "false")
                    && self.ctx.get(name).is_none() =>
            {
                (RepairKind::BoolToEnum, bool_member(ty, name == "true"))
            }
            ExprKind::Str(s) if self.options.enum_spelling => {
                (RepairKind::EnumSpelling, spelled_member(ty, s))
            }
            _ => return false,
        };
        let Some(member) = member else {
            return false;
        };
        let from = match &expr.kind {
            ExprKind::Bool(b) => Value::Bool(*b).repr(),
            ExprKind::Name(name) => name.clone(),
            ExprKind::Str(s) => crate::value::str_repr(s),
            _ => return false,
        };
        let to = crate::value::str_repr(&member);
        let reason = match kind {
            RepairKind::BoolToEnum => format!(
                "`{}` is one of {ty}: strings that spell the bools, and no bool",
                clip(&path.to_string(), 60)
            ),
            _ => format!(
                "`{}` is one of {ty}; {from} is not, and {to} is the only one that matches it \
                 ignoring case, spaces, `-` and `_`",
                clip(&path.to_string(), 60)
            ),
        };
        expr.kind = ExprKind::Str(member);
        self.record(kind, path, expr.span, from, to, reason);
        true
    }

    /// An undefined bare name where the type is an enum listing it as a string.
    fn enum_name(&mut self, expr: &mut Expr, ty: &Type, path: &Path<'_>) {
        let ExprKind::Name(name) = &expr.kind else {
            return;
        };
        if !self.options.enum_names || self.ctx.get(name).is_some() {
            return;
        }
        let as_str = Value::Str(name.clone());
        let listed = match ty.shape() {
            Type::Enum(values) => values.contains(&as_str),
            Type::Union(alts) => alts
                .iter()
                .any(|t| matches!(t.shape(), Type::Enum(values) if values.contains(&as_str))),
            _ => false,
        };
        if !listed {
            return;
        }
        let from = name.clone();
        expr.kind = ExprKind::Str(from.clone());
        self.record(
            RepairKind::EnumName,
            path,
            expr.span,
            from.clone(),
            as_str.repr(),
            format!(
                "`{}` is one of {ty}, which lists the string `{from}`, and no name `{from}` is defined",
                clip(&path.to_string(), 60)
            ),
        );
    }

    /// Look into lists, tuples, sets, dicts and record constructors.
    fn children(&mut self, expr: &mut Expr, ty: &Type, path: &Path<'_>, depth: usize) {
        match &mut expr.kind {
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Set(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Some(t) = element_type(ty, i) {
                        self.value(item, t, &Path::Index(path, i), depth + 1);
                    }
                }
            }
            ExprKind::Dict(pairs) => {
                for (key, value) in pairs.iter_mut() {
                    let ExprKind::Str(key) = &key.kind else {
                        continue;
                    };
                    if let Some(t) = value_type(ty, key) {
                        let p = Path::Field(path, key);
                        self.value(value, t, &p, depth + 1);
                    }
                }
            }
            ExprKind::Call(call) => {
                if let Some(Entry::Record(rt)) = self.ctx.get(&call.func) {
                    let rt = rt.clone();
                    self.call_args(expr, &rt, path, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn record(
        &mut self,
        kind: RepairKind,
        path: &Path<'_>,
        span: Span,
        from: String,
        to: String,
        reason: String,
    ) {
        self.out.push(Repair {
            kind,
            path: path.to_string(),
            span,
            from: clip(&from, 80),
            to: clip(&to, 80),
            reason,
        });
    }
}

/// Where a value is in a call's arguments (`p1.x`, `tags[0]`): a chain of steps on the stack,
/// written out only for a repair's report (most calls need none).
enum Path<'a> {
    /// The call's own arguments.
    Root,
    /// A parameter, a record's field or a dict's key under the parent.
    Field(&'a Path<'a>, &'a str),
    /// An item of a list, tuple or set under the parent.
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Field(Path::Root, name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// The enum members of `ty` (an enum, or a union of enums and other types) when no other
/// alternative could take a value as it is: `None` when `ty` is not such a type, or when one
/// of its alternatives is not an enum and `takes` says it may take the value.
///
/// Enums of more than [`MAX_REPAIR_MEMBERS`] members in all are not looked into: a repair
/// compares the value with every member, and a list of values would multiply that.
fn enum_members<'t>(ty: &'t Type, takes: &dyn Fn(&Type) -> bool) -> Option<Vec<&'t Value>> {
    match ty.shape() {
        Type::Enum(values) if values.len() <= MAX_REPAIR_MEMBERS => Some(values.iter().collect()),
        Type::Union(alts) => {
            let mut members = Vec::new();
            for alt in alts {
                match alt.shape() {
                    Type::Enum(values)
                        if members.len().saturating_add(values.len()) <= MAX_REPAIR_MEMBERS =>
                    {
                        members.extend(values.iter())
                    }
                    Type::Enum(_) => return None,
                    other if takes(other) => return None,
                    _ => {}
                }
            }
            (!members.is_empty()).then_some(members)
        }
        _ => None,
    }
}

/// The string member spelling `b` in an enum of `ty` that lists `"True"` and `"False"` (or
/// `"true"` and `"false"`, exactly one of the two pairs) and not the bool itself.
fn bool_member(ty: &Type, b: bool) -> Option<String> {
    let members = enum_members(ty, &|t| {
        matches!(t, Type::Any | Type::Bool | Type::Int | Type::Float)
    })?;
    if members.contains(&&Value::Bool(b)) {
        return None;
    }
    let listed = |s: &str| members.contains(&&Value::Str(s.to_string()));
    let mut spelled = [("True", "False"), ("true", "false")]
        .into_iter()
        .filter(|(t, f)| listed(t) && listed(f))
        .map(|(t, f)| if b { t } else { f });
    match (spelled.next(), spelled.next()) {
        (Some(one), None) => Some(one.to_string()),
        _ => None,
    }
}

/// The one string member of an enum of `ty` that `s` spells when case, spaces, `-` and `_`
/// are ignored; `None` when `s` is a member, matches none or several.
fn spelled_member(ty: &Type, s: &str) -> Option<String> {
    let members = enum_members(ty, &|t| matches!(t, Type::Any | Type::Str))?;
    if members
        .iter()
        .any(|m| matches!(m, Value::Str(m) if m.as_str() == s))
    {
        return None;
    }
    let key = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, ' ' | '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let want = key(s);
    if want.is_empty() {
        return None;
    }
    let mut matches = members.iter().filter_map(|m| match m {
        Value::Str(m) if key(m) == want => Some(m),
        _ => None,
    });
    match (matches.next(), matches.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

/// Whether `ty` takes `value` (a bool or `None`) as it is.
fn accepts(ty: &Type, value: &Value, depth: usize) -> bool {
    if depth > MAX_REPAIR_DEPTH {
        return false;
    }
    match (ty.shape(), value) {
        (Type::Any, _) | (Type::Bool, Value::Bool(_)) | (Type::None, Value::None) => true,
        (Type::Enum(values), v) => values.contains(v),
        (Type::Union(alts), v) => alts.iter().any(|t| accepts(t, v, depth + 1)),
        _ => false,
    }
}

/// Whether `f` should be read as an int for `ty`: it is integral, `ty` takes an int and no
/// float.
fn wants_int(ty: &Type, f: f64, depth: usize) -> bool {
    if !(f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_EXACT_FLOAT)
        || depth > MAX_REPAIR_DEPTH
    {
        return false;
    }
    #[allow(clippy::cast_possible_truncation)]
    let i = f as i64;
    match ty.shape() {
        Type::Int => true,
        Type::Enum(values) => values.contains(&Value::Int(i)) && !values.contains(&Value::Float(f)),
        Type::Union(alts) => {
            !alts
                .iter()
                .any(|t| matches!(t.shape(), Type::Any | Type::Float) || accepts_float_enum(t, f))
                && alts.iter().any(|t| wants_int(t, f, depth + 1))
        }
        _ => false,
    }
}

fn accepts_float_enum(ty: &Type, f: f64) -> bool {
    matches!(ty.shape(), Type::Enum(values) if values.contains(&Value::Float(f)))
}

/// The item type when `ty` is a list or set and nothing else but `None` (an optional list
/// parameter, as BFCL's optional parameters are).
fn single_list_item(ty: &Type) -> Option<&Type> {
    match ty.shape() {
        Type::List(item) | Type::Set(item) => Some(item),
        Type::Union(alts) => {
            let mut lists = alts.iter().filter(|t| !matches!(t.shape(), Type::None));
            match (lists.next().map(Type::shape), lists.next()) {
                (Some(Type::List(item) | Type::Set(item)), None) => Some(item),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A literal that is one value, not a sequence or a name (whose value is unknown here).
fn is_single_literal(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Str(_)
        | ExprKind::Int(_)
        | ExprKind::BigInt(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Dict(_) => true,
        ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, x) => {
            matches!(x.kind, ExprKind::Int(_) | ExprKind::Float(_))
        }
        _ => false,
    }
}

/// The type of element `i` of a sequence of type `ty`.
fn element_type(ty: &Type, i: usize) -> Option<&Type> {
    match ty.shape() {
        Type::Any => Some(&ANY),
        Type::List(t) | Type::Set(t) => Some(t),
        Type::Tuple(ts) => ts.get(i),
        Type::Union(alts) => alts
            .iter()
            .find(|t| matches!(t.shape(), Type::List(_) | Type::Set(_) | Type::Tuple(_)))
            .and_then(|t| element_type(t, i)),
        _ => None,
    }
}

/// The type of the value under `key` of a dict or record of type `ty`.
fn value_type<'t>(ty: &'t Type, key: &str) -> Option<&'t Type> {
    match ty.shape() {
        Type::Any => Some(&ANY),
        Type::Dict(t) => Some(t),
        // A key an open record does not list takes anything.
        Type::Record(rt) => match rt.field(key) {
            Some(f) => Some(&f.ty),
            None if !rt.closed => Some(&ANY),
            None => None,
        },
        Type::Union(alts) => alts
            .iter()
            .find(|t| matches!(t.shape(), Type::Dict(_) | Type::Record(_)))
            .and_then(|t| value_type(t, key)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, Limits};
    use serde_json::json;

    fn sig(props: serde_json::Value) -> RecordType {
        RecordType::from_schema("f", &json!({"type": "object", "properties": props}))
    }

    fn run(sig: &RecordType, src: &str, ctx: &Context) -> (String, Vec<Repair>) {
        let mut e = crate::syntax::parse(src, &Limits::default()).unwrap();
        let r = repair_call(&mut e, sig, ctx, &RepairOptions::default());
        (e.to_string(), r)
    }

    #[test]
    fn json_literals_only_where_the_type_allows() {
        let s = sig(
            json!({"a": {"type": "boolean"}, "b": {"type": "string"}, "c": {"type": ["integer", "null"]}}),
        );
        let (out, r) = run(&s, "f(a=false, b=true, c=null)", &Context::new());
        assert_eq!(out, "f(a=False, b=true, c=None)");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].span, Span::new(4, 9));
        assert_eq!((r[0].from.as_str(), r[0].to.as_str()), ("false", "False"));
        assert_eq!(r[1].path, "c");
    }

    #[test]
    fn a_defined_name_is_not_a_literal() {
        let s = sig(json!({"a": {"type": "boolean"}}));
        let ctx = Context::new().variable("true", false);
        let (out, r) = run(&s, "f(a=true)", &ctx);
        assert_eq!(out, "f(a=true)");
        assert!(r.is_empty());
    }

    #[test]
    fn integral_floats_become_ints_only_for_int_types() {
        let s = sig(
            json!({"a": {"type": "integer"}, "b": {"type": "number"}, "c": {"type": "integer"},
            "d": {"anyOf": [{"type": "integer"}, {"type": "number"}]}}),
        );
        let (out, r) = run(&s, "f(a=5.0, b=5.0, c=5.5, d=2.0)", &Context::new());
        assert_eq!(out, "f(a=5, b=5.0, c=5.5, d=2.0)");
        assert_eq!(r.len(), 1);
        let (out, _) = run(&s, "f(a=-3.0)", &Context::new());
        assert_eq!(out, "f(a=-3)");
    }

    #[test]
    fn single_values_wrapped_only_for_pure_array_types() {
        let s = sig(json!({"a": {"type": "array", "items": {"type": "integer"}},
            "b": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
            "c": {"type": "array"}}));
        let (out, r) = run(&s, "f(a=3.0, b='x', c=[1])", &Context::new());
        assert_eq!(out, "f(a=[3], b=\"x\", c=[1])");
        // An optional list is a list and nothing else but `None`.
        let optional =
            sig(json!({"tags": {"type": ["array", "null"], "items": {"type": "string"}}}));
        assert_eq!(
            run(&optional, "f(tags='x')", &Context::new()).0,
            "f(tags=[\"x\"])"
        );
        assert_eq!(
            run(&optional, "f(tags=None)", &Context::new()).0,
            "f(tags=None)"
        );
        let kinds: Vec<RepairKind> = r.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [RepairKind::SingleToList, RepairKind::IntegralFloat]);
        assert_eq!(r[1].path, "a[0]");
    }

    #[test]
    fn enum_names_only_for_listed_strings() {
        let s = sig(
            json!({"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "city": {"type": "string"}}),
        );
        let (out, r) = run(&s, "f(unit=celsius, city=Paris)", &Context::new());
        assert_eq!(out, "f(unit=\"celsius\", city=Paris)");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].kind, RepairKind::EnumName);
        let ctx = Context::new().variable("celsius", "kelvin");
        let (out, _) = run(&s, "f(unit=celsius)", &ctx);
        assert_eq!(out, "f(unit=celsius)");
    }

    #[test]
    fn nested_records_and_positional_arguments() {
        let s = RecordType::from_schema(
            "f",
            &json!({"type": "object", "properties": {"opts": {"type": "object", "properties": {
                "deep": {"type": "boolean"}, "n": {"type": "integer"}}}}}),
        );
        let (out, r) = run(&s, "f({'deep': true, 'n': 2.0})", &Context::new());
        assert_eq!(out, "f({\"deep\": True, \"n\": 2})");
        assert_eq!(r[0].path, "opts.deep");
        assert_eq!(r[1].path, "opts.n");
    }

    #[test]
    fn bools_become_the_enum_strings_that_spell_them() {
        let s = sig(json!({
            "laundry": {"type": "string", "enum": ["True", "False", "dontcare"]},
            "lower": {"type": "string", "enum": ["true", "false"]},
            "both": {"type": "string", "enum": ["True", "False", "true", "false"]},
            "plain": {"type": "string", "enum": ["yes", "no"]}}));
        let (out, r) = run(
            &s,
            "f(laundry=True, lower=false, both=True, plain=True)",
            &Context::new(),
        );
        assert_eq!(
            out,
            "f(laundry=\"True\", lower=\"false\", both=True, plain=True)"
        );
        let kinds: Vec<RepairKind> = r.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [RepairKind::BoolToEnum, RepairKind::BoolToEnum]);
        assert_eq!((r[1].from.as_str(), r[1].to.as_str()), ("false", "'false'"));
        let strict = RepairOptions {
            bool_enums: false,
            ..RepairOptions::default()
        };
        let mut e = crate::syntax::parse("f(laundry=True)", &Limits::default()).unwrap();
        assert!(repair_call(&mut e, &s, &Context::new(), &strict).is_empty());
    }

    #[test]
    fn strings_become_the_one_member_they_spell() {
        let s = sig(json!({
            "show": {"type": "string", "enum": ["regular", "3d", "imax"]},
            "genre": {"type": "string", "enum": ["Action", "Drama"]},
            "mode": {"type": "string", "enum": ["fast-mode", "FastMode"]},
            "kind": {"anyOf": [{"type": "string", "enum": ["ice_cream"]}, {"type": "string"}]}}));
        let (out, r) = run(
            &s,
            "f(show='IMAX', genre='Comic', mode='fast mode', kind='Ice Cream')",
            &Context::new(),
        );
        // `Comic` matches no member, `fast mode` two, and `kind` takes any string.
        assert_eq!(
            out,
            "f(show=\"imax\", genre=\"Comic\", mode=\"fast mode\", kind=\"Ice Cream\")"
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].kind, RepairKind::EnumSpelling);
        assert_eq!((r[0].from.as_str(), r[0].to.as_str()), ("'IMAX'", "'imax'"));
        let (out, _) = run(&s, "f(show=' 3-D ')", &Context::new());
        assert_eq!(out, "f(show=\"3d\")");
    }

    #[test]
    fn json_literals_at_any_depth_of_an_open_schema() {
        let s = sig(json!({
            "filters": {"type": "object"},
            "rows": {"type": "array"},
            "spec": {"type": "object", "properties": {"name": {"type": "string"}}}}));
        let (out, r) = run(
            &s,
            "f(filters={'a': {'b': [true, null]}}, rows=[{'x': false}], spec={'name': 'n', 'on': true})",
            &Context::new(),
        );
        assert_eq!(
            out,
            "f(filters={\"a\": {\"b\": [True, None]}}, rows=[{\"x\": False}], spec={\"name\": \"n\", \"on\": True})"
        );
        let paths: Vec<&str> = r.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            ["filters.a.b[0]", "filters.a.b[1]", "rows[0].x", "spec.on"]
        );
    }
}

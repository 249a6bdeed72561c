//! A type written back as JSON Schema, for the JSON parts of a grammar that another engine
//! reads as a schema (llguidance's `%json`, XGrammar's structural tags): made from the same
//! [`Type`] the checker uses, with only the keywords both sides read the same way. What it
//! leaves out (`pattern`, `multipleOf`, …) the grammar's approximations list.

use serde_json::{json, Map, Value as Json};

use super::values::{literals, Syntax};
use crate::types::{Bounds, RecordType, Recursive, Type};

/// The largest magnitude of a JSON number in the schema. A JSON number past 1.8e308 (`1e999`)
/// is not finite, which fexpr's reader refuses, and llguidance writes any exponent unless a
/// range is given (and turns down ranges as wide as that): 1e15 keeps every number a model
/// needs.
const FINITE: f64 = 1e15;

/// `$defs` for recursive definitions, by their rule names, and `any`: any JSON value whose
/// numbers stay finite.
#[derive(Default)]
pub(crate) struct Defs {
    defs: Vec<(Recursive, String, Option<Json>)>,
    any: bool,
}

impl Defs {
    /// `schema` with the definitions it refers to as `$defs`.
    pub(crate) fn finish(self, mut schema: Json) -> Json {
        if self.defs.is_empty() && !self.any {
            return schema;
        }
        let mut defs: Map<String, Json> = self
            .defs
            .into_iter()
            .map(|(_, name, s)| (name, s.unwrap_or(json!(false))))
            .collect();
        if self.any {
            let any = json!({"$ref": "#/$defs/any"});
            defs.insert(
                "any".into(),
                json!({"anyOf": [
                    {"type": ["null", "boolean", "string"]},
                    {"type": "number", "minimum": -FINITE, "maximum": FINITE},
                    {"type": "array", "items": any},
                    {"type": "object", "additionalProperties": any},
                ]}),
            );
        }
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("$defs".into(), Json::Object(defs));
        }
        schema
    }
}

/// The schema of a tool's arguments.
pub(crate) fn arguments(rt: &RecordType, defs: &mut Defs) -> Option<Json> {
    record(rt, defs)
}

/// The schema of the values of `ty`; `None` when no value is accepted.
pub(crate) fn schema(ty: &Type, defs: &mut Defs) -> Option<Json> {
    Some(match ty {
        Type::Any => {
            defs.any = true;
            json!({"$ref": "#/$defs/any"})
        }
        Type::None => json!({"type": "null"}),
        Type::Bool => json!({"type": "boolean"}),
        Type::Int => json!({"type": "integer"}),
        Type::Float => json!({"type": "number", "minimum": -FINITE, "maximum": FINITE}),
        Type::Str => json!({"type": "string"}),
        Type::Bytes => return None,
        Type::List(item) | Type::Set(item) => {
            json!({"type": "array", "items": schema(item, defs)?})
        }
        Type::Tuple(types) => {
            let items: Option<Vec<Json>> = types.iter().map(|t| schema(t, defs)).collect();
            json!({"type": "array", "prefixItems": items?, "items": false,
                   "minItems": types.len(), "maxItems": types.len()})
        }
        Type::Dict(item) => json!({"type": "object", "additionalProperties": schema(item, defs)?}),
        Type::Record(rt) => return record(rt, defs),
        Type::Array => json!({"type": "array", "items": schema(&Type::Float, defs)?}),
        Type::Union(alts) => {
            let alts: Vec<Json> = alts.iter().filter_map(|t| schema(t, defs)).collect();
            if alts.is_empty() {
                return None;
            }
            json!({"anyOf": alts})
        }
        Type::Enum(values) => {
            let members: Vec<Json> = values
                .iter()
                .filter(|v| !literals(v, Syntax::Json).is_empty())
                .map(crate::value::Value::to_json)
                .collect();
            if members.is_empty() {
                return None;
            }
            json!({"enum": members})
        }
        Type::Bounded(inner, bounds) => bounded(inner, bounds, defs)?,
        Type::All(parts) => all(parts, defs)?,
        Type::Recursive(r) => recursive(r, defs)?,
        Type::Unchecked(_) => return None,
    })
}

fn record(rt: &RecordType, defs: &mut Defs) -> Option<Json> {
    if rt.unchecked.is_some() {
        return None;
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in &rt.fields {
        match schema(&field.ty, defs) {
            Some(s) => {
                properties.insert(field.name.clone(), s);
                if field.required {
                    required.push(json!(field.name));
                }
            }
            None if field.required => return None,
            None => {}
        }
    }
    Some(
        json!({"type": "object", "properties": properties, "required": required,
                "additionalProperties": false}),
    )
}

fn bounded(inner: &Type, bounds: &Bounds, defs: &mut Defs) -> Option<Json> {
    if let Type::Union(alts) = inner {
        let alts: Vec<Json> = alts
            .iter()
            .filter_map(|t| bounded(t, bounds, defs))
            .collect();
        return (!alts.is_empty()).then(|| json!({"anyOf": alts}));
    }
    let mut s = schema(inner, defs)?;
    let Some(obj) = s.as_object_mut() else {
        return Some(s);
    };
    let mut set = |key: &str, value: Json| {
        obj.insert(key.to_string(), value);
    };
    match inner {
        Type::Int => {
            let (lo, hi) = super::numbers::int_bounds(bounds)?;
            set("minimum", json!(lo as i64));
            set("maximum", json!(hi as i64));
        }
        Type::Float => {
            if let Some(m) = bounds.minimum {
                set("minimum", json!(m.max(-FINITE)));
            }
            if let Some(m) = bounds.maximum {
                set("maximum", json!(m.min(FINITE)));
            }
            if let Some(m) = bounds.exclusive_minimum {
                set("exclusiveMinimum", json!(m));
            }
            if let Some(m) = bounds.exclusive_maximum {
                set("exclusiveMaximum", json!(m));
            }
        }
        Type::Str => {
            if let Some(m) = bounds.min_length {
                set("minLength", json!(m));
            }
            if let Some(m) = bounds.max_length {
                set("maxLength", json!(m));
            }
        }
        Type::List(_) => {
            if let Some(m) = bounds.min_items {
                set("minItems", json!(m));
            }
            if let Some(m) = bounds.max_items {
                set("maxItems", json!(m));
            }
        }
        Type::Dict(item) if !bounds.required.is_empty() => {
            let item = schema(item, defs)?;
            let properties: Map<String, Json> = bounds
                .required
                .iter()
                .map(|k| (k.clone(), item.clone()))
                .collect();
            set("properties", Json::Object(properties));
            set("required", json!(bounds.required));
            if bounds.max_properties == Some(bounds.required.len() as u64) {
                set("additionalProperties", json!(false));
            }
        }
        _ => {}
    }
    Some(s)
}

fn all(parts: &[Type], defs: &mut Defs) -> Option<Json> {
    let whole = Type::All(parts.to_vec());
    if let Some(Type::Enum(values)) = parts.first() {
        let members: Vec<Json> = values
            .iter()
            .filter(|v| whole.coerce((*v).clone(), "").is_ok())
            .filter(|v| !literals(v, Syntax::Json).is_empty())
            .map(crate::value::Value::to_json)
            .collect();
        return (!members.is_empty()).then(|| json!({"enum": members}));
    }
    let (first, rest) = parts.split_first()?;
    let mut ty = first.clone();
    for part in rest {
        if let Type::Bounded(inner, bounds) = part {
            if **inner == Type::Any {
                ty = Type::Bounded(Box::new(ty), bounds.clone());
            }
        }
    }
    schema(&ty, defs)
}

fn recursive(r: &Recursive, defs: &mut Defs) -> Option<Json> {
    if let Some((_, name, _)) = defs.defs.iter().find(|(known, _, _)| known == r) {
        return Some(json!({"$ref": format!("#/$defs/{name}")}));
    }
    let name = format!("d{}", defs.defs.len());
    defs.defs.push((r.clone(), name.clone(), None));
    let body = r.resolved(|ty| ty.clone()).and_then(|ty| schema(&ty, defs));
    if let Some(entry) = defs.defs.iter_mut().find(|(known, _, _)| known == r) {
        entry.2 = body;
    }
    Some(json!({"$ref": format!("#/$defs/{name}")}))
}

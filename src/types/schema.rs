//! JSON Schema as fexpr reads and writes it: BFCL's type names mapped onto JSON Schema
//! ([`normalize_schema`]), records closed (`additionalProperties: false`) and the strict form
//! OpenAI's strict mode accepts. Plain functions over `serde_json` values, used by tool
//! definitions from Rust types and from provider JSON alike.

use serde_json::{Map, Value as Json};

use crate::types::MAX_SCHEMA_DEPTH;

/// A schema with BFCL's type names replaced by JSON Schema's, at every level (as deep as
/// schemas are read, 64 levels; reading refuses what is deeper).
///
/// ```
/// let s = fexpr::tooldefs::normalize_schema(&serde_json::json!(
///     {"type": "dict", "properties": {"xs": {"type": "tuple", "items": {"type": "float"}}}}), 0);
/// assert_eq!(s, serde_json::json!(
///     {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}}}));
/// ```
pub fn normalize_schema(schema: &Json, depth: usize) -> Json {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    if depth > MAX_SCHEMA_DEPTH {
        return schema.clone();
    }
    let mut out = Map::with_capacity(obj.len());
    for (key, value) in obj {
        let value = match key.as_str() {
            // BFCL's `any` is no constraint; a name neither knows stays as written, so that
            // reading the schema refuses every value ("an unknown `type`"), never "anything".
            "type" => match value {
                Json::String(t) if is_any(t) => continue,
                Json::String(t) => Json::String(json_type(t).unwrap_or(t).to_string()),
                Json::Array(ts) if ts.iter().filter_map(Json::as_str).any(is_any) => continue,
                Json::Array(ts) => Json::Array(
                    ts.iter()
                        .map(|t| match t.as_str().and_then(json_type) {
                            Some(known) => Json::String(known.to_string()),
                            None => t.clone(),
                        })
                        .collect(),
                ),
                other => other.clone(),
            },
            "properties" | "$defs" | "definitions" | "patternProperties" => match value {
                Json::Object(props) => Json::Object(
                    props
                        .iter()
                        .map(|(k, v)| (k.clone(), normalize_schema(v, depth + 1)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" | "contains" => match value {
                Json::Array(items) => Json::Array(
                    items
                        .iter()
                        .map(|v| normalize_schema(v, depth + 1))
                        .collect(),
                ),
                v => normalize_schema(v, depth + 1),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => match value {
                Json::Array(items) => Json::Array(
                    items
                        .iter()
                        .map(|v| normalize_schema(v, depth + 1))
                        .collect(),
                ),
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    // BFCL writes the allowed values of an array's items as the array's own `enum`.
    if out.get("type").and_then(Json::as_str) == Some("array") {
        let scalar_enum = out
            .get("enum")
            .and_then(Json::as_array)
            .is_some_and(|vs| vs.iter().all(|v| !v.is_array() && !v.is_object()));
        if scalar_enum {
            if let Some(values) = out.remove("enum") {
                let mut items = match out.remove("items") {
                    Some(Json::Object(items)) => items,
                    _ => Map::new(),
                };
                items.insert("enum".into(), values);
                out.insert("items".into(), Json::Object(items));
            }
        }
    }
    Json::Object(out)
}

/// Close every object schema that declares fields (`additionalProperties: false`), at every
/// level as deep as schemas are read (64 levels): a record refuses a field it does
/// not declare when called, and its schema says so. A schema that says otherwise already
/// (`additionalProperties` set) is left as it is.
pub(crate) fn close_records(schema: &mut Json) {
    close_within(schema, 0);
}

fn close_within(schema: &mut Json, depth: usize) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let has_fields = obj
        .get("properties")
        .and_then(Json::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_fields && !obj.contains_key("additionalProperties") {
        obj.insert("additionalProperties".into(), Json::Bool(false));
    }
    for_each_subschema(obj, |s| close_within(s, depth + 1));
}

/// `schema` in the form OpenAI's strict mode (`"strict": true`) requires, as its
/// Structured Outputs guide states under "Supported schemas"
/// (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>) and its
/// function-calling guide under "Strict mode"
/// (<https://platform.openai.com/docs/guides/function-calling#strict-mode>):
///
/// - `additionalProperties: false` must be set on every object;
/// - every field of an object must be listed in `required`; an optional field is emulated
///   with a type that allows `null` (`"type": ["string", "null"]`);
/// - `$defs` with `$ref` (recursion included) and `anyOf` are supported, `default` is not;
///   `format` takes only a few named formats (`date-time`, `email`, `uuid`, …), so the
///   numeric formats schemars writes (`int64`, `double`, `uint8`) are dropped.
///
/// Types are kept as they are, so the strict schema admits exactly what binding accepts: an
/// `Option<T>` parameter already allows `null` (binding it gives `None`); a parameter with a
/// default but a type without `null` must then be given, and its description names the
/// default.
pub(crate) fn strict_schema(schema: &mut Json) {
    strict_within(schema, 0);
}

fn strict_within(schema: &mut Json, depth: usize) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    obj.remove("format");
    if let Some(default) = obj.remove("default") {
        let said = format!("default: {default}");
        let description = match obj.get("description").and_then(Json::as_str) {
            Some(d) if !d.is_empty() => format!("{d} ({said})"),
            _ => said,
        };
        obj.insert("description".into(), Json::String(description));
    }
    if let Some(Json::Object(properties)) = obj.get_mut("properties") {
        let all = properties.keys().cloned().map(Json::String).collect();
        obj.insert("required".into(), Json::Array(all));
        obj.insert("additionalProperties".into(), Json::Bool(false));
    }
    for_each_subschema(obj, |s| strict_within(s, depth + 1));
}

/// Apply `f` to each schema nested directly in `obj`: the schemas of its properties and
/// definitions, its items and tuple items, the branches of `anyOf`/`oneOf`/`allOf`, and a
/// schema-valued `additionalProperties`.
fn for_each_subschema(obj: &mut Map<String, Json>, mut f: impl FnMut(&mut Json)) {
    for (key, value) in obj.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "$defs" | "definitions", Json::Object(schemas)) => {
                schemas.values_mut().for_each(&mut f)
            }
            ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Json::Array(schemas)) => {
                schemas.iter_mut().for_each(&mut f)
            }
            ("items" | "additionalProperties", s) => f(s),
            _ => {}
        }
    }
}

/// Whether `t` is BFCL's `any` type: no constraint.
fn is_any(t: &str) -> bool {
    t.eq_ignore_ascii_case("any")
}

/// JSON Schema's name for a BFCL (or JSON Schema) type name; `None` for a name neither has.
fn json_type(t: &str) -> Option<&'static str> {
    Some(match t.to_ascii_lowercase().as_str() {
        "dict" | "object" | "hashmap" | "map" => "object",
        "float" | "number" | "double" => "number",
        "integer" | "int" | "long" => "integer",
        "tuple" | "array" | "list" => "array",
        "boolean" | "bool" => "boolean",
        "string" | "str" | "char" => "string",
        "null" | "none" => "null",
        _ => return None,
    })
}

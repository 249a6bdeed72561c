//! Tool definitions from JSON: OpenAI, Anthropic and MCP tool objects, AdalFlow
//! `FunctionDefinition`s and BFCL-style function docs → [`ToolDefinition`]s.
//!
//! Accepted shapes, alone, in a list, or under a `"tools"` key:
//!
//! - OpenAI: `{"type": "function", "function": {"name", "description", "parameters"}}` or the
//!   inner object alone;
//! - Anthropic: `{"name", "description", "input_schema"}`;
//! - MCP: `{"name", "description", "inputSchema"}`;
//! - AdalFlow: `{"func_name", "func_desc", "func_parameters"}`;
//! - BFCL: `{"name", "description", "parameters"}` where `parameters` uses BFCL's type names.
//!
//! BFCL's type names are mapped onto JSON Schema everywhere in a schema ([`normalize_schema`]):
//! `dict` → `object`, `float` → `number`, `tuple` and `list` → `array`, `int` → `integer`,
//! `bool` → `boolean`, `str` → `string`, `any` → no constraint; capitalised forms too.
//! `enum`, `required`, `default` and nested `properties` are standard JSON Schema already.
//!
//! ```
//! let defs = fexpr::tooldefs::from_json(&serde_json::json!([{
//!     "name": "math.hypot", "description": "Euclidean norm.",
//!     "parameters": {"type": "dict", "properties": {
//!         "x": {"type": "integer"}, "y": {"type": "float"}, "z": {"type": "any", "default": 0}},
//!         "required": ["x", "y"]}}]))?;
//! assert_eq!(defs[0].python_signature(), "math.hypot(x: int, y: float, z: Any = 0)");
//! # Ok::<(), fexpr::Error>(())
//! ```

use serde_json::Value as Json;
use std::sync::Arc;

use crate::dispatch::tool::ToolDefinition;
use crate::error::{clip, Error, ErrorKind};
use crate::resolve::context::{check_tool_name, Context, Entry};
pub use crate::types::schema::normalize_schema;

/// Read tool definitions from any of the accepted shapes (see the [module docs](self)). Any
/// definition that cannot be used is an error (see [`from_json_available`] to go on without
/// it).
///
/// # Errors
/// A `Syntax` or `Config` error naming the first definition that cannot be used (by its
/// index), two definitions of one name, or two names Python call text cannot tell apart.
pub fn from_json(json: &Json) -> Result<Vec<ToolDefinition>, Error> {
    let (defs, left_out) = from_json_available(json)?;
    match left_out.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(defs),
    }
}

/// Read tool definitions as [`from_json`] does, leaving out each definition that cannot be
/// used (no name, a name no provider allows, an invalid schema) and returning why, one error
/// per definition left out (each names the definition's index): one bad tool does not take
/// the others away. Report the errors: those tools are missing.
///
/// ```
/// let (defs, left_out) = fexpr::tooldefs::from_json_available(&serde_json::json!([
///     {"name": "get-current-weather", "parameters": {"type": "object", "properties": {}}},
///     {"name": "bad name!"},
/// ]))?;
/// assert_eq!(defs.len(), 1);
/// assert!(left_out[0].message.starts_with("tool definition 1: the tool name `bad name!` is not allowed"));
/// # Ok::<(), fexpr::Error>(())
/// ```
///
/// # Errors
/// A JSON value that holds no definitions, two definitions of one name, or two names Python
/// call text cannot tell apart (which of them a call means is unknown): a `Syntax` or `Config`
/// error.
pub fn from_json_available(json: &Json) -> Result<(Vec<ToolDefinition>, Vec<Error>), Error> {
    let items: Vec<&Json> = match json {
        Json::Array(items) => items.iter().collect(),
        Json::Object(obj) => match obj.get("tools") {
            Some(Json::Array(items)) => items.iter().collect(),
            _ => vec![json],
        },
        _ => {
            return Err(Error::new(
                ErrorKind::Syntax,
                "tool definitions must be a JSON object or a list of objects",
            ))
        }
    };
    let mut defs = Vec::new();
    let mut left_out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        match one(item) {
            Ok(def) => defs.push((i, def)),
            Err(e) => left_out.push(prefixed(e, i)),
        }
    }
    // Two definitions of one name: which one the model meant is unknown, so neither is chosen.
    let mut seen = std::collections::HashMap::new();
    for (i, def) in &defs {
        if let Some(first) = seen.insert(def.name.as_str(), *i) {
            return Err(prefixed(
                Error::new(
                    ErrorKind::Config,
                    format!(
                        "the tool name `{}` is defined twice (also by definition {first})",
                        clip(&def.name, 60)
                    ),
                )
                .with_hint("give every tool its own name"),
                *i,
            ));
        }
    }
    let defs: Vec<ToolDefinition> = defs.into_iter().map(|(_, def)| def).collect();
    if let Some(clash) = context(&defs).name_problems().into_iter().next() {
        return Err(clash);
    }
    Ok((defs, left_out))
}

fn prefixed(mut e: Error, i: usize) -> Error {
    e.message = format!("tool definition {i}: {}", e.message);
    e
}

fn one(item: &Json) -> Result<ToolDefinition, Error> {
    let obj = item
        .as_object()
        .ok_or_else(|| Error::new(ErrorKind::Syntax, "a tool definition must be an object"))?;
    if let Some(inner @ Json::Object(_)) = obj.get("function") {
        return one(inner);
    }
    let str_field = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| obj.get(*k).and_then(Json::as_str))
            .map(str::to_string)
    };
    let name = str_field(&["name", "func_name"])
        .ok_or_else(|| Error::new(ErrorKind::Syntax, "a tool definition needs a string `name`"))?;
    if let Err(problem) = check_tool_name(&name) {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "the tool name `{}` is not allowed: {problem}",
                clip(&name, 140)
            ),
        )
        .with_hint("rename the tool"));
    }
    let description = str_field(&["description", "func_desc"]).unwrap_or_default();
    let parameters = [
        "parameters",
        "input_schema",
        "inputSchema",
        "func_parameters",
    ]
    .iter()
    .find_map(|k| obj.get(*k))
    .map(|p| {
        let bfcl = p.get("type").and_then(Json::as_str) == Some("dict");
        let mut schema = normalize_schema(p, 0);
        if bfcl {
            optional_take_none(&mut schema);
        }
        schema
    })
    .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
    // A bound of the wrong kind (`"maxLength": "3"`) is a mistake in the definition: refused
    // here, naming the keyword, rather than read as "no bound".
    if let Some(problem) = crate::types::schema_problem(&parameters) {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "tool `{}`: its parameter schema is invalid: {problem}",
                clip(&name, 60)
            ),
        ));
    }
    let mut def = ToolDefinition::new(name, description, parameters);
    if let Some(returns) = ["returns", "outputSchema", "response"]
        .iter()
        .find_map(|k| obj.get(*k))
        .filter(|r| r.is_object())
    {
        def = def.with_returns(normalize_schema(returns, 0));
    }
    Ok(def)
}

/// BFCL docs describe Python functions whose optional parameters default to `None`: each
/// parameter that is not required also accepts `None` (meaning "not given").
fn optional_take_none(schema: &mut Json) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Json::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Json::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if let (false, Json::Object(p)) = (required.contains(name), prop) {
                p.insert("nullable".into(), Json::Bool(true));
                // An `enum` is read before `nullable`: it lists `None` itself.
                if let Some(Json::Array(values)) = p.get_mut("enum") {
                    if !values.contains(&Json::Null) {
                        values.push(Json::Null);
                    }
                }
            }
        }
    }
}

/// A context holding the definitions' signatures as tools (enough to check calls), each
/// under its own name and its Python alias ([`python_alias`](crate::context::python_alias)).
///
/// # Panics
/// On a name no provider allows (the definitions [`from_json`] reads have none).
pub fn context(defs: &[ToolDefinition]) -> Context {
    let mut ctx = Context::new();
    for def in defs {
        ctx.insert(def.name.clone(), Entry::Tool(Arc::clone(&def.signature)));
    }
    ctx
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_shape_is_read() {
        let params =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let shapes = json!({"tools": [
            {"type": "function", "function": {"name": "a", "description": "A", "parameters": params}},
            {"name": "b", "input_schema": params},
            {"name": "c", "inputSchema": params, "outputSchema": {"type": "integer"}},
            {"func_name": "d", "func_desc": "D", "func_parameters": params},
        ]});
        let defs = from_json(&shapes).unwrap();
        let sigs: Vec<String> = defs.iter().map(|d| d.python_signature()).collect();
        assert_eq!(
            sigs,
            ["a(q: str)", "b(q: str)", "c(q: str) -> int", "d(q: str)"]
        );
        assert_eq!(defs[0].description, "A");
    }

    #[test]
    fn bad_definitions_are_errors() {
        assert!(from_json(&json!([{"description": "no name"}])).is_err());
        let e = from_json(&json!([{"name": "ok"}, {"name": "not a name"}])).unwrap_err();
        assert!(e.message.starts_with("tool definition 1:"), "{}", e.message);
        let clash = from_json(&json!([{"name": "get-sum"}, {"name": "get_sum"}])).unwrap_err();
        assert_eq!(
            clash.message,
            "the tools `get-sum` and `get_sum` are both called `get_sum` from Python"
        );
        assert!(from_json(&json!(3)).is_err());
    }

    #[test]
    fn bfcl_types_nested() {
        let defs = from_json(&json!({"name": "f", "parameters": {"type": "dict", "properties": {
            "opts": {"type": "dict", "properties": {"n": {"type": "integer"}, "w": {"type": "float"}}},
            "pair": {"type": "tuple", "items": {"type": "String"}},
            "free": {"type": "any"}, "flag": {"type": "boolean", "default": false}},
            "required": ["opts"]}}))
        .unwrap();
        assert_eq!(
            defs[0].python_signature(),
            "f(opts: object, pair: list[str] | None = None, free: Any = None, flag: bool | None = False)"
        );
    }
}

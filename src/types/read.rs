//! Reading JSON Schema into a [`Type`]: keywords checked and refused, `$ref`s and recursive
//! definitions (read lazily), bounds, integer formats, and a tool's parameter schema into a
//! [`RecordType`]. Every schema fexpr cannot fully check becomes [`Type::Unchecked`].

use super::*;

/// How many schema nodes one conversion reads at most (`$ref`s that branch would otherwise
/// expand exponentially); past it, schemas are [`Type::Unchecked`].
const MAX_SCHEMA_NODES: usize = 10_000;
/// Keywords that constrain values and that fexpr does not check: a schema using one is
/// [`Type::Unchecked`].
const UNCHECKED_KEYWORDS: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$dynamicRef",
    "$recursiveRef",
];

/// `obj[key]`. A schema node holds a few keywords and is asked for some forty (each keyword
/// fexpr reads or refuses): for a small object comparing its keys is much cheaper than
/// hashing the key, which serde_json's map does with SipHash (it dominated reading the tools'
/// schemas when a manager is built).
fn field<'a>(obj: &'a serde_json::Map<String, Json>, key: &str) -> Option<&'a Json> {
    if obj.len() <= 8 {
        obj.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        obj.get(key)
    }
}

/// The validation keywords [`Bounds`] holds.
const BOUND_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "pattern",
];

/// Keywords a tool's parameter schema (an object with `properties`) may hold at its top level
/// besides annotations: anything else that constrains the object makes the signature refuse
/// every call.
const RECORD_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "deprecated",
    "readOnly",
    "writeOnly",
    "nullable",
    "format",
];

/// A definition being read, innermost last.
struct Active {
    pointer: String,
    def: Weak<Definition>,
    /// Value nesting (properties, items) when the definition was entered.
    nesting: usize,
    /// Whether the definition refers to itself.
    used: bool,
}

/// The document `$ref`s point into, the nodes left to read, and the definitions being read.
pub(super) struct Reader<'a> {
    root: &'a Json,
    budget: Cell<usize>,
    active: RefCell<Vec<Active>>,
    /// Value levels entered so far (properties, items, additional properties).
    nesting: Cell<usize>,
    /// The document, shared by the recursive definitions read from it.
    shared: OnceCell<Arc<Json>>,
    /// Each `pattern` of the document, compiled once (a schema may repeat one on every
    /// property), and the bytes left of [`Pattern::DOCUMENT_LIMIT`].
    patterns: RefCell<std::collections::HashMap<String, Result<Pattern, String>>>,
    pattern_bytes: Cell<usize>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(root: &'a Json) -> Reader<'a> {
        Reader {
            root,
            budget: Cell::new(MAX_SCHEMA_NODES),
            active: RefCell::new(Vec::new()),
            nesting: Cell::new(0),
            shared: OnceCell::new(),
            patterns: RefCell::new(std::collections::HashMap::new()),
            pattern_bytes: Cell::new(Pattern::DOCUMENT_LIMIT),
        }
    }

    /// `source` compiled, once per document, within what is left of the document's
    /// [`Pattern::DOCUMENT_LIMIT`].
    fn pattern(&self, source: &str) -> Result<Pattern, String> {
        if let Some(known) = self.patterns.borrow().get(source) {
            return known.clone();
        }
        let left = self.pattern_bytes.get();
        let compiled = if left == 0 {
            Err(format!(
                "its `pattern` `{}` cannot be used: the schema's patterns together take more \
                 than {} bytes to compile",
                clip(source, 60),
                Pattern::DOCUMENT_LIMIT
            ))
        } else {
            let (compiled, used) = match Pattern::within(source, left.min(Pattern::SIZE_LIMIT)) {
                Ok((pattern, used)) => (Ok(pattern), used),
                Err((reason, used)) => (Err(reason), used),
            };
            self.pattern_bytes.set(left.saturating_sub(used.max(1)));
            compiled
        };
        self.patterns
            .borrow_mut()
            .insert(source.to_string(), compiled.clone());
        compiled
    }

    /// Read `schema` as the type of a nested value (a property, an item).
    fn nested(&self, schema: &Json, depth: usize) -> Type {
        self.nesting.set(self.nesting.get() + 1);
        let ty = schema_type(schema, self, depth + 1, None);
        self.nesting.set(self.nesting.get() - 1);
        ty
    }

    fn shared_root(&self) -> Arc<Json> {
        self.shared
            .get_or_init(|| Arc::new(self.root.clone()))
            .clone()
    }
}

/// A recursive definition: where it is in its document, and the type read from it.
pub(super) struct Definition {
    pub(super) name: String,
    pub(super) pointer: String,
    pub(super) root: Arc<Json>,
    /// Read when the definition was first met, or on first use after decoding.
    pub(super) ty: OnceLock<Type>,
}

impl Definition {
    /// The definition's type; its references to itself point back here.
    pub(super) fn resolved(self: &Arc<Definition>) -> &Type {
        self.ty.get_or_init(|| {
            let reader = Reader::new(&self.root);
            let _ = reader.shared.set(self.root.clone());
            reader.active.borrow_mut().push(Active {
                pointer: self.pointer.clone(),
                def: Arc::downgrade(self),
                nesting: 0,
                used: false,
            });
            match resolve_ref(&self.pointer, &self.root) {
                Some(schema) => schema_type(schema, &reader, 1, Some(&self.name)),
                None => unresolved(&self.pointer),
            }
        })
    }
}
fn unchecked(reason: impl Into<String>) -> Type {
    Type::Unchecked(reason.into())
}

fn unresolved(target: &str) -> Type {
    unchecked(format!(
        "its `$ref` `{}` does not resolve in the schema",
        clip(target, 60)
    ))
}

pub(super) fn schema_type(
    schema: &Json,
    root: &Reader,
    depth: usize,
    name_hint: Option<&str>,
) -> Type {
    let left = root.budget.get();
    if left == 0 {
        return unchecked(format!(
            "the schema is too large to check (more than {MAX_SCHEMA_NODES} nodes)"
        ));
    }
    if depth > MAX_SCHEMA_DEPTH {
        return unchecked(format!(
            "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
    }
    root.budget.set(left - 1);
    let obj = match schema {
        Json::Bool(true) => return Type::Any,
        Json::Bool(false) => return unchecked("its schema is `false`: no value is allowed"),
        Json::Object(obj) => obj,
        _ => return unchecked("its schema is neither an object nor a boolean"),
    };
    if let Some(keyword) = UNCHECKED_KEYWORDS.iter().find(|k| field(obj, k).is_some()) {
        return unchecked(format!(
            "its schema uses `{keyword}`, which fexpr does not check"
        ));
    }
    let mut parts = Vec::new();
    if let Some(target) = field(obj, "$ref") {
        parts.push(match target.as_str() {
            Some(target) => reference(target, root, depth),
            None => unchecked("its `$ref` is not a string"),
        });
    }
    let listed = match (field(obj, "const"), field(obj, "enum")) {
        (Some(c), _) => Some(std::iter::once(Value::from_json(c)).collect::<IndexSet<_>>()),
        (None, Some(Json::Array(values))) => Some(values.iter().map(Value::from_json).collect()),
        (None, Some(_)) => return unchecked("its `enum` is not a list"),
        (None, None) => None,
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = field(obj, key) {
            let Some(alts) = alts.as_array() else {
                return unchecked(format!("its `{key}` is not a list"));
            };
            parts.push(union(
                alts.iter()
                    .map(|s| schema_type(s, root, depth + 1, None))
                    .collect(),
            ));
        }
    }
    if let Some(all) = field(obj, "allOf") {
        let Some(all) = all.as_array() else {
            return unchecked("its `allOf` is not a list");
        };
        let hint = if all.len() == 1 { name_hint } else { None };
        parts.extend(all.iter().map(|s| schema_type(s, root, depth + 1, hint)));
    }
    let core = match core_type(obj, root, depth, name_hint) {
        Ok(core) => core,
        Err(unchecked) => return unchecked,
    };
    // The type's own part first: it makes the value (a record, say) that the others check.
    match (listed, core) {
        // The listed values are the only ones accepted: keep those the type accepts too —
        // unless it accepts none of them (`"type": "boolean", "enum": ["True", "dontcare"]`, a
        // slip in the schema that no value could meet): then the list is what was meant.
        (Some(values), Some(core)) => {
            let typed: IndexSet<Value> = values
                .iter()
                .filter(|v| core.coerce((*v).clone(), "").is_ok())
                .cloned()
                .collect();
            let values = if typed.is_empty() { values } else { typed };
            parts.insert(0, Type::Enum(Arc::new(values)));
        }
        (Some(values), None) => parts.insert(0, Type::Enum(Arc::new(values))),
        (None, Some(core)) => parts.insert(0, core),
        (None, None) => {}
    }
    let ty = all(parts);
    if field(obj, "nullable").and_then(Json::as_bool) == Some(true) {
        union(vec![ty, Type::None])
    } else {
        ty
    }
}

/// The part of `obj` its `type` and validation keywords make (`None` when it has neither), or
/// the [`Type::Unchecked`] the whole schema is when one of them cannot be read.
fn core_type(
    obj: &serde_json::Map<String, Json>,
    root: &Reader,
    depth: usize,
    name_hint: Option<&str>,
) -> Result<Option<Type>, Type> {
    let core = match field(obj, "type") {
        Some(Json::String(t)) => Some(named_type(t, obj, root, depth, name_hint)),
        Some(Json::Array(ts)) => Some(union(
            ts.iter()
                .map(|t| match t.as_str() {
                    Some(t) => named_type(t, obj, root, depth, name_hint),
                    None => unchecked("its `type` list holds a non-string"),
                })
                .collect(),
        )),
        Some(_) => return Err(unchecked("its `type` is neither a string nor a list")),
        None if field(obj, "properties").is_some() || field(obj, "required").is_some() => {
            Some(named_type("object", obj, root, depth, name_hint))
        }
        None => None,
    };
    let bounds = match bounds(obj, root) {
        Ok(bounds) => bounds,
        Err(reason) => return Err(unchecked(reason)),
    };
    Ok(match (core, bounds) {
        (Some(t), Some(b)) => Some(Type::Bounded(Box::new(t), Arc::new(b))),
        (None, Some(b)) => Some(Type::Bounded(Box::new(Type::Any), Arc::new(b))),
        (core, None) => core,
    })
}

/// The type of a `$ref`: read in place, or — for a definition that refers to itself — a
/// [`Type::Recursive`] whose inner references point back to it.
fn reference(target: &str, root: &Reader, depth: usize) -> Type {
    {
        let mut active = root.active.borrow_mut();
        if let Some(entry) = active.iter_mut().rev().find(|a| a.pointer == target) {
            if entry.nesting == root.nesting.get() {
                return unchecked(format!(
                    "its definition `{}` refers to itself without nesting",
                    clip(target, 60)
                ));
            }
            entry.used = true;
            return Type::Recursive(Recursive(Link::Back(entry.def.clone())));
        }
    }
    let Some(schema) = resolve_ref(target, root.root) else {
        return unresolved(target);
    };
    let name = match target.rsplit('/').next() {
        Some(last) if !last.is_empty() && last != "#" => last.to_string(),
        _ => schema
            .get("title")
            .and_then(Json::as_str)
            .unwrap_or("object")
            .to_string(),
    };
    let mut recursive = false;
    let def = Arc::new_cyclic(|weak| {
        root.active.borrow_mut().push(Active {
            pointer: target.to_string(),
            def: weak.clone(),
            nesting: root.nesting.get(),
            used: false,
        });
        let ty = schema_type(schema, root, depth + 1, Some(&name));
        recursive = root.active.borrow_mut().pop().is_some_and(|a| a.used);
        Definition {
            name,
            pointer: target.to_string(),
            root: if recursive {
                root.shared_root()
            } else {
                Arc::new(Json::Null)
            },
            ty: OnceLock::from(ty),
        }
    });
    if recursive {
        return Type::Recursive(Recursive(Link::Owner(def)));
    }
    match Arc::try_unwrap(def) {
        Ok(def) => def.ty.into_inner().unwrap_or(Type::Any),
        Err(def) => Type::Recursive(Recursive(Link::Owner(def))),
    }
}

/// `$ref` targets are JSON pointers into the same document (`#/$defs/Point`, or `#`).
fn resolve_ref<'a>(target: &str, root: &'a Json) -> Option<&'a Json> {
    let pointer = target.strip_prefix('#')?;
    root.pointer(pointer)
}

fn union(mut alts: Vec<Type>) -> Type {
    alts.dedup();
    if alts.contains(&Type::Any) {
        return Type::Any;
    }
    match alts.len() {
        0 => unchecked("its `anyOf` lists no alternative"),
        1 => alts.pop().unwrap_or(Type::Any),
        _ => Type::Union(alts),
    }
}

/// Every one of `parts`: an unchecked part refuses everything, `Any` parts add nothing.
fn all(mut parts: Vec<Type>) -> Type {
    if let Some(i) = parts.iter().position(|t| matches!(t, Type::Unchecked(_))) {
        return parts.swap_remove(i);
    }
    parts.retain(|t| *t != Type::Any);
    match parts.len() {
        0 => Type::Any,
        1 => parts.pop().unwrap_or(Type::Any),
        _ => Type::All(parts),
    }
}

/// The validation keywords of `obj` (`None` if there are none); `Err` says why one cannot be
/// used: a bound of the wrong kind (`"maxLength": "3"`, `"multipleOf": 0`; see
/// [`invalid_bound`]) or a `pattern` that does not compile. Patterns are compiled once per
/// source text in a document (`reader`).
fn bounds(obj: &serde_json::Map<String, Json>, reader: &Reader) -> Result<Option<Bounds>, String> {
    if let Some(reason) = invalid_bound(obj) {
        return Err(reason);
    }
    let number = |key: &str| field(obj, key).and_then(Json::as_f64);
    let count = |key: &str| field(obj, key).and_then(whole_number);
    let flag = |key: &str| field(obj, key).and_then(Json::as_bool) == Some(true);
    let mut b = Bounds {
        minimum: number("minimum"),
        maximum: number("maximum"),
        exclusive_minimum: number("exclusiveMinimum"),
        exclusive_maximum: number("exclusiveMaximum"),
        multiple_of: number("multipleOf"),
        int_range: None,
        min_length: count("minLength"),
        max_length: count("maxLength"),
        min_items: count("minItems"),
        max_items: count("maxItems"),
        min_properties: count("minProperties"),
        max_properties: count("maxProperties"),
        required: Vec::new(),
        pattern: match field(obj, "pattern") {
            None => None,
            Some(Json::String(source)) => Some(reader.pattern(source)?),
            Some(_) => return Err("its `pattern` is not a string".into()),
        },
    };
    // Draft-04: `exclusiveMinimum: true` makes `minimum` exclusive.
    if flag("exclusiveMinimum") {
        b.exclusive_minimum = b.minimum.take();
    }
    if flag("exclusiveMaximum") {
        b.exclusive_maximum = b.maximum.take();
    }
    if field(obj, "type").and_then(Json::as_str) == Some("integer") {
        b.int_range = obj
            .get("format")
            .and_then(Json::as_str)
            .and_then(int_format);
    }
    Ok((b != Bounds::default()).then_some(b))
}

/// The first validation keyword in `schema` or any schema nested in it (as deep as schemas
/// are read) that is not a bound fexpr can apply ([`invalid_bound`]), with where it is
/// (`properties.name: its `maxLength` must be ...`): for refusing a tool definition.
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "name": {"type": "string", "maxLength": "3"}}});
/// assert_eq!(
///     fexpr::types::schema_problem(&schema).unwrap(),
///     "properties.name: its `maxLength` must be a whole number >= 0, not \"3\""
/// );
/// ```
pub fn schema_problem(schema: &Json) -> Option<String> {
    let mut stack = vec![(schema, String::new(), 0usize)];
    while let Some((schema, at, depth)) = stack.pop() {
        let Some(obj) = schema.as_object() else {
            continue;
        };
        if let Some(reason) = invalid_bound(obj) {
            return Some(match at.is_empty() {
                true => reason,
                false => format!("{at}: {reason}"),
            });
        }
        if depth >= MAX_SCHEMA_DEPTH {
            continue;
        }
        let join = |key: &str| match at.is_empty() {
            true => key.to_string(),
            false => format!("{at}.{key}"),
        };
        for (key, value) in obj.iter().rev() {
            match (key.as_str(), value) {
                ("properties" | "$defs" | "definitions" | "patternProperties", Json::Object(m)) => {
                    for (name, sub) in m.iter().rev() {
                        stack.push((sub, join(&format!("{key}.{name}")), depth + 1));
                    }
                }
                ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Json::Array(subs)) => {
                    for (i, sub) in subs.iter().enumerate().rev() {
                        stack.push((sub, join(&format!("{key}[{i}]")), depth + 1));
                    }
                }
                (
                    "items" | "additionalProperties" | "not" | "contains" | "if" | "then" | "else",
                    sub @ Json::Object(_),
                ) => stack.push((sub, join(key), depth + 1)),
                _ => {}
            }
        }
    }
    None
}

/// A JSON number that is a whole number >= 0 (`3`, or `3.0` as JSON Schema allows).
fn whole_number(value: &Json) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
            .map(|f| f as u64)
    })
}

/// Why a validation keyword of `obj` is not a bound fexpr can apply, naming the keyword: the
/// counts (`maxLength`, `minItems`, …) must be whole numbers >= 0, the limits (`minimum`, …)
/// numbers (`exclusiveMinimum`/`exclusiveMaximum` also draft-04's booleans), `multipleOf` a
/// number > 0. Such a schema is a mistake: it is refused, never read as "no bound".
pub fn invalid_bound(obj: &serde_json::Map<String, Json>) -> Option<String> {
    let shown = |v: &Json| clip(&v.to_string(), 40);
    for key in [
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
    ] {
        match field(obj, key) {
            Some(v) if whole_number(v).is_none() => {
                return Some(format!(
                    "its `{key}` must be a whole number >= 0, not {}",
                    shown(v)
                ))
            }
            _ => {}
        }
    }
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
        let draft4 = key.starts_with("exclusive");
        match field(obj, key) {
            Some(Json::Number(_)) | None => {}
            Some(Json::Bool(_)) if draft4 => {}
            Some(v) => return Some(format!("its `{key}` must be a number, not {}", shown(v))),
        }
    }
    match field(obj, "multipleOf") {
        Some(v) if !v.as_f64().is_some_and(|m| m > 0.0 && m.is_finite()) => Some(format!(
            "its `multipleOf` must be a number > 0, not {}",
            shown(v)
        )),
        _ => None,
    }
}

/// The range of an integer format.
fn int_format(format: &str) -> Option<(i128, i128, String)> {
    IntFormat::named(format).map(IntFormat::int_range)
}

fn named_type(
    t: &str,
    obj: &serde_json::Map<String, Json>,
    root: &Reader,
    depth: usize,
    name_hint: Option<&str>,
) -> Type {
    let sub = |key: &str| field(obj, key).map(|s| root.nested(s, depth));
    match t {
        "null" => Type::None,
        "boolean" => Type::Bool,
        "integer" => Type::Int,
        "number" => Type::Float,
        "string" => Type::Str,
        "array" if field(obj, "format").and_then(Json::as_str) == Some("ndarray") => Type::Array,
        "array" => match field(obj, "prefixItems").and_then(Json::as_array) {
            Some(items) => Type::Tuple(items.iter().map(|s| root.nested(s, depth)).collect()),
            None => match field(obj, "items") {
                // draft-07 tuple form
                Some(Json::Array(items)) => {
                    Type::Tuple(items.iter().map(|s| root.nested(s, depth)).collect())
                }
                _ if field(obj, "uniqueItems").and_then(Json::as_bool) == Some(true) => {
                    Type::Set(Box::new(sub("items").unwrap_or(Type::Any)))
                }
                _ => Type::List(Box::new(sub("items").unwrap_or(Type::Any))),
            },
        },
        "object" => {
            let has_fields = obj
                .get("properties")
                .and_then(Json::as_object)
                .is_some_and(|p| !p.is_empty());
            if has_fields {
                let name = obj
                    .get("title")
                    .and_then(Json::as_str)
                    .or(name_hint)
                    .unwrap_or("object");
                return Type::Record(Arc::new(RecordType::from_object_schema(
                    name, obj, root, depth,
                )));
            }
            // A dict, whose keys must include the `required` ones (and, with
            // `additionalProperties: false`, may be nothing else).
            let required: Vec<String> = obj
                .get("required")
                .and_then(Json::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Json::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let (dict, max_properties) = match field(obj, "additionalProperties") {
                Some(s @ Json::Object(_)) => (Type::Dict(Box::new(root.nested(s, depth))), None),
                Some(Json::Bool(false)) => {
                    let count = u64::try_from(required.len()).unwrap_or(u64::MAX);
                    (Type::Dict(Box::new(Type::Any)), Some(count))
                }
                _ => (Type::Dict(Box::new(Type::Any)), None),
            };
            if required.is_empty() && max_properties.is_none() {
                return dict;
            }
            Type::Bounded(
                Box::new(dict),
                Arc::new(Bounds {
                    max_properties,
                    required,
                    ..Bounds::default()
                }),
            )
        }
        other => unchecked(format!("its `type` `{}` is unknown", clip(other, 40))),
    }
}
impl RecordType {
    /// A record type (or parameter list) from an object schema with `properties`.
    ///
    /// ```
    /// use fexpr::types::RecordType;
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
    ///     "required": ["a"]
    /// });
    /// let sig = RecordType::from_schema("add", &schema);
    /// assert_eq!(sig.to_string(), "add(a: int, b: int = 1)");
    /// ```
    pub fn from_schema(name: &str, schema: &Json) -> RecordType {
        let reader = Reader::new(schema);
        let Some(obj) = schema.as_object() else {
            let mut rt = RecordType::new(name, vec![], false);
            rt.unchecked = Some("its parameter schema is not an object".into());
            return rt;
        };
        let mut rt = RecordType::from_object_schema(name, obj, &reader, 0);
        if rt.unchecked.is_none() {
            let constraining = ["$ref", "anyOf", "oneOf", "allOf", "enum", "const"];
            let extra = obj.keys().map(String::as_str).find(|k| {
                !RECORD_KEYWORDS.contains(k)
                    && (UNCHECKED_KEYWORDS.contains(k)
                        || BOUND_KEYWORDS.contains(k)
                        || constraining.contains(k))
            });
            if let Some(keyword) = extra {
                rt.unchecked = Some(format!(
                    "its parameter schema uses `{keyword}` beside the parameters, which fexpr \
                     does not check"
                ));
            }
        }
        rt
    }

    fn new(name: &str, fields: Vec<Field>, closed: bool) -> RecordType {
        RecordType {
            name: name.to_string(),
            fields,
            closed,
            unchecked: None,
            index: FieldIndex::default(),
        }
    }

    fn from_object_schema(
        name: &str,
        obj: &serde_json::Map<String, Json>,
        root: &Reader,
        depth: usize,
    ) -> RecordType {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Json::as_array)
            .map(|r| r.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let properties = field(obj, "properties").and_then(Json::as_object);
        let mut fields: Vec<Field> = properties
            .map(|props| {
                props
                    .iter()
                    .map(|(fname, fschema)| {
                        let default = fschema.get("default").map(Value::from_json);
                        Field {
                            name: fname.clone(),
                            ty: root.nested(fschema, depth),
                            required: required.contains(&fname.as_str()) && default.is_none(),
                            default,
                            description: fschema
                                .get("description")
                                .and_then(Json::as_str)
                                .map(str::to_string),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        // A required name without a property schema: required, of any type.
        for name in required {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                fields.push(Field {
                    name: name.to_string(),
                    ty: Type::Any,
                    required: true,
                    default: None,
                    description: None,
                });
            }
        }
        let closed = field(obj, "additionalProperties") == Some(&Json::Bool(false));
        RecordType::new(name, fields, closed)
    }
}

//! The allow-list: the only names an expression can reach.
//!
//! A name (or a whole dotted path such as `np.array`) resolves to exactly one [`Entry`]: a
//! variable, a record type, a built-in function, or a tool's signature. There is no
//! attribute access on values and no fallback to anything else.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::types::RecordType;
use crate::value::builtins::Builtin;
use crate::value::Value;

/// What a name in the context stands for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Entry {
    /// A value (`x = 2`); `size` is its approximate size in bytes, charged on each use.
    Variable {
        /// The value.
        value: Value,
        /// Its approximate size in bytes.
        size: usize,
    },
    /// A record type that can be constructed by name (`Point(x=1, y=2)`).
    Record(Arc<RecordType>),
    /// A built-in function (`np.array`, `len`).
    Function(Builtin),
    /// A tool, by its signature; the manager holds the implementation.
    Tool(Arc<RecordType>),
}

/// The allow-listed names an expression may use.
///
/// ```
/// use fexpr::Context;
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Point { x: i64, y: i64 }
/// let ctx = Context::new().variable("x", 2).record::<Point>().numpy("np");
/// assert!(ctx.get("np.array").is_some());
/// assert!(ctx.get("Point").is_some());
/// assert!(ctx.get("os").is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    entries: IndexMap<String, Entry, foldhash::fast::RandomState>,
}

/// Where the evaluator looks names up: a [`Context`], or the sandbox guest's view of one
/// (which decodes only the entries an expression names). `Sync`, so that an evaluation that
/// holds one across a tool call's `await` is a `Send` future.
pub trait Resolve: Sync {
    /// The entry of a name or dotted path.
    fn get(&self, name: &str) -> Option<&Entry>;
    /// Every name in order, with whether it is a variable (for "did you mean" hints).
    fn names(&self) -> Vec<(&str, bool)>;
}

impl Resolve for Context {
    fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    fn names(&self) -> Vec<(&str, bool)> {
        self.entries
            .iter()
            .map(|(name, entry)| (name.as_str(), entry.is_variable()))
            .collect()
    }
}

impl Entry {
    /// Whether this is a [`Entry::Variable`].
    pub fn is_variable(&self) -> bool {
        matches!(self, Entry::Variable { .. })
    }
}

impl Context {
    /// An empty context: nothing is reachable.
    pub fn new() -> Context {
        Context::default()
    }

    /// Look up a name or dotted path.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    /// All names with their entries, in insertion order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Add or replace `name`. Names must be identifiers or dotted identifiers, not dunders.
    ///
    /// # Panics
    /// On an invalid name: names are chosen by the program, never by model output.
    pub fn insert(&mut self, name: impl Into<String>, entry: Entry) -> &mut Context {
        let name = name.into();
        assert!(
            valid_name(&name),
            "invalid context name {name:?}: use identifiers or dotted identifiers"
        );
        self.entries.insert(name, entry);
        self
    }

    /// Remove `name`; returns what it stood for.
    pub fn remove(&mut self, name: &str) -> Option<Entry> {
        self.entries.shift_remove(name)
    }

    /// Add a variable.
    pub fn variable(mut self, name: impl Into<String>, value: impl Into<Value>) -> Context {
        let value = value.into();
        let size = value.approx_size();
        self.insert(name, Entry::Variable { value, size });
        self
    }

    /// Add a record type generated from a Rust type's JSON Schema, under its schema name.
    pub fn record<T: schemars::JsonSchema>(mut self) -> Context {
        let rt = record_type_of::<T>();
        self.insert(rt.name.clone(), Entry::Record(Arc::new(rt)));
        self
    }

    /// Add a record type under its own name.
    pub fn record_type(mut self, rt: RecordType) -> Context {
        self.insert(rt.name.clone(), Entry::Record(Arc::new(rt)));
        self
    }

    /// Add the numpy-like functions under `prefix` (`np.array`, `np.zeros`, `np.ones`,
    /// `np.arange`, `np.sum`, `np.mean`, `np.min`, `np.max`).
    pub fn numpy(mut self, prefix: &str) -> Context {
        for b in Builtin::NUMPY {
            self.insert(format!("{prefix}.{}", b.name()), Entry::Function(*b));
        }
        self
    }

    /// Add Python's pure numeric built-ins: `abs`, `len`, `min`, `max`, `round`, `sum`.
    pub fn builtins(mut self) -> Context {
        for b in Builtin::PYTHON {
            self.insert(b.name(), Entry::Function(*b));
        }
        self
    }
}

/// The record type for a Rust type with a JSON Schema (its fields, types and defaults).
pub fn record_type_of<T: schemars::JsonSchema>() -> RecordType {
    let schema = schemars::schema_for!(T);
    let json = schema.as_value();
    let name = json
        .get("title")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| T::schema_name().into_owned());
    RecordType::from_schema(&name, json)
}

/// Identifiers joined by dots; no dunders.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            let mut chars = part.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
                && chars.all(|c| c == '_' || c.is_alphanumeric())
                && !(part.starts_with("__") && part.ends_with("__"))
        })
}

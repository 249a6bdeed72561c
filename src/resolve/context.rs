//! The allow-list: the only names an expression can reach.
//!
//! A name (or a whole dotted path such as `np.array`) resolves to exactly one [`Entry`]: a
//! variable, a record type, a built-in function, or a tool's signature. There is no
//! attribute access on values and no fallback to anything else.
//!
//! # Tool names
//! A tool is registered under the name its definition gives ([`valid_tool_name`]: what
//! OpenAI, Anthropic, Gemini and MCP allow, `get-current-weather`, `github.create_issue`,
//! `files:read`), and JSON calls, model formats and MCP clients call it by that name. Python
//! call text cannot spell every such name, so each tool is also reachable by one **Python
//! alias** ([`python_alias`]): `get_current_weather(city="Paris")` calls
//! `get-current-weather`. The alias of a name that is already a Python name is the name
//! itself. Whatever name a call used, its output carries the tool's own name. Two tools whose
//! aliases are one identifier, or an alias that is another entry's name, are a registration
//! problem naming both ([`Context::name_problems`]).

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
    /// The Python aliases of the tools whose names are not Python names: alias → name.
    #[serde(default)]
    aliases: Aliases,
}

/// A context's Python aliases: alias → the tool's own name.
pub(crate) type Aliases = IndexMap<String, String, foldhash::fast::RandomState>;

/// The value of `name` in `entries`, keyed by own names: its own, or that of the tool whose
/// Python alias it is. The one way a name is resolved: [`Context::get`], and the sandbox's
/// table of encoded entries that answers the guest's lookups.
pub(crate) fn lookup<'m, V>(
    entries: &'m IndexMap<String, V, foldhash::fast::RandomState>,
    aliases: &Aliases,
    name: &str,
) -> Option<&'m V> {
    entries
        .get(name)
        .or_else(|| aliases.get(name).and_then(|own| entries.get(own)))
}

/// Where the evaluator looks names up: a [`Context`], or the sandbox guest's view of one
/// (which decodes only the entries an expression names). `Sync`, so that an evaluation that
/// holds one across a tool call's `await` is a `Send` future.
pub trait Resolve: Sync {
    /// The entry of a name or dotted path (a tool's own name or its [`python_alias`]).
    fn get(&self, name: &str) -> Option<&Entry>;
    /// Every name in order, with whether it is a variable (for "did you mean" hints).
    fn names(&self) -> Vec<(&str, bool)>;
}

impl Resolve for Context {
    fn get(&self, name: &str) -> Option<&Entry> {
        Context::get(self, name)
    }

    fn names(&self) -> Vec<(&str, bool)> {
        self.entries
            .iter()
            .map(|(name, entry)| (name.as_str(), entry.is_variable()))
            .chain(self.aliases.keys().map(|alias| (alias.as_str(), false)))
            .collect()
    }
}

/// The tool's own name for a call written as `written` (its name or its Python alias), or
/// `written` itself when it names no tool.
pub(crate) fn tool_name<'a>(ctx: &'a dyn Resolve, written: &'a str) -> &'a str {
    match ctx.get(written) {
        Some(Entry::Tool(sig)) => &sig.name,
        _ => written,
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

    /// Look up a name or dotted path: an entry's own name, or a tool's [`python_alias`].
    ///
    /// ```
    /// use fexpr::context::{Context, Entry};
    /// let def = fexpr::ToolDefinition::new("get-current-weather", "", serde_json::json!({}));
    /// let mut ctx = Context::new();
    /// ctx.insert("get-current-weather", Entry::Tool(def.signature));
    /// assert!(ctx.get("get-current-weather").is_some());
    /// assert!(ctx.get("get_current_weather").is_some()); // its Python alias
    /// ```
    pub fn get(&self, name: &str) -> Option<&Entry> {
        lookup(&self.entries, &self.aliases, name)
    }

    /// The Python aliases of the tools whose names are not Python names: alias → own name
    /// (for a copy of the context that resolves names with [`lookup`], as the sandbox's
    /// context table does).
    pub(crate) fn aliases(&self) -> &Aliases {
        &self.aliases
    }

    /// The tool's own name for `name` (its own name or its Python alias), if it names a tool.
    pub fn tool_name(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(Entry::Tool(sig)) => Some(&sig.name),
            _ => None,
        }
    }

    /// All names with their entries, in insertion order (tools under their own names).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Every name a call can use with its entry: [`entries`](Context::entries), then each
    /// Python alias with its tool's entry (what the sandbox guest looks names up in).
    pub fn reachable(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries().chain(
            self.aliases.iter().filter_map(|(alias, own)| {
                self.entries.get(own).map(|entry| (alias.as_str(), entry))
            }),
        )
    }

    /// Add or replace `name`. A tool's name is any name [`valid_tool_name`] allows (it is also
    /// reachable by its [`python_alias`]); other names must be identifiers or dotted
    /// identifiers, not dunders. A tool is given a signature named `name`.
    ///
    /// # Panics
    /// On an invalid name: names are chosen by the program, never by model output (a
    /// [`ToolManagerBuilder`](crate::manager::ToolManagerBuilder) checks a tool's name first
    /// and reports it as a registration problem).
    pub fn insert(&mut self, name: impl Into<String>, entry: Entry) -> &mut Context {
        let name = name.into();
        let entry = match entry {
            Entry::Tool(sig) => {
                if let Err(problem) = check_tool_name(&name) {
                    panic!("invalid tool name {name:?}: {problem}");
                }
                Entry::Tool(if sig.name == name {
                    sig
                } else {
                    let mut renamed = RecordType::clone(&sig);
                    renamed.name.clone_from(&name);
                    Arc::new(renamed)
                })
            }
            other => {
                assert!(
                    valid_name(&name),
                    "invalid context name {name:?}: use identifiers or dotted identifiers"
                );
                other
            }
        };
        self.forget_alias_of(&name);
        if matches!(entry, Entry::Tool(_)) {
            let alias = python_alias(&name);
            if alias != name {
                self.aliases.insert(alias, name.clone());
            }
        }
        self.entries.insert(name, entry);
        self
    }

    /// Remove `name` (a tool by its own name); returns what it stood for.
    pub fn remove(&mut self, name: &str) -> Option<Entry> {
        self.forget_alias_of(name);
        self.entries.shift_remove(name)
    }

    /// Drop the alias that leads to `name`, if any.
    fn forget_alias_of(&mut self, name: &str) {
        if matches!(self.entries.get(name), Some(Entry::Tool(_))) {
            let alias = python_alias(name);
            if self.aliases.get(&alias).is_some_and(|own| own == name) {
                self.aliases.shift_remove(&alias);
            }
        }
    }

    /// Every name clash the Python aliases make, one `Config` error each, naming both: two
    /// tools with one alias (`get-sum` and `get_sum`), or a tool's alias that is another
    /// entry's name. Empty when every name a call can use stands for one entry.
    ///
    /// ```
    /// use fexpr::context::{Context, Entry};
    /// let tool = |name: &str| Entry::Tool(fexpr::ToolDefinition::new(name, "", serde_json::json!({})).signature);
    /// let mut ctx = Context::new();
    /// ctx.insert("get-sum", tool("get-sum")).insert("get:sum", tool("get:sum"));
    /// let problems = ctx.name_problems();
    /// assert_eq!(problems[0].message,
    ///     "the tools `get-sum` and `get:sum` are both called `get_sum` from Python");
    /// ```
    pub fn name_problems(&self) -> Vec<crate::error::Error> {
        use crate::error::{clip, Error, ErrorKind};
        // The first tool seen with each alias that is not its own name.
        let mut seen: IndexMap<String, &str, foldhash::fast::RandomState> = IndexMap::default();
        let mut problems = Vec::new();
        for (name, entry) in &self.entries {
            if !matches!(entry, Entry::Tool(_)) {
                continue;
            }
            let alias = python_alias(name);
            if alias == *name {
                continue;
            }
            let both = |a: &str, b: &str| {
                format!(
                    "the tools `{}` and `{}` are both called `{}` from Python",
                    clip(a, 80),
                    clip(b, 80),
                    clip(&alias, 80)
                )
            };
            let message = match (self.entries.get(&alias), seen.get(&alias)) {
                (Some(Entry::Tool(_)), _) => both(name, &alias),
                (Some(_), _) => format!(
                    "the tool `{}` is called `{}` from Python, the name of a context entry",
                    clip(name, 80),
                    clip(&alias, 80)
                ),
                (None, Some(first)) => both(first, name),
                (None, None) => {
                    seen.insert(alias, name);
                    continue;
                }
            };
            problems.push(
                Error::new(ErrorKind::Config, message)
                    .with_hint("rename one of them: Python call text must reach each by one name"),
            );
        }
        problems
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

/// The longest tool name: MCP's and Anthropic's 128 characters (OpenAI and Gemini allow 64).
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// Whether `name` can name a tool: 1 to [`MAX_TOOL_NAME_CHARS`] characters, each a letter
/// or digit (of any script, as in Python identifiers), `_`, `-`, `.` or `:`. That is every
/// name OpenAI (`^[a-zA-Z0-9_-]{1,64}$`), Anthropic (the same, up to 128), Gemini (also `.`
/// and `:`) and MCP (`A-Z a-z 0-9 _ - .`, up to 128) allow, and every Python name.
///
/// ```
/// use fexpr::context::valid_tool_name;
/// for ok in ["get-current-weather", "github.create_issue", "files:read", "math.hypot", "héllo"] {
///     assert!(valid_tool_name(ok), "{ok}");
/// }
/// for bad in ["", "bad name!", "a/b", "x(y)", &"a".repeat(129)] {
///     assert!(!valid_tool_name(bad), "{bad}");
/// }
/// ```
pub fn valid_tool_name(name: &str) -> bool {
    check_tool_name(name).is_ok()
}

/// Why `name` cannot name a tool (see [`valid_tool_name`]).
pub(crate) fn check_tool_name(name: &str) -> Result<(), String> {
    let chars = name.chars().count();
    if chars == 0 {
        return Err("it is empty".into());
    }
    if chars > MAX_TOOL_NAME_CHARS {
        return Err(format!(
            "it has {chars} characters, more than the {MAX_TOOL_NAME_CHARS} any provider allows"
        ));
    }
    match name.chars().find(|c| !tool_name_char(*c)) {
        Some(bad) => Err(format!(
            "it holds {bad:?}; a tool name is letters, digits, `_`, `-`, `.` and `:` (what \
             OpenAI, Anthropic, Gemini and MCP allow)"
        )),
        None => Ok(()),
    }
}

fn tool_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// The one name Python call text reaches the tool `name` by: the name itself when it is a
/// Python name (identifiers joined by dots), otherwise
///
/// - `.` separates the parts of a dotted path, as in `np.array`, and stays (an empty part,
///   from a leading, trailing or doubled dot, becomes `_`);
/// - in each part, `-` and `:` become `_`;
/// - a part that starts with a digit gets `_` in front (`2fa` → `_2fa`);
/// - a part that is a Python keyword gets `_` behind (`class` → `class_`);
/// - a part that is a dunder (`__init__`), which fexpr never resolves, gets `tool_` in front.
///
/// ```
/// use fexpr::context::python_alias;
/// assert_eq!(python_alias("get-current-weather"), "get_current_weather");
/// assert_eq!(python_alias("github.create_issue"), "github.create_issue");
/// assert_eq!(python_alias("files:read"), "files_read");
/// assert_eq!(python_alias("2fa.send-code"), "_2fa.send_code");
/// assert_eq!(python_alias("import"), "import_");
/// assert_eq!(python_alias("__init__"), "tool___init__");
/// assert_eq!(python_alias(".hidden"), "_.hidden");
/// ```
pub fn python_alias(name: &str) -> String {
    let parts: Vec<String> = name
        .split('.')
        .map(|part| {
            let mut out: String = part
                .chars()
                .map(|c| if matches!(c, '-' | ':') { '_' } else { c })
                .collect();
            if out.is_empty() {
                out.push('_');
            }
            if out.starts_with(|c: char| c.is_numeric()) {
                out.insert(0, '_');
            }
            if crate::syntax::PYTHON_KEYWORDS.contains(&out.as_str()) {
                out.push('_');
            }
            if crate::syntax::is_dunder(&out) {
                out.insert_str(0, "tool_");
            }
            out
        })
        .collect();
    parts.join(".")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Entry {
        let schema = serde_json::json!({"type": "object", "properties": {}});
        Entry::Tool(Arc::new(RecordType::from_schema(name, &schema)))
    }

    #[test]
    fn every_provider_name_is_a_tool_name_and_has_one_python_alias() {
        for (name, alias) in [
            ("get-current-weather", "get_current_weather"),
            ("github.create_issue", "github.create_issue"),
            ("files:read", "files_read"),
            ("a-b.c-d", "a_b.c_d"),
            ("2fa", "_2fa"),
            ("class", "class_"),
            ("None", "None_"),
            ("x.from", "x.from_"),
            ("__call__", "tool___call__"),
            ("a..b", "a._.b"),
            ("héllo", "héllo"),
        ] {
            assert!(valid_tool_name(name), "{name}");
            assert_eq!(python_alias(name), alias, "{name}");
            assert!(valid_name(alias), "{alias}");
            // An alias is its own alias: one step reaches a Python name.
            assert_eq!(python_alias(alias), alias);
        }
        let long = "a".repeat(MAX_TOOL_NAME_CHARS);
        assert!(valid_tool_name(&long));
        assert!(!valid_tool_name(&format!("{long}a")));
        for bad in ["", "bad name!", "a/b", "f(x)", "a,b", "tab\t"] {
            assert!(check_tool_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_tool_is_found_by_its_name_and_its_alias_and_answers_to_its_name() {
        let mut ctx = Context::new();
        ctx.insert("get-current-weather", tool("something else"));
        for name in ["get-current-weather", "get_current_weather"] {
            assert_eq!(ctx.tool_name(name), Some("get-current-weather"));
            assert_eq!(tool_name(&ctx, name), "get-current-weather");
        }
        assert_eq!(tool_name(&ctx, "other"), "other");
        let names: Vec<&str> = ctx.reachable().map(|(n, _)| n).collect();
        assert_eq!(names, ["get-current-weather", "get_current_weather"]);
        assert_eq!(ctx.entries().count(), 1);
        assert!(ctx.name_problems().is_empty());
        // Removed or replaced by a non-tool, the alias goes with it.
        ctx.remove("get-current-weather");
        assert!(ctx.get("get_current_weather").is_none());
        assert_eq!(ctx.reachable().count(), 0);
    }

    #[test]
    fn names_python_cannot_tell_apart_are_problems_naming_both() {
        let mut ctx = Context::new().variable("files_read", 1);
        ctx.insert("get-sum", tool("get-sum"))
            .insert("get_sum", tool("get_sum"))
            .insert("files:read", tool("files:read"));
        let messages: Vec<String> = ctx.name_problems().into_iter().map(|e| e.message).collect();
        assert_eq!(
            messages,
            [
                "the tools `get-sum` and `get_sum` are both called `get_sum` from Python",
                "the tool `files:read` is called `files_read` from Python, the name of a context entry",
            ]
        );
    }
}

//! The manager's tool definitions as one value: [`ToolManager::definitions`] (or
//! [`ToolManager::definitions_in`] a session) gives a [`Definitions`], which iterates the
//! [`ToolDefinition`]s and renders them for each provider (`openai`, `openai_strict`,
//! `anthropic`, `functions`, `json`, `yaml`).

use serde_json::Value as Json;

use crate::dispatch::manager::{is_available, ToolManager};
use crate::dispatch::session::Session;
use crate::dispatch::tool::ToolDefinition;

/// The definitions of the tools a model may call now, to show it in a prompt or a provider's
/// `tools` field. An iterator of [`ToolDefinition`]s (in the manager's order) that also renders
/// the definitions it has not yielded yet in each provider's form.
///
/// ```
/// let manager = fexpr::demo::manager();
/// let defs = manager.definitions();
/// assert_eq!(defs.len(), manager.tools().count());
/// assert_eq!(defs.openai()[0]["type"], "function");
/// assert_eq!(defs.anthropic()[0]["name"], defs.functions()[0]["func_name"]);
/// assert!(defs.yaml().contains("func_name: add"));
/// let names: Vec<String> = defs.map(|d| d.name.clone()).collect();
/// assert!(names.contains(&"add".to_string()));
/// ```
#[derive(Clone, Debug)]
pub struct Definitions<'a> {
    rest: std::vec::IntoIter<&'a ToolDefinition>,
}

impl<'a> Definitions<'a> {
    /// The definitions not yielded yet.
    pub fn as_slice(&self) -> &[&'a ToolDefinition] {
        self.rest.as_slice()
    }

    /// OpenAI `tools` (a JSON array; see [`ToolDefinition::openai`]).
    pub fn openai(&self) -> Json {
        self.array(ToolDefinition::openai)
    }

    /// OpenAI `tools` in strict mode (see [`ToolDefinition::openai_strict`]).
    pub fn openai_strict(&self) -> Json {
        self.array(ToolDefinition::openai_strict)
    }

    /// Anthropic `tools` (a JSON array; see [`ToolDefinition::anthropic`]).
    pub fn anthropic(&self) -> Json {
        self.array(ToolDefinition::anthropic)
    }

    /// AdalFlow's `FunctionDefinition` objects, one per tool (the seed's form; see
    /// [`ToolDefinition::function_definition`]).
    pub fn functions(&self) -> Vec<Json> {
        self.as_slice()
            .iter()
            .map(|d| d.function_definition())
            .collect()
    }

    /// The [`functions`](Definitions::functions) as pretty JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(&self.functions()).unwrap_or_default()
    }

    /// The [`functions`](Definitions::functions) as YAML (more compact in a prompt).
    pub fn yaml(&self) -> String {
        serde_yaml_ng::to_string(&self.functions()).unwrap_or_default()
    }

    fn array(&self, form: fn(&ToolDefinition) -> Json) -> Json {
        Json::Array(self.as_slice().iter().map(|d| form(d)).collect())
    }
}

impl<'a> Iterator for Definitions<'a> {
    type Item = &'a ToolDefinition;

    fn next(&mut self) -> Option<&'a ToolDefinition> {
        self.rest.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rest.size_hint()
    }
}

impl ExactSizeIterator for Definitions<'_> {}

impl DoubleEndedIterator for Definitions<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.rest.next_back()
    }
}

impl ToolManager {
    /// The definitions of the tools available without a session (tools whose availability
    /// predicate is false for `Session::default()` are left out; see
    /// [`definitions_in`](ToolManager::definitions_in)).
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// println!("{}", manager.definitions().yaml());
    /// for definition in manager.definitions() {
    ///     assert!(definition.python().starts_with("def "));
    /// }
    /// ```
    pub fn definitions(&self) -> Definitions<'_> {
        self.definitions_in(&Session::default())
    }

    /// The definitions of the tools available in `session`: what to show the model now.
    ///
    /// ```
    /// use fexpr::{FunctionTool, Session, ToolManager};
    /// let manager = ToolManager::builder()
    ///     .tool(FunctionTool::new("ping", [], || 1_i64))
    ///     .tool(FunctionTool::new("admin", [], || 2_i64).available_when(
    ///         |s: &Session| s.get_id() == Some("root"),
    ///         "for root only",
    ///     ))
    ///     .build()?;
    /// assert_eq!(manager.definitions().len(), 1);
    /// let root = Session::new().id("root");
    /// assert_eq!(manager.definitions_in(&root).openai().as_array().map(Vec::len), Some(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn definitions_in(&self, session: &Session) -> Definitions<'_> {
        Definitions {
            rest: self
                .tools()
                .filter(|t| is_available(t.as_ref(), session))
                .map(|t| t.definition())
                .collect::<Vec<_>>()
                .into_iter(),
        }
    }
}

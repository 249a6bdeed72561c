//! [`ToolDefinition`]: how a tool is described to a model (name, description, parameter
//! schema) in every common format, and the signature its arguments are bound to.

use super::*;

/// How a tool is described to a model, and the signature its arguments are bound to.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The name a model calls.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the parameters: an object with `properties` and `required`.
    pub parameters: Json,
    /// JSON Schema of the result, when known.
    pub returns: Option<Json>,
    /// The parameters as a signature (derived from `parameters`).
    pub signature: Arc<RecordType>,
    /// The result type (derived from `returns`), used to give results their record types.
    pub return_type: Type,
}

impl ToolDefinition {
    /// A definition from a name, description and parameter schema.
    ///
    /// ```
    /// let def = fexpr::ToolDefinition::new("echo", "Echo a message.", serde_json::json!({
    ///     "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}));
    /// assert_eq!(def.python_signature(), "echo(message: str)");
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Json,
    ) -> ToolDefinition {
        let name = name.into();
        let signature = Arc::new(RecordType::from_schema(&name, &parameters));
        ToolDefinition {
            name,
            description: description.into(),
            parameters,
            returns: None,
            signature,
            return_type: Type::Any,
        }
    }

    /// The same definition with a result schema.
    pub fn with_returns(mut self, returns: Json) -> ToolDefinition {
        self.return_type = Type::from_schema(&returns, &returns);
        self.returns = Some(returns);
        self
    }

    /// The name Python call text calls the tool by: its
    /// [`python_alias`](crate::context::python_alias) (`get-current-weather` →
    /// `get_current_weather`; a name that is a Python name already is itself).
    pub fn python_name(&self) -> String {
        crate::resolve::context::python_alias(&self.name)
    }

    /// `add(a: int, b: int) -> int`, under the tool's [`python_name`](ToolDefinition::python_name).
    ///
    /// ```
    /// let def = fexpr::ToolDefinition::new("get-current-weather", "", serde_json::json!({
    ///     "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}));
    /// assert_eq!(def.python_signature(), "get_current_weather(city: str)");
    /// assert_eq!(def.openai()["function"]["name"], "get-current-weather");
    /// ```
    pub fn python_signature(&self) -> String {
        let name = self.python_name();
        let signature = self.signature.signature_as(&name);
        match &self.return_type {
            Type::Any => signature.to_string(),
            t => format!("{signature} -> {t}"),
        }
    }

    /// AdalFlow's `FunctionDefinition`: `func_name`, `func_desc` (signature + docstring),
    /// `func_parameters`.
    pub fn function_definition(&self) -> Json {
        json!({
            "func_name": self.name,
            "func_desc": format!("{}\n{}", self.python_signature(), self.description),
            "func_parameters": self.parameters,
        })
    }

    /// OpenAI's `tools` entry.
    pub fn openai(&self) -> Json {
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}})
    }

    /// OpenAI's `tools` entry in strict mode (`"strict": true`): every object closed
    /// (`additionalProperties: false`) and listing all its fields in `required` (an optional
    /// parameter of type `T | None` allows `null`), no `default` (named in the description
    /// instead) and no `format`; `$defs` and `$ref` are kept, as OpenAI accepts them. The
    /// rules and their sources (OpenAI's Structured Outputs and function-calling guides) are
    /// cited at `schema::strict_schema`.
    ///
    /// ```
    /// use fexpr::{FunctionTool, Tool};
    /// let f = FunctionTool::new("scale", ["x", "by"], |x: f64, by: Option<f64>| x * by.unwrap_or(2.0))
    ///     .param_description("by", "The factor.")
    ///     .default("by", 2.0);
    /// let tool = f.definition().openai_strict();
    /// assert_eq!(tool["function"]["strict"], true);
    /// let parameters = &tool["function"]["parameters"];
    /// assert_eq!(parameters["required"], serde_json::json!(["x", "by"]));
    /// assert_eq!(parameters["additionalProperties"], false);
    /// assert_eq!(parameters["properties"]["by"], serde_json::json!(
    ///     {"type": ["number", "null"], "description": "The factor. (default: 2.0)"}));
    /// ```
    pub fn openai_strict(&self) -> Json {
        let mut parameters = self.parameters.clone();
        crate::types::schema::strict_schema(&mut parameters);
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": parameters,
            "strict": true}})
    }

    /// Anthropic's `tools` entry.
    pub fn anthropic(&self) -> Json {
        json!({"name": self.name, "description": self.description, "input_schema": self.parameters})
    }

    /// MCP's `Tool` object.
    pub fn mcp(&self) -> Json {
        let mut tool = json!({"name": self.name, "description": self.description, "inputSchema": self.parameters});
        if let (Some(returns), Some(map)) = (&self.returns, tool.as_object_mut()) {
            map.insert("outputSchema".into(), returns.clone());
        }
        tool
    }

    /// One signature line plus the description: the compact form for prompts.
    pub fn python(&self) -> String {
        let doc = self.description.trim();
        if doc.is_empty() {
            format!("def {}", self.python_signature())
        } else {
            format!(
                "def {}\n    \"\"\"{}\"\"\"",
                self.python_signature(),
                doc.replace("\"\"\"", "\\\"\\\"\\\"")
            )
        }
    }
}

//! An MCP server's tools as fexpr [`Tool`]s: [`McpTool`], their results as values and
//! observations, and [`McpTools`], every configured server's tools at once, each under its
//! own name.

use super::*;

/// One MCP server tool as a fexpr [`Tool`].
pub struct McpTool {
    server: Arc<McpServer>,
    /// The tool's name on the server.
    original: String,
    definition: ToolDefinition,
}

impl McpTool {
    /// The tool `listed` (from [`McpServer::list_tools`]) of `server`, exposed as `name`.
    pub fn new(server: Arc<McpServer>, name: &str, listed: &rmcp::model::Tool) -> McpTool {
        let description = listed
            .description
            .as_deref()
            .or(listed.title.as_deref())
            .unwrap_or_default();
        let parameters = Json::Object((*listed.input_schema).clone());
        let mut definition = ToolDefinition::new(name, description, parameters);
        if let Some(out) = &listed.output_schema {
            definition = definition.with_returns(Json::Object((**out).clone()));
        }
        McpTool {
            server,
            original: listed.name.to_string(),
            definition,
        }
    }

    /// The tool's name on its server.
    pub fn original_name(&self) -> &str {
        &self.original
    }

    /// The server the tool runs on.
    pub fn server(&self) -> &Arc<McpServer> {
        &self.server
    }
}

impl Tool for McpTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Vec<Option<Value>>) -> ToolFuture {
        let mut arguments = JsonObject::new();
        for (field, arg) in self.definition.signature.fields.iter().zip(args) {
            if let Some(value) = arg {
                arguments.insert(field.name.clone(), value.to_json());
            }
        }
        let server = self.server.clone();
        let original = self.original.clone();
        Box::pin(async move {
            let result = server.call_tool(&original, arguments).await?;
            let result = serde_json::to_value(&result)
                .map_err(|e| server.failed(format_args!("unreadable result: {e}")))?;
            // Whole: the manager bounds observations (`Limits::max_observation_chars`).
            let observation = observation(&result, usize::MAX);
            if result.get("isError").and_then(Json::as_bool) == Some(true) {
                return Err(server.failed(format_args!("`{original}` failed: {observation}")));
            }
            Ok(ToolOutput::new(result_value(&result)).with_observation(observation))
        })
    }
}

/// The output value of an MCP `CallToolResult` (as JSON); see the [module docs](crate::mcp).
///
/// ```
/// use fexpr::mcp::result_value;
/// use serde_json::json;
/// let text = json!({"content": [{"type": "text", "text": "Echo: hi"}]});
/// assert_eq!(result_value(&text), fexpr::Value::from("Echo: hi"));
/// let structured = json!({"content": [{"type": "text", "text": "{\"t\": 1}"}], "structuredContent": {"t": 1}});
/// assert_eq!(result_value(&structured).to_json(), json!({"t": 1}));
/// ```
pub fn result_value(result: &Json) -> Value {
    let empty = Vec::new();
    let content = result
        .get("content")
        .and_then(Json::as_array)
        .unwrap_or(&empty);
    let structured = result.get("structuredContent");
    let all_text = content
        .iter()
        .all(|b| b.get("type").and_then(Json::as_str) == Some("text"));
    match (content.as_slice(), structured) {
        ([only], None) if all_text => Value::from_json(only.get("text").unwrap_or(&Json::Null)),
        (_, Some(s)) if all_text => Value::from_json(s),
        _ => {
            let mut out = json!({"content": content});
            if let (Some(s), Some(map)) = (structured, out.as_object_mut()) {
                map.insert("structuredContent".into(), s.clone());
            }
            Value::from_json(&out)
        }
    }
}

/// The text a model sees of an MCP result: text blocks as they are, other blocks summarized,
/// at most `max` characters.
pub fn observation(result: &Json, max: usize) -> String {
    let mut parts = Vec::new();
    let str_of = |b: &Json, key: &str| b.get(key).and_then(Json::as_str).unwrap_or("").to_string();
    for block in result
        .get("content")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let kind = str_of(block, "type");
        parts.push(match kind.as_str() {
            "text" => str_of(block, "text"),
            "image" | "audio" => format!(
                "[{kind} {}, {} bytes of base64]",
                str_of(block, "mimeType"),
                str_of(block, "data").len()
            ),
            "resource" => {
                let res = block.get("resource").unwrap_or(&Json::Null);
                match res.get("text").and_then(Json::as_str) {
                    Some(text) => format!("[resource {}]\n{text}", str_of(res, "uri")),
                    None => format!(
                        "[resource {} {}, {} bytes of base64]",
                        str_of(res, "uri"),
                        str_of(res, "mimeType"),
                        str_of(res, "blob").len()
                    ),
                }
            }
            "resource_link" => format!("[resource link {}]", str_of(block, "uri")),
            other => format!("[{other} content]"),
        });
    }
    if parts.is_empty() {
        if let Some(s) = result.get("structuredContent") {
            parts.push(s.to_string());
        }
    }
    clip(&parts.join("\n"), max)
}

/// How one MCP tool is exposed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpToolName {
    /// The name expressions call.
    pub exposed: String,
    /// The server's name in the config.
    pub server: String,
    /// The tool's name on the server.
    pub original: String,
}

/// The tools of several MCP servers, connected and listed.
///
/// ```no_run
/// # async fn run() -> Result<(), fexpr::Error> {
/// use fexpr::mcp::{McpConfig, McpOptions, McpTools};
/// let config = McpConfig::load("mcp_servers.json")?;
/// let mcp = McpTools::connect(&config, McpOptions::default()).await?;
/// let mut builder = fexpr::ToolManager::builder();
/// mcp.register(&mut builder);
/// let manager = builder.build()?;
/// let out = manager.execute_func_expr("get_sum(a=2, b=3)").await;
/// # Ok(()) }
/// ```
pub struct McpTools {
    servers: Vec<Arc<McpServer>>,
    /// Each server's tools as listed, in server order.
    listed: Vec<(Arc<McpServer>, Vec<rmcp::model::Tool>)>,
    /// The servers that could not be started or listed.
    failures: Vec<Error>,
    /// The tools left out for a name no provider allows.
    left_out: Vec<Error>,
    options: McpOptions,
}

impl McpTools {
    /// Connect to every server of `config` (concurrently) and list their tools. Fails with
    /// the first server that cannot be started or listed (and closes the others); see
    /// [`McpTools::connect_available`] to go on with the servers that started.
    pub async fn connect(config: &McpConfig, options: McpOptions) -> Result<McpTools, Error> {
        let mcp = McpTools::connect_available(config, options).await;
        match mcp.failures.first() {
            Some(e) => {
                let e = e.clone();
                mcp.close().await;
                Err(e)
            }
            None => Ok(mcp),
        }
    }

    /// Connect to every server of `config` (concurrently) and list their tools; a server that
    /// cannot be started or listed is left out and its error kept in
    /// [`McpTools::failures`], so one broken entry does not take the others' tools away.
    /// Report the failures: the tools of those servers are missing.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use fexpr::mcp::{McpConfig, McpOptions, McpServerConfig, McpTools};
    /// let config = McpConfig::new()
    ///     .server("broken", McpServerConfig::stdio("/nonexistent/server", Vec::<String>::new()));
    /// let mcp = McpTools::connect_available(&config, McpOptions::default()).await;
    /// assert!(mcp.names().unwrap().is_empty());
    /// assert!(mcp.failures()[0].message.starts_with("MCP server `broken`: cannot start"));
    /// # });
    /// ```
    pub async fn connect_available(config: &McpConfig, options: McpOptions) -> McpTools {
        let servers: Vec<Arc<McpServer>> = config
            .servers
            .iter()
            .map(|(name, cfg)| Arc::new(McpServer::new(name, cfg.clone(), options.clone())))
            .collect();
        let listings = futures_util::future::join_all(servers.iter().map(|s| s.list_tools())).await;
        let mut listed = Vec::new();
        let mut failures = Vec::new();
        let mut left_out = Vec::new();
        let mut started = Vec::new();
        for (server, listing) in servers.into_iter().zip(listings) {
            match listing {
                Ok(tools) => {
                    for tool in &tools {
                        let name = exposed_name(&options, &server, tool);
                        if let Err(problem) = check_tool_name(&name) {
                            left_out.push(server.failed(format_args!(
                                "its tool `{}` is left out: the name is not allowed: {problem}",
                                clip(&name, 140)
                            )));
                        }
                    }
                    listed.push((server.clone(), tools));
                    started.push(server);
                }
                Err(e) => {
                    server.close().await;
                    failures.push(e);
                }
            }
        }
        McpTools {
            servers: started,
            listed,
            failures,
            left_out,
            options,
        }
    }

    /// Why each server [`McpTools::connect_available`] left out could not be used, in the
    /// config's order (each message names its server).
    pub fn failures(&self) -> &[Error] {
        &self.failures
    }

    /// Why each tool of the servers that started was left out: a name no provider allows
    /// ([`valid_tool_name`]). Each message names the server and the tool.
    pub fn left_out(&self) -> &[Error] {
        &self.left_out
    }

    /// The servers.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// The tools, each under its own name (`server.tool` with [`McpOptions::namespaced`]).
    /// A tool whose name no provider allows ([`valid_tool_name`]) is left out, with its
    /// error in [`McpTools::left_out`].
    ///
    /// # Errors
    /// A `Config` error when two servers have a tool of one name, naming both (namespacing
    /// tells them apart).
    pub fn tools(&self) -> Result<Vec<McpTool>, Error> {
        let mut first: HashMap<String, &str> = HashMap::new();
        let mut tools = Vec::new();
        for (server, listing) in &self.listed {
            for listed in listing {
                let name = exposed_name(&self.options, server, listed);
                if !valid_tool_name(&name) {
                    continue;
                }
                if let Some(other) = first.insert(name.clone(), server.name()) {
                    return Err(Error::new(
                        ErrorKind::Config,
                        format!(
                            "the tool `{}` is on MCP servers `{other}` and `{}`",
                            clip(&name, 140),
                            server.name()
                        ),
                    )
                    .with_hint(format!(
                        "namespace the MCP tools (`--mcp-namespaced`, `McpOptions::namespaced`) \
                         to call them `{other}.{name}` and `{}.{name}`",
                        server.name()
                    )));
                }
                tools.push(McpTool::new(server.clone(), &name, listed));
            }
        }
        Ok(tools)
    }

    /// Add every tool to `manager`, each under its own name (`server.tool` with
    /// [`McpOptions::namespaced`]); returns how each is named.
    ///
    /// # Errors
    /// A `Config` error naming the tool and its server when the manager has a tool or
    /// context entry of that name already, or when two servers have a tool of one name
    /// ([`McpTools::tools`]). Nothing is added then.
    pub fn register(&self, manager: &mut ToolManagerBuilder) -> Result<Vec<McpToolName>, Error> {
        let tools = self.tools()?;
        if let Some(taken) = tools
            .iter()
            .find(|t| manager.names().get(&t.definition.name).is_some())
        {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the tool `{}` of MCP server `{}` has the name of a tool the manager has already",
                    clip(&taken.definition.name, 140),
                    taken.server.name()
                ),
            )
            .with_hint("rename the other tool, or namespace the MCP tools (`McpOptions::namespaced`)"));
        }
        let mut names = Vec::new();
        for tool in tools {
            names.push(McpToolName {
                exposed: tool.definition.name.clone(),
                server: tool.server.name().to_string(),
                original: tool.original.clone(),
            });
            manager.add_tool(Arc::new(tool));
        }
        Ok(names)
    }

    /// How the tools are named (what [`McpTools::register`] returns).
    ///
    /// # Errors
    /// As [`McpTools::tools`].
    pub fn names(&self) -> Result<Vec<McpToolName>, Error> {
        Ok(self
            .tools()?
            .into_iter()
            .map(|t| McpToolName {
                exposed: t.definition.name.clone(),
                server: t.server.name().to_string(),
                original: t.original.clone(),
            })
            .collect())
    }

    /// Close every connection.
    pub async fn close(&self) {
        for server in &self.servers {
            server.close().await;
        }
    }
}

/// The name the tool `listed` of `server` is exposed as: its own, or `server.tool` with
/// [`McpOptions::namespaced`] (the server's name with each character a tool name cannot hold
/// made `_`).
fn exposed_name(options: &McpOptions, server: &McpServer, listed: &rmcp::model::Tool) -> String {
    if options.namespaced {
        let server: String = server
            .name()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || matches!(c, '_' | '-' | ':') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{server}.{}", listed.name)
    } else {
        listed.name.to_string()
    }
}

//! Which MCP servers to connect: [`McpServerConfig`] (a stdio child process or a streamable
//! HTTP endpoint) and [`McpConfig`], read from the `mcpServers` JSON the usual clients write.

use super::*;

/// The keys of a stdio server's entry.
const STDIO_KEYS: [&str; 5] = ["type", "command", "args", "env", "cwd"];
/// The keys of a streamable HTTP server's entry.
const HTTP_KEYS: [&str; 3] = ["type", "url", "headers"];
/// The values of `type` fexpr reads (`sse` gets its own error).
const SERVER_TYPES: [&str; 4] = ["stdio", "http", "streamable-http", "streamableHttp"];

/// How to reach one MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpServerConfig {
    /// A child process speaking MCP over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables added to ours.
        env: BTreeMap<String, String>,
        /// The working directory, if not ours.
        cwd: Option<PathBuf>,
    },
    /// A server speaking MCP's streamable HTTP transport.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request (e.g. an API key).
        headers: BTreeMap<String, String>,
    },
}

impl McpServerConfig {
    /// A stdio server: `command args...`.
    ///
    /// ```
    /// let cfg = fexpr::mcp::McpServerConfig::stdio("uvx", ["mcp-server-time"]);
    /// assert!(matches!(cfg, fexpr::mcp::McpServerConfig::Stdio { .. }));
    /// ```
    pub fn stdio<S: Into<String>>(
        command: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> McpServerConfig {
        McpServerConfig::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    /// A streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> McpServerConfig {
        McpServerConfig::Http {
            url: url.into(),
            headers: BTreeMap::new(),
        }
    }

    /// One entry of `mcpServers`: `{command, args, env, cwd}` or `{url, headers}`, either with
    /// an optional `type` (`stdio`, `http`, `streamable-http`). Any other key is an error
    /// naming it: fexpr would not honour it.
    ///
    /// ```
    /// use fexpr::mcp::McpServerConfig;
    /// let json = serde_json::json!({"command": "uvx", "arg": ["mcp-server-time"]});
    /// let error = McpServerConfig::from_json("time", &json).unwrap_err();
    /// assert_eq!(error.message,
    ///     "MCP server `time`: unknown key `arg`; a stdio server takes type, command, args, env, cwd");
    /// ```
    pub fn from_json(name: &str, json: &Json) -> Result<McpServerConfig, Error> {
        let bad = |what: &str| {
            Error::new(
                ErrorKind::ToolFailed,
                format!("MCP server `{}`: {what}", clip(name, 60)),
            )
        };
        let obj = json.as_object().ok_or_else(|| bad("expected an object"))?;
        let strings = |key: &str| -> Result<BTreeMap<String, String>, Error> {
            match obj.get(key) {
                None | Some(Json::Null) => Ok(BTreeMap::new()),
                Some(Json::Object(map)) => map
                    .iter()
                    .map(|(k, v)| match v {
                        Json::String(s) => Ok((k.clone(), s.clone())),
                        _ => Err(bad(&format!("`{key}.{k}` must be a string"))),
                    })
                    .collect(),
                Some(_) => Err(bad(&format!("`{key}` must be an object of strings"))),
            }
        };
        match obj.get("type") {
            None | Some(Json::Null) => {}
            Some(Json::String(kind)) if kind == "sse" => {
                return Err(bad("the legacy SSE transport is not supported; use the server's streamable HTTP endpoint"));
            }
            Some(Json::String(kind)) if SERVER_TYPES.contains(&kind.as_str()) => {}
            Some(kind) => {
                return Err(bad(&format!(
                    "unknown `type` {}; expected one of {}",
                    clip(&kind.to_string(), 40),
                    SERVER_TYPES.join(", ")
                )))
            }
        }
        // A key fexpr does not read would be dropped silently (a misspelt `arg`, an `enabled`
        // flag it does not honour): refuse it, naming it and the keys there are.
        let keys: &[&str] = if obj.contains_key("command") {
            &STDIO_KEYS
        } else {
            &HTTP_KEYS
        };
        if let Some(unknown) = obj.keys().find(|k| !keys.contains(&k.as_str())) {
            let kind = if obj.contains_key("command") {
                "a stdio server"
            } else {
                "an HTTP server"
            };
            return Err(bad(&format!(
                "unknown key `{}`; {kind} takes {}",
                clip(unknown, 60),
                keys.join(", ")
            )));
        }
        match (obj.get("command"), obj.get("url")) {
            (Some(command), _) => {
                let command = command
                    .as_str()
                    .ok_or_else(|| bad("`command` must be a string"))?;
                let args = match obj.get("args") {
                    None | Some(Json::Null) => Vec::new(),
                    Some(Json::Array(items)) => items
                        .iter()
                        .map(|a| {
                            a.as_str()
                                .map(str::to_string)
                                .ok_or_else(|| bad("`args` must be a list of strings"))
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(bad("`args` must be a list of strings")),
                };
                let cwd = match obj.get("cwd") {
                    None | Some(Json::Null) => None,
                    Some(Json::String(dir)) => Some(PathBuf::from(dir)),
                    Some(_) => return Err(bad("`cwd` must be a string")),
                };
                Ok(McpServerConfig::Stdio {
                    command: command.to_string(),
                    args,
                    env: strings("env")?,
                    cwd,
                })
            }
            (None, Some(url)) => Ok(McpServerConfig::Http {
                url: url
                    .as_str()
                    .ok_or_else(|| bad("`url` must be a string"))?
                    .to_string(),
                headers: strings("headers")?,
            }),
            (None, None) => Err(bad("needs `command` (stdio) or `url` (streamable HTTP)")),
        }
    }
}

/// Several MCP servers by name, as in an `mcp_servers.json` / `.mcp.json` file.
///
/// ```
/// let cfg = fexpr::mcp::McpConfig::from_str(r#"{"mcpServers": {
///     "time": {"command": "uvx", "args": ["mcp-server-time"]},
///     "remote": {"url": "http://127.0.0.1:3001/mcp"}}}"#).unwrap();
/// assert_eq!(cfg.servers.len(), 2);
/// assert!(fexpr::mcp::McpConfig::from_str(r#"{"mcpServers": {"x": {}}}"#).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// The servers, in the file's order.
    pub servers: IndexMap<String, McpServerConfig>,
}

impl McpConfig {
    /// No servers.
    pub fn new() -> McpConfig {
        McpConfig::default()
    }

    /// The same config with one more server.
    pub fn server(mut self, name: impl Into<String>, config: McpServerConfig) -> McpConfig {
        self.servers.insert(name.into(), config);
        self
    }

    /// Parse `{"mcpServers": {name: {...}}}` (a bare `{name: {...}}` map is accepted too).
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str) -> Result<McpConfig, Error> {
        let json: Json = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorKind::ToolFailed,
                format!("MCP config is not valid JSON: {e}"),
            )
        })?;
        McpConfig::from_json(&json)
    }

    /// The config from parsed JSON.
    pub fn from_json(json: &Json) -> Result<McpConfig, Error> {
        let servers = json
            .get("mcpServers")
            .or_else(|| json.get("servers"))
            .unwrap_or(json)
            .as_object()
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::ToolFailed,
                    "MCP config: expected {\"mcpServers\": {name: {...}}}",
                )
            })?;
        let mut config = McpConfig::new();
        for (name, server) in servers {
            config = config.server(name.clone(), McpServerConfig::from_json(name, server)?);
        }
        Ok(config)
    }

    /// Read a config file. A relative `cwd` of a server is taken relative to the file.
    pub fn load(path: impl AsRef<Path>) -> Result<McpConfig, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::new(
                ErrorKind::ToolFailed,
                format!("cannot read MCP config {}: {e}", path.display()),
            )
        })?;
        let mut config = McpConfig::from_str(&text)?;
        let base = path.parent().unwrap_or(Path::new("."));
        for server in config.servers.values_mut() {
            if let McpServerConfig::Stdio { cwd: Some(dir), .. } = server {
                if dir.is_relative() {
                    *dir = base.join(&*dir);
                }
            }
        }
        Ok(config)
    }
}

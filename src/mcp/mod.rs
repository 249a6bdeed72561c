//! MCP servers as tool sources.
//!
//! Each configured server is started (a child process speaking MCP over stdio) or reached
//! (streamable HTTP) with the official SDK `rmcp`; its tools are listed (following
//! pagination) and registered in a [`ToolManager`](crate::ToolManager) like any other [`Tool`]. Arguments are
//! bound and checked against the server's own input schema before anything is sent, as for
//! every tool ([`crate::types`]): types, required and defaults, enums, recursive definitions,
//! and the numeric, length and size bounds; a schema fexpr cannot check refuses every call.
//! Results pass the manager's checks too (size, finite floats).
//!
//! Servers come from a config file in the common format
//!
//! ```json
//! {"mcpServers": {
//!     "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
//!     "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
//!     "remote": {"url": "https://example.com/mcp", "headers": {"X-Api-Key": "..."}}
//! }}
//! ```
//!
//! or are built in code ([`McpConfig::server`]).
//!
//! # Names
//! MCP tool names need not be Python identifiers (`get-sum`). Each tool is exposed under
//! an identifier derived from its name ([`python_name`]): every character other than an
//! ASCII letter, digit or `_` becomes `_`, a leading digit gets a `_` in front, a Python
//! keyword gets a `_` behind (`get-sum` → `get_sum`, `import` → `import_`). With
//! [`McpOptions::namespaced`] the server's (equally mapped) name comes first:
//! `everything.get_sum`. A name already taken (by another server's tool, or by anything in
//! the manager's context) gets `_2`, `_3`, … appended. The call always uses the original name;
//! [`McpTools::names`] lists the mapping.
//!
//! # Results
//! A tool's result keeps all its content ([`result_value`]):
//! - one text block and nothing else → that `str`;
//! - `structuredContent` and only text blocks (by the MCP spec, its serialization) → the
//!   structured content;
//! - anything else → `{"content": [blocks...], "structuredContent": ...}` with every block as
//!   a dict in its MCP form (`{"type": "image", "data": <base64>, "mimeType": ...}`).
//!
//! The observation for the model is the text of the blocks (non-text blocks summarized),
//! at most [`McpOptions::max_observation_chars`] characters.
//!
//! # Failures
//! A result with `isError`, a JSON-RPC error, a server that exits, and a call that takes longer
//! than [`McpOptions::call_timeout`] each become a [`ErrorKind::ToolFailed`] error of that
//! one call. A server that exited is started again on the next call of one of its tools; a
//! server that hangs costs each call its timeout and nothing more.
//!
//! # Serving
//! The other way round, [`serve`] exposes any [`ToolManager`](crate::ToolManager) (MCP tools
//! among them) as an MCP server: `fexpr serve`, [`ToolManager::serve_mcp`](crate::ToolManager::serve_mcp).

pub mod serve;

use indexmap::IndexMap;
use rmcp::model::{
    CallToolRequestParams, ClientConfig, JsonObject, NumberOrString, ProgressNotificationParam,
    ProgressToken, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, ServiceExt};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::sync::Mutex;

use crate::dispatch::manager::ToolManagerBuilder;
use crate::dispatch::tool::{Tool, ToolDefinition, ToolFuture, ToolOutput};
use crate::error::{clip, Error, ErrorKind};
use crate::syntax::PYTHON_KEYWORDS;
use crate::value::Value;

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

/// How MCP tools are named, connected and bounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpOptions {
    /// Expose tools as `server.tool` instead of `tool`. Default: off.
    pub namespaced: bool,
    /// How long starting a server and listing its tools may take. Default: 60 s (a first
    /// `npx`/`uvx` run downloads the server).
    pub connect_timeout: Duration,
    /// How long one tool call may take. Default: 60 s.
    pub call_timeout: Duration,
    /// The longest observation (text for the model) of one result, in characters. Default: 4000.
    pub max_observation_chars: usize,
    /// Print servers' progress notifications on stderr. Default: off.
    pub progress: bool,
}

impl Default for McpOptions {
    fn default() -> McpOptions {
        McpOptions {
            namespaced: false,
            connect_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(60),
            max_observation_chars: 4000,
            progress: false,
        }
    }
}

/// The last lines a server wrote on stderr, for error messages.
const STDERR_TAIL_BYTES: usize = 2000;

/// One live connection to a server.
struct Connection {
    service: RunningService<RoleClient, Client>,
    /// Distinguishes connections, so a failed call drops only the one it used.
    id: u64,
    pid: Option<u32>,
    stderr: Arc<StdMutex<String>>,
}

impl Connection {
    fn stderr_tail(&self) -> String {
        stderr_note(&self.stderr)
    }
}

fn stderr_note(tail: &StdMutex<String>) -> String {
    let text = tail
        .lock()
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    if text.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with: {text}")
    }
}

/// The client side of a connection: reports progress, ignores everything else.
#[derive(Clone)]
struct Client {
    server: String,
    progress: bool,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if self.progress {
            let total = params.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = params.message.map(|m| format!(" {m}")).unwrap_or_default();
            eprintln!(
                "fexpr: {}: {}{total}{}",
                self.server,
                params.progress,
                clip(&message, 200)
            );
        }
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info.name = "fexpr".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }
}

/// One MCP server: its configuration and (while it lives) its connection.
///
/// Shared by all of its tools. Connects on first use and again after the server exited.
pub struct McpServer {
    name: String,
    config: McpServerConfig,
    options: McpOptions,
    connection: Mutex<Option<Connection>>,
    connections: AtomicU64,
}

impl McpServer {
    /// A server that is not connected yet.
    pub fn new(name: impl Into<String>, config: McpServerConfig, options: McpOptions) -> McpServer {
        McpServer {
            name: name.into(),
            config,
            options,
            connection: Mutex::new(None),
            connections: AtomicU64::new(0),
        }
    }

    /// The server's name in the config.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id of a connected stdio server.
    pub async fn process_id(&self) -> Option<u32> {
        self.connection.lock().await.as_ref().and_then(|c| c.pid)
    }

    fn failed(&self, message: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorKind::ToolFailed,
            format!("MCP server `{}`: {message}", self.name),
        )
    }

    /// Start or reach the server and initialize the session.
    async fn open(&self) -> Result<Connection, Error> {
        let id = self.connections.fetch_add(1, Ordering::Relaxed);
        let client = Client {
            server: self.name.clone(),
            progress: self.options.progress,
        };
        let stderr = Arc::new(StdMutex::new(String::new()));
        let timeout = self.options.connect_timeout;
        let (service, pid) = match &self.config {
            McpServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env).kill_on_drop(true);
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                let (transport, err) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| self.failed(format_args!("cannot start `{command}`: {e}")))?;
                let pid = transport.id();
                if let Some(err) = err {
                    tokio::spawn(keep_tail(err, stderr.clone()));
                }
                let service = tokio::time::timeout(timeout, client.serve(transport)).await;
                (service, pid)
            }
            McpServerConfig::Http { url, headers } => {
                // reqwest's rustls needs a process-wide crypto provider; an error means one
                // is installed already.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| self.failed(format_args!("header `{k}`: {e}")))?;
                    let value = http::HeaderValue::from_str(v)
                        .map_err(|e| self.failed(format_args!("header `{k}`: {e}")))?;
                    custom.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                let transport = StreamableHttpClientTransport::from_config(config);
                let service = tokio::time::timeout(timeout, client.serve(transport)).await;
                (service, None)
            }
        };
        match service {
            Ok(Ok(service)) => Ok(Connection {
                service,
                id,
                pid,
                stderr,
            }),
            Ok(Err(e)) => Err(self.failed(format_args!(
                "could not start the session: {e}{}",
                stderr_note(&stderr)
            ))),
            Err(_) => Err(self.failed(format_args!(
                "no answer to `initialize` within {:?}{}",
                timeout,
                stderr_note(&stderr)
            ))),
        }
    }

    /// The rmcp client peer of the live connection (connecting first if there is none), for
    /// requests fexpr does not wrap (resources, prompts, a raw `tools/call`).
    pub async fn peer(&self) -> Result<Peer<RoleClient>, Error> {
        self.current().await.map(|(peer, _)| peer)
    }

    /// The live connection's peer, connecting first if there is none. A connection found
    /// closed is dropped and reported; the next call connects again.
    async fn current(&self) -> Result<(Peer<RoleClient>, u64), Error> {
        let mut slot = self.connection.lock().await;
        if let Some(conn) = slot.as_ref() {
            if conn.service.is_closed() || conn.service.peer().is_transport_closed() {
                let note = conn.stderr_tail();
                *slot = None;
                return Err(self.failed(format_args!(
                    "the server exited{note}; it will be started again on the next call"
                )));
            }
            return Ok((conn.service.peer().clone(), conn.id));
        }
        let conn = self.open().await?;
        let peer = conn.service.peer().clone();
        let id = conn.id;
        *slot = Some(conn);
        Ok((peer, id))
    }

    /// Drop connection `id` if it is still the current one.
    async fn drop_connection(&self, id: u64) -> String {
        let mut slot = self.connection.lock().await;
        match slot.as_ref() {
            Some(conn) if conn.id == id => {
                let note = conn.stderr_tail();
                *slot = None;
                note
            }
            _ => String::new(),
        }
    }

    /// Close the connection (a stdio server is asked to exit, then killed).
    pub async fn close(&self) {
        let conn = self.connection.lock().await.take();
        if let Some(mut conn) = conn {
            let _ = conn
                .service
                .close_with_timeout(Duration::from_secs(2))
                .await;
        }
    }

    /// List the server's tools, following pagination.
    pub async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, Error> {
        let (peer, id) = self.current().await?;
        match tokio::time::timeout(self.options.connect_timeout, peer.list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self.service_error("tools/list", e, id).await),
            Err(_) => Err(self.failed(format_args!(
                "no answer to `tools/list` within {:?}",
                self.options.connect_timeout
            ))),
        }
    }

    /// Call tool `name` (its original MCP name) with JSON arguments; the raw result.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<rmcp::model::CallToolResult, Error> {
        let (peer, id) = self.current().await?;
        let mut params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        if self.options.progress {
            params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
                NumberOrString::Number(i64::try_from(id).unwrap_or(0)),
            )));
        }
        match tokio::time::timeout(self.options.call_timeout, peer.call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) => Err(self.service_error(&format!("`{name}`"), e, id).await),
            Err(_) => Err(self.failed(format_args!(
                "`{name}` timed out after {:?}",
                self.options.call_timeout
            ))),
        }
    }

    async fn service_error(&self, what: &str, e: ServiceError, id: u64) -> Error {
        match e {
            ServiceError::McpError(data) => self.failed(format_args!(
                "{what} failed: {} (JSON-RPC error {})",
                clip(&data.message, 500),
                data.code.0
            )),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let note = self.drop_connection(id).await;
                self.failed(format_args!(
                    "the connection closed during {what} ({e}){note}; it will be started again on the next call"
                ))
            }
            other => self.failed(format_args!("{what} failed: {other}")),
        }
    }
}

/// Keep the last [`STDERR_TAIL_BYTES`] of a server's stderr.
async fn keep_tail(stderr: tokio::process::ChildStderr, tail: Arc<StdMutex<String>>) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(mut tail) = tail.lock() else { return };
        tail.push_str(&line);
        tail.push('\n');
        if tail.len() > STDERR_TAIL_BYTES {
            let mut cut = tail.len() - STDERR_TAIL_BYTES;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail.drain(..cut);
        }
    }
}

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
        let max = server.options.max_observation_chars;
        Box::pin(async move {
            let result = server.call_tool(&original, arguments).await?;
            let result = serde_json::to_value(&result)
                .map_err(|e| server.failed(format_args!("unreadable result: {e}")))?;
            let observation = observation(&result, max);
            if result.get("isError").and_then(Json::as_bool) == Some(true) {
                return Err(server.failed(format_args!("`{original}` failed: {observation}")));
            }
            Ok(ToolOutput::new(result_value(&result)).with_observation(observation))
        })
    }
}

/// The output value of an MCP `CallToolResult` (as JSON); see the [module docs](self).
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

/// The Python identifier an MCP name is exposed as (see the [module docs](self)).
///
/// ```
/// use fexpr::mcp::python_name;
/// assert_eq!(python_name("get-sum"), "get_sum");
/// assert_eq!(python_name("read_text_file"), "read_text_file");
/// assert_eq!(python_name("2fa.code"), "_2fa_code");
/// assert_eq!(python_name("import"), "import_");
/// assert_eq!(python_name("__init__"), "tool___init__");
/// assert_eq!(python_name(""), "tool");
/// ```
pub fn python_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() {
        return "tool".into();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if PYTHON_KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    if out.starts_with("__") && out.ends_with("__") {
        out.insert_str(0, "tool_");
    }
    out
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
    /// assert!(mcp.names().is_empty());
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
        let mut started = Vec::new();
        for (server, listing) in servers.into_iter().zip(listings) {
            match listing {
                Ok(tools) => {
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
            options,
        }
    }

    /// Why each server [`McpTools::connect_available`] left out could not be used, in the
    /// config's order (each message names its server).
    pub fn failures(&self) -> &[Error] {
        &self.failures
    }

    /// The servers.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// The tools, named so that no name is one for which `taken` is true or is used twice.
    pub fn tools(&self, taken: impl Fn(&str) -> bool) -> Vec<McpTool> {
        let mut used: HashSet<String> = HashSet::new();
        let mut tools = Vec::new();
        for (server, listing) in &self.listed {
            for listed in listing {
                let base = if self.options.namespaced {
                    format!(
                        "{}.{}",
                        python_name(server.name()),
                        python_name(&listed.name)
                    )
                } else {
                    python_name(&listed.name)
                };
                let mut name = base.clone();
                let mut n = 2;
                while used.contains(&name) || taken(&name) {
                    name = format!("{base}_{n}");
                    n += 1;
                }
                used.insert(name.clone());
                tools.push(McpTool::new(server.clone(), &name, listed));
            }
        }
        tools
    }

    /// Add every tool to `manager` under a name nothing in its context uses yet; returns the
    /// mapping of names.
    pub fn register(&self, manager: &mut ToolManagerBuilder) -> Vec<McpToolName> {
        let tools = {
            let names = manager.names();
            self.tools(|name| names.get(name).is_some())
        };
        let mut names = Vec::new();
        for tool in tools {
            names.push(McpToolName {
                exposed: tool.definition.name.clone(),
                server: tool.server.name().to_string(),
                original: tool.original.clone(),
            });
            manager.add_tool(Arc::new(tool));
        }
        names
    }

    /// How the tools are named when no other name is taken (what [`McpTools::register`]
    /// returns for an empty manager).
    pub fn names(&self) -> Vec<McpToolName> {
        self.tools(|_| false)
            .into_iter()
            .map(|t| McpToolName {
                exposed: t.definition.name.clone(),
                server: t.server.name().to_string(),
                original: t.original.clone(),
            })
            .collect()
    }

    /// Close every connection.
    pub async fn close(&self) {
        for server in &self.servers {
            server.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_identifiers() {
        for (mcp, py) in [
            ("get-sum", "get_sum"),
            ("read_text_file", "read_text_file"),
            ("tools/list.v2", "tools_list_v2"),
            ("9lives", "_9lives"),
            ("class", "class_"),
            ("None", "None_"),
            ("__call__", "tool___call__"),
            ("héllo", "h_llo"),
            ("", "tool"),
        ] {
            assert_eq!(python_name(mcp), py);
            assert!(crate::resolve::context::valid_name(py), "{py}");
        }
    }

    #[test]
    fn config_entries() {
        let cfg = McpConfig::from_str(
            r#"{"mcpServers": {
                "a": {"command": "srv", "args": ["--x", "1"], "env": {"K": "V"}, "cwd": "sub"},
                "b": {"type": "http", "url": "http://h/mcp", "headers": {"X-Key": "k"}}}}"#,
        )
        .unwrap();
        let names: Vec<&String> = cfg.servers.keys().collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            cfg.servers["a"],
            McpServerConfig::Stdio {
                command: "srv".into(),
                args: vec!["--x".into(), "1".into()],
                env: BTreeMap::from([("K".into(), "V".into())]),
                cwd: Some(PathBuf::from("sub")),
            }
        );
        assert_eq!(
            cfg.servers["b"],
            McpServerConfig::Http {
                url: "http://h/mcp".into(),
                headers: BTreeMap::from([("X-Key".into(), "k".into())]),
            }
        );
        // A bare map of servers is accepted too.
        assert_eq!(
            McpConfig::from_str(r#"{"a": {"command": "srv"}}"#)
                .unwrap()
                .servers["a"],
            McpServerConfig::stdio("srv", Vec::<String>::new())
        );
    }

    #[test]
    fn config_errors_name_the_server_and_field() {
        for (text, needle) in [
            (r#"{"mcpServers": {"s": {}}}"#, "needs `command`"),
            (
                r#"{"mcpServers": {"s": {"command": 1}}}"#,
                "`command` must be",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "c", "args": "x"}}}"#,
                "`args`",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "c", "env": {"K": 1}}}}"#,
                "`env.K`",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "u", "headers": []}}}"#,
                "`headers`",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "sse", "url": "u"}}}"#,
                "SSE",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "c", "arg": ["x"]}}}"#,
                "unknown key `arg`; a stdio server takes type, command, args, env, cwd",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "u", "disabled": true}}}"#,
                "unknown key `disabled`; an HTTP server takes type, url, headers",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "websocket", "url": "u"}}}"#,
                "unknown `type` \"websocket\"",
            ),
            (r#"{"mcpServers": 3}"#, "expected"),
            ("not json", "not valid JSON"),
        ] {
            let e = McpConfig::from_str(text).unwrap_err();
            assert!(e.message.contains(needle), "{text}: {}", e.message);
        }
    }

    #[test]
    fn results_keep_their_content() {
        let one_text = json!({"content": [{"type": "text", "text": "5"}]});
        assert_eq!(result_value(&one_text), Value::from("5"));

        let two_texts =
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(result_value(&two_texts).to_json(), two_texts);
        assert_eq!(observation(&two_texts, 100), "a\nb");

        let structured = json!({"content": [{"type": "text", "text": "{\"t\":1}"}], "structuredContent": {"t": 1}});
        assert_eq!(result_value(&structured).to_json(), json!({"t": 1}));
        let only_structured = json!({"content": [], "structuredContent": [1, 2]});
        assert_eq!(result_value(&only_structured).to_json(), json!([1, 2]));
        assert_eq!(observation(&only_structured, 100), "[1,2]");

        let mixed = json!({"content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/gzip", "blob": "AAAAAAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
        ], "structuredContent": {"n": 1}});
        let value = result_value(&mixed).to_json();
        assert_eq!(value["content"], mixed["content"]);
        assert_eq!(value["structuredContent"], json!({"n": 1}));
        assert_eq!(
            observation(&mixed, 1000),
            "look\n[image image/png, 4 bytes of base64]\n[resource file:///a.txt]\nhello\n\
             [resource file:///b.bin application/gzip, 8 bytes of base64]\n[resource link file:///c]"
        );
    }

    #[test]
    fn observations_are_bounded() {
        let long = json!({"content": [{"type": "text", "text": "x".repeat(10_000)}]});
        let obs = observation(&long, 100);
        assert_eq!(obs.chars().count(), 101); // 100 and the ellipsis
    }
}

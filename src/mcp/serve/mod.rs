//! A [`ToolManager`] served as an MCP server: a gateway, not a pipe.
//!
//! [`McpGateway`] answers MCP's `tools/list` and `tools/call` (rmcp's server side) over stdio
//! or streamable HTTP ([`McpTransport`]); `fexpr serve` and [`ToolManager::serve_mcp`] run it.
//! Every tool of the manager is listed with its input schema, and every call a client makes
//! goes through the manager's one request API ([`ToolManager::run`]) as an Anthropic
//! `tool_use` block would: bound and checked against the tool's schema (repairs made and
//! reported, a call that does not fit refused before anything runs), under the manager's
//! [`Limits`](crate::Limits) (deadlines, result size, calls per request), with a call id,
//! and with [`ServeOptions::sandboxed`] evaluated in the wasm guest.
//! The tools may be anything a manager holds: Rust functions, Python tools, or the tools of
//! upstream MCP servers ([`super::McpTools`]), which then get fexpr's checks before the
//! upstream sees a byte; an upstream that dies or hangs is that call's error (its timeout), and
//! is started again on the next call.
//!
//! # Results
//! A call's result passes through whole: a string is one text block; an upstream MCP tool's
//! blocks (images, resources, several texts) are its blocks again; any other value is one
//! text block of its JSON (`{"name": "get_weather", "kwargs": {...}}`), and also its
//! `structuredContent` when it is a JSON object. Nothing is cut or summarized: the size of a
//! result is bounded by [`Limits::max_output_bytes`](crate::Limits::max_output_bytes) (`fexpr
//! serve --limit max_output_bytes=N`), and a result over it is the call's error, saying so.
//! `_meta.fexpr`
//! holds the call id, any repairs made and, sandboxed, the evaluation's receipt
//! (`{"call_id": ..., "repairs": [...], "receipt": {...}}`). A refused
//! or failed call is a tool error (`isError: true`) whose text is fexpr's message and hint,
//! with the whole error (kind, message, span, hint) in `_meta.fexpr.error`.
//!
//! # `run_calls` and `search_tools`
//! [`RUN_CALLS`] takes model text (`{"calls": "[a(x=1), b(y=a(x=2))]"}`): one call, a list
//! of calls, nested calls, read with the front door's rules ([`crate::Input::model_output`])
//! against the exposed tools and run in one go: independent calls concurrently, a nested call's
//! result passed in. Its description shows the tools as Python signatures, so one tool
//! definition stands for all of them. Its result lists each call's output or error with its
//! id. Text that is not calls (code, comments, imports) runs nothing and is reported.
//! With [`ServeOptions::only_run_calls`] the server lists only `run_calls` and
//! [`SEARCH_TOOLS`] (a query → the matching tools' signatures), for tool sets too large to
//! list to a model.
//!
//! ```
//! use fexpr::mcp::serve::{McpGateway, ServeOptions};
//! let gateway = McpGateway::new(fexpr::demo::manager(), ServeOptions::default()).unwrap();
//! let names: Vec<String> = gateway.tools().iter().map(|t| t.name.to_string()).collect();
//! assert!(names.contains(&"add".to_string()) && names.contains(&"run_calls".to_string()));
//! ```

mod search;
mod transport;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ServiceExt;
use serde_json::{json, Value as Json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::call::{fresh_call_id, FunctionOutput};
use crate::dispatch::manager::ToolManager;
use crate::dispatch::request::{Input, Request};
use crate::error::{clip, Error, ErrorKind};
use crate::front::repair::RepairOptions;
use crate::resolve::context::python_alias;
use crate::value::Value;

/// The name of the tool that runs model text: a call, a list of calls, nested calls.
pub const RUN_CALLS: &str = "run_calls";
/// The name of the tool that finds tools by a query (listed with
/// [`ServeOptions::only_run_calls`]).
pub const SEARCH_TOOLS: &str = "search_tools";
/// How many tools `search_tools` returns when the client does not say.
const SEARCH_DEFAULT: usize = 10;
/// The most tools one `search_tools` call returns.
const SEARCH_MAX: usize = 50;
/// The most distinct words of a `search_tools` query that are looked up; the rest are left
/// out, and the answer says so.
pub const SEARCH_QUERY_WORDS: usize = 32;

/// What the gateway exposes and how it runs calls.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeOptions {
    /// List only [`RUN_CALLS`] and [`SEARCH_TOOLS`], not every tool (for very large tool
    /// sets: one short definition instead of hundreds). Default: off.
    pub only_run_calls: bool,
    /// Evaluate every call's arguments in the wasm guest ([`Request::sandboxed`]). Default: off.
    pub sandboxed: bool,
    /// The schema-aware repairs made before a call runs (each is reported). Default: all.
    pub repair: RepairOptions,
    /// The server's name in `initialize`. Default: `fexpr`.
    pub name: String,
    /// Streamable HTTP: the most sessions live at once; an `initialize` beyond it is refused
    /// (`503`, a JSON-RPC error saying so) until one ends. Default: 1,000.
    pub max_sessions: usize,
    /// Streamable HTTP: a session without a message for this long is closed and its memory
    /// returned (its client must `initialize` again). Default: 300 s.
    pub session_idle: Duration,
}

impl ServeOptions {
    /// [`ServeOptions::max_sessions`]' default.
    pub const MAX_SESSIONS: usize = 1000;
    /// [`ServeOptions::session_idle`]'s default.
    pub const SESSION_IDLE: Duration = Duration::from_secs(300);
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            only_run_calls: false,
            sandboxed: false,
            repair: RepairOptions::default(),
            name: "fexpr".into(),
            max_sessions: ServeOptions::MAX_SESSIONS,
            session_idle: ServeOptions::SESSION_IDLE,
        }
    }
}

/// How many bytes one JSON-RPC message may hold beyond `Limits::max_source_bytes` (the
/// envelope around the arguments or the `run_calls` text).
pub const MESSAGE_ENVELOPE_BYTES: usize = 64 << 10;

/// Where a gateway listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    /// This process's stdin and stdout (the way desktop clients start a server); serves one
    /// client until it closes stdin.
    Stdio,
    /// MCP's streamable HTTP transport at `http://ADDR/mcp`, for any number of clients, until
    /// the process ends. Requests whose `Host` is not a loopback name (rmcp's DNS rebinding
    /// guard), or that carry an `Origin` (a web page's), are refused.
    Http(SocketAddr),
}

/// A [`ToolManager`] as an MCP server ([`rmcp::ServerHandler`]); see the [module docs](self).
/// Cheap to clone: every HTTP session gets a clone.
#[derive(Clone)]
pub struct McpGateway {
    inner: Arc<Inner>,
}

struct Inner {
    manager: ToolManager,
    options: ServeOptions,
    /// What `tools/list` answers.
    listed: Vec<rmcp::model::Tool>,
    /// The tools' words, for `search_tools`.
    index: search::Index,
}

impl McpGateway {
    /// A gateway over `manager`'s tools. Fails when a tool is named [`RUN_CALLS`] or
    /// [`SEARCH_TOOLS`] (a client could not reach it), or when [`ServeOptions::sandboxed`]
    /// is asked for without the `sandbox` feature.
    pub fn new(manager: ToolManager, options: ServeOptions) -> Result<McpGateway, Error> {
        if options.sandboxed && !cfg!(feature = "sandbox") {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "sandboxed serving needs fexpr's `sandbox` feature",
            ));
        }
        if let Some(clash) = manager
            .definitions()
            .find(|d| d.name == RUN_CALLS || d.name == SEARCH_TOOLS)
        {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "a tool is named `{}`, the name of the gateway's own tool",
                    clash.name
                ),
            )
            .with_hint("rename the tool"));
        }
        let mut listed = Vec::new();
        if !options.only_run_calls {
            listed.extend(manager.definitions().map(|d| {
                let schema = match &d.parameters {
                    Json::Object(map) => map.clone(),
                    _ => JsonObject::new(),
                };
                rmcp::model::Tool::new(d.name.clone(), d.description.clone(), Arc::new(schema))
            }));
        }
        listed.push(run_calls_tool(&manager, options.only_run_calls));
        if options.only_run_calls {
            listed.push(search_tools_tool());
        }
        let index = search::Index::new(manager.definitions());
        Ok(McpGateway {
            inner: Arc::new(Inner {
                manager,
                options,
                listed,
                index,
            }),
        })
    }

    /// The tools `tools/list` answers, in order: the manager's (unless
    /// [`ServeOptions::only_run_calls`]), then `run_calls` (and `search_tools`).
    pub fn tools(&self) -> &[rmcp::model::Tool] {
        &self.inner.listed
    }

    /// Answer one `tools/call`: `name` with its JSON `arguments`.
    ///
    /// ```
    /// use fexpr::mcp::serve::{McpGateway, ServeOptions};
    /// let gateway = McpGateway::new(fexpr::demo::manager(), ServeOptions::default()).unwrap();
    /// let rt = tokio::runtime::Runtime::new().unwrap();
    /// let args = serde_json::json!({"a": 2.0, "b": 3});
    /// let result = rt.block_on(gateway.call("add", args.as_object().cloned()));
    /// assert_eq!(result.is_error, Some(false), "{result:?}");
    /// let meta = &result.meta.unwrap()["fexpr"];
    /// assert_eq!(meta["repairs"][0]["from"], "2.0"); // an integral float for an `int`
    /// let refused = rt.block_on(gateway.call("add", serde_json::json!({"a": 2}).as_object().cloned()));
    /// assert_eq!(refused.is_error, Some(true));
    /// ```
    pub async fn call(&self, name: &str, arguments: Option<JsonObject>) -> CallToolResult {
        let arguments = arguments.unwrap_or_default();
        match name {
            RUN_CALLS => self.run_calls(&arguments).await,
            SEARCH_TOOLS => self.search_tools(&arguments),
            _ => self.one_call(name, arguments).await,
        }
    }

    /// The most bytes one JSON-RPC message (a stdio line, an HTTP body) may hold: the
    /// manager's `max_source_bytes` and [`MESSAGE_ENVELOPE_BYTES`].
    pub fn max_message_bytes(&self) -> usize {
        self.inner
            .manager
            .limits()
            .max_source_bytes
            .saturating_add(MESSAGE_ENVELOPE_BYTES)
    }

    /// Serve `transport` until the client (stdio) or the process (HTTP) ends. Over stdio the
    /// end of stdin ends the session at once: calls in flight (upstream calls too) are
    /// cancelled.
    pub async fn serve(self, transport: McpTransport) -> Result<(), Error> {
        match transport {
            McpTransport::Stdio => {
                self.serve_lines(tokio::io::stdin(), tokio::io::stdout())
                    .await
            }
            McpTransport::Http(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| serve_failed(&format!("cannot listen on {addr}"), &e))?;
                self.serve_http(listener).await
            }
        }
    }

    /// Serve one client over a byte stream pair, one JSON-RPC message per line (what
    /// [`McpTransport::Stdio`] does with stdin and stdout), until `input` ends.
    ///
    /// # Errors
    /// A `ToolFailed` error when the session did not start (no `initialize`).
    pub async fn serve_lines<R, W>(self, input: R, output: W) -> Result<(), Error>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let transport = transport::LineTransport::new(input, output, self.max_message_bytes());
        let eof = transport.eof();
        let running = ServiceExt::serve(self, transport)
            .await
            .map_err(|e| serve_failed("the session did not start", &e))?;
        // The client is gone: what it started is cancelled, not waited for.
        let token = running.cancellation_token();
        let cancel = tokio::spawn(async move {
            eof.notified().await;
            token.cancel();
        });
        let ended = running.waiting().await;
        cancel.abort();
        ended.map_err(|e| serve_failed("the session ended", &e))?;
        Ok(())
    }

    /// Serve streamable HTTP at `/mcp` on `listener` until the process ends: at most
    /// [`ServeOptions::max_sessions`] sessions, each closed after
    /// [`ServeOptions::session_idle`], request bodies within
    /// [`max_message_bytes`](McpGateway::max_message_bytes).
    ///
    /// # Errors
    /// A `ToolFailed` error when the HTTP server stops.
    pub async fn serve_http(self, listener: tokio::net::TcpListener) -> Result<(), Error> {
        use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
        let max_body = self.max_message_bytes();
        let options = &self.inner.options;
        let sessions = Arc::new(transport::Sessions::new(
            options.max_sessions,
            options.session_idle,
        ));
        let guard = Arc::new(transport::Guard {
            sessions: sessions.clone(),
            max_body,
        });
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            sessions,
            // Loopback `Host`s only (rmcp's default) and no request from a web page
            // (any `Origin` refused): only local programs reach the tools.
            StreamableHttpServerConfig::default()
                .enforce_origin_validation()
                .with_max_request_body_bytes(max_body),
        );
        let router = axum::Router::new().nest_service("/mcp", service).layer(
            axum::middleware::from_fn_with_state(guard, transport::guard),
        );
        axum::serve(listener, router)
            .await
            .map_err(|e| serve_failed("the HTTP server stopped", &e))
    }

    /// A request with the gateway's repairs, natively or in the sandbox.
    fn request(&self, input: Input) -> Request {
        let request = self
            .inner
            .manager
            .run(input)
            .repair(self.inner.options.repair);
        #[cfg(feature = "sandbox")]
        if self.inner.options.sandboxed {
            return request.sandboxed();
        }
        request.native()
    }

    /// One tool called by name: the client's arguments read as an Anthropic `tool_use` block,
    /// so they are checked and repaired as a model's would be.
    async fn one_call(&self, name: &str, arguments: JsonObject) -> CallToolResult {
        // The block names the tool by its Python alias, which resolves to the same tool (and
        // its output carries the tool's own name): the JSON door reads a block by writing it
        // as a Python call, which cannot spell every tool name.
        let alias = self
            .inner
            .manager
            .context()
            .tool_name(name)
            .map(python_alias);
        let name = alias.as_deref().unwrap_or(name);
        let block =
            json!({"type": "tool_use", "id": fresh_call_id(), "name": name, "input": arguments});
        let response = self.request(Input::anthropic(block)).await;
        let mut outputs = response.outputs.into_iter();
        match (outputs.next(), outputs.next()) {
            (Some(output), None) => self.result(&output),
            (first, second) => {
                // A `tool_use` block is one call: anything else is fexpr's fault, said plainly.
                let count = usize::from(first.is_some()) + usize::from(second.is_some());
                error_result(&Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "the call to `{}` gave {count} outputs, not one",
                        clip(name, 60)
                    ),
                ))
            }
        }
    }

    /// The MCP result of one output: the whole value (see the [module docs](self)).
    fn result(&self, output: &FunctionOutput) -> CallToolResult {
        let mut result = match &output.output {
            Ok(value) => value_result(value),
            // The span would index the JSON fexpr made of the client's arguments: dropped. A
            // limit is the server's: the hint says how its operator raises it.
            Err(e) => {
                let hint = e
                    .limit
                    .map(|kind| match kind.setting().strip_prefix("Limits::") {
                        Some(field) => format!(
                        "the server's limit: start it with `--limit {field}=N` (`fexpr serve`) \
                         or raise `Limits::{field}`"
                    ),
                        None => format!("the server's limit: raise `{}`", kind.setting()),
                    });
                error_result(&Error {
                    span: None,
                    hint: hint.or_else(|| e.hint.clone()),
                    ..e.clone()
                })
            }
        };
        let mut fexpr = result
            .meta
            .take()
            .and_then(|mut m| m.0.remove("fexpr"))
            .unwrap_or_else(|| json!({}));
        if let Some(map) = fexpr.as_object_mut() {
            map.insert("call_id".into(), json!(output.call_id));
            if !output.repairs.is_empty() {
                map.insert("repairs".into(), json!(output.repairs));
            }
            if let Some(receipt) = &output.receipt {
                map.insert("receipt".into(), receipt.to_json());
            }
        }
        result.meta = Some(meta(fexpr));
        result
    }

    /// `run_calls`: the text in `calls` run in one request.
    async fn run_calls(&self, arguments: &JsonObject) -> CallToolResult {
        let text = match arguments.get("calls") {
            Some(Json::String(text)) => text.clone(),
            _ => {
                return error_result(
                    &Error::new(
                        ErrorKind::Type,
                        "`run_calls` takes `calls`: the calls as text",
                    )
                    .with_hint(r#"send {"calls": "[search(query=\"a\"), add(a=1, b=2)]"}"#),
                )
            }
        };
        if let Some(extra) = arguments.keys().find(|k| k.as_str() != "calls") {
            return error_result(
                &Error::new(
                    ErrorKind::Type,
                    format!("`run_calls` takes only `calls`, not `{}`", clip(extra, 60)),
                )
                .with_hint("put every call in the `calls` text"),
            );
        }
        let response = self.request(Input::model_output(text)).await;
        let mut text_rows = Vec::new();
        let mut rows = Vec::new();
        for output in &response.outputs {
            // The call as Python text: the tool by its alias (the output names it as it is).
            let call = output.parsed_input.as_ref().map_or_else(
                || clip(&output.input, 200),
                |f| {
                    let python = crate::call::Function {
                        name: python_alias(&f.name),
                        ..f.clone()
                    };
                    clip(&python.to_expr(), 200)
                },
            );
            let mut row = json!({"call_id": output.call_id, "call": call, "name": output.name});
            let mut text_row = row.clone();
            if let (Some(map), Some(text_map)) = (row.as_object_mut(), text_row.as_object_mut()) {
                match &output.output {
                    Ok(value) => {
                        map.insert("output".into(), value.to_json());
                        text_map.insert("output".into(), value.to_json());
                    }
                    Err(e) => {
                        map.insert("error".into(), json!(e));
                        text_map.insert("error".into(), json!(error_text(e)));
                    }
                }
                if !output.repairs.is_empty() {
                    map.insert("repairs".into(), json!(output.repairs));
                }
            }
            rows.push(row);
            text_rows.push(text_row);
        }
        let ignored: Vec<Json> = response
            .ignored
            .iter()
            .map(|i| json!({"text": i.text, "reason": i.reason, "span": i.span}))
            .collect();
        let ran = response.outputs.iter().any(|o| o.output.is_ok());
        let mut text = json!({"results": text_rows});
        if let Some(map) = text.as_object_mut() {
            if !ignored.is_empty() {
                map.insert("ignored".into(), json!(ignored));
            }
            if response.outputs.is_empty() {
                map.insert(
                    "note".into(),
                    json!("no call ran: the text held no call to the tools (code, comments and imports never run)"),
                );
            } else if !ran {
                map.insert("note".into(), json!("no call ran: see each call's error"));
            }
        }
        let mut result = if ran {
            CallToolResult::success(vec![ContentBlock::text(text.to_string())])
        } else {
            CallToolResult::error(vec![ContentBlock::text(text.to_string())])
        };
        result.structured_content = Some(json!({"results": rows, "ignored": ignored}));
        result
    }

    /// `search_tools`: the tools whose name or description has words starting with the
    /// query's words (at most [`SEARCH_QUERY_WORDS`] of them), best first, as Python
    /// definitions, from an index made once.
    fn search_tools(&self, arguments: &JsonObject) -> CallToolResult {
        let Some(Json::String(query)) = arguments.get("query") else {
            return error_result(
                &Error::new(ErrorKind::Type, "`search_tools` takes `query`: a string")
                    .with_hint(r#"send {"query": "weather forecast"}"#),
            );
        };
        let limit = match arguments.get("limit") {
            None | Some(Json::Null) => SEARCH_DEFAULT,
            Some(n) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if (1..=SEARCH_MAX).contains(&n) => n,
                _ => {
                    return error_result(&Error::new(
                        ErrorKind::Type,
                        format!("`limit` must be a whole number from 1 to {SEARCH_MAX}"),
                    ))
                }
            },
        };
        let found = self.inner.index.search(query, limit);
        let mut text = if found.tools.is_empty() {
            format!(
                "no tool matches {}; try other words",
                clip(&json!(query).to_string(), 200)
            )
        } else {
            found.tools.join("\n\n")
        };
        if found.words_left_out > 0 {
            text.push_str(&format!(
                "\n\n(only the first {} words of the query were looked up; {} more were left out)",
                SEARCH_QUERY_WORDS, found.words_left_out
            ));
        }
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

impl ServerHandler for McpGateway {
    fn get_info(&self) -> ServerConfig {
        let instructions = format!(
            "Tools checked and run by fexpr. `{RUN_CALLS}` runs several calls in one go: a list \
             of calls runs concurrently, a call inside another's arguments passes its result in.{}",
            if self.inner.options.only_run_calls {
                format!(" Find tools with `{SEARCH_TOOLS}`.")
            } else {
                String::new()
            }
        );
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                self.inner.options.name.clone(),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.listed.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        // A client that cancels (or goes away) drops the calls it started.
        tokio::select! {
            result = self.call(&request.name, request.arguments) => Ok(result.into()),
            () = context.ct.cancelled() => Err(rmcp::ErrorData::internal_error("the call was cancelled", None)),
        }
    }

    /// rmcp reads a request for a method it knows whose `params` do not fit that method (a
    /// `tools/call` whose `arguments` is a list) as a custom request: such a request is told
    /// what is wrong with its `params`, any other that its method is not served.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, rmcp::ErrorData> {
        let method = request.method.as_str();
        Err(
            match transport::params_error(method, request.params.as_ref()) {
                Some(why) => rmcp::ErrorData::invalid_params(why, None),
                None => rmcp::ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "method `{}` not found: this server answers initialize, ping, tools/list \
                     and tools/call",
                        crate::error::clip(method, 60)
                    ),
                    None,
                ),
            },
        )
    }
}

/// `run_calls`' definition: the tools as Python signatures (only their names when the tools
/// are not listed, `search_tools` gives the signatures).
fn run_calls_tool(manager: &ToolManager, only: bool) -> rmcp::model::Tool {
    let tools = if only {
        let names: Vec<&str> = manager.definitions().map(|d| d.name.as_str()).collect();
        format!(
            "Tool names (call `{SEARCH_TOOLS}` for their signatures first): {}",
            names.join(", ")
        )
    } else {
        let defs: Vec<String> = manager.definitions().map(|d| d.python()).collect();
        format!("Tools:\n\n{}", defs.join("\n\n"))
    };
    let description = format!(
        "Run calls to the tools below, written as Python calls with keyword arguments: one call \
         `f(x=1)`, a list `[f(x=1), g(y=\"a\")]` (run concurrently), or nested calls \
         `f(x=g(y=\"a\"))` (the inner result is passed in). Only calls to these tools run: no \
         code, imports, variables or comments. Returns each call's output or error with its \
         call id.\n\n{tools}"
    );
    let schema = json!({
        "type": "object",
        "properties": {"calls": {"type": "string", "description": "The calls, e.g. [f(x=1), g(y=f(x=2))]"}},
        "required": ["calls"],
    });
    let schema = match schema {
        Json::Object(map) => map,
        _ => JsonObject::new(),
    };
    rmcp::model::Tool::new(RUN_CALLS, description, Arc::new(schema))
}

/// `search_tools`' definition.
fn search_tools_tool() -> rmcp::model::Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words of the tool's name or purpose."},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX,
                      "description": format!("At most this many tools (default {SEARCH_DEFAULT}).")},
        },
        "required": ["query"],
    });
    let schema = match schema {
        Json::Object(map) => map,
        _ => JsonObject::new(),
    };
    rmcp::model::Tool::new(
        SEARCH_TOOLS,
        format!("Find tools for `{RUN_CALLS}`: their Python signatures and descriptions, best match first."),
        Arc::new(schema),
    )
}

/// A successful call's result, whole: a string as one text block; a result in MCP's own form
/// (`{"content": [blocks], "structuredContent"?}`, what an upstream MCP tool with other
/// blocks than one text gives) as those blocks; any other value as one text block of its JSON,
/// and also as `structuredContent` when it is an object. Nothing is cut: the result's size is
/// bounded by `Limits::max_output_bytes`, whose refusal is the call's error.
fn value_result(value: &Value) -> CallToolResult {
    if let Value::Str(text) = value {
        return CallToolResult::success(vec![ContentBlock::text(text.as_str())]);
    }
    let json = value.to_json();
    if let Some((blocks, structured)) = mcp_form(&json) {
        let mut result = CallToolResult::success(blocks);
        result.structured_content = structured;
        return result;
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(json.to_string())]);
    if json.is_object() {
        result.structured_content = Some(json);
    }
    result
}

/// The blocks (and structured content) of a value in MCP's result form: an object with a
/// `content` list of MCP content blocks and at most `structuredContent` beside it.
fn mcp_form(json: &Json) -> Option<(Vec<ContentBlock>, Option<Json>)> {
    let map = json.as_object()?;
    if map
        .keys()
        .any(|k| k != "content" && k != "structuredContent")
    {
        return None;
    }
    let blocks = serde_json::from_value(map.get("content")?.clone()).ok()?;
    Some((blocks, map.get("structuredContent").cloned()))
}

/// fexpr's error as text for a model: the message and the hint, no byte spans.
fn error_text(e: &Error) -> String {
    match &e.hint {
        Some(hint) => format!("{:?} error: {}\nhint: {hint}", e.kind, e.message),
        None => format!("{:?} error: {}", e.kind, e.message),
    }
}

/// The gateway's own failure (it could not listen, a session did not start).
fn serve_failed(what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::new(ErrorKind::ToolFailed, format!("MCP server: {what}: {e}"))
}

/// A tool error (`isError: true`) with fexpr's message and hint, and the whole error in
/// `_meta.fexpr.error`.
fn error_result(e: &Error) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(error_text(e))]);
    result.meta = Some(meta(json!({"error": e})));
    result
}

/// `_meta` holding `{"fexpr": fexpr}`.
fn meta(fexpr: Json) -> MetaObject {
    let mut map = JsonObject::new();
    map.insert("fexpr".into(), fexpr);
    MetaObject(map)
}

impl ToolManager {
    /// Serve this manager's tools as an MCP server over `transport` (see
    /// [`crate::mcp::serve`]), with the default [`ServeOptions`].
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), fexpr::Error> {
    /// use fexpr::mcp::serve::McpTransport;
    /// fexpr::demo::manager().serve_mcp(McpTransport::Http("127.0.0.1:8000".parse().unwrap())).await
    /// # }
    /// ```
    pub async fn serve_mcp(&self, transport: McpTransport) -> Result<(), Error> {
        McpGateway::new(self.clone(), ServeOptions::default())?
            .serve(transport)
            .await
    }
}

//! A [`ToolManager`] served as an MCP server: a gateway, not a pipe.
//!
//! [`McpGateway`] answers MCP's `tools/list` and `tools/call` (rmcp's server side) over stdio
//! or streamable HTTP ([`McpTransport`]); `fexpr serve` and [`ToolManager::serve_mcp`] run it.
//! Every tool of the manager is listed with its input schema, and every call a client makes
//! goes through the manager's one request API ([`ToolManager::run`]) as an Anthropic
//! `tool_use` block would: bound and checked against the tool's schema (repairs made and
//! reported, a call that does not fit refused before anything runs), under the manager's
//! [`Limits`](crate::Limits) (deadlines, result size, calls per request), with a call id and a
//! bounded observation, and with [`ServeOptions::sandboxed`] evaluated in the wasm guest.
//! The tools may be anything a manager holds: Rust functions, Python tools, or the tools of
//! upstream MCP servers ([`super::McpTools`]), which then get fexpr's checks before the
//! upstream sees a byte; an upstream that dies or hangs is that call's error (its timeout), and
//! is started again on the next call.
//!
//! # Results
//! A call's result is its observation as text (what [`ToolManager::observation`] gives a
//! model); a result that is a JSON object is also its `structuredContent`. `_meta.fexpr`
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

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ServiceExt;
use serde_json::{json, Value as Json};
use std::net::SocketAddr;
use std::sync::Arc;

use crate::call::{fresh_call_id, FunctionOutput};
use crate::dispatch::manager::ToolManager;
use crate::dispatch::request::{Input, Request};
use crate::error::{clip, Error, ErrorKind};
use crate::front::repair::RepairOptions;
use crate::resolve::context::python_alias;

/// The name of the tool that runs model text: a call, a list of calls, nested calls.
pub const RUN_CALLS: &str = "run_calls";
/// The name of the tool that finds tools by a query (listed with
/// [`ServeOptions::only_run_calls`]).
pub const SEARCH_TOOLS: &str = "search_tools";
/// How many tools `search_tools` returns when the client does not say.
const SEARCH_DEFAULT: usize = 10;
/// The most tools one `search_tools` call returns.
const SEARCH_MAX: usize = 50;

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
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            only_run_calls: false,
            sandboxed: false,
            repair: RepairOptions::default(),
            name: "fexpr".into(),
        }
    }
}

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
        Ok(McpGateway {
            inner: Arc::new(Inner {
                manager,
                options,
                listed,
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

    /// Serve `transport` until the client (stdio) or the process (HTTP) ends.
    pub async fn serve(self, transport: McpTransport) -> Result<(), Error> {
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            Error::new(ErrorKind::ToolFailed, format!("MCP server: {what}: {e}"))
        };
        match transport {
            McpTransport::Stdio => {
                let running = ServiceExt::serve(self, rmcp::transport::stdio())
                    .await
                    .map_err(|e| failed("the session did not start", &e))?;
                running
                    .waiting()
                    .await
                    .map_err(|e| failed("the session ended", &e))?;
                Ok(())
            }
            McpTransport::Http(addr) => {
                use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
                use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
                let service = StreamableHttpService::new(
                    move || Ok(self.clone()),
                    Arc::new(LocalSessionManager::default()),
                    // Loopback `Host`s only (rmcp's default) and no request from a web page
                    // (any `Origin` refused): only local programs reach the tools.
                    StreamableHttpServerConfig::default().enforce_origin_validation(),
                );
                let router = axum::Router::new().nest_service("/mcp", service);
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| failed(&format!("cannot listen on {addr}"), &e))?;
                axum::serve(listener, router)
                    .await
                    .map_err(|e| failed("the HTTP server stopped", &e))
            }
        }
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

    /// The MCP result of one output.
    fn result(&self, output: &FunctionOutput) -> CallToolResult {
        let manager = &self.inner.manager;
        let mut result = match &output.output {
            Ok(value) => {
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(manager.observation(output))]);
                let json = value.to_json();
                if json.is_object() {
                    result.structured_content = Some(json);
                }
                result
            }
            // The span would index the JSON fexpr made of the client's arguments: dropped.
            Err(e) => error_result(&Error {
                span: None,
                ..e.clone()
            }),
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
        let manager = &self.inner.manager;
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
                        text_map.insert("output".into(), json!(manager.observation(output)));
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

    /// `search_tools`: the tools whose name or description holds the query's words, best
    /// first, as Python definitions.
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
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &crate::ToolDefinition)> = self
            .inner
            .manager
            .definitions()
            .filter_map(|d| {
                let name = d.name.to_lowercase();
                let description = d.description.to_lowercase();
                let score: usize = words
                    .iter()
                    .map(|w| {
                        3 * usize::from(name.contains(w.as_str()))
                            + usize::from(description.contains(w.as_str()))
                    })
                    .sum();
                (score > 0 || words.is_empty()).then_some((score, d))
            })
            .collect();
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        let found: Vec<String> = scored.iter().take(limit).map(|(_, d)| d.python()).collect();
        let text = if found.is_empty() {
            format!(
                "no tool matches {}; try other words",
                clip(&json!(query).to_string(), 200)
            )
        } else {
            found.join("\n\n")
        };
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

/// fexpr's error as text for a model: the message and the hint, no byte spans.
fn error_text(e: &Error) -> String {
    match &e.hint {
        Some(hint) => format!("{:?} error: {}\nhint: {hint}", e.kind, e.message),
        None => format!("{:?} error: {}", e.kind, e.message),
    }
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

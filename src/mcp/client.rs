//! One MCP server as a client sees it: [`McpServer`] connects lazily, reconnects after a
//! failure, lists and calls tools within [`McpOptions`]' bounds, and keeps a child's stderr tail
//! for its errors.

use super::*;

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
    /// Print servers' progress notifications on stderr. Default: off.
    pub progress: bool,
}

impl Default for McpOptions {
    fn default() -> McpOptions {
        McpOptions {
            namespaced: false,
            connect_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(60),
            progress: false,
        }
    }
}

/// How much of the end of a stdio server's stderr is kept, in bytes, for error messages.
pub const STDERR_TAIL_BYTES: usize = 2000;

/// One live connection to a server.
struct Connection {
    service: RunningService<RoleClient, Client>,
    /// Distinguishes connections, so a failed call drops only the one it used.
    id: u64,
    pid: Option<u32>,
    stderr: Arc<StdMutex<Vec<u8>>>,
}

impl Connection {
    fn stderr_tail(&self) -> String {
        stderr_note(&self.stderr)
    }
}

fn stderr_note(tail: &StdMutex<Vec<u8>>) -> String {
    // The tail may start inside a character: lossy, its broken start becomes `\u{FFFD}`.
    let text = tail
        .lock()
        .map(|t| String::from_utf8_lossy(&t).trim().to_string())
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
    pub(super) options: McpOptions,
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

    pub(super) fn failed(&self, message: impl std::fmt::Display) -> Error {
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
        let stderr = Arc::new(StdMutex::new(Vec::new()));
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

/// Keep the last [`STDERR_TAIL_BYTES`] of a server's stderr, reading it in chunks: however
/// long a line is (a server may write hundreds of megabytes without a newline), no more than
/// the tail and one chunk is ever held.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<StdMutex<Vec<u8>>>) {
    use tokio::io::AsyncReadExt;
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let Ok(mut tail) = tail.lock() else { return };
        tail.extend_from_slice(chunk.get(..n).unwrap_or_default());
        let over = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..over);
    }
}

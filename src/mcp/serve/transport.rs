//! How the gateway meets its clients: MCP over stdio, one bounded line per message, and over
//! streamable HTTP with bounded sessions. Both answer every request that has an id, also one
//! whose shape rmcp cannot read (`"params": [1]`), with a JSON-RPC error naming what is wrong.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::service::{RoleServer, TxJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::Transport;
use serde::de::IgnoredAny;
use serde_json::{json, Value as Json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Mutex, Notify};

use crate::error::clip;

/// The JSON-RPC error for the request `message` (its text), when it has an id and rmcp cannot
/// read it (`error`: why): `-32602` when it has `params`, `-32600` otherwise, and `-32700`
/// when it is JSON that cannot be read whole (a number past `f64`, nesting past serde_json's
/// 128 levels) but its `id` can. `None` for text that is not a JSON object with a number or
/// string `id` (a notification, or not JSON): nothing can be answered to it, as the official
/// SDKs do.
fn shape_error(message: &[u8], error: &dyn std::fmt::Display) -> Option<Json> {
    let Ok(value) = serde_json::from_slice::<Json>(message) else {
        // Its top-level keys are read one by one, the values skipped without being built.
        let id = leading_id(message)?;
        let why = format!("parse error: the message cannot be read ({error})");
        return Some(error_reply(&id, -32700, &why));
    };
    let id = value
        .get("id")
        .filter(|id| id.is_number() || id.is_string())?;
    let method = value.get("method").and_then(Json::as_str).unwrap_or("");
    let (code, why) = match params_error(method, value.get("params")) {
        Some(why) => (-32602, why),
        None if value.get("params").is_some() => (
            -32602,
            format!("invalid params for `{}`: {error}", clip(method, 60)),
        ),
        None => (
            -32600,
            format!("invalid request `{}`: {error}", clip(method, 60)),
        ),
    };
    Some(error_reply(id, code, &why))
}

/// A JSON-RPC error response for `id` (`null` when no id could be read), its message clipped
/// to 400 bytes.
fn error_reply(id: &Json, code: i64, message: &str) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": clip(message, 400)}})
}

/// What is wrong with the `params` of a request for `method`, when something is that the
/// gateway can name: `params` that is not an object, missing where the method needs it, or
/// not the method's parameters (serde's message: a missing or mistyped field).
pub(super) fn params_error(method: &str, params: Option<&Json>) -> Option<String> {
    let why = match params {
        Some(params) if !params.is_object() => "`params` must be an object".to_string(),
        Some(params) => params_problem(method, params)?,
        None if matches!(method, "tools/call" | "initialize") => "`params` is missing".to_string(),
        None => return None,
    };
    Some(format!("invalid params for `{}`: {why}", clip(method, 60)))
}

/// What is wrong with the `params` of a request of a method the gateway serves (serde's
/// message for that method's parameters: a missing or mistyped field).
fn params_problem(method: &str, params: &Json) -> Option<String> {
    use rmcp::model::{CallToolRequestParams, InitializeRequestParams, PaginatedRequestParams};
    fn problem<T: serde::de::DeserializeOwned>(params: &Json) -> Option<String> {
        serde_json::from_value::<T>(params.clone())
            .err()
            .map(|e| e.to_string())
    }
    match method {
        "tools/call" => problem::<CallToolRequestParams>(params),
        "tools/list" => problem::<PaginatedRequestParams>(params),
        "initialize" => problem::<InitializeRequestParams>(params),
        _ => None,
    }
}

/// MCP over a byte stream pair (the process's stdin and stdout), one JSON-RPC message per
/// line: a line longer than `max_line` bytes is dropped while it is read (its bytes are never
/// held) and answered with a JSON-RPC error when its `id` is among its first 4 KiB, a line
/// rmcp cannot read but which has an id is answered with a JSON-RPC error, and
/// the end of the input ends the session at once: [`LineTransport::eof`] fires, and the gateway
/// cancels what is in flight.
///
/// The reader task writes those errors itself: rmcp races [`Transport::receive`] against its
/// other events and drops the losing future, so `receive` only takes from a channel (which
/// loses nothing when dropped), never writes.
pub(super) struct LineTransport<W> {
    inbound: mpsc::Receiver<Box<ClientJsonRpcMessage>>,
    out: Arc<Mutex<W>>,
    eof: Arc<Notify>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> LineTransport<W> {
    /// The transport reading `input` (in a task) and writing `output`.
    pub(super) fn new<R>(input: R, output: W, max_line: usize) -> LineTransport<W>
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let (tx, inbound) = mpsc::channel(16);
        let eof = Arc::new(Notify::new());
        let ended = eof.clone();
        let out = Arc::new(Mutex::new(output));
        let replies = out.clone();
        tokio::spawn(async move {
            read_lines(BufReader::new(input), max_line, tx, &replies).await;
            ended.notify_one();
        });
        LineTransport { inbound, out, eof }
    }

    /// Fires when the input ended (the client closed it, or it failed).
    pub(super) fn eof(&self) -> Arc<Notify> {
        self.eof.clone()
    }
}

/// Read `input` line by line into `tx` until it ends, each line at most `max_line` bytes; the
/// error for a line that cannot be handed on is written to `out` (a client that cannot be
/// written to is gone: the end of the session).
async fn read_lines<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    mut input: BufReader<R>,
    max_line: usize,
    tx: mpsc::Sender<Box<ClientJsonRpcMessage>>,
    out: &Mutex<W>,
) {
    let mut line = Vec::new();
    // Set while the rest of a line over `max_line` is skipped.
    let mut skipping = false;
    // The first bytes of a line being skipped: where its `id` is, to answer it.
    let mut head = Vec::new();
    loop {
        let (used, ended) = match input.fill_buf().await {
            Ok([]) | Err(_) => return,
            Ok(buf) => {
                let newline = buf.iter().position(|b| *b == b'\n');
                let used = newline.map_or(buf.len(), |i| i + 1);
                if !skipping {
                    let part = buf.get(..newline.unwrap_or(buf.len())).unwrap_or_default();
                    if line.len().saturating_add(part.len()) > max_line {
                        head = std::mem::take(&mut line);
                        head.truncate(OVER_LONG_HEAD);
                        let rest = OVER_LONG_HEAD.saturating_sub(head.len());
                        head.extend_from_slice(
                            part.get(..rest.min(part.len())).unwrap_or_default(),
                        );
                        skipping = true;
                        eprintln!(
                            "fexpr: a message over {max_line} bytes was dropped (the limit is \
                             max_source_bytes + 64 KiB)"
                        );
                    } else {
                        line.extend_from_slice(part);
                    }
                }
                (used, newline.is_some())
            }
        };
        input.consume(used);
        if !ended {
            continue;
        }
        if std::mem::take(&mut skipping) {
            // Answered when its id is among its first bytes (where clients write it).
            let Some(id) = leading_id(&std::mem::take(&mut head)) else {
                eprintln!(
                    "fexpr: the message over {max_line} bytes had no id among its first \
                     {OVER_LONG_HEAD} bytes, so no error could be sent back"
                );
                continue;
            };
            let why = format!(
                "invalid request: the message is over {max_line} bytes (the limit is \
                 max_source_bytes + 64 KiB)"
            );
            let reply = error_reply(&id, -32600, &why);
            if write_line(out, reply.to_string().as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let text = std::mem::take(&mut line);
        let text = text.strip_suffix(b"\r").unwrap_or(&text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
            Ok(message) => Box::new(message),
            Err(e) => match shape_error(text, &e) {
                Some(reply) => {
                    if write_line(out, reply.to_string().as_bytes()).await.is_err() {
                        return;
                    }
                    continue;
                }
                None => {
                    // Nothing can be answered (no id to answer); said on stderr, not dropped
                    // silently.
                    eprintln!(
                        "fexpr: ignored a line that is not a JSON-RPC message rmcp can read and \
                         has no id to answer ({e}): {}",
                        clip(&String::from_utf8_lossy(text), 200)
                    );
                    continue;
                }
            },
        };
        if tx.send(message).await.is_err() {
            return;
        }
    }
}

/// How many first bytes of a line over the bound are kept to find its `id`.
const OVER_LONG_HEAD: usize = 4096;

/// The `id` (a number or a string) of the JSON object that `head` begins, when `head` holds it
/// as a key of the object itself (not of a nested value): how a message too long to read is
/// answered. A JSON object's keys may come in any order; clients write `id` first or second.
fn leading_id(head: &[u8]) -> Option<Json> {
    let mut rest = head.trim_ascii_start().strip_prefix(b"{")?;
    loop {
        // A key: a JSON string.
        rest = rest.trim_ascii_start();
        let mut keys = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
        let key = keys.next()?.ok()?;
        rest = rest
            .get(keys.byte_offset()..)?
            .trim_ascii_start()
            .strip_prefix(b":")?;
        rest = rest.trim_ascii_start();
        if key == "id" {
            let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Json>();
            let id = values.next()?.ok()?;
            // Whole only when something follows it (a number cut at the head's end is not).
            let whole = rest.len() > values.byte_offset();
            return Some(id).filter(|id| whole && (id.is_number() || id.is_string()));
        }
        // Skip the value (only a small one fits in the head; a large one ends the search).
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        rest = rest
            .get(values.byte_offset()..)?
            .trim_ascii_start()
            .strip_prefix(b",")?;
    }
}

/// Write `bytes` and a newline to `out`, whole, and flush.
async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, bytes: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(bytes).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

impl<W: AsyncWrite + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<W> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), std::io::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let bytes = serde_json::to_vec(&item)?;
            write_line(&out, &bytes).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.inbound.recv().await.map(|message| *message)
    }

    async fn close(&mut self) -> Result<(), std::io::Error> {
        self.inbound.close();
        Ok(())
    }
}

/// rmcp's in-memory sessions with a cap on how many live at once. Each session also ends
/// after its idle time (rmcp's `keep_alive`), and rmcp then closes it here, which drops it and
/// its memory.
pub(super) struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    live: AtomicUsize,
}

/// Why a session was not made or used.
#[derive(Debug)]
pub(super) enum SessionsError {
    /// As many sessions as allowed are live.
    Full(usize),
    /// rmcp's own.
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::Full(max) => write!(f, "{max} sessions are live, the most allowed"),
            SessionsError::Local(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(e: LocalSessionManagerError) -> SessionsError {
        SessionsError::Local(e)
    }
}

impl Sessions {
    /// At most `max` live sessions, each closed after `idle` without a message.
    pub(super) fn new(max: usize, idle: std::time::Duration) -> Sessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Sessions {
            inner,
            max,
            live: AtomicUsize::new(0),
        }
    }

    /// How many sessions live now.
    pub(super) fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Whether no more session can be made now.
    fn full(&self) -> bool {
        self.live() >= self.max
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), SessionsError> {
        // Taken before the session exists, so that concurrent `initialize`s cannot pass the cap.
        let taken = self
            .live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            });
        if taken.is_err() {
            return Err(SessionsError::Full(self.max));
        }
        match self.inner.create_session().await {
            Ok(made) => Ok(made),
            Err(e) => {
                self.live.fetch_sub(1, Ordering::SeqCst);
                Err(e.into())
            }
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, SessionsError> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionsError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionsError> {
        // A session is closed by its DELETE and again when its worker ends: whichever call
        // takes it out of the map counts it.
        let handle = self.inner.sessions.write().await.remove(id);
        if let Some(handle) = handle {
            self.live.fetch_sub(1, Ordering::SeqCst);
            // An error means the worker ended already: nothing is left to close.
            let _ = handle.close().await;
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// What the HTTP guard needs: the sessions (for the cap's answer) and the largest body.
pub(super) struct Guard {
    pub(super) sessions: Arc<Sessions>,
    pub(super) max_body: usize,
}

/// In front of rmcp's HTTP service: a session `DELETE` answers `200 OK` (rmcp says `202`,
/// which the official SDKs log as a failed termination); a JSON POST rmcp cannot read gets
/// `400` with a JSON-RPC error (rmcp answers `415` with text), for its id when it has one,
/// else with a `null` id as the official TypeScript SDK answers; an `initialize` refused for
/// the session cap gets `503` with a JSON-RPC error saying so.
pub(super) async fn guard(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    if method == http::Method::DELETE {
        let mut response = next.run(request).await;
        if response.status() == http::StatusCode::ACCEPTED {
            *response.status_mut() = http::StatusCode::OK;
        }
        return response;
    }
    if method != http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let new_session = !parts.headers.contains_key("mcp-session-id");
    // rmcp's own test: a body of another type keeps rmcp's `415`.
    let json_body = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let bytes = match axum::body::to_bytes(body, guard.max_body).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return (
                http::StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is over {} bytes", guard.max_body),
            )
                .into_response()
        }
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes.clone())))
        .await;
    let status = response.status();
    if status == http::StatusCode::UNSUPPORTED_MEDIA_TYPE && json_body {
        if let Err(e) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
            let reply = shape_error(&bytes, &e).unwrap_or_else(|| unanswerable(&bytes, &e));
            return json_response(http::StatusCode::BAD_REQUEST, &reply);
        }
    }
    if status == http::StatusCode::INTERNAL_SERVER_ERROR && new_session && guard.sessions.full() {
        let id = serde_json::from_slice::<Json>(&bytes)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(Json::Null);
        let max = guard.sessions.max;
        let why = format!(
            "the server has {max} live sessions, the most it allows: end one (HTTP DELETE) or \
             wait for an idle one to expire (`fexpr serve --max-sessions`, `--session-idle`)"
        );
        let reply = error_reply(&id, -32000, &why);
        return json_response(http::StatusCode::SERVICE_UNAVAILABLE, &reply);
    }
    response
}

/// The JSON-RPC error, with a `null` id, for a POST body that is no message rmcp can read and
/// has no id to answer: `-32700` for text that is not JSON, `-32600` for JSON (a batch, which
/// MCP has not had since 2025-06-18, or an object of no message's shape).
fn unanswerable(body: &[u8], error: &dyn std::fmt::Display) -> Json {
    let (code, why) = if serde_json::from_slice::<IgnoredAny>(body).is_err() {
        (
            -32700,
            format!("parse error: the body is not JSON ({error})"),
        )
    } else if body.trim_ascii_start().starts_with(b"[") {
        (
            -32600,
            "invalid request: a batch (a JSON array) is not accepted; send one message per \
             request"
                .to_string(),
        )
    } else {
        (-32600, format!("invalid request: {error}"))
    };
    error_reply(&Json::Null, code, &why)
}

/// A response of `status` with the JSON `body`.
fn json_response(status: http::StatusCode, body: &Json) -> Response {
    (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_request_rmcp_cannot_read_is_answered_for_its_id() {
        let bad = br#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": [1]}"#;
        let e = serde_json::from_slice::<ClientJsonRpcMessage>(bad).unwrap_err();
        let reply = shape_error(bad, &e).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], -32602);
        assert_eq!(
            reply["error"]["message"],
            "invalid params for `tools/call`: `params` must be an object"
        );
        // The message names what the method's parameters lack.
        let no_name =
            br#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"x": 1}}"#;
        let reply = shape_error(no_name, &e).unwrap();
        assert_eq!(reply["id"], "a");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("missing field `name`"),
            "{reply}"
        );
        // No id, or not JSON: nothing to answer.
        let note = br#"{"jsonrpc": "2.0", "method": "tools/call", "params": [1]}"#;
        assert!(shape_error(note, &e).is_none());
        assert!(shape_error(b"{not json", &e).is_none());
    }

    #[test]
    fn the_id_of_a_message_is_found_in_its_first_bytes() {
        assert_eq!(
            leading_id(br#" {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"#),
            Some(json!(3))
        );
        assert_eq!(
            leading_id(br#"{"method":"x","meta":{"id":1},"id":"a-1","params":"#),
            Some(json!("a-1"))
        );
        // No id, an id in a nested value only, a number cut at the end, a value too long.
        assert_eq!(
            leading_id(br#"{"jsonrpc": "2.0", "method": "x", "params": {"id": 1"#),
            None
        );
        assert_eq!(leading_id(br#"{"jsonrpc": "2.0", "id": 12"#), None);
        assert_eq!(leading_id(br#"{"params": {"text": "abc"#), None);
        assert_eq!(leading_id(br#"{"id": null, "method": "x"}"#), None);
        assert_eq!(leading_id(b"[1, 2"), None);
    }

    #[tokio::test]
    async fn lines_are_bounded_answered_and_end_with_the_input() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::new(server_read, server_write, 100);
        let eof = transport.eof();
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let mut input = Vec::new();
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1]}"#);
        input.push(b'\n');
        input.extend_from_slice(&[b'x'; 300]); // over the bound, without a newline yet
        input.extend_from_slice(b"\n\n");
        // Over the bound with an id: answered.
        input.extend_from_slice(br#"{"jsonrpc": "2.0", "id": "big", "params": {"x": ""#);
        input.extend_from_slice(&[b'x'; 300]);
        input.extend_from_slice(b"\"}}\n");
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
        input.push(b'\n');
        client_write.write_all(&input).await.unwrap();
        let message = transport.receive().await.unwrap();
        assert!(
            serde_json::to_string(&message)
                .unwrap()
                .contains("\"ping\""),
            "{message:?}"
        );
        // Both replies were written before the ping was received.
        let mut replies = Vec::new();
        while replies.iter().filter(|b| **b == b'\n').count() < 2 {
            let mut chunk = vec![0u8; 4096];
            let n = client_read.read(&mut chunk).await.unwrap();
            replies.extend_from_slice(chunk.get(..n).unwrap());
        }
        let replies: Vec<Json> = replies
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(replies[0]["id"], 7);
        assert_eq!(replies[0]["error"]["code"], -32602);
        assert_eq!(replies[1]["id"], "big");
        assert_eq!(replies[1]["error"]["code"], -32600);
        assert!(
            replies[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over 100 bytes"),
            "{}",
            replies[1]
        );
        // The client closes its side: the input ends.
        client_write.shutdown().await.unwrap();
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), transport.receive());
        assert!(ended.await.unwrap().is_none());
        tokio::time::timeout(std::time::Duration::from_secs(5), eof.notified())
            .await
            .unwrap();
    }

    /// rmcp races `receive` against its other events and drops it when another comes first;
    /// a reply waiting for a slow client must survive that, whole and on its own line.
    #[tokio::test]
    async fn a_dropped_receive_loses_no_reply() {
        use std::time::Duration;
        // 16 bytes each way: a reply goes out only as fast as the client reads it.
        let (client, server) = tokio::io::duplex(16);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::new(server_read, server_write, 1000);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let mut input = Vec::new();
        for id in 1..=3 {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":[1]}}"#);
            input.extend_from_slice(line.as_bytes());
            input.push(b'\n');
        }
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
        let writer = tokio::spawn(async move {
            client_write.write_all(&input).await.unwrap();
            client_write
        });
        // `receive` loses the race again and again while the client reads nothing.
        for _ in 0..5 {
            let raced = tokio::time::timeout(Duration::from_millis(20), transport.receive());
            assert!(
                raced.await.is_err(),
                "nothing is received before the replies"
            );
        }
        let mut replies = Vec::new();
        let read = async {
            while replies.iter().filter(|b| **b == b'\n').count() < 3 {
                let mut chunk = [0u8; 64];
                let n = client_read.read(&mut chunk).await.unwrap();
                replies.extend_from_slice(chunk.get(..n).unwrap());
            }
        };
        tokio::time::timeout(Duration::from_secs(5), read)
            .await
            .unwrap();
        let ids: Vec<Json> = replies
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice::<Json>(l).unwrap()["id"].clone())
            .collect();
        assert_eq!(ids, [json!(1), json!(2), json!(3)]);
        let ping = tokio::time::timeout(Duration::from_secs(5), transport.receive());
        let ping = serde_json::to_string(&ping.await.unwrap().unwrap()).unwrap();
        assert!(ping.contains("\"ping\""), "{ping}");
        writer.await.unwrap().shutdown().await.unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(5), transport.receive());
        assert!(ended.await.unwrap().is_none());
    }
}

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
//! Each tool is registered under its own name on its server (`get-sum`): JSON calls, model
//! formats and MCP clients of [`serve`] use it, and Python call text reaches it by its Python
//! alias (`get_sum`, see [`python_alias`](crate::context::python_alias)). With
//! [`McpOptions::namespaced`] the server's name comes first: `everything.get-sum` (alias
//! `everything.get_sum`). A tool whose name no provider allows is left out and reported in
//! [`McpTools::left_out`]; two servers with a tool of one name, or an MCP tool with the name
//! of a tool the manager has already, are an error naming both (namespacing tells them apart):
//! no tool is renamed behind the user's back. [`McpTools::names`] lists the names.
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
//! bounded by the manager as every observation is ([`Limits::max_observation_chars`](crate::Limits::max_observation_chars)).
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

mod client;
mod config;
mod tools;

pub use self::client::{McpOptions, McpServer, STDERR_TAIL_BYTES};
pub use self::config::{McpConfig, McpServerConfig};
pub use self::tools::{observation, result_value, McpTool, McpToolName, McpTools};

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
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;
use tokio::sync::Mutex;

use crate::dispatch::manager::ToolManagerBuilder;
use crate::dispatch::tool::{Tool, ToolDefinition, ToolFuture, ToolOutput};
use crate::error::{clip, Error, ErrorKind};
use crate::resolve::context::{check_tool_name, valid_tool_name};
use crate::value::Value;

#[cfg(test)]
mod tests {
    use super::*;

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

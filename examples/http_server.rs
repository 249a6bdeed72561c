//! An agent server's tool endpoint: one shared [`ToolManager`] on a multi-threaded runtime.
//!
//! `POST /tool_calls` with an OpenAI assistant message (`{"role": "assistant",
//! "tool_calls": [...]}`) runs every call concurrently and answers with the `role: tool`
//! messages to append to the conversation, each carrying its call's `tool_call_id` and a
//! content the model can read (a string result as its text, an error as its message and hint).
//! A message without tool calls gets `[]`: there was nothing to run, and nothing to append.
//!
//! ```text
//! cargo run --example http_server            # listens on 127.0.0.1:3000
//! curl -s localhost:3000/tool_calls -d '{"role": "assistant", "tool_calls": [{"id": "call_1",
//!   "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]}'
//! [{"content":"5","role":"tool","tool_call_id":"call_1"}]
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use fexpr::{FunctionTool, Input, ToolManager};
use serde_json::Value;
use std::time::Duration;

/// The demo tools plus `lookup(city)`, which waits 100 ms as a remote API would.
pub fn manager() -> ToolManager {
    fexpr::demo::builder()
        .tool(
            FunctionTool::new_async("lookup", ["city"], |city: String| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                format!("sunny in {city}")
            })
            .description("Look up the weather of a city."),
        )
        .build()
        .expect("the tools are well-formed")
}

/// The routes, sharing `manager` (a `ToolManager` is `Clone + Send + Sync`; every future it
/// returns is `Send`, so handlers run on any worker thread).
pub fn app(manager: ToolManager) -> Router {
    Router::new()
        .route("/tool_calls", post(tool_calls))
        .with_state(manager)
}

/// Run the calls of an assistant message; answer with one `role: tool` message per call.
async fn tool_calls(State(manager): State<ToolManager>, body: String) -> Json<Vec<Value>> {
    let response = manager.run(Input::json(body)).await;
    Json(response.openai_messages(&manager))
}

/// Serve on `addr` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener) -> std::io::Result<()> {
    axum::serve(listener, app(manager())).await
}

#[tokio::main(flavor = "multi_thread")]
#[allow(dead_code)] // the test includes this file and starts `serve` itself
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    serve(listener).await
}

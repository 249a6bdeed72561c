//! The cost fexpr adds to an MCP tool call.
//!
//! - `mcp_echo/raw`: a `tools/call` of server-everything's `echo` with rmcp's client peer
//!   (`Peer::call_tool`), the JSON-RPC round trip through the server's stdio.
//! - `mcp_echo/server_call_tool`: the same through `McpServer::call_tool` (connection check,
//!   timeout), without parsing and binding.
//! - `mcp_echo/fexpr`: `echo(message="hi")` through `ToolManager::execute_func_expr` on the same
//!   connection: parse, resolve, bind against the server's schema, the same round trip, the
//!   result back into a `Value`.
//!
//! Run `scripts/ci-mcp.sh` first, then `cargo bench --bench mcp` (or, without building
//! wasmtime, `cargo bench --no-default-features --features mcp --bench mcp`); without the
//! server the benchmark says so and does nothing. The ratio of the two medians is printed at the end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use criterion::Criterion;
use fexpr::mcp::{McpConfig, McpOptions, McpServerConfig, McpTools};
use fexpr::ToolManager;
use rmcp::model::CallToolRequestParams;
use std::path::PathBuf;

fn median_ns(id: &str) -> Option<f64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/criterion")
        .join(id)
        .join("new/estimates.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mcp-servers/node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        eprintln!(
            "*** mcp bench skipped: {} is not installed (run scripts/ci-mcp.sh) ***",
            bin.display()
        );
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let config = McpConfig::new().server(
        "everything",
        McpServerConfig::stdio(bin.to_string_lossy(), ["stdio"]),
    );
    let (manager, mcp) = rt.block_on(async {
        let mcp = McpTools::connect(&config, McpOptions::default())
            .await
            .expect("server-everything starts");
        let mut manager = ToolManager::builder();
        mcp.register(&mut manager);
        (manager.build().unwrap(), mcp)
    });
    let server = mcp.servers()[0].clone();
    let peer = rt.block_on(server.peer()).expect("a connection");
    let mut arguments = serde_json::Map::new();
    arguments.insert("message".into(), "hi".into());

    // Both paths answer the same before anything is measured.
    let raw = rt
        .block_on(
            peer.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone())),
        )
        .expect("raw echo");
    assert_eq!(
        raw.content[0].as_text().map(|t| t.text.as_str()),
        Some("Echo: hi")
    );
    let out = rt.block_on(manager.execute_func_expr("echo(message=\"hi\")"));
    assert_eq!(
        out.output,
        Ok(fexpr::Value::from("Echo: hi")),
        "{:?}",
        out.error()
    );

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("mcp_echo");
    group.bench_function("raw", |b| {
        b.iter(|| {
            rt.block_on(
                peer.call_tool(
                    CallToolRequestParams::new("echo").with_arguments(arguments.clone()),
                ),
            )
            .expect("raw echo")
        })
    });
    group.bench_function("server_call_tool", |b| {
        b.iter(|| {
            rt.block_on(server.call_tool("echo", arguments.clone()))
                .expect("echo")
        })
    });
    group.bench_function("fexpr", |b| {
        b.iter(|| {
            let out = rt.block_on(manager.execute_func_expr("echo(message=\"hi\")"));
            assert!(out.output.is_ok());
            out
        })
    });
    group.finish();
    c.final_summary();
    if let (Some(raw), Some(fexpr)) = (median_ns("mcp_echo/raw"), median_ns("mcp_echo/fexpr")) {
        println!(
            "mcp_echo: raw {:.1} µs, fexpr {:.1} µs, ratio fexpr/raw {:.3}",
            raw / 1000.0,
            fexpr / 1000.0,
            fexpr / raw
        );
    }
    rt.block_on(mcp.close());
}

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
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

mod common;

use common::median_ns;
use criterion::Criterion;
use rmcp::model::CallToolRequestParams;

fn main() {
    let Some((rt, manager, mcp)) = common::everything("mcp") else {
        return;
    };
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
        out.output.as_ref().err()
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

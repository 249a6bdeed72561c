//! `fexpr serve` as a gateway in front of a real MCP server (server-everything over stdio),
//! reached by rmcp's client over an in-process pipe (no HTTP, so the figures are fexpr's and
//! the upstream's, not a network's).
//!
//! - `gateway/direct_echo`: one `tools/call` of `echo` straight to the upstream.
//! - `gateway/gateway_echo`: the same call through the gateway (read as a `tool_use` block,
//!   checked against the schema, run through the manager, the result back as MCP).
//! - `gateway/ten_calls_sequential`, `gateway/ten_calls_concurrent`: ten independent `echo`
//!   calls as ten MCP tool calls through the gateway, one after another and all at once.
//! - `gateway/run_calls_ten`: the same ten calls as one `run_calls` (one round trip).
//!
//! It also prints the size of `tools/list` with every tool and with `--only-run-calls` (bytes,
//! and tokens as bytes / 4), and, after criterion, the direct and gateway single calls
//! interleaved (30 rounds of 100 each) so that a loaded machine weighs on both alike.
//!
//! Run `scripts/ci-mcp.sh` first, then `cargo bench --bench gateway`; without the server the
//! benchmark says so and does nothing.
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
use fexpr::mcp::serve::{McpGateway, ServeOptions};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::Peer;
use rmcp::ServiceExt;

fn echo(i: usize) -> CallToolRequestParams {
    let mut arguments = JsonObject::new();
    arguments.insert("message".into(), format!("m{i}").into());
    CallToolRequestParams::new("echo").with_arguments(arguments)
}

async fn call(peer: &Peer<RoleClient>, params: CallToolRequestParams) -> CallToolResult {
    let result = peer.call_tool(params).await.expect("a result");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result
}

/// A client of `gateway` over an in-process pipe.
async fn connect(gateway: McpGateway) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = ServiceExt::serve(gateway, tokio::io::split(server_io)).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(tokio::io::split(client_io))
        .await
        .expect("the gateway answers initialize")
}

fn main() {
    let Some((rt, manager, mcp)) = common::everything("gateway") else {
        return;
    };
    let upstream = rt.block_on(mcp.servers()[0].peer()).expect("a connection");
    let gateway = McpGateway::new(manager.clone(), ServeOptions::default()).expect("a gateway");
    let only = McpGateway::new(
        manager,
        ServeOptions {
            only_run_calls: true,
            ..ServeOptions::default()
        },
    )
    .expect("a gateway");
    for (what, g) in [("every tool", &gateway), ("--only-run-calls", &only)] {
        let bytes = serde_json::to_string(g.tools()).map_or(0, |s| s.len());
        println!(
            "tools/list with {what}: {} tools, {bytes} bytes, ~{} tokens (bytes / 4)",
            g.tools().len(),
            bytes / 4
        );
    }
    let client = rt.block_on(connect(gateway));
    let peer = client.peer().clone();
    let ten = format!(
        "[{}]",
        (0..10)
            .map(|i| format!("echo(message=\"m{i}\")"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut arguments = JsonObject::new();
    arguments.insert("calls".into(), ten.into());
    let run_calls = CallToolRequestParams::new("run_calls").with_arguments(arguments);

    // Every path answers before anything is measured.
    let direct = rt.block_on(call(&upstream, echo(0)));
    let through = rt.block_on(call(&peer, echo(0)));
    assert_eq!(direct.content, through.content);
    let all = rt.block_on(call(&peer, run_calls.clone()));
    let results = all.structured_content.expect("results")["results"].clone();
    assert_eq!(results[9]["output"], "Echo: m9", "{results}");

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("gateway");
    group.bench_function("direct_echo", |b| {
        b.iter(|| rt.block_on(call(&upstream, echo(0))))
    });
    group.bench_function("gateway_echo", |b| {
        b.iter(|| rt.block_on(call(&peer, echo(0))))
    });
    group.bench_function("ten_calls_sequential", |b| {
        b.iter(|| {
            rt.block_on(async {
                for i in 0..10 {
                    call(&peer, echo(i)).await;
                }
            })
        })
    });
    group.bench_function("ten_calls_concurrent", |b| {
        b.iter(|| {
            rt.block_on(futures_util::future::join_all(
                (0..10).map(|i| call(&peer, echo(i))),
            ))
        })
    });
    group.bench_function("run_calls_ten", |b| {
        b.iter(|| rt.block_on(call(&peer, run_calls.clone())))
    });
    group.finish();
    c.final_summary();
    let us = |id: &str| median_ns(&format!("gateway/{id}")).map(|ns| ns / 1000.0);
    if let (Some(direct), Some(gateway)) = (us("direct_echo"), us("gateway_echo")) {
        println!(
            "one call: direct {direct:.1} µs, through the gateway {gateway:.1} µs, overhead {:.1} µs",
            gateway - direct
        );
    }
    if let (Some(seq), Some(conc), Some(one)) = (
        us("ten_calls_sequential"),
        us("ten_calls_concurrent"),
        us("run_calls_ten"),
    ) {
        println!(
            "ten calls: sequential {seq:.1} µs, concurrent {conc:.1} µs, one run_calls {one:.1} µs"
        );
    }
    // The same two single calls interleaved, so that the machine's load falls on both alike:
    // 30 rounds of 100 direct calls then 100 through the gateway; the median of the rounds'
    // means.
    let (mut direct, mut through) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        for (times, peer) in [(&mut direct, &upstream), (&mut through, &peer)] {
            let started = std::time::Instant::now();
            rt.block_on(async {
                for _ in 0..100 {
                    call(peer, echo(0)).await;
                }
            });
            times.push(started.elapsed().as_secs_f64() * 1e6 / 100.0);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (direct, through) = (median(&mut direct), median(&mut through));
    println!(
        "interleaved, 30 x 100 calls each: direct {direct:.1} µs, through the gateway \
         {through:.1} µs, overhead {:.1} µs per call",
        through - direct
    );
    rt.block_on(async {
        let _ = client.cancel().await;
        mcp.close().await;
    });
}

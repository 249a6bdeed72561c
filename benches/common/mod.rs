//! What the MCP benchmarks share (`benches/mcp.rs`, `benches/gateway.rs`): server-everything
//! connected as the tools of a manager, and the medians criterion wrote.

use fexpr::mcp::{McpConfig, McpOptions, McpServerConfig, McpTools};
use fexpr::ToolManager;
use std::path::PathBuf;
use tokio::runtime::Runtime;

/// A two-thread runtime, server-everything over stdio on it, and a manager of its tools; or
/// `None` after saying why `bench` is skipped, when the server is not installed.
pub fn everything(bench: &str) -> Option<(Runtime, ToolManager, McpTools)> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mcp-servers/node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        eprintln!(
            "*** {bench} bench skipped: {} is not installed (run scripts/ci-mcp.sh) ***",
            bin.display()
        );
        return None;
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
        mcp.register(&mut manager)
            .expect("server-everything's tools register");
        (manager.build().expect("a manager"), mcp)
    });
    Some((rt, manager, mcp))
}

/// The median of benchmark `id` (`group/name`) in nanoseconds, from criterion's last run.
pub fn median_ns(id: &str) -> Option<f64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/criterion")
        .join(id)
        .join("new/estimates.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

//! `fexpr._fexpr.serve_mcp`: a `Manager` served as an MCP server (`fexpr.mcp.serve`), through
//! the engine's gateway (`fexpr::mcp::serve`): every call checked, repaired and bounded, plus
//! `run_calls`.

use std::time::Duration;

use fexpr::mcp::serve::{McpGateway, McpTransport, ServeOptions};
use fexpr::repair::RepairOptions;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::manager::Manager;

/// How often the waiting thread lets Python run its signal handlers (Ctrl-C).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// Serve `manager`'s tools over stdio (`listen=None`) or streamable HTTP at
/// `http://LISTEN/mcp`, until the client closes stdin (stdio) or a signal handler raises
/// (Ctrl-C's `KeyboardInterrupt`), with the GIL released while it waits.
#[pyfunction]
#[pyo3(signature = (manager, listen=None, only_run_calls=false, sandboxed=false, strict=false,
    max_sessions=ServeOptions::MAX_SESSIONS, session_idle=ServeOptions::SESSION_IDLE.as_secs_f64()))]
#[allow(clippy::too_many_arguments)]
pub fn serve_mcp(
    py: Python<'_>,
    manager: &Bound<'_, Manager>,
    listen: Option<&str>,
    only_run_calls: bool,
    sandboxed: bool,
    strict: bool,
    max_sessions: usize,
    session_idle: f64,
) -> PyResult<()> {
    let session_idle = fexpr::limits::seconds(session_idle)
        .map_err(|e| PyValueError::new_err(format!("session_idle must be {e}")))?;
    let listen: Option<std::net::SocketAddr> = listen
        .map(|addr| {
            addr.parse().map_err(|e| {
                PyValueError::new_err(format!(
                    "listen={addr:?}: not an address such as 127.0.0.1:8000 ({e})"
                ))
            })
        })
        .transpose()?;
    let options = ServeOptions {
        only_run_calls,
        sandboxed,
        repair: if strict {
            RepairOptions::strict()
        } else {
            RepairOptions::default()
        },
        max_sessions,
        session_idle,
        ..ServeOptions::default()
    };
    let gateway = McpGateway::new(manager.get().engine().as_ref().clone(), options)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let runtime = pyo3_async_runtimes::tokio::get_runtime();
    let serving = match listen {
        None => runtime.spawn(gateway.serve(McpTransport::Stdio)),
        Some(addr) => {
            // The address is told once the listener is bound, and as bound (port 0 picks one).
            let listener = py
                .detach(|| runtime.block_on(tokio::net::TcpListener::bind(addr)))
                .and_then(|l| Ok((l.local_addr()?, l)))
                .map_err(|e| PyRuntimeError::new_err(format!("cannot listen on {addr}: {e}")))?;
            let stderr = py.import("sys")?.getattr("stderr")?;
            stderr.call_method1(
                "write",
                (format!("fexpr: serving MCP at http://{}/mcp\n", listener.0),),
            )?;
            stderr.call_method0("flush")?;
            runtime.spawn(gateway.serve_http(listener.1))
        }
    };
    loop {
        if serving.is_finished() {
            break;
        }
        py.detach(|| std::thread::sleep(SIGNAL_CHECK));
        if let Err(interrupt) = py.check_signals() {
            serving.abort();
            return Err(interrupt);
        }
    }
    let result = py.detach(|| pyo3_async_runtimes::tokio::get_runtime().block_on(serving));
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(PyRuntimeError::new_err(e.to_string())),
        Err(e) => Err(PyRuntimeError::new_err(format!(
            "the MCP server stopped: {e}"
        ))),
    }
}

//! Waiting for the engine from Python: the sync methods block the calling thread with the GIL
//! released (checking for Ctrl-C while they wait); the async methods return an awaitable for the
//! caller's asyncio loop. Both run on one multi-threaded tokio runtime.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use fexpr::ToolManager;
use pyo3::prelude::*;

use crate::request::RequestState;
use crate::run::{self, Call, Outputs};

/// How often a waiting sync call lets Python run its signal handlers (Ctrl-C).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Run `call` to completion on this thread, with the GIL released: other Python threads run
/// meanwhile, and the tools take the GIL when they run. A signal handler that raises (Ctrl-C's
/// `KeyboardInterrupt`) or a tool that raises a `BaseException` which is not an `Exception`
/// stops the call, and the exception is raised here.
pub fn block_on(
    py: Python<'_>,
    manager: Arc<ToolManager>,
    call: Call,
    state: Arc<RequestState>,
) -> PyResult<Outputs> {
    let waiting = state.clone();
    let result = py.detach(move || {
        block_on_here(waiting.clone().scope(async move {
            let work = run::run(&manager, call);
            tokio::pin!(work);
            tokio::select! {
                biased;
                out = &mut work => Ok(out),
                error = interrupted(&waiting) => Err(error),
            }
        }))
    });
    match state.take_interrupt() {
        Some(error) => Err(error),
        None => result,
    }
}

/// Poll `fut` to completion on this thread, inside the runtime's context (its timers, its
/// blocking pool), parking the thread while it waits. Unlike `Runtime::block_on` this may nest:
/// a sync tool may itself call a sync method. And it costs nothing when the future is ready at
/// once, as a plain tool call is.
fn block_on_here<F: Future>(fut: F) -> F::Output {
    let _context = runtime().enter();
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// Wakes a thread parked in [`block_on_here`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The exception that stops a waiting call: one a tool raised, or one a signal handler raised.
async fn interrupted(state: &RequestState) -> PyErr {
    loop {
        tokio::select! {
            _ = state.interrupted.notified() => {
                if let Some(error) = state.take_interrupt() {
                    return error;
                }
            }
            _ = tokio::time::sleep(SIGNAL_CHECK) => {
                if let Err(error) = Python::attach(|py| py.check_signals()) {
                    return error;
                }
            }
        }
    }
}

/// An awaitable for the caller's asyncio loop that runs `call` (async tools on that loop) and
/// gives `finish`'s result. Cancelling the awaitable cancels the call.
pub fn spawn<'py, F>(
    py: Python<'py>,
    manager: Arc<ToolManager>,
    call: Call,
    finish: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: FnOnce(Python<'_>, Outputs, &RequestState) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
    let state = RequestState::new(Some(locals.clone()));
    pyo3_async_runtimes::tokio::future_into_py_with_locals(py, locals, async move {
        // Dropped when this future is dropped (the awaitable was cancelled): the call stops.
        let (_cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
        let handle = runtime().handle().clone();
        let scoped = state.clone();
        // The engine's native futures are not `Send` yet, so the call is polled on a thread
        // of the blocking pool rather than spawned.
        let joined = tokio::task::spawn_blocking(move || {
            handle.block_on(scoped.scope(async move {
                let work = run::run(&manager, call);
                tokio::pin!(work);
                tokio::select! {
                    biased;
                    out = &mut work => Some(out),
                    _ = cancelled => None,
                }
            }))
        })
        .await;
        Python::attach(|py| {
            if let Some(error) = state.take_interrupt() {
                return Err(error);
            }
            match joined {
                Ok(Some(outputs)) => finish(py, outputs, &state),
                Ok(None) => Err(pyo3::exceptions::asyncio::CancelledError::new_err(
                    "the call was cancelled",
                )),
                Err(e) => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "the call's thread failed: {e}"
                ))),
            }
        })
    })
}

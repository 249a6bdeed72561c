//! Waiting for the engine from Python: the sync methods block the calling thread with the GIL
//! released (checking for Ctrl-C while they wait); the async methods return an awaitable for the
//! caller's asyncio loop. Both run on one multi-threaded tokio runtime.
//!
//! A tool may call its manager again; each such call runs one level deeper, and a call more
//! than [`MAX_NESTING`] levels deep raises `RecursionError` (unbounded, the nested calls would
//! exhaust the stack or the worker threads, as unbounded recursion does in plain Python).

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use fexpr::runtime::Unpark;
use fexpr::ToolManager;
use pyo3::exceptions::PyRecursionError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::request::RequestState;
use crate::run::{self, Call, Outputs};

/// How often a waiting sync call lets Python run its signal handlers (Ctrl-C).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// How deep calls may nest (a tool calling its manager, which calls the tool, ...).
pub const MAX_NESTING: u32 = 32;

tokio::task_local! {
    /// The nesting level of the request whose future is being polled (1 for a call the program
    /// made, 2 for a call a tool of that call made, ...).
    static DEPTH: u32;
}

thread_local! {
    /// The nesting level of the sync tool running on this thread (0: none).
    static TOOL_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// This thread's Python thread state, kept between the tools it runs ([`attach_kept`]).
    static KEPT: KeptThreadState = const { KeptThreadState { kept: Cell::new(None) } };
}

/// Run `f` attached to Python on this thread (a tool worker running a sync
/// tool), keeping the thread's Python thread state for its next tool.
///
/// Attaching from a thread without a Python thread state creates one, and detaching destroys
/// it again (`PyGILState_Ensure`/`PyGILState_Release` with nothing else holding it): on the
/// tool workers that was every tool call, ~1 µs of the ~3 µs a Python tool call cost over the
/// bare function. Kept, a call only takes and releases the GIL, as on a thread Python started;
/// the state is released when the thread ends (an idle worker after its keep-alive). Python's thread-locals and the thread's `contextvars` context now last across
/// the tools a worker runs, as on a `ThreadPoolExecutor`'s workers.
pub fn attach_kept<T>(f: impl for<'py> FnOnce(Python<'py>) -> T) -> T {
    // `try_with`: in the thread's own destructors (never, for a tool) it just attaches.
    let _ = KEPT.try_with(KeptThreadState::keep);
    Python::attach(f)
}

/// A Python thread state held on this thread without the GIL (see [`attach_kept`]).
struct KeptThreadState {
    /// What `PyGILState_Ensure` gave, and the thread state `PyEval_SaveThread` detached.
    kept: Cell<Option<(ffi::PyGILState_STATE, NonNull<ffi::PyThreadState>)>>,
}

impl KeptThreadState {
    /// Create and keep this thread's Python thread state, unless it has one already (kept, or
    /// made by another: then nothing is done and a tool attaches as before).
    #[allow(unsafe_code)]
    fn keep(&self) {
        if self.kept.get().is_some() {
            return;
        }
        // SAFETY: the interpreter is initialized (this module was imported into it and the
        // check below holds); the thread has no Python thread state (so it is not attached),
        // so `PyGILState_Ensure` creates one and attaches, and `PyEval_SaveThread` detaches
        // again at once, leaving the state registered for the thread and the GIL free.
        unsafe {
            if ffi::Py_IsInitialized() == 0 || !ffi::PyGILState_GetThisThreadState().is_null() {
                return;
            }
            let gstate = ffi::PyGILState_Ensure();
            match NonNull::new(ffi::PyEval_SaveThread()) {
                Some(tstate) => self.kept.set(Some((gstate, tstate))),
                // Not reached (a thread that attached has a state); undone if it were.
                None => ffi::PyGILState_Release(gstate),
            }
        }
    }
}

impl Drop for KeptThreadState {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        let Some((gstate, tstate)) = self.kept.take() else {
            return;
        };
        // SAFETY: the pair `keep` made on this (ending) thread, undone in reverse order. Once
        // the interpreter is finalizing (`Py_IsInitialized` is 0 from its start) the state is
        // left to the interpreter, which frees every thread's; should finalizing begin right
        // after the check, pyo3's `PyEval_RestoreThread` hangs this thread instead of
        // unwinding it, as it does for any thread attaching then.
        unsafe {
            if ffi::Py_IsInitialized() == 0 {
                return;
            }
            ffi::PyEval_RestoreThread(tstate.as_ptr());
            ffi::PyGILState_Release(gstate);
        }
    }
}

/// The nesting level of the request being polled (0 outside any).
pub fn depth() -> u32 {
    DEPTH.try_with(|d| *d).unwrap_or(0)
}

/// Run `f` (a sync tool's body) as a tool of a request at level `depth`: a call it makes to a
/// manager runs at `depth + 1`.
pub fn at_depth<T>(depth: u32, f: impl FnOnce() -> T) -> T {
    let outer = TOOL_DEPTH.replace(depth);
    let out = f();
    TOOL_DEPTH.set(outer);
    out
}

/// The level a call starting here runs at: one below the sync tool running on this thread,
/// else one below the async tool whose task this is (`fexpr._runtime.depth`), else 1. A
/// `RecursionError` past [`MAX_NESTING`].
fn level(py: Python<'_>) -> PyResult<u32> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let mut outer = TOOL_DEPTH.get();
    if outer == 0 {
        // The context variable's bound `get`, looked up once.
        let get = GET.get_or_try_init(py, || {
            let var = py.import("fexpr._runtime")?.getattr("depth")?;
            Ok::<_, PyErr>(var.getattr("get")?.unbind())
        })?;
        outer = get.bind(py).call0()?.extract()?;
    }
    let level = outer.saturating_add(1);
    if level > MAX_NESTING {
        return Err(PyRecursionError::new_err(format!(
            "fexpr calls nested more than {MAX_NESTING} deep (a tool calling its manager again)"
        )));
    }
    Ok(level)
}

/// The stack of the runtime's threads, where sync tools run and results are converted: as a
/// Python main thread's (8 MiB), not tokio's 2 MiB, so a result nested as deep as fexpr allows
/// (and the tool's own Python) fits.
pub const THREAD_STACK: usize = 8 << 20;

/// Configure the runtime before its first use (at import).
pub fn configure() {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_stack_size(THREAD_STACK);
    pyo3_async_runtimes::tokio::init(builder);
}

/// Run `fut` on the runtime in the background (a stream's engine side), at the nesting level
/// of a call the program made.
pub fn spawn_task(fut: impl Future<Output = ()> + Send + 'static) {
    runtime().spawn(DEPTH.scope(1, fut));
}

/// Enter the runtime on this thread (a tool worker's): its timers and handle for the tools.
pub fn enter() -> tokio::runtime::EnterGuard<'static> {
    runtime().enter()
}

fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Run `call` to completion on this thread, with the GIL released: other Python threads run
/// meanwhile, and the tools take the GIL when they run. A signal handler that raises (Ctrl-C's
/// `KeyboardInterrupt`) or a tool that raises a `BaseException` which is not an `Exception`
/// stops the call, and the exception is raised here.
pub fn block_on(
    py: Python<'_>,
    manager: &ToolManager,
    call: Call,
    state: Arc<RequestState>,
) -> PyResult<Outputs> {
    let level = level(py)?;
    let waiting = state.clone();
    let work = run::run(manager, call);
    let result = py.detach(move || {
        block_on_here(DEPTH.scope(
            level,
            waiting.clone().scope(async move {
                tokio::pin!(work);
                tokio::select! {
                    biased;
                    out = &mut work => Ok(out),
                    error = interrupted(&waiting) => Err(error),
                }
            }),
        ))
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
///
/// Before parking it waits up to [`SPIN`] without sleeping ([`spin_until`]): a sync tool runs
/// on a worker thread and a quick one is done within microseconds, and a thread that has not
/// slept is woken without the kernel waking it (which, on a busy machine, costs more than the
/// call).
fn block_on_here<F: Future>(fut: F) -> F::Output {
    thread_local! {
        /// This thread's waker, made once.
        static UNPARK: Arc<Unpark> = Arc::new(Unpark::current());
    }
    let _context = runtime().enter();
    let unpark = UNPARK.with(Arc::clone);
    let waker = Waker::from(unpark.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        if !spin(&unpark) {
            std::thread::park();
        }
    }
}

/// How long a waiting thread yields before it parks (see [`block_on_here`]).
const SPIN: Duration = Duration::from_micros(50);

/// Wait up to `limit` for `ready()` without sleeping: how long it took, `None` if it did not
/// come. For the first `busy` the thread only spins, then it yields its core between looks.
///
/// Only a caller waiting for its result spins ([`BUSY`]): a quick tool's result comes within
/// microseconds, sooner than a yield's round trip through the kernel. An idle worker only
/// yields: spinning, it took the core the sandbox's thread needed between two host calls
/// (a sandboxed `add` from Python measured 16-18 us → 29 us with both spinning, 15 us with
/// only the caller).
pub fn spin_until(limit: Duration, busy: Duration, ready: impl Fn() -> bool) -> Option<Duration> {
    let started = Instant::now();
    loop {
        if ready() {
            return Some(started.elapsed());
        }
        let waited = started.elapsed();
        if waited > limit {
            return None;
        }
        if waited < busy {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// How long a caller waiting for its result spins before it yields (see [`spin_until`]).
const BUSY: Duration = Duration::from_micros(5);

/// How many waits yield at once after a spin that went unanswered (see [`spin`]).
const RETRY: u32 = 64;

/// Wait for a wake of `unpark` up to [`SPIN`] (see [`spin_until`]): whether one came.
///
/// A thread whose last spin was not answered within [`BUSY`] yields at once for its next
/// [`RETRY`] waits, then spins again to see whether that changed. Spinning pays only when
/// the answer comes from another core within microseconds. It does not when the tool is
/// slower, nor when the worker shares this thread's core (another program holds the
/// machine's other cores): the worker then cannot run until this thread yields, and every
/// call paid the whole spin (from Python, a default `add` measured 5.5 µs, 2.5 µs
/// with its worker on a core of its own).
fn spin(unpark: &Unpark) -> bool {
    thread_local! {
        /// Waits left that yield at once.
        static YIELD_FIRST: Cell<u32> = const { Cell::new(0) };
    }
    let busy = match YIELD_FIRST.get() {
        0 => BUSY,
        left => {
            YIELD_FIRST.set(left - 1);
            Duration::ZERO
        }
    };
    let waited = spin_until(SPIN, busy, || unpark.take_wake());
    if !busy.is_zero() && waited.is_none_or(|waited| waited > busy) {
        YIELD_FIRST.set(RETRY);
    }
    waited.is_some()
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
    session: Option<Py<PyAny>>,
    finish: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: FnOnce(Python<'_>, Outputs, &RequestState) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let level = level(py)?;
    let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
    let max_results = call
        .limits
        .as_ref()
        .unwrap_or(manager.limits())
        .max_eval_bytes;
    let state = RequestState::new(Some(locals.clone()), session, max_results);
    pyo3_async_runtimes::tokio::future_into_py_with_locals(py, locals, async move {
        // Dropped when this future is dropped (the awaitable was cancelled): the call stops.
        let (_cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
        let handle = runtime().handle().clone();
        let scoped = state.clone();
        // The engine's native futures are not `Send` yet, so the call is polled on a thread
        // of the blocking pool rather than spawned.
        let joined = tokio::task::spawn_blocking(move || {
            handle.block_on(DEPTH.scope(
                level,
                scoped.scope(async move {
                    let work = run::run(&manager, call);
                    tokio::pin!(work);
                    tokio::select! {
                        biased;
                        out = &mut work => Some(out),
                        _ = cancelled => None,
                    }
                }),
            ))
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

//! One request from Python (one `execute_*` call): the Python objects its tools returned, an
//! interrupt raised inside a tool, and the asyncio loop its async tools run on.
//!
//! The state is a tokio task-local around the request's future, so a tool finds it when the
//! manager calls it, natively or from inside the sandbox's host calls.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3_async_runtimes::TaskLocals;

tokio::task_local! {
    /// The request whose future is being polled.
    static CURRENT: Arc<RequestState>;
}

/// What a tool's result is marked with in `ToolOutput::observation` until the output reaches
/// Python, where the mark is replaced by the object and the tool's own observation.
///
/// The manager gives a unit's output the observation of the call at the unit's span: the
/// top-level call. So the mark names exactly the object the top-level call returned; nested
/// calls' objects are kept too but never claimed.
const MARK: &str = "\u{1}fexpr-result:";

/// The state of one request.
pub struct RequestState {
    /// Each tool call's returned object and its own observation, by mark number.
    kept: Mutex<Vec<Kept>>,
    /// A `KeyboardInterrupt` (or other `BaseException` that is not an `Exception`) a tool
    /// raised: the request stops and the caller gets it.
    interrupt: Mutex<Option<PyErr>>,
    /// Woken when `interrupt` is set.
    pub interrupted: tokio::sync::Notify,
    /// The asyncio loop (and context) async tools run on: the caller's for the `*_async`
    /// methods, `None` for the sync methods (a background loop is used).
    pub locals: Option<TaskLocals>,
    /// The caller's session object (`run(session=...)`): what `fexpr.current_session()` gives
    /// inside the request's tools.
    pub session: Option<Py<PyAny>>,
    /// `Limits::max_eval_bytes` of the request: what all its tools' results may take together.
    max_results: usize,
    /// Bytes of results converted so far (`Value::approx_size`'s measure).
    results: std::sync::atomic::AtomicUsize,
}

/// A tool's returned object, until its output claims it.
struct Kept {
    object: Option<Py<PyAny>>,
    observation: Option<String>,
    /// Its bounded repr, for an object fexpr has no value for: made inside the tool's call,
    /// within its deadline (a `__repr__` that never returns holds up only the tool's thread).
    shown: Option<String>,
}

/// What an output claims of a kept object: the object, its own observation, and its repr when
/// fexpr has no value for it.
pub struct Claimed {
    pub object: Py<PyAny>,
    pub observation: Option<String>,
    pub shown: Option<String>,
}

impl RequestState {
    /// A request whose async tools run on `locals` (or the background loop), its tools seeing
    /// `session`, their results together held to `max_results` bytes (the request's
    /// `Limits::max_eval_bytes`).
    pub fn new(
        locals: Option<TaskLocals>,
        session: Option<Py<PyAny>>,
        max_results: usize,
    ) -> Arc<RequestState> {
        Arc::new(RequestState {
            kept: Mutex::new(Vec::new()),
            interrupt: Mutex::new(None),
            interrupted: tokio::sync::Notify::new(),
            locals,
            session,
            max_results,
            results: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// `Limits::max_eval_bytes` of the request, which its tools' results share.
    pub fn max_results(&self) -> usize {
        self.max_results
    }

    /// Bytes the request's tool results may still take: a result is converted within them,
    /// and refused past them before it takes more memory.
    pub fn results_left(&self) -> usize {
        self.max_results
            .saturating_sub(self.results.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Charge `bytes` of a converted result to the request.
    pub fn charge_results(&self, bytes: usize) {
        self.results
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// The request being polled on this task, if any.
    pub fn current() -> Option<Arc<RequestState>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    /// Run `fut` as this request (tools find the state with [`RequestState::current`]).
    pub async fn scope<F: std::future::Future>(self: Arc<Self>, fut: F) -> F::Output {
        CURRENT.scope(self, fut).await
    }

    /// Keep a tool's returned object and observation (and, for an object fexpr has no value
    /// for, its repr as `shown`); the mark to put in its observation.
    pub fn keep(
        &self,
        object: Py<PyAny>,
        observation: Option<String>,
        shown: Option<String>,
    ) -> Option<String> {
        let mut kept = self.kept.lock().ok()?;
        let index = kept.len();
        kept.push(Kept {
            object: Some(object),
            observation,
            shown,
        });
        drop(kept);
        // `MARK` and the index in decimal, without the formatting machinery (a hot path).
        let mut mark = String::with_capacity(MARK.len() + 20);
        mark.push_str(MARK);
        let digits = index.checked_ilog10().unwrap_or(0) + 1;
        for power in (0..digits).rev() {
            let digit = (index / 10usize.pow(power)) % 10;
            mark.push(char::from(b'0' + digit as u8));
        }
        Some(mark)
    }

    /// What is kept behind `observation` if it is a mark of this request.
    pub fn claim(&self, observation: &str) -> Option<Claimed> {
        let index: usize = observation.strip_prefix(MARK)?.parse().ok()?;
        let mut kept = self.kept.lock().ok()?;
        let entry = kept.get_mut(index)?;
        Some(Claimed {
            object: entry.object.take()?,
            observation: entry.observation.take(),
            shown: entry.shown.take(),
        })
    }

    /// Record an interrupt raised in a tool and wake the waiting caller.
    pub fn interrupt(&self, error: PyErr) {
        if let Ok(mut slot) = self.interrupt.lock() {
            slot.get_or_insert(error);
        }
        self.interrupted.notify_one();
    }

    /// The interrupt a tool raised, if any.
    pub fn take_interrupt(&self) -> Option<PyErr> {
        self.interrupt.lock().ok()?.take()
    }
}

/// Whether `observation` is a mark (of any request): never shown as an observation.
pub fn is_mark(observation: &str) -> bool {
    observation.starts_with(MARK)
}

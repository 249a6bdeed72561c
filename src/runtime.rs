//! fexpr's own runtime: deadlines that hold on any tokio runtime, with or without its time
//! driver, and [`block_on`] for a program that is not async.
//!
//! A call that is ready when first polled (pure arithmetic, an inline tool) never touches a
//! timer. Otherwise the timer is registered with fexpr's own one-thread runtime, started on
//! first use: a caller's runtime built without `enable_time()` (or `enable_all()`) works the
//! same, where `tokio::time` would panic.

use std::future::{Future, IntoFuture};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use tokio::runtime::{Builder, Runtime};

/// The output of `fut`, or `None` when `end` passed first (`fut` is then dropped).
pub(crate) async fn until<F: Future>(end: Instant, fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
    if let Poll::Ready(output) = first {
        return Some(output);
    }
    let timeout = {
        // The timer is created in (and so driven by) fexpr's runtime; the future itself
        // stays on the caller's task.
        let _own = own().map(Runtime::enter);
        tokio::time::timeout_at(end.into(), fut)
    };
    timeout.await.ok()
}

/// fexpr's own runtime: one worker thread, with every driver this build of tokio has (timers,
/// and I/O when a feature needs it). `None` if it cannot start (no thread can be spawned): a
/// deadline then uses the caller's runtime's timer, and [`block_on`] runs without a runtime.
fn own() -> Option<&'static Runtime> {
    static OWN: OnceLock<Option<Runtime>> = OnceLock::new();
    OWN.get_or_init(|| {
        Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fexpr-runtime")
            .enable_all()
            .build()
            .ok()
    })
    .as_ref()
}

/// Run `future` to its end on this thread and give its output: a [`Request`](crate::Request),
/// the future of [`execute_func_expr`](crate::ToolManager::execute_func_expr) or any other of
/// fexpr's, from a program that is not async, without building a runtime.
///
/// The future is polled right here, inside fexpr's own runtime (one thread, started on first
/// use): a tool may use tokio's timers, I/O and `spawn`, and a call's deadline holds. A call
/// that is ready at once (an inline or plain Rust tool) adds only entering that runtime's
/// context (no waker, no clock reading); one that waits (a tool on a worker thread, an async
/// tool) parks this thread until it is woken. Calls may nest: a sync tool may itself call
/// `block_on`. The first call in a process starts that runtime's thread (50-60 µs of a cold
/// start here); a process that runs a single call can build a current-thread runtime instead.
///
/// In async code, `.await` instead: `block_on` holds the thread it runs on. A tool whose
/// work runs on a runtime of yours (an MCP server's connection, a task it spawned) needs that
/// runtime to be running meanwhile, as a multi-threaded runtime is.
///
/// ```
/// let manager = fexpr::demo::manager();
/// let out = fexpr::block_on(manager.execute_func_expr("add(a=2, b=x)"));
/// assert_eq!(out.output, Ok(fexpr::Value::Int(4)));
/// let text = r#"<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>"#;
/// let response = fexpr::block_on(manager.run(text));
/// assert_eq!(response.outputs[0].output, Ok(fexpr::Value::Int(3)));
/// ```
pub fn block_on<F: IntoFuture>(future: F) -> F::Output {
    let _context = own().map(Runtime::enter);
    let mut future = pin!(future.into_future());
    // Most calls are ready at once: no waker to make.
    if let Poll::Ready(output) = future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        return output;
    }
    // A waker of this call's own (not the thread's): a nested `block_on` on this thread
    // parks and unparks it too, and must not take this call's wake.
    let unpark = Arc::new(Unpark::current());
    let waker = Waker::from(unpark.clone());
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        while !unpark.take_wake() {
            std::thread::park();
        }
    }
}

/// A waker for a thread that waits for a future ([`block_on`], the Python package's sync
/// calls): a wake sets a flag and unparks the thread. The flag tells a wake meant for this
/// waiter from any other unpark of the thread (a nested waiter's, a spurious one).
#[doc(hidden)]
pub struct Unpark {
    thread: std::thread::Thread,
    /// Set by a wake, taken by the waiting thread.
    woken: AtomicBool,
}

impl Unpark {
    /// A waker for the calling thread.
    #[inline]
    pub fn current() -> Unpark {
        Unpark {
            thread: std::thread::current(),
            woken: AtomicBool::new(false),
        }
    }

    /// Whether a wake came since the last look (taking it).
    #[inline]
    pub fn take_wake(&self) -> bool {
        self.woken.swap(false, Ordering::Acquire)
    }
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

#[cfg(test)]
mod tests {
    use super::{block_on, until};
    use std::future::Future;
    use std::task::Poll;
    use std::time::{Duration, Instant};

    /// A runtime with no time driver: `tokio::time::timeout` would panic in it.
    fn timeless() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    }

    #[test]
    fn a_ready_future_needs_no_timer() {
        let past = Instant::now();
        assert_eq!(timeless().block_on(until(past, async { 7 })), Some(7));
    }

    #[test]
    fn a_pending_future_ends_at_the_deadline_on_a_runtime_without_timers() {
        let end = Instant::now() + Duration::from_millis(20);
        let never = std::future::pending::<()>();
        assert_eq!(timeless().block_on(until(end, never)), None);
        assert!(Instant::now() >= end);
    }

    #[test]
    fn a_pending_future_that_finishes_in_time_gives_its_output() {
        let end = Instant::now() + Duration::from_secs(5);
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            tx.send(3).ok();
        });
        assert_eq!(timeless().block_on(until(end, rx)), Some(Ok(3)));
    }

    #[test]
    fn block_on_gives_a_ready_output_and_waits_for_a_pending_one() {
        assert_eq!(block_on(async { 7 }), 7);
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            tx.send(3).ok();
        });
        assert_eq!(block_on(rx), Ok(3));
    }

    #[test]
    fn block_on_runs_tokio_timers_and_tasks_without_a_runtime_of_the_caller() {
        let started = Instant::now();
        let spawned = block_on(async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            tokio::spawn(async { 5 }).await
        });
        assert_eq!(spawned.ok(), Some(5));
        assert!(started.elapsed() >= Duration::from_millis(10));
    }

    #[test]
    fn block_on_works_inside_a_callers_runtime() {
        // Sync code called from async code (blocking its thread, as any sync call does): the
        // call's timer is fexpr's runtime's, not the caller's, which is not driven meanwhile.
        // (A timer on the caller's runtime would never fire: the watchdog fails the test.)
        let (done, watchdog) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let caller = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let got = caller.block_on(async {
                block_on(async {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    5
                })
            });
            done.send(got).ok();
        });
        assert_eq!(watchdog.recv_timeout(Duration::from_secs(10)), Ok(5));
    }

    #[test]
    fn block_on_nests_and_no_wake_is_lost() {
        // The outer call is woken while a nested `block_on` parks the same thread, and only
        // then returns `Pending`: it must still see its wake (else it parks for good, and the
        // watchdog below fails the test instead of hanging it).
        let (done, watchdog) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (tx, mut rx) = tokio::sync::oneshot::channel::<u8>();
            let mut tx = Some(tx);
            let mut step = 0;
            let outer = block_on(std::future::poll_fn(move |cx| {
                step += 1;
                if step == 1 {
                    // The first poll's waker is a no-op: be polled again with a real one.
                    return Poll::Pending;
                }
                if let Some(tx) = tx.take() {
                    assert!(std::pin::Pin::new(&mut rx).poll(cx).is_pending());
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(5));
                        tx.send(1).ok();
                    });
                    block_on(tokio::time::sleep(Duration::from_millis(30)));
                    return Poll::Pending;
                }
                std::pin::Pin::new(&mut rx).poll(cx).map(Result::ok)
            }));
            done.send(outer).ok();
        });
        let outer = watchdog.recv_timeout(Duration::from_secs(10));
        assert_eq!(outer, Ok(Some(1)), "the outer call lost its wake");
    }
}

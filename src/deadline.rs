//! Deadlines that hold on any tokio runtime, with or without its time driver.
//!
//! A call that is ready when first polled (pure arithmetic, an inline tool) never touches a
//! timer. Otherwise the timer is registered with fexpr's own one-thread timer runtime, started
//! on first use: a caller's runtime built without `enable_time()` (or `enable_all()`) works
//! the same, where `tokio::time` would panic.

use std::future::Future;
use std::pin::pin;
use std::sync::OnceLock;
use std::task::Poll;
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
        // The timer is created in (and so driven by) the timer runtime; the future itself
        // stays on the caller's task.
        let _timers = timers().map(Runtime::enter);
        tokio::time::timeout_at(end.into(), fut)
    };
    timeout.await.ok()
}

/// fexpr's timer runtime: one thread, time driver only. `None` if it cannot start (no thread
/// can be spawned); the caller's runtime's timer is then used.
fn timers() -> Option<&'static Runtime> {
    static TIMERS: OnceLock<Option<Runtime>> = OnceLock::new();
    TIMERS
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("fexpr-timers")
                .enable_time()
                .build()
                .ok()
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::until;
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
}

//! The threads sync Python tools run on (`blocking=True`, the default): a pool that grows with
//! the calls running at once, like tokio's blocking pool, but whose idle workers keep looking
//! for the next tool for [`SPIN`] before they sleep.
//!
//! Handing a call to a sleeping thread means a kernel wake-up on another core; on a virtual
//! machine that is ~15–20 µs (an inter-processor interrupt through the hypervisor), five times
//! the rest of a Python tool call. tokio's blocking pool sleeps its idle threads at once, so
//! every call of a program calling tools in turn paid it. A worker here that has just finished
//! a call yields its core for up to [`SPIN`] while it waits (`runtime::spin_until`), so the
//! next call of such a program is taken without a wake-up; the calling thread waits for the
//! result the same way, spinning its first microseconds (`runtime::block_on_here`).
//! A worker idle for [`KEEP_ALIVE`] ends.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a worker that finished a call looks for the next before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// How long a sleeping worker waits for a call before its thread ends (tokio's blocking pool's
/// keep-alive).
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The most workers at once (tokio's blocking pool's default); past it, calls queue.
const MAX_WORKERS: usize = 512;

/// A call to run on a worker.
type Job = Box<dyn FnOnce() + Send>;

/// The pool: its queue and who is free to take from it.
struct Pool {
    state: Mutex<State>,
    /// Wakes a sleeping worker.
    wake: Condvar,
    /// How many calls are queued, read by spinning workers without the lock.
    queued: AtomicUsize,
}

struct State {
    jobs: VecDeque<Job>,
    workers: usize,
    /// Workers awake and free (spinning, or about to take a call).
    awake: usize,
    /// Workers asleep on `wake`.
    asleep: usize,
    /// Sleepers woken by [`run`] and counted in `awake` already, not yet up.
    woken: usize,
}

static POOL: Pool = Pool {
    state: Mutex::new(State {
        jobs: VecDeque::new(),
        workers: 0,
        awake: 0,
        asleep: 0,
        woken: 0,
    }),
    wake: Condvar::new(),
    queued: AtomicUsize::new(0),
};

/// The pool's state; a worker never panics holding the lock (calls run outside it and their
/// panics are caught), so a poisoned lock is only taken over.
fn lock() -> MutexGuard<'static, State> {
    POOL.state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Run `job` on a worker: a free one (awake, else woken), else a new one.
///
/// # Errors
/// The operating system's error when no worker is free and no thread could be started for
/// one; `job` is then dropped without running.
pub fn run(job: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let mut state = lock();
    state.jobs.push_back(Box::new(job));
    POOL.queued.fetch_add(1, Ordering::Release);
    if state.awake >= state.jobs.len() {
        return Ok(());
    }
    if state.asleep > 0 {
        state.asleep -= 1;
        state.woken += 1;
        state.awake += 1;
        POOL.wake.notify_one();
        return Ok(());
    }
    if state.workers >= MAX_WORKERS {
        return Ok(());
    }
    state.workers += 1;
    state.awake += 1;
    drop(state);
    let started = std::thread::Builder::new()
        .name("fexpr-tool".into())
        .stack_size(crate::runtime::THREAD_STACK)
        .spawn(work);
    if let Err(e) = started {
        let mut state = lock();
        state.workers -= 1;
        state.awake -= 1;
        // The call just queued is taken back unless a worker took it meanwhile (then some
        // other call waits for a worker to be free, as past `MAX_WORKERS`).
        if state.jobs.pop_back().is_some() {
            POOL.queued.fetch_sub(1, Ordering::Release);
        }
        return Err(e);
    }
    Ok(())
}

/// A worker: take calls while there are any, spin for the next, sleep, end after
/// [`KEEP_ALIVE`] without one.
fn work() {
    let _runtime = crate::runtime::enter();
    let mut state = lock();
    loop {
        if let Some(job) = state.jobs.pop_front() {
            POOL.queued.fetch_sub(1, Ordering::Release);
            state.awake -= 1;
            drop(state);
            // A panicking call drops its result's sender: its caller reports the failure.
            let _ = catch_unwind(AssertUnwindSafe(job));
            state = lock();
            state.awake += 1;
            drop(state);
            // Yielding only, not spinning: see `runtime::spin_until`.
            crate::runtime::spin_until(SPIN, Duration::ZERO, || {
                POOL.queued.load(Ordering::Acquire) > 0
            });
            state = lock();
            continue;
        }
        state.awake -= 1;
        state.asleep += 1;
        loop {
            let (next, waited) = POOL
                .wake
                .wait_timeout(state, KEEP_ALIVE)
                .unwrap_or_else(PoisonError::into_inner);
            state = next;
            if state.woken > 0 {
                // `run` moved this worker from asleep to awake.
                state.woken -= 1;
                break;
            }
            if waited.timed_out() {
                state.asleep -= 1;
                state.workers -= 1;
                return;
            }
        }
    }
}

//! Pools of stateful environments for tools, isolated by id (AgentFly's stateful tools).
//!
//! An [`EnvPool`] creates `size` environments up front. A call with an id that holds no
//! environment takes a free one and keeps it until [`release`](EnvPool::release), which resets
//! it and returns it to the pool; later calls with the same id get the same environment. When
//! every environment is held, a call with a new id waits for a release, up to the pool's
//! timeout, and then fails with a `Limit` error saying so. Tools get the id from the caller's
//! [`Session::id`](crate::Session::id) (see [`CallContext::session_id`](crate::CallContext::session_id)),
//! so a model can neither see nor choose it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{clip, Error, ErrorKind};

/// A stateful environment a pool can hand out.
pub trait Environment: Send + 'static {
    /// Return to the initial state; called on release, before another id can take it.
    fn reset(&mut self);
}

type Env<E> = Arc<tokio::sync::Mutex<E>>;

/// An environment locked for one call; dropping it lets the next call of the same id in.
pub type EnvGuard<E> = tokio::sync::OwnedMutexGuard<E>;

/// A fixed set of environments handed out by id. Cheap to clone (clones share the pool).
///
/// ```
/// use fexpr::pool::{EnvPool, Environment};
/// #[derive(Default)]
/// struct Counter(u32);
/// impl Environment for Counter { fn reset(&mut self) { self.0 = 0; } }
///
/// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// rt.block_on(async {
///     let pool = EnvPool::new("counter", 1, Counter::default);
///     pool.acquire("a").await.unwrap().0 += 1;
///     assert_eq!(pool.acquire("a").await.unwrap().0, 1); // same id, same env
///     assert!(pool.acquire("b").await.is_err()); // pool empty: waits, then fails
///     pool.release("a").await;
///     assert_eq!(pool.acquire("b").await.unwrap().0, 0); // reset on release
/// });
/// ```
pub struct EnvPool<E: Environment> {
    inner: Arc<Inner<E>>,
    timeout: Duration,
}

impl<E: Environment> Clone for EnvPool<E> {
    fn clone(&self) -> Self {
        EnvPool {
            inner: self.inner.clone(),
            timeout: self.timeout,
        }
    }
}

struct Inner<E> {
    name: String,
    size: usize,
    /// One permit per free environment.
    free_permits: Arc<Semaphore>,
    state: Mutex<State<E>>,
}

struct State<E> {
    free: Vec<Env<E>>,
    held: HashMap<String, (Env<E>, OwnedSemaphorePermit)>,
}

impl<E: Environment> EnvPool<E> {
    /// A pool named `name` (for messages) of `size` environments made by `make`, with a
    /// waiting timeout of 100 ms (see [`timeout`](EnvPool::timeout)).
    pub fn new(name: impl Into<String>, size: usize, make: impl Fn() -> E) -> EnvPool<E> {
        let free = (0..size)
            .map(|_| Arc::new(tokio::sync::Mutex::new(make())))
            .collect();
        EnvPool {
            inner: Arc::new(Inner {
                name: name.into(),
                size,
                free_permits: Arc::new(Semaphore::new(size)),
                state: Mutex::new(State {
                    free,
                    held: HashMap::new(),
                }),
            }),
            timeout: Duration::from_millis(100),
        }
    }

    /// How long a call with a new id waits for a free environment (for this handle and the
    /// clones made from it).
    pub fn timeout(mut self, timeout: Duration) -> EnvPool<E> {
        self.timeout = timeout;
        self
    }

    /// The environment held by `id`, locked for this call, taking a free one if `id` holds
    /// none (waiting up to the timeout when none is free). Calls with the same id take turns.
    pub async fn acquire(&self, id: &str) -> Result<EnvGuard<E>, Error> {
        // A release between finding the environment and locking it hands it to another id:
        // after locking, check it is still `id`'s, else look again (bounded).
        for _ in 0..4 {
            let env = self.find_or_take(id).await?;
            let guard = env.clone().lock_owned().await;
            if self
                .held_by(id)
                .is_some_and(|held| Arc::ptr_eq(&held, &env))
            {
                return Ok(guard);
            }
        }
        Err(self.fail("the environment was released while this call waited for it"))
    }

    async fn find_or_take(&self, id: &str) -> Result<Env<E>, Error> {
        if let Some(env) = self.held_by(id) {
            return Ok(env);
        }
        let wait = self.inner.free_permits.clone().acquire_owned();
        let end = std::time::Instant::now().checked_add(self.timeout);
        let waited = match end {
            Some(end) => crate::runtime::until(end, wait).await,
            None => Some(wait.await),
        };
        let permit = match waited {
            Some(Ok(permit)) => permit,
            Some(Err(_)) => return Err(self.fail("the pool is closed")),
            None => return Err(self.exhausted()),
        };
        let mut state = self.lock()?;
        if let Some((env, _)) = state.held.get(id) {
            // Another call with the same id took one meanwhile; the permit goes back.
            return Ok(env.clone());
        }
        let Some(env) = state.free.pop() else {
            return Err(self.fail("a permit without a free environment"));
        };
        state.held.insert(id.to_string(), (env.clone(), permit));
        Ok(env)
    }

    /// Give back the environment `id` holds, after the calls using it finish, reset. Returns
    /// whether `id` held one.
    pub async fn release(&self, id: &str) -> bool {
        let taken = match self.lock() {
            Ok(mut state) => state.held.remove(id),
            Err(_) => None,
        };
        let Some((env, permit)) = taken else {
            return false;
        };
        env.lock().await.reset();
        if let Ok(mut state) = self.lock() {
            state.free.push(env);
        }
        drop(permit);
        true
    }

    /// Ids holding an environment now.
    pub fn held_ids(&self) -> Vec<String> {
        self.lock()
            .map(|s| s.held.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Environments free now.
    pub fn free(&self) -> usize {
        self.lock().map(|s| s.free.len()).unwrap_or(0)
    }

    /// The number of environments.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    fn held_by(&self, id: &str) -> Option<Env<E>> {
        self.lock().ok()?.held.get(id).map(|(env, _)| env.clone())
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State<E>>, Error> {
        self.inner
            .state
            .lock()
            .map_err(|_| self.fail("the pool's state was poisoned by a panic"))
    }

    /// The error of a call that waited the whole timeout for a free environment.
    fn exhausted(&self) -> Error {
        let message = format!(
            "no free environment in pool `{}`: all {} are held by other ids, waited {} ms",
            clip(&self.inner.name, 40),
            self.inner.size,
            self.timeout.as_millis()
        );
        Error::limit_message(crate::error::LimitKind::PoolWait, message)
            .with_hint("try again later; the program frees environments with EnvPool::release")
    }

    fn fail(&self, why: &str) -> Error {
        Error::new(
            ErrorKind::ToolFailed,
            format!("environment pool `{}`: {why}", clip(&self.inner.name, 40)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Tag(Option<String>);
    impl Environment for Tag {
        fn reset(&mut self) {
            self.0 = None;
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn same_id_same_env_new_id_new_env() {
        rt().block_on(async {
            let pool = EnvPool::new("tags", 2, || Tag(None));
            pool.acquire("a").await.unwrap().0 = Some("a".into());
            assert_eq!(pool.acquire("a").await.unwrap().0.as_deref(), Some("a"));
            assert_eq!(pool.acquire("b").await.unwrap().0, None);
            assert_eq!(pool.free(), 0);
            assert!(pool.release("a").await);
            assert!(!pool.release("a").await);
            assert_eq!(pool.free(), 1);
        });
    }

    #[test]
    fn an_empty_pool_times_out_with_a_limit_error() {
        rt().block_on(async {
            let pool = EnvPool::new("tags", 1, || Tag(None)).timeout(Duration::from_millis(20));
            pool.acquire("a").await.unwrap();
            let e = pool.acquire("b").await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::Limit);
            assert!(
                e.message.contains("no free environment in pool `tags`"),
                "{e}"
            );
            assert!(e.message.contains("waited 20 ms"), "{e}");
        });
    }

    #[test]
    fn a_waiting_call_gets_the_released_env_reset() {
        rt().block_on(async {
            let pool = EnvPool::new("tags", 1, || Tag(None)).timeout(Duration::from_secs(5));
            pool.acquire("a").await.unwrap().0 = Some("a".into());
            let waiter = pool.clone();
            let b = tokio::spawn(async move { waiter.acquire("b").await });
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(!b.is_finished());
            pool.release("a").await;
            let env = b.await.unwrap().unwrap();
            assert_eq!(env.0, None);
            assert_eq!(pool.held_ids(), vec!["b".to_string()]);
        });
    }
}

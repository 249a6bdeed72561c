//! [`ToolManager`] on top of the sandbox: the model's text is parsed and evaluated inside a
//! fresh guest instance; the guest's tool calls come back to the host, which checks and runs
//! them exactly as the native path does.

use crate::call::FunctionOutput;
use crate::dispatch::manager::{NativeDispatch, Scope, ToolManager};
use crate::dispatch::session::Session;
use crate::error::{Error, ErrorKind, LimitKind};
use crate::eval::{Dispatch, ToolRequest};
use crate::limits::Limits;
use crate::sandbox::wire::{self, ContextTable, GuestInput, GuestResponse};
use crate::sandbox::{HostCalls, Sandbox, SandboxConfig};
use crate::value::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// A manager's sandbox settings and what it prepared for sandboxed evaluation (its context as
/// the guest reads it, a shared copy of the manager for host calls). Prepared on first use; a manager
/// derived with [`ToolManager::to_builder`] prepares its own.
#[derive(Clone, Default)]
pub(crate) struct ManagerSandbox {
    sandbox: Option<Sandbox>,
    prepared: OnceLock<Arc<Prepared>>,
}

impl ManagerSandbox {
    /// Forget what was prepared: the manager's tools, context or limits changed.
    pub(crate) fn reset(&mut self) {
        self.prepared = OnceLock::new();
    }

    /// Evaluate in `sandbox` instead of the process-wide default one.
    pub(crate) fn set(&mut self, sandbox: Sandbox) {
        self.sandbox = Some(sandbox);
        self.reset();
    }
}

struct Prepared {
    /// A copy of the manager that host calls run against (`'static`, as wasmtime needs).
    host: Arc<ToolManager>,
    /// The manager's context with each entry encoded once: the guest asks for the entries its
    /// expression names (`HostCalls::lookup`).
    context: Result<ContextTable, Error>,
}

/// The sandbox every manager without its own uses: built on first use with
/// [`SandboxConfig::default`] (the embedded guest, or `$FEXPR_GUEST_WASM`).
fn shared_sandbox() -> Result<Sandbox, Error> {
    static SHARED: OnceLock<Result<Sandbox, Error>> = OnceLock::new();
    SHARED
        .get_or_init(|| Sandbox::new(SandboxConfig::default()))
        .clone()
}

impl ToolManager {
    /// The sandbox this manager evaluates in: its own, or the process-wide default, built on
    /// first use (compiling the guest, or loading it from the disk cache).
    pub fn sandbox(&self) -> Result<Sandbox, Error> {
        match &self.inner.sandboxed.sandbox {
            Some(sandbox) => Ok(sandbox.clone()),
            None => shared_sandbox(),
        }
    }

    fn prepared(&self) -> Arc<Prepared> {
        self.inner
            .sandboxed
            .prepared
            .get_or_init(|| {
                let mut host = self.clone();
                Arc::make_mut(&mut host.inner).sandboxed.reset();
                Arc::new(Prepared {
                    host: Arc::new(host),
                    context: ContextTable::new(self.context()),
                })
            })
            .clone()
    }

    /// Evaluate `input` (text, or checked calls whose spans index `text`) in a fresh guest
    /// instance within `limits`, the guest's tool calls running on the host with `session`;
    /// `id` is the call id of the input's one top-level call, when known. Every output carries
    /// the evaluation's receipt.
    pub(crate) async fn run_sandboxed(
        &self,
        session: Session,
        input: GuestInput<'_>,
        text: &str,
        limits: &Limits,
        id: Option<String>,
        results: &Arc<std::sync::atomic::AtomicU64>,
    ) -> Vec<FunctionOutput> {
        let scope = Arc::new(Scope::new(session, limits, id.map(Arc::from), results));
        let failed = |error: Error| vec![scope.failed(text, error)];
        if let Err(error) = limits.check() {
            return failed(error);
        }
        let sandbox = match self.sandbox() {
            Ok(sandbox) => sandbox,
            Err(error) => return failed(error),
        };
        let prepared = self.prepared();
        if let Err(error) = &prepared.context {
            return failed(error.clone());
        }
        let request = match wire::encode_request(&input, limits) {
            Ok(request) => request,
            Err(error) => return failed(error),
        };
        let host = Arc::new(HostSide {
            prepared,
            max_calls: limits.max_calls,
            max_host_calls: limits.max_host_calls,
            calls: AtomicUsize::new(0),
            scope: scope.clone(),
        });
        // The response repeats each call's arguments next to its result. Results are bounded
        // by `max_output_bytes` on the host, one by one as natively; the response as a whole
        // lives in guest memory, so `memory_bytes` bounds it.
        let engine_limits = Limits {
            max_output_bytes: limits.memory_bytes,
            ..limits.clone()
        };
        let outcome = sandbox.run(request, &engine_limits, host).await;
        let receipt = outcome.receipt;
        let response = outcome
            .result
            .and_then(|bytes| wire::decode::<GuestResponse>(&bytes));
        let mut outputs = match response {
            Ok(GuestResponse::Units(outcomes)) if !outcomes.is_empty() => outcomes
                .into_iter()
                .map(|mut outcome| {
                    // The guest evaluates as natively, where floats are finite; a value that
                    // is not is a broken guest's, and is not passed on.
                    if let Ok(Some(bad)) = outcome.result.as_ref().map(Value::find_non_finite) {
                        let mut e = bad.error("the guest's value");
                        e.kind = ErrorKind::Sandbox;
                        outcome.result = Err(e);
                    }
                    scope.unit_output(text, outcome)
                })
                .collect(),
            Ok(GuestResponse::Units(_)) => failed(Error::new(
                ErrorKind::Sandbox,
                "the guest answered with no outcome",
            )),
            Ok(GuestResponse::Failed(error)) | Err(error) => failed(error),
        };
        for output in &mut outputs {
            output.receipt = Some(receipt.clone());
        }
        outputs
    }
}

/// The host side of one sandboxed evaluation: decodes the guest's batches of tool requests,
/// checks and runs them like the native path, and encodes the results; answers the guest's
/// lookups of the manager's context.
struct HostSide {
    /// The manager the calls run against, and its context for lookups.
    prepared: Arc<Prepared>,
    /// [`Limits::max_calls`]: the guest counts its calls too, but the guest is not trusted.
    max_calls: usize,
    /// [`Limits::max_host_calls`], counted in tool invocations (the engine counts the
    /// guest's crossings, one per wave, which is never more).
    max_host_calls: u32,
    calls: AtomicUsize,
    /// The execution's session, call count and observations.
    scope: Arc<Scope>,
}

impl HostCalls for HostSide {
    fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        self.prepared.context.as_ref().ok()?.answer(key)
    }

    fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>> {
        let manager = self.prepared.host.clone();
        let scope = self.scope.clone();
        let batch = wire::decode::<Vec<ToolRequest>>(&request).and_then(|requests| {
            let before = self.calls.fetch_add(requests.len(), Ordering::Relaxed);
            let total = before.saturating_add(requests.len());
            if total > self.max_calls {
                return Err(Error::limit(LimitKind::Calls, self.max_calls, total));
            }
            if total > self.max_host_calls as usize {
                return Err(Error::limit(
                    LimitKind::HostCalls,
                    self.max_host_calls,
                    total,
                ));
            }
            Ok(requests)
        });
        Box::pin(async move {
            let results: Vec<Result<Value, Error>> = match batch {
                Ok(requests) => {
                    NativeDispatch {
                        manager: &manager,
                        scope: &scope,
                    }
                    .dispatch(requests)
                    .await
                }
                // One error answers the whole batch (see `wire::HostDispatch`).
                Err(error) => vec![Err(error)],
            };
            wire::encode(&results).unwrap_or_else(|error| {
                wire::encode(&vec![Err::<Value, Error>(error)]).unwrap_or_default()
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Span;

    fn host(max_calls: usize) -> HostSide {
        let manager = crate::dispatch::demo::manager();
        HostSide {
            prepared: Arc::new(Prepared {
                context: ContextTable::new(manager.context()),
                host: Arc::new(manager),
            }),
            max_calls,
            max_host_calls: u32::MAX,
            calls: AtomicUsize::new(0),
            scope: Arc::new(Scope::new(
                Session::default(),
                &Limits::default(),
                None,
                &Arc::default(),
            )),
        }
    }

    fn add(a: i64, b: i64) -> ToolRequest {
        let span = Span::default();
        ToolRequest {
            name: "add".into(),
            span,
            args: vec![],
            kwargs: vec![
                ("a".into(), Value::Int(a), span),
                ("b".into(), Value::Int(b), span),
            ],
        }
    }

    fn reply(host: &HostSide, request: Vec<u8>) -> Vec<Result<Value, Error>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        wire::decode(&rt.block_on(host.call(request))).expect("a decodable reply")
    }

    #[test]
    fn requests_run_like_native_ones() {
        let host = host(10);
        let request = wire::encode(&vec![add(1, 2), add(3, 4)]).expect("encodes");
        assert_eq!(
            reply(&host, request),
            vec![Ok(Value::Int(3)), Ok(Value::Int(7))]
        );
    }

    #[test]
    fn the_host_rechecks_what_the_guest_sends() {
        let host = host(3);
        // Unreadable: one error answers the batch.
        let out = reply(&host, vec![0xff, 0xff, 0xff]);
        assert!(matches!(&out[..], [Err(e)] if e.kind == ErrorKind::Sandbox));
        // Unknown tools and bad arguments are refused by the host's binding.
        let mut bad = add(1, 2);
        bad.name = "__import__".into();
        let mut wrong = add(1, 2);
        wrong.kwargs.pop();
        let out = reply(&host, wire::encode(&vec![bad, wrong]).expect("encodes"));
        assert!(matches!(&out[0], Err(e) if e.kind == ErrorKind::UnknownTool));
        assert!(matches!(&out[1], Err(e) if e.kind == ErrorKind::Arguments));
        // The guest's calls are counted across host calls against max_calls.
        let out = reply(&host, wire::encode(&vec![add(1, 2)]).expect("encodes"));
        assert!(matches!(&out[..], [Ok(Value::Int(3))]));
        let out = reply(&host, wire::encode(&vec![add(1, 2)]).expect("encodes"));
        assert!(
            matches!(&out[..], [Err(e)] if e.kind == ErrorKind::Limit && e.message.contains("max_calls"))
        );
    }
}

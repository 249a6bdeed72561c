//! The wasmtime runner: a [`Sandbox`] runs every evaluation in a fresh instance of the guest.
use super::cache::{self, ModuleCache, ModuleSource};
use super::engine::{self, Allocation, Housekeeper, Retired};
use super::guest::{self, guest_range, sandbox_error, show_range, GuestState, ALLOWED_IMPORTS};
pub use crate::call::Receipt;
use crate::error::{clip, LimitKind};
use crate::error::{Error, ErrorKind};
use crate::limits::Limits;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmtime::{
    Engine, Extern, ExternType, Instance, InstancePre, ModuleExport, Store, Trap, TypedFunc,
    UpdateDeadline, ValType, WasmParams, WasmResults,
};

/// The guest module built from `guest/` by `scripts/build-guest.sh`, embedded in the binary.
pub const GUEST_WASM: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/guest/fexpr-guest.wasm"
));

/// What `scripts/build-guest.sh` wrote beside [`GUEST_WASM`]: the compiler, the inputs' hash and
/// the module's sha256 (CI checks that they match the committed module).
pub(crate) const GUEST_WASM_INFO: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/guest/fexpr-guest.wasm.info"
));

/// Environment variable naming a guest `.wasm` file that [`Sandbox::new`] uses instead of
/// [`GUEST_WASM`] (CI sets it to a freshly built guest when the compiler has moved on).
pub const GUEST_WASM_ENV: &str = "FEXPR_GUEST_WASM";

/// What the host does when the guest calls `host_call`: run the request (opaque bytes) and
/// produce the reply. The future runs on the runtime that awaits [`Sandbox::run`]; the
/// evaluation's deadline covers it, and it is dropped (cancelled) when the deadline passes.
///
/// The request is whatever the guest sent: parse it defensively and answer failures with a
/// reply, not a panic (a panic here unwinds out of [`Sandbox::run`]).
pub trait HostCalls: Send + Sync {
    /// Runs one request from the guest and returns the reply.
    fn call(&self, request: Vec<u8>) -> Pin<Box<dyn Future<Output = Vec<u8>> + Send>>;

    /// Answers the guest's `host_lookup` of `key` at once, from data the host prepared (a
    /// manager's context entries, which the guest reads on demand): the answer's bytes, or
    /// `None` when there is none. The default has none.
    fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        let _ = key;
        None
    }
}

/// How a [`Sandbox`] is built. These bound the whole sandbox; the per-evaluation budgets are
/// in [`Limits`]. Fields may be added (it is `#[non_exhaustive]`): start from
/// [`SandboxConfig::default`] or [`SandboxConfig::on_demand`] and set fields, or chain the setters.
///
/// ```
/// use fexpr::sandbox::{ModuleCache, SandboxConfig};
///
/// let config = SandboxConfig::default().max_instances(8).module_cache(ModuleCache::Off);
/// assert_eq!(config.max_instances, 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// How each evaluation's instance is allocated: from a pool reserved up front (the
    /// default) or mapped on demand. Default [`Allocation::Pooled`].
    pub allocation: Allocation,
    /// Evaluations that may hold an instance at once; further calls to [`Sandbox::run`] wait
    /// for a slot, within their deadline. With [`Allocation::Pooled`] this is also the size of
    /// the pool (instances, memories, tables, fiber stacks), each slot reserving (virtual, not
    /// resident) address space of about 4 GiB plus guard pages. Default 32: two cores run at
    /// most two evaluations at a time, the rest are waiting on host calls.
    pub max_instances: u32,
    /// Ceiling on any evaluation's linear memory, in bytes: a [`Limits::memory_bytes`] above
    /// it is cut to it. Default 256 MiB.
    pub max_memory_bytes: usize,
    /// The wasm call stack, in bytes. Wasmtime sets it per engine, not per call, so this is
    /// the stack every evaluation gets; [`Limits::wasm_stack_bytes`] is not consulted by
    /// [`Sandbox::run`]. Default `Limits::default().wasm_stack_bytes` (1 MiB).
    pub max_wasm_stack_bytes: usize,
    /// How often the epoch ticker thread interrupts running guests to check their deadline
    /// and let other tasks run: the precision of [`Limits::deadline`]. Default 5 ms.
    pub epoch_tick: Duration,
    /// Where the compiled guest is cached. Default: [`ModuleCache::Default`].
    pub module_cache: ModuleCache,
}

impl Default for SandboxConfig {
    fn default() -> SandboxConfig {
        SandboxConfig {
            allocation: Allocation::Pooled,
            max_instances: 32,
            max_memory_bytes: 256 << 20,
            max_wasm_stack_bytes: Limits::default().wasm_stack_bytes,
            epoch_tick: Duration::from_millis(5),
            module_cache: ModuleCache::Default,
        }
    }
}

impl SandboxConfig {
    /// The default configuration with each instance mapped on demand
    /// ([`Allocation::OnDemand`]): the sandbox is ready sooner and each evaluation costs a little
    /// more, the right trade for a process that runs a few evaluations and exits.
    ///
    /// ```
    /// use fexpr::sandbox::{Allocation, SandboxConfig};
    ///
    /// let config = SandboxConfig::on_demand();
    /// assert_eq!(config.allocation, Allocation::OnDemand);
    /// assert_eq!(config.max_instances, SandboxConfig::default().max_instances);
    /// ```
    pub fn on_demand() -> SandboxConfig {
        SandboxConfig::default().allocation(Allocation::OnDemand)
    }
}

crate::limits::setters!(SandboxConfig {
    allocation: Allocation,
    max_instances: u32,
    max_memory_bytes: usize,
    max_wasm_stack_bytes: usize,
    epoch_tick: Duration,
    module_cache: ModuleCache,
});

/// The result of [`Sandbox::run`]: the response bytes or the error, and the cost either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxOutcome {
    /// The guest's response, or why there is none.
    pub result: Result<Vec<u8>, Error>,
    /// What the evaluation cost.
    pub receipt: Receipt,
}

/// A compiled guest ready to run evaluations, each in a fresh instance. Cheap to clone; share
/// it across tasks and threads.
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    pre: InstancePre<GuestState>,
    exports: Exports,
    slots: Arc<Semaphore>,
    config: SandboxConfig,
    module_source: ModuleSource,
    imports: Vec<(String, String)>,
    housekeeper: Housekeeper,
}

/// The guest's exports, looked up and their types checked once, when the sandbox is built.
struct Exports {
    memory: ModuleExport,
    /// `fexpr_evaluate: (i32) -> i64`.
    evaluate: ModuleExport,
    /// `_initialize: () -> ()`, if the guest has one.
    initialize: Option<ModuleExport>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("config", &self.inner.config)
            .field("module_source", &self.inner.module_source)
            .finish_non_exhaustive()
    }
}

impl Sandbox {
    /// A sandbox running the fexpr guest: the file named by `$FEXPR_GUEST_WASM` if set, else
    /// the embedded [`GUEST_WASM`].
    pub fn new(config: SandboxConfig) -> Result<Sandbox, Error> {
        if config.max_memory_bytes < Limits::MIN_MEMORY_BYTES {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "SandboxConfig::max_memory_bytes is {} bytes, below the {} bytes (3.5 MiB) \
                     the fexpr guest starts with: no evaluation could run",
                    config.max_memory_bytes,
                    Limits::MIN_MEMORY_BYTES
                ),
            )
            .with_hint(format!(
                "set max_memory_bytes to at least Limits::MIN_MEMORY_BYTES ({})",
                Limits::MIN_MEMORY_BYTES
            )));
        }
        match std::env::var_os(GUEST_WASM_ENV).filter(|v| !v.is_empty()) {
            Some(path) => {
                let bytes = std::fs::read(&path).map_err(|e| {
                    sandbox_error(format!(
                        "cannot read ${GUEST_WASM_ENV} ({}): {e}",
                        std::path::Path::new(&path).display()
                    ))
                })?;
                Sandbox::from_module(config, &bytes, None)
            }
            None => Sandbox::from_module(config, GUEST_WASM, cache::embedded_sha256()),
        }
    }

    /// A sandbox running the guest module `bytes` (a wasm binary, or WAT text), which must
    /// implement the guest ABI (see the [module docs](crate::sandbox)) and import nothing outside
    /// [`ALLOWED_IMPORTS`].
    pub fn from_module_bytes(config: SandboxConfig, bytes: &[u8]) -> Result<Sandbox, Error> {
        Sandbox::from_module(config, bytes, None)
    }

    /// [`Sandbox::from_module_bytes`] with the module's sha256 when it is known already.
    fn from_module(
        config: SandboxConfig,
        bytes: &[u8],
        sha256: Option<&str>,
    ) -> Result<Sandbox, Error> {
        let engine = engine::build_engine(&config)?;
        let cache_dir = config.module_cache.dir();
        let (module, module_source) =
            cache::load_or_compile(&engine, bytes, sha256, cache_dir.as_deref())
                .map_err(|e| sandbox_error(format!("invalid guest module: {e}")))?;

        let imports: Vec<(String, String)> = module
            .imports()
            .map(|i| (i.module().to_string(), i.name().to_string()))
            .collect();
        if let Some((m, n)) = imports
            .iter()
            .find(|(m, n)| !ALLOWED_IMPORTS.contains(&(m.as_str(), n.as_str())))
        {
            return Err(sandbox_error(format!(
                "the guest imports `{}.{}`, which the sandbox does not provide",
                clip(m, 40),
                clip(n, 40)
            )));
        }
        let exports = Exports {
            memory: export(&module, "memory", |t| matches!(t, ExternType::Memory(_)))?,
            evaluate: export(&module, "fexpr_evaluate", |t| {
                func_type_is(t, &[ValType::I32], &[ValType::I64])
            })?,
            initialize: match module.get_export("_initialize") {
                None => None,
                Some(_) => Some(export(&module, "_initialize", |t| {
                    func_type_is(t, &[], &[])
                })?),
            },
        };
        let linker = guest::linker(&engine)
            .map_err(|e| sandbox_error(format!("cannot link the guest's imports: {e}")))?;
        let pre = linker
            .instantiate_pre(&module)
            .map_err(|e| sandbox_error(format!("cannot link the guest: {e}")))?;
        let housekeeper = Housekeeper::start(engine.clone(), config.epoch_tick)?;
        let slots = Arc::new(Semaphore::new(config.max_instances.max(1) as usize));
        Ok(Sandbox {
            inner: Arc::new(Inner {
                engine,
                pre,
                exports,
                slots,
                config,
                module_source,
                imports,
                housekeeper,
            }),
        })
    }

    /// The configuration this sandbox was built with.
    pub fn config(&self) -> &SandboxConfig {
        &self.inner.config
    }

    /// Whether the guest was compiled now or loaded from the disk cache.
    pub fn module_source(&self) -> ModuleSource {
        self.inner.module_source
    }

    /// The guest module's imports, as `(module, name)` pairs in the module's order.
    pub fn imports(&self) -> &[(String, String)] {
        &self.inner.imports
    }

    /// Evaluates `request` in a fresh instance of the guest, within `limits`, running the
    /// guest's host calls with `host`. Must be awaited on a tokio runtime with timers enabled.
    ///
    /// The budgets used from `limits`: `fuel`, `deadline` (wall clock for the whole call,
    /// host calls and waiting for a free slot included), `memory_bytes` (cut to
    /// [`SandboxConfig::max_memory_bytes`]), `max_host_calls` and `max_output_bytes` (the
    /// response's length, checked before it is copied out). The wasm stack is the sandbox's
    /// [`SandboxConfig::max_wasm_stack_bytes`].
    ///
    /// The outcome is returned as soon as the guest has answered: the instance is dropped (its
    /// pool slot reset, or its memory unmapped) afterwards on the sandbox's own thread, and
    /// its slot counts against [`SandboxConfig::max_instances`] until then.
    pub async fn run(
        &self,
        request: impl Into<Vec<u8>>,
        limits: &Limits,
        host: Arc<dyn HostCalls>,
    ) -> SandboxOutcome {
        let started = Instant::now();
        let deadline = started
            .checked_add(limits.deadline)
            .unwrap_or_else(|| started + Duration::from_secs(100 * 365 * 24 * 3600));
        let inner = &*self.inner;

        // Hold a pool slot until the store (and its instance) is dropped.
        let slot = crate::runtime::until(deadline, inner.slots.clone().acquire_owned());
        let slot = match slot.await {
            Some(Ok(slot)) => slot,
            waited => {
                let error = match waited {
                    None => deadline_error(limits.deadline, started.elapsed()),
                    _ => sandbox_error("the sandbox's instance pool is closed"),
                };
                let receipt = Receipt {
                    wall_time: started.elapsed(),
                    ..Receipt::default()
                };
                return SandboxOutcome {
                    result: Err(error),
                    receipt,
                };
            }
        };

        let memory_cap = limits.memory_bytes.min(inner.config.max_memory_bytes);
        let request = request.into();
        let len = match i32::try_from(request.len()) {
            Ok(len) => len,
            Err(_) => {
                let error = sandbox_error(format!(
                    "a request of {} bytes does not fit the guest ABI",
                    request.len()
                ));
                let receipt = Receipt {
                    wall_time: started.elapsed(),
                    ..Receipt::default()
                };
                return SandboxOutcome {
                    result: Err(error),
                    receipt,
                };
            }
        };
        let state = GuestState::new(memory_cap, limits.max_host_calls, host, request);
        let mut store = Store::new(&inner.engine, state);
        store.limiter(|state| &mut state.limiter);
        let fuel_set = store.set_fuel(limits.fuel);
        let budget = limits.deadline;
        store.epoch_deadline_callback(move |mut store| {
            if Instant::now() >= deadline {
                let error = deadline_error(budget, started.elapsed());
                Err(store.data_mut().fail(error))
            } else {
                // Let the runtime run other tasks (and timers) once per tick.
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);

        let result = match fuel_set {
            Err(e) => Err(Stop::Error(sandbox_error(format!("cannot set fuel: {e}")))),
            Ok(()) => {
                let call = evaluate(inner, &mut store, len, limits.max_output_bytes);
                match crate::runtime::until(deadline, call).await {
                    Some(result) => result,
                    None => Err(Stop::Error(deadline_error(budget, started.elapsed()))),
                }
            }
        };
        let result = result.map_err(|stop| explain(stop, &mut store, inner, limits));
        let remaining = store.get_fuel().unwrap_or(0);
        let state = store.data();
        let receipt = Receipt {
            fuel_used: limits.fuel.saturating_sub(remaining),
            peak_memory_bytes: state.limiter.peak,
            wall_time: started.elapsed(),
            host_calls: state.host_calls,
        };
        inner.housekeeper.retire(Retired { store, slot });
        SandboxOutcome { result, receipt }
    }
}

/// Why an evaluation stopped early, before it is explained as an [`Error`].
enum Stop {
    /// Already explained (a check of the host's).
    Error(Error),
    /// A trap or other failure inside wasmtime.
    Trap(wasmtime::Error),
}

impl From<wasmtime::Error> for Stop {
    fn from(error: wasmtime::Error) -> Stop {
        Stop::Trap(error)
    }
}

/// One evaluation in a fresh instance: instantiate, `_initialize` if the guest has one, call
/// `fexpr_evaluate` with the request's length (the guest takes the pending request), read the
/// response.
async fn evaluate(
    inner: &Inner,
    store: &mut Store<GuestState>,
    len: i32,
    max_output_bytes: usize,
) -> Result<Vec<u8>, Stop> {
    let instance = inner.pre.instantiate_async(&mut *store).await?;
    let exports = &inner.exports;
    let memory = instance
        .get_module_export(&mut *store, &exports.memory)
        .and_then(Extern::into_memory)
        .ok_or_else(|| Stop::Error(sandbox_error("the guest exports no `memory`")))?;
    store.data_mut().memory = Some(memory);
    if let Some(initialize) = &exports.initialize {
        let initialize = typed::<(), ()>(instance, store, initialize, "_initialize")?;
        initialize.call_async(&mut *store, ()).await?;
    }
    let run = typed::<i32, i64>(instance, store, &exports.evaluate, "fexpr_evaluate")?;

    let packed = run.call_async(&mut *store, len).await? as u64;
    let (resp_ptr, resp_len) = ((packed >> 32) as u32 as i32, packed as u32 as i32);
    if resp_len as u32 as usize > max_output_bytes {
        return Err(Stop::Error(Error::limit(
            LimitKind::OutputBytes,
            max_output_bytes,
            resp_len as u32,
        )));
    }
    let range = guest_range(resp_ptr, resp_len, memory.data_size(&*store)).ok_or_else(|| {
        Stop::Error(sandbox_error(format!(
            "fexpr_evaluate returned response {}, out of bounds of guest memory ({} bytes)",
            show_range(resp_ptr, resp_len),
            memory.data_size(&*store)
        )))
    })?;
    Ok(memory.data(&*store)[range].to_vec())
}

/// The export `index` of `instance` as a typed function, without checking its type again:
/// [`Sandbox::from_module_bytes`] checked it (`func_type_is`) against the module, and every
/// instance is of that module.
#[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
fn typed<P: WasmParams, R: WasmResults>(
    instance: Instance,
    store: &mut Store<GuestState>,
    index: &ModuleExport,
    name: &str,
) -> Result<TypedFunc<P, R>, Stop> {
    let func = instance
        .get_module_export(&mut *store, index)
        .and_then(Extern::into_func)
        .ok_or_else(|| Stop::Error(sandbox_error(format!("the guest's `{name}` is unusable"))))?;
    // SAFETY: `P` and `R` are the parameter and result types `Sandbox::from_module` checked
    // this export against when the sandbox was built (`fexpr_evaluate: (i32) -> i64`,
    // `_initialize: () -> ()`), and `instance` is an instance of that module, in `store`.
    Ok(unsafe { TypedFunc::new_unchecked(&*store, func) })
}

/// Explains why the guest stopped: a budget ([`ErrorKind::Limit`]) or anything else
/// ([`ErrorKind::Sandbox`]).
fn explain(stop: Stop, store: &mut Store<GuestState>, inner: &Inner, limits: &Limits) -> Error {
    let trap = match stop {
        Stop::Error(error) => return error,
        Stop::Trap(trap) => trap,
    };
    let state = store.data_mut();
    if let Some(error) = state.failure.take() {
        return error;
    }
    if let Some(desired) = state.limiter.refused {
        return Error::limit_message(
            LimitKind::Memory,
            format!(
                "memory_bytes limit exceeded: the guest asked for {desired} bytes of linear \
                 memory, the cap is {}",
                state.limiter.cap
            ),
        );
    }
    match trap.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Error::limit_message(
            LimitKind::Fuel,
            format!(
                "fuel limit exceeded: the guest used all {} units of fuel",
                limits.fuel
            ),
        ),
        Some(Trap::StackOverflow) => Error::limit_message(
            LimitKind::WasmStack,
            format!(
                "wasm_stack_bytes limit exceeded: the guest's call stack outgrew {} bytes",
                inner.config.max_wasm_stack_bytes
            ),
        ),
        Some(Trap::Interrupt) => deadline_error(limits.deadline, limits.deadline),
        Some(Trap::MemoryOutOfBounds) => sandbox_error(
            "the guest trapped: out of bounds memory access (a bad pointer, or the guest's \
             shadow stack overflowed)",
        ),
        Some(trap) => sandbox_error(format!("the guest trapped: {trap}")),
        None => match trap.downcast_ref::<guest::GuestExit>() {
            Some(exit) => sandbox_error(exit.to_string()),
            None => sandbox_error(format!("the guest failed: {}", clip(&describe(&trap), 300))),
        },
    }
}

/// The chain of causes of a wasmtime error, without its wasm backtrace.
fn describe(error: &wasmtime::Error) -> String {
    // A backtrace is attached as the outermost context: skip it.
    let skip = usize::from(error.downcast_ref::<wasmtime::WasmBacktrace>().is_some());
    let causes: Vec<String> = error
        .chain()
        .skip(skip)
        .map(|cause| cause.to_string())
        .collect();
    causes.join(": ")
}

fn deadline_error(deadline: Duration, elapsed: Duration) -> Error {
    Error::limit_message(
        LimitKind::Deadline,
        format!(
            "deadline limit exceeded: the evaluation was still running after {elapsed:.1?} \
             (deadline {deadline:?})"
        ),
    )
}

/// Whether the export `name` of `module` exists with a type accepted by `ok`.
fn export(
    module: &wasmtime::Module,
    name: &str,
    ok: impl Fn(&ExternType) -> bool,
) -> Result<ModuleExport, Error> {
    let ty = module
        .get_export(name)
        .ok_or_else(|| sandbox_error(format!("the guest does not export `{name}`")))?;
    if !ok(&ty) {
        return Err(sandbox_error(format!(
            "the guest's export `{name}` has the wrong type ({ty:?})"
        )));
    }
    module
        .get_export_index(name)
        .ok_or_else(|| sandbox_error(format!("the guest does not export `{name}`")))
}

fn func_type_is(ty: &ExternType, params: &[ValType], results: &[ValType]) -> bool {
    let ExternType::Func(f) = ty else {
        return false;
    };
    let same = |a: &ValType, b: &ValType| ValType::eq(a, b);
    f.params().len() == params.len()
        && f.results().len() == results.len()
        && f.params().zip(params).all(|(a, b)| same(&a, b))
        && f.results().zip(results).all(|(a, b)| same(&a, b))
}

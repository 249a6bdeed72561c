//! The one wasmtime [`Engine`] a [`Sandbox`](super::Sandbox) runs on, and its housekeeping
//! thread (the epoch ticker, which also drops finished evaluations' stores).

use super::guest::GuestState;
use super::SandboxConfig;
use crate::error::{Error, ErrorKind};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};

/// Stack the host functions of an evaluation (WASI, `host_call`, `host_take`) may use on top of
/// the wasm stack, on the same fiber stack.
const HOST_STACK_HEADROOM: usize = 1 << 20;

/// Bytes of linear memory a pool slot keeps resident between instances, when the kernel can
/// tell wasmtime which pages an instance dirtied (Linux's `PAGEMAP_SCAN`, 6.7+): only those are
/// reset, with `memset`, instead of `madvise` plus fresh page faults on the next instance. This
/// halves a fresh instance's cost (see `benches/sandbox.rs`). Without `PAGEMAP_SCAN` the first
/// bytes kept resident are reset whether dirty or not, so only one page is kept.
const LINEAR_MEMORY_KEEP_RESIDENT_SCANNED: usize = 2 << 20;
const LINEAR_MEMORY_KEEP_RESIDENT_UNSCANNED: usize = 64 << 10;
/// The same for a slot's table and its fiber stack (the host side of the wasm stack).
const TABLE_KEEP_RESIDENT: usize = 4 << 10;
const STACK_KEEP_RESIDENT: usize = 64 << 10;

/// How a [`Sandbox`](super::Sandbox) gets the memory, table and fiber stack of each
/// evaluation's fresh instance. Either way every evaluation gets a fresh instance with the same
/// limits ([`Limits::memory_bytes`](crate::Limits) is enforced per store), and at most
/// [`SandboxConfig::max_instances`] run at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allocation {
    /// A pool of [`SandboxConfig::max_instances`] slots, reserved when the sandbox is built and
    /// reset between evaluations: the fastest fresh instance (the pool setup costs ~0.4 ms once,
    /// see BENCHMARKS.md). For a process that runs many evaluations. The default.
    #[default]
    Pooled,
    /// Each instance mapped when its evaluation starts and unmapped when it ends: the sandbox is
    /// ready sooner, each evaluation costs a little more. For a process that runs one or a few
    /// evaluations and exits, such as `fexpr exec --sandbox`.
    OnDemand,
}

/// Builds the engine: async calls on fibers, instances allocated as `config.allocation` says,
/// fuel, epoch interruption and a bounded wasm stack.
pub(crate) fn build_engine(config: &SandboxConfig) -> Result<Engine, Error> {
    let allocation = match config.allocation {
        Allocation::Pooled => InstanceAllocationStrategy::Pooling(pooling(config)),
        Allocation::OnDemand => InstanceAllocationStrategy::OnDemand,
    };
    let mut wasm = Config::new();
    wasm.allocation_strategy(allocation)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(config.max_wasm_stack_bytes)
        .async_stack_size(config.max_wasm_stack_bytes + HOST_STACK_HEADROOM)
        // Traps carry a short wasm backtrace; the messages we build do not need more.
        .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(16))
        // No `.eh_frame` for the guest's code: wasmtime walks wasm frames by their frame
        // pointers (traps, backtraces) and catches a host function's panic before it could
        // unwind through them (a tool's panic is caught by the manager first). Registering the
        // unwind tables with libgcc read ~8 pages of them on every start.
        .native_unwind_info(false)
        // Two cores: compile on both the first time (the result is cached on disk).
        .parallel_compilation(true);
    Engine::new(&wasm).map_err(|e| {
        Error::new(
            ErrorKind::Sandbox,
            format!("cannot configure the wasmtime engine: {e}"),
        )
    })
}

/// The pooling allocator: `max_instances` slots of one memory, one table and one fiber stack.
fn pooling(config: &SandboxConfig) -> PoolingAllocationConfig {
    let slots = config.max_instances.max(1);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_core_instances(slots)
        .total_memories(slots)
        .total_tables(slots)
        .total_stacks(slots)
        // A core module only: no component instances (wasmtime is built without GC).
        .total_component_instances(0)
        .max_memories_per_module(1)
        .max_tables_per_module(1)
        .max_memory_size(config.max_memory_bytes)
        .table_keep_resident(TABLE_KEEP_RESIDENT)
        .async_stack_keep_resident(STACK_KEEP_RESIDENT);
    if pagemap_scan_available() {
        pool.pagemap_scan(wasmtime::Enabled::Auto)
            .linear_memory_keep_resident(LINEAR_MEMORY_KEEP_RESIDENT_SCANNED);
    } else {
        pool.linear_memory_keep_resident(LINEAR_MEMORY_KEEP_RESIDENT_UNSCANNED);
    }
    pool
}

/// An evaluation's store with the pool slot it held, handed to the [`Housekeeper`] to drop.
pub(crate) struct Retired {
    pub(crate) store: Store<GuestState>,
    pub(crate) slot: OwnedSemaphorePermit,
}

impl Retired {
    /// Drops the store first (its instance's memory is reset, or unmapped), then releases the
    /// slot: [`SandboxConfig::max_instances`] bounds the instances alive, reset or not.
    fn release(self) {
        let Retired { store, slot } = self;
        drop(store);
        drop(slot);
    }
}

/// The sandbox's one thread. It advances the engine's epoch every tick, so that a running guest
/// reaches its epoch deadline check in time, and between ticks it drops the stores of finished
/// evaluations: resetting a pool slot (`PAGEMAP_SCAN` and `memset` of the pages the guest
/// dirtied, ~4 µs) is then off the caller's path, which has its result before the reset.
/// Dropping the housekeeper closes its channel; the thread drops what is still queued and ends
/// on its own (it is not joined: a process that exits after its last evaluation does not wait
/// for it).
pub(crate) struct Housekeeper {
    retired: mpsc::Sender<Retired>,
}

impl Housekeeper {
    /// Starts the thread, ticking `engine` every `tick`.
    pub(crate) fn start(engine: Engine, tick: Duration) -> Result<Housekeeper, Error> {
        let (retired, queue) = mpsc::channel::<Retired>();
        std::thread::Builder::new()
            .name("fexpr-sandbox".into())
            .spawn(move || housekeep(&engine, tick, &queue))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Sandbox,
                    format!("cannot start the sandbox's epoch thread: {e}"),
                )
            })?;
        Ok(Housekeeper { retired })
    }

    /// Drops `retired` on the housekeeping thread (here if that thread is gone).
    pub(crate) fn retire(&self, retired: Retired) {
        if let Err(mpsc::SendError(retired)) = self.retired.send(retired) {
            retired.release();
        }
    }
}

/// The housekeeping loop: tick on time, drop what arrives in between, end when the channel
/// closes.
fn housekeep(engine: &Engine, tick: Duration, queue: &mpsc::Receiver<Retired>) {
    let mut next = Instant::now() + tick;
    loop {
        let now = Instant::now();
        if now >= next {
            engine.increment_epoch();
            next = now + tick;
        }
        match queue.recv_timeout(next.saturating_duration_since(now)) {
            Ok(retired) => retired.release(),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}

/// Whether the kernel has the `PAGEMAP_SCAN` ioctl (Linux 6.7 or later).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
fn pagemap_scan_available() -> bool {
    // SAFETY: `uname` fills the zeroed struct it is given; its fields are NUL-terminated.
    let release = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut name) != 0 {
            return false;
        }
        std::ffi::CStr::from_ptr(name.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    };
    kernel_at_least(&release, (6, 7))
}

#[cfg(not(target_os = "linux"))]
fn pagemap_scan_available() -> bool {
    false
}

/// Whether a kernel release string like `6.18.44-foo` is at least `major.minor`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn kernel_at_least(release: &str, (major, minor): (u32, u32)) -> bool {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let have = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    have >= (major, minor)
}

#[cfg(test)]
mod tests {
    use super::{build_engine, kernel_at_least};
    use crate::sandbox::SandboxConfig;

    #[test]
    fn allocation_picks_the_engines_instance_allocator() {
        let pooled = build_engine(&SandboxConfig::default()).expect("pooled engine");
        assert!(pooled.pooling_allocator_metrics().is_some());
        let on_demand = build_engine(&SandboxConfig::on_demand()).expect("on-demand engine");
        assert!(on_demand.pooling_allocator_metrics().is_none());
    }

    #[test]
    fn kernel_versions() {
        assert!(kernel_at_least("6.18.44-fc-v669", (6, 7)));
        assert!(kernel_at_least("6.7.0", (6, 7)));
        assert!(kernel_at_least("7.0", (6, 7)));
        assert!(!kernel_at_least("6.6.30-generic", (6, 7)));
        assert!(!kernel_at_least("5.15.0-91-generic", (6, 7)));
        assert!(!kernel_at_least("", (6, 7)));
    }
}

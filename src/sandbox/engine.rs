//! The one wasmtime [`Engine`] a [`Sandbox`](super::Sandbox) runs on, and its epoch ticker.

use super::SandboxConfig;
use crate::{Error, ErrorKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Stack the host functions of an evaluation (WASI, `host_call`, `host_take`) may use on top of
/// the wasm stack, on the same fiber stack.
const HOST_STACK_HEADROOM: usize = 1 << 20;

/// Bytes of linear memory / table / fiber stack a pool slot keeps resident between instances
/// (tuned with `benches/sandbox.rs`).
const LINEAR_MEMORY_KEEP_RESIDENT: usize = 0;
const TABLE_KEEP_RESIDENT: usize = 0;
const STACK_KEEP_RESIDENT: usize = 0;

/// Builds the engine: async calls on fibers, a pooling allocator sized by `config`, fuel,
/// epoch interruption and a bounded wasm stack.
pub(crate) fn build_engine(config: &SandboxConfig) -> Result<Engine, Error> {
    let slots = config.max_instances.max(1);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_core_instances(slots)
        .total_memories(slots)
        .total_tables(slots)
        .total_stacks(slots)
        // A core module only: no component instances, no GC heaps.
        .total_component_instances(0)
        .total_gc_heaps(0)
        .max_memories_per_module(1)
        .max_tables_per_module(1)
        .max_memory_size(config.max_memory_bytes)
        // Memory a slot keeps mapped (zeroed with memset rather than decommitted) between
        // instances: a fresh instance then takes fewer page faults.
        .linear_memory_keep_resident(LINEAR_MEMORY_KEEP_RESIDENT)
        .table_keep_resident(TABLE_KEEP_RESIDENT)
        .async_stack_keep_resident(STACK_KEEP_RESIDENT);

    let mut wasm = Config::new();
    wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(config.max_wasm_stack_bytes)
        .async_stack_size(config.max_wasm_stack_bytes + HOST_STACK_HEADROOM)
        // Traps carry a short wasm backtrace; the messages we build do not need more.
        .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(16))
        // Two cores: compile on both the first time (the result is cached on disk).
        .parallel_compilation(true);
    Engine::new(&wasm).map_err(|e| {
        Error::new(
            ErrorKind::Sandbox,
            format!("cannot configure the wasmtime engine: {e}"),
        )
    })
}

/// A thread that advances the engine's epoch every `tick`, so that a running guest reaches its
/// epoch deadline check in time. Stopped and joined on drop.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    /// Starts ticking `engine` every `tick`.
    pub(crate) fn start(engine: Engine, tick: std::time::Duration) -> Result<EpochTicker, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fexpr-epoch".into())
            .spawn(move || loop {
                std::thread::park_timeout(tick);
                if thread_stop.load(Ordering::Acquire) {
                    break;
                }
                engine.increment_epoch();
            })
            .map_err(|e| {
                Error::new(
                    ErrorKind::Sandbox,
                    format!("cannot start the epoch ticker thread: {e}"),
                )
            })?;
        Ok(EpochTicker {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

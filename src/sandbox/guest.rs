//! The guest side of one evaluation as the host sees it: the store's state, the memory
//! limiter, the three `fexpr` imports, and a capability-free WASI.

use super::HostCalls;
use crate::error::LimitKind;
use crate::error::{Error, ErrorKind};
use std::sync::Arc;
use wasmtime::{Caller, Linker, Memory, ResourceLimiter};

/// The module the guest imports the host calls from.
pub const HOST_MODULE: &str = "fexpr";

/// Every import a guest module may have; a module importing anything else is refused when the
/// [`Sandbox`](super::Sandbox) is built. The WASI functions are those Rust's standard library
/// pulls into the guest (panic message to stderr, environment lookup, exit, the seed of hash
/// maps), implemented here without capabilities: no environment, output written nowhere, exit
/// as an error, and deterministic randomness.
pub const ALLOWED_IMPORTS: &[(&str, &str)] = &[
    (HOST_MODULE, "host_call"),
    (HOST_MODULE, "host_take"),
    (HOST_MODULE, "host_lookup"),
    ("wasi_snapshot_preview1", "environ_get"),
    ("wasi_snapshot_preview1", "environ_sizes_get"),
    ("wasi_snapshot_preview1", "fd_write"),
    ("wasi_snapshot_preview1", "proc_exit"),
    ("wasi_snapshot_preview1", "random_get"),
];

/// Everything one evaluation's store holds.
pub(crate) struct GuestState {
    pub(crate) limiter: MemoryLimiter,
    host: Arc<dyn HostCalls>,
    /// Host calls started (answered or cancelled by the deadline).
    pub(crate) host_calls: u32,
    max_host_calls: u32,
    /// The bytes `host_take` copies into the guest next: the request, then the reply of each
    /// `host_call`.
    pending: Option<Vec<u8>>,
    /// Why the guest was stopped, when a host function, the limiter or the deadline stopped
    /// it: this is the error reported, whatever trap wasmtime reports.
    pub(crate) failure: Option<Error>,
    /// The instance's exported memory, set once it is instantiated: the host functions use it
    /// without looking the export up by name on every call.
    pub(crate) memory: Option<Memory>,
}

impl GuestState {
    /// The state of an evaluation of `request` (pending, for the guest to take first).
    pub(crate) fn new(
        memory_bytes: usize,
        max_host_calls: u32,
        host: Arc<dyn HostCalls>,
        request: Vec<u8>,
    ) -> GuestState {
        GuestState {
            limiter: MemoryLimiter {
                cap: memory_bytes,
                peak: 0,
                refused: None,
            },
            host,
            host_calls: 0,
            max_host_calls,
            pending: Some(request),
            failure: None,
            memory: None,
        }
    }

    /// Records why the guest is being stopped (the first reason wins) and returns the trap
    /// that stops it.
    pub(crate) fn fail(&mut self, error: Error) -> wasmtime::Error {
        let trap = wasmtime::Error::msg(error.message.clone());
        self.failure.get_or_insert(error);
        trap
    }
}

/// A [`ResourceLimiter`] that records the peak linear memory and stops the guest (a trap, not
/// a failed `memory.grow`) when it asks for more than `cap` bytes.
pub(crate) struct MemoryLimiter {
    /// The most linear memory allowed, in bytes.
    pub(crate) cap: usize,
    /// The most linear memory the guest had, in bytes.
    pub(crate) peak: usize,
    /// The size the guest asked for when it was refused.
    pub(crate) refused: Option<usize>,
}

/// Table elements a guest may have (function pointers; the Rust guest needs a few hundred).
const MAX_TABLE_ELEMENTS: usize = 20_000;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.refused.get_or_insert(desired);
            return Err(wasmtime::Error::new(MemoryLimitHit { desired }));
        }
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        self.peak = self.peak.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS && maximum.is_none_or(|max| desired <= max))
    }

    fn instances(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        1
    }

    fn memories(&self) -> usize {
        1
    }
}

/// The trap [`MemoryLimiter`] raises: how many bytes the guest asked for.
#[derive(Debug)]
pub(crate) struct MemoryLimitHit {
    pub(crate) desired: usize,
}

impl std::fmt::Display for MemoryLimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "linear memory of {} bytes refused", self.desired)
    }
}

impl std::error::Error for MemoryLimitHit {}

/// SplitMix64: a fixed-seed generator, so the guest's "random" bytes are the same every run.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_word(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A linker with the `fexpr` host functions and the WASI functions of [`ALLOWED_IMPORTS`].
pub(crate) fn linker(engine: &wasmtime::Engine) -> wasmtime::Result<Linker<GuestState>> {
    let mut linker = Linker::new(engine);
    linker.func_wrap(WASI_MODULE, "environ_get", environ_get)?;
    linker.func_wrap(WASI_MODULE, "environ_sizes_get", environ_sizes_get)?;
    linker.func_wrap(WASI_MODULE, "fd_write", fd_write)?;
    linker.func_wrap(WASI_MODULE, "proc_exit", proc_exit)?;
    linker.func_wrap(WASI_MODULE, "random_get", random_get)?;
    linker.func_wrap_async(
        HOST_MODULE,
        "host_call",
        |mut caller: Caller<'_, GuestState>, (ptr, len): (i32, i32)| {
            Box::new(async move { host_call(&mut caller, ptr, len).await })
        },
    )?;
    linker.func_wrap(HOST_MODULE, "host_take", host_take)?;
    linker.func_wrap(HOST_MODULE, "host_lookup", host_lookup)?;
    Ok(linker)
}

const WASI_MODULE: &str = "wasi_snapshot_preview1";

/// WASI error numbers (`errno`) the functions below answer with.
const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;

/// The most bytes one `random_get` may ask for.
const MAX_RANDOM_BYTES: usize = 64 << 10;

/// The most buffers one `fd_write` may pass (POSIX's `IOV_MAX`).
const MAX_IOVECS: u32 = 1024;

/// The guest called `proc_exit(status)`: the trap that ends the evaluation.
#[derive(Debug)]
pub(crate) struct GuestExit(pub(crate) i32);

impl std::fmt::Display for GuestExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the guest exited with status {}", self.0)
    }
}

impl std::error::Error for GuestExit {}

/// The range of `len` bytes at `ptr` when it lies inside guest memory and `ptr` is a multiple
/// of `align`; otherwise the guest is stopped with an error that names the buffer (`what`:
/// the function and its argument) and what is wrong with it.
fn checked_range(
    caller: &mut Caller<'_, GuestState>,
    memory: Memory,
    what: &str,
    (ptr, len, align): (i32, i32, u32),
) -> wasmtime::Result<std::ops::Range<usize>> {
    let size = memory.data_size(&*caller);
    let problem = match guest_range(ptr, len, size) {
        Some(range) if (ptr as u32).is_multiple_of(align) => return Ok(range),
        Some(_) => format!("is not {align}-byte aligned"),
        None => format!("is out of bounds of guest memory ({size} bytes)"),
    };
    let error = sandbox_error(format!("{what} {} {problem}", show_range(ptr, len)));
    Err(caller.data_mut().fail(error))
}

/// Writes the `u32` `value` (little-endian) at the aligned `ptr` (`what`: see [`checked_range`]).
fn store_u32(
    caller: &mut Caller<'_, GuestState>,
    what: &str,
    ptr: i32,
    value: u32,
) -> wasmtime::Result<()> {
    let memory = guest_memory(caller)?;
    let range = checked_range(caller, memory, what, (ptr, 4, 4))?;
    memory.data_mut(&mut *caller)[range].copy_from_slice(&value.to_le_bytes());
    Ok(())
}

/// WASI `environ_sizes_get(count, bytes) -> errno`: no environment variables, of zero bytes.
fn environ_sizes_get(
    mut caller: Caller<'_, GuestState>,
    count: i32,
    bytes: i32,
) -> wasmtime::Result<i32> {
    store_u32(&mut caller, "environ_sizes_get: count", count, 0)?;
    store_u32(&mut caller, "environ_sizes_get: size", bytes, 0)?;
    Ok(ERRNO_SUCCESS)
}

/// WASI `environ_get(environ, buf) -> errno`: there is nothing to write.
fn environ_get(_caller: Caller<'_, GuestState>, _environ: i32, _buf: i32) -> i32 {
    ERRNO_SUCCESS
}

/// WASI `fd_write(fd, iovs, iovs_len, nwritten) -> errno`: standard output and error take every
/// byte and keep none; any other descriptor is bad (there are no files).
fn fd_write(
    mut caller: Caller<'_, GuestState>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> wasmtime::Result<i32> {
    if fd != 1 && fd != 2 {
        return Ok(ERRNO_BADF);
    }
    if iovs_len as u32 > MAX_IOVECS {
        return Ok(ERRNO_INVAL);
    }
    let memory = guest_memory(&mut caller)?;
    let list = checked_range(
        &mut caller,
        memory,
        "fd_write: iovecs",
        (iovs, iovs_len * 8, 4),
    )?;
    let mut total: u64 = 0;
    for i in list.step_by(8) {
        let data = memory.data(&caller);
        let word =
            |at: usize| i32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        let (buf, len) = (word(i), word(i + 4));
        checked_range(&mut caller, memory, "fd_write: buffer", (buf, len, 1))?;
        total += u64::from(len as u32);
    }
    let Ok(total) = u32::try_from(total) else {
        return Ok(ERRNO_INVAL);
    };
    store_u32(&mut caller, "fd_write: nwritten", nwritten, total)?;
    Ok(ERRNO_SUCCESS)
}

/// WASI `proc_exit(status)`: ends the evaluation with an error.
fn proc_exit(_caller: Caller<'_, GuestState>, status: i32) -> wasmtime::Result<()> {
    Err(wasmtime::Error::new(GuestExit(status)))
}

/// WASI `random_get(buf, len) -> errno`: fills the buffer from a fixed-seed generator, so an
/// evaluation stays a function of its request (hash-map order included).
fn random_get(mut caller: Caller<'_, GuestState>, ptr: i32, len: i32) -> wasmtime::Result<i32> {
    if len as u32 as usize > MAX_RANDOM_BYTES {
        return Ok(ERRNO_INVAL);
    }
    let memory = guest_memory(&mut caller)?;
    let Some(range) = guest_range(ptr, len, memory.data_size(&caller)) else {
        return Ok(ERRNO_FAULT);
    };
    let mut rng = SplitMix64(0x5eed_f0e4_0000_0003);
    for chunk in memory.data_mut(&mut caller)[range].chunks_mut(8) {
        let word = rng.next_word().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    Ok(ERRNO_SUCCESS)
}

/// `host_call(ptr, len) -> reply_len`: runs the request at `ptr..ptr+len` on the host.
async fn host_call(
    caller: &mut Caller<'_, GuestState>,
    ptr: i32,
    len: i32,
) -> wasmtime::Result<i32> {
    let state = caller.data_mut();
    if state.host_calls >= state.max_host_calls {
        let attempted = u64::from(state.host_calls) + 1;
        let error = Error::limit(LimitKind::HostCalls, state.max_host_calls, attempted);
        return Err(state.fail(error));
    }
    state.host_calls += 1;
    let memory = guest_memory(caller)?;
    let range = checked_range(caller, memory, "host_call: request", (ptr, len, 1))?;
    let request = memory.data(&*caller)[range].to_vec();
    let host = caller.data().host.clone();
    let reply = host.call(request).await;
    let Ok(reply_len) = i32::try_from(reply.len()) else {
        let error = sandbox_error(format!(
            "host_call: reply of {} bytes does not fit the guest ABI",
            reply.len()
        ));
        return Err(caller.data_mut().fail(error));
    };
    caller.data_mut().pending = Some(reply);
    Ok(reply_len)
}

/// `host_take(ptr)`: copies the pending bytes (the request, or the last reply) into guest
/// memory at `ptr`.
fn host_take(mut caller: Caller<'_, GuestState>, ptr: i32) -> wasmtime::Result<()> {
    let Some(reply) = caller.data_mut().pending.take() else {
        let error = sandbox_error("host_take: no pending reply (host_call first)");
        return Err(caller.data_mut().fail(error));
    };
    let memory = guest_memory(&mut caller)?;
    let len = reply.len() as i32; // fits: checked by host_call
    let range = checked_range(
        &mut caller,
        memory,
        "host_take: reply destination",
        (ptr, len, 1),
    )?;
    memory.data_mut(&mut caller)[range].copy_from_slice(&reply);
    Ok(())
}

/// `host_lookup(key_ptr, key_len, out_ptr, out_len) -> len`: the host's answer for the key at
/// `key_ptr..key_ptr+key_len` ([`HostCalls::lookup`]), written at `out_ptr` when it fits in
/// `out_len` bytes; its length either way, or -1 when there is none. Nothing is allocated: the
/// answer is copied from the host's data into guest memory.
fn host_lookup(
    mut caller: Caller<'_, GuestState>,
    key_ptr: i32,
    key_len: i32,
    out_ptr: i32,
    out_len: i32,
) -> wasmtime::Result<i32> {
    let memory = guest_memory(&mut caller)?;
    let key = checked_range(
        &mut caller,
        memory,
        "host_lookup: key",
        (key_ptr, key_len, 1),
    )?;
    let out = checked_range(
        &mut caller,
        memory,
        "host_lookup: destination",
        (out_ptr, out_len, 1),
    )?;
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let host: &dyn HostCalls = &*state.host;
    let Some(answer) = data.get(key).and_then(|key| host.lookup(key)) else {
        return Ok(-1);
    };
    let Ok(len) = i32::try_from(answer.len()) else {
        let error = sandbox_error(format!(
            "host_lookup: an answer of {} bytes does not fit the guest ABI",
            answer.len()
        ));
        return Err(state.fail(error));
    };
    if answer.len() <= out.len() {
        let end = out.start + answer.len();
        if let Some(dest) = data.get_mut(out.start..end) {
            dest.copy_from_slice(answer);
        }
    }
    Ok(len)
}

fn guest_memory(caller: &mut Caller<'_, GuestState>) -> wasmtime::Result<Memory> {
    let state = caller.data_mut();
    match state.memory {
        Some(memory) => Ok(memory),
        None => Err(state.fail(sandbox_error("the guest exports no `memory`"))),
    }
}

/// The byte range `ptr..ptr+len` of a guest memory of `size` bytes, if it lies inside it.
/// Pointers and lengths are wasm32 `i32`s read as unsigned.
pub(crate) fn guest_range(ptr: i32, len: i32, size: usize) -> Option<std::ops::Range<usize>> {
    let start = ptr as u32 as usize;
    let end = start.checked_add(len as u32 as usize)?;
    (end <= size).then_some(start..end)
}

/// `0x…+len` for messages.
pub(crate) fn show_range(ptr: i32, len: i32) -> String {
    format!("{:#x}+{}", ptr as u32, len as u32)
}

pub(crate) fn sandbox_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Sandbox, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_range_is_checked() {
        assert_eq!(guest_range(0, 0, 0), Some(0..0));
        assert_eq!(guest_range(10, 5, 15), Some(10..15));
        assert_eq!(guest_range(10, 6, 15), None);
        assert_eq!(guest_range(-1, 1, 1 << 20), None);
        assert_eq!(guest_range(0, -1, 1 << 20), None);
        assert_eq!(
            guest_range(-1, -1, usize::MAX),
            Some(0xffff_ffff..0x1_ffff_fffe)
        );
    }

    #[test]
    fn limiter_refuses_past_cap_and_records_peak() {
        let mut limiter = MemoryLimiter {
            cap: 4 << 16,
            peak: 0,
            refused: None,
        };
        assert!(limiter.memory_growing(0, 2 << 16, None).unwrap());
        assert!(limiter.memory_growing(2 << 16, 4 << 16, None).unwrap());
        assert!(limiter.memory_growing(4 << 16, 5 << 16, None).is_err());
        assert!(!limiter
            .memory_growing(4 << 16, 4 << 16, Some(3 << 16))
            .unwrap());
        assert_eq!(limiter.peak, 4 << 16);
        assert_eq!(limiter.refused, Some(5 << 16));
    }

    #[test]
    fn splitmix_is_deterministic() {
        let (mut a, mut b) = (SplitMix64(1), SplitMix64(1));
        let x: Vec<u64> = (0..4).map(|_| a.next_word()).collect();
        let y: Vec<u64> = (0..4).map(|_| b.next_word()).collect();
        assert_eq!(x, y);
        assert!(x.windows(2).all(|w| w[0] != w[1]), "{x:?}");
    }
}

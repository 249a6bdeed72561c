//! The fexpr wasm guest: a `wasm32-wasip1` reactor module (exports, no `main`).
//!
//! # ABI (the host side is `fexpr::sandbox`)
//!
//! Exports:
//! - `memory`
//! - `fexpr_alloc(len: i32) -> i32`: allocates `len` bytes of guest memory, returns the pointer.
//! - `fexpr_evaluate(ptr: i32, len: i32) -> i64`: evaluates the request the host wrote at
//!   `ptr..ptr+len`; returns `(resp_ptr << 32) | resp_len` of the response in guest memory.
//!
//! Imports, module `"fexpr"`:
//! - `host_call(ptr: i32, len: i32) -> i32`: hands a request to the host, which runs it and
//!   keeps the reply pending; returns the reply's length.
//! - `host_take(ptr: i32)`: the host copies the pending reply to `ptr` (which has room for the
//!   length `host_call` returned).
//!
//! The bytes are opaque here; `fexpr::wire` gives them meaning. Each evaluation runs in a
//! fresh instance, so nothing is ever freed: buffers are leaked on purpose, and the global
//! allocator is a bump allocator whose `free` does nothing (the instance's memory, capped by
//! `Limits::memory_bytes`, is discarded after the evaluation).

// SAFETY: the guest is single-threaded (wasm32-wasip1, no threads).
#[global_allocator]
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::LeakingAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::LeakingAllocator::new()) };

#[link(wasm_import_module = "fexpr")]
extern "C" {
    fn host_call(ptr: i32, len: i32) -> i32;
    fn host_take(ptr: i32);
}

/// A buffer of `len` bytes that lives until the instance is dropped; its address as an i32.
fn leak(bytes: Vec<u8>) -> (i32, i32) {
    let len = bytes.len() as i32;
    let ptr = Box::leak(bytes.into_boxed_slice()).as_mut_ptr() as i32;
    (ptr, len)
}

/// Allocates `len` zeroed bytes for the host to write a request into.
#[no_mangle]
pub extern "C" fn fexpr_alloc(len: i32) -> i32 {
    let len = usize::try_from(len).unwrap_or(0);
    leak(vec![0; len]).0
}

/// Evaluates the request at `ptr..ptr+len`; returns `(resp_ptr << 32) | resp_len`.
///
/// # Safety
/// The host wrote `len` bytes at `ptr`, in a buffer it got from [`fexpr_alloc`].
#[no_mangle]
pub unsafe extern "C" fn fexpr_evaluate(ptr: i32, len: i32) -> i64 {
    // SAFETY: the host wrote exactly `len` bytes at `ptr` (see the ABI above).
    let request = unsafe { std::slice::from_raw_parts(ptr as usize as *const u8, len as usize) };
    let mut host = call_host;
    let response = fexpr::wire::guest_evaluate(request, &mut host);
    let (resp_ptr, resp_len) = leak(response);
    ((resp_ptr as u32 as i64) << 32) | resp_len as u32 as i64
}

/// One round trip to the host: the request out, the reply back.
fn call_host(request: &[u8]) -> Vec<u8> {
    // SAFETY: the host reads `request` and then writes exactly the returned number of bytes
    // into the buffer we allocate for it.
    unsafe {
        let reply_len = host_call(request.as_ptr() as i32, request.len() as i32);
        let mut reply = vec![0u8; usize::try_from(reply_len).unwrap_or(0)];
        host_take(reply.as_mut_ptr() as i32);
        reply
    }
}

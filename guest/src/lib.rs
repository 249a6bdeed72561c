//! The fexpr wasm guest: a `wasm32-wasip1` reactor module (exports, no `main`).
//!
//! # ABI (the host side is `fexpr::sandbox`)
//!
//! Exports:
//! - `memory`
//! - `fexpr_evaluate(len: i32) -> i64`: evaluates the request of `len` bytes the host holds
//!   pending (the guest copies it into its memory with `host_take` first); returns
//!   `(resp_ptr << 32) | resp_len` of the response in guest memory. The one call per
//!   evaluation: the guest needs no `_initialize` (it runs its constructors itself, and has
//!   none today).
//!
//! Imports, module `"fexpr"`:
//! - `host_call(ptr: i32, len: i32) -> i32`: hands a request to the host, which runs it and
//!   keeps the reply pending; returns the reply's length.
//! - `host_take(ptr: i32)`: the host copies the pending bytes (the request, then each reply)
//!   to `ptr` (which has room for the length announced).
//! - `host_lookup(key_ptr: i32, key_len: i32, out_ptr: i32, out_len: i32) -> i32`: the host's
//!   answer for the key (the manager's context entries, read on demand): its length, written
//!   to `out_ptr` when it fits in `out_len` bytes; -1 when there is none.
//!
//! The bytes are opaque here; `fexpr::sandbox::wire` gives them meaning. Each evaluation runs in a
//! fresh instance, so nothing needs freeing: buffers are leaked on purpose, and the global
//! allocator is a bump allocator (see [`Bump`]); the instance's memory, capped by
//! `Limits::memory_bytes`, is discarded after the evaluation.

use core::arch::wasm32;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

#[global_allocator]
static ALLOCATOR: Bump = Bump::new();

/// A wasm page.
const PAGE: usize = 64 << 10;

/// Bytes of the initial memory's heap left to libc's own `malloc` (wasi-libc reads the
/// environment into it if anything asks for a variable).
const LIBC_SLACK: usize = 4 << 10;

extern "C" {
    /// The end of the data segments, where the heap starts (defined by the linker).
    static __heap_base: u8;
}

/// The global allocator: hands out the rest of the initial memory first, then pages from
/// `memory.grow`, and frees only the most recent allocation (by moving back).
///
/// The initial memory (`--initial-memory` in `scripts/guest-common.sh`) is sized so that a
/// typical evaluation, including the 1 MiB stack `stacker` allocates around each parse on
/// wasm, never grows memory: a grow costs the host an `mprotect` now and another to shrink
/// the pool slot back at the next instance.
///
/// wasi-libc's `malloc` (linked in, and used by its own environment code) claims
/// `__heap_base..` up to the end of memory when it first runs, so the first allocation takes
/// that range *through* `malloc`, as one block; both allocators then grow memory only with
/// `memory.grow` (libc's `sbrk`), each keeping to the pages the grow gave it.
struct Bump {
    /// Where the next allocation may start.
    next: Cell<usize>,
    /// The end of the range this allocator owns.
    end: Cell<usize>,
    /// Whether the initial range was claimed.
    started: Cell<bool>,
}

#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comments
// SAFETY: the guest is single-threaded (wasm32-wasip1, no threads), so the cells are never
// accessed concurrently.
unsafe impl Sync for Bump {}

impl Bump {
    const fn new() -> Bump {
        Bump {
            next: Cell::new(0),
            end: Cell::new(0),
            started: Cell::new(false),
        }
    }

    /// Claims the initial memory's heap through libc's `malloc`, less [`LIBC_SLACK`]. With
    /// too little of it left, the range stays empty and every allocation grows memory.
    #[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
    fn start(&self) {
        self.started.set(true);
        let heap_base = &raw const __heap_base as usize;
        let memory_end = wasm32::memory_size::<0>() * PAGE;
        let want = memory_end.saturating_sub(heap_base + LIBC_SLACK);
        if want < PAGE {
            return;
        }
        let Ok(layout) = Layout::from_size_align(want, 8) else {
            return;
        };
        // SAFETY: `layout` has a non-zero size.
        let block = unsafe { System.alloc(layout) } as usize;
        if block != 0 {
            self.next.set(block);
            self.end.set(block + want);
        }
    }

    /// `layout` from the owned range, if it fits.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        let start = self.next.get().checked_next_multiple_of(layout.align())?;
        let end = start.checked_add(layout.size())?;
        if end > self.end.get() {
            return None;
        }
        self.next.set(end);
        Some(start as *mut u8)
    }

    /// Grows memory by enough pages for `layout` after the owned range. The new pages extend
    /// the range if they follow it, else (libc grew memory meanwhile) they become the range.
    fn grow(&self, layout: Layout) -> bool {
        let Some(start) = self.next.get().checked_next_multiple_of(layout.align()) else {
            return false;
        };
        let end = self.end.get();
        let Some(needed) = start
            .checked_add(layout.size())
            .map(|e| e.saturating_sub(end))
        else {
            return false;
        };
        let pages = needed.div_ceil(PAGE).max(1);
        let old = wasm32::memory_grow::<0>(pages);
        if old == usize::MAX {
            return false;
        }
        let base = old * PAGE;
        if base != end {
            self.next.set(base);
        }
        self.end.set(base + pages * PAGE);
        true
    }
}

#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comments
// SAFETY: `alloc` hands out each block once, aligned and inside memory this allocator owns
// (the range it claimed or pages it grew), or null; `dealloc` takes back only the most recent
// block; `realloc` keeps the old block's bytes (in place, or copied) within both blocks' sizes.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !self.started.get() {
            self.start();
        }
        // Two grows at most: the second only when libc's pages came between.
        for _ in 0..3 {
            if let Some(ptr) = self.bump(layout) {
                return ptr;
            }
            if !self.grow(layout) {
                break;
            }
        }
        std::ptr::null_mut()
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Only the most recent allocation can be given back.
        if ptr as usize + layout.size() == self.next.get() {
            self.next.set(ptr as usize);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let addr = ptr as usize;
        // The most recent allocation grows or shrinks in place when the range allows.
        if addr + layout.size() == self.next.get() {
            if let Some(end) = addr.checked_add(new_size) {
                if end <= self.end.get() {
                    self.next.set(end);
                    return ptr;
                }
            }
        }
        // SAFETY: the caller guarantees that `new_size`, rounded up to `layout.align()`, does
        // not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `new_layout` has a non-zero size (the caller's contract).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct and at least this long.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[link(wasm_import_module = "fexpr")]
extern "C" {
    fn host_call(ptr: i32, len: i32) -> i32;
    fn host_take(ptr: i32);
    fn host_lookup(key_ptr: i32, key_len: i32, out_ptr: i32, out_len: i32) -> i32;
}

extern "C" {
    /// The module's constructors, synthesised by the linker (empty today).
    fn __wasm_call_ctors();
}

/// A buffer of `len` bytes that lives until the instance is dropped; its address as an i32.
fn leak(bytes: Vec<u8>) -> (i32, i32) {
    let len = bytes.len() as i32;
    let ptr = Box::leak(bytes.into_boxed_slice()).as_mut_ptr() as i32;
    (ptr, len)
}

/// The `len` bytes the host holds pending, copied into guest memory.
#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comment
fn take(len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    // SAFETY: the host copies exactly the `len` bytes it announced into the buffer, which has
    // room for them.
    unsafe { host_take(bytes.as_mut_ptr() as i32) };
    bytes
}

/// Evaluates the pending request of `len` bytes; returns `(resp_ptr << 32) | resp_len`.
#[allow(unsafe_code)] // an export the host calls by name; the unsafe call carries its SAFETY comment
#[no_mangle]
pub extern "C" fn fexpr_evaluate(len: i32) -> i64 {
    // SAFETY: the linker's constructor function runs once, before anything else in this
    // fresh instance (what a reactor's `_initialize` does; the host calls nothing else first).
    unsafe { __wasm_call_ctors() };
    let request = take(usize::try_from(len).unwrap_or(0));
    let mut host = call_host;
    let response = fexpr::sandbox::wire::guest_evaluate(&request, &mut host, &lookup);
    let (resp_ptr, resp_len) = leak(response);
    ((resp_ptr as u32 as i64) << 32) | resp_len as u32 as i64
}

/// One round trip to the host: the request out, the reply back.
#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comments
fn call_host(request: &[u8]) -> Vec<u8> {
    // SAFETY: the host reads `request` and keeps its reply pending for `take`.
    let reply_len = unsafe { host_call(request.as_ptr() as i32, request.len() as i32) };
    take(usize::try_from(reply_len).unwrap_or(0))
}

/// The host's answer for `key`, if it has one.
#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comment
fn lookup(key: &[u8]) -> Option<Vec<u8>> {
    let mut out = vec![0u8; 1024];
    // The second try has room for the length the first one announced.
    for _ in 0..2 {
        // SAFETY: the host reads `key` and writes at most `out.len()` bytes into `out`.
        let len = unsafe {
            host_lookup(
                key.as_ptr() as i32,
                key.len() as i32,
                out.as_mut_ptr() as i32,
                out.len() as i32,
            )
        };
        let len = usize::try_from(len).ok()?;
        if len <= out.len() {
            out.truncate(len);
            return Some(out);
        }
        out.resize(len, 0);
    }
    None
}

//! The allocator of fexpr's timers and benchmarks (`examples/compare_fexpr.rs`,
//! `examples/sandbox_cold_start.rs`, `benches/*.rs`): mimalloc, or glibc's malloc when
//! `FEXPR_ALLOCATOR=system` is set, so that one binary measures both. A library cannot choose
//! its users' allocator, so BENCHMARKS.md shows fexpr's figures with both; the `fexpr` CLI and
//! the Python extension use mimalloc.
//!
//! mimalloc is called as a C program would: `mi_malloc` for blocks of at most a word's alignment
//! (nearly all of them), its aligned entry only above that (the `mimalloc` crate's allocator
//! always takes the aligned entry).
//!
//! The choice is made at the first allocation (from the environment, read without allocating)
//! and kept for the life of the process: a block is always freed by the allocator that made it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether every block `mi_malloc` gives has `align`: mimalloc's blocks are whole words
/// (its size classes are multiples of a word, its pages start aligned), so any alignment up
/// to a word's. `mi_malloc` skips the aligned entry's checks: ~25 instructions of ~45 per
/// allocation.
fn word_aligned(align: usize) -> bool {
    align <= std::mem::size_of::<usize>()
}

/// mimalloc or the system allocator, as the environment said at the first allocation.
pub struct Allocator;

const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether this process allocates with the system allocator (`FEXPR_ALLOCATOR=system`).
pub fn system() -> bool {
    choice() == SYSTEM
}

/// The allocator's name, for reports.
#[allow(dead_code)] // not every binary that shares this file reports it
pub fn name() -> &'static str {
    if system() {
        "glibc malloc"
    } else {
        "mimalloc"
    }
}

fn choice() -> u8 {
    match CHOICE.load(Ordering::Relaxed) {
        UNDECIDED => {
            // Two threads deciding at once read the same environment: the same answer.
            let chosen = if system_requested() { SYSTEM } else { MIMALLOC };
            CHOICE.store(chosen, Ordering::Relaxed);
            chosen
        }
        chosen => chosen,
    }
}

#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comments
fn system_requested() -> bool {
    // SAFETY: `getenv` takes a NUL-terminated name and returns a pointer into the environment
    // (or null), which nothing in this process changes while it reads it; it does not allocate.
    let value = unsafe { libc::getenv(c"FEXPR_ALLOCATOR".as_ptr()) };
    // SAFETY: a non-null result of `getenv` is a NUL-terminated string.
    !value.is_null() && unsafe { std::ffi::CStr::from_ptr(value) }.to_bytes() == b"system"
}

#[allow(unsafe_code)] // the unsafe code below carries its SAFETY comments
                      // SAFETY: every call goes to the one allocator chosen before the first allocation, which made
                      // every block it is asked to free or resize; each upholds `GlobalAlloc`'s contract itself.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on.
        unsafe {
            if system() {
                System.alloc(layout)
            } else if word_aligned(layout.align()) {
                libmimalloc_sys::mi_malloc(layout.size()).cast()
            } else {
                mimalloc::MiMalloc.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on.
        unsafe {
            if system() {
                System.alloc_zeroed(layout)
            } else if word_aligned(layout.align()) {
                libmimalloc_sys::mi_zalloc(layout.size()).cast()
            } else {
                mimalloc::MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on; the block is the chosen allocator's.
        unsafe {
            if system() {
                System.dealloc(ptr, layout)
            } else {
                mimalloc::MiMalloc.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on; the block is the chosen allocator's.
        unsafe {
            if system() {
                System.realloc(ptr, layout, new_size)
            } else if word_aligned(layout.align()) {
                libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mimalloc::MiMalloc.realloc(ptr, layout, new_size)
            }
        }
    }
}

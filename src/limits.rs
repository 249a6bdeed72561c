//! Resource limits: every budget fexpr enforces, named after what it bounds, with a safe default.
//!
//! The evaluation limits are checked *before* the work or allocation they bound, in native
//! mode and in the sandbox alike. The sandbox limits (fuel, deadline, memory, wasm stack, host
//! calls) bound the wasmtime guest on top of that. SECURITY.md quotes these defaults.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// All budgets for one evaluation. `Limits::default()` is safe for untrusted model output.
///
/// ```
/// let mut limits = fexpr::Limits::default();
/// assert_eq!(limits.max_depth, 100);
/// limits.max_source_bytes = 4096; // tighten for a chat front-end
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Bytes of source text accepted, checked before anything else. Default 1 MiB.
    pub max_source_bytes: usize,
    /// Nesting depth of the expression (brackets, operator chains, calls), checked by a scan
    /// *before* the parser runs so no deep input reaches any recursive code. Default 100.
    pub max_depth: usize,
    /// Decimal digits in an integer literal or result (Python's own default is 4300).
    pub max_int_digits: usize,
    /// Bytes in one string or bytes value, including results of `+` and `*`. Default 1 MiB.
    pub max_str_bytes: usize,
    /// Elements in one value counted recursively (a list of 3 lists of 2 counts 9), including
    /// results of `+` and `*` and ndarray sizes. Default 100,000.
    pub max_collection_len: usize,
    /// Calls (tools, constructors, functions) in one input. Default 256.
    pub max_calls: usize,
    /// Approximate bytes of all values one input materializes (literals, variables used,
    /// results of operators and calls). Default 16 MiB.
    pub max_eval_bytes: usize,
    /// Bytes of one tool result in its compact encoding. Default 4 MiB.
    pub max_output_bytes: usize,
    /// Sandbox: wasm fuel (roughly, instructions) for one evaluation. Default 500,000,000.
    pub fuel: u64,
    /// Sandbox: wall-clock deadline for one evaluation, host calls included. Default 5 s.
    pub deadline: Duration,
    /// Sandbox: guest linear memory cap. Default 64 MiB.
    pub memory_bytes: usize,
    /// Sandbox: guest wasm stack. Default 1 MiB.
    pub wasm_stack_bytes: usize,
    /// Sandbox: host calls (tool invocations) one evaluation may make. Default 256.
    pub max_host_calls: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_source_bytes: 1 << 20,
            max_depth: 100,
            max_int_digits: 4300,
            max_str_bytes: 1 << 20,
            max_collection_len: 100_000,
            max_calls: 256,
            max_eval_bytes: 16 << 20,
            max_output_bytes: 4 << 20,
            fuel: 500_000_000,
            deadline: Duration::from_secs(5),
            memory_bytes: 64 << 20,
            wasm_stack_bytes: 1 << 20,
            max_host_calls: 256,
        }
    }
}

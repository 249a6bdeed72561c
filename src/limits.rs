//! Resource limits: every budget fexpr enforces, named after what it bounds, with a safe default.
//!
//! The evaluation limits are checked *before* the work or allocation they bound, in native
//! mode and in the sandbox alike. The deadlines bound the wall-clock time of a request and of
//! each tool call in both modes. The sandbox limits (fuel, memory, wasm stack, host calls)
//! bound the wasmtime guest on top of that. SECURITY.md quotes these defaults.

use serde::{Deserialize, Serialize};
use std::time::Duration;

use crate::error::{Error, ErrorKind};

/// All budgets for one request. `Limits::default()` is safe for untrusted model output.
///
/// New budgets may be added, so a `Limits` is made from the default with the setters, one per
/// field (each named after its field):
///
/// ```
/// use std::time::Duration;
/// let limits = fexpr::Limits::default()
///     .max_source_bytes(4096) // tighten for a chat front-end
///     .call_deadline(Duration::from_secs(2));
/// assert_eq!(limits.max_depth, 100);
/// assert_eq!(limits.max_source_bytes, 4096);
/// assert_eq!(limits.deadline, Duration::from_secs(30));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// Tool calls in one input, all units together. Default 256.
    pub max_calls: usize,
    /// Calls of record types and builtin functions (`Point(...)`, `np.array(...)`) in one
    /// input, all units together: the values the arguments build, bounded apart from the
    /// tool calls. Default 4,096.
    pub max_constructors: usize,
    /// Approximate bytes of all values one input materializes (literals, variables used,
    /// results of operators and calls). Default 16 MiB.
    pub max_eval_bytes: usize,
    /// Bytes of one tool result in its compact encoding. Default 4 MiB.
    pub max_output_bytes: usize,
    /// Sandbox: wasm fuel (roughly, instructions) for one evaluation. Default 500,000,000.
    pub fuel: u64,
    /// Wall-clock time of one request, natively and in the sandbox: natively it bounds the
    /// tool calls (the rest of an evaluation is bounded by the other limits), in the sandbox
    /// the whole evaluation, host calls included. A call still running then ends with a
    /// `Limit` error ([`LimitKind::Deadline`](crate::error::LimitKind::Deadline)). Default 30 s.
    pub deadline: Duration,
    /// Wall-clock time of one tool call: past it the call ends with a `Limit` error
    /// ([`LimitKind::CallDeadline`](crate::error::LimitKind::CallDeadline)) on time, and its
    /// future is dropped: an async tool is cancelled at its next `await`; a sync tool already
    /// running on tokio's blocking pool runs on (nothing can stop a thread) and its result is
    /// discarded; a sync tool that runs on the calling task cannot be interrupted at all.
    /// Waiting needs a Tokio runtime with time enabled (`#[tokio::main]`, `Runtime::new`).
    /// Default 10 s.
    pub call_deadline: Duration,
    /// Sandbox: guest linear memory cap. Default 64 MiB; at least
    /// [`MIN_MEMORY_BYTES`](Limits::MIN_MEMORY_BYTES), the memory the guest starts with.
    pub memory_bytes: usize,
    /// Sandbox: guest wasm stack. Default 1 MiB.
    pub wasm_stack_bytes: usize,
    /// Sandbox: tool invocations one evaluation may ask the host for (every call of every
    /// wave counts). Default 256.
    pub max_host_calls: u32,
    /// Characters of an observation, the text a model is shown for a result
    /// ([`ToolManager::observation`](crate::ToolManager::observation)): a longer one is cut
    /// and ends in `…`, a summary says how much it left out. Never bounds the output itself
    /// (that is [`max_output_bytes`](Limits::max_output_bytes)), nor what `fexpr serve`
    /// answers. Default 2,000.
    pub max_observation_chars: usize,
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
            max_constructors: 4096,
            max_eval_bytes: 16 << 20,
            max_output_bytes: 4 << 20,
            fuel: 500_000_000,
            deadline: Duration::from_secs(30),
            call_deadline: Duration::from_secs(10),
            memory_bytes: 64 << 20,
            wasm_stack_bytes: 1 << 20,
            max_host_calls: 256,
            max_observation_chars: 2000,
        }
    }
}

/// One setter per field of a configuration struct: `fn name(self, value) -> Self` (for
/// `#[non_exhaustive]` structs, which users cannot build with a struct literal).
macro_rules! setters {
    ($type:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        impl $type {
            $(
                #[doc = concat!("The same value with [`", stringify!($field), "`](", stringify!($type), "::", stringify!($field), ") set to `value`.")]
                pub fn $field(mut self, value: $ty) -> $type {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}
#[cfg(feature = "sandbox")]
pub(crate) use setters;

setters!(Limits {
    max_source_bytes: usize,
    max_depth: usize,
    max_int_digits: usize,
    max_str_bytes: usize,
    max_collection_len: usize,
    max_calls: usize,
    max_constructors: usize,
    max_eval_bytes: usize,
    max_output_bytes: usize,
    fuel: u64,
    deadline: Duration,
    call_deadline: Duration,
    memory_bytes: usize,
    wasm_stack_bytes: usize,
    max_host_calls: u32,
    max_observation_chars: usize,
});

impl Limits {
    /// The least [`memory_bytes`](Limits::memory_bytes) a sandboxed evaluation can start
    /// with: the fexpr guest's initial linear memory (3.5 MiB: its stack, its data, and the
    /// heap of a typical evaluation). Below it every evaluation would fail, so such limits are
    /// refused when the manager is built or the request made.
    pub const MIN_MEMORY_BYTES: usize = 56 * 64 * 1024;

    /// The hard ceiling of each limit that bounds memory or stack (by field name): a value
    /// above it could make fexpr allocate more than a host can give, or recurse deeper than a
    /// thread's stack, so [`check`](Limits::check) refuses it. `max_depth`'s ceiling (256) is
    /// `fexpr::value::MAX_DECODE_DEPTH` (no deeper value crosses the sandbox's wire or a
    /// JSON decoder); a request with a raised `max_depth` is evaluated on a stack sized for
    /// it. The other limits bound time (deadlines, fuel, calls) or are
    /// capped by [`SandboxConfig`](crate::sandbox::SandboxConfig) (memory, wasm stack).
    pub const CEILINGS: &'static [(&'static str, usize)] = &[
        ("max_source_bytes", 1 << 30),
        ("max_depth", 256),
        ("max_int_digits", 100_000),
        ("max_str_bytes", 1 << 28),
        ("max_collection_len", 10_000_000),
        ("max_eval_bytes", 1 << 30),
        ("max_output_bytes", 1 << 30),
    ];

    /// The value of each field [`CEILINGS`](Limits::CEILINGS) names.
    fn bounded(&self) -> [(&'static str, usize); 7] {
        [
            ("max_source_bytes", self.max_source_bytes),
            ("max_depth", self.max_depth),
            ("max_int_digits", self.max_int_digits),
            ("max_str_bytes", self.max_str_bytes),
            ("max_collection_len", self.max_collection_len),
            ("max_eval_bytes", self.max_eval_bytes),
            ("max_output_bytes", self.max_output_bytes),
        ]
    }

    /// Whether these limits can work at all; an [`ErrorKind::Config`] error says why not: a
    /// [`memory_bytes`](Limits::memory_bytes) below
    /// [`MIN_MEMORY_BYTES`](Limits::MIN_MEMORY_BYTES), or a limit above its ceiling
    /// ([`CEILINGS`](Limits::CEILINGS)). The manager's builder, every request and the CLI's
    /// `--limit` check them before anything runs.
    ///
    /// ```
    /// let error = fexpr::Limits::default().memory_bytes(1 << 20).check().unwrap_err();
    /// assert_eq!(error.message, "Limits::memory_bytes is 1048576 bytes, below the 3670016 bytes (3.5 MiB) the sandbox's guest starts with: no evaluation could run");
    /// let error = fexpr::Limits::default().max_depth(1_000_000).check().unwrap_err();
    /// assert_eq!(error.message, "Limits::max_depth is 1000000, above its ceiling of 256");
    /// assert!(fexpr::Limits::default().max_depth(256).check().is_ok());
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        for ((name, value), (_, ceiling)) in self.bounded().into_iter().zip(Limits::CEILINGS) {
            if value > *ceiling {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!("Limits::{name} is {value}, above its ceiling of {ceiling}"),
                )
                .with_hint(format!(
                    "set {name} to at most {ceiling}: above it one input could exhaust the \
                     host's memory or stack (SECURITY.md lists the ceilings)"
                )));
            }
        }
        if self.memory_bytes < Limits::MIN_MEMORY_BYTES {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "Limits::memory_bytes is {} bytes, below the {} bytes (3.5 MiB) the \
                     sandbox's guest starts with: no evaluation could run",
                    self.memory_bytes,
                    Limits::MIN_MEMORY_BYTES
                ),
            )
            .with_hint(format!(
                "set memory_bytes to at least Limits::MIN_MEMORY_BYTES ({})",
                Limits::MIN_MEMORY_BYTES
            )));
        }
        Ok(())
    }
}

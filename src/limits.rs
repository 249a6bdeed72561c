//! Resource limits: every budget fexpr enforces, named after what it bounds, with a safe default.
//!
//! The evaluation limits are checked *before* the work or allocation they bound, in native
//! mode and in the sandbox alike. The deadlines bound the wall-clock time of a request and of
//! each tool call in both modes. The sandbox limits (fuel, memory, wasm stack, host calls)
//! bound the wasmtime guest on top of that. SECURITY.md quotes these defaults.
//!
//! # Adding a limit
//!
//! A limit is one entry of the table at the end of this file (`limit_table!`): its doc
//! comment, its type and default, its [`LimitKind`] variant, where it applies, what it bounds
//! (the words of SECURITY.md's table) and its ceiling if it bounds memory or stack. The entry
//! makes the [`Limits`] field and its setter, the default, the ceiling in
//! [`Limits::CEILINGS`] and [`Limits::check`], the [`LimitKind`] variant with its
//! [`field`](LimitKind::field) name and serde form, and its row in [`Limits::TABLE`] (which the
//! CLI's `--limit NAME=N`, the Python `Limits(...)` and SECURITY.md's table, through
//! `tests/security_md.rs`, are checked against or built from). What is left is the check
//! itself, in the stage that makes the data (ARCHITECTURE.md, "A limit"), and its edge in
//! `tests/limits.rs`.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where a limit is enforced: in both modes, or only by the sandbox's guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitMode {
    /// Natively and in the sandbox.
    Both,
    /// Only in the sandbox (wasm fuel, memory, stack, host calls).
    Sandbox,
}

impl LimitMode {
    /// The word SECURITY.md's table uses: `both` or `sandbox`.
    pub fn name(self) -> &'static str {
        match self {
            LimitMode::Both => "both",
            LimitMode::Sandbox => "sandbox",
        }
    }
}

/// One row of [`Limits::TABLE`]: a field of [`Limits`] described as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitInfo {
    /// The field's name (`"max_calls"`): the setter, the serde key, `--limit NAME=N`, the
    /// Python keyword.
    pub name: &'static str,
    /// The [`LimitKind`] an error over it carries.
    pub kind: LimitKind,
    /// Where it is enforced.
    pub mode: LimitMode,
    /// What it bounds, in a few words (SECURITY.md's "Bounds" column).
    pub bounds: &'static str,
    /// The hard ceiling of a limit that bounds memory or stack (see [`Limits::CEILINGS`]).
    pub ceiling: Option<usize>,
    /// Whether the value is a duration (seconds on the command line and in Python).
    pub duration: bool,
}

/// Whether `T` is a duration, for [`LimitInfo::duration`].
trait LimitValue: Sized {
    const DURATION: bool = false;
    /// The value compared with a ceiling (a duration has none).
    fn amount(&self) -> u128;
    /// The value as a wasm32 guest holds it (see [`Limits::for_wasm32`]).
    fn for_wasm32(self) -> Self {
        self
    }
}

impl LimitValue for usize {
    fn amount(&self) -> u128 {
        *self as u128
    }
    /// At most `u32::MAX`: no count or size in a wasm32 guest reaches it, so the limit means
    /// the same there.
    fn for_wasm32(self) -> Self {
        self.min(u32::MAX as usize)
    }
}

impl LimitValue for u64 {
    fn amount(&self) -> u128 {
        u128::from(*self)
    }
}

impl LimitValue for u32 {
    fn amount(&self) -> u128 {
        u128::from(*self)
    }
}

impl LimitValue for Duration {
    const DURATION: bool = true;
    fn amount(&self) -> u128 {
        self.as_nanos()
    }
}

/// A duration given as a number of seconds, checked: how the CLI (`--limit deadline=2.5`,
/// `--session-idle`, `--mcp-timeout`) and Python (`Limits(deadline=2.5)`) take one.
///
/// # Errors
/// What the number should have been, to follow "`deadline` must be": a negative number, NaN
/// and anything past [`Duration::MAX`] are refused.
///
/// ```
/// use std::time::Duration;
/// use fexpr::limits::seconds;
///
/// assert_eq!(seconds(2.5), Ok(Duration::from_millis(2500)));
/// assert_eq!(
///     seconds(1e300).unwrap_err(),
///     "a number of seconds from 0 to 18446744073709551615, not 1e300"
/// );
/// assert!(seconds(-1.0).unwrap_err().ends_with("not -1.0"));
/// assert!(seconds(f64::NAN).unwrap_err().ends_with("not NaN"));
/// ```
pub fn seconds(value: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        format!(
            "a number of seconds from 0 to {}, not {value:?}",
            Duration::MAX.as_secs()
        )
    })
}

/// Builds [`Limits`], [`LimitKind`] and [`Limits::TABLE`] from the one table of limits (see
/// the module documentation). `$callback` receives the entries: `limit_table!(define)` here;
/// the Python binding builds its `Limits` class the same way (`fexpr::limit_table!`).
#[doc(hidden)]
#[macro_export]
macro_rules! limit_table {
    ($callback:ident) => {
        $callback! {
            /// Bytes of source text accepted, checked before anything else. Default 1 MiB.
            max_source_bytes: usize = 1 << 20, SourceBytes, Both, ceiling 1 << 30,
                "bytes of source text or JSON, checked before anything else";
            /// Nesting depth of the expression (brackets, operator chains, calls), checked by a scan
            /// *before* the parser runs so no deep input reaches any recursive code. Default 100.
            max_depth: usize = 100, Depth, Both, ceiling 256,
                "nesting depth (brackets, operator chains, calls; JSON arrays and objects), checked before parsing";
            /// Decimal digits in an integer literal or result (Python's own default is 4300).
            max_int_digits: usize = 4300, IntDigits, Both, ceiling 100_000,
                "decimal digits of an integer literal or result";
            /// Bytes in one string or bytes value, including results of `+` and `*`. Default 1 MiB.
            max_str_bytes: usize = 1 << 20, StrBytes, Both, ceiling 1 << 28,
                "bytes of one string or bytes value, literals and results of `+` and `*` included";
            /// Elements in one value counted recursively (a list of 3 lists of 2 counts 9), including
            /// results of `+` and `*` and ndarray sizes. Default 100,000.
            max_collection_len: usize = 100_000, CollectionLen, Both, ceiling 10_000_000,
                "elements of one value counted recursively, results of `+` and `*` and ndarray sizes included";
            /// Tool calls in one input, all units together. Default 256.
            max_calls: usize = 256, Calls, Both,
                "tool calls in one input, all units together";
            /// Calls of record types and builtin functions (`Point(...)`, `np.array(...)`) in one
            /// input, all units together, on every door (model text, expressions, JSON, natively
            /// and sandboxed): the values the arguments build, bounded apart from the tool calls.
            /// Default 4,096.
            max_constructors: usize = 4096, Constructors, Both,
                "calls of record types and builtin functions (`Point(...)`, `np.array(...)`) in one input, all units together";
            /// Approximate bytes of all values one input materializes (literals, variables used,
            /// results of operators and calls); also, separately, of all tool results of one
            /// request, whatever the tool (Rust, Python, MCP). Default 16 MiB.
            max_eval_bytes: usize = 16 << 20, EvalBytes, Both, ceiling 1 << 30,
                "approximate bytes of all values one input materializes; also, separately, of all tool results of one request (every call of every door, natively and for a sandbox guest, a Python tool's result while it is converted: the call that goes over fails, later calls find it spent)";
            /// Bytes of one tool result in its compact encoding. Default 4 MiB.
            max_output_bytes: usize = 4 << 20, OutputBytes, Both, ceiling 1 << 30,
                "bytes of one tool result in its compact encoding";
            /// Sandbox: wasm fuel (roughly, instructions) for one evaluation. Default 500,000,000.
            fuel: u64 = 500_000_000, Fuel, Sandbox,
                "wasm fuel (about one unit per instruction) for one evaluation";
            /// Wall-clock time of one request, natively and in the sandbox: natively it bounds the
            /// tool calls (the rest of an evaluation is bounded by the other limits), in the sandbox
            /// the whole evaluation, host calls included. A call still running then ends with a
            /// `Limit` error ([`LimitKind::Deadline`](crate::error::LimitKind::Deadline)). Default 30 s.
            deadline: Duration = Duration::from_secs(30), Deadline, Both,
                "wall-clock time of one request: its tool calls natively, the whole evaluation (host calls included) in the sandbox";
            /// Wall-clock time of one tool call: past it the call ends with a `Limit` error
            /// ([`LimitKind::CallDeadline`](crate::error::LimitKind::CallDeadline)) on time, and its
            /// future is dropped: an async tool is cancelled at its next `await`; a sync tool already
            /// running on tokio's blocking pool runs on (nothing can stop a thread) and its result is
            /// discarded; a sync tool that runs on the calling task cannot be interrupted at all.
            /// Waiting needs a Tokio runtime with time enabled (`#[tokio::main]`, `Runtime::new`).
            /// Default 10 s.
            call_deadline: Duration = Duration::from_secs(10), CallDeadline, Both,
                "wall-clock time of one tool call; past it the caller gets a `Limit` error and the call is dropped (a sync tool already running on a thread runs on, its result discarded)";
            /// Sandbox: guest linear memory cap. Default 64 MiB; at least
            /// [`MIN_MEMORY_BYTES`](Limits::MIN_MEMORY_BYTES), the memory the guest starts with.
            memory_bytes: usize = 64 << 20, Memory, Sandbox,
                "guest linear memory; at least `Limits::MIN_MEMORY_BYTES` (3670016, what the guest starts with), else refused before anything runs";
            /// Sandbox: guest wasm stack. Default 1 MiB.
            wasm_stack_bytes: usize = 1 << 20, WasmStack, Sandbox,
                "guest wasm stack (see `max_wasm_stack_bytes`)";
            /// Sandbox: tool invocations one evaluation may ask the host for (every call of every
            /// wave counts). Default 256.
            max_host_calls: u32 = 256, HostCalls, Sandbox,
                "tool invocations one evaluation asks the host for (every call of every wave)";
            /// Characters of an observation, the text a model is shown for a result
            /// ([`ToolManager::observation`](crate::ToolManager::observation)): a longer one is cut
            /// and ends in `…`, a summary says how much it left out. Never bounds the output itself
            /// (that is [`max_output_bytes`](Limits::max_output_bytes)), nor what `fexpr serve`
            /// answers. Default 2,000.
            max_observation_chars: usize = 2000, ObservationChars, Both,
                "characters of the text a model is shown for a result (`ToolManager::observation`); a longer one is cut and ends in `…` (never the result itself, nor what `fexpr serve` answers)";
        }
    };
}

/// The items [`limit_table!`] describes: `Limits` (fields, default, setters, ceilings, table)
/// and `LimitKind`.
macro_rules! define_limits {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty = $default:expr, $kind:ident, $mode:ident, $(ceiling $ceiling:expr,)?
            $bounds:literal;
    )*) => {
        /// All budgets for one request. `Limits::default()` is safe for untrusted model output.
        ///
        /// New budgets may be added, so a `Limits` is made from the default with the setters, one
        /// per field (each named after its field):
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
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for Limits {
            fn default() -> Limits {
                Limits { $( $field: $default, )* }
            }
        }

        impl Limits {
            $(
                #[doc = concat!("The same value with [`", stringify!($field), "`](Limits::", stringify!($field), ") set to `value`.")]
                pub fn $field(mut self, value: $ty) -> Limits {
                    self.$field = value;
                    self
                }
            )*

            /// Every field as data, in order: its name, [`LimitKind`], mode, what it bounds and
            /// its ceiling. SECURITY.md's table is this table with the defaults
            /// (`tests/security_md.rs`).
            ///
            /// ```
            /// let calls = fexpr::Limits::TABLE.iter().find(|l| l.name == "max_calls").unwrap();
            /// assert_eq!(calls.kind, fexpr::LimitKind::Calls);
            /// assert_eq!(calls.ceiling, None);
            /// ```
            pub const TABLE: &'static [LimitInfo] = &[
                $( LimitInfo {
                    name: stringify!($field),
                    kind: LimitKind::$kind,
                    mode: LimitMode::$mode,
                    bounds: $bounds,
                    ceiling: ceiling!($($ceiling)?),
                    duration: <$ty as LimitValue>::DURATION,
                }, )*
            ];

            /// The hard ceiling of each limit that bounds memory or stack (by field name): a
            /// value above it could make fexpr allocate more than a host can give, or recurse
            /// deeper than a thread's stack, so [`check`](Limits::check) refuses it.
            /// `max_depth`'s ceiling (256) is `fexpr::value::MAX_DECODE_DEPTH` (no deeper value
            /// crosses the sandbox's wire or a JSON decoder); a request with a raised
            /// `max_depth` is evaluated on a stack sized for it. The other limits bound time
            /// (deadlines, fuel, calls) or are capped by
            /// [`SandboxConfig`](crate::sandbox::SandboxConfig) (memory, wasm stack).
            pub const CEILINGS: &'static [(&'static str, usize)] = &[
                $( $( (stringify!($field), $ceiling), )? )*
            ];

            /// The same limits as the sandbox's wasm32 guest reads them: a `usize` above
            /// `u32::MAX` (the guest's `usize`) is lowered to it, which no count or size in the
            /// guest can reach. Without it a limit set that high (`max_calls = usize::MAX` for
            /// "no limit") could not cross the wire, and every sandboxed request failed.
            pub(crate) fn for_wasm32(&self) -> Limits {
                Limits { $( $field: self.$field.for_wasm32(), )* }
            }

            /// The first field above its ceiling: its name, value and ceiling.
            fn over_ceiling(&self) -> Option<(&'static str, u128, usize)> {
                $( $(
                    if self.$field.amount() > $ceiling as u128 {
                        return Some((stringify!($field), self.$field.amount(), $ceiling));
                    }
                )? )*
                None
            }
        }

        /// Which budget of [`Limits`] (or of the sandbox) an
        /// [`ErrorKind::Limit`](crate::ErrorKind::Limit) error hit:
        /// [`Error::limit`](crate::Error::limit) holds it, serialized as the field's name
        /// (`"max_calls"`).
        ///
        /// ```
        /// use fexpr::error::LimitKind;
        /// assert_eq!(LimitKind::Calls.field(), "max_calls");
        /// assert_eq!(serde_json::to_value(LimitKind::Deadline).unwrap(), "deadline");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum LimitKind {
            $(
                #[doc = concat!("[`Limits::", stringify!($field), "`](crate::Limits::", stringify!($field), ").")]
                $kind,
            )*
            /// The wait of an environment pool for a free environment (`EnvPool::timeout`).
            PoolWait,
        }

        impl LimitKind {
            /// The name of the budget: the [`Limits`] field (`"max_calls"`), or
            /// `"pool_timeout"` for the wait of a pool, which lives elsewhere.
            pub fn field(self) -> &'static str {
                match self {
                    $( LimitKind::$kind => stringify!($field), )*
                    LimitKind::PoolWait => "pool_timeout",
                }
            }

            /// The kind whose [`field`](LimitKind::field) is `name`.
            pub fn from_field(name: &str) -> Option<LimitKind> {
                match name {
                    $( stringify!($field) => Some(LimitKind::$kind), )*
                    "pool_timeout" => Some(LimitKind::PoolWait),
                    _ => None,
                }
            }
        }
    };
}

/// A ceiling or none, for [`Limits::TABLE`].
macro_rules! ceiling {
    () => {
        None
    };
    ($ceiling:expr) => {
        Some($ceiling)
    };
}

limit_table!(define_limits);

impl LimitKind {
    /// Where a program raises this budget, for hints.
    pub fn setting(self) -> String {
        match self {
            LimitKind::WasmStack => "SandboxConfig::max_wasm_stack_bytes".to_string(),
            LimitKind::PoolWait => "EnvPool::timeout".to_string(),
            other => format!("Limits::{}", other.field()),
        }
    }
}

impl Serialize for LimitKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.field())
    }
}

impl<'de> Deserialize<'de> for LimitKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<LimitKind, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        LimitKind::from_field(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown limit `{name}`")))
    }
}

/// One setter per field of a configuration struct: `fn name(self, value) -> Self` (for
/// `#[non_exhaustive]` structs, which users cannot build with a struct literal).
#[cfg(feature = "sandbox")]
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

impl Limits {
    /// The least [`memory_bytes`](Limits::memory_bytes) a sandboxed evaluation can start
    /// with: the fexpr guest's initial linear memory (3.5 MiB: its stack, its data, and the
    /// heap of a typical evaluation). Below it every evaluation would fail, so such limits are
    /// refused when the manager is built or the request made.
    pub const MIN_MEMORY_BYTES: usize = 56 * 64 * 1024;

    /// Why these limits cannot work, if they cannot: a limit above its ceiling
    /// ([`CEILINGS`](Limits::CEILINGS)): `(message, hint)`, or a
    /// [`memory_bytes`](Limits::memory_bytes) below
    /// [`MIN_MEMORY_BYTES`](Limits::MIN_MEMORY_BYTES). [`Limits::check`] makes it an error.
    pub(crate) fn problem(&self) -> Option<(String, String)> {
        if let Some((name, value, ceiling)) = self.over_ceiling() {
            return Some((
                format!("Limits::{name} is {value}, above its ceiling of {ceiling}"),
                format!(
                    "set {name} to at most {ceiling}: above it one input could exhaust the \
                     host's memory or stack (SECURITY.md lists the ceilings)"
                ),
            ));
        }
        if self.memory_bytes < Limits::MIN_MEMORY_BYTES {
            return Some((
                format!(
                    "Limits::memory_bytes is {} bytes, below the {} bytes (3.5 MiB) the \
                     sandbox's guest starts with: no evaluation could run",
                    self.memory_bytes,
                    Limits::MIN_MEMORY_BYTES
                ),
                format!(
                    "set memory_bytes to at least Limits::MIN_MEMORY_BYTES ({})",
                    Limits::MIN_MEMORY_BYTES
                ),
            ));
        }
        None
    }
}

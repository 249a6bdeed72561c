//! Every call into the engine's execution API, in one place: a Python method names an input
//! and its options ([`Call`]), and the engine's request API ([`fexpr::ToolManager::run`]) runs
//! it. The rest of the binding builds a `Call` and hands back the [`Outputs`].

use std::future::{Future, IntoFuture};

use fexpr::check::Checked;
use fexpr::error::LimitKind;
use fexpr::repair::RepairOptions;
use fexpr::{Error, Function, Input, Limits, Response, ToolManager};
use futures_util::future::{Either, FutureExt};

/// What to run, and how: one [`fexpr::Request`].
pub struct Call {
    pub input: Input,
    /// Inside the wasmtime sandbox.
    pub sandboxed: bool,
    /// Instead of the manager's.
    pub limits: Option<Limits>,
    /// Instead of the input's default.
    pub repairs: Option<RepairOptions>,
    /// The caller's session (its id).
    pub session: fexpr::Session,
    /// A single-call method's input: one output, a list of calls refused before any runs.
    pub one: bool,
}

/// What running a [`Call`] gave.
pub type Outputs = Response;

/// Run `call` with `manager` through its request API. The request is made now and the
/// future holds only its box (the request's own futures are boxed), so what the caller's
/// executor moves before polling it is a few words, not the call and the request.
pub fn run(manager: &ToolManager, call: Call) -> impl Future<Output = Outputs> + Send + 'static {
    let mut request = manager.run(call.input).session(call.session);
    if let Some(limits) = call.limits {
        request = request.limits(limits);
    }
    if let Some(repairs) = call.repairs {
        request = request.repair(repairs);
    }
    if call.sandboxed {
        request = request.sandboxed();
    }
    if call.one {
        return Either::Left(request.one().map(|output| {
            let mut response = Response::default();
            response.outputs.push(output);
            response
        }));
    }
    Either::Right(request.into_future())
}

/// How a Python caller runs a list of calls.
const ONE_CALL_HINT: &str =
    "use ToolManager.run(...) or ToolManager.execute(...) for a list of calls";

/// `error` in the words of a Python caller: hints naming the Rust API (`Limits::max_calls`,
/// `ToolManager::run`) name the Python one (`Limits(max_calls=...)`, `ToolManager.run(...)`),
/// and so do messages about limits (`Limits::max_depth is 300, above its ceiling` reads
/// `Limits(max_depth=300) is above its ceiling`; see [`python_names`]).
/// python/README.md lists the mapping.
pub fn in_python(mut error: Error) -> Error {
    error.message = python_names(&error.message);
    let Some(hint) = error.hint.take() else {
        return error;
    };
    let mut hint = hint.replace("use ToolManager::run for a list of calls", ONE_CALL_HINT);
    if let Some(LimitKind::WasmStack) = error.limit {
        hint = hint.replace(
            &LimitKind::WasmStack.setting(),
            "Limits(wasm_stack_bytes=...)",
        );
    }
    error.hint = Some(python_names(&hint));
    error
}

/// `text` with the Rust names of limits (`Limits::NAME`) in Python's words:
/// `Limits::NAME is N[ bytes],` reads `Limits(NAME=N) is`, `Limits::MIN_MEMORY_BYTES (N)`
/// reads `N` (Python has no such constant), any other `Limits::NAME` reads `Limits(NAME=...)`.
pub fn python_names(text: &str) -> String {
    const RUST: &str = "Limits::";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(RUST) {
        out.push_str(&rest[..at]);
        let after = &rest[at + RUST.len()..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let (name, after) = after.split_at(name_len);
        rest = if name == "MIN_MEMORY_BYTES" {
            let minimum = fexpr::Limits::MIN_MEMORY_BYTES.to_string();
            out.push_str(&minimum);
            after
                .strip_prefix(&format!(" ({minimum})"))
                .unwrap_or(after)
        } else if let Some((value, tail)) = after.strip_prefix(" is ").and_then(leading_number) {
            let tail = tail.strip_prefix(" bytes").unwrap_or(tail);
            let tail = tail.strip_prefix(',').unwrap_or(tail);
            out.push_str(&format!("Limits({name}={value}) is"));
            if !tail.starts_with(' ') && !tail.is_empty() {
                out.push(' ');
            }
            tail
        } else {
            out.push_str(&format!("Limits({name}=...)"));
            after
        };
    }
    out.push_str(rest);
    out
}

/// The digits `text` starts with (at least one) and what follows them.
fn leading_number(text: &str) -> Option<(&str, &str)> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    (digits > 0).then(|| text.split_at(digits))
}

/// Parse one call expression and evaluate its arguments without running anything.
pub fn parse_func_expr(manager: &ToolManager, text: &str) -> Result<Function, Error> {
    manager.parse_func_expr(text)
}

/// Check the calls in a model's raw output against the tools, without running them.
pub fn check_model_output(manager: &ToolManager, text: &str, repairs: &RepairOptions) -> Checked {
    manager
        .run(Input::model_output(text))
        .repair(*repairs)
        .check()
}

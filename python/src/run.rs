//! Every call into the engine's execution API, in one place: a Python method names an input
//! and its options ([`Call`]), and the engine's request API ([`fexpr::ToolManager::run`]) runs
//! it. The rest of the binding builds a `Call` and hands back the [`Outputs`].

use fexpr::check::Checked;
use fexpr::error::LimitKind;
use fexpr::repair::RepairOptions;
use fexpr::syntax::ExprKind;
use fexpr::{Error, ErrorKind, Function, FunctionOutput, Input, Limits, Response, ToolManager};

/// What to run, and how: one [`fexpr::Request`].
pub struct Call {
    pub input: Input,
    /// Inside the wasmtime sandbox.
    pub sandboxed: bool,
    /// Instead of the manager's.
    pub limits: Option<Limits>,
    /// Instead of the input's default.
    pub repairs: Option<RepairOptions>,
}

/// What running a [`Call`] gave.
pub type Outputs = Response;

/// Run `call` with `manager` through its request API. The request's future is boxed: it is a
/// few KiB, and this one is moved into the executor.
pub async fn run(manager: &ToolManager, call: Call) -> Outputs {
    let mut request = manager.run(call.input);
    if let Some(limits) = call.limits {
        request = request.limits(limits);
    }
    if let Some(repairs) = call.repairs {
        request = request.repair(repairs);
    }
    if call.sandboxed {
        request = request.sandboxed();
    }
    Box::pin(std::future::IntoFuture::into_future(request)).await
}

/// The output refusing `text` as the input of a single-call method when it is a list or tuple
/// of other than one call: read before anything runs, so that nothing does.
pub fn not_one_call(text: &str, limits: &Limits) -> Option<FunctionOutput> {
    let tree = fexpr::syntax::parse(text, limits).ok()?;
    let (ExprKind::List(items) | ExprKind::Tuple(items)) = &tree.kind else {
        return None;
    };
    if items.len() == 1 {
        return None;
    }
    let error = Error::new(
        ErrorKind::Unsupported,
        format!("expected one call, found {}; none ran", items.len()),
    )
    .at(tree.span)
    .with_hint(ONE_CALL_HINT);
    Some(FunctionOutput::failed(
        fexpr::error::clip(text, 60),
        text,
        error,
    ))
}

/// How a Python caller runs a list of calls.
const ONE_CALL_HINT: &str =
    "use ToolManager.run(...) or ToolManager.execute(...) for a list of calls";

/// `error` in the words of a Python caller: hints naming the Rust API (`Limits::max_calls`,
/// `ToolManager::run`) name the Python one (`Limits(max_calls=...)`, `ToolManager.run(...)`).
/// python/README.md lists the mapping.
pub fn in_python(mut error: Error) -> Error {
    let Some(hint) = error.hint.take() else {
        return error;
    };
    let mut hint = hint.replace("use ToolManager::run for a list of calls", ONE_CALL_HINT);
    if let Some(kind) = error.limit {
        let rust = kind.setting();
        let python = match kind {
            LimitKind::WasmStack => Some("Limits(wasm_stack_bytes=...)".to_string()),
            LimitKind::PoolWait => None,
            other => Some(format!("Limits({}=...)", other.field())),
        };
        if let Some(python) = python {
            hint = hint.replace(&rust, &python);
        }
    }
    error.hint = Some(hint);
    error
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

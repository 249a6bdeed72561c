//! Every call into the engine's execution API, in one place: what the Python methods ask for
//! ([`Call`]) and how the [`fexpr::ToolManager`] runs it. The rest of the binding builds a
//! `Call` and hands back the [`Outputs`].

use fexpr::check::Checked;
use fexpr::repair::RepairOptions;
use fexpr::{Error, Function, FunctionExpression, FunctionOutput, Input, Response, ToolManager};

/// What to run.
pub enum Call {
    /// A `Function` (name and arguments): bound and run on the host.
    Func(Function),
    /// One call expression.
    FuncExpr { text: String, sandboxed: bool },
    /// Several call expressions, concurrently.
    FuncExprs {
        exprs: Vec<FunctionExpression>,
        sandboxed: bool,
    },
    /// What a model wrote as an expression: one call or a list of calls.
    Expr { text: String, sandboxed: bool },
    /// Calls as JSON text (fexpr's JSON forms: `{"name": ..., "kwargs": ...}`, a list of
    /// them, OpenAI's and Anthropic's tool calls).
    Json { text: String, sandboxed: bool },
    /// A model's raw output (prose, fences, JSON forms), repaired.
    ModelOutput {
        text: String,
        repairs: RepairOptions,
        sandboxed: bool,
    },
}

/// What running a [`Call`] gave.
pub enum Outputs {
    One(Box<FunctionOutput>),
    Many(Vec<FunctionOutput>),
    Run(Response),
}

/// Run `call` with `manager`: one [`fexpr::Request`] per call. Each engine future is boxed:
/// they are a few KiB, and this one is moved into the executor.
pub async fn run(manager: &ToolManager, call: Call) -> Outputs {
    let (input, sandboxed) = match call {
        Call::Func(func) => {
            return Outputs::One(Box::new(Box::pin(manager.execute_func(func)).await))
        }
        Call::FuncExpr { text, sandboxed } => {
            return Outputs::One(Box::new(if sandboxed {
                Box::pin(manager.execute_func_expr_via_sandbox(&text)).await
            } else {
                Box::pin(manager.execute_func_expr(&text)).await
            }))
        }
        Call::FuncExprs { exprs, sandboxed } => {
            return Outputs::Many(if sandboxed {
                Box::pin(manager.execute_func_exprs_via_sandbox(&exprs)).await
            } else {
                Box::pin(manager.execute_func_exprs(&exprs)).await
            })
        }
        Call::Expr { text, sandboxed } => (manager.run(Input::expr(text)), sandboxed),
        Call::Json { text, sandboxed } => (manager.run(Input::json(text)), sandboxed),
        Call::ModelOutput {
            text,
            repairs,
            sandboxed,
        } => {
            let request = manager.run(Input::model_output(text)).repair(repairs);
            let request = if sandboxed {
                request.sandboxed()
            } else {
                request
            };
            return Outputs::Run(request.await);
        }
    };
    let request = if sandboxed { input.sandboxed() } else { input };
    Outputs::Many(request.await.outputs)
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

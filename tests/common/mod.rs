//! Shared by the integration tests: run what a test gives natively and — with the `sandbox`
//! feature — inside the wasmtime sandbox too, asserting that both paths give the same outputs.
//! Every expression of the native suites is thereby a differential test of the sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step
#![allow(dead_code)]

use fexpr::{FunctionOutput, Input, ToolManager};

/// A runtime for one test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// `manager.run(input)` natively, checked against the same request `.sandboxed()`; every
/// sandboxed output of an input that was evaluated has a receipt.
pub fn run(manager: &ToolManager, input: Input) -> Vec<FunctionOutput> {
    let rt = runtime();
    #[cfg(feature = "sandbox")]
    let shown = format!("{input:?}");
    #[cfg(feature = "sandbox")]
    let again = input.clone();
    let native = rt.block_on(async { manager.run(input).await.outputs });
    #[cfg(feature = "sandbox")]
    {
        let sandboxed = rt.block_on(async { manager.run(again).sandboxed().await.outputs });
        assert!(
            sandboxed
                .iter()
                .all(|o| o.receipt.is_some() || o.input.is_empty()),
            "{sandboxed:?}"
        );
        assert_same(&shown, &native, &sandboxed);
    }
    native
}

/// [`run`] of `Input::expr(text)`.
pub fn run_expr(manager: &ToolManager, text: &str) -> Vec<FunctionOutput> {
    run(manager, Input::expr(text))
}

/// [`run`] of `Input::json(text)`.
pub fn run_json(manager: &ToolManager, text: &str) -> Vec<FunctionOutput> {
    run(manager, Input::json(text))
}

/// [`run`] of `Input::openai(json)` (any JSON form already parsed).
pub fn run_json_value(manager: &ToolManager, json: &serde_json::Value) -> Vec<FunctionOutput> {
    run(manager, Input::openai(json.clone()))
}
/// The sandboxed outputs equal the native ones in everything but the receipt and the
/// generated call ids (each run generates its own), and every sandboxed evaluation has one.
#[cfg(feature = "sandbox")]
pub fn assert_same(input: &str, native: &[FunctionOutput], sandboxed: &[FunctionOutput]) {
    let strip = |outputs: &[FunctionOutput]| -> Vec<FunctionOutput> {
        outputs
            .iter()
            .cloned()
            .map(|mut output| {
                output.receipt = None;
                if output.call_id.starts_with("call_") && output.call_id.len() == 29 {
                    output.call_id = String::new();
                }
                output
            })
            .collect()
    };
    let (native, stripped) = (strip(native), strip(sandboxed));
    if native != stripped {
        let show = |outputs: &[FunctionOutput]| fexpr::error::clip(&format!("{outputs:?}"), 3000);
        panic!(
            "native and sandboxed outputs differ for {:?}\n native: {}\nsandbox: {}",
            fexpr::error::clip(input, 200),
            show(&native),
            show(&stripped)
        );
    }
}

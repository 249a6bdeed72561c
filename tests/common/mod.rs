//! Shared by the integration tests: run what a test gives natively and — with the `sandbox`
//! feature — inside the wasmtime sandbox too, asserting that both paths give the same outputs.
//! Every expression of the native suites is thereby a differential test of the sandbox.
#![allow(dead_code)]

use fexpr::{FunctionOutput, ToolManager};

/// A runtime for one test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// `manager.execute(text)`, checked against `manager.execute_via_sandbox(text)`.
pub fn execute(manager: &ToolManager, text: &str) -> Vec<FunctionOutput> {
    let rt = runtime();
    let native = rt.block_on(manager.execute(text));
    #[cfg(feature = "sandbox")]
    {
        let sandboxed = rt.block_on(manager.execute_via_sandbox(text));
        assert_same(text, &native, &sandboxed);
    }
    native
}

/// `manager.execute_json_text(text)`, checked against
/// `manager.execute_json_text_via_sandbox(text)`; every sandboxed output has a receipt.
pub fn execute_json_text(manager: &ToolManager, text: &str) -> Vec<FunctionOutput> {
    let rt = runtime();
    let native = rt.block_on(manager.execute_json_text(text));
    #[cfg(feature = "sandbox")]
    {
        let sandboxed = rt.block_on(manager.execute_json_text_via_sandbox(text));
        assert!(
            sandboxed.iter().all(|o| o.receipt.is_some()),
            "{sandboxed:?}"
        );
        assert_same(text, &native, &sandboxed);
    }
    native
}

/// `manager.execute_json(json)`, checked against `manager.execute_json_via_sandbox(json)`.
pub fn execute_json(manager: &ToolManager, json: &serde_json::Value) -> Vec<FunctionOutput> {
    let rt = runtime();
    let native = rt.block_on(manager.execute_json(json));
    #[cfg(feature = "sandbox")]
    {
        let sandboxed = rt.block_on(manager.execute_json_via_sandbox(json));
        assert_same(&json.to_string(), &native, &sandboxed);
    }
    native
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

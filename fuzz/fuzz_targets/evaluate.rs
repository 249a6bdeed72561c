//! Any text, executed natively against the demo toolset as an expression and as model output:
//! every call ends in an output or a structured error, and nothing panics.
#![no_main]

use fexpr::Input;
use libfuzzer_sys::fuzz_target;

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    static MANAGER: fexpr::ToolManager = fexpr::demo::manager();
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // No panic, no hang; an output has a value or an error by its type. As expression text,
    // and as model output (call position, repairs, the run of a call as written).
    for input in [Input::expr(text), Input::model_output(text)] {
        let _ = MANAGER.with(|m| RUNTIME.with(|rt| rt.block_on(async { m.run(input).await.outputs })));
    }
});

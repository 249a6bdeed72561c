//! Any text, executed natively against the demo toolset: every call ends in an output or a
//! structured error, and nothing panics.
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
    let outputs = MANAGER.with(|m| RUNTIME.with(|rt| rt.block_on(async { m.run(Input::expr(text)).await.outputs })));
    for out in &outputs {
        assert!(
            out.output.is_some() != out.error.is_some(),
            "{text:?}: an output must have a value or an error: {out:?}"
        );
    }
});

// The context is injected, never given by the model: it has no default.
use fexpr::CallContext;

#[fexpr::tool]
fn whoami(#[default(0)] ctx: CallContext) -> String {
    ctx.tool_call_id().to_string()
}

// A default needs a value.
#[fexpr::tool]
fn add(a: i64, #[default] b: i64) -> i64 {
    a + b
}

fn main() {}

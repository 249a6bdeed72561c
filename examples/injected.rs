//! Agentflow's injected parameters (seed 004): `tool_call_id`, the agent's state and
//! registered dependencies reach the tool without being parameters — they are not in the
//! schema and the model cannot set them. The tool is declared with `#[fexpr::tool]`: its name,
//! parameter and descriptions come from the function and its doc comment.
//!
//! `cargo run --example injected`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::Input;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex};

use fexpr::tool::ToolError;
use fexpr::{CallContext, Session, ToolManager};

/// The agent's state: the conversation so far.
#[derive(Default)]
struct AgentState {
    context: Mutex<Vec<String>>,
}

/// A dependency registered once on the manager (a client, a cache, a logger...).
struct WeatherService {
    unit: &'static str,
}

/// Current weather of a city.
///
/// # Arguments
///
/// * `city` - The city, in English.
///
/// `ctx` is injected by its type (`CallContext`): it is not a parameter of the tool.
#[fexpr::tool]
fn get_weather(ctx: CallContext, city: String) -> Result<String, ToolError> {
    let service = ctx.dependency::<WeatherService>()?;
    let state = ctx.state::<AgentState>()?;
    let report = format!("{city}: 21 {}", service.unit);
    state
        .context
        .lock()
        .map_err(|_| ToolError::new("the agent state is unavailable"))?
        .push(format!(
            "tool[{} #{}] {report}",
            ctx.tool_call_id(),
            ctx.index()
        ));
    Ok(report)
}

fn main() {
    let manager = ToolManager::builder()
        .dependency(Arc::new(WeatherService { unit: "°C" }))
        .tool(get_weather_tool())
        .build()
        .expect("the tools are well-formed");

    println!(
        "The model sees only `city`:\n{}",
        manager.definitions().openai()
    );

    let state = Arc::new(AgentState::default());
    let session = Session::new().state(state.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // An OpenAI message: each tool sees its call's id as `tool_call_id`.
    let message = serde_json::json!({"role": "assistant", "tool_calls": [
        {"id": "call_9f2", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "call_9f3", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]});
    let request = manager.run(Input::openai(message)).session(session.clone());
    for out in rt.block_on(request.into_future()) {
        println!("{out}");
    }
    // Trying to set an injected value from the expression is an argument error; nothing runs.
    let forged = Input::expr("get_weather(city='Paris', tool_call_id='forged')");
    let forged = rt.block_on(manager.run(forged).session(session).into_future());
    println!("{}", forged.outputs[0]);
    println!("\nagent state after the calls:");
    for line in state.context.lock().expect("state").iter() {
        println!("  {line}");
    }
}

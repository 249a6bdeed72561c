//! AgentFly's stateful tools (seed 003): a pool of environments (here a key-value
//! scratchpad), isolated by id: the same id gets the same environment, a new id takes a free
//! one, `release(id)` resets it and returns it, and a call that finds the pool empty waits,
//! then fails clearly.
//!
//! `cargo run --example env_pool`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::Input;
use std::collections::BTreeMap;
use std::time::Duration;

use fexpr::pool::{EnvPool, Environment};
use fexpr::{CallContext, FunctionTool, Session, ToolManager, ToolOutput, Value};

/// One trajectory's scratchpad.
#[derive(Default)]
struct Scratchpad(BTreeMap<String, String>);

impl Environment for Scratchpad {
    fn reset(&mut self) {
        self.0.clear();
    }
}

fn manager(pool: &EnvPool<Scratchpad>) -> ToolManager {
    let (write_pool, read_pool) = (pool.clone(), pool.clone());
    ToolManager::builder()
        .tool(
            FunctionTool::with_context_async(
                "note",
                ["key", "value"],
                move |ctx: CallContext, key: String, value: String| {
                    let pool = write_pool.clone();
                    async move {
                        // The id comes from the program's session, never from the model.
                        let mut pad = pool.acquire(ctx.session_id()?).await?;
                        pad.0.insert(key, value);
                        Ok::<_, fexpr::Error>(ToolOutput::new(Value::Int(pad.0.len() as i64)))
                    }
                },
            )
            .description("Write a note to your scratchpad; returns the number of notes."),
        )
        .tool(
            FunctionTool::with_context_async("notes", [], move |ctx: CallContext| {
                let pool = read_pool.clone();
                async move {
                    let pad = pool.acquire(ctx.session_id()?).await?;
                    let text = pad
                        .0
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    Ok::<_, fexpr::Error>(ToolOutput::new(Value::Str(text)))
                }
            })
            .description("Read your scratchpad."),
        )
        .build()
        .expect("the tools are well-formed")
}

fn main() {
    let pool =
        EnvPool::new("scratchpad", 2, Scratchpad::default).timeout(Duration::from_millis(200));
    let manager = manager(&pool);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let run = |id: &str, text: &str| {
        let out = rt.block_on(async {
            manager
                .run(Input::expr(text))
                .session(Session::new().id(id))
                .await
                .outputs
        });
        println!("[{id}] {}", out[0]);
    };
    run("traj-1", "note(key='goal', value='sort the list')");
    run("traj-2", "note(key='goal', value='parse the log')");
    run("traj-1", "notes()"); // same id, same scratchpad
    run("traj-3", "notes()"); // both scratchpads held: waits 200 ms, then fails clearly
    println!("released traj-1: {}", rt.block_on(pool.release("traj-1")));
    run("traj-3", "notes()"); // gets traj-1's scratchpad, reset
    println!("held now: {:?}, free: {}", pool.held_ids(), pool.free());
}

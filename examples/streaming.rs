//! Elysia's tools (seed 002): a tool reports status and partial results while it runs, and
//! the program reads them as a stream of events per call (status, partial, final, error)
//! next to the plain results. Also: a tool unavailable until the state allows it (with a
//! message saying when), a tool that can end the turn, and errors the model can read.
//!
//! `cargo run --example streaming`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::Input;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fexpr::tool::ToolError;
use fexpr::{CallContext, EventKind, FunctionTool, Session, ToolManager, Value};

/// Elysia's tree data, reduced to what the tools look at.
#[derive(Default)]
struct TreeData {
    retrieved: Mutex<Vec<String>>,
}

fn main() {
    let manager = ToolManager::builder()
        .tool(
            FunctionTool::with_context_async(
                "query",
                ["collection", "limit"],
                |ctx: CallContext, collection: String, limit: i64| async move {
                    ctx.status(format!("Querying {collection}…"));
                    let tree = ctx.state::<TreeData>()?;
                    let mut found = Vec::new();
                    for i in 0..limit {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let item = format!("{collection} #{i}");
                        ctx.partial(Value::Str(item.clone()));
                        found.push(item);
                    }
                    tree.retrieved
                        .lock()
                        .map_err(|_| ToolError::new("tree data unavailable"))?
                        .extend(found.clone());
                    Ok::<_, ToolError>(found)
                },
            )
            .description("Retrieve objects from a collection."),
        )
        .tool(
            FunctionTool::with_context("summarize", [], |ctx: CallContext| {
                let tree = ctx.state::<TreeData>()?;
                let n = tree
                    .retrieved
                    .lock()
                    .map_err(|_| ToolError::new("tree data unavailable"))?
                    .len();
                Ok::<_, ToolError>(format!("{n} objects retrieved"))
            })
            .available_when(
                |s: &Session| {
                    s.get_state::<TreeData>()
                        .is_some_and(|t| t.retrieved.lock().is_ok_and(|r| !r.is_empty()))
                },
                "once `query` has retrieved objects",
            ),
        )
        .tool(FunctionTool::new("text_response", ["text"], |text: String| text).ends_turn())
        .build()
        .expect("the tools are well-formed");

    let tree = Arc::new(TreeData::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let session = Session::new().state(tree.clone());
    let names: Vec<_> = manager
        .definitions_in(&session)
        .map(|d| d.name.clone())
        .collect();
    println!("tools offered now: {names:?}");
    let early = rt.block_on(async {
        manager
            .run(Input::expr("summarize()"))
            .session(session.clone())
            .await
            .outputs
    });
    println!("{}\n", manager.observation(&early[0]));

    let (session, mut events) = session.events(16);
    let text = "[query(collection='products', limit=3), query(collection='reviews', limit=2)]";
    let (outputs, ()) = rt.block_on(async {
        tokio::join!(
            async {
                manager
                    .run(Input::expr(text))
                    .session(session)
                    .await
                    .outputs
            },
            async {
                while let Some(event) = events.recv().await {
                    let what = match &event.kind {
                        EventKind::Status(s) => format!("status  {s}"),
                        EventKind::Partial(v) => format!("partial {}", v.repr()),
                        EventKind::Final(out) => format!("final   {}", out.output.repr()),
                        EventKind::Error(e) => format!("error   {e}"),
                    };
                    println!("call {} {}: {what}", event.index, event.tool);
                }
            }
        )
    });
    println!(
        "plain results: {:?}\n",
        outputs
            .iter()
            .map(|o| manager.observation(o))
            .collect::<Vec<_>>()
    );

    let session = Session::new().state(tree);
    let names: Vec<_> = manager
        .definitions_in(&session)
        .map(|d| d.name.clone())
        .collect();
    println!("tools offered now: {names:?}");
    let done = rt.block_on(async {
        manager
            .run(Input::expr(
                "[summarize(), text_response(text='Found 5 objects.')]",
            ))
            .session(session)
            .await
            .outputs
    });
    println!(
        "{}\n{}\nends the turn: {}",
        done[0],
        done[1],
        manager.ends_turn(&done)
    );
}

//! Tools the way agent frameworks need them (issue 5): component tools, output vs observation,
//! injected parameters, environment pools, streaming events, availability and `ends_turn`,
//! parallel calls and memoisation — natively, and one case of each through the sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

mod common;

use fexpr::pool::{EnvPool, Environment};
use fexpr::tool::{Component, ToolError, ToolFeatures};
use fexpr::Input;
use fexpr::{
    CallContext, ErrorKind, EventKind, FunctionOutput, FunctionTool, Session, Tool, ToolEvent,
    ToolManager, ToolOutput, Value,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn run(manager: &ToolManager, session: Session, text: &str) -> Vec<FunctionOutput> {
    common::runtime().block_on(async {
        manager
            .run(Input::expr(text))
            .session(session)
            .await
            .outputs
    })
}

fn one(manager: &ToolManager, text: &str) -> FunctionOutput {
    let mut outs = run(manager, Session::new(), text);
    assert_eq!(outs.len(), 1, "{outs:?}");
    outs.remove(0)
}

#[cfg(feature = "sandbox")]
fn sandboxed(manager: &ToolManager, session: Session, text: &str) -> Vec<FunctionOutput> {
    common::runtime().block_on(async {
        manager
            .run(Input::expr(text))
            .session(session)
            .sandboxed()
            .await
            .outputs
    })
}

/// Every definition format of every tool, as one text.
fn all_definitions(manager: &ToolManager, session: &Session) -> String {
    let defs: Vec<_> = manager.definitions_in(session).collect();
    let mut text = String::new();
    for d in defs {
        text.push_str(&d.python());
        text.push_str(&d.openai().to_string());
        text.push_str(&d.anthropic().to_string());
        text.push_str(&d.mcp().to_string());
        text.push_str(&d.function_definition().to_string());
    }
    text
}

// ---------------------------------------------------------------- 1. component tools

struct SearchIndex {
    api_key: String,
    corpus: Vec<String>,
    searches: AtomicU32,
}

impl SearchIndex {
    fn search(&self, query: &str, limit: usize) -> Result<Vec<String>, ToolError> {
        if self.api_key.is_empty() {
            return Err(ToolError::new("not configured"));
        }
        self.searches.fetch_add(1, Ordering::Relaxed);
        Ok(self
            .corpus
            .iter()
            .filter(|d| d.contains(query))
            .take(limit)
            .cloned()
            .collect())
    }
}

impl Component for SearchIndex {
    fn tools(self: Arc<Self>) -> Vec<FunctionTool> {
        let this = self.clone();
        let search = FunctionTool::new(
            "search",
            ["query", "limit"],
            move |query: String, limit: Option<usize>| this.search(&query, limit.unwrap_or(3)),
        )
        .description("Search the documents.")
        .observe(|v| match v {
            Value::List(hits) => format!("{} documents found", hits.len()),
            other => other.repr(),
        });
        let this = self.clone();
        let count = FunctionTool::new("searches_so_far", [], move || {
            this.searches.load(Ordering::Relaxed)
        });
        vec![search, count]
    }
}

fn search_component() -> Arc<SearchIndex> {
    Arc::new(SearchIndex {
        api_key: "sk-secret-123".into(),
        corpus: (0..50).map(|i| format!("doc {i} about rust")).collect(),
        searches: AtomicU32::new(0),
    })
}

#[test]
fn component_tools_hide_their_state_and_keep_it_across_calls() {
    let component = search_component();
    let manager = ToolManager::builder()
        .component(component.clone())
        .build()
        .unwrap();
    let defs = all_definitions(&manager, &Session::new());
    assert!(
        defs.contains("search(query: str, limit: int | None = None)"),
        "{defs}"
    );
    for hidden in ["api_key", "sk-secret", "corpus", "searches\""] {
        assert!(!defs.contains(hidden), "{hidden} leaked into {defs}");
    }
    let out = one(&manager, "search(query='rust', limit=2)");
    assert_eq!(
        out.output.unwrap().repr(),
        "['doc 0 about rust', 'doc 1 about rust']"
    );
    one(&manager, "search(query='doc 4')");
    // State the owner keeps persists across calls ...
    assert_eq!(one(&manager, "searches_so_far()").output, Ok(Value::Int(2)));
    assert_eq!(component.searches.load(Ordering::Relaxed), 2);
    // ... while per-call data does not: a call without `limit` gets the default, not the
    // previous call's 2.
    let out = one(&manager, "search(query='rust')");
    assert_eq!(out.output.map(|v| v.repr().matches("doc").count()), Ok(3));
}

// ---------------------------------------------------------------- 2. output vs observation

#[test]
fn the_observation_is_short_and_the_output_full() {
    let manager = ToolManager::builder()
        .component(search_component())
        .build()
        .unwrap();
    let out = one(&manager, "search(query='rust', limit=40)");
    assert_eq!(out.observation.as_deref(), Some("40 documents found"));
    assert!(matches!(&out.output, Ok(Value::List(hits)) if hits.len() == 40));
    assert_eq!(manager.observation(&out), "40 documents found");
    assert_eq!(out.to_json()["observation"], "40 documents found");

    // Several calls: each output has its own tool's observation; plain tools have none.
    let outs = run(
        &manager,
        Session::new(),
        "[search(query='doc 1', limit=20), searches_so_far()]",
    );
    assert_eq!(outs[0].observation.as_deref(), Some("11 documents found"));
    assert_eq!(outs[1].observation, None);
    // A failed call has no observation; the model reads the error instead.
    let failed = one(&manager, "search(query=1)");
    assert_eq!(failed.observation, None);
    assert!(
        manager.observation(&failed).starts_with("error: Type"),
        "{}",
        manager.observation(&failed)
    );
}

#[test]
fn a_tool_can_return_its_own_observation() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::with_context(
            "fetch",
            ["url"],
            |_ctx: CallContext, url: String| {
                ToolOutput::new(Value::Str("<html>".repeat(1000)))
                    .with_observation(format!("fetched {url}: 6000 bytes of HTML"))
            },
        ))
        .build()
        .unwrap();
    let out = one(&manager, "fetch(url='https://example.org')");
    assert_eq!(
        out.observation.as_deref(),
        Some("fetched https://example.org: 6000 bytes of HTML")
    );
    assert!(matches!(&out.output, Ok(Value::Str(s)) if s.len() == 6000));
}

#[test]
fn observations_are_bounded_by_default() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("rows", ["n"], |n: i64| {
            (0..n).map(|i| format!("row {i}")).collect::<Vec<_>>()
        }))
        .tool(FunctionTool::new("chatty", [], || 1).observe(|_| "blah ".repeat(100_000)))
        .build()
        .unwrap();
    let out = one(&manager, "rows(n=20000)");
    assert!(matches!(&out.output, Ok(Value::List(r)) if r.len() == 20_000));
    let text = manager.observation(&out);
    assert!(text.chars().count() <= fexpr::Limits::default().max_observation_chars + 1);
    assert!(text.contains("19992 more of 20000 items"), "{text}");
    // A formatter's text is cut to the bound too, and the bound is configurable.
    let out = one(&manager, "chatty()");
    let obs = out.observation.unwrap();
    assert_eq!(
        obs.chars().count(),
        fexpr::Limits::default().max_observation_chars + 1
    );
    assert!(obs.ends_with('…'));
    let tight = manager
        .to_builder()
        .limits(fexpr::Limits::default().max_observation_chars(50))
        .build()
        .unwrap();
    let out = one(&tight, "chatty()");
    assert_eq!(out.observation.unwrap().chars().count(), 51);
    assert!(
        tight
            .observation(&one(&tight, "rows(n=20000)"))
            .chars()
            .count()
            <= 51
    );
}

#[cfg(feature = "sandbox")]
#[test]
fn observations_come_back_from_the_sandbox() {
    let manager = ToolManager::builder()
        .component(search_component())
        .build()
        .unwrap();
    let outs = sandboxed(
        &manager,
        Session::new(),
        "[search(query='doc 2', limit=5), searches_so_far()]",
    );
    assert_eq!(outs[0].observation.as_deref(), Some("5 documents found"));
    assert_eq!(outs[1].observation, None);
    assert!(outs[0].receipt.is_some());
}

// ---------------------------------------------------------------- 3. injected parameters

struct AgentState {
    messages: Mutex<Vec<String>>,
}

struct Weather {
    unit: &'static str,
}

fn injected_manager(ran: Arc<AtomicU32>) -> ToolManager {
    ToolManager::builder()
        .dependency(Arc::new(Weather { unit: "°C" }))
        .tool(
            FunctionTool::with_context(
                "get_weather",
                ["city"],
                move |ctx: CallContext, city: String| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    let state = ctx.state::<AgentState>()?;
                    let weather = ctx.dependency::<Weather>()?;
                    let text = format!("{city}: 21 {}", weather.unit);
                    state
                        .messages
                        .lock()
                        .map_err(|_| ToolError::new("state poisoned"))?
                        .push(format!("[{}] {text}", ctx.tool_call_id()));
                    Ok::<_, ToolError>(text)
                },
            )
            .description("Weather of a city."),
        )
        .build()
        .unwrap()
}

#[test]
fn injected_values_reach_the_tool_and_never_the_schema() {
    let ran = Arc::new(AtomicU32::new(0));
    let manager = injected_manager(ran.clone());
    let defs = all_definitions(&manager, &Session::new());
    assert!(defs.contains("get_weather(city: str) -> str"), "{defs}");
    for hidden in ["tool_call_id", "state", "ctx", "context", "°C", "unit"] {
        assert!(!defs.contains(hidden), "{hidden} in {defs}");
    }
    let state = Arc::new(AgentState {
        messages: Mutex::new(vec![]),
    });
    let session = Session::new().state(state.clone());
    let outs = run(
        &manager,
        session,
        "[get_weather(city='Paris'), get_weather(city='Oslo')]",
    );
    assert_eq!(outs[0].output, Ok(Value::Str("Paris: 21 °C".into())));
    // Sync tools run concurrently on the blocking pool: the messages come in either order.
    // Each tool sees the call id of its own call, the one its output carries.
    let mut messages = state.messages.lock().unwrap().clone();
    messages.sort();
    let mut expected = vec![
        format!("[{}] Paris: 21 °C", outs[0].call_id),
        format!("[{}] Oslo: 21 °C", outs[1].call_id),
    ];
    expected.sort();
    assert_eq!(messages, expected);
    // Without a state the tool says what it lacks, readably.
    let out = one(&manager, "get_weather(city='Rome')");
    let e = out.output.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ToolFailed);
    assert!(e.message.contains("needs the caller's state"), "{e}");
    // Without a tool-call id each execution gets its own.
    let ids = Arc::new(Mutex::new(Vec::new()));
    let seen = ids.clone();
    let manager = ToolManager::builder()
        .tool(FunctionTool::with_context(
            "whoami",
            [],
            move |ctx: CallContext| {
                seen.lock()
                    .unwrap()
                    .push((ctx.tool_call_id().to_string(), ctx.index()));
            },
        ))
        .build()
        .unwrap();
    let outs = run(&manager, Session::new(), "[whoami(), whoami()]");
    let again = run(&manager, Session::new(), "whoami()");
    let ids = ids.lock().unwrap().clone();
    assert_eq!(ids.len(), 3);
    // Each top-level call has its own id, the one its output carries.
    let mut seen: Vec<&str> = ids.iter().map(|(id, _)| id.as_str()).collect();
    seen.sort();
    let mut given = vec![&outs[0].call_id, &outs[1].call_id, &again[0].call_id];
    given.sort();
    assert_eq!(seen, given);
    assert_ne!(outs[0].call_id, outs[1].call_id);
    let mut indexes = vec![ids[0].1, ids[1].1];
    indexes.sort();
    assert_eq!(indexes, vec![0, 1]);
    assert_eq!(ids[2].1, 0);
}

#[test]
fn an_expression_cannot_set_an_injected_value() {
    let ran = Arc::new(AtomicU32::new(0));
    let manager = injected_manager(ran.clone());
    for text in [
        "get_weather(city='Paris', tool_call_id='forged')",
        "get_weather(city='Paris', state={'admin': True})",
        "get_weather(city='Paris', ctx=None)",
        "get_weather('Paris', 'forged')",
    ] {
        let out = one(&manager, text);
        assert_eq!(
            out.output.err().map(|e| e.kind),
            Some(ErrorKind::Arguments),
            "{text}"
        );
    }
    let json = serde_json::json!({"name": "get_weather", "kwargs": {"city": "Paris", "tool_call_id": "x"}});
    let outs = common::runtime()
        .block_on(async { manager.run(Input::openai(json.clone())).await.outputs });
    assert_eq!(
        outs[0].output.as_ref().err().map(|e| e.kind),
        Some(ErrorKind::Arguments)
    );
    assert_eq!(ran.load(Ordering::Relaxed), 0, "the tool must not run");
}

#[cfg(feature = "sandbox")]
#[test]
fn injection_works_through_the_sandbox() {
    let ran = Arc::new(AtomicU32::new(0));
    let manager = injected_manager(ran.clone());
    let state = Arc::new(AgentState {
        messages: Mutex::new(vec![]),
    });
    let session = Session::new().state(state.clone());
    let outs = sandboxed(&manager, session, "get_weather(city='Lima')");
    assert_eq!(outs[0].output, Ok(Value::Str("Lima: 21 °C".into())));
    assert_eq!(
        *state.messages.lock().unwrap(),
        vec![format!("[{}] Lima: 21 °C", outs[0].call_id)]
    );
    let outs = sandboxed(
        &manager,
        Session::new(),
        "get_weather(city='Lima', tool_call_id='x')",
    );
    assert_eq!(
        outs[0].output.as_ref().err().map(|e| e.kind),
        Some(ErrorKind::Arguments)
    );
    assert_eq!(ran.load(Ordering::Relaxed), 1);
}

// ---------------------------------------------------------------- 4. environment pools

/// A key-value scratchpad that records which id holds it, to catch sharing.
#[derive(Default)]
struct Scratchpad {
    holder: Option<String>,
    values: HashMap<String, String>,
}

impl Environment for Scratchpad {
    fn reset(&mut self) {
        self.holder = None;
        self.values.clear();
    }
}

fn scratchpad_manager(pool: EnvPool<Scratchpad>, shared: Arc<AtomicUsize>) -> ToolManager {
    let set_pool = pool.clone();
    let get_pool = pool;
    ToolManager::builder()
        .tool(FunctionTool::with_context_async(
            "scratch_set",
            ["key", "value"],
            move |ctx: CallContext, key: String, value: String| {
                let pool = set_pool.clone();
                let shared = shared.clone();
                async move {
                    let id = ctx.session_id()?.to_string();
                    let mut env = pool.acquire(&id).await?;
                    if env.holder.as_ref().is_some_and(|h| *h != id) {
                        shared.fetch_add(1, Ordering::Relaxed);
                    }
                    env.holder = Some(id);
                    // Hold the environment across a suspension point.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    env.values.insert(key, value);
                    Ok::<_, fexpr::Error>(ToolOutput::new(Value::Int(env.values.len() as i64)))
                }
            },
        ))
        .tool(FunctionTool::with_context_async(
            "scratch_get",
            ["key"],
            move |ctx: CallContext, key: String| {
                let pool = get_pool.clone();
                async move {
                    let env = pool.acquire(ctx.session_id()?).await?;
                    let value = env.values.get(&key).cloned();
                    Ok::<_, fexpr::Error>(ToolOutput::new(value.map_or(Value::None, Value::Str)))
                }
            },
        ))
        .build()
        .unwrap()
}

#[test]
fn a_pool_never_gives_one_environment_to_two_ids() {
    // 16 ids share 3 environments through the manager; the executions interleave on one task
    // (an execution future is not `Send`), each holding its environment across sleeps.
    let pool = EnvPool::new("scratchpad", 3, Scratchpad::default).timeout(Duration::from_secs(20));
    let shared = Arc::new(AtomicUsize::new(0));
    let manager = scratchpad_manager(pool.clone(), shared.clone());
    let max_held = AtomicUsize::new(0);
    let rt = common::runtime();
    let results = rt.block_on(futures_util::future::join_all((0..16).map(|i| {
        let (manager, pool, max_held) = (&manager, &pool, &max_held);
        async move {
            let id = format!("trajectory-{i}");
            let session = Session::new().id(id.as_str());
            let text = format!(
                "[scratch_set(key='who', value='{id}'), scratch_set(key='n', value='{i}')]"
            );
            let outs = async {
                manager
                    .run(Input::expr(&text))
                    .session(session.clone())
                    .await
                    .outputs
            }
            .await;
            max_held.fetch_max(pool.held_ids().len(), Ordering::Relaxed);
            let again = async {
                manager
                    .run(Input::expr("scratch_get(key='who')"))
                    .session(session)
                    .await
                    .outputs
            }
            .await;
            assert!(pool.release(&id).await);
            (outs, again)
        }
    })));
    for (i, (outs, again)) in results.into_iter().enumerate() {
        for out in &outs {
            assert!(out.output.is_ok(), "{out}");
        }
        // Same id, same environment: the value written is read back.
        assert_eq!(again[0].output, Ok(Value::Str(format!("trajectory-{i}"))));
    }
    assert_eq!(
        shared.load(Ordering::Relaxed),
        0,
        "an environment was shared by two ids"
    );
    assert_eq!(max_held.load(Ordering::Relaxed), 3);
    assert_eq!(pool.free(), 3);
    assert!(pool.held_ids().is_empty());
}

#[test]
fn a_pool_under_threads_never_gives_one_environment_to_two_ids() {
    // 40 tasks on 4 worker threads, 10 ids, 3 environments; acquire, check, hold, release.
    let pool = EnvPool::new("threads", 3, Scratchpad::default).timeout(Duration::from_secs(30));
    let shared = Arc::new(AtomicUsize::new(0));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let (pool, shared) = (pool.clone(), shared.clone());
                tokio::spawn(async move {
                    let id = format!("id-{}", i % 10);
                    for _ in 0..3 {
                        let mut env = pool.acquire(&id).await.unwrap();
                        if env.holder.as_ref().is_some_and(|h| *h != id) {
                            shared.fetch_add(1, Ordering::Relaxed);
                        }
                        env.holder = Some(id.clone());
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    pool.release(&id).await;
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(
        shared.load(Ordering::Relaxed),
        0,
        "an environment was shared by two ids"
    );
    assert_eq!(pool.free(), 3);
}

#[test]
fn a_call_on_an_empty_pool_waits_then_fails_clearly() {
    let pool =
        EnvPool::new("scratchpad", 1, Scratchpad::default).timeout(Duration::from_millis(50));
    let manager = scratchpad_manager(pool.clone(), Arc::new(AtomicUsize::new(0)));
    let rt = common::runtime();
    let a = rt.block_on(async {
        manager
            .run(Input::expr("scratch_set(key='k', value='v')"))
            .session(Session::new().id("a"))
            .await
            .outputs
    });
    assert!(a[0].output.is_ok());
    let started = Instant::now();
    let b = rt.block_on(async {
        manager
            .run(Input::expr("scratch_get(key='k')"))
            .session(Session::new().id("b"))
            .await
            .outputs
    });
    assert!(started.elapsed() >= Duration::from_millis(50));
    let e = b[0].output.as_ref().err().cloned().unwrap();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert!(
        e.message
            .contains("no free environment in pool `scratchpad`"),
        "{e}"
    );
    assert!(e.message.contains("waited 50 ms"), "{e}");
    // After `a` is released, `b` gets the environment, reset.
    assert!(rt.block_on(pool.release("a")));
    let b = rt.block_on(async {
        manager
            .run(Input::expr("scratch_get(key='k')"))
            .session(Session::new().id("b"))
            .await
            .outputs
    });
    assert_eq!(b[0].output, Ok(Value::None));
    // No session id: a readable error.
    let none = rt.block_on(async {
        manager
            .run(Input::expr("scratch_get(key='k')"))
            .session(Session::new())
            .await
            .outputs
    });
    assert!(none[0]
        .output
        .as_ref()
        .err()
        .as_ref()
        .unwrap()
        .message
        .contains("needs a session id"));
}

#[cfg(feature = "sandbox")]
#[test]
fn pools_work_through_the_sandbox() {
    let pool = EnvPool::new("scratchpad", 2, Scratchpad::default);
    let manager = scratchpad_manager(pool.clone(), Arc::new(AtomicUsize::new(0)));
    let session = Session::new().id("s1");
    let outs = sandboxed(
        &manager,
        session.clone(),
        "scratch_set(key='k', value='v1')",
    );
    assert!(outs[0].output.is_ok(), "{}", outs[0]);
    let outs = sandboxed(&manager, session, "scratch_get(key='k')");
    assert_eq!(outs[0].output, Ok(Value::Str("v1".into())));
    assert_eq!(pool.held_ids(), vec!["s1".to_string()]);
}

// ---------------------------------------------------------------- 5. streaming and status

fn streaming_manager() -> ToolManager {
    ToolManager::builder()
        .tool(FunctionTool::with_context_async(
            "crawl",
            ["pages"],
            |ctx: CallContext, pages: i64| async move {
                ctx.status(format!("Crawling {pages} pages…"));
                let mut titles = Vec::new();
                for i in 0..pages {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    let title = format!("page {i}");
                    ctx.partial(Value::Str(title.clone()));
                    titles.push(title);
                }
                titles
            },
        ))
        .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b))
        .tool(FunctionTool::new("fail", [], || {
            Err::<i64, _>(ToolError::new("the index is offline"))
        }))
        .build()
        .unwrap()
}

/// Run `text` with an event channel; the outputs and every event.
fn with_events(
    manager: &ToolManager,
    text: &str,
    sandbox: bool,
) -> (Vec<FunctionOutput>, Vec<ToolEvent>) {
    let (session, mut events) = Session::new().events(4);
    common::runtime().block_on(async {
        let run = async move {
            let request = manager.run(Input::expr(text)).session(session);
            #[cfg(feature = "sandbox")]
            let request = if sandbox {
                request.sandboxed()
            } else {
                request
            };
            #[cfg(not(feature = "sandbox"))]
            let _ = sandbox;
            request.await.outputs
        };
        let collect = async {
            let mut all = Vec::new();
            while let Some(event) = events.recv().await {
                all.push(event);
            }
            all
        };
        tokio::join!(run, collect)
    })
}

/// The kinds of one call's events, as short names.
fn kinds(events: &[ToolEvent], tool: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| &*e.tool == tool)
        .map(|e| match &e.kind {
            EventKind::Status(s) => format!("status:{s}"),
            EventKind::Partial(v) => format!("partial:{}", v.repr()),
            EventKind::Final(out) => format!("final:{}", out.output.repr()),
            EventKind::Error(e) => format!("error:{}", e.message),
        })
        .collect()
}

#[test]
fn a_call_streams_status_partials_and_its_final_output() {
    let manager = streaming_manager();
    let (outs, events) = with_events(&manager, "[crawl(pages=3), add(a=1, b=2), fail()]", false);
    assert_eq!(
        outs[0].output.as_ref().map(Value::repr).as_deref(),
        Ok("['page 0', 'page 1', 'page 2']")
    );
    assert_eq!(
        kinds(&events, "crawl"),
        vec![
            "status:Crawling 3 pages…",
            "partial:'page 0'",
            "partial:'page 1'",
            "partial:'page 2'",
            "final:['page 0', 'page 1', 'page 2']"
        ]
    );
    assert_eq!(kinds(&events, "add"), vec!["final:3"]);
    assert_eq!(kinds(&events, "fail"), vec!["error:the index is offline"]);
    // The final output says whether partial results were streamed before it.
    let finals: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Final(out) => Some((e.tool.to_string(), out.is_streaming)),
            _ => None,
        })
        .collect();
    assert!(finals.contains(&("crawl".to_string(), true)), "{finals:?}");
    assert!(finals.contains(&("add".to_string(), false)), "{finals:?}");
    // Events of one call share its index; every call has its own.
    let mut by_index: HashMap<u32, &str> = HashMap::new();
    for e in &events {
        assert!(outs.iter().any(|o| *o.call_id == *e.tool_call_id), "{e:?}");
        assert_eq!(*by_index.entry(e.index).or_insert(&e.tool), &*e.tool);
    }
    assert_eq!(by_index.len(), 3);
    // The plain result is unchanged by listening.
    assert_eq!(outs[1].output, Ok(Value::Int(3)));
    assert!(outs[2].output.is_err());
}

#[test]
fn without_a_listener_a_streaming_tool_just_runs() {
    let manager = streaming_manager();
    let out = one(&manager, "crawl(pages=2)");
    assert_eq!(
        out.output.map(|v| v.repr()).as_deref(),
        Ok("['page 0', 'page 1']")
    );
}

#[cfg(feature = "sandbox")]
#[test]
fn events_stream_from_sandboxed_calls() {
    let manager = streaming_manager();
    let (outs, events) = with_events(&manager, "[crawl(pages=1), add(a=1, b=1)]", true);
    assert_eq!(outs[1].output, Ok(Value::Int(2)), "{}", outs[1]);
    assert_eq!(
        kinds(&events, "crawl"),
        vec![
            "status:Crawling 1 pages…",
            "partial:'page 0'",
            "final:['page 0']"
        ]
    );
    assert_eq!(kinds(&events, "add"), vec!["final:2"]);
}

// ---------------------------------------------------------------- 6. availability, ends_turn

struct Tree {
    retrieved: Mutex<Vec<String>>,
}

fn tree_manager() -> ToolManager {
    ToolManager::builder()
        .tool(FunctionTool::with_context(
            "query",
            ["q"],
            |ctx: CallContext, q: String| {
                let tree = ctx.state::<Tree>()?;
                tree.retrieved
                    .lock()
                    .map_err(|_| ToolError::new("poisoned"))?
                    .push(q.clone());
                Ok::<_, ToolError>(format!("results for {q}"))
            },
        ))
        .tool(
            FunctionTool::new("summarize", [], || "a summary".to_string()).available_when(
                |s: &Session| {
                    s.get_state::<Tree>()
                        .is_some_and(|t| t.retrieved.lock().is_ok_and(|r| !r.is_empty()))
                },
                "after `query` has retrieved something",
            ),
        )
        .tool(FunctionTool::new("final_answer", ["text"], |text: String| text).ends_turn())
        .build()
        .unwrap()
}

#[test]
fn an_unavailable_tool_is_hidden_and_refused_with_when() {
    let manager = tree_manager();
    let tree = Arc::new(Tree {
        retrieved: Mutex::new(vec![]),
    });
    let session = Session::new().state(tree.clone());
    let names = |s: &Session| -> Vec<String> {
        manager.definitions_in(s).map(|d| d.name.clone()).collect()
    };
    assert_eq!(names(&session), vec!["query", "final_answer"]);
    assert_eq!(manager.definitions().count(), 2);
    assert!(!manager
        .definitions_in(&session)
        .openai()
        .to_string()
        .contains("summarize"));
    let out = run(&manager, session.clone(), "summarize()").remove(0);
    let e = out.output.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ToolFailed);
    assert!(
        e.message.contains("tool `summarize` is not available now"),
        "{e}"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("it becomes available after `query` has retrieved something")
    );
    // Once the state holds, the tool is offered and runs.
    run(&manager, session.clone(), "query(q='rust')");
    assert_eq!(names(&session), vec!["query", "summarize", "final_answer"]);
    let out = run(&manager, session, "summarize()").remove(0);
    assert_eq!(out.output, Ok(Value::Str("a summary".into())));
}

#[cfg(feature = "sandbox")]
#[test]
fn availability_holds_in_the_sandbox_too() {
    let manager = tree_manager();
    let session = Session::new().state(Arc::new(Tree {
        retrieved: Mutex::new(vec![]),
    }));
    let outs = sandboxed(&manager, session.clone(), "summarize()");
    assert!(outs[0]
        .output
        .as_ref()
        .err()
        .as_ref()
        .unwrap()
        .message
        .contains("not available"));
    sandboxed(&manager, session.clone(), "query(q='x')");
    let outs = sandboxed(&manager, session, "summarize()");
    assert_eq!(outs[0].output, Ok(Value::Str("a summary".into())));
}

#[test]
fn ends_turn_marks_outputs_that_can_end_the_turn() {
    let manager = tree_manager();
    let session = Session::new().state(Arc::new(Tree {
        retrieved: Mutex::new(vec![]),
    }));
    let outs = run(&manager, session.clone(), "query(q='x')");
    assert!(!manager.ends_turn(&outs));
    let outs = run(
        &manager,
        session.clone(),
        "[query(q='y'), final_answer(text='done')]",
    );
    assert!(manager.ends_turn(&outs));
    // A failed final answer does not end the turn.
    let outs = run(&manager, session, "final_answer(text=1)");
    assert!(outs[0].output.is_err());
    assert!(!manager.ends_turn(&outs));
    assert!(manager
        .tool("final_answer")
        .unwrap()
        .features()
        .unwrap()
        .is_ends_turn());
}

// ---------------------------------------------------------------- 7. parallel, caching

fn sleepy(name: &'static str) -> FunctionTool {
    FunctionTool::new_async(name, [], move || async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        name.to_string()
    })
}

#[test]
fn calls_of_one_response_run_concurrently_with_errors_isolated() {
    let manager = ToolManager::builder()
        .tool(sleepy("a"))
        .tool(sleepy("b"))
        .tool(sleepy("c"))
        .tool(FunctionTool::new_async("broken", [], || async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Err::<i64, _>(ToolError::new("broken on purpose"))
        }))
        .build()
        .unwrap();
    let started = Instant::now();
    let outs = run(&manager, Session::new(), "[a(), b(), broken(), c()]");
    let elapsed = started.elapsed();
    // One after another they take at least 400 ms; the margin is for a loaded machine.
    assert!(
        elapsed < Duration::from_millis(390),
        "took {elapsed:?}: not concurrent"
    );
    let got: Vec<String> = outs
        .iter()
        .map(|o| match &o.output {
            Ok(v) => v.repr(),
            Err(e) => e.message.clone(),
        })
        .collect();
    assert_eq!(got, vec!["'a'", "'b'", "broken on purpose", "'c'"]);
}

#[test]
fn memoised_tools_run_once_per_canonical_arguments_within_a_bound() {
    let runs = Arc::new(AtomicU32::new(0));
    let counter = runs.clone();
    let manager = ToolManager::builder()
        .tool(
            FunctionTool::new(
                "lookup",
                ["key", "options"],
                move |key: i64, options: Option<std::collections::BTreeMap<String, i64>>| {
                    counter.fetch_add(1, Ordering::Relaxed);
                    if key < 0 {
                        return Err(ToolError::new("negative"));
                    }
                    Ok(format!(
                        "{key} {}",
                        options.map_or(String::new(), |o| format!("{o:?}"))
                    ))
                },
            )
            .cached(2),
        )
        .build()
        .unwrap();
    let count = || runs.load(Ordering::Relaxed);
    // The same arguments written three ways: one run.
    for text in ["lookup(key=1)", "lookup(1)", "lookup(key=1, options=None)"] {
        assert_eq!(
            one(&manager, text).output,
            Ok(Value::Str("1 ".into())),
            "{text}"
        );
    }
    assert_eq!(count(), 1);
    // Dict key order does not matter.
    one(&manager, "lookup(key=2, options={'a': 1, 'b': 2})");
    one(&manager, "lookup(2, {'b': 2, 'a': 1})");
    assert_eq!(count(), 2);
    // Errors are not remembered.
    one(&manager, "lookup(key=-1)");
    one(&manager, "lookup(key=-1)");
    assert_eq!(count(), 4);
    // The bound: a third entry evicts the oldest (key=1), which then runs again.
    one(&manager, "lookup(key=3)");
    assert_eq!(count(), 5);
    let memo_len = manager
        .tool("lookup")
        .unwrap()
        .features()
        .unwrap()
        .memo()
        .unwrap()
        .len();
    assert_eq!(memo_len, 2);
    one(&manager, "lookup(key=1)");
    assert_eq!(count(), 6);
    one(&manager, "lookup(key=3)");
    assert_eq!(count(), 6);
}

/// A context tool that answers with the caller's session id.
fn whoami(ran: Arc<AtomicU32>) -> FunctionTool {
    FunctionTool::with_context("whoami", [], move |ctx: CallContext| {
        ran.fetch_add(1, Ordering::Relaxed);
        ctx.session().get_id().unwrap_or("nobody").to_string()
    })
}

/// `alice` and `bob` calling `whoami()` at once, 20 times each, on a multi-threaded runtime:
/// each session's outputs, as values or error messages.
fn alice_and_bob(manager: &ToolManager) -> [Vec<Result<Value, String>>; 2] {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let calls = (0..40).map(|i| {
        let who = ["alice", "bob"][i % 2];
        async move {
            let session = Session::new().id(who);
            manager
                .run(Input::expr("whoami()"))
                .session(session)
                .await
                .outputs
        }
    });
    let outs = rt.block_on(futures_util::future::join_all(calls));
    let mut by_session = [Vec::new(), Vec::new()];
    for (i, mut out) in outs.into_iter().enumerate() {
        let out = out.remove(0);
        by_session[i % 2].push(out.output.map_err(|e| e.message));
    }
    by_session
}

#[test]
fn a_tool_that_receives_a_context_cannot_be_cached() {
    let ran = Arc::new(AtomicU32::new(0));
    // Uncached, each session sees its own id.
    let manager = ToolManager::builder()
        .tool(whoami(ran.clone()))
        .build()
        .unwrap();
    let [alice, bob] = alice_and_bob(&manager);
    assert!(
        alice.iter().all(|o| o == &Ok(Value::Str("alice".into()))),
        "{alice:?}"
    );
    assert!(
        bob.iter().all(|o| o == &Ok(Value::Str("bob".into()))),
        "{bob:?}"
    );
    // Cached, it is refused: `check` reports the problem and no manager can be built with it,
    // so it never runs in any session.
    let cached = whoami(ran.clone()).cached(100);
    let problem = cached.check().unwrap_err();
    assert_eq!(problem.kind, ErrorKind::Config);
    let message = "tool `whoami` receives injected values (CallContext) and cannot be cached: its result may differ per session";
    assert_eq!(problem.message, message);
    let refused = ToolManager::builder().tool(cached).build().unwrap_err();
    assert_eq!(refused.problems().len(), 1);
    assert_eq!(refused.problems()[0].message, message);
    assert_eq!(
        refused.to_string(),
        format!("cannot build the tool manager: {message}")
    );
}

/// A custom `Tool` that would tell sessions apart through `call_in`.
struct CustomWhoami {
    definition: fexpr::ToolDefinition,
    features: ToolFeatures,
}

impl Tool for CustomWhoami {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.definition
    }
    fn call(&self, _: Vec<Option<Value>>) -> fexpr::tool::ToolFuture {
        Box::pin(async { Ok(ToolOutput::new(Value::Str("no session".into()))) })
    }
    fn features(&self) -> Option<&ToolFeatures> {
        Some(&self.features)
    }
    fn call_in(&self, _: Vec<Option<Value>>, ctx: CallContext) -> fexpr::tool::ToolFuture {
        let id = ctx.session().get_id().unwrap_or("").to_string();
        Box::pin(async move { Ok(ToolOutput::new(Value::Str(id))) })
    }
}

#[test]
fn a_cached_custom_tool_is_called_without_a_context() {
    let custom = |features: ToolFeatures| CustomWhoami {
        definition: fexpr::ToolDefinition::new(
            "whoami",
            "",
            serde_json::json!({"type": "object", "properties": {}}),
        ),
        features,
    };
    let manager = ToolManager::builder()
        .tool(custom(ToolFeatures::new()))
        .build()
        .unwrap();
    let [alice, _] = alice_and_bob(&manager);
    assert!(
        alice.iter().all(|o| o == &Ok(Value::Str("alice".into()))),
        "{alice:?}"
    );
    // Cached: the key is the arguments, so the tool never sees a session to leak.
    let manager = ToolManager::builder()
        .tool(custom(ToolFeatures::new().cached(100)))
        .build()
        .unwrap();
    for outs in alice_and_bob(&manager) {
        assert!(
            outs.iter()
                .all(|o| o == &Ok(Value::Str("no session".into()))),
            "{outs:?}"
        );
    }
}

// ---------------------------------------------------------------- panics

#[test]
fn a_panicking_tool_of_any_kind_is_a_tool_failed_error() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("sync_boom", [], || -> i64 {
            panic!("boom")
        }))
        .tool(FunctionTool::new_async("async_boom", [], || async {
            tokio::task::yield_now().await;
            if true {
                panic!("boom");
            }
            1i64
        }))
        .tool(FunctionTool::with_context(
            "context_boom",
            [],
            |_ctx: CallContext| -> i64 { panic!("boom") },
        ))
        .tool(FunctionTool::with_context_async(
            "context_async_boom",
            [],
            |_ctx: CallContext| async {
                tokio::task::yield_now().await;
                if true {
                    panic!("boom");
                }
                1i64
            },
        ))
        .build()
        .unwrap();
    let text = "[sync_boom(), async_boom(), context_boom(), context_async_boom()]";
    let outs = run(&manager, Session::new(), text);
    // Called from the guest, the same: a panic never unwinds through wasm frames (the engine
    // has no native unwind information for them, see `sandbox::engine`).
    #[cfg(feature = "sandbox")]
    let outs = [outs, sandboxed(&manager, Session::new(), text)].concat();
    for out in &outs {
        let e = out.output.as_ref().expect_err("an error, not an output");
        assert_eq!(e.kind, ErrorKind::ToolFailed, "{out}");
        assert_eq!(e.message, "the tool panicked: boom", "{out}");
    }
    let kinds = if cfg!(feature = "sandbox") { 8 } else { 4 };
    assert_eq!(outs.len(), kinds);
}

// ---------------------------------------------------------------- return types

#[test]
fn every_tool_kind_returns_values_outputs_and_results_with_any_error() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("plain", [], || 1i64))
        .tool(FunctionTool::new("shown", [], || {
            ToolOutput::new(Value::Int(2)).with_observation("two")
        }))
        .tool(FunctionTool::new(
            "io",
            [],
            || -> Result<i64, std::io::Error> { Err(std::io::Error::other("disk on fire")) },
        ))
        .tool(FunctionTool::new_async("limited", [], || async {
            Err::<ToolOutput, _>(fexpr::Error::limit(fexpr::LimitKind::Calls, 2, 3))
        }))
        .tool(FunctionTool::with_context(
            "ctx_error",
            [],
            |_ctx: CallContext| -> Result<i64, fexpr::Error> {
                Err(fexpr::Error::new(ErrorKind::ToolFailed, "no answer"))
            },
        ))
        .tool(FunctionTool::with_context_async(
            "ctx_output",
            [],
            |_ctx: CallContext| async { Ok::<_, ToolError>(ToolOutput::new(Value::Int(3))) },
        ))
        .build()
        .unwrap();
    let outs = run(
        &manager,
        Session::new(),
        "[plain(), shown(), io(), limited(), ctx_error(), ctx_output()]",
    );
    let got: Vec<String> = outs
        .iter()
        .map(|o| match &o.output {
            Ok(v) => v.repr(),
            Err(e) => format!("{:?}: {}", e.kind, e.message),
        })
        .collect();
    assert_eq!(got[..3], ["1", "2", "ToolFailed: disk on fire"]);
    // An `fexpr::Error` keeps its kind, and its kind is not written twice.
    assert_eq!(got[3], "Limit: max_calls limit exceeded: 3 > 2");
    assert_eq!(got[4], "ToolFailed: no answer");
    assert_eq!(got[5], "3");
}

// ---------------------------------------------------------------- checked registration

#[test]
fn a_wrong_default_or_unknown_parameter_is_a_problem_of_the_tool() {
    let wrong = FunctionTool::new("f", ["n"], |n: Option<i64>| n).default("n", "one");
    let problem = wrong.check().unwrap_err();
    assert_eq!(
        problem.message,
        "tool `f`: default for `n` is 'one', not an int | None"
    );
    let unknown = FunctionTool::new("g", ["a"], |a: i64| a)
        .default("b", 1)
        .param_description("c", "nothing");
    let problem = unknown.check().unwrap_err();
    assert_eq!(
        problem.message,
        "`FunctionTool::default`: tool `g` has no parameter `b`; its parameters are `a`; \
         `FunctionTool::param_description`: tool `g` has no parameter `c`; its parameters are `a`"
    );
    assert_eq!(problem.kind, ErrorKind::Config);
    // Building the manager reports every problem of every tool at once, in order, and the
    // limits' too; a `?` turns them into one `Config` error.
    let refused = ToolManager::builder()
        .tool(wrong)
        .tool(FunctionTool::new("fine", ["a"], |a: i64| a))
        .tool(unknown)
        .limits(fexpr::Limits::default().memory_bytes(1 << 20))
        .build()
        .unwrap_err();
    let messages: Vec<&str> = refused
        .problems()
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        messages[0],
        "tool `f`: default for `n` is 'one', not an int | None"
    );
    assert!(messages[1].starts_with("`FunctionTool::default`: tool `g`"));
    assert!(messages[2].contains("memory_bytes"), "{}", messages[2]);
    assert!(refused
        .problems()
        .iter()
        .all(|p| p.kind == ErrorKind::Config));
    let text = refused.to_string();
    assert!(
        text.starts_with("cannot build the tool manager: 3 problems\n- tool `f`"),
        "{text}"
    );
    let error: fexpr::Error = refused.into();
    assert_eq!(error.kind, ErrorKind::Config);
    assert_eq!(error.message, text);
    // A default that converts is stored as the parameter's type (an int is a float, PEP 484).
    let ok = FunctionTool::new("h", ["x"], |x: f64| x).default("x", 1);
    assert!(ok.check().is_ok());
    assert_eq!(
        ok.definition().python_signature(),
        "h(x: float = 1) -> float"
    );
}

#[test]
fn a_default_before_a_required_parameter_is_shown_as_valid_python() {
    let f = FunctionTool::new("f", ["a", "b"], |a: i64, b: i64| a * 10 + b).default("a", 1);
    assert_eq!(
        f.definition().python_signature(),
        "f(a: int = 1, *, b: int) -> int"
    );
    let manager = ToolManager::builder().tool(f).build().unwrap();
    // What Python accepts for that signature binds.
    assert_eq!(one(&manager, "f(b=2)").output, Ok(Value::Int(12)));
    assert_eq!(one(&manager, "f(3, b=2)").output, Ok(Value::Int(32)));
}

#[test]
fn a_conversion_error_names_the_parameter_not_an_internal_name() {
    let manager = ToolManager::builder()
        .tool(FunctionTool::new("small", ["count"], |count: u8| count))
        .build()
        .unwrap();
    let out = one(&manager, "small(300)");
    let e = out.output.expect_err("an error");
    assert!(e.message.contains("`count`"), "{}", e.message);
    assert!(!e.message.contains("A1"), "{}", e.message);
}

// ---------------------------------------------------------------- sync tools and threads

#[test]
fn sync_tools_of_one_response_run_concurrently_unless_inline() {
    let slow = |name: &'static str| {
        FunctionTool::new(name, [], move || {
            std::thread::sleep(Duration::from_millis(100));
            name.to_string()
        })
    };
    let manager = ToolManager::builder()
        .tool(slow("a"))
        .tool(slow("b"))
        .tool(slow("c"))
        .build()
        .unwrap();
    let started = Instant::now();
    let outs = run(&manager, Session::new(), "[a(), b(), c()]");
    let elapsed = started.elapsed();
    // One after another they take at least 300 ms; the margin is for a loaded machine.
    assert!(
        elapsed < Duration::from_millis(290),
        "took {elapsed:?}: not concurrent"
    );
    assert!(outs.iter().all(|o| o.output.is_ok()), "{outs:?}");

    let inline = ToolManager::builder()
        .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b).inline())
        .build()
        .unwrap();
    assert_eq!(one(&inline, "add(2, 3)").output, Ok(Value::Int(5)));
}

// ---------------------------------------------------------------- definitions

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Size {
    w: u32,
    h: Option<u32>,
}

#[test]
fn the_strict_openai_form_follows_openais_rules_at_every_level() {
    let manager = ToolManager::builder()
        .tool(
            FunctionTool::new("area", ["size", "scale"], |s: Size, k: Option<i64>| {
                i64::from(s.w) * i64::from(s.h.unwrap_or(1)) * k.unwrap_or(1)
            })
            .default("scale", 1),
        )
        .build()
        .unwrap();
    let tools = manager.definitions().openai_strict();
    let function = &tools[0]["function"];
    assert_eq!(function["strict"], true);
    let text = function.to_string();
    for absent in ["\"format\"", "\"default\""] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }
    let params = &function["parameters"];
    assert_eq!(params["required"], serde_json::json!(["size", "scale"]));
    assert_eq!(params["additionalProperties"], false);
    let size = &params["$defs"]["Size"];
    assert_eq!(size["additionalProperties"], false);
    assert_eq!(size["required"], serde_json::json!(["w", "h"]));
    assert_eq!(
        size["properties"]["h"]["type"],
        serde_json::json!(["integer", "null"])
    );
    // The plain form closes records too, as binding does.
    let plain = &manager.definitions().openai()[0]["function"]["parameters"];
    assert_eq!(plain["$defs"]["Size"]["additionalProperties"], false);
    let out = one(&manager, "area(size={'w': 2, 'h': 3, 'd': 4})");
    assert!(
        out.output.is_err(),
        "an undeclared field is refused: {out:?}"
    );
}

// ---------------------------------------------------------------- schema bounds

/// A tool known only by its JSON definition (as loaded from OpenAI's `tools`).
struct Defined(fexpr::ToolDefinition);

impl Tool for Defined {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.0
    }
    fn call(&self, _: Vec<Option<Value>>) -> fexpr::tool::ToolFuture {
        Box::pin(async { Ok(ToolOutput::new(Value::Str("ran".into()))) })
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Order {
    #[schemars(range(max = 10))]
    quantity: i64,
    #[schemars(length(max = 5), regex(pattern = r"^[A-Z]+$"))]
    code: String,
}

#[test]
fn schema_bounds_hold_for_tools_from_openai_json_and_from_rust() {
    let defs = fexpr::tooldefs::from_json(&serde_json::json!({"type": "function", "function": {
        "name": "order", "description": "Order items.",
        "parameters": {"type": "object", "properties": {
            "quantity": {"type": "integer", "maximum": 10},
            "code": {"type": "string", "maxLength": 5, "pattern": "^[A-Z]+$"}},
            "required": ["quantity", "code"]}}}))
    .unwrap();
    let from_json = ToolManager::builder()
        .tool(Defined(defs[0].clone()))
        .build()
        .unwrap();
    let from_rust = ToolManager::builder()
        .tool(FunctionTool::new("order", ["order"], |o: Order| {
            format!("{} x {}", o.quantity, o.code)
        }))
        .build()
        .unwrap();
    let cases = [
        (
            &from_json,
            "order(quantity=11, code='AB')",
            "`quantity` must be at most 10, got 11",
        ),
        (
            &from_json,
            "order(quantity=1, code='ABCDEF')",
            "`code` must have at most 5 characters, got 6",
        ),
        (
            &from_json,
            "order(quantity=1, code='ab')",
            "`code` does not match the pattern `^[A-Z]+$`, got 'ab'",
        ),
        (
            &from_rust,
            "order({'quantity': 11, 'code': 'AB'})",
            "`order.quantity` must be at most 10, got 11",
        ),
        (
            &from_rust,
            "order({'quantity': 1, 'code': 'ABCDEF'})",
            "`order.code` must have at most 5 characters, got 6",
        ),
        (
            &from_rust,
            "order({'quantity': 1, 'code': 'ab'})",
            "`order.code` does not match the pattern `^[A-Z]+$`, got 'ab'",
        ),
    ];
    for (manager, call, message) in cases {
        let out = one(manager, call);
        let e = out.output.err().unwrap_or_else(|| panic!("{call} ran"));
        assert_eq!(e.message, message, "{call}");
    }
    assert_eq!(
        one(&from_json, "order(quantity=10, code='ABC')").output,
        Ok(Value::Str("ran".into()))
    );
    assert_eq!(
        one(&from_rust, "order({'quantity': 10, 'code': 'ABC'})").output,
        Ok(Value::Str("10 x ABC".into()))
    );
}

/// A tool returning `ToolOutput` (any value) shows no definitions in its result's schema; one
/// returning a record refers to its definition there.
#[test]
fn a_result_schema_carries_only_the_definitions_it_uses() {
    use fexpr::demo::Point;
    let any = FunctionTool::new("f", ["p"], |p: Point| {
        fexpr::ToolOutput::new(Value::Int(p.x))
    });
    let returns = any.definition().returns.clone().expect("a result schema");
    assert_eq!(returns, serde_json::json!({}), "{returns}");
    let record = FunctionTool::new("g", ["p"], |p: Point| p);
    let returns = record
        .definition()
        .returns
        .clone()
        .expect("a result schema");
    assert!(returns.get("$defs").is_some(), "{returns}");
}

/// Fallible tools written the obvious way need no annotation, whatever their error type:
/// `String`, `&str`, `ToolError`, `fexpr::Error`, a `std::error::Error`, a boxed error, beside a
/// value or a `ToolOutput`, sync or async; the `Err` is the call's error, the `Ok` the result.
#[test]
fn fallible_tools_need_no_annotation() {
    type Boxed = Box<dyn std::error::Error + Send + Sync>;
    let manager = ToolManager::builder()
        .tool(FunctionTool::new(
            "s",
            ["n"],
            |n: i64| -> Result<String, String> {
                if n < 0 {
                    Err(format!("{n} < 0"))
                } else {
                    Ok(n.to_string())
                }
            },
        ))
        .tool(FunctionTool::new(
            "r",
            ["n"],
            |n: i64| -> Result<i64, &'static str> {
                if n < 0 {
                    Err("negative")
                } else {
                    Ok(n)
                }
            },
        ))
        .tool(FunctionTool::new(
            "t",
            ["n"],
            |n: i64| -> Result<i64, ToolError> {
                if n < 0 {
                    Err(ToolError::new("negative").with_hint("give n >= 0"))
                } else {
                    Ok(n)
                }
            },
        ))
        .tool(FunctionTool::new(
            "e",
            ["n"],
            |n: i64| -> Result<i64, fexpr::Error> {
                if n < 0 {
                    Err(fexpr::Error::new(ErrorKind::Value, "negative"))
                } else {
                    Ok(n)
                }
            },
        ))
        .tool(FunctionTool::new(
            "io",
            ["n"],
            |n: i64| -> Result<i64, std::io::Error> {
                if n < 0 {
                    Err(std::io::Error::other("negative"))
                } else {
                    Ok(n)
                }
            },
        ))
        .tool(FunctionTool::new(
            "b",
            ["n"],
            |n: i64| -> Result<i64, Boxed> {
                if n < 0 {
                    Err("negative".into())
                } else {
                    Ok(n)
                }
            },
        ))
        .tool(FunctionTool::new(
            "o",
            ["n"],
            |n: i64| -> Result<ToolOutput, String> {
                if n < 0 {
                    Err("negative".into())
                } else {
                    Ok(ToolOutput::new(Value::Int(n)).with_observation("ok"))
                }
            },
        ))
        .tool(FunctionTool::new_async("a", ["n"], |n: i64| async move {
            if n < 0 {
                Err(format!("{n} < 0"))
            } else {
                Ok(n * 2)
            }
        }))
        .build()
        .unwrap();
    for (name, ok, kind) in [
        ("s", Value::Str("3".into()), ErrorKind::ToolFailed),
        ("r", Value::Int(3), ErrorKind::ToolFailed),
        ("t", Value::Int(3), ErrorKind::ToolFailed),
        ("e", Value::Int(3), ErrorKind::Value),
        ("io", Value::Int(3), ErrorKind::ToolFailed),
        ("b", Value::Int(3), ErrorKind::ToolFailed),
        ("o", Value::Int(3), ErrorKind::ToolFailed),
        ("a", Value::Int(6), ErrorKind::ToolFailed),
    ] {
        assert_eq!(
            one(&manager, &format!("{name}(n=3)")).output,
            Ok(ok),
            "{name}"
        );
        let error = one(&manager, &format!("{name}(n=-1)")).output.unwrap_err();
        assert_eq!(error.kind, kind, "{name}: {error}");
        assert!(
            error.message.contains("negative") || error.message == "-1 < 0",
            "{name}: {error}"
        );
    }
    // The result schema is the `Ok` value's, not the `Result`'s.
    let sig = manager.tool("s").unwrap().definition().python_signature();
    assert_eq!(sig, "s(n: int) -> str");
    let sig = manager.tool("a").unwrap().definition().python_signature();
    assert_eq!(sig, "a(n: int) -> int");
}

/// A tool is registered under any name a provider or MCP allows; Python call text reaches it
/// by its alias (natively, sandboxed, through the model-text door and fexpr's JSON forms), and
/// every output carries its own name.
#[test]
fn tools_keep_the_names_their_definitions_give() {
    let long = format!("{}-{}", "a".repeat(40), "b".repeat(59));
    let manager = ToolManager::builder()
        .tool(FunctionTool::new(
            "get-current-weather",
            ["city"],
            |c: String| format!("sunny in {c}"),
        ))
        .tool(FunctionTool::new(
            "github.create_issue",
            ["title"],
            |t: String| t,
        ))
        .tool(FunctionTool::new(long.as_str(), ["n"], |n: i64| n + 1))
        .build()
        .unwrap();
    let alias = format!("{}_{}", "a".repeat(40), "b".repeat(59));
    let cases = [
        (
            "get_current_weather(city=\"Paris\")",
            "get-current-weather",
            Value::from("sunny in Paris"),
        ),
        (
            "github.create_issue(title=\"x\")",
            "github.create_issue",
            Value::from("x"),
        ),
        (&*format!("{alias}(n=1)"), long.as_str(), Value::Int(2)),
    ];
    for (text, name, value) in &cases {
        let out = one(&manager, text);
        assert_eq!(out.output.as_ref(), Ok(value), "{text}: {out:?}");
        assert_eq!(out.name, *name);
        #[cfg(feature = "sandbox")]
        {
            let out = sandboxed(&manager, Session::new(), text).remove(0);
            assert_eq!(out.output.as_ref(), Ok(value), "{text}: {out:?}");
            assert_eq!(out.name, *name);
        }
        let outs = common::runtime().block_on(async {
            manager
                .run(Input::model_output(format!("[{text}]")))
                .await
                .outputs
        });
        assert_eq!(outs[0].name, *name, "{outs:?}");
    }
    // fexpr's own JSON form, by the exact name.
    let json = r#"{"name": "get-current-weather", "kwargs": {"city": "Oslo"}}"#;
    let out = common::runtime()
        .block_on(async { manager.run(Input::json(json)).await.outputs })
        .remove(0);
    assert_eq!(out.output, Ok(Value::from("sunny in Oslo")), "{out:?}");
    assert_eq!(out.name, "get-current-weather");
    // The provider forms show the name, the Python forms the alias.
    let weather = manager.tool("get_current_weather").unwrap().definition();
    assert_eq!(weather.openai()["function"]["name"], "get-current-weather");
    assert_eq!(
        weather.python_signature(),
        "get_current_weather(city: str) -> str"
    );
    // A misspelt Python call is told the alias.
    let e = one(&manager, "get_curent_weather(city=\"x\")");
    assert!(
        e.output
            .as_ref()
            .unwrap_err()
            .hint
            .as_deref()
            .unwrap_or("")
            .contains("`get_current_weather`"),
        "{e:?}"
    );
}

/// A name no provider allows, and two names Python text cannot tell apart, are registration
/// problems naming them; nothing panics.
#[test]
fn names_no_provider_allows_and_aliases_that_clash_are_build_errors() {
    let problems = ToolManager::builder()
        .tool(FunctionTool::new("bad name!", [], || 1_i64))
        .tool(FunctionTool::new(&*"x".repeat(129), [], || 1_i64))
        .tool(FunctionTool::new("get-sum", [], || 1_i64))
        .tool(FunctionTool::new("get_sum", [], || 2_i64))
        .build()
        .unwrap_err();
    let messages: Vec<&str> = problems
        .problems()
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].starts_with("the tool name `bad name!` is not allowed: it holds ' '"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("it has 129 characters"),
        "{messages:?}"
    );
    assert_eq!(
        messages[2],
        "the tools `get-sum` and `get_sum` are both called `get_sum` from Python"
    );
    assert!(problems
        .problems()
        .iter()
        .all(|p| p.kind == fexpr::ErrorKind::Config));
}

//! Every future the public API returns is `Send` (and `'static` when it owns its inputs), so
//! it can be `tokio::spawn`ed from a multi-threaded server with one shared manager. These
//! are compile-time checks: the file does not build if one of them stops being `Send`.

use fexpr::call::{Function, FunctionExpression};
use fexpr::repair::RepairOptions;
use fexpr::{Input, Session, ToolManager, Value};
use std::future::IntoFuture;
use std::sync::Arc;

fn assert_send<T: Send + 'static>(_: T) {}

fn manager() -> Arc<ToolManager> {
    Arc::new(fexpr::demo::manager())
}

#[test]
fn the_manager_is_shared_across_threads() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<ToolManager>();
}

#[test]
fn native_futures_are_send() {
    let m = manager();
    assert_send(m.run("Sure: add(a=1, b=2)").into_future());
    assert_send(m.run(Input::expr("[add(a=1, b=2)]")).into_future());
    assert_send(
        m.run(Input::expr("add(a=1, b=2)"))
            .session(Session::default())
            .limits(fexpr::Limits::default())
            .repair(RepairOptions::strict())
            .into_future(),
    );
    assert_send(m.run(Input::json(r#"{"name": "add"}"#)).into_future());
    assert_send(
        m.run(Input::openai(serde_json::json!({"name": "add"})))
            .into_future(),
    );
    assert_send(m.run(Input::anthropic(serde_json::json!([]))).into_future());
    let exprs = vec![FunctionExpression::new("add(a=1, b=2)")];
    assert_send(m.run(Input::func_exprs(exprs.clone())).into_future());
    let func = Function {
        name: "add".into(),
        args: vec![Value::Int(1), Value::Int(2)],
        kwargs: Default::default(),
    };
    assert_send(m.run(Input::function(func.clone())).into_future());
    assert_send(m.run(Input::expr("add(a=1, b=2)")).one());
    assert_send(m.run(Input::function(func.clone())).one());
    let m = manager();
    assert_send(async move { m.execute_func_expr("add(a=1, b=2)").await });
    let m = manager();
    assert_send(async move { m.execute_func_exprs(&exprs).await });
    let m = manager();
    assert_send(async move { m.execute_func(func).await });
}

#[cfg(feature = "sandbox")]
#[test]
fn sandboxed_futures_are_send() {
    let m = manager();
    assert_send(
        m.run(Input::expr("add(a=1, b=2)"))
            .sandboxed()
            .into_future(),
    );
    assert_send(m.run("add(a=1, b=2)").sandboxed().into_future());
    assert_send(m.run(Input::expr("add(a=1, b=2)")).sandboxed().one());
    assert_send(
        m.run(Input::json(r#"{"name": "add"}"#))
            .sandboxed()
            .into_future(),
    );
    let m = manager();
    assert_send(async move { m.execute_func_expr_via_sandbox("add(a=1, b=2)").await });
    let m = manager();
    let exprs = vec![FunctionExpression::new("add(a=1, b=2)")];
    assert_send(async move { m.execute_func_exprs_via_sandbox(&exprs).await });
    let m = manager();
    let func = Function {
        name: "add".into(),
        args: vec![Value::Int(1), Value::Int(2)],
        kwargs: Default::default(),
    };
    assert_send(async move { m.execute_func_via_sandbox(func).await });
}

#[cfg(feature = "mcp")]
#[test]
fn connecting_to_mcp_servers_is_send() {
    let config = fexpr::mcp::McpConfig::from_json(&serde_json::json!({"mcpServers": {}}))
        .expect("an empty config");
    assert_send(async move {
        fexpr::mcp::McpTools::connect(&config, fexpr::mcp::McpOptions::default()).await
    });
}

#[test]
fn acquiring_from_a_pool_is_send() {
    struct Env;
    impl fexpr::pool::Environment for Env {
        fn reset(&mut self) {}
    }
    let pool = Arc::new(fexpr::pool::EnvPool::new("envs", 1, || Env));
    assert_send(async move { pool.acquire("a").await.map(|_| ()) });
}

/// What a server does: one shared manager, requests on spawned tasks of a multi-threaded
/// runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_requests_run_on_a_shared_manager() {
    let m = manager();
    let native = tokio::spawn({
        let m = m.clone();
        async move { m.execute_func_expr("add(a=1, b=2)").await }
    });
    let raw = tokio::spawn(m.run("Sure:\nadd(a=2, b=3)").into_future());
    assert_eq!(native.await.expect("joins").output, Ok(Value::Int(3)));
    let raw = raw.await.expect("joins");
    assert_eq!(raw.outputs[0].output, Ok(Value::Int(5)));
    #[cfg(feature = "sandbox")]
    {
        let sandboxed =
            tokio::spawn(async move { m.execute_func_expr_via_sandbox("add(a=3, b=4)").await });
        assert_eq!(sandboxed.await.expect("joins").output, Ok(Value::Int(7)));
    }
}

//! Every future the public API returns is `Send` (and `'static` when it owns its inputs), so
//! it can be `tokio::spawn`ed from a multi-threaded server with one shared manager. These
//! are compile-time checks: the file does not build if one of them stops being `Send`.

use fexpr::call::{Function, FunctionExpression};
use fexpr::{Session, ToolManager, Value};
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
    assert_send(async move { m.execute_func_expr("add(a=1, b=2)").await });
    let m = manager();
    assert_send(async move { m.execute("[add(a=1, b=2)]").await });
    let m = manager();
    assert_send(async move { m.execute_in(Session::default(), "add(a=1, b=2)").await });
    let m = manager();
    assert_send(async move {
        m.execute_func_expr_in(Session::default(), "add(a=1, b=2)")
            .await
    });
    let m = manager();
    let exprs = vec![FunctionExpression::new("add(a=1, b=2)")];
    assert_send(async move { m.execute_func_exprs(&exprs).await });
    let m = manager();
    let func = Function {
        name: "add".into(),
        args: vec![Value::Int(1), Value::Int(2)],
        kwargs: Default::default(),
    };
    assert_send(async move { m.execute_func(func).await });
    let m = manager();
    assert_send(async move { m.execute_json_text(r#"{"name": "add"}"#).await });
    let m = manager();
    let json = serde_json::json!({"name": "add"});
    assert_send(async move { m.execute_json(&json).await });
    let m = manager();
    assert_send(async move { m.execute_model_output("Sure: add(a=1, b=2)").await });
}

#[cfg(feature = "sandbox")]
#[test]
fn sandboxed_futures_are_send() {
    let m = manager();
    assert_send(async move { m.execute_via_sandbox("add(a=1, b=2)").await });
    let m = manager();
    assert_send(async move { m.execute_func_expr_via_sandbox("add(a=1, b=2)").await });
    let m = manager();
    let exprs = vec![FunctionExpression::new("add(a=1, b=2)")];
    assert_send(async move { m.execute_func_exprs_via_sandbox(&exprs).await });
    let m = manager();
    assert_send(async move { m.execute_json_text_via_sandbox(r#"{"name": "add"}"#).await });
    let m = manager();
    assert_send(async move {
        m.execute_model_output_via_sandbox("add(a=1, b=2)", &Default::default())
            .await
    });
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
    let raw = tokio::spawn({
        let m = m.clone();
        async move { m.execute_model_output("Sure: add(a=2, b=3)").await }
    });
    assert_eq!(native.await.expect("joins").output, Some(Value::Int(3)));
    let raw = raw.await.expect("joins");
    assert_eq!(raw.outputs[0].output, Some(Value::Int(5)));
    #[cfg(feature = "sandbox")]
    {
        let sandboxed =
            tokio::spawn(async move { m.execute_func_expr_via_sandbox("add(a=3, b=4)").await });
        assert_eq!(sandboxed.await.expect("joins").output, Some(Value::Int(7)));
    }
}

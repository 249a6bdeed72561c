//! The seed walkthrough (AdalFlow's "Function calls" tutorial), replayed with fexpr.
//!
//! Six tools (sync and async), a context with variables `x` and `y`, `np.array` and the
//! `Point` record type; the seven queries' calls in both model-output formats (`Function`
//! JSON and `FunctionExpression`), then the parallel batch.
//!
//! Run: `cargo run --release --example walkthrough`

use fexpr::Input;
use fexpr::{FunctionExpression, FunctionOutput};
use serde_json::json;

#[tokio::main]
async fn main() {
    let manager = fexpr::demo::manager();

    println!(
        "== Tools as a model sees them (YAML) ==\n{}",
        manager.definitions().yaml()
    );
    println!("== The same as Python signatures ==");
    for def in manager.definitions() {
        println!("{}", def.python());
    }

    // 1. The model answers with `Function` JSON: name + kwargs. Unlike AdalFlow, a dict where a
    //    `Point` is expected becomes a `Point`, and a nested list becomes an ndarray.
    println!("\n== Function format (name + kwargs) ==");
    let functions = [
        json!({"name": "add", "kwargs": {"a": 2, "b": 3}}),
        json!({"name": "search", "kwargs": {"query": "something"}}),
        json!({"name": "add_points", "kwargs": {"p1": {"x": 1, "y": 2}, "p2": {"x": 3, "y": 4}}}),
        json!({"name": "numpy_sum", "kwargs": {"arr": [[1, 2], [3, 4]]}}),
        json!({"name": "multiply", "kwargs": {"a": 2, "b": "x"}}),
        json!({"name": "divide", "kwargs": {"a": 2.0, "b": 3.0}}),
        json!({"name": "add", "kwargs": {"a": 5, "b": "y"}}),
    ];
    for f in &functions {
        // `Input::json(text)` reads JSON text within the manager's limits and refuses duplicate
        // keys; `Input::openai(value)` takes it parsed (duplicates are no longer visible there).
        for out in manager.run(Input::json(f.to_string())).await {
            show(&out);
        }
    }
    println!(
        "  (in JSON, `x` and `y` are strings: a type error, not silently 'xx' as in AdalFlow)"
    );

    // 2. The model answers with `FunctionExpression`: a Python call, with variables and records.
    println!("\n== FunctionExpression format (a call expression) ==");
    let actions = [
        "add(a=2, b=3)",
        "search(query=\"something\")",
        "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
        "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
        "multiply(a=2, b=x)",
        "divide(a=2.0, b=3.0)",
        "add(a=y, b=5)",
    ];
    for action in actions {
        show(&manager.execute_func_expr(action).await);
    }

    // 3. Several calls in one response run concurrently; outputs come back in call order.
    println!("\n== Parallel calls ==");
    let batch: Vec<FunctionExpression> = actions
        .iter()
        .map(|a| FunctionExpression::new(*a))
        .collect();
    for out in manager.execute_func_exprs(&batch).await {
        show(&out);
    }
    for out in manager
        .run(Input::expr("[add(a=2, b=3), search(query=\"q\")]"))
        .await
    {
        show(&out);
    }

    // 4. What AdalFlow's eval would have run, or silently dropped, is an error here.
    println!("\n== Rejected ==");
    for bad in [
        "add(a=1, b=2); import os",
        "__import__('os').system('id')",
        "add.__globals__",
        "numpy_sum(arr=np.zeros(3).tofile('x'))",
        "add(a=1, c=2)",
        "ad(a=1, b=2)",
        "'a' * 10**10",
    ] {
        show(&manager.execute_func_expr(bad).await);
    }
}

fn show(out: &FunctionOutput) {
    println!("  {out}");
}

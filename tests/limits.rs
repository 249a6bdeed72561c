//! Every evaluation limit of `fexpr::Limits`, in native mode, at its edge: the input just under
//! the limit passes and the input just over it fails with a `Limit` error naming the limit.

use fexpr::Input;
use fexpr::{Context, ErrorKind, FunctionTool, Limits, ToolManager, Value};

mod common;

/// Built-ins and numpy helpers, plus `blob(n)` (a tool returning `n` bytes of text) and
/// `echo(x)` (a tool returning its argument).
fn manager(limits: Limits) -> ToolManager {
    ToolManager::builder()
        .tool(FunctionTool::new("blob", ["n"], |n: usize| "x".repeat(n)))
        .tool(FunctionTool::new("echo", ["x"], |x: i64| x))
        .context(Context::new().builtins().numpy("np"))
        .limits(limits)
        .build()
        .unwrap()
}

/// The single output of `text`: its value or its error.
fn run(limits: &Limits, text: &str) -> Result<Value, fexpr::Error> {
    let manager = manager(limits.clone());
    let mut outputs =
        common::runtime().block_on(async { manager.run(Input::expr(text)).await.outputs });
    assert_eq!(outputs.len(), 1, "{}", fexpr::error::clip(text, 80));
    let out = outputs.remove(0);
    out.output
}

/// `under` succeeds; `over` fails with a `Limit` error naming `limit`.
fn edge(limits: &Limits, limit: &str, under: &str, over: &str) {
    let clip = |t: &str| fexpr::error::clip(t, 80);
    if let Err(e) = run(limits, under) {
        panic!(
            "{limit}: just under the limit failed: {:?}: {e}",
            clip(under)
        );
    }
    match run(limits, over) {
        Ok(v) => panic!(
            "{limit}: just over the limit passed: {:?} = {}",
            clip(over),
            clip(&v.repr())
        ),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Limit, "{limit}: {:?}: {e}", clip(over));
            assert!(e.message.contains(limit), "{limit}: {:?}: {e}", clip(over));
        }
    }
}

#[test]
fn source_bytes() {
    let limits = Limits::default();
    let n = limits.max_source_bytes;
    let call = "abs(1)";
    let pad = |total: usize| format!("{call}{}", " ".repeat(total - call.len()));
    edge(&limits, "max_source_bytes", &pad(n), &pad(n + 1));
    let small = Limits::default().max_source_bytes(10);
    edge(&small, "max_source_bytes", "abs(12345)", "abs(123456)");
}

#[test]
fn nesting_depth() {
    let limits = Limits::default();
    let nested = |n: usize| format!("abs({}1{})", "(".repeat(n), ")".repeat(n));
    let brackets =
        |n: usize, open: &str, close: &str| format!("len({}{})", open.repeat(n), close.repeat(n));
    // The call's own parenthesis is one level (after an operand, two: see syntax::scan).
    let d = limits.max_depth;
    edge(&limits, "max_depth", &nested(d - 2), &nested(d - 1));
    edge(
        &limits,
        "max_depth",
        &brackets(d - 2, "[", "]"),
        &brackets(d - 1, "[", "]"),
    );
    let unary = |n: usize| format!("abs({}1)", "-".repeat(n));
    edge(&limits, "max_depth", &unary(d - 2), &unary(d - 1));
    let small = Limits::default().max_depth(10);
    edge(&small, "max_depth", &nested(8), &nested(9));
}

#[test]
fn integer_digits_of_literals_and_results() {
    let limits = Limits::default();
    let n = limits.max_int_digits;
    let literal = |digits: usize| format!("abs(1{})", "0".repeat(digits - 1));
    edge(&limits, "max_int_digits", &literal(n), &literal(n + 1));
    // 10**k has k + 1 digits; the check happens before the power is computed.
    let power = |digits: usize| format!("abs(10**{})", digits - 1);
    edge(&limits, "max_int_digits", &power(n), &power(n + 1));
    let product = |digits: usize| format!("abs(10**{} * 10)", digits - 2);
    edge(&limits, "max_int_digits", &product(n), &product(n + 1));
    let sum = format!("abs(9{} + 1)", "9".repeat(n - 2));
    let sum_over = format!("abs(9{} + 1)", "9".repeat(n - 1));
    edge(&limits, "max_int_digits", &sum, &sum_over);
}

#[test]
fn string_and_bytes_sizes() {
    let limits = Limits::default();
    let n = limits.max_str_bytes;
    for quote in ["'", "b'"] {
        let repeat = |k: usize| format!("len({quote}a' * {k})");
        edge(&limits, "max_str_bytes", &repeat(n), &repeat(n + 1));
        let reversed = |k: usize| format!("len({k} * {quote}ab')");
        edge(
            &limits,
            "max_str_bytes",
            &reversed(n / 2),
            &reversed(n / 2 + 1),
        );
        let concat = |k: usize| format!("len({quote}a' * {} + {quote}a' * {})", n / 2, k);
        edge(&limits, "max_str_bytes", &concat(n / 2), &concat(n / 2 + 1));
    }
    // A literal: the source limit is raised so that the string limit is the one hit.
    let big = Limits::default().max_source_bytes(4 << 20);
    let literal = |k: usize| format!("len('{}')", "a".repeat(k));
    edge(&big, "max_str_bytes", &literal(n), &literal(n + 1));
    // Multi-byte characters count in UTF-8 bytes.
    let wide = |k: usize| format!("len('\\u00e9' * {k})");
    edge(&limits, "max_str_bytes", &wide(n / 2), &wide(n / 2 + 1));
}

#[test]
fn collection_sizes() {
    let limits = Limits::default();
    let n = limits.max_collection_len;
    let repeat = |k: usize| format!("len([0] * {k})");
    edge(&limits, "max_collection_len", &repeat(n), &repeat(n + 1));
    let tuple = |k: usize| format!("len({k} * (0,))");
    edge(&limits, "max_collection_len", &tuple(n), &tuple(n + 1));
    let concat = |k: usize| format!("len([0] * {} + [0] * {k})", n / 2);
    edge(
        &limits,
        "max_collection_len",
        &concat(n / 2),
        &concat(n / 2 + 1),
    );
    // Nested: 100 lists of 999 count 100 + 99,900.
    edge(
        &limits,
        "max_collection_len",
        "len([[0] * 999] * 100)",
        "len([[0] * 1000] * 100)",
    );
    let zeros = |k: usize| format!("len(np.zeros({k}))");
    edge(&limits, "max_collection_len", &zeros(n), &zeros(n + 1));
    let arange = |k: usize| format!("len(np.arange({k}))");
    edge(&limits, "max_collection_len", &arange(n), &arange(n + 1));
    let small = Limits::default().max_collection_len(3);
    edge(
        &small,
        "max_collection_len",
        "len([1, 2, 3])",
        "len([1, 2, 3, 4])",
    );
    edge(
        &small,
        "max_collection_len",
        "len({1: 2})",
        "len({1: 2, 3: 4})",
    );
}

#[test]
fn calls_per_input() {
    let limits = Limits::default();
    let n = limits.max_calls;
    // `len` is one call, each `abs(0)` another.
    let inner = |k: usize| format!("len([{}])", vec!["abs(0)"; k - 1].join(", "));
    edge(&limits, "max_calls", &inner(n), &inner(n + 1));
    // A list of tool calls: the limit is for the whole input, and over it nothing runs.
    let manager = manager(limits.clone());
    let list = |k: usize| format!("[{}]", vec!["echo(x=1)"; k].join(", "));
    let outputs =
        common::runtime().block_on(async { manager.run(Input::expr(list(n))).await.outputs });
    assert_eq!(outputs.len(), n);
    assert!(outputs.iter().all(|o| o.output.is_ok()));
    let outputs =
        common::runtime().block_on(async { manager.run(Input::expr(list(n + 1))).await.outputs });
    assert_eq!(outputs.len(), n + 1);
    for out in &outputs {
        let e = out.error().expect("an error");
        assert_eq!(e.kind, ErrorKind::Limit, "{e}");
        assert!(e.message.contains("max_calls"), "{e}");
    }
}

#[test]
fn output_size() {
    let limits = Limits::default();
    // A str is accounted as one value node (24 bytes) plus its bytes.
    let n = limits.max_output_bytes - 24;
    edge(
        &limits,
        "max_output_bytes",
        &format!("blob(n={n})"),
        &format!("blob(n={})", n + 1),
    );
}

#[test]
fn eval_bytes() {
    let budget = 10_000;
    let limits = Limits::default().max_eval_bytes(budget);
    // Find where `len('a' * k)` starts to fail, then check that edge lies just under the budget
    // (the literal, the count and the result are all charged).
    let text = |k: usize| format!("len('a' * {k})");
    let first_over = (0..=budget)
        .find(|k| run(&limits, &text(*k)).is_err())
        .expect("the budget is hit before it is exceeded by the result alone");
    assert!(first_over > budget - 200, "{first_over}");
    edge(
        &limits,
        "max_eval_bytes",
        &text(first_over - 1),
        &text(first_over),
    );
    // Values are charged as they are materialized: two halves add up.
    let half = first_over / 2;
    let halves = |k: usize| format!("len(['a' * {half}, 'a' * {k}])");
    let over = (half - 100..=half + 100)
        .find(|k| run(&limits, &halves(*k)).is_err())
        .expect("two halves exceed the budget");
    edge(&limits, "max_eval_bytes", &halves(over - 1), &halves(over));
}

#[test]
fn builtin_bombs_end_quickly() {
    // Built-ins and numpy helpers driven by huge arguments: an error or a small value, fast.
    let limits = Limits::default();
    for text in [
        "round(1.5, 10**9)",
        "round(10**4299, -4000)",
        "round(1e308, -10**18)",
        "sum([10**4299] * 1000)",
        "max([[1] * 1000] * 99)",
        "min(np.zeros((300, 300)))",
        "np.mean(np.arange(0, 100000, 1e-300))",
        "abs(-(10**4299) * 10)",
        "len(np.ones((0, 100000, 100000)))",
        "np.sum(np.zeros((100000, 100000, 0)))",
        "np.array([[[]] * 1000] * 1000)",
    ] {
        let started = std::time::Instant::now();
        let result = run(&limits, text);
        let elapsed = started.elapsed();
        assert!(
            elapsed < std::time::Duration::from_secs(2),
            "{text}: {elapsed:?}"
        );
        if let Ok(v) = result {
            assert!(v.approx_size() < 1 << 20, "{text}: {}", v.repr().len());
        }
    }
}

/// `sleep(ms)` waits asynchronously; `spin(ms)` is a sync tool on the blocking pool that
/// keeps its thread busy.
fn slow_tools(limits: Limits) -> ToolManager {
    ToolManager::builder()
        .tool(FunctionTool::new_async(
            "sleep",
            ["ms"],
            |ms: u64| async move {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                ms
            },
        ))
        .tool(FunctionTool::new("spin", ["ms"], |ms: u64| {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            ms
        }))
        .limits(limits)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_tool_call_past_its_deadline_is_a_limit_error_on_time() {
    use fexpr::error::LimitKind;
    use std::time::{Duration, Instant};
    let manager = slow_tools(Limits::default().call_deadline(Duration::from_millis(50)));
    for text in ["sleep(ms=700)", "spin(ms=700)"] {
        let started = Instant::now();
        let out = manager.execute_func_expr(text).await;
        let took = started.elapsed();
        let error = out.output.expect_err("a limit error");
        assert_eq!(error.kind, ErrorKind::Limit, "{text}: {error}");
        assert_eq!(
            error.limit,
            Some(LimitKind::CallDeadline),
            "{text}: {error}"
        );
        assert!(
            error.message.starts_with("call_deadline limit exceeded"),
            "{error}"
        );
        assert!(took >= Duration::from_millis(50), "{text}: {took:?}");
        assert!(took < Duration::from_millis(500), "{text}: {took:?}");
    }
    // Within the deadline the same tools answer.
    let out = manager.execute_func_expr("sleep(ms=1)").await;
    assert_eq!(out.output, Ok(Value::Int(1)), "{out}");
}

#[tokio::test]
async fn the_request_deadline_bounds_all_its_calls() {
    use fexpr::error::LimitKind;
    use std::time::{Duration, Instant};
    let manager = slow_tools(Limits::default().deadline(Duration::from_millis(80)));
    let started = Instant::now();
    // The inner call takes 50 ms; the outer one would take 700 ms more.
    let out = manager
        .execute_func_expr("sleep(ms=sleep(ms=50) * 14)")
        .await;
    let took = started.elapsed();
    let error = out.output.expect_err("a limit error");
    assert_eq!(error.limit, Some(LimitKind::Deadline), "{error}");
    assert!(took >= Duration::from_millis(80), "{took:?}");
    assert!(took < Duration::from_millis(500), "{took:?}");
}

//! Every evaluation limit of `fexpr::Limits`, in native mode, at its edge: the input just under
//! the limit passes and the input just over it fails with a `Limit` error naming the limit.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

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
fn constructors_per_input() {
    let limits = Limits::default().max_constructors(64);
    let n = limits.max_constructors;
    // `len` is one builtin call, each `abs(0)` another: they count against max_constructors,
    // not against max_calls (which counts tool calls).
    let inner = |k: usize| format!("len([{}])", vec!["abs(0)"; k - 1].join(", "));
    edge(&limits, "max_constructors", &inner(n), &inner(n + 1));
    let in_echo = |k: usize| format!("echo(x={})", inner(k));
    edge(&limits, "max_constructors", &in_echo(n), &in_echo(n + 1));
    // Tool calls with constructors in their arguments: each tool call counts once against
    // max_calls, whatever it builds (1,000 `add_points(p1=Point(...), p2=Point(...))` calls
    // need max_calls 1000, not 2000).
    let manager = fexpr::demo::builder()
        .limits(Limits::default().max_calls(1000))
        .build()
        .unwrap();
    let call = "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))";
    let text = format!("[{}]", vec![call; 1000].join(", "));
    let outputs =
        common::runtime().block_on(async { manager.run(Input::expr(&text)).await.outputs });
    assert_eq!(outputs.len(), 1000);
    assert!(outputs.iter().all(|o| o.output.is_ok()), "{:?}", outputs[0]);
    let e = run(
        &Limits::default().max_constructors(1),
        "echo(x=len([abs(0)]))",
    )
    .unwrap_err();
    assert_eq!(e.limit, Some(fexpr::error::LimitKind::Constructors), "{e}");
    assert_eq!(e.message, "max_constructors limit exceeded: 2 > 1");
}

/// `max_constructors` is one budget for the whole input on every door: model text read
/// natively (whose checked calls run with the values checked, never through the evaluator's
/// count) and sandboxed, an expression, `check`; across the units of a text as within one.
#[test]
fn constructors_are_counted_on_every_door_and_across_units() {
    let rt = common::runtime();
    let one = "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))";
    let unit = "add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})";
    let units = [unit; 3].join("\n");
    // An expression is one expression: its three units are the items of a list.
    let list = format!("[{}]", [unit; 3].join(", "));
    for (limit, text, expr) in [
        (1, one.to_string(), one.to_string()),
        (2, units.clone(), list),
    ] {
        let manager = fexpr::demo::builder()
            .limits(Limits::default().max_constructors(limit))
            .build()
            .unwrap();
        let mut doors = vec![
            (
                "model text",
                manager.run(Input::model_output(text.as_str())),
            ),
            ("expression", manager.run(Input::expr(expr.as_str()))),
        ];
        if cfg!(feature = "sandbox") {
            doors.push((
                "model text, sandboxed",
                manager.run(Input::model_output(text.as_str())).sandboxed(),
            ));
        }
        for (door, request) in doors {
            let outputs = rt.block_on(async { request.await.outputs });
            assert!(!outputs.is_empty(), "{door}: {text}");
            for out in &outputs {
                let e = out
                    .output
                    .as_ref()
                    .err()
                    .unwrap_or_else(|| panic!("{door}: ran {out:?}"));
                assert_eq!(
                    e.limit,
                    Some(fexpr::error::LimitKind::Constructors),
                    "{door}: {e}"
                );
            }
        }
        let checked = manager.check(Input::model_output(text.as_str()));
        assert!(!checked.verdicts.is_empty());
        for verdict in &checked.verdicts {
            let e = verdict.error.as_ref().expect("refused");
            assert_eq!(
                e.limit,
                Some(fexpr::error::LimitKind::Constructors),
                "check: {e}"
            );
        }
        // At the limit, every door runs it.
        let manager = manager
            .to_builder()
            .limits(Limits::default().max_constructors(limit * 2))
            .build()
            .unwrap();
        for input in [
            Input::model_output(text.as_str()),
            Input::expr(expr.as_str()),
        ] {
            let outputs = rt.block_on(async { manager.run(input).await.outputs });
            assert!(outputs.iter().all(|o| o.output.is_ok()), "{outputs:?}");
        }
    }
}

#[test]
fn calls_per_input() {
    let limits = Limits::default();
    let n = limits.max_calls;
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
        let e = out.output.as_ref().expect_err("an error");
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
        // A hang detector (each bomb unchecked takes minutes or more), loose enough for a
        // debug build on a loaded machine.
        assert!(
            elapsed < std::time::Duration::from_secs(30),
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

/// From code that is not async (`fexpr::block_on`, no runtime of the caller's), an async
/// tool's timer, a sync tool's worker and the deadline over both work as on a runtime.
#[test]
fn deadlines_hold_from_sync_code() {
    use fexpr::error::LimitKind;
    use std::time::{Duration, Instant};
    let manager = slow_tools(Limits::default().call_deadline(Duration::from_millis(50)));
    for text in ["sleep(ms=700)", "spin(ms=700)"] {
        let started = Instant::now();
        let out = fexpr::block_on(manager.execute_func_expr(text));
        let took = started.elapsed();
        let error = out.output.expect_err("a limit error");
        assert_eq!(
            error.limit,
            Some(LimitKind::CallDeadline),
            "{text}: {error}"
        );
        assert!(took >= Duration::from_millis(50), "{text}: {took:?}");
        assert!(took < Duration::from_millis(500), "{text}: {took:?}");
    }
    for text in ["sleep(ms=2)", "spin(ms=2)"] {
        let response = fexpr::block_on(manager.run(text));
        assert_eq!(response.outputs[0].output, Ok(Value::Int(2)), "{text}");
    }
}

/// Every limit that bounds memory or stack has a hard ceiling: a value above it is refused
/// (by the builder, by a request's own limits, natively and sandboxed), never run into an
/// allocation or recursion the host cannot survive; every field at 0, 1 and its largest
/// value either is refused that way or runs an input to an output.
#[test]
fn limits_above_their_ceilings_are_refused_on_every_door() {
    for (name, ceiling) in Limits::CEILINGS {
        let mut json = serde_json::to_value(Limits::default()).expect("limits serialize");
        json[*name] = serde_json::json!(ceiling + 1);
        let over: Limits = serde_json::from_value(json).expect("a Limits");
        let error = over.check().expect_err("over the ceiling");
        assert_eq!(error.kind, ErrorKind::Config, "{name}: {error}");
        assert_eq!(
            error.message,
            format!(
                "Limits::{name} is {}, above its ceiling of {ceiling}",
                ceiling + 1
            )
        );
        let built = ToolManager::builder().limits(over.clone()).build();
        assert!(built.is_err(), "{name}: the builder took it");
        let manager = manager(Limits::default());
        for sandboxed in [false, true] {
            let request = manager.run(Input::expr("echo(x=1)")).limits(over.clone());
            let request = if sandboxed {
                request.sandboxed()
            } else {
                request
            };
            let outputs = common::runtime().block_on(async { request.await.outputs });
            let error = outputs[0].output.as_ref().expect_err("refused");
            assert_eq!(error.kind, ErrorKind::Config, "{name} {sandboxed}: {error}");
        }
    }
}

#[test]
fn every_field_at_its_extremes_leaves_the_process_alive() {
    let defaults = serde_json::to_value(Limits::default()).expect("limits serialize");
    let fields = defaults.as_object().expect("an object").clone();
    for (name, default) in &fields {
        let extremes = if default.is_object() {
            // A duration: zero, a nanosecond, the largest.
            vec![
                serde_json::json!({"secs": 0, "nanos": 0}),
                serde_json::json!({"secs": 0, "nanos": 1}),
                serde_json::json!({"secs": u64::MAX, "nanos": 999_999_999}),
            ]
        } else if name == "fuel" {
            vec![0.into(), 1.into(), u64::MAX.into()]
        } else if name == "max_host_calls" {
            vec![0.into(), 1.into(), u32::MAX.into()]
        } else {
            vec![0.into(), 1.into(), (usize::MAX as u64).into()]
        };
        for value in extremes {
            let mut json = defaults.clone();
            json[name] = value.clone();
            let limits: Limits = serde_json::from_value(json).expect("a Limits");
            let manager = manager(Limits::default());
            for sandboxed in [false, true] {
                for text in [
                    "echo(x=len(np.zeros(1000000000)))",
                    "echo(x=len('a' * 10**12))",
                    "blob(n=10)",
                ] {
                    let request = manager.run(Input::expr(text)).limits(limits.clone());
                    let request = if sandboxed {
                        request.sandboxed()
                    } else {
                        request
                    };
                    let outputs = common::runtime().block_on(async { request.await.outputs });
                    assert_eq!(outputs.len(), 1, "{name}={value} {text}");
                    match &outputs[0].output {
                        Ok(v) => assert!(v.approx_size() < 1 << 20, "{name}={value} {text}"),
                        // Any value a request accepts crosses the sandbox's wire: a `usize`
                        // above the wasm32 guest's once could not be decoded there.
                        Err(e) => assert_ne!(
                            e.kind,
                            ErrorKind::Sandbox,
                            "{name}={value} {text} sandboxed={sandboxed}: {e}"
                        ),
                    }
                }
            }
        }
    }
}

/// At the ceiling of `max_depth`, the deepest input of every shape runs to an output, natively
/// on a thread with a 2 MiB stack (tokio's workers have that much) and in the sandbox:
/// the request grows its stack for the depth it allows.
#[test]
fn the_depth_ceiling_holds_on_a_small_stack_natively_and_sandboxed() {
    let depth = Limits::CEILINGS
        .iter()
        .find(|(name, _)| *name == "max_depth")
        .map(|(_, ceiling)| *ceiling)
        .expect("max_depth has a ceiling");
    let limits = Limits::default().max_depth(depth);
    let d = depth - 4;
    let inputs = [
        format!("echo(x={}1)", "-".repeat(d)),
        format!("echo(x={}1{})", "(".repeat(d), ")".repeat(d)),
        format!("echo(x={}1)", "1+".repeat(d)),
        format!("len({}{})", "[".repeat(d), "]".repeat(d)),
        // A dict's value counts a level of its own.
        format!("len({}1{})", "{1:".repeat(d / 2), "}".repeat(d / 2)),
        // A call's parenthesis after its name counts more than one level (see syntax::scan).
        format!("{}1{}", "abs(".repeat(d / 3), ")".repeat(d / 3)),
        format!(
            "{{\"name\": \"len\", \"args\": [{}{}]}}",
            "[".repeat(d),
            "]".repeat(d)
        ),
    ];
    let thread = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let manager = manager(limits);
            let mut answers = Vec::new();
            for text in &inputs {
                for sandboxed in [false, true] {
                    let input = if text.starts_with('{') {
                        Input::json(text.as_str())
                    } else {
                        Input::expr(text.as_str())
                    };
                    let request = manager.run(input);
                    let request = if sandboxed {
                        request.sandboxed()
                    } else {
                        request
                    };
                    let outputs = runtime.block_on(async { request.await.outputs });
                    answers.push((text.len(), sandboxed, outputs));
                }
            }
            answers
        })
        .expect("a thread");
    let answers = thread.join().expect("no crash on a 2 MiB stack");
    for (len, sandboxed, outputs) in answers {
        assert_eq!(outputs.len(), 1, "{len} {sandboxed}");
        if let Err(e) = &outputs[0].output {
            assert_ne!(e.kind, ErrorKind::Limit, "{len} {sandboxed}: {e}");
        }
    }
}

/// `np.zeros`, `np.ones` and `np.arange` within `max_collection_len` but over `max_eval_bytes`
/// are refused before the array is allocated.
#[test]
fn arrays_over_the_byte_budget_are_refused_before_they_are_made() {
    let limits = Limits::default().max_collection_len(10_000_000);
    for text in [
        "len(np.zeros(10000000))",
        "len(np.ones((1000, 10000)))",
        "len(np.arange(10000000))",
        "len(np.arange(0, 1, 1e-7))",
    ] {
        let error = run(&limits, text).expect_err("over the budget");
        assert_eq!(
            error.limit,
            Some(fexpr::LimitKind::EvalBytes),
            "{text}: {error}"
        );
        assert!(
            error
                .message
                .ends_with("> 16777216 (refused before it is made)"),
            "{text}: {error}"
        );
    }
    // Ints are counted and made exactly, past 2**53 too.
    let exact = run(&limits, "np.arange(9007199254740993, 9007199254740995)").expect("runs");
    assert_eq!(exact.repr(), "array([9007199254740993, 9007199254740994])");
    let last = run(&limits, "np.arange(2**63-2, 2**63-1)").expect("runs");
    assert_eq!(last.repr(), "array([9223372036854775806])");
    let down = run(&limits, "np.arange(10, 0, -3)").expect("runs");
    assert_eq!(down.repr(), "array([10, 7, 4, 1])");
}

/// Tool results are charged to the request's `max_eval_bytes`, whichever door the calls came
/// through: the call that goes over fails with a `Limit` error, and later calls find the budget
/// spent.
#[test]
fn tool_results_are_charged_to_the_request_budget() {
    let limits = Limits::default().max_eval_bytes(10_000);
    let manager = manager(limits);
    let over = |outputs: &[fexpr::FunctionOutput]| {
        outputs
            .iter()
            .filter(|o| {
                o.output.as_ref().err().is_some_and(|e| {
                    e.message.starts_with(
                        "max_eval_bytes limit exceeded: the results of this request's tool calls total",
                    )
                })
            })
            .count()
    };
    // One expression: four results of 3,000 bytes; the fourth goes over.
    let list = "[blob(n=3000), blob(n=3000), blob(n=3000), blob(n=3000)]";
    let outputs =
        common::runtime().block_on(async { manager.run(Input::expr(list)).await.outputs });
    assert_eq!(outputs.len(), 4);
    assert_eq!(over(&outputs), 1, "{outputs:?}");
    // Model output: each call runs on its own, and the budget is still the request's.
    let text = "blob(n=6000)\nblob(n=6000)\nblob(n=6000)";
    let outputs =
        common::runtime().block_on(async { manager.run(Input::model_output(text)).await.outputs });
    assert_eq!(outputs.len(), 3);
    assert_eq!(over(&outputs), 2, "{outputs:?}");
    // A nested call's result counts too.
    let nested = "echo(x=len(blob(n=12000)))";
    let error = run(&Limits::default().max_eval_bytes(10_000), nested).expect_err("over");
    assert_eq!(error.limit, Some(fexpr::LimitKind::EvalBytes), "{error}");
    // Within the budget, the same calls run.
    let outputs = common::runtime().block_on(async {
        manager
            .run(Input::expr("[blob(n=3000), blob(n=3000)]"))
            .await
            .outputs
    });
    assert!(outputs.iter().all(|o| o.output.is_ok()), "{outputs:?}");
}

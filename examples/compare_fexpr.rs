//! fexpr's side of the side-by-side comparison (`bench/compare/run.sh`): times the seed's three
//! calls through `fexpr::demo::manager()` and prints JSON for the driver to put in one table
//! with the Python anchors.
//!
//! ```text
//! compare_fexpr latency BUDGET_MS WARMUP_MS  {"cases": {"native/add": [ns, ...], ...}}
//! compare_fexpr throughput CALLS THREADS    {"native": {"calls", "threads", "seconds"}, ...}
//! compare_fexpr once native|sandbox|sandbox-pooled
//!                                           runs add(a=2, b=3) once, prints the output's repr
//!                                           (before tearing anything down)
//! compare_fexpr doors ROUNDS                {"expression": ns, "model": ns, "openai": ns,
//!                                           "model_ratio", "openai_ratio"}: add(a=2, b=3)
//!                                           through each door of `manager.run`, interleaved
//! compare_fexpr repeat CALLS [MODE] [CASE]  runs CASE (add(a=2, b=3) unless given) CALLS
//!                                           times (natively unless MODE is given: native,
//!                                           model, openai (add only), sandbox), prints the
//!                                           last output's repr
//! ```
//!
//! `repeat` is the driver for instruction counts, which do not depend on the machine's load:
//! `valgrind --tool=callgrind target/release/examples/compare_fexpr repeat 20000` (a release
//! build of this example with `--no-default-features --features native`), or `repeat 2000
//! sandbox add` (with `--features sandbox`; see BENCHMARKS.md for subtracting the start-up).
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`); `latency` reports which.
//!
//! Every timed call goes from text to `FunctionOutput`: parse, resolve, evaluate, run the tool.
//! Each call is waited for as a program that is not async does, with `fexpr::block_on` (polled
//! on the calling thread; before, each call was a `block_on` of a current-thread tokio runtime,
//! 0.13 µs more per call). `native` is `ToolManager::execute_func_expr`; `model` is the
//! model-text door (`manager.run(text)`: call position, repairs, then the call); `sandbox`
//! (built only with `--features sandbox`) is `ToolManager::execute_func_expr_via_sandbox`, a fresh
//! wasm instance per call. `once` is what the driver spawns to time a cold start: `once sandbox`
//! maps its one instance on demand, as `fexpr exec --sandbox` does (a process that runs one
//! evaluation has no use for an instance pool); `once sandbox-pooled` reserves the default pool
//! first, as a long-running host does.

#[path = "../benches/common/allocator.rs"]
mod allocator;

use fexpr::{FunctionOutput, ToolManager};
use serde_json::{json, Map, Value as Json};
use std::io::Write;
use std::time::{Duration, Instant};

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

/// The seed's three calls, with the output each must give.
const CALLS: [(&str, &str, &str); 3] = [
    ("add", "add(a=2, b=3)", "5"),
    (
        "add_points",
        "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
        "Point(x=4, y=6)",
    ),
    (
        "numpy_sum",
        "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
        "10",
    ),
];

/// How a call is run.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Native,
    /// The model-text door natively: `manager.run(text)` (call position, repairs, then the
    /// call), to set beside `Native` (the expression door) for the same call.
    Model,
    /// The JSON door natively: `add`'s call as an OpenAI assistant message
    /// (`manager.run(Input::openai(message))`), for `repeat` only.
    OpenAi,
    #[cfg(feature = "sandbox")]
    Sandbox,
}

impl Mode {
    fn all() -> Vec<Mode> {
        vec![
            Mode::Native,
            Mode::Model,
            #[cfg(feature = "sandbox")]
            Mode::Sandbox,
        ]
    }

    fn parse(name: &str) -> Result<Mode, String> {
        match name {
            "native" => Ok(Mode::Native),
            "model" => Ok(Mode::Model),
            "openai" => Ok(Mode::OpenAi),
            #[cfg(feature = "sandbox")]
            "sandbox" => Ok(Mode::Sandbox),
            other => Err(format!(
                "unknown mode {other:?} (sandbox needs --features sandbox)"
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Model => "model",
            Mode::OpenAi => "openai",
            #[cfg(feature = "sandbox")]
            Mode::Sandbox => "sandbox",
        }
    }

    /// Runs `text` once, waiting as a program that is not async does.
    fn run(self, manager: &ToolManager, text: &str) -> FunctionOutput {
        fexpr::block_on(self.call(manager, text))
    }

    /// The call of `text` in this mode.
    async fn call(self, manager: &ToolManager, text: &str) -> FunctionOutput {
        match self {
            Mode::Native => manager.execute_func_expr(text).await,
            Mode::Model | Mode::OpenAi => {
                let input = match self {
                    Mode::OpenAi => fexpr::Input::openai(openai_add()),
                    _ => fexpr::Input::model_output(text),
                };
                let mut outputs = manager.run(input).await.outputs;
                match (outputs.pop(), outputs.is_empty()) {
                    (Some(out), true) => out,
                    _ => FunctionOutput::failed(
                        text,
                        text,
                        fexpr::Error::new(fexpr::ErrorKind::Unsupported, "expected one output"),
                    ),
                }
            }
            #[cfg(feature = "sandbox")]
            Mode::Sandbox => manager.execute_func_expr_via_sandbox(text).await,
        }
    }
}

/// `add(a=2, b=3)` as an OpenAI assistant message (the `openai` mode; the same message as
/// `benches/front.rs`'s `front/door/openai_message`), built once and cloned per call as the
/// bench clones its input.
fn openai_add() -> Json {
    static MESSAGE: std::sync::OnceLock<Json> = std::sync::OnceLock::new();
    MESSAGE
        .get_or_init(|| {
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]})
        })
        .clone()
}

/// The output's repr, or the error as text.
fn shown(out: &FunctionOutput) -> String {
    match &out.output {
        Ok(v) => v.repr(),
        Err(e) => format!("error: {e}"),
    }
}

/// Runs `text` once and checks the output.
fn check(mode: Mode, manager: &ToolManager, text: &str, expected: &str) -> Result<(), String> {
    let got = shown(&mode.run(manager, text));
    if got == expected {
        Ok(())
    } else {
        Err(format!(
            "{} {text} gave {got}, expected {expected}",
            mode.name()
        ))
    }
}

/// At most this many samples per case.
const MAX_SAMPLES: usize = 200_000;

/// Per-call wall times in nanoseconds: each case is warmed up for `warmup_ms`, then timed call
/// by call for `budget_ms` (at least 10 calls, at most [`MAX_SAMPLES`]).
fn latency(budget_ms: usize, warmup_ms: usize) -> Result<Json, String> {
    let budget = Duration::from_millis(budget_ms as u64);
    let warmup = Duration::from_millis(warmup_ms as u64);
    let manager = fexpr::demo::manager();
    let mut cases = Map::new();
    for mode in Mode::all() {
        for (name, text, expected) in CALLS {
            check(mode, &manager, text, expected)?;
            let started = Instant::now();
            while started.elapsed() < warmup {
                std::hint::black_box(mode.run(&manager, text));
            }
            let mut samples = Vec::new();
            let started = Instant::now();
            while samples.len() < MAX_SAMPLES && (samples.len() < 10 || started.elapsed() < budget)
            {
                let start = Instant::now();
                let out = mode.run(&manager, std::hint::black_box(text));
                samples.push(start.elapsed().as_nanos() as u64);
                std::hint::black_box(out);
            }
            cases.insert(format!("{}/{name}", mode.name()), samples.into());
        }
    }
    Ok(json!({ "cases": cases, "allocator": allocator::name() }))
}

/// `add(a=2, b=3)` through three doors of `manager.run` (the expression, the same call as model
/// text, and as an OpenAI assistant message), interleaved: each of `rounds` rounds times a batch
/// of calls through each door in turn, the inputs made before the clock starts (a caller hands
/// its message over once). Per door the median of the rounds' per-call times; per door beside
/// the expression the median of the rounds' ratios, so that a change of the machine's speed
/// between rounds (a shared machine) moves both sides of a ratio alike.
fn doors(rounds: usize) -> Result<Json, String> {
    const BATCH: usize = 200;
    let manager = fexpr::demo::manager();
    let text = "add(a=2, b=3)";
    let inputs: [(&str, fexpr::Input); 3] = [
        ("expression", fexpr::Input::expr(text)),
        ("model", fexpr::Input::model_output(text)),
        ("openai", fexpr::Input::openai(openai_add())),
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); inputs.len()];
    for round in 0..=rounds {
        for (door, (name, input)) in inputs.iter().enumerate() {
            let batch: Vec<fexpr::Input> = (0..BATCH).map(|_| input.clone()).collect();
            let start = Instant::now();
            for input in batch {
                let response = fexpr::block_on(manager.run(std::hint::black_box(input)));
                if response.outputs.first().map(|o| &o.output) != Some(&Ok(fexpr::Value::Int(5))) {
                    return Err(format!("{name}: unexpected {:?}", response.outputs));
                }
            }
            // Round 0 warms up.
            if round > 0 {
                times[door].push(start.elapsed().as_nanos() as f64 / BATCH as f64);
            }
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let ratio = |door: usize| {
        median(
            times[door]
                .iter()
                .zip(&times[0])
                .map(|(d, e)| d / e)
                .collect(),
        )
    };
    Ok(json!({
        "rounds": rounds, "batch": BATCH, "allocator": allocator::name(),
        "expression": median(times[0].clone()),
        "model": median(times[1].clone()),
        "openai": median(times[2].clone()),
        "model_ratio": ratio(1),
        "openai_ratio": ratio(2),
    }))
}

/// `calls` independent expressions (the three calls in turn) split over `threads` OS threads,
/// sharing one manager.
fn throughput(calls: usize, threads: usize) -> Result<Json, String> {
    let manager = fexpr::demo::manager();
    let threads = threads.max(1);
    let mut report = Map::new();
    for mode in Mode::all()
        .into_iter()
        .filter(|m| !matches!(m, Mode::Model | Mode::OpenAi))
    {
        // Warm up (and check) on this thread first.
        for (_, text, expected) in CALLS {
            check(mode, &manager, text, expected)?;
        }
        let start = Instant::now();
        let failures = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let manager = &manager;
                    scope.spawn(move || -> Result<usize, String> {
                        let mut failures = 0;
                        for i in (t..calls).step_by(threads) {
                            let (_, text, _) = CALLS[i % CALLS.len()];
                            if mode.run(manager, text).output.is_err() {
                                failures += 1;
                            }
                        }
                        Ok(failures)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().map_err(|_| "worker thread panicked".to_owned())?)
                .sum::<Result<usize, String>>()
        })?;
        let seconds = start.elapsed().as_secs_f64();
        if failures > 0 {
            return Err(format!(
                "{failures} of {calls} {} calls failed",
                mode.name()
            ));
        }
        report.insert(
            mode.name().to_owned(),
            json!({ "calls": calls, "threads": threads, "seconds": seconds }),
        );
    }
    Ok(Json::Object(report))
}

/// One call, as a fresh process does it: build the manager (and the sandbox), run, print the
/// output's repr as a JSON string, flushed before anything is torn down (the driver times the
/// process to its first line).
fn once(how: &str) -> Result<(), String> {
    let (mode, manager) = match how {
        #[cfg(feature = "sandbox")]
        "sandbox" => {
            use fexpr::sandbox::{Sandbox, SandboxConfig};
            let sandbox = Sandbox::new(SandboxConfig::on_demand()).map_err(|e| e.to_string())?;
            let manager = fexpr::demo::builder().sandbox(sandbox).build();
            (Mode::Sandbox, manager.map_err(|e| e.to_string())?)
        }
        #[cfg(feature = "sandbox")]
        "sandbox-pooled" => (Mode::Sandbox, fexpr::demo::manager()),
        other => (Mode::parse(other)?, fexpr::demo::manager()),
    };
    let (_, text, _) = CALLS[0];
    // One call in a new process: the cheapest runtime to build (no thread), not `block_on`'s
    // own runtime, whose worker thread costs 50-60 us to start (BENCHMARKS.md).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| e.to_string())?;
    let shown = shown(&rt.block_on(mode.call(&manager, text)));
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", Json::String(shown))
        .and_then(|()| stdout.flush())
        .map_err(|e| e.to_string())
}

/// The call `case` (`add` unless given) `calls` times in `mode` (native unless given), one
/// manager: the last output's repr. The sandbox has a pool of two instances
/// (one evaluation runs at a time; the default pool's 32 slots of 4 GiB of address space each
/// do not fit under valgrind).
fn repeat(calls: usize, mode: Option<String>, case: Option<String>) -> Result<String, String> {
    let mode = mode.map_or(Ok(Mode::Native), |m| Mode::parse(&m))?;
    let manager = match mode {
        #[cfg(feature = "sandbox")]
        Mode::Sandbox => {
            use fexpr::sandbox::{Sandbox, SandboxConfig};
            let config = SandboxConfig::default().max_instances(2);
            let sandbox = Sandbox::new(config).map_err(|e| e.to_string())?;
            fexpr::demo::builder()
                .sandbox(sandbox)
                .build()
                .map_err(|e| e.to_string())?
        }
        _ => fexpr::demo::manager(),
    };
    let case = case.as_deref().unwrap_or("add");
    let (_, text, _) = CALLS
        .iter()
        .find(|(name, _, _)| *name == case)
        .ok_or_else(|| format!("no case {case}"))?;
    let mut last = String::new();
    for _ in 0..calls {
        last = shown(&mode.run(&manager, std::hint::black_box(text)));
    }
    Ok(last)
}

fn number(arg: Option<String>, what: &str) -> Result<usize, String> {
    arg.and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("expected {what} (a number)"))
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let out = match command.as_str() {
        "latency" => latency(number(args.next(), "BUDGET_MS")?, number(args.next(), "WARMUP_MS")?)?,
        "throughput" => throughput(number(args.next(), "CALLS")?, number(args.next(), "THREADS")?)?,
        "once" => return once(&args.next().unwrap_or_default()),
        "doors" => doors(number(args.next(), "ROUNDS")?)?,
        "repeat" => Json::String(repeat(number(args.next(), "CALLS")?, args.next(), args.next())?),
        _ => {
            return Err(
                "usage: compare_fexpr latency BUDGET_MS WARMUP_MS | throughput CALLS THREADS | once native|sandbox|sandbox-pooled | doors ROUNDS | repeat CALLS [native|model|openai] [add|add_points|numpy_sum]"
                    .to_owned(),
            )
        }
    };
    println!("{out}");
    Ok(())
}

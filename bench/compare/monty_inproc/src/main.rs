//! Times monty's in-process interpreter (the `monty` crate) on the seed's calls, for
//! `bench/compare/run.sh`. Each timed call goes from text to result the way a host would run
//! a model's expression: `MontyRun::new` (parse and compile), `start`, then answer every
//! external call (`add`, `add_points`, the `Point` constructor) until `Complete`.
//!
//! monty cannot express `numpy_sum(arr=np.array(...))` in process (no numpy), so that case
//! is absent. Output: one JSON object on stdout, `{"cases": {name: [ns, ...]}}`.
//!
//! Usage: `monty-inproc BUDGET_MS WARMUP_MS` (per case: warm up, then time call by call for the
//! budget; at least 10 calls, at most 200,000).

use monty::{MontyRun, RunProgress};
use monty_types::{
    CompileOptions, MontyClassInstance, MontyClassType, MontyObject, MontyUuid, PrintWriter,
    ResourceTracker,
};
use std::time::{Duration, Instant};

const CASES: [(&str, &str, &str); 2] = [
    ("add", "add(a=2, b=3)", "5"),
    (
        "add_points",
        "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
        "Point(x=4, y=6)",
    ),
];

const POINT_CLASS: MontyUuid = MontyUuid::from_u128(0x6d6f_6e74_7950_6f69_6e74_0000_0000_0001);

fn point(x: i64, y: i64, id: u128) -> MontyObject {
    MontyObject::ClassInstance(Box::new(MontyClassInstance {
        class_type: MontyClassType {
            name: "Point".to_owned(),
            id: POINT_CLASS,
            host_defined: true,
            is_dataclass: true,
            attrs: Vec::new().into(),
        },
        instance_id: MontyUuid::from_u128(id),
        attrs: vec![
            (MontyObject::String("x".to_owned()), MontyObject::Int(x)),
            (MontyObject::String("y".to_owned()), MontyObject::Int(y)),
        ]
        .into(),
    }))
}

fn kwarg<'a>(kwargs: &'a [(MontyObject, MontyObject)], name: &str) -> Option<&'a MontyObject> {
    kwargs.iter().find_map(|(k, v)| match k {
        MontyObject::String(s) if s == name => Some(v),
        _ => None,
    })
}

fn int(value: Option<&MontyObject>) -> Result<i64, String> {
    match value {
        Some(MontyObject::Int(i)) => Ok(*i),
        other => Err(format!("expected an int, got {other:?}")),
    }
}

fn attr(value: Option<&MontyObject>, name: &str) -> Result<i64, String> {
    match value {
        Some(MontyObject::ClassInstance(instance)) => int(instance
            .attrs
            .clone()
            .into_iter()
            .find(|(k, _)| matches!(k, MontyObject::String(s) if s == name))
            .map(|(_, v)| v)
            .as_ref()),
        other => Err(format!("expected a Point, got {other:?}")),
    }
}

/// The host side of the seed's tools.
fn host_call(
    name: &str,
    kwargs: &[(MontyObject, MontyObject)],
    next_id: &mut u128,
) -> Result<MontyObject, String> {
    *next_id += 1;
    match name {
        "add" => Ok(MontyObject::Int(
            int(kwarg(kwargs, "a"))? + int(kwarg(kwargs, "b"))?,
        )),
        "Point" => Ok(point(
            int(kwarg(kwargs, "x"))?,
            int(kwarg(kwargs, "y"))?,
            *next_id,
        )),
        "add_points" => {
            let (p1, p2) = (kwarg(kwargs, "p1"), kwarg(kwargs, "p2"));
            Ok(point(
                attr(p1, "x")? + attr(p2, "x")?,
                attr(p1, "y")? + attr(p2, "y")?,
                *next_id,
            ))
        }
        other => Err(format!("unknown function {other}")),
    }
}

/// Text to result, once.
fn run_once(code: &str) -> Result<MontyObject, String> {
    let names = ["add", "add_points", "Point"];
    let runner = MontyRun::new(
        code.to_owned(),
        "main.py",
        names.iter().map(|n| (*n).to_owned()).collect(),
        CompileOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let inputs = names
        .iter()
        .map(|n| MontyObject::Function {
            name: (*n).to_owned(),
            docstring: None,
        })
        .collect();
    let mut progress = runner
        .start(inputs, ResourceTracker::default(), PrintWriter::Disabled)
        .map_err(|e| e.to_string())?;
    let mut next_id = 0u128;
    loop {
        match progress {
            RunProgress::Complete(value) => return Ok(value),
            RunProgress::FunctionCall(call) => {
                let result = host_call(&call.function_name, &call.kwargs, &mut next_id)?;
                progress = call
                    .resume(result, PrintWriter::Disabled)
                    .map_err(|e| e.to_string())?;
            }
            _ => return Err("unexpected suspension".to_owned()),
        }
    }
}

fn show(value: &MontyObject) -> String {
    match value {
        MontyObject::ClassInstance(instance) => {
            let x = attr(Some(value), "x").unwrap_or_default();
            let y = attr(Some(value), "y").unwrap_or_default();
            format!("{}(x={x}, y={y})", instance.class_type.name)
        }
        other => other.to_string(),
    }
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut millis = || -> Result<Duration, String> {
        args.next()
            .and_then(|a| a.parse().ok())
            .map(Duration::from_millis)
            .ok_or_else(|| "usage: monty-inproc BUDGET_MS WARMUP_MS".to_owned())
    };
    let budget = millis()?;
    let warmup = millis()?;
    let mut cases = serde_json::Map::new();
    for (name, code, expected) in CASES {
        let got = show(&run_once(code)?);
        if got != expected {
            return Err(format!("{code} gave {got}, expected {expected}"));
        }
        let started = Instant::now();
        while started.elapsed() < warmup {
            run_once(code)?;
        }
        let mut samples = Vec::new();
        let started = Instant::now();
        while samples.len() < 200_000 && (samples.len() < 10 || started.elapsed() < budget) {
            let start = Instant::now();
            let value = run_once(code)?;
            samples.push(start.elapsed().as_nanos() as u64);
            std::hint::black_box(value);
        }
        cases.insert(name.to_owned(), samples.into());
    }
    println!("{}", serde_json::json!({ "cases": cases }));
    Ok(())
}

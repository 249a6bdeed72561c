//! Write real sandbox wire messages as seeds for the `wire_decode` fuzz target (`fuzz/`): for a few
//! expressions and JSON inputs, the request the host sends, the guest's batches of tool requests, the host's
//! replies and the guest's response; and the context entries the guest reads.
//! Usage: `cargo run --example fuzz_wire_seeds -- fuzz/seeds/wire_decode` (`fuzz/make-seeds.py` runs it).

use fexpr::eval::ToolRequest;
use fexpr::sandbox::wire;
use fexpr::{Error, Limits, Value};
use std::path::Path;

const EXPRESSIONS: &[&str] = &[
    "add(a=2, b=3)",
    "multiply(a=add(a=1, b=x), b=y)",
    "[search(query='q'), divide(a=1.5, b=2.0)]",
    "add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})",
    "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
    "search(query=['a', b'b', (1, 2.5), {1, 2}, None, True, 10**30])",
    "add(a=1",
    "open('x')",
];

/// JSON inputs in fexpr's forms (`GuestInput::Json`).
const JSON: &[&str] = &[
    r#"{"name": "add", "kwargs": {"a": 2, "b": 3}}"#,
    r#"[{"name": "add_points", "kwargs": {"p1": {"x": 1, "y": 2}, "p2": {"x": 3, "y": 4}}}, {"action": "multiply(a=2, b=x)"}]"#,
    r#"{"name": "add", "kwargs": {"a": 1, "a": 2}}"#,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: fuzz_wire_seeds <output dir>")?;
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let manager = fexpr::demo::manager();
    let context = wire::ContextTable::new(manager.context())?;
    let lookup = |key: &[u8]| context.answer(key).map(<[u8]>::to_vec);
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    // Checked calls as the front door hands them on (`GuestInput::Calls`).
    let checked = fexpr::check::plan(
        r#"{"name": "add", "arguments": {"a": 2, "b": 3}}"#,
        manager.context(),
        &Limits::default(),
        &fexpr::repair::RepairOptions::default(),
    );
    let inputs = EXPRESSIONS
        .iter()
        .map(|t| wire::GuestInput::Expression(t))
        .chain(JSON.iter().map(|t| wire::GuestInput::Json(t)))
        .chain(std::iter::once(wire::GuestInput::Calls(
            checked.calls.into_iter().filter_map(|c| c.run).collect(),
        )));
    for input in inputs {
        let request = wire::encode_request(&input, &Limits::default())?;
        seeds.push(request.clone());
        let mut host_messages = Vec::new();
        let response = wire::guest_evaluate(
            &request,
            &mut |bytes| {
                host_messages.push(bytes.to_vec());
                // Answer every request with a value of a different shape each time.
                let n = wire::decode::<Vec<ToolRequest>>(bytes).map_or(1, |r| r.len());
                let results: Vec<Result<Value, Error>> = (0..n)
                    .map(|i| match i % 3 {
                        0 => Ok(Value::Int(i as i64)),
                        1 => Ok(Value::from_json(&serde_json::json!({"x": [1.5, "s"]}))),
                        _ => Err(Error::new(fexpr::ErrorKind::ToolFailed, "failed")),
                    })
                    .collect();
                let reply = wire::encode(&results).unwrap_or_default();
                host_messages.push(reply.clone());
                reply
            },
            &lookup,
        );
        seeds.extend(host_messages);
        seeds.push(response);
    }
    seeds.extend(
        std::iter::once(String::new())
            .chain(
                manager
                    .context()
                    .entries()
                    .map(|(name, _)| name.to_string()),
            )
            .filter_map(|name| context.answer(name.as_bytes()).map(<[u8]>::to_vec)),
    );
    for seed in &seeds {
        let name = format!("{:016x}", fnv1a(seed));
        std::fs::write(dir.join(name), seed)?;
    }
    println!("{} wire messages -> {}", seeds.len(), dir.display());
    Ok(())
}

/// A stable file name for a seed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

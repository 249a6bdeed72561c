//! Latency of streaming (issue 27): model text arriving at a realistic speed — 50 tokens per
//! second, 4 bytes a token, so 4 bytes every 20 ms — holding a list of three calls to a tool
//! that takes 100 ms, alone and followed by a sentence of prose (as models write). Measured:
//! the time from the last byte of the first call's text (its comma) to the tool's start, and
//! the time from the first byte to the last call's output, streamed and read whole first (the whole
//! text, then the same request). Medians over the rounds; run with
//! `env -u RUST_BACKTRACE cargo bench --bench stream` (a timing program, not criterion: the
//! times are dominated by the model's speed and the tools' sleep).
//!
//! It allocates with mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system`
//! (`benches/common/allocator.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "common/allocator.rs"]
mod allocator;

/// mimalloc, or glibc's malloc with `FEXPR_ALLOCATOR=system` (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fexpr::{FunctionTool, Input, ToolManager};
use futures_util::StreamExt;

const TOKEN_BYTES: usize = 4;
const TOKEN_GAP: Duration = Duration::from_millis(20);
const TOOL_TIME: Duration = Duration::from_millis(100);
const ROUNDS: usize = 7;

fn manager(starts: &Arc<Mutex<Vec<Instant>>>) -> ToolManager {
    let starts = starts.clone();
    let slow_add = move |a: i64, b: i64| {
        let starts = starts.clone();
        async move {
            starts.lock().unwrap().push(Instant::now());
            tokio::time::sleep(TOOL_TIME).await;
            a + b
        }
    };
    ToolManager::builder()
        .tool(FunctionTool::new_async("slow_add", ["a", "b"], slow_add))
        .build()
        .unwrap()
}

/// When each byte offset of the text was sent.
type Sent = Arc<Mutex<Vec<(usize, Instant)>>>;

/// Send `text` in tokens at the model's speed; the instant each byte offset was sent.
fn produce(text: &'static str) -> (tokio::sync::mpsc::UnboundedReceiver<String>, Sent) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    tokio::spawn(async move {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let mut end = (at + TOKEN_BYTES).min(bytes.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            log.lock().unwrap().push((end, Instant::now()));
            let _ = tx.send(text[at..end].to_string());
            at = end;
            tokio::time::sleep(TOKEN_GAP).await;
        }
    });
    (rx, sent)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

async fn round(text: &'static str) -> (f64, f64, f64) {
    // Streamed.
    let starts = Arc::new(Mutex::new(Vec::new()));
    let m = manager(&starts);
    let begin = Instant::now();
    let (rx, sent) = produce(text);
    let chunks =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let mut events = m.stream(Box::pin(chunks)).events();
    let (mut outputs, mut streamed) = (0, 0.0);
    while let Some(event) = events.next().await {
        if matches!(&event, fexpr::stream::StreamEvent::Output(o) if o.output.is_ok()) {
            outputs += 1;
            streamed = begin.elapsed().as_secs_f64() * 1e3;
        }
    }
    assert_eq!(outputs, 3);
    let first_comma = text.find("), ").unwrap() + 1;
    let last_byte = sent
        .lock()
        .unwrap()
        .iter()
        .find(|(end, _)| *end > first_comma)
        .map(|(_, t)| *t)
        .unwrap();
    let first_start = starts.lock().unwrap()[0];
    let to_start = first_start
        .saturating_duration_since(last_byte)
        .as_secs_f64()
        * 1e3;
    // Read whole first: the same arrival, then one request.
    let starts = Arc::new(Mutex::new(Vec::new()));
    let m = manager(&starts);
    let begin = Instant::now();
    let (mut rx, _) = produce(text);
    let mut whole = String::new();
    while let Some(c) = rx.recv().await {
        whole.push_str(&c);
    }
    let out = m.run(Input::model_output(whole)).await;
    assert_eq!(out.outputs.iter().filter(|o| o.output.is_ok()).count(), 3);
    let whole_first = begin.elapsed().as_secs_f64() * 1e3;
    (to_start, streamed, whole_first)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for (what, text) in [
        ("three calls", "[slow_add(a=1, b=2), slow_add(a=3, b=4), slow_add(a=5, b=6)]\n"),
        (
            "three calls, then a sentence",
            "[slow_add(a=1, b=2), slow_add(a=3, b=4), slow_add(a=5, b=6)]\nI am adding the three pairs of numbers now; the sums will follow.\n",
        ),
    ] {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut c = Vec::new();
        for _ in 0..ROUNDS {
            let (x, y, z) = rt.block_on(round(text));
            a.push(x);
            b.push(y);
            c.push(z);
        }
        println!(
            "{what} ({} bytes, {} tokens at 50/s, tools {} ms): first tool start {:.1} ms after its last byte; last output {:.0} ms after the first byte streamed vs {:.0} ms read whole first ({:.2}x)",
            text.len(),
            text.len().div_ceil(TOKEN_BYTES),
            TOOL_TIME.as_millis(),
            median(a),
            median(b.clone()),
            median(c.clone()),
            median(c) / median(b),
        );
    }
}

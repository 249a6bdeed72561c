//! `examples/http_server.rs`, started on a free port: concurrent requests share one manager
//! and run in parallel, and the replies carry the model's call ids.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

#[path = "../examples/http_server.rs"]
#[allow(dead_code)]
mod http_server;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// POST `body` to `/tool_calls` at `addr` (HTTP/1.1, one connection per request); the JSON
/// reply.
async fn post(addr: std::net::SocketAddr, body: &str) -> Value {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!(
        "POST /tool_calls HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("reads");
    let (head, body) = response.split_once("\r\n\r\n").expect("a response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(body).expect("a JSON body")
}

fn message(id: &str, city: &str) -> String {
    let arguments = json!({ "city": city }).to_string();
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": "lookup", "arguments": arguments}}
    ]})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_requests_take_about_one_tool_call() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(http_server::serve(listener));

    let started = Instant::now();
    let requests = (0..8).map(|i| {
        tokio::spawn(async move { post(addr, &message(&format!("call_{i}"), "Oslo")).await })
    });
    let replies = futures_util::future::join_all(requests).await;
    let took = started.elapsed();
    for (i, reply) in replies.into_iter().enumerate() {
        let reply = reply.expect("the request task ends");
        assert_eq!(
            reply,
            json!([{"role": "tool", "tool_call_id": format!("call_{i}"), "content": "sunny in Oslo"}])
        );
    }
    // Eight 100 ms calls, one after another, would take 800 ms; concurrently about 100 ms.
    // Loose, as the machine is shared.
    assert!(took >= Duration::from_millis(100), "{took:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replies_keep_each_calls_id() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(http_server::serve(listener));
    let call = |id: &str, a: i64| {
        json!({"id": id, "type": "function",
               "function": {"name": "add", "arguments": format!("{{\"a\": {a}, \"b\": 1}}")}})
    };
    let body = json!({"role": "assistant", "content": null,
                      "tool_calls": [call("call_a", 1), call("call_b", 2), call("call_c", 3)]});
    let reply = post(addr, &body.to_string()).await;
    let ids: Vec<&str> = reply
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert_eq!(reply[1]["content"], "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_without_tool_calls_gets_no_tool_message() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(http_server::serve(listener));
    for body in [
        json!({"role": "assistant", "content": "Done.", "tool_calls": []}),
        json!({"role": "assistant", "content": "Done."}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Done."}]}),
    ] {
        assert_eq!(post(addr, &body.to_string()).await, json!([]), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_messages_hold_text_and_errors_the_model_can_use() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(http_server::serve(listener));
    let padding = "x".repeat(600);
    let body = json!({"role": "assistant", "content": padding, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1}"}}
    ]});
    let reply = post(addr, &body.to_string()).await;
    let content = reply[0]["content"].as_str().expect("a str");
    assert!(content.starts_with("error: Arguments: "), "{content}");
    assert!(content.contains("; hint: "), "{content}");
    assert!(!content.contains("(at "), "{content}");
}

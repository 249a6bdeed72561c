//! `fexpr serve`, an MCP server and gateway, against clients no one here wrote: the official MCP
//! Inspector in its CLI mode (npm `@modelcontextprotocol/inspector`, pinned in `mcp-servers/`)
//! over stdio and streamable HTTP, and rmcp's own client; the upstream is the real
//! `@modelcontextprotocol/server-everything`. `scripts/ci-mcp.sh` installs both; without them
//! these tests fail, saying so.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step
#![cfg(feature = "mcp")]

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Value as Json};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp-servers")
}

/// The installed program `name` of `mcp-servers/node_modules/.bin`; missing, the test fails.
fn node_bin(name: &str) -> PathBuf {
    let path = servers_dir().join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is not installed: run scripts/ci-mcp.sh (npm ci in mcp-servers/)",
        path.display()
    );
    path
}

fn fexpr_bin() -> &'static str {
    env!("CARGO_BIN_EXE_fexpr")
}

/// The Inspector's CLI against `target` (a command line or a URL): its first JSON value on
/// stdout (the result, also when the tool failed), and the whole output.
fn inspector(target: &[&str], method: &[&str]) -> (Json, Output) {
    let out = Command::new(node_bin("mcp-inspector"))
        .arg("--cli")
        .args(target)
        .args(method)
        .current_dir(servers_dir())
        .output()
        .unwrap();
    let first = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Json>()
        .next();
    match first {
        Some(Ok(json)) => (json, out),
        _ => panic!(
            "the Inspector printed no JSON for {method:?}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn text(result: &Json) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn write_config(name: &str, json: &Json) -> PathBuf {
    let path = std::env::temp_dir().join(format!("fexpr-serve-{name}-{}.json", std::process::id()));
    std::fs::write(&path, json.to_string()).unwrap();
    path
}

/// A `--mcp-config` file (removed by the test) with server-everything over stdio as `everything`.
fn everything_config(name: &str) -> PathBuf {
    let everything = node_bin("mcp-server-everything");
    write_config(
        name,
        &json!({"mcpServers": {"everything": {"command": everything, "args": ["stdio"]}}}),
    )
}

/// [`everything_config`] with the upstream writing its process id to the file returned second
/// each time it starts.
fn everything_config_with_pidfile(name: &str) -> (PathBuf, PathBuf) {
    let everything = node_bin("mcp-server-everything");
    let pidfile =
        std::env::temp_dir().join(format!("fexpr-serve-{name}-pid-{}", std::process::id()));
    let script = format!(
        "echo $$ > '{}'; exec '{}' stdio",
        pidfile.display(),
        everything.display()
    );
    let cfg = write_config(
        name,
        &json!({"mcpServers": {"everything": {"command": "sh", "args": ["-c", script]}}}),
    );
    (cfg, pidfile)
}

/// `fexpr serve --tools-json tools`.
fn serve_tools_json(tools: &std::path::Path) -> [&str; 4] {
    [
        fexpr_bin(),
        "serve",
        "--tools-json",
        tools.to_str().unwrap(),
    ]
}

/// The Inspector's `tools/call` of `tool` with `args` (`name=value`) against `target`.
fn inspector_call(target: &[&str], tool: &str, args: &[&str]) -> (Json, Output) {
    let mut method = vec!["--method", "tools/call", "--tool-name", tool, "--tool-arg"];
    method.extend_from_slice(args);
    inspector(target, &method)
}

/// `fexpr serve ARGS --listen 127.0.0.1:PORT`, once it accepts connections; killed on drop.
struct HttpGateway {
    child: Child,
    url: String,
}

impl HttpGateway {
    fn start(args: &[&str]) -> HttpGateway {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(fexpr_bin())
            .arg("serve")
            .args(args)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut gateway = HttpGateway {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                gateway.child.try_wait().unwrap().is_none(),
                "fexpr serve exited"
            );
            assert!(Instant::now() < deadline, "fexpr serve did not listen");
            std::thread::sleep(Duration::from_millis(100));
        }
        gateway
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn rmcp_client(url: &str) -> RunningService<RoleClient, ()> {
    // reqwest's rustls needs a process-wide crypto provider (an error: one is installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ().serve(StreamableHttpClientTransport::from_uri(url.to_string()))
        .await
        .unwrap()
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &'static str,
    args: Json,
) -> CallToolResult {
    let args: JsonObject = serde_json::from_value(args).unwrap();
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap()
}

fn result_text(result: &CallToolResult) -> String {
    let json = serde_json::to_value(result).unwrap();
    text(&json).to_string()
}

/// server-everything's `trigger_long_running_operation` (10 seconds) called by `client` in a task.
fn long_call(
    client: &RunningService<RoleClient, ()>,
) -> tokio::task::JoinHandle<Result<CallToolResult, rmcp::ServiceError>> {
    let peer = client.peer().clone();
    tokio::spawn(async move {
        let args = json!({"duration": 10, "steps": 2});
        peer.call_tool(
            CallToolRequestParams::new("trigger_long_running_operation")
                .with_arguments(serde_json::from_value(args).unwrap()),
        )
        .await
    })
}

/// The acceptance session against `fexpr serve --tools demo` over stdio: tools listed with
/// their schemas, a call answered, a bad call refused with fexpr's message, `run_calls` with a
/// list and a nested call in one round trip, a hostile `run_calls` running nothing.
#[test]
fn inspector_over_stdio_against_the_demo_tools() {
    let serve = [fexpr_bin(), "serve", "--tools", "demo"];

    let (list, _) = inspector(&serve, &["--method", "tools/list"]);
    let tools = list["tools"].as_array().unwrap();
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]), "{add}");
    assert_eq!(add["inputSchema"]["properties"]["a"]["type"], "integer");
    let run_calls = tools.iter().find(|t| t["name"] == "run_calls").unwrap();
    let description = run_calls["description"].as_str().unwrap();
    assert!(
        description.contains("def add(a: int, b: int) -> int"),
        "{description}"
    );

    let (sum, out) = inspector_call(&serve, "add", &["a=2", "b=3"]);
    assert!(out.status.success(), "{sum}");
    assert_eq!(text(&sum), "5");
    assert!(sum["_meta"]["fexpr"]["call_id"]
        .as_str()
        .unwrap()
        .starts_with("call_"));

    // `--sandbox`: the arguments are evaluated in the wasm guest, whose receipt comes back.
    let sandboxed = [fexpr_bin(), "serve", "--tools", "demo", "--sandbox"];
    let (sum, _) = inspector_call(&sandboxed, "add", &["a=2", "b=3"]);
    assert_eq!(text(&sum), "5");
    assert!(sum["_meta"]["fexpr"]["receipt"].is_object(), "{sum}");

    // Refused before it runs: fexpr's message and hint, as a tool error.
    let (bad, _) = inspector_call(&serve, "add", &["a=2"]);
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(
        text(&bad),
        "Arguments error: add() missing 1 required argument: `b`\nhint: signature: add(a: int, b: int)"
    );
    assert_eq!(bad["_meta"]["fexpr"]["error"]["kind"], "Arguments");

    // One round trip: a list, and a call nested in another's arguments.
    let (both, out) = inspector_call(
        &serve,
        "run_calls",
        &["calls=[add(a=1, b=2), multiply(a=add(a=1, b=1), b=5)]"],
    );
    assert!(out.status.success(), "{both}");
    let results = both["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{both}");
    assert_eq!(results[0]["call"], "add(a=1, b=2)");
    assert_eq!(results[0]["output"], 3);
    assert_eq!(results[1]["call"], "multiply(a=2, b=5)");
    assert_eq!(results[1]["output"], 10);
    assert_ne!(results[0]["call_id"], results[1]["call_id"]);

    // Code is not calls: nothing runs, and the client is told why.
    let marker = std::env::temp_dir().join(format!("fexpr-serve-pwned-{}", std::process::id()));
    let hostile = format!(
        "calls=# add(a=1, b=2)\nimport os\n__import__(\"os\").system(\"touch {m}\")\nexec(\"open('{m}', 'w')\")\nopen(\"{m}\", \"w\")\nlambda: add(a=1, b=2)",
        m = marker.display()
    );
    let (nothing, _) = inspector_call(&serve, "run_calls", &[&hostile]);
    assert_eq!(nothing["isError"], true, "{nothing}");
    // The lines are one unit of code around a call: one rejected item, nothing in it runs
    // (the call in the comment never counted).
    let results = nothing["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{nothing}");
    assert_eq!(results[0]["error"]["kind"], "Unsupported", "{nothing}");
    let message = results[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nothing in it ran"), "{nothing}");
    assert!(text(&nothing).contains("no call ran"), "{nothing}");
    assert!(!marker.exists());
}

/// The gateway over a real upstream, through the Inspector over streamable HTTP: the
/// upstream's tools with their schemas, a call answered, a bad call refused by fexpr before the
/// upstream sees it, `run_calls` with a list and a nested call.
#[test]
fn inspector_over_http_against_a_gateway() {
    let cfg = everything_config("http");
    let gateway = HttpGateway::start(&["--mcp-config", cfg.to_str().unwrap()]);
    let target = [gateway.url.as_str(), "--transport", "http"];

    let (list, _) = inspector(&target, &["--method", "tools/list"]);
    let tools = list["tools"].as_array().unwrap();
    let sum = tools.iter().find(|t| t["name"] == "get_sum").unwrap();
    assert_eq!(
        sum["inputSchema"]["properties"]["a"]["type"], "number",
        "{sum}"
    );
    assert!(tools.iter().any(|t| t["name"] == "run_calls"));

    let (answer, _) = inspector_call(&target, "get_sum", &["a=2", "b=3"]);
    assert_eq!(text(&answer), "The sum of 2 and 3 is 5.", "{answer}");

    let (bad, _) = inspector_call(&target, "get_sum", &["a=2"]);
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(
        text(&bad).starts_with("Arguments error: get_sum() missing 1 required argument: `b`"),
        "{bad}"
    );

    let (both, _) = inspector_call(
        &target,
        "run_calls",
        &["calls=[get_sum(a=1, b=2), echo(message=get_sum(a=1, b=1))]"],
    );
    let results = both["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results[0]["output"], "The sum of 1 and 2 is 3.", "{both}");
    assert_eq!(
        results[1]["output"], "Echo: The sum of 1 and 1 is 2.",
        "{both}"
    );
    let _ = std::fs::remove_file(cfg);
}

/// rmcp's client against the gateway: the upstream killed mid-call is that call's error, and
/// the next call starts it again; a client that disconnects mid-call leaves the gateway
/// serving the others.
#[test]
fn the_gateway_survives_a_killed_upstream_and_a_vanished_client() {
    let (cfg, pidfile) = everything_config_with_pidfile("kill");
    let mut gateway = HttpGateway::start(&["--mcp-config", cfg.to_str().unwrap()]);
    let url = gateway.url.clone();
    runtime().block_on(async {
        let client = rmcp_client(&url).await;
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools
            .iter()
            .any(|t| t.name == "trigger_long_running_operation"));

        // Killed mid-call: the call in flight fails, naming the server; the gateway stays up.
        let slow = long_call(&client);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let killed = Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .unwrap();
        assert!(killed.success());
        let started = Instant::now();
        let failed = slow.await.unwrap().unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "waited for the dead upstream"
        );
        assert_eq!(failed.is_error, Some(true));
        let message = result_text(&failed);
        assert!(message.contains("MCP server `everything`"), "{message}");

        // The next call starts the upstream again.
        let again = call(&client, "get_sum", json!({"a": 2, "b": 3})).await;
        assert_eq!(result_text(&again), "The sum of 2 and 3 is 5.");
        let new_pid = std::fs::read_to_string(&pidfile).unwrap();
        assert_ne!(new_pid, pid, "a new upstream process");

        // A client that goes away mid-call: the others are served, promptly.
        let leaving = rmcp_client(&url).await;
        let pending = long_call(&leaving);
        tokio::time::sleep(Duration::from_millis(500)).await;
        pending.abort();
        let _ = leaving.cancel().await;
        let started = Instant::now();
        let echo = call(&client, "echo", json!({"message": "still here"})).await;
        assert_eq!(result_text(&echo), "Echo: still here");
        assert!(started.elapsed() < Duration::from_secs(5));
        let later = rmcp_client(&url).await;
        let sum = call(&later, "get_sum", json!({"a": 1, "b": 1})).await;
        assert_eq!(result_text(&sum), "The sum of 1 and 1 is 2.");
        let _ = later.cancel().await;
        let _ = client.cancel().await;
    });
    assert!(gateway.alive());
    let _ = std::fs::remove_file(cfg);
    let _ = std::fs::remove_file(pidfile);
}

/// `--only-run-calls`: two tools listed however many there are; `search_tools` finds a tool's
/// signature; `run_calls` still reaches every tool.
#[test]
fn only_run_calls_lists_two_tools() {
    let cfg = everything_config("only");
    let gateway = HttpGateway::start(&["--mcp-config", cfg.to_str().unwrap(), "--only-run-calls"]);
    runtime().block_on(async {
        let client = rmcp_client(&gateway.url).await;
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["run_calls", "search_tools"]);
        let found = call(&client, "search_tools", json!({"query": "sum", "limit": 1})).await;
        assert_eq!(
            result_text(&found).lines().next(),
            Some("def get_sum(a: float, b: float)")
        );
        let ran = call(&client, "run_calls", json!({"calls": "get_sum(a=2, b=2)"})).await;
        let structured = ran.structured_content.unwrap();
        assert_eq!(
            structured["results"][0]["output"],
            "The sum of 2 and 2 is 4."
        );
        let _ = client.cancel().await;
    });
    let _ = std::fs::remove_file(cfg);
}

/// A stdio client that goes away mid-call (closes the gateway's stdin): the gateway ends
/// promptly and cleanly, and takes its upstream with it.
#[test]
fn a_stdio_client_leaving_mid_call_ends_the_gateway_cleanly() {
    use std::io::{BufRead, BufReader, Write};
    let (cfg, pidfile) = everything_config_with_pidfile("stdio-leave");
    let mut child = Command::new(fexpr_bin())
        .args(["serve", "--mcp-config", cfg.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Json| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: Json = serde_json::from_str(&line).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "fexpr", "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "trigger_long_running_operation", "arguments": {"duration": 30, "steps": 2}}}),
    );
    std::thread::sleep(Duration::from_millis(1500));
    let upstream = std::fs::read_to_string(&pidfile).unwrap();
    drop(stdin);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "fexpr serve still runs after its client left"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status:?}");
    // The upstream went with it: gone, or a zombie waiting for init to reap it.
    std::thread::sleep(Duration::from_millis(500));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", upstream.trim()));
    let alive = stat.is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    });
    assert!(
        !alive,
        "the upstream {} outlived the gateway",
        upstream.trim()
    );
    let _ = std::fs::remove_file(cfg);
    let _ = std::fs::remove_file(pidfile);
}

/// An upstream that hangs costs the call its deadline (`--mcp-timeout`), as a tool error; the
/// gateway and the upstream stay usable.
#[test]
fn a_hung_upstream_call_is_an_error_at_its_deadline() {
    let cfg = everything_config("hang");
    let gateway =
        HttpGateway::start(&["--mcp-config", cfg.to_str().unwrap(), "--mcp-timeout", "1"]);
    runtime().block_on(async {
        let client = rmcp_client(&gateway.url).await;
        let started = Instant::now();
        let slow = call(
            &client,
            "trigger_long_running_operation",
            json!({"duration": 20, "steps": 2}),
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(slow.is_error, Some(true));
        let message = result_text(&slow);
        assert!(message.contains("timed out after 1s"), "{message}");
        let echo = call(&client, "echo", json!({"message": "after"})).await;
        assert_eq!(result_text(&echo), "Echo: after");
        let _ = client.cancel().await;
    });
    let _ = std::fs::remove_file(cfg);
}

/// `--tools-json`: definitions without code, served checked: a call's result is the checked
/// (and repaired) call; a call that does not fit is refused; nothing runs.
#[test]
fn tools_json_definitions_are_served_checked() {
    let tools = write_config(
        "tools-json",
        &json!([{"type": "function", "function": {
            "name": "get_weather", "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                "required": ["city"]}}}]),
    );
    let serve = serve_tools_json(&tools);
    let (list, _) = inspector(&serve, &["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "run_calls"], "{list}");

    let (checked, out) = inspector_call(&serve, "get_weather", &["city=Paris", "unit=Celsius"]);
    assert!(out.status.success(), "{checked}");
    assert_eq!(
        checked["structuredContent"],
        json!({"name": "get_weather", "kwargs": {"city": "Paris", "unit": "celsius"}})
    );
    assert_eq!(
        checked["_meta"]["fexpr"]["repairs"][0]["to"], "'celsius'",
        "{checked}"
    );

    let (refused, _) = inspector_call(&serve, "get_weather", &["unit=celsius"]);
    assert_eq!(refused["isError"], true, "{refused}");
    let _ = std::fs::remove_file(tools);
}

/// Keys as the schema declares them: a `--tools-json` tool whose parameters Python cannot
/// name (`from`, `class`, `max-results`, `$filter`, `城市`) is listed with them, `tools/call`
/// binds them as the client sent them, and `run_calls` reaches them with `**{...}`.
#[test]
fn tools_json_keys_are_served_as_the_schema_declares_them() {
    let tools = write_config(
        "tools-json-keys",
        &json!([{"type": "function", "function": {
            "name": "convert", "description": "Convert an amount.",
            "parameters": {"type": "object", "properties": {
                "from": {"type": "string"}, "class": {"type": "string"},
                "max-results": {"type": "string"}, "$filter": {"type": "string"},
                "城市": {"type": "string"}},
                "required": ["from"]}}}]),
    );
    let serve = serve_tools_json(&tools);
    let (list, _) = inspector(&serve, &["--method", "tools/list"]);
    let convert = &list["tools"][0];
    assert_eq!(convert["name"], "convert", "{list}");
    let keys: Vec<&String> = convert["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["from", "class", "max-results", "$filter", "城市"],
        "{list}"
    );
    let kwargs = json!({"from": "USD", "class": "eco", "max-results": "three",
        "$filter": "a eq 1", "城市": "北京"});
    let (checked, out) = inspector_call(
        &serve,
        "convert",
        &[
            "from=USD",
            "class=eco",
            "max-results=three",
            "$filter=a eq 1",
            "城市=北京",
        ],
    );
    assert!(out.status.success(), "{checked}");
    assert_eq!(checked["isError"], false, "{checked}");
    assert_eq!(
        checked["structuredContent"],
        json!({"name": "convert", "kwargs": kwargs})
    );
    let (ran, out) = inspector_call(
        &serve,
        "run_calls",
        &[
            r#"calls=convert(**{"from": "USD", "class": "eco", "max-results": "three", "$filter": "a eq 1", "城市": "北京"})"#,
        ],
    );
    assert!(out.status.success(), "{ran}");
    let results = ran["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{ran}");
    assert_eq!(results[0]["output"]["kwargs"], kwargs, "{ran}");
    assert_eq!(
        results[0]["call"],
        r#"convert(**{'from': 'USD', 'class': 'eco', 'max-results': 'three', '$filter': 'a eq 1', '城市': '北京'})"#,
        "{ran}"
    );
    let _ = std::fs::remove_file(tools);
}

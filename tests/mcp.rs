//! MCP servers as tool sources, against real servers: `@modelcontextprotocol/server-everything`
//! (npm) and `mcp-server-time` (PyPI), installed at their pinned versions into `mcp-servers/`
//! by `scripts/ci-mcp.sh`. Without them the tests skip loudly; with `CI` set they fail.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step
#![cfg(feature = "mcp")]

use fexpr::mcp::{McpConfig, McpOptions, McpServerConfig, McpTools};
use fexpr::Input;
use fexpr::{ErrorKind, FunctionOutput, FunctionTool, ToolManager, Value};
use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp-servers")
}

fn everything_bin() -> PathBuf {
    servers_dir().join("node_modules/.bin/mcp-server-everything")
}

fn time_bin() -> PathBuf {
    servers_dir().join(".venv/bin/mcp-server-time")
}

/// Whether the servers are installed. Absent: a loud skip, or a failure under CI.
fn servers_present(test: &str) -> bool {
    let missing: Vec<PathBuf> = [everything_bin(), time_bin()]
        .into_iter()
        .filter(|p| !p.exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let message =
        format!("MCP test `{test}`: servers not installed ({missing:?}); run scripts/ci-mcp.sh");
    if std::env::var_os("CI").is_some() {
        panic!("{message} (CI is set, so this fails instead of skipping)");
    }
    // Straight to stderr: the test harness captures `eprintln!` of passing tests.
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: {message} ***\n");
    false
}

/// Both servers; the time server's local zone fixed so its answers do not depend on the host.
fn config() -> McpConfig {
    McpConfig::new()
        .server(
            "everything",
            McpServerConfig::stdio(everything_bin().to_string_lossy(), ["stdio"]),
        )
        .server(
            "time",
            McpServerConfig::stdio(
                time_bin().to_string_lossy(),
                ["--local-timezone", "Europe/Berlin"],
            ),
        )
}

fn config_json() -> Json {
    json!({"mcpServers": {
        "everything": {"command": everything_bin(), "args": ["stdio"]},
        "time": {"command": time_bin(), "args": ["--local-timezone", "Europe/Berlin"]},
    }})
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn connect(options: McpOptions) -> (ToolManager, McpTools) {
    let mcp = McpTools::connect(&config(), options).await.unwrap();
    let mut manager = ToolManager::builder();
    mcp.register(&mut manager);
    (manager.build().unwrap(), mcp)
}

async fn run(manager: &ToolManager, sandbox: bool, text: &str) -> FunctionOutput {
    let mut outs = if sandbox {
        async { manager.run(Input::expr(text)).sandboxed().await.outputs }.await
    } else {
        async { manager.run(Input::expr(text)).await.outputs }.await
    };
    assert_eq!(outs.len(), 1, "{text}: {outs:?}");
    outs.remove(0)
}

fn ok(out: &FunctionOutput) -> &Value {
    assert!(
        out.output.is_ok(),
        "{}: {:?}",
        out.input,
        out.output.as_ref().err()
    );
    out.output.as_ref().unwrap()
}

fn err(out: &FunctionOutput) -> &fexpr::Error {
    out.output
        .as_ref()
        .err()
        .as_ref()
        .unwrap_or_else(|| panic!("{}: expected an error, got {:?}", out.input, out.output))
}

/// The acceptance calls, natively or through the sandbox.
async fn acceptance(manager: &ToolManager, sandbox: bool) {
    let sum = run(manager, sandbox, "get_sum(a=2, b=3)").await;
    assert_eq!(ok(&sum), &Value::from("The sum of 2 and 3 is 5."));
    let echo = run(manager, sandbox, "echo(message=\"hi\")").await;
    assert_eq!(ok(&echo), &Value::from("Echo: hi"));

    // mcp-server-time answers with structured content: the output is that dict.
    let time = run(
        manager,
        sandbox,
        "get_current_time(timezone=\"Asia/Tokyo\")",
    )
    .await;
    let parsed = ok(&time).to_json();
    assert_eq!(parsed["timezone"], "Asia/Tokyo", "{parsed}");
    assert!(
        parsed["datetime"].as_str().unwrap().ends_with("+09:00"),
        "{parsed}"
    );

    // Wrong type: refused by the signature, nothing sent.
    let bad = run(manager, sandbox, "get_sum(a=\"two\", b=3)").await;
    assert_eq!(err(&bad).kind, ErrorKind::Type, "{bad:?}");

    // Out of the schema's bounds (`count`: 1 to 10): refused before sending.
    let links = run(manager, sandbox, "get_resource_links(count=2)").await;
    ok(&links);
    let many = run(manager, sandbox, "get_resource_links(count=11)").await;
    let e = err(&many);
    assert_eq!(e.kind, ErrorKind::Value, "{e:?}");
    // `count` is a JSON Schema `number`: the signature made the int a float before the check.
    assert_eq!(e.message, "`count` must be at most 10, got 11", "{e:?}");

    let missing = run(manager, sandbox, "echo()").await;
    assert_eq!(err(&missing).kind, ErrorKind::Arguments, "{missing:?}");

    let unknown = run(manager, sandbox, "get_summ(a=2, b=3)").await;
    let e = err(&unknown);
    assert_eq!(e.kind, ErrorKind::UnknownTool, "{e:?}");
    assert!(e.hint.as_deref().unwrap_or("").contains("get_sum"), "{e:?}");

    // The server's own failure (an `isError` result) is an error, not an output.
    let zone = run(
        manager,
        sandbox,
        "get_current_time(timezone=\"Not/A_Zone\")",
    )
    .await;
    let e = err(&zone);
    assert_eq!(e.kind, ErrorKind::ToolFailed, "{e:?}");
    assert!(e.message.contains("Not/A_Zone"), "{e:?}");

    // Calls of one expression run together, on both servers.
    let outs = if sandbox {
        async {
            manager
                .run(Input::expr("[echo(message=\"a\"), get_sum(a=1.5, b=2)]"))
                .sandboxed()
                .await
                .outputs
        }
        .await
    } else {
        async {
            manager
                .run(Input::expr("[echo(message=\"a\"), get_sum(a=1.5, b=2)]"))
                .await
                .outputs
        }
        .await
    };
    assert_eq!(ok(&outs[0]), &Value::from("Echo: a"));
    assert_eq!(ok(&outs[1]), &Value::from("The sum of 1.5 and 2 is 3.5."));
}

#[test]
fn acceptance_natively_and_in_the_sandbox() {
    if !servers_present("acceptance") {
        return;
    }
    runtime().block_on(async {
        let (manager, mcp) = connect(McpOptions::default()).await;
        acceptance(&manager, false).await;
        acceptance(&manager, true).await;
        mcp.close().await;
    });
}

/// Kill the server process; the next call fails clearly, the one after that works again.
async fn kill_and_recover(manager: &ToolManager, mcp: &McpTools, sandbox: bool) {
    assert_eq!(
        ok(&run(manager, sandbox, "echo(message=\"before\")").await),
        &Value::from("Echo: before")
    );
    let server = &mcp.servers()[0];
    assert_eq!(server.name(), "everything");
    let pid = server.process_id().await.expect("a stdio server has a pid");
    let status = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    tokio::time::sleep(Duration::from_millis(300)).await;

    let during = run(manager, sandbox, "echo(message=\"during\")").await;
    let e = err(&during);
    assert_eq!(e.kind, ErrorKind::ToolFailed, "{e:?}");
    assert!(e.message.contains("MCP server `everything`"), "{e:?}");
    assert!(e.message.contains("started again"), "{e:?}");

    let after = run(manager, sandbox, "echo(message=\"after\")").await;
    assert_eq!(ok(&after), &Value::from("Echo: after"));
    assert_ne!(server.process_id().await, Some(pid), "a new process");
    // The other server was not affected.
    let time = run(manager, sandbox, "get_current_time(timezone=\"UTC\")").await;
    ok(&time);
}

#[test]
fn a_killed_server_fails_one_call_then_recovers() {
    if !servers_present("kill") {
        return;
    }
    runtime().block_on(async {
        let (manager, mcp) = connect(McpOptions::default()).await;
        kill_and_recover(&manager, &mcp, false).await;
        kill_and_recover(&manager, &mcp, true).await;
        mcp.close().await;
    });
}

#[test]
fn a_slow_call_times_out_and_the_server_stays_usable() {
    if !servers_present("timeout") {
        return;
    }
    runtime().block_on(async {
        let options = McpOptions {
            call_timeout: Duration::from_millis(700),
            ..McpOptions::default()
        };
        let (manager, mcp) = connect(options).await;
        let slow = run(
            &manager,
            false,
            "trigger_long_running_operation(duration=3, steps=3)",
        )
        .await;
        let e = err(&slow);
        assert_eq!(e.kind, ErrorKind::ToolFailed, "{e:?}");
        assert!(e.message.contains("timed out"), "{e:?}");
        let echo = run(&manager, false, "echo(message=\"still here\")").await;
        assert_eq!(ok(&echo), &Value::from("Echo: still here"));
        mcp.close().await;
    });
}

#[test]
fn server_errors_and_raw_results() {
    if !servers_present("errors") {
        return;
    }
    runtime().block_on(async {
        let (manager, mcp) = connect(McpOptions::default()).await;
        // A JSON-RPC error (the low-level Python server's answer to an unknown tool).
        let time = &mcp.servers()[1];
        let e = time
            .call_tool("no-such-tool", Default::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::ToolFailed);
        assert!(e.message.contains("JSON-RPC error -32602"), "{e:?}");

        // Arguments the server rejects (sent by going around the signature): `isError`.
        let sum = manager.tool("get_sum").unwrap();
        let e = sum
            .call(vec![Some(Value::from("x")), Some(Value::Int(1))])
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::ToolFailed, "{e:?}");

        // An image result keeps its data; the observation summarizes it.
        let image = manager.tool("get_tiny_image").unwrap();
        let out = image.call(vec![]).await.unwrap();
        let json = out.output.to_json();
        let blocks = json["content"].as_array().unwrap();
        let img = blocks.iter().find(|b| b["type"] == "image").unwrap();
        assert_eq!(img["mimeType"], "image/png");
        assert!(img["data"].as_str().unwrap().len() > 100);
        let obs = out.observation.unwrap();
        assert!(obs.contains("[image image/png"), "{obs}");

        // Structured content becomes the output, typed by the output schema.
        let out = run(
            &manager,
            false,
            "get_structured_content(location=\"Chicago\")",
        )
        .await;
        let json = ok(&out).to_json();
        assert!(json["temperature"].is_number(), "{json}");
        // ...and the enum of the input schema is checked before sending.
        let bad = run(
            &manager,
            false,
            "get_structured_content(location=\"Paris\")",
        )
        .await;
        assert_eq!(err(&bad).kind, ErrorKind::Type, "{bad:?}");
        mcp.close().await;
    });
}

#[test]
fn names_are_identifiers_and_collision_free() {
    if !servers_present("names") {
        return;
    }
    runtime().block_on(async {
        let mcp = McpTools::connect(&config(), McpOptions::default())
            .await
            .unwrap();
        let names = mcp.names();
        let sum = names.iter().find(|n| n.original == "get-sum").unwrap();
        assert_eq!(sum.exposed, "get_sum");
        assert_eq!(sum.server, "everything");
        for n in &names {
            assert!(fexpr::context::valid_name(&n.exposed), "{n:?}");
        }

        // A name the manager already has is not replaced.
        let mut builder =
            ToolManager::builder().tool(FunctionTool::new("echo", ["message"], |m: String| m));
        let registered = mcp.register(&mut builder);
        let manager = builder.build().unwrap();
        let echo = registered.iter().find(|n| n.original == "echo").unwrap();
        assert_eq!(echo.exposed, "echo_2");
        let out = manager.execute_func_expr("echo_2(message=\"x\")").await;
        assert_eq!(out.output, Ok(Value::from("Echo: x")));
        let out = manager.execute_func_expr("echo(message=\"x\")").await;
        assert_eq!(out.output, Ok(Value::from("x")));
        mcp.close().await;

        // Namespaced: `server.tool`, natively and in the sandbox.
        let options = McpOptions {
            namespaced: true,
            ..McpOptions::default()
        };
        let (manager, mcp) = connect(options).await;
        for sandbox in [false, true] {
            let out = run(&manager, sandbox, "everything.get_sum(a=2, b=3)").await;
            assert_eq!(ok(&out), &Value::from("The sum of 2 and 3 is 5."));
            let out = run(&manager, sandbox, "time.get_current_time(timezone=\"UTC\")").await;
            ok(&out);
        }
        mcp.close().await;
    });
}

#[test]
fn schemas_become_signatures() {
    if !servers_present("schemas") {
        return;
    }
    runtime().block_on(async {
        let (manager, mcp) = connect(McpOptions::default()).await;
        let sig = |name: &str| {
            manager
                .tool(name)
                .unwrap()
                .definition()
                .python_signature()
        };
        assert_eq!(sig("get_sum"), "get_sum(a: float, b: float)");
        assert_eq!(sig("echo"), "echo(message: str)");
        assert_eq!(
            sig("convert_time"),
            "convert_time(source_timezone: str, time: str, target_timezone: str) -> TimeConversionResult"
        );
        // Defaults make parameters optional.
        let long = sig("trigger_long_running_operation");
        assert!(long.contains("duration: float = 10"), "{long}");
        mcp.close().await;
    });
}

#[test]
fn streamable_http() {
    if !servers_present("http") {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(everything_bin())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let text = format!(
        r#"{{"mcpServers": {{"web": {{"url": "http://127.0.0.1:{port}/mcp", "headers": {{"X-Test": "1"}}}}}}}}"#
    );
    let config = McpConfig::from_str(&text).unwrap();
    let result = runtime().block_on(async {
        let mcp = McpTools::connect(&config, McpOptions::default()).await?;
        let mut manager = ToolManager::builder();
        mcp.register(&mut manager);
        let manager = manager.build()?;
        let native = run(&manager, false, "echo(message=\"over http\")").await;
        let sandboxed = run(&manager, true, "get_sum(a=2, b=3)").await;
        mcp.close().await;
        Ok::<_, fexpr::Error>((native, sandboxed))
    });
    let _ = server.kill();
    let _ = server.wait();
    let (native, sandboxed) = result.unwrap();
    assert_eq!(ok(&native), &Value::from("Echo: over http"));
    assert_eq!(ok(&sandboxed), &Value::from("The sum of 2 and 3 is 5."));
}

#[test]
fn a_server_that_cannot_start_is_a_clear_error() {
    runtime().block_on(async {
        let config = McpConfig::new().server(
            "broken",
            McpServerConfig::stdio("/nonexistent/fexpr-mcp-server", Vec::<String>::new()),
        );
        let e = McpTools::connect(&config, McpOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(e.kind, ErrorKind::ToolFailed);
        assert!(e.message.contains("MCP server `broken`"), "{e:?}");

        // A process that exits at once, saying why on stderr.
        let config = McpConfig::new().server(
            "quits",
            McpServerConfig::stdio("sh", ["-c", "echo 'no config here' >&2; exit 3"]),
        );
        let e = McpTools::connect(&config, McpOptions::default())
            .await
            .err()
            .unwrap();
        assert!(e.message.contains("MCP server `quits`"), "{e:?}");

        // A process that never answers `initialize`.
        let config = McpConfig::new().server("silent", McpServerConfig::stdio("sleep", ["30"]));
        let options = McpOptions {
            connect_timeout: Duration::from_millis(500),
            ..McpOptions::default()
        };
        let e = McpTools::connect(&config, options).await.err().unwrap();
        assert!(e.message.contains("initialize"), "{e:?}");
    });
}

// ---- the CLI ----

fn fexpr() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fexpr"))
}

fn write_config(name: &str, json: &Json) -> PathBuf {
    let path = std::env::temp_dir().join(format!("fexpr-mcp-{name}-{}.json", std::process::id()));
    std::fs::write(&path, json.to_string()).unwrap();
    path
}

fn lines(stdout: &[u8]) -> Vec<Json> {
    String::from_utf8(stdout.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn cli_exec_natively_and_in_the_sandbox() {
    if !servers_present("cli exec") {
        return;
    }
    let cfg = write_config("exec", &config_json());
    let exprs = [
        "get_sum(a=2, b=3)",
        "echo(message=\"hi\")",
        "get_current_time(timezone=\"America/New_York\")",
        "get_sum(a=\"two\", b=3)",
        "get_summ(a=2, b=3)",
        "add(a=2, b=3)",
    ];
    let mut results = Vec::new();
    for sandbox in [false, true] {
        let mut cmd = fexpr();
        cmd.args(["exec", "--tools", "demo", "--mcp-config"])
            .arg(&cfg);
        if sandbox {
            cmd.arg("--sandbox");
        }
        let out = cmd.args(exprs).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = lines(&out.stdout);
        assert_eq!(lines.len(), exprs.len(), "{lines:?}");
        assert_eq!(lines[0]["output"], "The sum of 2 and 3 is 5.");
        assert_eq!(lines[1]["output"], "Echo: hi");
        assert_eq!(
            lines[2]["output"]["timezone"], "America/New_York",
            "{}",
            lines[2]
        );
        assert_eq!(lines[3]["error"]["kind"], "Type", "{}", lines[3]);
        assert_eq!(lines[4]["error"]["kind"], "UnknownTool", "{}", lines[4]);
        assert!(
            lines[4]["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("get_sum"),
            "{}",
            lines[4]
        );
        assert_eq!(lines[5]["output"], 5);
        for (i, line) in lines.iter_mut().enumerate() {
            if let Some(o) = line.as_object_mut() {
                o.remove("receipt");
                o.remove("call_id"); // generated per run
                o.remove("output"); // the time differs between runs
                if i == 2 {
                    o.remove("observation"); // the time, as text
                }
            }
        }
        results.push(lines);
    }
    assert_eq!(results[0], results[1], "--sandbox differs");
    let _ = std::fs::remove_file(cfg);
}

#[test]
fn cli_exec_after_killing_the_server() {
    if !servers_present("cli kill") {
        return;
    }
    for sandbox in [false, true] {
        let pidfile =
            std::env::temp_dir().join(format!("fexpr-mcp-pid-{}-{sandbox}", std::process::id()));
        let _ = std::fs::remove_file(&pidfile);
        let script = format!(
            "echo $$ > '{}'; exec '{}' stdio",
            pidfile.display(),
            everything_bin().display()
        );
        let cfg = write_config(
            &format!("kill-{sandbox}"),
            &json!({"mcpServers": {"everything": {"command": "sh", "args": ["-c", script]}}}),
        );
        let mut cmd = fexpr();
        cmd.args(["exec", "--mcp-config"]).arg(&cfg);
        if sandbox {
            cmd.arg("--sandbox");
        }
        let mut child = cmd
            .args(["echo(message=\"before\")", "-", "echo(message=\"after\")"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let first: Json = serde_json::from_str(&first).unwrap();
        assert_eq!(first["output"], "Echo: before");

        // The first server process: kill it while fexpr waits for stdin.
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let status = Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(300));
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"echo(message=\"during\")").unwrap();
        drop(stdin);

        let rest: Vec<Json> = stdout
            .lines()
            .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
            .collect();
        assert!(child.wait().unwrap().success());
        assert_eq!(rest.len(), 2, "{rest:?}");
        assert_eq!(rest[0]["error"]["kind"], "ToolFailed", "{}", rest[0]);
        let message = rest[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains("MCP server `everything`"), "{message}");
        assert_eq!(rest[1]["output"], "Echo: after", "{}", rest[1]);
        let new_pid = std::fs::read_to_string(&pidfile).unwrap();
        assert_ne!(new_pid, pid, "the server was started again");
        let _ = std::fs::remove_file(cfg);
        let _ = std::fs::remove_file(pidfile);
    }
}

/// `fexpr tools --format openai|anthropic` is valid tool JSON.
fn check_tool_json(format: &str, tools: &Json) {
    let tools = tools.as_array().unwrap();
    assert!(!tools.is_empty());
    for tool in tools {
        let (name, description, schema) = match format {
            "openai" => {
                assert_eq!(tool["type"], "function", "{tool}");
                let f = &tool["function"];
                (&f["name"], &f["description"], &f["parameters"])
            }
            _ => (&tool["name"], &tool["description"], &tool["input_schema"]),
        };
        let name = name.as_str().unwrap();
        // Both APIs want ^[a-zA-Z0-9_-]{1,64}$ (OpenAI) / ^[a-zA-Z0-9_-]{1,128}$.
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name}"
        );
        assert!(description.is_string(), "{tool}");
        assert_eq!(schema["type"], "object", "{tool}");
        assert!(schema["properties"].is_object() || schema.get("properties").is_none());
    }
}

#[test]
fn cli_tools_formats() {
    let demo_only = !servers_present("cli tools");
    let cfg = write_config("tools", &config_json());
    let mut runs: Vec<(Vec<String>, &str)> = Vec::new();
    for format in ["openai", "anthropic"] {
        runs.push((
            vec![
                "--tools".into(),
                "demo".into(),
                "--format".into(),
                format.into(),
            ],
            format,
        ));
        if !demo_only {
            runs.push((
                vec![
                    "--mcp-config".into(),
                    cfg.to_string_lossy().into(),
                    "--format".into(),
                    format.into(),
                ],
                format,
            ));
        }
    }
    for (args, format) in runs {
        let out = fexpr().arg("tools").args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Json = serde_json::from_slice(&out.stdout).unwrap();
        check_tool_json(format, &json);
        if args.contains(&"--mcp-config".to_string()) {
            let names: Vec<&str> = json
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    t["name"]
                        .as_str()
                        .or(t["function"]["name"].as_str())
                        .unwrap()
                })
                .collect();
            for expected in ["echo", "get_sum", "get_current_time", "convert_time"] {
                assert!(names.contains(&expected), "{expected} in {names:?}");
            }
            assert!(
                !names.contains(&"add"),
                "no demo tools unless asked: {names:?}"
            );
        }
    }
    if !demo_only {
        let out = fexpr()
            .args([
                "tools",
                "--mcp-namespaced",
                "--format",
                "python",
                "--mcp-config",
            ])
            .arg(&cfg)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("def everything.get_sum(a: float, b: float)"),
            "{text}"
        );
        assert!(
            text.contains("def time.get_current_time(timezone: str)"),
            "{text}"
        );
    }
    let _ = std::fs::remove_file(cfg);
}

#[test]
fn cli_bad_config_is_an_error() {
    let cfg = write_config("bad", &json!({"mcpServers": {"x": {"args": []}}}));
    let out = fexpr()
        .args(["exec", "--mcp-config"])
        .arg(&cfg)
        .arg("f()")
        .output()
        .unwrap();
    // A file named on the command line that cannot be understood: a usage error.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("fexpr: --mcp-config: "), "{err}");
    assert!(err.contains("MCP server `x`"), "{err}");
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_file(cfg);
}

#[test]
fn cli_a_server_that_does_not_start_leaves_the_others_working() {
    if !servers_present("cli broken server") {
        return;
    }
    let cfg = write_config(
        "half",
        &json!({"mcpServers": {
            "broken": {"command": "/nonexistent/fexpr-mcp-server"},
            "everything": {"command": everything_bin(), "args": ["stdio"]},
        }}),
    );
    let out = fexpr()
        .args(["exec", "--mcp-config"])
        .arg(&cfg)
        .arg("get_sum(a=2, b=3)")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("fexpr: MCP server `broken`: cannot start")
            && err.contains("its tools are left out"),
        "{err}"
    );
    let rows = lines(&out.stdout);
    assert_eq!(rows[0]["output"], "The sum of 2 and 3 is 5.", "{rows:?}");

    // With no server started there is nothing to run against: exit 1, naming the server.
    let only_broken = write_config(
        "broken",
        &json!({"mcpServers": {"broken": {"command": "/nonexistent/fexpr-mcp-server"}}}),
    );
    let out = fexpr()
        .args(["exec", "--mcp-config"])
        .arg(&only_broken)
        .arg("get_sum(a=2, b=3)")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MCP server `broken`"));
    let _ = std::fs::remove_file(cfg);
    let _ = std::fs::remove_file(only_broken);
}

#[test]
fn cli_unknown_keys_in_a_server_entry_are_errors() {
    let cfg = write_config(
        "typo",
        &json!({"mcpServers": {"time": {"command": "uvx", "arg": ["mcp-server-time"]}}}),
    );
    for command in ["exec", "serve"] {
        let mut cmd = fexpr();
        cmd.args([command, "--mcp-config"]).arg(&cfg);
        if command == "exec" {
            cmd.arg("f()");
        }
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("MCP server `time`: unknown key `arg`"),
            "{command}: {err}"
        );
    }
    let _ = std::fs::remove_file(cfg);
}

//! `fexpr exec --tools demo [--sandbox]` gives the seed's results, one JSON object per call.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

fn exec(args: &[&str], stdin: &[u8]) -> (Vec<Value>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .arg("exec")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run fexpr");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    let lines = String::from_utf8(out.stdout)
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    (lines, out.status.code().unwrap_or(-1))
}

/// The output of `expr`, natively and with `--sandbox` (which must agree, and add a receipt).
fn output_of(expr: &str) -> Value {
    let (lines, code) = exec(&["--tools", "demo", expr], b"");
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 1, "{expr}: {lines:?}");
    assert_eq!(lines[0]["error"], Value::Null, "{expr}: {}", lines[0]);
    let (mut sandboxed, code) = exec(&["--tools", "demo", "--sandbox", expr], b"");
    assert_eq!(code, 0);
    assert_eq!(sandboxed.len(), 1, "{expr}: {sandboxed:?}");
    let receipt = sandboxed[0]
        .as_object_mut()
        .and_then(|o| o.remove("receipt"))
        .unwrap_or_else(|| panic!("{expr}: no receipt in {}", sandboxed[0]));
    assert!(receipt["fuel_used"].as_u64() > Some(0), "{receipt}");
    // Each run generates its own call id.
    let mut native = lines[0].clone();
    for row in [&mut native, &mut sandboxed[0]] {
        let id = row.as_object_mut().and_then(|o| o.remove("call_id"));
        assert!(id
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with("call_")));
    }
    assert_eq!(sandboxed[0], native, "{expr}: --sandbox differs");
    lines[0]["output"].clone()
}

#[test]
fn seed_results() {
    assert_eq!(output_of("add(a=2, b=3)"), json!(5));
    assert_eq!(output_of("multiply(a=2, b=x)"), json!(4));
    assert_eq!(output_of("add(a=y, b=5)"), json!(5));
    assert_eq!(output_of("divide(a=2.0, b=3.0)"), json!(2.0 / 3.0));
    assert_eq!(
        output_of("search(query=\"something\")"),
        json!(["result1something", "result2something"])
    );
    assert_eq!(
        output_of("add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))"),
        json!({"x": 4, "y": 6})
    );
    assert_eq!(
        output_of("add_points(p1={'x': 1, 'y': 2}, p2={'x': 3, 'y': 4})"),
        json!({"x": 4, "y": 6})
    );
    assert_eq!(
        output_of("numpy_sum(arr=np.array([[1, 2], [3, 4]]))"),
        json!(10)
    );
    assert_eq!(output_of("numpy_sum(arr=[[1, 2], [3, 4]])"), json!(10));
}

#[test]
fn a_batch_from_stdin_keeps_order_and_shape() {
    let (lines, code) = exec(
        &["--tools", "demo", "-"],
        b"[add(a=2, b=3), search(query=\"q\")]\n",
    );
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 2);
    let id = lines[0]["call_id"].as_str().expect("a call id").to_string();
    assert!(id.starts_with("call_") && id.len() == 29, "{id}");
    assert_ne!(
        lines[1]["call_id"].as_str(),
        Some(id.as_str()),
        "one id per call"
    );
    assert_eq!(
        lines[0],
        json!({"call_id": id, "name": "add", "args": [], "kwargs": {"a": 2, "b": 3}, "output": 5, "error": null})
    );
    assert_eq!(lines[1]["output"], json!(["result1q", "result2q"]));
}

#[test]
fn bad_input_is_an_error_object_with_exit_zero() {
    let (lines, code) = exec(&["--tools", "demo", "-"], b"add(a=1, b=\xff\xfe)");
    assert_eq!(code, 0);
    assert_eq!(lines[0]["error"]["kind"], "Syntax");
    // Model text is read as `check` reads it: code beside a call makes the whole unit one
    // rejected item, and nothing in it runs.
    let (lines, code) = exec(&["--tools", "demo", "add(a=1, b=2); import os"], b"");
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["output"], Value::Null);
    assert_eq!(lines[0]["error"]["kind"], "Unsupported", "{lines:?}");
    // A call inside a larger expression does not run.
    let (lines, _) = exec(&["--tools", "demo", "add(a=1, b=2) + os"], b"");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["output"], Value::Null);
    assert_eq!(lines[0]["error"]["kind"], "Unsupported", "{lines:?}");
}

#[test]
fn json_forms_on_stdin() {
    let (lines, _) = exec(
        &["--tools", "demo", "-"],
        br#"[{"name": "add", "kwargs": {"a": 1, "b": 2}}, {"action": "multiply(a=2, b=x)"}]"#,
    );
    assert_eq!(lines[0]["output"], json!(3));
    assert_eq!(lines[1]["output"], json!(4));
}

#[test]
fn json_on_stdin_is_read_as_json_and_sandboxed_in_the_guest() {
    // A JSON input that does not decode gets a JSON error, not a Python one.
    let (lines, code) = exec(
        &["--tools", "demo", "-"],
        br#"{"name": "divide", "kwargs": {"a": 1e400, "b": 1}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(
        lines[0]["error"],
        json!({"kind": "Value", "message": "JSON: number 1e400 is out of range for a float",
               "span": {"start": 35, "end": 40}, "hint": "a float is at most about 1.8e308 in magnitude"})
    );
    let (lines, _) = exec(
        &["--tools", "demo", "-"],
        b"  {\"name\": \"add\", \"kwargs\": [1,}",
    );
    assert_eq!(
        lines[0]["error"]["message"],
        "JSON: expected a JSON value, found `}`"
    );
    // Spans index the input as given, leading blanks included.
    assert_eq!(lines[0]["error"]["span"], json!({"start": 31, "end": 32}));
    // What is not JSON but a Python literal of the same form is read as one, as `check` does.
    let (lines, _) = exec(
        &["--tools", "demo", "-"],
        b"  {\"name\": \"add\", \"kwargs\": {\"a\": 1,}}",
    );
    assert_eq!(lines[0]["error"]["kind"], "Arguments");
    assert_eq!(lines[0]["kwargs"], json!({"a": 1}));
    // With --sandbox, every JSON form is evaluated in the guest: each row has a receipt.
    let (lines, _) = exec(
        &["--tools", "demo", "--sandbox", "-"],
        br#"[{"name": "add", "kwargs": {"a": 1, "b": 2}}, {"action": "multiply(a=2, b=x)"}]"#,
    );
    // Rows are printed as their calls finish: found by name, not by place.
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no {name} row in {lines:?}"))
    };
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(row("add")["output"], json!(3));
    assert_eq!(row("multiply")["output"], json!(4));
    // Each call is evaluated in its own guest instance: one host call each.
    assert_eq!(row("add")["receipt"]["host_calls"], json!(1), "{lines:?}");
    assert_eq!(
        row("multiply")["receipt"]["host_calls"],
        json!(1),
        "{lines:?}"
    );
}

#[test]
fn unusable_command_lines_fail() {
    let status = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .arg("exec")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_ne!(status.code(), Some(0));
}

/// `FEXPR_MODULE_CACHE=DIR` puts the compiled guest there and nowhere else (`off` takes the
/// same path with no directory at all).
#[test]
fn module_cache_goes_where_fexpr_module_cache_says() {
    let base = std::env::temp_dir().join(format!("fexpr-cli-cache-{}", std::process::id()));
    let (home, cache) = (base.join("home"), base.join("cache"));
    std::fs::create_dir_all(&home).expect("home");
    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo", "--sandbox", "add(a=2, b=3)"])
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join("xdg"))
        .env("FEXPR_MODULE_CACHE", &cache)
        .output()
        .expect("run fexpr");
    assert_eq!(out.status.code(), Some(0));
    let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(line["output"], json!(5), "{line}");
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .expect("the cache directory was created")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].ends_with(".cwasm"), "{entries:?}");
    let written_in_home = std::fs::read_dir(&home).expect("home").count();
    assert_eq!(written_in_home, 0, "nothing is written under HOME");
    std::fs::remove_dir_all(&base).expect("clean up");
}

/// `fexpr args` with `stdin`: exit code, stdout lines as JSON, stderr.
fn fexpr(args: &[&str], stdin: Stdio) -> (Option<i32>, Vec<Value>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(args)
        .stdin(stdin)
        .output()
        .expect("run fexpr");
    let rows = String::from_utf8(out.stdout)
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
    (out.status.code(), rows, stderr)
}

const CHECK_TOOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus_tools.json");

/// A file with `bytes`, to give as stdin.
fn stdin_of(name: &str, bytes: &[u8]) -> Stdio {
    let path = std::env::temp_dir().join(format!("fexpr-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).expect("write stdin file");
    let file = std::fs::File::open(&path).expect("open stdin file");
    let _ = std::fs::remove_file(&path);
    Stdio::from(file)
}

/// Whatever is wrong with an input (bytes that are not UTF-8, more than `max_source_bytes`,
/// stdin that cannot be read, `-` twice), `exec` and `check` answer it with an error row of
/// their usual shape on stdout, nothing on stderr, and exit 0.
#[test]
fn every_input_problem_is_an_error_row_with_exit_zero() {
    let over = vec![b' '; (1 << 20) + 1];
    for command in [
        &["exec", "--tools", "demo"][..],
        &["check", "--tools-json", CHECK_TOOLS],
    ] {
        let with = |extra: &[&'static str]| [command, extra].concat();
        let cases: [(Vec<&str>, Stdio, &str, &str); 4] = [
            (
                with(&["-"]),
                stdin_of("utf8", b"add(a=1, b=\xff)"),
                "Syntax",
                "stdin is not valid UTF-8 (at byte 11)",
            ),
            (
                with(&["-"]),
                stdin_of("over", &over),
                "Limit",
                "max_source_bytes limit exceeded: stdin holds more than 1048576 bytes (read no further)",
            ),
            (
                with(&["-"]),
                Stdio::from(std::fs::File::open("/").expect("a directory")),
                "Syntax",
                "cannot read stdin: Is a directory (os error 21)",
            ),
            (
                with(&["-", "-"]),
                stdin_of("twice", b""),
                "Syntax",
                "stdin was read already: give `-` once",
            ),
        ];
        for (args, stdin, kind, message) in cases {
            let (code, rows, stderr) = fexpr(&args, stdin);
            // `- -`: the first (blank) has no call, which stderr says; nothing else is there.
            let noted = stderr
                .lines()
                .all(|l| l.starts_with(r#"{"nothing_to_run":"#));
            assert_eq!((code, noted), (Some(0), true), "{args:?}: {stderr}");
            let row = rows.last().unwrap_or_else(|| panic!("{args:?}: no row"));
            assert_eq!(row["error"]["kind"], kind, "{args:?}: {row}");
            // `exec -` streams stdin: past the limit the stream stops with the bytes read.
            if command[0] == "exec" && kind == "Limit" {
                let got = row["error"]["message"].as_str().unwrap_or_default();
                assert!(got.starts_with("max_source_bytes limit exceeded"), "{row}");
            } else {
                assert_eq!(row["error"]["message"], message, "{args:?}: {row}");
            }
            assert_eq!(row["name"], "", "{row}");
            if command[0] == "exec" {
                assert_eq!(row["output"], Value::Null, "{row}");
            } else {
                assert_eq!(row["valid"], false, "{row}");
                assert_eq!(row["span"], json!({"start": 0, "end": 0}), "{row}");
            }
        }
    }
    // The span of bytes that are not UTF-8 indexes the input as given.
    let (_, rows, _) = fexpr(
        &["exec", "--tools", "demo", "-"],
        stdin_of("span", b"f(\xe2\x82)"),
    );
    assert_eq!(rows[0]["error"]["span"], json!({"start": 2, "end": 4}));
}

/// An argument that is not UTF-8 is that input's error row (exit 0), as on stdin: the other
/// arguments still run.
#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_an_error_row() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"add(a=1, b=\xff)");
    for command in [
        &["exec", "--tools", "demo"][..],
        &["exec", "--tools", "demo", "--expr"],
        &["check", "--tools-json", CHECK_TOOLS],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
            .args(command)
            .arg(bad)
            .arg("add(a=1, b=2)")
            .output()
            .expect("run fexpr");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            (out.status.code(), stderr.as_ref()),
            (Some(0), ""),
            "{command:?}"
        );
        let rows: Vec<Value> = String::from_utf8(out.stdout)
            .expect("utf-8 output")
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect();
        assert_eq!(rows.len(), 2, "{command:?}: {rows:?}");
        let error = &rows[0]["error"];
        assert_eq!(error["kind"], "Syntax", "{command:?}: {error}");
        assert_eq!(
            error["message"], "this argument is not valid UTF-8 (at byte 11)",
            "{command:?}: {error}"
        );
        assert_eq!(error["span"], json!({"start": 11, "end": 12}), "{error}");
        // The next argument was read and its call found (`check`'s tools have no `add`).
        assert_eq!(rows[1]["name"], "add", "{command:?}: {}", rows[1]);
        if command[0] == "exec" {
            assert_eq!(rows[1]["error"], Value::Null, "{command:?}: {}", rows[1]);
        }
    }
}

/// The command line, or a file it names, that cannot be used: exit 2, nothing on stdout, and
/// a message on stderr (one `fexpr: ...` line for the files; clap's usage text otherwise).
#[test]
fn usage_errors_exit_2_with_a_message_on_stderr() {
    let dir = std::env::temp_dir().join(format!("fexpr-cli-usage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "{").expect("write");
    let no_name = dir.join("no-name.json");
    std::fs::write(&no_name, r#"[{"parameters": {}}]"#).expect("write");
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let files: [(Vec<String>, &str); 4] = [
        (
            vec![
                "check".into(),
                "--tools-json".into(),
                path(&dir.join("missing.json")),
                "f()".into(),
            ],
            "fexpr: --tools-json ",
        ),
        (
            vec![
                "check".into(),
                "--tools-json".into(),
                path(&not_json),
                "f()".into(),
            ],
            "fexpr: --tools-json ",
        ),
        (
            vec![
                "check".into(),
                "--tools-json".into(),
                path(&no_name),
                "f()".into(),
            ],
            "fexpr: --tools-json ",
        ),
        (
            vec![
                "exec".into(),
                "--mcp-config".into(),
                path(&dir.join("missing.json")),
                "f()".into(),
            ],
            "fexpr: --mcp-config: cannot read MCP config ",
        ),
    ];
    for (args, prefix) in files {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, rows, stderr) = fexpr(&args, Stdio::null());
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(rows.is_empty(), "{args:?}: {rows:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(prefix), "{args:?}: {stderr}");
    }
    let (code, rows, stderr) = fexpr(&["exec", "--no-such-flag", "f()"], Stdio::null());
    assert_eq!((code, rows.len()), (Some(2), 0));
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Processes started together on an empty module cache all answer, and leave one entry (one
/// compiled; the others waited for its entry: `sandbox_engine.rs` counts the compiles).
#[test]
fn concurrent_sandboxed_processes_on_an_empty_cache_all_answer() {
    let cache = std::env::temp_dir().join(format!("fexpr-cli-cold-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let children: Vec<_> = (0..6)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_fexpr"))
                .args(["exec", "--tools", "demo", "--sandbox", "add(a=2, b=3)"])
                .env("FEXPR_MODULE_CACHE", &cache)
                .stdout(Stdio::piped())
                .spawn()
                .expect("run fexpr")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0));
        let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(line["output"], json!(5), "{line}");
    }
    let entries: Vec<String> = std::fs::read_dir(&cache)
        .expect("the cache directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].ends_with(".cwasm"), "{entries:?}");
    let _ = std::fs::remove_dir_all(&cache);
}

/// `exec` reads model text as `check` does: prose, fences, chat tokens, JSON forms; what it
/// ignored goes to stderr, each repair is reported in its row.
#[test]
fn exec_reads_what_models_write() {
    let demo = &["exec", "--tools", "demo"][..];
    for (text, outputs) in [
        (
            "I will call add: ```python\nadd(a=1, b=2)\n```",
            vec![json!(3)],
        ),
        // Calls inside a sentence are mentions: nothing runs, and no row (stderr says why).
        ("Sure! add(a=1, b=2) then multiply(a=3, b=4)", vec![]),
        (
            "Sure!\nadd(a=1, b=2)\nmultiply(a=3, b=4)",
            vec![json!(3), json!(12)],
        ),
        ("[add(a=2, b=3)]<|eot_id|>", vec![json!(5)]),
        (
            r#"{"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}"#,
            vec![json!(3)],
        ),
        (
            r#"<tool_call>{"name": "multiply", "arguments": {"a": 2, "b": 4}}</tool_call>"#,
            vec![json!(8)],
        ),
    ] {
        for sandbox in [false, true] {
            let args = [
                demo,
                if sandbox {
                    &["--sandbox", "-"][..]
                } else {
                    &["-"][..]
                },
            ]
            .concat();
            let (code, rows, _) = fexpr(&args, stdin_of("model", text.as_bytes()));
            assert_eq!(code, Some(0));
            let got: Vec<&Value> = rows.iter().map(|r| &r["output"]).collect();
            assert_eq!(got, outputs.iter().collect::<Vec<_>>(), "{text}: {rows:?}");
            // Every call that ran has a receipt when sandboxed; a row saying nothing ran has none.
            assert!(
                rows.iter()
                    .filter(|r| !r["output"].is_null())
                    .all(|r| r["receipt"].is_object() == sandbox),
                "{rows:?}"
            );
        }
    }
    // Repairs as in `check`, reported in the row; `--strict` turns them off.
    let (_, rows, stderr) = fexpr(
        &[demo, &["Adding:\nadd(a=-1_000, b=1e3)"][..]].concat(),
        Stdio::null(),
    );
    assert_eq!(rows[0]["output"], json!(0), "{rows:?}");
    assert_eq!(rows[0]["repairs"][0]["kind"], "IntegralFloat");
    let ignored: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(ignored["ignored"]["text"], "Adding:");
    let (_, rows, _) = fexpr(
        &[demo, &["--strict", "add(a=-1_000, b=1e3)"][..]].concat(),
        Stdio::null(),
    );
    assert_eq!(rows[0]["error"]["kind"], "Type", "{rows:?}");
    // An invalid call keeps its arguments as written.
    let (_, rows, _) = fexpr(&[demo, &["add(a=1, c=zz)"][..]].concat(), Stdio::null());
    assert_eq!(
        rows[0]["kwargs"],
        json!({"a": 1, "c": {"$unreadable": "zz"}})
    );
    assert_eq!(rows[0]["error"]["kind"], "Arguments");
    // Plain expressions as before.
    let (_, rows, _) = fexpr(&[demo, &["np.zeros(2)"][..]].concat(), Stdio::null());
    assert_eq!(rows[0]["output"], json!([0.0, 0.0]));
}

/// Calls inside an expression that is not a call or a list of calls do not run: one row
/// with the error saying what the expression is.
#[test]
fn exec_runs_nothing_inside_hostile_expressions() {
    for sandbox in [false, true] {
        for (text, says) in [
            (
                r#"__import__("os").system(search(query="x"))"#,
                "attribute access",
            ),
            ("(lambda: add(a=1, b=2))()", "can be called"),
            (
                "add(a=1, b=2) if False else multiply(a=1, b=1)",
                "conditional",
            ),
        ] {
            let mut args = vec!["exec", "--tools", "demo"];
            if sandbox {
                args.push("--sandbox");
            }
            args.push(text);
            let (code, rows, _) = fexpr(&args, Stdio::null());
            assert_eq!(code, Some(0));
            assert_eq!(rows.len(), 1, "{text}: {rows:?}");
            assert_eq!(rows[0]["output"], Value::Null, "{text}");
            assert!(rows[0].get("receipt").is_none(), "{text}: it ran");
            let message = rows[0]["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{text}: {message}");
        }
    }
}

/// `--limit NAME=VALUE` and `--limits FILE` set any field of `Limits`; a wrong one is a
/// usage error that lists the names.
#[test]
fn limits_from_the_command_line() {
    let batch = format!("[{}]", vec!["add(a=1, b=1)"; 300].join(", "));
    let demo = ["exec", "--tools", "demo"];
    let (_, rows, _) = fexpr(&[&demo[..], &[batch.as_str()]].concat(), Stdio::null());
    assert_eq!(rows[0]["error"]["kind"], "Limit");
    // The hint names the flag that raises the limit, not the library's field.
    assert_eq!(rows[0]["error"]["limit"], "max_calls");
    assert_eq!(
        rows[0]["error"]["hint"],
        "raise it with `--limit max_calls=N` if this input is legitimate"
    );
    let check = ["check", "--tools-json", "tests/data/corpus_tools.json"];
    let (_, rows, _) = fexpr(
        &[&check[..], &["get_weather(city='x' * 2000000)"]].concat(),
        Stdio::null(),
    );
    assert_eq!(
        rows[0]["error"]["hint"],
        "raise it with `--limit max_str_bytes=N` if this input is legitimate"
    );
    let (_, rows, _) = fexpr(
        &[&demo[..], &["--limit", "max_calls=1000", batch.as_str()]].concat(),
        Stdio::null(),
    );
    assert_eq!(rows.len(), 300);
    assert!(rows.iter().all(|r| r["output"] == json!(2)));
    let dir = std::env::temp_dir().join(format!("fexpr-cli-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("limits.json");
    std::fs::write(
        &file,
        r#"{"max_source_bytes": 10, "deadline": {"secs": 1, "nanos": 0}}"#,
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let (_, rows, _) = fexpr(
        &[
            "check",
            "--tools-json",
            CHECK_TOOLS,
            "--limits",
            &file,
            "get_weather(city='Paris')",
        ],
        Stdio::null(),
    );
    assert_eq!(rows[0]["error"]["kind"], "Limit", "{rows:?}");
    let (_, rows, _) = fexpr(
        &[
            &demo[..],
            &[
                "--limits",
                &file,
                "--limit",
                "max_source_bytes=100",
                "--limit",
                "deadline=0.5",
                "add(a=1, b=2)",
            ],
        ]
        .concat(),
        Stdio::null(),
    );
    assert_eq!(rows[0]["output"], json!(3), "{rows:?}");
    for (bad, says) in [
        (
            "max_cals=3",
            "unknown limit `max_cals`; did you mean `max_calls`? the limits are max_source_bytes, ",
        ),
        ("max_calls=-1", "`max_calls` must be a whole number >= 0"),
        ("max_calls=many", "`max_calls` must be a whole number >= 0"),
        (
            "deadline=-2",
            "`deadline` must be a number of seconds from 0 to 18446744073709551615, not -2.0",
        ),
        (
            "deadline=1e300",
            "`deadline` must be a number of seconds from 0 to 18446744073709551615, not 1e300",
        ),
        ("max_calls", "expected NAME=VALUE"),
    ] {
        let (code, rows, stderr) = fexpr(
            &[&demo[..], &["--limit", bad, "add(a=1, b=2)"]].concat(),
            Stdio::null(),
        );
        assert_eq!((code, rows.len()), (Some(2), 0), "{bad}");
        assert!(
            stderr.starts_with("fexpr: --limit ") && stderr.contains(says),
            "{bad}: {stderr}"
        );
    }
    std::fs::write(dir.join("bad.json"), r#"{"fuel": 1, "colour": 2}"#).unwrap();
    let bad = dir.join("bad.json").to_string_lossy().into_owned();
    let (code, _, stderr) = fexpr(
        &[&demo[..], &["--limits", &bad, "f()"]].concat(),
        Stdio::null(),
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown limit `colour`"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--limit` above a limit's ceiling is a usage error naming the flag and the ceiling (exit 2);
/// at the ceiling the deepest input runs, natively and sandboxed, even on a 2 MiB main stack.
#[test]
fn limits_above_their_ceiling_are_refused_and_the_ceiling_runs() {
    for (flag, message) in [
        (
            "max_depth=1000000",
            "fexpr: --limit max_depth=1000000: `max_depth` must be at most 256: above it",
        ),
        (
            "max_collection_len=100000000000",
            "fexpr: --limit max_collection_len=100000000000: `max_collection_len` must be at most 10000000: above it",
        ),
    ] {
        let (code, rows, stderr) = fexpr(
            &["exec", "--tools", "demo", "--expr", "--limit", flag, "np.zeros(1000000000)"],
            Stdio::null(),
        );
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(rows.is_empty(), "{flag}");
        assert!(stderr.starts_with(message), "{flag}: {stderr}");
        // The command line's words: its flags, not the library's `Limits::` API.
        assert!(!stderr.contains("Limits::"), "{flag}: {stderr}");
        assert!(stderr.ends_with('\n'), "{flag}: {stderr:?}");
    }
    let list = format!("np.array({}{})", "[".repeat(250), "]".repeat(250));
    let json = format!(
        "{{\"name\": \"numpy_sum\", \"args\": [{}{}]}}",
        "[".repeat(250),
        "]".repeat(250)
    );
    for sandbox in [false, true] {
        for text in [&list, &json] {
            let mut args = vec![
                "exec",
                "--tools",
                "demo",
                "--expr",
                "--limit",
                "max_depth=256",
            ];
            if sandbox {
                args.push("--sandbox");
            }
            args.push(text);
            // The main thread's stack is what `ulimit -s` says; run under 2 MiB where a shell
            // can set it.
            let mut command = if cfg!(unix) {
                let mut c = Command::new("sh");
                let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
                c.args([
                    "-c",
                    &format!(
                        "ulimit -s 2048 && exec '{}' {}",
                        env!("CARGO_BIN_EXE_fexpr"),
                        quoted.join(" ")
                    ),
                ]);
                c
            } else {
                let mut c = Command::new(env!("CARGO_BIN_EXE_fexpr"));
                c.args(&args);
                c
            };
            let out = command.output().expect("run fexpr");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{sandbox}: {stderr}");
            // One row (too deep for serde_json's own recursion limit to read back).
            let row = String::from_utf8_lossy(&out.stdout);
            assert_eq!(row.lines().count(), 1, "{sandbox}: {row}");
            assert!(row.starts_with("{\"call_id\""), "{sandbox}: {row}");
            assert!(!row.contains("\"kind\":\"Limit\""), "{sandbox}: {row}");
        }
    }
}

/// A misspelt `--limit` name gets a suggestion.
#[test]
fn a_misspelt_limit_gets_a_suggestion() {
    let (code, _, stderr) = fexpr(
        &[
            "exec",
            "--tools",
            "demo",
            "--limit",
            "max_call=1",
            "add(a=1, b=2)",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("fexpr: --limit max_call=1: unknown limit `max_call`; did you mean `max_calls`? the limits are "),
        "{stderr}"
    );
}

/// A text or message without a call gets no row on any door (an output answers a call); its
/// text is on stderr, then one `{"nothing_to_run": ...}` line says why; the exit status is 0.
#[test]
fn a_text_without_a_call_gets_no_row_and_stderr_says_nothing_ran() {
    let message = r#"{"role": "assistant", "content": "Done.", "tool_calls": []}"#;
    let prose = "We did it and it is done. ".repeat(60);
    let cases: Vec<(Vec<&str>, Option<&str>)> = vec![
        (
            vec!["exec", "--tools", "demo", "I think we are done."],
            None,
        ),
        (vec!["exec", "--tools", "demo", message], None),
        (
            vec!["exec", "--tools", "demo", "-"],
            Some("I think we are done."),
        ),
        (vec!["exec", "--tools", "demo", "-"], Some(message)),
        (vec!["exec", "--tools", "demo", "-"], Some("")),
        (vec!["exec", "--tools", "demo", "-"], Some(&prose)),
        (
            vec!["exec", "--tools", "demo", "--sandbox", "Nothing to do."],
            None,
        ),
        (vec!["check", "--tools", "demo", "-"], Some("Just prose.")),
        (vec!["check", "--tools", "demo", "   "], None),
    ];
    for (args, stdin) in cases {
        let input = match stdin {
            Some(text) => stdin_of("nothing", text.as_bytes()),
            None => Stdio::null(),
        };
        let (code, rows, stderr) = fexpr(&[&args[..], &["--format", "json"]].concat(), input);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(rows.is_empty(), "{args:?} {stdin:?}: {rows:?}");
        let said: Vec<Value> = stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l.get("nothing_to_run").is_some())
            .collect();
        assert_eq!(said.len(), 1, "{args:?}: {stderr}");
        assert_eq!(said[0]["nothing_to_run"]["kind"], "Unsupported", "{stderr}");
        // Prose is prose, however its words would nest as operators: never a limit error.
        assert!(!stderr.contains("max_depth"), "{stderr}");
    }
}

/// One tool-set option set for every subcommand: `--tools`, `--tools-json` and
/// `--mcp-config`, alone or together; signatures print `x: int | None = None`.
#[test]
fn every_subcommand_takes_the_same_tool_options() {
    let dir = std::env::temp_dir().join(format!("fexpr-cli-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let defs = dir.join("tools.json");
    std::fs::write(
        &defs,
        r#"[{"type": "function", "function": {"name": "lookup", "description": "Find a user.",
            "parameters": {"type": "object", "properties": {"id": {"type": "integer"},
            "limit": {"type": "integer"}}, "required": ["id"]}}}]"#,
    )
    .unwrap();
    let defs = defs.to_string_lossy().into_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["tools", "--tools-json", &defs, "--format", "python"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("def lookup(id: int, limit: int | None = None)"),
        "{text}"
    );
    // `check` with the demo tools and the definitions together; `exec` with the definitions.
    let (code, rows, stderr) = fexpr(
        &[
            "check",
            "--tools",
            "demo",
            "--tools-json",
            &defs,
            "--format",
            "json",
            "[add(a=1, b=2), lookup(id=3, limit=None)]",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r["valid"] == true), "{rows:?}");
    let (code, rows, stderr) = fexpr(
        &[
            "exec",
            "--tools-json",
            &defs,
            "--format",
            "json",
            "lookup(id=3)",
        ],
        Stdio::null(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        rows[0]["output"],
        serde_json::json!({"name": "lookup", "kwargs": {"id": 3}})
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tool file with names as providers and MCP allow them (`get-current-weather`,
/// `github.create_issue`, 100 characters) and one no provider allows (`bad name!`): the valid
/// ones are checked and run through `check` and `exec` (natively and sandboxed) from Python
/// text by their aliases, answering under their own names; the invalid one is reported on
/// stderr, naming it, and left out; `tools` shows the aliases for Python and the names for
/// providers.
#[test]
fn tool_names_as_definitions_give_them() {
    let long = format!("{}-{}", "a".repeat(40), "b".repeat(59));
    let alias = long.replace('-', "_");
    let dir = std::env::temp_dir().join(format!("fexpr-cli-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tools.json");
    std::fs::write(
        &file,
        json!([
            {"type": "function", "function": {"name": "get-current-weather", "parameters": {
                "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
            {"name": "github.create_issue", "input_schema": {"type": "object",
                "properties": {"title": {"type": "string"}}, "required": ["title"]}},
            {"name": long, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            {"name": "bad name!"},
        ])
        .to_string(),
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let calls = format!(
        "[get_current_weather(city=\"Paris\"), github.create_issue(title=\"x\"), {alias}(n=1)]"
    );
    let names = ["get-current-weather", "github.create_issue", long.as_str()];
    let left_out = "--tools-json: tool definition 3: the tool name `bad name!` is not allowed";

    let (code, rows, stderr) = fexpr(&["check", "--tools-json", &file, &calls], Stdio::null());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&left_out.replace("--tools-json:", &format!("--tools-json {file}:"))),
        "{stderr}"
    );
    let checked: Vec<&Value> = rows.iter().map(|r| &r["name"]).collect();
    assert_eq!(
        checked,
        names.map(|n| json!(n)).iter().collect::<Vec<_>>(),
        "{rows:?}"
    );
    assert!(rows.iter().all(|r| r["valid"] == true), "{rows:?}");

    for sandbox in [false, true] {
        let mut args = vec!["exec", "--tools-json", &file];
        if sandbox {
            args.push("--sandbox");
        }
        args.push(&calls);
        let (code, rows, stderr) = fexpr(&args, Stdio::null());
        assert_eq!(code, Some(0), "{stderr}");
        let ran: Vec<&Value> = rows.iter().map(|r| &r["output"]["name"]).collect();
        assert_eq!(
            ran,
            names.map(|n| json!(n)).iter().collect::<Vec<_>>(),
            "{rows:?}"
        );
        assert_eq!(rows[0]["name"], "get-current-weather", "{rows:?}");
    }

    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["tools", "--tools-json", &file, "--format", "python"])
        .output()
        .unwrap();
    let python = String::from_utf8(out.stdout).unwrap();
    assert!(
        python.contains("def get_current_weather(city: str)"),
        "{python}"
    );
    assert!(python.contains(&format!("def {alias}(")), "{python}");
    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["tools", "--tools-json", &file, "--format", "openai"])
        .output()
        .unwrap();
    let openai: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed: Vec<&Value> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"]["name"])
        .collect();
    assert_eq!(listed, names.map(|n| json!(n)).iter().collect::<Vec<_>>());

    // Two names Python cannot tell apart: a usage error naming both.
    std::fs::write(
        dir.join("clash.json"),
        json!([{"name": "get-sum"}, {"name": "get_sum"}]).to_string(),
    )
    .unwrap();
    let clash = dir.join("clash.json").to_string_lossy().into_owned();
    let (code, _, stderr) = fexpr(
        &["check", "--tools-json", &clash, "get_sum()"],
        Stdio::null(),
    );
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("the tools `get-sum` and `get_sum` are both called `get_sum` from Python"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `fexpr check --tools-json`: a tool whose parameters Python cannot name (`from`, `class`,
/// `max-results`, `$filter`, `城市`) gets one valid verdict per call from every door (Python
/// text with `**{...}`, an OpenAI message, an Anthropic `tool_use` block, Hermes JSON,
/// Qwen3-Coder XML), with exactly the written name and keys; an unknown key is refused with
/// the key as written.
#[test]
fn check_binds_keys_as_the_schema_declares_them() {
    let dir = std::env::temp_dir().join(format!("fexpr-cli-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tools.json");
    std::fs::write(
        &file,
        json!([{"type": "function", "function": {"name": "convert", "description": "c",
            "parameters": {"type": "object", "properties": {
                "from": {"type": "string"}, "class": {"type": "string"},
                "max-results": {"type": "integer"}, "$filter": {"type": "string"},
                "城市": {"type": "string"}}, "required": ["from"]}}}])
        .to_string(),
    )
    .unwrap();
    let tools = file.to_string_lossy().into_owned();
    let args = json!({"from": "USD", "class": "eco", "max-results": 3, "$filter": "a eq 1",
        "城市": "北京"});
    let inputs = [
        r#"convert(**{"from": "USD", "class": "eco", "max-results": 3}, **{"$filter": "a eq 1", "城市": "北京"})"#.to_string(),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
            "type": "function", "function": {"name": "convert", "arguments": args.to_string()}}]})
        .to_string(),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
            "name": "convert", "input": args}]})
        .to_string(),
        format!("<tool_call>\n{}\n</tool_call>", json!({"name": "convert", "arguments": args})),
        "<tool_call>\n<function=convert>\n<parameter=from>\nUSD\n</parameter>\n<parameter=class>\neco\n</parameter>\n<parameter=max-results>\n3\n</parameter>\n<parameter=$filter>\na eq 1\n</parameter>\n<parameter=城市>\n北京\n</parameter>\n</function>\n</tool_call>".to_string(),
    ];
    for text in &inputs {
        let (code, rows, stderr) = fexpr(
            &["check", "--tools-json", &tools, "-"],
            stdin_of("keys", text.as_bytes()),
        );
        assert_eq!(code, Some(0), "{text}: {stderr}");
        assert_eq!(rows.len(), 1, "{text}: {rows:?}");
        assert_eq!(rows[0]["valid"], true, "{text}: {rows:?}");
        assert_eq!(rows[0]["name"], "convert", "{text}: {rows:?}");
        assert_eq!(rows[0]["kwargs"], args, "{text}: {rows:?}");
        let keys: Vec<&String> = rows[0]["kwargs"].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["from", "class", "max-results", "$filter", "城市"],
            "{text}"
        );
    }
    let (_, rows, _) = fexpr(
        &[
            "check",
            "--tools-json",
            &tools,
            r#"convert(**{"from": "USD", "max-result": 3})"#,
        ],
        Stdio::null(),
    );
    assert_eq!(rows[0]["valid"], false, "{rows:?}");
    let error = &rows[0]["error"];
    assert_eq!(error["kind"], "Arguments", "{rows:?}");
    assert!(
        error["message"].as_str().unwrap().contains("max-result"),
        "{rows:?}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains(r#"**{"max-results": …}"#),
        "{rows:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The adversarial corpus through the binary's expression door:
//! `fexpr exec --expr --tools demo [--sandbox] -` with the case on stdin, in an empty working
//! directory. Each run must exit 0 within 10 s (or 3x the case's own `within`), print one JSON error object per call (the
//! expected kind, no output value), keep the peak resident memory of the child under 1 GiB, and
//! leave the working directory empty. Invalid UTF-8 on stdin is an error object too. Cases of
//! the `json` form go the same way (the CLI reads them as JSON); `model_output` cases are not
//! run here: plain `exec` reads raw model text as `check` does (a standalone tool call in it
//! runs, the rest is reported; see `tests/front.rs` and `tests/cli.rs`), `--expr` takes the
//! input exactly as written.
//!
//! Then the CLI's own doors, for `exec` and `check`: stdin over `max_source_bytes` (not read to
//! its end) or not UTF-8, `check` on text with no call in it, and output pipes whose reader has
//! gone (`| head`), each within the same time bound and a tighter memory bound.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step
#![cfg(all(feature = "cli", target_os = "linux"))]

use serde::Deserialize;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CASES: &str = include_str!("adversarial/cases.jsonl");
const TIMEOUT: Duration = Duration::from_secs(10);
/// How much longer than a case's own `within` the binary may take (process start, a debug
/// build, a loaded machine); the library test holds the case to `within` itself.
const CLI_SLACK: f64 = 3.0;
const MAX_RSS_BYTES: u64 = 1 << 30;

#[derive(Deserialize)]
struct Case {
    kind: String,
    source: Option<String>,
    parts: Option<Vec<(String, usize)>>,
    form: Option<String>,
    within: Option<f64>,
}

/// Expected kind, input, and time budget of each case.
fn cases() -> Vec<(String, Vec<u8>, Duration)> {
    CASES
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| -> Case { serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")) })
        .filter(|case| case.form.as_deref() != Some("model_output"))
        .map(|case| {
            let text = match (case.source, case.parts) {
                (Some(source), _) => source,
                (None, Some(parts)) => parts.iter().map(|(t, n)| repeat(t, *n)).collect(),
                (None, None) => panic!("a case needs `source` or `parts`"),
            };
            // A case's `within` bounds the library in-process (tests/adversarial.rs); here a
            // debug binary also starts, reads stdin and shares the machine with other tests.
            let within = case
                .within
                .map_or(TIMEOUT, |s| Duration::from_secs_f64(s * CLI_SLACK));
            (case.kind, text.into_bytes(), within)
        })
        .collect()
}

/// `piece` `times` times, `{i}` numbered (as tests/adversarial.rs builds it).
fn repeat(piece: &str, times: usize) -> String {
    if !piece.contains("{i}") {
        return piece.repeat(times);
    }
    (0..times)
        .map(|i| piece.replace("{i}", &i.to_string()))
        .collect()
}

/// Inputs that are not UTF-8: stray continuation bytes, truncated sequences, overlong forms,
/// surrogates, and a valid call followed by an invalid byte.
fn invalid_utf8() -> Vec<(String, Vec<u8>, Duration)> {
    let cases: [&[u8]; 7] = [
        b"add(a=1, b=\xff)",
        b"\x80",
        b"search(query='\xc3')",
        b"\xc0\xafadd(a=1, b=2)",
        b"search(query='\xed\xa0\x80')",
        b"add(a=1, b=2)\xfe",
        b"\xef\xbb\xbf\xf4\x90\x80\x80",
    ];
    cases
        .iter()
        .map(|c| ("Syntax".to_string(), c.to_vec(), TIMEOUT))
        .collect()
}

/// The peak resident set of the largest child waited for so far (Linux reports KiB).
#[allow(unsafe_code)] // its unsafe blocks carry their SAFETY comments
fn children_peak_rss() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage");
    // SAFETY: getrusage succeeded, so it initialized the struct.
    let usage = unsafe { usage.assume_init() };
    u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024
}

/// A fresh empty directory under the system temp dir.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fexpr-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    dir
}

/// How one run of the binary ended.
struct Run {
    /// The exit code (`None` when a signal ended it).
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The child's own peak resident set.
    peak_rss: u64,
    /// Whether the child took all of its stdin (false: it stopped reading and exited).
    took_all_input: bool,
}

/// Run `fexpr args` with `input` on stdin in `cwd`, its module cache under `home`; `None` for
/// `cwd` and `home`: the test's. With `close_output` stdout and stderr are pipes whose reader
/// is gone before the child writes. Fails past [`TIMEOUT`].
#[allow(unsafe_code)] // its unsafe blocks carry their SAFETY comments
fn run_bounded(
    args: &[&str],
    input: &[u8],
    dirs: Option<(&Path, &Path)>,
    close_output: bool,
    within: Duration,
) -> Result<Run, String> {
    let started = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_fexpr"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((cwd, home)) = dirs {
        // The sandbox's module cache (trusted, documented) goes to this home, not the user's.
        command
            .current_dir(cwd)
            .env("HOME", home)
            .env("XDG_CACHE_HOME", home.join(".cache"));
    }
    let mut child = command.spawn().map_err(|e| format!("spawn: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).is_ok());
    let (stdout, stderr) = (
        child.stdout.take().ok_or("no stdout")?,
        child.stderr.take().ok_or("no stderr")?,
    );
    let readers = if close_output {
        drop((stdout, stderr));
        None
    } else {
        Some((
            std::thread::spawn(move || std::io::read_to_string(stdout)),
            std::thread::spawn(move || std::io::read_to_string(stderr)),
        ))
    };
    let pid = i32::try_from(child.id()).map_err(|e| e.to_string())?;
    // The child's own peak resident set, sampled while it runs: `VmHWM` of its memory after
    // `exec`. (`ru_maxrss` from `wait4` also counts the parent's memory the child shared before
    // its `exec` — all of this test process's — so it says little about the child.)
    let mut peak_rss = 0u64;
    let (status, _usage) = loop {
        // Only once the child runs fexpr: before its `exec` it is a copy of this process.
        if let Some(proc_status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .filter(|s| s.lines().next() == Some("Name:\tfexpr"))
        {
            let hwm = proc_status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            if let Some(kb) = hwm {
                peak_rss = peak_rss.max(kb * 1024);
            }
        }
        let mut status = 0;
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: wait4 writes the status and a `rusage` into the pointers it is given.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, usage.as_mut_ptr()) };
        if reaped == pid {
            // SAFETY: wait4 reaped the child, so it filled in the struct.
            break (status, unsafe { usage.assume_init() });
        }
        if reaped < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if started.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer within {within:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let took_all_input = writer.join().map_err(|_| "writer panicked")?;
    let (stdout, stderr) = match readers {
        Some((out, err)) => (
            out.join()
                .map_err(|_| "reader panicked")?
                .map_err(|e| format!("stdout is not UTF-8: {e}"))?,
            err.join()
                .map_err(|_| "reader panicked")?
                .map_err(|e| format!("stderr is not UTF-8: {e}"))?,
        ),
        None => (String::new(), String::new()),
    };
    Ok(Run {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout,
        stderr,
        peak_rss,
        took_all_input,
    })
}

/// Run one case; return a description of what went wrong, if anything.
fn run_case(
    args: &[&str],
    (kind, input, within): &(String, Vec<u8>, Duration),
    cwd: &Path,
    home: &Path,
) -> Result<(), String> {
    let args: Vec<&str> = ["exec", "--expr", "--tools", "demo"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["-"])
        .collect();
    let run = run_bounded(&args, input, Some((cwd, home)), false, *within)?;
    if run.code != Some(0) {
        return Err(format!("exit status {:?}", run.code));
    }
    let lines: Vec<&str> = run.stdout.lines().collect();
    if lines.is_empty() {
        return Err("no output".into());
    }
    for line in lines {
        let object: Value =
            serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
        if !object["output"].is_null() {
            return Err(format!("an output value: {line}"));
        }
        if object["error"]["kind"] != kind.as_str() {
            return Err(format!("expected a {kind} error: {line}"));
        }
    }
    if run.peak_rss >= MAX_RSS_BYTES {
        return Err(format!("peak RSS {} bytes", run.peak_rss));
    }
    Ok(())
}

fn run_all(args: &[&str], name: &str) {
    let cwd = fresh_dir(&format!("{name}-cwd"));
    let home = fresh_dir(&format!("{name}-home"));
    // The first sandboxed run compiles the guest into the module cache (slow in a debug
    // build); warm it up outside the per-case timeout.
    let warm = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo"])
        .args(args)
        .arg("add(a=1, b=2)")
        .current_dir(&cwd)
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .output()
        .expect("run fexpr");
    assert!(warm.status.success(), "{warm:?}");
    let mut failures = Vec::new();
    let all: Vec<(String, Vec<u8>, Duration)> = cases().into_iter().chain(invalid_utf8()).collect();
    for (i, case) in all.iter().enumerate() {
        if let Err(why) = run_case(args, case, &cwd, &home) {
            let input = &case.1;
            let shown = String::from_utf8_lossy(&input[..input.len().min(60)]).into_owned();
            failures.push(format!("#{i} {shown:?}: {why}"));
        }
    }
    let written: Vec<_> = std::fs::read_dir(&cwd)
        .expect("read the working dir")
        .map(|e| e.map(|e| e.path()))
        .collect();
    assert!(
        written.is_empty(),
        "written to the working dir: {written:?}"
    );
    // Outside it: only the sandbox's module cache, under the home given to the child.
    let mut stack = vec![home.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                assert!(
                    path.starts_with(home.join(".cache/fexpr")) && name.starts_with("guest-"),
                    "written outside the working dir: {path:?}"
                );
            }
        }
    }
    let peak = children_peak_rss();
    assert!(peak > 0, "getrusage reports no children");
    eprintln!(
        "{args:?}: {} cases, children's peak RSS {} MiB",
        all.len(),
        peak >> 20
    );
    let _ = std::fs::remove_dir_all(&cwd);
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed with {args:?}:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn the_corpus_through_the_cli_natively() {
    run_all(&[], "native");
}

#[test]
fn the_corpus_through_the_cli_sandboxed() {
    run_all(&["--sandbox"], "sandbox");
}

/// Tool definitions for `fexpr check`.
const CHECK_TOOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus_tools.json");

/// The child's peak resident set for inputs that must not be read whole.
const MAX_INPUT_RSS_BYTES: u64 = 64 << 20;

/// `exec` and `check` reading `-`.
fn stdin_commands() -> [Vec<&'static str>; 2] {
    [
        vec!["exec", "--tools", "demo", "-"],
        vec!["check", "--tools-json", CHECK_TOOLS, "-"],
    ]
}

/// Hostile stdin for `exec` and `check`: each ends within the timeout with exit 0 and one JSON
/// error row of the expected kind; an input over `max_source_bytes` is not read to its end
/// (the child stops one byte past the limit) and the child stays under 64 MiB.
#[test]
fn hostile_stdin_ends_in_one_error_row_within_bounds() {
    let mut spaces_and_a_call = vec![b' '; 10 << 20];
    spaces_and_a_call.extend_from_slice(b"add(a=1, b=2)");
    let calls = "add(a=1, b=2)\n".repeat((16 << 20) / 14).into_bytes();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("10 MB of spaces and a call", spaces_and_a_call, "Limit"),
        ("16 MB of calls", calls, "Limit"),
        (
            "a call with a byte that is not UTF-8",
            b"add(a=1, b=\xff)".to_vec(),
            "Syntax",
        ),
        (
            "a truncated UTF-8 sequence",
            b"add(a=1, b=2)\xe2\x82".to_vec(),
            "Syntax",
        ),
    ];
    let mut failures = Vec::new();
    for args in stdin_commands() {
        for (name, input, kind) in &cases {
            let checked = run_bounded(&args, input, None, false, TIMEOUT).and_then(|run| {
                let rows: Vec<Value> = run
                    .stdout
                    .lines()
                    .map(|l| serde_json::from_str(l).map_err(|e| format!("not JSON ({e}): {l}")))
                    .collect::<Result<_, _>>()?;
                match rows.as_slice() {
                    [row]
                        if row["error"]["kind"] == *kind
                            && row.get("output").is_none_or(Value::is_null) => {}
                    _ => return Err(format!("expected one {kind} error row: {rows:?}")),
                }
                if run.code != Some(0) || !run.stderr.is_empty() {
                    return Err(format!("exit {:?}, stderr {:?}", run.code, run.stderr));
                }
                if input.len() > 2 << 20 && run.took_all_input {
                    return Err("read all of an over-size input".into());
                }
                if run.peak_rss >= MAX_INPUT_RSS_BYTES {
                    return Err(format!("peak RSS {} MiB", run.peak_rss >> 20));
                }
                Ok(())
            });
            if let Err(why) = checked {
                failures.push(format!("{} with {name}: {why}", args[0]));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `check` answers every input: 1 MB of `(` is reported as ignored text, 200,000 code fences
/// are 200,000 ignored lines (written in buffered blocks, not one write each), blank input has
/// no call (stderr says so).
#[test]
fn check_reports_something_for_every_input_within_bounds() {
    let args = &stdin_commands()[1];
    let brackets = run_bounded(args, "(".repeat(1_000_000).as_bytes(), None, false, TIMEOUT)
        .unwrap_or_else(|why| panic!("1 MB of `(`: {why}"));
    assert_eq!(brackets.code, Some(0));
    assert_eq!(brackets.stdout, "");
    // The ignored text, then why nothing ran.
    let lines: Vec<&str> = brackets.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", brackets.stderr);
    assert!(
        lines[1].starts_with(r#"{"nothing_to_run":"#),
        "{}",
        lines[1]
    );
    let ignored: Value = serde_json::from_str(lines[0]).expect("one JSON line");
    assert_eq!(ignored["ignored"]["reason"], "Punctuation", "{ignored}");
    assert_eq!(
        ignored["ignored"]["span"],
        serde_json::json!({"start": 0, "end": 1_000_000})
    );

    let fences = run_bounded(
        args,
        "```\n".repeat(200_000).as_bytes(),
        None,
        false,
        TIMEOUT,
    )
    .unwrap_or_else(|why| panic!("200,000 fences: {why}"));
    assert_eq!(fences.code, Some(0));
    assert_eq!(fences.stderr.lines().count(), 200_001);
    let mut lines = fences.stderr.lines();
    assert!(lines
        .next_back()
        .is_some_and(|l| l.contains("\"nothing_to_run\"")));
    assert!(lines.all(|l| l.contains("\"Fence\"")));

    // Blank input has no call: no row, and stderr says there is nothing to run.
    let blank = run_bounded(args, b" \n\t", None, false, TIMEOUT).expect("blank input");
    assert_eq!(blank.stdout, "");
    let said: Value = serde_json::from_str(blank.stderr.trim()).expect("one JSON line");
    assert_eq!(
        said["nothing_to_run"]["message"],
        "no call to run: the text is blank"
    );
}

/// A reader that goes away (`fexpr tools | head -c 64`) ends every command quietly with exit
/// 0: no panic (exit 101), no death by SIGPIPE, whether stdout or stderr was being written.
#[test]
fn a_closed_output_pipe_ends_every_command_quietly() {
    let calls = format!("[{}]", vec!["add(a=1, b=2)"; 200].join(", "));
    let prose_and_calls = "Here you go. get_weather(city='Oslo') <|eot_id|>\n".repeat(2000);
    let runs: [(Vec<&str>, &[u8]); 4] = [
        (vec!["tools", "--tools", "demo"], b""),
        (vec!["tools", "--tools", "demo", "--format", "python"], b""),
        (stdin_commands()[0].clone(), calls.as_bytes()),
        (stdin_commands()[1].clone(), prose_and_calls.as_bytes()),
    ];
    for (args, input) in runs {
        let run = run_bounded(&args, input, None, true, TIMEOUT)
            .unwrap_or_else(|why| panic!("{args:?}: {why}"));
        assert_eq!(run.code, Some(0), "{args:?}");
    }
}

//! The adversarial corpus through the binary, as the acceptance check runs it:
//! `fexpr exec --tools demo [--sandbox] -` with the case on stdin, in an empty working
//! directory. Each run must exit 0 within 10 s, print one JSON error object per call (the
//! expected kind, no output value), keep the peak resident memory of the child under 1 GiB, and
//! leave the working directory empty. Invalid UTF-8 on stdin is an error object too. Cases of
//! the `json` form go the same way (the CLI reads them as JSON); `model_output` cases are not
//! run here, `exec` takes no raw model output.
#![cfg(all(feature = "cli", target_os = "linux"))]

use serde::Deserialize;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CASES: &str = include_str!("adversarial/cases.jsonl");
const TIMEOUT: Duration = Duration::from_secs(10);
const MAX_RSS_BYTES: u64 = 1 << 30;

#[derive(Deserialize)]
struct Case {
    kind: String,
    source: Option<String>,
    parts: Option<Vec<(String, usize)>>,
    form: Option<String>,
}

fn cases() -> Vec<(String, Vec<u8>)> {
    CASES
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| -> Case { serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")) })
        .filter(|case| case.form.as_deref() != Some("model_output"))
        .map(|case| {
            let text = match (case.source, case.parts) {
                (Some(source), _) => source,
                (None, Some(parts)) => parts.iter().map(|(t, n)| t.repeat(*n)).collect(),
                (None, None) => panic!("a case needs `source` or `parts`"),
            };
            (case.kind, text.into_bytes())
        })
        .collect()
}

/// Inputs that are not UTF-8: stray continuation bytes, truncated sequences, overlong forms,
/// surrogates, and a valid call followed by an invalid byte.
fn invalid_utf8() -> Vec<(String, Vec<u8>)> {
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
        .map(|c| ("Syntax".to_string(), c.to_vec()))
        .collect()
}

/// The peak resident set of the largest child waited for so far (Linux reports KiB).
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

/// Run one case; return a description of what went wrong, if anything.
fn run_case(
    args: &[&str],
    kind: &str,
    input: &[u8],
    cwd: &Path,
    home: &Path,
) -> Result<(), String> {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(["exec", "--tools", "demo"])
        .args(args)
        .arg("-")
        .current_dir(cwd)
        // The sandbox's module cache (trusted, documented) goes to this home, not the user's.
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout));
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("wait: {e}"))? {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer within {TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let stdout = reader
        .join()
        .map_err(|_| "reader panicked")?
        .map_err(|e| format!("stdout is not UTF-8: {e}"))?;
    if status.code() != Some(0) {
        return Err(format!("exit status {status}"));
    }
    let lines: Vec<&str> = stdout.lines().collect();
    if lines.is_empty() {
        return Err("no output".into());
    }
    for line in lines {
        let object: Value =
            serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
        if !object["output"].is_null() {
            return Err(format!("an output value: {line}"));
        }
        if object["error"]["kind"] != kind {
            return Err(format!("expected a {kind} error: {line}"));
        }
    }
    let peak = children_peak_rss();
    if peak >= MAX_RSS_BYTES {
        return Err(format!("peak RSS {peak} bytes"));
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
    let all: Vec<(String, Vec<u8>)> = cases().into_iter().chain(invalid_utf8()).collect();
    for (i, (kind, input)) in all.iter().enumerate() {
        if let Err(why) = run_case(args, kind, input, &cwd, &home) {
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

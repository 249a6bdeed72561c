//! Snapshots of what people and models read: every error, repair and ignored stretch over the
//! corpora, rendered for people (`Error::render`, `fexpr::diagnostic`) and as the JSON a model
//! gets. One snapshot file per case, in `tests/snapshots/<corpus>/` (the cases stay in their
//! corpora, which other suites read too); a change to a message shows up as a small diff in
//! the files of the cases it touches, to review:
//!
//! ```text
//! cargo insta test --test snapshots --review      # or: INSTA_UPDATE=always cargo test --test snapshots
//! ```
//!
//! - `seed`: the model outputs of `tests/data/model_outputs.jsonl` through `check_text`
//!   against `tests/data/corpus_tools.json`;
//! - `parity`: the inputs at the edges of CPython's call grammar (`EDGES` in
//!   `tests/cpython.rs`) through the demo toolset;
//! - `adversarial`: `tests/adversarial/cases.jsonl` through the demo toolset, natively.
//!
//! A case's file is named by the case: the seed's `id`; for the others, a slug of the text and
//! a hash of the case as written, so adding or removing a case renames no other file. A file no
//! case writes any more fails the test.
//!
//! Deterministic by construction: no receipts, timings or paths; sources longer than a few
//! hundred bytes are rendered but each case's header names its length, not its text.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::diagnostic::Diagnostic;
use fexpr::repair::RepairOptions;
use fexpr::Input;
use fexpr::{FunctionOutput, Limits, ToolManager};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::future::IntoFuture;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Check each `(name, rendered)` case against `tests/snapshots/<corpus>/<name>.snap`, every one
/// of them (the mismatches are reported together, as insta's `glob!` does), and that the folder
/// holds no snapshot of a case that is gone.
fn assert_cases(corpus: &str, cases: Vec<(String, String)>) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(format!("snapshots/{corpus}"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let mut names = BTreeMap::new();
    let mut failed = Vec::new();
    settings.bind(|| {
        for (name, rendered) in cases {
            // A case written twice in its corpus (the same text) has one file.
            if let Some(earlier) = names.insert(name.clone(), rendered.clone()) {
                assert_eq!(earlier, rendered, "two {corpus} cases named {name}");
                continue;
            }
            let checked = catch_unwind(AssertUnwindSafe(|| {
                insta::assert_snapshot!(name.as_str(), rendered);
            }));
            if checked.is_err() {
                failed.push(name);
            }
        }
    });
    assert!(
        failed.is_empty(),
        "{corpus}: these cases changed: {failed:?}"
    );
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(corpus);
    let unreferenced: Vec<String> = std::fs::read_dir(&folder)
        .expect("the corpus's snapshot folder")
        .filter_map(|entry| {
            let file = entry.ok()?.file_name().into_string().ok()?;
            let name = file.strip_suffix(".snap")?;
            (!names.contains_key(name)).then(|| file.clone())
        })
        .collect();
    assert!(
        unreferenced.is_empty(),
        "{corpus}: no case writes {unreferenced:?} any more; delete them"
    );
}

/// A case's file name when it has no id: its first 40 characters of `text` (lowercase letters,
/// digits and `_`, other runs as `-`) and the FNV-1a hash of `case`, the case as written.
fn case_name(text: &str, case: &str) -> String {
    let mut slug = String::new();
    for c in text.chars() {
        if slug.len() >= 40 {
            break;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let hash = case.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let slug = slug.trim_end_matches('-');
    match slug {
        "" => format!("{:08x}", hash as u32),
        _ => format!("{slug}-{:08x}", hash as u32),
    }
}

/// One case's header: its name and its source (clipped).
fn header(out: &mut String, name: &str, source: &str) {
    let shown = if source.len() > 200 {
        format!("<{} bytes>", source.len())
    } else {
        format!("{source:?}")
    };
    let _ = writeln!(out, "=== {name}: {shown}");
}

/// The outputs of one input: each error and repair rendered against the input (which every
/// span indexes) and as JSON; a run of
/// identical outputs (60,000 calls refused at once) once, with its count.
fn outputs(out: &mut String, text: &str, outputs: &[FunctionOutput]) {
    let mut shown: Vec<(String, usize)> = Vec::new();
    for output in outputs {
        let mut block = String::new();
        for repair in &output.repairs {
            block.push_str(&Diagnostic::from(repair).render(text));
            block.push('\n');
        }
        match &output.output.as_ref().err() {
            Some(e) => {
                block.push_str(&e.render(text));
                let json = serde_json::to_string(e).unwrap_or_default();
                let _ = writeln!(block, "\njson: {json}");
            }
            None => {
                let _ = writeln!(block, "ok: {}", output.name);
            }
        }
        match shown.last_mut() {
            Some((last, n)) if *last == block => *n += 1,
            _ => shown.push((block, 1)),
        }
    }
    for (block, n) in shown {
        out.push_str(&block);
        if n > 1 {
            let _ = writeln!(out, "(the same {n} times)");
        }
    }
    out.push('\n');
}

#[test]
fn seed_model_outputs_checked() {
    let tools: Json = serde_json::from_str(include_str!("data/corpus_tools.json")).expect("JSON");
    let defs = fexpr::tooldefs::from_json(&tools).expect("tool definitions");
    let ctx = fexpr::tooldefs::context(&defs);
    let mut cases = Vec::new();
    for line in include_str!("data/model_outputs.jsonl").lines() {
        let case: Json = serde_json::from_str(line).expect("a JSON case");
        let text = case["output"].as_str().expect("an output");
        let id = case["id"].as_str().expect("a case id");
        let mut out = String::new();
        header(&mut out, id, text);
        let checked =
            fexpr::check::check_text(text, &ctx, &Limits::default(), &RepairOptions::default());
        for ignored in &checked.ignored {
            out.push_str(&Diagnostic::from(ignored).render(text));
            out.push('\n');
        }
        if let Some(e) = &checked.error {
            out.push_str(&e.render(text));
            out.push('\n');
        }
        for verdict in &checked.verdicts {
            for repair in &verdict.repairs {
                out.push_str(&Diagnostic::from(repair).render(text));
                out.push('\n');
            }
            if let Some(e) = &verdict.error {
                out.push_str(&e.render(text));
                out.push('\n');
            }
            let _ = writeln!(out, "json: {}", verdict.to_json());
        }
        cases.push((id.to_string(), out));
    }
    assert_cases("seed", cases);
}

/// The string literals of `EDGES` in tests/cpython.rs, unescaped.
fn edges() -> Vec<String> {
    let source = include_str!("cpython.rs");
    let start = source
        .find("const EDGES")
        .expect("EDGES in tests/cpython.rs");
    let body = &source[start..];
    let body = &body[..body.find("\n];").expect("the end of EDGES")];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix('"')?.strip_suffix("\","))
        .map(unescape)
        .collect()
}

/// Rust's string escapes as `EDGES` uses them: `\"`, `\\`, `\n`, `\t`, `\u{…}`.
fn unescape(literal: &str) -> String {
    let mut out = String::new();
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                let code = u32::from_str_radix(&hex, 16).expect("a \\u{…} escape");
                out.push(char::from_u32(code).expect("a char"));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn run(manager: &ToolManager, form: Option<&str>, text: &str) -> Vec<FunctionOutput> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        match form {
            None => async { manager.run(Input::expr(text)).await.outputs }.await,
            Some("json") => async { manager.run(Input::json(text)).await.outputs }.await,
            Some("model_output") => {
                manager
                    .run(Input::model_output(text))
                    .into_future()
                    .await
                    .outputs
            }
            Some(other) => panic!("unknown form {other}"),
        }
    })
}

#[test]
fn parity_edges_through_the_demo_tools() {
    let edges = edges();
    assert!(edges.len() > 100, "{} edges", edges.len());
    let manager = fexpr::demo::manager();
    let mut cases = Vec::new();
    for text in &edges {
        let mut out = String::new();
        header(&mut out, "edge", text);
        outputs(&mut out, text, &run(&manager, None, text));
        cases.push((case_name(text, text), out));
    }
    assert_cases("parity", cases);
}

#[test]
fn adversarial_cases_through_the_demo_tools() {
    let manager = fexpr::demo::manager();
    let mut cases = Vec::new();
    let lines = include_str!("adversarial/cases.jsonl").lines();
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let case: Json = serde_json::from_str(line).expect("a JSON case");
        let text = match (&case["source"], &case["parts"]) {
            (Json::String(s), _) => s.clone(),
            (_, Json::Array(parts)) => parts.iter().map(piece).collect(),
            _ => panic!("line {}: a case needs `source` or `parts`", i + 1),
        };
        let group = case["group"].as_str().unwrap_or("?");
        let mut out = String::new();
        header(&mut out, group, &text);
        outputs(
            &mut out,
            &text,
            &run(&manager, case["form"].as_str(), &text),
        );
        cases.push((format!("{group}-{}", case_name(&text, line)), out));
    }
    assert_cases("adversarial", cases);
}

/// `[text, times]`: `text` repeated, `{i}` numbered (as tests/adversarial.rs builds it).
fn piece(part: &Json) -> String {
    let text = part[0].as_str().expect("a piece's text");
    let times = part[1].as_u64().expect("a piece's count") as usize;
    if !text.contains("{i}") {
        return text.repeat(times);
    }
    (0..times)
        .map(|i| text.replace("{i}", &i.to_string()))
        .collect()
}

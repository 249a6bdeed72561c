//! SECURITY.md's limits table quotes the defaults in the code: `Limits::default()` and
//! `SandboxConfig::default()`. Every field is in the table, with its default, and nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::Limits;
use std::collections::BTreeMap;
use std::time::Duration;

const SECURITY_MD: &str = include_str!("../SECURITY.md");

/// The rows of the limits table: first column (without backticks) to second column.
fn table() -> BTreeMap<String, String> {
    SECURITY_MD
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].trim_matches('`').to_string(), cells[2].to_string())
        })
        .collect()
}

fn duration(text: &str) -> Duration {
    let (n, unit) = text.split_once(' ').expect("a duration is `N unit`");
    let n: u64 = n.parse().expect("a number");
    match unit {
        "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        other => panic!("unknown unit {other}"),
    }
}

/// The defaults in the code, rendered as the table writes them.
fn defaults() -> BTreeMap<String, String> {
    let mut expected = BTreeMap::new();
    // Every field of `Limits`, through serde, so that a new field cannot be forgotten here.
    let json = serde_json::to_value(Limits::default()).expect("limits serialize");
    let limits = Limits::default();
    for (name, value) in json.as_object().expect("an object") {
        let text = if name == "deadline" || name == "call_deadline" {
            String::new() // compared as durations below
        } else {
            value.to_string()
        };
        expected.insert(name.clone(), text);
    }
    expected.insert("deadline".into(), format!("{:?}", limits.deadline));
    expected.insert(
        "call_deadline".into(),
        format!("{:?}", limits.call_deadline),
    );
    #[cfg(feature = "sandbox")]
    {
        let config = fexpr::sandbox::SandboxConfig::default();
        let mut add = |name: &str, value: String| {
            expected.insert(format!("SandboxConfig::{name}"), value);
        };
        add("max_instances", config.max_instances.to_string());
        add("max_memory_bytes", config.max_memory_bytes.to_string());
        add(
            "max_wasm_stack_bytes",
            config.max_wasm_stack_bytes.to_string(),
        );
        add("epoch_tick", format!("{:?}", config.epoch_tick));
    }
    expected
}

#[test]
fn the_limits_table_matches_the_defaults_in_the_code() {
    let mut table = table();
    // Durations are written `5 s`, `5 ms`; compare them as durations.
    for value in table.values_mut() {
        if value.ends_with(" s") || value.ends_with(" ms") {
            *value = format!("{:?}", duration(value));
        }
    }
    if !cfg!(feature = "sandbox") {
        table.retain(|name, _| !name.starts_with("SandboxConfig::"));
    }
    assert_eq!(table, defaults());
}

#[test]
fn the_table_is_found_and_complete() {
    let table = table();
    assert!(table.len() >= 13, "{table:?}");
    assert_eq!(table.get("max_depth").map(String::as_str), Some("100"));
    assert_eq!(table.get("deadline").map(String::as_str), Some("30 s"));
}

#[test]
fn the_decode_depth_constant_is_quoted() {
    let quoted = format!(
        "`fexpr::value::MAX_DECODE_DEPTH` ({})",
        fexpr::value::MAX_DECODE_DEPTH
    );
    let text = SECURITY_MD.replace('\n', " ");
    assert!(text.contains(&quoted), "SECURITY.md must quote {quoted:?}");
}

/// The limits table's last column quotes `Limits::CEILINGS`: every ceiling, and `—` for the
/// limits without one.
#[test]
fn the_ceilings_column_matches_the_code() {
    let rows: BTreeMap<String, String> = SECURITY_MD
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let ceiling = cells.get(cells.len().saturating_sub(2)).copied();
            (
                cells[1].trim_matches('`').to_string(),
                ceiling.unwrap_or("").to_string(),
            )
        })
        .collect();
    let ceilings: BTreeMap<&str, usize> = Limits::CEILINGS.iter().copied().collect();
    for (name, cell) in &rows {
        let expected = ceilings
            .get(name.as_str())
            .map_or("—".to_string(), usize::to_string);
        assert_eq!(*cell, expected, "the ceiling of `{name}`");
    }
    for name in ceilings.keys() {
        assert!(rows.contains_key(*name), "`{name}` is not in the table");
    }
}

/// Each limit's row is its entry of `Limits::TABLE` (name, default, what it bounds, mode,
/// ceiling), in the table's order: a limit is added in one place in the code, and this test
/// prints the row SECURITY.md needs for it.
#[test]
fn each_limit_row_is_its_table_entry() {
    let defaults = serde_json::to_value(Limits::default()).expect("limits serialize");
    let rows: Vec<&str> = SECURITY_MD
        .lines()
        .filter(|l| l.starts_with("| `") && !l.starts_with("| `SandboxConfig::"))
        .collect();
    let expected: Vec<String> = Limits::TABLE
        .iter()
        .map(|l| {
            let default = if l.duration {
                let d: Duration = serde_json::from_value(defaults[l.name].clone()).unwrap();
                format!("{} s", d.as_secs())
            } else {
                defaults[l.name].to_string()
            };
            let ceiling = l.ceiling.map_or("—".to_string(), |c| c.to_string());
            format!(
                "| `{}` | {default} | {} | {} | {ceiling} |",
                l.name,
                l.bounds,
                l.mode.name()
            )
        })
        .collect();
    assert_eq!(rows, expected, "SECURITY.md's limits table, row by row");
}

//! `fexpr exec|check --format human`: diagnostics for people, with the source line and the bad
//! part underlined, one blank line after each block; `--format json` (the default when stdout is not a terminal) is unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use std::process::Command;

fn fexpr(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fexpr"))
        .args(args)
        .output()
        .expect("run fexpr");
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn an_unknown_keyword_is_underlined_with_the_hint() {
    let text = fexpr(&[
        "exec",
        "--tools",
        "demo",
        "--format",
        "human",
        "add(a=1, c=2)",
    ]);
    assert_eq!(
        text,
        "\
error[Arguments]: add() got an unexpected keyword argument `c`
  |
1 | add(a=1, c=2)
  |          ^
  |
  = help: did you mean `b`? signature: add(a: int, b: int)

"
    );
}

#[test]
fn results_and_errors_of_a_list_each_get_their_line() {
    let text = fexpr(&[
        "exec",
        "--tools",
        "demo",
        "--format",
        "human",
        "[add(a=1, b=2),\n nope(x=1)]",
    ]);
    assert_eq!(
        text,
        "\
add(a=1, b=2) -> 3

error[UnknownTool]: tool `nope` is not defined
  |
2 |  nope(x=1)]
  |  ^^^^

"
    );
}

#[test]
fn json_is_the_default_off_a_terminal_and_keeps_its_shape() {
    // Each run generates its own call id: the rows are compared without it.
    let row = |text: String| -> serde_json::Value {
        let mut row: serde_json::Value =
            serde_json::from_str(text.trim()).expect("one JSON object");
        let id = row.as_object_mut().and_then(|o| o.remove("call_id"));
        assert!(id.is_some_and(|id| id.as_str().is_some_and(|id| id.starts_with("call_"))));
        row
    };
    let text = fexpr(&["exec", "--tools", "demo", "add(a=1, c=2)"]);
    assert_eq!(
        row(text.clone()),
        row(fexpr(&[
            "exec",
            "--tools",
            "demo",
            "--format",
            "json",
            "add(a=1, c=2)"
        ]))
    );
    let row: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(
        row.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(
            ["call_id", "name", "args", "kwargs", "output", "error"]
                .map(String::from)
                .to_vec()
        )
    );
    assert_eq!(
        row["error"]["span"],
        serde_json::json!({"start": 9, "end": 10})
    );
}

#[test]
fn check_shows_repairs_as_warnings_in_the_whole_text() {
    let tools = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus_tools.json");
    let text = fexpr(&[
        "check",
        "--tools-json",
        tools,
        "--format",
        "human",
        "Sure:\nget_weather(city=\"Paris\", include_forecast=true)",
    ]);
    assert_eq!(
        text,
        "\
warning[JsonLiteral]: `include_forecast` repaired: `true` read as `True`
  |
2 | get_weather(city=\"Paris\", include_forecast=true)
  |                                            ^^^^ `true` is JSON; `include_forecast` accepts bool | None and no name `true` is defined

ok: get_weather(city='Paris', include_forecast=True)

"
    );
}

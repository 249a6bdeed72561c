//! README.md's set-up steps say what a new user needs: how to get the `fexpr` binary, the
//! versions their own crate needs, and how a struct of theirs goes into the context (the code
//! shown runs here).

use fexpr::{Context, Input, ToolManager, Value};

const README: &str = include_str!("../README.md");
const CARGO_TOML: &str = include_str!("../Cargo.toml");

/// The version requirement of `name` in a `[dependencies]` line of `toml` text.
fn version(toml: &str, name: &str) -> Option<String> {
    toml.lines().find_map(|line| {
        let rest = line
            .trim()
            .strip_prefix(name)?
            .trim_start()
            .strip_prefix('=')?
            .trim();
        let quoted = rest.strip_prefix("{ version = ").unwrap_or(rest);
        Some(quoted.split('"').nth(1)?.to_string())
    })
}

#[test]
fn the_readme_says_how_to_get_the_binary() {
    assert!(README.contains("`cargo install --path .`"));
    assert!(README.contains("`cargo build --release` builds it as `target/release/fexpr`"));
    // Both work because the CLI is a default feature.
    let default = CARGO_TOML
        .lines()
        .find(|l| l.starts_with("default = ["))
        .expect("a default feature list");
    assert!(default.contains("\"cli\""), "{default}");
}

#[test]
fn the_quick_start_names_the_versions_a_crate_needs() {
    let start = README.find("## Quick start").expect("a quick start");
    let block = &README[start..];
    let toml = &block[block.find("```toml").expect("a Cargo.toml block")..];
    let toml = &toml[..toml[7..].find("```").expect("the block ends") + 7];
    for name in ["schemars", "serde", "serde_json", "tokio"] {
        let theirs = version(toml, name).unwrap_or_else(|| panic!("the quick start names {name}"));
        let ours = version(CARGO_TOML, name).unwrap_or_else(|| panic!("Cargo.toml has {name}"));
        assert_eq!(theirs, ours, "{name}");
    }
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i64,
    y: i64,
}

#[test]
fn a_struct_goes_into_the_context_as_the_readme_shows() {
    let shown =
        "Context::new().record::<Point>().variable(\"origin\", Value::from_serialize(&origin)?)";
    assert!(README.contains(shown));
    let run = || -> Result<Value, fexpr::Error> {
        let origin = Point { x: 0, y: 0 };
        let context = Context::new()
            .record::<Point>()
            .variable("origin", Value::from_serialize(&origin)?);
        let manager = ToolManager::builder()
            .tool(fexpr::FunctionTool::new(
                "add_points",
                ["p1", "p2"],
                |p1: Point, p2: Point| Point {
                    x: p1.x + p2.x,
                    y: p1.y + p2.y,
                },
            ))
            .context(context)
            .build()
            .map_err(|e| fexpr::Error::new(fexpr::ErrorKind::Config, e.to_string()))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let response = rt.block_on(async {
            manager
                .run(Input::expr("add_points(p1=origin, p2=Point(x=3, y=4))"))
                .await
        });
        response
            .outputs
            .into_iter()
            .next()
            .expect("one output")
            .output
    };
    let out = run().expect("it runs");
    assert_eq!(out.repr(), "Point(x=3, y=4)");
}

/// The README's fallible tools, as shown: the obvious `Result` signatures, no annotation.
#[test]
fn the_fallible_tools_of_the_readme_run_as_shown() {
    use fexpr::{FunctionTool, ToolError};
    let shown = "let divide = FunctionTool::new(\"divide\", [\"a\", \"b\"], |a: f64, b: f64| -> Result<f64, String> {";
    assert!(README.contains(shown));
    assert!(README
        .contains("Err(ToolError::new(format!(\"no user {id}\")).with_hint(\"ids start at 1\")),"));
    let divide = FunctionTool::new(
        "divide",
        ["a", "b"],
        |a: f64, b: f64| -> Result<f64, String> {
            if b == 0.0 {
                return Err(format!("cannot divide {a} by zero"));
            }
            Ok(a / b)
        },
    );
    let lookup = FunctionTool::new("lookup", ["id"], |id: u32| -> Result<String, ToolError> {
        match id {
            1 => Ok("Ada".to_string()),
            _ => Err(ToolError::new(format!("no user {id}")).with_hint("ids start at 1")),
        }
    });
    let manager = ToolManager::builder()
        .tool(divide)
        .tool(lookup)
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = |text: &str| {
        let request = manager.run(Input::model_output(text));
        rt.block_on(async { request.await })
            .outputs
            .remove(0)
            .output
    };
    let error = run("divide(a=1, b=0)").unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (fexpr::ErrorKind::ToolFailed, "cannot divide 1 by zero")
    );
    assert_eq!(run("divide(a=1, b=4)"), Ok(Value::Float(0.25)));
    let error = run("lookup(id=2)").unwrap_err();
    assert_eq!(error.hint.as_deref(), Some("ids start at 1"));
    let signature = manager
        .tool("divide")
        .unwrap()
        .definition()
        .python_signature();
    assert_eq!(signature, "divide(a: float, b: float) -> float");
}

//! The seed walkthrough's toolset: `multiply`, `add`, `divide` (async), `search` (async),
//! `numpy_sum`, `add_points`, with context `x = 2`, `y = 0`, `np.array` and `Point`.
//! Used by `fexpr exec --tools demo`, the walkthrough example, the tests and the benchmarks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dispatch::manager::{ToolManager, ToolManagerBuilder};
use crate::dispatch::tool::{FunctionTool, ToolError};
use crate::resolve::context::Context;
use crate::value::NdArray;

/// A 2-D point, the seed's dataclass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    /// Horizontal coordinate.
    pub x: i64,
    /// Vertical coordinate.
    pub y: i64,
}

/// An int or a float, as numpy's sum returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Number {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

/// Multiply two numbers.
pub fn multiply(a: i64, b: i64) -> Result<i64, ToolError> {
    a.checked_mul(b)
        .ok_or_else(|| ToolError::new("integer overflow"))
}

/// Add two numbers.
pub fn add(a: i64, b: i64) -> Result<i64, ToolError> {
    a.checked_add(b)
        .ok_or_else(|| ToolError::new("integer overflow"))
}

/// Divide two numbers.
pub async fn divide(a: f64, b: f64) -> Result<f64, ToolError> {
    if b == 0.0 {
        return Err(ToolError::new("division by zero"));
    }
    Ok(a / b)
}

/// Search for query and return a list of results.
pub async fn search(query: String) -> Vec<String> {
    vec![format!("result1{query}"), format!("result2{query}")]
}

/// Sum the elements of an array.
pub fn numpy_sum(arr: NdArray) -> Number {
    match &arr {
        NdArray::Int(a) => a
            .iter()
            .try_fold(0i64, |s, x| s.checked_add(*x))
            .map_or(Number::Float(arr.to_f64().sum()), Number::Int),
        NdArray::Bool(a) => Number::Int(a.iter().filter(|b| **b).count() as i64),
        NdArray::Float(a) => Number::Float(a.sum()),
    }
}

/// Add two points.
pub fn add_points(p1: Point, p2: Point) -> Point {
    Point {
        x: p1.x.saturating_add(p2.x),
        y: p1.y.saturating_add(p2.y),
    }
}

/// The demo manager. Its arithmetic tools (`add`, `multiply`, `numpy_sum`, `add_points`) are
/// [`inline`](FunctionTool::inline): pure and cheap, they run on the calling task with no
/// thread hop.
///
/// ```
/// let m = fexpr::demo::manager();
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let out = rt.block_on(m.execute_func_expr("add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})"));
/// assert_eq!(out.output.unwrap().repr(), "Point(x=4, y=6)");
/// ```
// The demo's tools and context are constants, checked by `demo_builds` below: it cannot fail.
#[allow(clippy::expect_used)]
pub fn manager() -> ToolManager {
    builder().build().expect("the demo tools are well-formed")
}

/// The builder of [`manager`], to add tools or settings to the demo.
///
/// ```
/// let m = fexpr::demo::builder().limits(fexpr::Limits::default().max_calls(4)).build()?;
/// assert_eq!(m.limits().max_calls, 4);
/// # Ok::<(), fexpr::manager::BuildError>(())
/// ```
pub fn builder() -> ToolManagerBuilder {
    ToolManager::builder()
        .tool(
            FunctionTool::new("multiply", ["a", "b"], multiply)
                .description("Multiply two numbers.")
                .inline(),
        )
        .tool(
            FunctionTool::new("add", ["a", "b"], add)
                .description("Add two numbers.")
                .inline(),
        )
        .tool(
            FunctionTool::new_async("divide", ["a", "b"], divide)
                .description("Divide two numbers."),
        )
        .tool(
            FunctionTool::new_async("search", ["query"], search)
                .description("Search for query and return a list of results."),
        )
        .tool(
            FunctionTool::new("numpy_sum", ["arr"], numpy_sum)
                .description("Sum the elements of an array.")
                .inline(),
        )
        .tool(
            FunctionTool::new("add_points", ["p1", "p2"], add_points)
                .description("Add two points.")
                .inline(),
        )
        .context(context())
}

/// The demo context: `x = 2`, `y = 0`, numpy as `np`, and `Point`.
pub fn context() -> Context {
    Context::new()
        .variable("x", 2)
        .variable("y", 0)
        .numpy("np")
        .record::<Point>()
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_builds() {
        assert!(super::builder().build().is_ok());
    }
}

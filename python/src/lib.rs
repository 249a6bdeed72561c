//! `fexpr._fexpr`: the extension module under the Python package `fexpr`.
//!
//! The engine is the `fexpr` crate; this crate makes Python functions its tools
//! ([`tool`]), converts values both ways ([`convert`]), waits for it without holding the GIL
//! ([`runtime`]) and hands results back ([`output`]). Every call into the engine's execution
//! API is in [`run`].

mod convert;
mod manager;
mod mcp;
mod output;
mod request;
mod run;
mod runtime;
mod stream;
mod tool;
mod workers;

use pyo3::prelude::*;

/// The extension's Rust allocations (the engine's values, its futures, converted results) go to
/// mimalloc rather than glibc's malloc, which shrinks its heap when a large result's values are
/// freed and page-faults it back in on the next call: over BFCL's ground truth (long-context
/// stock histories of thousands of floats) that was ~2 µs a call. Python's own objects keep
/// Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// AdalFlow's `FunctionDefinition` of a tool, as JSON text: `func_name`, `func_desc` (the
/// Python signature, a newline, the description) and `func_parameters`.
#[pyfunction]
#[pyo3(signature = (name, description, parameters, returns=None))]
fn function_definition(
    name: &str,
    description: &str,
    parameters: &str,
    returns: Option<&str>,
) -> PyResult<String> {
    let mut def =
        fexpr::ToolDefinition::new(name, description, tool::parse_json(parameters, name)?);
    if let Some(returns) = returns {
        def = def.with_returns(tool::parse_json(returns, name)?);
    }
    Ok(def.function_definition().to_string())
}

/// JSON text as YAML text (as the engine writes its YAML definitions).
#[pyfunction]
fn json_to_yaml(json: &str) -> PyResult<String> {
    let value = tool::parse_json(json, "YAML")?;
    serde_yaml_ng::to_string(&value)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _fexpr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::configure();
    m.add_class::<manager::Manager>()?;
    m.add_class::<manager::Options>()?;
    m.add_class::<output::FunctionOutput>()?;
    m.add_class::<output::PyError>()?;
    m.add_class::<output::ErrorKind>()?;
    m.add_class::<output::Repair>()?;
    m.add_class::<output::Receipt>()?;
    m.add_class::<output::Executed>()?;
    m.add_class::<output::Ignored>()?;
    m.add_class::<output::Checked>()?;
    m.add_class::<output::Verdict>()?;
    m.add_class::<output::Limits>()?;
    m.add_class::<stream::Stream>()?;
    m.add_function(wrap_pyfunction!(function_definition, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::serve_mcp, m)?)?;
    // The functions fexpr evaluates itself, by the engine's own lists: numpy's (under the
    // prefix numpy is given) and Python's built-ins (`fexpr.ToolManager`'s context maps them).
    let names = |set: &[fexpr::value::builtins::Builtin]| -> Vec<&'static str> {
        set.iter().map(|b| b.name()).collect()
    };
    m.add(
        "NUMPY_FUNCTIONS",
        names(fexpr::value::builtins::Builtin::NUMPY),
    )?;
    m.add(
        "PYTHON_FUNCTIONS",
        names(fexpr::value::builtins::Builtin::PYTHON),
    )?;
    Ok(())
}

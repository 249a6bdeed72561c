//! `fexpr._fexpr.Manager`: the engine's `ToolManager` over Python tools and context. The
//! Python class `fexpr.ToolManager` subclasses it and prepares what it is built from
//! (`fexpr/_manager.py`).

use std::sync::Arc;

use fexpr::context::{valid_name, Entry};
use fexpr::repair::RepairOptions;
use fexpr::types::RecordType;
use fexpr::value::builtins::Builtin;
use fexpr::{Context, ErrorKind, Function, FunctionExpression, ToolManager};
use indexmap::IndexMap;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::convert::{self, type_error, Budget, Records};
use crate::output::{self, Checked, Executed, FunctionOutput, Limits, PyError};
use crate::request::RequestState;
use crate::run::{self, Call, Outputs};
use crate::runtime;
use crate::tool::{parse_json, PyTool, Spec};

/// Tools, context and limits; runs what a model wrote.
#[pyclass(subclass, frozen, module = "fexpr._fexpr")]
pub struct Manager {
    inner: Arc<ToolManager>,
    records: Arc<Records>,
}

impl Manager {
    /// The engine's manager (for `fexpr.mcp.serve`).
    pub(crate) fn engine(&self) -> &Arc<ToolManager> {
        &self.inner
    }
}

#[pymethods]
impl Manager {
    /// Built by `fexpr.ToolManager` from its tools' specs, the context entries
    /// (`(kind, name, payload)` with kind `numpy`, `function`, `record` or `variable`), the
    /// record builders (name → callable) and names (class → name), and the limits.
    #[new]
    #[pyo3(signature = (tools, context, builders, record_names, limits=None))]
    fn new(
        py: Python<'_>,
        tools: Vec<Spec<'_>>,
        context: Vec<(String, String, Bound<'_, PyAny>)>,
        builders: &Bound<'_, PyDict>,
        record_names: &Bound<'_, PyDict>,
        limits: Option<&Bound<'_, Limits>>,
    ) -> PyResult<Manager> {
        let limits = limits.map(|l| l.get().inner.clone()).unwrap_or_default();
        let records = Arc::new(Records::new(builders, record_names)?);
        let mut builder = ToolManager::builder().limits(limits.clone());
        for spec in tools {
            if !valid_name(&spec.name) || spec.name.contains('.') {
                return Err(PyValueError::new_err(format!(
                    "tool name {:?} is not a Python identifier",
                    spec.name
                )));
            }
            let tool = PyTool::new(py, spec, records.clone(), &limits)?;
            builder.add_tool(Arc::new(tool));
        }
        let mut names = Context::new();
        for (kind, name, payload) in context {
            if !valid_name(&name) {
                return Err(PyValueError::new_err(format!(
                    "context name {name:?} is not an identifier or dotted identifiers (and not a dunder)"
                )));
            }
            match kind.as_str() {
                "numpy" => names = names.numpy(&name),
                "function" => {
                    let builtin: String = payload.extract()?;
                    let found = Builtin::NUMPY
                        .iter()
                        .chain(Builtin::PYTHON)
                        .find(|b| b.name() == builtin)
                        .ok_or_else(|| {
                            PyValueError::new_err(format!("no fexpr function `{builtin}`"))
                        })?;
                    names.insert(name, Entry::Function(*found));
                }
                "record" => {
                    let (record, schema): (String, String) = payload.extract()?;
                    let schema = parse_json(&schema, &record)?;
                    let rt = RecordType::from_schema(&record, &schema);
                    names.insert(name, Entry::Record(Arc::new(rt)));
                }
                "variable" => {
                    let mut budget =
                        Budget::new(fexpr::LimitKind::EvalBytes, limits.max_eval_bytes);
                    let value = convert::from_py(&payload, &records, &mut budget).map_err(|e| {
                        let e = e.into_error(py, ErrorKind::Type, &format!("`{name}`"));
                        PyTypeError::new_err(format!("additional_context: {}", e.message))
                    })?;
                    names = names.variable(name, value);
                }
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown context kind {other:?}"
                    )))
                }
            }
        }
        // Every registration problem at once, as one ValueError.
        let manager = builder
            .context(names)
            .build()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Manager {
            inner: Arc::new(manager),
            records,
        })
    }

    /// Parse one call expression and evaluate its arguments without running anything: a
    /// `Function`, or an `Error` (never raised) that `execute_func` turns into an output.
    fn parse_func_expr(&self, py: Python<'_>, expr: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let parsed = match expr_text(expr)? {
            Ok(text) => py.detach(|| run::parse_func_expr(&self.inner, &text)),
            Err(out) => Err(out.output.err().unwrap_or_else(invalid_text)),
        };
        match parsed {
            Ok(f) => Ok(output::function(py, &f, &self.records)?.unbind()),
            Err(e) => Ok(output::error(py, e)?.into_any()),
        }
    }

    /// Run a `Function` (name and arguments).
    fn execute_func(&self, py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let request = self.func_request(py, func)?;
        self.block_on(py, request)
    }

    /// Parse and run one call expression (a str or a `FunctionExpression`).
    fn execute_func_expr(&self, py: Python<'_>, expr: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.block_on(py, one(expr, false)?)
    }

    /// Run several call expressions concurrently; outputs in the same order.
    fn execute_func_exprs(&self, py: Python<'_>, exprs: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.block_on(py, several(exprs, false)?)
    }

    /// Run what a model wrote as an expression: one call or a list of calls.
    fn execute(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.block_on(py, listed(text, false)?)
    }

    /// `execute_func_expr` inside the wasmtime sandbox.
    fn execute_func_expr_via_sandbox(
        &self,
        py: Python<'_>,
        expr: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        self.block_on(py, one(expr, true)?)
    }

    /// `execute_func_exprs` inside the sandbox: each expression in its own instance.
    fn execute_func_exprs_via_sandbox(
        &self,
        py: Python<'_>,
        exprs: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        self.block_on(py, several(exprs, true)?)
    }

    /// `execute` inside the sandbox.
    fn execute_via_sandbox(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.block_on(py, listed(text, true)?)
    }

    /// Run the calls given as JSON text: `{"name": ..., "kwargs": {...}}`, a list of them, or
    /// OpenAI's and Anthropic's tool-call forms. One output per call.
    fn execute_json(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.block_on(py, json(text, false)?)
    }

    /// `execute_json` inside the sandbox.
    fn execute_json_via_sandbox(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        self.block_on(py, json(text, true)?)
    }

    /// Find, repair and run the calls in a model's raw output.
    #[pyo3(signature = (text, repairs=true))]
    fn execute_model_output(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        repairs: bool,
    ) -> PyResult<Py<PyAny>> {
        self.block_on(py, model_output(text, repairs, false)?)
    }

    /// `execute_model_output` with each call evaluated inside the sandbox.
    #[pyo3(signature = (text, repairs=true))]
    fn execute_model_output_via_sandbox(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        repairs: bool,
    ) -> PyResult<Py<PyAny>> {
        self.block_on(py, model_output(text, repairs, true)?)
    }

    /// Check the calls in a model's raw output without running anything.
    #[pyo3(signature = (text, repairs=true))]
    fn check_model_output(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        repairs: bool,
    ) -> PyResult<Py<Checked>> {
        let options = repair_options(repairs);
        let checked = match str_text(text)? {
            Ok(text) => py.detach(|| run::check_model_output(&self.inner, &text, &options)),
            Err(out) => fexpr::check::Checked {
                error: out.output.err(),
                ..Default::default()
            },
        };
        Py::new(py, Checked::new(py, checked, &self.records)?)
    }

    fn execute_func_async<'py>(
        &self,
        py: Python<'py>,
        func: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = self.func_request(py, func)?;
        self.spawn(py, request)
    }

    fn execute_func_expr_async<'py>(
        &self,
        py: Python<'py>,
        expr: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, one(expr, false)?)
    }

    fn execute_func_exprs_async<'py>(
        &self,
        py: Python<'py>,
        exprs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, several(exprs, false)?)
    }

    fn execute_async<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, listed(text, false)?)
    }

    fn execute_func_expr_via_sandbox_async<'py>(
        &self,
        py: Python<'py>,
        expr: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, one(expr, true)?)
    }

    fn execute_func_exprs_via_sandbox_async<'py>(
        &self,
        py: Python<'py>,
        exprs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, several(exprs, true)?)
    }

    fn execute_via_sandbox_async<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, listed(text, true)?)
    }

    #[pyo3(signature = (text, repairs=true))]
    fn execute_model_output_async<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        repairs: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, model_output(text, repairs, false)?)
    }

    #[pyo3(signature = (text, repairs=true))]
    fn execute_model_output_via_sandbox_async<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        repairs: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.spawn(py, model_output(text, repairs, true)?)
    }

    /// The tools' definitions as JSON text: `function` (AdalFlow's `FunctionDefinition`s),
    /// `openai` or `anthropic`.
    fn _definitions_json(&self, format: &str) -> PyResult<String> {
        let json = match format {
            "function" => serde_json::Value::Array(self.inner.function_definitions()),
            "openai" => self.inner.openai_tools(),
            "anthropic" => self.inner.anthropic_tools(),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown definitions format {other:?}"
                )))
            }
        };
        Ok(json.to_string())
    }

    /// Each tool's Python signature and docstring (`def add(a: int, b: int) -> int: ...`).
    fn _python_definitions(&self) -> Vec<String> {
        self.inner.definitions().map(|d| d.python()).collect()
    }
}

/// What a method asks for: a call to run, and the outputs of inputs that could not be run
/// (text that is not valid Unicode, arguments without a fexpr value), by their position among
/// the outputs.
struct Request {
    call: Option<Call>,
    failed: Vec<(usize, fexpr::FunctionOutput)>,
    shape: Shape,
}

/// What a method gives back.
#[derive(Clone, Copy)]
enum Shape {
    One,
    Many,
    Run,
}

impl Request {
    fn new(call: Call, shape: Shape) -> Request {
        Request {
            call: Some(call),
            failed: Vec::new(),
            shape,
        }
    }

    fn failed(out: fexpr::FunctionOutput, shape: Shape) -> Request {
        Request {
            call: None,
            failed: vec![(0, out)],
            shape,
        }
    }
}

/// What a request gave: the call's outputs with the failed ones in their places.
fn complete(
    failed: Vec<(usize, fexpr::FunctionOutput)>,
    shape: Shape,
    outputs: Option<Outputs>,
) -> Outputs {
    match (outputs, shape) {
        (Some(Outputs::Many(mut outs)), _) => {
            for (at, out) in failed {
                outs.insert(at.min(outs.len()), out);
            }
            Outputs::Many(outs)
        }
        (Some(other), _) => other,
        (None, Shape::One) => match failed.into_iter().next() {
            Some((_, out)) => Outputs::One(Box::new(out)),
            None => Outputs::Many(Vec::new()),
        },
        (None, Shape::Many) => Outputs::Many(failed.into_iter().map(|(_, o)| o).collect()),
        (None, Shape::Run) => {
            let mut response = fexpr::Response::default();
            response.outputs = failed.into_iter().map(|(_, o)| o).collect();
            Outputs::Run(response)
        }
    }
}

/// One call expression.
fn one(expr: &Bound<'_, PyAny>, sandboxed: bool) -> PyResult<Request> {
    Ok(match expr_text(expr)? {
        Ok(text) => Request::new(Call::FuncExpr { text, sandboxed }, Shape::One),
        Err(out) => Request::failed(out, Shape::One),
    })
}

/// Several call expressions.
fn several(exprs: &Bound<'_, PyAny>, sandboxed: bool) -> PyResult<Request> {
    if exprs.is_instance_of::<PyString>() {
        return Err(type_error(
            "expected a list of str or FunctionExpression",
            exprs,
        ));
    }
    let mut valid = Vec::new();
    let mut failed = Vec::new();
    for (at, expr) in exprs.try_iter()?.enumerate() {
        match expr_text(&expr?)? {
            Ok(text) => valid.push(FunctionExpression::new(text)),
            Err(out) => failed.push((at, out)),
        }
    }
    Ok(Request {
        call: Some(Call::FuncExprs {
            exprs: valid,
            sandboxed,
        }),
        failed,
        shape: Shape::Many,
    })
}

/// What a model wrote as an expression: one call or a list.
fn listed(text: &Bound<'_, PyAny>, sandboxed: bool) -> PyResult<Request> {
    Ok(match str_text(text)? {
        Ok(text) => Request::new(Call::Expr { text, sandboxed }, Shape::Many),
        Err(out) => Request::failed(out, Shape::Many),
    })
}

/// Calls as JSON text.
fn json(text: &Bound<'_, PyAny>, sandboxed: bool) -> PyResult<Request> {
    Ok(match str_text(text)? {
        Ok(text) => Request::new(Call::Json { text, sandboxed }, Shape::Many),
        Err(out) => Request::failed(out, Shape::Many),
    })
}

/// A model's raw output.
fn model_output(text: &Bound<'_, PyAny>, repairs: bool, sandboxed: bool) -> PyResult<Request> {
    Ok(match str_text(text)? {
        Ok(text) => Request::new(
            Call::ModelOutput {
                text,
                repairs: repair_options(repairs),
                sandboxed,
            },
            Shape::Run,
        ),
        Err(out) => Request::failed(out, Shape::Run),
    })
}

impl Manager {
    /// Run `request` on this thread, the GIL released while the engine works.
    fn block_on(&self, py: Python<'_>, request: Request) -> PyResult<Py<PyAny>> {
        let state = RequestState::new(None);
        let outputs = match request.call {
            Some(call) => Some(runtime::block_on(
                py,
                self.inner.clone(),
                call,
                state.clone(),
            )?),
            None => None,
        };
        let outputs = complete(request.failed, request.shape, outputs);
        to_python(py, outputs, &state, &self.records)
    }

    /// An awaitable running `request` on the caller's asyncio loop.
    fn spawn<'py>(&self, py: Python<'py>, request: Request) -> PyResult<Bound<'py, PyAny>> {
        let records = self.records.clone();
        let Request {
            call,
            failed,
            shape,
        } = request;
        let finish = move |py: Python<'_>, outputs, state: &RequestState| {
            to_python(py, complete(failed, shape, outputs), state, &records)
        };
        match call {
            Some(call) => {
                runtime::spawn(py, self.inner.clone(), call, move |py, outputs, state| {
                    finish(py, Some(outputs), state)
                })
            }
            None => {
                let done = finish(py, None, &RequestState::new(None))?;
                ready(py, done)
            }
        }
    }

    /// The request for a Python `Function` (or the `Error` `parse_func_expr` gave), failed
    /// when its arguments have no fexpr value.
    fn func_request(&self, py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<Request> {
        Ok(match self.func_call(py, func)? {
            Ok(call) => Request::new(call, Shape::One),
            Err(out) => Request::failed(out, Shape::One),
        })
    }

    fn func_call(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
    ) -> PyResult<Result<Call, fexpr::FunctionOutput>> {
        if let Ok(error) = func.cast::<PyError>() {
            let error = error.get().inner.clone();
            return Ok(Err(fexpr::FunctionOutput::failed("", "", error)));
        }
        let name: String = func
            .getattr("name")
            .and_then(|n| n.extract())
            .map_err(|_| type_error("execute_func takes a Function", func))?;
        let mut budget = Budget::new(
            fexpr::LimitKind::EvalBytes,
            self.inner.limits().max_eval_bytes,
        );
        let unconverted = |e: convert::Unconverted, what: &str| {
            let error = e.into_error(py, ErrorKind::Type, what);
            fexpr::FunctionOutput::failed(name.clone(), name.clone(), error)
        };
        let mut args = Vec::new();
        for (i, arg) in func.getattr("args")?.try_iter()?.enumerate() {
            match convert::from_py(&arg?, &self.records, &mut budget) {
                Ok(v) => args.push(v),
                Err(e) => return Ok(Err(unconverted(e, &format!("argument {i}")))),
            }
        }
        let mut kwargs = IndexMap::new();
        let given = func.getattr("kwargs")?;
        if !given.is_none() {
            let given = given
                .cast::<PyDict>()
                .map_err(|_| type_error("Function.kwargs must be a dict", &given))?;
            for (k, v) in given.iter() {
                let k: String = k
                    .extract()
                    .map_err(|_| type_error("Function.kwargs keys must be str", &k))?;
                match convert::from_py(&v, &self.records, &mut budget) {
                    Ok(v) => {
                        kwargs.insert(k, v);
                    }
                    Err(e) => return Ok(Err(unconverted(e, &format!("`{k}`")))),
                }
            }
        }
        Ok(Ok(Call::Func(Function { name, args, kwargs })))
    }
}

fn repair_options(repairs: bool) -> RepairOptions {
    if repairs {
        RepairOptions::default()
    } else {
        RepairOptions::strict()
    }
}

/// The Python form of what a call gave.
fn to_python(
    py: Python<'_>,
    outputs: Outputs,
    state: &RequestState,
    records: &Arc<Records>,
) -> PyResult<Py<PyAny>> {
    Ok(match outputs {
        Outputs::One(out) => {
            Py::new(py, FunctionOutput::new(py, *out, Some(state), records)?)?.into_any()
        }
        Outputs::Many(outs) => PyList::new(py, output::outputs(py, outs, Some(state), records)?)?
            .into_any()
            .unbind(),
        Outputs::Run(run) => Py::new(py, Executed::new(py, run, Some(state), records)?)?.into_any(),
    })
}

/// An awaitable that is already done, with `value`.
fn ready<'py>(py: Python<'py>, value: Py<PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let future = py
        .import("asyncio")?
        .call_method0("get_running_loop")?
        .call_method0("create_future")?;
    future.call_method1("set_result", (value,))?;
    Ok(future)
}

/// The text of an expression: a str, or an object with an `action` (`FunctionExpression`);
/// a failed output when it is not valid Unicode.
fn expr_text(expr: &Bound<'_, PyAny>) -> PyResult<Result<String, fexpr::FunctionOutput>> {
    if expr.is_instance_of::<PyString>() {
        return str_text(expr);
    }
    match expr.getattr("action") {
        Ok(action) if action.is_instance_of::<PyString>() => str_text(&action),
        Ok(action) => Err(type_error(
            "FunctionExpression.action must be a str",
            &action,
        )),
        Err(_) => Err(type_error("expected a str or a FunctionExpression", expr)),
    }
}

/// The text of a str; a failed output when it is not valid Unicode (a lone surrogate, as
/// `json.loads` makes from `"\ud800"`): model text never raises.
fn str_text(text: &Bound<'_, PyAny>) -> PyResult<Result<String, fexpr::FunctionOutput>> {
    let text = text
        .cast::<PyString>()
        .map_err(|_| type_error("expected a str", text))?;
    Ok(match text.to_str() {
        Ok(text) => Ok(text.to_string()),
        Err(_) => {
            let shown = text.to_string_lossy();
            Err(fexpr::FunctionOutput::failed(
                fexpr::error::clip(&shown, 60),
                shown,
                invalid_text(),
            ))
        }
    })
}

/// The error of text that is not valid Unicode.
fn invalid_text() -> fexpr::Error {
    fexpr::Error::new(
        ErrorKind::Syntax,
        "the text is not valid Unicode: it holds a lone surrogate (\\ud800-\\udfff)",
    )
    .with_hint("a lone surrogate comes from a JSON escape such as \"\\ud800\" without its pair")
}

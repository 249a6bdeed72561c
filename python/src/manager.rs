//! `fexpr._fexpr.Manager`: the engine's `ToolManager` over Python tools and context. The
//! Python class `fexpr.ToolManager` subclasses it and prepares what it is built from
//! (`fexpr/_manager.py`).

use std::sync::Arc;

use fexpr::context::{valid_name, Entry};
use fexpr::repair::RepairOptions;
use fexpr::types::RecordType;
use fexpr::value::builtins::Builtin;
use fexpr::{Context, ErrorKind, Function, FunctionExpression, Input, ToolManager};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
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
        // A tool's name is checked by `build` (any name a provider or MCP allows; Python
        // call text reaches it by its alias), with every other registration problem.
        for spec in tools {
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
                    // `numpy.max` is numpy's, `max` Python's: each computes what its own does.
                    let builtin: String = payload.extract()?;
                    let found = Builtin::from_name(&builtin).ok_or_else(|| {
                        PyValueError::new_err(format!("no fexpr function `{builtin}`"))
                    })?;
                    names.insert(name, Entry::Function(found));
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
            .map_err(|e| PyValueError::new_err(run::python_names(&e.to_string())))?;
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

    /// Run `payload` read as `kind` and give its outputs in `shape`, as `options` say: the one
    /// entry point of every method that runs something (`ToolManager.run` and the AdalFlow
    /// names in `fexpr/_adalflow.py`).
    ///
    /// `kind`: `model_output` (a str), `expr` (a str or `FunctionExpression`: one call or a
    /// list), `json` (a str), `function` (a `Function`, or the `Error` `parse_func_expr`
    /// gave), `functions` (an iterable of them) or `func_exprs` (an iterable of str or
    /// `FunctionExpression`, one output each).
    /// `shape`: `run` (an `Executed`), `many` (a list of outputs) or `one` (one output; a list
    /// of calls is refused before any of it runs).
    #[pyo3(signature = (kind, payload, shape, options=None))]
    fn _request(
        &self,
        py: Python<'_>,
        kind: &str,
        payload: &Bound<'_, PyAny>,
        shape: &str,
        options: Option<&Bound<'_, Options>>,
    ) -> PyResult<Py<PyAny>> {
        let default = Options::default();
        let options = options.map_or(&default, |o| o.get());
        let request = self.request(py, kind, payload, shape, options)?;
        self.block_on(py, request)
    }

    /// `_request` as an awaitable for the running asyncio loop (async tools run on it).
    #[pyo3(signature = (kind, payload, shape, options=None))]
    fn _arequest<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        payload: &Bound<'py, PyAny>,
        shape: &str,
        options: Option<&Bound<'py, Options>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let default = Options::default();
        let options = options.map_or(&default, |o| o.get());
        let request = self.request(py, kind, payload, shape, options)?;
        self.spawn(py, request)
    }

    /// Start running model text that arrives in chunks (see `ToolManager.stream`).
    #[pyo3(signature = (options=None))]
    fn _stream(
        &self,
        py: Python<'_>,
        options: Option<&Bound<'_, Options>>,
    ) -> PyResult<crate::stream::Stream> {
        let default = Options::default();
        let options = options.map_or(&default, |o| o.get());
        let repairs = options.reading.options().unwrap_or_default();
        let limits = options.limits.clone();
        let max_results = limits
            .as_ref()
            .unwrap_or(self.inner.limits())
            .max_eval_bytes;
        let sandboxed = options.sandboxed;
        let python_session = options.python_session(py)?;
        let session = engine_session(py, python_session.as_ref());
        Ok(crate::stream::Stream::start(
            &self.inner,
            move |mut request| {
                request = request.repair(repairs).session(session);
                if let Some(limits) = limits {
                    request = request.limits(limits);
                }
                if sandboxed {
                    request = request.sandboxed();
                }
                request
            },
            python_session,
            max_results,
            self.records.clone(),
        ))
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

    /// The provider's replies to `outputs` as JSON text: `openai` (`role: tool` messages) or
    /// `anthropic` (`tool_result` blocks), each with its call's id and what the model reads
    /// (`fexpr::Response::reply_content`).
    fn _replies_json(
        &self,
        format: &str,
        outputs: Vec<Bound<'_, FunctionOutput>>,
    ) -> PyResult<String> {
        let mut response = fexpr::Response::default();
        response.outputs = outputs.iter().map(|o| o.get().engine()).collect();
        let replies = match format {
            "openai" => response.openai_messages(&self.inner),
            "anthropic" => response.anthropic_blocks(&self.inner),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown reply format {other:?}"
                )))
            }
        };
        Ok(serde_json::Value::Array(replies).to_string())
    }

    /// The grammar of the calls the checker accepts (`fexpr::grammar`), as JSON text: the
    /// grammar, its approximations and tools left out, and vLLM's and SGLang's request fields.
    /// `ToolManager.grammar` reads it into a `Grammar`.
    fn _grammar(&self, format: &str, markup: &str, tool_choice: &str) -> PyResult<String> {
        use fexpr::grammar::GrammarOptions;
        let bad = |e: fexpr::Error| PyValueError::new_err(e.to_string());
        let options = GrammarOptions::default()
            .format(format.parse().map_err(bad)?)
            .markup(markup.parse().map_err(bad)?)
            .tool_choice(tool_choice.parse().map_err(bad)?);
        let grammar = self.inner.grammar(&options).map_err(bad)?;
        let mut json = grammar.to_json();
        if let Some(map) = json.as_object_mut() {
            map.insert("vllm".into(), grammar.vllm());
            map.insert("sglang".into(), grammar.sglang().unwrap_or_default());
        }
        Ok(json.to_string())
    }

    /// Each tool's Python signature and docstring (`def add(a: int, b: int) -> int: ...`).
    fn _python_definitions(&self) -> Vec<String> {
        self.inner.definitions().map(|d| d.python()).collect()
    }
}

/// How a request runs: `ToolManager.run`'s keywords (see there), read once into one value
/// that `_request`, `_arequest` and `_stream` take.
#[pyclass(frozen, module = "fexpr._fexpr")]
#[derive(Default)]
pub struct Options {
    sandboxed: bool,
    /// The caller's session object: tools read it with `fexpr.current_session()`; a str is
    /// also the engine's session id.
    session: Option<Py<PyAny>>,
    limits: Option<fexpr::Limits>,
    reading: Reading,
}

#[pymethods]
impl Options {
    #[new]
    #[pyo3(signature = (*, sandboxed=false, session=None, limits=None, repairs=None, lenient=false, model_format=None))]
    fn new(
        sandboxed: bool,
        session: Option<Py<PyAny>>,
        limits: Option<&Bound<'_, Limits>>,
        repairs: Option<bool>,
        lenient: bool,
        model_format: Option<&str>,
    ) -> PyResult<Options> {
        Ok(Options {
            sandboxed,
            session,
            limits: limits.map(|l| l.get().inner.clone()),
            reading: Reading::new(repairs, lenient, model_format)?,
        })
    }
}

impl Options {
    /// The session object for the request's tools: the one given, else (a request made by a
    /// tool) the session of the request whose tool makes it, so that a nested request's tools
    /// see the same session on every thread.
    fn python_session(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        if let Some(session) = &self.session {
            return Ok(Some(session.clone_ref(py)));
        }
        // The context variable's bound `get`, looked up once.
        let get = GET.get_or_try_init(py, || {
            let var = py.import("fexpr._runtime")?.getattr("session")?;
            Ok::<_, PyErr>(var.getattr("get")?.unbind())
        })?;
        let current = get.bind(py).call0()?;
        Ok((!current.is_none()).then(|| current.unbind()))
    }
}

/// The engine's session for the session object `session`: its id when it is a str.
fn engine_session(py: Python<'_>, session: Option<&Py<PyAny>>) -> fexpr::Session {
    let id = session.and_then(|s| {
        s.bind(py)
            .cast::<PyString>()
            .ok()?
            .to_str()
            .ok()
            .map(str::to_owned)
    });
    match id {
        Some(id) => fexpr::Session::new().id(id),
        None => fexpr::Session::new(),
    }
}

/// What a method asks for: a call to run (none when no input could be run), the outputs of
/// inputs that could not be run (text that is not valid Unicode, arguments without a fexpr
/// value, a list given to a single-call method), by their position among the outputs, the
/// objects the caller gave, one per output (`FunctionOutput.input`), and the session object.
struct Request {
    call: Option<Call>,
    session: Option<Py<PyAny>>,
    failed: Vec<(usize, fexpr::FunctionOutput)>,
    given: Vec<Py<PyAny>>,
    shape: Shape,
    /// The calls are `Function`s, not text.
    textless: bool,
}

/// What a method gives back.
#[derive(Clone, Copy)]
enum Shape {
    One,
    Many,
    Run,
}

impl Shape {
    fn from_name(name: &str) -> PyResult<Shape> {
        Ok(match name {
            "one" => Shape::One,
            "many" => Shape::Many,
            "run" => Shape::Run,
            other => return Err(PyValueError::new_err(format!("unknown shape {other:?}"))),
        })
    }
}

/// What a request gave: the call's outputs with the failed ones in their places.
fn complete(
    failed: Vec<(usize, fexpr::FunctionOutput)>,
    shape: Shape,
    response: Option<Outputs>,
) -> Outputs {
    let mut response = response.unwrap_or_default();
    for (at, out) in failed {
        let at = at.min(response.outputs.len());
        response.outputs.insert(at, out);
    }
    if let (Shape::One, 2..) = (shape, response.outputs.len()) {
        // Not reached: a single-call method refuses a list before it runs. Kept so that no
        // output is ever dropped without a word.
        let error = fexpr::Error::new(
            ErrorKind::Unsupported,
            format!("expected one call, found {}", response.outputs.len()),
        );
        response.outputs = vec![fexpr::FunctionOutput::failed("", "", error)];
    }
    response
}

impl Manager {
    /// The request for `payload` read as `kind` (see `_request`).
    fn request(
        &self,
        py: Python<'_>,
        kind: &str,
        payload: &Bound<'_, PyAny>,
        shape: &str,
        options: &Options,
    ) -> PyResult<Request> {
        let shape = Shape::from_name(shape)?;
        let session = options.python_session(py)?;
        let one = matches!(shape, Shape::One);
        let mut failed = Vec::new();
        let mut given = Vec::new();
        let input = match kind {
            "function" => {
                given.push(payload.clone().unbind());
                match self.func_call(py, payload)? {
                    Ok(func) => Some(Input::function(func)),
                    Err(out) => {
                        failed.push((0, out));
                        None
                    }
                }
            }
            "expr" => {
                given.push(payload.clone().unbind());
                // A list of calls given to a single-call method is refused by `Request::one`
                // before any of it runs.
                match expr_text(payload)? {
                    Ok(text) => Some(Input::expr(text)),
                    Err(out) => {
                        failed.push((0, out));
                        None
                    }
                }
            }
            "func_exprs" => self.func_exprs(payload, &mut failed, &mut given)?,
            "functions" => self.functions(py, payload, &mut failed, &mut given)?,
            "model_output" | "json" => match str_text(payload)? {
                Ok(text) if kind == "json" => Some(Input::json(text)),
                Ok(text) => Some(Input::model_output(text)),
                Err(out) => {
                    failed.push((0, out));
                    None
                }
            },
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown input kind {other:?}"
                )))
            }
        };
        Ok(Request {
            call: input.map(|input| Call {
                input,
                sandboxed: options.sandboxed,
                limits: options.limits.clone(),
                repairs: options.reading.options(),
                session: engine_session(py, session.as_ref()),
                one,
            }),
            session,
            failed,
            given,
            shape,
            textless: matches!(kind, "function" | "functions"),
        })
    }

    /// The input of `func_exprs` (an iterable of str or `FunctionExpression`, one output
    /// each); a failed output in `failed` for each that cannot run, each given in `given`.
    fn func_exprs(
        &self,
        payload: &Bound<'_, PyAny>,
        failed: &mut Vec<(usize, fexpr::FunctionOutput)>,
        given: &mut Vec<Py<PyAny>>,
    ) -> PyResult<Option<Input>> {
        if payload.is_instance_of::<PyString>() {
            return Err(type_error(
                "expected a list of str or FunctionExpression",
                payload,
            ));
        }
        let mut valid = Vec::new();
        for (at, expr) in payload.try_iter()?.enumerate() {
            let expr = expr?;
            // An expression of other than one call is refused by the engine before any of
            // its calls runs; the others run.
            match expr_text(&expr)? {
                Ok(text) => valid.push(FunctionExpression::new(text)),
                Err(out) => failed.push((at, out)),
            }
            given.push(expr.unbind());
        }
        Ok((!valid.is_empty()).then(|| Input::func_exprs(valid)))
    }

    /// The input of `functions` (an iterable of `Function`s or `Error`s), as
    /// [`Manager::func_exprs`].
    fn functions(
        &self,
        py: Python<'_>,
        payload: &Bound<'_, PyAny>,
        failed: &mut Vec<(usize, fexpr::FunctionOutput)>,
        given: &mut Vec<Py<PyAny>>,
    ) -> PyResult<Option<Input>> {
        let mut valid = Vec::new();
        for (at, func) in payload.try_iter()?.enumerate() {
            let func = func?;
            match self.func_call(py, &func)? {
                Ok(func) => valid.push(func),
                Err(out) => failed.push((at, out)),
            }
            given.push(func.unbind());
        }
        Ok((!valid.is_empty()).then(|| Input::functions(valid)))
    }

    /// Run `request` on this thread, the GIL released while the engine works.
    fn block_on(&self, py: Python<'_>, request: Request) -> PyResult<Py<PyAny>> {
        let limits = request.call.as_ref().and_then(|c| c.limits.as_ref());
        let max_results = limits.unwrap_or(self.inner.limits()).max_eval_bytes;
        let state = RequestState::new(None, request.session, max_results);
        let outputs = match request.call {
            Some(call) => Some(runtime::block_on(py, &self.inner, call, state.clone())?),
            None => None,
        };
        let outputs = complete(request.failed, request.shape, outputs);
        to_python(
            py,
            outputs,
            request.shape,
            request.textless,
            request.given,
            &state,
            &self.records,
        )
    }

    /// An awaitable running `request` on the caller's asyncio loop.
    fn spawn<'py>(&self, py: Python<'py>, request: Request) -> PyResult<Bound<'py, PyAny>> {
        let records = self.records.clone();
        let Request {
            call,
            session,
            failed,
            given,
            shape,
            textless,
        } = request;
        let finish = move |py: Python<'_>, outputs, state: &RequestState| {
            let outputs = complete(failed, shape, outputs);
            to_python(py, outputs, shape, textless, given, state, &records)
        };
        match call {
            Some(call) => runtime::spawn(
                py,
                self.inner.clone(),
                call,
                session,
                move |py, outputs, state| finish(py, Some(outputs), state),
            ),
            None => {
                let state = RequestState::new(None, session, self.inner.limits().max_eval_bytes);
                let done = finish(py, None, &state)?;
                ready(py, done)
            }
        }
    }

    /// The engine's `Function` for a Python `Function` (or the failed output of the `Error`
    /// `parse_func_expr` gave, or of arguments without a fexpr value).
    fn func_call(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
    ) -> PyResult<Result<Function, fexpr::FunctionOutput>> {
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
        // A dict's keys are distinct already.
        let mut kwargs = Vec::new();
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
                    Ok(v) => kwargs.push((k, v)),
                    Err(e) => return Ok(Err(unconverted(e, &format!("`{k}`")))),
                }
            }
        }
        Ok(Ok(Function { name, args, kwargs }))
    }
}

/// How model text is read: the repairs (`None`: the input's default), whether mentions in
/// prose are taken as calls, and the one model format to read.
#[derive(Default)]
struct Reading {
    repairs: Option<bool>,
    lenient: bool,
    model_format: Option<fexpr::front::formats::ModelFormat>,
}

impl Reading {
    fn new(repairs: Option<bool>, lenient: bool, model_format: Option<&str>) -> PyResult<Reading> {
        let model_format = model_format
            .map(|name| {
                name.parse()
                    .map_err(|e: fexpr::Error| PyValueError::new_err(e.to_string()))
            })
            .transpose()?;
        Ok(Reading {
            repairs,
            lenient,
            model_format,
        })
    }

    /// The options for the request, `None` for the input's default.
    fn options(&self) -> Option<RepairOptions> {
        if !self.lenient && self.model_format.is_none() {
            return self.repairs.map(repair_options);
        }
        let base = repair_options(self.repairs.unwrap_or(true));
        Some(RepairOptions {
            lenient: self.lenient,
            model_format: self.model_format,
            ..base
        })
    }
}

fn repair_options(repairs: bool) -> RepairOptions {
    if repairs {
        RepairOptions::default()
    } else {
        RepairOptions::strict()
    }
}

/// The Python form of what a request gave, each output with the object the caller gave for
/// it (when there is one) as its `input`.
fn to_python(
    py: Python<'_>,
    mut response: Outputs,
    shape: Shape,
    textless: bool,
    given: Vec<Py<PyAny>>,
    state: &RequestState,
    records: &Arc<Records>,
) -> PyResult<Py<PyAny>> {
    if textless {
        // Calls given as `Function`s have no text: their errors have no place in any (an
        // `Error` given instead keeps the place `parse_func_expr` found it at).
        for (out, object) in response.outputs.iter_mut().zip(&given) {
            if let (Err(error), false) =
                (&mut out.output, object.bind(py).is_instance_of::<PyError>())
            {
                error.span = None;
            }
        }
    }
    if let Shape::Run = shape {
        return Ok(Py::new(py, Executed::new(py, response, Some(state), records)?)?.into_any());
    }
    let mut given = given.into_iter();
    let mut outs = Vec::with_capacity(response.outputs.len());
    for out in response.outputs {
        let mut out = FunctionOutput::new(py, out, Some(state), records)?;
        if let Some(object) = given.next() {
            out = out.given(object);
        }
        outs.push(Py::new(py, out)?);
    }
    Ok(match shape {
        Shape::One => match outs.pop() {
            Some(out) => out.into_any(),
            None => {
                let error = fexpr::Error::new(ErrorKind::Syntax, "no call to run");
                let out = fexpr::FunctionOutput::failed("", "", error);
                Py::new(py, FunctionOutput::new(py, out, Some(state), records)?)?.into_any()
            }
        },
        _ => PyList::new(py, outs)?.into_any().unbind(),
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
    match expr.getattr(pyo3::intern!(expr.py(), "action")) {
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

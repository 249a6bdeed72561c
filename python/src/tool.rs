//! Python functions as fexpr tools: sync functions on a tool worker thread ([`workers`]) (or,
//! marked `blocking=False`, with the GIL on the thread that polls the call), async functions on
//! an asyncio loop, inside `fexpr._runtime.guard`.

use std::future::Future;
use std::sync::Arc;

use fexpr::tool::ToolFuture;
use fexpr::{Error, ErrorKind, Tool, ToolDefinition, ToolOutput, Value};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use pyo3_async_runtimes::TaskLocals;

use crate::convert::{self, describe, Budget, Records, Strict, Unconverted};
use crate::request::RequestState;
use crate::{runtime, workers};

/// One parameter: its name, whether it must be passed by keyword, the Python converter its
/// annotation needs (an Enum, a frozenset, ...), if any, and whether its default is one only
/// Python has (then a `None` from the engine means "not given").
struct Param {
    name: Py<PyString>,
    keyword_only: bool,
    convert: Option<Py<PyAny>>,
    python_default: bool,
}

/// What calling the Python function needs.
struct Callable {
    func: Py<PyAny>,
    is_async: bool,
    params: Vec<Param>,
    records: Arc<Records>,
    /// `Limits::max_output_bytes`: a result is refused while it is converted, past this.
    max_output_bytes: usize,
    /// `Limits::max_int_digits`: an int result with more digits is refused.
    max_int_digits: usize,
    /// `Limits::max_observation_chars`: a tool's own observation is cut to this.
    max_observation_chars: usize,
}

/// A Python function as a [`Tool`].
pub struct PyTool {
    definition: ToolDefinition,
    callable: Arc<Callable>,
    blocking: bool,
}

/// How a `FunctionTool` describes itself to the binding (see `FunctionTool._spec` in Python).
pub struct Spec<'py> {
    pub name: String,
    pub description: String,
    pub parameters: String,
    pub returns: Option<String>,
    pub func: Bound<'py, PyAny>,
    pub is_async: bool,
    pub blocking: bool,
    /// `(name, keyword_only, converter or None, python_default)` per parameter, in order.
    pub params: Vec<(String, bool, Option<Bound<'py, PyAny>>, bool)>,
}

impl<'py> FromPyObject<'_, 'py> for Spec<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Spec<'py>> {
        let (name, description, parameters, returns, func, is_async, blocking, params) =
            obj.extract()?;
        Ok(Spec {
            name,
            description,
            parameters,
            returns,
            func,
            is_async,
            blocking,
            params,
        })
    }
}

impl PyTool {
    /// The tool `spec` describes, converting records with `records`.
    pub fn new(
        py: Python<'_>,
        spec: Spec<'_>,
        records: Arc<Records>,
        limits: &fexpr::Limits,
    ) -> PyResult<PyTool> {
        let parameters = parse_json(&spec.parameters, "parameters")?;
        let mut definition = ToolDefinition::new(&spec.name, &spec.description, parameters);
        if let Some(returns) = &spec.returns {
            definition = definition.with_returns(parse_json(returns, "returns")?);
        }
        let params = spec
            .params
            .into_iter()
            .map(|(name, keyword_only, convert, python_default)| Param {
                name: PyString::intern(py, &name).unbind(),
                keyword_only,
                convert: convert.map(Bound::unbind),
                python_default,
            })
            .collect();
        Ok(PyTool {
            definition,
            callable: Arc::new(Callable {
                func: spec.func.unbind(),
                is_async: spec.is_async,
                params,
                records,
                max_output_bytes: limits.max_output_bytes,
                max_int_digits: limits.max_int_digits,
                max_observation_chars: limits.max_observation_chars,
            }),
            blocking: spec.blocking,
        })
    }
}

/// A JSON document given by the Python side (it wrote it with `json.dumps`).
pub fn parse_json(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("invalid {what} schema: {e}")))
}

impl Tool for PyTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Vec<Option<Value>>) -> ToolFuture {
        let state = RequestState::current();
        let depth = runtime::depth();
        let callable = self.callable.clone();
        if callable.is_async {
            return Box::pin(async move { callable.call_async(args, state, depth).await });
        }
        if self.blocking {
            let (done, ran) = tokio::sync::oneshot::channel();
            let run = move || {
                let _ = done.send(runtime::attach_kept(|py| {
                    callable.call_sync(py, args, state, depth)
                }));
            };
            let started = workers::run(run);
            return Box::pin(async move {
                if let Err(e) = started {
                    return Err(Error::new(
                        ErrorKind::ToolFailed,
                        format!("no thread could be started for the tool: {e}"),
                    ));
                }
                match ran.await {
                    Ok(Run::Done(result)) => result,
                    Ok(Run::Awaitable(fut, callable, state)) => {
                        callable.finish_async(fut, state).await
                    }
                    Err(_) => Err(Error::new(
                        ErrorKind::ToolFailed,
                        "the tool's thread failed (a panic in the binding)",
                    )),
                }
            });
        }
        match Python::attach(|py| callable.call_sync(py, args, state, depth)) {
            Run::Done(result) => Box::pin(std::future::ready(result)),
            Run::Awaitable(fut, callable, state) => {
                Box::pin(async move { callable.finish_async(fut, state).await })
            }
        }
    }
}

/// A Python awaitable being run on an asyncio loop.
type PyFuture = std::pin::Pin<Box<dyn Future<Output = PyResult<Py<PyAny>>> + Send>>;

/// What a sync call gave: a result, or an awaitable (a sync function that returned one).
enum Run {
    Done(Result<ToolOutput, Error>),
    Awaitable(PyFuture, Arc<Callable>, Option<Arc<RequestState>>),
}

/// The exception to raise in the caller instead of reporting `e` as the call's error: a
/// `BaseException` that is not an `Exception` (`SystemExit`, `KeyboardInterrupt`), also when
/// `fexpr._runtime.guard` carried it out of an async tool as `Escaped`.
fn escaping(py: Python<'_>, e: &PyErr) -> Option<PyErr> {
    static ESCAPED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if !e.is_instance_of::<PyException>(py) {
        return Some(e.clone_ref(py));
    }
    let escaped = ESCAPED
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("fexpr._runtime")?.getattr("Escaped")?.unbind())
        })
        .ok()?;
    let value = e.value(py);
    if !value.is_instance(escaped.bind(py)).unwrap_or(false) {
        return None;
    }
    value
        .getattr("exception")
        .ok()
        .map(|inner| PyErr::from_value(inner))
}

/// `error`, after handing an escaping exception (see [`escaping`]) in `e` to the request, which
/// stops and raises it in the caller.
fn stopping(py: Python<'_>, e: &PyErr, state: Option<&RequestState>, error: Error) -> Error {
    if let (Some(escape), Some(state)) = (escaping(py, e), state) {
        state.interrupt(escape);
    }
    error
}

impl Callable {
    fn call_sync(
        self: &Arc<Self>,
        py: Python<'_>,
        args: Vec<Option<Value>>,
        state: Option<Arc<RequestState>>,
        depth: u32,
    ) -> Run {
        let result = match self.arguments(py, args, state.as_deref()) {
            Ok((positional, keywords)) => runtime::at_depth(depth, || {
                in_session(py, state.as_deref(), || {
                    self.func.bind(py).call(positional, keywords.as_ref())
                })
            }),
            Err(error) => return Run::Done(Err(error)),
        };
        match result {
            Ok(obj) if is_awaitable(py, &obj) => {
                match self.schedule(py, obj, state.as_deref(), depth) {
                    Ok(fut) => Run::Awaitable(fut, self.clone(), state),
                    Err(e) => Run::Done(Err(self.failure(py, e, state.as_deref()))),
                }
            }
            Ok(obj) => Run::Done(self.finish(py, obj, state.as_deref())),
            Err(e) => Run::Done(Err(self.failure(py, e, state.as_deref()))),
        }
    }

    async fn call_async(
        self: Arc<Self>,
        args: Vec<Option<Value>>,
        state: Option<Arc<RequestState>>,
        depth: u32,
    ) -> Result<ToolOutput, Error> {
        let started = Python::attach(|py| {
            let (positional, keywords) = self.arguments(py, args, state.as_deref())?;
            let coroutine = self
                .func
                .bind(py)
                .call(positional, keywords.as_ref())
                .and_then(|obj| self.schedule(py, obj, state.as_deref(), depth));
            coroutine.map_err(|e| self.failure(py, e, state.as_deref()))
        });
        match started {
            Ok(fut) => self.finish_async(fut, state).await,
            Err(error) => Err(error),
        }
    }

    /// Await an awaitable started by [`Callable::schedule`] and convert its result.
    async fn finish_async(
        self: Arc<Self>,
        fut: PyFuture,
        state: Option<Arc<RequestState>>,
    ) -> Result<ToolOutput, Error> {
        let result = fut.await;
        Python::attach(|py| match result {
            Ok(obj) => self.finish(py, obj.into_bound(py), state.as_deref()),
            Err(e) => Err(self.failure(py, e, state.as_deref())),
        })
    }

    /// Start `awaitable` on the request's asyncio loop (the caller's for the async methods, the
    /// background loop for the sync ones), inside `fexpr._runtime.guard` at nesting `depth`:
    /// a `SystemExit` it raises comes back as an error rather than stopping the loop.
    fn schedule(
        &self,
        py: Python<'_>,
        awaitable: Bound<'_, PyAny>,
        state: Option<&RequestState>,
        depth: u32,
    ) -> PyResult<PyFuture> {
        static GUARD: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let locals = match state.and_then(|s| s.locals.as_ref()) {
            Some(locals) => locals.clone(),
            None => background_loop(py)?.clone(),
        };
        let guard = GUARD.get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("fexpr._runtime")?.getattr("guard")?.unbind())
        })?;
        let session = state.and_then(|s| s.session.as_ref());
        let guarded = guard.bind(py).call1((awaitable, depth, session))?;
        Ok(Box::pin(pyo3_async_runtimes::into_future_with_locals(
            &locals, guarded,
        )?))
    }

    /// The Python arguments: positional while the signature allows and nothing was skipped,
    /// then by keyword. A parameter not given (`None`) is left out, so its Python default
    /// applies.
    fn arguments<'py>(
        &self,
        py: Python<'py>,
        args: Vec<Option<Value>>,
        state: Option<&RequestState>,
    ) -> Result<(Bound<'py, PyTuple>, Option<Bound<'py, PyDict>>), Error> {
        let mut positional = Vec::with_capacity(args.len());
        let mut keywords: Option<Bound<'py, PyDict>> = None;
        let mut skipped = false;
        for (param, arg) in self.params.iter().zip(args) {
            let value = match arg {
                Some(Value::None) if param.python_default => None,
                other => other,
            };
            let Some(value) = value else {
                skipped = true;
                continue;
            };
            let obj = self
                .argument(py, param, value)
                .map_err(|e| stopping(py, &e, state, self.argument_error(py, param, &e)))?;
            if skipped || param.keyword_only {
                keywords
                    .get_or_insert_with(|| PyDict::new(py))
                    .set_item(param.name.bind(py), obj)
                    .map_err(|e| self.argument_error(py, param, &e))?;
            } else {
                positional.push(obj);
            }
        }
        let positional = PyTuple::new(py, positional).map_err(|e| self.raised(py, &e))?;
        Ok((positional, keywords))
    }

    fn argument<'py>(
        &self,
        py: Python<'py>,
        param: &Param,
        value: Value,
    ) -> PyResult<Bound<'py, PyAny>> {
        let obj = convert::to_py(py, value, &self.records, Strict::Yes)?;
        match &param.convert {
            Some(convert) => convert.bind(py).call1((obj,)),
            None => Ok(obj),
        }
    }

    fn argument_error(&self, py: Python<'_>, param: &Param, e: &PyErr) -> Error {
        Error::new(
            ErrorKind::Type,
            format!(
                "`{}`: the value does not make the parameter's Python type: {}",
                param.name.bind(py),
                describe(py, e)
            ),
        )
    }

    fn raised(&self, py: Python<'_>, e: &PyErr) -> Error {
        Error::new(ErrorKind::ToolFailed, describe(py, e))
    }

    /// A tool's exception as the call's error. An exception that is not an `Exception`
    /// (`KeyboardInterrupt`, `SystemExit`) also stops the request and reaches the caller.
    fn failure(&self, py: Python<'_>, e: PyErr, state: Option<&RequestState>) -> Error {
        let shown = escaping(py, &e).unwrap_or_else(|| e.clone_ref(py));
        stopping(py, &e, state, self.raised(py, &shown))
    }

    /// The tool's result as its output: converted to a [`Value`] for the model and for calls
    /// that use it, and kept as it is for the caller.
    fn finish(
        &self,
        py: Python<'_>,
        obj: Bound<'_, PyAny>,
        state: Option<&RequestState>,
    ) -> Result<ToolOutput, Error> {
        let (obj, observation) = match tool_output(py, &obj, self.max_observation_chars) {
            Ok(Some(parts)) => parts,
            Ok(None) => (obj, None),
            Err(e) => return Err(self.failure(py, e, state)),
        };
        // Within `max_output_bytes`, and within what the request's results may still take
        // (`max_eval_bytes` for them all): a result is refused while it is converted, before it
        // takes more memory than the limits allow.
        let left = state.map_or(usize::MAX, RequestState::results_left);
        let budget = match state {
            Some(state) if left < self.max_output_bytes => {
                Budget::new(fexpr::LimitKind::EvalBytes, left).message(format!(
                    "max_eval_bytes limit exceeded: the results of this request's tool calls \
                     would total more than {} bytes",
                    state.max_results()
                ))
            }
            _ => Budget::new(fexpr::LimitKind::OutputBytes, self.max_output_bytes),
        };
        let mut budget = budget.int_digits(self.max_int_digits);
        let value = match convert::from_py(&obj, &self.records, &mut budget) {
            Ok(value) => {
                if let Some(state) = state {
                    state.charge_results(budget.used());
                }
                value
            }
            Err(Unconverted::Raised(e)) => return Err(self.failure(py, e, state)),
            // A result fexpr has no value for (a generator, a socket) is an error, never a
            // stand-in passed on to the next call. The object is kept: the caller gets it when
            // this is the call the input names (the mark leads the hint until then).
            Err(e @ (Unconverted::Unsupported(_) | Unconverted::Collision(_))) => {
                let mut error = e.into_error(py, ErrorKind::Type, "the result");
                // Its repr is made here, within the call's deadline: a `__repr__` that never
                // returns holds up the tool's thread, not the request.
                let shown = state.map(|_| convert::bounded_repr(&obj, 2000));
                if let Some(mark) = state.and_then(|s| s.keep(obj.unbind(), observation, shown)) {
                    error.hint = Some(crate::output::marked_hint(&mark, error.hint.as_deref()));
                }
                return Err(error);
            }
            Err(e) => return Err(e.into_error(py, ErrorKind::ToolFailed, "the result")),
        };
        let observation = match state {
            Some(state) => state
                .keep(obj.unbind(), observation.clone(), None)
                .or(observation),
            None => observation,
        };
        Ok(ToolOutput {
            output: value,
            observation,
            is_streaming: false,
        })
    }
}

/// Run `f` (a sync tool's body) with `fexpr.current_session()` giving the request's session
/// object, when it has one.
fn in_session<T>(
    py: Python<'_>,
    state: Option<&RequestState>,
    f: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    static VAR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let Some(session) = state.and_then(|s| s.session.as_ref()) else {
        return f();
    };
    let var = VAR
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("fexpr._runtime")?.getattr("session")?.unbind())
        })?
        .bind(py);
    let token = var.call_method1("set", (session,))?;
    let out = f();
    var.call_method1("reset", (token,))?;
    out
}

/// `fexpr.ToolOutput(output, observation)`: its parts.
fn tool_output<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    max_chars: usize,
) -> PyResult<Option<(Bound<'py, PyAny>, Option<String>)>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if plain(obj) {
        return Ok(None);
    }
    let class = CLASS.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("fexpr._types")?.getattr("ToolOutput")?.unbind())
    })?;
    if !obj.is_instance(class.bind(py))? {
        return Ok(None);
    }
    let output = obj.getattr("output")?;
    let observation = obj.getattr("observation")?;
    // Bounded as the engine bounds observations (the tool's text is kept here, beside the
    // engine's mark, so the engine's own bound does not reach it).
    let observation = if observation.is_none() {
        None
    } else {
        Some(fexpr::error::clip(observation.str()?.to_str()?, max_chars))
    };
    Ok(Some((output, observation)))
}

/// Whether `obj` is of a common built-in type exactly (`None`, int, float, str, list, dict):
/// never awaitable, never a `ToolOutput`, so a result's checks for those are skipped.
fn plain(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_none()
        || obj.is_exact_instance_of::<pyo3::types::PyInt>()
        || obj.is_exact_instance_of::<pyo3::types::PyFloat>()
        || obj.is_exact_instance_of::<PyString>()
        || obj.is_exact_instance_of::<pyo3::types::PyList>()
        || obj.is_exact_instance_of::<PyDict>()
}

/// Whether a sync function's result must be awaited (a coroutine or other awaitable).
fn is_awaitable(py: Python<'_>, obj: &Bound<'_, PyAny>) -> bool {
    static INSPECT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if plain(obj) {
        return false;
    }
    INSPECT
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("inspect")?.getattr("isawaitable")?.unbind())
        })
        .and_then(|f| f.bind(py).call1((obj,))?.is_truthy())
        .unwrap_or(false)
}

/// The asyncio loop that runs async tools for the sync methods: one daemon thread, started on
/// first use (`fexpr._runtime.background_loop`).
fn background_loop(py: Python<'_>) -> PyResult<&TaskLocals> {
    static LOCALS: PyOnceLock<TaskLocals> = PyOnceLock::new();
    LOCALS.get_or_try_init(py, || {
        let event_loop = py
            .import("fexpr._runtime")?
            .getattr("background_loop")?
            .call0()?;
        Ok(TaskLocals::new(event_loop))
    })
}

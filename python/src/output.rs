//! What an execution gives back to Python: [`FunctionOutput`] (with the object the tool
//! returned), errors as values, repairs, receipts, the model-output and check results, and
//! [`Limits`].

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList};

use crate::convert::{self, describe, Records, Strict};
use crate::request::{is_mark, RequestState};

/// The category of an error: a small closed set to branch on.
#[pyclass(eq, eq_int, frozen, module = "fexpr._fexpr")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Syntax,
    Unsupported,
    UnknownName,
    UnknownTool,
    Arguments,
    Type,
    Value,
    Limit,
    ToolFailed,
    Sandbox,
    Config,
}

impl From<fexpr::ErrorKind> for ErrorKind {
    fn from(kind: fexpr::ErrorKind) -> ErrorKind {
        use fexpr::ErrorKind as K;
        match kind {
            K::Syntax => ErrorKind::Syntax,
            K::Unsupported => ErrorKind::Unsupported,
            K::UnknownName => ErrorKind::UnknownName,
            K::UnknownTool => ErrorKind::UnknownTool,
            K::Arguments => ErrorKind::Arguments,
            K::Type => ErrorKind::Type,
            K::Value => ErrorKind::Value,
            K::Limit => ErrorKind::Limit,
            K::ToolFailed => ErrorKind::ToolFailed,
            K::Sandbox => ErrorKind::Sandbox,
            K::Config => ErrorKind::Config,
            // A kind added to the engine after this binding: the closest general kind.
            _ => ErrorKind::Value,
        }
    }
}

#[pymethods]
impl ErrorKind {
    fn __str__(&self) -> &'static str {
        match self {
            ErrorKind::Syntax => "Syntax",
            ErrorKind::Unsupported => "Unsupported",
            ErrorKind::UnknownName => "UnknownName",
            ErrorKind::UnknownTool => "UnknownTool",
            ErrorKind::Arguments => "Arguments",
            ErrorKind::Type => "Type",
            ErrorKind::Value => "Value",
            ErrorKind::Limit => "Limit",
            ErrorKind::ToolFailed => "ToolFailed",
            ErrorKind::Sandbox => "Sandbox",
            ErrorKind::Config => "Config",
        }
    }
}

/// A structured error (a value, not an exception).
#[pyclass(frozen, name = "Error", module = "fexpr._fexpr")]
pub struct PyError {
    pub inner: fexpr::Error,
}

#[pymethods]
impl PyError {
    #[getter]
    fn kind(&self) -> ErrorKind {
        self.inner.kind.into()
    }
    #[getter]
    fn message(&self) -> &str {
        &self.inner.message
    }
    #[getter]
    fn span(&self) -> Option<(u32, u32)> {
        self.inner.span.map(|s| (s.start, s.end))
    }
    #[getter]
    fn hint(&self) -> Option<&str> {
        self.inner.hint.as_deref()
    }
    /// For a `Limit` error, the budget that ran out: a `Limits` field name (`"max_calls"`,
    /// `"deadline"`, `"call_deadline"`, …); else `None`.
    #[getter]
    fn limit(&self) -> Option<&'static str> {
        self.inner.limit.map(fexpr::LimitKind::field)
    }
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self) -> String {
        format!(
            "Error(kind=ErrorKind.{}, message={}, span={}, hint={})",
            ErrorKind::from(self.inner.kind).__str__(),
            fexpr::value::str_repr(&self.inner.message),
            self.inner
                .span
                .map_or("None".into(), |s| format!("({}, {})", s.start, s.end)),
            self.inner
                .hint
                .as_deref()
                .map_or("None".into(), fexpr::value::str_repr),
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyError>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &serde_json::to_value(&self.inner).unwrap_or_default())
    }
    /// Pickled as CBOR (errors cross process boundaries: Ray,
    /// multiprocessing).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Vec<u8>,))> {
        let bytes = to_cbor(&slf.get().inner).map_err(pickle_error)?;
        Ok((slf.getattr("_unpickle")?, (bytes,)))
    }
    #[staticmethod]
    fn _unpickle(bytes: &[u8]) -> PyResult<PyError> {
        let inner = from_cbor(bytes).map_err(pickle_error)?;
        Ok(PyError { inner })
    }
}

/// Pickles carry the engine's objects as CBOR: self-describing (the outputs' optional fields
/// are left out when empty) and with any map keys (fexpr's dicts).
fn to_cbor<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    ciborium::into_writer(value, &mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

fn from_cbor<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    // A value may nest `MAX_DECODE_DEPTH` levels, each a few CBOR levels (the variant's map,
    // its list), inside the output: ciborium's default 256 refused what fexpr made.
    ciborium::de::from_reader_with_recursion_limit(bytes, CBOR_DEPTH).map_err(|e| e.to_string())
}

/// The CBOR nesting a pickle may have: [`fexpr::value::MAX_DECODE_DEPTH`] values of up to three
/// CBOR levels each, and the output around them.
const CBOR_DEPTH: usize = 3 * fexpr::value::MAX_DECODE_DEPTH + 64;

fn pickle_error(e: String) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("not a pickled fexpr object: {e}"))
}

/// `error` as a Python object.
pub fn error(py: Python<'_>, error: fexpr::Error) -> PyResult<Py<PyError>> {
    Py::new(
        py,
        PyError {
            inner: crate::run::in_python(error),
        },
    )
}

/// One repair made to a call before it ran.
#[pyclass(frozen, module = "fexpr._fexpr")]
pub struct Repair {
    inner: fexpr::repair::Repair,
}

#[pymethods]
impl Repair {
    /// `JsonLiteral`, `IntegralFloat`, `SingleToList` or `EnumName`.
    #[getter]
    fn kind(&self) -> String {
        format!("{:?}", self.inner.kind)
    }
    #[getter]
    fn path(&self) -> &str {
        &self.inner.path
    }
    #[getter]
    fn span(&self) -> (u32, u32) {
        (self.inner.span.start, self.inner.span.end)
    }
    /// The text as written (`from` in the Rust API).
    #[getter]
    fn from_(&self) -> &str {
        &self.inner.from
    }
    #[getter]
    fn to(&self) -> &str {
        &self.inner.to
    }
    #[getter]
    fn reason(&self) -> &str {
        &self.inner.reason
    }
    fn __repr__(&self) -> String {
        format!(
            "Repair(kind={}, path={}, from_={}, to={})",
            self.kind(),
            fexpr::value::str_repr(&self.inner.path),
            fexpr::value::str_repr(&self.inner.from),
            fexpr::value::str_repr(&self.inner.to)
        )
    }
}

fn repairs(py: Python<'_>, repairs: &[fexpr::repair::Repair]) -> PyResult<Vec<Py<Repair>>> {
    repairs
        .iter()
        .map(|r| Py::new(py, Repair { inner: r.clone() }))
        .collect()
}

/// What a sandboxed evaluation cost.
#[pyclass(frozen, get_all, module = "fexpr._fexpr")]
pub struct Receipt {
    fuel_used: u64,
    peak_memory_bytes: usize,
    /// Seconds.
    wall_time: f64,
    host_calls: u32,
}

#[pymethods]
impl Receipt {
    fn __repr__(&self) -> String {
        format!(
            "Receipt(fuel_used={}, peak_memory_bytes={}, wall_time={}, host_calls={})",
            self.fuel_used, self.peak_memory_bytes, self.wall_time, self.host_calls
        )
    }
}

/// A hint led by `mark` (a kept object's), then `hint`: how a tool's error carries the object
/// it could not convert to the output the caller sees.
pub fn marked_hint(mark: &str, hint: Option<&str>) -> String {
    format!("{mark}\u{1}{}", hint.unwrap_or_default())
}

/// The mark and the hint of [`marked_hint`]'s text.
fn split_marked_hint(text: &str) -> Option<(&str, &str)> {
    if !is_mark(text) {
        return None;
    }
    let end = text.get(1..)?.find('\u{1}')? + 1;
    Some((text.get(..end)?, text.get(end + 1..)?))
}

/// The result of one call: an output or a structured error.
#[pyclass(frozen, module = "fexpr._fexpr")]
pub struct FunctionOutput {
    inner: fexpr::FunctionOutput,
    output: Option<Py<PyAny>>,
    error: Option<Py<PyError>>,
    observation: Option<String>,
    records: Arc<Records>,
    parsed_input: PyOnceLock<Py<PyAny>>,
    /// The object the caller gave for this call (a `Function`, a `FunctionExpression`),
    /// shown as `input` instead of the text.
    given: Option<Py<PyAny>>,
}

impl FunctionOutput {
    /// The engine's output this was made from, with the observation the model is shown: what
    /// a provider reply is built from (`Response::openai_messages`).
    pub fn engine(&self) -> fexpr::FunctionOutput {
        let mut out = self.inner.clone();
        out.observation.clone_from(&self.observation);
        out
    }

    /// The Python form of `out`: its output is the object the top-level tool call returned
    /// (kept in `state`), else the output value converted.
    pub fn new(
        py: Python<'_>,
        mut out: fexpr::FunctionOutput,
        state: Option<&RequestState>,
        records: &Arc<Records>,
    ) -> PyResult<FunctionOutput> {
        let mut output = None;
        let mut observation = out.observation.take();
        // A call whose result fexpr has no value for: an error, and the object for the caller
        // when the call is the one the input names (its `parsed_input`).
        let top = out.parsed_input.is_some();
        if let Err(error) = &mut out.output {
            let marked = error.hint.as_deref().and_then(split_marked_hint);
            if let Some((mark, hint)) = marked.map(|(m, h)| (m.to_string(), h.to_string())) {
                error.hint = (!hint.is_empty()).then_some(hint);
                if let Some(claimed) = state.filter(|_| top).and_then(|s| s.claim(&mark)) {
                    // Shown as its repr (bounded, made during the call); no later call used it.
                    let shown = claimed.shown.unwrap_or_else(|| "?".to_string());
                    out.output = Ok(fexpr::Value::Str(shown));
                    output = Some(claimed.object);
                    observation = claimed.observation;
                }
            }
        }
        if let Some(mark) = observation.as_deref().filter(|o| is_mark(o)) {
            match state.and_then(|s| s.claim(mark)) {
                Some(claimed) => {
                    output = Some(claimed.object);
                    observation = claimed.observation;
                }
                None => observation = None,
            }
        }
        out.observation = observation.clone();
        if output.is_none() {
            if let Ok(value) = out.output.clone() {
                match convert::to_py(py, value, records, Strict::Yes) {
                    Ok(obj) => output = Some(obj.unbind()),
                    // `KeyboardInterrupt` from a record class: raised, as Python raises it.
                    Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                        return Err(e)
                    }
                    Err(e) => {
                        let error = fexpr::Error::new(
                            fexpr::ErrorKind::Value,
                            format!(
                                "the output does not make its Python type: {}",
                                describe(py, &e)
                            ),
                        );
                        out.output = Err(error);
                    }
                }
            }
        }
        let error = out
            .output
            .as_ref()
            .err()
            .cloned()
            .map(|e| error(py, e))
            .transpose()?;
        Ok(FunctionOutput {
            inner: out,
            output,
            error,
            observation,
            records: records.clone(),
            parsed_input: PyOnceLock::new(),
            given: None,
        })
    }

    /// This output with `object`, what the caller gave, as its `input` (AdalFlow's
    /// `FunctionOutput.input`: the `Function` or `FunctionExpression` itself).
    pub fn given(mut self, object: Py<PyAny>) -> FunctionOutput {
        self.given = Some(object);
        self
    }
}

#[pymethods]
impl FunctionOutput {
    /// The tool name (or, when the call could not be read, the input clipped).
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }
    /// What this call came from: the object the caller gave (a `Function`, a
    /// `FunctionExpression`, a str), else the text (or JSON) of the call.
    #[getter]
    fn input(&self, py: Python<'_>) -> Py<PyAny> {
        match &self.given {
            Some(object) => object.clone_ref(py),
            None => pyo3::types::PyString::new(py, &self.inner.input)
                .into_any()
                .unbind(),
        }
    }
    /// The call as evaluated (a `Function`), when it got that far.
    #[getter]
    fn parsed_input(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.inner.parsed_input {
            None => Ok(py.None()),
            Some(f) => self
                .parsed_input
                .get_or_try_init(py, || function(py, f, &self.records).map(Bound::unbind))
                .map(|o| o.clone_ref(py)),
        }
    }
    /// What the tool returned (the object itself for the call the input names).
    #[getter]
    fn output(&self, py: Python<'_>) -> Py<PyAny> {
        self.output
            .as_ref()
            .map_or_else(|| py.None(), |o| o.clone_ref(py))
    }
    /// Why there is no output.
    #[getter]
    fn error(&self, py: Python<'_>) -> Option<Py<PyError>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }
    /// The short text a model should see, when the tool gave one (`ToolOutput`).
    #[getter]
    fn observation(&self) -> Option<&str> {
        self.observation.as_deref()
    }
    /// Repairs made to the call before it ran (raw model output only).
    #[getter]
    fn repairs(&self, py: Python<'_>) -> PyResult<Vec<Py<Repair>>> {
        repairs(py, &self.inner.repairs)
    }
    /// What the sandboxed evaluation cost; `None` when run natively.
    #[getter]
    fn receipt(&self, py: Python<'_>) -> PyResult<Option<Py<Receipt>>> {
        self.inner
            .receipt
            .as_ref()
            .map(|r| {
                Py::new(
                    py,
                    Receipt {
                        fuel_used: r.fuel_used,
                        peak_memory_bytes: r.peak_memory_bytes,
                        wall_time: r.wall_time.as_secs_f64(),
                        host_calls: r.host_calls,
                    },
                )
            })
            .transpose()
    }
    /// The call's id: the model's (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`, a JSON
    /// call's `id`) when it gave one, else a generated unique `call_…` id.
    #[getter]
    fn call_id(&self) -> &str {
        &self.inner.call_id
    }
    /// `{"name", "args", "kwargs", "output", "error"}` (plus `observation`, `receipt`,
    /// `repairs` when present): the JSON line of `fexpr exec`, as Python data.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.inner.to_json())
    }
    /// Pickled as the engine's output (CBOR) with the Python output object and the
    /// parsed call (`Function`), each pickled as itself: outputs cross process boundaries
    /// (Ray, multiprocessing) with the objects the tools returned.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Vec<u8>, Py<PyAny>, Py<PyAny>))> {
        let py = slf.py();
        let this = slf.get();
        let bytes = to_cbor(&this.inner).map_err(pickle_error)?;
        Ok((
            slf.getattr("_unpickle")?,
            (bytes, this.output(py), this.parsed_input(py)?),
        ))
    }
    #[staticmethod]
    fn _unpickle(
        py: Python<'_>,
        bytes: &[u8],
        output: Py<PyAny>,
        parsed_input: Py<PyAny>,
    ) -> PyResult<FunctionOutput> {
        let inner: fexpr::FunctionOutput = from_cbor(bytes).map_err(pickle_error)?;
        let error = inner
            .output
            .as_ref()
            .err()
            .cloned()
            .map(|e| error(py, e))
            .transpose()?;
        let cell = PyOnceLock::new();
        if !parsed_input.is_none(py) {
            let _ = cell.set(py, parsed_input);
        }
        Ok(FunctionOutput {
            observation: inner.observation.clone(),
            output: (!output.is_none(py)).then_some(output),
            error,
            records: Arc::new(Records::empty(py)),
            parsed_input: cell,
            given: None,
            inner,
        })
    }
    /// This output without its output object: `error` (a `Value` error) in its place. For the
    /// fan-out, when the object cannot cross a process boundary.
    fn _without_output(&self, py: Python<'_>, error: String) -> PyResult<FunctionOutput> {
        let mut inner = self.inner.clone();
        inner.output = Err(fexpr::Error::new(fexpr::ErrorKind::Value, error));
        Ok(FunctionOutput {
            error: inner
                .output
                .as_ref()
                .err()
                .cloned()
                .map(|e| self::error(py, e))
                .transpose()?,
            observation: self.observation.clone(),
            output: None,
            records: self.records.clone(),
            parsed_input: PyOnceLock::new(),
            given: self.given.as_ref().map(|g| g.clone_ref(py)),
            inner,
        })
    }
    /// `add(a=2, b=3) -> 5`, or `... -> error: ...`.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let repr = |o: Option<Bound<'_, PyAny>>| -> PyResult<String> {
            match o {
                Some(o) => Ok(o.repr()?.to_string()),
                None => Ok("None".into()),
            }
        };
        Ok(format!(
            "FunctionOutput(name={}, input={}, parsed_input={}, output={}, error={}, observation={})",
            fexpr::value::str_repr(&self.inner.name),
            repr(Some(self.input(py).into_bound(py)))?,
            repr(Some(self.parsed_input(py)?.into_bound(py)))?,
            repr(self.output.as_ref().map(|o| o.bind(py).clone()))?,
            repr(self.error.as_ref().map(|e| e.bind(py).clone().into_any()))?,
            self.observation
                .as_deref()
                .map_or("None".into(), fexpr::value::str_repr),
        ))
    }
}

/// A `fexpr.Function` (the Python dataclass) for an evaluated call.
pub fn function<'py>(
    py: Python<'py>,
    f: &fexpr::Function,
    records: &Records,
) -> PyResult<Bound<'py, PyAny>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = CLASS.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("fexpr._types")?.getattr("Function")?.unbind())
    })?;
    let args = f
        .args
        .iter()
        .map(|v| convert::to_py(py, v.clone(), records, Strict::No))
        .collect::<PyResult<Vec<_>>>()?;
    let kwargs = PyDict::new(py);
    for (k, v) in &f.kwargs {
        kwargs.set_item(k, convert::to_py(py, v.clone(), records, Strict::No)?)?;
    }
    let call = PyDict::new(py);
    call.set_item("name", &f.name)?;
    call.set_item("args", PyList::new(py, args)?)?;
    call.set_item("kwargs", kwargs)?;
    class.bind(py).call((), Some(&call))
}

/// JSON data as Python data (dicts, lists, str, int, float, bool, None).
pub fn json_to_py<'py>(py: Python<'py>, json: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as J;
    Ok(match json {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        J::String(s) => pyo3::types::PyString::new(py, s).into_any(),
        J::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        J::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Text a model wrote that was not used as a call.
#[pyclass(frozen, get_all, module = "fexpr._fexpr")]
pub struct Ignored {
    span: (u32, u32),
    /// `ChatToken`, `Fence`, `Tag`, `Prose`, `JsonData`, `NotATool`, `Reasoning` or `Budget`.
    reason: String,
    /// The text, clipped to 80 characters.
    text: String,
}

#[pymethods]
impl Ignored {
    /// Pickled as its fields (batches cross process boundaries: `fexpr.fanout`).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, ((u32, u32), String, String))> {
        let this = slf.get();
        Ok((
            slf.getattr("_unpickle")?,
            (this.span, this.reason.clone(), this.text.clone()),
        ))
    }
    #[staticmethod]
    fn _unpickle(span: (u32, u32), reason: String, text: String) -> Ignored {
        Ignored { span, reason, text }
    }
    fn __repr__(&self) -> String {
        format!(
            "Ignored(span={:?}, reason={}, text={})",
            self.span,
            self.reason,
            fexpr::value::str_repr(&self.text)
        )
    }
}

impl Ignored {
    /// The Python form of a stretch of ignored text.
    pub fn from_rust(i: &fexpr::front::Ignored) -> Ignored {
        Ignored {
            span: (i.span.start, i.span.end),
            reason: format!("{:?}", i.reason),
            text: i.text.clone(),
        }
    }
}

fn ignored(py: Python<'_>, ignored: &[fexpr::front::Ignored]) -> PyResult<Vec<Py<Ignored>>> {
    ignored
        .iter()
        .map(|i| Py::new(py, Ignored::from_rust(i)))
        .collect()
}

/// What running a model's raw output produced.
#[pyclass(frozen, get_all, module = "fexpr._fexpr")]
pub struct Executed {
    /// One output per call found, in order.
    outputs: Vec<Py<FunctionOutput>>,
    /// Text that was not used, with reasons.
    ignored: Vec<Py<Ignored>>,
    /// Why nothing ran when the text held no call (`outputs` is empty): an `Unsupported`
    /// error such as `no call to run: the text is prose`; `None` when there are outputs.
    nothing_to_run: Option<Py<PyError>>,
}

impl Executed {
    pub fn new(
        py: Python<'_>,
        run: fexpr::Response,
        state: Option<&RequestState>,
        records: &Arc<Records>,
    ) -> PyResult<Executed> {
        let nothing_to_run = run.nothing_to_run().map(|e| error(py, e)).transpose()?;
        Ok(Executed {
            outputs: outputs(py, run.outputs, state, records)?,
            ignored: ignored(py, &run.ignored)?,
            nothing_to_run,
        })
    }
}

#[pymethods]
impl Executed {
    /// Pickled as its outputs and ignored stretches, each pickled as itself.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        (
            Vec<Py<FunctionOutput>>,
            Vec<Py<Ignored>>,
            Option<Py<PyError>>,
        ),
    )> {
        let py = slf.py();
        let this = slf.get();
        Ok((
            slf.getattr("_unpickle")?,
            (
                this.outputs.iter().map(|o| o.clone_ref(py)).collect(),
                this.ignored.iter().map(|i| i.clone_ref(py)).collect(),
                this.nothing_to_run.as_ref().map(|e| e.clone_ref(py)),
            ),
        ))
    }
    /// Also how `fexpr.fanout` rebuilds one whose outputs it changed.
    #[staticmethod]
    #[pyo3(signature = (outputs, ignored, nothing_to_run=None))]
    fn _unpickle(
        outputs: Vec<Py<FunctionOutput>>,
        ignored: Vec<Py<Ignored>>,
        nothing_to_run: Option<Py<PyError>>,
    ) -> Executed {
        let nothing_to_run = nothing_to_run.filter(|_| outputs.is_empty());
        Executed {
            outputs,
            ignored,
            nothing_to_run,
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "Executed(outputs=<{} outputs>, ignored=<{} stretches>)",
            self.outputs.len(),
            self.ignored.len()
        )
    }
}

/// The Python forms of `outputs`, in order.
pub fn outputs(
    py: Python<'_>,
    outputs: Vec<fexpr::FunctionOutput>,
    state: Option<&RequestState>,
    records: &Arc<Records>,
) -> PyResult<Vec<Py<FunctionOutput>>> {
    outputs
        .into_iter()
        .map(|o| Py::new(py, FunctionOutput::new(py, o, state, records)?))
        .collect()
}

/// The verdict on one call of a checked output.
#[pyclass(frozen, get_all, module = "fexpr._fexpr")]
pub struct Verdict {
    name: String,
    span: (u32, u32),
    /// The call's own source (the spans of the error and repairs, like `span`, index the
    /// whole checked text).
    input: String,
    /// The arguments as written (after repairs), by parameter name.
    kwargs: Py<PyDict>,
    valid: bool,
    error: Option<Py<PyError>>,
    repairs: Vec<Py<Repair>>,
}

#[pymethods]
impl Verdict {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Verdict(name={}, kwargs={}, valid={}, error={})",
            fexpr::value::str_repr(&self.name),
            self.kwargs.bind(py).repr()?,
            if self.valid { "True" } else { "False" },
            match &self.error {
                Some(e) => e.bind(py).repr()?.to_string(),
                None => "None".into(),
            }
        ))
    }
}

/// The verdicts on a whole model output.
#[pyclass(frozen, get_all, module = "fexpr._fexpr")]
pub struct Checked {
    verdicts: Vec<Py<Verdict>>,
    ignored: Vec<Py<Ignored>>,
    /// Set when the text was refused as a whole (too large).
    error: Option<Py<PyError>>,
}

impl Checked {
    pub fn new(
        py: Python<'_>,
        checked: fexpr::check::Checked,
        records: &Records,
    ) -> PyResult<Checked> {
        let verdicts = checked
            .verdicts
            .into_iter()
            .map(|v| {
                let kwargs = PyDict::new(py);
                for (k, value) in v.kwargs {
                    kwargs.set_item(k, convert::to_py(py, value, records, Strict::No)?)?;
                }
                Py::new(
                    py,
                    Verdict {
                        name: v.name,
                        span: (v.span.start, v.span.end),
                        input: v.input,
                        kwargs: kwargs.unbind(),
                        valid: v.valid,
                        error: v.error.map(|e| error(py, e)).transpose()?,
                        repairs: repairs(py, &v.repairs)?,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Checked {
            verdicts,
            ignored: ignored(py, &checked.ignored)?,
            error: checked.error.map(|e| error(py, e)).transpose()?,
        })
    }
}

#[pymethods]
impl Checked {
    fn __repr__(&self) -> String {
        format!(
            "Checked(verdicts=<{} verdicts>, ignored=<{} stretches>)",
            self.verdicts.len(),
            self.ignored.len()
        )
    }
}

/// Every budget fexpr enforces; the defaults are safe for untrusted model output.
#[pyclass(frozen, module = "fexpr._fexpr")]
#[derive(Clone)]
pub struct Limits {
    pub inner: fexpr::Limits,
}

/// A budget's value as Python sees it: a count as an `int`, a duration in seconds.
trait PyLimit: Sized {
    type Py;
    fn to_py(&self) -> Self::Py;
    fn from_py(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Self>;
}

macro_rules! py_count {
    ($($ty:ty),*) => {$(
        impl PyLimit for $ty {
            type Py = $ty;
            fn to_py(&self) -> $ty {
                *self
            }
            fn from_py(name: &str, value: &Bound<'_, PyAny>) -> PyResult<$ty> {
                value.extract().map_err(|_| {
                    let given = value.repr().map(|r| r.to_string()).unwrap_or_default();
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "{name} must be a whole number from 0 to {}, not {given}",
                        <$ty>::MAX
                    ))
                })
            }
        }
    )*};
}
py_count!(usize, u64, u32);

impl PyLimit for Duration {
    type Py = f64;
    fn to_py(&self) -> f64 {
        self.as_secs_f64()
    }
    fn from_py(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Duration> {
        let seconds: f64 = value.extract()?;
        fexpr::limits::seconds(seconds)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{name} must be {e}")))
    }
}

/// `Limits`' constructor, getters and repr from the engine's one table of limits
/// (`fexpr::limit_table!`): a limit added there is here too.
macro_rules! py_limits {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty = $default:expr, $kind:ident, $mode:ident, $(ceiling $ceiling:expr,)?
            $bounds:literal;
    )*) => {
        #[pymethods]
        impl Limits {
            /// `Limits(max_calls=..., deadline=...)`: the defaults with the fields given (each
            /// a field of the engine's `Limits`; durations in seconds).
            #[new]
            #[pyo3(signature = (**fields))]
            fn new(fields: Option<&Bound<'_, PyDict>>) -> PyResult<Limits> {
                let mut l = fexpr::Limits::default();
                for (key, value) in fields.into_iter().flat_map(|f| f.iter()) {
                    if value.is_none() {
                        continue;
                    }
                    let key: String = key.extract()?;
                    match key.as_str() {
                        $( stringify!($field) => {
                            l.$field = <$ty as PyLimit>::from_py(stringify!($field), &value)?;
                        } )*
                        other => {
                            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                                "Limits() got an unexpected keyword argument '{other}'; the limits are {}",
                                [$(stringify!($field)),*].join(", ")
                            )))
                        }
                    }
                }
                Ok(Limits { inner: l })
            }

            $(
                #[getter]
                fn $field(&self) -> <$ty as PyLimit>::Py {
                    self.inner.$field.to_py()
                }
            )*

            fn __repr__(&self) -> String {
                let fields: Vec<String> = vec![$(
                    format!(concat!(stringify!($field), "={}"), self.inner.$field.to_py())
                ),*];
                format!("Limits({})", fields.join(", "))
            }
        }
    };
}

fexpr::limit_table!(py_limits);

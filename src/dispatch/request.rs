//! One way to run: [`ToolManager::run`] takes an [`Input`] (expression text, raw model output,
//! `Function`s, `FunctionExpression`s, JSON in any form, OpenAI or Anthropic messages) and gives
//! a [`Request`]; its options (session, limits, repairs, native or sandboxed) are set with
//! builder methods, and awaiting it gives a [`Response`]. Every input form goes through the
//! same limits and the same tools, natively or inside the sandbox, with the same outputs.
//!
//! ```
//! use fexpr::{Input, Session};
//!
//! let manager = fexpr::demo::manager();
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let response = rt.block_on(async {
//!     manager.run("Sure:\n```python\n[add(a=2.0, b=3), multiply(a=2, b=x)]\n```")
//!         .session(Session::new().id("trajectory-7"))
//!         .await
//! });
//! assert_eq!(response.outputs[0].output, Ok(fexpr::Value::Int(5)));
//! assert_eq!(response.outputs[0].repairs[0].from, "2.0");
//! assert_eq!(response.outputs[1].output, Ok(fexpr::Value::Int(4)));
//! assert_eq!(response.ignored.len(), 3); // the prose and the two fence markers
//! let strict = rt.block_on(manager.run(Input::expr("add(a=2.0, b=3)")).into_future());
//! assert_eq!(strict.outputs[0].output.as_ref().err().unwrap().kind, fexpr::ErrorKind::Type);
//! # use std::future::IntoFuture;
//! ```

use serde_json::{json, Value as Json};
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::call::{Function, FunctionExpression, FunctionOutput};
use crate::dispatch::boxed;
use crate::dispatch::manager::{single_output, Scope, ToolManager};
use crate::dispatch::session::Session;
use crate::error::{clip, Error, ErrorKind};
use crate::front::check::{
    as_written_call, check_reading, check_text, message_call, plan_to_run, Checked, MessageCall,
    Planned,
};
use crate::front::json_input;
use crate::front::repair::RepairOptions;
use crate::front::route::{route_read, Door, Route};
use crate::front::Ignored;
use crate::limits::Limits;
#[cfg(feature = "sandbox")]
use crate::sandbox::wire::GuestInput;
use crate::syntax::Expr;
use crate::value::Value;

/// What a [`Request`] runs. Build one with its constructors; `&str` and `String` convert to
/// [`Input::model_output`], the forgiving front door, and a [`Function`] to
/// [`Input::function`].
#[derive(Clone, Debug, PartialEq)]
pub struct Input(Form);

/// The forms of input, behind [`Input`]'s constructors (so new forms can be added).
#[derive(Clone, Debug, PartialEq)]
enum Form {
    /// Python expression text: one call, or a list/tuple of calls, exactly as written.
    Expr(String),
    /// Raw model text, read by the front-end (`fexpr::front`).
    ModelOutput(String),
    /// Calls with evaluated arguments.
    Functions(Vec<Function>),
    /// Call expressions, one output each.
    FuncExprs(Vec<FunctionExpression>),
    /// JSON text in any JSON form.
    Json(String),
    /// JSON already parsed (an OpenAI or Anthropic message, or any JSON form).
    JsonValue(Json),
}

impl Input {
    /// Python expression text: one call or a list/tuple of calls, evaluated exactly as
    /// written — no extraction, and no repairs unless [`Request::repair`] asks for them.
    pub fn expr(text: impl Into<String>) -> Input {
        Input(Form::Expr(text.into()))
    }

    /// Raw model text: prose, fences, tags, chat tokens, JSON forms (fexpr's, OpenAI's,
    /// Anthropic's, ...), lists of calls (`fexpr::front::extract`). Every repair is on unless
    /// [`Request::repair`] says otherwise; every stretch not used is in [`Response::ignored`].
    /// A plain expression gives what [`Input::expr`] gives (plus any repairs).
    pub fn model_output(text: impl Into<String>) -> Input {
        Input(Form::ModelOutput(text.into()))
    }

    /// One call the program built (name + evaluated arguments). Its arguments are values,
    /// not text: repairs do not apply.
    pub fn function(func: Function) -> Input {
        Input(Form::Functions(vec![func]))
    }

    /// Several calls the program built, run concurrently; one output each, in order.
    pub fn functions(funcs: Vec<Function>) -> Input {
        Input(Form::Functions(funcs))
    }

    /// Several call expressions, each read as [`Input::expr`], run concurrently; one output
    /// per expression, in order (an expression holding several calls gives an error output).
    pub fn func_exprs(exprs: Vec<FunctionExpression>) -> Input {
        Input(Form::FuncExprs(exprs))
    }

    /// JSON text in any JSON form: a `Function` (`{"name", "args", "kwargs"}`), a
    /// `FunctionExpression` (`{"action"}`), lists of them, an OpenAI assistant message, its
    /// `tool_calls` or one tool call, Anthropic `tool_use` blocks or a message holding them.
    /// Read by `fexpr::front::json_input` within the limits (a duplicate key is an error). fexpr's
    /// own forms are evaluated as written, like an expression's list of calls (spans index the
    /// text; no repairs); the other forms go through the front-end as
    /// [`Input::model_output`] does, each call repaired (unless [`Request::repair`] says
    /// otherwise) and keeping the model's `id` as its output's `call_id` (a `Function` with
    /// an `id` field too). Text that is not JSON gets the JSON reader's error.
    pub fn json(text: impl Into<String>) -> Input {
        Input(Form::Json(text.into()))
    }

    /// An OpenAI assistant message (or its `tool_calls`, or one tool call) already parsed.
    /// It is written out as compact JSON (refused past `max_depth` or `max_source_bytes`) and
    /// read as [`Input::json`] reads text, so the same limits apply; duplicate keys cannot be
    /// seen in a `serde_json::Value` (the last one won). Spans index `value.to_string()`. A
    /// message that is one call to a tool whose arguments bind as written runs (natively)
    /// without being written out: the same response, at about the expression door's cost.
    pub fn openai(value: Json) -> Input {
        Input(Form::JsonValue(value))
    }

    /// An Anthropic message (or its `content`, or one `tool_use` block) already parsed; see
    /// [`Input::openai`].
    pub fn anthropic(value: Json) -> Input {
        Input(Form::JsonValue(value))
    }

    /// The text of a text form (expression, model output, JSON text); empty for the others.
    fn text(&self) -> &str {
        match &self.0 {
            Form::Expr(text) | Form::ModelOutput(text) | Form::Json(text) => text,
            _ => "",
        }
    }

    /// The repairs an input of this form gets when the request names none: every repair for
    /// model output and JSON, none for expressions and `Function`s.
    fn default_repairs(&self) -> RepairOptions {
        match &self.0 {
            Form::ModelOutput(_) | Form::Json(_) | Form::JsonValue(_) => RepairOptions::default(),
            _ => RepairOptions::strict(),
        }
    }
}

impl From<&str> for Input {
    /// [`Input::model_output`].
    fn from(text: &str) -> Input {
        Input::model_output(text)
    }
}

impl From<String> for Input {
    /// [`Input::model_output`].
    fn from(text: String) -> Input {
        Input::model_output(text)
    }
}

impl From<Function> for Input {
    /// [`Input::function`].
    fn from(func: Function) -> Input {
        Input::function(func)
    }
}

/// What running a request produced: one output per call, and the text not used.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Response {
    /// One output per call, in order (repairs recorded on each).
    pub outputs: Vec<FunctionOutput>,
    /// Text of a model's output that was not used, with reasons ([`Input::model_output`] and
    /// the JSON forms).
    pub ignored: Vec<Ignored>,
}

impl Response {
    /// Why nothing ran, when the model text held no call: `None` when there is an output
    /// (every call gets one), else [`nothing_to_run`] of the text not used. A message or text
    /// without a call gets no output at all (an output answers a call, and there is none to
    /// answer); this is what a program shows or logs instead.
    ///
    /// ```
    /// use fexpr::Input;
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let response = rt.block_on(async { manager.run(Input::model_output("All done, thanks!")).await });
    /// assert!(response.outputs.is_empty());
    /// assert_eq!(response.nothing_to_run().unwrap().message, "no call to run: the text is prose");
    /// let response = rt.block_on(async { manager.run(Input::model_output("add(a=1, b=2)")).await });
    /// assert!(response.nothing_to_run().is_none());
    /// ```
    pub fn nothing_to_run(&self) -> Option<Error> {
        self.outputs
            .is_empty()
            .then(|| nothing_to_run(&self.ignored))
    }

    /// The OpenAI `role: tool` messages answering the calls: `{"role": "tool",
    /// "tool_call_id": output.call_id, "content": ...}`, in order, the content what the model
    /// can read ([`Response::reply_content`]). A message with no tool call gets none (the
    /// response has no output: there was nothing to run).
    ///
    /// ```
    /// use fexpr::Input;
    /// let manager = fexpr::demo::manager();
    /// let message = serde_json::json!({"role": "assistant", "tool_calls": [{"id": "call_a",
    ///     "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]});
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let response = rt.block_on(async { manager.run(Input::openai(message)).await });
    /// assert_eq!(response.openai_messages(&manager), [serde_json::json!(
    ///     {"role": "tool", "tool_call_id": "call_a", "content": "3"})]);
    /// let done = serde_json::json!({"role": "assistant", "content": "Done.", "tool_calls": []});
    /// let response = rt.block_on(async { manager.run(Input::openai(done)).await });
    /// assert!(response.outputs.is_empty() && response.openai_messages(&manager).is_empty());
    /// ```
    pub fn openai_messages(&self, manager: &ToolManager) -> Vec<Json> {
        self.outputs
            .iter()
            .map(|out| {
                json!({"role": "tool", "tool_call_id": out.call_id, "content": Response::reply_content(manager, out)})
            })
            .collect()
    }

    /// The Anthropic `tool_result` blocks answering the calls: `{"type": "tool_result",
    /// "tool_use_id": output.call_id, "content": ..., "is_error"}`, in order (put them in one
    /// `user` message), the content as in [`Response::openai_messages`].
    pub fn anthropic_blocks(&self, manager: &ToolManager) -> Vec<Json> {
        self.outputs
            .iter()
            .map(|out| {
                json!({
                    "type": "tool_result",
                    "tool_use_id": out.call_id,
                    "content": Response::reply_content(manager, out),
                    "is_error": out.output.is_err(),
                })
            })
            .collect()
    }

    /// What a model reads of `out` in a provider reply: the tool's observation when it gave
    /// one, a string result as its text (not its repr), another result summarized
    /// ([`ToolManager::observation`]), an error as its kind, message and hint — without its
    /// span, which indexes text the model does not see — all clipped to the manager's
    /// observation limit.
    ///
    /// ```
    /// use fexpr::{FunctionOutput, Response, Value, Error, ErrorKind, Span};
    /// let manager = fexpr::demo::manager();
    /// let mut out = FunctionOutput::failed("add", "add(a=1)", Error::new(ErrorKind::Arguments,
    ///     "add() missing 1 required argument: `b`").at(Span::new(0, 8)).with_hint("signature: add(a, b)"));
    /// assert_eq!(Response::reply_content(&manager, &out),
    ///     "error: Arguments: add() missing 1 required argument: `b`; hint: signature: add(a, b)");
    /// out.output = Ok(Value::Str("sunny in Paris".into()));
    /// assert_eq!(Response::reply_content(&manager, &out), "sunny in Paris");
    /// ```
    pub fn reply_content(manager: &ToolManager, out: &FunctionOutput) -> String {
        let max = manager.max_observation_chars();
        match (&out.observation, &out.output) {
            (None, Ok(Value::Str(text))) => clip(text, max),
            (None, Err(error)) => {
                let mut text = format!("error: {:?}: {}", error.kind, error.message);
                if let Some(hint) = &error.hint {
                    text.push_str("; hint: ");
                    text.push_str(hint);
                }
                clip(&text, max)
            }
            _ => manager.observation(out),
        }
    }
}

impl IntoIterator for Response {
    type Item = FunctionOutput;
    type IntoIter = std::vec::IntoIter<FunctionOutput>;

    fn into_iter(self) -> Self::IntoIter {
        self.outputs.into_iter()
    }
}

impl<'a> IntoIterator for &'a Response {
    type Item = &'a FunctionOutput;
    type IntoIter = std::slice::Iter<'a, FunctionOutput>;

    fn into_iter(self) -> Self::IntoIter {
        self.outputs.iter()
    }
}

/// One request to a [`ToolManager`]: made by [`ToolManager::run`], configured with the
/// builder methods, run by awaiting it (`IntoFuture`, output [`Response`]). The request owns a
/// clone of the manager, so its future is `Send + 'static`:
/// `tokio::spawn(manager.run(text).into_future())` works.
#[must_use = "a request does nothing until it is awaited"]
pub struct Request {
    manager: ToolManager,
    input: Input,
    session: Session,
    /// Boxed: a request's own limits are rare, and every future of a request holds it (each
    /// await moves it; inline it would add 136 bytes to each copy).
    limits: Option<Box<Limits>>,
    repair: Option<RepairOptions>,
    sandboxed: bool,
}

impl ToolManager {
    /// A request to run `input` (anything that converts to an [`Input`]; text is
    /// [`Input::model_output`]), natively, without a session, with the manager's limits and
    /// the input's default repairs until the builder methods say otherwise. Await it.
    ///
    /// ```
    /// use fexpr::{CallContext, FunctionTool, Input, Session, ToolManager};
    /// use std::sync::{Arc, Mutex};
    ///
    /// let manager = ToolManager::builder()
    ///     .tool(FunctionTool::with_context("count", [], |ctx: CallContext| {
    ///         let state = ctx.state::<Mutex<i64>>().map_err(fexpr::tool::ToolError::from)?;
    ///         let mut n = state.lock().unwrap();
    ///         *n += 1;
    ///         Ok::<i64, fexpr::tool::ToolError>(*n)
    ///     }))
    ///     .build()
    ///     .unwrap();
    /// let state = Arc::new(Mutex::new(0_i64));
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let response = rt.block_on(async {
    ///     manager.run("I will count twice:\n[count(), count()]")
    ///         .session(Session::new().state(state.clone()))
    ///         .limits(fexpr::Limits::default().max_calls(10))
    ///         .await
    /// });
    /// assert_eq!(response.outputs.len(), 2);
    /// assert_eq!(*state.lock().unwrap(), 2);
    /// ```
    pub fn run(&self, input: impl Into<Input>) -> Request {
        Request {
            manager: self.clone(),
            input: input.into(),
            session: Session::default(),
            limits: None,
            repair: None,
            sandboxed: false,
        }
    }

    /// Validate `input` against the tools' signatures without running anything
    /// (`run(input).check()`): per call, whether it fits, with its error, repairs and the
    /// arguments as written.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let checked = manager.check("add(a=1, c=2)<|eot_id|>");
    /// assert!(!checked.verdicts[0].valid);
    /// assert_eq!(checked.ignored.len(), 1);
    /// ```
    pub fn check(&self, input: impl Into<Input>) -> Checked {
        self.run(input).check()
    }
}

impl Request {
    /// Run with `session`: its id, state and events reach the tools that take a
    /// [`CallContext`](crate::CallContext), and its availability decides which tools may run.
    pub fn session(mut self, session: Session) -> Request {
        self.session = session;
        self
    }

    /// Run within `limits` instead of the manager's.
    pub fn limits(mut self, limits: Limits) -> Request {
        self.limits = Some(Box::new(limits));
        self
    }

    /// Repair with `options` instead of the input's default (every repair for model output
    /// and JSON, none for expressions). Repairs on an [`Input::expr`] read the text as
    /// [`Input::model_output`] reads a plain call; `Function`s hold values, not text, and are
    /// never repaired.
    pub fn repair(mut self, options: RepairOptions) -> Request {
        self.repair = Some(options);
        self
    }

    /// Evaluate inside the wasmtime sandbox: expression text is parsed and evaluated in a
    /// fresh guest instance; for model output and JSON, extraction, repairs and checking run
    /// on the host (they evaluate literals only and run no tool) and each call is then
    /// evaluated in its own guest instance. Tools run on the host either way. Every output
    /// carries its evaluation's [`Receipt`](crate::call::Receipt); otherwise the outputs are
    /// those of [`native`](Request::native).
    #[cfg(feature = "sandbox")]
    pub fn sandboxed(mut self) -> Request {
        self.sandboxed = true;
        self
    }

    /// Evaluate natively on the caller's runtime (the default).
    pub fn native(mut self) -> Request {
        self.sandboxed = false;
        self
    }

    /// Validate the input without running anything; see [`ToolManager::check`].
    pub fn check(self) -> Checked {
        let depth = self.effective_limits().max_depth;
        with_stack(depth, || self.check_here())
    }

    fn check_here(self) -> Checked {
        let limits = self.effective_limits();
        if let Err(error) = limits.check() {
            return Checked {
                error: Some(error),
                ..Checked::default()
            };
        }
        let options = self.repair.unwrap_or_else(|| self.input.default_repairs());
        let ctx = self.manager.context();
        let check = |text: &str| check_text(text, ctx, limits, &options);
        let join = |all: Vec<Checked>| {
            all.into_iter().fold(Checked::default(), |mut acc, c| {
                acc.verdicts.extend(c.verdicts);
                acc.ignored.extend(c.ignored);
                acc.error = acc.error.or(c.error);
                acc
            })
        };
        match &self.input.0 {
            Form::Expr(text) | Form::ModelOutput(text) | Form::Json(text) => check(text),
            Form::Functions(funcs) => join(funcs.iter().map(|f| check(&f.to_expr())).collect()),
            Form::FuncExprs(exprs) => join(exprs.iter().map(|e| check(&e.action)).collect()),
            // Written out with its tree, as `respond` does: the text is not read again.
            Form::JsonValue(value) => match json_input::to_text_read(value, limits) {
                Ok((text, tree)) => check_reading(
                    &text,
                    ctx,
                    limits,
                    &options,
                    crate::front::route::written(&text, tree),
                ),
                Err(error) => Checked {
                    error: Some(error),
                    ..Checked::default()
                },
            },
        }
    }

    /// Run the request to its response (the future [`IntoFuture`] boxes); `Function`s are
    /// taken out of the input, the rest is read in place.
    pub(crate) async fn respond(&mut self) -> Response {
        // Borrowed field by field: the limits are read in place while `Function`s are taken
        // out of the input (a copy of the limits would sit in this future too).
        let Request {
            manager,
            input,
            session,
            limits: own_limits,
            repair,
            sandboxed,
        } = self;
        let limits: &Limits = own_limits.as_deref().unwrap_or(manager.limits());
        // The manager's limits were checked when it was built; a request's own are here.
        if let Err(error) = limits.check() {
            return Response {
                outputs: vec![FunctionOutput::failed("", "", error)],
                ignored: Vec::new(),
            };
        }
        let run = Run {
            manager,
            session,
            limits,
            sandboxed: *sandboxed,
            results: Arc::default(),
        };
        let repair = *repair;
        let default_repairs = input.default_repairs();
        match &mut input.0 {
            Form::Expr(text) => match repair {
                Some(options) if options != RepairOptions::strict() => {
                    run.model_output(text, &options, false, None).await
                }
                _ => Response {
                    outputs: run.text(text, false, None).await,
                    ignored: Vec::new(),
                },
            },
            Form::ModelOutput(text) => {
                run.model_output(text, &repair.unwrap_or(default_repairs), false, None)
                    .await
            }
            Form::Json(text) => {
                run.model_output(text, &repair.unwrap_or(default_repairs), true, None)
                    .await
            }
            // A message that is one call to a tool, which binds as written, runs natively as
            // its reading would run it, without writing the message out and reading it.
            Form::JsonValue(value) => {
                let options = repair.unwrap_or(default_repairs);
                let direct = (!*sandboxed)
                    .then(|| message_call(value, manager.context(), limits, &options))
                    .flatten();
                if let Some(call) = direct {
                    return run.message_call(call, value, &options).await;
                }
                // Written out once, with the tree the JSON reader would read from the text:
                // the text is not read again (unless a limit may refuse it: then the reader
                // says so).
                match json_input::to_text_read(value, limits) {
                    Ok((text, tree)) => run.model_output(&text, &options, true, tree).await,
                    Err(error) => Response {
                        outputs: vec![FunctionOutput::failed("", "", error)],
                        ignored: Vec::new(),
                    },
                }
            }
            Form::Functions(funcs) => {
                let runs = std::mem::take(funcs).into_iter().map(|f| run.function(f));
                Response {
                    outputs: futures_util::future::join_all(runs).await,
                    ignored: Vec::new(),
                }
            }
            Form::FuncExprs(exprs) => {
                let runs = exprs.iter().map(|e| async {
                    let text = e.action.as_str();
                    if let Some(n) = expr_calls(text, limits).filter(|n| *n != 1) {
                        return not_one(text, n);
                    }
                    let outputs = match repair {
                        Some(options) if options != RepairOptions::strict() => {
                            run.model_output(text, &options, false, None).await.outputs
                        }
                        _ => run.text(text, false, None).await,
                    };
                    single_output(text, outputs)
                });
                Response {
                    outputs: futures_util::future::join_all(runs).await,
                    ignored: Vec::new(),
                }
            }
        }
    }

    /// What [`respond`](Self::respond) does for expression text run as written, in a future
    /// of that path's size only (`respond`'s holds the model-text path too and is twice as
    /// large; [`one`](Self::one) boxes it, copying it whole).
    async fn respond_expr(&self) -> Vec<FunctionOutput> {
        let limits = self.effective_limits();
        // The manager's limits were checked when it was built; a request's own are here.
        if let Err(error) = limits.check() {
            return vec![FunctionOutput::failed("", "", error)];
        }
        let run = Run {
            manager: &self.manager,
            session: &self.session,
            limits,
            sandboxed: self.sandboxed,
            results: Arc::default(),
        };
        run.text(self.input.text(), false, None).await
    }

    /// [`respond_expr`](Self::respond_expr) run natively for [`one`](Self::one): the one
    /// output, or `Err(n)` when the text holds `n` calls (nothing ran). Its limits check is
    /// `respond`'s, written out: a helper returning the refusal cost the native call 140
    /// instructions (the larger future's copies), measured with callgrind.
    async fn respond_one_expr(&self) -> Result<FunctionOutput, usize> {
        let limits = self.effective_limits();
        if let Err(error) = limits.check() {
            return Ok(FunctionOutput::failed("", "", error));
        }
        let scope = Scope::only(self.session.clone(), limits);
        self.manager.run_expr_one(self.input.text(), &scope).await
    }

    /// The limits the request runs with: its own, else the manager's.
    fn effective_limits(&self) -> &Limits {
        self.limits.as_deref().unwrap_or(self.manager.limits())
    }

    /// Run a request that should hold one call to its one output. An input of several calls
    /// (a list or tuple of them, several `Function`s) is refused before any of them runs,
    /// with an `Unsupported` error output saying how many it holds; [`IntoFuture`] runs them
    /// all. Expression text run natively as written takes the cheapest path: the parse that
    /// runs it also counts its calls, and no vector of outputs is made.
    ///
    /// ```
    /// use fexpr::{ErrorKind, Input, Value};
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let out = rt.block_on(manager.run(Input::expr("add(a=2, b=3)")).one());
    /// assert_eq!(out.output, Ok(Value::Int(5)));
    /// let two = rt.block_on(manager.run(Input::expr("[add(a=1, b=2), add(a=3, b=4)]")).one());
    /// let error = two.output.unwrap_err();
    /// assert_eq!(error.kind, ErrorKind::Unsupported);
    /// assert_eq!(error.message, "expected one call, found 2; none ran");
    /// ```
    pub fn one(self) -> impl Future<Output = FunctionOutput> + Send + 'static {
        let depth = self.effective_limits().max_depth;
        // One allocation, made here: whatever the caller's executor does with the returned
        // future before polling it (tokio's `block_on` moves it five times) moves two words,
        // not the request and the state of its run.
        DeepStack::new(depth, boxed(|| self.respond_one()))
    }

    /// The body of [`one`](Self::one), polled in its box.
    async fn respond_one(mut self) -> FunctionOutput {
        let as_written = self
            .repair
            .is_none_or(|options| options == RepairOptions::strict());
        // The common case: text run as written natively, counted by the parse that runs it.
        if matches!(self.input.0, Form::Expr(_)) && as_written && !self.sandboxed {
            return match self.respond_one_expr().await {
                Ok(output) => output,
                Err(n) => not_one(self.input.text(), n),
            };
        }
        let count = match &self.input.0 {
            Form::Expr(text) => expr_calls(text, self.effective_limits()),
            Form::Functions(funcs) => Some(funcs.len()),
            Form::FuncExprs(exprs) => Some(exprs.len()),
            _ => None,
        };
        if let Some(n) = count.filter(|n| *n != 1) {
            return not_one(self.input.text(), n);
        }
        // The other paths' larger futures have boxes of their own: inline, they would make
        // the common case's box (and its copy into it) as large as the largest.
        let outputs = match &self.input.0 {
            Form::Expr(_) if as_written => boxed(|| self.respond_expr()).await,
            _ => boxed(|| self.respond()).await.outputs,
        };
        // The text is read in place (only `Function`s are taken out of the input), so it
        // is still there: no copy of it is kept for the error paths.
        let text = self.input.text();
        if outputs.len() != 1 {
            return not_one(text, outputs.len());
        }
        single_output(text, outputs)
    }
}

/// How many calls the expression `text` holds at its top level, when it is a list or tuple
/// (a call is one): known before anything runs. `None` when it does not parse (running it
/// reports why).
fn expr_calls(text: &str, limits: &Limits) -> Option<usize> {
    if !crate::syntax::may_hold_several(text) {
        return Some(1);
    }
    let parsed = crate::syntax::parse(text, limits).ok()?;
    Some(crate::eval::units(&parsed).len())
}

/// The output of a request that should hold one call and holds `n`: nothing ran.
fn not_one(text: &str, n: usize) -> FunctionOutput {
    FunctionOutput::failed(
        clip(text, 60),
        text,
        Error::new(
            ErrorKind::Unsupported,
            format!("expected one call, found {n}; none ran"),
        )
        .with_hint("use ToolManager::run for a list of calls"),
    )
}

impl IntoFuture for Request {
    type Output = Response;
    type IntoFuture = Pin<Box<dyn Future<Output = Response> + Send + 'static>>;

    fn into_future(self) -> Self::IntoFuture {
        let mut request = self;
        let depth = request.effective_limits().max_depth;
        // One allocation: the response's future is pinned inside this boxed one.
        boxed(|| async move {
            let respond = std::pin::pin!(request.respond());
            DeepStack::new(depth, respond).await
        })
    }
}

/// A request's future, polled on a stack with room for its `max_depth`: parsing, checking and
/// evaluating recurse once per level of nesting (up to about 16 KiB a level in a debug build),
/// which the default depth (100) keeps within a 2 MiB thread stack (tokio's workers). A raised
/// `max_depth` (at most its ceiling, [`Limits::CEILINGS`]) makes each poll that lacks the room
/// run on a stack segment of its own, whatever the thread. `F` is the pinned future (a
/// `Pin<Box<_>>`, or a `Pin<&mut _>` to one pinned in place).
struct DeepStack<F> {
    inner: F,
    /// Stack a poll needs; 0 for the default depth, which needs no growing.
    room: usize,
}

impl<F: Future + Unpin> DeepStack<F> {
    fn new(max_depth: usize, inner: F) -> DeepStack<F> {
        DeepStack {
            inner,
            room: stack_room(max_depth),
        }
    }
}

/// The stack a request with `max_depth` needs (see [`DeepStack`]); 0 for the default depth.
fn stack_room(max_depth: usize) -> usize {
    /// Stack per level of nesting, with a margin over what a debug build uses.
    const PER_LEVEL: usize = 32 << 10;
    /// Stack for the rest of a poll.
    const BASE: usize = 512 << 10;
    // Above its ceiling the request is refused before anything runs.
    let ceiling = Limits::CEILINGS
        .iter()
        .find_map(|(name, ceiling)| (*name == "max_depth").then_some(*ceiling))
        .unwrap_or(0);
    if max_depth <= Limits::default().max_depth || max_depth > ceiling {
        return 0;
    }
    max_depth.saturating_mul(PER_LEVEL).saturating_add(BASE)
}

/// `f` run with [`stack_room`]`(max_depth)` bytes of stack at least.
fn with_stack<R>(max_depth: usize, f: impl FnOnce() -> R) -> R {
    match stack_room(max_depth) {
        0 => f(),
        room => stacker::maybe_grow(room, room, f),
    }
}

impl<F: Future + Unpin> Future for DeepStack<F> {
    type Output = F::Output;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let room = self.room;
        let inner = Pin::new(&mut self.inner);
        match room {
            0 => inner.poll(cx),
            room => stacker::maybe_grow(room, room, move || inner.poll(cx)),
        }
    }
}

/// What every part of one request runs with.
pub(crate) struct Run<'r> {
    pub(crate) manager: &'r ToolManager,
    pub(crate) session: &'r Session,
    pub(crate) limits: &'r Limits,
    #[cfg_attr(not(feature = "sandbox"), allow(dead_code))]
    pub(crate) sandboxed: bool,
    /// Bytes of tool results so far, for the whole request ([`Limits::max_eval_bytes`]).
    pub(crate) results: Arc<AtomicU64>,
}

impl Run<'_> {
    /// Evaluate `text` (an expression, or with `json` JSON in fexpr's forms) natively or in
    /// the sandbox; `id` is the call id of its one top-level call, when known.
    async fn text(&self, text: &str, json: bool, id: Option<String>) -> Vec<FunctionOutput> {
        #[cfg(feature = "sandbox")]
        if self.sandboxed {
            let session = self.session.clone();
            // Boxed: the sandbox's future is the largest, and inline it would make every
            // native request's future as large (each await copies it).
            let input = if json {
                GuestInput::Json(text)
            } else {
                GuestInput::Expression(text)
            };
            return Box::pin(self.manager.run_sandboxed(
                session,
                input,
                text,
                self.limits,
                id,
                &self.results,
            ))
            .await;
        }
        let scope = Scope::new(
            self.session.clone(),
            self.limits,
            id.map(Arc::from),
            &self.results,
        );
        if json {
            self.manager.run_json(text, &scope).await
        } else {
            self.manager.run_expr(text, &scope).await
        }
    }

    /// Run one [`Function`].
    async fn function(&self, func: Function) -> FunctionOutput {
        let id = crate::call::fresh_call_id();
        #[cfg(feature = "sandbox")]
        if self.sandboxed {
            let text = func.to_json().to_string();
            let outputs = self.text(&text, true, Some(id)).await;
            return single_output(&text, outputs);
        }
        let scope = Scope::new(
            self.session.clone(),
            self.limits,
            Some(Arc::from(id)),
            &self.results,
        );
        self.manager.run_function(func, &scope).await
    }

    /// Run the calls in a model's output (`json`: the text must be JSON): each repaired with
    /// `options` against its tool's signature and run concurrently, as
    /// [`check::plan`](crate::front::check::plan) allows. A call whose verdict is invalid does not
    /// run: its output keeps the call as written (`parsed_input`) with the verdict's error. Every
    /// span indexes `text` (each call's are moved there from its own text). A plain expression
    /// runs as written. A text in which no call is found gets one error output saying why
    /// (the expression parser's, or for JSON the JSON reader's).
    ///
    /// `read`: the tree the JSON reader reads from `text`, when the caller has it (see
    /// [`route_read`]).
    async fn model_output(
        &self,
        text: &str,
        options: &RepairOptions,
        json: bool,
        read: Option<Expr>,
    ) -> Response {
        // Text that is nothing but one call to a tool, run as written natively: the expression
        // door's run, without the reading and planning that would find the same call. (The
        // sandbox is sent only calls the host has checked: its calls take the reading.)
        if !json && !self.sandboxed {
            if let Some(tree) = as_written_call(text, self.manager.context(), self.limits, options)
            {
                let scope = Scope::new(self.session.clone(), self.limits, None, &self.results);
                let outputs = self.manager.run_tree(text, &tree, &scope).await;
                // A call refused before it ran (no call as written: an argument that could
                // not be evaluated) is reported as the reading reports it, naming the call.
                let refused = matches!(
                    outputs.as_slice(),
                    [one] if one.parsed_input.is_none() && one.output.is_err()
                );
                if !refused {
                    return Response {
                        outputs,
                        ignored: Vec::new(),
                    };
                }
            }
        }
        self.read_and_run(text, options, json, read).await
    }

    /// Run the one call of a provider message read by [`message_call`] (`message`, read with
    /// `options`), natively: the output the reading of the message gives. An error's span,
    /// which indexes the call's own text, is moved into the message's text, which is written
    /// out (and read, to place the call in it) only then.
    async fn message_call(
        &self,
        given: MessageCall,
        message: &Json,
        options: &RepairOptions,
    ) -> Response {
        let MessageCall {
            id,
            source,
            call,
            bound,
        } = given;
        let span = crate::error::Span::new(0, u32::try_from(source.len()).unwrap_or(u32::MAX));
        let scope = Scope::new(self.session.clone(), self.limits, Some(id), &self.results);
        let mut out = self
            .manager
            .run_checked(call, Some(bound), source, span, &scope)
            .await;
        if let Err(error) = &mut out.output {
            if error.span.is_some() {
                let place = json_input::to_text_read(message, self.limits)
                    .ok()
                    .and_then(|(text, tree)| {
                        let reading = crate::front::route::written(&text, tree);
                        let plan = plan_to_run(
                            &text,
                            self.manager.context(),
                            self.limits,
                            options,
                            reading,
                        );
                        plan.calls.first().map(|p| p.place)
                    });
                if let Some(place) = place {
                    error.span = error.span.map(|s| place.locate(s));
                }
            }
        }
        Response {
            outputs: vec![out],
            ignored: Vec::new(),
        }
    }

    /// [`model_output`](Self::model_output) by the front-end's reading and plan: every text.
    async fn read_and_run(
        &self,
        text: &str,
        options: &RepairOptions,
        json: bool,
        read: Option<Expr>,
    ) -> Response {
        let door = if json { Door::Json } else { Door::ModelOutput };
        // The front-end's one routing decision; the JSON it read is handed to the plan.
        let (reading, no_call) = match route_read(text, self.limits, door, read) {
            Route::Evaluate => {
                return Response {
                    outputs: self.text(text, true, None).await,
                    ignored: Vec::new(),
                }
            }
            Route::NoCall(reading) => (reading, true),
            Route::Read(reading) => (reading, false),
        };
        let is_json = reading.is_json();
        let plan = plan_to_run(text, self.manager.context(), self.limits, options, reading);
        // A provider's assistant message that holds no tool call: nothing to run, and no
        // output (a reply to it would answer a call the model never made).
        if no_call && plan.calls.is_empty() {
            let mut ignored = plan.ignored;
            if ignored.is_empty() {
                ignored.push(Ignored {
                    span: crate::error::Span::new(0, u32::try_from(text.len()).unwrap_or(u32::MAX)),
                    reason: crate::front::IgnoreReason::JsonData,
                    text: clip(text, 80),
                });
            }
            return Response {
                outputs: Vec::new(),
                ignored,
            };
        }
        if plan.plain {
            return Response {
                outputs: self.text(text, false, None).await,
                ignored: Vec::new(),
            };
        }
        if let Some(error) = plan.error {
            return Response {
                outputs: vec![FunctionOutput::failed(clip(text, 60), text, error)],
                ignored: plan.ignored,
            };
        }
        // No call in call position: no output (nothing ran, and there is no call to answer);
        // the text is in `ignored`, and `Response::nothing_to_run` says why. JSON that holds
        // no call form is read as fexpr's own forms, for the JSON reader's error.
        if plan.calls.is_empty() {
            let outputs = if is_json && !text.trim().is_empty() {
                self.text(text, true, None).await
            } else {
                Vec::new()
            };
            return Response {
                outputs,
                ignored: plan.ignored,
            };
        }
        let mut calls = plan.calls;
        let outputs = match (calls.pop(), calls.is_empty()) {
            // One call (the common case) needs no joining.
            (Some(one), true) => vec![self.planned(one).await],
            (last, _) => {
                calls.extend(last);
                let runs = calls.into_iter().map(|p| self.planned(p));
                futures_util::future::join_all(runs).await
            }
        };
        Response {
            outputs,
            ignored: plan.ignored,
        }
    }
}

impl Run<'_> {
    /// Evaluate the checked call `tree` (its spans index `source`, the call's own text)
    /// natively or in the sandbox; `id` is its call id.
    async fn tree(&self, source: &str, tree: Expr, id: String) -> Vec<FunctionOutput> {
        #[cfg(feature = "sandbox")]
        if self.sandboxed {
            let session = self.session.clone();
            // Boxed, as for `text`.
            return Box::pin(self.manager.run_sandboxed(
                session,
                GuestInput::Calls(vec![tree]),
                source,
                self.limits,
                Some(id),
                &self.results,
            ))
            .await;
        }
        let scope = Scope::new(
            self.session.clone(),
            self.limits,
            Some(Arc::from(id)),
            &self.results,
        );
        self.manager.run_tree(source, &tree, &scope).await
    }

    /// Run one planned call of model text: its checked tree if it may run (each span of what
    /// running reports moved into the text), else the output that says why it does not.
    pub(crate) async fn planned(&self, p: Planned) -> FunctionOutput {
        let Some(tree) = p.run else {
            return not_run(p);
        };
        let id = p.id.unwrap_or_else(crate::call::fresh_call_id);
        let source = p.verdict.input;
        // Natively a checked call runs with the values it was checked with: one pass over the
        // text. Otherwise (the sandbox, so that the guest evaluates what the model wrote; a
        // tool call in an argument) its checked tree is evaluated: never text again.
        let mut out = match p.bound.filter(|_| !self.sandboxed) {
            Some(bound) => {
                let span =
                    crate::error::Span::new(0, u32::try_from(source.len()).unwrap_or(u32::MAX));
                // The scope gives the output its id.
                let scope = Scope::new(
                    self.session.clone(),
                    self.limits,
                    Some(Arc::from(id)),
                    &self.results,
                );
                let run = self
                    .manager
                    .run_checked(p.call, Some(bound), source, span, &scope);
                run.await
            }
            None => {
                let outputs = self.tree(&source, tree, id.clone()).await;
                let mut out = single_output(&source, outputs);
                out.call_id = id;
                out
            }
        };
        out.repairs = p.verdict.repairs;
        out.output = out.output.map_err(|e| p.place.locate_error(e));
        out
    }
}

/// The output of a planned call that does not run: the call as written, the verdict's error.
pub(crate) fn not_run(p: Planned) -> FunctionOutput {
    let error = p
        .verdict
        .error
        .unwrap_or_else(|| Error::new(ErrorKind::Unsupported, "this call cannot run"));
    let mut out = FunctionOutput::failed(p.verdict.name, p.verdict.input, error);
    // A call that could not be read has no call as written: its input is the text.
    out.parsed_input = (!p.call.name.is_empty()).then_some(p.call);
    out.repairs = p.verdict.repairs;
    if let Some(id) = p.id {
        out.call_id = id;
    }
    out
}

/// Why model text in which no call was found runs nothing, from what was found instead (its
/// [`Ignored`] stretches): an `Unsupported` error whose message a person or a model can read
/// (`no call to run: the text is prose`). [`Response::nothing_to_run`] is this for a response;
/// a stream's caller passes the [`StreamEvent::Ignored`](crate::stream::StreamEvent) it saw.
///
/// ```
/// use fexpr::front::{IgnoreReason, Ignored};
/// use fexpr::Span;
/// let prose = Ignored { span: Span::new(0, 5), reason: IgnoreReason::Prose, text: "Done.".into() };
/// assert_eq!(fexpr::request::nothing_to_run(&[prose]).message, "no call to run: the text is prose");
/// assert_eq!(fexpr::request::nothing_to_run(&[]).message, "no call to run: the text is blank");
/// ```
pub fn nothing_to_run(ignored: &[Ignored]) -> Error {
    use crate::front::IgnoreReason;
    let has = |reason: IgnoreReason| ignored.iter().any(|i| i.reason == reason);
    let first = |reason: IgnoreReason| {
        ignored
            .iter()
            .find(|i| i.reason == reason)
            .map_or(String::new(), |i| i.text.clone())
    };
    let what = if has(IgnoreReason::Mention) {
        format!(
            "`{}` is mentioned inside a sentence, not written as a call of its own",
            first(IgnoreReason::Mention)
        )
    } else if has(IgnoreReason::Code) {
        "the text is code that holds no call to a tool".to_string()
    } else if has(IgnoreReason::Reasoning) && !has(IgnoreReason::Prose) {
        "the calls are inside reasoning, which is not run".to_string()
    } else if has(IgnoreReason::Prose) {
        "the text is prose".to_string()
    } else if has(IgnoreReason::JsonData) {
        "the JSON holds no call (an assistant message without tool calls asks for none)".to_string()
    } else if ignored.is_empty() {
        "the text is blank".to_string()
    } else {
        "the text holds no call".to_string()
    };
    Error::new(ErrorKind::Unsupported, format!("no call to run: {what}")).with_hint(
        "write each call on its own line (or a list of calls), outside sentences, comments, strings and other code",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's own limits are boxed: `execute_func_expr`'s future, which the caller's
    /// runtime moves several times before polling it, stays a few hundred bytes (632 with the
    /// limits inline, 360 boxed, in a release build).
    #[test]
    fn a_single_call_future_stays_small() {
        let manager = crate::demo::manager();
        assert!(
            std::mem::size_of::<Request>() <= 160,
            "{}",
            std::mem::size_of::<Request>()
        );
        // The request and the state of its run are in `one`'s box: an executor that moves
        // the future before polling it (tokio's `block_on` does, five times) moves a few words.
        let future = manager.execute_func_expr("add(a=1, b=2)");
        assert!(
            std::mem::size_of_val(&future) <= 64,
            "{}",
            std::mem::size_of_val(&future)
        );
    }

    /// A native run of `manager` with `limits`, as a request makes one.
    fn native_run<'r>(
        manager: &'r ToolManager,
        session: &'r Session,
        limits: &'r Limits,
    ) -> Run<'r> {
        Run {
            manager,
            session,
            limits,
            sandboxed: false,
            results: Arc::default(),
        }
    }

    /// `response` without its call ids (each run draws fresh ones).
    fn without_ids(mut response: Response) -> Response {
        for output in &mut response.outputs {
            output.call_id.clear();
        }
        response
    }

    /// A text that is nothing but one call to a tool runs as the front-end's reading and plan
    /// would run it: the same response (call ids aside: each run draws fresh ones) for every
    /// text of the model-text corpora and for calls varied around the fast route's edges, with
    /// the default repairs, none, and lenient reading.
    #[test]
    fn a_call_as_written_runs_as_its_reading_would() {
        let manager = crate::demo::manager();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let session = Session::new();
        let edges = [
            "add(a=2, b=3)",
            "add(2, 3)",
            "add(2, b=3)",
            "add(a=2.0, b=3)",
            "add(a=\"2\", b=3)",
            "add(a=[1], b=2)",
            "add(a={'x': 1}, b=2)",
            "add(a=1)",
            "add()",
            "add(a=1, b=2, c=3)",
            "add(1, 2, 3)",
            "add(a=1, a=2)",
            "add(1, a=2)",
            "add(a=x, b=y)",
            "add(a=z, b=1)",
            "add(a=True, b=2)",
            "add(a=None, b=2)",
            "add(a=9223372036854775807, b=1)",
            "add(a=-1, b=2)  ",
            "add(a=1.5, b=2)",
            "add(**{'a': 1, 'b': 2})",
            "add(**{'a': 1, 'c': 2})",
            "Add(a=1, b=2)",
            "divide(a=1, b=0)",
            "divide(a=1, b=2)",
            "multiply(a='x', b=2)",
            "search(query=\"<tool_call>{'name': 'add'}</tool_call>\")",
            "search(query='add(a=1) # not a comment')",
            "search(query=1)",
            "search(query=['a', 'b'])",
            "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
            "add_points(p1={'x': 1, 'y': 2}, p2=Point(x=3, y=4))",
            "add_points(p1={'x': 1.0, 'y': 2}, p2={'x': 3, 'y': 4})",
            "add_points(p1=Point(x=1), p2=Point(x=3, y=4))",
            "add_points(p1=Point(x=1, y=2, z=3), p2=Point(x=3, y=4))",
            "add_points(p1=[1, 2], p2=Point(x=3, y=4))",
            "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
            "numpy_sum(arr=[[1, 2], [3, 4]])",
            "numpy_sum(arr=np.zeros(3))",
            "Point(x=1, y=2)",
            "np.array([1, 2])",
            "x",
            "add",
        ];
        let texts = crate::front::python::tests::corpus()
            .into_iter()
            .chain(edges.iter().map(|t| t.to_string()));
        let lenient = RepairOptions {
            lenient: true,
            ..RepairOptions::default()
        };
        let mut taken = 0;
        for text in texts {
            for options in [RepairOptions::default(), RepairOptions::strict(), lenient] {
                for limits in [
                    Limits::default(),
                    Limits::default().max_str_bytes(4).max_source_bytes(40),
                    Limits::default().max_calls(0),
                    Limits::default().max_constructors(1),
                ] {
                    let run = native_run(&manager, &session, &limits);
                    let fast =
                        without_ids(rt.block_on(run.model_output(&text, &options, false, None)));
                    let read =
                        without_ids(rt.block_on(run.read_and_run(&text, &options, false, None)));
                    assert_eq!(fast, read, "{text:?} with {options:?}");
                    taken += usize::from(
                        as_written_call(&text, manager.context(), &limits, &options).is_some(),
                    );
                }
            }
        }
        assert!(taken > 40, "{taken}");
    }

    /// The demo tools and one whose name and keys Python cannot spell: `get-current-weather`
    /// of `from` and `max-results`.
    fn weather_manager() -> ToolManager {
        crate::demo::builder()
            .tool(crate::dispatch::tool::FunctionTool::new(
                "get-current-weather",
                ["from", "max-results"],
                |from: String, max: i64| format!("{from}:{max}"),
            ))
            .build()
            .unwrap()
    }

    /// What the front-end's reading of `message`, written out as text, answers under `run`:
    /// the response its model-output route gives, or the one failed output the writing-out
    /// refuses with.
    fn reading_response(
        rt: &tokio::runtime::Runtime,
        run: &Run<'_>,
        message: &Json,
        options: &RepairOptions,
    ) -> Response {
        match json_input::to_text_read(message, run.limits) {
            Ok((text, tree)) => rt.block_on(run.model_output(&text, options, true, tree)),
            Err(e) => Response {
                outputs: vec![FunctionOutput::failed("", "", e)],
                ignored: Vec::new(),
            },
        }
    }

    /// An OpenAI message that is one call to a tool runs as the front-end's reading of the
    /// written-out message would run it: the same response for calls varied around the direct
    /// route's edges (arguments that do not read, bind or need repairs, tool errors, markup in
    /// strings, names and keys Python cannot spell), messages of other shapes, repairs on, off
    /// and lenient, and limits the message or its arguments reach.
    #[test]
    fn a_lone_message_call_runs_as_its_reading_would() {
        let manager = weather_manager();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let session = Session::new();
        let calls: &[(&str, &str)] = &[
            ("add", r#"{"a": 2, "b": 3}"#),
            ("add", r#"{"a":2,"b":3}"#),
            ("add", r#"{"b": 3, "a": 2}"#),
            ("add", r#"{"a": 2.0, "b": 3}"#),
            ("add", r#"{"a": "2", "b": 3}"#),
            ("add", r#"{"a": 2}"#),
            ("add", "{}"),
            ("add", ""),
            ("add", "  "),
            ("add", "null"),
            ("add", "[1, 2]"),
            ("add", r#""{\"a\": 1}""#),
            ("add", r#"{"a": 2, "b": 3, "c": 1}"#),
            ("add", r#"{"a": 1, "a": 2}"#),
            ("add", r#"{"a": 1e400, "b": 1}"#),
            ("add", r#"{"a": 9223372036854775808, "b": 1}"#),
            ("add", r#"{"a": 9223372036854775807, "b": 1}"#),
            ("add", r#"{"a": true, "b": 2}"#),
            ("add", r#"{"a": null, "b": 2}"#),
            ("add", r#"{"a": [1], "b": 2}"#),
            ("add", r#"{"A": 1, "b": 2}"#),
            ("add", r#"{"aa": 1, "b": 2}"#),
            ("add", "{\"a\": 2, \"b\": 3}  \n"),
            ("add", "\u{feff}{\"a\": 2, \"b\": 3}"),
            ("add", r#"{"a": 2, "b": 3} x"#),
            ("add", r#"{"a": 2, "b": 3"#),
            ("add", r#"{"a": "\u0032", "b": 3}"#),
            ("Add", r#"{"a": 2, "b": 3}"#),
            ("unknown", r#"{"a": 2}"#),
            ("x", "{}"),
            ("Point", r#"{"x": 1, "y": 2}"#),
            ("np.array", r#"{"object": [1]}"#),
            ("divide", r#"{"a": 1, "b": 0}"#),
            ("divide", r#"{"a": 1, "b": 2}"#),
            ("multiply", r#"{"a": "x", "b": 2}"#),
            (
                "search",
                r#"{"query": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"}"#,
            ),
            (
                "search",
                r#"{"query": "</tool_call><tool_call>{\"name\": \"add\"}"}"#,
            ),
            ("search", r#"{"query": "add(a=1, b=2) # not a comment"}"#),
            ("search", r#"{"query": "```python\nadd(a=1, b=2)\n```"}"#),
            ("search", r#"{"query": "<think>add(a=1, b=2)</think>"}"#),
            ("search", r#"{"query": "héllo 城市 \" \\ \t"}"#),
            ("search", r#"{"query": 1}"#),
            ("search", r#"{"query": ["a", "b"]}"#),
            (
                "add_points",
                r#"{"p1": {"x": 1, "y": 2}, "p2": {"x": 3, "y": 4}}"#,
            ),
            ("add_points", r#"{"p1": {"x": 1}, "p2": {"x": 3, "y": 4}}"#),
            ("add_points", r#"{"p1": [1, 2], "p2": {"x": 3, "y": 4}}"#),
            (
                "add_points",
                r#"{"p1": {"x": 1.0, "y": 2}, "p2": {"x": 3, "y": 4}}"#,
            ),
            ("numpy_sum", r#"{"arr": [[1, 2], [3, 4]]}"#),
            ("numpy_sum", r#"{"arr": [1.5, 2]}"#),
            ("numpy_sum", r#"{"arr": "np.array([1])"}"#),
            (
                "get-current-weather",
                r#"{"from": "USD", "max-results": 3}"#,
            ),
            (
                "get_current_weather",
                r#"{"from": "USD", "max-results": 3}"#,
            ),
            ("get-current-weather", r#"{"from": "USD"}"#),
            (
                "get-current-weather",
                r#"{"from": "USD", "max_results": 3}"#,
            ),
        ];
        let call = |name: &str, args: &str| {
            json!({"id": "call_7", "type": "function",
                   "function": {"name": name, "arguments": args}})
        };
        let message =
            |calls: Json| json!({"role": "assistant", "content": null, "tool_calls": calls});
        let mut messages: Vec<Json> = calls
            .iter()
            .map(|(name, args)| message(json!([call(name, args)])))
            .collect();
        let add = call("add", r#"{"a": 2, "b": 3}"#);
        let mut shaped = |edit: &dyn Fn(&mut Json)| {
            let mut m = message(json!([add.clone()]));
            edit(&mut m);
            messages.push(m);
        };
        shaped(&|m| drop(m.as_object_mut().map(|o| o.remove("content"))));
        shaped(&|m| m["content"] = json!(""));
        shaped(&|m| m["content"] = json!("Sure, adding: add(a=1, b=2)"));
        shaped(&|m| m["refusal"] = json!(null));
        shaped(&|m| m["role"] = json!("user"));
        shaped(&|m| drop(m.as_object_mut().map(|o| o.remove("role"))));
        shaped(&|m| drop(m["tool_calls"][0].as_object_mut().map(|o| o.remove("type"))));
        shaped(&|m| drop(m["tool_calls"][0].as_object_mut().map(|o| o.remove("id"))));
        shaped(&|m| m["tool_calls"][0]["type"] = json!("custom"));
        shaped(&|m| m["tool_calls"][0]["id"] = json!(7));
        shaped(&|m| m["tool_calls"][0]["index"] = json!(0));
        shaped(&|m| m["tool_calls"][0]["function"]["description"] = json!("x"));
        shaped(&|m| m["tool_calls"][0]["function"]["arguments"] = json!({"a": 2, "b": 3}));
        // The call's object written back in its own key order.
        shaped(&|m| {
            m["tool_calls"][0]["function"] =
                json!({"arguments": "{\"a\": 2,\n\t\"b\": 3}", "name": "add"});
        });
        shaped(&|m| m["tool_calls"] = json!([]));
        shaped(&|m| m["tool_calls"] = json!([add.clone(), add.clone()]));
        shaped(&|m| m["function_call"] = json!({"name": "add", "arguments": "{}"}));
        messages.push(add.clone());
        messages.push(json!([add.clone()]));
        let lenient = RepairOptions {
            lenient: true,
            ..RepairOptions::default()
        };
        let mut taken = 0;
        for message in &messages {
            for options in [RepairOptions::default(), RepairOptions::strict(), lenient] {
                for limits in [
                    Limits::default(),
                    Limits::default().max_str_bytes(4).max_source_bytes(40),
                    Limits::default().max_str_bytes(12),
                    Limits::default().max_source_bytes(120),
                    Limits::default().max_source_bytes(400),
                    Limits::default().max_depth(3),
                    Limits::default().max_depth(4),
                    Limits::default().max_collection_len(3),
                    Limits::default().max_collection_len(40),
                    Limits::default().max_eval_bytes(40),
                    Limits::default().max_eval_bytes(600),
                    Limits::default().max_calls(1),
                    Limits::default().max_calls(0),
                    Limits::default().max_constructors(0),
                ] {
                    let run = native_run(&manager, &session, &limits);
                    let read = reading_response(&rt, &run, message, &options);
                    let Some(direct) = message_call(message, manager.context(), &limits, &options)
                    else {
                        continue;
                    };
                    taken += 1;
                    let direct = rt.block_on(run.message_call(direct, message, &options));
                    assert!(direct.outputs.iter().all(|o| o.call_id == "call_7"));
                    assert_eq!(
                        without_ids(direct),
                        without_ids(read),
                        "{message} with {options:?} {limits:?}"
                    );
                }
            }
        }
        assert!(taken > 200, "{taken}");
    }

    /// A generated call's tool name and arguments text: half of them calls that bind (in any
    /// key order, with strings of every kind), the others any object of the tools' keys and
    /// other keys (see [`call_arguments`]), to any tool, a record, an alias or no such name.
    fn lone_call() -> impl proptest::strategy::Strategy<Value = (&'static str, String)> {
        use proptest::prelude::*;
        let text = "[a-z\"\\\\\n\t\u{1}é城 <>/`#{}()]{0,12}";
        let int = prop_oneof![-9i64..9, any::<i64>()];
        let point = (int.clone(), int.clone()).prop_map(|(x, y)| json!({"x": x, "y": y}));
        // An int as a repair may read it: as written, as a string, as a whole float.
        let repairable = prop_oneof![
            2 => int.clone().prop_map(Json::from),
            1 => int.clone().prop_map(|n| Json::String(n.to_string())),
            1 => (-9i64..9).prop_map(|n| Json::from(n as f64)),
        ];
        let binding = prop_oneof![
            (repairable.clone(), repairable).prop_map(|(a, b)| ("add", json!({"a": a, "b": b}))),
            (int.clone(), int.clone()).prop_map(|(a, b)| ("divide", json!({"b": b, "a": a}))),
            text.prop_map(|q| ("search", json!({"query": q}))),
            (point.clone(), point).prop_map(|(p1, p2)| ("add_points", json!({"p1": p1, "p2": p2}))),
            (text, int).prop_map(|(from, max)| {
                (
                    "get-current-weather",
                    json!({"max-results": max, "from": from}),
                )
            }),
        ]
        .prop_flat_map(|(name, args)| {
            proptest::bool::ANY.prop_map(move |pretty| {
                let text = if pretty {
                    serde_json::to_string_pretty(&args)
                } else {
                    serde_json::to_string(&args)
                };
                (name, text.unwrap_or_default())
            })
        });
        let any_call = (
            proptest::sample::select(vec![
                "add",
                "divide",
                "search",
                "add_points",
                "numpy_sum",
                "get-current-weather",
                "get_current_weather",
                "Point",
                "nothing",
            ]),
            call_arguments(),
        );
        prop_oneof![binding, any_call]
    }

    /// The arguments of a generated call: mostly the keys its tools take, with values of
    /// every JSON kind (escapes, control characters, non-ASCII, big and fractional numbers,
    /// nesting), sometimes other keys, written compactly or pretty.
    fn call_arguments() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let scalar = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            (-5i64..5).prop_map(Json::from),
            any::<i64>().prop_map(Json::from),
            any::<u64>().prop_map(Json::from),
            (-4.0f64..4.0).prop_map(Json::from),
            "[a-z\"\\\\\n\t\u{1}é城 <>/`#]{0,10}".prop_map(Json::String),
        ];
        let value = scalar.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                proptest::collection::vec(("[xy]|[a-z\"é]{0,3}", inner), 0..4)
                    .prop_map(|pairs| Json::Object(pairs.into_iter().collect())),
            ]
        });
        let key = prop_oneof![
            4 => proptest::sample::select(vec![
                "a", "b", "x", "y", "p1", "p2", "query", "arr", "from", "max-results",
            ])
            .prop_map(str::to_string),
            1 => "[a-z\"\\\\é-]{0,6}",
        ];
        (
            proptest::collection::vec((key, value), 0..4),
            proptest::bool::ANY,
        )
            .prop_map(|(pairs, pretty)| {
                let object = Json::Object(pairs.into_iter().collect());
                if pretty {
                    serde_json::to_string_pretty(&object)
                } else {
                    serde_json::to_string(&object)
                }
                .unwrap_or_default()
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(300))]
        /// Any OpenAI message of one call, to any tool (or none) with any arguments, runs by
        /// the direct route (when it takes it) as the reading of the written-out message runs
        /// it: the same response, with the model's id, whatever the limits and repairs.
        #[test]
        fn any_lone_message_call_runs_as_its_reading_would(
            (name, arguments) in lone_call(),
            id in "[a-zA-Z0-9_\"é-]{0,12}",
            repairs in 0usize..3,
            tight in proptest::option::of((0usize..24, 8usize..200, 1usize..6, 0usize..12)),
        ) {
            let manager = weather_manager();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let session = Session::new();
            let options = [
                RepairOptions::default(),
                RepairOptions::strict(),
                RepairOptions { lenient: true, ..RepairOptions::default() },
            ][repairs];
            let limits = match tight {
                Some((str_bytes, source_bytes, depth, collection)) => Limits::default()
                    .max_str_bytes(str_bytes)
                    .max_source_bytes(source_bytes)
                    .max_depth(depth)
                    .max_collection_len(collection),
                None => Limits::default(),
            };
            let message = json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": name, "arguments": arguments}}]});
            let run = native_run(&manager, &session, &limits);
            if let Some(direct) = message_call(&message, manager.context(), &limits, &options) {
                let read = reading_response(&rt, &run, &message, &options);
                let direct = rt.block_on(run.message_call(direct, &message, &options));
                proptest::prop_assert!(direct.outputs.iter().all(|o| o.call_id == id));
                proptest::prop_assert_eq!(without_ids(direct), without_ids(read));
            }
        }
    }
}

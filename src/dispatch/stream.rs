//! Model text that arrives in chunks, run as it arrives: [`ToolManager::stream`] takes any
//! stream of text chunks (a model's streaming response) and gives a stream of
//! [`StreamEvent`]s: each call's output the moment that call finishes, calls starting as soon
//! as their text is complete (see [`crate::front::stream`] for exactly when), and the text
//! not used once the input ends. The final reading is exactly the reading of the whole text.
//!
//! ```
//! use fexpr::dispatch::stream::StreamEvent;
//! use futures_util::StreamExt;
//!
//! let manager = fexpr::demo::manager();
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let chunks = futures_util::stream::iter(["[add(a=1, ", "b=2), multiply(a=2, b=3)]"].map(String::from));
//! let events: Vec<StreamEvent> = rt.block_on(manager.stream(chunks).events().collect());
//! let values: Vec<_> = events.iter().filter_map(|e| match e {
//!     StreamEvent::Output(out) => out.output.clone().ok(),
//!     _ => None,
//! }).collect();
//! assert_eq!(values, [fexpr::Value::Int(3), fexpr::Value::Int(6)]);
//! ```

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use futures_util::stream::{FuturesUnordered, Stream, StreamExt};
use futures_util::FutureExt;

use crate::call::FunctionOutput;
use crate::dispatch::deltas::{Deltas, Step};
pub use crate::dispatch::deltas::{StreamChunk, WireLines};
use crate::dispatch::manager::ToolManager;
use crate::dispatch::request::{not_run, Run};
use crate::dispatch::session::Session;
use crate::error::{clip, Error, ErrorKind};
use crate::front::check::{plan_to_run, Planned};
use crate::front::repair::RepairOptions;
use crate::front::route::Reading;
use crate::front::stream::StreamReader;
use crate::front::Ignored;
use crate::limits::Limits;

/// What a stream reports, in the order it happens.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A call finished (its output), or a call that cannot run (the output saying why).
    Output(Box<FunctionOutput>),
    /// Text that was not used, once the input ended.
    Ignored(Ignored),
}

/// One item of a stream of model text: a chunk of the text (`String`), a provider's streaming
/// event ([`StreamChunk`], or a `serde_json::Value`: see [`deltas`](crate::dispatch::deltas)),
/// or, from a source that can fail (`Result<String, Error>`, `Result<StreamChunk, Error>`),
/// the failure that ends it.
///
/// A failure ends the stream with nothing further run: a call that had already started
/// finishes and gives its output; every other call of the text read so far gets an output
/// saying it did not run and why (the failure's message), a cut-off one its own error; the
/// text not used is reported as at the end of any stream.
pub trait Chunk: Send + 'static {
    /// The text or event, or why there is no more.
    fn into_part(self) -> Result<StreamChunk, Error>;
}

impl Chunk for String {
    fn into_part(self) -> Result<StreamChunk, Error> {
        Ok(StreamChunk::Text(self))
    }
}

impl Chunk for Result<String, Error> {
    fn into_part(self) -> Result<StreamChunk, Error> {
        self.map(StreamChunk::Text)
    }
}

impl Chunk for StreamChunk {
    fn into_part(self) -> Result<StreamChunk, Error> {
        Ok(self)
    }
}

impl Chunk for Result<StreamChunk, Error> {
    fn into_part(self) -> Result<StreamChunk, Error> {
        self
    }
}

impl Chunk for serde_json::Value {
    /// A provider's event ([`StreamChunk::Event`]); a JSON string is text.
    fn into_part(self) -> Result<StreamChunk, Error> {
        Ok(match self {
            serde_json::Value::String(text) => StreamChunk::Text(text),
            event => StreamChunk::Event(event),
        })
    }
}

/// A stream of model text to run: set options with the builder methods, then take its
/// [`events`](StreamRequest::events).
pub struct StreamRequest<S> {
    manager: ToolManager,
    chunks: S,
    session: Session,
    limits: Option<Limits>,
    repair: RepairOptions,
    sandboxed: bool,
}

impl ToolManager {
    /// Run model text that arrives as `chunks` (a model's streaming response, text deltas):
    /// each call starts as soon as its text is complete, and its output is an event the moment
    /// it finishes. The repairs and reading are those of
    /// [`Input::model_output`](crate::Input::model_output) unless [`StreamRequest::repair`]
    /// says otherwise. A source that can fail gives `Result<String, Error>` items: an `Err`
    /// ends the stream with nothing further run (see [`Chunk`]).
    ///
    /// ```
    /// use fexpr::dispatch::stream::StreamEvent;
    /// use fexpr::{Error, ErrorKind};
    /// use futures_util::StreamExt;
    ///
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// // The connection drops before any call started: none runs, and each says why.
    /// let chunks = futures_util::stream::iter([
    ///     Ok("add(a=1, b=2)\nmultiply(a=2, b=3)\n".to_string()),
    ///     Err(Error::new(ErrorKind::Unsupported, "the connection was reset")),
    /// ]);
    /// let events: Vec<StreamEvent> = rt.block_on(manager.stream(chunks).events().collect());
    /// let StreamEvent::Output(out) = &events[1] else { panic!() };
    /// assert_eq!((events.len(), out.name.as_str()), (2, "multiply"));
    /// assert!(out.output.as_ref().unwrap_err().message.contains("the connection was reset"));
    /// ```
    pub fn stream<S>(&self, chunks: S) -> StreamRequest<S>
    where
        S: Stream + Send + Unpin + 'static,
        S::Item: Chunk,
    {
        StreamRequest {
            manager: self.clone(),
            chunks,
            session: Session::default(),
            limits: None,
            repair: RepairOptions::default(),
            sandboxed: false,
        }
    }
}

type CallFuture = Pin<Box<dyn Future<Output = (u32, Box<FunctionOutput>)> + Send>>;

/// The stream's state between events.
struct State<S> {
    chunks: Option<S>,
    reader: Option<StreamReader>,
    running: FuturesUnordered<CallFuture>,
    queue: VecDeque<StreamEvent>,
    manager: ToolManager,
    session: Session,
    limits: Limits,
    sandboxed: bool,
    /// The calls started early: span start, name.
    early: Vec<(u32, String)>,
    /// Calls complete in the text so far, to start once no more text is at hand.
    waiting: Vec<Planned>,
    /// Bytes of tool results so far, for the whole stream ([`Limits::max_eval_bytes`]).
    results: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The structured tool-call deltas gathered so far.
    deltas: Deltas,
    /// How each call is read and repaired.
    repair: RepairOptions,
}

impl<S> StreamRequest<S>
where
    S: Stream + Send + Unpin + 'static,
    S::Item: Chunk,
{
    /// Run with `session` (its id, state and availability reach the tools).
    pub fn session(mut self, session: Session) -> StreamRequest<S> {
        self.session = session;
        self
    }

    /// Run under `limits` instead of the manager's.
    pub fn limits(mut self, limits: Limits) -> StreamRequest<S> {
        self.limits = Some(limits);
        self
    }

    /// Read and repair with `options` (repairs, lenient reading, model format).
    pub fn repair(mut self, options: RepairOptions) -> StreamRequest<S> {
        self.repair = options;
        self
    }

    /// Evaluate each call in the sandbox.
    pub fn sandboxed(mut self) -> StreamRequest<S> {
        self.sandboxed = true;
        self
    }

    /// The events: outputs as calls finish, then the text not used. `Send`, `'static`.
    pub fn events(self) -> Pin<Box<dyn Stream<Item = StreamEvent> + Send>> {
        let limits = self.limits.unwrap_or_else(|| self.manager.limits().clone());
        let state = State {
            chunks: Some(self.chunks),
            reader: Some(StreamReader::new(self.repair)),
            running: FuturesUnordered::new(),
            queue: VecDeque::new(),
            manager: self.manager,
            session: self.session,
            limits,
            sandboxed: self.sandboxed,
            early: Vec::new(),
            waiting: Vec::new(),
            results: std::sync::Arc::default(),
            deltas: Deltas::default(),
            repair: self.repair,
        };
        Box::pin(futures_util::stream::unfold(state, next_event))
    }
}

/// The future that runs one planned call and gives its output with its span start.
fn start<S>(state: &State<S>, call: Planned) -> CallFuture {
    let manager = state.manager.clone();
    let session = state.session.clone();
    let limits = state.limits.clone();
    let sandboxed = state.sandboxed;
    let results = state.results.clone();
    let at = call.verdict.span.start;
    Box::pin(async move {
        let run = Run {
            manager: &manager,
            session: &session,
            limits: &limits,
            sandboxed,
            results,
        };
        (at, Box::new(run.planned(call).await))
    })
}

async fn next_event<S>(mut state: State<S>) -> Option<(StreamEvent, State<S>)>
where
    S: Stream + Send + Unpin + 'static,
    S::Item: Chunk,
{
    loop {
        if let Some(event) = state.queue.pop_front() {
            return Some((event, state));
        }
        if !state.waiting.is_empty() {
            // Start what is complete only once no more text is at hand: text that is already
            // there (a whole response at once) is read whole first.
            let next = match state.chunks.as_mut() {
                Some(chunks) => chunks.next().now_or_never(),
                None => Some(None),
            };
            match next {
                Some(Some(chunk)) => state.take(chunk),
                Some(None) => state.end_of_input(),
                None => state.start_waiting(),
            }
            continue;
        }
        if state.chunks.is_some() {
            let chunk = {
                let chunks = state.chunks.as_mut()?;
                if state.running.is_empty() {
                    Either::Chunk(chunks.next().await)
                } else {
                    match futures_util::future::select(chunks.next(), state.running.next()).await {
                        futures_util::future::Either::Left((chunk, _)) => Either::Chunk(chunk),
                        futures_util::future::Either::Right((done, _)) => Either::Done(done),
                    }
                }
            };
            match chunk {
                Either::Chunk(Some(chunk)) => state.take(chunk),
                Either::Chunk(None) => state.end_of_input(),
                Either::Done(Some((at, out))) => state.done(at, out),
                Either::Done(None) => {}
            }
            continue;
        }
        match state.running.next().await {
            Some((at, out)) => state.done(at, out),
            None => return None,
        }
    }
}

/// What woke the stream up.
enum Either<C> {
    Chunk(Option<C>),
    Done(Option<(u32, Box<FunctionOutput>)>),
}

impl<S> State<S> {
    /// A chunk from the source: its text read, or its failure ending the stream.
    fn take(&mut self, chunk: impl Chunk) {
        match chunk.into_part() {
            Ok(StreamChunk::Text(text)) => self.push(&text),
            Ok(StreamChunk::Event(event)) => {
                let steps = self.deltas.push(&event, &self.limits);
                self.steps(steps);
            }
            Ok(StreamChunk::Wire(text)) => {
                let steps = self.deltas.push_wire(&text, &self.limits);
                self.steps(steps);
            }
            Err(error) => self.stop(error),
        }
    }

    /// What the deltas gave: text read as text, each complete call started now (through the
    /// checks of a whole message), rows and text not used reported.
    fn steps(&mut self, steps: Vec<Step>) {
        for step in steps {
            match step {
                Step::Text(text) => self.push(&text),
                Step::Call(call) => {
                    let text = call.to_json_text();
                    let plan = plan_to_run(
                        &text,
                        self.manager.context(),
                        &self.limits,
                        &self.repair,
                        Reading::default(),
                    );
                    if let Some(error) = plan.error {
                        let error = Error {
                            span: None,
                            ..error
                        };
                        let mut row = FunctionOutput::failed(call.name, text, error);
                        row.call_id = call.id;
                        self.queue.push_back(StreamEvent::Output(Box::new(row)));
                        continue;
                    }
                    for planned in plan.calls {
                        // Its spans would index the call's own JSON, which is not the text the
                        // stream was given: the error stands without one.
                        let future = start(self, planned).map(|(at, mut out)| {
                            if let Err(error) = out.output.as_mut() {
                                error.span = None;
                            }
                            (at, out)
                        });
                        self.running.push(Box::pin(future));
                    }
                    for ignored in plan.ignored {
                        self.queue.push_back(StreamEvent::Ignored(ignored));
                    }
                }
                Step::Row(row) => self.queue.push_back(StreamEvent::Output(row)),
                Step::Ignored(ignored) => self.queue.push_back(StreamEvent::Ignored(ignored)),
            }
        }
    }

    /// The source failed with `error`: nothing further starts. The text so far is read whole
    /// for what to report: a call that started early gives its output when it finishes; every
    /// other call an output saying it did not run (its own error, or the failure); the text
    /// not used as at the end.
    fn stop(&mut self, error: Error) {
        self.chunks = None;
        self.waiting.clear();
        let steps = self.deltas.stop(&error);
        self.steps(steps);
        let Some(reader) = self.reader.take() else {
            return;
        };
        let early = std::mem::take(&mut self.early);
        let plan = reader.finish(self.manager.context(), &self.limits);
        let stopped = Error::new(
            ErrorKind::Unsupported,
            format!(
                "not run: the model's text stopped before the stream ended ({})",
                clip(&error.message, 200)
            ),
        )
        .with_hint(
            "nothing after the failure runs; run the text again once the model's whole response is at hand",
        );
        for mut call in plan.calls {
            let span = call.verdict.span;
            if call.verdict.valid && early.iter().any(|(start, _)| *start == span.start) {
                continue;
            }
            if call.verdict.error.is_none() {
                call.verdict.error = Some(stopped.clone().at(span));
            }
            self.queue
                .push_back(StreamEvent::Output(Box::new(not_run(call))));
        }
        for ignored in plan.ignored {
            self.queue.push_back(StreamEvent::Ignored(ignored));
        }
    }

    /// Read `chunk`; start what is complete.
    fn push(&mut self, chunk: &str) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        match reader.push(chunk, self.manager.context(), &self.limits) {
            Ok(calls) => self.waiting.extend(calls),
            // Over a limit: stop reading; the final reading reports it, nothing more starts.
            Err(_) => self.end_of_input(),
        }
    }

    /// Start the calls that are complete: no more text is at hand.
    fn start_waiting(&mut self) {
        for call in std::mem::take(&mut self.waiting) {
            self.early
                .push((call.verdict.span.start, call.verdict.name.clone()));
            let future = start(self, call);
            self.running.push(future);
        }
    }

    /// The input ended (or went over a limit): read the whole text, start what did not start
    /// early, and report the rest. A text without a call gives no output (only its ignored
    /// text), as [`Input::model_output`](crate::Input::model_output) does.
    fn end_of_input(&mut self) {
        self.chunks = None;
        let steps = self.deltas.finish(&self.limits);
        self.steps(steps);
        // What waited to start is read again, whole, below.
        self.waiting.clear();
        let Some(reader) = self.reader.take() else {
            return;
        };
        let text = reader.text().to_string();
        let early = std::mem::take(&mut self.early);
        let plan = reader.finish(self.manager.context(), &self.limits);
        if let Some(error) = plan.error {
            self.queue
                .push_back(StreamEvent::Output(Box::new(FunctionOutput::failed(
                    clip(&text, 60),
                    &text,
                    error,
                ))));
        }
        for call in plan.calls {
            let span = call.verdict.span;
            // A call that started early has its output already (its one row): the whole
            // reading of the same call is not run again.
            if call.verdict.valid && early.iter().any(|(start, ..)| *start == span.start) {
                continue;
            }
            if call.run.is_some() {
                let future = start(self, call);
                self.running.push(future);
                continue;
            }
            let mut row = not_run(call);
            // An item the whole text refuses (a cut-off list, a unit that turned out to be
            // code) that holds calls which started early, while the text was arriving: they
            // ran, and their own rows say so; this row is about the rest of the item.
            let ran: Vec<&str> = early
                .iter()
                .filter(|(start, ..)| span.start <= *start && *start < span.end)
                .map(|(_, name)| name.as_str())
                .collect();
            if let (false, Err(error)) = (ran.is_empty(), row.output.as_mut()) {
                error.message = format!(
                    "{} (`{}` started while the text was arriving, before the rest was read, \
                     and ran: see its own output)",
                    error.message,
                    ran.join("`, `")
                );
            }
            self.queue.push_back(StreamEvent::Output(Box::new(row)));
        }
        for ignored in plan.ignored {
            self.queue.push_back(StreamEvent::Ignored(ignored));
        }
    }

    /// A call finished.
    fn done(&mut self, _at: u32, out: Box<FunctionOutput>) {
        self.queue.push_back(StreamEvent::Output(out));
    }
}

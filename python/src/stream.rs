//! Model text run as it arrives, from Python: `ToolManager.stream(chunks)` (any iterable of
//! str) and `astream` (any async iterable, such as an OpenAI streaming response's text deltas)
//! push each chunk into the engine's stream ([`fexpr::ToolManager::stream`]) and hand back each
//! event as it happens: a call's `FunctionOutput` the moment the call finishes, then the text
//! not used (`Ignored`). The engine runs on the binding's runtime; waiting for an event releases
//! the GIL.

use std::sync::{Arc, Mutex};

use fexpr::stream::StreamEvent;
use futures_util::StreamExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::Records;
use crate::output::{self, Ignored};
use crate::request::RequestState;

/// What the engine's stream reads: a chunk of text or the source's failure.
type Item = Result<String, fexpr::Error>;

/// The engine's stream of chunks, fed by [`Stream::push`] and [`Stream::fail`].
type Chunks = std::pin::Pin<Box<dyn futures_util::Stream<Item = Item> + Send>>;

/// A running stream: chunks go in with `push`, events come out with `next`/`try_next`.
#[pyclass(module = "fexpr._fexpr")]
pub struct Stream {
    /// Each message: a chunk (or the source's failure), and whether it is the last (so the end
    /// is known with it).
    chunks: Mutex<Option<tokio::sync::mpsc::UnboundedSender<(Item, bool)>>>,
    events: Mutex<std::sync::mpsc::Receiver<StreamEvent>>,
    state: Arc<RequestState>,
    records: Arc<Records>,
}

impl Stream {
    /// Start `request` (over a channel of chunks) on the runtime, its tools seeing `session`.
    pub fn start(
        manager: &fexpr::ToolManager,
        configure: impl FnOnce(
            fexpr::stream::StreamRequest<Chunks>,
        ) -> fexpr::stream::StreamRequest<Chunks>,
        session: Option<Py<PyAny>>,
        max_results: usize,
        records: Arc<Records>,
    ) -> Stream {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<(Item, bool)>();
        let chunks: Chunks = Box::pin(futures_util::stream::unfold(Some(rx), |rx| async move {
            let mut rx = rx?;
            let (chunk, last) = rx.recv().await?;
            Some((chunk, (!last).then_some(rx)))
        }));
        let (events_tx, events_rx) = std::sync::mpsc::channel();
        let state = RequestState::new(None, session, max_results);
        let mut events = configure(manager.stream(chunks)).events();
        let scoped = state.clone();
        let waiting = state.clone();
        crate::runtime::spawn_task(scoped.scope(async move {
            loop {
                let event = tokio::select! {
                    biased;
                    // A tool raised `KeyboardInterrupt` or `SystemExit`: the stream stops, and
                    // nothing after it starts (its pending calls are dropped); the caller gets
                    // the exception from `next`.
                    () = waiting.interrupted.notified() => break,
                    event = events.next() => event,
                };
                let Some(event) = event else { break };
                if events_tx.send(event).is_err() {
                    break;
                }
            }
        }));
        Stream {
            chunks: Mutex::new(Some(tx)),
            events: Mutex::new(events_rx),
            state,
            records,
        }
    }

    fn event(&self, py: Python<'_>, event: StreamEvent) -> PyResult<Py<PyAny>> {
        match event {
            StreamEvent::Output(out) => Ok(Py::new(
                py,
                output::FunctionOutput::new(py, *out, Some(&self.state), &self.records)?,
            )?
            .into_any()),
            StreamEvent::Ignored(ignored) => {
                Ok(Py::new(py, Ignored::from_rust(&ignored))?.into_any())
            }
            _ => Ok(py.None()),
        }
    }
}

#[pymethods]
impl Stream {
    /// Add a chunk of the model's text; `last`: the text ends with it (the stream closes), so
    /// nothing in it starts before the whole text is read. `False` when the stream takes no
    /// more text (it stopped over a limit, whose `Limit` output is among the events, or it
    /// was closed): the caller stops feeding it and reads the rest of the events.
    #[pyo3(signature = (chunk, last=false))]
    fn push(&self, chunk: &str, last: bool) -> PyResult<bool> {
        let mut guard = self
            .chunks
            .lock()
            .map_err(|_| PyValueError::new_err("the stream failed"))?;
        let sent = guard
            .as_ref()
            .is_some_and(|tx| tx.send((Ok(chunk.to_string()), last)).is_ok());
        if last || !sent {
            guard.take();
        }
        Ok(sent)
    }

    /// The chunk source failed (it raised, gave something that is not text, or was
    /// interrupted) with `message`: the stream ends with nothing further run. A call already
    /// running finishes; every other call gets an output saying it did not run and why.
    fn fail(&self, message: &str) {
        if let Ok(mut guard) = self.chunks.lock() {
            if let Some(tx) = guard.take() {
                let error = fexpr::Error::new(fexpr::ErrorKind::Unsupported, message);
                let _ = tx.send((Err(error), true));
            }
        }
    }

    /// The text has ended: the rest is read whole and run.
    fn close(&self) {
        if let Ok(mut guard) = self.chunks.lock() {
            if let Some(tx) = guard.take() {
                let _ = tx.send((Ok(String::new()), true));
            }
        }
    }

    /// The next event, waiting for it (the GIL released); `None` once the stream has ended.
    fn next(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let event = py.detach(|| self.events.lock().ok().and_then(|rx| rx.recv().ok()));
        if let Some(error) = self.state.take_interrupt() {
            return Err(error);
        }
        event.map(|e| self.event(py, e)).transpose()
    }

    /// `(ended, event)`: the next event if one is there now (`None` if not yet), and whether
    /// the stream has ended.
    fn try_next(&self, py: Python<'_>) -> PyResult<(bool, Option<Py<PyAny>>)> {
        let next = match self.events.lock() {
            Ok(rx) => rx.try_recv(),
            Err(_) => Err(std::sync::mpsc::TryRecvError::Disconnected),
        };
        if let Some(error) = self.state.take_interrupt() {
            return Err(error);
        }
        match next {
            Ok(event) => Ok((false, Some(self.event(py, event)?))),
            Err(std::sync::mpsc::TryRecvError::Empty) => Ok((false, None)),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => Ok((true, None)),
        }
    }
}

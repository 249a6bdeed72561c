//! What the program supplies to one execution and what tools receive besides their arguments.
//!
//! A [`Session`] is the caller's side: an id (a conversation, a trajectory: it selects pooled
//! environments, see [`EnvPool`](crate::dispatch::pool::EnvPool)), the id of the model's tool-call block,
//! the caller's state object, and optionally a channel of [`ToolEvent`]s.
//!
//! A [`CallContext`] is the tool's side: tools built with
//! [`FunctionTool::with_context`](crate::FunctionTool::with_context) receive one per call. It
//! carries the injected values (`tool_call_id`, the state, dependencies registered on the
//! manager) — none of which appear in the tool's schema, so a model cannot see or set them —
//! and lets the tool report status and partial results while it runs.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::call::ToolOutput;
use crate::error::{Error, ErrorKind};
use crate::value::Value;

type Shared = Arc<dyn Any + Send + Sync>;

/// The caller's side of one execution. Cheap to clone.
///
/// ```
/// use std::sync::Arc;
/// let session = fexpr::Session::new().id("trajectory-7").state(Arc::new(42_u32));
/// assert_eq!(session.get_id(), Some("trajectory-7"));
/// assert_eq!(*session.get_state::<u32>().unwrap(), 42);
/// assert!(session.get_state::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct Session {
    id: Option<Arc<str>>,
    state: Option<Shared>,
    pub(crate) events: Option<mpsc::Sender<ToolEvent>>,
}

impl Session {
    /// A session with no id, no state and no events.
    pub fn new() -> Session {
        Session::default()
    }

    /// The session id: which pooled environment the calls use (same id, same environment).
    pub fn id(mut self, id: impl Into<Arc<str>>) -> Session {
        self.id = Some(id.into());
        self
    }

    /// The caller's state object (agent state, tree data, ...), shared with tools and with
    /// availability predicates. Use interior mutability (a `Mutex`) for state tools change.
    pub fn state<T: Any + Send + Sync>(mut self, state: Arc<T>) -> Session {
        self.state = Some(state);
        self
    }

    /// Report events on a channel holding up to `capacity` events: the returned
    /// [`ToolEvents`] yields them. Read it while the execution runs (for instance with
    /// `tokio::join!`): a full channel makes the manager wait, and drops a tool's status and
    /// partial events. The stream ends when every clone of the session is dropped.
    pub fn events(mut self, capacity: usize) -> (Session, ToolEvents) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        self.events = Some(tx);
        (self, ToolEvents { rx })
    }

    /// The session id, if set.
    pub fn get_id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The state object, if it is a `T`.
    pub fn get_state<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.state.clone()?.downcast::<T>().ok()
    }
}

/// Values registered on a manager for tools to receive by type.
#[derive(Clone, Default)]
pub(crate) struct Dependencies(HashMap<TypeId, Shared>);

impl Dependencies {
    pub(crate) fn insert<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.0.insert(TypeId::of::<T>(), value);
    }

    fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.0.get(&TypeId::of::<T>())?.clone().downcast::<T>().ok()
    }
}

/// What a tool built with [`FunctionTool::with_context`](crate::FunctionTool::with_context)
/// receives besides its arguments. Cheap to clone.
#[derive(Clone)]
pub struct CallContext {
    pub(crate) session: Session,
    pub(crate) dependencies: Arc<Dependencies>,
    pub(crate) tool: Arc<str>,
    pub(crate) tool_call_id: Arc<str>,
    pub(crate) index: u32,
    /// Set once a partial result reached a listener (only when someone listens).
    pub(crate) streamed: Option<Arc<AtomicBool>>,
}

impl CallContext {
    /// A context for a call made outside a manager (`Tool::call`): no session, no
    /// dependencies, a fresh tool-call id.
    pub fn detached(tool: &str) -> CallContext {
        CallContext {
            session: Session::default(),
            dependencies: Arc::default(),
            tool: tool.into(),
            tool_call_id: crate::call::fresh_call_id().into(),
            index: 0,
            streamed: None,
        }
    }

    /// The call id of the top-level call this invocation belongs to: the id the model gave
    /// it (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`, a JSON call's `id`) or the one
    /// generated for it — the `call_id` of its [`FunctionOutput`](crate::FunctionOutput).
    /// Nested calls inside one top-level call share it; [`index`](CallContext::index) tells
    /// invocations apart. (In the sandbox, where the guest alone knows the top-level calls, two
    /// nested calls side by side inside one top-level call may see two ids.)
    pub fn tool_call_id(&self) -> &str {
        &self.tool_call_id
    }

    /// This call's position among the calls of its execution (0, 1, ... in start order).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The caller's session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session id; an error the model can read when the caller gave none.
    pub fn session_id(&self) -> Result<&str, Error> {
        self.session.get_id().ok_or_else(|| {
            Error::new(
                ErrorKind::ToolFailed,
                format!("tool `{}` needs a session id and none was given", self.tool),
            )
            .with_hint("the program must run this tool with Session::id")
        })
    }

    /// The caller's state object as a `T`.
    pub fn state<T: Any + Send + Sync>(&self) -> Result<Arc<T>, Error> {
        self.session.get_state::<T>().ok_or_else(|| {
            Error::new(
                ErrorKind::ToolFailed,
                format!(
                    "tool `{}` needs the caller's state (a `{}`) and none was given",
                    self.tool,
                    std::any::type_name::<T>()
                ),
            )
        })
    }

    /// The dependency of type `T` registered with
    /// [`ToolManagerBuilder::dependency`](crate::dispatch::manager::ToolManagerBuilder::dependency).
    pub fn dependency<T: Any + Send + Sync>(&self) -> Result<Arc<T>, Error> {
        self.dependencies.get::<T>().ok_or_else(|| {
            Error::new(
                ErrorKind::ToolFailed,
                format!(
                    "tool `{}` needs a `{}` and none is registered",
                    self.tool,
                    std::any::type_name::<T>()
                ),
            )
        })
    }

    /// Report a short status ("Searching…") while the tool runs. Returns `false` when nobody
    /// listens or the event channel is full (the event is dropped, the tool goes on).
    pub fn status(&self, message: impl Into<String>) -> bool {
        self.emit(EventKind::Status(message.into()))
    }

    /// Report a partial result before the final output. Returns `false` as
    /// [`status`](CallContext::status) does.
    pub fn partial(&self, value: Value) -> bool {
        let sent = self.emit(EventKind::Partial(value));
        if let (true, Some(streamed)) = (sent, &self.streamed) {
            streamed.store(true, Ordering::Relaxed);
        }
        sent
    }

    /// Whether a partial result of this call reached a listener.
    pub(crate) fn has_streamed(&self) -> bool {
        self.streamed
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Whether anyone listens for events (so a tool can skip building partial results).
    pub fn is_streaming(&self) -> bool {
        self.session
            .events
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    fn emit(&self, kind: EventKind) -> bool {
        match &self.session.events {
            Some(tx) => tx.try_send(self.event(kind)).is_ok(),
            None => false,
        }
    }

    pub(crate) fn event(&self, kind: EventKind) -> ToolEvent {
        ToolEvent {
            index: self.index,
            tool: self.tool.clone(),
            tool_call_id: self.tool_call_id.clone(),
            kind,
        }
    }
}

/// Something that happened during one tool call of an execution.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEvent {
    /// The call's position in its execution ([`CallContext::index`]): events of one call share it.
    pub index: u32,
    /// The tool's name.
    pub tool: Arc<str>,
    /// The execution's tool-call id.
    pub tool_call_id: Arc<str>,
    /// What happened.
    pub kind: EventKind,
}

/// The kinds of [`ToolEvent`]: any number of `Status` and `Partial`, then one `Final` or `Error`.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A short status message from the tool.
    Status(String),
    /// A partial result from the tool.
    Partial(Value),
    /// The call's output (with its observation, if any).
    Final(ToolOutput),
    /// The call failed.
    Error(Error),
}

/// The events of an execution run with a session made by [`Session::events`]; also a
/// `futures` `Stream`.
pub struct ToolEvents {
    rx: mpsc::Receiver<ToolEvent>,
}

impl ToolEvents {
    /// The next event; `None` once every clone of the session is dropped and all events were read.
    pub async fn recv(&mut self) -> Option<ToolEvent> {
        self.rx.recv().await
    }

    /// An event already waiting, if any.
    pub fn try_recv(&mut self) -> Option<ToolEvent> {
        self.rx.try_recv().ok()
    }
}

impl futures_util::Stream for ToolEvents {
    type Item = ToolEvent;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<ToolEvent>> {
        self.rx.poll_recv(cx)
    }
}

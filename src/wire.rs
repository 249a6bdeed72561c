//! The sandbox wire: what the host and the wasm guest exchange, encoded with postcard.
//!
//! - Request (host → guest): `GuestRequest { source, limits, context }`. The context is
//!   encoded once per manager and appended, since postcard encodes a struct as its fields
//!   in order ([`encode_request`]).
//! - Host call (guest → host): a batch of [`ToolRequest`]s; reply: one `Result<Value, Error>`
//!   per request.
//! - Response (guest → host): [`GuestResponse`].
//!
//! Everything the guest sends is decoded and checked by the host as untrusted input.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;

use crate::context::Context;
use crate::error::{Error, ErrorKind};
use crate::eval::{self, Dispatch, ToolRequest, UnitOutcome};
use crate::limits::Limits;
use crate::syntax;
use crate::value::Value;

/// What the host asks the guest to evaluate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GuestRequest {
    /// The model's text.
    pub source: String,
    /// The evaluation limits.
    pub limits: Limits,
    /// The allow-list.
    pub context: Context,
}

/// What the guest answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GuestResponse {
    /// The text parsed; one outcome per unit.
    Units(Vec<UnitOutcome>),
    /// The text did not parse (or the request was unreadable).
    Failed(Error),
}

/// Encode a context once, for [`encode_request`].
pub fn encode_context(context: &Context) -> Result<Vec<u8>, Error> {
    postcard::to_allocvec(context).map_err(|e| wire_error("encode the context", e))
}

/// Encode a request from its parts, reusing an encoded context.
pub fn encode_request(source: &str, limits: &Limits, context: &[u8]) -> Result<Vec<u8>, Error> {
    let mut bytes = postcard::to_allocvec(&(source, limits))
        .map_err(|e| wire_error("encode the request", e))?;
    bytes.extend_from_slice(context);
    Ok(bytes)
}

/// Encode any wire message.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, Error> {
    postcard::to_allocvec(value).map_err(|e| wire_error("encode", e))
}

/// Decode any wire message (from an untrusted peer: errors, never panics).
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, Error> {
    postcard::from_bytes(bytes).map_err(|e| wire_error("decode", e))
}

fn wire_error(what: &str, e: postcard::Error) -> Error {
    Error::new(
        ErrorKind::Sandbox,
        format!("sandbox wire: cannot {what}: {e}"),
    )
}

/// Parse, split into units, evaluate: the whole pipeline the guest runs.
pub async fn evaluate<D: Dispatch>(
    source: &str,
    context: &Context,
    limits: &Limits,
    dispatch: &D,
) -> GuestResponse {
    match syntax::parse(source, limits) {
        Ok(expr) => {
            GuestResponse::Units(eval::run(&eval::units(&expr), context, limits, dispatch).await)
        }
        Err(e) => GuestResponse::Failed(e),
    }
}

/// The guest's entry point: decode the request, evaluate with tool calls sent through
/// `host`, encode the response.
pub fn guest_evaluate(request: &[u8], host: &mut dyn FnMut(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let response = match decode::<GuestRequest>(request) {
        Ok(req) => {
            let dispatch = HostDispatch {
                host: RefCell::new(host),
            };
            now(evaluate(&req.source, &req.context, &req.limits, &dispatch)).unwrap_or_else(|| {
                GuestResponse::Failed(Error::new(
                    ErrorKind::Sandbox,
                    "evaluation did not complete",
                ))
            })
        }
        Err(e) => GuestResponse::Failed(e),
    };
    encode(&response).unwrap_or_default()
}

/// Tool calls from inside the guest: one host call per wave.
struct HostDispatch<'h> {
    host: RefCell<&'h mut HostFn<'h>>,
}

/// The guest's way to the host: request bytes in, reply bytes out.
type HostFn<'a> = dyn FnMut(&[u8]) -> Vec<u8> + 'a;

impl Dispatch for HostDispatch<'_> {
    async fn dispatch(&self, requests: Vec<ToolRequest>) -> Vec<Result<Value, Error>> {
        let n = requests.len();
        let reply = match encode(&requests) {
            Ok(bytes) => (self.host.borrow_mut())(&bytes),
            Err(e) => return vec![Err(e); n],
        };
        match decode::<Vec<Result<Value, Error>>>(&reply) {
            Ok(results) if results.len() == n => results,
            // The host refused the whole batch with one error.
            Ok(mut results) if results.len() == 1 && matches!(results.first(), Some(Err(_))) => {
                match results.pop() {
                    Some(Err(e)) => vec![Err(e); n],
                    _ => vec![],
                }
            }
            Ok(_) => vec![
                Err(Error::new(
                    ErrorKind::Sandbox,
                    "the host answered the wrong number of results"
                ));
                n
            ],
            Err(e) => vec![Err(e); n],
        }
    }
}

/// Run a future that never waits (the guest's host calls are synchronous) to completion.
fn now<F: std::future::Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

//! The sandbox wire: what the host and the wasm guest exchange, encoded with postcard.
//!
//! - Request (host → guest): [`GuestRequest`] `{ input, limits, context }`: the input is text
//!   (an expression, fexpr's JSON forms) or the checked calls of the front door as trees
//!   ([`GuestInput::Calls`]: the guest evaluates them as they are, without reading text
//!   again). The context is encoded once per manager ([`encode_context`]) and appended, since
//!   postcard encodes a struct as its fields in order ([`encode_request`]). Each context entry
//!   is encoded on its own, so that the guest decodes only the entries the expression names.
//! - Host call (guest → host): a batch of [`ToolRequest`]s; reply: one `Result<Value, Error>`
//!   per request (or one error for the whole batch).
//! - Response (guest → host): [`GuestResponse`].
//!
//! Everything the guest sends is decoded and checked by the host as untrusted input.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind};
use crate::eval::{self, Dispatch, ToolRequest, UnitOutcome};
use crate::limits::Limits;
use crate::resolve::context::{Context, Entry, Resolve};
use crate::syntax::{self, Expr};
use crate::value::Value;

/// What the host asks the guest to evaluate, borrowed from the request bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GuestRequest<'a> {
    /// What to evaluate.
    #[serde(borrow)]
    pub input: GuestInput<'a>,
    /// The evaluation limits.
    pub limits: Limits,
    /// The allow-list, one entry at a time.
    #[serde(borrow)]
    pub context: WireContext<'a>,
}

/// What the guest evaluates: text it reads, or calls the host's front door read and checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GuestInput<'a> {
    /// A call expression, or a list of calls: [`syntax::parse`].
    Expression(&'a str),
    /// fexpr's JSON forms (`Function`, `FunctionExpression`, a list of them):
    /// [`json_input::run`](crate::front::json_input::run).
    Json(&'a str),
    /// Checked calls as the front door hands them on (a JSON form's name and keys exactly as
    /// written), each one unit, evaluated as they are: spans index the call's own text, which
    /// the host keeps.
    Calls(Vec<Expr>),
}

/// The context on the wire: the entries in the context's order, each encoded on its own and
/// decoded only when the expression uses its name, plus their indices sorted by name so that
/// the guest finds a name by binary search without building anything.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireContext<'a> {
    /// The entries in insertion order.
    #[serde(borrow)]
    pub entries: Vec<WireEntry<'a>>,
    /// Indices into `entries`, sorted by name.
    pub by_name: Vec<u32>,
}

/// One context entry on the wire: its name, whether it is a variable (all "did you mean"
/// hints need), and the [`Entry`] encoded on its own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireEntry<'a> {
    /// The name or dotted path.
    pub name: &'a str,
    /// Whether the entry is a variable.
    pub variable: bool,
    /// The encoded [`Entry`].
    pub entry: &'a [u8],
}

/// The guest's view of a [`WireContext`]: entries decoded on first use.
pub struct LazyContext<'w, 'a> {
    wire: &'w WireContext<'a>,
    decoded: Vec<OnceLock<Option<Entry>>>,
}

impl<'w, 'a> LazyContext<'w, 'a> {
    /// The view of `wire`; nothing is decoded yet.
    pub fn new(wire: &'w WireContext<'a>) -> LazyContext<'w, 'a> {
        let decoded = wire.entries.iter().map(|_| OnceLock::new()).collect();
        LazyContext { wire, decoded }
    }

    /// The index of `name`'s entry. A malformed index (only a host bug can cause one) makes
    /// names absent, never a panic.
    fn find(&self, name: &str) -> Option<usize> {
        let entries = &self.wire.entries;
        let name_at = |i: &u32| entries.get(*i as usize).map(|e| e.name);
        let at = self
            .wire
            .by_name
            .binary_search_by(|i| name_at(i).unwrap_or_default().cmp(name))
            .ok()?;
        let index = *self.wire.by_name.get(at)? as usize;
        (name_at(&(index as u32)) == Some(name)).then_some(index)
    }
}

impl Resolve for LazyContext<'_, '_> {
    /// The entry of `name`, decoded now if it was not yet. An entry that does not decode
    /// (the host encoded it, so only a bug can cause that) is treated as absent.
    fn get(&self, name: &str) -> Option<&Entry> {
        let index = self.find(name)?;
        let bytes = self.wire.entries.get(index)?.entry;
        self.decoded
            .get(index)?
            .get_or_init(|| decode::<Entry>(bytes).ok())
            .as_ref()
    }

    fn names(&self) -> Vec<(&str, bool)> {
        self.wire
            .entries
            .iter()
            .map(|e| (e.name, e.variable))
            .collect()
    }
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
    let encoded = context
        .entries()
        .map(|(name, entry)| Ok((name, entry.is_variable(), encode(entry)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let entries = encoded
        .iter()
        .map(|(name, variable, bytes)| WireEntry {
            name,
            variable: *variable,
            entry: bytes,
        })
        .collect::<Vec<_>>();
    let mut by_name: Vec<u32> = (0..entries.len())
        .map(|i| {
            u32::try_from(i).map_err(|_| Error::new(ErrorKind::Limit, "too many context entries"))
        })
        .collect::<Result<_, _>>()?;
    by_name.sort_by_key(|i| entries.get(*i as usize).map(|e| e.name));
    encode(&WireContext { entries, by_name })
}

/// Encode a request from its parts, reusing an encoded context.
pub fn encode_request(
    input: &GuestInput<'_>,
    limits: &Limits,
    context: &[u8],
) -> Result<Vec<u8>, Error> {
    let mut bytes =
        postcard::to_allocvec(&(input, limits)).map_err(|e| wire_error("encode the request", e))?;
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

/// Parse (or read the JSON forms), split into units, evaluate: the whole pipeline the guest
/// runs. Checked calls are evaluated as they are, one unit each.
pub async fn evaluate<D: Dispatch>(
    input: &GuestInput<'_>,
    context: &dyn Resolve,
    limits: &Limits,
    dispatch: &D,
) -> GuestResponse {
    let parsed = match input {
        GuestInput::Json(source) => {
            return match crate::front::json_input::run(source, context, limits, dispatch).await {
                Ok(outcomes) => GuestResponse::Units(outcomes),
                Err(e) => GuestResponse::Failed(e),
            }
        }
        GuestInput::Calls(calls) => {
            let units: Vec<&Expr> = calls.iter().collect();
            return GuestResponse::Units(eval::run(&units, context, limits, dispatch).await);
        }
        GuestInput::Expression(source) => syntax::parse(source, limits),
    };
    match parsed {
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
            let context = LazyContext::new(&req.context);
            now(evaluate(&req.input, &context, &req.limits, &dispatch)).unwrap_or_else(|| {
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

#[cfg(test)]
#[cfg(feature = "native")]
mod tests {
    use super::*;
    use crate::types::RecordType;
    use std::sync::Arc;

    /// A context with an entry of each kind: variables, a record, numpy builtins and a tool.
    fn context() -> Context {
        let add = serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        });
        let point = serde_json::json!({
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        });
        let mut context = Context::new()
            .variable("x", 2)
            .numpy("np")
            .record_type(RecordType::from_schema("Point", &point));
        context.insert(
            "add",
            Entry::Tool(Arc::new(RecordType::from_schema("add", &add))),
        );
        context
    }

    /// The request for `add(a=2, b=3)` in `context`, with the default limits.
    fn add_request(context: &Context) -> Vec<u8> {
        let bytes = encode_context(context).expect("encodes");
        encode_request(
            &GuestInput::Expression("add(a=2, b=3)"),
            &Limits::default(),
            &bytes,
        )
        .expect("encodes")
    }

    #[test]
    fn the_guest_sees_the_context_the_host_encoded() {
        let context = &context();
        let request = add_request(context);
        let decoded: GuestRequest = decode(&request).expect("decodes");
        assert_eq!(decoded.input, GuestInput::Expression("add(a=2, b=3)"));
        assert_eq!(decoded.limits, Limits::default());
        let view = LazyContext::new(&decoded.context);
        assert_eq!(view.names(), context.names());
        for (name, entry) in context.entries() {
            assert_eq!(Resolve::get(&view, name), Some(entry), "{name}");
        }
        assert_eq!(Resolve::get(&view, "os"), None);
    }

    #[test]
    fn deeply_nested_values_from_a_peer_are_errors_not_stack_overflows() {
        // `Value::List` is variant 7; each level is [7, 1] (one element), then `None` (0).
        let nested = |levels: usize| {
            let mut bytes = [7u8, 1].repeat(levels);
            bytes.push(0);
            bytes
        };
        let at_limit = nested(crate::value::MAX_DECODE_DEPTH - 1);
        assert!(decode::<Value>(&at_limit).is_ok());
        for levels in [crate::value::MAX_DECODE_DEPTH, 1_000_000] {
            let error = decode::<Value>(&nested(levels)).expect_err("too deep");
            assert_eq!(error.kind, ErrorKind::Sandbox);
            // A failed decode leaves no depth behind: a shallow value still decodes.
            assert!(decode::<Value>(&nested(3)).is_ok());
        }
        let outcome = UnitOutcome {
            span: crate::error::Span::default(),
            call: None,
            result: Ok(Value::None),
        };
        let mut response = encode(&GuestResponse::Units(vec![outcome])).expect("encodes");
        // Replace the trailing `None` with a million levels of lists.
        response.pop();
        response.extend(nested(1_000_000));
        assert!(decode::<GuestResponse>(&response).is_err());
    }

    #[test]
    fn empty_arrays_with_huge_dimensions_do_not_decode() {
        let array = |shape: &[usize]| {
            let a = ndarray::ArrayD::<i64>::from_shape_vec(ndarray::IxDyn(shape), vec![])
                .expect("an empty array");
            encode(&Value::Array(crate::NdArray::Int(a))).expect("encodes")
        };
        // Walking this one (repr, JSON) would visit 2^60 empty rows.
        assert!(decode::<Value>(&array(&[1 << 30, 1 << 30, 0])).is_err());
        assert!(decode::<Value>(&array(&[1000, 0, 100])).is_ok());
        assert!(decode::<Value>(&array(&[12, 1663, 19, 0])).is_err());
        assert!(decode::<Value>(&array(&[0])).is_ok());
    }

    #[test]
    fn truncated_requests_are_errors() {
        let request = add_request(&context());
        for len in 0..request.len() {
            let prefix = request.get(..len).unwrap_or_default();
            assert!(decode::<GuestRequest>(prefix).is_err(), "{len}");
        }
    }
}

//! The sandbox wire: what the host and the wasm guest exchange, encoded with postcard.
//!
//! - Request (host → guest): [`GuestRequest`] `{ input, limits }`: the input is text (an
//!   expression, fexpr's JSON forms) or the checked calls of the front door as trees
//!   ([`GuestInput::Calls`]: the guest evaluates them as they are, without reading text
//!   again).
//! - Context (guest → host, on demand): the manager's context stays on the host, each entry
//!   encoded once per manager in a [`ContextTable`]; the guest asks for a name when its
//!   expression uses it (the `host_lookup` import, [`HostContext`]) and decodes that entry
//!   only. A request carries no context, whatever the number of tools.
//! - Host call (guest → host): a batch of [`ToolRequest`]s; reply: one `Result<Value, Error>`
//!   per request (or one error for the whole batch).
//! - Response (guest → host): [`GuestResponse`].
//!
//! Everything the guest sends is decoded and checked by the host as untrusted input.

use elsa::sync::FrozenMap;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind};
use crate::eval::{self, Dispatch, ToolRequest, UnitOutcome};
use crate::limits::Limits;
use crate::resolve::context::{self, Context, Entry, Resolve};
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

/// A manager's context as the guest reads it, kept on the host: every entry encoded once,
/// found by name when the guest asks for it ([`ContextTable::answer`], the guest's
/// `host_lookup`), so that a request carries no context and the guest decodes only the
/// entries its expression names.
#[derive(Debug, Default)]
pub struct ContextTable {
    /// Each entry's own name with its encoded [`Entry`].
    entries: IndexMap<String, Box<[u8]>, foldhash::fast::RandomState>,
    /// The context's Python aliases, resolved as [`Context::get`] resolves them.
    aliases: context::Aliases,
    /// Every name in order with whether it is a variable (all "did you mean" hints need),
    /// encoded: the answer for the empty key.
    names: Box<[u8]>,
}

impl ContextTable {
    /// Encodes `context` for the guest.
    ///
    /// # Errors
    /// An entry that does not encode (a bug: every [`Entry`] encodes), as an
    /// [`ErrorKind::Sandbox`] error.
    pub fn new(context: &Context) -> Result<ContextTable, Error> {
        let entries = context
            .entries()
            .map(|(name, entry)| Ok((name.to_owned(), encode(entry)?.into())))
            .collect::<Result<_, Error>>()?;
        let names = encode(&context.names())?.into();
        Ok(ContextTable {
            entries,
            aliases: context.aliases().clone(),
            names,
        })
    }

    /// The answer to the guest's lookup of `key`: the encoded entry of the name `key` (its
    /// UTF-8 bytes: an entry's own name or a tool's Python alias, as [`Context::get`] finds
    /// it), or every name for the empty key (no name is empty); `None` for a name the
    /// context does not have.
    pub fn answer(&self, key: &[u8]) -> Option<&[u8]> {
        if key.is_empty() {
            return Some(&self.names);
        }
        let name = std::str::from_utf8(key).ok()?;
        context::lookup(&self.entries, &self.aliases, name).map(|entry| &**entry)
    }
}

/// How the guest asks the host for the answer to a key ([`ContextTable::answer`] on the host's
/// side of the `host_lookup` import).
pub type Lookup<'a> = dyn Fn(&[u8]) -> Option<Vec<u8>> + Sync + 'a;

/// The guest's view of the manager's context: each name asked of the host once, its entry
/// decoded once, on first use.
pub struct HostContext<'l> {
    lookup: &'l Lookup<'l>,
    /// The names asked so far, with their entry (`None`: not in the context, or an entry that
    /// does not decode, which only a host bug can cause).
    asked: FrozenMap<Box<str>, Box<Option<Entry>>>,
    /// Every name, asked for when a hint needs them.
    names: OnceLock<Vec<(String, bool)>>,
}

impl<'l> HostContext<'l> {
    /// The view of the context behind `lookup`; nothing is asked yet.
    pub fn new(lookup: &'l Lookup<'l>) -> HostContext<'l> {
        HostContext {
            lookup,
            asked: FrozenMap::new(),
            names: OnceLock::new(),
        }
    }
}

impl Resolve for HostContext<'_> {
    /// The entry of `name`, asked of the host and decoded now if it was not yet.
    fn get(&self, name: &str) -> Option<&Entry> {
        if let Some(entry) = self.asked.get(name) {
            return entry.as_ref();
        }
        let entry = (self.lookup)(name.as_bytes()).and_then(|bytes| decode::<Entry>(&bytes).ok());
        self.asked.insert(name.into(), Box::new(entry)).as_ref()
    }

    fn names(&self) -> Vec<(&str, bool)> {
        self.names
            .get_or_init(|| {
                (self.lookup)(&[])
                    .and_then(|bytes| decode::<Vec<(String, bool)>>(&bytes).ok())
                    .unwrap_or_default()
            })
            .iter()
            .map(|(name, variable)| (name.as_str(), *variable))
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

/// Encode a request from its parts; `limits` as the wasm32 guest reads them (a `usize` above
/// `u32::MAX` lowered to it, see `Limits::for_wasm32`).
pub fn encode_request(input: &GuestInput<'_>, limits: &Limits) -> Result<Vec<u8>, Error> {
    postcard::to_allocvec(&(input, &limits.for_wasm32()))
        .map_err(|e| wire_error("encode the request", e))
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
/// `host` and the context read through `lookup`, encode the response.
pub fn guest_evaluate(
    request: &[u8],
    host: &mut dyn FnMut(&[u8]) -> Vec<u8>,
    lookup: &Lookup<'_>,
) -> Vec<u8> {
    let response = match decode::<GuestRequest>(request) {
        Ok(req) => {
            let dispatch = HostDispatch {
                host: RefCell::new(host),
            };
            let context = HostContext::new(lookup);
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

    /// The request for `add(a=2, b=3)` with the default limits.
    fn add_request() -> Vec<u8> {
        encode_request(&GuestInput::Expression("add(a=2, b=3)"), &Limits::default())
            .expect("encodes")
    }

    #[test]
    fn the_guest_sees_the_request_the_host_encoded() {
        let request = add_request();
        let decoded: GuestRequest = decode(&request).expect("decodes");
        assert_eq!(decoded.input, GuestInput::Expression("add(a=2, b=3)"));
        assert_eq!(decoded.limits, Limits::default());
    }

    #[test]
    fn bounds_travel_whole_and_an_int_format_by_its_name() {
        use crate::types::{Bounds, Pattern, Type};
        let int = |format: &str| {
            Type::from_schema(
                &serde_json::json!({"type": "integer", "format": format}),
                &serde_json::json!({}),
            )
        };
        for format in [
            "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        ] {
            let ty = int(format);
            assert!(matches!(&ty, Type::Bounded(..)), "{format}: {ty:?}");
            let bytes = encode(&ty).expect("encodes");
            // The variant of `Bounded`, of `Int`, one bound, its variant and the format.
            assert_eq!(bytes.len(), 5, "{format}: {bytes:?}");
            assert_eq!(decode::<Type>(&bytes).expect("decodes"), ty);
        }
        let every = Bounds {
            minimum: Some(-1.5),
            maximum: Some(9.0),
            exclusive_minimum: Some(-2.0),
            exclusive_maximum: Some(10.0),
            multiple_of: Some(0.5),
            int_range: Some((-3, 300, "int64".into())),
            min_length: Some(1),
            max_length: Some(2),
            min_items: Some(3),
            max_items: Some(4),
            min_properties: Some(5),
            max_properties: Some(6),
            required: vec!["a".into(), "b".into()],
            pattern: Some(Pattern::new("^[a-z]+$").expect("compiles")),
        };
        let decoded: Bounds = decode(&encode(&every).expect("encodes")).expect("decodes");
        assert_eq!(decoded, every);
        assert_eq!(decoded.int_range, every.int_range);
        let none: Bounds = decode(&encode(&Bounds::default()).expect("encodes")).expect("decodes");
        assert_eq!(none, Bounds::default());
    }

    #[test]
    fn the_guest_sees_the_context_the_host_keeps() {
        let context = &context();
        let table = ContextTable::new(context).expect("encodes");
        let asked = std::sync::Mutex::new(Vec::new());
        let lookup = |key: &[u8]| {
            asked.lock().unwrap().push(key.to_vec());
            table.answer(key).map(<[u8]>::to_vec)
        };
        let view = HostContext::new(&lookup);
        for (name, entry) in context.entries() {
            assert_eq!(Resolve::get(&view, name), Some(entry), "{name}");
            assert_eq!(Resolve::get(&view, name), Some(entry), "{name}");
        }
        assert_eq!(Resolve::get(&view, "os"), None);
        assert_eq!(Resolve::get(&view, "os"), None);
        assert_eq!(view.names(), context.names());
        assert_eq!(view.names(), context.names());
        // Each name was asked once, the names once (the empty key).
        let mut keys = asked.into_inner().unwrap();
        keys.sort();
        let mut expected: Vec<Vec<u8>> = context
            .entries()
            .map(|(n, _)| n.as_bytes().to_vec())
            .collect();
        expected.extend([b"os".to_vec(), Vec::new()]);
        expected.sort();
        assert_eq!(keys, expected);
    }

    #[test]
    fn unreadable_answers_are_absent_names() {
        let lookup = |key: &[u8]| (!key.is_empty()).then(|| vec![0xff; 3]);
        let view = HostContext::new(&lookup);
        assert_eq!(Resolve::get(&view, "add"), None);
        assert!(view.names().is_empty());
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
            encode(&Value::from(crate::NdArray::Int(a))).expect("encodes")
        };
        // Walking this one (repr, JSON) would visit 2^60 empty rows.
        assert!(decode::<Value>(&array(&[1 << 30, 1 << 30, 0])).is_err());
        assert!(decode::<Value>(&array(&[1000, 0, 100])).is_ok());
        assert!(decode::<Value>(&array(&[12, 1663, 19, 0])).is_err());
        assert!(decode::<Value>(&array(&[0])).is_ok());
    }

    #[test]
    fn truncated_requests_are_errors() {
        let request = add_request();
        for len in 0..request.len() {
            let prefix = request.get(..len).unwrap_or_default();
            assert!(decode::<GuestRequest>(prefix).is_err(), "{len}");
        }
    }
}

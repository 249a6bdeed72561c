//! The data a model writes and gets back: [`Function`], [`FunctionExpression`], [`FunctionOutput`].
//!
//! Names and shapes follow AdalFlow's `core.types`, so a prompt written for it works here.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::time::Duration;

use crate::error::{clip, Error, ErrorKind, Span};
use crate::value::Value;

/// A call by name with evaluated arguments: `{"name": "add", "kwargs": {"a": 1, "b": 2}}`.
///
/// ```
/// let f = fexpr::Function::from_json(&serde_json::json!({"name": "add", "kwargs": {"a": 1}})).unwrap();
/// assert_eq!(f.name, "add");
/// assert_eq!(f.kwarg("a"), Some(&fexpr::Value::Int(1)));
/// assert_eq!(f.to_json()["kwargs"]["a"], 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Function {
    /// The tool name.
    pub name: String,
    /// Positional arguments.
    pub args: Vec<Value>,
    /// Keyword arguments in the order given, as a call writes them: a list of name and value
    /// (every call's output carries one, and a list costs a fraction of a map to build).
    /// Serde reads and writes them as a map, refusing a name given twice; look one up with
    /// [`kwarg`](Function::kwarg).
    #[serde(with = "kwargs_as_map")]
    pub kwargs: Vec<(String, Value)>,
}

/// [`Function::kwargs`] as a serde map: written in order, read in order with a repeated
/// name refused (as Python refuses `f(a=1, a=2)`).
pub(crate) mod kwargs_as_map {
    use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
    use serde::ser::{SerializeMap, Serializer};

    use crate::value::Value;

    pub fn serialize<S: Serializer>(kwargs: &[(String, Value)], s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(kwargs.len()))?;
        for (name, value) in kwargs {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, Value)>, D::Error> {
        struct Kwargs;
        impl<'de> Visitor<'de> for Kwargs {
            type Value = Vec<(String, Value)>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of keyword arguments")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                // The size hint is the input's claim: bounded, not trusted.
                let mut kwargs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some((name, value)) = map.next_entry::<String, Value>()? {
                    kwargs.push((name, value));
                }
                let names = kwargs.iter().map(|(name, _)| Some(name.as_str()));
                match super::first_repeat(names).and_then(|(_, again)| kwargs.get(again)) {
                    Some((name, _)) => Err(A::Error::custom(format!(
                        "keyword argument `{}` repeated",
                        crate::error::clip(name, 40)
                    ))),
                    None => Ok(kwargs),
                }
            }
        }
        d.deserialize_map(Kwargs)
    }
}

/// The value of `name` in a list of keyword arguments ([`Function::kwargs`],
/// [`Verdict::kwargs`](crate::check::Verdict::kwargs)).
pub(crate) fn kwarg<'a>(kwargs: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    kwargs
        .iter()
        .find(|(given, _)| given == name)
        .map(|(_, value)| value)
}

/// Names up to this many are compared pair by pair, without allocating (a call's keywords
/// and a call object's keys are few); more are sorted.
const PAIRWISE: usize = 16;

/// The name given more than once that sorts first, as the indices of its first two places in
/// `names`; `None` items (a JSON object's keys that are not strings) are skipped. Compared or
/// sorted, never hashed: no seed to guess, no clock for one in the guest, n log n whatever the
/// names.
pub(crate) fn first_repeat<'a>(
    names: impl ExactSizeIterator<Item = Option<&'a str>> + Clone,
) -> Option<(usize, usize)> {
    if names.len() <= PAIRWISE {
        pairwise_repeat(names)
    } else {
        sorted_repeat(names)
    }
}

fn pairwise_repeat<'a>(
    names: impl Iterator<Item = Option<&'a str>> + Clone,
) -> Option<(usize, usize)> {
    let mut best: Option<(&str, usize, usize)> = None;
    for (again, name) in names.clone().enumerate() {
        let Some(name) = name else { continue };
        // A name's first repeat is met before its later ones, and sets it at its first two places.
        if best.is_some_and(|(known, _, _)| name >= known) {
            continue;
        }
        if let Some(first) = names.clone().take(again).position(|n| n == Some(name)) {
            best = Some((name, first, again));
        }
    }
    best.map(|(_, first, again)| (first, again))
}

fn sorted_repeat<'a>(names: impl Iterator<Item = Option<&'a str>>) -> Option<(usize, usize)> {
    let mut keyed: Vec<(&str, usize)> = names
        .enumerate()
        .filter_map(|(at, name)| name.map(|name| (name, at)))
        .collect();
    keyed.sort_unstable();
    keyed.windows(2).find_map(|pair| match pair {
        [(a, first), (b, again)] if a == b => Some((*first, *again)),
        _ => None,
    })
}

impl Function {
    /// Read the JSON form (`name`, optional `args` list, optional `kwargs` object; a
    /// `thought` field is allowed and ignored). Unknown fields are an error, not dropped.
    ///
    /// A plain conversion, without [`Limits`](crate::Limits): to run JSON a model wrote, use
    /// [`Input::json`](crate::Input::json) with [`ToolManager::run`](crate::ToolManager::run), which reads it
    /// within the limits and refuses duplicate keys and numbers out of range.
    pub fn from_json(json: &Json) -> Result<Function, Error> {
        let obj = json
            .as_object()
            .ok_or_else(|| Error::new(ErrorKind::Syntax, "a Function must be a JSON object"))?;
        if let Some(extra) = obj
            .keys()
            .find(|k| !["name", "args", "kwargs", "thought"].contains(&k.as_str()))
        {
            return Err(Error::new(
                ErrorKind::Syntax,
                format!("unknown field `{}` in a Function object", clip(extra, 40)),
            )
            .with_hint("a Function has `name`, `args` and `kwargs`"));
        }
        let name = obj
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| Error::new(ErrorKind::Syntax, "a Function needs a string `name`"))?;
        let args = match obj.get("args") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => items.iter().map(Value::from_json).collect(),
            Some(_) => return Err(Error::new(ErrorKind::Syntax, "`args` must be a list")),
        };
        // A JSON object's keys are distinct already.
        let kwargs = match obj.get("kwargs") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Object(map)) => map
                .iter()
                .map(|(k, v)| (k.clone(), Value::from_json(v)))
                .collect(),
            Some(_) => return Err(Error::new(ErrorKind::Syntax, "`kwargs` must be an object")),
        };
        Ok(Function {
            name: name.to_string(),
            args,
            kwargs,
        })
    }

    /// The value of keyword argument `name`, if the call gives it.
    pub fn kwarg(&self, name: &str) -> Option<&Value> {
        kwarg(&self.kwargs, name)
    }

    /// The JSON form.
    pub fn to_json(&self) -> Json {
        json!({
            "name": self.name,
            "args": self.args.iter().map(Value::to_json).collect::<Vec<_>>(),
            "kwargs": self.kwargs.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
        })
    }

    /// Python call syntax, e.g. `add(a=1, b=2)`; a keyword Python cannot write as `name=`
    /// (`from`, `max-results`) as a string key after `**`: `convert(**{'from': 'USD'})`.
    ///
    /// ```
    /// let call = fexpr::Function::from_json(&serde_json::json!(
    ///     {"name": "convert", "kwargs": {"from": "USD", "class": "eco", "amount": 3}})).unwrap();
    /// assert_eq!(call.to_expr(), "convert(**{'from': 'USD', 'class': 'eco'}, amount=3)");
    /// ```
    pub fn to_expr(&self) -> String {
        let mut out = String::new();
        crate::value::write_call(
            &mut out,
            &self.name,
            &self.args,
            self.kwargs.iter().map(|(k, v)| (k.as_str(), v)),
        );
        out
    }
}

/// A call written as an expression: `{"action": "add(a=1, b=2)"}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionExpression {
    /// The model's reasoning, if it gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    /// The call expression.
    pub action: String,
}

impl FunctionExpression {
    /// An expression with no thought.
    pub fn new(action: impl Into<String>) -> FunctionExpression {
        FunctionExpression {
            thought: None,
            action: action.into(),
        }
    }

    /// Read the JSON form; unknown fields are an error.
    pub fn from_json(json: &Json) -> Result<FunctionExpression, Error> {
        let obj = json.as_object().ok_or_else(|| {
            Error::new(
                ErrorKind::Syntax,
                "a FunctionExpression must be a JSON object",
            )
        })?;
        if let Some(extra) = obj
            .keys()
            .find(|k| !["action", "thought"].contains(&k.as_str()))
        {
            return Err(Error::new(
                ErrorKind::Syntax,
                format!(
                    "unknown field `{}` in a FunctionExpression object",
                    clip(extra, 40)
                ),
            ));
        }
        let action = obj.get("action").and_then(Json::as_str).ok_or_else(|| {
            Error::new(
                ErrorKind::Syntax,
                "a FunctionExpression needs a string `action`",
            )
        })?;
        let thought = obj
            .get("thought")
            .and_then(Json::as_str)
            .map(str::to_string);
        Ok(FunctionExpression {
            thought,
            action: action.to_string(),
        })
    }
}

impl From<&str> for FunctionExpression {
    fn from(action: &str) -> FunctionExpression {
        FunctionExpression::new(action)
    }
}

/// The action text, so that `&FunctionExpression`, `&str` and `String` all name an expression.
impl AsRef<str> for FunctionExpression {
    fn as_ref(&self) -> &str {
        &self.action
    }
}

impl From<String> for FunctionExpression {
    fn from(action: String) -> FunctionExpression {
        FunctionExpression {
            thought: None,
            action,
        }
    }
}

/// What one sandboxed evaluation cost (see `fexpr::sandbox`). Every output of one evaluation
/// carries the same receipt.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Fuel consumed (instantiation included).
    pub fuel_used: u64,
    /// The most linear memory the instance had, in bytes.
    pub peak_memory_bytes: usize,
    /// Wall-clock time of the whole call: waiting for a slot, the guest, the host calls.
    pub wall_time: Duration,
    /// Crossings to the host made (and answered or cancelled): one per wave of tool calls,
    /// each carrying one or more invocations (which `Limits::max_host_calls` counts).
    pub host_calls: u32,
}

impl Receipt {
    /// `{"fuel_used", "peak_memory_bytes", "wall_time_us", "host_calls"}`.
    pub fn to_json(&self) -> Json {
        json!({
            "fuel_used": self.fuel_used,
            "peak_memory_bytes": self.peak_memory_bytes,
            "wall_time_us": u64::try_from(self.wall_time.as_micros()).unwrap_or(u64::MAX),
            "host_calls": self.host_calls,
        })
    }
}

/// The result of one call: its output or a structured error, by type (`output` is a
/// `Result`). Spans in it (the error's, the repairs') index the whole text the request was
/// given, as every span fexpr reports.
///
/// Serialized (serde) as before the `Result`: `output` and `error`, one of them `null`.
///
/// ```
/// use fexpr::{Error, ErrorKind, FunctionOutput};
///
/// let out = FunctionOutput::failed("add", "add(a=1, c=2)", Error::new(ErrorKind::Arguments, "no `c`"));
/// assert_eq!(out.output.as_ref().err().map(|e| e.kind), Some(ErrorKind::Arguments));
/// let json = serde_json::to_value(&out)?;
/// assert_eq!((json["output"].is_null(), json["error"]["kind"].as_str()), (true, Some("Arguments")));
/// let back: FunctionOutput = serde_json::from_value(json)?;
/// assert_eq!(back, out);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "OutputForm")]
pub struct FunctionOutput {
    /// The id of this call: the model's when it gave one (OpenAI `tool_calls[].id`,
    /// Anthropic `tool_use.id`, the `id` of a JSON call in raw model output), else a
    /// generated one, `call_` and 24 letters and digits, unique within the process. Write it
    /// back as the reply's `tool_call_id` / `tool_use_id`.
    #[serde(default)]
    pub call_id: String,
    /// The tool name (or, when the call could not be read, the input clipped).
    pub name: String,
    /// The text (or JSON) this call came from.
    pub input: String,
    /// The call as evaluated, when it got that far.
    pub parsed_input: Option<Function>,
    /// The tool's result, or why there is none.
    pub output: Result<Value, Error>,
    /// The short text a model should see, when the tool provides one.
    pub observation: Option<String>,
    /// What the sandboxed evaluation this output came from cost; `None` when run natively.
    pub receipt: Option<Receipt>,
    /// Schema-aware repairs made to the call before it ran (see `fexpr::repair`).
    pub repairs: Vec<Repair>,
}

/// [`FunctionOutput`] as serde reads it: `output` and `error` side by side, exactly one set.
#[derive(Deserialize)]
struct OutputForm {
    #[serde(default)]
    call_id: String,
    name: String,
    input: String,
    parsed_input: Option<Function>,
    output: Option<Value>,
    observation: Option<String>,
    error: Option<Error>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    receipt: Option<Receipt>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    repairs: Vec<Repair>,
}

/// [`FunctionOutput`] as serde writes it: [`OutputForm`]'s fields, borrowed (no copy of the
/// output to write it).
#[derive(Serialize)]
#[serde(rename = "FunctionOutput")]
struct OutputFormRef<'a> {
    call_id: &'a str,
    name: &'a str,
    input: &'a str,
    parsed_input: &'a Option<Function>,
    output: Option<&'a Value>,
    observation: &'a Option<String>,
    error: Option<&'a Error>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt: &'a Option<Receipt>,
    #[serde(skip_serializing_if = "<[Repair]>::is_empty")]
    repairs: &'a [Repair],
}

impl Serialize for FunctionOutput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        OutputFormRef {
            call_id: &self.call_id,
            name: &self.name,
            input: &self.input,
            parsed_input: &self.parsed_input,
            output: self.output.as_ref().ok(),
            observation: &self.observation,
            error: self.output.as_ref().err(),
            receipt: &self.receipt,
            repairs: &self.repairs,
        }
        .serialize(serializer)
    }
}

impl TryFrom<OutputForm> for FunctionOutput {
    type Error = &'static str;

    fn try_from(form: OutputForm) -> Result<FunctionOutput, &'static str> {
        let output = match (form.output, form.error) {
            (Some(value), None) => Ok(value),
            (None, Some(error)) => Err(error),
            _ => return Err("a FunctionOutput has exactly one of `output` and `error`"),
        };
        Ok(FunctionOutput {
            call_id: form.call_id,
            name: form.name,
            input: form.input,
            parsed_input: form.parsed_input,
            output,
            observation: form.observation,
            receipt: form.receipt,
            repairs: form.repairs,
        })
    }
}

impl FunctionOutput {
    /// A failed output for `input`.
    pub fn failed(
        name: impl Into<String>,
        input: impl Into<String>,
        error: Error,
    ) -> FunctionOutput {
        FunctionOutput {
            call_id: fresh_call_id(),
            name: name.into(),
            input: input.into(),
            parsed_input: None,
            output: Err(error),
            observation: None,
            receipt: None,
            repairs: Vec::new(),
        }
    }

    /// The CLI's JSON line: `{"call_id", "name", "args", "kwargs", "output", "error"}`.
    pub fn to_json(&self) -> Json {
        let (args, kwargs) = match &self.parsed_input {
            Some(f) => {
                let j = f.to_json();
                (j["args"].clone(), j["kwargs"].clone())
            }
            None => (Json::Null, Json::Null),
        };
        let mut out = json!({
            "call_id": self.call_id,
            "name": self.name,
            "args": args,
            "kwargs": kwargs,
            "output": self.output.as_ref().map_or(Json::Null, Value::to_json),
            "error": self.output.as_ref().err().map_or(Json::Null, |e| serde_json::to_value(e).unwrap_or(Json::Null)),
        });
        if let Some(map) = out.as_object_mut() {
            if let Some(obs) = &self.observation {
                map.insert("observation".into(), Json::String(obs.clone()));
            }
            if let Some(receipt) = &self.receipt {
                map.insert("receipt".into(), receipt.to_json());
            }
            if !self.repairs.is_empty() {
                map.insert(
                    "repairs".into(),
                    serde_json::to_value(&self.repairs).unwrap_or(Json::Null),
                );
            }
        }
        out
    }
}

impl std::fmt::Display for FunctionOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let call = self
            .parsed_input
            .as_ref()
            .map_or_else(|| clip(&self.input, 80), Function::to_expr);
        match &self.output {
            Ok(v) => write!(f, "{call} -> {}", clip(&v.repr(), 200)),
            Err(e) => write!(f, "{call} -> error: {e}"),
        }
    }
}

/// The digits of a call id.
const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Every number below 62² as two [`DIGITS`], the lower first: `n` at `2n..2n + 2`.
static DIGIT_PAIRS: [u8; 2 * 3844] = {
    let mut pairs = [0u8; 2 * 3844];
    let mut n = 0;
    while n < 3844 {
        pairs[2 * n] = DIGITS[n % 62];
        pairs[2 * n + 1] = DIGITS[n / 62];
        n += 1;
    }
    pairs
};

/// `word` in base 62 into `out` (an even length), the lowest digit first, two at a time.
fn write_digits(mut word: u64, out: &mut [u8]) {
    for pair in out.chunks_mut(2) {
        let at = (word % 3844) as usize * 2;
        pair.copy_from_slice(&DIGIT_PAIRS[at..at + 2]);
        word /= 3844;
    }
}

/// A fresh call id: `call_` and 24 letters and digits, unique within the process (the first
/// twelve encode a bijection of a process-wide counter, so two ids never repeat; the rest
/// mix in a per-process random seed, so ids are not guessable across processes). No clock.
///
/// ```
/// let (a, b) = (fexpr::call::fresh_call_id(), fexpr::call::fresh_call_id());
/// assert_ne!(a, b);
/// assert!(a.starts_with("call_") && a.len() == 29);
/// assert!(a[5..].bytes().all(|c| c.is_ascii_alphanumeric()));
/// ```
#[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
pub fn fresh_call_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static SEED: OnceLock<(u64, u64)> = OnceLock::new();
    let (a, b) = *SEED.get_or_init(|| {
        let state = RandomState::new();
        (state.hash_one(1u8), state.hash_one(2u8))
    });
    // SplitMix64's finalizer: a bijection of u64.
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut id = [0u8; 29];
    let (prefix, digits) = id.split_at_mut(5);
    prefix.copy_from_slice(b"call_");
    // 62^12 > 2^64: twelve digits hold a whole word, written two at a time (lowest first).
    let words = [mix(n ^ a), mix(n.wrapping_add(b))];
    for (chunk, word) in digits.chunks_mut(12).zip(words) {
        write_digits(word, chunk);
    }
    debug_assert!(id.is_ascii());
    // Not validated again: `from_utf8` was 129 of a native call's ~10 k instructions.
    // SAFETY: every byte is ASCII (`call_`, then bytes of `DIGIT_PAIRS`, all from `DIGITS`),
    // and ASCII is UTF-8.
    unsafe { String::from_utf8_unchecked(id.to_vec()) }
}

/// What a tool returns: the full output, and optionally the short text a model should see.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// The full result, for the program.
    pub output: Value,
    /// The text for the model, when it should differ from the output.
    pub observation: Option<String>,
    /// Whether partial results of this call were streamed before it (set by the manager
    /// when the tool reported a partial result to a listening session).
    pub is_streaming: bool,
}

impl ToolOutput {
    /// An output the model sees as it is.
    ///
    /// ```
    /// let out = fexpr::ToolOutput::new(fexpr::Value::Int(3)).with_observation("three");
    /// assert_eq!(out.observation.as_deref(), Some("three"));
    /// ```
    pub fn new(output: Value) -> ToolOutput {
        ToolOutput {
            output,
            observation: None,
            is_streaming: false,
        }
    }

    /// The same output with the text a model should see instead of the full output.
    pub fn with_observation(mut self, observation: impl Into<String>) -> ToolOutput {
        self.observation = Some(observation.into());
        self
    }
}

impl From<Value> for ToolOutput {
    fn from(output: Value) -> ToolOutput {
        ToolOutput {
            output,
            observation: None,
            is_streaming: false,
        }
    }
}

/// Which repair was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RepairKind {
    /// JSON's `true`/`false`/`null` read as Python's `True`/`False`/`None`.
    JsonLiteral,
    /// A float with an integral value read as an int.
    IntegralFloat,
    /// A single value wrapped in a one-element list.
    SingleToList,
    /// An undefined bare name read as the enum string it spells.
    EnumName,
    /// A bool read as the enum string that spells it (`True` → `'True'`).
    BoolToEnum,
    /// A string read as the one enum member it matches ignoring case, spaces, `-` and `_`.
    EnumSpelling,
}

/// One repair: what changed, where, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repair {
    /// Which repair.
    pub kind: RepairKind,
    /// The argument it concerns (`limit`, `filters.exact`, `tags[0]`).
    pub path: String,
    /// The bytes it concerns, in the text given (as every span).
    pub span: Span,
    /// The text as written.
    pub from: String,
    /// What it was read as.
    pub to: String,
    /// Why the schema allows it.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keyword arguments are a map in every serde format, kept in their order, and a name
    /// repeated is refused (by comparing a few names, or by hash for many).
    #[test]
    fn kwargs_are_a_map_with_each_name_once() {
        let f = Function {
            name: "f".into(),
            args: vec![Value::Int(0)],
            kwargs: vec![
                ("b".into(), Value::Int(1)),
                ("a".into(), Value::Str("x".into())),
            ],
        };
        let text = serde_json::to_string(&f).unwrap();
        assert_eq!(
            text,
            r#"{"name":"f","args":[{"Int":0}],"kwargs":{"b":{"Int":1},"a":{"Str":"x"}}}"#
        );
        assert_eq!(serde_json::from_str::<Function>(&text).unwrap(), f);
        let wire = postcard::to_allocvec(&f).unwrap();
        assert_eq!(postcard::from_bytes::<Function>(&wire).unwrap(), f);
        assert_eq!(f.kwarg("a"), Some(&Value::Str("x".into())));
        assert_eq!(f.kwarg("c"), None);

        let twice = r#"{"name":"f","args":[],"kwargs":{"a":{"Int":1},"a":{"Int":2}}}"#;
        let e = serde_json::from_str::<Function>(twice).unwrap_err();
        assert!(
            e.to_string().contains("keyword argument `a` repeated"),
            "{e}"
        );
        let mut many: Vec<String> = (0..40)
            .map(|i| format!(r#""k{i}":{{"Int":{i}}}"#))
            .collect();
        let read = format!(
            r#"{{"name":"f","args":[],"kwargs":{{{}}}}}"#,
            many.join(",")
        );
        assert_eq!(
            serde_json::from_str::<Function>(&read)
                .unwrap()
                .kwargs
                .len(),
            40
        );
        many.push(r#""k7":{"Int":0}"#.into());
        let twice = format!(
            r#"{{"name":"f","args":[],"kwargs":{{{}}}}}"#,
            many.join(",")
        );
        let e = serde_json::from_str::<Function>(&twice).unwrap_err();
        assert!(
            e.to_string().contains("keyword argument `k7` repeated"),
            "{e}"
        );
    }

    #[test]
    fn a_repeated_name_is_found_at_its_first_two_places() {
        let at = |names: &[&str]| first_repeat(names.iter().map(|n| Some(*n)));
        assert_eq!(at(&[]), None);
        assert_eq!(at(&["a", "b", "c"]), None);
        assert_eq!(at(&["b", "a", "b", "a", "a"]), Some((1, 3)));
        assert_eq!(
            first_repeat([Some("a"), None, None, Some("a")].into_iter()),
            Some((0, 3))
        );
        let many: Vec<String> = (0..30).map(|i| format!("k{i}")).collect();
        let mut names: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(at(&names), None);
        names.push("k3");
        names.push("k29");
        assert_eq!(at(&names), Some((29, 31)));
    }

    /// Pair by pair finds what sorting finds: the same name, at the same two places.
    #[test]
    fn pairwise_finds_the_repeat_sorting_finds() {
        let names = [
            Some("b"),
            Some("a"),
            None,
            Some("c"),
            Some("a"),
            Some("b"),
            None,
            Some("c"),
            Some("a"),
        ];
        let mut found = 0;
        for len in 0..=names.len() {
            for rotate in 0..names.len() {
                let some = names.iter().cycle().skip(rotate).take(len).copied();
                let expected = sorted_repeat(some.clone());
                assert_eq!(pairwise_repeat(some), expected, "{len} {rotate}");
                found += usize::from(expected.is_some());
            }
        }
        assert!(found > 20, "{found}");
    }

    /// Two digits at a time write what one at a time writes.
    #[test]
    fn call_id_digits_are_base_62_lowest_first() {
        for word in [
            0,
            1,
            61,
            62,
            3843,
            3844,
            123_456_789,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let mut fast = [0u8; 12];
            write_digits(word, &mut fast);
            let mut slow = [0u8; 12];
            let mut w = word;
            for digit in &mut slow {
                *digit = DIGITS[(w % 62) as usize];
                w /= 62;
            }
            assert_eq!(fast, slow, "{word}");
        }
    }
}

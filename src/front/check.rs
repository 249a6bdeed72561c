//! Check: validate the calls in a model's output against the tools' signatures without running
//! anything: extract ([`crate::front`]), repair ([`crate::front::repair`]), evaluate the arguments
//! (pure: a nested tool call is refused, it would have to run), bind and coerce them to the
//! signature (nested records, arrays, enums). One [`Verdict`] per call.
//!
//! This is what an evaluation harness or a retry loop needs: `valid`, the arguments as written
//! (after repairs, by parameter name), the error with its span and hint, and the repairs made.
//!
//! ```
//! use fexpr::check::check_text;
//! use fexpr::repair::RepairOptions;
//! use fexpr::{Context, Limits};
//! use fexpr::context::Entry;
//! use fexpr::types::RecordType;
//!
//! let sig = RecordType::from_schema("get_weather", &serde_json::json!({"type": "object",
//!     "properties": {"city": {"type": "string"}, "metric": {"type": "boolean", "default": true}},
//!     "required": ["city"]}));
//! let mut ctx = Context::new();
//! ctx.insert("get_weather", Entry::Tool(std::sync::Arc::new(sig)));
//! let checked = check_text("get_weather(city='Paris', metric=false)<|eot_id|>", &ctx, &Limits::default(), &RepairOptions::default());
//! let v = &checked.verdicts[0];
//! assert!(v.valid);
//! assert_eq!(v.kwarg("metric"), Some(&fexpr::Value::Bool(false)));
//! assert_eq!(v.repairs.len(), 1);
//! assert_eq!(v.to_json()["kwargs"], serde_json::json!({"city": "Paris", "metric": false}));
//! ```

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::call::Function;
use crate::error::{clip, Error, ErrorKind, Span};
use crate::eval;
use crate::front::repair::{repair_call, Repair, RepairOptions};
use crate::front::{self, Extraction, FoundCall, Ignored};
use crate::limits::Limits;
use crate::resolve::context::{Context, Entry};
use crate::syntax::{Expr, ExprKind};
use crate::types::RecordType;
use crate::value::Value;

/// The key of the marker that stands for an argument whose value could not be read (a name
/// that is not defined, a nested tool call, an operation out of the limits): in a verdict's or
/// an output's arguments it is the dict `{"$unreadable": "<the argument's source>"}`, so the
/// call stays as the model wrote it.
pub const UNREADABLE: &str = "$unreadable";

/// The verdict on one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The callee.
    pub name: String,
    /// Where the call is in the checked text (for a JSON form: the JSON object).
    pub span: Span,
    /// The call's own text as written: its stretch of the checked text (Python call text, the
    /// JSON object of a JSON form, a model format's call with its markup). Like every span in
    /// a verdict, the error's and the repairs' index the checked text, not this (see
    /// [`Place`]).
    pub input: String,
    /// Positional arguments that no parameter names (more than the signature has, or a call
    /// to an unknown tool), as written; empty for a valid call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<Value>,
    /// The arguments as written (after repairs), by parameter name, in the order written
    /// (positional arguments named by their parameter). `valid` says they bind to the signature
    /// and coerce to its types (an int for a float, a dict for a record, ...); defaults not
    /// written are not listed. For an invalid call they are still the call as written, with an
    /// argument that could not be read replaced by the [`UNREADABLE`] marker; a name an invalid
    /// call gives twice is listed once, at its first place, with the value given last (the
    /// error says which). The same shape as [`Function::kwargs`]; JSON writes it as an object.
    #[serde(with = "crate::call::kwargs_as_map")]
    pub kwargs: Vec<(String, Value)>,
    /// Whether the call fits the tool's signature.
    pub valid: bool,
    /// Why not.
    pub error: Option<Error>,
    /// Repairs made before checking.
    pub repairs: Vec<Repair>,
}

impl Verdict {
    /// The value of argument `name` in [`kwargs`](Self::kwargs), if the call gives it.
    pub fn kwarg(&self, name: &str) -> Option<&Value> {
        crate::call::kwarg(&self.kwargs, name)
    }

    /// `{"name", "kwargs", "valid", "error", "repairs", "span"}`, and `"args"` when some
    /// positional arguments have no parameter name.
    pub fn to_json(&self) -> Json {
        let mut out = json!({
            "name": self.name,
            "kwargs": self.kwargs.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
            "valid": self.valid,
            "error": self.error.as_ref().map_or(Json::Null, |e| serde_json::to_value(e).unwrap_or(Json::Null)),
            "repairs": serde_json::to_value(&self.repairs).unwrap_or(Json::Null),
            "span": {"start": self.span.start, "end": self.span.end},
        });
        if let (Some(map), false) = (out.as_object_mut(), self.args.is_empty()) {
            map.insert(
                "args".into(),
                Json::Array(self.args.iter().map(Value::to_json).collect()),
            );
        }
        out
    }
}

/// The verdicts on a whole model output, and what in it was not a call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// One verdict per call found, in order.
    pub verdicts: Vec<Verdict>,
    /// Text that was not used, with reasons.
    pub ignored: Vec<Ignored>,
    /// Set when the text was refused as a whole (too large).
    pub error: Option<Error>,
}

/// One call of a model's output: its verdict, the call as written, and what to evaluate to
/// run it.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// The verdict, as [`check_text`] gives it.
    pub verdict: Verdict,
    /// The call as written (after repairs): positional arguments in `args`, keywords in
    /// `kwargs`, an argument that could not be read as the [`UNREADABLE`] marker. Empty
    /// (`Function::default()`, no name) when the call could not be read at all (a syntax
    /// error, a cut-off call): the verdict's `input` holds it as written.
    pub call: Function,
    /// The checked call to run (repaired), the tree every reader hands on (a JSON form's name
    /// and keys exactly as written), its spans indexing the call's own text (the verdict's
    /// `input`): set when the verdict is valid, or when the only objection is that an argument
    /// is itself a tool call (running evaluates it first; checking cannot). `None`: the call
    /// must not run, the verdict says why.
    pub run: Option<Expr>,
    /// The checked call's arguments bound to its tool's signature, in the fields' order
    /// (`None` for a field left to its default): what the tool receives. Set with `run` when
    /// the verdict is valid. A native run hands these to the tool: the call is neither printed
    /// back to text nor parsed, evaluated or bound a second time. (The sandbox evaluates `run`,
    /// so that the guest, not the host, evaluates what the model wrote.)
    pub bound: Option<Vec<Option<Value>>>,
    /// The id the model gave the call (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`, a
    /// JSON call's `id`), if any: the output's `call_id`.
    pub id: Option<String>,
    /// Where the call's own text is in the text: spans of what running it reports, which index
    /// that text, move into the text with [`Place::locate`].
    pub place: Place,
}

/// Where a call's own text is in the text it was found in: every span fexpr reports (errors,
/// repairs, ignored text, verdicts) indexes the whole text given, and this moves a span
/// computed on the call alone there.
///
/// ```
/// use fexpr::check::Place;
/// use fexpr::Span;
///
/// // `add(a=1, c=2)` found at byte 6 of `Sure: add(a=1, c=2)`.
/// let place = Place { span: Span::new(6, 19), exact: true };
/// assert_eq!(place.locate(Span::new(9, 10)), Span::new(15, 16));
/// // A call whose own text is not its stretch of the text: its spans stand for the stretch.
/// let place = Place { span: Span::new(6, 40), exact: false };
/// assert_eq!(place.locate(Span::new(9, 10)), Span::new(6, 40));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The call's stretch of the text (for a JSON form: the JSON object).
    pub span: Span,
    /// Whether the call's own text is that stretch as written (every reader's calls are), so
    /// a span in it maps byte for byte; otherwise a span in it maps to the whole stretch.
    pub exact: bool,
}

impl Place {
    /// `span`, which indexes the call's own text, in the text's coordinates (clamped to the
    /// call's stretch).
    pub fn locate(self, span: Span) -> Span {
        if !self.exact {
            return self.span;
        }
        let at = |offset: u32| self.span.start.saturating_add(offset).min(self.span.end);
        Span::new(at(span.start), at(span.end))
    }

    /// `error` with its span (if any) in the text's coordinates.
    pub fn locate_error(self, mut error: Error) -> Error {
        error.span = error.span.map(|s| self.locate(s));
        error
    }
}

/// A model's output read for running: every call with its verdict, and the text not used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// One entry per call found, in order.
    pub calls: Vec<Planned>,
    /// Text that was not used, with reasons.
    pub ignored: Vec<Ignored>,
    /// Set when the text was refused as a whole (over a limit).
    pub error: Option<Error>,
    /// Whether the text is a plain expression rather than tool calls: it parses as a whole and
    /// the calls found in it (at least one) are all to functions or record types of the context
    /// (`np.zeros(3)`, `Point(x=1, y=2)`). `Input::model_output` evaluates such a text as
    /// written, as `Input::expr` does.
    pub plain: bool,
}

/// Whether `name` is a tool in `ctx`.
pub fn is_tool(ctx: &Context, name: &str) -> bool {
    matches!(ctx.get(name), Some(Entry::Tool(_)))
}

/// Extract the calls in `text` and check each against the tools in `ctx`.
pub fn check_text(text: &str, ctx: &Context, limits: &Limits, options: &RepairOptions) -> Checked {
    check_reading(text, ctx, limits, options, front::route::Reading::default())
}

/// [`check_text`], given what the routing learnt of `text` (the tree a parsed document was
/// written out with: not read again).
pub(crate) fn check_reading(
    text: &str,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
    reading: front::route::Reading,
) -> Checked {
    let Plan {
        calls,
        ignored,
        error,
        ..
    } = plan_for(text, ctx, limits, options, Purpose::Check, reading);
    Checked {
        verdicts: calls.into_iter().map(|p| p.verdict).collect(),
        ignored,
        error,
    }
}

/// What a call is planned for: only its verdict ([`check_text`]), running it ([`plan`]: the
/// tree to run and the call as written too), or running it at once ([`plan_to_run`]: as
/// `Run`, but the verdict's arguments are left empty, the call as written holds them).
#[derive(Clone, Copy, PartialEq)]
enum Purpose {
    Check,
    Run,
    #[cfg(feature = "native")]
    Execute,
}

/// The front door for model text: extract the calls in `text` ([`front::extract`]), repair
/// each against its tool's signature in `ctx` and check it; per call, the verdict, the call as
/// written and the tree to run (see [`Planned::run`]). [`check_text`] is this without the
/// running part; `Input::model_output` runs what this allows.
///
/// ```
/// use fexpr::check::plan;
/// use fexpr::repair::RepairOptions;
///
/// let manager = fexpr::demo::manager();
/// let plan = plan("Sure!\n[add(a=2.0, b=3), add(a=1, c=2)]", manager.context(), manager.limits(), &RepairOptions::default());
/// assert_eq!(plan.calls[0].run.as_ref().map(|e| e.to_string()).as_deref(), Some("add(a=2, b=3)"));
/// assert_eq!(plan.calls[0].verdict.input, "add(a=2.0, b=3)");
/// assert_eq!(plan.calls[1].run, None);
/// assert_eq!(plan.calls[1].call.to_expr(), "add(a=1, c=2)");
/// assert_eq!(plan.ignored[0].text, "Sure!");
/// ```
pub fn plan(text: &str, ctx: &Context, limits: &Limits, options: &RepairOptions) -> Plan {
    plan_for(
        text,
        ctx,
        limits,
        options,
        Purpose::Run,
        front::route::Reading::default(),
    )
}

/// [`plan`] for a request that runs the plan at once: each verdict's `args` and `kwargs` are
/// left empty (the values are in the call as written, `Planned::call`, and bound in
/// `Planned::bound`), so they are not copied a third time.
#[cfg(feature = "native")]
pub(crate) fn plan_to_run(
    text: &str,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
    reading: front::route::Reading,
) -> Plan {
    plan_for(text, ctx, limits, options, Purpose::Execute, reading)
}

/// The tree of `text` when the text is nothing but one call to a tool that runs as written:
/// in the fast parser's subset (no comment, fence, markup or second statement can be in it,
/// and a call that is the whole text is in call position), to a tool of `ctx`, with the
/// keywords its signature takes, no tool call in its arguments, and nothing to repair under
/// `options`. The reading of [`plan_to_run`] would find that one call, ignore nothing and plan
/// it as the expression path runs it, so a request runs the tree as the expression door does
/// (a call refused before it runs is reported by the reading: its errors name the call as
/// written). `None` for every other text, and when `options` name a model format (the text is
/// read as that format).
#[cfg(feature = "native")]
pub(crate) fn as_written_call(
    text: &str,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
) -> Option<Expr> {
    if options.model_format.is_some() {
        return None;
    }
    let mut tree = crate::syntax::parse_fast(text, limits)?;
    let ExprKind::Call(call) = &tree.kind else {
        return None;
    };
    let Some(Entry::Tool(sig)) = ctx.get(&call.func) else {
        return None;
    };
    // A tool call in an argument runs first: the reading plans that call differently.
    if tree
        .children()
        .any(|child| crate::resolve::first_tool_call(child, ctx).is_some())
    {
        return None;
    }
    let keywords = call.kwargs.iter().map(|k| (k.name.as_str(), k.name_span));
    sig.check_keywords(call.args.len(), keywords, tree.span)
        .ok()?;
    let sig = std::sync::Arc::clone(sig);
    repair_call(&mut tree, &sig, ctx, options)
        .is_empty()
        .then_some(tree)
}

/// The one call of an OpenAI assistant message given as a parsed document
/// ([`json_form::lone_tool_call`](front::json_form::lone_tool_call)), read, checked and bound
/// as the reading of [`plan_to_run`] would plan it, without writing the message out: a
/// message surely within `limits` whose call is to a tool of
/// `ctx`, with arguments the JSON reader reads within `limits` as an object, nothing to repair
/// under `options`, and arguments that bind to the tool's signature. `None` for every other
/// message, and when `options` name a model format: the reading says then what the message
/// holds (the spans of its errors index the message's text, which only it writes).
#[cfg(feature = "native")]
pub(crate) fn message_call(
    message: &Json,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
) -> Option<MessageCall> {
    use crate::front::json_input;
    // The message is one call to a tool (its arguments, JSON, call nothing): within
    // `max_calls` unless that is 0, which the reading reports.
    if options.model_format.is_some() || limits.max_calls == 0 {
        return None;
    }
    let lone = front::json_form::lone_tool_call(message).filter(|l| l.surely_fits(limits))?;
    let Some(Entry::Tool(sig)) = ctx.get(lone.name) else {
        return None;
    };
    let args = json_input::read(lone.arguments, limits).ok()?;
    if !matches!(args.kind, ExprKind::Dict(_)) {
        return None;
    }
    json_input::check_call_tree(&args, lone.arguments, 0).ok()?;
    // Spans index the arguments' text: they would be reported only by a call that does not
    // bind, which is left to the reading.
    // The call is named by the tool's own name (the name written may be its Python alias).
    let whole = Span::new(0, u32::try_from(lone.arguments.len()).ok()?);
    let mut expr = json_input::call_of(sig.name.clone(), whole, Vec::new(), args, whole).ok()?;
    let sig = std::sync::Arc::clone(sig);
    if !repair_call(&mut expr, &sig, ctx, options).is_empty() {
        return None;
    }
    let read = read_args(&expr, ctx, limits);
    let bound = check_parsed(&expr, lone.name, Some(&sig), ctx, &read).ok()?;
    let call = into_written(expr, lone.arguments, read, ctx, limits);
    Some(MessageCall {
        id: std::sync::Arc::from(lone.id),
        source: lone.function_text()?,
        call,
        bound,
    })
}

/// The call [`message_call`] reads from a message, ready to run.
#[cfg(feature = "native")]
pub(crate) struct MessageCall {
    /// The model's id for the call.
    pub(crate) id: std::sync::Arc<str>,
    /// The call's own text: its `{"name", "arguments"}` object as the message's text writes it.
    pub(crate) source: String,
    /// The call as written (named by the tool's own name).
    pub(crate) call: Function,
    /// Its arguments bound to the tool's signature.
    pub(crate) bound: Vec<Option<Value>>,
}

/// `kwargs` with each name once, at its first place, with the value given last (as a map
/// inserting them in turn keeps them): an invalid call may name a parameter twice, positionally
/// and by keyword or by two keywords. Checked without allocating for a call's few names.
fn once_each(kwargs: &mut Vec<(String, Value)>) {
    let names = kwargs.iter().map(|(name, _)| Some(name.as_str()));
    if crate::call::first_repeat(names).is_some() {
        let map: IndexMap<String, Value> = kwargs.drain(..).collect();
        kwargs.extend(map);
    }
}

/// [`plan`] for `purpose` (for [`Purpose::Check`], `plain` is not worked out).
fn plan_for(
    text: &str,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
    purpose: Purpose,
    reading: front::route::Reading,
) -> Plan {
    let Extraction {
        calls,
        ignored,
        error,
    } = front::read_text(
        text,
        limits,
        &|name| is_tool(ctx, name),
        &|tool, param| match ctx.get(tool) {
            Some(Entry::Tool(sig)) => sig.field(param).map(|f| f.ty.clone()),
            _ => None,
        },
        front::ReadOptions {
            lenient: options.lenient,
            format: options.model_format,
        },
        reading,
        true,
    );
    let plain = purpose != Purpose::Check
        && error.is_none()
        && !calls.is_empty()
        && calls.iter().all(|c| {
            ctx.get(&c.name)
                .is_some_and(|e| !matches!(e, Entry::Tool(_)))
        })
        && crate::syntax::parse(text, limits).is_ok();
    Plan {
        calls: calls
            .into_iter()
            .map(|c| plan_call(c, text, ctx, limits, options, purpose))
            .collect(),
        ignored,
        error,
        plain,
    }
}

/// Repair, check and plan one extracted call (taken: its parsed tree is repaired in place).
/// For [`Purpose::Check`] only the verdict is filled: `call` keeps just the name and `run`
/// stays `None`.
///
/// Long (about 100 lines) for a reason: it fills one `Planned` whose parts (verdict, call as
/// written, tree and bound arguments to run, place) are made from the same evaluated arguments,
/// which each part takes or moves in turn.
fn plan_call(
    found: FoundCall,
    text: &str,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
    purpose: Purpose,
) -> Planned {
    let FoundCall {
        name,
        span,
        source,
        parsed,
        id,
        ..
    } = found;
    // Every reader's call is its stretch of the text as written: its spans map byte for byte.
    let place = Place {
        span,
        exact: text.get(span.range()) == Some(source.as_str()),
    };
    let mut planned = Planned {
        verdict: Verdict {
            name: String::new(),
            span,
            input: String::new(),
            args: Vec::new(),
            kwargs: Vec::new(),
            valid: false,
            error: None,
            repairs: Vec::new(),
        },
        call: Function::default(),
        run: None,
        bound: None,
        id,
        place,
    };
    let mut expr = match parsed {
        Ok(expr) => expr,
        Err(e) => {
            // Not read: no call as written (`call` stays empty), the source holds it.
            planned.verdict.error = Some(place.locate_error(e));
            planned.verdict.name = name;
            planned.verdict.input = source;
            return planned;
        }
    };
    let sig = match ctx.get(&name) {
        Some(Entry::Tool(sig)) => Some(sig.clone()),
        _ => None,
    };
    if let Some(sig) = &sig {
        planned.verdict.repairs = repair_call(&mut expr, sig, ctx, options);
    }
    // Each argument is evaluated once, for the check and for the call as written.
    let read = read_args(&expr, ctx, limits);
    let result = check_parsed(&expr, &name, sig.as_deref(), ctx, &read);
    // The call as written, whatever the verdict (after repairs: they are reported). The
    // verdict takes its values; a run keeps them for the output too.
    let written = as_written(&expr, &source, read, ctx, limits);
    let (kept, Function { args, kwargs, .. }) = match purpose {
        Purpose::Run => (Some(written.clone()), written),
        #[cfg(feature = "native")]
        Purpose::Execute => (Some(written), Function::default()),
        Purpose::Check => (None, written),
    };
    let mut args = args.into_iter();
    if let Some(sig) = sig.as_deref() {
        for field in sig.fields.iter().take(args.len()) {
            if let Some(value) = args.next() {
                planned.verdict.kwargs.push((field.name.clone(), value));
            }
        }
    }
    planned.verdict.args = args.collect();
    planned.verdict.kwargs.extend(kwargs);
    once_each(&mut planned.verdict.kwargs);
    let running = purpose != Purpose::Check;
    // The tree to run is the checked one, repairs made in place: its spans still index the
    // call's own text.
    match result {
        Ok(bound) => {
            planned.verdict.valid = true;
            // Run at once, the verdict's arguments are left empty: nothing to look at.
            if let Some(sig) = sig
                .as_deref()
                .filter(|_| !planned.verdict.kwargs.is_empty())
            {
                for (field, value) in sig.fields.iter().zip(&bound) {
                    let written = planned
                        .verdict
                        .kwargs
                        .iter_mut()
                        .find(|(name, _)| *name == field.name);
                    if let (Some((_, written)), Some(read)) = (written, value) {
                        numbers_as_declared(written, read);
                    }
                }
            }
            planned.run = running.then_some(expr);
            planned.bound = running.then_some(bound);
        }
        Err(e) => {
            if running
                && sig.is_some()
                && e.kind == ErrorKind::Unsupported
                && has_nested_tool_call(&expr, ctx)
            {
                planned.run = Some(expr);
            }
            planned.verdict.error = Some(place.locate_error(e));
        }
    }
    for repair in &mut planned.verdict.repairs {
        repair.span = place.locate(repair.span);
    }
    if let Some(call) = kept {
        planned.call = call;
    }
    // A call by a tool's Python alias is reported (and run) under the tool's own name.
    let name = sig.map_or(name, |sig| sig.name.clone());
    planned.call.name.clone_from(&name);
    planned.verdict.name = name;
    planned.verdict.input = source;
    planned
}

/// Whether an argument of the call `expr` is (or holds) a call to a tool.
fn has_nested_tool_call(expr: &Expr, ctx: &Context) -> bool {
    let ExprKind::Call(call) = &expr.kind else {
        return false;
    };
    call.args
        .iter()
        .chain(call.kwargs.iter().map(|k| &k.value))
        .any(|a| crate::resolve::first_tool_call(a, ctx).is_some())
}

/// The call `expr` as written: its arguments evaluated one by one (pure: literals, records,
/// context names), each that cannot be read as far as it can ([`partly_read`]: only the parts
/// that cannot are replaced by the [`UNREADABLE`] marker holding their source, a slice of
/// `source`, which the spans index).
fn as_written(
    expr: &Expr,
    source: &str,
    read: Vec<Result<Value, Error>>,
    ctx: &Context,
    limits: &Limits,
) -> Function {
    let ExprKind::Call(call) = &expr.kind else {
        return Function::default();
    };
    let kwargs = call.kwargs.iter().map(|k| (k.name.clone(), &k.value));
    written(
        call.func.clone(),
        &call.args,
        kwargs,
        source,
        read,
        ctx,
        limits,
    )
}

/// [`as_written`] of a call that is not run as a tree: its names are moved, not copied.
#[cfg(feature = "native")]
fn into_written(
    expr: Expr,
    source: &str,
    read: Vec<Result<Value, Error>>,
    ctx: &Context,
    limits: &Limits,
) -> Function {
    let ExprKind::Call(call) = expr.kind else {
        return Function::default();
    };
    let kwargs = call.kwargs.into_iter().map(|k| (k.name, k.value));
    written(call.func, &call.args, kwargs, source, read, ctx, limits)
}

/// The [`Function`] named `name` of the arguments `args` and `kwargs` (name, argument), their
/// values `read` in that order, each that could not be read as far as it can.
fn written<E: std::borrow::Borrow<Expr>>(
    name: String,
    args: &[Expr],
    kwargs: impl Iterator<Item = (String, E)>,
    source: &str,
    read: Vec<Result<Value, Error>>,
    ctx: &Context,
    limits: &Limits,
) -> Function {
    let mut read = read.into_iter();
    let mut value = |arg: &Expr| match read.next() {
        Some(Ok(value)) => value,
        _ => partly_read(arg, source, ctx, limits, 0),
    };
    Function {
        name,
        args: args.iter().map(&mut value).collect(),
        kwargs: kwargs
            .map(|(name, arg)| {
                let arg = value(arg.borrow());
                (name, arg)
            })
            .collect(),
    }
}

/// A valid call's argument `written` with each whole number the signature reads as a float
/// (`read`, the argument bound and coerced) written as that float: `[1, 2.5]` for a list of
/// floats is `[1.0, 2.5]`, as the schema reads it. Nothing else changes.
fn numbers_as_declared(written: &mut Value, read: &Value) {
    let mut stack = vec![(written, read)];
    while let Some((written, read)) = stack.pop() {
        match (written, read) {
            (written @ (Value::Int(_) | Value::BigInt(_)), Value::Float(x)) => {
                *written = Value::Float(*x);
            }
            (Value::List(items) | Value::Tuple(items), Value::List(read) | Value::Tuple(read)) => {
                stack.extend(items.iter_mut().zip(read))
            }
            (Value::Dict(pairs), Value::Dict(read)) => {
                stack.extend(
                    pairs
                        .iter_mut()
                        .filter_map(|(k, v)| Some((v, read.get(k)?))),
                );
            }
            (Value::Dict(pairs), Value::Record(record)) => {
                stack.extend(pairs.iter_mut().filter_map(|(k, v)| {
                    let Value::Str(k) = k else { return None };
                    Some((v, record.get(k)?))
                }));
            }
            _ => {}
        }
    }
}

/// An argument that could not be read, as written: a list, tuple or dict display keeps the
/// parts that can be read, JSON's `true`, `false` and `null` (no such name being defined) are
/// their values, and the [`UNREADABLE`] marker holding its source stands for each other part
/// that cannot be read (a name that is not defined, a tool call). Each node is looked at once,
/// as deep as the checker walks.
fn partly_read(arg: &Expr, source: &str, ctx: &Context, limits: &Limits, depth: usize) -> Value {
    let marker = || {
        let text = source
            .get(arg.span.range())
            .map_or_else(|| arg.to_string(), str::to_string);
        unreadable(&text)
    };
    if depth > crate::resolve::depth_cap(limits) {
        return marker();
    }
    let part = |e: &Expr| partly_read(e, source, ctx, limits, depth + 1);
    match &arg.kind {
        ExprKind::List(items) => Value::List(items.iter().map(part).collect()),
        ExprKind::Tuple(items) => Value::Tuple(items.iter().map(part).collect()),
        ExprKind::Dict(pairs) => {
            let mut dict = crate::value::Dict::default();
            for (key, value) in pairs {
                match eval::eval_pure(key, ctx, limits) {
                    Ok(key) if key.is_hashable() => {
                        dict.insert(key, part(value));
                    }
                    _ => return marker(),
                }
            }
            Value::Dict(dict)
        }
        ExprKind::Name(name) if ctx.get(name).is_none() => match name.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::None,
            _ => marker(),
        },
        _ => eval::eval_pure(arg, ctx, limits).unwrap_or_else(|_| marker()),
    }
}

/// The arguments of the call `expr` (positional, then keyword values), each evaluated pure:
/// literals, records, context names; empty when `expr` is not a call.
fn read_args(expr: &Expr, ctx: &Context, limits: &Limits) -> Vec<Result<Value, Error>> {
    let ExprKind::Call(call) = &expr.kind else {
        return Vec::new();
    };
    call.args
        .iter()
        .chain(call.kwargs.iter().map(|k| &k.value))
        .map(|arg| eval::eval_pure(arg, ctx, limits))
        .collect()
}

/// The marker for an argument whose value could not be read: `{"$unreadable": source}`.
pub fn unreadable(source: &str) -> Value {
    let mut marker = crate::value::Dict::default();
    marker.insert(
        Value::Str(UNREADABLE.to_string()),
        Value::Str(clip(source, 200)),
    );
    Value::Dict(marker)
}

/// Check the repaired call `expr` to `name` (`sig`: its signature when it is a tool): its
/// arguments bound to the signature, or why they cannot be.
fn check_parsed(
    expr: &Expr,
    name: &str,
    sig: Option<&RecordType>,
    ctx: &Context,
    read: &[Result<Value, Error>],
) -> Result<Vec<Option<Value>>, Error> {
    let Some(sig) = sig else {
        // Every name a call can use: Python call text is best told a tool's Python alias.
        let tools = ctx
            .reachable()
            .filter(|(_, e)| matches!(e, Entry::Tool(_)))
            .map(|(n, _)| n);
        let e = Error::new(
            ErrorKind::UnknownTool,
            format!("tool `{}` is not defined", clip(name, 60)),
        )
        .at(match &expr.kind {
            ExprKind::Call(call) => call.func_span,
            _ => expr.span,
        });
        return Err(e.suggest(name, tools));
    };
    let ExprKind::Call(call) = &expr.kind else {
        return Err(Error::new(ErrorKind::Unsupported, "expected a function call").at(expr.span));
    };
    // The call's shape is the first error, with the keywords' own spans (binding checks it
    // too, knowing only the values' spans); then the first argument that could not be
    // evaluated, in source order. A call that binds has the right shape: it is checked once.
    let shape = || {
        let keywords = call.kwargs.iter().map(|k| (k.name.as_str(), k.name_span));
        sig.check_keywords(call.args.len(), keywords, expr.span)
    };
    if let Some(Err(e)) = read.iter().find(|r| r.is_err()) {
        shape()?;
        return Err(e.clone());
    }
    let value = |i: usize| match read.get(i) {
        Some(Ok(v)) => v.clone(),
        _ => Value::None,
    };
    let args = call
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| (value(i), a.span))
        .collect();
    // Named by the parsed call's own keywords: no name is copied to bind them.
    let kwargs = call
        .kwargs
        .iter()
        .enumerate()
        .map(|(i, k)| (k.name.as_str(), value(call.args.len() + i), k.value.span))
        .collect();
    sig.bind_named(args, kwargs, expr.span)
        .map_err(|e| shape().err().unwrap_or(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::RecordType;
    use serde_json::json;
    use std::sync::Arc;

    fn ctx() -> Context {
        let mut ctx = Context::new();
        let sig = RecordType::from_schema(
            "area",
            &json!({"type": "object", "properties": {
                "base": {"type": "integer"}, "height": {"type": "number"},
                "unit": {"type": "string", "enum": ["m", "cm"]}}, "required": ["base", "height"]}),
        );
        ctx.insert("area", Entry::Tool(Arc::new(sig)));
        ctx
    }

    fn check(text: &str) -> Checked {
        check_text(text, &ctx(), &Limits::default(), &RepairOptions::default())
    }

    #[test]
    fn valid_calls_are_bound_and_coerced() {
        let c = check("area(10, height=5)");
        let v = &c.verdicts[0];
        assert!(v.valid, "{:?}", v.error);
        assert_eq!(v.to_json()["kwargs"], json!({"base": 10, "height": 5}));
    }

    /// A parameter named twice (by position and keyword, or by two keywords) is listed once, at
    /// its first place with the value given last; the verdict says the call is invalid, and the
    /// verdict's JSON and serde forms round-trip.
    #[test]
    fn a_name_given_twice_is_listed_once() {
        for (text, expected) in [
            ("area(10, base=3, height=2)", [("base", 3), ("height", 2)]),
            (
                "area(height=2, base=1, height=4)",
                [("height", 4), ("base", 1)],
            ),
        ] {
            let c = check(text);
            let v = &c.verdicts[0];
            assert!(!v.valid, "{text}");
            let expected: Vec<(String, Value)> = expected
                .iter()
                .map(|(name, n)| (name.to_string(), Value::Int(*n)))
                .collect();
            assert_eq!(v.kwargs, expected, "{text}");
            let json = serde_json::to_string(v).unwrap();
            assert_eq!(
                &serde_json::from_str::<Verdict>(&json).unwrap(),
                v,
                "{json}"
            );
        }
        // Many names, one of them twice: found by sorting, listed once.
        let mut many: Vec<String> = (0..40).map(|i| format!("k{i}=1")).collect();
        many.push("k7=2".into());
        let v = &check(&format!("area({})", many.join(", "))).verdicts[0];
        assert_eq!(v.kwargs.len(), 40);
        assert_eq!(v.kwarg("k7"), Some(&Value::Int(2)));
    }

    #[test]
    fn invalid_calls_say_why() {
        let c = check("area(base=1.5, height=2)\narea(base=1, height=2, unit='km')\naree(base=1)");
        let errors: Vec<ErrorKind> = c
            .verdicts
            .iter()
            .map(|v| v.error.as_ref().unwrap().kind)
            .collect();
        assert_eq!(
            errors,
            [ErrorKind::Type, ErrorKind::Type, ErrorKind::UnknownTool]
        );
        assert_eq!(
            c.verdicts[2].error.as_ref().unwrap().hint.as_deref(),
            Some("did you mean `area`?")
        );
    }

    #[test]
    fn strict_mode_repairs_nothing() {
        let strict = check_text(
            "area(base=2.0, height=1)",
            &ctx(),
            &Limits::default(),
            &RepairOptions::strict(),
        );
        assert!(!strict.verdicts[0].valid);
        let lenient = check("area(base=2.0, height=1)");
        assert!(lenient.verdicts[0].valid);
        assert_eq!(lenient.verdicts[0].repairs[0].from, "2.0");
    }

    #[test]
    fn nested_tool_calls_are_refused() {
        let c = check("area(base=area(base=1, height=1), height=1)");
        assert_eq!(
            c.verdicts[0].error.as_ref().unwrap().kind,
            ErrorKind::Unsupported
        );
    }
}

//! Resolve and evaluate: names against the [`Context`](crate::Context), values by Python's rules with every
//! allocation size-checked, tool calls handed to a [`Dispatch`] in waves.
//!
//! A model response is split into *units* (one call, or each call of a top-level list of
//! calls). For each unit, before anything runs: every name must resolve, every call must fit
//! its signature's shape, and the number of calls must be within `Limits::max_calls` (tool
//! calls) and `Limits::max_constructors` (records and builtins). Then
//! every part that does not depend on a tool result is evaluated, so a bad argument stops the
//! unit before any tool runs. Tool calls run innermost first; the calls of one wave (across all
//! units) go to the dispatcher together, which runs them concurrently. The same code runs in
//! the native manager and inside the wasm guest.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::call::Function;
use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::limits::Limits;
use crate::resolve;
use crate::resolve::context::{Entry, Resolve};
use crate::syntax::{BinaryOp, Call, Expr, ExprKind, UnaryOp};
use crate::value::{NdArray, Value};

mod expr;
mod ops;
mod waves;

use self::expr::Evaluator;
use self::ops::{not_finite, unary, unhashable, wide, FINITE_HINT, NODE};
use self::waves::UnitState;

/// A tool call ready to run: the tool's name and its evaluated arguments, with spans.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// The tool name as registered.
    pub name: String,
    /// The whole call's span.
    pub span: Span,
    /// Positional arguments and their spans.
    pub args: Vec<(Value, Span)>,
    /// Keyword arguments, their values and the values' spans.
    pub kwargs: Vec<(String, Value, Span)>,
}

impl ToolRequest {
    /// The call as a [`Function`] record (values cloned).
    pub fn function(&self) -> Function {
        Function {
            name: self.name.clone(),
            args: self.args.iter().map(|(v, _)| v.clone()).collect(),
            kwargs: self
                .kwargs
                .iter()
                .map(|(k, v, _)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// Runs a batch of tool calls and returns one result per request, in order.
///
/// The native manager runs the batch concurrently on tokio; the wasm guest sends it to the
/// host through its single import.
pub trait Dispatch {
    /// Run `requests`; the result vector has the same length and order.
    fn dispatch(
        &self,
        requests: Vec<ToolRequest>,
    ) -> impl Future<Output = Vec<Result<Value, Error>>>;

    /// Run one request: [`dispatch`](Dispatch::dispatch) of a batch of one, unless the
    /// implementation has a more direct way.
    fn dispatch_one(&self, request: ToolRequest) -> impl Future<Output = Result<Value, Error>> {
        async move {
            let result = self.dispatch(vec![request]).await.pop();
            result.unwrap_or_else(|| Err(Error::new(ErrorKind::Sandbox, "no result")))
        }
    }

    /// Run the call of tool `name` at `span` whose keywords are borrowed from the parsed
    /// call: [`dispatch_one`](Dispatch::dispatch_one) of the owned request, unless the
    /// implementation can bind the borrowed names as they are (the native manager does,
    /// saving a copy of each name per call).
    fn dispatch_call(
        &self,
        name: &str,
        span: Span,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(&str, Value, Span)>,
    ) -> impl Future<Output = Result<Value, Error>> {
        self.dispatch_one(ToolRequest {
            name: name.to_string(),
            span,
            args,
            kwargs: kwargs
                .into_iter()
                .map(|(k, v, s)| (k.to_string(), v, s))
                .collect(),
        })
    }
}

/// What one unit produced: the top-level call as evaluated (when it got that far) and its
/// result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitOutcome {
    /// The source span of the unit.
    pub span: Span,
    /// The top-level call with its evaluated arguments.
    pub call: Option<Function>,
    /// The value, or why there is none.
    pub result: Result<Value, Error>,
}

/// Split a parsed response into units: each element of a top-level list or tuple whose
/// elements are all calls, or else the whole expression.
pub fn units(expr: &Expr) -> Vec<&Expr> {
    listed_calls(expr).map_or_else(|| vec![expr], |items| items.iter().collect())
}

/// The elements of `expr` when it is a non-empty list or tuple of calls only (each a unit);
/// `None` when the whole expression is the one unit.
fn listed_calls(expr: &Expr) -> Option<&[Expr]> {
    match &expr.kind {
        ExprKind::List(items) | ExprKind::Tuple(items)
            if !items.is_empty() && items.iter().all(|e| matches!(e.kind, ExprKind::Call(_))) =>
        {
            Some(items)
        }
        _ => None,
    }
}

/// The one unit of `expr` when it has one ([`units`] of length one), found without collecting
/// them: the expression itself, or the call of a one-element list or tuple of a call.
#[cfg(feature = "native")]
pub(crate) fn one_unit(expr: &Expr) -> Option<&Expr> {
    match listed_calls(expr) {
        None => Some(expr),
        Some([only]) => Some(only),
        Some(_) => None,
    }
}

/// [`run`] of the one unit `root`: its outcome, without the vectors of units and outcomes.
#[cfg(feature = "native")]
pub(crate) async fn run_one<D: Dispatch>(
    root: &Expr,
    ctx: &dyn Resolve,
    limits: &Limits,
    dispatch: &D,
) -> UnitOutcome {
    let eval = Evaluator::new(ctx, limits);
    if let Some(outcome) = single_call(root, &eval, dispatch).await {
        return outcome;
    }
    // One outcome per unit. Boxed: the waves' future is large, and only units that are not a
    // single tool call (nested calls, a record or built-in at the root) need it.
    let outcome = Box::pin(waves(&[root], &eval, dispatch)).await.pop();
    outcome.unwrap_or_else(|| UnitOutcome {
        span: root.span,
        call: None,
        result: Err(Error::new(ErrorKind::Unsupported, "the unit gave no outcome").at(root.span)),
    })
}

/// Evaluate `units` against `ctx`, sending tool calls to `dispatch`. One outcome per unit.
pub async fn run<D: Dispatch>(
    units: &[&Expr],
    ctx: &dyn Resolve,
    limits: &Limits,
    dispatch: &D,
) -> Vec<UnitOutcome> {
    let eval = Evaluator::new(ctx, limits);
    if let [root] = units {
        if let Some(outcome) = single_call(root, &eval, dispatch).await {
            return vec![outcome];
        }
    }
    waves(units, &eval, dispatch).await
}

/// [`run`] through the waves of [`UnitState`]: any units.
async fn waves<D: Dispatch>(
    units: &[&Expr],
    eval: &Evaluator<'_>,
    dispatch: &D,
) -> Vec<UnitOutcome> {
    let limits = eval.limits;
    let mut states: Vec<UnitState> = units
        .iter()
        .map(|root| UnitState::new(root, eval))
        .collect();
    // `max_calls` and `max_constructors` bound the whole input: a list of calls that is too
    // long runs none of them.
    let calls = states
        .iter()
        .fold(resolve::Counts::default(), |n, s| n.plus(s.calls));
    if let Some(error) = calls.over(limits) {
        for state in states.iter_mut().filter(|s| s.error.is_none()) {
            state.error = Some(error.clone());
            state.waves.clear();
        }
    }
    let max_wave = states.iter().map(|s| s.waves.len()).max().unwrap_or(0);
    for wave in 0..max_wave {
        let mut requests = Vec::new();
        let mut owners = Vec::new();
        for (i, state) in states.iter_mut().enumerate() {
            for request in state.requests(wave, eval) {
                requests.push(request);
                owners.push(i);
            }
        }
        if requests.is_empty() {
            continue;
        }
        let results = dispatch.dispatch(requests).await;
        for (owner, result) in owners.iter().zip(results) {
            if let Some(state) = states.get_mut(*owner) {
                state.accept(result);
            }
        }
    }
    states.into_iter().map(|s| s.finish(eval)).collect()
}

/// The most common unit, one tool call whose arguments call no tool, without the waves of
/// [`UnitState`]: the same checks, the same order of evaluation (the arguments last to first,
/// as `prefill` takes them from its stack), the same outcome. `None` for any other unit.
async fn single_call<D: Dispatch>(
    root: &Expr,
    eval: &Evaluator<'_>,
    dispatch: &D,
) -> Option<UnitOutcome> {
    let ExprKind::Call(call) = &root.kind else {
        return None;
    };
    let entry = eval.ctx.get(&call.func)?;
    let Entry::Tool(sig) = entry else {
        return None;
    };
    let span = root.span;
    let failed = |e: Error| UnitOutcome {
        span,
        call: None,
        result: Err(e),
    };
    let mut calls = resolve::Counts::default();
    if let Err(e) = resolve::check_call(root, entry, eval.ctx, eval.limits, &mut calls) {
        return Some(failed(e));
    }
    if root
        .children()
        .filter(|child| !child.is_literal())
        .any(|child| resolve::first_tool_call(child, eval.ctx).is_some())
    {
        return None;
    }
    let mut memo = Memo::default();
    let mut kwargs = Vec::with_capacity(call.kwargs.len());
    for k in call.kwargs.iter().rev() {
        match eval.eval(&k.value, &mut memo) {
            Ok(v) => kwargs.push((k.name.as_str(), v, k.value.span)),
            Err(e) => return Some(failed(e)),
        }
    }
    let mut args = Vec::with_capacity(call.args.len());
    for a in call.args.iter().rev() {
        match eval.eval(a, &mut memo) {
            Ok(v) => args.push((v, a.span)),
            Err(e) => return Some(failed(e)),
        }
    }
    kwargs.reverse();
    args.reverse();
    // The tool's own name (the call may use its Python alias).
    let name = sig.name.as_str();
    // The call as evaluated owns its names; the request borrows them from the parsed call.
    let function = Function {
        name: name.to_string(),
        args: args.iter().map(|(v, _)| v.clone()).collect(),
        kwargs: kwargs
            .iter()
            .map(|(k, v, _)| ((*k).to_string(), v.clone()))
            .collect(),
    };
    let result = dispatch.dispatch_call(name, span, args, kwargs).await;
    Some(UnitOutcome {
        span,
        call: Some(function),
        result,
    })
}

/// Evaluate one expression that contains no tool calls (a record, a literal, `np.array(...)`).
pub fn eval_pure(expr: &Expr, ctx: &dyn Resolve, limits: &Limits) -> Result<Value, Error> {
    let eval = Evaluator::new(ctx, limits);
    // A scalar literal has no name, call or nesting to check: it is only evaluated.
    if expr.is_literal() {
        return eval.eval(expr, &mut Memo::default());
    }
    let mut calls = resolve::Counts::default();
    resolve::check(expr, ctx, limits, &mut calls)?;
    if let Some(span) = resolve::first_tool_call(expr, ctx) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "a tool call is not allowed here; tool calls run through execute_func_expr",
        )
        .at(span));
    }
    eval.eval(expr, &mut Memo::default())
}

/// A map keyed by node addresses (a fixed hasher: addresses are not chosen by the input, and
/// a seeded one would read the clock, which the sandbox does not give the guest).
type ByNode<V> = std::collections::HashMap<usize, V, foldhash::fast::FixedState>;

/// Values already computed, keyed by the address of their node (found by hash: a call may
/// have many arguments).
#[derive(Default)]
struct Memo(ByNode<Value>);

impl Memo {
    fn put(&mut self, e: &Expr, v: Value) {
        self.0.insert(addr(e), v);
    }

    fn take(&mut self, e: &Expr) -> Option<Value> {
        if self.0.is_empty() {
            return None;
        }
        self.0.remove(&addr(e))
    }
}

fn addr(e: &Expr) -> usize {
    e as *const Expr as usize
}

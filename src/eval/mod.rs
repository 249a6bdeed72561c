//! Resolve and evaluate: names against the [`Context`](crate::Context), values by Python's rules with every
//! allocation size-checked, tool calls handed to a [`Dispatch`] in waves.
//!
//! A model response is split into *units* (one call, or each call of a top-level list of
//! calls). For each unit, before anything runs: every name must resolve, every call must fit
//! its signature's shape, and the number of calls must be within `Limits::max_calls`. Then
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
    match &expr.kind {
        ExprKind::List(items) | ExprKind::Tuple(items)
            if !items.is_empty() && items.iter().all(|e| matches!(e.kind, ExprKind::Call(_))) =>
        {
            items.iter().collect()
        }
        _ => vec![expr],
    }
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
    let mut states: Vec<UnitState> = units
        .iter()
        .map(|root| UnitState::new(root, &eval))
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
            for request in state.requests(wave, &eval) {
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
    states.into_iter().map(|s| s.finish(&eval)).collect()
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
    if !matches!(eval.ctx.get(&call.func), Some(Entry::Tool(_))) {
        return None;
    }
    let span = root.span;
    let failed = |e: Error| UnitOutcome {
        span,
        call: None,
        result: Err(e),
    };
    let mut calls = resolve::Counts::default();
    if let Err(e) = resolve::check(root, eval.ctx, eval.limits, &mut calls) {
        return Some(failed(e));
    }
    if root
        .children()
        .any(|child| resolve::first_tool_call(child, eval.ctx).is_some())
    {
        return None;
    }
    let mut memo = Memo::default();
    let mut kwargs = Vec::with_capacity(call.kwargs.len());
    for k in call.kwargs.iter().rev() {
        match eval.eval(&k.value, &mut memo) {
            Ok(v) => kwargs.push((k.name.clone(), v, k.value.span)),
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
    let request = ToolRequest {
        name: call.func.clone(),
        span,
        args,
        kwargs,
    };
    let function = request.function();
    let result = dispatch.dispatch_one(request).await;
    Some(UnitOutcome {
        span,
        call: Some(function),
        result,
    })
}

/// Evaluate one expression that contains no tool calls (a record, a literal, `np.array(...)`).
pub fn eval_pure(expr: &Expr, ctx: &dyn Resolve, limits: &Limits) -> Result<Value, Error> {
    let eval = Evaluator::new(ctx, limits);
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

/// The progress of one unit through the waves.
struct UnitState<'e> {
    root: &'e Expr,
    memo: Memo,
    /// Tool-call nodes by wave (innermost calls first).
    waves: Vec<Vec<&'e Expr>>,
    /// Nodes that contain a tool call (everything else is pure).
    impure: ByNode<()>,
    /// The requests sent in the current wave, by node.
    pending: Vec<&'e Expr>,
    call: Option<Function>,
    error: Option<Error>,
    /// Calls (tools; constructors and functions) counted in this unit.
    calls: resolve::Counts,
}

impl<'e> UnitState<'e> {
    fn new(root: &'e Expr, eval: &Evaluator) -> UnitState<'e> {
        let mut state = UnitState {
            root,
            memo: Memo::default(),
            waves: Vec::new(),
            impure: ByNode::default(),
            pending: Vec::new(),
            call: None,
            error: None,
            calls: resolve::Counts::default(),
        };
        if let Err(e) = state.prepare(eval) {
            state.error = Some(e);
            state.waves.clear();
        }
        state
    }

    fn prepare(&mut self, eval: &Evaluator) -> Result<(), Error> {
        let ExprKind::Call(_) = &self.root.kind else {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "expected a function call like `name(arg=...)` or a list of calls",
            )
            .at(self.root.span));
        };
        let mut calls = resolve::Counts::default();
        let checked = resolve::check(self.root, eval.ctx, eval.limits, &mut calls);
        self.calls = calls;
        checked?;
        self.plan(self.root, eval.ctx, resolve::depth_cap(eval.limits))?;
        self.prefill(self.root, eval)
    }

    /// Find tool calls and their wave; returns the height of `e` (0 = no tool call inside).
    fn plan(&mut self, e: &'e Expr, ctx: &dyn Resolve, budget: usize) -> Result<usize, Error> {
        // The parser bounds nesting; `budget` guards this recursion on its own.
        let Some(budget) = budget.checked_sub(1) else {
            return Err(
                Error::limit_message(LimitKind::Depth, "max_depth limit exceeded").at(e.span),
            );
        };
        let mut height = 0;
        for child in e.children() {
            height = height.max(self.plan(child, ctx, budget)?);
        }
        let is_tool = matches!(&e.kind, ExprKind::Call(c) if matches!(ctx.get(&c.func), Some(Entry::Tool(_))));
        if is_tool {
            if self.waves.len() <= height {
                self.waves.resize_with(height + 1, Vec::new);
            }
            self.waves[height].push(e);
            height += 1;
        }
        if height > 0 {
            self.impure.insert(addr(e), ());
        }
        Ok(height)
    }

    /// Evaluate every pure subtree that sits inside an impure node.
    fn prefill(&mut self, e: &'e Expr, eval: &Evaluator) -> Result<(), Error> {
        let mut stack = vec![e];
        while let Some(node) = stack.pop() {
            if self.impure.contains_key(&addr(node)) {
                stack.extend(node.children());
            } else if !std::ptr::eq(node, self.root) {
                let v = eval.eval(node, &mut self.memo)?;
                self.memo.put(node, v);
            }
        }
        Ok(())
    }

    fn requests(&mut self, wave: usize, eval: &Evaluator) -> Vec<ToolRequest> {
        self.pending.clear();
        if self.error.is_some() {
            return Vec::new();
        }
        let Some(nodes) = self.waves.get(wave) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(nodes.len());
        for &node in nodes {
            let ExprKind::Call(call) = &node.kind else {
                continue;
            };
            match eval.arguments(call, &mut self.memo) {
                Ok((args, kwargs)) => {
                    let request = ToolRequest {
                        name: call.func.clone(),
                        span: node.span,
                        args,
                        kwargs,
                    };
                    if std::ptr::eq(node, self.root) {
                        self.call = Some(request.function());
                    }
                    self.pending.push(node);
                    out.push(request);
                }
                Err(e) => {
                    self.error = Some(e);
                    self.pending.clear();
                    return Vec::new();
                }
            }
        }
        out
    }

    fn accept(&mut self, result: Result<Value, Error>) {
        if self.pending.is_empty() {
            return;
        }
        let node = self.pending.remove(0);
        match result {
            Ok(v) => self.memo.put(node, v),
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
            }
        }
    }

    fn finish(mut self, eval: &Evaluator) -> UnitOutcome {
        let span = self.root.span;
        if let Some(e) = self.error.take() {
            return UnitOutcome {
                span,
                call: self.call,
                result: Err(e),
            };
        }
        if let Some(v) = self.memo.take(self.root) {
            return UnitOutcome {
                span,
                call: self.call,
                result: Ok(v),
            };
        }
        // A root that is a constructor or built-in: record its arguments, then apply it.
        let result = match &self.root.kind {
            ExprKind::Call(call) => {
                eval.arguments(call, &mut self.memo)
                    .and_then(|(args, kwargs)| {
                        let request = ToolRequest {
                            name: call.func.clone(),
                            span,
                            args,
                            kwargs,
                        };
                        self.call = Some(request.function());
                        eval.apply(call, request.args, request.kwargs, span)
                    })
            }
            _ => eval.eval(self.root, &mut self.memo),
        };
        UnitOutcome {
            span,
            call: self.call,
            result,
        }
    }
}

/// Pure evaluation with budgets.
struct Evaluator<'a> {
    ctx: &'a dyn Resolve,
    limits: &'a Limits,
    /// Approximate bytes materialized so far in this evaluation. Atomic only so that the
    /// evaluation's future is `Send`: one task owns it, and a relaxed load and store cost
    /// what a `Cell`'s do.
    used: AtomicU64,
    budget: usize,
}

impl<'a> Evaluator<'a> {
    fn new(ctx: &'a dyn Resolve, limits: &'a Limits) -> Evaluator<'a> {
        Evaluator {
            ctx,
            limits,
            used: AtomicU64::new(0),
            budget: limits.max_eval_bytes,
        }
    }

    fn charge(&self, bytes: usize, span: Span) -> Result<(), Error> {
        self.charge_wide(wide(bytes), span)
    }

    /// [`Evaluator::charge`] in 64 bits, so that a 32-bit guest reports what native does.
    fn charge_wide(&self, bytes: u64, span: Span) -> Result<(), Error> {
        let used = self.used.load(Ordering::Relaxed).saturating_add(bytes);
        self.used.store(used, Ordering::Relaxed);
        if used > wide(self.budget) {
            return Err(Error::limit(LimitKind::EvalBytes, self.budget, used).at(span));
        }
        Ok(())
    }

    fn eval(&self, e: &Expr, memo: &mut Memo) -> Result<Value, Error> {
        if let Some(v) = memo.take(e) {
            return Ok(v);
        }
        let span = e.span;
        match &e.kind {
            ExprKind::None => Ok(Value::None),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Int(i) => Ok(Value::Int(*i)),
            ExprKind::BigInt(b) => Ok(Value::from_bigint(b.clone())),
            ExprKind::Float(f) if !f.is_finite() => Err(Error::new(
                ErrorKind::Value,
                "this float literal is infinite (beyond 1.8e308): floats must be finite",
            )
            .at(span)
            .with_hint(FINITE_HINT)),
            ExprKind::Float(f) => Ok(Value::Float(*f)),
            ExprKind::Str(s) => {
                self.check_bytes(wide(s.len()), span)?;
                self.charge(s.len(), span)?;
                Ok(Value::Str(s.clone()))
            }
            ExprKind::Bytes(b) => {
                self.check_bytes(wide(b.len()), span)?;
                self.charge(b.len(), span)?;
                Ok(Value::Bytes(b.clone()))
            }
            ExprKind::Name(name) => match self.ctx.get(name) {
                Some(Entry::Variable { value, size }) => {
                    self.charge(*size, span)?;
                    if let Some(bad) = value.find_non_finite() {
                        return Err(not_finite(&bad, &format!("`{name}`"), span));
                    }
                    Ok(value.clone())
                }
                _ => Err(resolve::unknown(self.ctx, name, span, false)),
            },
            ExprKind::List(items) => self.items(items, memo, span).map(Value::List),
            ExprKind::Tuple(items) => self.items(items, memo, span).map(Value::Tuple),
            ExprKind::Set(items) => {
                let values = self.items(items, memo, span)?;
                let mut set = crate::value::Set::with_capacity(values.len());
                for (v, item) in values.into_iter().zip(items) {
                    if !v.is_hashable() {
                        return Err(unhashable(&v, item.span));
                    }
                    // Python's equal numbers are one element: the first one written stays.
                    if !v.same_keys().iter().any(|k| set.contains(k)) {
                        set.insert(v);
                    }
                }
                Ok(Value::Set(set))
            }
            ExprKind::Dict(pairs) => {
                self.charge(pairs.len().saturating_mul(2 * NODE), span)?;
                let mut dict = crate::value::Dict::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let key = self.eval(k, memo)?;
                    if !key.is_hashable() {
                        return Err(unhashable(&key, k.span));
                    }
                    let value = self.eval(v, memo)?;
                    // Python's equal numbers are one key: the first key stays, the last value.
                    let key = key
                        .same_keys()
                        .into_iter()
                        .find(|k| dict.contains_key(k))
                        .unwrap_or(key);
                    dict.insert(key, value);
                }
                self.check_len(dict.len(), span)?;
                let elements = dict
                    .iter()
                    .map(|(k, v)| k.element_count().saturating_add(v.element_count()));
                self.check_len(elements.fold(0, usize::saturating_add), span)?;
                Ok(Value::Dict(dict))
            }
            ExprKind::Unary(op, x) => {
                let v = self.eval(x, memo)?;
                unary(*op, v).map_err(|err| err.at(span))
            }
            ExprKind::Binary(op, a, b) => {
                let left = self.eval(a, memo)?;
                let right = self.eval(b, memo)?;
                self.binary(*op, left, right, span)
            }
            ExprKind::Call(call) => {
                let (args, kwargs) = self.arguments(call, memo)?;
                self.apply(call, args, kwargs, span)
            }
        }
    }

    fn items(&self, items: &[Expr], memo: &mut Memo, span: Span) -> Result<Vec<Value>, Error> {
        self.charge(items.len().saturating_mul(NODE), span)?;
        if items.len() > self.limits.max_collection_len {
            return Err(Error::limit(
                LimitKind::CollectionLen,
                self.limits.max_collection_len,
                items.len(),
            )
            .at(span));
        }
        let values = items
            .iter()
            .map(|item| self.eval(item, memo))
            .collect::<Result<Vec<_>, _>>()?;
        // Elements are counted recursively, as for the results of `+` and `*`.
        let elements = values.iter().map(Value::element_count);
        self.check_len(elements.fold(0, usize::saturating_add), span)?;
        Ok(values)
    }

    fn check_len(&self, len: usize, span: Span) -> Result<(), Error> {
        if len > self.limits.max_collection_len {
            return Err(Error::limit(
                LimitKind::CollectionLen,
                self.limits.max_collection_len,
                len,
            )
            .at(span));
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn arguments(
        &self,
        call: &Call,
        memo: &mut Memo,
    ) -> Result<(Vec<(Value, Span)>, Vec<(String, Value, Span)>), Error> {
        let args = call
            .args
            .iter()
            .map(|a| self.eval(a, memo).map(|v| (v, a.span)))
            .collect::<Result<Vec<_>, _>>()?;
        let kwargs = call
            .kwargs
            .iter()
            .map(|k| {
                self.eval(&k.value, memo)
                    .map(|v| (k.name.clone(), v, k.value.span))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((args, kwargs))
    }

    /// Apply a constructor or built-in (tools never reach here: they are dispatched).
    fn apply(
        &self,
        call: &Call,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(String, Value, Span)>,
        span: Span,
    ) -> Result<Value, Error> {
        match self.ctx.get(&call.func) {
            Some(Entry::Record(rt)) => rt.construct(args, kwargs, span),
            Some(Entry::Function(b)) => {
                let result = b
                    .call(
                        args.into_iter().map(|(v, _)| v).collect(),
                        kwargs.into_iter().map(|(k, v, _)| (k, v)).collect(),
                        self.limits,
                    )
                    .map_err(|e| e.at(span))?;
                self.charge(result.approx_size(), span)?;
                if let Some(bad) = result.find_non_finite() {
                    let whole = format!("the result of `{}`", call.func);
                    return Err(not_finite(&bad, &whole, span));
                }
                Ok(result)
            }
            Some(Entry::Tool(_)) => Err(Error::new(
                ErrorKind::Unsupported,
                format!("tool `{}` cannot be called here", call.func),
            )
            .at(span)),
            _ => Err(resolve::unknown(self.ctx, &call.func, call.func_span, true)),
        }
    }

    fn binary(&self, op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value, Error> {
        use Value as V;
        let limits = self.limits;
        let result = match (op, a, b) {
            (BinaryOp::Add, V::Str(x), V::Str(y)) => {
                self.check_bytes(wide(x.len()).saturating_add(wide(y.len())), span)?;
                V::Str(x + &y)
            }
            (BinaryOp::Add, V::Bytes(mut x), V::Bytes(y)) => {
                self.check_bytes(wide(x.len()).saturating_add(wide(y.len())), span)?;
                x.extend(y);
                V::Bytes(x)
            }
            (BinaryOp::Add, V::List(mut x), V::List(y)) => {
                self.check_elements(&x, &y, 1, span)?;
                x.extend(y);
                V::List(x)
            }
            (BinaryOp::Add, V::Tuple(mut x), V::Tuple(y)) => {
                self.check_elements(&x, &y, 1, span)?;
                x.extend(y);
                V::Tuple(x)
            }
            (
                BinaryOp::Mul,
                V::Int(n),
                s @ (V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_)),
            )
            | (
                BinaryOp::Mul,
                s @ (V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_)),
                V::Int(n),
            ) => {
                // Sizes are checked in 64 bits, so that the guest (32-bit) reports what native does.
                let times = n.max(0).unsigned_abs();
                let n = usize::try_from(times).unwrap_or(usize::MAX);
                match s {
                    V::Str(x) => {
                        self.check_bytes(wide(x.len()).saturating_mul(times), span)?;
                        V::Str(x.repeat(n))
                    }
                    V::Bytes(x) => {
                        self.check_bytes(wide(x.len()).saturating_mul(times), span)?;
                        V::Bytes(x.repeat(n))
                    }
                    V::List(x) => {
                        self.check_elements(&x, &[], times, span)?;
                        V::List(repeat(&x, n))
                    }
                    V::Tuple(x) => {
                        self.check_elements(&x, &[], times, span)?;
                        V::Tuple(repeat(&x, n))
                    }
                    _ => V::None,
                }
            }
            (BinaryOp::Mul, V::BigInt(_), V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_))
            | (BinaryOp::Mul, V::Str(_) | V::Bytes(_) | V::List(_) | V::Tuple(_), V::BigInt(_)) => {
                return Err(Error::limit(
                    LimitKind::CollectionLen,
                    limits.max_collection_len,
                    "a repeat count beyond 64 bits",
                )
                .at(span))
            }
            (op, a, b) => return self.arith(op, a, b, span),
        };
        self.charge(shallow_size(&result), span)?;
        Ok(result)
    }

    fn check_bytes(&self, len: u64, span: Span) -> Result<(), Error> {
        if len > wide(self.limits.max_str_bytes) {
            return Err(Error::limit(LimitKind::StrBytes, self.limits.max_str_bytes, len).at(span));
        }
        Ok(())
    }

    fn check_elements(
        &self,
        x: &[Value],
        y: &[Value],
        times: u64,
        span: Span,
    ) -> Result<(), Error> {
        let count = |items: &[Value]| {
            items
                .iter()
                .map(|v| wide(v.element_count()))
                .fold(0u64, u64::saturating_add)
        };
        let total = count(x).saturating_mul(times).saturating_add(count(y));
        if total > wide(self.limits.max_collection_len) {
            return Err(Error::limit(
                LimitKind::CollectionLen,
                self.limits.max_collection_len,
                total,
            )
            .at(span));
        }
        let bytes = x
            .iter()
            .map(|v| wide(v.approx_size()))
            .fold(0u64, u64::saturating_add)
            .saturating_mul(times);
        self.charge_wide(bytes, span)
    }

    fn arith(&self, op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value, Error> {
        let (x, y) = match (num(&a), num(&b)) {
            (Some(x), Some(y)) => (x, y),
            _ => {
                return Err(Error::new(
                    ErrorKind::Type,
                    format!(
                        "unsupported operand types for {}: `{}` and `{}`",
                        op.symbol(),
                        a.type_name(),
                        b.type_name()
                    ),
                )
                .at(span))
            }
        };
        let result = match (x, y) {
            (Num::Int(x), Num::Int(y)) => self.int_op(op, x, y),
            (x, y) => float_op(op, x.to_f64(), y.to_f64()),
        };
        let v = result.map_err(|e| e.at(span))?;
        if let Some(bad) = v.find_non_finite() {
            let operation = format!(
                "`{} {} {}`",
                clip(&a.repr(), 40),
                op.symbol(),
                clip(&b.repr(), 40)
            );
            return Err(not_finite(&bad, &operation, span));
        }
        if let Value::BigInt(b) = &v {
            self.check_digits(b, span)?;
            self.charge((b.bits() / 8) as usize, span)?;
        }
        Ok(v)
    }

    fn check_digits(&self, b: &BigInt, span: Span) -> Result<(), Error> {
        let digits = (b.bits() as f64 * std::f64::consts::LOG10_2).floor() as usize + 1;
        if digits > self.limits.max_int_digits {
            return Err(
                Error::limit(LimitKind::IntDigits, self.limits.max_int_digits, digits).at(span),
            );
        }
        Ok(())
    }

    fn int_op(&self, op: BinaryOp, x: BigInt, y: BigInt) -> Result<Value, Error> {
        let zero = || Error::new(ErrorKind::Value, "division by zero");
        Ok(match op {
            BinaryOp::Add => Value::from_bigint(x + y),
            BinaryOp::Sub => Value::from_bigint(x - y),
            BinaryOp::Mul => {
                let bits = x.bits().saturating_add(y.bits());
                if bits as f64 * std::f64::consts::LOG10_2 > self.limits.max_int_digits as f64 + 1.0
                {
                    return Err(Error::limit(
                        LimitKind::IntDigits,
                        self.limits.max_int_digits,
                        "the product's digits",
                    ));
                }
                Value::from_bigint(x * y)
            }
            BinaryOp::Div => {
                if y.is_zero() {
                    return Err(zero());
                }
                Value::Float(int_true_div(&x, &y))
            }
            BinaryOp::FloorDiv => {
                if y.is_zero() {
                    return Err(zero());
                }
                Value::from_bigint(x.div_floor(&y))
            }
            BinaryOp::Mod => {
                if y.is_zero() {
                    return Err(zero());
                }
                Value::from_bigint(x.mod_floor(&y))
            }
            BinaryOp::Pow => {
                if y.is_negative() {
                    if x.is_zero() {
                        return Err(Error::new(
                            ErrorKind::Value,
                            "0 cannot be raised to a negative power",
                        ));
                    }
                    return float_op(
                        op,
                        x.to_f64().unwrap_or(f64::INFINITY),
                        y.to_f64().unwrap_or(f64::NEG_INFINITY),
                    );
                }
                let magnitude = x.magnitude();
                if magnitude.bits() <= 1 {
                    // 0, 1 and -1 to any power.
                    let odd = y.is_odd();
                    return Ok(Value::from_bigint(if x.is_zero() && !y.is_zero() {
                        BigInt::zero()
                    } else if x.is_negative() && odd {
                        BigInt::from(-1)
                    } else {
                        BigInt::from(1)
                    }));
                }
                let exp = y.to_u64().unwrap_or(u64::MAX);
                let digits = (magnitude.bits() - 1) as f64 * exp as f64 * std::f64::consts::LOG10_2;
                if digits > self.limits.max_int_digits as f64 {
                    return Err(Error::limit(
                        LimitKind::IntDigits,
                        self.limits.max_int_digits,
                        format!("about {digits:.0} digits"),
                    ));
                }
                Value::from_bigint(num_traits::pow(x, exp as usize))
            }
        })
    }
}

const NODE: usize = crate::value::NODE_BYTES;

/// Why a value with an infinite or NaN float is refused.
const FINITE_HINT: &str =
    "fexpr's floats are finite (JSON has no inf or NaN): use smaller operands or an int";

/// The error for a non-finite float in `whole` (an operation, a result, a variable) at `span`.
fn not_finite(bad: &crate::value::NonFinite, whole: &str, span: Span) -> Error {
    let mut e = bad.error(whole);
    e.message.push_str(": floats must be finite");
    e.at(span).with_hint(FINITE_HINT)
}

fn shallow_size(v: &Value) -> usize {
    match v {
        Value::Str(s) => s.len(),
        Value::Bytes(b) => b.len(),
        Value::List(items) | Value::Tuple(items) => items.len().saturating_mul(NODE),
        _ => NODE,
    }
}

/// `usize` as `u64` (lossless on every target fexpr runs on).
fn wide(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn repeat(items: &[Value], n: usize) -> Vec<Value> {
    if items.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(items.len().saturating_mul(n));
    for _ in 0..n {
        out.extend_from_slice(items);
    }
    out
}

fn unhashable(v: &Value, span: Span) -> Error {
    Error::new(
        ErrorKind::Type,
        format!("unhashable type: `{}`", v.type_name()),
    )
    .at(span)
}

/// A number operand: ints (bools count as ints, as in Python) or floats.
enum Num {
    Int(BigInt),
    Float(f64),
}

impl Num {
    fn to_f64(&self) -> f64 {
        match self {
            Num::Int(i) => i.to_f64().unwrap_or(if i.is_negative() {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }),
            Num::Float(f) => *f,
        }
    }
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(BigInt::from(u8::from(*b)))),
        Value::Int(i) => Some(Num::Int(BigInt::from(*i))),
        Value::BigInt(b) => Some(Num::Int((**b).clone())),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

fn int_true_div(x: &BigInt, y: &BigInt) -> f64 {
    match (x.to_f64(), y.to_f64()) {
        (Some(a), Some(b)) if a.abs() < 9e15 && b.abs() < 9e15 => a / b,
        _ => {
            // Scale both down to keep precision for large operands.
            let shift = x.bits().max(y.bits()).saturating_sub(60);
            let a = (x >> shift).to_f64().unwrap_or(0.0);
            let b = (y >> shift).to_f64().unwrap_or(0.0);
            a / b
        }
    }
}

fn float_op(op: BinaryOp, x: f64, y: f64) -> Result<Value, Error> {
    let zero = || Error::new(ErrorKind::Value, "float division by zero");
    let r = match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => {
            if y == 0.0 {
                return Err(zero());
            }
            x / y
        }
        BinaryOp::FloorDiv => {
            if y == 0.0 {
                return Err(zero());
            }
            (x / y).floor()
        }
        BinaryOp::Mod => {
            if y == 0.0 {
                return Err(Error::new(ErrorKind::Value, "float modulo by zero"));
            }
            let m = x % y;
            if m != 0.0 && (m < 0.0) != (y < 0.0) {
                m + y
            } else {
                m
            }
        }
        BinaryOp::Pow => {
            if x == 0.0 && y < 0.0 {
                return Err(Error::new(
                    ErrorKind::Value,
                    "0.0 cannot be raised to a negative power",
                ));
            }
            if x < 0.0 && y.fract() != 0.0 {
                return Err(Error::new(
                    ErrorKind::Value,
                    "a negative number to a fractional power is complex",
                ));
            }
            let r = x.powf(y);
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(Error::new(
                    ErrorKind::Value,
                    "numerical result out of range",
                ));
            }
            r
        }
    };
    Ok(Value::Float(r))
}

fn unary(op: UnaryOp, v: Value) -> Result<Value, Error> {
    match (op, v) {
        (UnaryOp::Not, v) => Ok(Value::Bool(!v.truthy())),
        (UnaryOp::Pos, Value::Bool(b)) => Ok(Value::Int(i64::from(b))),
        (UnaryOp::Pos, v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_))) => Ok(v),
        (UnaryOp::Neg, Value::Bool(b)) => Ok(Value::Int(-i64::from(b))),
        (UnaryOp::Neg, Value::Int(i)) => Ok(i
            .checked_neg()
            .map_or_else(|| Value::from_bigint(-BigInt::from(i)), Value::Int)),
        (UnaryOp::Neg, Value::BigInt(b)) => Ok(Value::from_bigint(-*b)),
        (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnaryOp::Neg | UnaryOp::Pos, Value::Array(a)) if op == UnaryOp::Pos => Ok(Value::Array(a)),
        (UnaryOp::Neg, Value::Array(a)) => Ok(Value::Array(match a {
            NdArray::Int(x) => NdArray::Int(x.mapv(i64::wrapping_neg)),
            NdArray::Float(x) => NdArray::Float(x.mapv(|f| -f)),
            NdArray::Bool(_) => {
                return Err(Error::new(
                    ErrorKind::Type,
                    "the numpy boolean negative is not supported",
                ))
            }
        })),
        (op, v) => Err(Error::new(
            ErrorKind::Type,
            format!(
                "bad operand type for unary {}: `{}`",
                op.symbol().trim(),
                v.type_name()
            ),
        )),
    }
}

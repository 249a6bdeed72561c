//! The [`Evaluator`]: expressions evaluated by Python's rules (literals, containers, names,
//! calls to builtins and records) with every allocation charged to a budget.

use super::*;

/// Pure evaluation with budgets.
pub(super) struct Evaluator<'a> {
    pub(super) ctx: &'a dyn Resolve,
    pub(super) limits: &'a Limits,
    /// Approximate bytes materialized so far in this evaluation. Atomic only so that the
    /// evaluation's future is `Send`: one task owns it, and a relaxed load and store cost
    /// what a `Cell`'s do.
    used: AtomicU64,
    budget: usize,
}

impl<'a> Evaluator<'a> {
    pub(super) fn new(ctx: &'a dyn Resolve, limits: &'a Limits) -> Evaluator<'a> {
        Evaluator {
            ctx,
            limits,
            used: AtomicU64::new(0),
            budget: limits.max_eval_bytes,
        }
    }

    pub(super) fn charge(&self, bytes: usize, span: Span) -> Result<(), Error> {
        self.charge_wide(wide(bytes), span)
    }

    /// [`Evaluator::charge`] in 64 bits, so that a 32-bit guest reports what native does.
    pub(super) fn charge_wide(&self, bytes: u64, span: Span) -> Result<(), Error> {
        let used = self.used.load(Ordering::Relaxed).saturating_add(bytes);
        self.used.store(used, Ordering::Relaxed);
        if used > wide(self.budget) {
            return Err(Error::limit(LimitKind::EvalBytes, self.budget, used).at(span));
        }
        Ok(())
    }

    pub(super) fn eval(&self, e: &Expr, memo: &mut Memo) -> Result<Value, Error> {
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
    pub(super) fn arguments(
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
    pub(super) fn apply(
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
}

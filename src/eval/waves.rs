//! The waves of one unit: its tool calls planned innermost first, everything that does not
//! depend on a tool result evaluated up front, each wave's requests handed out and their
//! results taken back, and the unit's outcome.

use super::*;

/// The progress of one unit through the waves.
pub(super) struct UnitState<'e> {
    root: &'e Expr,
    memo: Memo,
    /// Tool-call nodes by wave (innermost calls first).
    pub(super) waves: Vec<Vec<&'e Expr>>,
    /// Nodes that contain a tool call (everything else is pure).
    impure: ByNode<()>,
    /// The requests sent in the current wave, by node.
    pending: Vec<&'e Expr>,
    call: Option<Function>,
    pub(super) error: Option<Error>,
    /// Calls (tools; constructors and functions) counted in this unit.
    pub(super) calls: resolve::Counts,
}

impl<'e> UnitState<'e> {
    pub(super) fn new(root: &'e Expr, eval: &Evaluator) -> UnitState<'e> {
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

    pub(super) fn requests(&mut self, wave: usize, eval: &Evaluator) -> Vec<ToolRequest> {
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
                        name: resolve::context::tool_name(eval.ctx, &call.func).to_string(),
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

    pub(super) fn accept(&mut self, result: Result<Value, Error>) {
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

    pub(super) fn finish(mut self, eval: &Evaluator) -> UnitOutcome {
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
                            name: resolve::context::tool_name(eval.ctx, &call.func).to_string(),
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

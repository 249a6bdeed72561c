//! Resolve: names against the allow-listed [`Context`](context::Context), before anything is
//! evaluated. A name (or dotted path) is a variable, a record type, a builtin or a tool; a call
//! must fit its signature's keywords and arity; the number of calls is bounded.

pub mod context;

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::limits::Limits;
use crate::syntax::{Expr, ExprKind};
use context::{Entry, Resolve};

/// How deep the checker and the evaluator walk: the parser's depth limit with room for the
/// nodes a parsed level can add.
pub(crate) fn depth_cap(limits: &Limits) -> usize {
    limits.max_depth.saturating_mul(4)
}

/// Static check: names resolve, calls fit their signatures, the call count is bounded.
pub(crate) fn check(
    e: &Expr,
    ctx: &dyn Resolve,
    limits: &Limits,
    calls: &mut usize,
) -> Result<(), Error> {
    // Literals need no check; the stack holds only names, calls and displays (a call of
    // literals allocates nothing here).
    let mut stack = Vec::new();
    let mut next = Some((e, 0usize));
    while let Some((node, depth)) = next.take().or_else(|| stack.pop()) {
        if depth > depth_cap(limits) {
            return Err(Error::limit(LimitKind::Depth, limits.max_depth, depth).at(node.span));
        }
        match &node.kind {
            ExprKind::Name(name) => match ctx.get(name) {
                Some(Entry::Variable { .. }) => {}
                Some(Entry::Tool(_) | Entry::Record(_) | Entry::Function(_)) => {
                    return Err(Error::new(
                        ErrorKind::Type,
                        format!(
                            "`{}` is callable, not a value; call it like `{}(...)`",
                            name, name
                        ),
                    )
                    .at(node.span))
                }
                None => return Err(unknown(ctx, name, node.span, false)),
            },
            ExprKind::Call(call) => {
                *calls += 1;
                if *calls > limits.max_calls {
                    return Err(
                        Error::limit(LimitKind::Calls, limits.max_calls, *calls).at(node.span)
                    );
                }
                let keywords = call.kwargs.iter().map(|k| (k.name.as_str(), k.name_span));
                match ctx.get(&call.func) {
                    Some(Entry::Tool(sig) | Entry::Record(sig)) => {
                        sig.check_keywords(call.args.len(), keywords, node.span)?
                    }
                    Some(Entry::Function(b)) => {
                        let keywords: Vec<(&str, Span)> = keywords.collect();
                        b.check_shape(&call.func, call.args.len(), &keywords, node.span)?
                    }
                    Some(Entry::Variable { value, .. }) => {
                        return Err(Error::new(
                            ErrorKind::Type,
                            format!(
                                "`{}` is a {} variable, not callable",
                                call.func,
                                value.type_name()
                            ),
                        )
                        .at(call.func_span))
                    }
                    None => return Err(unknown(ctx, &call.func, call.func_span, true)),
                }
            }
            _ => {}
        }
        let checked = node.children().filter(|c| !c.is_literal());
        stack.extend(checked.map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// The error for a name (`called`: a function name) that is not in `ctx`, with the closest
/// names of the same sort as a hint.
pub(crate) fn unknown(ctx: &dyn Resolve, name: &str, span: Span, called: bool) -> Error {
    let (kind, what) = if called {
        (ErrorKind::UnknownTool, "tool or function")
    } else {
        (ErrorKind::UnknownName, "name")
    };
    let names = ctx.names();
    let candidates = names
        .iter()
        .filter(|(_, variable)| *variable != called)
        .map(|(n, _)| *n);
    Error::new(kind, format!("{what} `{}` is not defined", clip(name, 60)))
        .at(span)
        .suggest(name, candidates)
}

/// The span of the first call of a tool in `expr`, if any (depth first, outermost first).
pub(crate) fn first_tool_call(expr: &Expr, ctx: &dyn Resolve) -> Option<Span> {
    // Leaves are never pushed, so a call of literals and names allocates nothing here.
    let mut stack = Vec::new();
    let mut next = Some(expr);
    while let Some(e) = next.take().or_else(|| stack.pop()) {
        if let ExprKind::Call(c) = &e.kind {
            if matches!(ctx.get(&c.func), Some(Entry::Tool(_))) {
                return Some(e.span);
            }
        }
        stack.extend(
            e.children()
                .filter(|c| !c.is_literal() && !matches!(c.kind, ExprKind::Name(_))),
        );
    }
    None
}

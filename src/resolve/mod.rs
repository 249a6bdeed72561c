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

/// The calls of an input counted by what they call: tool calls against [`Limits::max_calls`],
/// record constructors and builtin functions (`Point(...)`, `np.array(...)`) against
/// [`Limits::max_constructors`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Calls of tools.
    pub tools: usize,
    /// Calls of record types and builtin functions.
    pub constructors: usize,
}

impl Counts {
    /// Both counts of `self` and `other` together.
    pub fn plus(self, other: Counts) -> Counts {
        Counts {
            tools: self.tools.saturating_add(other.tools),
            constructors: self.constructors.saturating_add(other.constructors),
        }
    }

    /// The `Limit` error of the first count over its limit, if any.
    pub fn over(self, limits: &Limits) -> Option<Error> {
        if self.tools > limits.max_calls {
            return Some(Error::limit(LimitKind::Calls, limits.max_calls, self.tools));
        }
        (self.constructors > limits.max_constructors).then(|| {
            Error::limit(
                LimitKind::Constructors,
                limits.max_constructors,
                self.constructors,
            )
        })
    }
}

/// Static check: names resolve, calls fit their signatures, the calls are counted into
/// `counts` and bounded.
pub(crate) fn check(
    e: &Expr,
    ctx: &dyn Resolve,
    limits: &Limits,
    counts: &mut Counts,
) -> Result<(), Error> {
    check_from(e, None, ctx, limits, counts)
}

/// [`check`] of a call `e` whose name its caller looked up already: `entry` (a single call's
/// tool, `eval::single_call`), not looked up again.
pub(crate) fn check_call(
    e: &Expr,
    entry: &Entry,
    ctx: &dyn Resolve,
    limits: &Limits,
    counts: &mut Counts,
) -> Result<(), Error> {
    check_from(e, Some(entry), ctx, limits, counts)
}

/// [`check`], `root` the entry of `e`'s name when `e` is a call looked up already.
fn check_from(
    e: &Expr,
    mut root: Option<&Entry>,
    ctx: &dyn Resolve,
    limits: &Limits,
    counts: &mut Counts,
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
                // `e` is the first node taken, so `root` can only be its entry.
                let entry = root.take().or_else(|| ctx.get(&call.func));
                match entry {
                    Some(Entry::Tool(_)) => counts.tools = counts.tools.saturating_add(1),
                    _ => counts.constructors = counts.constructors.saturating_add(1),
                }
                if let Some(e) = counts.over(limits) {
                    return Err(e.at(node.span));
                }
                let keywords = call.kwargs.iter().map(|k| (k.name.as_str(), k.name_span));
                match entry {
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

//! fexpr's own JSON forms — a `Function`, a `FunctionExpression` or a list of them — read
//! into evaluation units, their calls counted against [`Limits::max_calls`], and run.

use super::*;

/// One item of a JSON input in fexpr's forms: its span, and the unit to evaluate or why there
/// is none.
pub type Item = (Span, Result<Expr, Error>);

/// Read `text` as fexpr's JSON forms — a `Function` object (`{"name", "args", "kwargs"}`, a
/// `thought` allowed), a `FunctionExpression` object (`{"action"}`, a `thought` allowed), or a
/// non-empty list of them — into one evaluation unit per item.
///
/// The whole input fails (nothing runs) when the text breaks a limit or is not one of these
/// shapes, or when it holds more items than [`Limits::max_calls`]; an item that is not a valid
/// call form (an unknown field, a duplicate key, a number out of range, an `action` that does
/// not parse or holds several calls) fails alone, as a unit of an expression does.
///
/// A `Function` becomes the call `name(*args, **kwargs)` with its values as literals
/// ([`call_of`]: each key of `kwargs` a keyword exactly as written; spans into `text`: the call
/// is the object, the callee its `name` string, each keyword its key); a
/// `FunctionExpression`'s action is parsed as an expression, its spans mapped into `text`.
///
/// ```
/// use fexpr::front::json_input::units;
/// use fexpr::{ErrorKind, Limits};
///
/// let items = units(r#"[{"name": "add", "kwargs": {"a": 1, "b": 2}}, {"action": "add(a=1, b=x)"}]"#, &Limits::default())?;
/// assert_eq!(items[0].1.as_ref().unwrap().to_string(), "add(a=1, b=2)");
/// assert_eq!(items[1].1.as_ref().unwrap().to_string(), "add(a=1, b=x)");
///
/// let many = format!("[{}]", vec![r#"{"name": "add"}"#; 300].join(","));
/// assert_eq!(units(&many, &Limits::default()).unwrap_err().kind, ErrorKind::Limit);
/// # Ok::<(), fexpr::Error>(())
/// ```
pub fn units(text: &str, limits: &Limits) -> Result<Vec<Item>, Error> {
    let tree = read(text, limits)?;
    let items = match tree.kind {
        ExprKind::List(items) if !items.is_empty() => items,
        ExprKind::Dict(_) => vec![tree],
        _ => {
            return Err(Error::new(
                ErrorKind::Syntax,
                "JSON: expected a Function object ({\"name\", \"args\", \"kwargs\"}), a \
                 FunctionExpression object ({\"action\"}), or a non-empty list of them",
            )
            .at(tree.span))
        }
    };
    if let Some(extra) = items.get(limits.max_calls) {
        return Err(Error::limit(LimitKind::Calls, limits.max_calls, items.len()).at(extra.span));
    }
    Ok(items
        .into_iter()
        .map(|item| (item.span, item_unit(item, text, limits)))
        .collect())
}

/// Evaluate JSON `text` in fexpr's forms ([`units`]) against `ctx`, sending tool calls to
/// `dispatch`: all units in one [`eval::run`], so the call count, the evaluation budget and the
/// waves of tool calls span the whole input as they do for an expression. One outcome per item,
/// spans into `text`; `Err` when the input as a whole is refused.
pub async fn run<D: Dispatch>(
    text: &str,
    ctx: &dyn Resolve,
    limits: &Limits,
    dispatch: &D,
) -> Result<Vec<UnitOutcome>, Error> {
    let items = units(text, limits)?;
    let roots: Vec<&Expr> = items
        .iter()
        .filter_map(|(_, unit)| unit.as_ref().ok())
        .collect();
    let mut outcomes = eval::run(&roots, ctx, limits, dispatch).await.into_iter();
    Ok(items
        .into_iter()
        .map(|(span, unit)| {
            let failed = |e: Error| UnitOutcome {
                span,
                call: None,
                result: Err(e),
            };
            match unit {
                Ok(_) => outcomes.next().unwrap_or_else(|| {
                    failed(Error::new(ErrorKind::Sandbox, "no outcome for this call"))
                }),
                Err(e) => failed(e),
            }
        })
        .collect())
}

/// One item of fexpr's forms as a unit.
fn item_unit(item: Expr, text: &str, limits: &Limits) -> Result<Expr, Error> {
    check_call_tree(&item, text, 0)?;
    let span = item.span;
    let ExprKind::Dict(pairs) = item.kind else {
        return Err(Error::new(
            ErrorKind::Syntax,
            "JSON: each item must be an object: a Function ({\"name\", \"args\", \"kwargs\"}) \
             or a FunctionExpression ({\"action\"})",
        )
        .at(span));
    };
    if pairs.iter().any(|(k, _)| key_is(k, "action")) {
        return action_unit(pairs, span, text, limits);
    }
    let mut name = None;
    let mut args = Vec::new();
    let mut kwargs = None;
    for (key, value) in pairs {
        let key_name = key_text(&key);
        match (key_name, value.kind) {
            ("name", ExprKind::Str(s)) => name = Some((s, value.span)),
            ("name", _) => {
                return Err(form_error(
                    "a Function's `name` must be a string",
                    value.span,
                ))
            }
            ("args", ExprKind::List(items)) => args = items,
            ("args", ExprKind::None) => {}
            ("args", _) => {
                return Err(form_error("a Function's `args` must be a list", value.span))
            }
            ("kwargs", kind) => {
                kwargs = Some(Expr {
                    kind,
                    span: value.span,
                })
            }
            ("thought", _) => {}
            (other, _) => {
                return Err(Error::new(
                    ErrorKind::Syntax,
                    format!(
                        "JSON: unknown field `{}` in a Function object",
                        clip(other, QUOTE_CHARS)
                    ),
                )
                .with_hint("a Function has `name`, `args`, `kwargs` and `thought`")
                .at(key.span))
            }
        }
    }
    let Some((func, func_span)) = name else {
        return Err(form_error("a Function needs a string `name`", span));
    };
    let kwargs = kwargs.unwrap_or(Expr {
        kind: ExprKind::None,
        span,
    });
    call_of(func, func_span, args, kwargs, span)
}

/// A `FunctionExpression` item: its action parsed, spans mapped into `text`.
fn action_unit(
    pairs: Vec<(Expr, Expr)>,
    span: Span,
    text: &str,
    limits: &Limits,
) -> Result<Expr, Error> {
    let mut action = None;
    for (key, value) in pairs {
        match key_text(&key) {
            "action" => action = Some(value),
            "thought" => {}
            other => {
                return Err(Error::new(
                    ErrorKind::Syntax,
                    format!(
                        "JSON: unknown field `{}` in a FunctionExpression object",
                        clip(other, QUOTE_CHARS)
                    ),
                )
                .with_hint("a FunctionExpression has `action` and `thought`")
                .at(key.span))
            }
        }
    }
    let Some(action) = action else {
        return Err(form_error(
            "a FunctionExpression's `action` must be a string",
            span,
        ));
    };
    let expr = read_action(&action, text, limits)?;
    let found = eval::units(&expr).len();
    if found != 1 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("expected one call in a FunctionExpression's `action`, found {found}"),
        )
        .with_hint("write one FunctionExpression per call")
        .at(expr.span));
    }
    Ok(expr)
}

fn form_error(what: &str, span: Span) -> Error {
    Error::new(ErrorKind::Syntax, format!("JSON: {what}")).at(span)
}

/// The text of a key (JSON keys are always strings).
fn key_text(key: &Expr) -> &str {
    match &key.kind {
        ExprKind::Str(s) => s,
        _ => "",
    }
}

pub(super) fn key_is(key: &Expr, name: &str) -> bool {
    key_text(key) == name
}

//! Values written as text (Qwen3-Coder's `<parameter=…>`, GLM's `<arg_value>`) converted by
//! their parameter's type, as the models' own parsers convert them (vLLM's
//! `_convert_param_value`): strings as written, integers, numbers and booleans parsed, objects
//! and arrays read as JSON and then as a Python literal, `null`/`None` as `None`, and anything
//! else (an unknown parameter, `Any`, a union of different kinds) as JSON when it reads as
//! JSON, else as the string written. What cannot be read as its type is a `Type` error. A value
//! the model wrote as a string ([`TextArg::quoted`]) is that string.

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::eval::eval_pure;
use crate::front::json_input;
use crate::limits::Limits;
use crate::resolve::context::Context;
use crate::syntax::{self, Expr, ExprKind, UnaryOp};
use crate::types::Type;
use crate::value::Value;

use super::TextArg;

/// What a parameter's type asks a text value to be read as.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Str,
    Int,
    Float,
    Bool,
    Container,
    Other,
}

fn kind(ty: &Type) -> Kind {
    match ty.shape() {
        Type::Str => Kind::Str,
        Type::Int => Kind::Int,
        Type::Float => Kind::Float,
        Type::Bool => Kind::Bool,
        Type::List(_)
        | Type::Tuple(_)
        | Type::Set(_)
        | Type::Dict(_)
        | Type::Record(_)
        | Type::Array => Kind::Container,
        Type::Enum(values) if values.iter().all(|v| matches!(v, Value::Str(_))) => Kind::Str,
        Type::All(parts) => parts.first().map_or(Kind::Other, kind_of_part),
        _ => Kind::Other,
    }
}

/// The kind of a part of an `allOf` or an alternative of a union (not looked into further).
fn kind_of_part(ty: &Type) -> Kind {
    match ty.shape() {
        Type::Union(_) | Type::All(_) => Kind::Other,
        _ => kind(ty),
    }
}

/// The kinds to try, in order: a union's alternatives but `None` (vLLM reads a value by the
/// first; the others are tried when it does not fit), or the type's own.
fn kinds(ty: &Type) -> Vec<Kind> {
    match ty.shape() {
        Type::Union(alts) => {
            let kinds: Vec<Kind> = alts
                .iter()
                .filter(|t| !matches!(t.shape(), Type::None))
                .map(kind_of_part)
                .collect();
            if kinds.is_empty() {
                vec![Kind::Other]
            } else {
                kinds
            }
        }
        _ => vec![kind(ty)],
    }
}

/// A value written as text converted by the parameter's type `ty` (`None`: a parameter the
/// tool does not declare, read as for `Any`), within `limits`. A value that cannot be read as
/// its type is a `Type` error naming the parameter, at the value.
///
/// ```
/// use fexpr::front::formats::{convert_text_arg, TextArg};
/// use fexpr::types::Type;
/// use fexpr::{ErrorKind, Limits, Span, Value};
///
/// let arg = |value: &str| TextArg {
///     key: "a".into(), key_span: Span::new(0, 1),
///     value: value.into(), value_span: Span::new(2, 2 + value.len() as u32), quoted: false,
/// };
/// let limits = Limits::default();
/// assert_eq!(convert_text_arg(&arg("6"), Some(&Type::Int), &limits)?, Value::Int(6));
/// assert_eq!(convert_text_arg(&arg("6"), Some(&Type::Str), &limits)?, Value::Str("6".into()));
/// assert_eq!(convert_text_arg(&arg("True"), Some(&Type::Bool), &limits)?, Value::Bool(true));
/// assert_eq!(convert_text_arg(&arg("{'k': [1]}"), None, &limits)?, Value::Str("{'k': [1]}".into()));
/// let list = Type::List(Box::new(Type::Int));
/// assert_eq!(convert_text_arg(&arg("(1, 2)"), Some(&list), &limits)?,
///            Value::Tuple(vec![Value::Int(1), Value::Int(2)]));
/// let e = convert_text_arg(&arg("six"), Some(&Type::Int), &limits).unwrap_err();
/// assert_eq!((e.kind, e.span), (ErrorKind::Type, Some(Span::new(2, 5))));
/// // Written as a string (DSML's `string="true"`): a string as written.
/// let quoted = TextArg { quoted: true, ..arg("007") };
/// assert_eq!(convert_text_arg(&quoted, Some(&Type::Int), &limits)?, Value::Str("007".into()));
/// # Ok::<(), fexpr::Error>(())
/// ```
pub fn convert_text_arg(arg: &TextArg, ty: Option<&Type>, limits: &Limits) -> Result<Value, Error> {
    let raw = arg.value.as_str();
    if raw.len() > limits.max_str_bytes {
        return Err(
            Error::limit(LimitKind::StrBytes, limits.max_str_bytes, raw.len()).at(arg.value_span),
        );
    }
    // Written as a string (DSML's `string="true"`, Gemma 4's delimiters): a string as written.
    if arg.quoted {
        return Ok(Value::Str(raw.to_string()));
    }
    let any = Type::Any;
    let ty = ty.unwrap_or(&any);
    let kinds = kinds(ty);
    let first = kinds.first().copied().unwrap_or(Kind::Other);
    let text = raw.trim();
    let null = text.eq_ignore_ascii_case("null") || text.eq_ignore_ascii_case("none");
    if null && (ty.accepts_none() || first != Kind::Str) {
        return Ok(Value::None);
    }
    let mut error = None;
    for kind in kinds {
        match as_kind(arg, kind, ty, limits) {
            Ok(value) => return Ok(value),
            Err(e) if e.kind == ErrorKind::Limit => return Err(e),
            Err(e) => {
                error.get_or_insert(e);
            }
        }
    }
    Err(error.unwrap_or_else(|| Error::new(ErrorKind::Type, "no type to read the value as")))
}

/// The value read as `kind`.
fn as_kind(arg: &TextArg, kind: Kind, ty: &Type, limits: &Limits) -> Result<Value, Error> {
    let raw = arg.value.as_str();
    let text = raw.trim();
    let at = |e: Error| shift(e, arg.value_span, raw);
    let not_a = |what: &str| {
        Error::new(
            ErrorKind::Type,
            format!(
                "parameter `{}` expects {what}, got `{}`",
                clip(&arg.key, 40),
                clip(raw, 40)
            ),
        )
        .at(arg.value_span)
        .with_hint(format!(
            "the model wrote the value as text; the parameter's type is `{ty}`"
        ))
    };
    let number = if kind == Kind::Int {
        "an integer"
    } else {
        "a number"
    };
    match kind {
        Kind::Str => Ok(Value::Str(raw.to_string())),
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(not_a("a boolean (`true` or `false`)")),
        },
        Kind::Int | Kind::Float => {
            let tree = json(text, limits)
                .map_err(at)?
                .ok_or_else(|| not_a(number))?;
            let fits = match tree.kind {
                ExprKind::Int(_) | ExprKind::BigInt(_) => true,
                ExprKind::Float(_) => kind == Kind::Float,
                _ => false,
            };
            if !fits {
                return Err(not_a(number));
            }
            value(&tree, limits).map_err(at)
        }
        Kind::Container => {
            let tree = match json(text, limits).map_err(at)? {
                // A JSON string holding the value (a template that wrote `json.dumps(str(x))`).
                Some(Expr {
                    kind: ExprKind::Str(inner),
                    ..
                }) => python_literal(&inner, limits)
                    .map_err(|e| e.at(arg.value_span))?
                    .ok_or_else(|| not_a("an object or a list"))?,
                Some(tree) => tree,
                None => python_literal(text, limits)
                    .map_err(at)?
                    .ok_or_else(|| not_a("an object or a list"))?,
            };
            value(&tree, limits).map_err(at)
        }
        Kind::Other => match json(text, limits).map_err(at)? {
            Some(tree) => value(&tree, limits).map_err(at),
            None => Ok(Value::Str(raw.to_string())),
        },
    }
}

/// `text` read as JSON; `None` when it is not JSON, an error when it is JSON over a limit.
fn json(text: &str, limits: &Limits) -> Result<Option<Expr>, Error> {
    match json_input::read(text, limits) {
        Ok(tree) => Ok(Some(tree)),
        Err(e) if e.kind == ErrorKind::Limit => Err(e),
        Err(_) => Ok(None),
    }
}

/// `text` read as a Python literal (numbers, strings, `None`, booleans, and lists, tuples,
/// sets and dicts of them); `None` when it is not one, an error when it is over a limit.
fn python_literal(text: &str, limits: &Limits) -> Result<Option<Expr>, Error> {
    let tree = match syntax::parse(text, limits) {
        Ok(tree) => tree,
        Err(e) if e.kind == ErrorKind::Limit => return Err(e),
        Err(_) => return Ok(None),
    };
    // The parser bounds the tree's depth; walking it is iterative.
    let mut stack = vec![&tree];
    while let Some(e) = stack.pop() {
        let literal = match &e.kind {
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, operand) => matches!(
                operand.kind,
                ExprKind::Int(_) | ExprKind::BigInt(_) | ExprKind::Float(_)
            ),
            ExprKind::None
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::BigInt(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bytes(_)
            | ExprKind::List(_)
            | ExprKind::Tuple(_)
            | ExprKind::Set(_)
            | ExprKind::Dict(_) => true,
            _ => false,
        };
        if !literal {
            return Ok(None);
        }
        stack.extend(e.children());
    }
    Ok(Some(tree))
}

/// The value of a literal tree.
fn value(tree: &Expr, limits: &Limits) -> Result<Value, Error> {
    eval_pure(tree, &Context::new(), limits)
}

/// An error located in the trimmed value text, located in the model's text instead.
fn shift(e: Error, value_span: Span, raw: &str) -> Error {
    let lead = u32::try_from(raw.len() - raw.trim_start().len()).unwrap_or(0);
    Error {
        span: Some(match e.span {
            Some(s) => Span::new(
                value_span.start + lead + s.start,
                (value_span.start + lead + s.end).min(value_span.end),
            ),
            None => value_span,
        }),
        ..e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Type;

    fn arg(value: &str) -> TextArg {
        TextArg {
            key: "p".into(),
            key_span: Span::new(0, 1),
            value: value.into(),
            value_span: Span::new(10, 10 + value.len() as u32),
            quoted: false,
        }
    }

    fn convert(value: &str, ty: Option<&Type>) -> Result<Value, Error> {
        convert_text_arg(&arg(value), ty, &Limits::default())
    }

    #[test]
    fn scalars_by_type() {
        assert_eq!(convert(" 42 ", Some(&Type::Int)), Ok(Value::Int(42)));
        assert_eq!(convert("2.5", Some(&Type::Float)), Ok(Value::Float(2.5)));
        assert_eq!(convert("3", Some(&Type::Float)), Ok(Value::Int(3)));
        assert_eq!(convert("FALSE", Some(&Type::Bool)), Ok(Value::Bool(false)));
        assert_eq!(
            convert("null", Some(&Type::Str)),
            Ok(Value::Str("null".into()))
        );
        let optional = Type::Union(vec![Type::Str, Type::None]);
        assert_eq!(convert("None", Some(&optional)), Ok(Value::None));
        assert_eq!(convert("null", Some(&Type::Int)), Ok(Value::None));
    }

    #[test]
    fn containers_as_json_then_python() {
        let list = Type::List(Box::new(Type::Int));
        assert_eq!(
            convert("[1, 2]", Some(&list)),
            Ok(Value::List(vec![Value::Int(1), Value::Int(2)]))
        );
        let dict = Type::Dict(Box::new(Type::Any));
        let v = convert("{'k': True}", Some(&dict));
        assert!(matches!(v, Ok(Value::Dict(_))), "{v:?}");
        let v = convert("\"{'k': 1}\"", Some(&dict));
        assert!(matches!(v, Ok(Value::Dict(_))), "{v:?}");
        assert_eq!(
            convert("[1, x]", Some(&list)).map_err(|e| e.kind),
            Err(ErrorKind::Type)
        );
        assert_eq!(
            convert("[1, __import__('os')]", Some(&list)).map_err(|e| e.kind),
            Err(ErrorKind::Type)
        );
    }

    #[test]
    fn anything_else_is_json_or_the_string() {
        assert_eq!(convert("7", None), Ok(Value::Int(7)));
        assert_eq!(convert("Paris", None), Ok(Value::Str("Paris".into())));
        // A union is read as its first alternative, then the next (vLLM's `anyOf` rule).
        let mixed = Type::Union(vec![Type::Int, Type::Str]);
        assert_eq!(convert("abc", Some(&mixed)), Ok(Value::Str("abc".into())));
        assert_eq!(convert("5", Some(&mixed)), Ok(Value::Int(5)));
        let text_first = Type::Union(vec![Type::Str, Type::Int, Type::None]);
        assert_eq!(convert("5", Some(&text_first)), Ok(Value::Str("5".into())));
        assert_eq!(convert("null", Some(&text_first)), Ok(Value::None));
        let numbers = Type::Union(vec![Type::Int, Type::Float]);
        assert_eq!(
            convert("x", Some(&numbers)).map_err(|e| e.kind),
            Err(ErrorKind::Type)
        );
    }

    #[test]
    fn values_that_do_not_fit_are_type_errors_at_the_value() {
        for (value, ty) in [
            ("six", Type::Int),
            ("1.5", Type::Int),
            ("yes", Type::Bool),
            ("abc", Type::Float),
        ] {
            let e = convert(value, Some(&ty)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Type);
            assert_eq!(e.span, Some(Span::new(10, 10 + value.len() as u32)));
            assert!(e.message.contains("`p`"), "{}", e.message);
        }
    }

    #[test]
    fn limits_apply() {
        let limits = Limits::default().max_str_bytes(4);
        let e = convert_text_arg(&arg("abcdef"), Some(&Type::Str), &limits).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Limit);
        let limits = Limits::default().max_depth(3);
        let list = Type::List(Box::new(Type::Any));
        let e = convert_text_arg(&arg("[[[[[1]]]]]"), Some(&list), &limits).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Limit);
    }
}

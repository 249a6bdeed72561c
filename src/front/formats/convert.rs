//! Values written as text (Qwen3-Coder's `<parameter=…>`, GLM's `<arg_value>`) converted by
//! their parameter's type, as the models' own parsers convert them (vLLM's
//! `_convert_param_value`, llama.cpp's XML tool-call parser): strings as written, integers,
//! numbers and booleans parsed, objects and arrays read as JSON and then as a Python literal,
//! `null`/`None` as `None`, a union with a string member as JSON when that fits another member
//! and as the string written otherwise, and anything else (an unknown parameter, `Any`) as JSON
//! when it reads as JSON, else as the string written. What cannot be read as its type is a
//! `Type` error. The result is the value's literal tree, checked with the rest of the call. A
//! value the model wrote as a string ([`TextArg::quoted`]) is that string.

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::front::json_input;
use crate::limits::Limits;
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
    /// An object (a dict, a record).
    Object,
    /// A list, tuple, set or array.
    Array,
    Other,
}

fn kind(ty: &Type) -> Kind {
    match ty.shape() {
        Type::Str => Kind::Str,
        Type::Int => Kind::Int,
        Type::Float => Kind::Float,
        Type::Bool => Kind::Bool,
        Type::List(_) | Type::Tuple(_) | Type::Set(_) | Type::Array => Kind::Array,
        Type::Dict(_) | Type::Record(_) => Kind::Object,
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
/// tool does not declare, read as for `Any`), within `limits`: the literal tree of the value
/// (spans into the text), which the call's check then evaluates and binds as any other
/// argument. A value that cannot be read as its type is a `Type` error naming the parameter, at
/// the value.
///
/// A union with a string member (`["string", "integer"]`, `anyOf`) reads the text as JSON first,
/// as llama.cpp's and vLLM's parsers do, taken when it fits one of the other members (`42` an
/// integer, `{"a": 1}` an object); otherwise it is the string written. A union without one
/// reads it as each member in turn.
///
/// ```
/// use fexpr::front::formats::{convert_text_arg, TextArg};
/// use fexpr::types::Type;
/// use fexpr::{ErrorKind, Limits, Span};
///
/// let arg = |value: &str| TextArg {
///     key: "a".into(), key_span: Span::new(0, 1),
///     value: value.into(), value_span: Span::new(2, 2 + value.len() as u32), quoted: false,
/// };
/// let limits = Limits::default();
/// let read = |value: &str, ty: &Type| convert_text_arg(&arg(value), Some(ty), &limits).map(|e| e.to_string());
/// assert_eq!(read("6", &Type::Int)?, "6");
/// assert_eq!(read("6", &Type::Str)?, r#""6""#);
/// assert_eq!(read("True", &Type::Bool)?, "True");
/// assert_eq!(convert_text_arg(&arg("{'k': [1]}"), None, &limits)?.to_string(), r#""{'k': [1]}""#);
/// assert_eq!(read("(1, 2)", &Type::List(Box::new(Type::Int)))?, "(1, 2)");
/// let text_or_int = Type::Union(vec![Type::Str, Type::Int]);
/// assert_eq!(read("42", &text_or_int)?, "42");
/// assert_eq!(read("forty-two", &text_or_int)?, r#""forty-two""#);
/// let e = convert_text_arg(&arg("six"), Some(&Type::Int), &limits).unwrap_err();
/// assert_eq!((e.kind, e.span), (ErrorKind::Type, Some(Span::new(2, 5))));
/// // Written as a string (DSML's `string="true"`): a string as written.
/// let quoted = TextArg { quoted: true, ..arg("007") };
/// assert_eq!(convert_text_arg(&quoted, Some(&Type::Int), &limits)?.to_string(), r#""007""#);
/// # Ok::<(), fexpr::Error>(())
/// ```
///
/// # Errors
///
/// A `Type` error when the value fits no member of its type, a `Limit` error when it is over a
/// limit.
pub fn convert_text_arg(arg: &TextArg, ty: Option<&Type>, limits: &Limits) -> Result<Expr, Error> {
    let raw = arg.value.as_str();
    if raw.len() > limits.max_str_bytes {
        return Err(
            Error::limit(LimitKind::StrBytes, limits.max_str_bytes, raw.len()).at(arg.value_span),
        );
    }
    // Written as a string (DSML's `string="true"`, Gemma 4's delimiters): a string as written.
    if arg.quoted {
        return Ok(leaf(ExprKind::Str(raw.to_string()), arg.value_span));
    }
    let any = Type::Any;
    let ty = ty.unwrap_or(&any);
    let kinds = kinds(ty);
    let has_str = kinds.contains(&Kind::Str);
    let text = raw.trim();
    let null = text.eq_ignore_ascii_case("null") || text.eq_ignore_ascii_case("none");
    if null && (ty.accepts_none() || !has_str) {
        return Ok(leaf(ExprKind::None, arg.value_span));
    }
    if has_str && kinds.len() > 1 {
        // JSON first for the other members, then the text as a string.
        if let Some(tree) = json(text, limits)? {
            if kinds.iter().any(|kind| fits(*kind, &tree)) {
                return Ok(in_text(tree, arg));
            }
        }
        return Ok(leaf(ExprKind::Str(raw.to_string()), arg.value_span));
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

/// Whether a JSON value `tree` is one of `kind` (a string is only of [`Kind::Other`]: a
/// string member takes the text as written).
fn fits(kind: Kind, tree: &Expr) -> bool {
    matches!(
        (kind, &tree.kind),
        (
            Kind::Int | Kind::Float,
            ExprKind::Int(_) | ExprKind::BigInt(_)
        ) | (Kind::Float, ExprKind::Float(_))
            | (Kind::Bool, ExprKind::Bool(_))
            | (Kind::Object, ExprKind::Dict(_))
            | (Kind::Array, ExprKind::List(_))
            | (Kind::Other, _)
    )
}

/// The value's tree read as `kind`.
fn as_kind(arg: &TextArg, kind: Kind, ty: &Type, limits: &Limits) -> Result<Expr, Error> {
    let raw = arg.value.as_str();
    let text = raw.trim();
    let at = |e: Error| shift(e, arg.value_span, raw);
    let not_a = |what: &str| {
        Error::new(
            ErrorKind::Type,
            format!(
                "parameter `{}` expects {what}, got `{}`",
                crate::syntax::keyword_in_call(&arg.key),
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
        Kind::Str => Ok(leaf(ExprKind::Str(raw.to_string()), arg.value_span)),
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "true" => Ok(leaf(ExprKind::Bool(true), arg.value_span)),
            "false" => Ok(leaf(ExprKind::Bool(false), arg.value_span)),
            _ => Err(not_a("a boolean (`true` or `false`)")),
        },
        Kind::Int | Kind::Float => {
            let tree = json(text, limits)
                .map_err(at)?
                .ok_or_else(|| not_a(number))?;
            if !fits(kind, &tree) {
                return Err(not_a(number));
            }
            Ok(in_text(tree, arg))
        }
        Kind::Object | Kind::Array => match json(text, limits).map_err(at)? {
            // A JSON string holding the value (a template that wrote `json.dumps(str(x))`):
            // its spans stand for the whole value.
            Some(Expr {
                kind: ExprKind::Str(inner),
                ..
            }) => {
                let mut tree = python_literal(&inner, limits)
                    .map_err(|e| e.at(arg.value_span))?
                    .ok_or_else(|| not_a("an object or a list"))?;
                let whole = arg.value_span;
                json_input::map_spans(&mut tree, &|_| whole);
                Ok(tree)
            }
            Some(tree) => Ok(in_text(tree, arg)),
            None => python_literal(text, limits)
                .map_err(at)?
                .map(|tree| in_text(tree, arg))
                .ok_or_else(|| not_a("an object or a list")),
        },
        Kind::Other => match json(text, limits).map_err(at)? {
            Some(tree) => Ok(in_text(tree, arg)),
            None => Ok(leaf(ExprKind::Str(raw.to_string()), arg.value_span)),
        },
    }
}

fn leaf(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// A tree read from the trimmed value text of `arg`, its spans moved into the model's text.
fn in_text(mut tree: Expr, arg: &TextArg) -> Expr {
    let raw = arg.value.as_str();
    let lead = u32::try_from(raw.len() - raw.trim_start().len()).unwrap_or(0);
    let at = arg.value_span;
    json_input::map_spans(&mut tree, &|s| {
        Span::new(
            (at.start + lead + s.start).min(at.end),
            (at.start + lead + s.end).min(at.end),
        )
    });
    tree
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

    /// The value of the tree a text value converts to.
    fn convert(value: &str, ty: Option<&Type>) -> Result<Value, Error> {
        let limits = Limits::default();
        let tree = convert_text_arg(&arg(value), ty, &limits)?;
        crate::eval::eval_pure(&tree, &crate::resolve::context::Context::new(), &limits)
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
        // With a string member, JSON first for the others (llama.cpp's rule), else the text.
        let text_first = Type::Union(vec![Type::Str, Type::Int, Type::None]);
        assert_eq!(convert("5", Some(&text_first)), Ok(Value::Int(5)));
        assert_eq!(
            convert(" 5x", Some(&text_first)),
            Ok(Value::Str(" 5x".into()))
        );
        assert_eq!(convert("null", Some(&text_first)), Ok(Value::None));
        let text_or_object = Type::Union(vec![Type::Str, Type::Dict(Box::new(Type::Any))]);
        let v = convert("{\"a\": 1}", Some(&text_or_object));
        assert!(matches!(v, Ok(Value::Dict(_))), "{v:?}");
        // Only JSON: a Python literal is the string written when a string is accepted.
        assert_eq!(
            convert("{'a': 1}", Some(&text_or_object)),
            Ok(Value::Str("{'a': 1}".into()))
        );
        assert_eq!(
            convert("[1]", Some(&text_or_object)),
            Ok(Value::Str("[1]".into()))
        );
        let text_or_flag = Type::Union(vec![Type::Bool, Type::Str]);
        assert_eq!(convert("true", Some(&text_or_flag)), Ok(Value::Bool(true)));
        assert_eq!(
            convert("yes", Some(&text_or_flag)),
            Ok(Value::Str("yes".into()))
        );
        // `null` is `None` only where `None` is accepted or no string is.
        let text_or_number = Type::Union(vec![Type::Float, Type::Str]);
        assert_eq!(
            convert("null", Some(&text_or_number)),
            Ok(Value::Str("null".into()))
        );
        assert_eq!(convert("2.5", Some(&text_or_number)), Ok(Value::Float(2.5)));
        let flag_or_int = Type::Union(vec![Type::Int, Type::Bool]);
        assert_eq!(
            convert("abc", Some(&flag_or_int)).map_err(|e| e.kind),
            Err(ErrorKind::Type)
        );
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

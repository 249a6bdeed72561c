//! What a tool function may return ([`ToolReturn`]): a value, a [`ToolOutput`], or a
//! `Result` of either whose error is any error type, a message or a [`ToolError`].
//!
//! Each return shape has its own marker (`M` of `ToolReturn<M>`), which the compiler infers
//! from the function's return type. The shapes are kept apart so that exactly one applies to
//! each common `Result`: an error that is a `std::error::Error` ([`Fallible`]), a pointer to
//! one such as `anyhow::Error` or `Box<dyn Error>` ([`FallibleDyn`]), a [`ToolError`]
//! ([`FallibleTool`]), a `String` or `&str` message beside a value ([`Plain`], which
//! recognises a `Result` as it serializes) or beside a [`ToolOutput`] ([`FallibleMessage`]).

use serde::ser::{Impossible, Serialize, Serializer};
use serde_json::{json, Value as Json};
use std::ops::Deref;

use super::ToolError;
use crate::call::ToolOutput;
use crate::error::{Error, ErrorKind};
use crate::value::Value;

/// Marks [`ToolReturn`] for a value returned as it is (`T: Serialize + JsonSchema`), or a
/// `Result` of one whose error serializes too (`Result<T, String>`, `Result<T, &str>`).
pub enum Plain {}
/// Marks [`ToolReturn`] for a [`ToolOutput`] (an output with its own observation).
pub enum Output {}
/// Marks [`ToolReturn`] for a `Result` whose error is a `std::error::Error` (`std::io::Error`,
/// [`Error`], a `thiserror` type), the `Ok` value returned as `M` says.
pub struct Fallible<M>(std::marker::PhantomData<M>);
/// Marks [`ToolReturn`] for a `Result` whose error points to a `std::error::Error`
/// (`anyhow::Error`, `Box<dyn Error + Send + Sync>`).
pub struct FallibleDyn<M>(std::marker::PhantomData<M>);
/// Marks [`ToolReturn`] for a `Result` whose error is a [`ToolError`].
pub struct FallibleTool<M>(std::marker::PhantomData<M>);
/// Marks [`ToolReturn`] for a `Result<ToolOutput, String>` or `Result<ToolOutput, &str>`.
pub enum FallibleMessage {}

/// What a tool function may return, sync or async, with or without a
/// [`CallContext`](crate::CallContext):
///
/// - `T` where `T: Serialize + JsonSchema` (its schema is the tool's result schema);
/// - [`ToolOutput`]: an output with the text the model should see;
/// - `Result<T, E>` or `Result<ToolOutput, E>`, the `Err` a `ToolFailed` error the model
///   reads, for `E` any of: a `String` or `&str` (the message), a [`ToolError`], an
///   [`Error`] (its kind and hint are kept: a pool's `Limit` stays `Limit`), any
///   `std::error::Error + Send + Sync` (`std::io::Error`, a `thiserror` type, …), or a
///   pointer to one (`anyhow::Error`, `Box<dyn Error + Send + Sync>`).
///
/// `M` is a marker that keeps these apart; it is inferred, so the obvious signature needs no
/// annotation. (The one error type that is two of these at once, a `std::error::Error` that
/// is also `Serialize + JsonSchema`, is ambiguous to the compiler: return a [`ToolError`] with
/// `.map_err(ToolError::from)` instead.)
///
/// ```
/// use fexpr::{FunctionTool, ToolError, ToolOutput, Value};
/// let half = FunctionTool::new("half", ["n"], |n: i64| -> Result<i64, String> {
///     if n % 2 == 1 { return Err(format!("{n} is odd")); }
///     Ok(n / 2)
/// });
/// let checked = FunctionTool::new("checked", ["n"], |n: i64| -> Result<i64, ToolError> {
///     if n < 0 { return Err(ToolError::new("negative")); }
///     Ok(n)
/// });
/// let read = FunctionTool::new("read", ["path"], |path: String| -> Result<String, std::io::Error> {
///     std::fs::read_to_string(path)
/// });
/// let shown = FunctionTool::new("shown", [], || ToolOutput::new(Value::Int(3)).with_observation("three"));
/// let manager = fexpr::ToolManager::builder().tool(half).tool(checked).tool(read).tool(shown).build().unwrap();
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// let out = rt.block_on(manager.execute_func_expr("half(n=3)"));
/// assert_eq!(out.output.unwrap_err().message, "3 is odd");
/// let out = rt.block_on(manager.execute_func_expr("half(n=4)"));
/// assert_eq!(out.output, Ok(Value::Int(2)));
/// assert_eq!(manager.tool("half").unwrap().definition().python_signature(), "half(n: int) -> int");
/// ```
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`",
    label = "this is returned by the tool",
    note = "a tool returns `T`, `ToolOutput`, `Result<T, E>` or `Result<ToolOutput, E>`, where `T: serde::Serialize + schemars::JsonSchema` and `E` is a `String`, a `&str`, a `fexpr::ToolError`, a `fexpr::Error`, any `std::error::Error + Send + Sync` or a pointer to one (`anyhow::Error`, `Box<dyn Error + Send + Sync>`)"
)]
pub trait ToolReturn<M>: Send + 'static {
    /// The JSON Schema of the value (`{}`, anything, for a [`ToolOutput`]).
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json;
    /// The output, or the tool's failure.
    fn into_output(self) -> Result<ToolOutput, Error>;
}

impl<T: Serialize + schemars::JsonSchema + Send + 'static> ToolReturn<Plain> for T {
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        // A `Result` (its schema `oneOf` an `Ok` and an `Err` object) is described by its
        // `Ok` value: the error is not a result.
        if T::schema_id().starts_with("Result<") {
            let whole = T::json_schema(generator).to_value();
            if let Some(ok) = whole.pointer("/oneOf/0/properties/Ok") {
                return ok.clone();
            }
        }
        generator.subschema_for::<T>().to_value()
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        match self.serialize(ResultProbe) {
            Ok(Branch::Ok(value)) => Ok(ToolOutput::from(value)),
            Ok(Branch::Err(error)) => Err(error),
            Err(NotAResult) => Value::from_serialize(&self).map(ToolOutput::from),
        }
    }
}

impl ToolReturn<Output> for ToolOutput {
    fn schema(_: &mut schemars::SchemaGenerator) -> Json {
        json!({})
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        Ok(self)
    }
}

impl<T, E, M> ToolReturn<Fallible<M>> for Result<T, E>
where
    T: ToolReturn<M>,
    E: std::error::Error + Send + Sync + 'static,
{
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        T::schema(generator)
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        self.map_err(|e| Error::from(ToolError::from(e)))
            .and_then(T::into_output)
    }
}

impl<T, E, M> ToolReturn<FallibleDyn<M>> for Result<T, E>
where
    T: ToolReturn<M>,
    E: Deref<Target = dyn std::error::Error + Send + Sync + 'static>
        + Into<Box<dyn std::error::Error + Send + Sync>>
        + Send
        + 'static,
{
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        T::schema(generator)
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        self.map_err(|e| Error::from(ToolError::from(e)))
            .and_then(T::into_output)
    }
}

impl<T, M> ToolReturn<FallibleTool<M>> for Result<T, ToolError>
where
    T: ToolReturn<M>,
{
    fn schema(generator: &mut schemars::SchemaGenerator) -> Json {
        T::schema(generator)
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        self.map_err(Error::from).and_then(T::into_output)
    }
}

impl ToolReturn<FallibleMessage> for Result<ToolOutput, String> {
    fn schema(_: &mut schemars::SchemaGenerator) -> Json {
        json!({})
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        self.map_err(|message| Error::new(ErrorKind::ToolFailed, message))
    }
}

impl ToolReturn<FallibleMessage> for Result<ToolOutput, &'static str> {
    fn schema(_: &mut schemars::SchemaGenerator) -> Json {
        json!({})
    }
    fn into_output(self) -> Result<ToolOutput, Error> {
        self.map_err(|message| Error::new(ErrorKind::ToolFailed, message))
    }
}

/// A `Result` seen through serde: the value of its `Ok`, or the failure its `Err` says.
enum Branch {
    Ok(Value),
    Err(Error),
}

/// The probe's answer for anything but a `Result`; it stops at the first thing serialized.
#[derive(Debug)]
struct NotAResult;

impl std::fmt::Display for NotAResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a Result")
    }
}

impl std::error::Error for NotAResult {}

impl serde::ser::Error for NotAResult {
    fn custom<T: std::fmt::Display>(_: T) -> NotAResult {
        NotAResult
    }
}

/// A serializer that recognises a `Result` (serde writes one as the newtype variant `Ok` or
/// `Err` of the enum `Result`) and refuses anything else at its first step, so a plain value
/// costs one call.
struct ResultProbe;

/// The probe's refusal of every serializer method but `serialize_newtype_variant`.
macro_rules! not_a_result {
    ($($method:ident($($arg:ty),*) -> $out:ty;)*) => {$(
        fn $method(self, $(_: $arg),*) -> Result<$out, NotAResult> {
            Err(NotAResult)
        }
    )*};
}

impl Serializer for ResultProbe {
    type Ok = Branch;
    type Error = NotAResult;
    type SerializeSeq = Impossible<Branch, NotAResult>;
    type SerializeTuple = Impossible<Branch, NotAResult>;
    type SerializeTupleStruct = Impossible<Branch, NotAResult>;
    type SerializeTupleVariant = Impossible<Branch, NotAResult>;
    type SerializeMap = Impossible<Branch, NotAResult>;
    type SerializeStruct = Impossible<Branch, NotAResult>;
    type SerializeStructVariant = Impossible<Branch, NotAResult>;

    not_a_result! {
        serialize_bool(bool) -> Branch;
        serialize_i8(i8) -> Branch;
        serialize_i16(i16) -> Branch;
        serialize_i32(i32) -> Branch;
        serialize_i64(i64) -> Branch;
        serialize_i128(i128) -> Branch;
        serialize_u8(u8) -> Branch;
        serialize_u16(u16) -> Branch;
        serialize_u32(u32) -> Branch;
        serialize_u64(u64) -> Branch;
        serialize_u128(u128) -> Branch;
        serialize_f32(f32) -> Branch;
        serialize_f64(f64) -> Branch;
        serialize_char(char) -> Branch;
        serialize_str(&str) -> Branch;
        serialize_bytes(&[u8]) -> Branch;
        serialize_none() -> Branch;
        serialize_unit() -> Branch;
        serialize_unit_struct(&'static str) -> Branch;
        serialize_unit_variant(&'static str, u32, &'static str) -> Branch;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Branch, NotAResult> {
        Err(NotAResult)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<Branch, NotAResult> {
        Err(NotAResult)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Branch, NotAResult> {
        match (name, variant) {
            ("Result", "Ok") => Ok(match Value::from_serialize(value) {
                Ok(value) => Branch::Ok(value),
                Err(error) => Branch::Err(error),
            }),
            ("Result", "Err") => {
                // The message: a string as it is, anything else as its JSON text.
                let message = match Value::from_serialize(value) {
                    Ok(Value::Str(text)) => text.to_string(),
                    Ok(other) => other.to_json().to_string(),
                    Err(error) => error.message,
                };
                Ok(Branch::Err(Error::new(ErrorKind::ToolFailed, message)))
            }
            _ => Err(NotAResult),
        }
    }
}

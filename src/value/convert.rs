//! Direct serde conversion between [`Value`] and ordinary Rust types (tool parameters and
//! results), without building a `serde_json::Value` in between.
//!
//! The conversion is defined as the JSON one (`serde_json::to_value` + [`Value::from_json`],
//! and `serde_json::from_value` of [`Value::to_json`]): every case here produces what that
//! detour produces, including its errors, except that [`Build`] keeps an infinite or NaN float
//! as it is where JSON writes `null` (the tool manager then refuses the result, saying where the
//! float is; see [`Value`]). The common shapes (scalars, strings, sequences,
//! records into structs, structs into dicts) are converted directly; the rare ones (dicts into
//! maps, enums, ndarrays into nested lists) still take the JSON detour, which is exact by
//! construction.

use num_traits::ToPrimitive;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize};
use serde_json::Error;

use super::{Dict, Value};

/// A value described in a few words for a conversion error (scalars as written, cut short;
/// containers by kind and size), and how serde's messages describe a value of its kind.
pub(super) struct Brief {
    text: String,
    serde_kinds: &'static [&'static str],
}

/// See [`Brief`].
pub(super) fn brief(v: &Value) -> Brief {
    let text = match v {
        Value::List(items) => format!("a list of {} items", items.len()),
        Value::Tuple(items) => format!("a tuple of {} items", items.len()),
        Value::Set(items) => format!("a set of {} items", items.len()),
        Value::Dict(d) => format!("a dict of {} keys", d.len()),
        Value::Record(r) => format!("a {} record", crate::error::clip(&r.name, 40)),
        Value::Array(a) => format!("an ndarray of {} elements", a.len()),
        Value::Bytes(b) => format!("a bytes value of {} bytes", b.len()),
        Value::Str(s) if s.len() > 40 => format!("a str of {} characters", s.chars().count()),
        other => crate::error::clip(&other.repr(), 40),
    };
    let serde_kinds: &[&str] = match v {
        Value::None => &["null", "unit"],
        Value::Bool(_) => &["boolean"],
        Value::Int(_) | Value::BigInt(_) => &["integer", "string"],
        Value::Float(_) => &["floating point", "null"],
        Value::Str(_) => &["string", "char"],
        Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::Bytes(_) | Value::Array(_) => {
            &["sequence"]
        }
        Value::Dict(_) | Value::Record(_) => &["map"],
    };
    Brief { text, serde_kinds }
}

/// Why `shown` did not convert, in Python's terms: serde's standard messages ("invalid type:
/// string \"x\", expected i64") name Rust types and do not say whether they are about the value
/// or something inside it; a message of the target type's own (a custom `Deserialize`) is kept.
pub(super) fn reason(shown: &Brief, e: &Error) -> String {
    let message = e.to_string();
    let after = |prefix: &str| message.strip_prefix(prefix);
    let expected = |rest: &str| {
        rest.rsplit_once(", expected ")
            .map_or("the parameter's type".to_string(), |(_, e)| {
                expected_words(e)
            })
    };
    let kinds = shown.serde_kinds;
    let shown = &shown.text;
    if let Some(rest) = after("invalid type: ").or_else(|| after("invalid value: ")) {
        return if kinds.iter().any(|k| rest.starts_with(k)) {
            format!("{shown} does not fit {}", expected(rest))
        } else {
            format!("{shown} holds a value that does not fit {}", expected(rest))
        };
    }
    if let Some(rest) = after("invalid length ") {
        return format!("{shown} does not fit {}", expected(rest));
    }
    let quoted = |rest: &str| rest.split('`').nth(1).unwrap_or_default().to_string();
    if let Some(rest) = after("missing field ") {
        return format!("{shown} is missing field `{}`", quoted(rest));
    }
    if let Some(rest) = after("unknown field ") {
        return format!("{shown} has no field `{}`", quoted(rest));
    }
    if let Some(rest) = after("duplicate field ") {
        return format!("{shown} gives field `{}` twice", quoted(rest));
    }
    if let Some(rest) = after("unknown variant ") {
        let listed = rest.split_once("expected ").map_or("", |(_, l)| l);
        return format!(
            "{shown} is not {}",
            listed.replace("one of", "one of the values")
        );
    }
    format!("{shown} is refused by the parameter's type: {message}")
}

/// serde's name for what a Rust type expects, in Python's terms.
fn expected_words(expected: &str) -> String {
    let bits = |t: &str| t.trim_start_matches(['i', 'u']).to_string();
    match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" => format!("a {}-bit integer", bits(expected)),
        "u8" | "u16" | "u32" | "u64" | "u128" => {
            format!("an unsigned {}-bit integer", bits(expected))
        }
        "isize" | "usize" => "an integer of the machine's size".into(),
        "f32" | "f64" => "a float".into(),
        "a boolean" => "a bool".into(),
        "a string" | "a borrowed string" | "string" => "a str".into(),
        "a character" | "a char" => "a single-character str".into(),
        "a sequence" => "a list".into(),
        "a map" => "a dict".into(),
        "unit" => "None".into(),
        "a byte array" | "byte array" => "bytes".into(),
        other => match other.strip_prefix("struct ") {
            Some(name) => format!("a {name} record"),
            None => match other.strip_prefix("a tuple of size ") {
                Some(n) => format!("a tuple of {n} items"),
                None if other.starts_with("enum ") || other.starts_with("variant ") => {
                    "one of the parameter's variants".into()
                }
                None => "the parameter's type".into(),
            },
        },
    }
}

/// A `Value` as a serde `Deserializer`, consuming it.
pub(super) struct Owned(pub(super) Value);

impl Owned {
    /// The JSON detour, for the shapes not converted directly.
    fn json(self) -> serde_json::Value {
        self.0.to_json()
    }

    /// Whether the value's JSON form is `null` (None, or a float JSON cannot carry).
    fn is_null(&self) -> bool {
        match &self.0 {
            Value::None => true,
            Value::Float(f) => !f.is_finite(),
            _ => false,
        }
    }

    /// Whether the value's JSON form is a number.
    fn is_number(&self) -> bool {
        match &self.0 {
            Value::Int(_) => true,
            Value::BigInt(b) => b.to_u64().is_some(),
            Value::Float(f) => f.is_finite(),
            _ => false,
        }
    }

    /// The elements of a value whose JSON form is an array; `Err(self)` for any other value.
    fn elements(self) -> Result<Elements, Owned> {
        match self.0 {
            Value::List(items) | Value::Tuple(items) => Ok(Elements::Items(items.into_iter())),
            Value::Set(items) => Ok(Elements::Set(items.into_iter())),
            Value::Bytes(bytes) => Ok(Elements::Bytes(bytes.into_iter())),
            other => Err(Owned(other)),
        }
    }

    /// The fields of a record or a dict with str keys, when the JSON object would hold them
    /// as they are: in the same order (`serde_json::Map` keeps insertion order) and with no
    /// name twice (a record with a repeated field name takes the JSON route).
    fn object_fields(self) -> Result<Vec<(String, Value)>, Owned> {
        match self.0 {
            Value::Record(r) if distinct(r.fields.iter().map(|(n, _)| n.as_str())) => Ok(r.fields),
            Value::Dict(d) if d.keys().all(|k| matches!(k, Value::Str(_))) => Ok(d
                .into_iter()
                .filter_map(|(k, v)| match k {
                    Value::Str(k) => Some((k, v)),
                    _ => None,
                })
                .collect()),
            other => Err(Owned(other)),
        }
    }
}

/// The elements of a list, tuple, set or bytes value, as the JSON array holds them.
enum Elements {
    Items(std::vec::IntoIter<Value>),
    Set(indexmap::set::IntoIter<Value>),
    Bytes(std::vec::IntoIter<u8>),
}

impl Iterator for Elements {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        match self {
            Elements::Items(items) => items.next(),
            Elements::Set(items) => items.next(),
            Elements::Bytes(bytes) => bytes.next().map(|b| Value::Int(i64::from(b))),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = match self {
            Elements::Items(items) => items.len(),
            Elements::Set(items) => items.len(),
            Elements::Bytes(bytes) => bytes.len(),
        };
        (len, Some(len))
    }
}

impl ExactSizeIterator for Elements {}

fn visit_seq<'de, V: Visitor<'de>>(items: Elements, visitor: V) -> Result<V::Value, Error> {
    let len = items.len();
    let mut seq = Seq { items };
    let value = visitor.visit_seq(&mut seq)?;
    if seq.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in array"))
    }
}

struct Seq {
    items: Elements,
}

impl<'de> SeqAccess<'de> for Seq {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(v) => seed.deserialize(Owned(v)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Fields {
    fields: std::vec::IntoIter<(String, Value)>,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Fields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.fields.next() {
            Some((name, value)) => {
                self.value = Some(value);
                let key: de::value::StringDeserializer<Error> = name.into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Owned(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

fn visit_fields<'de, V: Visitor<'de>>(
    fields: Vec<(String, Value)>,
    visitor: V,
) -> Result<V::Value, Error> {
    let len = fields.len();
    let mut map = Fields {
        fields: fields.into_iter(),
        value: None,
    };
    let value = visitor.visit_map(&mut map)?;
    if map.fields.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in map"))
    }
}

/// Methods that take the JSON detour as they are.
macro_rules! via_json {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
            de::Deserializer::$method(self.json(), $($arg,)* visitor)
        }
    )*};
}

/// Number methods: numbers as `deserialize_any` visits them, anything else the JSON way.
macro_rules! number {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            if self.is_number() {
                self.deserialize_any(visitor)
            } else {
                de::Deserializer::$method(self.json(), visitor)
            }
        }
    )*};
}

/// String methods: a str is visited as an owned string, anything else the JSON way.
macro_rules! string {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.0 {
                Value::Str(s) => visitor.visit_string(s),
                other => de::Deserializer::$method(Owned(other).json(), visitor),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Owned {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::None => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Int(i) => match u64::try_from(i) {
                Ok(u) => visitor.visit_u64(u),
                Err(_) => visitor.visit_i64(i),
            },
            Value::BigInt(b) => match b.to_u64() {
                Some(u) => visitor.visit_u64(u),
                None => visitor.visit_string(b.to_string()),
            },
            Value::Float(f) if f.is_finite() => visitor.visit_f64(f),
            Value::Float(_) => visitor.visit_unit(),
            Value::Str(s) => visitor.visit_string(s),
            other => match Owned(other).elements() {
                Ok(items) => visit_seq(items, visitor),
                Err(other) => match other.0 {
                    Value::Record(_) => match other.object_fields() {
                        Ok(fields) => visit_fields(fields, visitor),
                        Err(other) => other.json().deserialize_any(visitor),
                    },
                    other => Owned(other).json().deserialize_any(visitor),
                },
            },
        }
    }

    number! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    string! { deserialize_char deserialize_str deserialize_string deserialize_identifier }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(b),
            other => Owned(other).json().deserialize_bool(visitor),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Str(s) => visitor.visit_string(s),
            other => match Owned(other).elements() {
                Ok(items) => visit_seq(items, visitor),
                Err(other) => other.json().deserialize_byte_buf(visitor),
            },
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.is_null() {
            visitor.visit_unit()
        } else {
            self.json().deserialize_unit(visitor)
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.elements() {
            Ok(items) => visit_seq(items, visitor),
            Err(other) => other.json().deserialize_seq(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.elements() {
            Ok(items) => visit_seq(items, visitor),
            Err(other) => match other.object_fields() {
                Ok(given) => visit_fields(given, visitor),
                Err(other) => other.json().deserialize_struct(name, fields, visitor),
            },
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        drop(self);
        visitor.visit_unit()
    }

    via_json! {
        deserialize_map();
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }
}

/// A serde `Serializer` that builds the `Value` the JSON detour would build.
pub(super) struct Build;

fn out_of_range() -> Error {
    ser::Error::custom("number out of range")
}

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

fn unsigned(u: u64) -> Value {
    match i64::try_from(u) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(Box::new(u.into())),
    }
}

/// Fields or map entries as the JSON object holds them: in the order given, a repeated key
/// keeping its first place and its last value (as `serde_json::Map` with `preserve_order`).
fn object(entries: Vec<(String, Value)>) -> Value {
    let mut dict = Dict::with_capacity(entries.len());
    for (k, v) in entries {
        dict.insert(Value::Str(k), v);
    }
    Value::Dict(dict)
}

/// Whether no name occurs twice: a scan for a handful of fields (most records), a sort for
/// many (a record type may have as many fields as its schema has properties).
fn distinct<'a>(names: impl ExactSizeIterator<Item = &'a str> + Clone) -> bool {
    if names.len() <= 16 {
        return names
            .clone()
            .enumerate()
            .all(|(i, name)| names.clone().skip(i + 1).all(|other| other != name));
    }
    let mut sorted: Vec<&str> = names.collect();
    sorted.sort_unstable();
    sorted
        .windows(2)
        .all(|pair| !matches!(pair, [a, b] if a == b))
}

fn tagged(variant: &str, value: Value) -> Value {
    let mut dict = Dict::with_capacity(1);
    dict.insert(Value::Str(variant.to_string()), value);
    Value::Dict(dict)
}

impl ser::Serializer for Build {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = Items;
    type SerializeMap = Entries;
    type SerializeStruct = Entries;
    type SerializeStructVariant = Entries;

    fn serialize_bool(self, v: bool) -> Result<Value, Error> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Error> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, Error> {
        if let Ok(u) = u64::try_from(v) {
            Ok(unsigned(u))
        } else {
            i64::try_from(v).map(Value::Int).map_err(|_| out_of_range())
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Error> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        Ok(unsigned(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, Error> {
        u64::try_from(v).map(unsigned).map_err(|_| out_of_range())
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        Ok(Value::Float(f64::from(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, Error> {
        Ok(Value::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        Ok(Value::Str(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Error> {
        Ok(Value::List(
            v.iter().map(|b| Value::Int(i64::from(*b))).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(Value::None)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        Ok(Value::None)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Error> {
        Ok(Value::None)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, Error> {
        Ok(Value::Str(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        Ok(tagged(variant, value.serialize(Build)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items, Error> {
        Ok(Items::new(None, len.unwrap_or(0)))
    }
    fn serialize_tuple(self, len: usize) -> Result<Items, Error> {
        Ok(Items::new(None, len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Items, Error> {
        Ok(Items::new(None, len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Items, Error> {
        Ok(Items::new(Some(variant), len))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Entries, Error> {
        Ok(Entries::new(None, len.unwrap_or(0)))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Entries, Error> {
        Ok(Entries::new(None, len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Entries, Error> {
        Ok(Entries::new(Some(variant), 0))
    }
}

/// A sequence being built (a list, or a tuple variant's list under its tag).
pub(super) struct Items {
    variant: Option<&'static str>,
    items: Vec<Value>,
}

impl Items {
    fn new(variant: Option<&'static str>, len: usize) -> Items {
        Items {
            variant,
            // The hint comes from the type being serialized; cap it so it cannot over-allocate.
            items: Vec::with_capacity(len.min(4096)),
        }
    }

    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(Build)?);
        Ok(())
    }

    fn finish(self) -> Value {
        match self.variant {
            Some(variant) => tagged(variant, Value::List(self.items)),
            None => Value::List(self.items),
        }
    }
}

impl ser::SerializeSeq for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

/// An object being built (a map, a struct, or a struct variant's fields under its tag).
pub(super) struct Entries {
    variant: Option<&'static str>,
    entries: Vec<(String, Value)>,
    key: Option<String>,
}

impl Entries {
    fn new(variant: Option<&'static str>, len: usize) -> Entries {
        Entries {
            variant,
            entries: Vec::with_capacity(len.min(4096)),
            key: None,
        }
    }

    fn finish(self) -> Value {
        match self.variant {
            Some(variant) => tagged(variant, object(self.entries)),
            None => object(self.entries),
        }
    }
}

impl ser::SerializeMap for Entries {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(Key)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let Some(key) = self.key.take() else {
            return Err(ser::Error::custom(
                "serialize_value called before serialize_key",
            ));
        };
        self.entries.push((key, value.serialize(Build)?));
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeStruct for Entries {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.entries
            .push((key.to_string(), value.serialize(Build)?));
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeStructVariant for Entries {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.entries
            .push((key.to_string(), value.serialize(Build)?));
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(self.finish())
    }
}

/// A float map key: JSON's own text for the float (`serde_json` writes keys and numbers with
/// the same formatter).
fn float_key<F: Serialize>(finite: bool, v: &F) -> Result<String, Error> {
    if finite {
        serde_json::to_string(v)
    } else {
        Err(ser::Error::custom(
            "float key must be finite (got NaN or +/-inf)",
        ))
    }
}

/// A map key as JSON writes it: strings as they are, numbers and bools as their text.
struct Key;

type NoKey = ser::Impossible<String, Error>;

impl ser::Serializer for Key {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = NoKey;
    type SerializeTuple = NoKey;
    type SerializeTupleStruct = NoKey;
    type SerializeTupleVariant = NoKey;
    type SerializeMap = NoKey;
    type SerializeStruct = NoKey;
    type SerializeStructVariant = NoKey;

    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<String, Error> {
        float_key(v.is_finite(), &v)
    }
    fn serialize_f64(self, v: f64) -> Result<String, Error> {
        float_key(v.is_finite(), &v)
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_string())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<NoKey, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    //! The direct conversions must give exactly what the JSON detour gives, errors included.
    use super::super::{NdArray, Record};
    use super::*;
    use proptest::prelude::*;
    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Serialize};
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Point {
        x: i64,
        y: i64,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        b: Option<String>,
        a: f64,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Shape {
        Empty,
        Circle(f64),
        Rect { w: i64, h: i64 },
        Pair(i64, i64),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(untagged)]
    enum Number {
        Int(i64),
        Float(f64),
        Text(String),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Wrapper(Vec<u8>);

    /// `into_rust` and the JSON detour agree on `v`.
    fn same<T: DeserializeOwned + Debug + PartialEq + 'static>(v: &Value) {
        let direct = v.clone().into_rust::<T>().map_err(|e| e.message);
        let detour = serde_json::from_value::<T>(v.to_json()).map_err(|e| reason(&brief(v), &e));
        assert_eq!(
            direct,
            detour,
            "{} into {}",
            v.repr(),
            std::any::type_name::<T>()
        );
    }

    fn into_all(v: &Value) {
        same::<i64>(v);
        same::<u8>(v);
        same::<i128>(v);
        same::<f64>(v);
        same::<bool>(v);
        same::<String>(v);
        same::<char>(v);
        same::<()>(v);
        same::<Option<i64>>(v);
        same::<Option<Vec<i64>>>(v);
        same::<Vec<i64>>(v);
        same::<Vec<f64>>(v);
        same::<Vec<u8>>(v);
        same::<Vec<Option<bool>>>(v);
        same::<(i64, String)>(v);
        same::<Point>(v);
        same::<Option<Point>>(v);
        same::<Vec<Point>>(v);
        same::<Strict>(v);
        same::<Shape>(v);
        same::<Number>(v);
        same::<Wrapper>(v);
        same::<HashMap<String, i64>>(v);
        same::<BTreeMap<i64, f64>>(v);
        same::<serde_json::Value>(v);
        same::<NdArray>(v);
        same::<Vec<NdArray>>(v);
    }

    fn record(fields: &[(&str, Value)]) -> Value {
        Value::Record(Record {
            name: "R".into(),
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        })
    }

    fn array(json: serde_json::Value) -> Value {
        Value::Array(NdArray::from_nested(&Value::from_json(&json), 100).unwrap())
    }

    #[test]
    fn chosen_values_convert_as_json_does() {
        let values = vec![
            Value::None,
            Value::Bool(true),
            Value::Int(0),
            Value::Int(-3),
            Value::Int(300),
            Value::Int(i64::MAX),
            Value::from_bigint(num_bigint::BigInt::from(u64::MAX)),
            Value::from_bigint(num_bigint::BigInt::from(u128::MAX)),
            Value::Float(1.0),
            Value::Float(-2.5),
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::Str("a".into()),
            Value::Str("Empty".into()),
            Value::Str("12".into()),
            Value::Bytes(vec![1, 255]),
            Value::List(vec![Value::Int(1), Value::Int(2)]),
            Value::Tuple(vec![Value::Int(1), Value::Str("s".into())]),
            Value::Tuple(vec![Value::Int(1), Value::Str("s".into()), Value::None]),
            Value::Set([Value::Int(3), Value::Int(1)].into_iter().collect()),
            Value::List(vec![Value::Float(1.5), Value::None]),
            record(&[("x", Value::Int(1)), ("y", Value::Int(2))]),
            record(&[("y", Value::Int(2)), ("x", Value::Int(1))]),
            record(&[("x", Value::Int(1))]),
            record(&[("x", Value::Int(1)), ("y", Value::Str("2".into()))]),
            record(&[("x", Value::Str("a".into())), ("y", Value::Str("b".into()))]),
            record(&[
                ("a", Value::Int(1)),
                ("b", Value::None),
                ("c", Value::Int(3)),
            ]),
            record(&[("a", Value::Int(1)), ("b", Value::Str("t".into()))]),
            record(&[("x", Value::Int(1)), ("x", Value::Int(2))]),
            record(&[("w", Value::Int(1)), ("h", Value::Int(2))]),
            Value::List(vec![
                record(&[("x", Value::Int(1)), ("y", Value::Int(2))]),
                record(&[("x", Value::Int(3)), ("y", Value::Int(4))]),
            ]),
            Value::from_json(&serde_json::json!({"x": 1, "y": 2})),
            Value::from_json(&serde_json::json!({"y": 2, "x": 1})),
            Value::from_json(&serde_json::json!({"Circle": 2.0})),
            Value::from_json(&serde_json::json!({"Rect": {"w": 1, "h": 2}})),
            Value::from_json(&serde_json::json!({"Pair": [1, 2]})),
            Value::from_json(&serde_json::json!({"1": 2.5, "-3": 1})),
            Value::Dict(
                [
                    (Value::Int(1), Value::Int(2)),
                    (Value::Str("1".into()), Value::Int(3)),
                ]
                .into_iter()
                .collect(),
            ),
            array(serde_json::json!([[1, 2], [3, 4]])),
            array(serde_json::json!([1.5, 2.0])),
            array(serde_json::json!([true, false])),
            array(serde_json::json!([])),
            array(serde_json::json!(7)),
            Value::Array(NdArray::Float(
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[2]), vec![1.0, f64::NAN]).unwrap(),
            )),
            Value::Array(NdArray::Float(
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[0]), vec![]).unwrap(),
            )),
            Value::List(vec![array(serde_json::json!([1, 2]))]),
        ];
        for v in &values {
            into_all(v);
        }
    }

    /// `from_serialize` and the JSON detour agree on `x`.
    fn built<T: Serialize + ?Sized>(x: &T) {
        let direct = Value::from_serialize(x).map_err(|e| e.message);
        let detour = serde_json::to_value(x)
            .map(|j| Value::from_json(&j))
            .map_err(|e| format!("cannot convert result: {e}"));
        assert_eq!(direct, detour);
    }

    #[test]
    fn chosen_results_build_as_json_does() {
        built(&5i64);
        built(&u64::MAX);
        built(&(i128::from(u64::MAX) + 1));
        built(&(i128::from(i64::MIN) - 1));
        built(&-7i128);
        built(&(u128::from(u64::MAX) + 1));
        built(&1.5f32);
        built(&0.1f32);
        built(&'c');
        built("text");
        built(&serde_bytes_like());
        built(&Option::<i64>::None);
        built(&Some(3u8));
        built(&());
        built(&(1, "a", 2.5));
        built(&vec![Point { x: 1, y: 2 }]);
        built(&Strict {
            b: Some("s".into()),
            a: 1.0,
        });
        built(&Shape::Empty);
        built(&Shape::Circle(1.0));
        built(&Shape::Rect { w: 2, h: 1 });
        built(&Shape::Pair(1, 2));
        built(&Number::Text("t".into()));
        built(&Wrapper(vec![1, 2]));
        built(&HashMap::from([(1i64, "a"), (-2, "b")]));
        built(&BTreeMap::from([(true, 1)]));
        built(&BTreeMap::from([('k', 1)]));
        built(&vec![(0.5f64, 1)].into_iter().collect::<Vec<_>>());
        built(&indexmap::IndexMap::from([("b", 1), ("a", 2)]));
        built(&FloatKeys(0.1f32));
        built(&FloatKeys(1.5f64));
        built(&FloatKeys(1e300f64));
        built(&FloatKeys(f64::NAN));
        built(&BTreeMap::from([((1, 2), 3)]));
        built(&BTreeMap::from([(Some(1), 3)]));
        built(&HashMap::from(
            [(Shape::Empty, 1)].map(|(k, v)| (format!("{k:?}"), v)),
        ));
        built(&NdArray::from_nested(&Value::from_json(&serde_json::json!([[1, 2]])), 10).unwrap());
        built(&Value::Int(3));
    }

    #[test]
    fn conversion_errors_speak_python() {
        let fails = |v: Value| -> String {
            match v.into_rust::<(i64, Point, Vec<u8>, Shape)>() {
                Ok(_) => "converted".into(),
                Err(e) => e.message,
            }
        };
        let big = Value::from_bigint(num_bigint::BigInt::from(u64::MAX) + 1);
        let cases = [
            (
                big.clone(),
                "18446744073709551616 does not fit a 64-bit integer",
            ),
            (Value::Str("x".into()), "'x' does not fit a 64-bit integer"),
            (Value::Float(1.5), "1.5 does not fit a 64-bit integer"),
            (Value::None, "None does not fit a 64-bit integer"),
        ];
        for (v, expected) in cases {
            assert_eq!(v.into_rust::<i64>().unwrap_err().message, expected);
        }
        assert_eq!(
            Value::Int(300).into_rust::<u8>().unwrap_err().message,
            "300 does not fit an unsigned 8-bit integer"
        );
        let no_y = Value::from_json(&serde_json::json!({"x": 1}));
        assert_eq!(
            no_y.into_rust::<Point>().unwrap_err().message,
            "a dict of 1 keys is missing field `y`"
        );
        let list = Value::from_json(&serde_json::json!([1, 2, 3]));
        assert_eq!(
            fails(list),
            "a list of 3 items holds a value that does not fit a Point record"
        );
        let short = Value::from_json(&serde_json::json!([1]));
        assert_eq!(
            short.into_rust::<(i64, i64)>().unwrap_err().message,
            "a list of 1 items does not fit a tuple of 2 items"
        );
        let shape = Value::Str("Hexagon".into());
        let e = shape.into_rust::<Shape>().unwrap_err().message;
        assert!(e.starts_with("'Hexagon' is not one of the values"), "{e}");
        assert!(!e.contains("invalid") && !e.contains("expected"), "{e}");
    }

    #[test]
    fn non_finite_results_are_kept_for_the_manager_to_refuse() {
        let nan = Value::from_serialize(&f64::NAN).unwrap();
        assert!(matches!(nan, Value::Float(f) if f.is_nan()));
        assert_eq!(
            Value::from_serialize(&f32::INFINITY).unwrap(),
            Value::Float(f64::INFINITY)
        );
        let v = Value::from_serialize(&vec![(1.5f64, f64::NEG_INFINITY)]).unwrap();
        let bad = v.find_non_finite().unwrap();
        assert_eq!((bad.path.as_str(), bad.what()), ("[0][1]", "-infinite"));
        // A float map key cannot be written at all.
        assert!(Value::from_serialize(&FloatKeys(f64::NAN)).is_err());
    }

    /// A map with one float key.
    struct FloatKeys<F>(F);

    impl<F: Serialize> Serialize for FloatKeys<F> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = s.serialize_map(Some(1))?;
            map.serialize_entry(&self.0, &1)?;
            map.end()
        }
    }

    fn serde_bytes_like() -> impl Serialize {
        struct Bytes;
        impl Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&[1, 2, 3])
            }
        }
        Bytes
    }

    fn value_strategy() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::None),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            (-5i64..300).prop_map(Value::Int),
            any::<f64>().prop_map(Value::Float),
            "[a-z]{0,3}".prop_map(Value::Str),
            proptest::collection::vec(any::<u8>(), 0..3).prop_map(Value::Bytes),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Tuple),
                proptest::collection::vec(("[a-z]{1,2}", inner.clone()), 0..4).prop_map(|kv| {
                    Value::Dict(kv.into_iter().map(|(k, v)| (Value::Str(k), v)).collect())
                }),
                proptest::collection::vec(("[xy]", inner), 0..3).prop_map(|fields| {
                    Value::Record(Record {
                        name: "Point".into(),
                        fields,
                    })
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn arbitrary_values_convert_as_json_does(v in value_strategy()) {
            into_all(&v);
        }
    }
}

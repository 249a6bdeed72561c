//! [`Owned`]: a [`Value`] as a serde `Deserializer` (tool arguments into Rust types).

use num_traits::ToPrimitive;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Error;

use super::serialize::distinct;
use super::*;

/// A `Value` as a serde `Deserializer`, consuming it.
pub(in crate::value) struct Owned(pub(in crate::value) Value);

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

//! [`Build`]: a serde `Serializer` that builds a [`Value`] (tool results from Rust types),
//! and [`Key`], which writes a map key as JSON would.

use serde::ser::{self, Serialize};
use serde_json::Error;

use super::*;

/// A serde `Serializer` that builds the `Value` the JSON detour would build.
pub(in crate::value) struct Build;

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
pub(super) fn distinct<'a>(names: impl ExactSizeIterator<Item = &'a str> + Clone) -> bool {
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
pub(in crate::value) struct Items {
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

/// The four sequence shapes serde serializes (a list, a tuple, a tuple struct, a tuple
/// variant) are all collected by [`Items`] alike.
macro_rules! items {
    ($($shape:ident :: $element:ident),*) => {$(
        impl ser::$shape for Items {
            type Ok = Value;
            type Error = Error;
            fn $element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
                self.push(value)
            }
            fn end(self) -> Result<Value, Error> {
                Ok(self.finish())
            }
        }
    )*};
}

items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object being built (a map, a struct, or a struct variant's fields under its tag).
pub(in crate::value) struct Entries {
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

//! Binding a call's arguments to a [`RecordType`] the way Python binds them: the shape of a
//! call (positional count, keywords) checked before anything runs, then each argument coerced
//! to its field's type.

use super::*;

impl RecordType {
    /// The error for a call or value refused because the schema cannot be checked.
    pub(super) fn refused(&self, reason: &str) -> Error {
        Error::new(
            ErrorKind::Type,
            format!(
                "`{}` cannot be checked: {reason}; nothing is accepted",
                clip(&self.name, 60)
            ),
        )
        .with_hint("fexpr refuses what it cannot check; simplify the schema or use another tool")
    }
    /// Check only the shape of a call: how many positional arguments and which keywords.
    /// Used before anything runs, when argument values are not known yet.
    pub fn check_shape(
        &self,
        positional: usize,
        keywords: &[(&str, Span)],
        call: Span,
    ) -> Result<(), Error> {
        self.check_keywords(positional, keywords.iter().copied(), call)
    }

    /// [`RecordType::check_shape`] over any sequence of keywords (no allocation unless the
    /// record has more than 64 fields or the shape is wrong).
    pub(crate) fn check_keywords<'k>(
        &self,
        positional: usize,
        keywords: impl Iterator<Item = (&'k str, Span)> + Clone,
        call: Span,
    ) -> Result<(), Error> {
        let all = keywords.clone();
        if let Some(reason) = &self.unchecked {
            return Err(self.refused(reason).at(call));
        }
        if positional > self.fields.len() {
            return Err(self
                .error(format!(
                    "{}() takes {} positional argument{} but {} were given",
                    self.name,
                    self.fields.len(),
                    plural(self.fields.len()),
                    positional
                ))
                .at(call));
        }
        // Every field given once, positionally and then by keyword in declaration order
        // (`add(a=2, b=3)`): nothing is unknown, repeated or missing.
        let mut rest = self.fields.iter().skip(positional);
        if all
            .clone()
            .all(|(k, _)| rest.next().is_some_and(|f| f.name == k))
            && rest.next().is_none()
        {
            return Ok(());
        }
        let mut given = Given::new(self.fields.len());
        (0..positional).for_each(|i| {
            given.set(i);
        });
        for (name, span) in keywords {
            let Some(index) = self.field_index(name) else {
                return Err(Error::new(
                    ErrorKind::Arguments,
                    format!(
                        "{}() got an unexpected keyword argument `{}`",
                        self.name,
                        clip(name, 40)
                    ),
                )
                .at(span)
                .with_hint(format!("signature: {self}"))
                // Only a field the call has not given already can be the one meant; it is
                // named as a call writes it (`**{"from": …}` for a key Python cannot name).
                .suggest_as(
                    name,
                    self.fields.iter().enumerate().filter_map(|(i, f)| {
                        let given = i < positional || all.clone().any(|(k, _)| k == f.name);
                        (!given).then_some(f.name.as_str())
                    }),
                    crate::syntax::keyword_in_call,
                ));
            };
            if given.set(index) {
                return Err(self
                    .error(format!(
                        "{}() got multiple values for argument `{}`",
                        self.name,
                        clip(name, 40)
                    ))
                    .at(span));
            }
        }
        let missing: Vec<&str> = self
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| f.required && !given.get(*i))
            .map(|(_, f)| f.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(self
                .error(format!(
                    "{}() missing {} required argument{}: {}",
                    self.name,
                    missing.len(),
                    plural(missing.len()),
                    missing
                        .iter()
                        .map(|m| format!("`{}`", crate::syntax::keyword_in_call(m)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .at(call));
        }
        Ok(())
    }

    /// Bind arguments the way Python binds them and coerce each to its field's type.
    ///
    /// Returns one entry per field in declaration order: the value given or its default, or
    /// `None` when the field is optional, has no default and was not given.
    pub fn bind(
        &self,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(String, Value, Span)>,
        call: Span,
    ) -> Result<Vec<Option<Value>>, Error> {
        self.bind_named(args, kwargs, call)
    }

    /// [`bind`](Self::bind) with keyword names owned or borrowed (from the parsed call, so
    /// that the native call path copies no name to bind it).
    pub(crate) fn bind_named<K: AsRef<str>>(
        &self,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(K, Value, Span)>,
        call: Span,
    ) -> Result<Vec<Option<Value>>, Error> {
        let keywords = kwargs.iter().map(|(k, _, s)| (k.as_ref(), *s));
        self.check_keywords(args.len(), keywords, call)?;
        // Every field given once, positionally and then by keyword in declaration order
        // (`add(a=2, b=3)`): the values are already in field order.
        let in_order = args.len() + kwargs.len() == self.fields.len()
            && kwargs
                .iter()
                .zip(self.fields.iter().skip(args.len()))
                .all(|((k, _, _), f)| k.as_ref() == f.name);
        if in_order {
            let given = args
                .into_iter()
                .chain(kwargs.into_iter().map(|(_, value, span)| (value, span)));
            return self
                .fields
                .iter()
                .zip(given)
                .map(|(field, (value, span))| self.argument(field, value, span))
                .collect();
        }
        let mut slots: Vec<Option<(Value, Span)>> = vec![None; self.fields.len()];
        for (slot, arg) in slots.iter_mut().zip(args) {
            *slot = Some(arg);
        }
        for (name, value, span) in kwargs {
            if let Some(index) = self.field_index(name.as_ref()) {
                if let Some(slot) = slots.get_mut(index) {
                    *slot = Some((value, span));
                }
            }
        }
        self.fields
            .iter()
            .zip(slots)
            .map(|(field, slot)| match slot {
                Some((value, span)) => self.argument(field, value, span),
                None => Ok(field
                    .default
                    .clone()
                    .or_else(|| field.ty.accepts_none().then_some(Value::None))),
            })
            .collect()
    }

    /// Build a record instance (`Point(x=1, y=2)`) from call arguments.
    pub fn construct(
        &self,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(String, Value, Span)>,
        call: Span,
    ) -> Result<Value, Error> {
        if let Some(reason) = &self.unchecked {
            return Err(self.refused(reason).at(call));
        }
        // Keywords only, every field once in declaration order (`Point(x=1, y=2)`): what
        // `bind` would do, coercing in place and keeping the keyword strings.
        if args.is_empty()
            && kwargs.len() == self.fields.len()
            && kwargs
                .iter()
                .zip(&self.fields)
                .all(|((k, _, _), f)| *k == f.name)
        {
            let fields = kwargs
                .into_iter()
                .zip(&self.fields)
                .filter_map(|((name, value, span), field)| {
                    self.argument(field, value, span)
                        .map(|v| v.map(|v| (name, v)))
                        .transpose()
                })
                .collect::<Result<_, _>>()?;
            return Ok(Value::Record(Record {
                name: self.name.clone(),
                fields,
            }));
        }
        let values = self.bind(args, kwargs, call)?;
        Ok(Value::Record(Record {
            name: self.name.clone(),
            fields: self
                .fields
                .iter()
                .zip(values)
                .filter_map(|(f, v)| v.map(|v| (f.name.clone(), v)))
                .collect(),
        }))
    }

    /// The value bound for `field` when `value` is given for it: `value` coerced to its type,
    /// or, for `None` given to a parameter whose default is `None` (`x: int | None = None`, as
    /// the signature shows it), that default (`None` for a parameter left out).
    fn argument(&self, field: &Field, value: Value, span: Span) -> Result<Option<Value>, Error> {
        if matches!(value, Value::None) && !field.ty.accepts_none() {
            match (&field.default, field.required) {
                (Some(Value::None), _) => return Ok(Some(Value::None)),
                (None, false) => return Ok(None),
                _ => {}
            }
        }
        self.coerce_argument(field, value, span).map(Some)
    }

    /// An argument given for `field`, coerced to its type; an error points at the argument.
    fn coerce_argument(&self, field: &Field, value: Value, span: Span) -> Result<Value, Error> {
        field.ty.coerce(value, &field.name).map_err(|e| {
            let hint = match &e.hint {
                Some(hint) => format!("{hint}; signature: {self}"),
                None => format!("signature: {self}"),
            };
            e.at(span).with_hint(hint)
        })
    }

    fn error(&self, message: String) -> Error {
        Error::new(ErrorKind::Arguments, message).with_hint(format!("signature: {self}"))
    }
}

/// Which of a record's fields were given: a bit mask for up to 64 fields, else a vector.
enum Given {
    Bits(u64),
    Many(Vec<bool>),
}

impl Given {
    fn new(fields: usize) -> Given {
        if fields <= 64 {
            Given::Bits(0)
        } else {
            Given::Many(vec![false; fields])
        }
    }

    /// Field `i`'s bit (none past 64: `new` chose `Many` then).
    fn bit(i: usize) -> u64 {
        u32::try_from(i)
            .ok()
            .and_then(|i| 1u64.checked_shl(i))
            .unwrap_or(0)
    }

    /// Mark field `i`; whether it was marked already.
    fn set(&mut self, i: usize) -> bool {
        match self {
            Given::Bits(bits) => {
                let was = *bits & Given::bit(i) != 0;
                *bits |= Given::bit(i);
                was
            }
            Given::Many(flags) => flags
                .get_mut(i)
                .is_some_and(|flag| std::mem::replace(flag, true)),
        }
    }

    fn get(&self, i: usize) -> bool {
        match self {
            Given::Bits(bits) => *bits & Given::bit(i) != 0,
            Given::Many(flags) => flags.get(i).copied().unwrap_or(false),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

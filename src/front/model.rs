//! The model formats ([`formats`]) as explicit call positions of the front door: the regions a
//! format claims are read by its reader, and each call it holds becomes a [`FoundCall`] whose
//! arguments go through the same JSON reader, limits and checks as every other form. Values a
//! format writes as text (Qwen3-Coder's and GLM's XML) are converted by the parameter's type,
//! as those models' own parsers do; a value that does not fit is that call's `Type` error.

use crate::error::{clip, Error, ErrorKind, Span};
use crate::front::formats::{self, FormatArgs, FormatCall, ModelFormat};
use crate::front::{json_form, shift_back, span, FoundCall, IgnoreReason, Origin, Reader};
use crate::syntax::{self, ExprKind};

impl Reader<'_> {
    /// Read the regions the model formats in the text claim (the named format only, when one
    /// is named); the claimed spans, in order and apart. Where two formats claim overlapping
    /// stretches, the one that starts first is read (ties: the more specific format): a marker
    /// of one format inside another's call (a string parameter written as text) is that call's
    /// data, not a call.
    pub(super) fn read_formats(&mut self) -> Vec<Span> {
        let formats: Vec<ModelFormat> = match self.options.format {
            Some(format) => vec![format],
            // The formats whose markup the rest of the front door does not read (see
            // `ModelFormat::found_by_markers`).
            None => formats::detect(self.text)
                .into_iter()
                .filter(|f| f.found_by_markers())
                .collect(),
        };
        let mut readings = Vec::with_capacity(formats.len());
        for format in formats {
            if !self.charge(self.text.len()) {
                self.budget_from = Some(0);
                return Vec::new();
            }
            readings.push((format, formats::read(format, self.text, self.limits)));
        }
        // Every claimed stretch, by its start (then by the format's rank): the first of
        // overlapping ones is read.
        let mut all: Vec<(Span, usize)> = readings
            .iter()
            .enumerate()
            .flat_map(|(k, (_, r))| r.claimed.iter().map(move |s| (*s, k)))
            .collect();
        all.sort_by_key(|(s, k)| (s.start, *k));
        let mut claimed: Vec<Span> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for (s, k) in all {
            if claimed.last().is_none_or(|last| s.start >= last.end) {
                claimed.push(s);
                owner.push(k);
            }
        }
        for (k, (format, reading)) in readings.into_iter().enumerate() {
            let regions: Vec<Span> = claimed
                .iter()
                .zip(&owner)
                .filter(|(_, o)| **o == k)
                .map(|(s, _)| *s)
                .collect();
            let inside = |s: Span| regions.iter().any(|r| s.start >= r.start && s.end <= r.end);
            // What a call's own text holds is part of the call, not ignored text.
            let calls: Vec<Span> = reading.calls.iter().map(|c| c.span).collect();
            let in_call = |s: Span| calls.iter().any(|c| s.start >= c.start && s.end <= c.end);
            for call in reading.calls {
                if inside(call.span) {
                    let found = self.format_call(format, call);
                    self.found.push(found);
                }
            }
            for (s, reason) in reading.markup {
                if inside(s) && !in_call(s) {
                    self.ignore(s, reason);
                }
            }
            for s in reading.reasoning {
                if inside(s) && !in_call(s) {
                    self.ignore(s, IgnoreReason::Reasoning);
                }
            }
        }
        claimed
    }

    /// The call `call` of `format`, its arguments read and checked.
    ///
    /// Long (about 100 lines) for a reason: one match over the closed `FormatArgs` forms a
    /// format writes arguments in (JSON, text parameters, Python, broken), each arm
    /// building the same `FoundCall`.
    fn format_call(&mut self, format: ModelFormat, call: FormatCall) -> FoundCall {
        let text = self.text;
        let origin = Origin::Format(format);
        let whole = text.get(call.span.range()).unwrap_or_default();
        // An error located in the text, as the error of the call whose source is its whole
        // stretch (which the error's span then indexes).
        let failed = |name: String, e: Error| FoundCall {
            name,
            span: call.span,
            origin,
            source: whole.to_string(),
            parsed: Err(Error {
                span: e.span.map(|s| shift_back(s, call.span.start)),
                ..e
            }),
            id: call.id.clone(),
        };
        if call.name.is_empty() && !matches!(call.args, FormatArgs::Broken(_)) {
            return failed(
                String::new(),
                Error::new(ErrorKind::Syntax, "the call names no function").at(call.span),
            );
        }
        match call.args {
            FormatArgs::Broken(e) => failed(call.name, e),
            FormatArgs::Json(args) => {
                let json = text.get(args.range()).unwrap_or_default();
                match json_form::call_from_args(&call.name, json, args.start as usize, self.limits)
                {
                    Ok((source, parsed)) => FoundCall {
                        name: call.name,
                        span: call.span,
                        origin,
                        source,
                        parsed,
                        id: call.id,
                    },
                    Err(e) => failed(call.name, e),
                }
            }
            FormatArgs::Text(args) => {
                let mut source = format!("{}(", call.name);
                for (i, arg) in args.iter().enumerate() {
                    if !super::is_identifier(&arg.key) {
                        return failed(
                            call.name.clone(),
                            Error::new(
                                ErrorKind::Syntax,
                                format!("`{}` is not a parameter name", clip(&arg.key, 40)),
                            )
                            .at(arg.key_span),
                        );
                    }
                    let ty = (self.param_type)(&call.name, &arg.key);
                    let value = match formats::convert_text_arg(arg, ty.as_ref(), self.limits) {
                        Ok(value) => value,
                        Err(e) => {
                            let e = Error {
                                message: format!("argument `{}`: {}", arg.key, e.message),
                                span: Some(e.span.unwrap_or(arg.value_span)),
                                ..e
                            };
                            return failed(call.name.clone(), e);
                        }
                    };
                    if i > 0 {
                        source.push_str(", ");
                    }
                    source.push_str(&arg.key);
                    source.push('=');
                    source.push_str(&value.repr());
                }
                source.push(')');
                let parsed = syntax::parse(&source, self.limits);
                FoundCall {
                    name: call.name,
                    span: call.span,
                    origin,
                    source,
                    parsed,
                    id: call.id,
                }
            }
            FormatArgs::Python(at) => {
                let source = text.get(at.range()).unwrap_or_default();
                let parsed = syntax::parse(source, self.limits).and_then(|e| {
                    e.as_call()?;
                    Ok(e)
                });
                let name = match &parsed {
                    Ok(crate::syntax::Expr {
                        kind: ExprKind::Call(c),
                        ..
                    }) => c.func.clone(),
                    _ => call.name,
                };
                FoundCall {
                    name,
                    span: span(at.start as usize, at.end as usize),
                    origin,
                    source: source.to_string(),
                    parsed,
                    id: call.id,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::front::{extract, IgnoreReason, Origin};
    use crate::Limits;

    #[test]
    fn formats_are_call_positions() {
        let tools = |n: &str| matches!(n, "add" | "multiply");
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": 8, \"b\": 1}<|tool_call_end|><|tool_calls_section_end|>";
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls.len(), 1, "{found:?}");
        assert_eq!(found.calls[0].source, "add(a=8, b=1)");
        assert_eq!(found.calls[0].id.as_deref(), Some("functions.add:0"));
        assert!(matches!(found.calls[0].origin, Origin::Format(_)));
        // Values written as text are read by type (here: no types known, so as JSON).
        let text = "<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7\n</parameter>\n</function>\n</tool_call>";
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls[0].source, "multiply(a=6, b=7)");
        // Harmony: the analysis channel is reasoning, the commentary channel holds the call.
        let text = "<|channel|>analysis<|message|>Call multiply(a=9, b=9)?<|end|><|start|>assistant<|channel|>commentary to=functions.add <|constrain|>json<|message|>{\"a\": 5, \"b\": 5}<|call|>";
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls.len(), 1, "{found:?}");
        assert_eq!(found.calls[0].source, "add(a=5, b=5)");
        assert!(found
            .ignored
            .iter()
            .any(|i| i.reason == IgnoreReason::Reasoning));
    }
}

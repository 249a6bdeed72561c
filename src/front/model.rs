//! The model formats ([`formats`]) as explicit call positions of the front door: the regions a
//! format claims are read by its reader, and each call it holds becomes a [`FoundCall`] whose
//! arguments go through the same JSON reader, limits and checks as every other form. Values a
//! format writes as text (Qwen3-Coder's and GLM's XML) are converted by the parameter's type,
//! as those models' own parsers do; a value that does not fit is that call's `Type` error.

use crate::error::{Error, ErrorKind, Span};
use crate::front::formats::{self, FormatArgs, FormatCall, ModelFormat, TextArg};
use crate::front::{json_form, moved_back, span, FoundCall, IgnoreReason, Origin, Reader};
use crate::syntax::{self, Call, Expr, ExprKind, Keyword};

/// Spans, asked whether one of them holds a given span: in `O(log n)`, so that a text of tens of
/// thousands of a format's calls and markup pieces is read in linear time (each piece looked
/// up among every call was quadratic: 0.7 s for 1 MB of `<|tools_prefix|>`).
struct Cover {
    /// The starts, ascending.
    starts: Vec<u32>,
    /// For each start, the furthest end of the spans starting there or before.
    reach: Vec<u32>,
}

impl Cover {
    fn new(spans: impl Iterator<Item = Span>) -> Cover {
        let mut spans: Vec<Span> = spans.collect();
        spans.sort_by_key(|s| s.start);
        let starts = spans.iter().map(|s| s.start).collect();
        let reach = spans
            .iter()
            .scan(0, |far, s| {
                *far = s.end.max(*far);
                Some(*far)
            })
            .collect();
        Cover { starts, reach }
    }

    /// Whether a span starting at or before `s` ends at or after it: one of them holds `s`.
    fn holds(&self, s: Span) -> bool {
        let before = self.starts.partition_point(|&start| start <= s.start);
        before
            .checked_sub(1)
            .and_then(|i| self.reach.get(i))
            .is_some_and(|&far| far >= s.end)
    }
}

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
            let regions = Cover::new(
                claimed
                    .iter()
                    .zip(&owner)
                    .filter(|(_, o)| **o == k)
                    .map(|(s, _)| *s),
            );
            let inside = |s: Span| regions.holds(s);
            // What a call's own text holds is part of the call, not ignored text.
            let calls = Cover::new(reading.calls.iter().map(|c| c.span));
            let in_call = |s: Span| calls.holds(s);
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

    /// The call `call` of `format`: the tree of its name and arguments (JSON through
    /// [`json_form::call_from_args`], text values through [`formats::convert_text_arg`], each
    /// key a keyword as written), its source the call's stretch of the text, which every span
    /// indexes.
    fn format_call(&mut self, format: ModelFormat, call: FormatCall) -> FoundCall {
        let text = self.text;
        let origin = Origin::Format(format);
        let whole = call.span;
        let name_span = call
            .name_span
            .unwrap_or(Span::new(whole.start, whole.start));
        let tree = match call.args {
            FormatArgs::Broken(e) => Err(e),
            _ if call.name.is_empty() => {
                Err(Error::new(ErrorKind::Syntax, "the call names no function").at(whole))
            }
            FormatArgs::Python(at) => {
                // Python call text: a stretch of the text, parsed as it is.
                let source = text.get(at.range()).unwrap_or_default();
                let parsed = syntax::parse(source, self.limits).and_then(|e| {
                    e.as_call()?;
                    Ok(e)
                });
                let name = match &parsed {
                    Ok(Expr {
                        kind: ExprKind::Call(c),
                        ..
                    }) => c.func.clone(),
                    _ => call.name,
                };
                return FoundCall {
                    name,
                    span: span(at.start as usize, at.end as usize),
                    origin,
                    source: source.to_string(),
                    parsed,
                    id: call.id,
                };
            }
            FormatArgs::Json(args) => {
                json_form::call_from_args(&call.name, name_span, args, whole, text, self.limits)
            }
            FormatArgs::Text(args) => self.text_call(&call.name, name_span, args, whole),
        };
        // Every span moves into the call's own stretch of the text.
        let parsed = moved_back(tree, whole.start);
        FoundCall {
            name: call.name,
            span: whole,
            origin,
            source: text.get(whole.range()).unwrap_or_default().to_string(),
            parsed,
            id: call.id,
        }
    }

    /// The call to `name` whose arguments are written as text, each value read by its
    /// parameter's type; spans index the text.
    fn text_call(
        &self,
        name: &str,
        name_span: Span,
        args: Vec<TextArg>,
        whole: Span,
    ) -> Result<Expr, Error> {
        let mut kwargs = Vec::with_capacity(args.len());
        for arg in args {
            let ty = (self.param_type)(name, &arg.key);
            let value =
                formats::convert_text_arg(&arg, ty.as_ref(), self.limits).map_err(|e| Error {
                    message: format!(
                        "argument `{}`: {}",
                        syntax::keyword_in_call(&arg.key),
                        e.message
                    ),
                    span: Some(e.span.unwrap_or(arg.value_span)),
                    ..e
                })?;
            kwargs.push(Keyword {
                name: arg.key,
                name_span: arg.key_span,
                value,
            });
        }
        Ok(Expr {
            kind: ExprKind::Call(Call {
                func: name.to_string(),
                func_span: name_span,
                args: Vec::new(),
                kwargs,
            }),
            span: whole,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Cover;
    use crate::error::Span;
    use crate::front::{extract, IgnoreReason, Origin};
    use crate::syntax::ExprKind;
    use crate::Limits;
    use proptest::prelude::*;

    proptest! {
        /// `Cover::holds` is "some span holds it", for any spans (overlapping, nested, out of
        /// order, empty).
        #[test]
        fn a_cover_holds_what_one_of_its_spans_holds(
            spans in proptest::collection::vec((0u32..60, 0u32..20), 0..12),
            asked in (0u32..70, 0u32..20),
        ) {
            let spans: Vec<Span> = spans.iter().map(|&(a, n)| Span::new(a, a + n)).collect();
            let asked = Span::new(asked.0, asked.0 + asked.1);
            let linear = spans.iter().any(|r| asked.start >= r.start && asked.end <= r.end);
            prop_assert_eq!(Cover::new(spans.iter().copied()).holds(asked), linear);
        }
    }

    #[test]
    fn formats_are_call_positions() {
        let tools = |n: &str| matches!(n, "add" | "multiply");
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": 8, \"b\": 1}<|tool_call_end|><|tool_calls_section_end|>";
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls.len(), 1, "{found:?}");
        assert_eq!(found.calls[0].source, &text[found.calls[0].span.range()]);
        assert_eq!(
            found.calls[0].parsed.as_ref().unwrap().to_string(),
            "add(a=8, b=1)"
        );
        assert_eq!(found.calls[0].id.as_deref(), Some("functions.add:0"));
        assert!(matches!(found.calls[0].origin, Origin::Format(_)));
        // Values written as text are read by type (here: no types known, so as JSON).
        let text = "<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7\n</parameter>\n</function>\n</tool_call>";
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls[0].source, &text[found.calls[0].span.range()]);
        assert_eq!(
            found.calls[0].parsed.as_ref().unwrap().to_string(),
            "multiply(a=6, b=7)"
        );
        // Harmony: the analysis channel is reasoning, the commentary channel holds the call.
        let text = "<|channel|>analysis<|message|>Call multiply(a=9, b=9)?<|end|><|start|>assistant<|channel|>commentary to=functions.add <|constrain|>json<|message|>{\"a\": 5, \"b\": 5}<|call|>";
        let found = extract(text, &Limits::default(), &tools);
        assert_eq!(found.calls.len(), 1, "{found:?}");
        let call = &found.calls[0];
        assert_eq!(call.parsed.as_ref().unwrap().to_string(), "add(a=5, b=5)");
        // The call's own text is its stretch of the format, which its spans index.
        assert!(
            call.source
                .starts_with("<|start|>assistant<|channel|>commentary"),
            "{call:?}"
        );
        let ExprKind::Call(c) = &call.parsed.as_ref().unwrap().kind else {
            panic!()
        };
        assert_eq!(&call.source[c.func_span.range()], "add");
        assert_eq!(&call.source[c.kwargs[1].name_span.range()], "\"b\"");
        assert!(found
            .ignored
            .iter()
            .any(|i| i.reason == IgnoreReason::Reasoning));
    }
}

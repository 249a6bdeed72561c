//! Check: validate the calls in a model's output against the tools' signatures without running
//! anything: extract ([`crate::front`]), repair ([`crate::repair`]), evaluate the arguments
//! (pure: a nested tool call is refused, it would have to run), bind and coerce them to the
//! signature (nested records, arrays, enums). One [`Verdict`] per call.
//!
//! This is what an evaluation harness or a retry loop needs: `valid`, the arguments as written
//! (after repairs, by parameter name), the error with its span and hint, and the repairs made.
//!
//! ```
//! use fexpr::check::check_text;
//! use fexpr::repair::RepairOptions;
//! use fexpr::{Context, Limits};
//! use fexpr::context::Entry;
//! use fexpr::types::RecordType;
//!
//! let sig = RecordType::from_schema("get_weather", &serde_json::json!({"type": "object",
//!     "properties": {"city": {"type": "string"}, "metric": {"type": "boolean", "default": true}},
//!     "required": ["city"]}));
//! let mut ctx = Context::new();
//! ctx.insert("get_weather", Entry::Tool(std::sync::Arc::new(sig)));
//! let checked = check_text("get_weather(city='Paris', metric=false)<|eot_id|>", &ctx, &Limits::default(), &RepairOptions::default());
//! let v = &checked.verdicts[0];
//! assert!(v.valid);
//! assert_eq!(v.kwargs["metric"], fexpr::Value::Bool(false));
//! assert_eq!(v.repairs.len(), 1);
//! assert_eq!(v.to_json()["kwargs"], serde_json::json!({"city": "Paris", "metric": false}));
//! ```

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::context::{Context, Entry};
use crate::error::{clip, closest, Error, ErrorKind, Span};
use crate::eval;
use crate::front::{self, Extraction, FoundCall, Ignored};
use crate::limits::Limits;
use crate::repair::{repair_call, Repair, RepairOptions};
use crate::syntax::ExprKind;
use crate::value::Value;

/// The verdict on one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The callee.
    pub name: String,
    /// Where the call is in the checked text.
    pub span: Span,
    /// The call's own source (spans of the error and repairs index it).
    pub input: String,
    /// The arguments as written (after repairs), by parameter name, in the order written
    /// (positional arguments named by their parameter). `valid` says they bind to the signature
    /// and coerce to its types (an int for a float, a dict for a record, ...); defaults not
    /// written are not listed.
    pub kwargs: IndexMap<String, Value>,
    /// Whether the call fits the tool's signature.
    pub valid: bool,
    /// Why not.
    pub error: Option<Error>,
    /// Repairs made before checking.
    pub repairs: Vec<Repair>,
}

impl Verdict {
    /// `{"name", "kwargs", "valid", "error", "repairs", "span"}`.
    pub fn to_json(&self) -> Json {
        json!({
            "name": self.name,
            "kwargs": self.kwargs.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
            "valid": self.valid,
            "error": self.error.as_ref().map_or(Json::Null, |e| serde_json::to_value(e).unwrap_or(Json::Null)),
            "repairs": serde_json::to_value(&self.repairs).unwrap_or(Json::Null),
            "span": [self.span.start, self.span.end],
        })
    }
}

/// The verdicts on a whole model output, and what in it was not a call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// One verdict per call found, in order.
    pub verdicts: Vec<Verdict>,
    /// Text that was not used, with reasons.
    pub ignored: Vec<Ignored>,
    /// Set when the text was refused as a whole (too large).
    pub error: Option<Error>,
}

/// Whether `name` is a tool in `ctx`.
pub fn is_tool(ctx: &Context, name: &str) -> bool {
    matches!(ctx.get(name), Some(Entry::Tool(_)))
}

/// Extract the calls in `text` and check each against the tools in `ctx`.
pub fn check_text(text: &str, ctx: &Context, limits: &Limits, options: &RepairOptions) -> Checked {
    let Extraction {
        calls,
        ignored,
        error,
    } = front::extract(text, limits, &|name| is_tool(ctx, name));
    Checked {
        verdicts: calls
            .iter()
            .map(|c| check_call(c, ctx, limits, options))
            .collect(),
        ignored,
        error,
    }
}

/// Check one extracted call.
pub fn check_call(
    found: &FoundCall,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
) -> Verdict {
    let mut verdict = Verdict {
        name: found.name.clone(),
        span: found.span,
        input: found.source.clone(),
        kwargs: IndexMap::new(),
        valid: false,
        error: None,
        repairs: Vec::new(),
    };
    match check_parsed(found, ctx, limits, options, &mut verdict) {
        Ok(kwargs) => {
            verdict.kwargs = kwargs;
            verdict.valid = true;
        }
        Err(e) => verdict.error = Some(e),
    }
    verdict
}

fn check_parsed(
    found: &FoundCall,
    ctx: &Context,
    limits: &Limits,
    options: &RepairOptions,
    verdict: &mut Verdict,
) -> Result<IndexMap<String, Value>, Error> {
    let mut expr = found.parsed.clone()?;
    let Some(Entry::Tool(sig)) = ctx.get(&found.name) else {
        let tools = ctx
            .entries()
            .filter(|(_, e)| matches!(e, Entry::Tool(_)))
            .map(|(n, _)| n);
        let mut e = Error::new(
            ErrorKind::UnknownTool,
            format!("tool `{}` is not defined", clip(&found.name, 60)),
        )
        .at(expr.span);
        if let Some(near) = closest(&found.name, tools) {
            e = e.with_hint(format!("did you mean `{near}`?"));
        }
        return Err(e);
    };
    let sig = sig.clone();
    verdict.repairs = repair_call(&mut expr, &sig, ctx, options);
    let ExprKind::Call(call) = &expr.kind else {
        return Err(Error::new(ErrorKind::Unsupported, "expected a function call").at(expr.span));
    };
    // The call's shape first, with the keywords' own spans (binding knows only the values').
    let keywords = call.kwargs.iter().map(|k| (k.name.as_str(), k.name_span));
    sig.check_keywords(call.args.len(), keywords, expr.span)?;
    let args = call
        .args
        .iter()
        .map(|a| eval::eval_pure(a, ctx, limits).map(|v| (v, a.span)))
        .collect::<Result<Vec<_>, _>>()?;
    let kwargs = call
        .kwargs
        .iter()
        .map(|k| eval::eval_pure(&k.value, ctx, limits).map(|v| (k.name.clone(), v, k.value.span)))
        .collect::<Result<Vec<_>, _>>()?;
    // The arguments as written (after repairs), by parameter name; binding checks them.
    let mut out = IndexMap::new();
    for (field, (value, _)) in sig.fields.iter().zip(&args) {
        out.insert(field.name.clone(), value.clone());
    }
    for (name, value, _) in &kwargs {
        out.insert(name.clone(), value.clone());
    }
    sig.bind(args, kwargs, expr.span)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::RecordType;
    use serde_json::json;
    use std::sync::Arc;

    fn ctx() -> Context {
        let mut ctx = Context::new();
        let sig = RecordType::from_schema(
            "area",
            &json!({"type": "object", "properties": {
                "base": {"type": "integer"}, "height": {"type": "number"},
                "unit": {"type": "string", "enum": ["m", "cm"]}}, "required": ["base", "height"]}),
        );
        ctx.insert("area", Entry::Tool(Arc::new(sig)));
        ctx
    }

    fn check(text: &str) -> Checked {
        check_text(text, &ctx(), &Limits::default(), &RepairOptions::default())
    }

    #[test]
    fn valid_calls_are_bound_and_coerced() {
        let c = check("area(10, height=5)");
        let v = &c.verdicts[0];
        assert!(v.valid, "{:?}", v.error);
        assert_eq!(v.to_json()["kwargs"], json!({"base": 10, "height": 5}));
    }

    #[test]
    fn invalid_calls_say_why() {
        let c = check("area(base=1.5, height=2)\narea(base=1, height=2, unit='km')\naree(base=1)");
        let errors: Vec<ErrorKind> = c
            .verdicts
            .iter()
            .map(|v| v.error.as_ref().unwrap().kind)
            .collect();
        assert_eq!(
            errors,
            [ErrorKind::Type, ErrorKind::Type, ErrorKind::UnknownTool]
        );
        assert_eq!(
            c.verdicts[2].error.as_ref().unwrap().hint.as_deref(),
            Some("did you mean `area`?")
        );
    }

    #[test]
    fn strict_mode_repairs_nothing() {
        let strict = check_text(
            "area(base=2.0, height=1)",
            &ctx(),
            &Limits::default(),
            &RepairOptions::strict(),
        );
        assert!(!strict.verdicts[0].valid);
        let lenient = check("area(base=2.0, height=1)");
        assert!(lenient.verdicts[0].valid);
        assert_eq!(lenient.verdicts[0].repairs[0].from, "2.0");
    }

    #[test]
    fn nested_tool_calls_are_refused() {
        let c = check("area(base=area(base=1, height=1), height=1)");
        assert_eq!(
            c.verdicts[0].error.as_ref().unwrap().kind,
            ErrorKind::Unsupported
        );
    }
}

/// What running a model's output produced: one output per call found, and the text not used.
#[cfg(feature = "native")]
#[derive(Clone, Debug, PartialEq)]
pub struct Executed {
    /// One output per call found, in order (repairs recorded on each).
    pub outputs: Vec<crate::call::FunctionOutput>,
    /// Text that was not used, with reasons.
    pub ignored: Vec<Ignored>,
}

#[cfg(feature = "native")]
impl crate::ToolManager {
    /// [`check_text`] against this manager's tools, context and limits, with every repair on.
    pub fn check_model_output(&self, text: &str) -> Checked {
        self.check_model_output_with(text, &RepairOptions::default())
    }

    /// [`check_text`] with the given repairs.
    pub fn check_model_output_with(&self, text: &str, options: &RepairOptions) -> Checked {
        check_text(text, self.get_context(), self.get_limits(), options)
    }

    /// Run the calls in raw model output (prose, fences, chat tokens, JSON forms: see
    /// [`crate::front`]), each repaired against its tool's signature (every repair on) and run
    /// natively, concurrently. Text that is not a call is returned in `ignored`.
    ///
    /// ```
    /// let manager = fexpr::demo::manager();
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let run = rt.block_on(manager.execute_model_output("Let me add them.\n```python\nadd(a=2.0, b=3)\n```<end_of_turn>"));
    /// assert_eq!(run.outputs[0].output, Some(fexpr::Value::Int(5)));
    /// assert_eq!(run.outputs[0].repairs[0].from, "2.0");
    /// assert_eq!(run.ignored.len(), 4); // the prose, two fence markers, the chat token
    /// ```
    pub async fn execute_model_output(&self, text: &str) -> Executed {
        self.execute_model_output_with(text, &RepairOptions::default())
            .await
    }

    /// [`execute_model_output`](Self::execute_model_output) with the given repairs.
    pub async fn execute_model_output_with(&self, text: &str, options: &RepairOptions) -> Executed {
        let (prepared, ignored) = self.prepare_model_output(text, options);
        let runs = prepared.into_iter().map(|p| async move {
            match p {
                Ok((source, repairs, id)) => {
                    with_repairs(self.execute(&source).await, &source, repairs, id)
                }
                Err(failed) => *failed,
            }
        });
        Executed {
            outputs: futures_util::future::join_all(runs).await,
            ignored,
        }
    }

    /// [`execute_model_output_with`](Self::execute_model_output_with) with each call evaluated
    /// inside the wasmtime sandbox: the call, repaired on the host, is printed back to source
    /// and that text is sent to a fresh guest instance.
    #[cfg(feature = "sandbox")]
    pub async fn execute_model_output_via_sandbox(
        &self,
        text: &str,
        options: &RepairOptions,
    ) -> Executed {
        let (prepared, ignored) = self.prepare_model_output(text, options);
        let runs = prepared.into_iter().map(|p| async move {
            match p {
                Ok((source, repairs, id)) => with_repairs(
                    self.execute_via_sandbox(&source).await,
                    &source,
                    repairs,
                    id,
                ),
                Err(failed) => *failed,
            }
        });
        Executed {
            outputs: futures_util::future::join_all(runs).await,
            ignored,
        }
    }

    /// Extract and repair: per call, the source to run and its repairs, or its failure.
    #[allow(clippy::type_complexity)]
    fn prepare_model_output(
        &self,
        text: &str,
        options: &RepairOptions,
    ) -> (
        Vec<Result<(String, Vec<Repair>, Option<String>), Box<crate::call::FunctionOutput>>>,
        Vec<Ignored>,
    ) {
        use crate::call::FunctionOutput;
        let ctx = self.get_context();
        let extraction = front::extract(text, self.get_limits(), &|name| is_tool(ctx, name));
        if let Some(e) = extraction.error {
            return (
                vec![Err(Box::new(FunctionOutput::failed("", clip(text, 60), e)))],
                extraction.ignored,
            );
        }
        let prepared = extraction
            .calls
            .into_iter()
            .map(|found| match found.parsed {
                Err(e) => {
                    let mut out = FunctionOutput::failed(found.name, found.source, e);
                    if let Some(id) = found.id {
                        out.call_id = id;
                    }
                    Err(Box::new(out))
                }
                Ok(mut expr) => {
                    let repairs = match ctx.get(&found.name) {
                        Some(Entry::Tool(sig)) => repair_call(&mut expr, sig, ctx, options),
                        _ => Vec::new(),
                    };
                    if repairs.is_empty() {
                        Ok((found.source, repairs, found.id))
                    } else {
                        Ok((expr.to_string(), repairs, found.id))
                    }
                }
            })
            .collect();
        (prepared, extraction.ignored)
    }
}

/// The one output of one call's source, with its repairs.
#[cfg(feature = "native")]
fn with_repairs(
    mut outputs: Vec<crate::call::FunctionOutput>,
    source: &str,
    repairs: Vec<Repair>,
    id: Option<String>,
) -> crate::call::FunctionOutput {
    let mut out = if outputs.len() == 1 {
        outputs.remove(0)
    } else {
        crate::call::FunctionOutput::failed(
            clip(source, 60),
            source,
            Error::new(
                ErrorKind::Unsupported,
                format!("expected one call, found {}", outputs.len()),
            ),
        )
    };
    out.repairs = repairs;
    if let Some(id) = id {
        out.call_id = id;
    }
    out
}

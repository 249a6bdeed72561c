//! Model formats: the raw tool-call text open models write, one small reader per format.
//!
//! Served models answer in their own markup, which the serving engines (vLLM's tool parsers,
//! SGLang's detectors) turn into calls. [`read`] does the same for each [`ModelFormat`], and
//! only that: it finds each call's name, id and arguments *as text* ([`FormatArgs`]: a JSON
//! object's span, values written as text, or Python call text) and leaves reading the
//! arguments to the caller, which applies the same limits and checks as everywhere else.
//!
//! Each reader is linear in the text and never recurses on input. A call is complete when its
//! closing token or bracket is read, so any prefix of a valid text reads as that text's
//! complete calls plus, at most, one [`FormatArgs::Broken`] call for the one cut off (with its
//! name when that was read): what a stream has complete never changes as more text arrives.
//! Calls written inside reasoning (a `<think>` block, even an unclosed one; Harmony's
//! `analysis` channel; Magistral's `[THINK]`) are not read.
//!
//! ```
//! use fexpr::front::formats::{detect, read, FormatArgs, ModelFormat};
//! use fexpr::Limits;
//!
//! let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.add:0\
//!             <|tool_call_argument_begin|>{\"a\": 8, \"b\": 1}<|tool_call_end|>\
//!             <|tool_calls_section_end|>";
//! assert_eq!(detect(text), [ModelFormat::KimiK2]);
//! let reading = read(ModelFormat::KimiK2, text, &Limits::default());
//! let call = &reading.calls[0];
//! assert_eq!((call.name.as_str(), call.id.as_deref()), ("add", Some("functions.add:0")));
//! let FormatArgs::Json(args) = &call.args else { panic!() };
//! assert_eq!(&text[args.range()], "{\"a\": 8, \"b\": 1}");
//! ```

mod convert;
mod deepseek;
mod gemma;
mod glm;
mod granite;
mod harmony;
mod hermes;
mod kimi;
mod llama31;
mod mistral;
mod phi4;
mod pythonic;
mod qwen_xml;
mod scan;
mod xlam;

pub use convert::convert_text_arg;

use serde::{Deserialize, Serialize};

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::front::IgnoreReason;
use crate::limits::Limits;

/// A raw tool-call format an open model writes.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelFormat {
    /// Qwen3-Coder: `<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>`.
    #[serde(rename = "qwen3-coder")]
    QwenXml,
    /// GLM-4.5/4.6: `<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>`.
    Glm,
    /// Kimi K2: `<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}<|tool_call_end|>`.
    KimiK2,
    /// DeepSeek V3, V3.1 and R1: `<｜tool▁call▁begin｜>…<｜tool▁sep｜>…<｜tool▁call▁end｜>`.
    #[serde(rename = "deepseek")]
    DeepSeek,
    /// gpt-oss (Harmony): `<|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>`.
    Harmony,
    /// Mistral: `[TOOL_CALLS] [{"name", "arguments"}]` (before v11) and `[TOOL_CALLS]f{…}` (v11+).
    Mistral,
    /// Llama 3.1: `<function=f>{…}</function>` and `<|python_tag|>{"name", "parameters"}`.
    #[serde(rename = "llama3.1")]
    Llama31,
    /// IBM Granite 3: `<|tool_call|>[{"name", "arguments"}]` (and Granite 4's `<tool_call>` JSON).
    Granite,
    /// Phi-4-mini: `functools[{"name", "arguments"}]`.
    #[serde(rename = "phi4")]
    Phi4,
    /// Salesforce xLAM: a JSON list of `{"name", "arguments"}`, maybe fenced, or `{"tool_calls": […]}`.
    Xlam,
    /// Gemma: ```` ```tool_code\nprint(f(a=1))\n``` ````.
    Gemma,
    /// Hermes and Qwen2.5/Qwen3: `<tool_call>{"name", "arguments"}</tool_call>`.
    Hermes,
    /// Llama 3.2 and 4: `[f(a=1), g(b=2)]`, in Llama 4 between `<|python_start|>` and `<|python_end|>`.
    Pythonic,
}

impl ModelFormat {
    /// Every format, in the order [`detect`] tries them (most specific first).
    pub const ALL: &'static [ModelFormat] = &[
        ModelFormat::Harmony,
        ModelFormat::KimiK2,
        ModelFormat::DeepSeek,
        ModelFormat::QwenXml,
        ModelFormat::Glm,
        ModelFormat::Llama31,
        ModelFormat::Pythonic,
        ModelFormat::Granite,
        ModelFormat::Mistral,
        ModelFormat::Phi4,
        ModelFormat::Gemma,
        ModelFormat::Hermes,
        ModelFormat::Xlam,
    ];

    /// The format's name, as `--model-format` takes it.
    ///
    /// ```
    /// use fexpr::front::formats::ModelFormat;
    /// assert_eq!(ModelFormat::QwenXml.name(), "qwen3-coder");
    /// assert_eq!("llama3.1".parse::<ModelFormat>().unwrap(), ModelFormat::Llama31);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ModelFormat::QwenXml => "qwen3-coder",
            ModelFormat::Glm => "glm",
            ModelFormat::KimiK2 => "kimi-k2",
            ModelFormat::DeepSeek => "deepseek",
            ModelFormat::Harmony => "harmony",
            ModelFormat::Mistral => "mistral",
            ModelFormat::Llama31 => "llama3.1",
            ModelFormat::Granite => "granite",
            ModelFormat::Phi4 => "phi4",
            ModelFormat::Xlam => "xlam",
            ModelFormat::Gemma => "gemma",
            ModelFormat::Hermes => "hermes",
            ModelFormat::Pythonic => "pythonic",
        }
    }
}

impl std::fmt::Display for ModelFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ModelFormat {
    type Err = Error;

    /// A format by its [name](ModelFormat::name); an unknown name is an error listing the names.
    ///
    /// ```
    /// use fexpr::front::formats::ModelFormat;
    /// let e = "kimi_k2".parse::<ModelFormat>().unwrap_err();
    /// assert!(e.hint.unwrap().starts_with("did you mean `kimi-k2`?"));
    /// ```
    fn from_str(s: &str) -> Result<ModelFormat, Error> {
        if let Some(format) = ModelFormat::ALL.iter().find(|f| f.name() == s) {
            return Ok(*format);
        }
        let names: Vec<&str> = ModelFormat::ALL.iter().map(|f| f.name()).collect();
        Err(Error::new(
            ErrorKind::Config,
            format!("unknown model format `{}`", clip(s, 40)),
        )
        .with_hint(format!("the formats are: {}", names.join(", ")))
        .suggest(s, names.iter().copied()))
    }
}

/// One call a format holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormatCall {
    /// The tool's name as written (without Kimi's `functions.` and `:0`, Harmony's
    /// `functions.`); `""` if it was not read.
    pub name: String,
    /// Where the name is in the text.
    pub name_span: Option<Span>,
    /// The call's whole stretch, its tags and tokens included.
    pub span: Span,
    /// Its arguments, as the format wrote them.
    pub args: FormatArgs,
    /// The id the model gave the call (Kimi's `functions.add:0`, Mistral's `[CALL_ID]`, a JSON
    /// call's `"id"`), if any.
    pub id: Option<String>,
}

/// A call's arguments, as the format wrote them; every span indexes the text read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FormatArgs {
    /// A JSON object's text (for the caller's JSON reader and its limits). When the model wrote
    /// the object as a JSON string (`"arguments": "{\"a\": 1}"`), the span is that string's.
    Json(Span),
    /// Values written as text (the XML forms), each converted by its parameter's type with
    /// [`convert_text_arg`]. Also a call written without arguments (an empty list).
    Text(Vec<TextArg>),
    /// Python call text (Gemma's `tool_code`, Llama's pythonic lists and `<|python_tag|>` calls).
    Python(Span),
    /// Malformed or cut off: why (a `Syntax` error located in the text).
    Broken(Error),
}

/// An argument written as text: `<parameter=a>\n6\n</parameter>`, `<arg_key>a</arg_key>…`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextArg {
    /// The parameter's name.
    pub key: String,
    /// Where the name is.
    pub key_span: Span,
    /// The value as written (Qwen3-Coder: one leading and one trailing newline taken off).
    pub value: String,
    /// Where the value is.
    pub value_span: Span,
}

/// What [`read`] found: the calls, and what else the format wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FormatReading {
    /// The calls, in order (a malformed or cut-off one with [`FormatArgs::Broken`]).
    pub calls: Vec<FormatCall>,
    /// The format's tokens, tags, headers and fences outside the calls, and stray text inside
    /// a region it owns (as [`IgnoreReason::Prose`]).
    pub markup: Vec<(Span, IgnoreReason)>,
    /// Reasoning: `<think>` blocks, Harmony's `analysis` channel, Magistral's `[THINK]`.
    pub reasoning: Vec<Span>,
    /// The regions the format owns (its calls, sections, messages and reasoning), in order and
    /// apart: nothing else is read as calls inside them.
    pub claimed: Vec<Span>,
}

/// The formats whose markers `text` holds, most specific first (one pass per format over the
/// text, each linear). xLAM writes plain JSON and Llama 3.2 plain Python lists, which the front
/// door reads as they are: those two are found only by their own markers (Llama 4's
/// `<|python_start|>`) or chosen by name.
///
/// ```
/// use fexpr::front::formats::{detect, ModelFormat};
/// assert_eq!(detect("<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"),
///            [ModelFormat::QwenXml]);
/// assert_eq!(detect("[TOOL_CALLS]add{\"a\": 1}"), [ModelFormat::Mistral]);
/// assert!(detect("add(a=1, b=2)").is_empty());
/// ```
pub fn detect(text: &str) -> Vec<ModelFormat> {
    // Every format's markers hold its marker byte: a format is searched for only in text that
    // holds it (a list of calls, `[f(a=[1, 2])]`, is not searched for tags).
    let (mut angle, mut square, mut tick) = (false, false, false);
    for c in text.bytes() {
        match c {
            b'<' => angle = true,
            b'[' => square = true,
            b'`' => tick = true,
            _ => {}
        }
    }
    if !(angle || square || tick) {
        return Vec::new();
    }
    ModelFormat::ALL
        .iter()
        .copied()
        .filter(|f| match marker_byte(*f) {
            Some(b'<') => angle,
            Some(b'[') => square,
            Some(b'`') => tick,
            _ => false,
        })
        .filter(|f| holds_markers(*f, text))
        .collect()
}

/// The byte every marker of `format` holds (see [`holds_markers`]): `[` for Mistral's
/// `[TOOL_CALLS]` and Phi-4's `functools[`, a backtick for Gemma's fence, `<` for the tags and
/// special tokens of the rest; none for xLAM, which has no markers.
fn marker_byte(format: ModelFormat) -> Option<u8> {
    match format {
        ModelFormat::Mistral | ModelFormat::Phi4 => Some(b'['),
        ModelFormat::Gemma => Some(b'`'),
        ModelFormat::Xlam => None,
        ModelFormat::Harmony
        | ModelFormat::KimiK2
        | ModelFormat::DeepSeek
        | ModelFormat::QwenXml
        | ModelFormat::Glm
        | ModelFormat::Llama31
        | ModelFormat::Pythonic
        | ModelFormat::Granite
        | ModelFormat::Hermes => Some(b'<'),
    }
}

fn holds_markers(format: ModelFormat, text: &str) -> bool {
    let b = text.as_bytes();
    match format {
        ModelFormat::Harmony => text.contains("<|channel|>") || text.contains("<|start|>assistant"),
        ModelFormat::KimiK2 => text.contains("<|tool_call_begin|>"),
        ModelFormat::DeepSeek => text.contains(deepseek::CALL_BEGIN),
        ModelFormat::QwenXml => scan::function_tags(text).any(|(_, body)| {
            let rest = &text[scan::skip_ws(b, body)..];
            rest.starts_with("<parameter=") || rest.starts_with("</function>")
        }),
        ModelFormat::Glm => text.contains("<tool_call>") && text.contains("<arg_key>"),
        ModelFormat::Llama31 => {
            text.contains("<|python_tag|>")
                || scan::function_tags(text)
                    .any(|(_, body)| b.get(scan::skip_ws(b, body)) == Some(&b'{'))
        }
        ModelFormat::Pythonic => text.contains("<|python_start|>"),
        ModelFormat::Granite => text.contains("<|tool_call|>") || tag_then_list_of_objects(text),
        ModelFormat::Mistral => text.contains("[TOOL_CALLS]"),
        ModelFormat::Phi4 => text.contains("functools["),
        ModelFormat::Gemma => text.contains("```tool_code"),
        ModelFormat::Hermes => tag_then(text, b'{'),
        ModelFormat::Xlam => false,
    }
}

/// Whether a `<tool_call>` tag is followed (after blanks) by a JSON list of objects (`[{`):
/// Granite's form, not a Python list of calls in a tag.
fn tag_then_list_of_objects(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(p) = scan::find(text, from, "<tool_call>") {
        let body = scan::skip_ws(b, p + "<tool_call>".len());
        if b.get(body) == Some(&b'[') && b.get(scan::skip_ws(b, body + 1)) == Some(&b'{') {
            return true;
        }
        from = p + 1;
    }
    false
}

/// Whether a `<tool_call>` tag is followed (after blanks) by `first`.
fn tag_then(text: &str, first: u8) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(p) = scan::find(text, from, "<tool_call>") {
        let body = scan::skip_ws(b, p + "<tool_call>".len());
        if b.get(body) == Some(&first) {
            return true;
        }
        from = p + 1;
    }
    false
}

/// Read `text` as `format`: linear in the text, bounded, never panics. Any prefix of a valid
/// text reads as its complete calls plus one [`FormatArgs::Broken`] call for the cut-off one
/// (its name set if it was read). A text over [`Limits::max_source_bytes`] is one broken call
/// with the `Limit` error.
///
/// ```
/// use fexpr::front::formats::{read, FormatArgs, ModelFormat};
/// use fexpr::Limits;
///
/// let text = "<tool_call>\n<function=multiply>\n<parameter=a>\n6\n</parameter>\n<parameter=b>\n7\n</parameter>\n</function>\n</tool_call>";
/// let reading = read(ModelFormat::QwenXml, text, &Limits::default());
/// let FormatArgs::Text(args) = &reading.calls[0].args else { panic!() };
/// let pairs: Vec<(&str, &str)> = args.iter().map(|a| (a.key.as_str(), a.value.as_str())).collect();
/// assert_eq!(pairs, [("a", "6"), ("b", "7")]);
///
/// // Cut off: the call is broken, its name kept.
/// let cut = read(ModelFormat::QwenXml, &text[..40], &Limits::default());
/// assert_eq!(cut.calls[0].name, "multiply");
/// assert!(matches!(cut.calls[0].args, FormatArgs::Broken(_)));
/// ```
pub fn read(format: ModelFormat, text: &str, limits: &Limits) -> FormatReading {
    // Spans are `u32`: a longer text is refused whatever the limit, as the JSON reader does.
    let max = limits.max_source_bytes.min(u32::MAX as usize);
    if text.len() > max {
        let error = Error::limit(LimitKind::SourceBytes, max, text.len());
        let mut out = scan::Out::default();
        out.broken("", None, 0, text.len(), error);
        return out.finish();
    }
    let mut out = scan::Out::default();
    match format {
        ModelFormat::QwenXml => qwen_xml::read(text, &mut out),
        ModelFormat::Glm => glm::read(text, &mut out),
        ModelFormat::KimiK2 => kimi::read(text, &mut out),
        ModelFormat::DeepSeek => deepseek::read(text, &mut out),
        ModelFormat::Harmony => harmony::read(text, &mut out),
        ModelFormat::Mistral => mistral::read(text, &mut out),
        ModelFormat::Llama31 => llama31::read(text, &mut out),
        ModelFormat::Granite => granite::read(text, &mut out),
        ModelFormat::Phi4 => phi4::read(text, &mut out),
        ModelFormat::Xlam => xlam::read(text, &mut out),
        ModelFormat::Gemma => gemma::read(text, &mut out),
        ModelFormat::Hermes => hermes::read(text, &mut out),
        ModelFormat::Pythonic => pythonic::read(text, &mut out),
    }
    out.finish()
}

#[cfg(test)]
mod tests;

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
//! Calls written inside reasoning (a block of any of the reasoning markers of every format:
//! `<think>`, `<seed:think>`, `[THINK]`, Harmony's `analysis` channel, …, even an unclosed
//! one; see `reasoning.rs`) are not read, and neither are markers inside data: every reader
//! looks for its markers through the front door's lexical reading ([`crate::front::lex`]),
//! which steps over strings, comments, inline code and quoted values, so
//! `search(query='<tool_call>…')` holds no call of any format.
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

mod apertus;
mod command_r;
mod convert;
mod deepseek;
mod dsml;
mod functionary;
mod gemma;
mod gemma4;
mod glm;
mod granite;
mod harmony;
mod hermes;
mod invoke;
mod kimi;
mod kimi_k3;
mod llama31;
mod minicpm;
mod minimax;
mod mistral;
mod phi4;
mod pythonic;
mod qwen_xml;
pub(crate) mod reasoning;
mod scan;
mod seed_oss;
mod step3;
mod xlam;

pub use convert::convert_text_arg;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::front::IgnoreReason;
use crate::limits::Limits;

/// A raw tool-call format an open model writes. Everything else known of a format is its
/// entry in the table of formats, `FORMATS` (its name, markers, reader); its `serde` form is its name.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelFormat {
    /// gpt-oss (Harmony): `<|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>`.
    Harmony,
    /// Kimi K2: `<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}<|tool_call_end|>`.
    KimiK2,
    /// Kimi K3 (XTML): `<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|>…<|close|>call<|sep|>…`.
    KimiK3,
    /// DeepSeek V3, V3.1 and R1: `<｜tool▁call▁begin｜>…<｜tool▁sep｜>…<｜tool▁call▁end｜>`.
    DeepSeek,
    /// DeepSeek V3.2 and V4 (DSML): `<｜DSML｜function_calls><｜DSML｜invoke name="f">…`.
    DeepSeekDsml,
    /// Step3: `<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="f">…`.
    Step3,
    /// Gemma 4: `<|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|>`.
    Gemma4,
    /// FunctionGemma: `<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>`.
    FunctionGemma,
    /// Command R7B and Command A: `<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>`.
    CommandR,
    /// Apertus: `<|tools_prefix|>[{"f": {…}}]<|tools_suffix|>`.
    Apertus,
    /// MiniMax-M2: `<minimax:tool_call><invoke name="f"><parameter name="a">1</parameter></invoke>…`.
    MiniMaxM2,
    /// MiniCPM5: `<function name="f"><param name="a">1</param></function>`.
    MiniCpm5,
    /// Seed-OSS: `<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>`.
    SeedOss,
    /// Qwen3-Coder: `<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>`.
    QwenXml,
    /// GLM-4.5/4.6/4.7: `<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>`.
    Glm,
    /// Llama 3.1: `<function=f>{…}</function>`, `<|python_tag|>{"name", "parameters"}` and
    /// JSON calls separated by `;`.
    Llama31,
    /// Functionary v3.2: `>>>f\n{…}`, text to the user after `>>>all\n` (the answer's first
    /// part without its `>>>`).
    Functionary,
    /// Llama 3.2 and 4: `[f(a=1), g(b=2)]`, in Llama 4 between `<|python_start|>` and `<|python_end|>`.
    Pythonic,
    /// IBM Granite: `<|tool_call|>[{"name", "arguments"}]` (Granite 3), Granite 4's `<tool_call>`
    /// JSON and Granite 20B FC's `<function_call> {…}`.
    Granite,
    /// Mistral: `[TOOL_CALLS] [{"name", "arguments"}]` (before v11) and `[TOOL_CALLS]f{…}` (v11+).
    Mistral,
    /// Phi-4-mini: `functools[{"name", "arguments"}]`.
    Phi4,
    /// Gemma: ```` ```tool_code\nprint(f(a=1))\n``` ````.
    Gemma,
    /// Hermes and Qwen2.5/Qwen3: `<tool_call>{"name", "arguments"}</tool_call>`.
    Hermes,
    /// Salesforce xLAM: a JSON list of `{"name", "arguments"}`, maybe fenced, or `{"tool_calls": […]}`.
    Xlam,
}

/// What the crate knows of one format, in one place: adding a format is a [`ModelFormat`]
/// variant, its reader module with its `SPEC`, and that `SPEC` in [`FORMATS`].
struct Spec {
    /// Its variant.
    format: ModelFormat,
    /// Its name, as `--model-format` and `serde` take it.
    name: &'static str,
    /// How the format's markers begin: every marker starts with one of these (a byte, or the
    /// first two bytes); it is searched for only in text holding one of them (empty: found
    /// only by name).
    marker_starts: &'static [&'static [u8]],
    /// Whether the front door reads it when its markers are found and no format is named
    /// (false: the rest of the front door reads its markup itself, and it is read only by name).
    found_by_markers: bool,
    /// Whether `text` holds the format's markers.
    holds_markers: fn(&str) -> bool,
    /// The reader.
    read: fn(&str, &mut scan::Out),
}

/// Every format, in the order [`detect`] tries them (most specific first), each at the index
/// of its variant.
const FORMATS: &[Spec] = &[
    harmony::SPEC,
    kimi::SPEC,
    kimi_k3::SPEC,
    deepseek::SPEC,
    dsml::SPEC,
    step3::SPEC,
    gemma4::SPEC,
    gemma4::FUNCTION_GEMMA,
    command_r::SPEC,
    apertus::SPEC,
    minimax::SPEC,
    minicpm::SPEC,
    seed_oss::SPEC,
    qwen_xml::SPEC,
    glm::SPEC,
    llama31::SPEC,
    functionary::SPEC,
    pythonic::SPEC,
    granite::SPEC,
    mistral::SPEC,
    phi4::SPEC,
    gemma::SPEC,
    hermes::SPEC,
    xlam::SPEC,
];

/// Every format in [`FORMATS`] is at its variant's index (checked when the crate compiles).
const _: () = {
    let mut i = 0;
    while i < FORMATS.len() {
        assert!(FORMATS[i].format as usize == i, "FORMATS out of order");
        i += 1;
    }
};

const fn all_formats<const N: usize>() -> [ModelFormat; N] {
    let mut out = [ModelFormat::Harmony; N];
    let mut i = 0;
    while i < N {
        out[i] = FORMATS[i].format;
        i += 1;
    }
    out
}

const ALL_FORMATS: [ModelFormat; FORMATS.len()] = all_formats();

impl ModelFormat {
    /// Every format, in the order [`detect`] tries them (most specific first).
    pub const ALL: &'static [ModelFormat] = &ALL_FORMATS;

    /// Its entry in [`FORMATS`].
    fn spec(self) -> &'static Spec {
        &FORMATS[self as usize]
    }

    /// The format's name, as `--model-format` takes it.
    ///
    /// ```
    /// use fexpr::front::formats::ModelFormat;
    /// assert_eq!(ModelFormat::QwenXml.name(), "qwen3-coder");
    /// assert_eq!("llama3.1".parse::<ModelFormat>().unwrap(), ModelFormat::Llama31);
    /// ```
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Whether the front door reads this format when it finds its markers and no format is
    /// named. The others (Hermes tags, Gemma's `tool_code`, xLAM's JSON, pythonic lists) are
    /// plain JSON or Python in call position, read by the front door's own rules unless the
    /// format is named.
    ///
    /// ```
    /// use fexpr::front::formats::ModelFormat;
    /// assert!(ModelFormat::QwenXml.found_by_markers());
    /// assert!(!ModelFormat::Hermes.found_by_markers());
    /// ```
    pub fn found_by_markers(self) -> bool {
        self.spec().found_by_markers
    }
}

impl Serialize for ModelFormat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ModelFormat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ModelFormat, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse()
            .map_err(|e: Error| serde::de::Error::custom(e.message))
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
        if let Some(spec) = FORMATS.iter().find(|f| f.name == s) {
            return Ok(spec.format);
        }
        let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
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
    /// Whether the model wrote the value as a string (DeepSeek DSML's `string="true"`, Gemma
    /// 4's `<|"|>…<|"|>`, FunctionGemma's `<escape>…<escape>`): a string as written, whatever
    /// its parameter's type, as those formats' own parsers read it.
    #[serde(default)]
    pub quoted: bool,
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

/// The formats whose markers `text` holds, most specific first (one pass over the text for
/// the bytes the formats' markers start with, then one per format that can be there, each
/// linear). xLAM writes plain JSON and Llama 3.2 plain Python lists, which the front
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
    // Every marker of a format starts with one of its `marker_starts`: a format is searched for
    // only in text that holds one (a list of calls, `[f(a=[1, 2])]`, is not searched for tags,
    // nor Hermes' `<tool_call>{` for `<|` tokens). Each start is looked for once, by `memchr` of
    // its first byte (JSON text holds no `<`: no tag format is searched in it, and the text is
    // not walked byte by byte).
    let b = text.as_bytes();
    let tags = b.contains(&b'<');
    let mut looked: [(&[u8], bool); 16] = [(&[], false); 16];
    let mut n = 0;
    let mut holds = |start: &'static [u8]| -> bool {
        if start.first() == Some(&b'<') && !tags {
            return false;
        }
        if let Some(&(_, found)) = looked
            .get(..n)
            .and_then(|l| l.iter().find(|l| l.0 == start))
        {
            return found;
        }
        let found = holds_start(text, start);
        if let Some(slot) = looked.get_mut(n) {
            *slot = (start, found);
            n += 1;
        }
        found
    };
    let mut found = Vec::new();
    for f in FORMATS {
        if f.marker_starts.iter().any(|s| holds(s)) && (f.holds_markers)(text) {
            found.push(f.format);
        }
    }
    found
}

/// Whether `text` holds `start` (a byte or two; its first an ASCII byte) anywhere: a start that
/// is UTF-8 by itself (`<|`, `<t`, `s[`, `[T`, `;`) by `str::contains` (one `memchr` for a byte;
/// for two, the standard library's SIMD search of both bytes at once, which does not stop at
/// each `<` or `s` of the text); one that is not (`<` and the lead byte of `｜`) by finding its
/// first byte, then comparing the rest.
fn holds_start(text: &str, start: &[u8]) -> bool {
    if let Ok(start) = std::str::from_utf8(start) {
        return !start.is_empty() && text.contains(start);
    }
    let Some((&c, rest)) = start.split_first() else {
        return false;
    };
    let b = text.as_bytes();
    let mut from = 0;
    // `c` is ASCII, so each `from` (just after one) is a character boundary.
    while let Some(p) = text.get(from..).and_then(|t| t.find(char::from(c))) {
        if b.get(from + p + 1..).is_some_and(|t| t.starts_with(rest)) {
            return true;
        }
        from += p + 1;
    }
    false
}

/// Whether a call a format read, whose own text is `own` (`rest`: the text after it so far),
/// may still grow as the model goes on writing: such a call does not start early in a stream
/// ([`crate::front::stream`]). Each format that has such calls says which (GLM's before its
/// `</tool_call>`, Functionary's raw `python` code).
pub(crate) fn may_go_on(own: &str, rest: &str) -> bool {
    glm::goes_on(own, rest) || functionary::goes_on(own, rest)
}

/// Whether `text` holds the markers of `format` (what [`detect`] asks of each format).
#[cfg(test)]
fn holds_markers(format: ModelFormat, text: &str) -> bool {
    (format.spec().holds_markers)(text)
}

/// Whether a `<tool_call>` tag is followed (after blanks) by something `after` accepts (the
/// text from there on).
fn tag_then(text: &str, after: impl Fn(&str) -> bool) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(p) = scan::find(text, from, "<tool_call>") {
        let body = scan::skip_ws(b, p + "<tool_call>".len());
        if after(&text[body..]) {
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
    (format.spec().read)(text, &mut out);
    out.finish()
}

#[cfg(test)]
mod tests;

//! Grammar: the calls fexpr accepts, exported as a grammar for constrained decoding, so that a
//! serving engine (vLLM, SGLang, llama.cpp, OpenAI's custom tools) lets a model write only
//! calls that fexpr's checker accepts.
//!
//! The grammar is made from the typed signatures the checker uses ([`RecordType`], [`Type`]),
//! not from the raw JSON Schema: each tool's keyword arguments (each at most once, the required
//! ones present, in any order), each value as its type accepts it (`True`/`None`, strings in
//! either quote style with Python's escapes, an `int` never written `5.0`, enums as their
//! members, records as `Point(x=…)` or dicts of their keys, arrays within their bounds,
//! integers within their range, `$ref` definitions as named rules). A string the grammar
//! admits is a call that `check` accepts without any repair, except at the
//! [`Approximation`]s the result lists (what a context-free grammar cannot state: a float's
//! bounds, `multipleOf`, a string's `pattern`, …), where check may still say `Value`.
//!
//! The markup is the model's own tool-call format ([`Markup`]: Llama's pythonic lists, Hermes
//! and Qwen's `<tool_call>` JSON, Llama 3's JSON, Qwen3-Coder's XML); `tool_choice` says whether
//! the model may write prose instead (`auto`: free text without the format's trigger, or the
//! calls), must call (`required`), must call one tool (`NAME`) or must not (`none`).
//!
//! In Lark (llguidance's dialect) keyword arguments are any order through llguidance's
//! parametric rules, JSON arguments are `%json` schemas and prose excludes what fexpr would
//! read as a call; GBNF and EBNF write keyword arguments in the schema's order and JSON with
//! fexpr's own rules. [`Grammar::vllm`], [`Grammar::sglang`] and [`Grammar::openai_tool`]
//! give the request fields each engine takes.
//!
//! ```
//! use fexpr::grammar::{GrammarOptions, GrammarFormat, Markup, ToolChoice};
//!
//! let manager = fexpr::demo::manager();
//! let options = GrammarOptions::default()
//!     .format(GrammarFormat::Lark)
//!     .markup(Markup::Pythonic)
//!     .tool_choice(ToolChoice::Required);
//! let grammar = manager.grammar(&options)?;
//! assert!(grammar.text.starts_with("%llguidance {}"));
//! assert!(grammar.text.contains("\"add\" P_LPARS"));
//! let request = grammar.vllm();
//! assert_eq!(request["structured_outputs"]["grammar"], grammar.text);
//! # Ok::<(), fexpr::Error>(())
//! ```

mod numbers;
pub(crate) mod rules;
mod schema;
mod values;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::error::{clip, Error, ErrorKind};
use crate::front::formats::ModelFormat;
use crate::resolve::context::{Context, Entry};
use crate::types::{RecordType, Type};
use rules::{Body, Node, Rule, Rules};
pub use values::python_name;
use values::{Gen, Syntax};

/// The grammar syntax to write.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GrammarFormat {
    /// Lark as llguidance reads it (vLLM's `guidance` backend, OpenAI's custom tools, llama.cpp
    /// with llguidance): keyword arguments in any order, `%json` for JSON arguments.
    #[default]
    Lark,
    /// llama.cpp's GBNF.
    Gbnf,
    /// XGrammar's EBNF (vLLM's and SGLang's default backend): GBNF's syntax.
    Ebnf,
    /// An XGrammar structural tag (JSON): the calls as tags whose JSON arguments are schemas,
    /// or (pythonic) the whole output as an EBNF grammar inside the tag.
    StructuralTag,
}

impl GrammarFormat {
    /// Every format.
    pub const ALL: &'static [GrammarFormat] = &[
        GrammarFormat::Lark,
        GrammarFormat::Gbnf,
        GrammarFormat::Ebnf,
        GrammarFormat::StructuralTag,
    ];

    /// The format's name, as `fexpr grammar --format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            GrammarFormat::Lark => "lark",
            GrammarFormat::Gbnf => "gbnf",
            GrammarFormat::Ebnf => "ebnf",
            GrammarFormat::StructuralTag => "structural-tag",
        }
    }
}

/// The model's tool-call format the grammar writes calls in.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Markup {
    /// Llama 3.2/4: `[get_weather(city='Paris'), add(a=1, b=2)]`.
    #[default]
    Pythonic,
    /// Hermes, Qwen2.5/Qwen3: `<tool_call>\n{"name": "add", "arguments": {…}}\n</tool_call>`.
    Hermes,
    /// Llama 3.1/3.3 JSON (vLLM's `llama3_json`): `{"name": "add", "parameters": {…}}`, several
    /// joined by `; `.
    #[serde(rename = "llama3-json")]
    Llama3Json,
    /// Qwen3-Coder: `<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n…`.
    #[serde(rename = "qwen3-coder")]
    Qwen3Coder,
}

impl Markup {
    /// Every markup.
    pub const ALL: &'static [Markup] = &[
        Markup::Pythonic,
        Markup::Hermes,
        Markup::Llama3Json,
        Markup::Qwen3Coder,
    ];

    /// The markup's name, as `fexpr grammar --markup` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Markup::Pythonic => "pythonic",
            Markup::Hermes => "hermes",
            Markup::Llama3Json => "llama3-json",
            Markup::Qwen3Coder => "qwen3-coder",
        }
    }

    /// The model format whose reader reads what this markup writes.
    pub fn model_format(self) -> ModelFormat {
        match self {
            Markup::Pythonic => ModelFormat::Pythonic,
            Markup::Hermes => ModelFormat::Hermes,
            Markup::Llama3Json => ModelFormat::Llama31,
            Markup::Qwen3Coder => ModelFormat::QwenXml,
        }
    }

    /// What starts a call in free text: a string anywhere (`<tool_call>`), or a character that
    /// opens the whole output (`[`).
    fn triggers(self) -> Trigger {
        match self {
            Markup::Pythonic => Trigger::Opens('['),
            Markup::Llama3Json => Trigger::Opens('{'),
            Markup::Hermes => Trigger::Anywhere(&["<tool_call>"]),
            Markup::Qwen3Coder => Trigger::Anywhere(&["<tool_call>", "<function="]),
        }
    }
}

#[derive(Clone, Copy)]
enum Trigger {
    Opens(char),
    Anywhere(&'static [&'static str]),
}

fn parse_error(what: &str, given: &str, names: Vec<&'static str>) -> Error {
    Error::new(
        ErrorKind::Config,
        format!("unknown {what} `{}`", clip(given, 40)),
    )
    .with_hint(format!("the {what}s are: {}", names.join(", ")))
    .suggest(given, names.iter().copied())
}

impl std::str::FromStr for GrammarFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<GrammarFormat, Error> {
        GrammarFormat::ALL
            .iter()
            .find(|f| f.name() == s)
            .copied()
            .ok_or_else(|| {
                parse_error(
                    "grammar format",
                    s,
                    GrammarFormat::ALL.iter().map(|f| f.name()).collect(),
                )
            })
    }
}

impl std::str::FromStr for Markup {
    type Err = Error;

    /// A markup by its [name](Markup::name) (`llama3.1` is `llama3-json` too).
    fn from_str(s: &str) -> Result<Markup, Error> {
        if s == "llama3.1" {
            return Ok(Markup::Llama3Json);
        }
        Markup::ALL
            .iter()
            .find(|m| m.name() == s)
            .copied()
            .ok_or_else(|| parse_error("markup", s, Markup::ALL.iter().map(|m| m.name()).collect()))
    }
}

impl std::fmt::Display for GrammarFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Markup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether and what the model must call (OpenAI's `tool_choice`). The default is `Required`:
/// a grammar is for the calls (`Auto` lets the model answer in prose instead).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolChoice {
    /// Prose (free text without the markup's trigger) or calls.
    Auto,
    /// At least one call.
    #[default]
    Required,
    /// No call: prose only.
    None,
    /// Calls of this tool only, at least one.
    Named(String),
}

impl std::str::FromStr for ToolChoice {
    type Err = Error;

    /// `auto`, `required`, `none`, or a tool's name.
    fn from_str(s: &str) -> Result<ToolChoice, Error> {
        Ok(match s {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            "" => {
                return Err(Error::new(
                    ErrorKind::Config,
                    "a tool choice is auto, required, none or a tool's name",
                ))
            }
            name => ToolChoice::Named(name.to_string()),
        })
    }
}

impl std::fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolChoice::Auto => f.write_str("auto"),
            ToolChoice::Required => f.write_str("required"),
            ToolChoice::None => f.write_str("none"),
            ToolChoice::Named(name) => f.write_str(name),
        }
    }
}

/// What grammar to make: its syntax, the model's markup, the tool choice.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrammarOptions {
    /// The grammar syntax (default Lark).
    pub format: GrammarFormat,
    /// The model's tool-call format (default pythonic).
    pub markup: Markup,
    /// Whether and what the model must call (default required).
    pub tool_choice: ToolChoice,
}

impl GrammarOptions {
    /// Set the grammar syntax.
    pub fn format(mut self, format: GrammarFormat) -> GrammarOptions {
        self.format = format;
        self
    }

    /// Set the markup.
    pub fn markup(mut self, markup: Markup) -> GrammarOptions {
        self.markup = markup;
        self
    }

    /// Set the tool choice.
    pub fn tool_choice(mut self, tool_choice: ToolChoice) -> GrammarOptions {
        self.tool_choice = tool_choice;
        self
    }
}

/// A place where the grammar admits more than `check` accepts: what it does not state, and
/// the error kind check gives a value that breaks it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approximation {
    /// The tool (empty: the whole grammar).
    pub tool: String,
    /// Where in its arguments (`p1.x`, `tags[]`), as check's errors name it.
    pub path: String,
    /// What the grammar does not state (`maximum 100`, `pattern `^[A-Z]+$``).
    pub what: String,
    /// The kind of error check may give there.
    pub kind: ErrorKind,
}

/// A grammar for constrained decoding, and the places where it admits more than `check`.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grammar {
    /// Its syntax.
    pub format: GrammarFormat,
    /// The markup it writes calls in.
    pub markup: Markup,
    /// The tool choice it enforces.
    pub tool_choice: ToolChoice,
    /// The grammar (for a structural tag: its JSON text).
    pub text: String,
    /// Where the grammar admits values that check refuses (never silently dropped).
    pub approximations: Vec<Approximation>,
    /// Tools no call of which can be valid (their schema refuses every value), with why: the
    /// grammar has no call of them.
    pub left_out: Vec<(String, String)>,
}

impl Grammar {
    /// The grammar as vLLM's request takes it (`extra_body`): `{"structured_outputs":
    /// {"grammar": …}}` (Lark needs vLLM's `guidance` backend; GBNF and EBNF the default
    /// `xgrammar`), or `{"structured_outputs": {"structural_tag": …}}`.
    pub fn vllm(&self) -> Json {
        match self.format {
            GrammarFormat::StructuralTag => {
                json!({"structured_outputs": {"structural_tag": self.text}})
            }
            _ => json!({"structured_outputs": {"grammar": self.text}}),
        }
    }

    /// The grammar as SGLang's request takes it: `{"ebnf": …}` (GBNF, EBNF) or
    /// `{"response_format": {"type": "structural_tag", …}}`; `None` for Lark (SGLang takes
    /// EBNF).
    pub fn sglang(&self) -> Option<Json> {
        match self.format {
            GrammarFormat::Gbnf | GrammarFormat::Ebnf => Some(json!({"ebnf": self.text})),
            GrammarFormat::StructuralTag => serde_json::from_str::<Json>(&self.text)
                .ok()
                .map(|tag| json!({"response_format": tag})),
            GrammarFormat::Lark => None,
        }
    }

    /// An OpenAI custom tool whose input is this grammar (`format: {type: grammar, syntax:
    /// lark}`); `None` unless the format is Lark. OpenAI documents a subset of llguidance's
    /// Lark: a grammar with keyword sets (parametric rules) or `%json` may be refused there.
    pub fn openai_tool(&self, name: &str, description: &str) -> Option<Json> {
        (self.format == GrammarFormat::Lark).then(|| {
            json!({"type": "custom", "name": name, "description": description,
                   "format": {"type": "grammar", "syntax": "lark", "definition": self.text}})
        })
    }

    /// Everything as one JSON object: `format`, `markup`, `tool_choice`, `grammar`,
    /// `approximations`, `left_out`.
    pub fn to_json(&self) -> Json {
        json!({
            "format": self.format.name(),
            "markup": self.markup.name(),
            "tool_choice": self.tool_choice.to_string(),
            "grammar": self.text,
            "approximations": self.approximations.iter().map(|a| json!({
                "tool": a.tool, "path": a.path, "what": a.what, "kind": a.kind,
            })).collect::<Vec<_>>(),
            "left_out": self.left_out.iter().map(|(t, why)| json!({"tool": t, "why": why}))
                .collect::<Vec<_>>(),
        })
    }
}

/// The grammar of the calls to the tools of `ctx` (its [`Entry::Tool`]s, with its record
/// types for `Point(x=…)` arguments) as `options` say.
///
/// # Errors
/// A `Config` error when the tool choice names a tool `ctx` does not have, or asks for a call
/// when no tool can be called validly.
pub fn grammar(ctx: &Context, options: &GrammarOptions) -> Result<Grammar, Error> {
    let tools: Vec<(&str, &RecordType)> = ctx
        .entries()
        .filter_map(|(name, entry)| match entry {
            Entry::Tool(sig) => Some((name, sig.as_ref())),
            _ => None,
        })
        .collect();
    let chosen: Vec<(&str, &RecordType)> = match &options.tool_choice {
        ToolChoice::Named(want) => {
            let found: Vec<_> = tools.iter().copied().filter(|(n, _)| n == want).collect();
            if found.is_empty() {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "tool_choice names `{}`, which is not a tool",
                        clip(want, 60)
                    ),
                )
                .suggest(want, tools.iter().map(|(n, _)| *n)));
            }
            found
        }
        ToolChoice::None => Vec::new(),
        _ => tools,
    };
    let mut g = Gen::new(ctx);
    g.fresh("start");
    g.fresh("root");
    let mut calls = Vec::new();
    let mut after_tag = Vec::new();
    let mut left_out = Vec::new();
    let mut json_calls = Vec::new();
    for (name, sig) in &chosen {
        g.tool = name.to_string();
        if let Some(reason) = &sig.unchecked {
            left_out.push((name.to_string(), reason.clone()));
            continue;
        }
        match call(&mut g, name, sig, options) {
            Some(Call {
                call,
                after_tag: rest,
            }) => {
                calls.push(call);
                after_tag.extend(rest);
                json_calls.push((*name, *sig));
            }
            None => left_out.push((
                name.to_string(),
                "a required argument's schema accepts no value".to_string(),
            )),
        }
    }
    g.tool = String::new();
    let wants_call = matches!(
        options.tool_choice,
        ToolChoice::Required | ToolChoice::Named(_)
    );
    if wants_call && calls.is_empty() {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "tool_choice `{}` asks for a call, but no tool can be called validly",
                options.tool_choice
            ),
        )
        .with_hint(
            left_out
                .iter()
                .map(|(t, why)| format!("{t}: {why}"))
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    let text = match options.format {
        GrammarFormat::StructuralTag => {
            structural_tag(&mut g, &json_calls, calls, after_tag, options)
        }
        format => {
            let start = start(&mut g, calls, after_tag, options);
            let mut rules = Rules::default();
            rules.rules.push(Rule {
                name: "start".into(),
                terminal: false,
                body: Body::Node(start),
            });
            rules.rules.append(&mut g.rules);
            rules.print(format)
        }
    };
    Ok(Grammar {
        format: options.format,
        markup: options.markup,
        tool_choice: options.tool_choice.clone(),
        text,
        approximations: g.approximations,
        left_out,
    })
}

/// One call's rule, and for a markup whose calls open with `<tool_call>`, the rule of what
/// follows that tag (Lark's prose ends lazily at the tag, which then starts the first call).
struct Call {
    call: Node,
    after_tag: Option<Node>,
}

/// The trigger that opens every call of the tagged markups.
const TOOL_CALL_TAG: &str = "<tool_call>";

/// `<tool_call>` and then `rest`, as two rules: the call, and what follows the tag.
fn tagged(g: &mut Gen<'_>, name: &str, rest: Node) -> Call {
    let after = g.rule(&format!("after_tag_{name}"), false, Body::Node(rest));
    let node = Node::seq(vec![Node::lit(TOOL_CALL_TAG), Node::Ref(after.clone())]);
    Call {
        call: Node::Ref(g.rule(&format!("call_{name}"), false, Body::Node(node))),
        after_tag: Some(Node::Ref(after)),
    }
}

/// One call of `name` in the markup; `None` when no call can be valid.
fn call(g: &mut Gen<'_>, name: &str, sig: &RecordType, options: &GrammarOptions) -> Option<Call> {
    let lark = options.format == GrammarFormat::Lark;
    match options.markup {
        Markup::Pythonic => {
            let args = g.keywords(&format!("args_{name}"), &sig.fields)?;
            let open = g.punct("(", false, true);
            let close = g.punct(")", true, false);
            let node = Node::seq(vec![Node::lit(python_name(name)), open, args, close]);
            let call = Node::Ref(g.rule(&format!("call_{name}"), false, Body::Node(node)));
            Some(Call {
                call,
                after_tag: None,
            })
        }
        Markup::Hermes | Markup::Llama3Json => {
            let key = if options.markup == Markup::Hermes {
                "arguments"
            } else {
                "parameters"
            };
            let object = if lark {
                json_call_schema(g, name, sig, key)?
            } else {
                json_call(g, name, sig, key)?
            };
            if options.markup == Markup::Hermes {
                let rest = Node::seq(vec![Node::lit("\n"), object, Node::lit("\n</tool_call>")]);
                return Some(tagged(g, name, rest));
            }
            let call = Node::Ref(g.rule(&format!("call_{name}"), false, Body::Node(object)));
            Some(Call {
                call,
                after_tag: None,
            })
        }
        Markup::Qwen3Coder => {
            let mut items = Vec::new();
            for field in &sig.fields {
                let Some(value) = qwen_value(g, &field.ty, &field.name, lark) else {
                    if field.required {
                        return None;
                    }
                    continue;
                };
                let item = Node::seq(vec![
                    Node::Lit(format!("<parameter={}>\n", field.name)),
                    value,
                ]);
                items.push((item, field.required));
            }
            let params = g.rule(
                &format!("params_{name}"),
                false,
                Body::Keywords {
                    items,
                    sep: Node::Empty,
                },
            );
            let rest = Node::seq(vec![
                Node::Lit(format!("\n<function={name}>\n")),
                Node::Ref(params),
                Node::lit("</function>\n</tool_call>"),
            ]);
            Some(tagged(g, name, rest))
        }
    }
}

/// `{"name": "f", "<key>": {…}}` with fexpr's own JSON rules.
fn json_call(g: &mut Gen<'_>, name: &str, sig: &RecordType, key: &str) -> Option<Node> {
    let colon = g.punct(":", true, true);
    let mut items = Vec::new();
    for field in &sig.fields {
        let Some(value) = g.value(&field.ty, &field.name, Syntax::Json) else {
            if field.required {
                return None;
            }
            continue;
        };
        let k = values::literals(&crate::value::Value::Str(field.name.clone()), Syntax::Json);
        let k = Node::alt(k.into_iter().map(Node::Lit).collect());
        items.push((Node::seq(vec![k, colon.clone(), value]), field.required));
    }
    let comma = g.punct(",", true, true);
    let args = g.rule(
        &format!("json_args_{name}"),
        false,
        Body::Keywords { items, sep: comma },
    );
    let open = g.punct("{", false, true);
    let close = g.punct("}", true, false);
    let quoted = serde_json::to_string(name).unwrap_or_default();
    Some(Node::seq(vec![
        Node::Lit(format!("{{\"name\": {quoted}, \"{key}\": ")),
        open,
        Node::Ref(args),
        close,
        Node::lit("}"),
    ]))
}

/// `{"name": "f", "<key>": {…}}` as llguidance's `%json` (the approximations found by writing
/// the same arguments with fexpr's JSON rules, which are then not used).
fn json_call_schema(g: &mut Gen<'_>, name: &str, sig: &RecordType, key: &str) -> Option<Node> {
    let mut defs = schema::Defs::default();
    let arguments = schema::arguments(sig, &mut defs)?;
    let schema = defs.finish(json!({
        "type": "object",
        "properties": {"name": {"const": name}, key: arguments},
        "required": ["name", key],
        "additionalProperties": false,
    }));
    approximations_of(g, |scratch| json_call(scratch, name, sig, key));
    let rule = g.rule(
        &format!("json_{name}"),
        false,
        Body::Node(Node::Lark(format!("%json {schema}"), Box::new(Node::Empty))),
    );
    Some(Node::Ref(rule))
}

/// Run `write` on a scratch generator and keep only the approximations it finds.
fn approximations_of(g: &mut Gen<'_>, write: impl FnOnce(&mut Gen<'_>) -> Option<Node>) {
    let mut scratch = Gen::new(g.ctx);
    scratch.tool = g.tool.clone();
    let _ = write(&mut scratch);
    for a in scratch.approximations {
        if !g.approximations.contains(&a) {
            g.approximations.push(a);
        }
    }
}

/// How Qwen3-Coder's reader reads a value written as text, by its parameter's type
/// (`front::formats::convert_text_arg`).
#[derive(Clone, Copy, PartialEq)]
enum TextKind {
    Str,
    Scalar,
    Json,
}

fn text_kind(ty: &Type) -> TextKind {
    match ty.shape() {
        Type::Str => TextKind::Str,
        Type::Enum(values)
            if values
                .iter()
                .all(|v| matches!(v, crate::value::Value::Str(_))) =>
        {
            TextKind::Str
        }
        Type::Int | Type::Float | Type::Bool => TextKind::Scalar,
        Type::All(parts) => parts.first().map_or(TextKind::Json, |p| match p.shape() {
            Type::Union(_) | Type::All(_) => TextKind::Json,
            _ => text_kind(p),
        }),
        _ => TextKind::Json,
    }
}

/// A Qwen3-Coder parameter value of type `ty` and the `</parameter>` tag that closes it: a
/// string as it is (without `<`), a number or boolean as JSON writes it, anything else as JSON. A union is
/// written as its first alternative (the reader tries that one first), or `null` when it
/// takes `None`.
fn qwen_value(g: &mut Gen<'_>, ty: &Type, path: &str, lark: bool) -> Option<Node> {
    if let Type::Union(alts) = ty.shape() {
        let first = alts.iter().find(|t| !matches!(t.shape(), Type::None));
        let mut forms = Vec::new();
        if let Some(first) = first {
            let node = qwen_value(g, first, path, lark);
            forms.extend(node);
        }
        if ty.accepts_none() {
            forms.push(Node::Lit(format!("null{END_PARAMETER}")));
        }
        return (!forms.is_empty()).then(|| Node::alt(forms));
    }
    let closed = |node: Node| Node::seq(vec![node, Node::lit(END_PARAMETER)]);
    match text_kind(ty) {
        TextKind::Str => match ty.shape() {
            Type::Enum(values) => {
                let members: Vec<Node> = values
                    .iter()
                    .filter_map(|v| match v {
                        crate::value::Value::Str(s) if !s.contains('<') => {
                            Some(Node::Lit(format!("{s}{END_PARAMETER}")))
                        }
                        _ => None,
                    })
                    .collect();
                (!members.is_empty()).then(|| Node::alt(members))
            }
            _ => {
                if let Type::Bounded(_, bounds) = ty {
                    if bounds.min_length.is_some()
                        || bounds.max_length.is_some()
                        || bounds.pattern.is_some()
                    {
                        g.approximate(
                            path,
                            "a string's length and pattern (Qwen3-Coder writes strings as text)"
                                .into(),
                            ErrorKind::Value,
                        );
                    }
                }
                Some(text_value(g))
            }
        },
        TextKind::Scalar => g.value(ty, path, Syntax::Json).map(closed),
        TextKind::Json if lark => {
            let mut defs = schema::Defs::default();
            let s = schema::schema(ty, &mut defs)?;
            let s = defs.finish(s);
            approximations_of(g, |scratch| scratch.value(ty, path, Syntax::Json));
            let rule = g.rule(
                &format!("json_{path}"),
                false,
                Body::Node(Node::Lark(format!("%json {s}"), Box::new(Node::Empty))),
            );
            Some(closed(Node::Ref(rule)))
        }
        TextKind::Json => g.value(ty, path, Syntax::Json).map(closed),
    }
}

/// What closes a Qwen3-Coder parameter's value.
const END_PARAMETER: &str = "\n</parameter>\n";

/// Free text for a Qwen3-Coder string value, with the tag that closes it: anything without
/// `<`, so that the first `<` starts `</parameter>` (the grammar writes no string holding `<`
/// in this markup). One terminal: Lark lexes greedily, so the text and its close are one
/// lexeme.
fn text_value(g: &mut Gen<'_>) -> Node {
    g.shared("text_value", true, |_| {
        Node::seq(vec![
            Node::not_class(&[('<', '<')]).star(),
            Node::lit(END_PARAMETER),
        ])
    })
}

/// The whole output: the calls as the markup joins them, with the tool choice's prose.
fn start(
    g: &mut Gen<'_>,
    calls: Vec<Node>,
    after_tag: Vec<Node>,
    options: &GrammarOptions,
) -> Node {
    if calls.is_empty() {
        return prose(g, options.markup, options.format);
    }
    let any_call = Node::alt(calls);
    let join = match options.markup {
        Markup::Llama3Json => "; ",
        _ => "\n",
    };
    // Lark lexes prose greedily: in `auto` it ends lazily with the tag that opens the first
    // call, which goes on after the tag.
    let lead = match (
        options.format,
        options.markup.triggers(),
        &options.tool_choice,
    ) {
        (GrammarFormat::Lark, Trigger::Anywhere(triggers), ToolChoice::Auto)
            if !after_tag.is_empty() =>
        {
            let lead = prose_lead(g, triggers);
            let first = Node::alt(after_tag);
            Some(Node::seq(vec![
                lead,
                first,
                Node::seq(vec![Node::Lit(join.into()), any_call.clone()]).star(),
            ]))
        }
        _ => None,
    };
    let calls = match options.markup {
        Markup::Pythonic => {
            let open = g.punct("[", false, true);
            let close = g.punct("]", true, false);
            let comma = g.punct(",", true, true);
            Node::seq(vec![
                open,
                any_call.clone(),
                Node::seq(vec![comma, any_call]).star(),
                close,
            ])
        }
        Markup::Llama3Json => Node::seq(vec![
            any_call.clone(),
            Node::seq(vec![Node::lit("; "), any_call]).star(),
        ]),
        Markup::Hermes | Markup::Qwen3Coder => Node::seq(vec![
            any_call.clone(),
            Node::seq(vec![Node::lit("\n"), any_call]).star(),
        ]),
    };
    let calls = Node::Ref(g.rule("calls", false, Body::Node(calls)));
    match &options.tool_choice {
        ToolChoice::Required | ToolChoice::Named(_) => calls,
        ToolChoice::None => prose(g, options.markup, options.format),
        ToolChoice::Auto => {
            let text = prose(g, options.markup, options.format);
            match (lead, options.markup.triggers()) {
                (Some(lead), _) => Node::alt(vec![text, lead]),
                (None, Trigger::Opens(_)) => Node::alt(vec![text, calls]),
                (None, Trigger::Anywhere(_)) => {
                    Node::alt(vec![text.clone(), Node::seq(vec![text.opt(), calls])])
                }
            }
        }
    }
}

/// Lark: prose up to and with the first `<tool_call>` (a lazy lexeme: it ends at the first
/// one), holding no other trigger and nothing fexpr reads as a call.
fn prose_lead(g: &mut Gen<'_>, triggers: &[&str]) -> Node {
    let others: Vec<String> = triggers
        .iter()
        .filter(|t| **t != TOOL_CALL_TAG)
        .map(|t| regex_escape(t))
        .collect();
    let mut lark = format!(r"/(?s:.*){}/ & {CALL_LIKE}", regex_escape(TOOL_CALL_TAG));
    if !others.is_empty() {
        lark.push_str(&format!(r" & ~/(?s:.*)({})(?s:.*)/", others.join("|")));
    }
    let text = g.shared("prose_lead_text", true, |_| {
        Node::Lark(lark, Box::new(Node::Empty))
    });
    let name = g.fresh("prose_lead");
    g.rules.push(Rule {
        name: format!("{name}[lazy]"),
        terminal: false,
        body: Body::Node(text),
    });
    Node::Ref(name)
}

/// Text fexpr would read as a call: a name (or a closing quote, digit…) followed by `(`.
const CALL_LIKE: &str = r"~/(?s:.*)[\w.][ \t]*\((?s:.*)/";

/// Prose: text that holds no call. In Lark: no trigger of the markup, and no name followed by
/// `(` (which fexpr would read as a call); elsewhere only the trigger is excluded, which the
/// approximations say.
fn prose(g: &mut Gen<'_>, markup: Markup, format: GrammarFormat) -> Node {
    if format != GrammarFormat::Lark {
        g.approximate(
            "",
            "prose: GBNF and EBNF exclude only the markup's trigger; a line of prose that is a \
             call (`f(x)`) is read as one"
                .into(),
            ErrorKind::UnknownTool,
        );
    }
    let call_like = CALL_LIKE;
    match markup.triggers() {
        Trigger::Opens(c) => {
            let lark = format!(r"/[^\s\{c}](?s:.*)/ & {call_like}");
            g.shared("prose", true, |_| {
                Node::Lark(
                    lark,
                    Box::new(Node::seq(vec![
                        Node::not_class(&[(c, c), (' ', ' '), ('\t', '\t'), ('\n', '\n')]),
                        Node::not_class(&[('\0', '\0')]).star(),
                    ])),
                )
            })
        }
        Trigger::Anywhere(triggers) => {
            let alts: Vec<String> = triggers.iter().map(|t| regex_escape(t)).collect();
            let lark = format!(
                r"/(?s:.+)/ & ~/(?s:.*)({})(?s:.*)/ & {call_like}",
                alts.join("|")
            );
            let fallback = match format {
                GrammarFormat::Lark => Node::Empty,
                _ => no_substring(g, triggers),
            };
            g.shared("prose", true, |_| Node::Lark(lark, Box::new(fallback)))
        }
    }
}

/// Rules for text that holds none of `words` (right-linear: one rule per state of the
/// matcher of the words' prefixes), for GBNF and EBNF; at least one character.
fn no_substring(g: &mut Gen<'_>, words: &[&str]) -> Node {
    // The states are the proper prefixes of the words; from each, a character either extends
    // a prefix, or falls back to the longest prefix that is a suffix of what was read.
    let mut prefixes: Vec<String> = vec![String::new()];
    for w in words {
        for (i, _) in w.char_indices().skip(1) {
            let p = w[..i].to_string();
            if !prefixes.contains(&p) {
                prefixes.push(p);
            }
        }
    }
    let names: Vec<String> = (0..prefixes.len())
        .map(|i| g.fresh(&format!("prose_{i}")))
        .collect();
    let chars: Vec<char> = {
        let mut cs: Vec<char> = words.iter().flat_map(|w| w.chars()).collect();
        cs.sort_unstable();
        cs.dedup();
        cs
    };
    let state = |read: &str| -> Option<usize> {
        if words.iter().any(|w| read.ends_with(w)) {
            return None;
        }
        (0..read.len() + 1)
            .filter(|&i| read.is_char_boundary(i))
            .filter_map(|i| prefixes.iter().position(|p| p == &read[i..]))
            .next()
    };
    for (i, prefix) in prefixes.iter().enumerate() {
        let mut alts = vec![Node::Empty];
        for &c in &chars {
            let read = format!("{prefix}{c}");
            if let Some(next) = state(&read) {
                alts.push(Node::seq(vec![
                    Node::Lit(c.to_string()),
                    Node::Ref(names[next].clone()),
                ]));
            }
        }
        let others: Vec<(char, char)> = chars.iter().map(|&c| (c, c)).collect();
        alts.push(Node::seq(vec![
            Node::Class {
                ranges: others,
                negated: true,
            },
            Node::Ref(names[0].clone()),
        ]));
        g.rules.push(Rule {
            name: names[i].clone(),
            terminal: false,
            body: Body::Node(Node::alt(alts)),
        });
    }
    // At least one character: the first one read from state 0, as above.
    let first: Vec<Node> = chars
        .iter()
        .filter_map(|&c| {
            let next = state(&c.to_string())?;
            Some(Node::seq(vec![
                Node::Lit(c.to_string()),
                Node::Ref(names[next].clone()),
            ]))
        })
        .chain(std::iter::once(Node::seq(vec![
            Node::Class {
                ranges: chars.iter().map(|&c| (c, c)).collect(),
                negated: true,
            },
            Node::Ref(names[0].clone()),
        ])))
        .collect();
    Node::alt(first)
}

/// `text` as a regular expression inside Lark's `/…/` (Rust's syntax: `\<` is a word
/// boundary there, so only the metacharacters are escaped).
fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == '/' {
            out.push_str("\\/");
        } else if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}

/// The structural tag (XGrammar's JSON) for the calls of `tools`: JSON markups as tags whose
/// arguments are schemas; pythonic as the whole output in EBNF.
fn structural_tag(
    g: &mut Gen<'_>,
    tools: &[(&str, &RecordType)],
    calls: Vec<Node>,
    after_tag: Vec<Node>,
    options: &GrammarOptions,
) -> String {
    let choice = &options.tool_choice;
    let format = match options.markup {
        Markup::Pythonic => {
            let start = start(g, calls, after_tag, options);
            let mut rules = Rules::default();
            rules.rules.push(Rule {
                name: "start".into(),
                terminal: false,
                body: Body::Node(start),
            });
            rules.rules.append(&mut g.rules);
            json!({"type": "grammar", "grammar": rules.print(GrammarFormat::Ebnf)})
        }
        markup => {
            let mut tags = Vec::new();
            for (name, sig) in tools {
                g.tool = name.to_string();
                let mut defs = schema::Defs::default();
                let Some(arguments) = schema::arguments(sig, &mut defs) else {
                    continue;
                };
                let arguments = defs.finish(arguments);
                let quoted = serde_json::to_string(name).unwrap_or_default();
                let (begin, end, style) = match markup {
                    Markup::Hermes => (
                        format!("<tool_call>\n{{\"name\": {quoted}, \"arguments\": "),
                        "}\n</tool_call>".to_string(),
                        "json",
                    ),
                    Markup::Llama3Json => (
                        format!("{{\"name\": {quoted}, \"parameters\": "),
                        "}".to_string(),
                        "json",
                    ),
                    _ => (
                        format!("<tool_call>\n<function={name}>\n"),
                        "</function>\n</tool_call>".to_string(),
                        "qwen_xml",
                    ),
                };
                tags.push(json!({"type": "tag", "begin": begin,
                    "content": {"type": "json_schema", "json_schema": arguments, "style": style},
                    "end": end}));
            }
            g.tool = String::new();
            let triggers: Vec<&str> = match markup {
                Markup::Llama3Json => vec!["{\"name\": "],
                _ => vec!["<tool_call>"],
            };
            let must = matches!(choice, ToolChoice::Required | ToolChoice::Named(_));
            match (choice, markup) {
                (ToolChoice::None, _) => json!({"type": "any_text", "excludes": triggers}),
                (_, Markup::Llama3Json) => {
                    let calls = json!({"type": "tags_with_separator", "tags": tags,
                                       "separator": "; ", "at_least_one": true});
                    if must {
                        calls
                    } else {
                        json!({"type": "or", "elements": [
                            {"type": "any_text", "excludes": triggers}, calls]})
                    }
                }
                _ => json!({"type": "triggered_tags", "triggers": triggers, "tags": tags,
                            "at_least_one": must, "stop_after_first": false}),
            }
        }
    };
    json!({"type": "structural_tag", "format": format}).to_string()
}

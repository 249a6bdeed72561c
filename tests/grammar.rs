//! The grammar export's guarantee, checked with llguidance (the `llguidance` crate, a
//! byte-level token environment: no tokenizer files):
//!
//! - every string sampled from a grammar (random walks over its token mask, each allowed token
//!   equally likely) is accepted by fexpr's checker without repairs: valid calls only, or a
//!   `Value`/`Limit` error at one of the approximations the grammar lists; never `Syntax`,
//!   `UnknownTool`, `Arguments` or `Type`; the markup's own reader finds the same calls;
//! - every BFCL ground-truth call fexpr accepts without repairs is accepted by the grammar of
//!   its case's tools;
//! - mutations (unknown keyword, duplicate keyword, wrong-typed literal, missing required
//!   argument, unknown tool) are refused by both the grammar and the checker.
//!
//! Names and keys Python cannot write are in `names_python_cannot_write_pass_by_alias` and
//! `keys_python_cannot_write_pass_the_grammar_and_the_checker`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use std::sync::{Arc, OnceLock};

use fexpr::check::{check_text, Checked};
use fexpr::context::Entry;
use fexpr::front::formats;
use fexpr::grammar::{Grammar, GrammarFormat, GrammarOptions, Markup, ToolChoice};
use fexpr::repair::RepairOptions;
use fexpr::types::RecordType;
use fexpr::{Context, ErrorKind, Limits};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokenId};
use llguidance::{Matcher, ParserFactory};
use serde_json::{json, Value as Json};

/// llguidance over single bytes (plus a few special tokens; the last is end-of-sequence).
struct Llg {
    env: TokEnv,
    factory: ParserFactory,
}

fn llg() -> &'static Llg {
    static LLG: OnceLock<Llg> = OnceLock::new();
    LLG.get_or_init(|| {
        let env = ApproximateTokEnv::single_byte_env();
        let mut factory = ParserFactory::new_simple(&env).unwrap();
        factory.set_stderr_log_level(0);
        Llg { env, factory }
    })
}

/// A matcher for `lark`; a grammar llguidance refuses fails the test with its error.
fn matcher(lark: &str) -> Matcher {
    let parser = llg()
        .factory
        .create_parser(TopLevelGrammar::from_lark(lark.to_string()));
    let m = Matcher::new(parser);
    assert!(
        !m.is_error(),
        "llguidance refuses the grammar: {:?}\n{}",
        m.get_error(),
        clip(lark)
    );
    m
}

fn clip(text: &str) -> String {
    text.chars().take(3000).collect()
}

/// Whether the grammar accepts `text` whole.
fn accepts(m: &Matcher, text: &str) -> bool {
    let mut m = m.deep_clone();
    let tokens = llg().env.tokenize_bytes(text.as_bytes());
    for t in tokens {
        let Ok(mask) = m.compute_mask() else {
            return false;
        };
        if !mask.is_allowed(t) || m.consume_token(t).is_err() {
            return false;
        }
    }
    m.is_accepting().unwrap_or(false)
}

/// A small deterministic generator (xorshift), so a failure can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What ends a string, a value or a free text.
const CLOSERS: &[u8] = b"\"'\n<>]}),;";

/// A random walk over the grammar's token mask: half the steps pick among the allowed
/// [`CLOSERS`] (quotes, `<`, newlines, closing brackets: what ends a string, a value or a free
/// text, so that walks end in a few hundred bytes rather than tens of thousands), the other
/// half among all allowed tokens (end-of-sequence among them once the text is complete);
/// `None` past `max_bytes`. (`examples/grammar_demo.rs` walks with every token equally
/// likely.)
fn sample(m: &Matcher, rng: &mut Rng, max_bytes: usize) -> Option<String> {
    let mut m = m.deep_clone();
    let eos = llg().env.tok_trie().eos_token();
    let trie = llg().env.tok_trie();
    let mut bytes = Vec::new();
    loop {
        let mask = m.compute_mask().unwrap();
        let mut allowed: Vec<TokenId> = Vec::new();
        mask.iter_set_entries(|t| allowed.push(t as TokenId));
        assert!(
            !allowed.is_empty(),
            "no token allowed after {:?}",
            String::from_utf8_lossy(&bytes)
        );
        let punctuation: Vec<TokenId> = allowed
            .iter()
            .copied()
            .filter(|&t| t == eos || matches!(trie.token(t), [b] if CLOSERS.contains(b)))
            .collect();
        let t = if !punctuation.is_empty() && rng.below(2) == 0 {
            punctuation[rng.below(punctuation.len())]
        } else {
            allowed[rng.below(allowed.len())]
        };
        if t == eos {
            return Some(String::from_utf8(bytes).expect("the grammar wrote UTF-8"));
        }
        bytes.extend_from_slice(trie.token(t));
        if bytes.len() > max_bytes {
            if std::env::var_os("FEXPR_GRAMMAR_DEBUG").is_some() {
                eprintln!("unfinished: {:?}", String::from_utf8_lossy(&bytes[..600]));
            }
            return None;
        }
        m.consume_token(t).unwrap();
        // The grammar allows nothing more: the text is complete.
        if m.is_stopped() {
            return Some(String::from_utf8(bytes).expect("the grammar wrote UTF-8"));
        }
    }
}

fn context_of(defs: &Json) -> Context {
    let defs = fexpr::tooldefs::from_json(defs).unwrap();
    fexpr::tooldefs::context(&defs)
}

/// Tools with the types a grammar must get right: enums, optional and nullable values, a
/// nested record (also by `$ref`), a recursive definition, arrays with item bounds, integer
/// ranges, float bounds, string lengths and patterns, open dicts, unions, tuples.
fn rich_tools() -> Json {
    json!([
        {"type": "function", "function": {"name": "get_weather", "description": "w",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "minLength": 1, "maxLength": 40},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "detailed": {"type": "boolean"}},
            "required": ["city"]}}},
        {"type": "function", "function": {"name": "book", "description": "b",
            "parameters": {"type": "object", "properties": {
                "guest": {"$ref": "#/$defs/Guest"},
                "rooms": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 3},
                          "minItems": 1, "maxItems": 3},
                "price": {"type": "number", "minimum": 0, "maximum": 500},
                "note": {"type": ["string", "null"]},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "when": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object"}},
            "required": ["guest", "rooms"],
            "$defs": {"Guest": {"type": "object", "properties": {
                "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                "vip": {"type": "boolean", "default": false}}, "required": ["name"]}}}}},
        {"type": "function", "function": {"name": "search", "description": "s",
            "parameters": {"type": "object", "properties": {
                "query": {"type": "string"},
                "filter": {"$ref": "#/$defs/Filter"},
                "limit": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}]},
                "mode": {"const": "fast"},
                "weights": {"type": "array", "items": {"type": "number"}, "uniqueItems": true}},
            "required": ["query"],
            "$defs": {"Filter": {"anyOf": [
                {"type": "object", "properties": {"all": {"type": "array", "items": {"$ref": "#/$defs/Filter"}, "maxItems": 2}}, "required": ["all"]},
                {"type": "object", "properties": {"field": {"type": "string"}, "value": {"type": "integer"}}, "required": ["field", "value"]}]}}}}},
        {"type": "function", "function": {"name": "ping", "description": "no arguments",
            "parameters": {"type": "object", "properties": {}}}}
    ])
}

/// The checker's verdicts on `text`, read as `markup` writes it, without repairs.
fn check(text: &str, ctx: &Context, markup: Markup) -> Checked {
    let mut options = RepairOptions::strict();
    options.model_format = Some(markup.model_format());
    check_text(text, ctx, &Limits::default(), &options)
}

/// Why the checked `text` breaks the guarantee, if it does.
fn broken(text: &str, ctx: &Context, grammar: &Grammar, choice: &ToolChoice) -> Option<String> {
    let checked = check(text, ctx, grammar.markup);
    if let Some(e) = &checked.error {
        return Some(format!("refused whole: {e}"));
    }
    for v in &checked.verdicts {
        let Some(e) = &v.error else {
            if let ToolChoice::Named(n) = choice {
                if &v.name != n {
                    return Some(format!("calls `{}`, not the named `{n}`", v.name));
                }
            }
            continue;
        };
        // A listed approximation of this tool, whose path the error names (`price`,
        // `guest.age`, `rooms[0]`: the parameter first).
        let listed = grammar.approximations.iter().any(|a| {
            let parameter = a.path.split(['.', '[']).next().unwrap_or_default();
            a.kind == e.kind && a.tool == v.name && e.message.starts_with(&format!("`{parameter}"))
        });
        if !listed || !matches!(e.kind, ErrorKind::Value | ErrorKind::Limit) {
            return Some(format!("{}: {:?} {e}", v.name, e.kind));
        }
    }
    match choice {
        ToolChoice::Required | ToolChoice::Named(_) if checked.verdicts.is_empty() => {
            Some("no call".into())
        }
        ToolChoice::None if !checked.verdicts.is_empty() => Some("a call".into()),
        _ => None,
    }
    .or_else(|| same_reading(text, grammar.markup, &checked))
}

/// The markup's own reader finds the calls the checker checked, by name and in order (and the
/// front door reading every format finds them too).
fn same_reading(text: &str, markup: Markup, checked: &Checked) -> Option<String> {
    let reading = formats::read(markup.model_format(), text, &Limits::default());
    let names: Vec<&str> = reading.calls.iter().map(|c| c.name.as_str()).collect();
    let checked_names: Vec<&str> = checked.verdicts.iter().map(|v| v.name.as_str()).collect();
    if markup != Markup::Pythonic && names != checked_names {
        return Some(format!(
            "the {markup} reader finds {names:?}, check {checked_names:?}"
        ));
    }
    None
}

/// Sample `count` strings from each markup's Lark grammar for `ctx` and `choice`; every
/// one must keep the guarantee.
fn guarantee(ctx: &Context, choice: ToolChoice, markups: &[Markup], count: usize, seed: u64) {
    for &markup in markups {
        let options = GrammarOptions::default()
            .format(GrammarFormat::Lark)
            .markup(markup)
            .tool_choice(choice.clone());
        let grammar = fexpr::grammar::grammar(ctx, &options).unwrap();
        let m = matcher(&grammar.text);
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut done, mut calls, mut approximated) = (0, 0, 0);
        for _ in 0..count * 4 {
            if done == count {
                break;
            }
            let Some(text) = sample(&m, &mut rng, 12_000) else {
                continue;
            };
            done += 1;
            if let Some(why) = broken(&text, ctx, &grammar, &choice) {
                panic!(
                    "{markup} / {choice}: the grammar wrote a text check refuses: {why}\n\
                     text: {text:?}\napproximations: {:?}",
                    grammar.approximations
                );
            }
            let verdicts = check(&text, ctx, markup).verdicts;
            calls += verdicts.len();
            approximated += verdicts.iter().filter(|v| !v.valid).count();
        }
        assert!(
            done * 2 >= count,
            "{markup} / {choice}: only {done} of {count} samples ended"
        );
        eprintln!(
            "{markup} / {choice}: {done} samples, {calls} calls, all accepted \
             ({approximated} with a Value error at a listed approximation)"
        );
    }
}

#[test]
fn sampled_calls_are_accepted_by_check() {
    let rich = context_of(&rich_tools());
    let demo = fexpr::demo::manager().context().clone();
    for (i, ctx) in [&rich, &demo].into_iter().enumerate() {
        let seed = i as u64 * 1000;
        guarantee(ctx, ToolChoice::Required, Markup::ALL, 40, seed + 1);
        guarantee(ctx, ToolChoice::Auto, Markup::ALL, 20, seed + 2);
        guarantee(
            ctx,
            ToolChoice::None,
            &[Markup::Pythonic, Markup::Hermes],
            10,
            seed + 3,
        );
    }
    guarantee(&rich, ToolChoice::Named("book".into()), Markup::ALL, 20, 4);
}

/// A valid call for every tool of the demo, in each markup: found by sampling the named
/// tool's grammar. Mutations of these must be refused.
#[test]
fn mutations_are_refused_by_grammar_and_check() {
    let ctx = context_of(&rich_tools());
    let options = GrammarOptions::default().tool_choice(ToolChoice::Required);
    let grammar = fexpr::grammar::grammar(&ctx, &options).unwrap();
    let m = matcher(&grammar.text);
    let valid = [
        "[get_weather(city='Oslo', days=3)]",
        "[book(guest={'name': 'Ann', 'age': 30}, rooms=[1, 2])]",
        "[search(query=\"q\", limit=None, mode='fast')]",
    ];
    for text in valid {
        assert!(accepts(&m, text), "the grammar refuses {text}");
        let checked = check(text, &ctx, Markup::Pythonic);
        assert!(
            checked.verdicts.iter().all(|v| v.valid),
            "{text}: {:?}",
            checked.verdicts
        );
    }
    let mutations = [
        ("[get_weather(city='Oslo', dayz=3)]", ErrorKind::Arguments),
        (
            "[get_weather(city='Oslo', city='Rome')]",
            ErrorKind::Arguments,
        ),
        ("[get_weather(city='Oslo', days='3')]", ErrorKind::Type),
        ("[get_weather(city='Oslo', days=3.0)]", ErrorKind::Type),
        (
            "[get_weather(city='Oslo', detailed=true)]",
            ErrorKind::UnknownName,
        ),
        ("[get_weather(days=3)]", ErrorKind::Arguments),
        ("[get_wether(city='Oslo')]", ErrorKind::UnknownTool),
        (
            "[book(guest={'name': 'Ann', 'agee': 30}, rooms=[1])]",
            ErrorKind::Type,
        ),
        ("[book(guest={'age': 30}, rooms=[1])]", ErrorKind::Type),
        ("[book(guest={'name': 'Ann'}, rooms=[])]", ErrorKind::Value),
        ("[book(guest={'name': 'Ann'}, rooms=[4])]", ErrorKind::Value),
        ("[get_weather(city='Oslo', unit='kelvin')]", ErrorKind::Type),
        ("[get_weather(city='Oslo', days=15)]", ErrorKind::Value),
        ("[search(query='q', mode='slow')]", ErrorKind::Type),
    ];
    for (text, kind) in mutations {
        assert!(
            !accepts(&m, text),
            "the grammar accepts the mutation {text}"
        );
        let checked = check(text, &ctx, Markup::Pythonic);
        let errors: Vec<ErrorKind> = checked
            .verdicts
            .iter()
            .filter_map(|v| v.error.as_ref().map(|e| e.kind))
            .collect();
        assert_eq!(errors, [kind], "{text}: {:?}", checked.verdicts);
    }
}

#[test]
fn whitespace_is_allowed_where_python_allows_it() {
    let ctx = context_of(&rich_tools());
    for choice in [ToolChoice::Required, ToolChoice::Auto] {
        for format in [GrammarFormat::Lark] {
            let options = GrammarOptions::default()
                .format(format)
                .tool_choice(choice.clone());
            let grammar = fexpr::grammar::grammar(&ctx, &options).unwrap();
            let m = matcher(&grammar.text);
            for text in [
                "[get_weather(city='Oslo', days=3)]",
                "[get_weather( city = 'Oslo' , days = 3 )]",
                "[ get_weather(days=3, city=\"Oslo\"), ping() ]",
                "[book(rooms=[1 , 2], guest={ 'name' : 'Ann' }), ping()]",
            ] {
                assert!(accepts(&m, text), "{choice}: the grammar refuses {text}");
            }
        }
    }
}

#[test]
fn prose_and_calls_in_auto() {
    let ctx = context_of(&rich_tools());
    let auto = GrammarOptions::default().tool_choice(ToolChoice::Auto);
    let grammar = fexpr::grammar::grammar(&ctx, &auto).unwrap();
    let m = matcher(&grammar.text);
    assert!(accepts(&m, "It is sunny today."));
    assert!(accepts(&m, "[ping()]"));
    assert!(!accepts(&m, "Let me call ping() now."), "a call in prose");
    assert!(!accepts(&m, "[ping(), nope()]"));
    let hermes = auto.markup(Markup::Hermes);
    let grammar = fexpr::grammar::grammar(&ctx, &hermes).unwrap();
    let m = matcher(&grammar.text);
    assert!(accepts(
        &m,
        "I will look.\n<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>"
    ));
    assert!(!accepts(
        &m,
        "I will look.\n<tool_call>\n{\"name\": \"pong\", \"arguments\": {}}\n</tool_call>"
    ));
}

/// Every grammar format compiles where it can be checked here: Lark in llguidance for every
/// markup and tool choice. (GBNF and EBNF are checked by hand with llama.cpp's and XGrammar's
/// Python packages; see BENCHMARKS.md.)
#[test]
fn every_lark_grammar_compiles() {
    let ctx = context_of(&rich_tools());
    for &markup in Markup::ALL {
        for choice in [
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::None,
            ToolChoice::Named("search".into()),
        ] {
            let options = GrammarOptions::default().markup(markup).tool_choice(choice);
            let grammar = fexpr::grammar::grammar(&ctx, &options).unwrap();
            matcher(&grammar.text);
        }
    }
}

// ---------------------------------------------------------------------------------------
// BFCL: every ground-truth call is accepted by its case's grammar.

mod bfcl {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    pub const CATEGORIES: &[&str] = &[
        "simple_python",
        "multiple",
        "parallel",
        "parallel_multiple",
        "live_simple",
        "live_multiple",
        "live_parallel",
        "live_parallel_multiple",
    ];

    pub fn data_dir() -> Option<PathBuf> {
        let dir = std::env::var_os("BFCL_DATA").map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bfcl/bfcl_eval/data"),
            PathBuf::from,
        );
        if dir.join("BFCL_v4_simple_python.json").is_file() {
            return Some(dir);
        }
        let msg = format!(
            "BFCL data not found at {} — run scripts/ci-bfcl.sh (or set BFCL_DATA)",
            dir.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("\n*** SKIPPED: {msg} ***\n");
        None
    }

    fn read_lines(path: &Path) -> Vec<Json> {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// One case: id, function docs, the ground truth as model text (the first acceptable
    /// value of each argument, as `tests/bfcl.rs` writes it).
    pub struct Case {
        pub id: String,
        pub functions: Json,
        pub text: String,
    }

    pub fn cases(dir: &Path, category: &str) -> Vec<Case> {
        let questions = read_lines(&dir.join(format!("BFCL_v4_{category}.json")));
        let answers: BTreeMap<String, Json> =
            read_lines(&dir.join(format!("possible_answer/BFCL_v4_{category}.json")))
                .into_iter()
                .map(|a| {
                    (
                        a["id"].as_str().unwrap().to_string(),
                        a["ground_truth"].clone(),
                    )
                })
                .collect();
        questions
            .into_iter()
            .filter_map(|q| {
                let id = q["id"].as_str().unwrap().to_string();
                let truth = answers.get(&id)?;
                let calls: Vec<String> = truth
                    .as_array()?
                    .iter()
                    .map(|call| {
                        let (name, params) = call.as_object().unwrap().iter().next().unwrap();
                        let args: Vec<String> = params
                            .as_object()
                            .unwrap()
                            .iter()
                            .filter_map(|(k, values)| {
                                values
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .find(|v| *v != &Json::String(String::new()))
                                    .map(|v| {
                                        format!("{k}={}", fexpr::Value::from_json(&first(v)).repr())
                                    })
                            })
                            .collect();
                        format!("{name}({})", args.join(", "))
                    })
                    .collect();
                Some(Case {
                    id,
                    functions: q["function"].clone(),
                    text: format!("[{}]", calls.join(", ")),
                })
            })
            .collect()
    }

    fn first(v: &Json) -> Json {
        match v {
            Json::Object(map) => Json::Object(
                map.iter()
                    .filter_map(|(k, alts)| match alts {
                        Json::Array(alts) => alts
                            .iter()
                            .find(|a| *a != &Json::String(String::new()))
                            .map(|a| (k.clone(), first(a))),
                        other => Some((k.clone(), first(other))),
                    })
                    .collect(),
            ),
            Json::Array(items) => Json::Array(items.iter().map(first).collect()),
            other => other.clone(),
        }
    }
}

/// Every BFCL ground truth that check accepts without repairs is accepted by the grammar of
/// its case's tools (Lark, pythonic, `required`); the ones check accepts only after a repair
/// (`5.0` for an int, `True` for the enum `'True'`) are counted, not required. CI takes every
/// eighth case of each category (set `FEXPR_BFCL_ALL=1` for all of them;
/// `scripts/grammar-engines.py` runs them all through Python's llguidance and XGrammar).
#[test]
fn bfcl_ground_truth_is_accepted_by_the_grammar() {
    let Some(dir) = bfcl::data_dir() else { return };
    let step = if std::env::var_os("FEXPR_BFCL_ALL").is_some() {
        1
    } else {
        4
    };
    let options = GrammarOptions::default().tool_choice(ToolChoice::Required);
    let (mut total, mut strict_valid, mut accepted, mut repaired) = (0, 0, 0, 0);
    let mut refused = Vec::new();
    for category in bfcl::CATEGORIES {
        for case in bfcl::cases(&dir, category).iter().step_by(step) {
            total += 1;
            let ctx = context_of(&case.functions);
            let strict = check_text(
                &case.text,
                &ctx,
                &Limits::default(),
                &RepairOptions::strict(),
            );
            let lenient = check_text(
                &case.text,
                &ctx,
                &Limits::default(),
                &RepairOptions::default(),
            );
            let valid = |c: &Checked| !c.verdicts.is_empty() && c.verdicts.iter().all(|v| v.valid);
            if !valid(&strict) {
                repaired += usize::from(valid(&lenient));
                continue;
            }
            strict_valid += 1;
            let grammar = fexpr::grammar::grammar(&ctx, &options).unwrap();
            if accepts(&matcher(&grammar.text), &case.text) {
                accepted += 1;
            } else {
                refused.push(format!("{}: {}", case.id, case.text));
            }
        }
    }
    eprintln!(
        "BFCL ground truth: {total} cases, {strict_valid} valid without repairs, {accepted} \
         accepted by the grammar; {repaired} valid only after repairs"
    );
    assert!(
        refused.is_empty(),
        "{} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

#[test]
fn left_out_tools_and_bad_tool_choices_are_said() {
    let ctx = context_of(&json!([
        {"name": "odd", "description": "d", "parameters": {"type": "object",
            "properties": {"x": {"type": "string", "not": {"const": "a"}}}, "required": ["x"]}},
        {"name": "fine", "description": "d", "parameters": {"type": "object", "properties": {}}}
    ]));
    let grammar = fexpr::grammar::grammar(&ctx, &GrammarOptions::default()).unwrap();
    assert_eq!(grammar.left_out.len(), 1, "{:?}", grammar.left_out);
    assert_eq!(grammar.left_out[0].0, "odd");
    let named = GrammarOptions::default().tool_choice(ToolChoice::Named("fin".into()));
    let e = fexpr::grammar::grammar(&ctx, &named).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert_eq!(e.hint.as_deref(), Some("did you mean `fine`?"));
    let odd = GrammarOptions::default().tool_choice(ToolChoice::Named("odd".into()));
    assert_eq!(
        fexpr::grammar::grammar(&ctx, &odd).unwrap_err().kind,
        ErrorKind::Config
    );
}

/// Names and keys Python cannot write: a tool called through its alias
/// (`get-current-weather` as `get_current_weather`), a key after `**` in a dict display
/// (`convert(**{"from": "USD"}, amount=3)`): the grammar writes them and the checker accepts
/// what it writes.
#[test]
fn names_python_cannot_write_pass_by_alias() {
    let defs = json!([{"type": "function", "function": {"name": "get-current-weather",
        "description": "w", "parameters": {"type": "object", "properties": {
            "from": {"type": "string"}, "max-results": {"type": "integer"},
            "city": {"type": "string"}}, "required": ["from", "city"]}}}]);
    let ctx = context_of(&defs);
    assert!(matches!(
        ctx.get("get-current-weather"),
        Some(Entry::Tool(_))
    ));
    let grammar = fexpr::grammar::grammar(
        &ctx,
        &GrammarOptions::default().tool_choice(ToolChoice::Required),
    )
    .unwrap();
    let m = matcher(&grammar.text);
    let text = "[get_current_weather(**{\"from\": \"USD\"}, city='Oslo', **{'max-results': 3})]";
    assert!(accepts(&m, text));
    let checked = check(text, &ctx, Markup::Pythonic);
    assert!(
        checked.verdicts.iter().all(|v| v.valid),
        "{:?}",
        checked.verdicts
    );
    guarantee(&ctx, ToolChoice::Required, Markup::ALL, 30, 36);
}

/// Keys Python cannot write (issue 36, the call side): the grammar writes them after `**` in
/// a dict display, one key each (`convert(**{"from": "USD"}, amount=3)`; `城市` is a Python
/// identifier), and the checker accepts what it writes, in every markup; the names half (a
/// hyphenated tool name) is `names_python_cannot_write_pass_by_alias`.
#[test]
fn keys_python_cannot_write_pass_the_grammar_and_the_checker() {
    let defs = json!([{"type": "function", "function": {"name": "convert",
        "description": "c", "parameters": {"type": "object", "properties": {
            "from": {"type": "string"}, "max-results": {"type": "integer"},
            "城市": {"type": "string"}, "city": {"type": "string"}},
            "required": ["from", "city"]}}}]);
    let ctx = context_of(&defs);
    let grammar = fexpr::grammar::grammar(
        &ctx,
        &GrammarOptions::default().tool_choice(ToolChoice::Required),
    )
    .unwrap();
    let m = matcher(&grammar.text);
    let text = "[convert(**{\"from\": \"USD\"}, city='Oslo', **{'max-results': 3}, 城市=\"北京\")]";
    assert!(accepts(&m, text));
    let checked = check(text, &ctx, Markup::Pythonic);
    assert!(
        checked.verdicts.iter().all(|v| v.valid),
        "{:?}",
        checked.verdicts
    );
    assert_eq!(
        checked.verdicts[0].to_json()["kwargs"],
        json!({"from": "USD", "city": "Oslo", "max-results": 3, "城市": "北京"})
    );
    guarantee(&ctx, ToolChoice::Required, Markup::ALL, 30, 36);
}

/// The alias and `**{...}` forms are what the grammar writes (checked without the checker).
#[test]
fn names_and_keys_python_cannot_write_use_alias_and_dict_display() {
    assert_eq!(
        fexpr::context::python_alias("get-current-weather"),
        "get_current_weather"
    );
    assert_eq!(
        fexpr::context::python_alias("game.get_winner"),
        "game.get_winner"
    );
    assert_eq!(fexpr::context::python_alias("9lives"), "_9lives");
    let sig = RecordType::from_schema(
        "convert",
        &json!({"type": "object", "properties": {"from": {"type": "string"},
            "amount": {"type": "integer"}}, "required": ["from", "amount"]}),
    );
    let mut ctx = Context::new();
    ctx.insert("convert", Entry::Tool(Arc::new(sig)));
    let grammar = fexpr::grammar::grammar(
        &ctx,
        &GrammarOptions::default().tool_choice(ToolChoice::Required),
    )
    .unwrap();
    let m = matcher(&grammar.text);
    assert!(accepts(&m, "[convert(**{\"from\": \"USD\"}, amount=3)]"));
    assert!(accepts(&m, "[convert(amount=3, **{'from': 'USD'})]"));
    assert!(!accepts(&m, "[convert(from='USD', amount=3)]"));
}

/// What an engine reads: the demo tools' grammar in every format (`tests/snapshots/grammar/`).
#[test]
fn demo_grammars_snapshot() {
    let manager = fexpr::demo::manager();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/grammar");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for &format in GrammarFormat::ALL {
            for (markup, choice) in [
                (Markup::Pythonic, ToolChoice::Required),
                (Markup::Hermes, ToolChoice::Auto),
                (Markup::Qwen3Coder, ToolChoice::Required),
            ] {
                let options = GrammarOptions::default()
                    .format(format)
                    .markup(markup)
                    .tool_choice(choice.clone());
                let grammar = manager.grammar(&options).unwrap();
                let mut shown = grammar.text.clone();
                if format == GrammarFormat::StructuralTag {
                    let tag: Json = serde_json::from_str(&grammar.text).unwrap();
                    shown = serde_json::to_string_pretty(&tag).unwrap();
                }
                for a in &grammar.approximations {
                    shown.push_str(&format!("\n# approximation: {a:?}"));
                }
                insta::assert_snapshot!(format!("{format}-{markup}-{choice}"), shown);
            }
        }
    });
}

/// `fexpr grammar`: the grammar on stdout, approximations on stderr, an engine's request with
/// `--request`, a usage error (exit 2) for a tool choice naming no tool.
#[test]
fn the_cli_prints_the_grammar() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_fexpr"))
            .arg("grammar")
            .args(args)
            .output()
            .unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.status.code(),
        )
    };
    let (lark, _, code) = run(&["--tools", "demo"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        lark.trim_end(),
        fexpr::demo::manager()
            .grammar(&GrammarOptions::default())
            .unwrap()
            .text
            .trim_end()
    );
    matcher(&lark);
    let (vllm, _, _) = run(&[
        "--format",
        "ebnf",
        "--markup",
        "hermes",
        "--request",
        "vllm",
    ]);
    let vllm: Json = serde_json::from_str(&vllm).unwrap();
    assert!(vllm["structured_outputs"]["grammar"]
        .as_str()
        .unwrap()
        .starts_with("root ::= calls"));
    let dir = std::env::temp_dir().join(format!("fexpr-grammar-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(&tools, rich_tools().to_string()).unwrap();
    let (_, stderr, code) = run(&["--tools-json", tools.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let notes: Vec<Json> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n["approximation"]["what"] == "pattern `^[A-Z]{3}$`"),
        "{stderr}"
    );
    let (_, stderr, code) = run(&["--tools", "demo", "--tool-choice", "ad"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("did you mean `add`?"), "{stderr}");
    let (_, stderr, code) = run(&["--format", "lark", "--request", "sglang"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--format ebnf"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

//! Calls valid by construction: a "model" that picks uniformly at random among the tokens the
//! grammar allows writes only calls that fexpr's checker accepts, and they run. No GPU, no
//! model: the demo tools' grammar (`manager.grammar`, Lark, pythonic, `tool_choice=required`)
//! compiled by llguidance over a byte-level token environment, and a random walk over its
//! token mask, each allowed token (end of text among them once the calls are complete)
//! equally likely.
//!
//! Run: `cargo run --release --example grammar_demo [count] [seed]`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::check::check_text;
use fexpr::grammar::{GrammarOptions, ToolChoice};
use fexpr::repair::RepairOptions;
use fexpr::Input;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokenId};
use llguidance::{Matcher, ParserFactory};

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(40);

    let manager = fexpr::demo::manager();
    let options = GrammarOptions::default().tool_choice(ToolChoice::Required);
    let grammar = manager.grammar(&options).unwrap();
    println!(
        "== The demo tools' grammar: {} bytes of Lark; approximations: {:?}",
        grammar.text.len(),
        grammar.approximations
    );

    let env = ApproximateTokEnv::single_byte_env();
    let factory = ParserFactory::new_simple(&env).unwrap();
    let parser = factory.create_parser(TopLevelGrammar::from_lark(grammar.text.clone()));
    let start = Matcher::new(parser);
    assert!(!start.is_error(), "{:?}", start.get_error());
    let trie = env.tok_trie();
    let eos = trie.eos_token();
    let mut rng = Rng(seed | 1);

    let mut written = 0;
    while written < count {
        // The "model": any allowed token, equally likely.
        let mut m = start.deep_clone();
        let mut text = Vec::new();
        let finished = loop {
            let mask = m.compute_mask().unwrap();
            let mut allowed: Vec<TokenId> = Vec::new();
            mask.iter_set_entries(|t| allowed.push(t as TokenId));
            let t = allowed[rng.below(allowed.len())];
            if t == eos {
                break true;
            }
            text.extend_from_slice(trie.token(t));
            m.consume_token(t).unwrap();
            if m.is_stopped() {
                break true;
            }
            if text.len() > 4000 {
                break false; // a very long string: start over
            }
        };
        if !finished {
            continue;
        }
        written += 1;
        let text = String::from_utf8(text).expect("the grammar writes UTF-8");
        println!("\n== The model wrote:\n{text}");
        // Checked as written, with no repair: every call is valid.
        let checked = check_text(
            &text,
            manager.context(),
            manager.limits(),
            &RepairOptions::strict(),
        );
        assert!(
            !checked.verdicts.is_empty() && checked.verdicts.iter().all(|v| v.valid),
            "the grammar wrote a call check refuses: {:?}",
            checked.verdicts
        );
        // And run.
        for out in manager.run(Input::model_output(&text)).await.outputs {
            let call = out
                .parsed_input
                .as_ref()
                .map_or(out.name.clone(), |c| c.to_expr());
            let call: String = call.chars().take(120).collect();
            match &out.output {
                Ok(value) => {
                    let shown: String = value.repr().chars().take(80).collect();
                    println!("ran {call} -> {shown}");
                }
                Err(e) => println!("ran {call} -> the tool said: {}", e.message),
            }
        }
    }
    println!("\n{count} outputs written at random within the grammar: every call valid, and run.");
}

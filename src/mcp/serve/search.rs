//! `search_tools`' index: the words of every tool's name and description, made once, so that a
//! query costs its (bounded) words times the entries they match, never words × tools ×
//! description length.

use std::collections::BTreeMap;

use crate::dispatch::tool::ToolDefinition;

use super::SEARCH_QUERY_WORDS as MAX_QUERY_WORDS;

/// What a word of a tool's name counts against one of its description.
const NAME_WEIGHT: u8 = 3;

/// Every word of the tools' names and descriptions, lower-cased, with the tools holding it.
pub(super) struct Index {
    /// Word → (tool, weight), each tool once per word (the name's weight when both hold it).
    words: BTreeMap<String, Vec<(usize, u8)>>,
    /// Each tool's Python definition, in the manager's order.
    shown: Vec<String>,
}

/// What a search found.
pub(super) struct Found<'a> {
    /// The matching tools' Python definitions, best first.
    pub tools: Vec<&'a str>,
    /// How many distinct words of the query were left out ([`MAX_QUERY_WORDS`]).
    pub words_left_out: usize,
}

/// The words of `text`: its runs of letters and digits, lower-cased.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Index {
    /// The index of `definitions`.
    pub(super) fn new<'a>(definitions: impl Iterator<Item = &'a ToolDefinition>) -> Index {
        let mut words_of: BTreeMap<String, Vec<(usize, u8)>> = BTreeMap::new();
        let mut shown = Vec::new();
        for (tool, def) in definitions.enumerate() {
            let mut own: BTreeMap<String, u8> = BTreeMap::new();
            for word in words(&def.description) {
                own.entry(word).or_insert(1);
            }
            for word in words(&def.name) {
                own.insert(word, NAME_WEIGHT);
            }
            for (word, weight) in own {
                words_of.entry(word).or_default().push((tool, weight));
            }
            shown.push(def.python());
        }
        Index {
            words: words_of,
            shown,
        }
    }

    /// The tools matching `query`, best first, at most `limit`: each query word counts for a
    /// tool whose name (3) or description (1) has a word starting with it; a query without
    /// words lists the tools in order.
    pub(super) fn search(&self, query: &str, limit: usize) -> Found<'_> {
        let mut asked: Vec<String> = Vec::new();
        let mut words_left_out = 0;
        for word in words(query) {
            if asked.contains(&word) {
                continue;
            }
            if asked.len() == MAX_QUERY_WORDS {
                words_left_out += 1;
            } else {
                asked.push(word);
            }
        }
        if asked.is_empty() {
            let tools = self.shown.iter().take(limit).map(String::as_str).collect();
            return Found {
                tools,
                words_left_out,
            };
        }
        let mut score = vec![0usize; self.shown.len()];
        // The best weight each tool has for the word being looked up.
        let mut best = vec![0u8; self.shown.len()];
        let mut touched = Vec::new();
        for word in &asked {
            let matching = self
                .words
                .range(word.clone()..)
                .take_while(|(w, _)| w.starts_with(word.as_str()));
            for (_, postings) in matching {
                for &(tool, weight) in postings {
                    if let Some(b) = best.get_mut(tool) {
                        if *b == 0 {
                            touched.push(tool);
                        }
                        *b = (*b).max(weight);
                    }
                }
            }
            for tool in touched.drain(..) {
                if let (Some(s), Some(b)) = (score.get_mut(tool), best.get_mut(tool)) {
                    *s += usize::from(*b);
                    *b = 0;
                }
            }
        }
        let mut ranked: Vec<(usize, usize)> = score
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0)
            .collect();
        ranked.sort_by_key(|(tool, s)| (std::cmp::Reverse(*s), *tool));
        let tools = ranked
            .into_iter()
            .take(limit)
            .filter_map(|(tool, _)| self.shown.get(tool).map(String::as_str))
            .collect();
        Found {
            tools,
            words_left_out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition::new(
            name,
            description,
            json!({"type": "object", "properties": {}}),
        )
    }

    #[test]
    fn names_count_more_than_descriptions_and_words_match_by_prefix() {
        let defs = [
            def("get_forecast", "Tomorrow's weather."),
            def("get-current-weather", "The weather now."),
            def("add", "Add two numbers."),
        ];
        let index = Index::new(defs.iter());
        let found = index.search("weather", 10);
        assert_eq!(found.tools.len(), 2);
        assert!(
            found.tools[0].starts_with("def get_current_weather("),
            "{:?}",
            found.tools
        );
        assert!(index.search("forecasting", 10).tools.is_empty());
        assert_eq!(index.search("fore", 10).tools.len(), 1);
        assert_eq!(index.search("", 2).tools.len(), 2);
        assert!(index.search("zzz", 10).tools.is_empty());
    }

    #[test]
    fn a_long_query_looks_up_a_bounded_number_of_words() {
        let defs: Vec<ToolDefinition> = (0..200)
            .map(|i| def(&format!("tool_{i}"), &"alpha beta gamma ".repeat(50)))
            .collect();
        let index = Index::new(defs.iter());
        let query: String = (0..10_000).map(|i| format!("w{i} ")).collect();
        let found = index.search(&query, 10);
        assert_eq!(found.words_left_out, 10_000 - MAX_QUERY_WORDS);
        assert!(found.tools.is_empty());
        // Repeated words are one word.
        assert_eq!(index.search(&"alpha ".repeat(10_000), 5).words_left_out, 0);
    }
}

//! The module graph follows ARCHITECTURE.md: every `crate::` path in `src/` (a `use` or a path
//! in code) is an import from its file's top-level module to the module it names; no stage
//! imports a stage of higher rank (or another stage of its own rank), and there is no cycle
//! between top-level modules. The ranks are read from the "Layers" table of ARCHITECTURE.md.
//! A path through a name `lib.rs` re-exports (`crate::ToolManager`, `crate::manager::…`) is an
//! import of the module that defines it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Today's imports that break the rule, `(from, to)`. Removed by the stage move (issue 17): the
/// lead deletes each as the moves land; a listed import that no longer exists fails the test,
/// so the list only shrinks.
const KNOWN: &[(&str, &str)] = &[];

/// Imports between top-level modules: `from -> to -> ["file:line", ...]`.
type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The top-level modules named by the `crate::` paths of `source`, with their line numbers.
/// Comment lines are skipped (an intra-doc link is not an import); `crate::{a::b, c}` names
/// `a` and `c`.
fn imports(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + "crate::".len()..];
            rest = after;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            match after.strip_prefix('{') {
                Some(list) => {
                    let mut depth = 0usize;
                    let mut item_start = true;
                    for (i, c) in list.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => item_start = true,
                            c if item_start && (c.is_alphabetic() || c == '_') => {
                                found.push((n + 1, ident(&list[i..])));
                                item_start = false;
                            }
                            _ => {}
                        }
                    }
                }
                None => {
                    let name = ident(after);
                    if !name.is_empty() {
                        found.push((n + 1, name));
                    }
                }
            }
        }
    }
    found
}

/// The names the crate root brings in with `use` (public or not: `crate::X` reaches both),
/// each to the module it names: `pub use manager::ToolManager;` gives `ToolManager -> manager`,
/// `pub use dispatch::{manager, tool as t};` gives `manager -> dispatch`, `t -> dispatch`;
/// `mod` lines say which names are the crate's own modules.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let code: String = lib
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut modules = BTreeSet::new();
    let mut pairs = Vec::new();
    for statement in code.split(';') {
        let lines: Vec<&str> = statement
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let declaration = lines.join(" ");
        let declaration = ["pub(crate) ", "pub "]
            .iter()
            .find_map(|p| declaration.strip_prefix(p))
            .unwrap_or(&declaration);
        if let Some(module) = declaration.strip_prefix("mod ") {
            modules.insert(ident(module));
            continue;
        }
        let Some(path) = declaration.strip_prefix("use ") else {
            continue;
        };
        let path = path.strip_prefix("crate::").unwrap_or(path);
        let from = ident(path);
        let rest = &path[from.len()..];
        let items = match rest.find('{') {
            Some(open) => rest[open + 1..].trim_end().trim_end_matches('}'),
            None => rest.trim_start_matches(':'),
        };
        for item in items.split(',') {
            let item = item.trim();
            let name = match item.split(" as ").nth(1) {
                Some(alias) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or_default(),
            };
            // `use crate::{tool, …}` names top-level modules: the module is the item's first.
            let target = if from.is_empty() {
                ident(item)
            } else {
                from.clone()
            };
            if !name.is_empty() && name != "self" && name != target {
                pairs.push((name.to_string(), target));
            }
        }
    }
    // Only names of this crate: `pub use fexpr_macros::tool;` is another crate's macro.
    let local: BTreeSet<String> = pairs
        .iter()
        .filter(|(_, target)| modules.contains(target))
        .map(|(name, _)| name.clone())
        .collect();
    let mut names = BTreeMap::new();
    for (name, target) in pairs {
        if modules.contains(&target) || local.contains(&target) {
            names.entry(name).or_insert(target);
        }
    }
    names
}

/// The top-level module `name` stands for: itself, or where a root re-export of it leads
/// (`ToolManager -> manager -> dispatch`); any other name stays as it is.
fn defining(name: &str, reexports: &BTreeMap<String, String>) -> String {
    let mut at = name;
    for _ in 0..=reexports.len() {
        match reexports.get(at) {
            Some(next) => at = next,
            None => break,
        }
    }
    at.to_string()
}

fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The graph of `src/` (without `lib.rs` and `bin/`): a file's module is its first path
/// component, `foo.rs` or `foo/`; a name `lib.rs` re-exports counts as its defining module.
fn graph(src: &Path) -> Graph {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("read src/lib.rs");
    let reexports = reexports(&lib);
    let mut graph = Graph::new();
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("read src/");
            files.extend(entries.map(|e| e.expect("a directory entry").path()));
            continue;
        }
        let rel = path.strip_prefix(src).expect("under src/");
        let first = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or_default();
        if rel.extension().is_none_or(|e| e != "rs") || first == "lib.rs" || first == "bin" {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&path).expect("read a source file");
        let edges = graph.entry(module.clone()).or_default();
        for (line, to) in imports(&text) {
            let to = defining(&to, &reexports);
            if to != module {
                let place = format!("src/{}:{line}", rel.display());
                edges.entry(to).or_default().push(place);
            }
        }
    }
    graph
}

/// `module -> (rank, stage)` from the "Layers" table: rows `| rank | stage | `m` `n` |`.
fn ranks(architecture: &str) -> BTreeMap<String, (u32, String)> {
    let mut ranks = BTreeMap::new();
    for line in architecture.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, rank, stage, modules, ..] = cells.as_slice() else {
            continue;
        };
        let Ok(rank) = rank.parse::<u32>() else {
            continue;
        };
        for module in modules.split('`').skip(1).step_by(2) {
            ranks.insert(module.to_string(), (rank, stage.to_string()));
        }
    }
    ranks
}

/// Everything wrong with `graph` under `ranks`, ignoring the imports in `known`; sorted.
fn violations(
    graph: &Graph,
    ranks: &BTreeMap<String, (u32, String)>,
    known: &[(&str, &str)],
) -> Vec<String> {
    let mut problems = Vec::new();
    let is_known = |from: &str, to: &str| known.iter().any(|(f, t)| *f == from && *t == to);
    for (from, to) in known {
        if !graph.get(*from).is_some_and(|e| e.contains_key(*to)) {
            problems.push(format!(
                "known exception {from} -> {to} no longer exists: remove it from KNOWN"
            ));
        }
    }
    let mut live = Graph::new();
    for (from, edges) in graph {
        let Some((from_rank, from_stage)) = ranks.get(from) else {
            problems.push(format!(
                "module `{from}` has no rank in ARCHITECTURE.md's Layers table"
            ));
            continue;
        };
        for (to, places) in edges {
            if is_known(from, to) {
                continue;
            }
            live.entry(from.clone())
                .or_default()
                .insert(to.clone(), places.clone());
            let Some((to_rank, to_stage)) = ranks.get(to) else {
                problems.push(format!(
                    "{from} imports `crate::{to}`, neither a module of the Layers table nor a \
                     name lib.rs re-exports, at {}",
                    places.join(", ")
                ));
                continue;
            };
            if to_rank > from_rank || (to_rank == from_rank && to_stage != from_stage) {
                problems.push(format!(
                    "{from} ({from_stage}, rank {from_rank}) imports {to} ({to_stage}, rank {to_rank}) upward at {}",
                    places.join(", ")
                ));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (from, edges) in &live {
        for to in edges.keys() {
            let Some(path) = path(&live, to, from) else {
                continue;
            };
            let members: BTreeSet<String> = path.iter().cloned().collect();
            if !seen.insert(members) {
                continue;
            }
            let mut cycle = vec![from.clone()];
            cycle.extend(path);
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} -> {} ({})", w[0], w[1], live[&w[0]][&w[1]].join(", ")))
                .collect();
            problems.push(format!("import cycle: {}", steps.join("; ")));
        }
    }
    problems.sort();
    problems
}

/// A path of imports `start -> ... -> goal` in `graph` (breadth first: a shortest one).
fn path(graph: &Graph, start: &str, goal: &str) -> Option<Vec<String>> {
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut visited = BTreeSet::from([start]);
    while let Some(node) = queue.pop_front() {
        if node == goal {
            let mut path = vec![node.to_string()];
            let mut at = node;
            while let Some(&p) = previous.get(at) {
                path.push(p.to_string());
                at = p;
            }
            path.reverse();
            return Some(path);
        }
        for next in graph.get(node).into_iter().flat_map(|e| e.keys()) {
            if visited.insert(next) {
                previous.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

#[test]
fn the_module_graph_follows_architecture_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let ranks = ranks(&architecture);
    assert!(ranks.len() >= 10, "the Layers table: {ranks:?}");
    let graph = graph(&root.join("src"));
    assert!(graph.contains_key("eval") && graph.contains_key("syntax"));
    let problems = violations(&graph, &ranks, KNOWN);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

fn graph_of(edges: &[(&str, &str)]) -> Graph {
    let mut graph = Graph::new();
    for (i, (from, to)) in edges.iter().enumerate() {
        let edges = graph.entry(from.to_string()).or_default();
        edges.insert(to.to_string(), vec![format!("src/{from}.rs:{}", i + 1)]);
    }
    graph
}

const TABLE: &str = "\
| rank | stage | modules |
| --- | --- | --- |
| 2 | dispatch | `tool` `session` |
| 1 | eval | `eval` |
| 0 | base | `error` |
";

#[test]
fn today_known_cycles_are_reported_with_where_each_import_is() {
    let graph = graph_of(&[("tool", "session"), ("session", "tool"), ("tool", "error")]);
    let problems = violations(&graph, &ranks(TABLE), &[]);
    assert_eq!(
        problems,
        ["import cycle: session -> tool (src/session.rs:2); tool -> session (src/tool.rs:1)"]
    );
    assert!(violations(&graph, &ranks(TABLE), &[("session", "tool")]).is_empty());
}

#[test]
fn an_upward_import_a_missing_rank_and_a_stale_exception_fail() {
    let graph = graph_of(&[("error", "eval"), ("eval", "error"), ("parser", "error")]);
    let problems = violations(&graph, &ranks(TABLE), &[("eval", "tool")]);
    assert_eq!(
        problems,
        [
            "error (base, rank 0) imports eval (eval, rank 1) upward at src/error.rs:1",
            "import cycle: error -> eval (src/error.rs:1); eval -> error (src/eval.rs:2)",
            "known exception eval -> tool no longer exists: remove it from KNOWN",
            "module `parser` has no rank in ARCHITECTURE.md's Layers table",
        ]
    );
}

#[test]
fn imports_are_read_from_paths_and_use_lists_but_not_comments() {
    let source = "\
use crate::error::{Error, Span};
use crate::{front::{self, Ignored}, limits::Limits, value};
//! [`crate::manager`] is a doc link
let x = crate::eval::run(); let y = $crate::tool::x; let z = my_crate::session::y;
";
    let names: Vec<(usize, String)> = imports(source);
    let names: Vec<(usize, &str)> = names.iter().map(|(l, n)| (*l, n.as_str())).collect();
    assert_eq!(
        names,
        [
            (1, "error"),
            (2, "front"),
            (2, "limits"),
            (2, "value"),
            (4, "eval")
        ]
    );
}

const LIB: &str = "\
pub mod eval;
pub mod tool;
mod session;
pub use eval::run as evaluate;
// pub use session::Commented;
#[cfg(feature = \"native\")]
pub use crate::{tool, session};
pub use tool::{Tool, ToolDefinition as Definition};
use session::Session;
pub use fexpr_macros::tool;
";

#[test]
fn root_reexports_lead_to_their_defining_module() {
    let names = reexports(LIB);
    let module = |name: &str| defining(name, &names);
    assert_eq!(module("evaluate"), "eval");
    assert_eq!(module("Tool"), "tool");
    assert_eq!(module("Definition"), "tool");
    assert_eq!(module("Session"), "session");
    assert_eq!(module("tool"), "tool");
    assert_eq!(module("Commented"), "Commented");
    assert_eq!(module("error"), "error");
}

#[test]
fn an_upward_import_through_a_root_reexport_fails() {
    // `use crate::Tool;` in `error`: `Tool` is `lib.rs`'s re-export of `tool::Tool`; a name
    // that leads nowhere is reported too, not skipped.
    let names = reexports(LIB);
    let mut graph = Graph::new();
    let text = "use crate::Tool;\nfn f() -> crate::evaluate::X { crate::Nothing }\n";
    for (line, to) in imports(text) {
        graph
            .entry("error".to_string())
            .or_default()
            .entry(defining(&to, &names))
            .or_default()
            .push(format!("src/error.rs:{line}"));
    }
    assert_eq!(
        violations(&graph, &ranks(TABLE), &[]),
        [
            "error (base, rank 0) imports eval (eval, rank 1) upward at src/error.rs:2",
            "error (base, rank 0) imports tool (dispatch, rank 2) upward at src/error.rs:1",
            "error imports `crate::Nothing`, neither a module of the Layers table nor a name \
             lib.rs re-exports, at src/error.rs:2",
        ]
    );
}

//! AdalFlow's component tools (seed 000): a struct keeps its configuration, client and state
//! hidden from the model and exposes methods as tools; each tool's full `output` stays with
//! the program while the model reads a short `observation`.
//!
//! `cargo run --example component_tool`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use fexpr::Input;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use fexpr::tool::{Component, ToolError};
use fexpr::{FunctionTool, ToolManager, Value};

/// A search component: an API key and a document store the model never sees.
struct DocumentSearch {
    api_key: String,
    documents: Vec<(String, String)>,
    queries: AtomicU32,
}

impl DocumentSearch {
    fn search(&self, query: &str, top_k: usize) -> Result<Vec<String>, ToolError> {
        if self.api_key.is_empty() {
            return Err(ToolError::new("the search service is not configured"));
        }
        self.queries.fetch_add(1, Ordering::Relaxed);
        let query = query.to_lowercase();
        Ok(self
            .documents
            .iter()
            .filter(|(title, body)| title.to_lowercase().contains(&query) || body.contains(&query))
            .take(top_k)
            .map(|(title, body)| format!("{title}: {body}"))
            .collect())
    }
}

impl Component for DocumentSearch {
    fn tools(self: Arc<Self>) -> Vec<FunctionTool> {
        let this = self.clone();
        let search = FunctionTool::new(
            "search",
            ["query", "top_k"],
            move |query: String, top_k: Option<usize>| this.search(&query, top_k.unwrap_or(5)),
        )
        .description("Search the documents; returns the matching documents.")
        // The model sees titles and a count, not the whole documents.
        .observe(|output| match output {
            Value::List(hits) => {
                let titles: Vec<String> = hits
                    .iter()
                    .filter_map(|h| match h {
                        Value::Str(s) => s.split(':').next().map(str::to_string),
                        _ => None,
                    })
                    .collect();
                format!("{} documents: {}", hits.len(), titles.join("; "))
            }
            other => other.repr(),
        });
        let this = self.clone();
        let stats = FunctionTool::new("search_stats", [], move || {
            this.queries.load(Ordering::Relaxed)
        })
        .description("How many searches ran so far.");
        vec![search, stats]
    }
}

fn main() {
    let component = Arc::new(DocumentSearch {
        api_key: "sk-live-not-for-models".into(),
        documents: (1..=30)
            .map(|i| {
                (
                    format!("Rust note {i}"),
                    "ownership and borrowing, at length ".repeat(20),
                )
            })
            .collect(),
        queries: AtomicU32::new(0),
    });
    let manager = ToolManager::builder()
        .component(component.clone())
        .build()
        .expect("the tools are well-formed");

    println!(
        "What the model is shown:\n{}\n",
        manager.definitions().yaml()
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    for text in [
        "search(query='rust note 1', top_k=3)",
        "[search(query='ownership'), search_stats()]",
    ] {
        for out in rt.block_on(async { manager.run(Input::expr(text)).await.outputs }) {
            let full = out.output.as_ref().map_or(0, |v| v.repr().len());
            println!(
                "{}",
                out.parsed_input
                    .as_ref()
                    .map_or(out.input.clone(), |f| f.to_expr())
            );
            println!(
                "  observation ({} chars): {}",
                manager.observation(&out).len(),
                manager.observation(&out)
            );
            println!("  full output kept for the program: {full} chars");
        }
    }
    println!(
        "\nqueries counted by the component's own state: {}",
        component.queries.load(Ordering::Relaxed)
    );
}

//! `#[fexpr::tool]` and `#[fexpr::tools]`: tools declared on functions and `impl` blocks get
//! their names, descriptions, defaults and injected context from the Rust code, and run as
//! hand-built `FunctionTool`s do. (The mistakes a user can make are compile errors, tested in
//! `macros/tests/ui/`.)
#![cfg(feature = "macros")]

mod common;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use fexpr::tool::ToolError;
use fexpr::{CallContext, ErrorKind, FunctionOutput, Tool, ToolManager};
use serde_json::json;

fn run(manager: &ToolManager, text: &str) -> FunctionOutput {
    common::runtime().block_on(manager.execute_func_expr(text))
}

fn repr(manager: &ToolManager, text: &str) -> String {
    let out = run(manager, text);
    match out.output {
        Ok(value) => value.repr(),
        Err(error) => panic!("{text}: {error:?}"),
    }
}

/// Today's weather in a city.
///
/// Uses the cached forecast.
///
/// # Arguments
///
/// * `city` - The city, in English.
/// * `unit` - `C` or `F`,
///   as the user prefers.
/// * `ctx` - Injected; not shown to the model.
///
/// # Examples
///
/// ```ignore
/// # a hidden line, not a heading
/// ```
#[fexpr::tool]
fn weather(city: String, ctx: CallContext, #[default("C")] unit: String) -> String {
    format!("{city}: 21 °{unit} (from {})", ctx.tool())
}

#[test]
fn a_function_becomes_a_tool_with_its_names_docs_and_defaults() {
    let tool = weather_tool();
    let definition = tool.definition();
    assert_eq!(
        definition.python_signature(),
        "weather(city: str, unit: str = 'C') -> str"
    );
    assert_eq!(
        definition.description,
        "Today's weather in a city.\n\nUses the cached forecast."
    );
    assert_eq!(
        definition.parameters["properties"]["city"]["description"],
        json!("The city, in English.")
    );
    assert_eq!(
        definition.parameters["properties"]["unit"]["description"],
        json!("`C` or `F`, as the user prefers.")
    );
    assert_eq!(definition.parameters["required"], json!(["city"]));
    assert!(tool.check().is_ok());
}

#[test]
fn the_context_is_injected_wherever_it_is_declared_and_the_model_cannot_set_it() {
    let manager = ToolManager::builder().tool(weather_tool()).build().unwrap();
    assert_eq!(
        repr(&manager, "weather('Oslo')"),
        "'Oslo: 21 °C (from weather)'"
    );
    assert_eq!(
        repr(&manager, "weather(city='Oslo', unit='F')"),
        "'Oslo: 21 °F (from weather)'"
    );
    let forged = run(&manager, "weather(city='Oslo', ctx=1)");
    assert_eq!(forged.output.unwrap_err().kind, ErrorKind::Arguments);
}

/// Fetch a page.
#[fexpr::tool(name = "fetch_page")]
async fn fetch(url: String, #[default(2)] retries: u32) -> Result<String, ToolError> {
    tokio::task::yield_now().await;
    if url.starts_with("https://") {
        Ok(format!("{url} after {retries} retries"))
    } else {
        Err(ToolError::new(format!("not an https URL: {url}")))
    }
}

#[test]
fn an_async_function_with_a_result_and_another_name() {
    let manager = ToolManager::builder().tool(fetch_tool()).build().unwrap();
    assert_eq!(
        manager.definitions().next().unwrap().python_signature(),
        "fetch_page(url: str, retries: int = 2) -> str"
    );
    assert_eq!(
        repr(&manager, "fetch_page('https://a.example')"),
        "'https://a.example after 2 retries'"
    );
    let failed = run(&manager, "fetch_page('ftp://a.example', retries=0)");
    let error = failed.output.unwrap_err();
    assert_eq!(error.kind, ErrorKind::ToolFailed);
    assert_eq!(error.message, "not an https URL: ftp://a.example");
}

/// The thread the tool ran on.
#[fexpr::tool(inline)]
fn thread_inline() -> String {
    std::thread::current().name().unwrap_or("").to_string()
}

/// The thread the tool ran on.
#[fexpr::tool]
fn thread_pooled() -> String {
    std::thread::current().name().unwrap_or("").to_string()
}

#[test]
fn inline_runs_a_sync_tool_on_the_calling_task_and_others_on_the_blocking_pool() {
    let manager = ToolManager::builder()
        .tool(thread_inline_tool())
        .tool(thread_pooled_tool())
        .build()
        .unwrap();
    let here = std::thread::current().name().unwrap_or("").to_string();
    assert_eq!(repr(&manager, "thread_inline()"), format!("'{here}'"));
    assert_ne!(repr(&manager, "thread_pooled()"), format!("'{here}'"));
}

#[test]
fn a_wrong_default_is_reported_when_the_tool_is_built() {
    /// Repeat a word.
    #[fexpr::tool]
    fn repeat(word: String, #[default("twice")] times: usize) -> String {
        word.repeat(times)
    }
    let error = repeat_tool().check().unwrap_err();
    assert_eq!(
        error.message,
        "tool `repeat`: default for `times` is 'twice', not an int"
    );
    let refused = fexpr::ToolManager::builder()
        .tool(repeat_tool())
        .build()
        .unwrap_err();
    assert_eq!(refused.problems(), [error]);
}

/// A bank account: the balance stays in the struct, hidden from the model.
struct Account {
    balance: AtomicI64,
    limit: i64,
}

#[fexpr::tools]
impl Account {
    /// Deposit money; returns the new balance.
    ///
    /// # Arguments
    ///
    /// * `amount` - In cents.
    #[tool(inline)]
    fn deposit(&self, amount: i64) -> i64 {
        self.balance.fetch_add(amount, Ordering::SeqCst) + amount
    }

    /// Withdraw money, up to the account's limit.
    #[tool]
    async fn withdraw(&self, amount: i64, ctx: CallContext) -> Result<i64, ToolError> {
        if amount > self.limit {
            return Err(ToolError::new(format!(
                "{} refused: {amount} is over the limit",
                ctx.tool()
            )));
        }
        Ok(self.balance.fetch_sub(amount, Ordering::SeqCst) - amount)
    }

    /// The currency, the same for every account.
    #[tool(name = "currency")]
    fn currency_name() -> String {
        "EUR".into()
    }

    /// Not a tool: no `#[tool]`.
    fn balance(&self) -> i64 {
        self.balance.load(Ordering::SeqCst)
    }
}

#[test]
fn an_impl_block_makes_its_tool_methods_a_component() {
    let account = Arc::new(Account {
        balance: AtomicI64::new(0),
        limit: 100,
    });
    let manager = ToolManager::builder()
        .component(account.clone())
        .build()
        .unwrap();
    let signatures: Vec<String> = manager
        .definitions()
        .map(|d| d.python_signature())
        .collect();
    assert_eq!(
        signatures,
        [
            "deposit(amount: int) -> int",
            "withdraw(amount: int) -> int",
            "currency() -> str",
        ]
    );
    let deposit = manager.definitions().next().unwrap();
    assert_eq!(
        deposit.description,
        "Deposit money; returns the new balance."
    );
    assert_eq!(
        deposit.parameters["properties"]["amount"]["description"],
        json!("In cents.")
    );
    assert_eq!(repr(&manager, "deposit(250)"), "250");
    assert_eq!(repr(&manager, "withdraw(amount=50)"), "200");
    let refused = run(&manager, "withdraw(amount=500)");
    assert_eq!(
        refused.output.unwrap_err().message,
        "withdraw refused: 500 is over the limit"
    );
    assert_eq!(repr(&manager, "currency()"), "'EUR'");
    assert_eq!(account.balance(), 200);
    assert!(run(&manager, "balance()").output.is_err());
}

//! `fexpr`: run model-written function calls from the command line.
//!
//! ```text
//! fexpr exec --tools demo 'add(a=2, b=3)'
//! echo '[add(a=2, b=3), search(query="q")]' | fexpr exec --tools demo -
//! fexpr tools --tools demo --format openai
//! fexpr exec --mcp-config mcp_servers.json 'get_sum(a=2, b=3)'
//! fexpr tools --mcp-config mcp_servers.json --format python
//! fexpr check --tools-json tools.json 'get_weather(city="Paris", metric=true)'
//! ```
//! `exec` prints one JSON object per call: `{"name", "args", "kwargs", "output", "error"}`.
//! The exit code is 0 whenever the input was processed, even if calls failed.

use clap::{Parser, Subcommand, ValueEnum};
use fexpr::mcp::{McpConfig, McpOptions, McpTools};
use fexpr::sandbox::{Sandbox, SandboxConfig};
use fexpr::{Error, ErrorKind, FunctionOutput, ToolManager};
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fexpr",
    version,
    about = "Run the function calls a language model writes, safely."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Execute calls given as arguments, or the model output on stdin with `-`.
    Exec {
        /// The toolset to run against.
        #[arg(long, value_enum, default_value_t = Toolset::None)]
        tools: Toolset,
        /// Evaluate inside the wasmtime sandbox.
        #[arg(long)]
        sandbox: bool,
        #[command(flatten)]
        mcp: McpArgs,
        /// Expressions to run, or `-` to read the model output from stdin.
        #[arg(required = true)]
        exprs: Vec<String>,
    },
    /// Validate the calls in model output against tool definitions, without running them:
    /// one JSON verdict per call, `{"name", "kwargs", "valid", "error", "repairs", "span"}`.
    /// Text that is not a call is listed on stderr as `{"ignored": ...}` lines.
    Check {
        /// Tool definitions: OpenAI, Anthropic or MCP tool JSON, or BFCL-style function docs.
        #[arg(long)]
        tools_json: std::path::PathBuf,
        /// No schema-aware repairs (by default `true`/`false`/`null`, integral floats and
        /// single values for list parameters are repaired, and each repair is reported).
        #[arg(long)]
        strict: bool,
        /// Model outputs to check, or `-` to read one from stdin.
        #[arg(required = true)]
        exprs: Vec<String>,
    },
    /// Print the tool definitions a model should see.
    Tools {
        /// The toolset to describe [default: demo, or none with --mcp-config].
        #[arg(long, value_enum)]
        tools: Option<Toolset>,
        #[command(flatten)]
        mcp: McpArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
}

/// MCP servers as tool sources.
#[derive(clap::Args)]
struct McpArgs {
    /// Add the tools of the MCP servers in this file (`{"mcpServers": {name: {command, args,
    /// env} | {url, headers}}}`).
    #[arg(long, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
    /// Name MCP tools `server.tool` instead of `tool`.
    #[arg(long, requires = "mcp_config")]
    mcp_namespaced: bool,
    /// Seconds one MCP tool call may take.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 60.0,
        requires = "mcp_config"
    )]
    mcp_timeout: f64,
}

#[derive(Clone, Copy, ValueEnum)]
enum Toolset {
    /// No tools.
    None,
    /// The seed walkthrough's tools and context.
    Demo,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// AdalFlow-style function definitions as JSON.
    Json,
    /// OpenAI `tools`.
    Openai,
    /// Anthropic `tools`.
    Anthropic,
    /// AdalFlow-style function definitions as YAML.
    Yaml,
    /// One Python signature line plus docstring per tool.
    Python,
}

fn manager(tools: Toolset) -> ToolManager {
    match tools {
        Toolset::None => ToolManager::new(),
        Toolset::Demo => fexpr::demo::manager(),
    }
}

/// Connect to the MCP servers of `args` (if any) and add their tools to `manager`.
async fn add_mcp(manager: &mut ToolManager, args: &McpArgs) -> Result<Option<McpTools>, Error> {
    let Some(path) = &args.mcp_config else {
        return Ok(None);
    };
    let config = McpConfig::load(path)?;
    let progress = std::io::stderr().is_terminal();
    let call_timeout = std::time::Duration::try_from_secs_f64(args.mcp_timeout)
        .map_err(|e| Error::new(ErrorKind::Value, format!("--mcp-timeout: {e}")))?;
    let options = McpOptions {
        namespaced: args.mcp_namespaced,
        call_timeout,
        progress,
        ..McpOptions::default()
    };
    if progress {
        eprintln!(
            "fexpr: starting {} MCP server(s): {}",
            config.servers.len(),
            config
                .servers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mcp = McpTools::connect(&config, options).await?;
    let names = mcp.register(manager);
    if progress {
        eprintln!("fexpr: {} MCP tool(s) ready", names.len());
    }
    Ok(Some(mcp))
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("fexpr: cannot start the runtime: {e}");
            ExitCode::from(1)
        })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Check {
        tools_json,
        strict,
        exprs,
    } = cli.command
    {
        return check(&tools_json, strict, exprs);
    }
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let (mut m, mcp_args) = match &cli.command {
        Command::Exec { tools, mcp, .. } => (manager(*tools), mcp),
        Command::Tools { tools, mcp, .. } => {
            let default = match mcp.mcp_config {
                Some(_) => Toolset::None,
                None => Toolset::Demo,
            };
            (manager(tools.unwrap_or(default)), mcp)
        }
        Command::Check { .. } => return ExitCode::from(2),
    };
    let mcp = match runtime.block_on(add_mcp(&mut m, mcp_args)) {
        Ok(mcp) => mcp,
        Err(e) => {
            eprintln!("fexpr: {}", e.message);
            return ExitCode::from(1);
        }
    };
    let code = match cli.command {
        Command::Exec { sandbox, exprs, .. } => exec(&runtime, m, sandbox, exprs),
        Command::Check { .. } => ExitCode::from(2),
        Command::Tools { format, .. } => {
            let text = match format {
                Format::Json => m.json_definitions(),
                Format::Openai => pretty(&m.openai_tools()),
                Format::Anthropic => pretty(&m.anthropic_tools()),
                Format::Yaml => m.yaml_definitions(),
                Format::Python => m
                    .definitions()
                    .map(|d| d.python())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            };
            println!("{text}");
            ExitCode::SUCCESS
        }
    };
    if let Some(mcp) = mcp {
        runtime.block_on(mcp.close());
    }
    code
}

/// `manager` evaluating in a sandbox that maps each instance on demand: this process runs a few
/// evaluations and exits, so reserving the instance pool would only delay the first result.
/// If the sandbox cannot be built, the manager keeps the shared one, whose error every output
/// then reports.
fn one_shot_sandbox(manager: ToolManager) -> ToolManager {
    match Sandbox::new(SandboxConfig::on_demand()) {
        Ok(sandbox) => manager.sandbox(sandbox),
        Err(_) => manager,
    }
}

fn pretty(json: &serde_json::Value) -> String {
    serde_json::to_string_pretty(json).unwrap_or_default()
}

fn exec(
    runtime: &tokio::runtime::Runtime,
    manager: ToolManager,
    sandbox: bool,
    exprs: Vec<String>,
) -> ExitCode {
    let manager = if sandbox {
        one_shot_sandbox(manager)
    } else {
        manager
    };
    let mut stdout = std::io::stdout().lock();
    for expr in exprs {
        let outputs = if expr == "-" {
            let mut bytes = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
                eprintln!("fexpr: cannot read stdin: {e}");
                return ExitCode::from(1);
            }
            match String::from_utf8(bytes) {
                Ok(text) => runtime.block_on(run_text(&manager, sandbox, &text)),
                Err(e) => vec![FunctionOutput::failed(
                    "",
                    "<stdin>",
                    Error::new(ErrorKind::Syntax, format!("input is not valid UTF-8: {e}")),
                )],
            }
        } else {
            runtime.block_on(run_text(&manager, sandbox, &expr))
        };
        for out in outputs {
            if writeln!(stdout, "{}", out.to_json()).is_err() {
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

/// Model output: the JSON forms (`Function`, `FunctionExpression`, lists of them) when the text
/// looks like JSON (`fexpr::json_input::looks_like_json`), read as given; otherwise an
/// expression (one call or a list of calls).
/// With `sandbox`, either is evaluated inside the wasmtime sandbox.
async fn run_text(manager: &ToolManager, sandbox: bool, text: &str) -> Vec<FunctionOutput> {
    match (fexpr::json_input::looks_like_json(text), sandbox) {
        (true, true) => manager.execute_json_text_via_sandbox(text).await,
        (true, false) => manager.execute_json_text(text).await,
        (false, true) => manager.execute_via_sandbox(text.trim()).await,
        (false, false) => manager.execute(text.trim()).await,
    }
}

/// `fexpr check`: verdicts on stdout, ignored text on stderr.
fn check(tools_json: &std::path::Path, strict: bool, exprs: Vec<String>) -> ExitCode {
    let defs = match std::fs::read_to_string(tools_json)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
        .and_then(|json| fexpr::tooldefs::from_json(&json).map_err(|e| e.to_string()))
    {
        Ok(defs) => defs,
        Err(e) => {
            eprintln!("fexpr: cannot read {}: {e}", tools_json.display());
            return ExitCode::from(2);
        }
    };
    let ctx = fexpr::tooldefs::context(&defs);
    let options = if strict {
        fexpr::repair::RepairOptions::strict()
    } else {
        fexpr::repair::RepairOptions::default()
    };
    let limits = fexpr::Limits::default();
    let mut stdout = std::io::stdout().lock();
    for expr in exprs {
        let text = if expr == "-" {
            let mut text = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                eprintln!("fexpr: cannot read stdin: {e}");
                return ExitCode::from(1);
            }
            text
        } else {
            expr
        };
        let checked = fexpr::check::check_text(&text, &ctx, &limits, &options);
        if let Some(e) = &checked.error {
            eprintln!("fexpr: {e}");
            return ExitCode::from(1);
        }
        for ignored in &checked.ignored {
            let line = serde_json::json!({ "ignored": ignored });
            eprintln!("{line}");
        }
        for verdict in &checked.verdicts {
            if writeln!(stdout, "{}", verdict.to_json()).is_err() {
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

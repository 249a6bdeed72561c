//! `fexpr`: run model-written function calls from the command line.
//!
//! ```text
//! fexpr exec --tools demo 'add(a=2, b=3)'
//! echo '[add(a=2, b=3), search(query="q")]' | fexpr exec --tools demo -
//! fexpr tools --tools demo --format openai
//! fexpr exec --mcp-config mcp_servers.json 'get_sum(a=2, b=3)'
//! fexpr tools --mcp-config mcp_servers.json --format python
//! fexpr check --tools-json tools.json 'get_weather(city="Paris", metric=true)'
//! fexpr serve --tools demo
//! fexpr serve --mcp-config mcp_servers.json --listen 127.0.0.1:8000 --sandbox
//! ```
//! `serve` is an MCP server (stdio, or streamable HTTP with `--listen`) over the same tools:
//! every call checked, repaired and bounded as `exec` does, plus `run_calls` (see
//! `fexpr::mcp::serve`).
//! `exec` reads model text as `check` does (prose, fences, tags, chat tokens, JSON forms, lists:
//! see `fexpr::front`), with the same repairs and verdicts, and prints one JSON object per call:
//! `{"name", "args", "kwargs", "output", "error"}` (plus `repairs`); a call that must not run
//! keeps its arguments as written, with its error. `check` prints one verdict per call. Both
//! list the text they ignored on stderr as `{"ignored": ...}` lines. A plain expression that is
//! not tool calls (`np.zeros(3)`) is evaluated as written. With `exec --sandbox`, extraction
//! and repairs run on the host and every call is evaluated in the wasm guest. `exec --expr`
//! reads each input as one expression or fexpr's JSON forms, exactly as written (no
//! extraction, no repairs): text around a call is an error, and nothing runs.
//!
//! Limits: `--limit NAME=VALUE` (repeatable) and `--limits FILE` (a JSON object) set any field
//! of `fexpr::Limits` by its name (`max_calls`, `max_source_bytes`, `deadline` in seconds, ...).
//!
//! With `--format human` (the default when stdout is a terminal) `exec` and `check` print
//! diagnostics for people: the source line with the span underlined, and the hint; with
//! `--format json` (the default otherwise) the JSON objects above.
//!
//! Tools: one option set for every subcommand, any of them together: `--tools demo|none`,
//! `--tools-json FILE` (definitions without code) and `--mcp-config FILE`; with none of them
//! `check`, `tools` and `serve` use the demo tools and `exec` none.
//!
//! An input without a call (prose, an assistant message asking for none, blank text) gets no
//! row: an output answers a call. Its text is on stderr (`{"ignored": ...}`), then one
//! `{"nothing_to_run": error}` line (a `note:` for people) says why nothing ran.
//!
//! Exit status: 0 when every input was answered on stdout (an input without a call is answered
//! by no row), with an error row for an input that could not be used (not UTF-8, over
//! `max_source_bytes`, unreadable) as for a call that failed, and also when the reader of
//! stdout or stderr closed it early (`| head`): the process then stops quietly. 1 when fexpr could not run (the async runtime did not start, no MCP
//! server of the config started, `serve` could not listen, or the output could not be
//! written). 2 for a usage error: the command line, or a file it names (`--tools-json`,
//! `--mcp-config`) that cannot be read or understood. Messages for 1 and 2 are one
//! `fexpr: ...` line on stderr. A server of `--mcp-config` that does not start is reported on
//! stderr and left out; the others' tools are used.

use clap::{Parser, Subcommand, ValueEnum};
use fexpr::check::{Checked, Verdict};
use fexpr::diagnostic::Diagnostic;
use fexpr::manager::ToolManagerBuilder;
use fexpr::mcp::serve::McpTransport;
use fexpr::mcp::{McpConfig, McpOptions, McpTools};
use fexpr::sandbox::{Sandbox, SandboxConfig};
use fexpr::{Error, ErrorKind, FunctionOutput, Input, LimitKind, Span, ToolManager};
use std::ffi::OsString;
use std::future::IntoFuture;
use std::io::{BufWriter, IsTerminal, Read, Stderr, Stdout, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod args;
mod check;
mod exec;
mod output;

/// The CLI allocates with mimalloc: a library leaves the choice to the program that links it,
/// this program chooses (BENCHMARKS.md shows fexpr's figures with both).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use args::*;
use check::{check, read_tools_json, CheckedCall};
use exec::*;
use output::{Output, Stop};

/// The tools of `args` before its MCP servers are added: the toolset (`default` when no
/// other source is given) and the definitions of `--tools-json` (tools without code: a call is
/// checked and answers its checked call), with where each came from, for messages naming a
/// clash.
fn tool_builder(
    out: &mut Output,
    args: &ToolArgs,
    default: Toolset,
) -> Result<(ToolManagerBuilder, Sources), Stop> {
    let toolset = args.toolset(default);
    let mut builder = match toolset {
        Toolset::None => ToolManager::builder(),
        Toolset::Demo => fexpr::demo::builder(),
    };
    let mut sources: Sources = builder
        .names()
        .entries()
        .map(|(name, _)| (name.to_string(), "--tools demo".to_string()))
        .collect();
    if let Some(path) = &args.tools_json {
        let source = format!("--tools-json {}", path.display());
        for def in read_tools_json(out, path)? {
            if let Some(other) = sources.iter().find(|(n, _)| *n == def.name) {
                return Err(Stop::Usage(format!(
                    "the tool `{}` is defined twice: by {} and by {source}",
                    def.name, other.1
                )));
            }
            sources.push((def.name.clone(), source.clone()));
            builder.add_tool(std::sync::Arc::new(CheckedCall(def)));
        }
    }
    Ok((builder, sources))
}

/// Each name of the tools `--tools` and `--tools-json` gave, with the option that gave it.
type Sources = Vec<(String, String)>;

/// Connect to the MCP servers of `args` (if any) and add their tools to `manager`; `sources`
/// names where the tools it has came from.
async fn add_mcp(
    out: &mut Output,
    manager: &mut ToolManagerBuilder,
    args: &McpArgs,
    sources: &Sources,
) -> Result<Option<McpTools>, Stop> {
    let Some(path) = &args.mcp_config else {
        return Ok(None);
    };
    let config =
        McpConfig::load(path).map_err(|e| Stop::Usage(format!("--mcp-config: {}", e.message)))?;
    let call_timeout = fexpr::limits::seconds(args.mcp_timeout)
        .map_err(|e| Stop::Usage(format!("--mcp-timeout must be {e}")))?;
    let progress = std::io::stderr().is_terminal();
    let options = McpOptions {
        namespaced: args.mcp_namespaced,
        call_timeout,
        progress,
        ..McpOptions::default()
    };
    // Progress is best effort: a terminal that went away is no reason not to run.
    if progress {
        let names: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        let _ = out.note(format_args!(
            "fexpr: starting {} MCP server(s): {}",
            names.len(),
            names.join(", ")
        ));
        let _ = out.flush();
    }
    // A server that does not start is reported and left out: the others' tools still work.
    // With none started there is nothing to run against.
    let mcp = McpTools::connect_available(&config, options).await;
    if mcp.servers().is_empty() {
        if let Some(e) = mcp.failures().first() {
            return Err(Stop::Failed(e.message.clone()));
        }
    }
    for e in mcp.failures() {
        out.note(format_args!("fexpr: {}; its tools are left out", e.message))?;
    }
    for e in mcp.left_out() {
        out.note(format_args!("fexpr: {}", e.message))?;
    }
    out.flush()?;
    let usage = |e: Error| match &e.hint {
        Some(hint) => Stop::Usage(format!("--mcp-config: {} ({hint})", e.message)),
        None => Stop::Usage(format!("--mcp-config: {}", e.message)),
    };
    // A tool of another option with an MCP tool's name: an error naming both, never a rename.
    for tool in mcp.names().map_err(usage)? {
        if let Some((_, source)) = sources.iter().find(|(n, _)| *n == tool.exposed) {
            return Err(Stop::Usage(format!(
                "the tool `{}` is defined twice: by {source} and by MCP server `{}` of \
                 --mcp-config (rename one, or add --mcp-namespaced to call it `{}.{}`)",
                tool.exposed, tool.server, tool.server, tool.exposed
            )));
        }
    }
    let names = mcp.register(manager).map_err(usage)?;
    if progress {
        let _ = out.note(format_args!("fexpr: {} MCP tool(s) ready", names.len()));
        let _ = out.flush();
    }
    Ok(Some(mcp))
}

/// Parse the command line and run its subcommand.
//
// About 100 lines on purpose: one match over the closed `Command` enum, each arm unpacking its
// subcommand's options and handing them to the function that runs it.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = Output::new();
    let result = match cli.command {
        Command::Check {
            tools,
            strict,
            lenient,
            model_format,
            report,
            limits,
            exprs,
        } => limits.limits().and_then(|limits| {
            let (builder, sources) = tool_builder(&mut out, &tools, Toolset::Demo)?;
            let builder = builder.limits(limits);
            with_tools(
                &mut out,
                (builder, sources),
                &tools.mcp,
                Threads::Main,
                |out, _, m| {
                    let options = repair_options(strict, lenient, model_format);
                    check(out, &m, options, report.human(), exprs)
                },
            )
        }),
        Command::Exec {
            tools,
            sandbox,
            strict,
            lenient,
            model_format,
            expr,
            report,
            limits,
            exprs,
        } => limits.limits().and_then(|limits| {
            let (manager, sources) = tool_builder(&mut out, &tools, Toolset::None)?;
            let manager = manager.limits(limits);
            let manager = if sandbox {
                one_shot_sandbox(manager)
            } else {
                manager
            };
            with_tools(
                &mut out,
                (manager, sources),
                &tools.mcp,
                Threads::Main,
                |out, runtime, m| {
                    let how = (repair_options(strict, lenient, model_format), expr);
                    exec(out, runtime, m, sandbox, how, report.human(), exprs)
                },
            )
        }),
        Command::Serve {
            tools,
            listen,
            sandbox,
            strict,
            only_run_calls,
            max_sessions,
            session_idle,
            limits,
        } => limits.limits().and_then(|limits| {
            let session_idle = fexpr::limits::seconds(session_idle)
                .map_err(|e| Stop::Usage(format!("--session-idle must be {e}")))?;
            let options = fexpr::mcp::serve::ServeOptions {
                only_run_calls,
                sandboxed: sandbox,
                repair: repair_options(strict, false, None),
                max_sessions,
                session_idle,
                ..Default::default()
            };
            let (manager, sources) = tool_builder(&mut out, &tools, Toolset::Demo)?;
            let manager = manager.limits(limits);
            with_tools(
                &mut out,
                (manager, sources),
                &tools.mcp,
                Threads::PerCore,
                |out, runtime, m| {
                    let gateway = fexpr::mcp::serve::McpGateway::new(m, options)
                        .map_err(|e| Stop::Usage(e.to_string()))?;
                    let served = match listen {
                        None => runtime.block_on(gateway.serve(McpTransport::Stdio)),
                        Some(addr) => {
                            // The address is told once the listener is bound, and as bound: a
                            // client (or a test that asked for port 0) connects to it.
                            let listener = runtime
                                .block_on(tokio::net::TcpListener::bind(addr))
                                .and_then(|l| Ok((l.local_addr()?, l)))
                                .map_err(|e| {
                                    Stop::Failed(format!("cannot listen on {addr}: {e}"))
                                })?;
                            out.note(format_args!(
                                "fexpr: serving MCP at http://{}/mcp",
                                listener.0
                            ))?;
                            out.flush()?;
                            runtime.block_on(gateway.serve_http(listener.1))
                        }
                    };
                    served.map_err(|e| Stop::Failed(e.message))
                },
            )
        }),
        Command::Tools { tools, format } => {
            tool_builder(&mut out, &tools, Toolset::Demo).and_then(|b| {
                with_tools(&mut out, b, &tools.mcp, Threads::Main, |out, _, m| {
                    out.row(definitions(&m, format))
                })
            })
        }
        Command::Grammar {
            tools,
            format,
            markup,
            tool_choice,
            request,
        } => {
            let options = fexpr::grammar::GrammarOptions::default()
                .format(format)
                .markup(markup)
                .tool_choice(tool_choice);
            tool_builder(&mut out, &tools, Toolset::Demo).and_then(|b| {
                with_tools(&mut out, b, &tools.mcp, Threads::Main, |out, _, m| {
                    grammar(out, &m, &options, request)
                })
            })
        }
    };
    out.finish(result)
}

/// The threads a command's async runtime runs on.
#[derive(Clone, Copy)]
enum Threads {
    /// The main thread alone: a command that runs its input and ends. Starting no worker
    /// threads is ~0.2 ms of a `fexpr exec` cold start; sync tools still run on the blocking
    /// pool, and async tools interleave.
    Main,
    /// A worker per core: `serve`, whose sessions run side by side.
    PerCore,
}

/// Run `command` with the manager `builder` builds once the tools of the MCP servers in
/// `mcp_args` are added; the servers are closed however the command ends.
fn with_tools(
    out: &mut Output,
    (mut builder, sources): (ToolManagerBuilder, Sources),
    mcp_args: &McpArgs,
    threads: Threads,
    command: impl FnOnce(&mut Output, &tokio::runtime::Runtime, ToolManager) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let runtime = match threads {
        Threads::Main => tokio::runtime::Builder::new_current_thread(),
        Threads::PerCore => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .map_err(|e| Stop::Failed(format!("cannot start the async runtime: {e}")))?;
    let mcp = runtime.block_on(add_mcp(out, &mut builder, mcp_args, &sources))?;
    // A registration problem here is in the user's limits (the demo tools are checked by a
    // test): a usage error.
    let result = match builder.build() {
        Ok(manager) => command(out, &runtime, manager),
        Err(e) => Err(Stop::Usage(e.to_string())),
    };
    if let Some(mcp) = mcp {
        runtime.block_on(mcp.close());
    }
    result
}

/// `fexpr grammar`: the grammar (or an engine's request fields) on stdout, its approximations
/// and the tools it leaves out on stderr.
fn grammar(
    out: &mut Output,
    manager: &ToolManager,
    options: &fexpr::grammar::GrammarOptions,
    request: Option<GrammarRequest>,
) -> Result<(), Stop> {
    let grammar = manager.grammar(options).map_err(|e| {
        let hint = e.hint.map(|h| format!(" ({h})")).unwrap_or_default();
        Stop::Usage(format!("{}{hint}", e.message))
    })?;
    let printed = match request {
        None => grammar.text.clone(),
        Some(GrammarRequest::Vllm) => pretty(&grammar.vllm()),
        Some(GrammarRequest::Json) => pretty(&grammar.to_json()),
        Some(GrammarRequest::Sglang) => pretty(&grammar.sglang().ok_or_else(|| {
            Stop::Usage("SGLang takes EBNF or a structural tag: use --format ebnf".into())
        })?),
        Some(GrammarRequest::Openai) => pretty(
            &grammar
                .openai_tool("fexpr_calls", "Call the tools: write the calls.")
                .ok_or_else(|| {
                    Stop::Usage(
                        "an OpenAI custom tool takes a Lark grammar: use --format lark".into(),
                    )
                })?,
        ),
    };
    let printed = printed.trim_end_matches('\n');
    out.row(printed)?;
    for a in &grammar.approximations {
        out.note(format_args!(
            "{}",
            serde_json::json!({"approximation": {"tool": a.tool, "path": a.path, "what": a.what, "kind": a.kind}})
        ))?;
    }
    for (tool, why) in &grammar.left_out {
        out.note(format_args!(
            "{}",
            serde_json::json!({"left_out": {"tool": tool, "why": why}})
        ))?;
    }
    Ok(())
}

/// `fexpr tools`: the definitions of `manager`'s tools in `format`.
fn definitions(manager: &ToolManager, format: Format) -> String {
    match format {
        Format::Json => manager.definitions().json(),
        Format::Openai => pretty(&manager.definitions().openai()),
        Format::Anthropic => pretty(&manager.definitions().anthropic()),
        Format::Yaml => manager.definitions().yaml(),
        Format::Python => manager
            .definitions()
            .map(|d| d.python())
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

/// `manager` evaluating in a sandbox that maps each instance on demand: this process runs a few
/// evaluations and exits, so reserving the instance pool would only delay the first result.
/// If the sandbox cannot be built, the manager keeps the shared one, whose error every output
/// then reports.
fn one_shot_sandbox(manager: ToolManagerBuilder) -> ToolManagerBuilder {
    match Sandbox::new(SandboxConfig::on_demand()) {
        Ok(sandbox) => manager.sandbox(sandbox),
        Err(_) => manager,
    }
}

fn pretty(json: &serde_json::Value) -> String {
    serde_json::to_string_pretty(json).unwrap_or_default()
}

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
//! Exit status: 0 when every input was answered on stdout, with an error row for an input that
//! could not be used (not UTF-8, over `max_source_bytes`, unreadable) as for a call that failed,
//! and also when the reader of stdout or stderr closed it early (`| head`): the process then
//! stops quietly. 1 when fexpr could not run (the async runtime did not start, no MCP
//! server of the config started, `serve` could not listen, or the output could not be
//! written). 2 for a usage error: the command line, or a file it names (`--tools-json`,
//! `--mcp-config`) that cannot be read or understood. Messages for 1 and 2 are one
//! `fexpr: ...` line on stderr. A server of `--mcp-config` that does not start is reported on
//! stderr and left out; the others' tools are used.

use clap::{Parser, Subcommand, ValueEnum};
use fexpr::check::{Checked, Verdict};
use fexpr::diagnostic::Diagnostic;
use fexpr::manager::ToolManagerBuilder;
use fexpr::mcp::{McpConfig, McpOptions, McpTools};
use fexpr::sandbox::{Sandbox, SandboxConfig};
use fexpr::{Error, ErrorKind, FunctionOutput, Input, LimitKind, Span, ToolManager};
use std::ffi::OsString;
use std::future::IntoFuture;
use std::io::{BufWriter, IsTerminal, Read, Stderr, Stdout, Write};
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
        /// Evaluate inside the wasmtime sandbox (extraction and repairs run on the host).
        #[arg(long)]
        sandbox: bool,
        /// No schema-aware repairs: every call runs exactly as written.
        #[arg(long)]
        strict: bool,
        /// Take calls mentioned in prose (`You could use f(x)`) as calls. By default only calls
        /// in call position run; a mention is reported on stderr.
        #[arg(long, conflicts_with = "expr")]
        lenient: bool,
        /// Read the text as this model format only (qwen3-coder, glm, kimi-k2, deepseek,
        /// harmony, mistral, llama3.1, granite, phi4, xlam, gemma, hermes, pythonic). By
        /// default every format whose markers the text holds is read.
        #[arg(long, conflicts_with = "expr")]
        model_format: Option<fexpr::front::formats::ModelFormat>,
        /// Read each input as one Python expression (a call or a list of calls) or fexpr's
        /// JSON forms, exactly as written: no extraction from model text, no repairs.
        #[arg(long, conflicts_with = "strict")]
        expr: bool,
        #[command(flatten)]
        mcp: McpArgs,
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Expressions to run, or `-` to read the model output from stdin.
        #[arg(required = true)]
        exprs: Vec<OsString>,
    },
    /// Validate the calls in model output against tool definitions, without running them:
    /// one JSON verdict per call, `{"name", "kwargs", "valid", "error", "repairs", "span"}`.
    /// Text that is not a call is listed on stderr as `{"ignored": ...}` lines.
    Check {
        /// Tool definitions: OpenAI, Anthropic or MCP tool JSON, or BFCL-style function docs.
        #[arg(long)]
        tools_json: std::path::PathBuf,
        /// No schema-aware repairs (by default `true`/`false`/`null`, integral floats and
        /// single values for list parameters, enum spellings are repaired, and each repair is
        /// reported).
        #[arg(long)]
        strict: bool,
        /// Take calls mentioned in prose (`You could use f(x)`) as calls, as a harness that
        /// scores text may want. By default a mention gets no verdict and is reported on stderr.
        #[arg(long)]
        lenient: bool,
        /// Read the text as this model format only (see `exec --help`).
        #[arg(long)]
        model_format: Option<fexpr::front::formats::ModelFormat>,
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        limits: LimitArgs,
        /// Model outputs to check, or `-` to read one from stdin.
        #[arg(required = true)]
        exprs: Vec<OsString>,
    },
    /// Serve the tools as an MCP server (stdio, or streamable HTTP with `--listen`): every
    /// call checked, repaired and bounded by fexpr, plus `run_calls`, which runs several calls
    /// (a list, nested calls) written as Python in one round trip.
    Serve {
        /// The toolset to serve [default: demo, or none with --mcp-config or --tools-json].
        #[arg(long, value_enum)]
        tools: Option<Toolset>,
        #[command(flatten)]
        mcp: McpArgs,
        /// Also serve these tool definitions (OpenAI, Anthropic or MCP tool JSON, or BFCL-style
        /// function docs). They have no code: a call to one is checked and repaired like any
        /// other, and its result is the checked call `{"name", "kwargs"}`; nothing runs.
        #[arg(long, value_name = "FILE")]
        tools_json: Option<PathBuf>,
        /// Serve streamable HTTP at `http://ADDR/mcp` (e.g. `127.0.0.1:8000`) instead of stdio.
        #[arg(long, value_name = "ADDR")]
        listen: Option<std::net::SocketAddr>,
        /// Evaluate every call's arguments inside the wasmtime sandbox.
        #[arg(long)]
        sandbox: bool,
        /// No schema-aware repairs: a call that does not fit its schema exactly is refused.
        #[arg(long)]
        strict: bool,
        /// List only `run_calls` and `search_tools` (for very large tool sets), not each tool.
        #[arg(long)]
        only_run_calls: bool,
        #[command(flatten)]
        limits: LimitArgs,
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

/// How `exec` and `check` report.
#[derive(clap::Args)]
struct ReportArgs {
    /// `human`: errors with the source line underlined, repairs and ignored text as notes;
    /// `json`: one JSON object per line [default: human when stdout is a terminal, else json].
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Report>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Report {
    /// For people: diagnostics with the source line and the span underlined.
    Human,
    /// For programs: one JSON object per line.
    Json,
}

/// Rendering for people, in colour when stdout is a terminal.
#[derive(Clone, Copy)]
struct Human {
    styled: bool,
}

impl ReportArgs {
    /// `Some` for the human format (the default at a terminal), `None` for JSON.
    fn human(&self) -> Option<Human> {
        let terminal = std::io::stdout().is_terminal();
        let human = self.format.unwrap_or(if terminal {
            Report::Human
        } else {
            Report::Json
        });
        (human == Report::Human).then_some(Human { styled: terminal })
    }
}

impl Human {
    fn show(self, diagnostic: impl Into<Diagnostic>, source: &str) -> String {
        let diagnostic = diagnostic.into();
        match self.styled {
            true => diagnostic.render_styled(source),
            false => diagnostic.render(source),
        }
    }

    /// An output of `exec`: `call -> value`, or its error; each repair as a warning. Its spans
    /// index `source`, the whole input.
    fn output(self, output: &FunctionOutput, source: &str) -> String {
        let mut parts: Vec<String> = output
            .repairs
            .iter()
            .map(|r| self.show(r, source))
            .collect();
        match (&output.output, &output.parsed_input) {
            (Err(e), _) => parts.push(self.show(e, source)),
            (Ok(value), Some(call)) => {
                parts.push(format!("{} -> {}", call.to_expr(), value.repr()))
            }
            (Ok(value), None) => parts.push(format!("{} -> {}", output.name, value.repr())),
        }
        parts.join("\n\n") + "\n"
    }

    /// A verdict of `check`: `ok: call`, or its error; repairs as warnings. Its spans index
    /// `text`, the whole input.
    fn verdict(self, verdict: &Verdict, text: &str) -> String {
        let mut parts: Vec<String> = verdict.repairs.iter().map(|r| self.show(r, text)).collect();
        match &verdict.error {
            Some(e) => parts.push(self.show(e, text)),
            None => parts.push(format!(
                "ok: {}",
                fexpr::Function {
                    name: verdict.name.clone(),
                    args: Vec::new(),
                    kwargs: verdict.kwargs.clone()
                }
                .to_expr()
            )),
        }
        parts.join("\n\n") + "\n"
    }
}

/// Limits on what one input may cost.
#[derive(clap::Args)]
struct LimitArgs {
    /// Set one limit, a field of `fexpr::Limits` (repeatable): `--limit max_calls=1000`,
    /// `--limit deadline=2.5` (seconds). Applied after `--limits`.
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Read limits from a JSON object of `fexpr::Limits` fields (`{"max_calls": 1000}`);
    /// fields not given keep their defaults.
    #[arg(long = "limits", value_name = "FILE")]
    file: Option<PathBuf>,
}

impl LimitArgs {
    /// The default limits with the file's and then each `--limit`'s values: through the JSON
    /// form of `Limits` (serde), so every field is settable by its name. An unknown name or a
    /// value of the wrong kind is a usage error listing the valid names.
    fn limits(&self) -> Result<fexpr::Limits, Stop> {
        use serde_json::Value as Json;
        let defaults = serde_json::to_value(fexpr::Limits::default())
            .map_err(|e| Stop::Failed(format!("cannot list the limits: {e}")))?;
        let Json::Object(mut fields) = defaults else {
            return Err(Stop::Failed("cannot list the limits".into()));
        };
        let names = fields.keys().cloned().collect::<Vec<_>>().join(", ");
        let mut given: Vec<(String, Json, String)> = Vec::new();
        if let Some(path) = &self.file {
            let what = format!("--limits {}", path.display());
            let text =
                std::fs::read_to_string(path).map_err(|e| Stop::Usage(format!("{what}: {e}")))?;
            let json: Json = serde_json::from_str(&text)
                .map_err(|e| Stop::Usage(format!("{what}: not valid JSON ({e})")))?;
            let Json::Object(map) = json else {
                return Err(Stop::Usage(format!(
                    "{what}: expected a JSON object of limits ({names})"
                )));
            };
            given.extend(map.into_iter().map(|(k, v)| (k, v, what.clone())));
        }
        for item in &self.set {
            let Some((name, value)) = item.split_once('=') else {
                return Err(Stop::Usage(format!(
                    "--limit {item}: expected NAME=VALUE, NAME one of {names}"
                )));
            };
            let value = serde_json::from_str(value.trim())
                .unwrap_or_else(|_| Json::String(value.to_string()));
            given.push((name.trim().to_string(), value, format!("--limit {item}")));
        }
        for (name, value, what) in given {
            let Some(slot) = fields.get(&name).cloned() else {
                let guess = fexpr::error::closest(&name, fields.keys().map(String::as_str))
                    .map(|near| format!("did you mean `{near}`? "))
                    .unwrap_or_default();
                return Err(Stop::Usage(format!(
                    "{what}: unknown limit `{name}`; {guess}the limits are {names}"
                )));
            };
            // A duration (`deadline`) is given in seconds.
            let value = match (&slot, value.as_f64()) {
                (Json::Object(_), Some(secs)) => {
                    let d = std::time::Duration::try_from_secs_f64(secs).map_err(|_| {
                        Stop::Usage(format!("{what}: `{name}` is a duration in seconds, >= 0"))
                    })?;
                    serde_json::to_value(d).unwrap_or(Json::Null)
                }
                _ => value,
            };
            let mut candidate = fields.clone();
            candidate.insert(name.clone(), value);
            let Ok(limits) =
                serde_json::from_value::<fexpr::Limits>(Json::Object(candidate.clone()))
            else {
                let kind = match &slot {
                    Json::Object(_) => "a duration in seconds",
                    _ => "a whole number >= 0",
                };
                return Err(Stop::Usage(format!("{what}: `{name}` must be {kind}")));
            };
            // A value that cannot work (above its ceiling, say) is refused here, naming it.
            if let Err(e) = limits.check() {
                let hint = e.hint.map(|h| format!(" ({h})")).unwrap_or_default();
                return Err(Stop::Usage(format!("{what}: {}{hint}", e.message)));
            }
            fields = candidate;
        }
        serde_json::from_value(Json::Object(fields))
            .map_err(|e| Stop::Usage(format!("invalid limits: {e}")))
    }
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

fn manager(tools: Toolset) -> ToolManagerBuilder {
    match tools {
        Toolset::None => ToolManager::builder(),
        Toolset::Demo => fexpr::demo::builder(),
    }
}

/// Why the process stops before answering every input.
enum Stop {
    /// A reader closed stdout or stderr: nothing more can be said, so stop quietly (exit 0).
    Closed,
    /// fexpr could not run (exit 1).
    Failed(String),
    /// The command line, or a file it names, is unusable (exit 2).
    Usage(String),
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        match e.kind() {
            std::io::ErrorKind::BrokenPipe => Stop::Closed,
            _ => Stop::Failed(format!("cannot write the output: {e}")),
        }
    }
}

/// Where everything goes: rows on stdout, reports on stderr, both buffered and flushed after
/// each input (stderr first, so that merged streams keep their order) and at the end.
/// Neither is locked: a tool or an MCP client task may report on stderr from another thread,
/// and `serve` speaks MCP on stdout from the async runtime's threads.
struct Output {
    stdout: BufWriter<Stdout>,
    stderr: BufWriter<Stderr>,
}

impl Output {
    fn new() -> Output {
        Output {
            stdout: BufWriter::with_capacity(1 << 16, std::io::stdout()),
            stderr: BufWriter::with_capacity(1 << 16, std::io::stderr()),
        }
    }

    /// One line on stdout.
    fn row(&mut self, line: impl std::fmt::Display) -> Result<(), Stop> {
        Ok(writeln!(self.stdout, "{line}")?)
    }

    /// One line on stderr.
    fn note(&mut self, line: impl std::fmt::Display) -> Result<(), Stop> {
        Ok(writeln!(self.stderr, "{line}")?)
    }

    fn flush(&mut self) -> Result<(), Stop> {
        self.stderr.flush()?;
        Ok(self.stdout.flush()?)
    }

    /// The exit status for how the run ended; a failure's message goes to stderr if it can.
    fn finish(mut self, result: Result<(), Stop>) -> ExitCode {
        let (code, message) = match result.and_then(|()| self.flush()) {
            Ok(()) | Err(Stop::Closed) => (0, None),
            Err(Stop::Failed(message)) => (1, Some(message)),
            Err(Stop::Usage(message)) => (2, Some(message)),
        };
        if let Some(message) = message {
            // Best effort: there is nowhere else to say it.
            let _ = writeln!(self.stderr, "fexpr: {message}");
            let _ = self.flush();
        }
        ExitCode::from(code)
    }
}

/// Connect to the MCP servers of `args` (if any) and add their tools to `manager`.
async fn add_mcp(
    out: &mut Output,
    manager: &mut ToolManagerBuilder,
    args: &McpArgs,
) -> Result<Option<McpTools>, Stop> {
    let Some(path) = &args.mcp_config else {
        return Ok(None);
    };
    let config =
        McpConfig::load(path).map_err(|e| Stop::Usage(format!("--mcp-config: {}", e.message)))?;
    let call_timeout = std::time::Duration::try_from_secs_f64(args.mcp_timeout)
        .map_err(|e| Stop::Usage(format!("--mcp-timeout {}: {e}", args.mcp_timeout)))?;
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
    out.flush()?;
    let names = mcp.register(manager);
    if progress {
        let _ = out.note(format_args!("fexpr: {} MCP tool(s) ready", names.len()));
        let _ = out.flush();
    }
    Ok(Some(mcp))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = Output::new();
    let result = match cli.command {
        Command::Check {
            tools_json,
            strict,
            lenient,
            model_format,
            report,
            limits,
            exprs,
        } => limits.limits().and_then(|limits| {
            check(
                &mut out,
                &tools_json,
                repair_options(strict, lenient, model_format),
                report.human(),
                &limits,
                exprs,
            )
        }),
        Command::Exec {
            tools,
            sandbox,
            strict,
            lenient,
            model_format,
            expr,
            mcp,
            report,
            limits,
            exprs,
        } => limits.limits().and_then(|limits| {
            let manager = manager(tools).limits(limits);
            let manager = if sandbox {
                one_shot_sandbox(manager)
            } else {
                manager
            };
            with_tools(&mut out, manager, &mcp, |out, runtime, m| {
                let how = (repair_options(strict, lenient, model_format), expr);
                exec(out, runtime, m, sandbox, how, report.human(), exprs)
            })
        }),
        Command::Serve {
            tools,
            mcp,
            tools_json,
            listen,
            sandbox,
            strict,
            only_run_calls,
            limits,
        } => limits.limits().and_then(|limits| {
            let default = match (&mcp.mcp_config, &tools_json) {
                (None, None) => Toolset::Demo,
                _ => Toolset::None,
            };
            let options = fexpr::mcp::serve::ServeOptions {
                only_run_calls,
                sandboxed: sandbox,
                repair: repair_options(strict, false, None),
                ..Default::default()
            };
            let transport = match listen {
                Some(addr) => fexpr::mcp::serve::McpTransport::Http(addr),
                None => fexpr::mcp::serve::McpTransport::Stdio,
            };
            let mut manager = manager(tools.unwrap_or(default)).limits(limits);
            if let Some(path) = &tools_json {
                for def in read_tools_json(path)? {
                    manager.add_tool(std::sync::Arc::new(CheckedCall(def)));
                }
            }
            with_tools(&mut out, manager, &mcp, |out, runtime, m| {
                let gateway = fexpr::mcp::serve::McpGateway::new(m, options)
                    .map_err(|e| Stop::Usage(e.to_string()))?;
                if let fexpr::mcp::serve::McpTransport::Http(addr) = &transport {
                    out.note(format_args!("fexpr: serving MCP at http://{addr}/mcp"))?;
                    out.flush()?;
                }
                runtime
                    .block_on(gateway.serve(transport))
                    .map_err(|e| Stop::Failed(e.message))
            })
        }),
        Command::Tools { tools, mcp, format } => {
            let default = match mcp.mcp_config {
                Some(_) => Toolset::None,
                None => Toolset::Demo,
            };
            with_tools(
                &mut out,
                manager(tools.unwrap_or(default)),
                &mcp,
                |out, _, m| out.row(definitions(&m, format)),
            )
        }
    };
    out.finish(result)
}

/// Run `command` with the manager `builder` builds once the tools of the MCP servers in
/// `mcp_args` are added; the servers are closed however the command ends.
fn with_tools(
    out: &mut Output,
    mut builder: ToolManagerBuilder,
    mcp_args: &McpArgs,
    command: impl FnOnce(&mut Output, &tokio::runtime::Runtime, ToolManager) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Stop::Failed(format!("cannot start the async runtime: {e}")))?;
    let mcp = runtime.block_on(add_mcp(out, &mut builder, mcp_args))?;
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

/// The inputs of a command, in order: each argument as it is, or stdin for `-`.
struct Inputs {
    /// `max_source_bytes`: stdin is read no further than one byte past it.
    max_bytes: usize,
    stdin_read: bool,
}

impl Inputs {
    /// The text of `arg`; for `-`, stdin's (read once, bounded). Every problem with it (not
    /// UTF-8, over `max_source_bytes`, unreadable, `-` given twice) is an error for its row.
    fn text(&mut self, arg: OsString) -> Result<String, Error> {
        if arg != "-" {
            // An argument that is not UTF-8 is that input's error, as on stdin.
            return arg
                .into_string()
                .map_err(|arg| not_utf8("this argument", arg.as_encoded_bytes()));
        }
        if std::mem::replace(&mut self.stdin_read, true) {
            return Err(Error::new(
                ErrorKind::Syntax,
                "stdin was read already: give `-` once",
            ));
        }
        let mut bytes = Vec::new();
        let bound = u64::try_from(self.max_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        std::io::stdin()
            .lock()
            .take(bound)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::new(ErrorKind::Syntax, format!("cannot read stdin: {e}")))?;
        if bytes.len() > self.max_bytes {
            return Err(Error::new(
                ErrorKind::Limit,
                format!(
                    "max_source_bytes limit exceeded: stdin holds more than {} bytes (read no further)",
                    self.max_bytes
                ),
            )
            .with_hint("send less text: the input is refused as a whole"));
        }
        String::from_utf8(bytes).map_err(|e| not_utf8("stdin", e.as_bytes()))
    }
}

/// The error for input `what` whose `bytes` are not UTF-8, its span on the first bad bytes.
fn not_utf8(what: &str, bytes: &[u8]) -> Error {
    let (start, len) = match std::str::from_utf8(bytes) {
        Ok(_) => (bytes.len(), 0),
        Err(bad) => (
            bad.valid_up_to(),
            bad.error_len()
                .unwrap_or(bytes.len().saturating_sub(bad.valid_up_to())),
        ),
    };
    let at = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    Error::new(
        ErrorKind::Syntax,
        format!("{what} is not valid UTF-8 (at byte {start})"),
    )
    .at(Span::new(at(start), at(start.saturating_add(len))))
    .with_hint("send the model's output as UTF-8 text")
}

fn exec(
    out: &mut Output,
    runtime: &tokio::runtime::Runtime,
    manager: ToolManager,
    sandbox: bool,
    (options, expr_only): (fexpr::repair::RepairOptions, bool),
    human: Option<Human>,
    exprs: Vec<OsString>,
) -> Result<(), Stop> {
    let mut inputs = Inputs {
        max_bytes: manager.limits().max_source_bytes,
        stdin_read: false,
    };
    for expr in exprs {
        // Model output on stdin is read as it arrives: each call starts once its text is
        // complete, and its row is printed the moment it finishes.
        if expr == "-" && !expr_only && !inputs.stdin_read {
            inputs.stdin_read = true;
            exec_stream(out, runtime, &manager, sandbox, options, human)?;
            continue;
        }
        let source = if expr == "-" { "<stdin>" } else { "<argument>" };
        let (text, outputs, ignored) = match inputs.text(expr) {
            Ok(text) if expr_only => {
                let outputs = runtime.block_on(run_expression(&manager, sandbox, &text));
                (text, outputs, Vec::new())
            }
            Ok(text) if text.trim().is_empty() => (text, vec![blank("run")], Vec::new()),
            Ok(text) => {
                // Not trimmed: the size limit counts every byte given, and spans index the
                // text as given.
                let request = manager
                    .run(Input::model_output(text.as_str()))
                    .repair(options);
                let run = runtime.block_on(in_sandbox(request, sandbox).into_future());
                (text, run.outputs, run.ignored)
            }
            Err(e) => (
                String::new(),
                vec![FunctionOutput::failed("", source, e)],
                Vec::new(),
            ),
        };
        for ignored in &ignored {
            match human {
                Some(human) => out.note(human.show(ignored, &text) + "\n")?,
                None => out.note(serde_json::json!({ "ignored": ignored }))?,
            }
        }
        // Every span indexes the whole input.
        for mut output in outputs {
            if let Err(e) = output.output.as_mut() {
                flag_hint(e);
            }
            let row = match human {
                Some(human) => human.output(&output, &text),
                None => {
                    out.row(output.to_json())?;
                    continue;
                }
            };
            out.row(row)?;
        }
        out.flush()?;
    }
    Ok(())
}

/// `exec -` on model output: stdin read chunk by chunk as it arrives (bounded by
/// `max_source_bytes`, UTF-8 checked across chunk boundaries) and run as a stream; each row is
/// printed the moment its call finishes, ignored text once the input ends.
fn exec_stream(
    out: &mut Output,
    runtime: &tokio::runtime::Runtime,
    manager: &ToolManager,
    sandbox: bool,
    options: fexpr::repair::RepairOptions,
    human: Option<Human>,
) -> Result<(), Stop> {
    use fexpr::dispatch::stream::StreamEvent;
    use futures_util::StreamExt;
    use std::sync::{Arc, Mutex};
    let max_bytes = manager.limits().max_source_bytes;
    // Each message: the text at hand, and whether stdin ended right after it.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<(String, bool)>();
    let text = Arc::new(Mutex::new(String::new()));
    let failure: Arc<Mutex<Option<Error>>> = Arc::default();
    {
        let (text, failure) = (text.clone(), failure.clone());
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut pending: Vec<u8> = Vec::new();
            let mut read = 0usize;
            let mut buf = [0u8; 8192];
            let mut ended = false;
            while !ended {
                let n = match stdin.read(&mut buf) {
                    Ok(0) => {
                        ended = true;
                        0
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let error =
                            Error::new(ErrorKind::Syntax, format!("cannot read stdin: {e}"));
                        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                        break;
                    }
                };
                read = read.saturating_add(n);
                pending.extend_from_slice(buf.get(..n).unwrap_or_default());
                // Everything already at hand (up to the end of input) goes in one message, so
                // a whole response is read whole; only a pause in the input lets calls start.
                if !ended && stdin_ready() && read <= max_bytes {
                    continue;
                }
                // The longest valid UTF-8 prefix goes on; a character cut by the chunk waits.
                let valid = match std::str::from_utf8(&pending) {
                    Ok(s) => s.len(),
                    Err(e) if e.error_len().is_none() && !ended => e.valid_up_to(),
                    Err(e) if e.error_len().is_none() => {
                        let error =
                            Error::new(ErrorKind::Syntax, "stdin ends inside a UTF-8 character")
                                .with_hint("send the model's output as UTF-8 text");
                        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                        let _ = e;
                        break;
                    }
                    Err(e) => {
                        let at = read - pending.len() + e.valid_up_to();
                        let len = e.error_len().unwrap_or(1);
                        let span = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
                        let error = Error::new(
                            ErrorKind::Syntax,
                            format!("stdin is not valid UTF-8 (at byte {at})"),
                        )
                        .at(Span::new(span(at), span(at + len)))
                        .with_hint("send the model's output as UTF-8 text");
                        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                        break;
                    }
                };
                let chunk: String =
                    String::from_utf8_lossy(pending.get(..valid).unwrap_or_default()).into_owned();
                pending.drain(..valid);
                if !chunk.is_empty() || ended {
                    text.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push_str(&chunk);
                    if tx.send((chunk, ended)).is_err() {
                        break;
                    }
                }
                // Past the limit the stream stops itself; reading further is pointless.
                if read > max_bytes {
                    break;
                }
            }
        });
    }
    let chunks = futures_util::stream::unfold(Some(rx), |rx| async move {
        let mut rx = rx?;
        let (chunk, ended) = rx.recv().await?;
        Some((chunk, (!ended).then_some(rx)))
    });
    let request = manager.stream(Box::pin(chunks)).repair(options);
    let request = if sandbox {
        request.sandboxed()
    } else {
        request
    };
    let mut events = request.events();
    let mut any = false;
    let failed = || failure.lock().map(|f| f.is_some()).unwrap_or(true);
    while let Some(event) = runtime.block_on(events.next()) {
        // Input that cannot be used (not UTF-8, unreadable): what has not started never does
        // (the stream is dropped with its calls unpolled); its row says why.
        if failed() {
            break;
        }
        let text = text.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match event {
            StreamEvent::Output(mut output) => {
                let output = &mut *output;
                any = true;
                if let Err(e) = output.output.as_mut() {
                    flag_hint(e);
                }
                match human {
                    Some(human) => out.row(human.output(output, &text))?,
                    None => out.row(output.to_json())?,
                }
            }
            StreamEvent::Ignored(ignored) => match human {
                Some(human) => out.note(human.show(&ignored, &text) + "\n")?,
                None => out.note(serde_json::json!({ "ignored": ignored }))?,
            },
            _ => {}
        }
        out.flush()?;
    }
    drop(events);
    let failure = failure.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(error) = failure {
        out.row(FunctionOutput::failed("", "<stdin>", error).to_json())?;
    } else if !any {
        let text = text.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if text.trim().is_empty() {
            out.row(blank("run").to_json())?;
        }
    }
    out.flush()
}

/// Whether stdin has input at hand (data or its end) right now, without waiting.
fn stdin_ready() -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fd` is one valid `pollfd` that lives across the call; a timeout of 0 returns at
    // once; poll only writes `revents`.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0
}

/// `exec --expr`: the JSON forms (`Function`, `FunctionExpression`, lists of them) when the
/// text looks like JSON (`fexpr::front::json_input::looks_like_json`), read as given; otherwise one
/// expression (a call or a list of calls). With `sandbox`, evaluated in the wasm guest.
async fn run_expression(manager: &ToolManager, sandbox: bool, text: &str) -> Vec<FunctionOutput> {
    // Not trimmed: the size limit counts every byte given, and spans index the text as given.
    let input = if fexpr::front::json_input::looks_like_json(text) {
        Input::json(text)
    } else {
        Input::expr(text)
    };
    let request = manager
        .run(input)
        .repair(fexpr::repair::RepairOptions::strict());
    in_sandbox(request, sandbox).await.outputs
}

/// `request`, evaluated in the sandbox when `sandbox` is set.
fn in_sandbox(request: fexpr::Request, sandbox: bool) -> fexpr::Request {
    if sandbox {
        request.sandboxed()
    } else {
        request.native()
    }
}

/// The repairs `--strict` leaves on (none; else all of them), whether `--lenient` takes
/// mentions in prose as calls, and the `--model-format` to read.
fn repair_options(
    strict: bool,
    lenient: bool,
    model_format: Option<fexpr::front::formats::ModelFormat>,
) -> fexpr::repair::RepairOptions {
    let options = if strict {
        fexpr::repair::RepairOptions::strict()
    } else {
        fexpr::repair::RepairOptions::default()
    };
    fexpr::repair::RepairOptions {
        lenient,
        model_format,
        ..options
    }
}

/// The row of a blank input: nothing to `what`.
fn blank(what: &str) -> FunctionOutput {
    FunctionOutput::failed(
        "",
        "",
        Error::new(
            ErrorKind::Syntax,
            format!("the input is blank: no call to {what}"),
        ),
    )
}

/// A limit error's hint names the library's setting (`raise Limits::max_calls …`); here it
/// names the flag that raises it (`--limit max_calls=N`). Other hints are kept.
fn flag_hint(error: &mut Error) {
    let Some(kind) = error.limit else { return };
    let library = format!("raise {} if this input is legitimate", kind.setting());
    if error.hint.as_deref() != Some(library.as_str()) {
        return;
    }
    let value = match kind {
        LimitKind::Deadline | LimitKind::CallDeadline => "SECONDS",
        _ => "N",
    };
    // The two budgets that are not `Limits` fields have no flag.
    if !matches!(kind, LimitKind::WasmStack | LimitKind::PoolWait) {
        error.hint = Some(format!(
            "raise it with `--limit {}={value}` if this input is legitimate",
            kind.field()
        ));
    }
}

/// The tool definitions in the file of `--tools-json`; a file that cannot be read or
/// understood is a usage error.
fn read_tools_json(path: &std::path::Path) -> Result<Vec<fexpr::ToolDefinition>, Stop> {
    std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| format!("not valid JSON ({e})")))
        .and_then(|json| fexpr::tooldefs::from_json(&json).map_err(|e| e.message))
        .map_err(|e| Stop::Usage(format!("--tools-json {}: {e}", path.display())))
}

/// A tool of `serve --tools-json`: a definition without code. A call to it is bound, checked
/// and repaired like any other; its result is the checked call, `{"name", "kwargs"}` (the
/// arguments given, as bound), and nothing runs.
struct CheckedCall(fexpr::ToolDefinition);

impl fexpr::Tool for CheckedCall {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.0
    }

    fn call(&self, args: Vec<Option<fexpr::Value>>) -> fexpr::tool::ToolFuture {
        let kwargs: serde_json::Map<String, serde_json::Value> = self
            .0
            .signature
            .fields
            .iter()
            .zip(args)
            .filter_map(|(field, arg)| arg.map(|value| (field.name.clone(), value.to_json())))
            .collect();
        let call = serde_json::json!({"name": self.0.name, "kwargs": kwargs});
        let output = fexpr::ToolOutput::new(fexpr::Value::from_json(&call));
        Box::pin(std::future::ready(Ok(output)))
    }
}

/// `fexpr check`: verdicts on stdout, ignored text on stderr.
fn check(
    out: &mut Output,
    tools_json: &std::path::Path,
    options: fexpr::repair::RepairOptions,
    human: Option<Human>,
    limits: &fexpr::Limits,
    exprs: Vec<OsString>,
) -> Result<(), Stop> {
    let defs = read_tools_json(tools_json)?;
    let ctx = fexpr::tooldefs::context(&defs);
    let mut inputs = Inputs {
        max_bytes: limits.max_source_bytes,
        stdin_read: false,
    };
    // The row of an input that yields no verdict of its own.
    let failed = |error: Error| Verdict {
        name: String::new(),
        span: Span::new(0, 0),
        input: String::new(),
        args: Vec::new(),
        kwargs: Default::default(),
        valid: false,
        error: Some(error),
        repairs: Vec::new(),
    };
    for expr in exprs {
        let (text, checked) = match inputs.text(expr) {
            Ok(text) => {
                let checked = fexpr::check::check_text(&text, &ctx, limits, &options);
                (text, checked)
            }
            Err(e) => (
                String::new(),
                Checked {
                    error: Some(e),
                    ..Checked::default()
                },
            ),
        };
        for ignored in &checked.ignored {
            match human {
                Some(human) => out.note(human.show(ignored, &text) + "\n")?,
                None => out.note(serde_json::json!({ "ignored": ignored }))?,
            }
        }
        let error = checked.error.or_else(|| {
            (checked.verdicts.is_empty() && checked.ignored.is_empty())
                .then(|| Error::new(ErrorKind::Syntax, "the input is blank: no call to check"))
        });
        if let Some(mut e) = error {
            flag_hint(&mut e);
            match human {
                Some(human) => out.row(human.show(&e, &text) + "\n")?,
                None => out.row(failed(e).to_json())?,
            }
        }
        for mut verdict in checked.verdicts {
            if let Some(e) = verdict.error.as_mut() {
                flag_hint(e);
            }
            let verdict = &verdict;
            match human {
                Some(human) => out.row(human.verdict(verdict, &text))?,
                None => out.row(verdict.to_json())?,
            }
        }
        out.flush()?;
    }
    Ok(())
}

//! The command line: subcommands and their options (clap), `--format human` rendering, and
//! `--limit`/`--limits` read into `fexpr::Limits`.

use super::*;

#[derive(Parser)]
#[command(
    name = "fexpr",
    version,
    about = "Run the function calls a language model writes, safely."
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand)]
pub(super) enum Command {
    /// Execute calls given as arguments, or the model output on stdin with `-`.
    Exec {
        #[command(flatten)]
        tools: ToolArgs,
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
        /// Read the text as this model format only (harmony, kimi-k2, kimi-k3, deepseek,
        /// deepseek-dsml, step3, gemma4, functiongemma, command-r7b, apertus, minimax-m2,
        /// minicpm5, seed-oss, qwen3-coder, glm, llama3.1, functionary-v3.2, pythonic, granite,
        /// mistral, phi4, gemma, hermes, xlam). By default every format whose markers the text
        /// holds is read.
        #[arg(long, conflicts_with = "expr")]
        model_format: Option<fexpr::front::formats::ModelFormat>,
        /// Read each input as one Python expression (a call or a list of calls) or fexpr's
        /// JSON forms, exactly as written: no extraction from model text, no repairs.
        #[arg(long, conflicts_with = "strict")]
        expr: bool,
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
        #[command(flatten)]
        tools: ToolArgs,
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
        #[command(flatten)]
        tools: ToolArgs,
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
        /// With `--listen`: the most HTTP sessions live at once; an `initialize` beyond it is
        /// refused (503) until one ends.
        #[arg(long, value_name = "N", default_value_t = fexpr::mcp::serve::ServeOptions::MAX_SESSIONS, requires = "listen")]
        max_sessions: usize,
        /// With `--listen`: seconds a session may stay without a message before it is closed
        /// and its memory returned.
        #[arg(long, value_name = "SECONDS", default_value_t = fexpr::mcp::serve::ServeOptions::SESSION_IDLE.as_secs_f64(), requires = "listen")]
        session_idle: f64,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Print the grammar of the calls `check` accepts, for constrained decoding (vLLM,
    /// SGLang, llama.cpp, OpenAI custom tools): made from the tools' typed signatures. Where it
    /// admits more than `check` (a float's bounds, a pattern, ...) is listed on stderr as
    /// `{"approximation": ...}` lines.
    Grammar {
        #[command(flatten)]
        tools: ToolArgs,
        /// The grammar's syntax: lark (llguidance), gbnf (llama.cpp), ebnf (XGrammar) or
        /// structural-tag (XGrammar's JSON).
        #[arg(long, default_value = "lark")]
        format: fexpr::grammar::GrammarFormat,
        /// The model's tool-call format: pythonic, hermes, llama3-json, qwen3-coder.
        #[arg(long, default_value = "pythonic")]
        markup: fexpr::grammar::Markup,
        /// required (at least one call), auto (prose or calls), none (prose only), or a tool's
        /// name (calls of that tool only).
        #[arg(long, default_value = "required")]
        tool_choice: fexpr::grammar::ToolChoice,
        /// Print the request fields of an engine instead of the grammar: vllm, sglang, openai
        /// (a custom tool; Lark only) or json (the grammar and its approximations as one
        /// object).
        #[arg(long, value_enum)]
        request: Option<GrammarRequest>,
    },
    /// Print the tool definitions a model should see.
    Tools {
        #[command(flatten)]
        tools: ToolArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
}

/// The tools a subcommand works with: one option set for `exec`, `check`, `tools` and
/// `serve`, from any of three sources together.
#[derive(clap::Args)]
pub(super) struct ToolArgs {
    /// A built-in toolset [default: demo for check, tools and serve, none for exec; none when
    /// --tools-json or --mcp-config is given].
    #[arg(long, value_enum)]
    pub(super) tools: Option<Toolset>,
    /// Tool definitions (OpenAI, Anthropic or MCP tool JSON, or BFCL-style function docs).
    /// They have no code: a call to one is checked and repaired like any other, and its
    /// result is the checked call `{"name", "kwargs"}`; nothing runs.
    #[arg(long, value_name = "FILE")]
    pub(super) tools_json: Option<PathBuf>,
    #[command(flatten)]
    pub(super) mcp: McpArgs,
}

impl ToolArgs {
    /// The toolset: the one given, else `default` when no other source is given, else none.
    pub(super) fn toolset(&self, default: Toolset) -> Toolset {
        match (self.tools, &self.tools_json, &self.mcp.mcp_config) {
            (Some(tools), _, _) => tools,
            (None, None, None) => default,
            _ => Toolset::None,
        }
    }
}

/// MCP servers as tool sources.
#[derive(clap::Args)]
pub(super) struct McpArgs {
    /// Add the tools of the MCP servers in this file (`{"mcpServers": {name: {command, args,
    /// env} | {url, headers}}}`).
    #[arg(long, value_name = "FILE")]
    pub(super) mcp_config: Option<PathBuf>,
    /// Name MCP tools `server.tool` instead of `tool`.
    #[arg(long, requires = "mcp_config")]
    pub(super) mcp_namespaced: bool,
    /// Seconds one MCP tool call may take.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 60.0,
        requires = "mcp_config"
    )]
    pub(super) mcp_timeout: f64,
}

/// How `exec` and `check` report.
#[derive(clap::Args)]
pub(super) struct ReportArgs {
    /// `human`: errors with the source line underlined, repairs and ignored text as notes;
    /// `json`: one JSON object per line [default: human when stdout is a terminal, else json].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(super) format: Option<Report>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Report {
    /// For people: diagnostics with the source line and the span underlined.
    Human,
    /// For programs: one JSON object per line.
    Json,
}

/// Rendering for people, in colour when stdout is a terminal.
#[derive(Clone, Copy)]
pub(super) struct Human {
    pub(super) styled: bool,
}

impl ReportArgs {
    /// `Some` for the human format (the default at a terminal), `None` for JSON.
    pub(super) fn human(&self) -> Option<Human> {
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
    pub(super) fn show(self, diagnostic: impl Into<Diagnostic>, source: &str) -> String {
        let diagnostic = diagnostic.into();
        match self.styled {
            true => diagnostic.render_styled(source),
            false => diagnostic.render(source),
        }
    }

    /// An output of `exec`: `call -> value`, or its error; each repair as a warning. Its spans
    /// index `source`, the whole input.
    pub(super) fn output(self, output: &FunctionOutput, source: &str) -> String {
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
    pub(super) fn verdict(self, verdict: &Verdict, text: &str) -> String {
        let mut parts: Vec<String> = verdict.repairs.iter().map(|r| self.show(r, text)).collect();
        match &verdict.error {
            Some(e) => parts.push(self.show(e, text)),
            None => parts.push(format!(
                "ok: {}",
                fexpr::Function {
                    name: verdict.name.clone(),
                    args: Vec::new(),
                    kwargs: verdict.kwargs.clone(),
                }
                .to_expr()
            )),
        }
        parts.join("\n\n") + "\n"
    }
}

/// Limits on what one input may cost.
#[derive(clap::Args)]
pub(super) struct LimitArgs {
    /// Set one limit, a field of `fexpr::Limits` (repeatable): `--limit max_calls=1000`,
    /// `--limit deadline=2.5` (seconds). Applied after `--limits`.
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    pub(super) set: Vec<String>,
    /// Read limits from a JSON object of `fexpr::Limits` fields (`{"max_calls": 1000}`);
    /// fields not given keep their defaults.
    #[arg(long = "limits", value_name = "FILE")]
    pub(super) file: Option<PathBuf>,
}

impl LimitArgs {
    /// The default limits with the file's and then each `--limit`'s values: through the JSON
    /// form of `Limits` (serde), so every field is settable by its name. An unknown name or a
    /// value of the wrong kind is a usage error listing the valid names.
    pub(super) fn limits(&self) -> Result<fexpr::Limits, Stop> {
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
                    let d = fexpr::limits::seconds(secs)
                        .map_err(|e| Stop::Usage(format!("{what}: `{name}` must be {e}")))?;
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
            // A value that cannot work (above its ceiling, say) is refused here, naming it in
            // the command line's words.
            if let Err(e) = limits.check() {
                let ceiling = fexpr::Limits::TABLE
                    .iter()
                    .find(|l| l.name == name)
                    .and_then(|l| l.ceiling);
                let message = match ceiling {
                    Some(ceiling) if e.message.contains("ceiling") => format!(
                        "`{name}` must be at most {ceiling}: above it one input could exhaust \
                         the host's memory or stack (SECURITY.md lists the ceilings)"
                    ),
                    _ if name == "memory_bytes" => format!(
                        "`memory_bytes` must be at least {} (3.5 MiB), the memory the \
                         sandbox's guest starts with: below it no evaluation could run",
                        fexpr::Limits::MIN_MEMORY_BYTES
                    ),
                    _ => e.message,
                };
                return Err(Stop::Usage(format!("{what}: {message}")));
            }
            fields = candidate;
        }
        serde_json::from_value(Json::Object(fields))
            .map_err(|e| Stop::Usage(format!("invalid limits: {e}")))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Toolset {
    /// No tools.
    None,
    /// The seed walkthrough's tools and context.
    Demo,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum GrammarRequest {
    /// `{"structured_outputs": {"grammar" | "structural_tag": ...}}`.
    Vllm,
    /// `{"ebnf": ...}` or `{"response_format": {structural tag}}`.
    Sglang,
    /// An OpenAI custom tool whose input is the grammar (`format: {type: grammar, syntax: lark}`).
    Openai,
    /// The grammar, its format, markup, tool choice and approximations as one JSON object.
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum Format {
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

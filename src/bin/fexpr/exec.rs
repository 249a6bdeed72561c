//! `fexpr exec`: inputs read from arguments or stdin (in chunks when streamed), their calls
//! run or evaluated as written, one JSON object (or diagnostic) per call.

use super::*;

/// The inputs of a command, in order: each argument as it is, or stdin for `-`.
pub(super) struct Inputs {
    /// `max_source_bytes`: stdin is read no further than one byte past it.
    pub(super) max_bytes: usize,
    pub(super) stdin_read: bool,
}

impl Inputs {
    /// The text of `arg`; for `-`, stdin's (read once, bounded). Every problem with it (not
    /// UTF-8, over `max_source_bytes`, unreadable, `-` given twice) is an error for its row.
    pub(super) fn text(&mut self, arg: OsString) -> Result<String, Error> {
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

pub(super) fn exec(
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
        if outputs.is_empty() {
            nothing_to_run(out, human, &ignored)?;
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
        std::thread::spawn(move || read_stdin(max_bytes, &tx, &text, &failure));
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
    let mut ignored = Vec::new();
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
            StreamEvent::Ignored(stretch) => {
                match human {
                    Some(human) => out.note(human.show(&stretch, &text) + "\n")?,
                    None => out.note(serde_json::json!({ "ignored": stretch }))?,
                }
                ignored.push(stretch);
            }
            _ => {}
        }
        out.flush()?;
    }
    drop(events);
    let failure = failure.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(error) = failure {
        out.row(FunctionOutput::failed("", "<stdin>", error).to_json())?;
    } else if !any {
        nothing_to_run(out, human, &ignored)?;
    }
    out.flush()
}

/// `exec_stream`'s reader thread: stdin read as it arrives and sent on `tx` in valid UTF-8
/// chunks (with whether stdin ended), each also appended to `text`; reading stops past
/// `max_bytes`, and an input that cannot be used leaves its error in `failure`.
fn read_stdin(
    max_bytes: usize,
    tx: &tokio::sync::mpsc::UnboundedSender<(String, bool)>,
    text: &std::sync::Mutex<String>,
    failure: &std::sync::Mutex<Option<Error>>,
) {
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
                let error = Error::new(ErrorKind::Syntax, format!("cannot read stdin: {e}"));
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
                let error = Error::new(ErrorKind::Syntax, "stdin ends inside a UTF-8 character")
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
}

/// Whether stdin has input at hand (data or its end) right now, without waiting.
#[allow(unsafe_code)] // the unsafe block below carries its SAFETY comment
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
pub(super) fn repair_options(
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

/// An input without a call (prose, a message that asks for none, blank text) has no row, as
/// it has no output: stderr says why there is nothing to run (`{"nothing_to_run": error}`, or
/// a note for people), from the text it ignored. The exit status stays 0.
pub(super) fn nothing_to_run(
    out: &mut Output,
    human: Option<Human>,
    ignored: &[fexpr::front::Ignored],
) -> Result<(), Stop> {
    let error = fexpr::request::nothing_to_run(ignored);
    match human {
        Some(_) => {
            let hint = error.hint.as_deref().unwrap_or_default();
            out.note(format_args!("note: {}\n  = help: {hint}\n", error.message))
        }
        None => out.note(serde_json::json!({ "nothing_to_run": error })),
    }
}

/// A limit error's hint names the library's setting (`raise Limits::max_calls …`); here it
/// names the flag that raises it (`--limit max_calls=N`). Other hints are kept.
pub(super) fn flag_hint(error: &mut Error) {
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

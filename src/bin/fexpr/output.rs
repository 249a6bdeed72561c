//! Where answers go: rows on stdout, notes on stderr, and the exit status when the process
//! stops (a closed pipe stops it quietly).

use super::*;

/// Why the process stops before answering every input.
pub(super) enum Stop {
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
pub(super) struct Output {
    pub(super) stdout: BufWriter<Stdout>,
    pub(super) stderr: BufWriter<Stderr>,
}

impl Output {
    pub(super) fn new() -> Output {
        Output {
            stdout: BufWriter::with_capacity(1 << 16, std::io::stdout()),
            stderr: BufWriter::with_capacity(1 << 16, std::io::stderr()),
        }
    }

    /// One line on stdout.
    pub(super) fn row(&mut self, line: impl std::fmt::Display) -> Result<(), Stop> {
        Ok(writeln!(self.stdout, "{line}")?)
    }

    /// One line on stderr.
    pub(super) fn note(&mut self, line: impl std::fmt::Display) -> Result<(), Stop> {
        Ok(writeln!(self.stderr, "{line}")?)
    }

    pub(super) fn flush(&mut self) -> Result<(), Stop> {
        self.stderr.flush()?;
        Ok(self.stdout.flush()?)
    }

    /// The exit status for how the run ended; a failure's message goes to stderr if it can.
    pub(super) fn finish(mut self, result: Result<(), Stop>) -> ExitCode {
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

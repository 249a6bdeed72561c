//! Model text read as it arrives: [`StreamReader`] takes the text in chunks and says, after
//! each one, which calls are now complete and valid, so they can start while the model is still
//! writing; [`StreamReader::finish`] reads the whole text as [`plan`] does.
//!
//! **What a stream guarantees.** The final reading — calls, verdicts, repairs, ignored text,
//! errors — is exactly the reading of the whole text, however it was cut into chunks (it *is*
//! that reading: [`finish`](StreamReader::finish) reads the text once more, as a whole). A call
//! is handed out early when its own text is complete and everything read so far puts it in
//! call position: a line of calls ended by its newline, or an item of a list of calls followed
//! by its `,` (`[add(a=1, b=2), ` hands out `add` before the rest of the list arrives). The
//! runner ([`crate::dispatch::stream`]) starts it only once no more text is at hand (the model
//! is still writing): text that arrives together, such as a whole response, is read whole
//! first. Text that arrives after a call started cannot un-run it: if it turns the call's unit
//! into code (`[add(a=1), x + 1]`) or leaves it cut off, the final reading rejects the unit,
//! and the runner's row for it says which of its calls had started and ran (each of those has
//! its one output row, never a second). A call inside an unclosed reasoning block is not
//! handed out early.
//!
//! **Work is bounded.** Each early read covers only the text since the last prose line (the
//! units still open), at most 64 KiB of it; re-reading is charged to a budget of a fixed
//! multiple of [`Limits::max_source_bytes`], past which calls simply start at the end. A stream longer than
//! `max_source_bytes` stops with a `Limit` error: no call that has not started starts.
//!
//! ```
//! use fexpr::front::stream::StreamReader;
//! use fexpr::repair::RepairOptions;
//!
//! let manager = fexpr::demo::manager();
//! let (ctx, limits) = (manager.context(), manager.limits());
//! let mut reader = StreamReader::new(RepairOptions::default());
//! let early = reader.push("[add(a=1, b=2), ", ctx, limits).unwrap();
//! assert_eq!(early[0].verdict.input, "add(a=1, b=2)");
//! assert!(early[0].run.is_some());
//! assert!(reader.push("multiply(a=2, b=3)]", ctx, limits).unwrap().is_empty());
//! let plan = reader.finish(ctx, limits);
//! assert_eq!(plan.calls.len(), 2);
//! ```

use std::collections::HashSet;

use crate::error::{Error, LimitKind, Span};
use crate::front::check::{plan, Plan, Planned};
use crate::front::repair::RepairOptions;
use crate::limits::Limits;
use crate::resolve::context::Context;

/// How many times [`Limits::max_source_bytes`] early reads may cover in all.
const REREAD_FACTOR: usize = 16;

/// The longest stretch read early: a longer unit's calls start when the text ends (or a prose
/// line closes it), so an early read never holds more than this much text's calls.
const MAX_EARLY_READ: usize = 64 << 10;

/// Reads model text chunk by chunk; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct StreamReader {
    text: String,
    options: RepairOptions,
    /// Where the text still open to change starts: before it, every unit is closed.
    settled: usize,
    /// The starts of the calls handed out to run early.
    started: HashSet<u32>,
    /// Bytes early reads may still cover.
    budget: Option<usize>,
    /// Set once the text went over `max_source_bytes`.
    over: Option<Error>,
}

impl StreamReader {
    /// A reader with the repairs (and reading options) `options`.
    pub fn new(options: RepairOptions) -> StreamReader {
        StreamReader {
            text: String::new(),
            options,
            settled: 0,
            started: HashSet::new(),
            budget: None,
            over: None,
        }
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the call whose span starts at `start` was handed out by [`push`](Self::push).
    pub fn started(&self, start: u32) -> bool {
        self.started.contains(&start)
    }

    /// Add `chunk`; the calls that are now complete and valid and were not handed out before,
    /// to start now (spans index the whole text). An error when the text goes over
    /// [`Limits::max_source_bytes`]: the stream must stop, and nothing more starts.
    pub fn push(
        &mut self,
        chunk: &str,
        ctx: &Context,
        limits: &Limits,
    ) -> Result<Vec<Planned>, Error> {
        if let Some(error) = &self.over {
            return Err(error.clone());
        }
        if self.text.len().saturating_add(chunk.len()) > limits.max_source_bytes {
            let error = Error::limit(
                LimitKind::SourceBytes,
                limits.max_source_bytes,
                self.text.len().saturating_add(chunk.len()),
            );
            self.over = Some(error.clone());
            return Err(error);
        }
        self.text.push_str(chunk);
        let mut budget = self
            .budget
            .unwrap_or(limits.max_source_bytes.saturating_mul(REREAD_FACTOR));
        let text = self.text.as_str();
        // Complete lines since the last settled point, and the complete items of a list being
        // written on the last line.
        let lines_end = text.rfind('\n').map_or(0, |p| p + 1).max(self.settled);
        let mut pieces: Vec<(usize, String)> = Vec::new();
        if lines_end > self.settled && !in_open_reasoning(&text[..lines_end]) {
            pieces.push((self.settled, text[self.settled..lines_end].to_string()));
        }
        if let Some(list) = open_list(&text[lines_end..]) {
            if !in_open_reasoning(text) {
                pieces.push((lines_end, list));
            }
        }
        let mut out = Vec::new();
        for (base, piece) in pieces {
            if piece.len() > MAX_EARLY_READ {
                continue;
            }
            if budget < piece.len() {
                budget = 0;
                break;
            }
            budget -= piece.len();
            let read = plan(&piece, ctx, limits, &self.options);
            if read.error.is_some() {
                continue;
            }
            // A piece of whole lines whose last line is prose closes every unit in it.
            let closed = base == self.settled && ends_in_prose(&read, piece.len());
            for mut call in read.calls {
                let start = base as u32 + call.verdict.span.start;
                if call.verdict.valid && call.run.is_some() && !self.started.contains(&start) {
                    shift(&mut call, base as u32);
                    self.started.insert(start);
                    out.push(call);
                }
            }
            if closed {
                self.settled = lines_end;
            }
        }
        self.budget = Some(budget);
        Ok(out)
    }

    /// The whole text, read as [`plan`] reads it (with the `Limit` error if it went over
    /// `max_source_bytes`), and the text.
    pub fn finish(self, ctx: &Context, limits: &Limits) -> Plan {
        if let Some(error) = self.over {
            return Plan {
                error: Some(error),
                ..Plan::default()
            };
        }
        plan(&self.text, ctx, limits, &self.options)
    }
}

/// Move every span of `call` (read from a piece starting at `base`) into the whole text.
fn shift(call: &mut Planned, base: u32) {
    let by = |s: Span| Span::new(s.start + base, s.end + base);
    call.verdict.span = by(call.verdict.span);
    call.place.span = by(call.place.span);
    if let Some(e) = &mut call.verdict.error {
        e.span = e.span.map(by);
    }
    for r in &mut call.verdict.repairs {
        r.span = by(r.span);
    }
}

/// Whether the reading of a piece of `len` bytes ends with prose (its last non-blank stretch is
/// ignored prose or a mention after every call): the units before it are closed.
fn ends_in_prose(read: &Plan, len: usize) -> bool {
    let last_call = read
        .calls
        .iter()
        .map(|c| c.verdict.span.end)
        .max()
        .unwrap_or(0);
    read.ignored.last().is_some_and(|i| {
        matches!(
            i.reason,
            crate::front::IgnoreReason::Prose | crate::front::IgnoreReason::Mention
        ) && i.span.start >= last_call
            && i.span.end as usize <= len
    })
}

/// Whether `text` has a reasoning block opened and not closed (its calls may be reasoning).
fn in_open_reasoning(text: &str) -> bool {
    ["think", "thinking", "reasoning"].iter().any(|tag| {
        let open = text.rfind(&format!("<{tag}>"));
        let close = text.rfind(&format!("</{tag}>"));
        match (open, close) {
            (Some(o), Some(c)) => o > c,
            (Some(_), None) => true,
            _ => false,
        }
    })
}

/// For a line being written that opens a list or tuple of calls (`[add(a=1, b=2), mul`), the
/// list of its items complete so far, closed (`[add(a=1, b=2)]`); `None` when there is none.
fn open_list(line: &str) -> Option<String> {
    let body = line.trim_start();
    let lead = line.len() - body.len();
    let close = match body.as_bytes().first() {
        Some(b'[') => ']',
        Some(b'(') => ')',
        _ => return None,
    };
    let b = body.as_bytes();
    let mut depth = 0usize;
    let mut last_comma = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    // The list closed on this line: the line is read whole once it ends.
                    return None;
                }
            }
            b',' if depth == 1 => last_comma = Some(i),
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return None;
                }
            }
            b'#' => return None,
            _ => {}
        }
        i += 1;
    }
    let end = last_comma?;
    Some(format!("{}{}{close}", &line[..lead], &body[..end]))
}

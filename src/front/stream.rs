//! Model text read as it arrives: [`StreamReader`] takes the text in chunks and says, after
//! each one, which calls are now complete and valid, so they can start while the model is still
//! writing; [`StreamReader::finish`] reads the whole text as [`plan`] does.
//!
//! **What a stream guarantees.** The final reading — calls, verdicts, repairs, ignored text,
//! errors — is exactly the reading of the whole text, however it was cut into chunks (it *is*
//! that reading: [`finish`](StreamReader::finish) reads the text once more, as a whole). A call
//! is handed out early when its own text is complete and the reading of everything before it
//! runs it: a line of calls ended by its newline, or an item of a list of calls followed by its
//! `,` (`[add(a=1, b=2), ` hands out `add` before the rest of the list arrives), each read with
//! every line before it that is still open (a unit, a fence, a bracket: after `x = (`,
//! `if False:` or `import os` in the same fence, nothing starts). The text's lexical state
//! ([`Scanner`]) is kept as it grows, so a line inside a string, a comment, a bracket or
//! reasoning (an unclosed block too) is never read as complete. A call starts early only while
//! the calls of the text so far are within [`Limits::max_calls`], and a model format's call its
//! format may still go on with (a GLM call before its `</tool_call>`) only once text follows
//! it. The runner ([`crate::dispatch::stream`]) starts it only once no more text is at hand
//! (the model is still writing): text that arrives together, such as a whole response, is read
//! whole first. Text that arrives after a call started cannot un-run it: if it turns the call's
//! unit into code (`[add(a=1), x + 1]`) or leaves it cut off, the final reading rejects the
//! unit, and the runner's row for it says which of its calls had started and ran (each of
//! those has its one output row, never a second).
//!
//! **Work is bounded.** The scanner reads each byte once; an early read happens only when a line
//! or an item was completed, covers only the text since the last prose line (the units still
//! open), at most 64 KiB of it, and is charged to a budget of a fixed multiple of
//! [`Limits::max_source_bytes`], past which calls simply start at the end. A stream longer than
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
use crate::front::lex::Scanner;
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
    /// The calls in the text before `settled` (final: their units are closed).
    settled_calls: usize,
    /// The starts of the calls handed out to run early.
    started: HashSet<u32>,
    /// Bytes early reads may still cover.
    budget: Option<usize>,
    /// Set once the text went over `max_source_bytes`.
    over: Option<Error>,
    /// The lexical reading of the text so far, kept as it grows.
    scanner: Scanner,
    /// What the last early reads covered (the end of the complete lines, the last complete
    /// item of an open list): nothing new, nothing is read again.
    read_to: (usize, usize),
    /// The open list read last (its bracket and its last complete item's `,`).
    list_at: Option<(usize, usize)>,
    /// The open list whose items so far were all read as calls that run (its bracket, its
    /// last `,` read, and the calls of the text up to it): its next items are read alone.
    list_read: Option<(usize, usize, usize)>,
}

/// What an early read covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// The complete lines since the settled point.
    Lines,
    /// Those lines and an open list's complete items, closed.
    List,
    /// New items of an open list read before, with the count of calls before them.
    Items(usize),
}

impl StreamReader {
    /// A reader with the repairs (and reading options) `options`.
    pub fn new(options: RepairOptions) -> StreamReader {
        StreamReader {
            text: String::new(),
            options,
            settled: 0,
            settled_calls: 0,
            started: HashSet::new(),
            budget: None,
            over: None,
            scanner: Scanner::default(),
            read_to: (0, 0),
            list_at: None,
            list_read: None,
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
    ///
    /// Long (about 90 lines) for a reason: one decision over the pieces read early (the lines
    /// now complete, the items of an open list), whose steps share the budget, the settled
    /// point and the count of calls.
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
        // Each byte is read once by the scanner: what follows reads text only when a line or
        // an item was completed, and charges it to the budget.
        self.scanner.read(&self.text);
        let lines_end = self.scanner.lines_end().max(self.settled);
        let list = self
            .scanner
            .open_list()
            .filter(|(open, _)| *open >= lines_end && !self.scanner.in_reasoning());
        if self.budget == Some(0) {
            return Ok(Vec::new());
        }
        let (read_lines, read_list) = self.read_to;
        // Each piece: its text, where it starts in the text, and what it is.
        let mut pieces: Vec<(String, usize, Piece)> = Vec::new();
        // A piece longer than an early read may cover is not even copied.
        let fits = |from: usize, to: usize| to.saturating_sub(from) < MAX_EARLY_READ;
        if lines_end > read_lines && lines_end > self.settled && fits(self.settled, lines_end) {
            let piece = self.text[self.settled..lines_end].to_string();
            pieces.push((piece, self.settled, Piece::Lines));
        }
        if let Some((open, comma)) = list.filter(|(_, comma)| *comma > read_list) {
            match self.list_read {
                // The list so far was read as calls in call position: its new items, read
                // alone as a list, are calls there too.
                Some((o, prev, count)) if o == open && prev < comma && fits(prev, comma) => {
                    let piece = format!("[{}]", &self.text[prev + 1..comma]);
                    pieces.push((piece, prev, Piece::Items(count)));
                }
                // The pending lines and the list's complete items, closed: the list read with
                // everything before it that is still open.
                _ if fits(self.settled, comma) => {
                    let close = if self.text.as_bytes().get(open) == Some(&b'(') {
                        ')'
                    } else {
                        ']'
                    };
                    let piece = format!("{}{close}", &self.text[self.settled..comma]);
                    pieces.push((piece, self.settled, Piece::List));
                }
                _ => {}
            }
            self.list_read = None;
            self.list_at = Some((open, comma));
        }
        self.read_to = (lines_end, list.map_or(read_list, |(_, comma)| comma));
        let mut budget = self
            .budget
            .unwrap_or(limits.max_source_bytes.saturating_mul(REREAD_FACTOR));
        let mut out = Vec::new();
        for (piece, base, kind) in pieces {
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
            let closed = kind == Piece::Lines && ends_in_prose(&read, &piece);
            // `max_calls` bounds the whole text: the calls before the piece count too.
            let before = match kind {
                Piece::Items(count) => count,
                _ => self.settled_calls,
            };
            let count = before.saturating_add(read.calls.len());
            let all_run = read
                .calls
                .iter()
                .all(|c| c.verdict.valid && c.run.is_some());
            if kind != Piece::Lines && all_run && count <= limits.max_calls {
                self.list_read = self.list_at.map(|(open, comma)| (open, comma, count));
            }
            if count > limits.max_calls {
                // The text so far holds more calls than allowed: nothing more starts early.
                self.budget = Some(0);
                return Ok(out);
            }
            {
                for mut call in read.calls.iter().cloned() {
                    let start = base as u32 + call.verdict.span.start;
                    if call.verdict.valid
                        && call.run.is_some()
                        && !self.started.contains(&start)
                        && !self.may_go_on(base, &call)
                    {
                        shift(&mut call, base as u32);
                        self.started.insert(start);
                        out.push(call);
                    }
                }
            }
            if closed {
                self.settled = lines_end;
                self.settled_calls = count;
            }
        }
        self.budget = Some(budget);
        Ok(out)
    }

    /// Whether `call` (read from the piece at `base`) is a model format's call that its format
    /// may still go on with ([`crate::front::formats::may_go_on`]), given the text so far.
    fn may_go_on(&self, base: usize, call: &Planned) -> bool {
        let (a, z) = (
            base + call.verdict.span.start as usize,
            base + call.verdict.span.end as usize,
        );
        match (self.text.get(a..z), self.text.get(z..)) {
            (Some(own), Some(rest)) => crate::front::formats::may_go_on(own, rest),
            _ => false,
        }
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

/// Whether the reading of `piece` ends with prose (its last non-blank stretch is ignored
/// prose or a mention after every call): the units before it are closed. A compound
/// statement's header (`if False:`), which reads as prose until its body arrives, closes none.
fn ends_in_prose(read: &Plan, piece: &str) -> bool {
    let last_call = read
        .calls
        .iter()
        .map(|c| c.verdict.span.end)
        .max()
        .unwrap_or(0);
    let last_line = piece
        .trim_end()
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .trim();
    let word = last_line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or_default();
    let header = last_line.ends_with(':') && crate::front::python::COMPOUND.contains(&word);
    !header
        && read.ignored.last().is_some_and(|i| {
            matches!(
                i.reason,
                crate::front::IgnoreReason::Prose | crate::front::IgnoreReason::Mention
            ) && i.span.start >= last_call
                && i.span.end as usize <= piece.len()
        })
}

//! Python-like text, read in units: the body of a fenced block or of an explicit tool-call form,
//! or a run of lines standing apart from prose. Each logical line (brackets may carry it over
//! several physical lines) is parsed on its own and is one of: calls (a call or a list or
//! tuple of calls, as an expression statement), other code, a compound statement's header, a
//! call that does not parse, or prose. A unit runs only if it holds nothing but calls (and
//! comments); code beside its calls makes it one rejected item. Comments and strings are
//! skipped by the lexical rules, so they never hold calls.

use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::front::{
    dotted_ident_end, is_ident_start, json_form, json_input, markup, shift_back, span, FoundCall,
    IgnoreReason, Origin, Reader,
};
use crate::syntax::{self, Expr, ExprKind};

mod lines;
#[cfg(test)]
pub(crate) mod tests;
use lines::{
    call_attempt, code_error, continues_name, describe, found_call, has_adjacent_words, has_call,
    is_calls, is_header, is_label, list_items, printed_calls, skip_string, starts_code, statements,
    string_closed, trimmed_end, what_is, HINT,
};

/// Which kind of region a block of lines is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Block {
    /// Text with prose: each run of lines standing apart from prose is a unit.
    Plain,
    /// A fenced code block's body: one unit.
    Fence,
    /// The body of an explicit tool-call form: one unit, and it must hold calls.
    Explicit,
}

/// Python's compound statements: a line starting with one and ending with `:` is a header.
pub(super) const COMPOUND: &[&str] = &[
    "if", "elif", "else", "for", "while", "def", "class", "try", "except", "finally", "with",
    "async", "match", "case",
];

/// A unit being read.
#[derive(Default)]
struct Unit {
    /// Its stretch of the text: first to last non-blank byte.
    span: Option<(usize, usize)>,
    /// Its calls, in order.
    calls: Vec<FoundCall>,
    /// Why it cannot run: its first piece of code that is not calls (the error's span indexes
    /// the text).
    other: Option<Error>,
    /// Whether `other` is prose rather than code.
    prose: bool,
    /// The first tool named in a call in its code (outside comments and strings).
    tool: Option<String>,
    /// The indentation of the compound statement whose body is being read.
    header_indent: Option<usize>,
    /// The last call statement taken.
    last_stmt: Option<Span>,
    /// Its comments outside its calls: reported as code when its calls run.
    comments: Vec<Span>,
}

impl Unit {
    fn touch(&mut self, a: usize, z: usize) {
        self.span = Some(match self.span {
            Some((s, e)) => (s.min(a), e.max(z)),
            None => (a, z),
        });
    }

    fn other(&mut self, error: Error, prose: bool) {
        if self.other.is_none() {
            self.other = Some(error);
            self.prose = prose;
        }
    }
}

/// One logical line, classified.
enum Stmt {
    /// A call or a list or tuple of calls (or a JSON form written as a Python literal).
    Calls(Vec<FoundCall>),
    /// Code that is not only calls: the error saying what it is (span in the text).
    Other(Error),
    /// A compound statement's header (`if x:`) followed by an indented body.
    Header(Error),
    /// A call that does not parse (cut off, or a construct that is refused inside it).
    Attempt(FoundCall),
    /// Not Python.
    Prose,
}

/// What a line starting with `{` or `[` holds as JSON.
enum Json {
    /// A call form: its calls, and where it ends.
    Calls(Vec<FoundCall>, usize),
    /// JSON that is not a call form, ending there.
    Data(usize),
    /// A call form cut off at the end of the block.
    CutOff(FoundCall),
    /// Not JSON (maybe Python).
    Not,
}

impl Reader<'_> {
    /// Read the lines of `s` as a block of `kind`.
    ///
    /// Long (about 130 lines) for a reason: one pass over the block's logical lines whose
    /// steps (bracket depth, strings carried over lines, the open unit, prose between units)
    /// share the unit's state; the per-line decisions themselves are in `classify` and
    /// `lines.rs`.
    pub(super) fn read_lines(&mut self, s: Span, block: Block) {
        let (start, end) = (s.start as usize, s.end as usize);
        let text = self.text;
        let bytes = text.as_bytes();
        let mut unit = Unit::default();
        let mut i = start;
        while i < end {
            if self.budget_from.is_some() || self.refused.is_some() {
                return;
            }
            let le = markup::line_end(text, i, end);
            let line = &text[i..le];
            let body = line.trim_start();
            if body.trim_end().is_empty() {
                i = le + 1;
                continue;
            }
            let indent = line.len() - body.len();
            let p = i + indent;
            let line_stop = i + line.trim_end().len();
            if bytes[p] == b'#' {
                unit.touch(p, line_stop);
                unit.comments.push(span(p, line_stop));
                i = le + 1;
                continue;
            }
            if let Some(h) = unit.header_indent {
                if indent > h {
                    let (lend, _) = self.logical_end(p, end, true);
                    unit.touch(p, trimmed_end(text, p, lend));
                    self.note_tools(&mut unit, p, lend);
                    i = lend + 1;
                    continue;
                }
                unit.header_indent = None;
            }
            if matches!(bytes[p], b'{' | b'[') {
                match self.json_at(p, end) {
                    Json::Calls(calls, jend) => {
                        let rest_end = markup::line_end(text, jend, end);
                        let rest = &text[jend..rest_end];
                        if rest
                            .trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
                            .is_empty()
                        {
                            if block == Block::Plain {
                                self.flush(&mut unit, block);
                                self.found.extend(calls);
                            } else {
                                unit.touch(p, jend);
                                unit.calls.extend(calls);
                            }
                        } else {
                            // A call form inside a sentence: mentioned, not asked for.
                            self.flush(&mut unit, block);
                            self.mention(calls, p, jend);
                            self.prose(jend, rest_end, block, &mut unit);
                        }
                        i = rest_end + 1;
                        continue;
                    }
                    Json::Data(jend) => {
                        if block == Block::Plain {
                            self.flush(&mut unit, block);
                        }
                        self.ignore(span(p, jend), IgnoreReason::JsonData);
                        let rest_end = markup::line_end(text, jend, end);
                        self.prose(jend, rest_end, block, &mut unit);
                        i = rest_end + 1;
                        continue;
                    }
                    Json::CutOff(call) => {
                        unit.touch(p, trimmed_end(text, p, end));
                        unit.calls.push(call);
                        break;
                    }
                    Json::Not => {}
                }
                if self.refused.is_some() {
                    return;
                }
            }
            let multi = starts_code(&text[p..le]);
            let (lend, unclosed) = self.logical_end(p, end, multi);
            let mut stop = trimmed_end(text, p, lend);
            // `[f(a=1)][f(a=`: a call list, then a cut-off copy of it on the same line.
            if unclosed {
                if let Some(g) = self.match_python(p, stop) {
                    let tail = text[g..stop].trim_start();
                    if !tail.is_empty() && text[p..g].starts_with(tail) && tail.len() < g - p {
                        self.ignore(span(stop - tail.len(), stop), IgnoreReason::Duplicate);
                        stop = g;
                    }
                }
            }
            let unclosed = unclosed && stop == trimmed_end(text, p, lend);
            match self.classify(p, stop, unclosed, end) {
                Stmt::Calls(calls) => {
                    unit.touch(p, stop);
                    let inside: Vec<Span> = calls.iter().map(|c| c.span).collect();
                    for c in self.comments_in(p, stop) {
                        if !inside.iter().any(|s| s.start <= c.start && c.end <= s.end) {
                            unit.comments.push(c);
                        }
                    }
                    unit.calls.extend(calls);
                    unit.last_stmt = Some(span(p, stop));
                }
                Stmt::Other(error) => {
                    unit.touch(p, stop);
                    unit.other(error, false);
                    self.note_tools(&mut unit, p, stop);
                }
                Stmt::Header(error) => {
                    unit.touch(p, stop);
                    unit.other(error, false);
                    unit.header_indent = Some(indent);
                    self.note_tools(&mut unit, p, stop);
                }
                Stmt::Attempt(call) => {
                    if unclosed && self.is_truncated_copy(&unit, p, stop) {
                        self.flush(&mut unit, block);
                        self.ignore(span(p, stop), IgnoreReason::Duplicate);
                    } else {
                        unit.touch(p, stop);
                        unit.calls.push(call);
                    }
                }
                Stmt::Prose => {
                    let stop = line_stop.max(p);
                    if block == Block::Plain {
                        self.flush(&mut unit, block);
                    }
                    self.prose(p, stop, block, &mut unit);
                    i = le + 1;
                    continue;
                }
            }
            i = lend + 1;
        }
        self.flush(&mut unit, block);
    }

    /// End the unit: its calls are taken if it holds nothing else; otherwise it is one rejected
    /// item (when it holds calls, or is an explicit form) or ignored code.
    fn flush(&mut self, unit: &mut Unit, block: Block) {
        let unit = std::mem::take(unit);
        let Some((a, z)) = unit.span else {
            return;
        };
        let Some(error) = unit.other else {
            if unit.calls.is_empty() {
                // Comments alone.
                self.ignore(span(a, z), IgnoreReason::Code);
                return;
            }
            self.found.extend(unit.calls);
            if unit.last_stmt.is_some() {
                self.last_taken = unit.last_stmt;
            }
            // Comments beside the calls that run: not calls, reported.
            for c in unit.comments {
                self.ignore(c, IgnoreReason::Comment);
            }
            return;
        };
        if unit.calls.is_empty() && unit.tool.is_none() && block != Block::Explicit {
            let reason = if unit.prose {
                IgnoreReason::Prose
            } else {
                IgnoreReason::Code
            };
            self.ignore(span(a, z), reason);
            return;
        }
        let source = &self.text[a..z];
        let name = unit
            .tool
            .or_else(|| unit.calls.first().map(|c| c.name.clone()))
            .unwrap_or_default();
        let error = Error {
            span: error.span.map(|s| shift_back(s, span(a, a).start)),
            ..error
        };
        self.rejected.push(self.found.len());
        self.found.push(FoundCall {
            name,
            span: span(a, z),
            origin: Origin::Python,
            source: source.to_string(),
            parsed: Err(error),
            id: None,
        });
    }

    /// Read the prose `text[a..z]`: calls to tools in it are mentions (calls, when the reading
    /// is lenient); the rest is prose. In a fence or an explicit form, prose is part of the
    /// unit, which then cannot run.
    fn prose(&mut self, a: usize, z: usize, block: Block, unit: &mut Unit) {
        let text = self.text;
        let piece = &text[a..z.max(a)];
        if piece.trim().is_empty() {
            return;
        }
        if block != Block::Plain {
            let lead = piece.len() - piece.trim_start().len();
            let at = span(a + lead, a + piece.trim_end().len());
            unit.touch(at.start as usize, at.end as usize);
            unit.other(
                Error::new(
                    ErrorKind::Syntax,
                    format!("`{}` is not a call", clip(piece.trim(), 60)),
                )
                .at(at)
                .with_hint(HINT),
                true,
            );
            if let Some((name, _, _)) = self.tool_mentions(a, z).into_iter().next() {
                unit.tool.get_or_insert(name);
            }
            return;
        }
        let mut from = a;
        for (name, s, e) in self.tool_mentions(a, z) {
            self.ignore_prose(from, s);
            if name.is_empty() {
                // A JSON call form in the sentence.
                let json = &text[s..e];
                let calls = json_input::read(json, self.limits)
                    .ok()
                    .and_then(|tree| json_form::calls(&tree, json, s, self.limits, false))
                    .unwrap_or_default();
                self.mention(calls, s, e);
                from = e;
                continue;
            }
            if self.options.lenient {
                let source = &text[s..e];
                let parsed = syntax::parse(source, self.limits).and_then(|expr| {
                    expr.as_call()?;
                    Ok(expr)
                });
                self.found.push(FoundCall {
                    name,
                    span: span(s, e),
                    origin: Origin::Python,
                    source: source.to_string(),
                    parsed,
                    id: None,
                });
            } else {
                self.ignore(span(s, e), IgnoreReason::Mention);
            }
            from = e;
        }
        self.ignore_prose(from, z);
    }

    /// Report `text[a..z]` as prose, or as punctuation when it is nothing but brackets and
    /// separators.
    fn ignore_prose(&mut self, a: usize, z: usize) {
        let Some(piece) = self.text.get(a..z) else {
            return;
        };
        let reason = if piece
            .bytes()
            .all(|c| c.is_ascii_whitespace() || b"()[]{},;".contains(&c))
        {
            IgnoreReason::Punctuation
        } else {
            IgnoreReason::Prose
        };
        self.ignore(span(a, z), reason);
    }

    /// JSON call forms found in a sentence: mentions (calls, when the reading is lenient).
    fn mention(&mut self, calls: Vec<FoundCall>, a: usize, z: usize) {
        if self.options.lenient {
            self.found.extend(calls);
        } else {
            self.ignore(span(a, z), IgnoreReason::Mention);
        }
    }

    /// The calls to tools written in the prose `text[a..z]` (whole names: not the end of a
    /// longer identifier), each with its name, start and end; JSON call forms too, with an
    /// empty name. JSON over a limit there refuses the whole text.
    fn tool_mentions(&mut self, a: usize, z: usize) -> Vec<(String, usize, usize)> {
        let bytes = self.text.as_bytes();
        let mut out = Vec::new();
        let mut i = a;
        while i < z {
            let c = bytes[i];
            if c == b'{' {
                let jend = markup::json_end(bytes, i, z);
                // The scan is paid for whether or not the JSON closes: a sentence of `{"` that
                // never close would otherwise be scanned to its end from each of them.
                if !self.charge(jend.unwrap_or(z) - i) {
                    self.budget_from.get_or_insert(i);
                    return out;
                }
                if let Some(jend) = jend {
                    let json = &self.text[i..jend];
                    match json_input::read(json, self.limits) {
                        Ok(tree) => {
                            if json_form::calls(&tree, json, i, self.limits, false).is_some() {
                                out.push((String::new(), i, jend));
                            }
                            i = jend;
                            continue;
                        }
                        Err(e) if e.kind == ErrorKind::Limit => {
                            self.refused = Some(Error {
                                span: e
                                    .span
                                    .map(|s| span(i + s.start as usize, i + s.end as usize)),
                                ..e
                            });
                            return out;
                        }
                        Err(_) => {}
                    }
                }
            }
            let boundary = i == 0 || !continues_name(bytes[i - 1]);
            if is_ident_start(c) && boundary {
                let name_end = dotted_ident_end(bytes, i);
                if bytes.get(name_end) == Some(&b'(') && name_end < z {
                    let name = &self.text[i..name_end];
                    if (self.is_tool)(name) {
                        if let Some(close) = self.match_python(name_end, z) {
                            out.push((name.to_string(), i, close));
                            i = close;
                            continue;
                        }
                        if self.steps == 0 {
                            self.budget_from.get_or_insert(i);
                            return out;
                        }
                    }
                }
                i = name_end.max(i + 1);
                continue;
            }
            i += 1;
        }
        out
    }

    /// The comments in the code `text[a..z]` (strings skipped), each to its line's end.
    fn comments_in(&mut self, a: usize, z: usize) -> Vec<Span> {
        let bytes = self.text.as_bytes();
        let mut out = Vec::new();
        let mut i = a;
        while i < z {
            if !self.charge(1) {
                return out;
            }
            match bytes[i] {
                b'#' => {
                    let end = markup::line_end(self.text, i, z);
                    out.push(span(i, trimmed_end(self.text, i, end)));
                    i = end;
                }
                b'\'' | b'"' => i = skip_string(bytes, i, z).max(i + 1),
                _ => i += 1,
            }
        }
        out
    }

    /// Note in `unit` the first call to a tool in the code `text[a..z]` (comments and strings
    /// skipped).
    fn note_tools(&mut self, unit: &mut Unit, a: usize, z: usize) {
        if unit.tool.is_some() {
            return;
        }
        let bytes = self.text.as_bytes();
        let mut i = a;
        while i < z {
            if !self.charge(1) {
                return;
            }
            let c = bytes[i];
            match c {
                b'#' => {
                    while i < z && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\'' | b'"' => {
                    i = skip_string(bytes, i, z);
                    continue;
                }
                _ => {}
            }
            if is_ident_start(c) && (i == 0 || !continues_name(bytes[i - 1])) {
                let name_end = dotted_ident_end(bytes, i);
                let after = bytes[name_end..z.max(name_end)]
                    .iter()
                    .find(|b| !b.is_ascii_whitespace());
                if after == Some(&b'(') && (self.is_tool)(&self.text[i..name_end]) {
                    unit.tool = Some(self.text[i..name_end].to_string());
                    return;
                }
                i = name_end.max(i + 1);
                continue;
            }
            i += 1;
        }
    }

    /// The end of the logical line starting at `p` (the `\n` that ends it, or `end`), and
    /// whether it is unclosed (a bracket or string still open at `end`). Brackets carry the line
    /// over newlines only when `multi` (the line starts like code); comments and strings are
    /// skipped, a backslash before a newline continues the line.
    fn logical_end(&mut self, p: usize, end: usize, multi: bool) -> (usize, bool) {
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut i = p;
        while i < end {
            if !self.charge(1) {
                self.budget_from = Some(p);
                return (end, false);
            }
            match bytes[i] {
                b'\n' if depth == 0 || !multi => return (i, false),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b'#' => {
                    while i < end && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\'' | b'"' => {
                    let next = skip_string(bytes, i, end);
                    if next >= end && !string_closed(bytes, i, end) {
                        return (end, true);
                    }
                    i = next;
                    continue;
                }
                b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                    i += 2;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        (end, depth > 0)
    }

    /// The common case, read without cutting the text into regions and logical lines: the
    /// whole text is one line of calls (`add(a=1)`, `[f(x=1), g(y=2)]`), with no markup, model
    /// format, comment or line break. Takes it and returns true, or returns false and leaves
    /// everything to the full reading, having charged nothing. What it takes is exactly what
    /// [`Reader::read_lines`] takes for such a text (the unit test `call_line_is_read_as_lines`
    /// compares the two on every corpus).
    pub(super) fn read_call_line(&mut self) -> bool {
        let text = self.text;
        let source = text.trim_end();
        let mut brackets = false;
        let b = source.as_bytes();
        // Shaped like calls: a bracket, or a (dotted) name and `(`, first; a bracket last. Prose
        // is left at once, without a parse.
        let shaped = match b.first() {
            Some(b'[' | b'(') => true,
            Some(_) => b.get(dotted_ident_end(b, 0)) == Some(&b'('),
            None => false,
        } && matches!(b.last(), Some(b')' | b']'));
        let plain = self.options.format.is_none()
            && shaped
            // One pass for the bytes that end the line, open a comment or may start markup; a
            // `[` may start a chat token or a model format's marker, which are looked for then.
            && source.bytes().all(|c| {
                brackets |= c == b'[';
                !matches!(c, b'#' | b'\n' | b'\r' | b'<' | b'`')
            })
            && !(brackets
                && (markup::may_hold_markup(source)
                    || !crate::front::formats::detect(source).is_empty()))
            // What `classify` charges for the line.
            && self.steps >= source.len().saturating_mul(2);
        if !plain {
            return false;
        }
        let Ok(expr) = syntax::parse(source, self.limits) else {
            return false;
        };
        // `print(f(x))` is Gemma's wrapper, which the full reading looks into.
        let printed = matches!(&expr.kind, ExprKind::Call(c) if c.func == "print");
        if printed || !is_calls(&expr) {
            return false;
        }
        self.steps = self.steps.saturating_sub(source.len().saturating_mul(2));
        let items = match expr.kind {
            ExprKind::List(items) | ExprKind::Tuple(items) => items,
            _ => vec![expr],
        };
        self.found
            .extend(items.into_iter().map(|item| found_call(item, 0, source)));
        true
    }

    /// Classify the logical line `text[p..stop]` (`unclosed`: cut off at `end`).
    fn classify(&mut self, p: usize, stop: usize, unclosed: bool, end: usize) -> Stmt {
        let text = self.text;
        let source = &text[p..stop];
        // Parsing costs a few steps per byte.
        if !self.charge(source.len().saturating_mul(2)) {
            self.budget_from = Some(p);
            return Stmt::Prose;
        }
        if source
            .bytes()
            .all(|c| c.is_ascii_whitespace() || b"()[]{},;".contains(&c))
        {
            return Stmt::Prose;
        }
        let at = |s: Span| span(p + s.start as usize, p + s.end as usize);
        let whole = span(p, stop);
        match syntax::parse(source, self.limits) {
            Ok(expr) => self.classify_expr(expr, p, source),
            Err(e) => {
                // A list of calls whose brackets do not pair: each call on its own, so one
                // broken call does not take the others with it.
                // (Counted, its brackets may look open; it ends with its list's closer.)
                let closed = !unclosed
                    || matches!(
                        (source.as_bytes().first(), source.as_bytes().last()),
                        (Some(b'['), Some(b']')) | (Some(b'('), Some(b')'))
                    );
                if e.kind == ErrorKind::Syntax && closed {
                    if let Some(items) = list_items(source) {
                        return self.classify_items(p, source, &items);
                    }
                }
                if let Some(name) = call_attempt(source, unclosed) {
                    // A call the model wrote that does not parse: its own error, as a verdict.
                    return Stmt::Attempt(FoundCall {
                        name,
                        span: whole,
                        origin: Origin::Python,
                        source: source.to_string(),
                        parsed: Err(e),
                        id: None,
                    });
                }
                if e.kind == ErrorKind::Unsupported {
                    // Statements separated by `;`: calls only if each one is.
                    if let Some(pieces) = statements(source) {
                        return self.classify_statements(p, &pieces, unclosed, end);
                    }
                }
                match e.kind {
                    // A sentence is prose however its words would nest as an expression (`it
                    // is done and …` read as one chain of operators): never a limit error.
                    ErrorKind::Limit
                        if e.limit == Some(LimitKind::Depth) && has_adjacent_words(source) =>
                    {
                        Stmt::Prose
                    }
                    // Text over a limit refuses the whole input, as an expression's would.
                    ErrorKind::Limit => {
                        self.refused = Some(Error {
                            span: Some(e.span.map(at).unwrap_or(whole)),
                            ..e
                        });
                        Stmt::Prose
                    }
                    ErrorKind::Unsupported if is_label(source) => Stmt::Prose,
                    ErrorKind::Unsupported => {
                        let what = what_is(source).unwrap_or_else(|| e.message.clone());
                        let span = e.span.map(at).unwrap_or(whole);
                        Stmt::Other(code_error(&what, e.kind, span))
                    }
                    _ if is_header(source) && self.has_body(stop, end) => {
                        let what = what_is(source).unwrap_or_else(|| "a compound statement".into());
                        Stmt::Header(code_error(&what, ErrorKind::Unsupported, whole))
                    }
                    // Code whose bracket or string carries it over lines (`x = (`, a `'''`
                    // left open): the lines it holds are inside it, never calls of their own.
                    _ if source.contains('\n') => Stmt::Other(code_error(
                        "code whose open bracket or string runs over lines, and does not parse",
                        ErrorKind::Unsupported,
                        whole,
                    )),
                    _ => Stmt::Prose,
                }
            }
        }
    }

    /// Classify the items `items` (ranges in `source`, the line at `p`) of a list of calls
    /// whose brackets do not pair: each item that parses as a call is one, each other one is
    /// a call that does not parse, with its own error.
    fn classify_items(&mut self, p: usize, source: &str, items: &[(usize, usize)]) -> Stmt {
        let mut calls = Vec::new();
        for &(a, z) in items {
            let item = &source[a..z];
            match syntax::parse(item, self.limits) {
                Ok(expr) if matches!(expr.kind, ExprKind::Call(_)) => {
                    calls.push(found_call(expr, p + a, item));
                }
                parsed => {
                    let name = call_attempt(item, true).unwrap_or_default();
                    let parsed = parsed.and_then(|expr| {
                        Err(code_error(
                            describe(&expr),
                            ErrorKind::Unsupported,
                            expr.span,
                        ))
                    });
                    calls.push(FoundCall {
                        name,
                        span: span(p + a, p + z),
                        origin: Origin::Python,
                        source: item.to_string(),
                        parsed,
                        id: None,
                    });
                }
            }
        }
        Stmt::Calls(calls)
    }

    /// Classify the `;`-separated statements of the line at `p` (`pieces`: their ranges in
    /// it): calls when every one is a call statement, else the first other one.
    fn classify_statements(
        &mut self,
        p: usize,
        pieces: &[(usize, usize)],
        unclosed: bool,
        end: usize,
    ) -> Stmt {
        let mut calls = Vec::new();
        for &(a, z) in pieces {
            let piece = &self.text[p + a..p + z];
            let lead = piece.len() - piece.trim_start().len();
            let (a, z) = (p + a + lead, p + a + lead + piece.trim().len());
            if a >= z {
                continue;
            }
            match self.classify(a, z, unclosed, end) {
                Stmt::Calls(found) => calls.extend(found),
                Stmt::Attempt(call) => calls.push(call),
                Stmt::Other(e) | Stmt::Header(e) => return Stmt::Other(e),
                Stmt::Prose => return Stmt::Prose,
            }
        }
        Stmt::Calls(calls)
    }

    /// Classify a line that parsed as the expression `expr` (spans from `p`).
    fn classify_expr(&mut self, expr: Expr, p: usize, source: &str) -> Stmt {
        let whole = span(p, p + source.len());
        // fexpr's and the providers' JSON forms written as Python literals.
        if matches!(expr.kind, ExprKind::Dict(_) | ExprKind::List(_)) && !has_call(&expr) {
            if let Some(tree) = json_form::literal_tree(expr.clone()) {
                if let Some(calls) = json_form::calls(&tree, source, p, self.limits, false) {
                    return Stmt::Calls(calls);
                }
            }
        }
        if is_calls(&expr) {
            let espan = expr.span;
            let items = match expr.kind {
                ExprKind::Call(call) => match printed_calls(&call, self.is_tool) {
                    Some(inner) => {
                        // `print(f(x))`: Gemma's `tool_code` convention, the one wrapper
                        // looked into; its own text is reported.
                        let first = inner.first().map_or(whole.end, |e| p as u32 + e.span.start);
                        let last = inner.last().map_or(whole.end, |e| p as u32 + e.span.end);
                        self.ignore(Span::new(whole.start, first), IgnoreReason::NotATool);
                        self.ignore(Span::new(last, whole.end), IgnoreReason::NotATool);
                        let mut args = call.args;
                        match args.pop() {
                            Some(Expr {
                                kind: ExprKind::List(items) | ExprKind::Tuple(items),
                                ..
                            }) => items,
                            Some(arg) => vec![arg],
                            None => Vec::new(),
                        }
                    }
                    None => vec![Expr {
                        kind: ExprKind::Call(call),
                        span: espan,
                    }],
                },
                ExprKind::List(items) | ExprKind::Tuple(items) => items,
                _ => Vec::new(),
            };
            return Stmt::Calls(
                items
                    .into_iter()
                    .map(|item| found_call(item, p, source))
                    .collect(),
            );
        }
        if !has_call(&expr) {
            if matches!(
                expr.kind,
                ExprKind::Name(_)
                    | ExprKind::None
                    | ExprKind::Bool(_)
                    | ExprKind::Int(_)
                    | ExprKind::BigInt(_)
                    | ExprKind::Float(_)
            ) {
                // One word or number alone on its line: prose (`Sure`, `Done`, `42`).
                return Stmt::Prose;
            }
            let what = describe(&expr);
            return Stmt::Other(code_error(what, ErrorKind::Unsupported, whole));
        }
        Stmt::Other(code_error(describe(&expr), ErrorKind::Unsupported, whole))
    }

    /// Whether the line after `stop` (within `end`) is indented more than the one at `stop`:
    /// a header's body.
    fn has_body(&self, stop: usize, end: usize) -> bool {
        let text = self.text;
        let line_start = text[..stop].rfind('\n').map_or(0, |p| p + 1);
        let indent = text[line_start..stop].len() - text[line_start..stop].trim_start().len();
        let next = markup::line_end(text, stop, end) + 1;
        let mut i = next;
        while i < end {
            let le = markup::line_end(text, i, end);
            let line = &text[i..le];
            if !line.trim().is_empty() {
                return line.len() - line.trim_start().len() > indent;
            }
            i = le + 1;
        }
        false
    }

    /// Read a text that is one JSON document in a call form (routing read it whole: the tree
    /// in `self.json`): the calls [`json_at`](Self::json_at) finds on its one line, without
    /// looking for markup first (none is written outside the strings of a JSON document).
    /// `false`, nothing read and nothing charged, for any other text.
    pub(crate) fn read_whole_json(&mut self) -> bool {
        let text = self.text;
        let Some(tree) = &self.json else {
            return false;
        };
        let end = tree.span.end as usize;
        if tree.span.start != 0
            || self.steps < end
            || !text.get(end..).is_some_and(|rest| rest.trim().is_empty())
        {
            return false;
        }
        let Some(calls) = text
            .get(..end)
            .and_then(|json| json_form::calls(tree, json, 0, self.limits, self.json_checked))
        else {
            return false;
        };
        self.charge(end);
        self.json = None;
        self.found.extend(calls);
        true
    }

    /// What a line starting with `{` or `[` at `p` holds as JSON.
    fn json_at(&mut self, p: usize, end: usize) -> Json {
        let text = self.text;
        let jend = markup::json_end(text.as_bytes(), p, end);
        // Paid for whether or not it closes (lines of `{` that never close would each be
        // scanned to the end of the text).
        if !self.charge(jend.unwrap_or(end) - p) {
            self.budget_from = Some(p);
            return Json::Not;
        }
        let Some(jend) = jend else {
            // Cut off: a JSON call whose name was written is reported as one.
            let stop = trimmed_end(text, p, end);
            let rest = &text[p..stop];
            if rest.starts_with('{') {
                if let Some(name) = json_form::cut_off_name(rest) {
                    // The reader's error where the JSON is malformed; at its end, it is cut off.
                    let error = match json_input::read(rest, self.limits) {
                        Err(e) if e.span.is_some_and(|s| (s.start as usize) < rest.len()) => e,
                        _ => Error::new(
                            ErrorKind::Syntax,
                            format!(
                                "the JSON call to `{}` is cut off: it does not close",
                                clip(&name, 40)
                            ),
                        )
                        .at(span(rest.len(), rest.len()))
                        .with_hint("the response ended inside the call; nothing in it ran"),
                    };
                    return Json::CutOff(FoundCall {
                        name,
                        span: span(p, stop),
                        origin: Origin::OpenAi,
                        source: rest.to_string(),
                        parsed: Err(error),
                        id: None,
                    });
                }
            }
            return Json::Not;
        };
        let json = &text[p..jend];
        // The whole text, when routing read it as JSON already.
        let whole = self
            .json
            .take()
            .filter(|_| p == 0 && text[jend..].trim().is_empty());
        match whole.map_or_else(|| json_input::read(json, self.limits), Ok) {
            Ok(tree) => match json_form::calls(&tree, json, p, self.limits, false) {
                Some(calls) => Json::Calls(calls, jend),
                None => Json::Data(jend),
            },
            // JSON over a limit refuses the whole text, as an expression's would.
            Err(e) if e.kind == ErrorKind::Limit => {
                self.refused = Some(Error {
                    span: e
                        .span
                        .map(|s| span(p + s.start as usize, p + s.end as usize)),
                    ..e
                });
                Json::Not
            }
            Err(_) => Json::Not,
        }
    }

    /// The end (exclusive) of the Python bracket group opening at `open`, strings and
    /// comments skipped; `None` if it does not close before `end`.
    fn match_python(&mut self, open: usize, end: usize) -> Option<usize> {
        let b = self.text.as_bytes();
        let mut depth = 0usize;
        let mut i = open;
        while i < end {
            if !self.charge(1) {
                return None;
            }
            match b[i] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                b'\'' | b'"' => {
                    i = skip_string(b, i, end);
                    continue;
                }
                b'#' => {
                    while i < end && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// Whether the unclosed line `text[p..stop]` is a cut-off copy of the unit's last call
    /// statement (or of the last one taken): a model that repeated itself.
    fn is_truncated_copy(&self, unit: &Unit, p: usize, stop: usize) -> bool {
        let Some(last) = unit.last_stmt.or(self.last_taken) else {
            return false;
        };
        let tail = &self.text[p..stop];
        let taken = self.text.get(last.range()).unwrap_or_default();
        !tail.is_empty() && tail.len() < taken.len() && taken.starts_with(tail)
    }
}

//! What the format readers share: the reading being built, a finder that steps over reasoning,
//! and string-aware bracket matching for JSON and Python. Every function here moves forward
//! through the text only, so a reader that calls them from increasing positions is linear.

use crate::error::{clip, Error, ErrorKind, Span};
use crate::front::IgnoreReason;

use super::reasoning::Marker;
use super::{FormatArgs, FormatCall, FormatReading};
use crate::front::lex;

/// A span from byte offsets (texts over `u32::MAX` bytes are refused before any reading).
pub(super) fn span(start: usize, end: usize) -> Span {
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

/// The reading being built.
#[derive(Default)]
pub(super) struct Out {
    reading: FormatReading,
}

impl Out {
    /// A call read whole.
    pub(super) fn call(
        &mut self,
        name: &str,
        name_span: Option<Span>,
        (start, end): (usize, usize),
        args: FormatArgs,
        id: Option<String>,
    ) {
        self.reading.calls.push(FormatCall {
            name: name.to_string(),
            name_span,
            span: span(start, end),
            args,
            id,
        });
    }

    /// A call that is malformed or cut off: `error` located at `start..end` unless it has a
    /// place already.
    pub(super) fn broken(
        &mut self,
        name: &str,
        name_span: Option<Span>,
        start: usize,
        end: usize,
        error: Error,
    ) {
        let error = error.at(span(start, end));
        self.call(
            name,
            name_span,
            (start, end),
            FormatArgs::Broken(error),
            None,
        );
    }

    /// The last call pushed, taken back.
    pub(super) fn take_last(&mut self) -> Option<FormatCall> {
        self.reading.calls.pop()
    }

    /// A call as it is.
    pub(super) fn push(&mut self, call: FormatCall) {
        self.reading.calls.push(call);
    }

    pub(super) fn markup(&mut self, start: usize, end: usize, reason: IgnoreReason) {
        if start < end {
            self.reading.markup.push((span(start, end), reason));
        }
    }

    pub(super) fn reasoning(&mut self, start: usize, end: usize) {
        self.reading.reasoning.push(span(start, end));
        self.claim(start, end);
    }

    pub(super) fn claim(&mut self, start: usize, end: usize) {
        if start < end {
            self.reading.claimed.push(span(start, end));
        }
    }

    pub(super) fn finish(self) -> FormatReading {
        let mut reading = self.reading;
        reading.claimed.extend(reading.calls.iter().map(|c| c.span));
        reading.claimed.sort_by_key(|s| s.start);
        let mut merged: Vec<Span> = Vec::with_capacity(reading.claimed.len());
        for s in reading.claimed {
            match merged.last_mut() {
                Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
                _ => merged.push(s),
            }
        }
        reading.claimed = merged;
        reading.calls.sort_by_key(|c| c.span.start);
        reading.markup.sort_by_key(|m| m.0.start);
        reading.reasoning.sort_by_key(|s| s.start);
        reading
    }
}

/// The text as a format reader looks for its markers in it: stepping over reasoning and data
/// (strings, comments, a format's quoted values: the front door's lexical reading,
/// [`crate::front::lex`]), so a marker there starts no call. Data and reasoning count where
/// the reader looks for its markup, not inside text it took (a call's own arguments): each
/// search starts afresh where the reader asks, after what it has read.
pub(super) struct Src<'a> {
    pub b: &'a [u8],
    text: &'a str,
    /// Whether data and reasoning are stepped over (false: every byte is searched).
    lexical: bool,
    /// The reasoning markers stepped over.
    markers: Vec<&'static Marker>,
    /// Where a block left open ends (the format's own markup after reasoning).
    ends: &'static [&'static str],
    /// The blocks stepped over, in order.
    think: Vec<Span>,
    /// Where the blocks found so far end: nothing is looked for before it.
    done: usize,
}

impl<'a> Src<'a> {
    /// A text whose reasoning is written with any marker of [`super::reasoning::MARKERS`].
    pub(super) fn new(text: &'a str) -> Src<'a> {
        Src::with(text, &[], &[])
    }

    /// The same, a block left open ending at the first of `ends` (the format's own markup
    /// that its template writes after reasoning).
    pub(super) fn ending_at(text: &'a str, ends: &'static [&'static str]) -> Src<'a> {
        Src::with(text, ends, &[])
    }

    /// The same, but for the markers opening with one of `except` (which the format reads
    /// itself).
    pub(super) fn except(text: &'a str, except: &[&str]) -> Src<'a> {
        Src::with(text, &[], except)
    }

    fn with(text: &'a str, ends: &'static [&'static str], except: &[&str]) -> Src<'a> {
        let markers = lex::markers(except);
        let think: Vec<Span> = lex::opened_by_template(text, 0, text.len(), &markers)
            .into_iter()
            .collect();
        let done = think.last().map_or(0, |s| s.end as usize);
        Src {
            b: text.as_bytes(),
            text,
            lexical: true,
            markers,
            ends,
            think,
            done,
        }
    }

    /// A text read as it is: no reasoning, no data (every byte is searched).
    pub(super) fn plain(text: &'a str) -> Src<'a> {
        Src {
            b: text.as_bytes(),
            text,
            lexical: false,
            markers: Vec::new(),
            ends: &[],
            think: Vec::new(),
            done: 0,
        }
    }

    /// Report the reasoning blocks stepped over (call once the reading is done).
    pub(super) fn report_reasoning(&self, out: &mut Out) {
        for s in &self.think {
            out.reasoning(s.start as usize, s.end as usize);
        }
    }

    /// The first place at or after `from`, outside reasoning and data, where one of
    /// `patterns` starts (which one, by index). Each pattern starts with an ASCII byte.
    pub(super) fn find_any(&mut self, from: usize, patterns: &[&str]) -> Option<(usize, usize)> {
        let mut i = from.max(self.done);
        while i < self.b.len() {
            if self.lexical {
                if let Some(block) = lex::reasoning_at(self.text, i, &self.markers, self.ends) {
                    self.think.push(block);
                    self.done = block.end as usize;
                    i = self.done.max(i + 1);
                    continue;
                }
            }
            if let Some(which) = patterns
                .iter()
                .position(|p| self.b[i..].starts_with(p.as_bytes()))
            {
                return Some((i, which));
            }
            if self.lexical {
                if let Some(end) = lex::data_end(self.b, i) {
                    i = end.max(i + 1);
                    continue;
                }
            }
            i += 1;
        }
        None
    }
}

/// The first `pattern` at or after `from`.
pub(super) fn find(text: &str, from: usize, pattern: &str) -> Option<usize> {
    text.get(from..)?.find(pattern).map(|p| p + from)
}

/// Past the ASCII whitespace at `i`.
pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// `start..end` with the whitespace at both ends taken off.
pub(super) fn trim(b: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    start = skip_ws(b, start).min(end);
    while end > start && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}

/// Each `<function=NAME>` tag: where it starts and where its body does (past the `>`).
pub(super) fn function_tags(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(p) = find(text, from, "<function=") {
            let name = p + "<function=".len();
            from = name;
            if let NameEnd::At(close) = name_end(text.as_bytes(), name, b'>') {
                from = close + 1;
                return Some((p, close + 1));
            }
        }
        None
    })
}

/// Read every section of calls in the text: each opened by one of `opens` and read by
/// [`section`] with `inner` (the calls' `begin` and the section's closing `ends`) and `call`;
/// then the reasoning `src` found is reported. For the formats whose calls stand only inside
/// such sections (DSML, MiniMax-M2, Kimi K3, Step3).
pub(super) fn sections(
    text: &str,
    mut src: Src<'_>,
    opens: &[&str],
    inner: (&str, &[&str]),
    call: fn(&str, usize, &mut Out) -> Option<usize>,
    out: &mut Out,
) {
    let mut pos = 0;
    while let Some((start, which)) = src.find_any(pos, opens) {
        let open = opens.get(which).map_or(0, |o| o.len());
        match section(text, &mut src, (start, start + open), inner, call, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the section of calls whose opening chat token runs from `start` to `token_end` (DeepSeek
/// and Kimi K2 wrap their calls so): calls opened by `begin`, each read by `call`, up to the
/// first of the closing `ends`; stray text between them is prose. The section is claimed;
/// where to go on after it, or `None` when the text ends inside it.
pub(super) fn section(
    text: &str,
    src: &mut Src<'_>,
    (start, token_end): (usize, usize),
    (begin, ends): (&str, &[&str]),
    call: fn(&str, usize, &mut Out) -> Option<usize>,
    out: &mut Out,
) -> Option<usize> {
    out.markup(start, token_end, IgnoreReason::ChatToken);
    let tokens: Vec<&str> = std::iter::once(begin).chain(ends.iter().copied()).collect();
    let mut i = token_end;
    loop {
        i = skip_ws(src.b, i);
        let rest = text.get(i..).unwrap_or_default();
        if let Some(end) = ends.iter().find(|t| rest.starts_with(**t)) {
            out.markup(i, i + end.len(), IgnoreReason::ChatToken);
            out.claim(start, i + end.len());
            return Some(i + end.len());
        }
        if rest.starts_with(begin) {
            match call(text, i, out) {
                Some(end) => i = end,
                None => {
                    out.claim(start, text.len());
                    return None;
                }
            }
            continue;
        }
        if may_continue(text, i, &tokens) {
            out.claim(start, text.len());
            return None;
        }
        // Stray text in the section: reported, up to the next token (one pass for all the
        // tokens, so stray text costs its length once).
        let stop = src.find_any(i, &tokens).map_or(text.len(), |(p, _)| p);
        out.markup(i, stop, IgnoreReason::Prose);
        i = stop;
    }
}

/// A call being read, for recording it broken: the text, the format, the call's name so far
/// (empty until read), where it starts and the tag that closes it.
#[derive(Clone, Copy)]
pub(super) struct Reading<'t> {
    pub text: &'t str,
    pub what: &'static str,
    pub name: &'t str,
    pub name_span: Option<Span>,
    pub start: usize,
    pub closing: &'static str,
}

impl<'t> Reading<'t> {
    /// The call of the format `what` at `start` in `text`, closed by `closing`, its name not
    /// read yet.
    pub(super) fn new(
        text: &'t str,
        what: &'static str,
        start: usize,
        closing: &'static str,
    ) -> Reading<'t> {
        Reading {
            text,
            what,
            name: "",
            name_span: None,
            start,
            closing,
        }
    }

    /// The same call, its name read at `name_start..name_end`.
    pub(super) fn named(self, name_start: usize, name_end: usize) -> Reading<'t> {
        Reading {
            name: self.text.get(name_start..name_end).unwrap_or_default(),
            name_span: Some(span(name_start, name_end)),
            ..self
        }
    }

    /// The text ends inside the call: recorded broken to the end; `None`, nothing more to read.
    pub(super) fn cut(&self, out: &mut Out) -> Option<usize> {
        let error = cut(self.what, self.name, self.closing);
        out.broken(
            self.name,
            self.name_span,
            self.start,
            self.text.len(),
            error,
        );
        None
    }

    /// The call is malformed (`problem`, at `at`): recorded broken up to the first `closing`
    /// at or after `from`, or to the end of the text; where to go on: past that `closing`.
    pub(super) fn malformed(
        &self,
        problem: &str,
        at: Span,
        from: usize,
        out: &mut Out,
    ) -> Option<usize> {
        let error = malformed(self.what, self.name, problem).at(at);
        let end = find(self.text, from, self.closing).map(|p| p + self.closing.len());
        let broken_end = end.unwrap_or(self.text.len());
        out.broken(self.name, self.name_span, self.start, broken_end, error);
        end
    }

    /// The name of a tag such as `<function=NAME>`, from `name_start` to its `>`: `Ok` with the
    /// `>`'s offset; `Err` with where to go on when it is cut off ([`cut`](Reading::cut)), or
    /// missing or holds a blank ([`malformed`](Reading::malformed) as `problem`).
    pub(super) fn tag_name(
        &self,
        name_start: usize,
        problem: &str,
        out: &mut Out,
    ) -> Result<usize, Option<usize>> {
        match name_end(self.text.as_bytes(), name_start, b'>') {
            NameEnd::At(close) if close > name_start => Ok(close),
            NameEnd::Cut => Err(self.cut(out)),
            NameEnd::At(at) | NameEnd::Bad(at) => {
                Err(self.malformed(problem, span(name_start, at + 1), at, out))
            }
        }
    }
}

/// Where a tag's name ends.
pub(super) enum NameEnd {
    /// At the `stop` byte here.
    At(usize),
    /// The text ends first.
    Cut,
    /// A blank, bracket or quote comes first, here.
    Bad(usize),
}

/// The end of a tag's name starting at `i`, at `stop`.
pub(super) fn name_end(b: &[u8], i: usize, stop: u8) -> NameEnd {
    let mut j = i;
    while j < b.len() {
        match b[j] {
            c if c == stop => return NameEnd::At(j),
            b'<' | b'>' | b'{' | b'}' | b'"' | b'\'' => return NameEnd::Bad(j),
            c if c.is_ascii_whitespace() => return NameEnd::Bad(j),
            _ => j += 1,
        }
    }
    NameEnd::Cut
}

/// Whether the text from `i` on is blank, or a cut-off start of one of `tokens`: a stream
/// that may still be writing one of them.
pub(super) fn may_continue(text: &str, i: usize, tokens: &[&str]) -> bool {
    let i = skip_ws(text.as_bytes(), i);
    let rest = text.get(i..).unwrap_or_default();
    rest.is_empty() || tokens.iter().any(|t| t.starts_with(rest))
}

/// The text between `a` and `z` as a string (empty if they are not boundaries).
pub(super) fn slice(text: &str, a: usize, z: usize) -> String {
    text.get(a..z).unwrap_or_default().to_string()
}

/// Past the character at `i` (at `i` at the end of the text).
pub(super) fn char_end(text: &str, i: usize) -> usize {
    text.get(i..)
        .and_then(|rest| rest.chars().next())
        .map_or(i, |c| i + c.len_utf8())
}

/// The error of a call cut off before `closing`.
pub(super) fn cut(what: &str, name: &str, closing: &str) -> Error {
    let call = if name.is_empty() {
        format!("a {what} tool call")
    } else {
        format!("the {what} tool call `{}`", clip(name, 40))
    };
    Error::new(ErrorKind::Syntax, format!("{call} is cut off"))
        .with_hint(format!("the text ends before its closing `{closing}`"))
}

/// A malformed call's error.
pub(super) fn malformed(what: &str, name: &str, problem: &str) -> Error {
    let call = if name.is_empty() {
        format!("a {what} tool call")
    } else {
        format!("the {what} tool call `{}`", clip(name, 40))
    };
    Error::new(ErrorKind::Syntax, format!("{call} is malformed: {problem}"))
}

pub(super) use crate::syntax::lex::{json_end, json_string_end};

/// The end of the JSON value starting at `i` (an object, array, string, or a scalar up to
/// the next `,`, `}`, `]` or blank); `None` if the text ends inside it.
fn json_value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'{' | b'[' => json_end(b, i),
        b'"' => json_string_end(b, i),
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            (j < b.len()).then_some(j)
        }
    }
}

/// A JSON string's value (its quotes at `start` and `end - 1`).
pub(super) fn json_str(text: &str, start: usize, end: usize) -> Option<String> {
    let raw = text.get(start..end)?;
    if !raw.contains('\\') {
        return raw.get(1..raw.len().checked_sub(1)?).map(str::to_string);
    }
    serde_json::from_str(raw).ok()
}

/// One member of a JSON object: its key, and where the key and the value are.
pub(super) struct Member {
    pub key: String,
    pub key_span: (usize, usize),
    pub value: (usize, usize),
}

/// Why an object's members could not all be read.
pub(super) enum Stop {
    /// The text ends inside the object.
    Cut,
    /// Not JSON: the problem and where.
    Bad(String, usize),
}

/// The members of the JSON object opening at `open`, one level deep (values are skipped by
/// bracket matching), and where it ends; on failure the members read before it.
pub(super) fn members(text: &str, open: usize) -> (Vec<Member>, Result<usize, Stop>) {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return (out, Ok(i + 1));
    }
    loop {
        let Some(&c) = b.get(i) else {
            return (out, Err(Stop::Cut));
        };
        if c != b'"' {
            return (out, Err(Stop::Bad("expected a key".into(), i)));
        }
        let Some(key_end) = json_string_end(b, i) else {
            return (out, Err(Stop::Cut));
        };
        let Some(key) = json_str(text, i, key_end) else {
            return (out, Err(Stop::Bad("a key is not a JSON string".into(), i)));
        };
        let colon = skip_ws(b, key_end);
        match b.get(colon) {
            None => return (out, Err(Stop::Cut)),
            Some(b':') => {}
            Some(_) => return (out, Err(Stop::Bad("expected `:`".into(), colon))),
        }
        let value = skip_ws(b, colon + 1);
        if value >= b.len() {
            return (out, Err(Stop::Cut));
        }
        let Some(value_end) = json_value_end(b, value) else {
            return (out, Err(Stop::Cut));
        };
        out.push(Member {
            key,
            key_span: (i, key_end),
            value: (value, value_end),
        });
        let next = skip_ws(b, value_end);
        match b.get(next) {
            None => return (out, Err(Stop::Cut)),
            Some(b',') => i = skip_ws(b, next + 1),
            Some(b'}') => return (out, Ok(next + 1)),
            Some(_) => return (out, Err(Stop::Bad("expected `,` or `}`".into(), next))),
        }
    }
}

/// The keys of a JSON call object: what names the function, what holds its arguments, its
/// id, and other keys it may carry.
pub(super) struct Keys {
    pub name: &'static [&'static str],
    pub args: &'static [&'static str],
    pub id: &'static [&'static str],
    pub other: &'static [&'static str],
}

/// `{"name", "arguments"}` (or `"parameters"`), with an `"id"` and a `"type"` allowed.
pub(super) const CALL_KEYS: Keys = Keys {
    name: &["name"],
    args: &["arguments", "parameters"],
    id: &["id"],
    other: &["type"],
};

/// The name and its span in an object's members, if a complete `"name": "…"` was read.
fn name_of(text: &str, members: &[Member], keys: &Keys) -> (String, Option<Span>) {
    members
        .iter()
        .find(|m| keys.name.contains(&m.key.as_str()))
        .and_then(|m| {
            let (a, z) = m.value;
            let name = (text.as_bytes().get(a) == Some(&b'"'))
                .then(|| json_str(text, a, z))
                .flatten()?;
            Some((name, Some(span(a, z))))
        })
        .unwrap_or_default()
}

/// Read the JSON call object `{"name", "arguments"}` opening at `open` (`"parameters"` for
/// the arguments too; `"id"` kept, `"type"` allowed); the end of the object, or `None` when
/// the text ends inside it (a broken call is pushed either way when it is not a call).
pub(super) fn json_call(text: &str, open: usize, what: &str, out: &mut Out) -> Option<usize> {
    json_call_with(&CALL_KEYS, text, open, what, out)
}

/// [`json_call`] with the call object's `keys`.
///
/// Long (about 90 lines) for a reason: one pass over the object's members, whose checks
/// (unknown, repeated, the name, the arguments' form) each end in the same broken call.
pub(super) fn json_call_with(
    keys: &Keys,
    text: &str,
    open: usize,
    what: &str,
    out: &mut Out,
) -> Option<usize> {
    let (members, end) = members(text, open);
    let (name, name_span) = name_of(text, &members, keys);
    let end = match end {
        Ok(end) => end,
        Err(Stop::Cut) => {
            out.broken(&name, name_span, open, text.len(), cut(what, &name, "}"));
            return None;
        }
        Err(Stop::Bad(problem, at)) => {
            // Not JSON: the whole bracketed stretch is the broken call.
            let end = json_end(text.as_bytes(), open);
            let stop = end.unwrap_or(text.len());
            let error = malformed(what, &name, &format!("not a JSON object: {problem}"))
                .at(span(at, char_end(text, at).min(stop).max(at)));
            out.broken(&name, name_span, open, stop, error);
            return end;
        }
    };
    let mut args = None;
    let mut id = None;
    let mut seen: Vec<&str> = Vec::new();
    let mut problem = None;
    for m in &members {
        let key = m.key.as_str();
        let known = keys.name.contains(&key)
            || keys.args.contains(&key)
            || keys.id.contains(&key)
            || keys.other.contains(&key);
        if !known {
            problem = Some((format!("unexpected key `{}`", clip(key, 40)), m.key_span));
            break;
        }
        if let Some(before) = seen
            .iter()
            .find(|k| **k == key || (keys.args.contains(k) && keys.args.contains(&key)))
        {
            problem = Some((
                format!("`{before}` and `{}` both given", clip(key, 40)),
                m.key_span,
            ));
            break;
        }
        seen.push(key);
        if keys.args.contains(&key) {
            args = Some(m.value);
        } else if keys.id.contains(&key) {
            id = Some(m.value);
        }
    }
    if problem.is_none() && name.is_empty() {
        let key = keys.name.first().copied().unwrap_or("name");
        problem = Some((format!("no `\"{key}\"` string"), (open, end)));
    }
    if let Some((problem, (a, z))) = problem {
        out.broken(
            &name,
            name_span,
            open,
            end,
            malformed(what, &name, &problem).at(span(a, z)),
        );
        return Some(end);
    }
    let id = id.and_then(|(a, z)| match text.as_bytes().get(a) {
        Some(b'"') => json_str(text, a, z),
        _ => text.get(a..z).map(str::to_string),
    });
    let args = match args {
        None => FormatArgs::Text(Vec::new()),
        Some((a, z)) => match text.as_bytes().get(a) {
            Some(b'{' | b'"') => FormatArgs::Json(span(a, z)),
            _ if text.get(a..z) == Some("null") => FormatArgs::Text(Vec::new()),
            _ => {
                let error =
                    malformed(what, &name, "its arguments are not a JSON object").at(span(a, z));
                out.broken(&name, name_span, open, end, error);
                return Some(end);
            }
        },
    };
    out.call(&name, name_span, (open, end), args, id);
    Some(end)
}

/// Read the JSON list of call objects opening at `open`, each item its own call (an item that
/// is not an object is a broken call); the end of the list, or `None` when the text ends
/// inside it (a broken call is pushed for the cut-off item; a list the text ends in after a
/// whole item holds nothing cut off).
pub(super) fn json_call_list(text: &str, open: usize, what: &str, out: &mut Out) -> Option<usize> {
    json_call_list_with(&CALL_KEYS, text, open, what, out)
}

/// [`json_call_list`] with the call objects' `keys`.
pub(super) fn json_call_list_with(
    keys: &Keys,
    text: &str,
    open: usize,
    what: &str,
    out: &mut Out,
) -> Option<usize> {
    json_list(text, open, what, out, |text, i, out| {
        json_call_with(keys, text, i, what, out)
    })
}

/// [`json_call_list`] with each call object (its `{` at `i`) read by `call`, which pushes it
/// and says where it ends (`None`: the text ends inside it).
pub(super) fn json_list(
    text: &str,
    open: usize,
    what: &str,
    out: &mut Out,
    mut call: impl FnMut(&str, usize, &mut Out) -> Option<usize>,
) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        let Some(&c) = b.get(i) else {
            out.broken("", None, i.min(text.len()), text.len(), cut(what, "", "]"));
            return None;
        };
        let item_end = if c == b'{' {
            call(text, i, out)?
        } else {
            let Some(end) = json_value_end(b, i) else {
                out.broken("", None, i, text.len(), cut(what, "", "]"));
                return None;
            };
            let end = end.max(i + 1);
            let error = malformed(what, "", "an item of the list of calls is not an object");
            out.broken("", None, i, end, error);
            end
        };
        let next = skip_ws(b, item_end);
        match b.get(next) {
            // The text ends after a whole item: nothing is cut off.
            None => return None,
            Some(b',') => i = skip_ws(b, next + 1),
            Some(b']') => return Some(next + 1),
            Some(_) => {
                let end = json_end(b, open).unwrap_or(text.len());
                let error = malformed(what, "", "expected `,` or `]` after a call")
                    .at(span(next, char_end(text, next)));
                out.broken("", None, next, end.max(char_end(text, next)), error);
                return json_end(b, open);
            }
        }
    }
}

/// The end (exclusive) of the Python bracket group opening at `open`, strings and comments
/// skipped; `None` if the text ends first.
pub(super) fn python_group_end(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'\'' | b'"' => {
                i = python_string_end(b, i)?;
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
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

/// Past the Python string literal whose quote is at `i` (single or triple quoted); at the
/// newline ending an unterminated one-line string (the Python reader reports it); `None` when
/// the text ends inside it.
fn python_string_end(b: &[u8], i: usize) -> Option<usize> {
    let (end, closed) = crate::syntax::lex::string_end(b, i);
    (closed || end < b.len()).then_some(end)
}

pub(super) use crate::syntax::lex::dotted_ident_end as ident_end;

/// A Python call at `i`: `name(…)`.
pub(super) enum PyCall {
    /// Not a name followed by `(`.
    NotACall,
    /// The name ends at `.0`; the text ends inside the arguments.
    Cut(usize),
    /// The name ends at `.0`, the call at `.1`.
    Call(usize, usize),
}

pub(super) fn python_call(b: &[u8], i: usize) -> PyCall {
    let name_end = ident_end(b, i);
    if name_end == i
        || (i > 0
            && b.get(i - 1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_'))
    {
        return PyCall::NotACall;
    }
    match b.get(name_end) {
        Some(b'(') => match python_group_end(b, name_end) {
            Some(end) => PyCall::Call(name_end, end),
            None => PyCall::Cut(name_end),
        },
        None => PyCall::Cut(name_end),
        Some(_) => PyCall::NotACall,
    }
}

/// The end of the Python item at `i` in a list or argument list: the next `,` or closing
/// bracket at its level; `None` if the text ends first.
pub(super) fn python_item_end(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b',' | b')' | b']' | b'}' => return Some(i),
            b'(' | b'[' | b'{' => i = python_group_end(b, i)?,
            b'\'' | b'"' => i = python_string_end(b, i)?,
            _ => i += 1,
        }
    }
    None
}

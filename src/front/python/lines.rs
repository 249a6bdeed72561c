//! The pieces of Python-like text the unit reader ([`super`]) classifies by: where a string or
//! a name ends, whether a line is a label, a compound statement's header or other code, what a
//! line of code is (for its rejected item's message), and the calls a parsed line holds.

use super::COMPOUND;
use crate::error::{Error, ErrorKind, Span};
use crate::front::{
    dotted_ident_end, is_ident_start, json_input, shift_back, span, FoundCall, Origin,
};
use crate::syntax::{Expr, ExprKind};

/// How to write calls so they run: the hint of every rejected item.
pub(super) const HINT: &str = "write only the calls to run — each on its own line, or a list `[tool(a=1), other(b=2)]` — with no other code or text around them";

/// The call `item` of the line `source` (at `p`), with its own source and spans.
pub(super) fn found_call(mut item: Expr, p: usize, source: &str) -> FoundCall {
    let name = match &item.kind {
        ExprKind::Call(call) => call.func.clone(),
        _ => String::new(),
    };
    let (a, b) = (item.span.start as usize, item.span.end as usize);
    let base = item.span.start;
    if base != 0 {
        json_input::map_spans(&mut item, &|s| shift_back(s, base));
    }
    FoundCall {
        name,
        span: span(p + a, p + b),
        origin: Origin::Python,
        source: source.get(a..b).unwrap_or_default().to_string(),
        parsed: Ok(item),
        id: None,
    }
}

/// The error of a unit that is code around calls: `what` it is, and that nothing ran.
pub(super) fn code_error(what: &str, kind: ErrorKind, at: Span) -> Error {
    let kind = if kind == ErrorKind::Limit {
        ErrorKind::Limit
    } else {
        ErrorKind::Unsupported
    };
    Error::new(
        kind,
        format!("{what}: only calls run, and this text is other code, so nothing in it ran"),
    )
    .at(at)
    .with_hint(HINT)
}

/// The end of `text[p..lend]` without trailing blanks.
pub(super) fn trimmed_end(text: &str, p: usize, lend: usize) -> usize {
    p + text.get(p..lend).map_or(0, |s| s.trim_end().len())
}

/// Whether the byte before a name continues a longer name (`xadd(`, `é` in `éadd(`, `a.add(`).
pub(super) fn continues_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c >= 0x80
}

/// Past the string literal starting at `i` (single, or triple quoted), at most `end`. A
/// one-line string not closed on its line stops at the line's end.
pub(super) fn skip_string(b: &[u8], i: usize, end: usize) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < end {
        match b[j] {
            b'\\' => j += 2,
            c if c == q => {
                if !triple {
                    return j + 1;
                }
                if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                    return j + 3;
                }
                j += 1;
            }
            b'\n' if !triple => return j,
            _ => j += 1,
        }
    }
    end
}

/// Whether the string starting at `i` closes before `end`.
pub(super) fn string_closed(b: &[u8], i: usize, end: usize) -> bool {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    if !triple {
        return true;
    }
    let close = skip_string(b, i, end);
    close >= i + 6
        && b.get(close - 3..close)
            .is_some_and(|t| t.iter().all(|c| *c == q))
}

/// Whether a line starts like code, so brackets may carry it over several lines: a bracket, a
/// quote, a decorator, or a (dotted) name followed at once by `(`, `[`, `=`, `.` or `:`, or a
/// keyword.
pub(super) fn starts_code(line: &str) -> bool {
    let b = line.as_bytes();
    match b.first() {
        Some(b'[' | b'(' | b'{' | b'@' | b'"' | b'\'') => return true,
        Some(c) if is_ident_start(*c) => {}
        _ => return false,
    }
    let name_end = dotted_ident_end(b, 0);
    let word = &line[..name_end];
    if crate::syntax::PYTHON_KEYWORDS.contains(&word) {
        return true;
    }
    let rest = line[name_end..].trim_start();
    matches!(b.get(name_end), Some(b'(' | b'[' | b'.' | b':'))
        || (rest.starts_with('=') && !rest.starts_with("=="))
}

/// The name of the call `source` tries to be: it starts with a (dotted) name and `(`, or a
/// bracket and such a call, and its first bracket group runs to its end (or is cut off).
pub(super) fn call_attempt(source: &str, unclosed: bool) -> Option<String> {
    let b = source.as_bytes();
    let mut i = 0;
    while matches!(b.get(i), Some(b'[' | b'(')) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
    }
    if !b.get(i).is_some_and(|c| is_ident_start(*c)) {
        return None;
    }
    let name_end = dotted_ident_end(b, i);
    if b.get(name_end) != Some(&b'(') {
        return None;
    }
    let name = &source[i..name_end];
    if crate::syntax::PYTHON_KEYWORDS.contains(&name) {
        return None;
    }
    if unclosed {
        // A cut-off list is named after its cut-off item, the last one (`[add(a=1), mul(a=`
        // is `mul` cut off), when that item is a call.
        let last = if i > 0 { last_item(source, i) } else { None };
        return Some(last.unwrap_or(name).to_string());
    }
    // The first group must close at the end (a trailing comment or separator aside).
    let mut depth = 0usize;
    let mut j = 0;
    while j < b.len() {
        match b[j] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let rest = source[j + 1..].trim_start();
                    let rest = rest.trim_start_matches([',', ';']).trim();
                    return (rest.is_empty() || rest.starts_with('#')).then(|| name.to_string());
                }
            }
            b'\'' | b'"' => {
                j = skip_string(b, j, b.len());
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    Some(name.to_string())
}

/// The name of the call that starts the last item of the list opened before `first` (its
/// first item) in the cut-off `source`: the name after the list's last top-level comma.
fn last_item(source: &str, first: usize) -> Option<&str> {
    let b = source.as_bytes();
    // The list's own level: the brackets opened before its first item.
    let level = b
        .get(..first)?
        .iter()
        .filter(|c| matches!(c, b'[' | b'('))
        .count();
    let (mut depth, mut after_comma, mut j) = (level, None, first);
    while j < b.len() {
        match b[j] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == level => after_comma = Some(j + 1),
            b'\'' | b'"' => {
                j = skip_string(b, j, b.len());
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    let rest = source.get(after_comma?..)?;
    let at = after_comma? + (rest.len() - rest.trim_start().len());
    let end = dotted_ident_end(b, at);
    let name = source.get(at..end)?;
    (end > at && b.get(end) == Some(&b'(') && !crate::syntax::PYTHON_KEYWORDS.contains(&name))
        .then_some(name)
}

/// The statements of `source` when it holds a `;` outside brackets, strings and comments:
/// each one's range. `None` without one.
pub(super) fn statements(source: &str) -> Option<Vec<(usize, usize)>> {
    let b = source.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut from, mut i) = (0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\'' | b'"' => {
                i = skip_string(b, i, b.len());
                continue;
            }
            b'#' => break,
            b';' if depth == 0 => {
                out.push((from, i));
                from = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if out.is_empty() {
        return None;
    }
    out.push((from, b.len()));
    Some(out)
}

/// Whether `source` is a label before text (`Answer: add(a=1)`, `Note: …`): a word and a
/// colon, which Python reads as an annotation.
pub(super) fn is_label(source: &str) -> bool {
    let b = source.as_bytes();
    let name_end = dotted_ident_end(b, 0);
    name_end > 0
        && !crate::syntax::PYTHON_KEYWORDS.contains(&&source[..name_end])
        && source[name_end..].trim_start().starts_with(':')
}

/// Whether `source` holds two words side by side outside strings (`We did`, `it is done`
/// has `it is`, but `We did` first): Python never writes two names (nor a name and a soft
/// keyword) with only blanks between them, so such a line is a sentence, whatever an
/// expression's scan would say of its depth. Keywords and numbers are not words here.
pub(super) fn has_adjacent_words(source: &str) -> bool {
    let b = source.as_bytes();
    let mut i = 0;
    // Whether the last token was a word (a name that is not a keyword).
    let mut after_word = false;
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' {
            i += 1;
            continue;
        }
        if c == b'"' || c == b'\'' {
            i = skip_string(b, i, b.len());
            after_word = false;
            continue;
        }
        if is_ident_start(c) {
            let mut end = i;
            while b.get(end).is_some_and(|c| continues_name(*c) && *c != b'.') {
                end += 1;
            }
            // A string prefix (`b'x'`, `rb"…"`) starts a string, not a word.
            if matches!(b.get(end), Some(b'"' | b'\'')) {
                after_word = false;
                i = end;
                continue;
            }
            let word = source.get(i..end).unwrap_or_default();
            let is_word = !crate::syntax::PYTHON_KEYWORDS.contains(&word)
                && !matches!(word, "match" | "case" | "type" | "_");
            if is_word && after_word {
                return true;
            }
            after_word = is_word;
            i = end.max(i + 1);
            continue;
        }
        after_word = false;
        i += 1;
    }
    false
}

/// Whether `source` is a compound statement's header: a keyword, and `:` at its end.
pub(super) fn is_header(source: &str) -> bool {
    let code = source.split('#').next().unwrap_or_default().trim_end();
    let word_end = dotted_ident_end(source.as_bytes(), 0);
    COMPOUND.contains(&&source[..word_end]) && code.ends_with(':')
}

/// What a statement is, named by its first keyword (`an `if` statement`) or its shape.
pub(super) fn what_is(source: &str) -> Option<String> {
    let word_end = dotted_ident_end(source.as_bytes(), 0);
    let word = &source[..word_end];
    let what = match word {
        "def" => Some("a function definition (`def`)".to_string()),
        "class" => Some("a class definition (`class`)".to_string()),
        "lambda" => Some("a `lambda`".to_string()),
        "await" => Some("an `await` expression".to_string()),
        "if" | "elif" | "else" | "for" | "while" | "try" | "except" | "finally" | "with"
        | "import" | "from" | "return" | "raise" | "assert" | "del" | "global" | "nonlocal"
        | "pass" | "break" | "continue" | "async" | "match" | "yield" => {
            let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            Some(format!("{article} `{word}` statement"))
        }
        _ => None,
    };
    if what.is_some() {
        return what;
    }
    let code = source.split('#').next().unwrap_or_default();
    if code.contains(';') {
        return Some("several statements (`;`)".into());
    }
    let rest = source[word_end..].trim_start();
    if word_end > 0 && (rest.starts_with('=') && !rest.starts_with("==") || rest.starts_with(":="))
    {
        return Some("an assignment".into());
    }
    None
}

/// What a parsed expression that is not calls is.
pub(super) fn describe(expr: &Expr) -> &'static str {
    match expr.kind {
        ExprKind::Binary(..) => "an operation on calls (`+`, `*`, …)",
        ExprKind::Unary(..) => "an operator before a call (`-`, `not`)",
        ExprKind::List(_) | ExprKind::Tuple(_) => "a list that is not only calls",
        ExprKind::Set(_) => "a set",
        ExprKind::Dict(_) => "a dict",
        ExprKind::Str(_) | ExprKind::Bytes(_) => "a string",
        _ => "an expression that is not a call",
    }
}

/// Whether `expr` is calls as an expression statement: a call, or a non-empty list or tuple of
/// calls.
pub(super) fn is_calls(expr: &Expr) -> bool {
    let is_call = |e: &Expr| matches!(e.kind, ExprKind::Call(_));
    match &expr.kind {
        ExprKind::Call(_) => true,
        ExprKind::List(items) | ExprKind::Tuple(items) => {
            !items.is_empty() && items.iter().all(is_call)
        }
        _ => false,
    }
}

/// Whether `expr` holds a call anywhere.
pub(super) fn has_call(expr: &Expr) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if matches!(e.kind, ExprKind::Call(_)) {
            return true;
        }
        stack.extend(e.children());
    }
    false
}

/// The calls inside `print(...)` when its one argument is a call to a tool or a list of them.
pub(super) fn printed_calls<'e>(
    print: &'e crate::syntax::Call,
    is_tool: &dyn Fn(&str) -> bool,
) -> Option<Vec<&'e Expr>> {
    if print.func != "print" || !print.kwargs.is_empty() {
        return None;
    }
    let [arg] = print.args.as_slice() else {
        return None;
    };
    let tool_call = |e: &Expr| matches!(&e.kind, ExprKind::Call(c) if is_tool(&c.func));
    match &arg.kind {
        ExprKind::List(items) | ExprKind::Tuple(items)
            if !items.is_empty() && items.iter().all(tool_call) =>
        {
            Some(items.iter().collect())
        }
        _ if tool_call(arg) => Some(vec![arg]),
        _ => None,
    }
}

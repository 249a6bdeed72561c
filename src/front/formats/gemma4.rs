//! Gemma 4 and FunctionGemma: `call:NAME{…}` between special tokens, the arguments in Google's
//! own notation (keys bare, strings between delimiter tokens), as their chat templates write
//! them and vLLM's `gemma4` and `functiongemma` parsers read them:
//!
//! ```text
//! <|tool_call>call:get_weather{location:<|"|>Paris, France<|"|>,days:3}<tool_call|>
//! <start_function_call>call:get_weather{location:<escape>Paris<escape>}<end_function_call>
//! ```
//!
//! A string is the text between its delimiters, as written: Gemma 4's is that string whatever
//! its parameter's type (vLLM's `gemma4` parser keeps it a string), FunctionGemma's is read by
//! the parameter's type (its parser tries JSON first); a bare value (`42`, `true`) is read by
//! the parameter's type; a nested object or list (`{k:<|"|>v<|"|>}`, `[1,2]`) is handed on as
//! the JSON it stands for. A call is complete
//! at the `}` that closes its arguments (Gemma 4 may close it with `<turn|>`, or the text may
//! end). Gemma 4's thought channel (`<|channel>thought…<channel|>`) is reasoning.

use super::scan::{char_end, find, malformed, may_continue, skip_ws, span, Out, Reading, Src};
use super::{FormatArgs, ModelFormat, Spec, TextArg};
use crate::front::IgnoreReason;

pub(super) const SPEC: Spec = Spec {
    format: ModelFormat::Gemma4,
    name: "gemma4",
    marker_starts: &[b"<|"],
    found_by_markers: true,
    holds_markers: |text| text.contains(GEMMA4.open),
    read: |text, out| read_as(&GEMMA4, text, out),
};

pub(super) const FUNCTION_GEMMA: Spec = Spec {
    format: ModelFormat::FunctionGemma,
    name: "functiongemma",
    marker_starts: &[b"<s"],
    found_by_markers: true,
    holds_markers: |text| text.contains(FUNCTION.open),
    read: |text, out| read_as(&FUNCTION, text, out),
};

/// One of the two notations.
struct Notation {
    what: &'static str,
    open: &'static str,
    /// What may close a call, after its arguments.
    closes: &'static [&'static str],
    /// What a string is written between.
    delim: &'static str,
    /// Whether a value between delimiters is a string whatever its parameter's type.
    quoted: bool,
}

const GEMMA4: Notation = Notation {
    what: "Gemma 4",
    open: "<|tool_call>",
    closes: &["<tool_call|>", "<turn|>"],
    delim: "<|\"|>",
    quoted: true,
};

const FUNCTION: Notation = Notation {
    what: "FunctionGemma",
    open: "<start_function_call>",
    closes: &["<end_function_call>"],
    delim: "<escape>",
    quoted: false,
};

const CALL: &str = "call:";

fn read_as(n: &Notation, text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while let Some((start, _)) = src.find_any(pos, &[n.open]) {
        match call(n, text, start, out) {
            Some(end) => pos = end,
            None => break,
        }
    }
    src.report_reasoning(out);
}

/// Read the call whose opening token is at `start`; where to go on, or `None` when the text
/// ends inside it.
fn call(n: &Notation, text: &str, start: usize, out: &mut Out) -> Option<usize> {
    let b = text.as_bytes();
    let call = Reading::new(text, n.what, start, "}");
    let mut i = skip_ws(b, start + n.open.len());
    // A stray colon before `call:` (vLLM's fallback reads it).
    if text[i..].starts_with(":call:") {
        i += 1;
    }
    if !text[i..].starts_with(CALL) {
        if may_continue(text, i, &[CALL, ":call:"]) {
            return call.cut(out);
        }
        let problem = "expected `call:NAME{…}`";
        return malformed_to_close(n, &call, problem, i, out);
    }
    let name_start = i + CALL.len();
    let mut name_end = name_start;
    while b
        .get(name_end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
    {
        name_end += 1;
    }
    if name_end >= text.len() {
        return call.cut(out);
    }
    let call = call.named(name_start, name_end);
    if call.name.is_empty() || b[name_end] != b'{' {
        let problem = "expected the function's name and then `{`";
        return malformed_to_close(n, &call, problem, name_end, out);
    }
    let args = match arguments(n, text, name_end) {
        Ok(args) => args,
        Err(Stop::Cut) => return call.cut(out),
        Err(Stop::Bad(problem, at)) => return malformed_to_close(n, &call, &problem, at, out),
    };
    let end = args.end;
    out.call(
        call.name,
        call.name_span,
        (start, end),
        FormatArgs::Text(args.args),
        None,
    );
    let k = skip_ws(b, end);
    if let Some(close) = n.closes.iter().find(|c| text[k..].starts_with(**c)) {
        out.markup(k, k + close.len(), IgnoreReason::ChatToken);
        out.claim(start, k + close.len());
        return Some(k + close.len());
    }
    Some(end)
}

/// The call is malformed (`problem`, at `at`): broken up to its closing token, or the text's
/// end.
fn malformed_to_close(
    n: &Notation,
    call: &Reading<'_>,
    problem: &str,
    at: usize,
    out: &mut Out,
) -> Option<usize> {
    let text = call.text;
    let error = malformed(n.what, call.name, problem).at(span(at, char_end(text, at)));
    let end = n
        .closes
        .iter()
        .filter_map(|c| find(text, at, c).map(|p| p + c.len()))
        .min();
    out.broken(
        call.name,
        call.name_span,
        call.start,
        end.unwrap_or(text.len()),
        error,
    );
    end
}

/// Why arguments could not be read.
enum Stop {
    /// The text ends inside them.
    Cut,
    /// Not the notation: the problem, and where.
    Bad(String, usize),
}

/// The arguments read, and where their `}` ends.
struct Args {
    args: Vec<TextArg>,
    end: usize,
}

/// The arguments whose `{` is at `open`: `key:value` items, separated by `,` or blanks.
fn arguments(n: &Notation, text: &str, open: usize) -> Result<Args, Stop> {
    let b = text.as_bytes();
    let mut args: Vec<TextArg> = Vec::new();
    let mut i = open + 1;
    loop {
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b',')
        {
            i += 1;
        }
        match b.get(i) {
            None => return Err(Stop::Cut),
            Some(b'}') => {
                return Ok(Args { args, end: i + 1 });
            }
            Some(_) => {}
        }
        let (ka, kz, colon) = key(n, text, i)?;
        let key = &text[ka..kz];
        if key.is_empty() {
            return Err(Stop::Bad("an argument has no name".into(), ka));
        }
        if args.iter().any(|a| a.key == key) {
            return Err(Stop::Bad(format!("argument `{key}` is given twice"), ka));
        }
        let v = skip_ws(b, colon + 1);
        // Gemma 4's string is that string, whatever the parameter's type (FunctionGemma's
        // `<escape>` value is read by it, as vLLM's parser reads it as JSON first).
        let quoted = n.quoted && text[v..].starts_with(n.delim);
        let (value, (va, vz), next) = value(n, text, v)?;
        args.push(TextArg {
            key: key.to_string(),
            key_span: span(ka, kz),
            value,
            value_span: span(va, vz),
            quoted,
        });
        i = next;
    }
}

/// A key at `i`: bare up to its `:`, or between delimiters; its stretch and the `:`.
fn key(n: &Notation, text: &str, i: usize) -> Result<(usize, usize, usize), Stop> {
    let b = text.as_bytes();
    let (ka, kz, after) = if text[i..].starts_with(n.delim) {
        let a = i + n.delim.len();
        let z = find(text, a, n.delim).ok_or(Stop::Cut)?;
        (a, z, z + n.delim.len())
    } else {
        let mut z = i;
        while z < b.len() && !matches!(b[z], b':' | b'{' | b'}' | b'[' | b']' | b',' | b'<') {
            z += 1;
        }
        let (a, t) = super::scan::trim(b, i, z);
        (a, t, z)
    };
    let colon = skip_ws(b, after);
    match b.get(colon) {
        Some(b':') => Ok((ka, kz, colon)),
        None => Err(Stop::Cut),
        Some(_) if may_continue(text, colon, &[n.delim]) => Err(Stop::Cut),
        Some(_) => Err(Stop::Bad(
            "expected `:` after an argument's name".into(),
            colon,
        )),
    }
}

/// A value at `i`: the text it stands for, where it is, and where to go on.
fn value(n: &Notation, text: &str, i: usize) -> Result<(String, (usize, usize), usize), Stop> {
    let b = text.as_bytes();
    if text[i..].starts_with(n.delim) {
        let a = i + n.delim.len();
        let z = find(text, a, n.delim).ok_or(Stop::Cut)?;
        return Ok((text[a..z].to_string(), (a, z), z + n.delim.len()));
    }
    match b.get(i) {
        None => Err(Stop::Cut),
        Some(b'{' | b'[') => {
            let end = group_end(n, text, i)?;
            match nested_json(n, &text[i..end]) {
                Some(json) => Ok((json, (i, end), end)),
                None => Err(Stop::Bad("a nested value is malformed".into(), i)),
            }
        }
        Some(_) => {
            let mut z = i;
            while z < b.len() && !matches!(b[z], b',' | b'}') {
                if text[z..].starts_with(n.delim) {
                    return Err(Stop::Bad("a string inside a bare value".into(), z));
                }
                z += 1;
            }
            if z >= b.len() {
                return Err(Stop::Cut);
            }
            let (a, t) = super::scan::trim(b, i, z);
            Ok((text[a..t].to_string(), (a, t), z))
        }
    }
}

/// The end of the object or list opening at `open`, strings between delimiters skipped.
fn group_end(n: &Notation, text: &str, open: usize) -> Result<usize, Stop> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        if text[i..].starts_with(n.delim) {
            let close = find(text, i + n.delim.len(), n.delim).ok_or(Stop::Cut)?;
            i = close + n.delim.len();
            continue;
        }
        match b[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(Stop::Cut)
}

/// The JSON a nested object or list in the notation stands for (`None` if it is malformed):
/// bare keys and strings quoted, bare scalars kept when JSON reads them (`42`, `true`,
/// `null`), else quoted. One pass with a stack of the open brackets: no recursion.
fn nested_json(n: &Notation, raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len() + 8);
    let mut stack: Vec<u8> = Vec::new();
    // The next item is its container's first; a key is wanted (in an object, at an item).
    let mut first = true;
    let mut want_key = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
            continue;
        }
        if matches!(c, b'}' | b']') {
            let open = stack.pop()?;
            if (open == b'{') != (c == b'}') || (open == b'{' && !want_key) {
                return None;
            }
            out.push(char::from(c));
            i += 1;
            if stack.is_empty() {
                return raw[i..].trim().is_empty().then_some(out);
            }
            first = false;
            want_key = stack.last() == Some(&b'{');
            continue;
        }
        if !first && (want_key || stack.last() == Some(&b'[')) {
            out.push(',');
        }
        if want_key {
            let (key, after) = if raw[i..].starts_with(n.delim) {
                let a = i + n.delim.len();
                let z = find(raw, a, n.delim)?;
                (&raw[a..z], z + n.delim.len())
            } else {
                let z = raw[i..].find(':').map(|p| i + p)?;
                (raw[i..z].trim(), z)
            };
            let colon = skip_ws(b, after);
            if b.get(colon) != Some(&b':') || key.is_empty() {
                return None;
            }
            out.push_str(&serde_json::Value::from(key).to_string());
            out.push(':');
            i = colon + 1;
            want_key = false;
            first = false;
            continue;
        }
        if matches!(c, b'{' | b'[') {
            out.push(char::from(c));
            stack.push(c);
            first = true;
            want_key = c == b'{';
            i += 1;
            continue;
        }
        if stack.is_empty() {
            return None;
        }
        if raw[i..].starts_with(n.delim) {
            let a = i + n.delim.len();
            let z = find(raw, a, n.delim)?;
            out.push_str(&serde_json::Value::from(&raw[a..z]).to_string());
            i = z + n.delim.len();
        } else {
            let z = raw[i..].find([',', '}', ']']).map_or(raw.len(), |p| i + p);
            let scalar = raw[i..z].trim();
            let json = serde_json::from_str::<serde_json::Value>(scalar)
                .ok()
                .filter(|v| !(v.is_object() || v.is_array() || v.is_string()));
            match json {
                Some(_) => out.push_str(scalar),
                None => out.push_str(&serde_json::Value::from(scalar).to_string()),
            }
            i = z;
        }
        first = false;
        want_key = stack.last() == Some(&b'{');
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args_text, is_broken, names, read_as};
    use super::super::{FormatArgs, ModelFormat};

    const G: ModelFormat = ModelFormat::Gemma4;
    const F: ModelFormat = ModelFormat::FunctionGemma;

    /// The key/value pairs of a call, nested values as their JSON.
    fn pairs(call: &super::super::FormatCall) -> Vec<(String, String)> {
        let FormatArgs::Text(args) = &call.args else {
            panic!("{call:?}");
        };
        args.iter()
            .map(|a| (a.key.clone(), a.value.clone()))
            .collect()
    }

    #[test]
    fn vllm_gemma4_calls() {
        // vLLM's tests/tool_parsers/test_gemma4_tool_parser.py.
        let text = "<|tool_call>call:get_weather{location:<|\"|>London<|\"|>}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(args_text(&r.calls[0], text), [("location", "London")]);
        let text = "Let me check the weather for you. <|tool_call>call:get_weather{location:<|\"|>San Francisco<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("location", "San Francisco"), ("unit", "celsius")]
        );
        let text = "<|tool_call>call:get_weather{location:<|\"|>London<|\"|>}<tool_call|><|tool_call>call:get_time{location:<|\"|>London<|\"|>}<tool_call|>";
        assert_eq!(names(&read_as(G, text)), ["get_weather", "get_time"]);
        let text = "<|tool_call>call:complex_function{nested:{inner:<|\"|>value<|\"|>},list:[<|\"|>a<|\"|>,<|\"|>b<|\"|>]}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            pairs(&r.calls[0]),
            [
                ("nested".into(), "{\"inner\":\"value\"}".into()),
                ("list".into(), "[\"a\",\"b\"]".into())
            ]
        );
        let text = "<|tool_call>call:set_status{is_active:true,count:42,score:3.14}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("is_active", "true"), ("count", "42"), ("score", "3.14")]
        );
        for (text, name) in [
            (
                "<|tool_call>call:get-weather{location:<|\"|>London<|\"|>}<tool_call|>",
                "get-weather",
            ),
            (
                "<|tool_call>call:weather.get{location:<|\"|>London<|\"|>}<tool_call|>",
                "weather.get",
            ),
            ("<|tool_call>call:get_status{}<tool_call|>", "get_status"),
        ] {
            assert_eq!(names(&read_as(G, text)), [name]);
        }
        // Cut off: the name is kept, nothing runs.
        let r = read_as(G, "<|tool_call>call:get_weather{location:<|\"|>London");
        assert_eq!(names(&r), ["get_weather"]);
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn vllm_gemma4_variants_and_reasoning() {
        // vLLM's tests/tool_parsers/test_gemma4_regex_and_bare_calls.py.
        let text = "<|tool_call>call:gdb{args:<|\"|>-batch -ex run /tmp/poc<|\"|>}<turn|>";
        assert_eq!(names(&read_as(G, text)), ["gdb"]);
        let text = "<|tool_call>:call:bash{command:<|\"|>pytest<|\"|>}";
        assert_eq!(names(&read_as(G, text)), ["bash"]);
        let text = "<|tool_call>call:read_file{path:<|\"|>/work/Makefile<|\"|>}<tool_call|>\n<|tool_call>call:bash{command:<|\"|>make -j8<|\"|>}<tool_call|>";
        assert_eq!(names(&read_as(G, text)), ["read_file", "bash"]);
        let text = "<|channel>thought\nI could <|tool_call>call:bash{command:<|\"|>rm<|\"|>}<tool_call|>\n<channel|>Nothing to run.";
        let r = read_as(G, text);
        assert!(r.calls.is_empty());
        assert_eq!(r.reasoning.len(), 1);
    }

    #[test]
    fn transformers_fixtures() {
        // Gemma 4's own outputs, as transformers' response templates read them.
        let text = "<|channel>thought\nThe user is asking for the temperature.<channel|><|tool_call>call:get_current_temperature{detail_level:0,location:<|\"|>Paris, France<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|><|tool_response>";
        let r = read_as(G, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [
                ("detail_level", "0"),
                ("location", "Paris, France"),
                ("unit", "celsius")
            ]
        );
        let text = "<|channel>thought\nLet me call the tool.<channel|><|tool_call>call:foo{bool_value:true,list_value:[<|\"|>foo<|\"|>,<|\"|>bar<|\"|>],null_value:null,number_value:1,string_value:<|\"|>foo<|\"|>,struct_value:{foo:<|\"|>bar<|\"|>}}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            pairs(&r.calls[0]),
            [
                ("bool_value".into(), "true".into()),
                ("list_value".into(), "[\"foo\",\"bar\"]".into()),
                ("null_value".into(), "null".into()),
                ("number_value".into(), "1".into()),
                ("string_value".into(), "foo".into()),
                ("struct_value".into(), "{\"foo\":\"bar\"}".into())
            ]
        );
        // The prompt opened the thought channel: a lone `<channel|>` closes it.
        let r = read_as(G, "Done.<channel|>It is sunny.");
        assert_eq!(r.reasoning.len(), 1);
    }

    #[test]
    fn vllm_gemma4_utils_strings() {
        // vLLM's tests/tool_parsers/test_gemma4_utils.py: quotes, braces and lines in strings.
        let text = "<|tool_call>call:write_file{path:<|\"|>index.html<|\"|>,content:<|\"|><div class=\"app\">{test}\nHello</div><|\"|>}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [
                ("path", "index.html"),
                ("content", "<div class=\"app\">{test}\nHello</div>")
            ]
        );
        let text = "<|tool_call>call:f{code:<|\"|>function() { return \"ok\"; }<|\"|>,city:Tokyo}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("code", "function() { return \"ok\"; }"), ("city", "Tokyo")]
        );
    }

    #[test]
    fn nested_values_are_json() {
        let text = "<|tool_call>call:f{record_map:{<|\"|>3<|\"|>:<|\"|>new, text<|\"|>},deep:{a:[1,{b:null}],c:x y},n:[]}<tool_call|>";
        let r = read_as(G, text);
        assert_eq!(
            pairs(&r.calls[0]),
            [
                ("record_map".into(), "{\"3\":\"new, text\"}".into()),
                (
                    "deep".into(),
                    "{\"a\":[1,{\"b\":null}],\"c\":\"x y\"}".into()
                ),
                ("n".into(), "[]".into())
            ]
        );
        let r = read_as(G, "<|tool_call>call:f{a:{b}}<tool_call|>");
        assert!(is_broken(&r.calls[0]));
    }

    #[test]
    fn vllm_functiongemma_calls() {
        // vLLM's tests/tool_parsers/test_functiongemma_tool_parser.py.
        let text = "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>";
        let r = read_as(F, text);
        assert_eq!(names(&r), ["get_weather"]);
        assert_eq!(args_text(&r.calls[0], text), [("location", "London")]);
        let text = "Let me check the weather for you. <start_function_call>call:get_weather{location:<escape>Paris<escape>}<end_function_call>";
        assert_eq!(names(&read_as(F, text)), ["get_weather"]);
        let text = "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call><start_function_call>call:get_time{timezone:<escape>UTC<escape>}<end_function_call>";
        assert_eq!(names(&read_as(F, text)), ["get_weather", "get_time"]);
        // No separator between the arguments.
        let text = "<start_function_call>call:search{query:<escape>python<escape>limit:<escape>10<escape>sort:<escape>relevance<escape>}<end_function_call>";
        let r = read_as(F, text);
        assert_eq!(
            args_text(&r.calls[0], text),
            [("query", "python"), ("limit", "10"), ("sort", "relevance")]
        );
        assert!(read_as(F, "Hello, how can I help you today?")
            .calls
            .is_empty());
    }

    #[test]
    fn a_gemma4_string_stays_a_string_whatever_its_type() {
        use crate::types::Type;
        use crate::{Limits, Value};
        let limits = Limits::default();
        let text = "<|tool_call>call:f{zip:<|\"|>007<|\"|>,n:7}<tool_call|>";
        let r = read_as(G, text);
        let FormatArgs::Text(args) = &r.calls[0].args else {
            panic!("{r:?}");
        };
        let convert = |i: usize| {
            super::super::convert_text_arg(&args[i], Some(&Type::Int), &limits).and_then(|t| {
                crate::eval::eval_pure(&t, &crate::resolve::context::Context::new(), &limits)
            })
        };
        // The string as written, for an `int` parameter too (binding judges it); the bare
        // value by its type.
        assert_eq!(convert(0), Ok(Value::Str("007".into())));
        assert_eq!(convert(1), Ok(Value::Int(7)));
        // FunctionGemma's `<escape>` value is read by its parameter's type.
        let text = "<start_function_call>call:f{n:<escape>7<escape>}<end_function_call>";
        let r = read_as(F, text);
        let FormatArgs::Text(args) = &r.calls[0].args else {
            panic!("{r:?}");
        };
        let value =
            super::super::convert_text_arg(&args[0], Some(&Type::Int), &limits).and_then(|t| {
                crate::eval::eval_pure(&t, &crate::resolve::context::Context::new(), &limits)
            });
        assert_eq!(value, Ok(Value::Int(7)));
    }
}

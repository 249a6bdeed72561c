//! Any text: `fexpr::syntax::parse` returns (an IR or an error) and never panics; an IR it
//! returns prints to source that parses back to the same IR. (The printer parenthesizes every
//! nested operator, which the pre-parse depth estimate counts, so the reparse gets a larger
//! `max_depth`.) The parser's fast path and the ruff-only path give the same result.
#![no_main]

use fexpr::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    let parsed = fexpr::syntax::parse(text, &limits);
    assert_eq!(
        parsed,
        fexpr::syntax::parse_with_ruff(text, &limits),
        "fast path and ruff differ on {text:?}"
    );
    if let Ok(mut expr) = parsed {
        let printed = expr.to_string();
        let relaxed = Limits::default().max_depth(limits.max_depth * 3 + 10);
        let mut again = match fexpr::syntax::parse(&printed, &relaxed) {
            Ok(again) => again,
            Err(e) => panic!("{text:?} printed as {printed:?}, which does not parse: {e}"),
        };
        expr.strip_spans();
        again.strip_spans();
        assert_eq!(expr, again, "{text:?} printed as {printed:?}");
    }
});

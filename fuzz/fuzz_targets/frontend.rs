//! Any model text: `fexpr::front::extract` never panics and reports spans that lie inside the
//! text on character boundaries, in order; `fexpr::check::check_text` (extraction, repairs and
//! signature checks against the demo toolset) never panics and gives one verdict per call.
#![no_main]

use fexpr::repair::RepairOptions;
use fexpr::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    let manager = fexpr::demo::manager();
    let ctx = manager.context();
    let extraction = fexpr::front::extract(text, &limits, &|name| fexpr::check::is_tool(ctx, name));
    let spans = extraction
        .calls
        .iter()
        .map(|c| c.span)
        .chain(extraction.ignored.iter().map(|i| i.span));
    for span in spans {
        assert!(span.start <= span.end, "{span:?} in {text:?}");
        assert!(
            text.get(span.range()).is_some(),
            "{span:?} not on char boundaries of {text:?}"
        );
    }
    for pair in extraction.ignored.windows(2) {
        assert!(
            pair[0].span.start <= pair[1].span.start,
            "ignored spans out of order in {text:?}"
        );
    }
    for options in [RepairOptions::default(), RepairOptions::strict()] {
        let checked = fexpr::check::check_text(text, ctx, &limits, &options);
        assert_eq!(checked.verdicts.len(), extraction.calls.len(), "{text:?}");
    }
});

//! Any text through the JSON door: `fexpr::front::json_input::read` never panics, its spans lie inside
//! the text on character boundaries, and a document it accepts is within the limits;
//! `Input::json` run (demo toolset, natively) gives every item an output or a
//! structured error; and when every item is a valid call form, running the JSON gives the same
//! values and error kinds as running the equivalent expression (the units printed as Python).
#![no_main]

use fexpr::Input;
use fexpr::syntax::{Expr, ExprKind};
use fexpr::Limits;
use libfuzzer_sys::fuzz_target;

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    static MANAGER: fexpr::ToolManager = fexpr::demo::manager();
}

/// Nesting depth and the largest element count of any collection, counted as the evaluator
/// counts a value (without recursion: the tree may be as deep as the limit).
fn measure(tree: &Expr) -> (usize, usize, usize) {
    let (mut depth, mut widest, mut longest) = (0, 0, 0);
    let mut stack = vec![(tree, 1usize)];
    while let Some((node, level)) = stack.pop() {
        match &node.kind {
            ExprKind::List(items) => {
                depth = depth.max(level);
                widest = widest.max(count(node) - 1);
                stack.extend(items.iter().map(|i| (i, level + 1)));
            }
            ExprKind::Dict(pairs) => {
                depth = depth.max(level);
                widest = widest.max(count(node) - 1);
                for (k, v) in pairs {
                    stack.push((k, level + 1));
                    stack.push((v, level + 1));
                }
            }
            ExprKind::Str(s) => longest = longest.max(s.len()),
            _ => {}
        }
    }
    (depth, widest, longest)
}

/// Elements of a value, itself included.
fn count(tree: &Expr) -> usize {
    let mut total = 0;
    let mut stack = vec![tree];
    while let Some(node) = stack.pop() {
        total += 1;
        match &node.kind {
            ExprKind::List(items) => stack.extend(items),
            ExprKind::Dict(pairs) => pairs.iter().for_each(|(k, v)| stack.extend([k, v])),
            _ => {}
        }
    }
    total
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    match fexpr::front::json_input::read(text, &limits) {
        Ok(tree) => {
            let (depth, widest, longest) = measure(&tree);
            assert!(depth <= limits.max_depth, "{text:?}");
            assert!(widest <= limits.max_collection_len, "{text:?}");
            assert!(longest <= limits.max_str_bytes, "{text:?}");
            assert!(text.get(tree.span.range()).is_some(), "{text:?}");
        }
        Err(e) => {
            if let Some(span) = e.span {
                assert!(text.get(span.range()).is_some(), "{span:?} in {text:?}");
            }
        }
    }
    let response = MANAGER.with(|m| RUNTIME.with(|rt| rt.block_on(async { m.run(Input::json(text)).await })));
    // A row per call, or (an assistant message with no call: nothing to answer) the text not
    // used: never nothing at all.
    assert!(!response.outputs.is_empty() || !response.ignored.is_empty(), "{text:?}");
    let outputs = response.outputs;
    for out in &outputs {
        if let Some(span) = out.output.as_ref().err().and_then(|e| e.span) {
            assert!(text.get(span.range()).is_some(), "{span:?} in {text:?}");
        }
    }
    // Valid forms agree with the equivalent expression.
    let Ok(items) = fexpr::front::json_input::units(text, &limits) else {
        return;
    };
    let mut printed = Vec::new();
    for (_, unit) in &items {
        let Ok(unit) = unit else {
            return;
        };
        // Only units that print to a call expression reading back as the same tree (a name
        // like `a-b` does not).
        let text = unit.to_string();
        let Ok(mut back) = fexpr::syntax::parse(&text, &limits) else {
            return;
        };
        let mut unit = unit.clone();
        unit.strip_spans();
        back.strip_spans();
        if back != unit {
            return;
        }
        printed.push(text);
    }
    let source = format!("[{}]", printed.join(", "));
    let expected = MANAGER.with(|m| RUNTIME.with(|rt| rt.block_on(async { m.run(Input::expr(&source)).await.outputs })));
    if expected.len() != outputs.len() {
        return; // a list of one non-call unit: the expression is that list
    }
    for (json, expr) in outputs.iter().zip(&expected) {
        assert_eq!(json.output.as_ref().ok(), expr.output.as_ref().ok(), "{text:?} vs {source:?}");
        assert_eq!(
            json.output.as_ref().err().map(|e| e.kind),
            expr.output.as_ref().err().map(|e| e.kind),
            "{text:?} vs {source:?}"
        );
    }
});

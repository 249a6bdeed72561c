// A parameter refused for its type is still one the doc comment may describe: the type's
// error is the only one.

/// Shout.
///
/// # Arguments
/// * `text` - what to shout
#[fexpr::tool]
fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}

// Arguments are converted to owned values.
#[fexpr::tool]
fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}

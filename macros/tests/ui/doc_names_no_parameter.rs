/// Add two numbers.
///
/// # Arguments
///
/// * `a` - The first.
/// * `c` - A parameter the function does not have.
#[fexpr::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// `inline` is for sync functions.
#[fexpr::tool(inline)]
async fn fetch(url: String) -> String {
    url
}

fn main() {}

// A parameter without a plain name: the model passes arguments by name.
#[fexpr::tool]
fn ignored(_: i64, (a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}

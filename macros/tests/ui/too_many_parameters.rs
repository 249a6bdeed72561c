// Up to 8 parameters (6 beside a CallContext): more belong in a struct.
#[fexpr::tool]
fn nine(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64, h: i64, i: i64) -> i64 {
    a + b + c + d + e + f + g + h + i
}

#[fexpr::tool]
fn seven(ctx: fexpr::CallContext, a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64) -> i64 {
    let _ = ctx;
    a + b + c + d + e + f + g
}

fn main() {}

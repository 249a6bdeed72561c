// A component's methods are shared by its tools: `self` by value or `&mut self` cannot be.
struct Counter;

#[fexpr::tools]
impl Counter {
    #[tool]
    fn consume(self) -> i64 {
        1
    }

    #[tool]
    fn mutate(&mut self) -> i64 {
        2
    }
}

// A method needs the impl block's attribute.
struct Other;

impl Other {
    #[fexpr::tool]
    fn method(&self) -> i64 {
        3
    }
}

fn main() {}

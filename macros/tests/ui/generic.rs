// The model is shown one schema: a tool function has concrete parameter types.
#[fexpr::tool]
fn first<T: serde::de::DeserializeOwned>(items: Vec<T>) -> usize {
    items.len()
}

#[fexpr::tool]
fn shown(value: impl std::fmt::Display) -> String {
    value.to_string()
}

fn main() {}

//! fexpr runs the function calls a language model writes: safely and fast.

pub mod error;
pub mod limits;
pub mod syntax;

pub use error::{Error, ErrorKind, Span};
pub use limits::Limits;

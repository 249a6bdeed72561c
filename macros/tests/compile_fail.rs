//! The mistakes a user makes with `#[fexpr::tool]` and `#[fexpr::tools]` are compile errors at
//! the code they wrote, saying what to write instead (`tests/ui/*.stderr`; after changing a
//! message, regenerate them with `TRYBUILD=overwrite cargo test -p fexpr-macros`).

#[test]
fn mistakes_are_errors_at_the_users_code() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

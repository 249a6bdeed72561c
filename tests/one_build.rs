//! One build: the README's first command (`cargo run --release --example walkthrough`) and the
//! CLI's (`cargo build --release --bin fexpr`) share every dependency's build. Cargo unifies
//! features over the targets of one build, and an example brings in the dev-dependencies: a
//! dev-dependency that turns on a feature of a crate the library also uses makes the second
//! command compile that crate, and everything above it, again (once ~100 crates, 10.7 minutes).
//! Here every crate the library builds has the same features with and without the
//! dev-dependencies.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test, bench or example may stop at a failed step

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each crate `cargo tree` lists for this package (`name version`) with the feature sets it is
/// built with (one for the target, another when a build script or proc macro also uses it),
/// the dev-dependencies in or out.
fn features(dev: bool) -> BTreeMap<String, BTreeSet<String>> {
    let edges = if dev { "normal,build,dev" } else { "no-dev" };
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-p",
            "fexpr",
            "--prefix",
            "none",
        ])
        .args(["-e", edges, "-f", "{p} {f}"])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut crates: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let line = line.trim_end_matches(" (*)");
        let mut parts = line.splitn(3, ' ');
        let (Some(name), Some(version)) = (parts.next(), parts.next()) else {
            continue;
        };
        let features = parts.next().unwrap_or_default().to_string();
        crates
            .entry(format!("{name} {version}"))
            .or_default()
            .insert(features);
    }
    crates
}

#[test]
fn dev_dependencies_turn_on_no_feature_of_the_librarys_crates() {
    let library = features(false);
    let with_dev = features(true);
    assert!(library.len() > 100, "{} crates", library.len());
    // Every build of a crate the library makes is made the same way with the dev-dependencies
    // (they may add builds of their own, which leave the library's alone).
    let differ: Vec<String> = library
        .iter()
        .flat_map(|(name, sets)| {
            let dev = with_dev.get(name).cloned().unwrap_or_default();
            sets.iter()
                .filter(move |set| !dev.contains(*set))
                .map(move |set| format!("{name}: [{set}] is not built with the dev-dependencies"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "building an example would compile these (and every crate above them) a second time; \
         give the normal dependency the feature, or turn it off in the dev-dependency:\n{}",
        differ.join("\n")
    );
}

# Shared by build-guest.sh and check-guest.sh: the guest toolchain, its flags and the inputs
# hash. Sourced, not run. Needs ROOT (the checkout) set by the caller.

GUEST_RUSTC=/usr/bin/rustc
GUEST_CARGO=/usr/bin/cargo
WASM_LD=/usr/lib/llvm-19/bin/wasm-ld
WASI_LIB=/usr/lib/wasm32-wasi
GUEST_TARGET=wasm32-wasip1
# The guest's initial linear memory: 1 MiB shadow stack + ~1 MiB data + room for a typical
# evaluation's heap, including the 1 MiB stack `stacker` allocates around each parse (wasm has
# no way to tell it how much stack is left), so that such an evaluation never runs
# `memory.grow` (each grow costs the host an `mprotect`, and another to shrink the pool slot
# back at the next instance). 3.5 MiB: `add_points(..)` peaks at 3 MiB + 64 KiB. A
# `Limits::memory_bytes` below it refuses every evaluation with a `Limit` error.
GUEST_INITIAL_MEMORY=$((56 * 65536))

require_guest_toolchain() {
    local missing=()
    [[ -x $GUEST_RUSTC && -x $GUEST_CARGO ]] || missing+=("rustc-web/cargo-web at /usr/bin")
    [[ -x $WASM_LD ]] || missing+=("lld-19 ($WASM_LD)")
    [[ -f $WASI_LIB/libc.a ]] || missing+=("wasi-libc ($WASI_LIB)")
    [[ -d $("$GUEST_RUSTC" --print sysroot 2>/dev/null)/lib/rustlib/src/rust/library ]] ||
        missing+=("rust-web-src")
    if ((${#missing[@]})); then
        echo "error: the wasm guest toolchain is missing: ${missing[*]}" >&2
        echo "       run scripts/install-wasm-toolchain.sh (as root) first" >&2
        exit 2
    fi
}

guest_rustc_version() {
    "$GUEST_RUSTC" --version
}

# The rustc flags, one per line. Absolute paths of this machine appear only in the
# --remap-path-prefix values, which map them to fixed names so the output does not depend on
# where the checkout, cargo home or the standard library sources live. $1: the staging dir.
guest_rustflags() {
    local stage=$1
    local cargo_home=${CARGO_HOME:-$HOME/.cargo}
    local sysroot rust_src
    sysroot=$("$GUEST_RUSTC" --print sysroot)
    rust_src=$sysroot/lib/rustlib/src/rust
    printf '%s\n' \
        "-Clinker=$WASM_LD" \
        "-Clink-self-contained=no" \
        "-L$WASI_LIB" \
        "-Clink-arg=--initial-memory=$GUEST_INITIAL_MEMORY" \
        "--remap-path-prefix=$(readlink -f "$rust_src")=/rust-src" \
        "--remap-path-prefix=$rust_src=/rust-src" \
        "--remap-path-prefix=$(readlink -f "$cargo_home")=/cargo" \
        "--remap-path-prefix=$cargo_home=/cargo" \
        "--remap-path-prefix=$stage=/fexpr"
}

# The cargo command line (after `cargo`), one argument per line.
guest_cargo_args() {
    printf '%s\n' build --release --locked --target "$GUEST_TARGET" \
        -Zbuild-std=std,panic_abort
}

# The files the guest is compiled from, relative to ROOT, sorted: the main crate's library
# sources (minus the CLI and the sandbox's host side: of src/sandbox/ only mod.rs and wire.rs),
# its manifest, and the guest crate.
guest_input_files() {
    (
        cd "$ROOT"
        {
            printf '%s\n' Cargo.toml guest/Cargo.toml guest/Cargo.lock
            [[ -f build.rs ]] && echo build.rs
            find src guest/src -type f \
                -not -path 'src/bin/*' \
                -not \( -path 'src/sandbox/*' -not -path 'src/sandbox/mod.rs' -not -path 'src/sandbox/wire.rs' \) \
                -not -name '*.orig' -not -name '*~'
        } | LC_ALL=C sort -u
    )
}

# SHA-256 over the inputs: each file's path and hash, then the flags and cargo arguments with
# this machine's paths replaced by placeholders.
guest_inputs_hash() {
    (
        cd "$ROOT"
        guest_input_files | while IFS= read -r f; do
            printf '%s  %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$f"
        done
        echo "--- rustflags"
        guest_rustflags "<stage>" | sed -e "s#^--remap-path-prefix=.*=/\(cargo\|rust-src\)\$#--remap-path-prefix=<\1>=/\1#"
        echo "--- cargo"
        guest_cargo_args
    ) | sha256sum | cut -d' ' -f1
}

# Copies the guest's inputs into "$1", laid out so that cargo sees the same relative paths
# wherever the checkout is: "$1" is the guest's workspace root and the main crate is at
# "$1/fexpr", inside it. (Cargo hashes the absolute path of a path dependency that lies
# outside the workspace into every crate's -C metadata, which changes symbol names and type
# ids; inside the workspace it hashes the relative path.)
stage_guest_sources() {
    local stage=$1
    rm -rf "$stage"
    mkdir -p "$stage/fexpr"
    (
        cd "$ROOT"
        guest_input_files | while IFS= read -r f; do
            case $f in
            guest/*) dest=$stage/${f#guest/} ;;
            *) dest=$stage/fexpr/$f ;;
            esac
            mkdir -p "$(dirname "$dest")"
            cp -p "$f" "$dest"
        done
    )
    local dep='fexpr = { path = "..", default-features = false }'
    if ! grep -qxF "$dep" "$stage/Cargo.toml" || ! grep -qx '\[workspace\]' "$stage/Cargo.toml"; then
        echo "error: guest/Cargo.toml must contain the lines '$dep' and '[workspace]'" >&2
        exit 2
    fi
    sed -i -e 's#^fexpr = { path = "\.\.", #fexpr = { path = "fexpr", #' \
        -e 's#^\[workspace\]$#[workspace]\nexclude = ["fexpr"]#' "$stage/Cargo.toml"
}

# Builds the guest and copies it to "$1/fexpr-guest.wasm" with "$1/fexpr-guest.wasm.info".
# GUEST_TARGET_DIR overrides the cargo target directory (default guest/target).
# GUEST_UPDATE_LOCK=1 lets cargo update the lock file and copies it back to guest/Cargo.lock.
build_guest_into() {
    local out_dir=$1
    local target_dir=${GUEST_TARGET_DIR:-$ROOT/guest/target}
    mkdir -p "$out_dir" "$target_dir"
    target_dir=$(cd "$target_dir" && pwd -P)
    local stage=$target_dir/stage
    stage_guest_sources "$stage"
    local flags
    flags=$(guest_rustflags "$stage" | paste -sd $'\x1f')
    local args=()
    mapfile -t args < <(guest_cargo_args)
    if [[ ${GUEST_UPDATE_LOCK:-0} == 1 ]]; then
        local kept=() arg
        for arg in "${args[@]}"; do
            [[ $arg == --locked ]] || kept+=("$arg")
        done
        args=("${kept[@]}")
    fi
    (
        cd "$stage"
        env -u RUSTFLAGS -u RUSTC_WRAPPER -u RUSTC -u RUSTDOC -u CARGO_BUILD_RUSTFLAGS \
            -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_TARGET -u CARGO_INCREMENTAL \
            PATH="/usr/bin:$PATH" \
            RUSTC_BOOTSTRAP=1 \
            SOURCE_DATE_EPOCH=0 \
            CARGO_TARGET_DIR="$target_dir" \
            CARGO_ENCODED_RUSTFLAGS="$flags" \
            "$GUEST_CARGO" ${args[@]+"${args[@]}"}
    )
    if [[ ${GUEST_UPDATE_LOCK:-0} == 1 ]]; then
        cp "$stage/Cargo.lock" "$ROOT/guest/Cargo.lock"
    fi
    cp "$target_dir/$GUEST_TARGET/release/fexpr_guest.wasm" "$out_dir/fexpr-guest.wasm"
    chmod 644 "$out_dir/fexpr-guest.wasm"
    {
        echo "# Written by scripts/build-guest.sh; checked by scripts/check-guest.sh."
        echo "rustc: $(guest_rustc_version)"
        echo "inputs-sha256: $(guest_inputs_hash)"
        echo "wasm-sha256: $(sha256sum <"$out_dir/fexpr-guest.wasm" | cut -d' ' -f1)"
    } >"$out_dir/fexpr-guest.wasm.info"
}

#!/usr/bin/env bash
# Installs Debian's toolchain for building the wasm guest (idempotent; needs root).
# rustup cannot fetch a wasm32 standard library on these machines; Debian's rustc-web builds
# std from rust-web-src with -Zbuild-std, links with lld-19's wasm-ld against wasi-libc.
set -euo pipefail
packages=(rustc-web cargo-web rust-web-src wasi-libc lld-19)
if dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -vq '^install ok installed$' ||
    [[ $(dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | wc -l) -ne ${#packages[@]} ]]; then
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
else
    echo "wasm guest toolchain already installed: ${packages[*]}"
fi

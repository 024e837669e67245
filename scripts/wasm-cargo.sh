#!/usr/bin/env bash
# Builds the cargo package or workspace in the current folder for wasm32-wasip2 (release), by
# whichever route this machine has; extra arguments go to `cargo build`. Components land in
# $CARGO_TARGET_DIR/wasm32-wasip2/release (default: ./target).
#
# Two routes:
# - rustup, when the target is installed (`rustup target add wasm32-wasip2`): the usual route on a
#   plugin author's machine.
# - Debian's rustc-web with its matching std sources and -Zbuild-std, when it is not (machines that
#   reach only package registries; `make setup` installs the packages). See plugins/README.md.
# QUARRY_WASM_ROUTE=rustup|debian picks one.
set -euo pipefail

# Only the guest build gets these; nothing leaks from a host build's environment.
unset RUSTFLAGS RUSTUP_TOOLCHAIN CARGO_BUILD_TARGET

if [ -z "${QUARRY_WASM_ROUTE:-}" ] && command -v rustup >/dev/null 2>&1 \
    && rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  QUARRY_WASM_ROUTE=rustup
fi
case "${QUARRY_WASM_ROUTE:-debian}" in
rustup)
  echo "wasm: building with rustup's wasm32-wasip2 target"
  cargo build --release --target wasm32-wasip2 "$@"
  ;;
debian)
  rustc_bin=/usr/bin/rustc
  [ -x "$rustc_bin" ] || { echo "wasm: $rustc_bin missing; run 'make setup' (Debian rustc-web)" >&2; exit 1; }
  version="$($rustc_bin --version | awk '{print $2}')"
  [ -d "/usr/src/rustc-$version" ] || {
    echo "wasm: rustc-web $version but no /usr/src/rustc-$version: rustc-web and rust-web-src versions differ; run 'make setup'" >&2
    exit 1
  }
  echo "wasm: building with Debian's rustc $version and -Zbuild-std (no rustup wasm32-wasip2 target here)"
  export RUSTC="$rustc_bin" RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
  # -L: where `-lc` (Debian's wasi-libc) is found; wasm-component-ld drives lld-19's wasm-ld.
  # This variable replaces the rustflags of plugins/.cargo/config.toml, so it repeats them.
  export CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS="-C target-feature=+simd128 -L native=/usr/lib/wasm32-wasi -C link-arg=--wasm-ld-path=/usr/lib/llvm-19/bin/wasm-ld"
  /usr/bin/cargo build --release --target wasm32-wasip2 -Zbuild-std=std,panic_abort "$@"
  ;;
*)
  echo "wasm: unknown QUARRY_WASM_ROUTE=$QUARRY_WASM_ROUTE (rustup or debian)" >&2; exit 2 ;;
esac

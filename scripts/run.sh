#!/usr/bin/env bash
# `make run`: a demo on this repository's docs/, in ./.quarry. Creates what is missing (a folder
# connector "Docs", an integration "Demo"), prints the base URL, a key and a curl line, then
# serves. Run again, it reuses both; the demo key is replaced, since keys are shown only once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
QUARRY="${QUARRY_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/quarry}"
DATA="${QUARRY_DATA_DIR:-$ROOT/.quarry}"
LISTEN="${QUARRY_LISTEN:-127.0.0.1:4747}"
quarry() { "$QUARRY" --data-dir "$DATA" "$@"; }

if ! quarry connector list --json | grep -q '"name":"Docs"'; then
  quarry connector add folder "$ROOT/docs" --name Docs >/dev/null
fi
if quarry integration list --json | grep -q '"name":"Demo"'; then
  created="$(quarry integration rotate Demo --json)"
else
  created="$(quarry integration create Demo --share all --json)"
fi
key="$(printf '%s' "$created" | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p')"
base="http://$LISTEN"
# The server prints the admin token at its first start only; the demo asks for a sign-in link.
link="$(quarry admin link --url "$base" | sed -n 's/^ *\(http[^ ]*\)$/\1/p')"

cat <<TXT

Quarry demo (data in $DATA)
  Base URL : $base
  API key  : $key   (integration "Demo"; a new key at every make run)

  curl -s $base/api/v1/search -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d '{"query": "data sharing", "limit": 3}'

  OpenAPI  : $base/api/v1/openapi.json
  Settings : $link
             (a one-time sign-in link, 15 minutes; \`quarry admin link\` prints another)
  Stop with Ctrl-C.

TXT
exec "$QUARRY" --data-dir "$DATA" serve --listen "$LISTEN"

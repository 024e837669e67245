#!/usr/bin/env bash
# Usage: pinned-venv.sh VENV REQUIREMENTS WHAT
# A Python virtualenv at VENV holding exactly the versions REQUIREMENTS pins (PyPI), for WHAT
# (words for the progress line). Created again only when REQUIREMENTS changes.
set -euo pipefail

venv="$1" requirements="$2" what="$3"
if cmp -s "$requirements" "$venv/requirements.installed" 2>/dev/null; then
  echo "$what present in $venv"
  exit 0
fi
echo "installing $what (PyPI, versions of $requirements) in $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$venv/requirements.installed"

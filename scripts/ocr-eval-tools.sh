#!/usr/bin/env bash
# Installs what `make eval`'s OCR part compares against and renders with, from Debian: tesseract
# with its English, simplified Chinese and Japanese models; LibreOffice (Writer, without its
# desktop), pandoc, poppler's pdftoppm and img2pdf, which make and render its documents;
# LibreOffice's default serif font and a CJK font. Only `make eval` needs them (not `make test`).
# Idempotent.
set -euo pipefail

packages=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-jpn fonts-wqy-zenhei
  libreoffice-writer-nogui pandoc poppler-utils img2pdf fonts-liberation2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "ocr-eval-tools: installing ${missing[*]}"
$SUDO apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"

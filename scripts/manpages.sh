#!/usr/bin/env bash
# Real text in several languages for `make eval` and `make bench`: Debian's manual pages, fetched
# as packages (no root, nothing installed), rendered to UTF-8 text with groff as `man` would, one
# file per page under $OUT/<language>/, named <section folder>-<page>.txt (man1-ls.1.txt):
#   zh_CN, zh_TW (manpages-zh), ja (manpages-ja): the CJK known-item evaluation and bench;
#   en (manpages, manpages-dev, coreutils), de (manpages-de), fr (manpages-fr): with ja and zh_CN,
#   the cross-language evaluation, which pairs a page with its translation by file name.
# Done once; later runs return at once.
set -euo pipefail

OUT=${1:?usage: manpages.sh OUT_DIR}
# Languages and the folder of usr/share/man their pages are in.
LANGUAGES=(zh_CN:zh_CN zh_TW:zh_TW ja:ja de:de fr:fr en:.)
PACKAGES=(manpages-zh manpages-ja manpages-de manpages-fr manpages manpages-dev coreutils)
[[ -f $OUT/complete && $(cat "$OUT/complete") == "${LANGUAGES[*]}" ]] && exit 0

for tool in apt-get dpkg-deb groff; do
    command -v "$tool" >/dev/null || { echo "manpages.sh: $tool is needed (Debian)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "${PACKAGES[@]}" 2>/dev/null >/dev/null) \
    || { echo "manpages.sh: apt-get download ${PACKAGES[*]} failed" >&2; exit 1; }
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done

rm -rf "$OUT" && mkdir -p "$OUT"
render() {
    # $1: a page (gzipped roff), $2: the output folder. Pages that only include another page
    # (`.so`) and pages groff cannot render are left out.
    local name out
    name=$(basename "$(dirname "$1")")-$(basename "$1" .gz)
    out=$2/$name.txt
    if ! zcat -f "$1" | grep -q '^\.so ' && zcat -f "$1" |
        groff -k -Kutf8 -Tutf8 -man -P-cbou 2>/dev/null >"$out" && [[ -s $out ]]; then
        return 0
    fi
    rm -f "$out"
}
export -f render
for entry in "${LANGUAGES[@]}"; do
    lang=${entry%%:*}
    mkdir -p "$OUT/$lang"
    find "$work/root/usr/share/man/${entry#*:}"/man[0-9]* -type f -name '*.gz' -print0 |
        xargs -0 -P "$(nproc)" -I{} bash -c 'render "$1" "$2"' _ {} "$OUT/$lang"
    echo "manpages.sh: $(find "$OUT/$lang" -name '*.txt' | wc -l) $lang pages"
done
echo "${LANGUAGES[*]}" >"$OUT/complete"

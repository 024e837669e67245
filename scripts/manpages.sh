#!/usr/bin/env bash
# Real Chinese and Japanese text for `make eval`: Debian's manpages-zh and manpages-ja, fetched
# as packages (no root, nothing installed), rendered to UTF-8 text with groff as `man` would, one
# file per page under $OUT/<language>/ (zh_CN, zh_TW, ja). Done once; later runs return at once.
set -euo pipefail

OUT=${1:?usage: manpages.sh OUT_DIR}
[[ -f $OUT/complete ]] && exit 0

for tool in apt-get dpkg-deb groff; do
    command -v "$tool" >/dev/null || { echo "manpages.sh: $tool is needed (Debian)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download manpages-zh manpages-ja 2>/dev/null >/dev/null) \
    || { echo "manpages.sh: apt-get download manpages-zh manpages-ja failed" >&2; exit 1; }
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
for lang in zh_CN zh_TW ja; do
    mkdir -p "$OUT/$lang"
    find "$work/root/usr/share/man/$lang" -type f -name '*.gz' -print0 |
        xargs -0 -P "$(nproc)" -I{} bash -c 'render "$1" "$2"' _ {} "$OUT/$lang"
    echo "manpages.sh: $(find "$OUT/$lang" -name '*.txt' | wc -l) $lang pages"
done
touch "$OUT/complete"

#!/usr/bin/env bash
# The "old" side of a kernel A/B (scripts/h200_decode_ab.sh, scripts/h200_prefill_ab.sh): builds ninja target
# TARGET of build-h200 with SOURCE replaced by OLD, copies that binary to DEST, and puts everything back: SOURCE
# as it was (a newer mtime, so the next ninja call rebuilds from it) and build-h200/TARGET as the new binary it
# was before, so nothing left in build-h200 is the old kernel. Exit status: ninja's (its output in LOG).
# Usage: scripts/ab_relink.sh SOURCE OLD TARGET DEST LOG
set -uo pipefail
[ $# -eq 5 ] || { echo "usage: scripts/ab_relink.sh SOURCE OLD TARGET DEST LOG" >&2; exit 2; }
src=$1 old=$2 target=$3 dest=$4 log=$5
[ -f "$src" ] && [ -f "$old" ] && [ -f "build-h200/$target" ] || { echo "ab_relink: missing $src, $old or build-h200/$target" >&2; exit 2; }
keep=$(mktemp -d)
cp "$src" "$keep/source" && cp "build-h200/$target" "$keep/binary" || exit 1
cp "$old" "$src"
ninja -C build-h200 "$target" > "$log" 2>&1
rc=$?
[ $rc -eq 0 ] && cp "build-h200/$target" "$dest"
cp "$keep/source" "$src"
cp "$keep/binary" "build-h200/$target"
rm -rf "$keep"
[ $rc -eq 0 ] || tail -20 "$log"
exit $rc

#!/usr/bin/env bash
# Issue 15 (parts 3 and 4) on the GPU host: the pr-evidence sweep, timed (its JSON records wall_seconds), then
# PyTorch SDPA (cuDNN and flash) on the same extend and decode shapes right after it (scripts/anchors.py).
# Writes OUTDIR/pr-evidence.{csv,json,txt,log}, OUTDIR/cases.csv, OUTDIR/anchors.csv (+ anchors-rounds.csv: every
# round of every anchor, anchors.py --rounds) and OUTDIR/anchors.log.
# Usage: scripts/h200_anchors.sh ATTNBENCH OUTDIR      (python3 with torch on the PATH; run from anywhere)
# ANCHORS_OPTIONS adds options to anchors.py (e.g. --dry-run to check the plumbing without torch or a GPU).
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "usage: scripts/h200_anchors.sh ATTNBENCH OUTDIR" >&2
  exit 2
fi
bin="$(realpath "$1")" out="$(realpath -m "$2")"
cd "$(dirname "$0")/.."
[ -x "$bin" ] || { echo "h200_anchors.sh: ATTNBENCH: $bin is not an executable" >&2; exit 2; }
mkdir -p "$out"
cfg=configs/pr-evidence.toml
start=$(date +%s.%N)
"$bin" run --config "$cfg" --device cuda --out "$out/pr-evidence.csv" --json "$out/pr-evidence.json" \
  > "$out/pr-evidence.txt" 2> "$out/pr-evidence.log"
rc=$?
end=$(date +%s.%N)
echo "pr-evidence exit code $rc, $(awk "BEGIN {printf \"%.1f\", $end - $start}") s measured by the shell" >> "$out/pr-evidence.log"
python3 - "$out/pr-evidence.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
env = j["environment"]
rows = j["rows"]
ok = sum(r["status"] == "ok" for r in rows)
valid = sum(r.get("ref_pass") in (1, True) for r in rows)
print("sweep: wall_seconds %s, %d rows, %d ok, %d validated (ref_pass), read %.0f GB/s, copy %.0f GB/s" % (
    env.get("wall_seconds"), len(rows), ok, valid, float(env.get("read_bandwidth_bytes_per_s", 0)) / 1e9,
    float(env.get("copy_bandwidth_bytes_per_s", 0)) / 1e9))
bw = [r["bw_fraction"] for r in rows if r.get("bw_fraction") is not None]
print("bw_fraction: max %.3f over %d rows (against the read probe)" % (max(bw), len(bw)) if bw else "no bw_fraction")
PY
"$bin" run --config "$cfg" --list-cases --format csv > "$out/cases.csv"
python3 scripts/anchors.py --cases "$out/cases.csv" --results "$out/pr-evidence.csv" --out "$out/anchors.csv" \
  ${ANCHORS_OPTIONS:-} 2> "$out/anchors.log"
echo "anchors exit code $?" >> "$out/anchors.log"
tail -n 1 "$out/anchors.log"
column -s, -t < "$out/anchors.csv" 2>/dev/null || cat "$out/anchors.csv"
exit $rc

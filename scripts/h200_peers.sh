#!/usr/bin/env bash
# Model vs library on a GPU (issue 7): attnbench's kernels and FlashInfer's own on the same cases, one machine,
# one session. Needs torch and flashinfer-python importable (the H200 gets them as wheels: see the README).
#   scripts/h200_peers.sh ATTNBENCH OUTDIR [FILTER] [CONFIG]
# FILTER: a regular expression on case ids (default: the Llama-3.1-8B cases), CONFIG: default pr-evidence.
# Writes OUTDIR/{cases.csv, model.csv/.json/.log, peers.csv/.json/.log, report.md, compare.md}.
# PEER_OPTIONS: more options for peer_flashinfer.py (e.g. "--backend flashinfer_lib").
set -uo pipefail
bin=${1:?usage: scripts/h200_peers.sh ATTNBENCH OUTDIR [FILTER] [CONFIG]}
out=${2:?usage: scripts/h200_peers.sh ATTNBENCH OUTDIR [FILTER] [CONFIG]}
filter=${3:-^[a-z]+/llama-3.1-8b/}
config=${4:-configs/pr-evidence.toml}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
"$bin" run --config "$config" --filter "$filter" --list-cases --format csv > "$out/cases.csv" || exit 2
echo "== $(grep -c . "$out/cases.csv") lines in the case list"
if [ "${SKIP_MODEL:-0}" != 1 ]; then
  "$bin" run --config "$config" --filter "$filter" --device cuda --out "$out/model.csv" 2>&1 | tee "$out/model.log"
  echo "== attnbench exit ${PIPESTATUS[0]}"
fi
# bw_fraction's denominator: attnbench's own read probe on this GPU (model.json), so both fractions share it.
read_bw=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["environment"].get("read_bandwidth_bytes_per_s", ""))' \
  "$out/model.json" 2>/dev/null)
python3 scripts/peer_flashinfer.py --cases "$out/cases.csv" --out "$out/peers.csv" ${read_bw:+--read-bandwidth "$read_bw"} ${PEER_OPTIONS:-} \
  2>&1 | tee "$out/peers.log"
echo "== peer_flashinfer exit ${PIPESTATUS[0]}"
if [ -f "$out/model.json" ]; then
  "$bin" report "$out/model.json" --peers "$out/peers.json" > "$out/report.md"
  "$bin" compare --peers "$out/model.json" "$out/peers.json" --format md > "$out/compare.md"
  echo "== report / compare exit $?"
fi

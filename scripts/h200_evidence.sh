#!/usr/bin/env bash
# The GPU evidence run (issue 4): environment, memory (ledger and driver), configs/pr-evidence.toml, and
# compute-sanitizer on configs/smoke.toml. Writes everything under $OUT (default results/local/gpu).
# Usage: scripts/h200_evidence.sh [path to the attnbench binary]
set -uo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build/attnbench}"
out="${OUT:-results/local/gpu}"
mkdir -p "$out"
{ nvidia-smi; nvidia-smi -q -d CLOCK | head -40; } > "$out/nvidia-smi.txt" 2>&1
"$bin" env > "$out/env.txt" 2>&1
mem="--config configs/memory-llama-3.1-8b.toml --device cuda"
"$bin" memory $mem --out "$out/memory.txt"
"$bin" memory $mem --format json --out "$out/memory.json"
"$bin" memory $mem --format csv --out "$out/memory.csv"
"$bin" memory $mem --prefill-backend flashinfer --out "$out/memory-with-flashinfer-prefill.txt"
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    timeout "${SANITIZER_TIMEOUT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" run --config configs/smoke.toml --device cuda \
      --capture-needed-only --out "$out/sanitizer-$tool.csv" > "$out/sanitizer-$tool.txt" 2>&1
    echo "compute-sanitizer $tool exit code $?" >> "$out/sanitizer-$tool.txt"
  done
fi
"$bin" run --config configs/pr-evidence.toml --device cuda --out "$out/pr-evidence.csv" --json "$out/pr-evidence.json" \
  > "$out/pr-evidence.txt" 2> "$out/pr-evidence.log"
echo "pr-evidence exit code $?" >> "$out/pr-evidence.log"
tail -n 3 "$out/pr-evidence.txt" "$out"/sanitizer-*.txt 2>/dev/null

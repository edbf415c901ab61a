#!/usr/bin/env bash
# Records the CI gate's baseline: configs/smoke.toml on this machine's CPU, into results/baseline/.
# Run it (and commit results/baseline/) when a change is meant to move memory, correctness or latency.
# Usage: scripts/update_baseline.sh [path to attnbench]   (builds first when no binary is given)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-}"
if [ -z "$bin" ]; then
  scripts/build.sh
  bin=build/attnbench
fi
"$bin" run --config configs/smoke.toml --device cpu --quiet --out results/baseline/smoke.csv > /dev/null
echo "attnbench: baseline written to results/baseline/smoke.csv and smoke.json"

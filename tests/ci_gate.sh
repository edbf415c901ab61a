#!/usr/bin/env bash
# attnbench gates itself (ctest: ci_gate): configs/smoke.toml now, compared with results/baseline/ by
# `attnbench compare`: memory and correctness strictly (any growth, any lost reference pass or missing row
# fails), latency only beyond 3x (a confirmed slowdown of more than 200%: CI shares two cores).
# Usage: tests/ci_gate.sh ATTNBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1" src="$2" work="$3"
mkdir -p "$work"
"$bin" run --config "$src/configs/smoke.toml" --device cpu --quiet --out "$work/smoke.csv" > /dev/null
"$bin" compare "$src/results/baseline/smoke.json" "$work/smoke.json" --max-slowdown 2.0 --max-memory-growth 0

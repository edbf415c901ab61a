#!/usr/bin/env bash
# attnbench gates itself (ctest: ci_gate): configs/smoke.toml now, compared with results/baseline/ by
# `attnbench compare`: memory and correctness strictly (any growth, any lost reference pass or missing row
# fails). Latency is compared and printed but not gated: the baseline was recorded on another machine, and a
# latency verdict across machines is no evidence (the README's own rule: base and PR on the same machine). A 3x
# threshold gated here until 2026-12-03, when unchanged code read 3.3-5.5x "slower" in 2 of 3 CI runs on a
# shared 2-core machine; the latency gate itself is tested on fixed samples (tests/report/compare_test.cpp).
# Usage: tests/ci_gate.sh ATTNBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1" src="$2" work="$3"
mkdir -p "$work"
"$bin" run --config "$src/configs/smoke.toml" --device cpu --quiet --out "$work/smoke.csv" > /dev/null
# (A sanitized build, scripts/sanitize.sh, runs 10-40x slower besides.)
"$bin" compare "$src/results/baseline/smoke.json" "$work/smoke.json" --max-slowdown 1000000 --max-memory-growth 0

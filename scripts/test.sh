#!/usr/bin/env bash
# The whole test suite (the README's second command; CI runs exactly this through .ci/run):
#   1. build (installing what is missing) and run every test: CPU tests, the CI gate against
#      results/baseline/, the plot script; GPU tests report skipped without a GPU;
#   2. the CPU tests again under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh);
#   3. the fuzz targets, FUZZ_SECONDS (default 60) each (scripts/fuzz.sh).
# ATTNBENCH_QUICK=1 runs step 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${ATTNBENCH_BUILD_DIR:-build}" --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
if [ "${ATTNBENCH_QUICK:-0}" != 1 ]; then
  scripts/sanitize.sh
  FUZZ_SECONDS="${FUZZ_SECONDS:-60}" scripts/fuzz.sh
fi

#!/usr/bin/env bash
# Builds attnbench (installing what is missing) and runs the whole test suite. GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${ATTNBENCH_BUILD_DIR:-build}" --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"

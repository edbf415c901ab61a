#!/usr/bin/env bash
# Installs what attnbench needs and is missing (Debian packages), then configures and builds into build/.
# Usage: scripts/build.sh [extra cmake arguments]     Environment: ATTNBENCH_BUILD_DIR (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ libcli11-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev libfccp-dev
          nlohmann-json3-dev libre2-dev libtomlplusplus-dev python3 python3-matplotlib)
scripts/install_packages.sh "${packages[@]}"

build_dir="${ATTNBENCH_BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >&2
cmake --build "$build_dir" -j"$jobs" >&2

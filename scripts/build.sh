#!/usr/bin/env bash
# Installs what attnbench needs and is missing (Debian packages), then configures and builds into build/.
# Usage: scripts/build.sh [extra cmake arguments]     Environment: ATTNBENCH_BUILD_DIR (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ libcli11-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev libfccp-dev
          nlohmann-json3-dev python3 python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "attnbench: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
    { $sudo apt-get update -q >&2 && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
fi

build_dir="${ATTNBENCH_BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >&2
cmake --build "$build_dir" -j"$jobs" >&2

#!/usr/bin/env bash
# Builds the CPU test suite with AddressSanitizer + UndefinedBehaviorSanitizer (CMake option ATTNBENCH_SANITIZE)
# and runs the CPU tests under them. CUDA and the micro-benchmarks are off: only host code is sanitized.
# Usage: scripts/sanitize.sh [extra cmake arguments]
# Environment: ATTNBENCH_ASAN_DIR (build folder, default build-asan); ASAN_OPTIONS / UBSAN_OPTIONS (defaults
# below); ATTNBENCH_JOBS (parallel compile / test jobs, default nproc).
# Any sanitizer report fails the run: ASan aborts on the first error, UBSan halts (the build also passes
# -fno-sanitize-recover=undefined), LeakSanitizer reports leaks at exit. Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${ATTNBENCH_ASAN_DIR:-build-asan}"
jobs="${ATTNBENCH_JOBS:-$(nproc 2>/dev/null || echo 2)}"
generator=()
if command -v ninja >/dev/null 2>&1 && [ ! -f "$build_dir/Makefile" ]; then generator=(-G Ninja); fi

start=$(date +%s)
# -O1 -g: readable stacks at a bearable speed. _GLIBCXX_ASSERTIONS bounds-checks std::vector / string
# operator[] and friends, which ASan cannot see inside a vector's capacity.
cmake -S . -B "$build_dir" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1 -g -D_GLIBCXX_ASSERTIONS" \
  -DATTNBENCH_ENABLE_CUDA=OFF \
  -DATTNBENCH_SANITIZE=ON \
  -DATTNBENCH_BUILD_TESTS=ON \
  -DATTNBENCH_BUILD_BENCH=OFF \
  "$@" >&2
cmake --build "$build_dir" -j"$jobs" >&2
built=$(date +%s)
echo "attnbench sanitize: build $((built - start)) s" >&2

# allocator_may_return_null=1: attnbench allocates device memory with nothrow new and turns a refusal into an
# OutOfMemoryError (an `oom` row; CpuDevice.RefusedAllocation... asks for 2^62 bytes on purpose). Without it
# ASan aborts on any request above its 1 TiB limit instead of returning null.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
ctest --test-dir "$build_dir" -L cpu --output-on-failure -j"$jobs" || status=$?
echo "attnbench sanitize: tests $(($(date +%s) - built)) s, total $(($(date +%s) - start)) s, ctest exit $status" >&2
exit "$status"

#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (config_fuzz, config_toml_fuzz, trace_fuzz, results_fuzz,
# model_fuzz) with clang++
# -fsanitize=fuzzer,address,undefined against the project's own static libraries, then runs each for a bounded
# time on a copy of its seed corpus (fuzz/corpus/<target>/), all targets at once. Exits non-zero on any finding (crash, sanitizer
# report, unexpected exception, broken contract) and keeps the input that caused it.
#
# Usage: scripts/fuzz.sh [target...]            (default: all five)
# Environment:
#   FUZZ_SECONDS        seconds of fuzzing per target (default 60; 0: build only)
#   ATTNBENCH_FUZZ_DIR  build folder (default build-fuzz): libraries, binaries, working corpora, crashes
#   ATTNBENCH_JOBS      parallel compile jobs (default nproc)
# Reproduce a finding: build-fuzz/<target> build-fuzz/crashes/<target>/crash-<sha1>
# Needs clang, libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) and libomp-dev (OpenMP for clang);
# installs what is missing with apt-get, as scripts/build.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(clang libclang-rt-14-dev libomp-dev cmake ninja-build libcli11-dev libeigen3-dev libfccp-dev nlohmann-json3-dev
          libre2-dev libtomlplusplus-dev)
scripts/install_packages.sh "${packages[@]}"

build_dir="${ATTNBENCH_FUZZ_DIR:-build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
jobs="${ATTNBENCH_JOBS:-$(nproc 2>/dev/null || echo 2)}"
targets=("$@")
((${#targets[@]})) || targets=(config_fuzz config_toml_fuzz trace_fuzz results_fuzz model_fuzz)

start=$(date +%s)
# The libraries: ASan + UBSan from the project's option, plus libFuzzer's coverage instrumentation
# (fuzzer-no-link), so that the fuzzer is guided by the parsers' own branches, not only the target's.
common_flags="-O1 -g -D_GLIBCXX_ASSERTIONS"
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="$common_flags -fsanitize=fuzzer-no-link" \
  -DATTNBENCH_ENABLE_CUDA=OFF \
  -DATTNBENCH_SANITIZE=ON \
  -DATTNBENCH_BUILD_TESTS=OFF \
  -DATTNBENCH_BUILD_BENCH=OFF >&2
cmake --build "$build_dir" --target attnbench_app -j"$jobs" >&2

# The project's static libraries, each before the ones it depends on (CMakeLists.txt's layers).
libs=()
for l in app runner backends engine device kernels reference report core; do
  libs+=("$build_dir/libattnbench_$l.a")
done
for t in "${targets[@]}"; do
  [ -f "fuzz/$t.cpp" ] || { echo "attnbench fuzz: no fuzz/$t.cpp" >&2; exit 2; }
  echo "attnbench fuzz: building $build_dir/$t" >&2
  # shellcheck disable=SC2086
  clang++ -std=c++20 $common_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -Isrc -I. -I/usr/include/eigen3 "fuzz/$t.cpp" "${libs[@]}" -lre2 -fopenmp -pthread \
    -o "$build_dir/$t"
done
built=$(date +%s)
echo "attnbench fuzz: build $((built - start)) s" >&2
[ "$seconds" -gt 0 ] || exit 0

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# The targets run at the same time (one process each; on 2 cores the wall time is FUZZ_SECONDS, not 3x it).
declare -A pid
t0=$(date +%s)
for t in "${targets[@]}"; do
  corpus="$build_dir/corpus/$t"      # a working copy: the checked-in seeds stay as they are
  crashes="$build_dir/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  cp -n "fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  touch "$build_dir/.fuzz-start-$t"   # findings of this run are the files newer than this
  # -timeout: one input taking longer is a hang (a finding); -rss_limit_mb: so is using more memory.
  "$build_dir/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" >"$build_dir/$t.log" 2>&1 &
  pid[$t]=$!
done
failed=()
for t in "${targets[@]}"; do
  status=0
  wait "${pid[$t]}" || status=$?
  corpus="$build_dir/corpus/$t"
  crashes="$build_dir/crashes/$t"
  runs=$(grep -m1 -o "stat::number_of_executed_units: *[0-9]*" "$build_dir/$t.log" | grep -o "[0-9]*$" || echo "?")
  echo "attnbench fuzz: $t: exit $status, $runs inputs run, corpus $(ls "$corpus" | wc -l) inputs (log $build_dir/$t.log)" >&2
  if [ "$status" -ne 0 ]; then
    failed+=("$t")
    grep -E "ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|_fuzz finding|terminate called|what\(\)" \
      "$build_dir/$t.log" | head -n 5 >&2 || true
    find "$crashes" -type f -newer "$build_dir/.fuzz-start-$t" | while read -r f; do
      echo "attnbench fuzz: $t finding kept: $f (reproduce: $build_dir/$t $f)" >&2
    done
  fi
done
echo "attnbench fuzz: fuzzing $(($(date +%s) - t0)) s" >&2
echo "attnbench fuzz: total $(($(date +%s) - start)) s" >&2
if ((${#failed[@]})); then
  echo "attnbench fuzz: FINDINGS in ${failed[*]} (full logs: $build_dir/<target>.log)" >&2
  exit 1
fi
echo "attnbench fuzz: no findings in ${targets[*]}" >&2

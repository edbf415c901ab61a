#!/usr/bin/env bash
# What to run on a machine with a GPU (the H200): the gpu-labelled tests of the CUDA device and kernels, the
# decode timing table (TB/s and fraction of the measured copy bandwidth; never asserted), and optionally
# compute-sanitizer (memcheck on the small kernels and the decode kernel, racecheck on the decode kernel).
#
# Usage: scripts/gpu_check.sh [TEST_BINARY]
#   TEST_BINARY  attnbench_gpu_tests (default: .carry/b1/attnbench_gpu_tests if present, else
#                ${ATTNBENCH_BUILD_DIR:-build}/attnbench_gpu_tests). With a build tree present, `ctest -L gpu`
#                runs the same tests.
# Environment: OUT        directory for the logs (default ./gpu_check_out)
#              SANITIZE=1 also run compute-sanitizer (slow: a few minutes; SANITIZE_TIMEOUT s per tool, default 300)
#              FILTER     gtest filter of the correctness tests (default: every CUDA device / kernel test)
# Exit status: 1 if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bin="${1:-}"
if [ -z "$bin" ]; then
  if [ -x .carry/b1/attnbench_gpu_tests ]; then bin=.carry/b1/attnbench_gpu_tests; else bin="${ATTNBENCH_BUILD_DIR:-build}/attnbench_gpu_tests"; fi
fi
[ -x "$bin" ] || { echo "gpu_check: no test binary at $bin (build first: cmake --build build)" >&2; exit 2; }
[ -d .carry/lib ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out="${OUT:-gpu_check_out}"
mkdir -p "$out"
filter="${FILTER:-CudaDevice.*:SmallKernels.*:DecodeAttention.*:Prefill*}"
status=0

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee "$out/nvidia_smi.txt"

echo "== tests ($filter)"
"$bin" --gtest_filter="$filter" 2>&1 | tee "$out/tests.log" | grep -E '^\[ (decode|merge_state|memory|copy|environment)|FAILED|PASSED|Failure|error|Expected|Which is|actual' 
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "gpu_check: tests FAILED (log: $out/tests.log)"; status=1; }

echo "== decode timing"
"$bin" --gtest_also_run_disabled_tests --gtest_filter='DecodeAttentionBench.*' 2>&1 | tee "$out/bench.log" | grep -E '^\||decode bench|FAILED'
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "gpu_check: bench FAILED (log: $out/bench.log)"; status=1; }

if [ "${SANITIZE:-0}" = 1 ]; then
  if command -v compute-sanitizer > /dev/null; then
    echo "== compute-sanitizer memcheck"
    timeout ${SANITIZE_TIMEOUT:-300} compute-sanitizer --tool memcheck --error-exitcode 3 "$bin" \
      --gtest_filter='SmallKernels.*:DecodeAttention.SweepDtype*:DecodeAttention.SplitKv:DecodeAttention.QoIndptr:DecodeAttention.Windows*:DecodeAttention.GenericPath:DecodeAttention.GraphReplay*:CudaDevice.GraphReplay*:CudaDevice.StepPhase*' \
      > "$out/memcheck.log" 2>&1
    rc=$?; grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/memcheck.log" | tail -5; echo "memcheck rc=$rc"
    [ $rc -eq 0 ] || status=1
    echo "== compute-sanitizer racecheck (decode, shared memory)"
    timeout ${SANITIZE_TIMEOUT:-300} compute-sanitizer --tool racecheck --racecheck-report analysis --error-exitcode 3 "$bin" \
      --gtest_filter='DecodeAttention.SplitKv:DecodeAttention.QoIndptr' > "$out/racecheck.log" 2>&1
    rc=$?; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$out/racecheck.log" | tail -5; echo "racecheck rc=$rc"
    [ $rc -eq 0 ] || status=1
  else
    echo "gpu_check: compute-sanitizer not found; skipped"
  fi
fi
exit $status

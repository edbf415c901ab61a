#!/usr/bin/env bash
# One device call for the Hopper prefill kernel (kernels/cuda/prefill_hopper.cu): build (h200-build recipe),
# the prefill GPU tests on both kernels, compute-sanitizer memcheck / racecheck on a small filter, and extend
# timings through `attnbench run` with ATTNBENCH_PREFILL_KERNEL=fa2 and =hopper. Logs under $OUT (tarred).
# Usage (repository root on the device, with the prefix of h200-build.md): P=... scripts/hopper_device_check.sh
# Environment: STAGES (default "build tests sanitize run"), TEST_FILTER, SAN_FILTER.
set -uo pipefail
OUT="${OUT:-hopper_out}"
mkdir -p "$OUT"
P="${P:?P must name the carried prefix}"
stages="${STAGES:-build tests sanitize run}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
summary="$OUT/summary.txt"
: >"$summary"
if [[ " $stages " == *" build "* ]]; then
  stamp "build"
  cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-include cstdint" \
    -DCMAKE_PREFIX_PATH="$P" -DCMAKE_CUDA_ARCHITECTURES=90a -DATTNBENCH_BUILD_BENCH=OFF \
    -DFCCP_INCLUDE_DIR="$P/include" -DTOMLPP_INCLUDE_DIR="$P/include" -DRE2_INCLUDE_DIR="$P/include" \
    -DRE2_LIBRARY="$P/lib/libre2.so" >"$OUT/cmake.log" 2>&1 &&
    ninja -C build-h200 attnbench attnbench_gpu_tests >"$OUT/build.log" 2>&1
  rc=$?
  echo "build rc=$rc" | tee -a "$summary"
  [ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
  cuobjdump -sass build-h200/libattnbench_cuda.a 2>/dev/null | grep -cE "HGMMA" | sed 's/^/HGMMA instructions: /' | tee -a "$summary"
fi
bin=build-h200/attnbench_gpu_tests
if [[ " $stages " == *" tests "* ]]; then
  stamp "tests"
  timeout 200 "$bin" --gtest_filter="${TEST_FILTER:-Prefill*:PrefillAttention.*:-PrefillAttentionPerf.*}" >"$OUT/tests.log" 2>&1
  echo "tests rc=$?" | tee -a "$summary"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$OUT/tests.log" | tail -40 | tee -a "$summary"
  grep -E "hopper " "$OUT/tests.log" | sort -k4 -g -r | head -5 | sed 's/^/worst hopper: /' | tee -a "$summary"
  grep -B2 -A6 "Failure" "$OUT/tests.log" | head -60 >>"$summary"
  timeout 90 "$bin" --gtest_filter='PrefillAttentionPerf.Ragged:PrefillAttentionPerf.BlockTablePage64' >"$OUT/perf.log" 2>&1
  echo "perf rc=$?" | tee -a "$summary"
  grep -E "^(fa2|hopper) " "$OUT/perf.log" | tee -a "$summary"
fi
if [[ " $stages " == *" sanitize "* ]]; then
  f="${SAN_FILTER:-Prefill/PrefillAttentionCases.ragged_causal_prefix:Prefill/PrefillAttentionCases.pages_window_sinks_softcap:Prefill/PrefillAttentionCases.bf16_d256_g3:Prefill/PrefillAttentionCases.fp16_d64_g16}"
  for tool in memcheck racecheck; do
    stamp "sanitizer $tool"
    timeout 120 compute-sanitizer --tool $tool "$bin" --gtest_filter="$f" >"$OUT/san_$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_$tool.log" | tail -1)" | tee -a "$summary"
  done
fi
if [[ " $stages " == *" run "* ]]; then
  for k in fa2 hopper; do
    stamp "attnbench run $k"
    ATTNBENCH_PREFILL_KERNEL=$k timeout 150 build-h200/attnbench run --model llama-3.1-8b --mode extend \
      --extend-batch 1,4 --extend-len 4096 --prefix-len 0,4096 --backend flashinfer --layers 1 --page-size 64 \
      --device cuda --out "$OUT/run_$k.csv" >"$OUT/run_$k.log" 2>&1
    echo "run $k rc=$?" | tee -a "$summary"
    python3 - "$OUT/run_$k.csv" "$k" <<'PY' | tee -a "$summary"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r.get("mode") != "extend": continue
    print(sys.argv[2], r.get("backend"), r.get("timing"), "b=" + r.get("batch", "?"),
          "prefix=" + r.get("prefix_len_mean", "?"), "status=" + r.get("status", "?"), "ref_pass=" + r.get("ref_pass", "?"),
          "ref_max_abs=" + r.get("ref_max_abs_err", "?"), "fwd_us=" + r.get("forward_median_us", "?"),
          "tflops=" + r.get("tflops", "?"), r.get("note", "")[:80])
PY
  done
fi
stamp "done"
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.csv 2>/dev/null) 2>/dev/null
cat "$summary"

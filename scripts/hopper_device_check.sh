#!/usr/bin/env bash
# One device call for the Hopper prefill kernel (kernels/cuda/prefill_hopper.cu): build (h200-build recipe),
# the prefill GPU tests on both kernels (each Hopper variant), extend timings through `attnbench run` with
# ATTNBENCH_PREFILL_KERNEL=fa2 / unset / hopper (the Hopper kernel for every addressing mode), compute-sanitizer memcheck
# and racecheck on seven small cases, and the kernels' TFLOP/s table (ragged, page 64). Logs under $OUT (required).
# Usage (repository root on the device): scripts/hopper_device_check.sh (P: the prefix holding what the device
# lacks, default .carry/prefix, unpacked from a carried .carry/pfx/prefix.tgz when missing)
# Environment: STAGES (default "build tests run sanitize perf"); VARIANTS: the ATTNBENCH_HOPPER_VARIANT values
# the tests and the TFLOP/s table run (default "2 3"); RUN_KERNELS: attnbench runs, each fa2, auto (the
# variable unset) or hopperN (ATTNBENCH_PREFILL_KERNEL=hopper, ATTNBENCH_HOPPER_VARIANT=N; default
# "fa2 auto hopper2 hopper3"); PERF_FILTER (default the ragged and page-64 tables);
# SAN_VARIANT (the variant under compute-sanitizer, default 3); SAN_EXTRA (more gtest patterns for it, ':'-joined).
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
mkdir -p "$OUT"
if [ -z "${P:-}" ] && [ ! -d .carry/prefix ] && [ -f .carry/pfx/prefix.tgz ]; then tar -C .carry -xzf .carry/pfx/prefix.tgz; fi
P="${P:-$PWD/.carry/prefix}"
stages="${STAGES:-build tests run sanitize perf}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
t0=$(date +%s)
summary="$OUT/summary.txt"
: >"$summary"
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$summary"; }
has() { [[ " $stages " == *" $1 "* ]]; }
bin=build-h200/attnbench_gpu_tests
if has build; then
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
if has tests; then
  for v in ${VARIANTS:-2 3}; do
    stamp "tests variant=$v"
    ATTNBENCH_HOPPER_VARIANT=$v timeout 60 "$bin" --gtest_filter='Prefill*:PrefillAttention.*:-PrefillAttentionPerf.*' >"$OUT/tests_v$v.log" 2>&1
    echo "tests variant=$v rc=$?" | tee -a "$summary"
    grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/tests_v$v.log" | tail -20 | tee -a "$summary"
    grep -E "^  hopper " "$OUT/tests_v$v.log" | sort -k4 -g -r | head -2 | sed 's/^/worst hopper: /' | tee -a "$summary"
    grep -B2 -A6 "Failure" "$OUT/tests_v$v.log" | head -40 >>"$summary"
  done
fi
if has run; then
  for k in ${RUN_KERNELS:-fa2 auto hopper2 hopper3}; do
    stamp "attnbench run $k"
    kern=$k; v=0
    case $k in hopper*) kern=hopper; v=${k#hopper} ;; auto) kern="" ;; esac
    ATTNBENCH_PREFILL_KERNEL=$kern ATTNBENCH_HOPPER_VARIANT=$v timeout 60 build-h200/attnbench run \
      --model llama-3.1-8b --mode extend --extend-batch 1,4 --extend-len 4096 --prefix-len 0,4096 \
      --backend flashinfer --layers 1 --page-size 64 --max-samples 20 --device cuda --out "$OUT/run_$k.csv" \
      >"$OUT/run_$k.log" 2>&1
    echo "run $k rc=$?" | tee -a "$summary"
    python3 - "$OUT/run_$k.csv" "$k" <<'PY' 2>&1 | tee -a "$summary"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r.get("mode") != "extend": continue
    print(sys.argv[2], r.get("backend"), r.get("timing"), "b=" + r.get("batch", "?"),
          "prefix=" + r.get("prefix_len_mean", "?"), "status=" + r.get("status", "?"), "ref_pass=" + r.get("ref_pass", "?"),
          "ref_max_abs=" + r.get("ref_max_abs_err", "?"), "fwd_us=" + r.get("forward_median_us", "?"),
          "tflops=" + r.get("tflops", "?"), r.get("note", "")[:60])
PY
  done
fi
if has sanitize; then
  m=Prefill/PrefillAttentionCases.MatchesCpuTwin
  f="$m/pages_window_sinks_softcap:$m/bf16_d128_g3*:$m/ragged_causal_prefix:$m/pages64_boundaries:$m/bf16_d256_g4*:$m/fp16_d256_g3*:$m/tokens_window_sinks_softcap"
  for tool in memcheck racecheck; do
    stamp "sanitizer $tool"
    ATTNBENCH_HOPPER_VARIANT=${SAN_VARIANT:-3} timeout 60 compute-sanitizer --tool $tool "$bin" \
      --gtest_filter="$f${SAN_EXTRA:+:$SAN_EXTRA}" >"$OUT/san_$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/san_$tool.log" | tr '\n' ' ')" | tee -a "$summary"
  done
fi
if has perf; then
  for v in ${VARIANTS:-2 3}; do
    stamp "perf variant=$v"
    ATTNBENCH_HOPPER_VARIANT=$v timeout 100 "$bin" --gtest_filter="${PERF_FILTER:-PrefillAttentionPerf.Ragged:PrefillAttentionPerf.BlockTablePage64}" >"$OUT/perf_v$v.log" 2>&1
    echo "perf variant=$v rc=$?" | tee -a "$summary"
    grep -E "^(fa2|hopper) " "$OUT/perf_v$v.log" | sed "s/^/v$v /" | tee -a "$summary"
  done
fi
stamp "done"

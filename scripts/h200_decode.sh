#!/usr/bin/env bash
# Decode kernel evidence on the H200 in one device call (kernels/cuda/decode_attention.cu: fp8 KV and head_dim
# 256): the decode GPU tests, the read-dominated decode cases' bandwidth (fp8_e4m3, bf16, fp8_e5m2; Llama-3.1-8B
# and Gemma-3-12B, b 64 / 256, kv 4096) with compute-sanitizer memcheck and racecheck on the fp8 tests between. Each
# step gets what is left of BUDGET seconds (default 170), so a slow step cannot starve the ones before it.
# Usage (from the source root, after building per /work/briefs/h200-build.md or with BUILD=1 and PREFIX set):
#   OUT=dir BIN=build-h200 scripts/h200_decode.sh
set -uo pipefail
out="${OUT:-results/local/h200-decode}"
bin="${BIN:-build-h200}"
budget="${BUDGET:-170}"
mkdir -p "$out"
t0=$(date +%s)
left() { echo $(( budget - ($(date +%s) - t0) )); }
step() {  # step NAME CAP CMD...: runs CMD with timeout min(CAP, time left - 5), output to $out/NAME.log
  local name=$1 cap=$2; shift 2
  local t=$(( $(left) - 5 )); (( t > cap )) && t=$cap
  if (( t < 5 )); then echo "[$(( $(date +%s) - t0 ))s] skip $name (no time left)"; return; fi
  echo "[$(( $(date +%s) - t0 ))s] $name (timeout ${t}s)"
  timeout "$t" "$@" > "$out/$name.log" 2>&1
  echo "  exit $?"
}
if [ "${BUILD:-0}" = 1 ]; then
  P="${PREFIX:?PREFIX}"
  step build 120 bash -c "cmake -S . -B $bin -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS='-include cstdint' \
    -DCMAKE_PREFIX_PATH=$P -DCMAKE_CUDA_ARCHITECTURES=90a -DATTNBENCH_BUILD_BENCH=OFF -DFCCP_INCLUDE_DIR=$P/include \
    -DTOMLPP_INCLUDE_DIR=$P/include -DRE2_INCLUDE_DIR=$P/include -DRE2_LIBRARY=$P/lib/libre2.so && ninja -C $bin attnbench attnbench_gpu_tests"
  tail -n 5 "$out/build.log"
fi
step tests 30 "$bin/attnbench_gpu_tests" --gtest_filter='DecodeAttention.*'
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure|Expected|Which is" "$out/tests.log" | head -20
grep -E "decode \].*(D=256|fp8)" "$out/tests.log" | head -4
sweep() {  # sweep KV_DTYPE
  step "sweep-$1" 30 "$bin/attnbench" run --model llama-3.1-8b,gemma-3-12b --layers 4 --mode decode --batch 64,256 \
    --kv-len 4096 --page-size 64 --attention-backend flashinfer,trtllm_mha --timing eager --kv-cache-dtype "$1" \
    --time-budget 0.2 --max-samples 20 -q --out "$out/sweep-$1.csv"
  python3 - "$out/sweep-$1.csv" <<'PY'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1])))
except OSError:
    sys.exit(0)
for r in rows:
    print(f"{r['case_id'][7:]:62s} {r['backend']:11s} {r['status']:4s} ref_pass={r['ref_pass']} "
          f"tb_per_s={float(r['tb_per_s'] or 'nan'):.3f} bw_fraction={float(r['bw_fraction'] or 'nan'):.3f}")
PY
}
sweep fp8_e4m3
step memcheck 35 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/attnbench_gpu_tests" \
  --gtest_filter='DecodeAttention.Fp8*:DecodeAttention.SweepDtypeHeadDimGroupAddressing'
grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/memcheck.log" | tail -3
step racecheck 30 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/attnbench_gpu_tests" \
  --gtest_filter='DecodeAttention.Fp8KvEveryCode*'
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$out/racecheck.log" | tail -3
sweep auto
sweep fp8_e5m2
echo "[$(( $(date +%s) - t0 ))s] done"

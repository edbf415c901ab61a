#!/usr/bin/env bash
# fp8 KV on the tensor-core prefill kernel (issue 16) on the H200, after results/h200/prefill-fp8/'s patch:
# build (h200-build recipe), the whole GPU suite, the prefill kernel's TFLOP/s over a bf16 and an e4m3 pool,
# configs/fp8-evidence.toml's Llama-3.1-8B cases (all modes, all backends), SGLang's kit shapes on the GPU
# (tests/data/sglang-kit/), and compute-sanitizer on the fp8 prefill tests. Logs and CSVs under $OUT.
# Usage (repository root on the device, .carry/prefix carried): scripts/h200_fp8_prefill.sh
# Environment: STEPS (default "build tests perf evidence kit"; "sanitize" runs memcheck and racecheck).
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
mkdir -p "$OUT"
P="$PWD/.carry/prefix"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
steps="${STEPS:-build tests perf evidence kit}"
has() { [[ " $steps " == *" $1 "* ]]; }
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
b=build-h200
if has build; then
  stamp build
  STAGES=build P="$P" OUT="$OUT/build" scripts/hopper_device_check.sh >/dev/null 2>&1 || { tail -30 "$OUT/build/build.log"; exit 1; }
fi
{ nvidia-smi; nvidia-smi -q -d CLOCK | head -40; } > "$OUT/nvidia-smi.txt" 2>&1
"$b/attnbench" env > "$OUT/env.txt" 2>&1
if has tests; then
  stamp "gpu tests"
  timeout 240 "$b/attnbench_gpu_tests" > "$OUT/gpu-tests.log" 2>&1; echo "gpu tests exit $?"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]|ran\. \(" "$OUT/gpu-tests.log" | tail -12
  grep -E "^ *fa2 fp8|expected the tensor" "$OUT/gpu-tests.log" | sort -t= -k2 -g | tail -3
fi
if has perf; then
  stamp perf
  timeout 90 "$b/attnbench_gpu_tests" --gtest_filter='PrefillAttentionPerf.BlockTablePage64*' > "$OUT/perf.log" 2>&1
  echo "perf exit $?"; grep -vE "^\[|^$|^Note" "$OUT/perf.log" | head -30
fi
if has evidence; then
  stamp "fp8 evidence (llama-3.1-8b)"
  timeout 200 "$b/attnbench" run --config configs/fp8-evidence.toml --filter '^[a-z]+/llama-3.1-8b/' --device cuda \
    --out "$OUT/model.csv" --json "$OUT/model.json" > "$OUT/model.txt" 2> "$OUT/model.log"
  echo "evidence exit $?"; tail -n 2 "$OUT/model.txt"; grep -E "^\[[0-9]+/" "$OUT/model.log" | grep extend | cut -c1-300
fi
if has kit; then
  stamp "kit shapes"
  for m in mha gqa mqa swa; do
    timeout 60 "$b/attnbench" validate --device cuda --model tests/data/sglang-kit/kit-$m.json --mode decode,extend,verify \
      --page-size 16,32,64,128 --batch 3 --kv-len 15 --prefix-len 16 --extend-len 17 --draft-tokens 3 --backend all \
      --out "$OUT/kit-$m.csv" > "$OUT/kit-$m.txt" 2>&1
    echo "kit-$m exit $? $(tail -n 1 "$OUT/kit-$m.txt")"
  done
fi
if has sanitize; then
  stamp memcheck
  timeout 150 compute-sanitizer --tool memcheck "$b/attnbench_gpu_tests" --gtest_filter='PrefillAttention.Fp8*' > "$OUT/memcheck.log" 2>&1
  echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/memcheck.log" | tr '\n' ' ')"
  stamp racecheck
  timeout 150 compute-sanitizer --tool racecheck "$b/attnbench_gpu_tests" \
    --gtest_filter='PrefillAttention.Fp8KvAgainstCpuTwin:PrefillAttention.Fp8LongExtendTensorCores' > "$OUT/racecheck.log" 2>&1
  echo "racecheck exit $? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' "$OUT/racecheck.log" | tr '\n' ' ')"
fi
stamp done

#!/usr/bin/env bash
# Session 17 device call: build HEAD, the whole GPU suite, the new config classes through validate on cuda,
# the fp8 decode evidence rows (graph), all under $OUT, tarred into one file.
set -uo pipefail
R=$OUT/r; mkdir -p $R
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
stamp build
OUT=$R STEPS=build scripts/h200_ncu.sh > $R/build-step.log 2>&1; echo "build rc=$?"; tail -3 $R/build-step.log
ab=build-h200/attnbench
$ab env > $R/env.txt 2>&1; nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp "gpu suite"
timeout 420 build-h200/attnbench_gpu_tests --gtest_filter='-*Perf*:*Bench*' > $R/gpu-tests.log 2>&1
echo "gpu suite rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $R/gpu-tests.log | tr '\n' ' ')"; grep -E "FAILED  \]" $R/gpu-tests.log | head
stamp "configs"
for f in fuzz/corpus/model_fuzz/grok-1.json .carry/ab/phi-3.5-moe.json .carry/ab/starcoder2-15b.json; do
  n=$(basename $f .json)
  timeout 120 $ab validate --model $f --layers 2 --device cuda --mode decode,extend,verify --batch 4 --kv-len 1024 \
    --prefix-len 512 --extend-len 256 --out $R/validate-$n.csv > $R/validate-$n.txt 2> $R/validate-$n.log
  echo "$n rc=$? $(tail -n 1 $R/validate-$n.txt)"
  timeout 60 $ab memory --model $f --device cuda > $R/memory-$n.txt 2>&1; echo "memory $n rc=$?"
done
stamp "fp8 decode"
timeout 200 $ab run --config configs/fp8-evidence.toml --filter '^decode/llama-3.1-8b/' --timing graph --device cuda \
  --backend trtllm_mha,flashinfer --out $R/fp8-decode.csv > $R/fp8-decode.txt 2> $R/fp8-decode.log
echo "fp8 decode rc=$? $(tail -n 1 $R/fp8-decode.txt)"
stamp done
tar -C $OUT -czf $OUT/all.tgz r && rm -rf $R

#!/usr/bin/env bash
# Session 17, second device call: build HEAD, the GPU suite, Cohere2 (Command-R7B's attention shape) through
# validate and run on cuda past its 4096-token window, memory; everything tarred into one file.
set -uo pipefail
R=$OUT/r; mkdir -p $R
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
stamp build
OUT=$R STEPS=build scripts/h200_ncu.sh > $R/build-step.log 2>&1; echo "build rc=$?"
ab=build-h200/attnbench
$ab env > $R/env.txt 2>&1; nvidia-smi > $R/nvidia-smi.txt 2>&1
stamp "gpu suite"
timeout 300 build-h200/attnbench_gpu_tests --gtest_filter='-*Perf*:*Bench*' > $R/gpu-tests.log 2>&1
echo "gpu suite rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $R/gpu-tests.log | tr '\n' ' ')"; grep -E "FAILED  \]" $R/gpu-tests.log | head
M=.carry/ab/command-r7b-shape.json
stamp "cohere2 validate"
timeout 200 $ab validate --model $M --layers 4 --device cuda --mode decode,extend,verify --batch 4 --kv-len 2048,8192 \
  --prefix-len 6144 --extend-len 1024 --out $R/validate-cohere2.csv > $R/validate-cohere2.txt 2> $R/validate-cohere2.log
echo "validate rc=$? $(tail -n 1 $R/validate-cohere2.txt)"
stamp "cohere2 run"
timeout 200 $ab run --model $M --layers 4 --device cuda --mode decode --batch 16,64 --kv-len 16384 --timing eager,graph \
  --out $R/run-cohere2.csv > $R/run-cohere2.txt 2> $R/run-cohere2.log
echo "run rc=$? $(tail -n 1 $R/run-cohere2.txt)"
timeout 60 $ab memory --model $M --device cuda > $R/memory-cohere2.txt 2>&1; echo "memory rc=$?"
stamp done
tar -C $OUT -czf $OUT/all.tgz r && rm -rf $R

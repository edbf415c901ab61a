#!/usr/bin/env bash
# head_dim 64 batch sweep of the experiment binary (exp.patch beside this file, built for sm_90a and packed as
# .carry/bz2/x2.tgz: `attnbench` only): its default depth (a) against ATTNBENCH_X_SMALLM_STAGES=2 (b), trtllm_mha,
# graph, 2 alternating rounds, fp8 e4m3 and bf16. BATCHES and KV_LENS (comma lists) override the sweep of the
# 2026-12-07 run (b = 4-256, kv 4096). Usage (repository root on the device, carrying .carry/pfx and .carry/bz2):
#   OUT=$OUT bash results/h100/small-m-stages-2026-12-07/x4.sh
set -uo pipefail
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
export LD_LIBRARY_PATH="$PWD/.carry/prefix/lib"
mkdir -p build-x2 && tar -C build-x2 -xzf .carry/bz2/x2.tgz
W=/tmp/x4; rm -rf $W; mkdir -p $W/ab; nvidia-smi --query-gpu=name --format=csv,noheader > $W/gpu.txt
t0=$(date +%s)
trap 'tar -C /tmp -czf $OUT/x4.tgz x4' EXIT
for r in 1 2; do for v in a b; do for kind in fp8 bf16; do
  e=(); [ $v = b ] && e=(ATTNBENCH_X_SMALLM_STAGES=2)
  kv=fp8_e4m3; [ $kind = bf16 ] && kv=auto
  env "${e[@]}" timeout 60 build-x2/attnbench run --model tests/data/gpt-oss-20b/config.json,tests/data/llama-3.2-1b.json \
    --mode decode --batch ${BATCHES:-4,8,12,16,24,32,48,64,128,256} --kv-len ${KV_LENS:-4096} --kv-cache-dtype $kv --layers 2 --page-size 64 \
    --backend trtllm_mha --timing graph --device cuda --time-budget 0.2 --out $W/ab/$kind-$v-$r.csv > $W/ab/$kind-$v-$r.log 2>&1
  echo "[$(( $(date +%s) - t0 ))s] $kind $v r$r rc=$? $(tail -1 $W/ab/$kind-$v-$r.log | cut -c1-90)"
done; done; done
python3 scripts/ab_summary.py $W/ab 2 a b | tee $W/summary.txt

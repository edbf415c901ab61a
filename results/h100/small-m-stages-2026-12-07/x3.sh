#!/usr/bin/env bash
# The head_dim 64 / 256 A/B of the experiment binary (exp.patch beside this file, .carry/bz2/x2.tgz): its default
# depth (a) against ATTNBENCH_X_SMALLM_STAGES=2 (b), three models, both backends, 2 rounds. OUT=$OUT bash x3.sh
set -uo pipefail
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
export LD_LIBRARY_PATH="$PWD/.carry/prefix/lib"
mkdir -p build-x2 && tar -C build-x2 -xzf .carry/bz2/x2.tgz
W=/tmp/x3; rm -rf $W; mkdir -p $W/ab; nvidia-smi --query-gpu=name --format=csv,noheader > $W/gpu.txt
t0=$(date +%s)
for r in 1 2; do for v in a b; do for kind in fp8 bf16; do
  e=(); [ $v = b ] && e=(ATTNBENCH_X_SMALLM_STAGES=2)
  kv=fp8_e4m3; [ $kind = bf16 ] && kv=auto
  env "${e[@]}" timeout 100 build-x2/attnbench run --model tests/data/gpt-oss-20b/config.json,tests/data/llama-3.2-1b.json,gemma-3-12b \
    --mode decode --batch 16,64 --kv-len 4096,16384 --kv-cache-dtype $kv --layers 4 --page-size 64 \
    --backend trtllm_mha,flashinfer --timing graph --device cuda --time-budget 0.3 --out $W/ab/$kind-$v-$r.csv > $W/ab/$kind-$v-$r.log 2>&1
  echo "[$(( $(date +%s) - t0 ))s] $kind $v r$r rc=$? $(tail -1 $W/ab/$kind-$v-$r.log | cut -c1-90)"
done; done; done
python3 scripts/ab_summary.py $W/ab 2 a b | tee $W/summary.txt
tar -C /tmp -czf $OUT/x3.tgz x3

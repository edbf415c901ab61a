#!/usr/bin/env bash
# The wide CTAs' default (two stages, the even split) against the old one (ATTNBENCH_DECODE_WIDE_STAGES=3
# ATTNBENCH_DECODE_TAIL=1) on the decode grids of three models' fp8 pools where the 8-warp CTAs run (b = 1-32,
# kv 4k / 16k; trtllm_mha and flashinfer, graph, 2 alternating rounds), then racecheck of the tail-split test (the
# default case included). Binaries from .carry/bz/main.tgz. Everything in $OUT/all.tgz, re-made after each step.
# Usage (repository root on the device, carrying .carry/pfx and .carry/bz): OUT=$OUT <this folder>/models_ab.sh
set -uo pipefail
OUT="${OUT:?}"; W=/tmp/models-ab; rm -rf "$W"; mkdir -p "$W/ab"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$W/gpu.txt"
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
export LD_LIBRARY_PATH="$PWD/.carry/prefix/lib"
mkdir -p build-main && tar -C build-main -xzf .carry/bz/main.tgz
M=build-main/attnbench; T=build-main/attnbench_gpu_tests
t0=$(date +%s)
at() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$W/summary.txt"; tar -C "$W" -czf "$OUT/all.tgz" .; cp "$W/summary.txt" "$OUT/"; }
$M env > "$W/env.txt" 2>&1
for r in 1 2; do
  for v in a b; do
    e=(); [ "$v" = b ] && e=(ATTNBENCH_DECODE_WIDE_STAGES=3 ATTNBENCH_DECODE_TAIL=1)
    env "${e[@]}" timeout 120 $M run --model llama-3.1-8b,qwen2.5-7b,llama-3.1-70b-tp8 --mode decode \
      --batch 1,4,16,32 --kv-len 4096,16384 --kv-cache-dtype fp8_e4m3 --layers 4 --page-size 64 \
      --backend trtllm_mha,flashinfer --timing graph --device cuda --time-budget 0.3 \
      --out "$W/ab/fp8-$v-$r.csv" > "$W/ab/fp8-$v-$r.log" 2>&1
    at "ab $v r$r rc=$? $(tail -1 "$W/ab/fp8-$v-$r.log" | cut -c1-120)"
  done
done
python3 scripts/ab_summary.py "$W/ab" 2 a b > "$W/ab/summary.txt" 2>&1; cat "$W/ab/summary.txt"; at "summary written"
timeout 330 compute-sanitizer --tool racecheck $T --gtest_filter='DecodeAttention.TailSplitAgainstCpuTwin' \
  > "$W/racecheck.log" 2>&1
at "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' "$W/racecheck.log" | tr '\n' ' ')"

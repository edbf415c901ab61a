#!/usr/bin/env bash
# A/B of the decode kernel on one H200, same process conditions: the working tree's kernels/cuda/decode_attention.cu
# ("new") against another version of the file ("old", OLD=path), both built into build-h200 (the old one by
# scripts/ab_relink.sh: the file swapped in, attnbench relinked, put back), then the Llama-3.1-8B decode rows of
# configs/fp8-evidence.toml (fp8 e4m3) and configs/pr-evidence.toml (bf16) with graph timing, alternating old / new for ROUNDS rounds, and ncu
# (--clock-control none) of two fp8 cases with each binary. Everything under $OUT, packed into one archive.
# Usage (repository root on the device): OUT=... OLD=.carry/ab/decode_attention_old.cu scripts/h200_decode_ab.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
OLD="${OLD:?OLD must name the other decode_attention.cu}"
ROUNDS="${ROUNDS:-2}"
mkdir -p "$OUT"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
stamp build
STEPS=build OUT="$OUT/build" scripts/h200_ncu.sh > "$OUT/build.txt" 2>&1 || { tail -20 "$OUT/build.txt"; exit 1; }
P="${P:-$PWD/.carry/prefix}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cp build-h200/attnbench /tmp/ab-new
scripts/ab_relink.sh kernels/cuda/decode_attention.cu "$OLD" attnbench /tmp/ab-old "$OUT/build-old.log" || exit 1
stamp "built old and new"
/tmp/ab-new env > "$OUT/env.txt" 2>&1
for r in $(seq 1 "$ROUNDS"); do
  for v in old new; do
    timeout 120 /tmp/ab-$v run --config configs/fp8-evidence.toml --filter '^decode/llama-3.1-8b/' --timing graph \
      --device cuda --backend trtllm_mha --out "$OUT/fp8-$v-$r.csv" > "$OUT/fp8-$v-$r.txt" 2>&1
    timeout 120 /tmp/ab-$v run --config configs/pr-evidence.toml --filter '^decode/llama-3.1-8b/' --timing graph \
      --device cuda --backend trtllm_mha --out "$OUT/bf16-$v-$r.csv" > "$OUT/bf16-$v-$r.txt" 2>&1
    stamp "round $r $v: $(tail -n 1 "$OUT/fp8-$v-$r.txt" | cut -c1-60)"
  done
done
scripts/ab_summary.py "$OUT" "$ROUNDS" old new | tee "$OUT/summary.txt"
stamp ncu
for v in old new; do
  for c in "256 1024" "16 16384" "64 4096"; do
    set -- $c
    timeout 120 ncu --clock-control none -k regex:decode_mma --launch-count 1 --section SpeedOfLight \
      --section InstructionStats --section LaunchStats --section SchedulerStats /tmp/ab-$v run --device cuda \
      --timing eager --warmup 0 --min-samples 1 --max-samples 2 --model llama-3.1-8b --mode decode --page-size 64 \
      --layers 1 --batch "$1" --kv-len "$2" --kv-cache-dtype fp8_e4m3 --backend trtllm_mha --out "$OUT/ncu-$v-b$1.csv" \
      > "$OUT/ncu-$v-b$1-kv$2.txt" 2>&1
    echo "ncu $v b=$1 kv=$2: $(grep -E '^ +(Duration|Executed Instructions |DRAM Throughput|Registers Per|Grid Size|SM Frequency)' \
      "$OUT/ncu-$v-b$1-kv$2.txt" | awk '{print $1,$2,$NF}' | tr '\n' ' ')"
  done
done
stamp done
(cd "$OUT" && tar -czf /tmp/ab-all.tgz . && find . -mindepth 1 -delete && mv /tmp/ab-all.tgz .)

#!/usr/bin/env bash
# Experiment only: per-CTA timestamps of trtllm_mha's fp8 decode at b=16 x 16k with the tail split and with the even
# split (ATTNBENCH_DECODE_TAIL=0), as ../../cta-trace-2026-12-02/ took them before the tail split. trace.patch is that
# folder's patch brought to the kernel of 40e5164 (same stamps: start, after the key loop, after the partial writes,
# after the in-kernel merge, %smid). One device call on an H200 (the card is checked first), from the repository root,
# carrying .carry/pfx: OUT=... results/h200/fp8/tail-split-2026-12-06/trace/run_trace.sh
set -uo pipefail
OUT="${OUT:?}"; mkdir -p "$OUT"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$name" | tee "$OUT/gpu.txt"
case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
here=results/h200/fp8/tail-split-2026-12-06/trace
git apply "$here/trace.patch" 2>/dev/null || patch -p1 < "$here/trace.patch" || exit 1
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
P="$PWD/.carry/prefix"; export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake -S . -B build-tr -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-include cstdint" \
  -DCMAKE_CUDA_FLAGS=-DATTNBENCH_DECODE_TRACE=1 -DCMAKE_PREFIX_PATH="$P" -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DATTNBENCH_BUILD_BENCH=OFF -DFCCP_INCLUDE_DIR="$P/include" -DTOMLPP_INCLUDE_DIR="$P/include" \
  -DRE2_INCLUDE_DIR="$P/include" -DRE2_LIBRARY="$P/lib/libre2.so" >"$OUT/cmake.log" 2>&1 &&
  ninja -C build-tr attnbench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
for v in tail even; do
  mkdir -p "$OUT/$v"
  env $([ $v = even ] && echo ATTNBENCH_DECODE_TAIL=0) ATTNBENCH_DECODE_TRACE_DIR="$OUT/$v" timeout 120 \
    build-tr/attnbench run --model llama-3.1-8b --mode decode --layers 6 --page-size 64 --kv-cache-dtype fp8_e4m3 \
    --batch 16 --kv-len 16384 --timing eager --disable-cuda-graph --device cuda --backend trtllm_mha \
    --out "$OUT/$v/rows.csv" >"$OUT/$v/run.log" 2>&1
  echo "$v rc=$? $(ls "$OUT/$v")"
done
python3 "$here/trace_stats.py" "$OUT"/tail/*.bin "$OUT"/even/*.bin | tee "$OUT/stats.txt"

#!/usr/bin/env bash
# One device call for trtllm_mha's tail split (kSplitKvTail, kernels/cuda/decode_attention.cu resolve_tail_split):
# on an H200 only (the card is checked first; another card runs nothing). Measurement first, so that a call cut by
# the session's device time still brings the figures back: build (scripts/hopper_device_check.sh step build) unless
# build-h200 holds the binaries; the A/B of the tail split against the even 2-chunk split
# (scripts/h200_decode_env_ab.sh, ENV_B='ATTNBENCH_DECODE_TAIL=0', Llama-3.1-8B decode at b = 16, 3 rounds); the
# issue's read-dominated fp8 decode shapes (configs/fp8-evidence.toml: b=16 x 16k, b=64 and 256) on trtllm_mha and
# flashinfer, graph timing; then the decode GPU tests and compute-sanitizer memcheck on
# DecodeAttention.TailSplitAgainstCpuTwin. Logs go to a work folder; $OUT holds gpu.txt, summary.txt and all.tgz
# (the work folder), re-made after every step (a call returns at most 8 files).
# Usage (repository root on the device, carrying .carry/pfx): OUT=... scripts/h200_decode_tail_check.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
mkdir -p "$OUT"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$name" | tee "$OUT/gpu.txt"
case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
W=/tmp/tail-check
rm -rf "$W" && mkdir -p "$W" && cp "$OUT/gpu.txt" "$W/"
t0=$(date +%s)
at() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; tar -C "$W" -czf "$OUT/all.tgz" .; }
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
P="$PWD/.carry/prefix"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -x build-h200/attnbench ] || [ ! -x build-h200/attnbench_gpu_tests ]; then
  STAGES=build OUT="$W/build" scripts/hopper_device_check.sh 2>&1 | tail -3
fi
at "built: $(tail -1 "$W/build/summary.txt" 2>/dev/null)"
OUT="$W/ab" FILTER='^decode/llama-3.1-8b/L=6/b=16/' ENV_B='ATTNBENCH_DECODE_TAIL=0' ROUNDS=3 BACKEND=trtllm_mha \
  timeout 240 scripts/h200_decode_env_ab.sh >"$W/ab.log" 2>&1
at "a/b rc=$?"; cat "$W/ab/summary.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
mkdir -p "$W/final"
timeout 200 build-h200/attnbench run --config configs/fp8-evidence.toml \
  --filter '^decode/llama-3.1-8b/L=6/b=(16/kv=16384|64|256)/' --timing graph --device cuda \
  --backend trtllm_mha,flashinfer --out "$W/final/fp8-decode.csv" >"$W/final/run.log" 2>&1
at "final rc=$? $(tail -1 "$W/final/run.log" | cut -c1-200)"
timeout 200 build-h200/attnbench_gpu_tests --gtest_filter='DecodeAttention.*' >"$W/dtests.log" 2>&1
at "decode tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$W/dtests.log" | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool memcheck build-h200/attnbench_gpu_tests \
  --gtest_filter=DecodeAttention.TailSplitAgainstCpuTwin >"$W/memcheck.log" 2>&1
at "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$W/memcheck.log")"

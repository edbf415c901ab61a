#!/usr/bin/env bash
# One device call for the decode launch that overlaps the step's KV write (AttentionParams::after_kv_write,
# kernels/cuda/decode_attention.cu kv_write_overlap): on an H200 (or, with ALLOW_H100=1, an H100: the card is named in
# gpu.txt). What matters most first, so that a call cut short still brings it back: build
# (scripts/hopper_device_check.sh step build) unless build-h200 holds the binaries; the overlap's GPU test; the A/B of
# the overlap against the plain launch (scripts/h200_decode_env_ab.sh, ENV_B='ATTNBENCH_DECODE_KV_OVERLAP=0', the
# Llama-3.1-8B b=16 decode rows of configs/fp8-evidence.toml and configs/pr-evidence.toml, trtllm_mha and flashinfer,
# 3 rounds); the issue's read-dominated fp8 decode shapes (b=16 x 16k, b=64 and 256) on both backends, graph timing;
# the decode, small-kernel and graph-row GPU tests; the overlap's test with ATTNBENCH_DECODE_KV_OVERLAP_TEST=nowait (no CTA
# waits: it must fail there); memcheck on it; the tail pieces' size at b=16 x 16k (ATTNBENCH_DECODE_TAIL_DIV=16 and
# 64 against the committed span / 32); the A/B at b = 1, 64, 256 (2 rounds); racecheck on the overlap's test.
# Logs go to a work folder; $OUT holds gpu.txt, summary.txt and all.tgz (the work folder), re-made after every step.
# Usage (repository root on the device, carrying .carry/pfx): OUT=... scripts/h200_decode_overlap_check.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
mkdir -p "$OUT"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$name" | tee "$OUT/gpu.txt"
case "$name" in *H200*) ;; *H100*) [ "${ALLOW_H100:-0}" = 1 ] || { echo "not an H200: nothing run"; exit 0; } ;;
  *) echo "not a Hopper card: nothing run"; exit 0 ;; esac
export ATTNBENCH_DECODE_KV_OVERLAP=1  # (kKvOverlapByDefault is false until this run has said yes)
W=/tmp/overlap-check
rm -rf "$W" && mkdir -p "$W" && cp "$OUT/gpu.txt" "$W/"
t0=$(date +%s)
at() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; tar -C "$W" -czf "$OUT/all.tgz" .; }
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
P="$PWD/.carry/prefix"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -f .carry/bz/bin.tgz ] && mkdir -p .carry/bin && tar -C .carry/bin -xzf .carry/bz/bin.tgz  # (carried packed)
if [ -x .carry/bin/attnbench ] && [ -x .carry/bin/attnbench_gpu_tests ]; then  # binaries built elsewhere (sm_90a)
  mkdir -p build-h200 "$W/build" && cp .carry/bin/attnbench .carry/bin/attnbench_gpu_tests build-h200/ &&
    echo "carried binaries" >"$W/build/summary.txt"
fi
if [ ! -x build-h200/attnbench ] || [ ! -x build-h200/attnbench_gpu_tests ]; then
  STAGES=build OUT="$W/build" scripts/hopper_device_check.sh 2>&1 | tail -3
fi
at "built: $(tail -1 "$W/build/summary.txt" 2>/dev/null) $(git rev-parse --short HEAD 2>/dev/null)"
T=build-h200/attnbench_gpu_tests
timeout 120 $T --gtest_filter='DecodeAttention.OverlapsTheKvWrite' >"$W/overlap-test.log" 2>&1
at "overlap test rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$W/overlap-test.log" | tr '\n' ' ')"
OUT="$W/ab16" ENV_B='ATTNBENCH_DECODE_KV_OVERLAP=0' ROUNDS=3 BACKEND=trtllm_mha,flashinfer \
  FILTER='^decode/llama-3.1-8b/L=6/b=16/' timeout 200 scripts/h200_decode_env_ab.sh >"$W/ab16.log" 2>&1
at "a/b b=16 rc=$?"; cat "$W/ab16/summary.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
mkdir -p "$W/final"
timeout 200 build-h200/attnbench run --config configs/fp8-evidence.toml \
  --filter '^decode/llama-3.1-8b/L=6/b=(16/kv=16384|64|256)/' --timing graph --device cuda \
  --backend trtllm_mha,flashinfer --out "$W/final/fp8-decode.csv" >"$W/final/run.log" 2>&1
at "final rc=$? $(tail -1 "$W/final/run.log" | cut -c1-200)"
timeout 240 $T --gtest_filter='DecodeAttention.*:SmallKernels.*:GraphRows.*' >"$W/gpu-tests.log" 2>&1
at "decode / small-kernel / graph-row tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$W/gpu-tests.log" | tr '\n' ' ')"
ATTNBENCH_DECODE_KV_OVERLAP_TEST=nowait timeout 120 $T --gtest_filter='DecodeAttention.OverlapsTheKvWrite' \
  >"$W/overlap-test-nowait.log" 2>&1
at "overlap test, nowait (must fail) rc=$? $(grep -cE 'Failure' "$W/overlap-test-nowait.log") failures"
timeout 150 compute-sanitizer --tool memcheck $T --gtest_filter=DecodeAttention.OverlapsTheKvWrite >"$W/memcheck.log" 2>&1
at "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$W/memcheck.log")"
for div in 16 64; do  # the tail pieces' size (span / 32 committed): b=16 x 16k, trtllm_mha
  OUT="$W/div$div" ENV_B="ATTNBENCH_DECODE_TAIL_DIV=$div" ROUNDS=3 BACKEND=trtllm_mha \
    FILTER='^decode/llama-3.1-8b/L=6/b=16/kv=16384/' timeout 150 scripts/h200_decode_env_ab.sh >"$W/div$div.log" 2>&1
  at "tail div $div a/b rc=$?"; grep '^fp8' "$W/div$div/summary.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
done
OUT="$W/ab" ENV_B='ATTNBENCH_DECODE_KV_OVERLAP=0' ROUNDS=2 BACKEND=trtllm_mha,flashinfer \
  FILTER='^decode/llama-3.1-8b/L=6/b=(1|64|256)/' timeout 300 scripts/h200_decode_env_ab.sh >"$W/ab.log" 2>&1
at "a/b b=1, 64, 256 rc=$?"; cat "$W/ab/summary.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
timeout 150 compute-sanitizer --tool racecheck $T --gtest_filter=DecodeAttention.OverlapsTheKvWrite >"$W/racecheck.log" 2>&1
at "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' "$W/racecheck.log")"

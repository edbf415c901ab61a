#!/usr/bin/env bash
# One device call for the decode kernel's wide fp8 CTAs (kernels/cuda/decode_attention.cu: two_small_m_stages, two
# pipeline stages) on an H200 (the card is checked first; on another card, unless ANY_CARD=1, only the steps from the
# decode GPU tests on run). Measurement first, so that a call cut by the session's device time still brings the
# figures back: the binaries from .carry/bz/main.tgz or main.txz (attnbench and attnbench_gpu_tests built off the
# device for sm_90a) when carried, else built (scripts/hopper_device_check.sh step build) unless build-h200 holds
# them; first the issue's read-dominated fp8 decode shapes (configs/fp8-evidence.toml: b=16 x 16k, b=64 and 256) on
# trtllm_mha and flashinfer, graph timing (issue 16's bar: >= 0.9 of the copy bandwidth, printed row by row beside
# bw_fraction, which divides by the read probe); then an A/B of the default against an environment setting
# (scripts/h200_decode_env_ab.sh, Llama-3.1-8B decode, fp8 and bf16, ROUNDS rounds, default 3): ENV_B1 at b = 16, 64
# and 256 (default: the three-stage kSmallM kernels, the default before 2026-12-07); then the decode GPU tests; the
# head_dim 64 depth rule against the old depth (scripts/decode_sweep_ab.sh, GPT-OSS-20B and Llama-3.2-1B, b = 36-256,
# kv 1k / 16k, one round); compute-sanitizer memcheck and racecheck (SANITIZERS names fewer) on
# DecodeAttention.TwoChunkOneWaveGridAgainstCpuTwin and, with ATTNBENCH_DECODE_STAGES=2, on two tests that run every
# head dim (ABS=0 leaves both A/Bs out). Logs go to a work folder; $OUT holds gpu.txt, summary.txt and all.tgz (the
# work folder), re-made after every step (a call returns at most 8 files).
# Usage (repository root on the device, carrying .carry/pfx and, optionally, .carry/bz):
#   OUT=... scripts/h200_decode_wide_check.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
ENV_B1="${ENV_B1:-ATTNBENCH_DECODE_STAGES=3}"
ABS="${ABS:-1}"  # 0: no A/B (the evidence rows, the tests and the sanitizers only)
mkdir -p "$OUT"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$name" | tee "$OUT/gpu.txt"
h200=1  # the H200-bar steps (the A/Bs and the evidence rows) on an H200 or with ANY_CARD=1; the rest on any card
case "$name" in
  *H200*) ;;
  *) [ -n "${ANY_CARD:-}" ] || { h200=0; echo "not an H200: the tests, head_dim 64 and the sanitizers only"; } ;;
esac
W=/tmp/wide-check
rm -rf "$W" && mkdir -p "$W" && cp "$OUT/gpu.txt" "$W/"
t0=$(date +%s)
at() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; tar -C "$W" -czf "$OUT/all.tgz" .; }
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
P="$PWD/.carry/prefix"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bz=$(ls .carry/bz/main.t?z 2>/dev/null | head -1)   # main.tgz or main.txz (xz: a third of the size)
if [ -n "$bz" ]; then
  mkdir -p build-h200 && tar -C build-h200 -xf "$bz"
elif [ ! -x build-h200/attnbench ] || [ ! -x build-h200/attnbench_gpu_tests ]; then
  STAGES=build OUT="$W/build" scripts/hopper_device_check.sh 2>&1 | tail -3
fi
at "binaries: $(build-h200/attnbench --version 2>&1 | head -1)"
if [ $h200 = 1 ]; then
mkdir -p "$W/final"
timeout 200 build-h200/attnbench run --config configs/fp8-evidence.toml \
  --filter '^decode/llama-3.1-8b/L=6/b=(16/kv=16384|64|256)/' --timing graph --device cuda \
  --backend trtllm_mha,flashinfer --out "$W/final/fp8-decode.csv" >"$W/final/run.log" 2>&1
at "final rc=$? $(tail -1 "$W/final/run.log" | cut -c1-200)"
python3 - "$W/final/fp8-decode.csv" "$W/final/fp8-decode.json" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import csv, json, sys  # the bar: >= 0.9 of the copy bandwidth the same run measured
copy = float(json.load(open(sys.argv[2]))["environment"]["copy_bandwidth_bytes_per_s"]) / 1e12
print("  copy bandwidth %.3f TB/s" % copy)
for r in csv.DictReader(open(sys.argv[1])):
    if r["timing"] == "graph":
        print("  %-52s %-10s %-6s fwd %s us  %s TB/s  of copy %.3f  bw_fraction %s" % (r["case_id"][:52],
              r["backend"], r["status"], r["forward_median_us"][:7], r["tb_per_s"][:5], float(r["tb_per_s"]) / copy,
              r["bw_fraction"][:5]))
PY
if [ "$ABS" = 1 ]; then
OUT="$W/ab1" FILTER='^decode/llama-3.1-8b/L=6/b=(16|64|256)/' ENV_B="$ENV_B1" ROUNDS="${ROUNDS:-3}" \
  BACKEND=trtllm_mha timeout 240 scripts/h200_decode_env_ab.sh >"$W/ab1.log" 2>&1
at "a/b 1 (b: $ENV_B1) rc=$?"; cat "$W/ab1/summary.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
fi
fi
timeout 200 build-h200/attnbench_gpu_tests --gtest_filter='DecodeAttention.*' >"$W/dtests.log" 2>&1
at "decode tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$W/dtests.log" | tr '\n' ' ')"
# head_dim 64 (two_stages_at_64): the default against the old depth around the rule's thresholds, one round
if [ "$ABS" = 1 ]; then
OUT="$W/d64" ENV_B='ATTNBENCH_DECODE_STAGES=3' BATCHES=36,40,64,160,256 KV_LENS=1024,16384 ROUNDS=1 \
  timeout 120 scripts/decode_sweep_ab.sh >"$W/d64.log" 2>&1
at "head_dim 64 a/b (b: the old depth) rc=$?"; cat "$W/d64/summary.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
fi
for tool in ${SANITIZERS-memcheck racecheck}; do
  timeout 300 compute-sanitizer --tool $tool build-h200/attnbench_gpu_tests \
    --gtest_filter=DecodeAttention.TwoChunkOneWaveGridAgainstCpuTwin >"$W/$tool.log" 2>&1
  at "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/$tool.log")"
  # every two-stage instance, head_dim 64's 4-warp one among them (ATTNBENCH_DECODE_STAGES=2)
  ATTNBENCH_DECODE_STAGES=2 timeout 300 compute-sanitizer --tool $tool build-h200/attnbench_gpu_tests \
    --gtest_filter='DecodeAttention.SweepDtypeHeadDimGroupAddressing:DecodeAttention.SplitKvMergedInKernel' \
    >"$W/$tool-2.log" 2>&1
  at "$tool (two stages everywhere) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/$tool-2.log")"
done

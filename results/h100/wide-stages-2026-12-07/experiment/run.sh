#!/usr/bin/env bash
# The wide fp8 CTAs' two-stage pipeline (kWideStages, 2026-12-07): one device call. Carries .carry/pfx (the runtime
# prefix, scripts/make_device_prefix.sh) and .carry/bz: main.tgz (attnbench + attnbench_gpu_tests of this commit,
# built off the device for sm_90a) and x.tgz (the trace-stamped experiment binary of
# results/h200/fp8/pieces-ticket-prepared-2026-12-07/, whose ATTNBENCH_X_WIDE_STAGES=2 is this change).
# Usage (repository root on the device): OUT=$OUT results/h100/wide-stages-2026-12-07/experiment/run.sh
# Everything lands in $OUT/all.tgz (the device returns a few files only) and $OUT/summary.txt.
set -uo pipefail
OUT="${OUT:?}"; W=/tmp/wide-stages; rm -rf "$W"; mkdir -p "$W/final" "$W/ab" "$W/xab"
here=$(dirname "$0")
trap 'tar -C "$W" -czf "$OUT/all.tgz" . ; cp "$W/summary.txt" "$OUT/" 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$W/gpu.txt"
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
export LD_LIBRARY_PATH="$PWD/.carry/prefix/lib"
t0=$(date +%s); at() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$W/summary.txt"; }
rows() { python3 results/h200/fp8/pieces-ticket-prepared-2026-12-07/row_us.py "$1" | cut -c1-300; }
# 1. The committed binaries: the GPU tests of the decode kernels and the small kernels, memcheck and racecheck of the
#    tail-split test (the wide two-stage CTAs by default), the fp8 evidence rows.
mkdir -p build-main && tar -C build-main -xzf .carry/bz/main.tgz
M=build-main/attnbench; T=build-main/attnbench_gpu_tests
$M env > "$W/final/env.txt" 2>&1
timeout 150 $T --gtest_filter='DecodeAttention.*:SmallKernels.*' > "$W/final/gpu-tests.log" 2>&1
at "gpu tests rc=$? $(grep -E '^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]' "$W/final/gpu-tests.log" | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $T --gtest_filter='DecodeAttention.TailSplitAgainstCpuTwin' \
    > "$W/final/$tool.log" 2>&1
  at "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$W/final/$tool.log" | tr '\n' ' ')"
done
timeout 200 $M run --config configs/fp8-evidence.toml \
  --filter '^decode/llama-3.1-8b/L=6/b=(16/kv=16384|64|256)/' --timing graph --device cuda \
  --backend trtllm_mha,flashinfer --out "$W/final/fp8-decode.csv" > "$W/final/run.log" 2>&1
at "evidence rows rc=$? $(rows "$W/final/fp8-decode.csv")"
# 2. A/B of the committed binary: default (a, two stages) against ATTNBENCH_DECODE_WIDE_STAGES=3 (b), b=16 fp8 rows
#    (every kv length), alternating, ROUNDS rounds.
for r in $(seq 1 "${ROUNDS:-3}"); do
  for v in a b; do
    e=(); [ "$v" = b ] && e=(ATTNBENCH_DECODE_WIDE_STAGES=3)
    env "${e[@]}" timeout 100 $M run --config configs/fp8-evidence.toml --filter '^decode/llama-3.1-8b/L=6/b=16/' \
      --timing graph --device cuda --backend trtllm_mha --out "$W/ab/fp8-$v-$r.csv" > "$W/ab/fp8-$v-$r.log" 2>&1
    at "ab $v r$r rc=$?"
  done
done
python3 scripts/ab_summary.py "$W/ab" "${ROUNDS:-3}" a b | tee -a "$W/summary.txt"
# 3. The experiment binary (trace stamps): traces of 3 and 2 stages at b=16 x 16k, and the tail split's knobs on top
#    of two stages, graph-timed.
mkdir -p build-x && tar -C build-x -xzf .carry/bz/x.tgz; X=build-x/attnbench
common=(--model llama-3.1-8b --mode decode --layers 6 --page-size 64 --kv-cache-dtype fp8_e4m3 --batch 16
        --kv-len 16384 --device cuda --backend trtllm_mha --time-budget 0.6)
knob() { case $1 in st3) e=();; st2) e=(ATTNBENCH_X_WIDE_STAGES=2);; st2even) e=(ATTNBENCH_X_WIDE_STAGES=2 ATTNBENCH_DECODE_TAIL=0);;
  st2div64) e=(ATTNBENCH_X_WIDE_STAGES=2 ATTNBENCH_X_TAIL_DIV=64);; st2div16) e=(ATTNBENCH_X_WIDE_STAGES=2 ATTNBENCH_X_TAIL_DIV=16);;
  st2ticket) e=(ATTNBENCH_X_WIDE_STAGES=2 ATTNBENCH_X_TICKET=1);; st2nowrite) e=(ATTNBENCH_X_WIDE_STAGES=2 ATTNBENCH_X_SKIP_WRITE=1);;
  *) e=();; esac; }
for v in st3 st2 st2even; do
  mkdir -p "$W/tr-$v"; knob $v
  env "${e[@]}" ATTNBENCH_DECODE_TRACE_DIR="$W/tr-$v" timeout 60 $X run "${common[@]}" --timing eager \
    --disable-cuda-graph --out "$W/tr-$v/rows.csv" > "$W/tr-$v/run.log" 2>&1
  at "trace $v rc=$? $(rows "$W/tr-$v/rows.csv")"
done
{ python3 results/h200/fp8/tail-split-2026-12-06/trace/trace_stats.py "$W"/tr-*/*.bin
  python3 results/h200/fp8/pieces-ticket-prepared-2026-12-07/trace_more.py "$W"/tr-*/*.bin; } > "$W/stats.txt" 2>&1
cat "$W/stats.txt"
for r in 1 2; do
  for v in st3 st2 st2even st2div64 st2div16 st2ticket st2nowrite; do
    knob $v
    env "${e[@]}" timeout 60 $X run "${common[@]}" --timing graph --capture-needed-only --out "$W/xab/g-$v-$r.csv" \
      > "$W/xab/g-$v-$r.log" 2>&1
    at "graph $v r$r rc=$? $(rows "$W/xab/g-$v-$r.csv")"
  done
done
at done

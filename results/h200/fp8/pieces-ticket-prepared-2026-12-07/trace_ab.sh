#!/usr/bin/env bash
# Experiment, prepared 2026-12-07 and not run (no GPU came that session; README.md beside it): per-CTA traces of
# trtllm_mha's fp8 decode at b=16 x 16k and a graph-timed A/B of the knobs of exp.patch (beside it, over the tree:
# trace stamps, tail-piece lists, wide-CTA stages, the KV write left out of graphs, the ticket merge).
# Usage (repository root on the device, carrying .carry/pfx (scripts/make_device_prefix.sh), and .carry/bz where it
# holds x.tgz (that binary: else it is built there, ~100 s) or main.tgz (the committed attnbench, for the evidence rows)):
#   OUT=$OUT results/h200/fp8/pieces-ticket-prepared-2026-12-07/trace_ab.sh
# (TRACES, VARIANTS and ROUNDS override the lists below; e.g. VARIANTS='tail ticket' ROUNDS=1 for a short call.)
# (ONLY_MAIN=1 stops after the committed binary's tests and rows.)
set -uo pipefail
OUT="${OUT:?}"; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$OUT/gpu.txt"
[ -d .carry/prefix ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
export LD_LIBRARY_PATH="$PWD/.carry/prefix/lib"
t0=$(date +%s); at() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; }
# First, the committed code (the tree's HEAD, built off the device into .carry/bz/main.tgz), when carried: the GPU
# tests of the KV write (c737f94's reorder had no GPU run) and the issue's fp8 evidence rows.
if [ -f .carry/bz/main.tgz ]; then
  mkdir -p build-main "$OUT/final" && tar -C build-main -xzf .carry/bz/main.tgz
  build-main/attnbench env > "$OUT/final/env.txt" 2>&1
  if [ -x build-main/attnbench_gpu_tests ]; then
    timeout 120 build-main/attnbench_gpu_tests --gtest_filter='SmallKernels.*' >"$OUT/final/gpu-tests.log" 2>&1
    at "gpu tests SmallKernels.* rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/final/gpu-tests.log" | tr '\n' ' ')"
  fi
  timeout 200 build-main/attnbench run --config configs/fp8-evidence.toml \
    --filter '^decode/llama-3.1-8b/L=6/b=(16/kv=16384|64|256)/' --timing graph --device cuda \
    --backend trtllm_mha,flashinfer --out "$OUT/final/fp8-decode.csv" >"$OUT/final/run.log" 2>&1
  at "final rc=$? $(python3 "$(dirname "$0")/row_us.py" "$OUT/final/fp8-decode.csv" | cut -c1-400)"
fi
[ -n "${ONLY_MAIN:-}" ] && exit 0
X=build-x/attnbench
if [ -f .carry/bz/x.tgz ]; then
  mkdir -p build-x && tar -C build-x -xzf .carry/bz/x.tgz
else  # build it here (~100 s on 16 cores): the patch over the tree, the trace stamps on, sm_90a only
  here=$(dirname "$0"); P="$PWD/.carry/prefix"
  git apply "$here/exp.patch" || patch -p1 < "$here/exp.patch" || exit 1
  cmake -S . -B build-x -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-include cstdint" \
    -DCMAKE_CUDA_FLAGS=-DATTNBENCH_DECODE_TRACE=1 -DCMAKE_PREFIX_PATH="$P" -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DATTNBENCH_BUILD_BENCH=OFF -DFCCP_INCLUDE_DIR="$P/include" -DTOMLPP_INCLUDE_DIR="$P/include" \
    -DRE2_INCLUDE_DIR="$P/include" -DRE2_LIBRARY="$P/lib/libre2.so" >"$OUT/cmake.log" 2>&1 &&
    ninja -C build-x attnbench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
$X env > "$OUT/env.txt" 2>&1
common=(--model llama-3.1-8b --mode decode --layers 6 --page-size 64 --kv-cache-dtype fp8_e4m3 --batch 16
        --kv-len 16384 --device cuda --backend trtllm_mha --time-budget 0.6)
knob() { case $1 in even) e=(ATTNBENCH_DECODE_TAIL=0);; div*) e=(ATTNBENCH_X_TAIL_DIV=${1#div});;
  st2) e=(ATTNBENCH_X_WIDE_STAGES=2);; nowrite) e=(ATTNBENCH_X_SKIP_WRITE=1);;
  p3) e=(ATTNBENCH_X_PIECES=64,64,128,128);; p4) e=(ATTNBENCH_X_PIECES=64,128,128);;
  p5) e=(ATTNBENCH_X_PIECES=32,64,128,128);; ticket) e=(ATTNBENCH_X_TICKET=1);;
  tk64) e=(ATTNBENCH_X_TICKET=1 ATTNBENCH_X_TAIL_DIV=64);; *) e=();; esac; }
for v in ${TRACES:-tail even}; do
  mkdir -p "$OUT/tr-$v"
  knob $v
  env "${e[@]}" ATTNBENCH_DECODE_TRACE_DIR="$OUT/tr-$v" timeout 60 $X run "${common[@]}" --timing eager \
    --disable-cuda-graph --out "$OUT/tr-$v/rows.csv" >"$OUT/tr-$v/run.log" 2>&1
  at "trace $v rc=$? $(python3 "$(dirname "$0")/row_us.py" "$OUT/tr-$v/rows.csv")"
done
{ python3 results/h200/fp8/tail-split-2026-12-06/trace/trace_stats.py "$OUT"/tr-*/*.bin
  python3 "$(dirname "$0")/trace_more.py" "$OUT"/tr-*/*.bin; } > "$OUT/stats.txt" 2>&1; cat "$OUT/stats.txt"
for r in $(seq 1 "${ROUNDS:-2}"); do
  for v in ${VARIANTS:-tail even div64 div128 p3 nowrite ticket st2}; do
    knob $v
    env "${e[@]}" timeout 60 $X run "${common[@]}" --timing graph --capture-needed-only \
      --out "$OUT/g-$v-$r.csv" >"$OUT/g-$v-$r.log" 2>&1
    at "graph $v r$r rc=$? $(python3 "$(dirname "$0")/row_us.py" "$OUT/g-$v-$r.csv")"
  done
done
# The best variant (median over the rounds) against the committed split on every fp8 decode shape of the evidence filter
# (trtllm_mha, the experiment binary for both, so the trace stamps' cost is on both sides), while time is left.
best=$(python3 - "$OUT" "${ROUNDS:-2}" ${VARIANTS:-tail even div64 div128 p3 nowrite ticket st2} <<'PY'
import csv, statistics, sys
out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def us(v):
    xs = []
    for r in range(1, rounds + 1):
        try:
            xs += [float(row["forward_median_us"]) for row in csv.DictReader(open(f"{out}/g-{v}-{r}.csv"))
                   if row.get("status") == "ok" and row.get("timing") == "graph"]
        except (OSError, ValueError, KeyError):
            pass
    return statistics.median(xs) if xs else float("inf")
best = min((v for v in names if v not in ("nowrite", "even", "tail")), key=us, default="")
print(best if best and us(best) < us("tail") else "")
PY
)
if [ -n "$best" ] && [ $(( $(date +%s) - t0 )) -lt 330 ]; then
  mkdir -p "$OUT/wide"
  for v in tail "$best"; do  # named as scripts/ab_summary.py reads them: KIND-LABEL-ROUND.csv
    knob $v
    env "${e[@]}" timeout 120 $X run --config configs/fp8-evidence.toml \
      --filter '^decode/llama-3.1-8b/L=6/b=(16|64|256)/' --timing graph --device cuda --backend trtllm_mha \
      --out "$OUT/wide/fp8-$v-1.csv" >"$OUT/wide/fp8-$v-1.log" 2>&1
    at "wide $v rc=$?"
  done
  python3 scripts/ab_summary.py "$OUT/wide" 1 tail "$best" | tee -a "$OUT/summary.txt"
fi

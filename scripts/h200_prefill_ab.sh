#!/usr/bin/env bash
# A/B of the Hopper prefill kernel on one H200, same process conditions: the working tree's
# kernels/cuda/prefill_hopper.cu ("new") against another version of the file ("old", OLD=path), both built into
# the GPU test binary (the old one by scripts/ab_relink.sh: the file swapped in, relinked, put back), then the
# kernels' TFLOP/s tables (tests/gpu/prefill_attention_test.cpp's PrefillAttentionPerf, PERF_FILTER) alternating
# old / new for ROUNDS rounds, and a side-by-side table (every round's figure, the ratio of the best). Optionally (STAGES) the new kernel's prefill tests
# and compute-sanitizer first (scripts/hopper_device_check.sh). Everything under $OUT, packed into one archive.
# Usage (repository root on the device): OUT=... OLD=.carry/ab/prefill_hopper_old.cu scripts/h200_prefill_ab.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
OLD="${OLD:?OLD must name the other prefill_hopper.cu}"
ROUNDS="${ROUNDS:-2}"
FILTER="${PERF_FILTER:-PrefillAttentionPerf.Ragged:PrefillAttentionPerf.BlockTablePage64:PrefillAttentionPerf.BlockTablePage64Gemma3}"
mkdir -p "$OUT"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; }
stamp "build + checks of the new kernel (${STAGES:-build tests sanitize})"
STAGES="${STAGES:-build tests sanitize}" VARIANTS="${VARIANTS:-3}" OUT="$OUT/check" scripts/hopper_device_check.sh \
  > "$OUT/check.txt" 2>&1 || { tail -20 "$OUT/check.txt"; exit 1; }
cat "$OUT/check/summary.txt" >> "$OUT/summary.txt"
P="${P:-$PWD/.carry/prefix}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cp build-h200/attnbench_gpu_tests /tmp/ab-new
scripts/ab_relink.sh kernels/cuda/prefill_hopper.cu "$OLD" attnbench_gpu_tests /tmp/ab-old "$OUT/build-old.log" || exit 1
stamp "built old"
for r in $(seq 1 "$ROUNDS"); do
  for v in old new; do
    timeout 150 /tmp/ab-$v --gtest_filter="$FILTER" > "$OUT/perf-$v-$r.log" 2>&1
    stamp "round $r $v rc=$?"
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY' | tee -a "$OUT/summary.txt"
import sys
out, rounds = sys.argv[1], int(sys.argv[2])
best = {}
for v in ("old", "new"):
    for r in range(1, rounds + 1):
        try:
            lines = open("%s/perf-%s-%d.log" % (out, v, r)).read().splitlines()
        except OSError:
            continue
        for ln in lines:
            f = ln.split()
            if len(f) >= 7 and f[0] == "hopper":
                key = tuple(f[1:5])
                best.setdefault(key, {}).setdefault(v, []).append(float(f[6]))
print("%-14s %4s %6s %6s  %-15s %-15s %s" % ("case", "b", "S", "prefix", "old TFLOP/s", "new TFLOP/s", "new/old (best)"))
for key, d in best.items():
    o, n = d.get("old", []), d.get("new", [])
    if o and n:
        print("%-14s %4s %6s %6s  %-15s %-15s %.3f" % (key + ("/".join("%.0f" % x for x in o), "/".join("%.0f" % x for x in n),
                                                     max(n) / max(o))))
PY
stamp done
(cd "$OUT" && tar -czf /tmp/ab-all.tgz . && find . -mindepth 1 -delete && mv /tmp/ab-all.tgz .)

#!/usr/bin/env bash
# Session 20: the paired Hopper prefill CTAs (kPair, ATTNBENCH_HOPPER_PAIR) : build, prefill tests with pairs on and
# off, sanitizers (pairs on), then the kernels' TFLOP/s tables alternating PAIR=0 / PAIR=1.
set -uo pipefail
R=$OUT/r; mkdir -p $R
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a $R/summary.txt; }
pack() { (cd $OUT && tar -czf all.tgz r); }
nvidia-smi > $R/nvidia-smi.txt 2>&1; git rev-parse --short HEAD > $R/git.txt; git status --short >> $R/git.txt
stamp "check"
STAGES="build tests sanitize" VARIANTS="3" OUT=$R/check scripts/hopper_device_check.sh > $R/check.txt 2>&1
stamp "check rc=$?"; cat $R/check/summary.txt; pack
export LD_LIBRARY_PATH=$PWD/.carry/prefix/lib
B=build-h200/attnbench_gpu_tests
ATTNBENCH_HOPPER_PAIR=${TEST_PAIR:-0} timeout 60 $B --gtest_filter='Prefill*:PrefillAttention.*:-PrefillAttentionPerf.*' > $R/tests_pair0.log 2>&1
stamp "tests pair0 rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $R/tests_pair0.log | tr '\n' ' ')"
for r in $(seq 1 ${ROUNDS:-2}); do for p in ${PAIRS:-0 1}; do
  ATTNBENCH_HOPPER_PAIR=$p ATTNBENCH_PERF_KERNEL=hopper timeout 150 $B --gtest_filter="${PERF_FILTER:-PrefillAttentionPerf.Ragged:PrefillAttentionPerf.BlockTablePage64:PrefillAttentionPerf.BlockTablePage64HeadDim64}" > $R/perf-p$p-$r.log 2>&1
  stamp "perf pair=$p round $r rc=$?"; pack
done; done
python3 - $R "${PAIRS:-0 1}" <<'PY' | tee -a $R/summary.txt
import sys, glob
out = sys.argv[1]; best = {}
pa, pb = (sys.argv[2].split() + ["0", "1"])[:2] if len(sys.argv) > 2 else ("0", "1")
for p in (pa, pb):
    for f in sorted(glob.glob("%s/perf-p%s-*.log" % (out, p))):
        for ln in open(f):
            x = ln.split()
            if len(x) >= 7 and x[0] == "hopper":
                best.setdefault(tuple(x[1:5]), {}).setdefault(p, []).append(float(x[6]))
print("%-16s %3s %6s %6s %-16s %-16s %s" % ("case", "b", "S", "pfx", "pair0", "pair1", "best1/best0"))
for k, d in best.items():
    a, b = d.get(pa, []), d.get(pb, [])
    print("%-16s %3s %6s %6s %-16s %-16s %s" % (k + ("/".join("%.0f" % t for t in a), "/".join("%.0f" % t for t in b),
          "%.3f" % (max(b) / max(a)) if a and b else "")))
PY
if [ "${ANCHORS:-1}" = 1 ] && [ $(( $(date +%s) - t0 )) -lt ${ANCHORS_BEFORE:-340} ]; then
  stamp "anchors (pairs at their default)"
  timeout -k 5 ${ANCHORS_LIMIT:-230} scripts/h200_anchors.sh build-h200/attnbench $R/anchors > $R/anchors.txt 2>&1
  stamp "anchors rc=$?"; cat $R/anchors.txt | tail -5; grep extend $R/anchors/anchors.csv
fi
stamp done; pack; rm -rf $R

#!/usr/bin/env bash
# Session 20, last call: build, the anchors (pairs at their default), then head_dim 256 pairs (ATTNBENCH_HOPPER_PAIR=2):
# the prefill tests with them, and the Gemma-3 TFLOP/s tables PAIR=1 (256 unpaired) / PAIR=2, one round.
set -uo pipefail
R=$OUT/r; mkdir -p $R
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a $R/summary.txt; }
pack() { (cd $OUT && tar -czf all.tgz r); }
nvidia-smi > $R/nvidia-smi.txt 2>&1; git rev-parse --short HEAD > $R/git.txt; git status --short >> $R/git.txt
STAGES="build" OUT=$R/check scripts/hopper_device_check.sh > $R/check.txt 2>&1
stamp "build rc=$?"; pack
export LD_LIBRARY_PATH=$PWD/.carry/prefix/lib
B=build-h200/attnbench_gpu_tests
if grep -q "H200" $R/nvidia-smi.txt; then
  timeout -k 5 150 scripts/h200_anchors.sh build-h200/attnbench $R/anchors > $R/anchors.txt 2>&1
  stamp "anchors rc=$?"; tail -4 $R/anchors.txt; grep extend $R/anchors/anchors.csv; pack
  rounds=1
else
  stamp "not an H200: no anchors (the H100's are in results/h100/perf-2026-12-06/)"; rounds=1
fi
ATTNBENCH_HOPPER_PAIR=2 timeout 60 $B --gtest_filter='Prefill*:PrefillAttention.*:-PrefillAttentionPerf.*' > $R/tests_pair2.log 2>&1
stamp "tests pair2 rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $R/tests_pair2.log | tr '\n' ' ')"; pack
for r in $(seq 1 $rounds); do for p in 1 2; do
  ATTNBENCH_HOPPER_PAIR=$p ATTNBENCH_PERF_KERNEL=hopper timeout 100 $B --gtest_filter=PrefillAttentionPerf.BlockTablePage64Gemma3 > $R/perf-p$p-$r.log 2>&1
  stamp "perf pair=$p round $r rc=$?"; pack
done; done
for r in $(seq 1 $rounds); do
  paste <(grep "^hopper" $R/perf-p1-$r.log | awk '{print $2,$3,$4,$5,$7}') <(grep "^hopper" $R/perf-p2-$r.log | awk '{print $7}') | awk '{printf "%s %s %s %s %s %s %.3f\n",$1,$2,$3,$4,$5,$6,$6/$5}' | tee -a $R/summary.txt
done
stamp done; pack; rm -rf $R

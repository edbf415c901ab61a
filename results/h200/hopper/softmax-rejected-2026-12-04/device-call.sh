#!/usr/bin/env bash
# Softmax experiment A/B (eighteenth session). STEPS: build tests ncu perf. ROUNDS (perf).
set -uo pipefail
OUT="${OUT:?}"; mkdir -p "$OUT"
P="$PWD/.carry/prefix"; [ -d "$P" ] || tar -C .carry -xzf .carry/pfx/prefix.tgz
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
steps="${STEPS:-build tests ncu perf}"; has() { [[ " $steps " == *" $1 "* ]]; }
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; }
V="${VARIANTS_SMX:-base tree t8 t4}"
mkdir -p build-h200/ab
if has build; then
  stamp build
  STAGES=build OUT="$OUT/build" scripts/hopper_device_check.sh > "$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build/build.log"; exit 1; }
  cp build-h200/attnbench_gpu_tests build-h200/ab/base
  for v in $V; do
    case $v in base) continue ;; tree) d="1 0" ;; t8) d="1 8" ;; t4) d="1 4" ;; e4) d="0 4" ;; esac
    set -- $d
    { echo "#define ATTNBENCH_HOPPER_SMX $1"; echo "#define ATTNBENCH_HOPPER_EMU $2"; cat kernels/cuda/prefill_hopper.cu; } > /tmp/ph_$v.cu
    scripts/ab_relink.sh kernels/cuda/prefill_hopper.cu /tmp/ph_$v.cu attnbench_gpu_tests build-h200/ab/$v "$OUT/relink-$v.log"
    stamp "relinked $v rc=$?"
  done
fi
if has tests; then
  for v in $V; do
    timeout 90 build-h200/ab/$v --gtest_filter='Prefill*:PrefillAttention.*:-PrefillAttentionPerf.*' > "$OUT/tests-$v.log" 2>&1
    stamp "tests $v rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/tests-$v.log" | tr '\n' ' ')"
    grep -E "FAILED  \]" "$OUT/tests-$v.log" | head -5 | tee -a "$OUT/summary.txt"
  done
fi
if has ncu; then
  M=sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed
  for v in ${NCU_V:-base t4}; do
    # Ragged table: shape 9 = b=4 x 4096, prefix 0; 12 hopper launches per shape (2 warm-up + 10)
    ATTNBENCH_PERF_KERNEL=hopper timeout 150 ncu --clock-control none -k regex:prefill_hopper --launch-skip 98 --launch-count 1 \
      --metrics $M build-h200/ab/$v --gtest_filter=PrefillAttentionPerf.Ragged > "$OUT/ncu-$v.txt" 2>&1
    stamp "ncu $v rc=$?"
    grep -E "^ +(sm__|gpu__|smsp__)" "$OUT/ncu-$v.txt" | tee -a "$OUT/summary.txt"
  done
fi
if has perf; then
  for r in $(seq 1 "${ROUNDS:-1}"); do
    for v in $V; do
      ATTNBENCH_PERF_KERNEL=hopper timeout 150 build-h200/ab/$v --gtest_filter="${PERF_FILTER:-PrefillAttentionPerf.Ragged:PrefillAttentionPerf.BlockTablePage64Gemma3}" > "$OUT/perf-$v-${RTAG:-}$r.log" 2>&1
      stamp "perf $v round $r rc=$?"
    done
  done
  python3 - "$OUT" $V <<'PY' | tee -a "$OUT/summary.txt"
import sys, glob, re
out, vs = sys.argv[1], sys.argv[2:]
best = {}
for v in vs:
    for f in sorted(glob.glob("%s/perf-%s-*.log" % (out, v))):
        for ln in open(f):
            x = ln.split()
            if len(x) >= 7 and x[0] == "hopper":
                best.setdefault(tuple(x[1:5]), {}).setdefault(v, []).append(float(x[6]))
print("%-14s %3s %6s %6s " % ("case", "b", "S", "pfx") + " ".join("%-16s" % v for v in vs) + "  best/base")
for k, d in best.items():
    b = max(d.get("base", [float("nan")]))
    print("%-14s %3s %6s %6s " % k + " ".join("%-16s" % "/".join("%.0f" % t for t in d.get(v, [])) for v in vs)
          + "  " + " ".join("%.3f" % (max(d[v]) / b) for v in vs if v in d and v != "base"))
PY
fi
stamp done
(cd "$OUT" && tar -czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz .)

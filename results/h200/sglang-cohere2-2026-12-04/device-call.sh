#!/usr/bin/env bash
# Session 18: SGLang 0.5.23's own classes on windowed layers (Cohere2: Command-R7B's shape; Gemma-3-12B), beside
# attnbench's rows of the same cases. STEP=1: build, case lists, attnbench rows, the Cohere2 peer (pays the JIT);
# STEP=2: the Gemma-3 peer and the reports.
set -uo pipefail
R=$OUT/r; mkdir -p $R
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a $R/summary.txt; }
mkdir -p /tmp/site; [ -f /tmp/site/.installed ] || { tar -C /tmp/site -xzf .carry/sgl-all/sgl.tar.gz && touch /tmp/site/.installed; }
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export FLASHINFER_WORKSPACE_BASE=$PWD/.carry/flashinfer-jit; mkdir -p $FLASHINFER_WORKSPACE_BASE
ab=build-h200/attnbench
C=results/h200/cohere2-2026-12-04/command-r7b-shape.json
declare -A M=([cohere2]="--model $C" [gemma]="--model gemma-3-12b --layers 6")
A="--sglang 0.5.23 --mode decode,extend,verify --batch 4 --kv-len 8192 --prefix-len 6144 --extend-len 1024 --extend-batch 1 --draft-tokens 4 --timing eager"
if [ "${STEP:-1}" = 1 ]; then
  stamp build
  OUT=$R/build STEPS=build scripts/h200_ncu.sh > $R/build-step.log 2>&1; echo "build rc=$?"
  $ab env > $R/env.txt 2>&1; nvidia-smi > $R/nvidia-smi.txt 2>&1
  python3 -c "import torch, flashinfer, sglang.version as v; print('torch', torch.__version__, 'flashinfer', flashinfer.__version__, 'sglang', v.__version__)" 2>&1 | tail -1 | tee $R/versions.txt
  for m in cohere2 gemma; do
    L="${M[$m]}"; [ $m = cohere2 ] && L="$L --layers 4"
    $ab run $L $A --list-cases --format csv > $R/cases-$m.csv; echo "cases $m rc=$? $(($(wc -l < $R/cases-$m.csv)-1))"
    timeout 100 $ab run $L $A --device cuda --out $R/model-$m.csv > $R/model-$m.txt 2> $R/model-$m.log
    stamp "attnbench $m rc=$? $(tail -n 1 $R/model-$m.txt)"
  done
fi
for m in ${PEERS:-cohere2}; do
  stamp "peer_sglang $m"
  timeout -k 10 ${PEER_S:-420} python3 scripts/peer_sglang.py --cases $R/cases-$m.csv --out-dir $R/$m > $R/$m.log 2>&1
  stamp "peer_sglang $m rc=$?"
  tail -n 25 $R/$m.log
  [ -f $R/model-$m.json ] && [ -f $R/$m/rows.json ] && $ab report $R/model-$m.json --peers $R/$m/rows.json > $R/report-$m.md 2>&1
done
echo "JIT cache $(du -sh $FLASHINFER_WORKSPACE_BASE | cut -f1)"
stamp done
(cd $OUT && tar -czf /tmp/all.tgz r && rm -rf r && mv /tmp/all.tgz .)

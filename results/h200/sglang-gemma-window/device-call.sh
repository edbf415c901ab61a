#!/usr/bin/env bash
# Session 19: SGLang 0.5.23's FlashInferAttnBackend (and TRTLLM) on Gemma-3-12B's windowed layers with extends
# longer than the window (docs/facts-0.5.23.md section 13) and a verify longer than the window (section 10).
# The case list is made on the CPU (cases-gemma.csv beside this script); no attnbench build on the device.
set -uo pipefail
R=$OUT/r; mkdir -p $R
t0=$(date +%s); stamp() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a $R/summary.txt; }
pack() { (cd $OUT && tar -czf all.tgz r); }
mkdir -p /tmp/site; [ -f /tmp/site/.installed ] || { tar -C /tmp/site -xzf .carry/sgl-all/sgl.tar.gz && touch /tmp/site/.installed; }
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export FLASHINFER_WORKSPACE_BASE=/tmp/fi-jit; mkdir -p $FLASHINFER_WORKSPACE_BASE
nvidia-smi > $R/nvidia-smi.txt 2>&1; cp .carry/ab/cases-gemma.csv $R/
python3 -c "import torch, flashinfer, sglang.version as v; print('torch', torch.__version__, 'flashinfer', flashinfer.__version__, 'sglang', v.__version__)" 2>&1 | tail -1 | tee $R/versions.txt
git rev-parse --short HEAD > $R/git.txt 2>&1; git status --short >> $R/git.txt 2>&1
for b in ${BACKENDS:-flashinfer_sglang trtllm_mha_sglang}; do
  left=$(( ${BUDGET:-560} - ($(date +%s) - t0) )); [ $left -lt 30 ] && { stamp "no time for $b"; continue; }
  stamp "peer_sglang $b (limit ${left}s)"
  timeout -k 5 $left python3 scripts/peer_sglang.py --cases $R/cases-gemma.csv --out-dir $R/$b --backend $b --no-memory > $R/$b.log 2>&1
  stamp "peer_sglang $b rc=$?"
  tail -n 30 $R/$b.log; pack
done
stamp done; pack; rm -rf $OUT/r

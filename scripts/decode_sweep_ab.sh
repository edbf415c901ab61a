#!/usr/bin/env bash
# A/B of a decode kernel setting chosen by environment over a grid of shapes, on the device: one attnbench binary
# (BIN, default build-h200/attnbench), the models of MODELS (comma list of presets or config.json paths; default the
# two head_dim 64 configs of tests/data) in decode over BATCHES x KV_LENS, KV_DTYPES (fp8_e4m3 -> rows "fp8", auto ->
# "bf16"), BACKEND (default trtllm_mha), graph timing, LAYERS layers (default 2), run with ENV_A ("a") and ENV_B
# ("b") alternating for ROUNDS rounds (default 2); a summary of forward µs per layer, b / a, in OUT/summary.txt
# (scripts/ab_summary.py). Either ENV may be empty (the default). The results/ sweeps of the decode kernel's
# pipeline depths and CTA shapes ran so.
# Usage (repository root on the device, the prefix unpacked as scripts/h200_ab_common.sh expects):
#   OUT=... ENV_A='ATTNBENCH_DECODE_STAGES=3' ENV_B='ATTNBENCH_DECODE_STAGES=2' scripts/decode_sweep_ab.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
ENV_A="${ENV_A-}"
ENV_B="${ENV_B-}"
[ -n "$ENV_A$ENV_B" ] || { echo "decode_sweep_ab.sh: ENV_A and ENV_B are both empty: a null A/B" >&2; exit 2; }
ROUNDS="${ROUNDS:-2}"
MODELS="${MODELS:-tests/data/gpt-oss-20b/config.json,tests/data/llama-3.2-1b.json}"
BATCHES="${BATCHES:-4,8,16,32,48,64,128,256}"
KV_LENS="${KV_LENS:-4096}"
KV_DTYPES="${KV_DTYPES:-fp8_e4m3 auto}"
BACKEND="${BACKEND:-trtllm_mha}"
LAYERS="${LAYERS:-2}"
. "$(dirname "$0")/h200_ab_common.sh"
run_one() {  # round, variant: each pool of KV_DTYPES
  local kv kind
  for kv in $KV_DTYPES; do
    kind=fp8; [ "$kv" = auto ] && kind=bf16
    env "${ab_env[@]}" timeout 300 "$ab" run --model "$MODELS" --mode decode --batch "$BATCHES" --kv-len "$KV_LENS" \
      --kv-cache-dtype "$kv" --layers "$LAYERS" --page-size 64 --backend "$BACKEND" --timing graph --device cuda \
      --time-budget 0.2 --out "$OUT/$kind-$2-$1.csv" > "$OUT/$kind-$2-$1.txt" 2>&1
    stamp "round $1 $2 $kind rc=$?: $(tail -n 1 "$OUT/$kind-$2-$1.txt" | cut -c1-70)"
  done
}
ab_rounds run_one

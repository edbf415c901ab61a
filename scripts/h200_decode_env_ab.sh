#!/usr/bin/env bash
# A/B of a kernel setting chosen by environment on one H200: one attnbench binary (built into build-h200 by
# scripts/h200_ncu.sh step build), the Llama-3.1-8B decode rows of configs/fp8-evidence.toml (fp8 e4m3) and of
# configs/pr-evidence.toml (bf16), BACKEND (default trtllm_mha; a comma list), TIMING (default graph; eager for extend
# rows, e.g. FILTER='^extend/'), run with the environment as it is ("a") and with
# ENV_B added ("b"), alternating for ROUNDS rounds; a summary of forward µs per layer, b / a, in OUT/summary.txt
# (scripts/ab_summary.py). A backend ENV_B does not touch is a null A/B: its b / a is the round-to-round noise.
# Usage (repository root on the device): OUT=... ENV_B='ATTNBENCH_DECODE_WARPS=2' scripts/h200_decode_env_ab.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
ENV_A=
ENV_B="${ENV_B:?ENV_B must name the setting of variant b, e.g. ATTNBENCH_DECODE_WARPS=2}"
ROUNDS="${ROUNDS:-2}"
FILTER="${FILTER:-^decode/llama-3.1-8b/}"
BACKEND="${BACKEND:-trtllm_mha}"
TIMING="${TIMING:-graph}"
export AB_TIMING="$TIMING"
. "$(dirname "$0")/h200_ab_common.sh"
run_one() {  # round, variant: both pools' rows
  for kind in fp8 bf16; do
    cfg=configs/fp8-evidence.toml; [ "$kind" = bf16 ] && cfg=configs/pr-evidence.toml
    env "${ab_env[@]}" timeout 150 "$ab" run --config "$cfg" --filter "$FILTER" --timing "$TIMING" --device cuda \
      --backend "$BACKEND" --out "$OUT/$kind-$2-$1.csv" > "$OUT/$kind-$2-$1.txt" 2>&1
  done
  stamp "round $1 $2: $(tail -n 1 "$OUT/fp8-$2-$1.txt" | cut -c1-70)"
}
ab_rounds run_one

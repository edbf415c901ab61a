# Shared by the one-binary A/B scripts (h200_decode_env_ab.sh, decode_sweep_ab.sh, h200_decode_warps_sweep.sh),
# sourced once OUT is set:
#   . "$(dirname "$0")/h200_ab_common.sh"
# creates $OUT, puts the device prefix's libraries on the library path (P, default .carry/prefix: what
# scripts/h200_ncu.sh step build unpacked and built against), sets ab (BIN, default build-h200's attnbench), t0 and
# stamp TEXT (TEXT after the seconds since then), records `attnbench env` in $OUT/env.txt, and defines ab_rounds.
mkdir -p "$OUT"
P="${P:-$PWD/.carry/prefix}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ab="${BIN:-build-h200/attnbench}"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
"$ab" env > "$OUT/env.txt" 2>&1

# ab_rounds RUN: ROUNDS rounds of variant a (environment words ENV_A, may be empty) then b (ENV_B), alternating so that
# a drift of the card falls on both; RUN ROUND VARIANT runs one, with the variant's words in the array ab_env (for
# `env "${ab_env[@]}" ...`) and writes $OUT/<kind>-VARIANT-ROUND.csv; then the b / a summary (scripts/ab_summary.py)
# in $OUT/summary.txt.
ab_rounds() {
  local r v
  for r in $(seq 1 "$ROUNDS"); do
    for v in a b; do
      ab_env=(${ENV_A-}); [ "$v" = b ] && ab_env=($ENV_B)
      "$1" "$r" "$v"
    done
  done
  "$(dirname "${BASH_SOURCE[0]}")/ab_summary.py" "$OUT" "$ROUNDS" a b | tee "$OUT/summary.txt"
  stamp done
}

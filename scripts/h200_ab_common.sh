# Shared by the one-binary A/B scripts (h200_decode_env_ab.sh, h200_decode_warps_sweep.sh), sourced once OUT is set:
#   . "$(dirname "$0")/h200_ab_common.sh"
# creates $OUT, puts the device prefix's libraries on the library path (P, default .carry/prefix: what
# scripts/h200_ncu.sh step build unpacked and built against), sets ab (build-h200's attnbench), t0 and stamp TEXT (TEXT
# after the seconds since then), and records `attnbench env` in $OUT/env.txt.
mkdir -p "$OUT"
P="${P:-$PWD/.carry/prefix}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ab=build-h200/attnbench
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
"$ab" env > "$OUT/env.txt" 2>&1

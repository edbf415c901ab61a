#!/usr/bin/env bash
# The kSmallM decode kernel's CTA shapes side by side on one H200, over batches that put the grid at every fraction of
# the SMs' CTA slots (the data behind small_m_warps in kernels/cuda/decode_attention.cu): Llama-3.1-8B decode, 6
# layers, page 64, graph timing, BACKEND (default trtllm_mha), each of WARPS (default "1 2 4") forced through
# ATTNBENCH_DECODE_WARPS, for the fp8 e4m3 pool (FP8_BATCHES) and the bf16 one (BF16_BATCHES) at KV_LENS; ROUNDS
# rounds, the shapes interleaved within each. Rows in OUT/<kind>-w<warps>-<round>.csv; a table of forward µs per layer
# (median over rounds) with each shape's ratio to the fastest in OUT/summary.txt.
# VAR / VALUES sweep another environment setting the same way (e.g. VAR=ATTNBENCH_DECODE_L2PF VALUES="0 2 4").
# Usage (repository root on the device, after scripts/h200_ncu.sh step build): OUT=... scripts/h200_decode_warps_sweep.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
ROUNDS="${ROUNDS:-1}"
WARPS="${WARPS:-1 2 4}"
VAR="${VAR:-ATTNBENCH_DECODE_WARPS}"
VALUES="${VALUES:-$WARPS}"
BACKEND="${BACKEND:-trtllm_mha}"
KV_LENS="${KV_LENS:-1024,4096}"
FP8_BATCHES="${FP8_BATCHES:-96,128,160,192,224,256,320,384,512}"
BF16_BATCHES="${BF16_BATCHES:-32,48,64,96,128,160,192,256}"
. "$(dirname "$0")/h200_ab_common.sh"
for r in $(seq 1 "$ROUNDS"); do
  for w in $VALUES; do
    for kind in fp8 bf16; do
      if [ "$kind" = fp8 ]; then extra=(--kv-cache-dtype fp8_e4m3 --batch "$FP8_BATCHES"); else extra=(--batch "$BF16_BATCHES"); fi
      env "$VAR=$w" timeout 200 "$ab" run --model llama-3.1-8b --mode decode --layers 6 --page-size 64 \
        --kv-len "$KV_LENS" "${extra[@]}" --timing graph --device cuda --backend "$BACKEND" --warmup 2 \
        --min-samples 5 --max-samples 50 --target-spread 3.0 --time-budget 0.3 \
        --out "$OUT/$kind-w$w-$r.csv" > "$OUT/$kind-w$w-$r.txt" 2>&1
      stamp "round $r $VAR=$w $kind: $(tail -n 1 "$OUT/$kind-w$w-$r.txt" | cut -c1-70)"
    done
  done
done
python3 - "$OUT" "$ROUNDS" $VALUES <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys
out, rounds, warps = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for kind in ("fp8", "bf16"):
    t = {}
    for w in warps:
        for r in range(1, rounds + 1):
            try:
                rows = list(csv.DictReader(open("%s/%s-w%s-%d.csv" % (out, kind, w, r))))
            except OSError:
                continue
            for row in rows:
                if row["status"] == "ok" and row["timing"] == "graph":
                    key = (int(row["batch"]), int(row["kv_len_max"]))
                    t.setdefault(key, {}).setdefault(w, []).append(float(row["forward_median_us"]))
    print("%s: forward us per layer (median of rounds), each shape / the fastest" % kind)
    for key in sorted(t):
        med = {w: statistics.median(v) for w, v in t[key].items()}
        best = min(med.values())
        cells = "  ".join("w%s %8.1f (%.3f)" % (w, med[w], med[w] / best) for w in warps if w in med)
        print("  b=%-4d kv=%-6d %s" % (key[0], key[1], cells))
PY
stamp done

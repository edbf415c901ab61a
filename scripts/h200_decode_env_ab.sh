#!/usr/bin/env bash
# A/B of a decode kernel setting chosen by environment on one H200: one attnbench binary (built into build-h200 by
# scripts/h200_ncu.sh step build), the Llama-3.1-8B decode rows of configs/fp8-evidence.toml (fp8 e4m3) and of
# configs/pr-evidence.toml (bf16), trtllm_mha, graph timing, run with the environment as it is ("a") and with
# ENV_B added ("b"), alternating for ROUNDS rounds; a summary of forward µs per layer, b / a, in OUT/summary.txt.
# Usage (repository root on the device): OUT=... ENV_B='ATTNBENCH_DECODE_WARPS=2' scripts/h200_decode_env_ab.sh
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
ENV_B="${ENV_B:?ENV_B must name the setting of variant b, e.g. ATTNBENCH_DECODE_WARPS=2}"
ROUNDS="${ROUNDS:-2}"
FILTER="${FILTER:-^decode/llama-3.1-8b/}"
mkdir -p "$OUT"
P="${P:-$PWD/.carry/prefix}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ab=build-h200/attnbench
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
"$ab" env > "$OUT/env.txt" 2>&1
for r in $(seq 1 "$ROUNDS"); do
  for v in a b; do
    e=(); [ "$v" = b ] && e=($ENV_B)
    for kind in fp8 bf16; do
      cfg=configs/fp8-evidence.toml; [ "$kind" = bf16 ] && cfg=configs/pr-evidence.toml
      env "${e[@]}" timeout 150 "$ab" run --config "$cfg" --filter "$FILTER" --timing graph --device cuda \
        --backend trtllm_mha --out "$OUT/$kind-$v-$r.csv" > "$OUT/$kind-$v-$r.txt" 2>&1
    done
    stamp "round $r $v: $(tail -n 1 "$OUT/fp8-$v-$r.txt" | cut -c1-70)"
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/summary.txt"
import csv, sys
out, rounds = sys.argv[1], int(sys.argv[2])
for kind in ("fp8", "bf16"):
    rows = {}
    for v in ("a", "b"):
        for r in range(1, rounds + 1):
            try:
                for row in csv.DictReader(open("%s/%s-%s-%d.csv" % (out, kind, v, r))):
                    if row["status"] == "ok" and row["timing"] == "graph":
                        d = rows.setdefault((int(row["batch"]), int(row["kv_len_max"])), {})
                        d.setdefault(v, []).append((float(row["forward_median_us"]), float(row["tb_per_s"])))
            except OSError:
                pass
    for (b, kv), d in sorted(rows.items()):
        x, y = d.get("a", []), d.get("b", [])
        if x and y:
            print("%s b=%d kv=%d fwd_us a %s b %s  b/a %.3f  TB/s a %.2f b %.2f" % (kind, b, kv,
                  "/".join("%.1f" % t for t, _ in x), "/".join("%.1f" % t for t, _ in y),
                  min(t for t, _ in y) / min(t for t, _ in x), max(s for _, s in x), max(s for _, s in y)))
PY
stamp done

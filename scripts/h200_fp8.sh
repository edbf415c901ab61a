#!/usr/bin/env bash
# fp8 KV cache evidence on a GPU (the H200), issue 16: the fp8 GPU tests, every mode and backend validated with
# --kv-cache-dtype fp8_e4m3 and fp8_e5m2 (several shapes, both addressings' page sizes), then
# configs/fp8-evidence.toml timed with each format (decode bw_fraction on fp8 bytes), and the bf16 baseline of the
# same config for the side-by-side. Optionally (PEERS=1) the FlashInfer / XQA peer on the fp8 Llama cases.
# Usage: scripts/h200_fp8.sh BIN_DIR   (BIN_DIR holds attnbench and attnbench_gpu_tests)
# Environment: OUT (default results/local/h200-fp8), STEPS (default "tests validate evidence"), PEERS (0).
set -uo pipefail
. "$(dirname "$0")/h200_common.sh" "${1:?usage: scripts/h200_fp8.sh BIN_DIR}" results/local/h200-fp8 "tests validate evidence"

if has tests; then
  # The whole GPU suite (the decode kernel's 16-bit path shares the fp8 variant's code), then the fp8 tests'
  # lines: DecodeAttention.Fp8*, PrefillAttention.Fp8*, SmallKernels.Fp8*.
  gpu_tests
  grep -E "Fp8|fp8" "$out/gpu-tests.log" > "$out/gpu-tests-fp8.txt"
  grep -cE "^\[       OK \] .*Fp8" "$out/gpu-tests.log" | sed 's/^/fp8 GPU tests passed: /'
fi
shapes="--model tiny,tiny-swa,llama-3.1-8b,gemma-3-12b --layers 2 --device cuda --batch 3,17 --kv-len 300,2000 --extend-batch 2 --prefix-len 0,700 --extend-len 333 --verify-batch 5 --verify-kv-len 900 --page-size 16,64 --length-dist uniform --length-min 40"
if has validate; then
  for kv in fp8_e4m3 fp8_e5m2; do
    stamp "validate $kv"
    "$ab" validate $shapes --mode decode,extend,verify --backend all --kv-cache-dtype "$kv" \
      --out "$out/validate-$kv.csv" > "$out/validate-$kv.txt" 2>&1
    echo "validate $kv: exit $?"; tail -n 1 "$out/validate-$kv.txt"
  done
fi
if has evidence; then
  for kv in fp8_e4m3 fp8_e5m2 auto; do
    stamp "fp8-evidence --kv-cache-dtype $kv"
    "$ab" run --config configs/fp8-evidence.toml --device cuda --kv-cache-dtype "$kv" --out "$out/evidence-$kv.csv" \
      --json "$out/evidence-$kv.json" > "$out/evidence-$kv.txt" 2> "$out/evidence-$kv.log"
    echo "evidence $kv exit $?" | tee -a "$out/evidence-$kv.log"; tail -n 1 "$out/evidence-$kv.txt"
  done
  # The read-dominated decode rows: case, backend, timing, tb_per_s, bw_fraction (the criterion: >= 0.9).
  for kv in fp8_e4m3 fp8_e5m2; do
    python3 - "$out/evidence-$kv.csv" <<'PY' | tee "$out/decode-bw-$kv.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    cid = r["case_id"]
    if not cid.startswith("decode/") or r["status"] != "ok":
        continue
    b = int(cid.split("/b=")[1].split("/")[0]); kv = int(cid.split("/kv=")[1].split("/")[0])
    if b * kv >= 64 * 4096:
        print(cid, r["backend"], r["timing"], r["tb_per_s"], r["bw_fraction"])
PY
  done
fi
if [ "${PEERS:-0}" = 1 ]; then
  stamp "peers fp8_e4m3"
  scripts/h200_peers.sh "$ab" "$out/peers-fp8_e4m3" '^[a-z]+/llama-3.1-8b/' configs/fp8-evidence.toml
fi
stamp "done"

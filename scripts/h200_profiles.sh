#!/usr/bin/env bash
# The SGLang-profile evidence on a GPU (the H200): GPU tests, a smoke run, `attnbench memory` for every preset
# and TRTLLM page size under --sglang 0.5.23 (and Llama under 30cb848d4), the new 0.5.23 paths validated
# (fmha_v2 extend over the fused and the separate K/V pool, decode / verify seq-len splits) with
# compute-sanitizer memcheck, then configs/pr-evidence.toml under the profile(s) named in PROFILES.
# Usage: scripts/h200_profiles.sh [BIN_DIR]   (BIN_DIR holds attnbench and attnbench_gpu_tests; default
#        .carry/b1). Environment: OUT (default results/local/h200), PROFILES (default "0.5.23"),
#        STEPS (default "tests smoke memory paths sanitize evidence").
set -uo pipefail
. "$(dirname "$0")/h200_common.sh" "${1:-.carry/b1}" results/local/h200 "tests smoke memory paths sanitize evidence"

if has tests; then
  gpu_tests
fi
if has smoke; then
  stamp "smoke"
  "$ab" run --config configs/smoke.toml --device cuda --out "$out/smoke.csv" > "$out/smoke.txt" 2> "$out/smoke.log"
  echo "smoke exit $?" | tee -a "$out/smoke.log"; tail -n 1 "$out/smoke.txt"
fi
if has memory; then
  stamp "memory"
  mem="--config configs/memory-llama-3.1-8b.toml --device cuda"
  for v in 0.5.23 30cb848d4; do
    "$ab" memory $mem --sglang "$v" --out "$out/memory-$v.txt"
    "$ab" memory $mem --sglang "$v" --format json --out "$out/memory-$v.json"
  done
  # Every preset and TRTLLM page size under 0.5.23: one CSV (backend, phase, tag, kind, bytes, ...) each.
  : > "$out/memory-presets-0.5.23.csv"
  for m in llama-3.1-8b llama-3.1-70b-tp8 qwen2.5-7b gemma-3-12b tiny tiny-swa; do
    for p in 16 32 64 128; do
      if ! "$ab" memory --model "$m" --page-size "$p" --device cuda --sglang 0.5.23 --format csv --out "$out/m.csv" 2> "$out/m.err"; then
        echo "$m,$p,error,$(head -c 200 "$out/m.err")" >> "$out/memory-presets-0.5.23.csv"; continue
      fi
      sed "s/^/$m,$p,/" "$out/m.csv" >> "$out/memory-presets-0.5.23.csv"
      "$ab" memory --model "$m" --page-size "$p" --device cuda --sglang 0.5.23 >> "$out/memory-presets-0.5.23.txt" 2>&1
    done
  done
  rm -f "$out/m.csv" "$out/m.err"
  grep -E "^(flashinfer|trtllm)" "$out/memory-0.5.23.txt" | head -14
fi
paths="--model tiny,tiny-swa,llama-3.1-8b --layers 2 --device cuda --batch 3,17 --kv-len 300,2000 --extend-batch 2 --prefix-len 0,700 --extend-len 333 --verify-batch 5 --verify-kv-len 900 --page-size 16,64 --length-dist uniform --length-min 40"
if has paths; then
  stamp "0.5.23 paths"
  for extra in "--kv-layout auto" "--kv-layout separate" "--trtllm-decode-seq-len-splits 3" "--sglang 30cb848d4"; do
    name=$(echo "$extra" | tr -c 'a-z0-9.' '_')
    "$ab" validate $paths --mode decode,extend,verify $extra --out "$out/paths$name.csv" > "$out/paths$name.txt" 2>&1
    echo "validate $extra: exit $?"; tail -n 1 "$out/paths$name.txt"
  done
fi
if has sanitize && command -v compute-sanitizer > /dev/null; then
  stamp "memcheck"
  small="--model tiny,tiny-swa --layers 2 --device cuda --batch 3 --kv-len 300 --extend-batch 2 --prefix-len 0,100 --extend-len 70 --verify-batch 5 --verify-kv-len 200 --page-size 16 --length-dist uniform --length-min 20 --mode decode,extend,verify --capture-needed-only"
  for extra in "--kv-layout separate" "--trtllm-decode-seq-len-splits 2"; do
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$ab" validate $small $extra --out "$out/memcheck.csv" \
      > "$out/memcheck$(echo "$extra" | tr -c 'a-z0-9' '_').txt" 2>&1
    echo "memcheck $extra: exit $?"
  done
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/attnbench_gpu_tests" --gtest_filter='SmallKernels.CopyRows*' > "$out/memcheck-copy-rows.txt" 2>&1
  echo "memcheck copy_rows: exit $?"
fi
if has evidence; then
  for v in ${PROFILES:-0.5.23}; do
    stamp "pr-evidence $v"
    "$ab" run --config configs/pr-evidence.toml --device cuda --sglang "$v" --out "$out/pr-evidence-$v.csv" \
      --json "$out/pr-evidence-$v.json" > "$out/pr-evidence-$v.txt" 2> "$out/pr-evidence-$v.log"
    echo "pr-evidence $v exit $?" | tee -a "$out/pr-evidence-$v.log"; tail -n 1 "$out/pr-evidence-$v.txt"
  done
fi
stamp "done"

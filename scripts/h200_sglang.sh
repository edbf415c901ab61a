#!/usr/bin/env bash
# SGLang 0.5.23's own backend classes (issue 13) and the FlashInfer 0.7.2 peer (issue 12) on a GPU machine
# without network. The stripped site trees (scripts/sglang_site.py: .carry/sgl1, sgl2, ... each with site/ and a
# MANIFEST "part i of N") travel one or more per call; each call copies the parts it carries into /tmp/site and
# the call that completes the set runs the peers. .carry/sgl-all/sgl.tar.gz (sglang_site.py --tar) holds all the
# parts at 26 MB, .carry/sgl-full/sgl.tar.gz (--tar --all-python) also every other Python file of SGLang and
# FlashInfer at 38 MB (keep it <= 48 MiB: a call carries 64 MiB in all): carrying one of them, one call installs
# and runs. A machine with `pip install sglang==0.5.23` needs no parts:
# SITE=none scripts/h200_sglang.sh ...
#   scripts/h200_sglang.sh ATTNBENCH OUTDIR
# Env: SITE (default /tmp/site), PARTS (default: .carry/sgl*), LLAMA_FILTER / QWEN_* (the cases), BUDGET_S (the
# whole run's seconds, default 540), SKIP_FI=1 (no FlashInfer peer), SKIP_SGLANG=1.
# Writes OUTDIR/sglang/{cases-*.csv, <model>/rows.csv|json, memory.csv, phases.csv, stubs.txt, *.log, versions.txt}
# and OUTDIR/flashinfer-0.7.2/{cases.csv, peers.csv|json, peers.log}.
set -uo pipefail
bin=${1:?usage: scripts/h200_sglang.sh ATTNBENCH OUTDIR}
out=${2:?usage: scripts/h200_sglang.sh ATTNBENCH OUTDIR}
site=${SITE:-/tmp/site}
budget=${BUDGET_S:-540}
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
export PYTHONUNBUFFERED=1
# FlashInfer JIT-compiles its kernels on first use (250-300 s of the H200's 16 cores, cold). Its cache goes under
# the repository's ignored .carry/, which a warm machine keeps between calls: a call made right after this one
# skips the compilation (and the log says how large the cache is).
export FLASHINFER_WORKSPACE_BASE=${FLASHINFER_WORKSPACE_BASE:-$PWD/.carry/flashinfer-jit}
mkdir -p "$out/sglang" "$out/flashinfer-0.7.2" "$FLASHINFER_WORKSPACE_BASE"

if [ "$site" != none ]; then
  mkdir -p "$site"
  for part in ${PARTS:-.carry/sgl*}; do
    if [ -f "$part/sgl.tar.gz" ]; then  # every part in one archive (with the markers): one call installs all
      tar -C "$site" -xzf "$part/sgl.tar.gz" && echo "== installed $part/sgl.tar.gz into $site"
      continue
    fi
    [ -f "$part/MANIFEST" ] || continue
    head -1 "$part/MANIFEST" > "$site/.$(basename "$part").installed.tmp"
    cp -a "$part/site/." "$site/" && mv "$site/.$(basename "$part").installed.tmp" "$site/.$(basename "$part").installed"
    echo "== installed $(basename "$part") ($(head -1 "$part/MANIFEST")) into $site"
  done
  have=$(ls "$site"/.sgl*.installed 2>/dev/null | wc -l)
  need=$(cat "$site"/.sgl*.installed 2>/dev/null | awk '{print $4}' | sort -u | head -1)
  if [ -z "$need" ] || [ "$have" -lt "$need" ]; then
    echo "== $have of ${need:-?} parts in $site: carry the others in the next call (nothing run)"
    exit 0
  fi
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi

python3 - <<'EOF' 2>&1 | tee "$out/sglang/versions.txt"
import importlib, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
for m in ("flashinfer", "tvm_ffi", "pydantic", "sglang.version"):
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", getattr(mod, "__version__", "?")), getattr(mod, "__file__", ""))
    except Exception as e:
        print(m, "IMPORT FAILED:", type(e).__name__, e)
EOF

llama_filter=${LLAMA_FILTER:-'^(decode/llama-3.1-8b/L=6/b=16/kv=4096/|extend/llama-3.1-8b/L=6/b=1/prefix=4096/|verify/llama-3.1-8b/L=6/b=16/)'}
"$bin" run --config configs/pr-evidence.toml --sglang 0.5.23 --filter "$llama_filter" --timing eager --list-cases \
  --format csv > "$out/sglang/cases-llama.csv" || echo "== FAILED: llama case list"
"$bin" run --model qwen2.5-7b --sglang 0.5.23 --layers 6 --mode decode,extend,verify --batch 16 --kv-len 4096 \
  --prefix-len 4096 --extend-len 4096 --extend-batch 1 --draft-tokens 4 --timing eager \
  --list-cases --format csv > "$out/sglang/cases-qwen.csv" || echo "== FAILED: qwen case list"

if [ "${SKIP_MODEL:-0}" != 1 ]; then  # attnbench's rows of the same cases (graph rows carry graph state + capture)
  for m in llama qwen; do
    ids=$(tail -n +2 "$out/sglang/cases-$m.csv" | cut -d, -f2 | sed 's/[.]/[.]/g' | paste -sd'|')
    [ -n "$ids" ] || continue
    if [ "$m" = llama ]; then src=(--config configs/pr-evidence.toml); else
      src=(--model qwen2.5-7b --layers 6 --mode decode,extend,verify --batch 16 --kv-len 4096 --prefix-len 4096
           --extend-len 4096 --extend-batch 1 --draft-tokens 4); fi
    timeout -k 10 120 "$bin" run "${src[@]}" --sglang 0.5.23 --filter "^($ids)\$" --device cuda \
      --out "$out/sglang/model-$m.csv" > "$out/sglang/model-$m.log" 2>&1
    echo "== attnbench $m exit $? ($(left) s left)"
  done
fi

if [ "${SKIP_SGLANG:-0}" != 1 ]; then
  for m in llama qwen; do
    # the first model pays FlashInfer's JIT compilation (about 250 s on the H200's 16 cores, cold: FA2 and FA3
    # prefill, cascade, quantization, XQA, fmha_v2); the second reuses it (about 70 s, its own XQA group ratio)
    t=$(( $(left) - ${QWEN_RESERVE_S:-120} - ${FI_RESERVE_S:-150} )); [ "$m" = qwen ] && t=$(( $(left) - ${FI_RESERVE_S:-150} ))
    [ "$t" -lt 30 ] && { echo "== skipping $m: ${t}s left"; continue; }
    timeout -k 10 "$t" python3 scripts/peer_sglang.py --cases "$out/sglang/cases-$m.csv" \
      --out-dir "$out/sglang/$m" 2>&1 | tee "$out/sglang/$m.log"
    echo "== peer_sglang $m exit ${PIPESTATUS[0]}"
  done
  # one memory.csv / stubs.txt over the models (the per-model files stay beside)
  { head -1 "$out/sglang/llama/memory.csv" 2>/dev/null; for m in llama qwen; do tail -n +2 "$out/sglang/$m/memory.csv" 2>/dev/null; done; } > "$out/sglang/memory.csv"
  { head -1 "$out/sglang/llama/phases.csv" 2>/dev/null; for m in llama qwen; do tail -n +2 "$out/sglang/$m/phases.csv" 2>/dev/null; done; } > "$out/sglang/phases.csv"
  cat "$out"/sglang/*/stubs.txt 2>/dev/null | sort -u > "$out/sglang/stubs.txt"
fi

if [ "${SKIP_FI:-0}" != 1 ]; then
  "$bin" run --config configs/pr-evidence.toml --sglang 0.5.23 --filter '^[a-z]+/llama-3.1-8b/' --list-cases \
    --format csv > "$out/flashinfer-0.7.2/cases.csv" || echo "== FAILED: flashinfer case list"
  t=$(left); [ "$t" -lt 30 ] && t=30
  timeout -k 10 "$t" python3 scripts/peer_flashinfer.py --cases "$out/flashinfer-0.7.2/cases.csv" \
    --filter "${FI_FILTER:-}" --out "$out/flashinfer-0.7.2/peers.csv" 2>&1 | tee "$out/flashinfer-0.7.2/peers.log"
  echo "== peer_flashinfer exit ${PIPESTATUS[0]}"
fi
for m in llama qwen; do  # the Model vs SGLang section
  [ -f "$out/sglang/model-$m.json" ] && [ -f "$out/sglang/$m/rows.json" ] &&
    "$bin" report "$out/sglang/model-$m.json" --peers "$out/sglang/$m/rows.json" > "$out/sglang/report-$m.md" 2>&1
done
echo "== FlashInfer's JIT cache: $(du -sh "$FLASHINFER_WORKSPACE_BASE" 2>/dev/null | cut -f1) in $FLASHINFER_WORKSPACE_BASE"
echo "== done in $(( $(date +%s) - start )) s"

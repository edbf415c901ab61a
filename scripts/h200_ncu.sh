#!/usr/bin/env bash
# Profiles of attnbench's decode and prefill kernels on the H200 under ncu (--clock-control none: the clocks the
# timings ran at), one case per report, plus a few validate runs. Logs under $OUT.
# Usage (repository root on the device): scripts/h200_ncu.sh
# Steps: build; tests (the decode / fp8 GPU tests); sanitize (memcheck, racecheck on two decode tests); perf
# (decode rows: configs/fp8-evidence.toml e4m3 and configs/pr-evidence.toml, graph timing); decode / prefill
# (ncu); prefill-source (ncu per SASS instruction of the Hopper prefill kernel); anchors (pr-evidence + SDPA);
# peers (FlashInfer's extend; .carry/sgl-all or .carry/sgl-full carried: scripts/sglang_site.py --tar); validate.
# Environment: OUT (required), STEPS (default "build decode prefill validate"), NCU_CASES (decode profiles to
# take, default all), SANITIZE_FILTER (the gtest filter the sanitize step runs), P (default .carry/prefix; when
# missing and .carry/pfx/prefix.tgz was carried, it is unpacked there first: scripts/make_device_prefix.sh).
set -uo pipefail
OUT="${OUT:?OUT must name the output folder}"
mkdir -p "$OUT"
if [ ! -d .carry/prefix ] && [ -f .carry/pfx/prefix.tgz ]; then tar -C .carry -xzf .carry/pfx/prefix.tgz; fi
P="${P:-$PWD/.carry/prefix}"
export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
steps="${STEPS:-build decode prefill validate}"
has() { [[ " $steps " == *" $1 "* ]]; }
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
ab=build-h200/attnbench
if has build; then
  stamp build
  STAGES=build P="$P" OUT="$OUT/build" scripts/hopper_device_check.sh >/dev/null 2>&1 || { tail -30 "$OUT/build/build.log"; exit 1; }
fi
"$ab" env > "$OUT/env.txt" 2>&1
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
 --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats"
# prof NAME KERNEL_REGEX SKIP COUNT attnbench-run-args...
prof() {
  local name=$1 kre=$2 skip=$3 count=$4; shift 4
  [ -n "${NCU_CASES:-}" ] && [[ " $NCU_CASES " != *" $name "* ]] && return 0
  timeout 120 ncu --clock-control none -k "regex:$kre" --launch-skip "$skip" --launch-count "$count" $SECTIONS \
    "$ab" run --device cuda --timing eager --warmup 0 --min-samples 1 --max-samples 2 --out "$OUT/$name.csv" "$@" \
    > "$OUT/ncu-$name.txt" 2>&1
  echo "$name rc=$? $(grep -E '^ +(DRAM Throughput|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Achieved Occupancy)' "$OUT/ncu-$name.txt" | awk '{print $1,$2,$NF}' | tr '\n' ' ')"
}
if has tests; then
  stamp "decode tests"
  timeout 240 build-h200/attnbench_gpu_tests --gtest_filter='DecodeAttention*:*Decode*:*Fp8*:-*DISABLED*' > "$OUT/dtests.log" 2>&1
  echo "decode tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/dtests.log" | tr '\n' ' ')"
  grep -E "FAILED  \]" "$OUT/dtests.log" | head -20
fi
if has sanitize; then
  for tool in memcheck racecheck; do
    stamp "$tool"
    timeout 200 compute-sanitizer --tool $tool build-h200/attnbench_gpu_tests \
      --gtest_filter="${SANITIZE_FILTER:-DecodeAttention.SweepDtypeHeadDimGroupAddressing:DecodeAttention.Fp8KvAgainstCpuTwin:DecodeAttention.SplitKv}" > "$OUT/$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/$tool.log" | tr '\n' ' ')"
  done
fi
if has perf; then
  stamp "perf: fp8 decode"
  timeout 200 "$ab" run --config configs/fp8-evidence.toml --filter '^decode/llama-3.1-8b/' --timing graph --device cuda \
    --backend trtllm_mha,flashinfer --out "$OUT/fp8-decode.csv" > "$OUT/fp8-decode.txt" 2> "$OUT/fp8-decode.log"
  echo "fp8 decode rc=$? $(tail -n 1 "$OUT/fp8-decode.txt")"
  stamp "perf: bf16 decode (pr-evidence)"
  timeout 200 "$ab" run --config configs/pr-evidence.toml --filter '^decode/' --timing graph --device cuda \
    --out "$OUT/bf16-decode.csv" > "$OUT/bf16-decode.txt" 2> "$OUT/bf16-decode.log"
  echo "bf16 decode rc=$? $(tail -n 1 "$OUT/bf16-decode.txt")"
  python3 - "$OUT/fp8-decode.csv" "$OUT/bf16-decode.csv" <<'PY'
import csv, sys
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        if r["status"] == "ok" and r["timing"] == "graph" and int(r["batch"]) >= 16:
            print(f.split("/")[-1][:4], r["model"][:12], r["backend"][:10], "b=" + r["batch"], "kv=" + r["kv_len_max"],
                  "fwd_us=%.1f" % float(r["forward_median_us"]), "TB/s=" + r["tb_per_s"][:5], "bw=" + r["bw_fraction"][:5])
PY
fi
if has decode; then
  stamp "ncu decode"
  L="--model llama-3.1-8b --mode decode --page-size 64"
  prof fp8-b256-kv1k decode_mma 0 1 $L --layers 1 --batch 256 --kv-len 1024 --kv-cache-dtype fp8_e4m3 --backend trtllm_mha
  prof fp8-b16-kv16k decode_mma 0 1 $L --layers 1 --batch 16 --kv-len 16384 --kv-cache-dtype fp8_e4m3 --backend trtllm_mha
  prof fp8-b16-kv16k-merge decode_merge 0 1 $L --layers 1 --batch 16 --kv-len 16384 --kv-cache-dtype fp8_e4m3 --backend trtllm_mha
  prof fp8-b64-kv4k-fi decode_mma 0 1 $L --layers 1 --batch 64 --kv-len 4096 --kv-cache-dtype fp8_e4m3 --backend flashinfer
  prof fp8-b64-kv4k-trt decode_mma 0 1 $L --layers 1 --batch 64 --kv-len 4096 --kv-cache-dtype fp8_e4m3 --backend trtllm_mha
  prof bf16-b64-kv4k decode_mma 0 1 $L --layers 1 --batch 64 --kv-len 4096 --backend trtllm_mha
  # Gemma-3-12B: layer 5 is the global one (sliding pattern 6); six launches, the 6th the global layer.
  prof gemma-b16-kv16k decode_mma 0 6 --model gemma-3-12b --mode decode --page-size 64 --layers 6 --batch 16 --kv-len 16384 --backend trtllm_mha
  prof gemma-b64-kv4k decode_mma 0 6 --model gemma-3-12b --mode decode --page-size 64 --layers 6 --batch 64 --kv-len 4096 --backend trtllm_mha
fi
if has prefill; then
  stamp "ncu prefill"
  prof llama-ext-b4 prefill 0 1 --model llama-3.1-8b --mode extend --layers 1 --extend-batch 4 --extend-len 4096 --prefix-len 0 --backend flashinfer
  prof gemma-ext-b4 prefill 0 6 --model gemma-3-12b --mode extend --layers 6 --extend-batch 4 --extend-len 4096 --prefix-len 0 --backend flashinfer
fi
if has prefill-source; then
  # The Hopper prefill kernel per SASS instruction: executed instructions and warp-stall samples of each
  # instruction (ncu's source page), to see what the consumer loop spends its issue slots and stalls on; the
  # full-set details beside it. PREFILL_SRC_CASES (default "llama-b4"): llama-b4 = Llama-3.1-8B b=4 x 4096 causal
  # (head_dim 128); gemma-b4 = Gemma-3-12B b=4 x 4096, its global layer (head_dim 256, the 6th launch, no window).
  for c in ${PREFILL_SRC_CASES:-llama-b4}; do
    case $c in
      llama-b4) skip=0; args="--model llama-3.1-8b --layers 1" ;;
      gemma-b4) skip=5; args="--model gemma-3-12b --layers 6" ;;
      *) echo "prefill-source: unknown case $c"; continue ;;
    esac
    stamp "ncu prefill source $c"
    timeout 240 ncu --clock-control none --set full --import-source yes -k regex:prefill_hopper --launch-skip "$skip" \
      --launch-count 1 -o "$OUT/prefill-$c" "$ab" run --device cuda --timing eager --warmup 0 --min-samples 1 \
      --max-samples 2 $args --mode extend --extend-batch 4 --extend-len 4096 --prefix-len 0 --backend flashinfer \
      --out "$OUT/prefill-src-$c.csv" > "$OUT/prefill-src-$c.log" 2>&1
    echo "prefill source $c rc=$?"
    ncu -i "$OUT/prefill-$c.ncu-rep" --page source --csv --print-source sass > "$OUT/prefill-sass-$c.csv" 2>&1
    ncu -i "$OUT/prefill-$c.ncu-rep" --page details > "$OUT/prefill-details-$c.txt" 2>&1
    grep -E "^ +(Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Registers Per)" \
      "$OUT/prefill-details-$c.txt" | head
    rm -f "$OUT/prefill-$c.ncu-rep"
  done
fi
if has anchors; then
  # The pr-evidence sweep and the SDPA anchors (scripts/h200_anchors.sh), within what is left of LIMIT_S (default
  # 560 s: a device call is cut at 600 and the archive below must still be written).
  left=$(( ${LIMIT_S:-560} - ($(date +%s) - t0) ))
  stamp "anchors (${left}s left)"
  if [ "$left" -gt 60 ]; then
    timeout "$left" scripts/h200_anchors.sh "$ab" "$OUT/anchors" > "$OUT/anchors.txt" 2>&1
    echo "anchors rc=$?"; head -3 "$OUT/anchors.txt"; grep -E "^(extend|decode)" "$OUT/anchors/anchors.csv" | grep -v "llama-3.1-70b" | head -40
  fi
fi
if has peers; then
  # FlashInfer's own extend (FA3 ragged, FA2 paged) beside attnbench's on the Llama-3.1-8B extend cases
  # (issue 15's peer comparison), from the stripped site archive carried (scripts/sglang_site.py --tar).
  mkdir -p /tmp/site
  for t in .carry/sgl-full/sgl.tar.gz .carry/sgl-all/sgl.tar.gz; do [ -f "$t" ] && tar -C /tmp/site -xzf "$t" && break; done
  export PYTHONPATH=/tmp/site FLASHINFER_WORKSPACE_BASE="$PWD/.carry/flashinfer-jit"
  left=$(( ${LIMIT_S:-560} - ($(date +%s) - t0) ))
  stamp "peers (${left}s left)"
  PEER_OPTIONS="--backend ${PEER_BACKEND:-flashinfer_lib}" timeout "$left" scripts/h200_peers.sh "$ab" "$OUT/peers" \
    "${PEER_FILTER:-^extend/llama-3.1-8b/}" > "$OUT/peers.txt" 2>&1
  echo "peers rc=$?"; grep -E "^== |exit" "$OUT/peers.txt" | tail -8
fi
if has validate; then
  stamp validate
  for m in tests/data/gemma-2-9b.json tests/data/gemma-3-27b.json; do
    n=$(basename "$m" .json)
    timeout 90 "$ab" validate --model "$m" --mode decode,extend,verify --backend all --batch 2 --extend-len 16 \
      --draft-tokens 3 --page-size 16 --layers 2 --kv-len 4150 --prefix-len 4120 --device cuda \
      --out "$OUT/validate-$n.csv" > "$OUT/validate-$n.txt" 2>&1
    echo "validate $n rc=$? $(tail -n 1 "$OUT/validate-$n.txt")"
  done
fi
stamp done
# Only a few files come back from a device call: everything goes into one archive.
(cd "$OUT" && tar -czf /tmp/ncu-all.tgz . && find . -mindepth 1 -delete && mv /tmp/ncu-all.tgz . && ls -la)

#!/usr/bin/env bash
# A sweep split over the GPUs of one host (issue 17): configs/pr-evidence.toml over 2 ranks, each on its own GPU,
# started by torchrun (else mpirun, else two plain processes with RANK / WORLD_SIZE / LOCAL_RANK set), then
# `attnbench merge`, then checks: every row ok (or skipped for the same reason as on one GPU), every checked row
# validated, trtllm_mha bit-identical to trtllm_mha_legacy, and the merged case set equal to a one-GPU run's.
# Writes under OUTDIR (default $OUT, else results/local/shards): the shards, pr-evidence.{csv,json} (merged),
# run.log, merge.log, report.md (`attnbench report` of the merged JSON), summary.md (wall times and the checks).
# Usage: scripts/h200_shards.sh BIN [OUTDIR]
#   BIN: the attnbench binary. SINGLE=1 also runs the one-GPU sweep (cuda:0) afterwards and compares with it
#   (about 320 s on an H200); otherwise the one-GPU reference is the committed
#   results/h200/sglang-0.5.23/pr-evidence-0.5.23.csv (its log gives its wall time). NPROC=2 ranks by default.
#   For a dry run elsewhere: CONFIG (default configs/pr-evidence.toml), DEVICE (default cuda), REF_CSV / REF_LOG
#   (the one-GPU reference), e.g. CONFIG=configs/smoke.toml DEVICE=cpu SINGLE=1 scripts/h200_shards.sh BIN /tmp/x
set -uo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:?usage: scripts/h200_shards.sh BIN [OUTDIR]}")"
out="${2:-${OUT:-results/local/shards}}"
ranks="${NPROC:-2}"
mkdir -p "$out"
config="${CONFIG:-configs/pr-evidence.toml}"
device="${DEVICE:-cuda}"
name="$(basename "$config" .toml)"
ref_csv="${REF_CSV:-results/h200/sglang-0.5.23/pr-evidence-0.5.23.csv}"
ref_log="${REF_LOG:-results/h200/sglang-0.5.23/pr-evidence-0.5.23.log}"
args=(run --config "$config" --device "$device" --out "$out/$name.csv")
# torchrun sets OMP_NUM_THREADS=1 for every rank unless it is set: the float64 reference (OpenMP) would then run on
# one core. Give each rank its share of the host's cores instead.
cores=$(nproc)
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( cores / ranks > 0 ? cores / ranks : 1 ))}"
{ nvidia-smi -L; "$bin" env; } > "$out/env.txt" 2>&1

launcher=""
start=$(date +%s.%N)
if command -v torchrun > /dev/null && torchrun --help 2>&1 | grep -q -- '--no-python'; then
  launcher="torchrun --standalone --no-python --nproc-per-node $ranks"
  torchrun --standalone --no-python --nproc-per-node "$ranks" "$bin" "${args[@]}" > "$out/run.log" 2>&1
  rc=$?
elif command -v mpirun > /dev/null; then
  launcher="mpirun -np $ranks"
  as_root=()
  [[ $EUID == 0 ]] && as_root=(--allow-run-as-root)
  mpirun "${as_root[@]}" -np "$ranks" -x OMP_NUM_THREADS "$bin" "${args[@]}" > "$out/run.log" 2>&1
  rc=$?
else
  launcher="$ranks plain processes with RANK / WORLD_SIZE / LOCAL_RANK"
  pids=()
  for ((r = 0; r < ranks; r++)); do
    RANK=$r WORLD_SIZE=$ranks LOCAL_RANK=$r "$bin" "${args[@]}" > "$out/run.rank$r.log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  cat "$out"/run.rank*.log > "$out/run.log"
fi
end=$(date +%s.%N)
wall=$(python3 -c "print(f'{$end - $start:.1f}')")
echo "launcher: $launcher; exit code $rc; wall ${wall} s" | tee -a "$out/run.log"

shards=()
for ((r = 0; r < ranks; r++)); do shards+=("$out/$name.rank$r-of-$ranks.json"); done
"$bin" merge "${shards[@]}" --out "$out/$name.csv" > "$out/merge.log" 2>&1
echo "merge exit code $?" >> "$out/merge.log"
# The merged file is a results file like any other: the Markdown report of the whole sweep.
"$bin" report "$out/$name.json" --out "$out/report.md" >> "$out/merge.log" 2>&1
echo "report exit code $?" >> "$out/merge.log"
cat "$out/merge.log"

single_wall=""
single_csv="$ref_csv"
if [[ "${SINGLE:-0}" == 1 ]]; then
  s0=$(date +%s.%N)
  single_device="$device"
  [[ "$device" == cuda ]] && single_device=cuda:0
  "$bin" run --config "$config" --device "$single_device" --out "$out/single/$name.csv" \
    > "$out/single.txt" 2> "$out/single.log"
  echo "single exit code $?" >> "$out/single.log"
  s1=$(date +%s.%N)
  single_wall=$(python3 -c "print(f'{$s1 - $s0:.1f}')")
  single_csv="$out/single/$name.csv"
fi

python3 - "$out" "$single_csv" "$ref_log" "$wall" "$single_wall" "$launcher" "$ranks" "$name" <<'EOF'
import csv, re, sys
out, single_csv, ref_log, wall, single_wall, launcher, nproc, name = sys.argv[1:]
merged = list(csv.DictReader(open(f"{out}/{name}.csv")))
single = list(csv.DictReader(open(single_csv)))
key = lambda r: (r["case_id"], r["backend"], r["timing"])
problems = []
bad = [r for r in merged if r["status"] not in ("ok", "skipped")]
problems += [f"{key(r)}: status {r['status']}: {r['note'][:120]}" for r in bad]
unvalidated = [r for r in merged if r["status"] == "ok" and r["ref_pass"] != "1"]
problems += [f"{key(r)}: ok but ref_pass '{r['ref_pass']}'" for r in unvalidated]
single_status = {key(r): r["status"] for r in single}
skipped_differently = [r for r in merged if r["status"] == "skipped" and single_status.get(key(r)) != "skipped"]
problems += [f"{key(r)}: skipped here, {single_status.get(key(r))} on one GPU: {r['note'][:120]}" for r in skipped_differently]
lean = [r for r in merged if r["backend"] == "trtllm_mha" and r["status"] == "ok"]
not_identical = [r for r in lean if "trtllm_mha_legacy" not in r["bitwise_equal_to"]]
problems += [f"{key(r)}: trtllm_mha not bit-identical to trtllm_mha_legacy" for r in not_identical]
cases_m, cases_s = {r["case_id"] for r in merged}, {r["case_id"] for r in single}
keys_m, keys_s = {key(r) for r in merged}, {key(r) for r in single}
if cases_m != cases_s:
    problems.append(f"case sets differ: only merged {sorted(cases_m - cases_s)[:5]}, only one-GPU {sorted(cases_s - cases_m)[:5]}")
if keys_m != keys_s:
    problems.append(f"row keys differ: only merged {sorted(keys_m - keys_s)[:5]}, only one-GPU {sorted(keys_s - keys_m)[:5]}")
if len(keys_m) != len(merged):
    problems.append("a row key appears twice in the merged CSV")
ref_wall = ""
if not single_wall:
    last = [l for l in open(ref_log) if re.match(r"\[\d+/\d+ \d+s", l)]
    ref_wall = re.match(r"\[\d+/\d+ (\d+)s", last[-1]).group(1) if last else "?"
ranks = []
for line in open(f"{out}/run.log"):
    m = re.search(r"\[rank (\d+)/\d+\] \[(\d+)/(\d+) (\d+)s", line)
    if m:
        ranks.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))))
per_rank = {}
for r, i, n, t in ranks:
    per_rank[r] = (n, t)
status = {}
for r in merged:
    status[r["status"]] = status.get(r["status"], 0) + 1
with open(f"{out}/summary.md", "w") as f:
    f.write(f"# configs/{name}.toml over {nproc} ranks\n\n")
    f.write(f"- launcher: `{launcher}`\n")
    f.write(f"- wall, {nproc} ranks (launch to last rank's exit): **{wall} s**\n")
    for r in sorted(per_rank):
        n, t = per_rank[r]
        f.write(f"  - rank {r}: {n} cases, last case done at {t} s\n")
    if single_wall:
        f.write(f"- wall, one GPU (cuda:0, same binary, run after): **{single_wall} s**\n")
    else:
        f.write(f"- wall, one GPU: {ref_wall} s (the committed run, {ref_log}; another commit of attnbench)\n")
    f.write(f"- merged: {len(merged)} rows of {len(cases_m)} cases: " + ", ".join(f"{v} {k}" for k, v in sorted(status.items())) + "\n")
    f.write(f"- one-GPU reference: {single_csv}: {len(single)} rows of {len(cases_s)} cases\n")
    f.write(f"- merged case set equal to the one-GPU run's: {cases_m == cases_s}; row keys equal: {keys_m == keys_s}\n")
    f.write(f"- trtllm_mha bit-identical to trtllm_mha_legacy: {len(lean) - len(not_identical)} of {len(lean)} ok rows\n")
    f.write(f"- checks: {'all passed' if not problems else str(len(problems)) + ' problem(s)'}\n")
    for p in problems[:50]:
        f.write(f"  - {p}\n")
print(open(f"{out}/summary.md").read())
sys.exit(1 if problems else 0)
EOF

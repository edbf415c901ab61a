#!/usr/bin/env python3
"""Recomputes the figures and tables of results/h200/README.md from the files in this folder.

    python3 results/h200/tables.py [results/h200]      (standard library only)

Reads pr-evidence.csv and pr-evidence.json (environment: read / copy bandwidth, wall_seconds) and prints
Markdown: the row counts, bit-identity, reference checks, lean / legacy ratios, the decode / verify and extend
tables, the graph rows' metadata / forward split and the issue-4 bars. `tb_per_s` and `bw_fraction` are the
CSV's own columns: bytes of the forward part over its time, and that over the READ-only probe measured at the
start of the run (`read_bandwidth_bytes_per_s`); the copy bandwidth (reads + writes) is printed beside it.
"""

import csv
import json
import os
import statistics
import sys

LEAN, LEGACY, FI = "trtllm_mha", "trtllm_mha_legacy", "flashinfer"


def num(s):
    return float(s) if s not in ("", None) else None


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(d, "pr-evidence.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(d, "pr-evidence.json"), encoding="utf-8") as f:
        env = json.load(f)["environment"]
    read_bw = float(env["read_bandwidth_bytes_per_s"])
    copy_bw = float(env["copy_bandwidth_bytes_per_s"])
    by = {(r["case_id"], r["backend"], r["timing"]): r for r in rows}
    cases = list(dict.fromkeys(r["case_id"] for r in rows))

    # --- counts
    status = {}
    for r in rows:
        status[r["status"]] = status.get(r["status"], 0) + 1
    print(f"## environment\ncommit {env['git_commit']}, compiler {env['compiler']}, {env['gpu_name']}, "
          f"{env['sm_count']} SMs, L2 {int(env['l2_bytes']) / 2**20:.0f} MiB, "
          f"{int(env['memory_total_bytes']) / 2**30:.1f} GiB, driver/runtime {env['driver_version']}/"
          f"{env['runtime_version']}, SM clock {env['sm_clock_measured_mhz']} MHz measured "
          f"({env['sm_clock_max_mhz']} max), read probe {read_bw / 1e9:.1f} GB/s, copy {copy_bw / 1e9:.1f} GB/s, "
          f"wall_seconds {env['wall_seconds']}\n")
    print(f"## rows\n{len(rows)} rows, {len(cases)} cases: " + ", ".join(f"{v} {k}" for k, v in sorted(status.items())))
    for r in rows:
        if r["status"] != "ok":
            print(f"  skipped: {r['case_id']} {r['backend']} {r['timing']}: {r['note'][:110]}")

    # --- bit identity, graph replays, reference checks
    lean = [r for r in rows if r["backend"] == LEAN and r["status"] == "ok"]
    named = [r for r in lean if LEGACY in r["bitwise_equal_to"].split(";")]
    print(f"\n{LEAN} ok rows: {len(lean)}; naming {LEGACY} in bitwise_equal_to: {len(named)}")
    graph = [r for r in rows if r["timing"] == "graph" and r["status"] == "ok"]
    replay = [r for r in graph if "replay bit-identical to eager" in r["note"]]
    print(f"graph rows ok: {len(graph)}; replay bit-identical to eager: {len(replay)}")
    checked = [r for r in rows if r["ref_pass"] != ""]
    passed = [r for r in checked if r["ref_pass"] == "1"]
    worst = max(checked, key=lambda r: float(r["ref_max_abs_err"]))
    print(f"reference-checked rows: {len(checked)}, passed: {len(passed)}; max abs error "
          f"{float(worst['ref_max_abs_err']):.2e} ({worst['case_id']} {worst['backend']}); "
          f"bf16 tolerance atol 1.5625e-2 + rtol 1.5625e-2 * |ref|")

    # --- lean / legacy
    ratios = []
    for (c, b, t), r in by.items():
        if b != LEAN or r["status"] != "ok":
            continue
        g = by.get((c, LEGACY, t))
        if g and g["status"] == "ok":
            ratios.append((float(r["step_median_us"]) / float(g["step_median_us"]), c, t))
    ratios.sort()
    print(f"lean/legacy step ratio over {len(ratios)} pairs: median {statistics.median(x for x, *_ in ratios):.3f}, "
          f"range {ratios[0][0]:.3f} ({ratios[0][1]} {ratios[0][2]}) - {ratios[-1][0]:.3f} "
          f"({ratios[-1][1]} {ratios[-1][2]})")
    for kind in ("eager", "graph"):
        xs = [x for x, _, t in ratios if t == kind]
        print(f"  {kind}: {len(xs)} pairs, median {statistics.median(xs):.3f}, range {min(xs):.3f}-{max(xs):.3f}")

    def us(c, b, t, band=False):
        r = by.get((c, b, t))
        if not r or r["status"] != "ok":
            return "skipped" if r else "-"
        s = f"{float(r['step_median_us']):.1f}"
        return s + (f" ({float(r['step_p10_us']):.1f}-{float(r['step_p90_us']):.1f})" if band else "")

    # --- decode / verify table
    print("\n## decode and verify (step = metadata + 6 layers, µs median (p10-p90); TB/s over the forward part,"
          " bw_fraction = of the read probe)\n")
    print(f"| case | timing | {FI} µs | {LEAN} µs (p10-p90) | {LEGACY} µs (p10-p90) | lean / legacy | "
          f"{LEAN} TB/s (bw_fraction of read probe) | bit-identical |")
    print("|---|---|---|---|---|---|---|---|")
    for c in cases:
        if c.startswith("extend"):
            continue
        for t in ("eager", "graph"):
            a, g = by.get((c, LEAN, t)), by.get((c, LEGACY, t))
            if not a:
                continue
            if a["status"] != "ok":
                print(f"| `{c}` | {t} | {us(c, FI, t)} | skipped | skipped | - | - | - |")
                continue
            ratio = float(a["step_median_us"]) / float(g["step_median_us"])
            bit = "yes" if LEGACY in a["bitwise_equal_to"].split(";") else "NO"
            print(f"| `{c}` | {t} | {us(c, FI, t)} | {us(c, LEAN, t, True)} | {us(c, LEGACY, t, True)} | "
                  f"{ratio:.3f} | {float(a['tb_per_s']):.2f} ({float(a['bw_fraction']):.2f}) | {bit} |")

    # --- extend table
    print("\n## extend (eager; µs per step of 6 layers / TFLOP/s of the forward part)\n")
    print(f"| extend case | {FI} µs / TFLOP/s | {LEAN} µs / TFLOP/s | {LEGACY} µs / TFLOP/s | bit-identical |")
    print("|---|---|---|---|---|")
    for c in cases:
        if not c.startswith("extend"):
            continue
        cells = []
        for b in (FI, LEAN, LEGACY):
            r = by[(c, b, "eager")]
            cells.append(f"{float(r['step_median_us']):.0f} / {float(r['tflops']):.0f}" if r["status"] == "ok"
                         else r["status"])
        a = by[(c, LEAN, "eager")]
        bit = "yes" if LEGACY in a["bitwise_equal_to"].split(";") else "NO"
        print(f"| `{c}` | " + " | ".join(cells) + f" | {bit} |")

    # --- graph split
    print("\n## graph rows: metadata µs (host part + in-graph metadata graph) / forward µs (6 layers' graph)\n")
    print(f"| case | {FI} metadata / forward | {LEAN} metadata / forward | {LEGACY} metadata / forward |")
    print("|---|---|---|---|")
    meta = {FI: [], LEAN: [], LEGACY: []}
    for c in cases:
        cells, any_row = [], False
        for b in (FI, LEAN, LEGACY):
            r = by.get((c, b, "graph"))
            if not r or r["status"] != "ok":
                cells.append("-")
                continue
            any_row = True
            m = float(r["metadata_median_us"])
            fw = float(r["forward_median_us"]) * int(r["layers"])
            meta[b].append(m)
            cells.append(f"{m:.1f} / {fw:.1f}")
        if any_row:
            print(f"| `{c}` | " + " | ".join(cells) + " |")
    for b, xs in meta.items():
        print(f"  {b}: metadata {min(xs):.1f}-{max(xs):.1f} µs over {len(xs)} graph rows, median "
              f"{statistics.median(xs):.1f}")

    # --- issue-4 bars
    def rng(xs, f="{:.2f}"):
        return f"{f.format(min(xs))}-{f.format(max(xs))}"

    print("\n## issue-4 bars")
    for model in ("llama-3.1-8b", "llama-3.1-70b-tp8", "gemma-3-12b"):
        big = [r for r in lean if r["mode"] == "decode" and r["model"] == model
               and int(r["batch"]) * float(r["kv_len_mean"]) >= 64 * 4096]
        if big:
            tb = [float(r["tb_per_s"]) for r in big]
            print(f"decode {model}, {LEAN}, batch x context >= 64 x 4k ({len(big)} rows): {rng(tb)} TB/s, "
                  f"{rng([float(r['bw_fraction']) for r in big])} of read probe, "
                  f"{rng([x * 1e12 / copy_bw for x in tb])} of copy")
    gaps = []
    for r in lean:
        if r["mode"] == "decode" and r["model"] == "llama-3.1-8b" and int(r["batch"]) * float(r["kv_len_mean"]) >= 64 * 4096:
            f_ = by[(r["case_id"], FI, r["timing"])]
            gaps.append(float(f_["step_median_us"]) / float(r["step_median_us"]))
    print(f"flashinfer (token indices) / {LEAN} (block table) step, same Llama-8B cases: {rng(gaps, '{:.3f}')}")
    b1 = [r for r in lean if r["mode"] == "decode" and r["model"] == "llama-3.1-8b" and r["batch"] == "1"
          and r["kv_len_mean"].startswith("16385")]
    print(f"batch-1 decode at 16k, Llama-8B {LEAN}: " + ", ".join(f"{r['timing']} {float(r['tb_per_s']):.2f} TB/s" for r in b1))
    for model in ("llama-3.1-8b", "llama-3.1-70b-tp8", "gemma-3-12b"):
        ex = [float(r["tflops"]) for r in rows if r["mode"] == "extend" and r["model"] == model and r["status"] == "ok"]
        print(f"extend {model}: {rng(ex, '{:.0f}')} TFLOP/s over all backends")
    print(f"\nsweep wall_seconds {env['wall_seconds']} (issue-15 target 180 s)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summarises the SDPA anchors: anchors.csv (2026-12-03, sixteenth session: the kernels of commit 88cbda4, the windowed
prefill launches' new q-tile order) beside no-store/anchors.csv (the same host right after: the attention alone,
anchors.py --no-store) and run11/anchors.csv (the fifteenth session's, the same script and definition: the step,
its K / V write by a device-to-device copy_, then SDPA, with the GPU spin before each timed call; its own
attention-alone run is run11/no-store/). run10/ is the twelfth session's (attention alone and without the spin: its
small decode anchors timed Python's dispatch and read 3-5x slow), run9/ the eleventh session's (the decode kernel's
narrow CTAs), run8/ the tenth session's (the Hopper prefill kernel's Q loads and O stores by TMA, commit 5689e99),
run7/ the eighth session's (the split K / V rings at head_dim 256), run6/ the seventh session's (the TMA loads,
variant 3, as the default), run5/ the sixth session's (the in-kernel multi-CTA merge of trtllm_mha, prefill variant
2), run4/ the fifth session's (the decode kernel's S^T = K Q^T change and wide fp8 CTAs, one round per backend),
run3/ the run after commit 123cd10 (the Hopper prefill kernel's variant 2 as the default), run2/ the run after
commit 59834dc (the FA2-class prefill), run1/ the first that day.

    python3 results/h200/perf/summary.py        (standard library only; prints Markdown)

Prints the extend ratio_to_best per case (the step anchors, the attention-alone anchors, the previous run), the
decode ratio_to_best ranges per model split by whether one layer's KV exceeds the 60 MiB L2 (the "KV per layer /
L2" of ../pr-evidence.csv's notes; for Gemma-3 that is the windowed layers' figure), and the change of each column
from the previous run to this one, step anchors to step anchors (the cuDNN / flash columns are the same PyTorch
calls: their change is noise, machine to machine; attnbench's also carries the kernel changes between the runs).
"""

import csv
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["mode"], r["model"], r["batch"], r["prefix_len"], r["kv_len"]): r for r in csv.DictReader(f)}


def num(s):
    return float(s) if s else None


def rng(xs, fmt="{:.2f}"):
    xs = [x for x in xs if x is not None]
    return f"{fmt.format(min(xs))}-{fmt.format(max(xs))}" if xs else "-"


def main():
    step = load(os.path.join(HERE, "anchors.csv"))
    run2 = load(os.path.join(HERE, "no-store", "anchors.csv"))  # the attention alone, same host
    run1 = load(os.path.join(HERE, "run11", "anchors.csv"))  # "run 1" below: the previous run (the step, as here)
    l2 = {}
    with open(os.path.join(HERE, "..", "pr-evidence.csv"), newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            m = re.search(r"KV per layer / L2 = ([0-9.]+)", r["note"])
            if m and r["mode"] == "decode":
                l2[(r["model"], r["batch"], str(int(float(r["kv_len_mean"]))))] = float(m.group(1))
    models = list(dict.fromkeys(k[1] for k in run2))

    print("## extend: ratio_to_best (attnbench TFLOP/s; cuDNN, flash TFLOP/s of the step: K / V write + attention), "
          "this run; the attention-alone anchors; the previous run (the step)\n")
    print("| model | batch | prefix | attnbench | cuDNN | flash | ratio_to_best | attention alone | previous |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k, r in step.items():
        if k[0] != "extend":
            continue
        print(f"| {k[1]} | {k[2]} | {k[3]} | {r['attnbench']} | {r['cudnn']} | {r['flash'] or '-'} | "
              f"{float(r['ratio_to_best']):.3f} | {float(run2[k]['ratio_to_best']):.3f} | "
              f"{float(run1[k]['ratio_to_best']):.3f} |")

    print("\n## decode: ratio_to_best ranges (this run's step anchors; the attention-alone anchors; the previous run)\n")
    print("| model | KV per layer > L2: cases | ratio | KV per layer <= L2: cases | ratio |")
    print("|---|---|---|---|---|")
    for m in models:
        big = [k for k in run2 if k[0] == "decode" and k[1] == m and run2[k]["ratio_to_best"]
               and l2.get((m, k[2], k[4]), 0) > 1]
        small = [k for k in run2 if k[0] == "decode" and k[1] == m and run2[k]["ratio_to_best"]
                 and l2.get((m, k[2], k[4]), 0) <= 1]
        cell = lambda ks: (f"{rng([num(step[k]['ratio_to_best']) for k in ks])}; "
                           f"{rng([num(run2[k]['ratio_to_best']) for k in ks])}; "
                           f"{rng([num(run1[k]['ratio_to_best']) for k in ks])}")
        names = lambda ks: ", ".join(f"{k[2]}x{int(k[4]) - 1}" for k in ks)
        print(f"| {m} | {names(big)} | {cell(big)} | {names(small)} | {cell(small)} |")

    print("\n## run-to-run change (this run's step anchors / the previous run's) of each column\n")
    for mode in ("extend", "decode"):
        for part, test in (("KV per layer > L2", lambda v: v > 1), ("KV per layer <= L2", lambda v: v <= 1)):
            ks = [k for k in step if k[0] == mode and step[k]["attnbench"] and k in run1
                  and (mode == "extend" or test(l2.get((k[1], k[2], k[4]), 0)))]
            if mode == "extend" and part.endswith("<= L2"):
                continue
            label = "all cases" if mode == "extend" else part
            cells = []
            for col in ("attnbench", "cudnn", "flash"):
                xs = [num(step[k][col]) / num(run1[k][col]) for k in ks if num(step[k][col]) and num(run1[k][col])]
                cells.append(f"{col} {rng(xs, '{:.3f}')}")
            print(f"- {mode}, {label} ({len(ks)}): " + "; ".join(cells))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summarises the SDPA anchors: anchors.csv (2026-12-06, twenty-first session, an H200: the kernels of commit 8df4dbb,
the paired Hopper prefill CTAs at head_dim 64 / 128; a windowed extend case's anchor now the step built as
attnbench's: a K / V write per layer, scripts/anchors.py's extend_step_figure) beside run12/anchors.csv (the sixteenth
session's, 2026-12-03: the kernels of commit 88cbda4, the windowed extend anchor then the full layer's own figure) and
run12/no-store/anchors.csv (that run's attention-alone anchors, anchors.py --no-store; this run has none: the second
call that was to run them got an H100). run11/ is the fifteenth session's, run10/ the twelfth session's (attention
alone and without the spin: its small decode anchors timed Python's dispatch and read 3-5x slow), run9/ the eleventh
session's (the decode kernel's narrow CTAs), run8/ the tenth session's (the Hopper prefill kernel's Q loads and O
stores by TMA, commit 5689e99), run7/ the eighth session's (the split K / V rings at head_dim 256), run6/ the seventh
session's (the TMA loads, variant 3, as the default), run5/ the sixth session's (the in-kernel multi-CTA merge of
trtllm_mha, prefill variant 2), run4/ the fifth session's (the decode kernel's S^T = K Q^T change and wide fp8 CTAs,
one round per backend), run3/ the run after commit 123cd10 (the Hopper prefill kernel's variant 2 as the default),
run2/ the run after commit 59834dc (the FA2-class prefill), run1/ the first that day.

    python3 results/h200/perf/summary.py        (standard library only; prints Markdown)

Prints the extend ratio_to_best per case (this run; the previous run's step anchors and its attention-alone ones;
for the windowed Gemma-3 cases also this run's full-layer figure from anchors.log, the previous definition), the
decode ratio_to_best ranges per model split by whether one layer's KV exceeds the 60 MiB L2 (the "KV per layer / L2"
of ../pr-evidence.csv's notes; for Gemma-3 that is the windowed layers' figure), and the change of each column from
the previous run to this one (the cuDNN / flash columns are the same PyTorch calls except the windowed extend cases:
their change is noise, machine to machine; attnbench's also carries the kernel changes between the runs).
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
    run2 = load(os.path.join(HERE, "run12", "no-store", "anchors.csv"))  # the previous run's attention alone
    run1 = load(os.path.join(HERE, "run12", "anchors.csv"))  # "run 1" below: the previous run (the step, as here)
    full_layer = {}  # windowed extend: this run's full-layer figures (the previous definition), from the log
    with open(os.path.join(HERE, "anchors.log"), encoding="utf-8") as f:
        for line in f:
            m = re.search(r"anchors: (extend/\S+): the step of .*\(the full layer alone: cudnn (\S+), flash (\S+)\)", line)
            if m:
                full_layer[m.group(1)] = (m.group(2), m.group(3))
    l2 = {}
    with open(os.path.join(HERE, "..", "pr-evidence.csv"), newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            m = re.search(r"KV per layer / L2 = ([0-9.]+)", r["note"])
            if m and r["mode"] == "decode":
                l2[(r["model"], r["batch"], str(int(float(r["kv_len_mean"]))))] = float(m.group(1))
    models = list(dict.fromkeys(k[1] for k in run2))

    print("## extend: ratio_to_best (attnbench TFLOP/s; cuDNN, flash TFLOP/s of the step: K / V write + attention), "
          "this run; windowed cases: against the full layer's own figure (the previous definition); the previous "
          "run (the step; its attention alone)\n")
    print("| model | batch | prefix | attnbench | cuDNN | flash | ratio_to_best | full layer's figure | previous | "
          "previous, attention alone |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = {}
    with open(os.path.join(HERE, "cases.csv"), newline="", encoding="utf-8") as f:
        for c in csv.DictReader(f):
            cases[(c["mode"], c["model"], c["batch"], c["prefix_lens"].split(";")[0])] = c["case_id"]
    for k, r in step.items():
        if k[0] != "extend":
            continue
        fl = full_layer.get(cases.get((k[0], k[1], k[2], k[3]), ""))
        old = "-"
        if fl:
            best = max(float(x) for x in fl if x != "-")
            old = f"{float(r['attnbench']) / best:.3f} ({fl[0]})"
        print(f"| {k[1]} | {k[2]} | {k[3]} | {r['attnbench']} | {r['cudnn']} | {r['flash'] or '-'} | "
              f"{float(r['ratio_to_best']):.3f} | {old} | {float(run1[k]['ratio_to_best']):.3f} | "
              f"{float(run2[k]['ratio_to_best']):.3f} |")

    print("\n## decode: ratio_to_best ranges (this run's step anchors; the previous run's attention-alone anchors; the "
          "previous run)\n")
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

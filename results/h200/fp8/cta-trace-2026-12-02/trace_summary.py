#!/usr/bin/env python3
"""Summarise the decode kernel's per-CTA %globaltimer stamps (trace.patch, ATTNBENCH_DECODE_TRACE_DIR).

Each file g<grid>_w<warps>_d<head_dim>_f<fp8>_c<chunks>.bin holds, per CTA, five uint64: the CTA's start, the end
of its key loop, the end of its output / partial writes, the end of the in-kernel merge (0 where none ran) and its
SM. Prints per file the launch's span (first start to last end), the CTAs' durations, when given fractions of
the CTAs had finished (in % of the span), the SMs' CTA counts and, for grids of one wave, the durations of CTAs
that shared their SM against those that had it alone.
Usage: trace_summary.py FILE.bin ...
"""
import statistics
import struct
import sys


def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * (len(xs) - 1) + 0.5))]


def summarise(path):
    raw = open(path, "rb").read()
    n = len(raw) // 40
    rows = [struct.unpack_from("<5Q", raw, 40 * i) for i in range(n)]
    rows = [r for r in rows if r[0] and r[2] >= r[0]]
    if not rows:
        print("%s: no stamps" % path)
        return
    t0 = min(r[0] for r in rows)
    # Stamp 3 is written only where the in-kernel merge runs: a value from an earlier launch (below the CTA's own
    # start) counts as none.
    rows = [r if r[3] >= r[2] else (r[0], r[1], r[2], 0, r[4]) for r in rows]
    end = [max(r[2], r[3]) - t0 for r in rows]
    span = max(end)
    dur = [(max(r[2], r[3]) - r[0]) / 1e3 for r in rows]
    loop = [(r[1] - r[0]) / 1e3 for r in rows]
    epi = [(r[2] - r[1]) / 1e3 for r in rows]
    merge = [(r[3] - r[2]) / 1e3 for r in rows if r[3]]
    starts = [(r[0] - t0) / 1e3 for r in rows]
    per_sm = {}
    for r, d in zip(rows, dur):
        per_sm.setdefault(r[4], []).append(d)
    counts = {}
    for v in per_sm.values():
        counts[len(v)] = counts.get(len(v), 0) + 1
    print("%s: %d CTAs on %d SMs (CTAs per SM: %s), span %.1f us" % (
        path.split("/")[-1], len(rows), len(per_sm),
        ", ".join("%d x %d" % (k, counts[k]) for k in sorted(counts)), span / 1e3))
    print("  CTA time us: median %.1f  p10 %.1f  p90 %.1f  min %.1f  max %.1f; key loop median %.1f, writes %.2f%s" % (
        statistics.median(dur), q(dur, 0.1), q(dur, 0.9), min(dur), max(dur), statistics.median(loop),
        statistics.median(epi), (", in-kernel merge %.2f (%d CTAs)" % (statistics.median(merge), len(merge))) if merge else ""))
    print("  starts (us after the first): p50 %.1f  p90 %.1f  max %.1f" % (q(starts, 0.5), q(starts, 0.9), max(starts)))
    print("  CTAs finished at %% of the span: 10%% %.1f  50%% %.1f  90%% %.1f  99%% %.1f  last 100.0" % tuple(
        100.0 * q(end, f) / span for f in (0.1, 0.5, 0.9, 0.99)))
    if max(counts) <= 2 and len(counts) == 2:
        alone = [d for v in per_sm.values() if len(v) == 1 for d in v]
        shared = [d for v in per_sm.values() if len(v) == 2 for d in v]
        print("  one CTA on its SM: median %.1f us (%d); two: median %.1f us (%d)" % (
            statistics.median(alone), len(alone), statistics.median(shared), len(shared)))


for p in sys.argv[1:]:
    summarise(p)

#!/usr/bin/env python3
"""What results/h200/fp8/tail-split-2026-12-06/trace/trace_stats.py does not print about per-CTA decode traces (u64
[grid][5]: %globaltimer at the CTA's start, after its key loop, after its partial writes, after the in-kernel merge;
%smid): the big chunks (the grid's first 2 x units CTAs) apart from the tail pieces, the CTAs running over the span, and
the pieces each fifth of the SMs ran, fastest SMs (by their big CTAs' time) first. The chunk count is the file name's
_c<N>."""
import re
import statistics as st
import struct
import sys


def us(ns):
    return ns / 1000.0


for path in sys.argv[1:]:
    raw = open(path, "rb").read()
    ctas = [struct.unpack_from("<5Q", raw, 40 * i) for i in range(len(raw) // 40)]
    n = len(ctas)
    t0 = min(c[0] for c in ctas)
    end = [max(c[2], c[3]) for c in ctas]
    span = max(end) - t0
    mc = re.search(r"_c(\d+)\.bin$", path)
    chunks = int(mc.group(1)) if mc else 2
    big = n // chunks * 2 if chunks > 2 else n
    print(f"{path.split('/')[-2]}/{path.split('/')[-1]}: span {us(span):.1f} us")
    bl = sorted(end[i] - ctas[i][0] for i in range(big))
    print(f"  big CTAs ({big}): time min {us(bl[0]):.1f} p10 {us(bl[big // 10]):.1f} median {us(st.median(bl)):.1f} "
          f"p90 {us(bl[big * 9 // 10]):.1f} max {us(bl[-1]):.1f}; last end {us(max(end[:big]) - t0):.1f}")
    if big < n:
        ps = sorted(ctas[i][0] - t0 for i in range(big, n))
        pd = sorted(end[i] - ctas[i][0] for i in range(big, n))
        print(f"  pieces ({n - big}): start p10 {us(ps[len(ps) // 10]):.1f} p50 {us(ps[len(ps) // 2]):.1f} max "
              f"{us(ps[-1]):.1f}; time min {us(pd[0]):.1f} median {us(pd[len(pd) // 2]):.1f} max {us(pd[-1]):.1f}")
        smt, smp = {}, {}
        for i in range(big):
            smt.setdefault(ctas[i][4], []).append(end[i] - ctas[i][0])
        for i in range(big, n):
            smp[ctas[i][4]] = smp.get(ctas[i][4], 0) + 1
        order = sorted(smt, key=lambda k: st.mean(smt[k]))
        q = max(1, len(order) // 5)
        parts = []
        for f in range(5):
            grp = order[f * q:(f + 1) * q] if f < 4 else order[4 * q:]
            parts.append(f"{us(st.mean(st.mean(smt[k]) for k in grp)):.1f}us/"
                         f"{sum(smp.get(k, 0) for k in grp) / len(grp):.2f}")
        print("  SM fifths, fastest first (big-CTA time / pieces an SM): " + "  ".join(parts))
    prof = [sum(1 for i in range(n) if ctas[i][0] <= t0 + span * (k + 0.5) / 20 < end[i]) for k in range(20)]
    print("  CTAs running at 5 % steps of the span: " + " ".join(map(str, prof)))

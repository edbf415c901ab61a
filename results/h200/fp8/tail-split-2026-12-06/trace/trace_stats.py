#!/usr/bin/env python3
"""Summarises per-CTA decode traces (run_trace.sh): for each .bin (u64 [grid][5]: %globaltimer at the CTA's start,
after its key loop, after its partial writes, after the in-kernel merge; %smid), the kernel's span, the key-loop
and tail phases, how the CTAs sit on the SMs, and where the span goes (the last CTA's path)."""
import statistics as st
import struct
import sys


def load(path):
    raw = open(path, "rb").read()
    n = len(raw) // 40
    return [struct.unpack_from("<5Q", raw, 40 * i) for i in range(n)]


def us(ns):
    return ns / 1000.0


for path in sys.argv[1:]:
    ctas = load(path)
    t0 = min(c[0] for c in ctas)
    end = [max(c[2], c[3]) for c in ctas]
    span = max(end) - t0
    loop = [c[1] - c[0] for c in ctas]
    write = [c[2] - c[1] for c in ctas]
    merge = [c[3] - c[2] for c in ctas if c[3] >= c[2]]
    starts = sorted(c[0] - t0 for c in ctas)
    sms = {}
    for c, e in zip(ctas, end):
        sms.setdefault(c[4], []).append((c[0] - t0, e - t0))
    busy_end = sorted(max(e for _, e in v) for v in sms.values())
    last = max(range(len(ctas)), key=lambda i: end[i])
    print(f"{path.split('/')[-2]}/{path.split('/')[-1]}: {len(ctas)} CTAs on {len(sms)} SMs, span {us(span):.1f} us")
    print(f"  key loop per CTA: min {us(min(loop)):.1f} median {us(st.median(loop)):.1f} max {us(max(loop)):.1f} us")
    print(f"  partial writes: median {us(st.median(write)):.2f} max {us(max(write)):.2f}; merge: median "
          f"{us(st.median(merge)) if merge else 0:.2f} max {us(max(merge)) if merge else 0:.2f} us")
    print(f"  CTA starts: first wave spread {us(starts[min(len(starts), 264) - 1]):.2f} us; last start {us(starts[-1]):.1f} us")
    print(f"  SM finish times: min {us(busy_end[0]):.1f} median {us(st.median(busy_end)):.1f} max {us(busy_end[-1]):.1f} us")
    work = sum(e - s for v in sms.values() for s, e in v)
    print(f"  slot occupancy over the span: {work / (2 * len(sms) * span):.3f} (2 slots per SM)")
    c = ctas[last]
    print(f"  last CTA #{last} on SM {c[4]}: start {us(c[0] - t0):.1f}, loop {us(c[1] - c[0]):.1f}, "
          f"writes {us(c[2] - c[1]):.2f}, merge {us(max(0, c[3] - c[2])):.2f} us")

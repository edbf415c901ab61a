#!/usr/bin/env python3
"""Summarise the Hopper prefill kernel's per-CTA clock64 stamps (ATTNBENCH_HOPPER_TRACE build; experiment only).

Each .bin: 4 int64 (grid x, y, z, CTAs stored), then per CTA 24 uint64:
 0 start  1 after barrier init  2 producer's first load issued  3 producer's last load issued
 4 WG0 Q landed  5 WG0 first K tile ready  6 WG0 first Q K^T done  7 WG0 before the last P V
 8 WG0 last P V done  9 WG0 end (O stored)  10 WG1 end  11 n_tiles  12 ~0 = CTA without rows
 13 globaltimer at start  14 globaltimer at WG1's end  15 SM id  16 WG0 epilogue: before its barrier
 17 after it  18 O staged in shared memory  19 WG0's Q copies issued
The committed-kernel summary (committed-kernel-summary.txt) was printed by the first, 16-stamp version of this
script; this one reads the 24-stamp files of trace.patch.
Usage: trace_summary.py [--compact] FILE.bin...
"""
import struct, sys, statistics as st

def statistics_median(v):
    return st.median(v) if v else float("nan")

compact = "--compact" in sys.argv
for path in [a for a in sys.argv[1:] if a != "--compact"]:
    data = open(path, "rb").read()
    gx, gy, gz, m = struct.unpack("<4q", data[:32])
    rows = [struct.unpack("<24Q", data[32 + i * 192: 32 + (i + 1) * 192]) for i in range(m)]
    rows = [r for r in rows if r[12] != (1 << 64) - 1 and r[11] > 0 and r[10] > r[0] and r[14] > r[13]]
    if not rows:
        continue
    # clock rate from the globaltimer span of long CTAs
    rates = [(r[10] - r[0]) / (r[14] - r[13]) for r in rows if r[14] - r[13] > 2000]
    ghz = st.median(rates) if rates else 1.98
    us = lambda c: c / ghz / 1e3
    per_tile = [us(r[7] - r[6]) / (r[11] - 1) for r in rows if r[11] > 2 and r[7] > r[6]]
    t_tile = st.median(per_tile)
    ph = {k: [] for k in ("q_issued", "init", "q_landed", "first_k", "first_qk", "last_pv", "epilogue", "wg1_after_wg0",
                          "total", "overhead", "prod_first_issue")}
    for r in rows:
        if r[19] > r[0]:
            ph["q_issued"].append(us(r[19] - r[0]))
        ph["init"].append(us(r[1] - r[0]))
        ph.setdefault("epi_finalise", []).append(us(r[16] - r[8]))
        ph.setdefault("epi_bar", []).append(us(r[17] - r[16]))
        ph.setdefault("epi_stage", []).append(us(r[18] - r[17]))
        ph.setdefault("epi_store", []).append(us(r[9] - r[18]))
        ph["prod_first_issue"].append(us(r[2] - r[0]))
        ph["q_landed"].append(us(r[4] - r[0]))
        ph["first_k"].append(us(r[5] - r[0]))
        ph["first_qk"].append(us(r[6] - r[0]))
        ph["last_pv"].append(us(r[8] - r[7]))
        ph["epilogue"].append(us(r[9] - r[8]))
        ph["wg1_after_wg0"].append(us(r[10] - r[9]))
        tot = us(max(r[9], r[10]) - r[0])
        ph["total"].append(tot)
        ph["overhead"].append(tot - r[11] * t_tile)
    # gaps between consecutive CTAs of one SM, and the SMs' busy share of the kernel's span
    by_sm = {}
    for r in rows:
        by_sm.setdefault(r[15], []).append(r)
    gaps, busy = [], []
    t0 = min(r[13] for r in rows)
    t1 = max(r[14] for r in rows)
    for sm, rs in by_sm.items():
        rs.sort(key=lambda r: r[0])
        for a, b in zip(rs, rs[1:]):
            gaps.append(us(b[0] - max(a[9], a[10])))
        busy.append(sum(us(max(r[9], r[10]) - r[0]) for r in rs) / ((t1 - t0) / 1e3))
    ntiles = [r[11] for r in rows]
    if compact:
        print("%-36s span %8.1f us  q_landed %5.2f first_qk %5.2f epi %5.2f total %7.2f tile %.3f" % (
            path.split("/")[-1], (t1 - t0) / 1e3, st.median(ph["q_landed"]), st.median(ph["first_qk"]),
            st.median(ph["epilogue"]), st.median(ph["total"]), t_tile))
        continue
    print("%s: grid %dx%dx%d, %d CTAs on %d SMs, %.2f GHz, span %.1f us, tiles/CTA median %d mean %.1f" %
          (path.split("/")[-1], gx, gy, gz, len(rows), len(by_sm), ghz, (t1 - t0) / 1e3, st.median(ntiles),
           sum(ntiles) / len(ntiles)))
    print("  steady tile %.3f us; SM busy %.1f%% of the span; CTAs per SM %.1f" %
          (t_tile, 100 * st.mean(busy), len(rows) / len(by_sm)))
    line = "  median us: " + "  ".join("%s %.2f" % (k, statistics_median(v)) for k, v in ph.items() if v)
    print(line)
    print("  mean us:   " + "  ".join("%s %.2f" % (k, st.mean(v)) for k, v in ph.items() if v))
    print("  gap between CTAs on an SM: median %.2f mean %.2f us (%d gaps)" %
          (statistics_median(gaps), st.mean(gaps) if gaps else float("nan"), len(gaps)))

#!/usr/bin/env python3
"""Side-by-side summary of an A/B of attnbench rows (scripts/h200_decode_ab.sh, scripts/h200_decode_env_ab.sh).

Reads OUT/KIND-LABEL-ROUND.csv (attnbench result CSVs; KIND fp8 / bf16, LABEL the two variants' names, ROUND
1..ROUNDS) and prints, per kind, backend and (model, batch, kv_len_max; other modes also mode and prefix) of the ok rows
timed as AB_TIMING says (environment; default graph), every round's
forward µs per layer of each variant, the ratio of their best (fastest) rounds, LABEL_B / LABEL_A, and the best
TB/s of each. A missing file is skipped (a round cut by its time limit).

Usage: scripts/ab_summary.py OUT ROUNDS LABEL_A LABEL_B
"""
import csv
import os
import sys


def main(argv):
    if len(argv) != 5:
        sys.stderr.write("usage: ab_summary.py OUT ROUNDS LABEL_A LABEL_B\n")
        return 2
    out, labels = argv[1], argv[3:5]
    timing = os.environ.get("AB_TIMING", "graph")
    try:
        rounds = int(argv[2])
    except ValueError:
        sys.stderr.write("ab_summary.py: ROUNDS must be an integer, got %r\n" % argv[2])
        return 2
    for kind in ("fp8", "bf16"):
        rows = {}
        for v in labels:
            for r in range(1, rounds + 1):
                try:
                    f = open("%s/%s-%s-%d.csv" % (out, kind, v, r))
                except OSError:
                    continue
                with f:
                    for row in csv.DictReader(f):
                        if row["status"] == "ok" and row["timing"] == timing:
                            what = " " + row["model"] if row["mode"] == "decode" else " %s %s prefix=%d" % (
                                row["model"], row["mode"], int(float(row["prefix_len_mean"] or 0)))
                            key = (row["backend"], what, int(row["batch"]), int(row["kv_len_max"]))
                            rows.setdefault(key, {}).setdefault(v, []).append(
                                (float(row["forward_median_us"]), float(row["tb_per_s"] or "nan")))
        for (backend, what, b, kv), d in sorted(rows.items()):
            x, y = d.get(labels[0], []), d.get(labels[1], [])
            if not (x and y):
                continue
            print("%s %-12s%s b=%d kv=%d fwd_us %s %s %s %s  %s/%s %.3f  TB/s %s %.2f %s %.2f" % (
                kind, backend, what, b, kv, labels[0], "/".join("%.1f" % t for t, _ in x), labels[1],
                "/".join("%.1f" % t for t, _ in y), labels[1], labels[0],
                min(t for t, _ in y) / min(t for t, _ in x), labels[0], max(s for _, s in x), labels[1],
                max(s for _, s in y)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

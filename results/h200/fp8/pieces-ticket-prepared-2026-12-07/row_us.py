#!/usr/bin/env python3
"""forward_median_us, tb_per_s and status of each row of an attnbench CSV, one line."""
import csv
import os
import sys
if not os.path.exists(sys.argv[1]):
    sys.exit(print(f"no {sys.argv[1]}"))
out = []
for row in csv.DictReader(open(sys.argv[1])):
    try:
        out.append(f"{row['backend']}/{row['timing']} {float(row['forward_median_us']):.1f}us "
                   f"{float(row['tb_per_s']):.3f}TB/s {row['status']}")
    except (ValueError, KeyError):
        out.append(f"{row.get('backend')}/{row.get('timing')} {row.get('status')} {row.get('note', '')[:80]}")
print("; ".join(out))

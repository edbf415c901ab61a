#!/usr/bin/env python3
"""scripts/plot.py: PNGs from the committed H200 results and from a tiny CSV written here; exit 2 with one
line on bad input. Plain unittest: `python3 tests/plots/test_plot.py` (ctest runs exactly that)."""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "plot.py")
H200 = os.path.join(ROOT, "results", "h200")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_plot(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=300)


def tiny_rows():
    """Two backends, decode, batches 1/8, contexts 1k/4k, eager and graph; one skipped row."""
    header = open(os.path.join(H200, "pr-evidence.csv"), encoding="utf-8").readline().strip().split(",")
    rows = []
    for backend, scale in (("trtllm_mha", 1.0), ("flashinfer", 1.2)):
        for timing in ("eager", "graph"):
            for batch in (1, 8):
                for kv in (1024, 4096):
                    med = scale * (50 + batch * kv / 100.0)
                    r = dict.fromkeys(header, "")
                    r.update(schema_version="1", case_id=f"decode/tiny/L=2/b={batch}/kv={kv}/p=16/bf16",
                             backend=backend, device="cpu", mode="decode", timing=timing, status="ok", model="tiny",
                             layers="2", batch=str(batch), q_tokens=str(batch), kv_len_mean=str(kv + 1),
                             step_median_us=str(med), step_p10_us=str(med * 0.95), step_p90_us=str(med * 1.1),
                             bw_fraction=str(min(1.0, batch * kv / 40000.0)),
                             ctor_device_bytes=str(1000000 if backend == "trtllm_mha" else 3000000),
                             ctor_pinned_bytes="0" if backend == "trtllm_mha" else "500000",
                             graph_state_device_bytes="2000" if timing == "graph" else "",
                             capture_device_bytes="300" if timing == "graph" else "",
                             capture_pinned_bytes="0" if timing == "graph" else "")
                    rows.append(r)
    skipped = dict(rows[0], status="skipped", step_median_us="", case_id="decode/tiny/L=2/b=64/kv=4096/p=16/bf16")
    rows.append(skipped)
    return header, rows


class PlotTest(unittest.TestCase):
    def assert_pngs(self, out_dir, stdout, expected):
        printed = [line for line in stdout.splitlines() if line.strip()]
        self.assertEqual(sorted(os.path.basename(p) for p in printed), sorted(expected), stdout)
        for path in printed:
            self.assertTrue(os.path.isfile(path), path)
            self.assertEqual(os.path.dirname(os.path.abspath(path)), os.path.abspath(out_dir))
            with open(path, "rb") as f:
                data = f.read()
            self.assertGreater(len(data), 1000, path)
            self.assertEqual(data[:8], PNG_SIGNATURE, path)

    def test_committed_h200_results(self):
        with tempfile.TemporaryDirectory() as out:
            r = run_plot(os.path.join(H200, "pr-evidence.csv"), "--out", out,
                         "--memory-csv", os.path.join(H200, "memory.csv"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assert_pngs(out, r.stdout, [
                "latency_llama-3.1-8b.png", "latency_llama-3.1-70b-tp8.png", "latency_gemma-3-12b.png",
                "bandwidth_fraction.png", "memory_rows.png", "memory_tags.png"])
            for name in os.listdir(out):
                self.assertLess(os.path.getsize(os.path.join(out, name)), 300 * 1024, name)

    def test_tiny_csv(self):
        header, rows = tiny_rows()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tiny.csv")
            with open(path, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=header)
                w.writeheader()
                w.writerows(rows)
            out = os.path.join(tmp, "plots", "nested")  # created by the script
            r = run_plot(path, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assert_pngs(out, r.stdout, ["latency_tiny.png", "bandwidth_fraction.png", "memory_rows.png"])

    def test_missing_file_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as out:
            r = run_plot(os.path.join(out, "absent.csv"), "--out", out)
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("absent.csv", r.stderr)
            self.assertEqual(os.listdir(out), [])

    def test_missing_column_exits_2_naming_it(self):
        header, rows = tiny_rows()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.csv")
            cols = [c for c in header if c != "step_median_us"]
            with open(path, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
                w.writeheader()
                w.writerows(rows)
            r = run_plot(path, "--out", tmp)
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("missing column step_median_us", r.stderr)

    def test_bad_number_and_wrong_memory_csv_exit_2(self):
        header, rows = tiny_rows()
        rows[0]["batch"] = "eight"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.csv")
            with open(path, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=header)
                w.writeheader()
                w.writerows(rows)
            r = run_plot(path, "--out", tmp)
            self.assertEqual(r.returncode, 2)
            self.assertIn("batch 'eight' is not a number", r.stderr)
            # A results CSV given as the memory CSV: its memory columns are missing.
            r = run_plot(os.path.join(H200, "pr-evidence.csv"), "--out", tmp,
                         "--memory-csv", os.path.join(H200, "pr-evidence.csv"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("missing columns phase, tag, kind, bytes", r.stderr)


if __name__ == "__main__":
    unittest.main()

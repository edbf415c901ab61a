#!/usr/bin/env python3
"""scripts/plot.py: PNGs from the committed H200 results and from a tiny CSV written here; exit 2 with one
line on bad input. Plain unittest: `python3 tests/plots/test_plot.py` (ctest runs exactly that)."""

import csv
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "plot.py")

# The figure tests import plot.py and draw in-process: they need matplotlib, which Debian's python3 serves
# (a pyenv python may shadow it, as plot.py itself handles).
try:
    import matplotlib  # noqa: F401
except ImportError:
    if os.environ.get("ATTNBENCH_PLOT_TEST_REEXEC") != "1" and os.path.exists("/usr/bin/python3") \
            and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.environ["ATTNBENCH_PLOT_TEST_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__)] + sys.argv[1:])
    raise
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

_spec = importlib.util.spec_from_file_location("attnbench_plot", SCRIPT)
plot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plot)
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
                "ratio_llama-3.1-8b.png", "ratio_llama-3.1-70b-tp8.png", "ratio_gemma-3-12b.png",
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
            self.assert_pngs(out, r.stdout, ["ratio_tiny.png", "bandwidth_fraction.png", "memory_rows.png"])

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


def numeric(rows):
    """tiny_rows() as plot.read_csv returns them: numeric columns as float or None."""
    out = []
    for r in rows:
        r = dict(r)
        for c in plot.NUMERIC:
            r[c] = float(r[c]) if r.get(c) not in (None, "") else None
        out.append(r)
    return out


def three_backend_rows():
    """tiny_rows() plus a trtllm_mha_legacy twin of trtllm_mha (slightly noisier), ok rows only."""
    _, rows = tiny_rows()
    rows = [r for r in rows if r["status"] == "ok"]
    legacy = []
    for r in rows:
        if r["backend"] == "trtllm_mha":
            med = float(r["step_median_us"]) * 1.001
            legacy.append(dict(r, backend="trtllm_mha_legacy", step_median_us=str(med), step_p10_us=str(med * 0.9),
                               step_p90_us=str(med * 1.2)))
    return numeric(rows + legacy)


class RatioFigureTest(unittest.TestCase):
    def test_ratio_lies_inside_its_band(self):
        # Equal medians, both p10 / p10 and p90 / p90 above 1 (the report's old band would miss the ratio).
        a = dict(step_median_us=100.0, step_p10_us=99.0, step_p90_us=104.0)
        b = dict(step_median_us=100.0, step_p10_us=97.0, step_p90_us=102.0)
        r, lo, hi = plot.ratio_band(a, b)
        self.assertAlmostEqual(r, 1.0)
        self.assertAlmostEqual(lo, 99.0 / 102.0)
        self.assertAlmostEqual(hi, 104.0 / 97.0)
        self.assertTrue(lo <= r <= hi)
        # Over every pair of the committed H200 rows.
        rows = plot.read_csv(os.path.join(H200, "pr-evidence.csv"), plot.RESULT_COLUMNS, plot.NUMERIC, "results")
        rows = [x for x in rows if x["status"] == "ok"]
        checked = 0
        for (mode, timing), (cases, pairs) in plot.ratio_points(rows).items():
            for pts in pairs.values():
                for _, r, lo, hi in pts:
                    self.assertTrue(lo <= r <= hi, (mode, timing, r, lo, hi))
                    checked += 1
        self.assertGreater(checked, 100)
        self.assertIsNone(plot.ratio_band(dict(step_median_us=None), b))

    def test_panels_per_mode_only_with_ratios(self):
        rows = three_backend_rows()
        # An extend case run by flashinfer alone: no ratio, so no extend panel.
        rows.append(dict(rows[0], mode="extend", backend="flashinfer", case_id="extend/tiny/L=2/b=1/prefix=0/ext=64/p=16/bf16"))
        panels = plot.ratio_points(rows)
        self.assertEqual(list(panels), [("decode", "graph")])
        cases, pairs = panels[("decode", "graph")]
        self.assertEqual(list(pairs), [("trtllm_mha", "trtllm_mha_legacy"), ("trtllm_mha", "flashinfer")])
        self.assertEqual(len(cases), 4)
        # Tick labels: only what differs between the cases, in batch then context order.
        self.assertEqual(plot.case_labels(cases), ["b=1\nkv=1024", "b=1\nkv=4096", "b=8\nkv=1024", "b=8\nkv=4096"])

    def test_figure_has_no_empty_panel_and_legend_off_the_data(self):
        rows = three_backend_rows()
        drawn = []
        real_savefig = plt.Figure.savefig

        def keep(fig, *args, **kwargs):
            fig.canvas.draw()
            drawn.append(fig)
            return real_savefig(fig, *args, **kwargs)

        plt.Figure.savefig = keep
        try:
            with tempfile.TemporaryDirectory() as out:
                written = plot.plot_ratios(rows, out, plt)
        finally:
            plt.Figure.savefig = real_savefig
        self.assertEqual([os.path.basename(p) for p in written], ["ratio_tiny.png"])
        fig = drawn[0]
        renderer = fig.canvas.get_renderer()
        self.assertEqual(len(fig.axes), 1)
        for ax in fig.axes:
            self.assertGreater(len(ax.lines) + len(ax.collections), 0, "an empty panel")
            self.assertIsNone(ax.get_legend(), "a legend inside a panel")
            labels = [t.get_text() for t in ax.get_xticklabels()]
            self.assertTrue(all(labels), labels)
            self.assertTrue(all(len(line) <= 12 for t in labels for line in t.split("\n")), labels)
        self.assertEqual(len(fig.legends), 1)
        legend_box = fig.legends[0].get_window_extent(renderer)
        for ax in fig.axes:
            self.assertFalse(legend_box.overlaps(ax.get_window_extent(renderer)), "the legend covers a panel")


if __name__ == "__main__":
    unittest.main()

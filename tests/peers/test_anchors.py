#!/usr/bin/env python3
"""scripts/anchors.py without torch or a GPU: the case-list and results parsing, the work formula (checked
against attnbench's own tflops / tb_per_s in results/baseline/smoke.csv), ratio_to_best, the CSV it writes,
a whole --dry-run, bad input (exit 2, one line), and the rounds: the best-round choice, the spread and its
WARNING, the interleaving, the rounds sidecar CSV, and measure_case / main with a fake torch and Sdpa (scripted
round times) that check the plumbing from the timers to both CSVs.

Plain unittest: `python3 tests/peers/test_anchors.py` (ctest runs exactly that, with ATTNBENCH_BINARY naming
the built attnbench; the tests that export a case list skip without it)."""

import contextlib
import csv
import io
import os
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_test_util import BINARY, ROOT, TempDir  # noqa: E402  (also puts scripts/ on the path)
import anchors as an  # noqa: E402
SMOKE = os.path.join(ROOT, "configs", "smoke.toml")
BASELINE_CSV = os.path.join(ROOT, "results", "baseline", "smoke.csv")

CASE_HEADER = ("case_list_version,case_id,mode,model,num_qo_heads,num_kv_heads,head_dim,dtype,batch,prefix_lens,"
               "new_lens,sm_scale\n")


def case_line(cid, mode, batch, pre, new, hq=32, hkv=8, d=128, dtype="bf16", model="llama-3.1-8b"):
    return "1,%s,%s,%s,%d,%d,%d,%s,%d,%s,%s,0.08838834764831845\n" % (
        cid, mode, model, hq, hkv, d, dtype, batch, ";".join([str(pre)] * batch), ";".join([str(new)] * batch))


def results_text(rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["case_id", "backend", "timing", "status", "tflops", "tb_per_s"])
    for r in rows:
        w.writerow(r)
    return out.getvalue()


class Parsing(unittest.TestCase):
    def test_case_list_keeps_extend_and_decode_only(self):
        text = CASE_HEADER + case_line("e1", "extend", 4, 4096, 4096) + case_line("v1", "target_verify", 16, 4096, 4) + \
            case_line("d1", "decode", 64, 16384, 1, hq=8, hkv=1)
        cases = an.read_case_list(text)
        self.assertEqual([c.case_id for c in cases], ["e1", "d1"])
        e, d = cases
        self.assertEqual((e.batch, e.prefix_len, e.extend_len, e.kv_len), (4, 4096, 4096, 8192))
        self.assertEqual((d.num_qo_heads, d.num_kv_heads, d.prefix_len, d.extend_len, d.kv_len), (8, 1, 16384, 1, 16385))
        self.assertTrue(d.uniform())

    def test_unequal_lengths_are_not_uniform(self):
        text = CASE_HEADER + "1,e,extend,m,32,8,128,bf16,2,0;5,7;7,0.1\n"
        (c,) = an.read_case_list(text)
        self.assertFalse(c.uniform())

    def test_bad_case_lists_name_the_problem(self):
        with self.assertRaisesRegex(an.InputError, "no column"):
            an.read_case_list("case_id,mode\nx,decode\n", "cases.csv")
        with self.assertRaisesRegex(an.InputError, "line 2 prefix_lens"):
            an.read_case_list(CASE_HEADER + "1,e,extend,m,32,8,128,bf16,1,abc,7,0.1\n")
        with self.assertRaisesRegex(an.InputError, "batch=2"):
            an.read_case_list(CASE_HEADER + "1,e,extend,m,32,8,128,bf16,2,5,7,0.1\n")

    def test_results_keep_the_best_ok_figure_per_case(self):
        figs = an.read_attnbench_figures(results_text([
            ["e1", "flashinfer", "eager", "ok", "250", "0.1"],
            ["e1", "trtllm_mha", "eager", "ok", "290.5", "0.2"],
            ["e1", "trtllm_mha", "graph", "failed", "999", "9"],
            ["d1", "flashinfer", "graph", "ok", "", "4.1"],
            ["d2", "flashinfer", "eager", "skipped", "", ""],
        ]))
        self.assertEqual(figs["e1"], {"tflops": 290.5, "tb_per_s": 0.2})
        self.assertEqual(figs["d1"], {"tb_per_s": 4.1})
        self.assertNotIn("d2", figs)

    def test_rows_that_computed_other_attention_are_left_out(self):
        text = ("case_id,backend,timing,status,tflops,tb_per_s,note\n"
                "e1,flashinfer,eager,ok,400,1.0,new tokens unwindowed: SGLang's FlashInfer ragged extend\n"
                "e1,trtllm_mha,eager,ok,300,0.5,fmha_v2 prefill\n"
                "d1,flashinfer,eager,ok,,3.0,unwindowed: SGLang's Cohere2ForCausalLM reports no window\n")
        figs = an.read_attnbench_figures(text)
        self.assertEqual(figs["e1"], {"tflops": 300.0, "tb_per_s": 0.5})
        self.assertNotIn("d1", figs)

    def test_attnbenchs_own_notes_mark_flashinfers_unwindowed_extend(self):
        """The marker matches what attnbench writes: a timed CPU run of an extend longer than tiny-swa's window."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.csv")
            r = subprocess.run([BINARY, "run", "--device", "cpu", "--model", "tiny-swa", "--mode", "extend",
                                "--batch", "1", "--prefix-len", "0", "--extend-len", "48", "--page-size", "16",
                                "--min-samples", "1", "--max-samples", "2", "--time-budget", "0.05", "--quiet",
                                "--out", out], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                text = f.read()
        rows = [x for x in csv.DictReader(io.StringIO(text)) if x["status"] == "ok" and x["tflops"]]
        marked = {x["backend"] for x in rows if an.OTHER_ATTENTION_NOTE in x["note"]}
        self.assertEqual(marked, {"flashinfer"})
        kept = max(float(x["tflops"]) for x in rows if x["backend"] != "flashinfer")
        (figs,) = an.read_attnbench_figures(text).values()
        self.assertEqual(figs["tflops"], kept)

    def test_bad_results_name_the_line(self):
        with self.assertRaisesRegex(an.InputError, "line 2: tflops 'x'"):
            an.read_attnbench_figures(results_text([["e1", "b", "eager", "ok", "x", ""]]), "r.csv")
        with self.assertRaisesRegex(an.InputError, "no column tflops"):
            an.read_attnbench_figures("case_id,status,tb_per_s\n")


class Work(unittest.TestCase):
    def test_extend_flops_count_causal_pairs_with_the_prefix(self):
        (c,) = an.read_case_list(CASE_HEADER + case_line("e", "extend", 2, 3, 2, hq=1, hkv=1, d=1))
        # rows see 4 and 5 keys: 9 pairs per request, 4 FLOPs each (QK and PV multiply-adds)
        self.assertEqual(an.layer_work(c)[0], 2 * 4 * 9)

    def test_decode_bytes_count_kv_once_and_the_new_token_rows(self):
        (c,) = an.read_case_list(CASE_HEADER + case_line("d", "decode", 64, 4095, 1))
        kv = 64 * 2 * 4096 * 8 * 128 * 2
        rows = 64 * (2 * 32 + 2 * 8) * 128 * 2
        self.assertEqual(an.layer_work(c)[1], kv + rows)
        self.assertAlmostEqual(an.figure(c, 1e-3), (kv + rows) / 1e-3 / 1e12)

    def test_windowed_extend_flops_count_min_of_visible_keys_and_the_window(self):
        header = CASE_HEADER.rstrip("\n") + ",layer_windows\n"
        for pre, new, w in ((0, 7, 2), (3, 5, 1), (3, 5, 6), (0, 4, 0), (2, 3, 100), (5, 4, -1), (0, 1, 0)):
            line = case_line("e", "extend", 2, pre, new, hq=1, hkv=1, d=1).rstrip("\n")
            (c,) = an.read_case_list(header + line + ",%d\n" % w)
            brute = sum(min(pre + j + 1, w + 1) if w >= 0 else pre + j + 1 for j in range(new))
            self.assertEqual(an.extend_layer_flops(c, w), 2 * 4 * brute, (pre, new, w))
        self.assertEqual(an.extend_layer_flops(c, -1), an.layer_work(c)[0])  # no window: the causal count

    def test_windowed_extend_flops_are_attnbenchs_on_its_committed_rows(self):
        """The step's FLOPs over its layers are what attnbench divided by its forward time (tflops), on the committed
        Gemma-3 extend rows of the H100 sweep (the windowed rows; not FlashInfer's unwindowed ones)."""
        d = os.path.join(ROOT, "results", "h100", "perf-2026-12-06")
        with open(os.path.join(d, "cases.csv"), encoding="utf-8") as f:
            cases = {c.case_id: c for c in an.read_case_list(f.read())}
        checked = 0
        with open(os.path.join(d, "pr-evidence.csv"), encoding="utf-8") as f:
            for r in csv.DictReader(f):
                c = cases.get(r["case_id"])
                if c is None or not an.windowed_extend(c) or r["status"] != "ok" or "unwindowed" in r["note"]:
                    continue
                flops = sum(an.extend_layer_flops(c, w) for w in c.layer_windows)
                timed = float(r["tflops"]) * 1e12 * float(r["forward_median_us"]) * 1e-6 * int(r["layers"])
                self.assertAlmostEqual(flops / timed, 1.0, places=6, msg=r["case_id"])
                checked += 1
        self.assertGreaterEqual(checked, 8)

    def test_windowed_extend_step_counts_a_write_per_layer(self):
        header = CASE_HEADER.rstrip("\n") + ",layer_windows\n"
        line = case_line("g", "extend", 4, 0, 4096, hq=16, hkv=8, d=256, model="gemma-3-12b").rstrip("\n")
        (c,) = an.read_case_list(header + line + ",1023;1023;-1\n")
        self.assertTrue(an.windowed_extend(c))
        self.assertFalse(an.windowed_decode(c))
        full, win = an.layer_work(c)[0], an.extend_layer_flops(c, 1023)
        rate = full / (900.0 - 60.0)  # FLOPs per us of the full layer's attention
        expect = (2 * win + full) / ((2 * win + full) / rate + 3 * 60.0) / 1e6
        self.assertAlmostEqual(an.extend_step_figure(c, 900.0, 60.0), expect)
        # one write per layer weighs more on windowed layers: below the full layer's own figure
        self.assertLess(an.extend_step_figure(c, 900.0, 60.0), an.figure(c, 900e-6))
        # without a window the step is the full layer's figure
        (plain,) = an.read_case_list(header + line + ",-1;-1;-1\n")
        self.assertAlmostEqual(an.extend_step_figure(plain, 900.0, 60.0), an.figure(plain, 900e-6))
        self.assertAlmostEqual(an.extend_step_figure(plain, 900.0, 0.0), an.figure(plain, 900e-6))
        self.assertIsNone(an.extend_step_figure(c, None, 60.0))  # refused
        self.assertIsNone(an.extend_step_figure(c, 60.0, 60.0))  # no attention time left: no figure

    def test_windowed_decode_is_a_step_of_its_layers(self):
        header = CASE_HEADER.rstrip("\n") + ",layer_windows\n"
        line = case_line("g", "decode", 16, 4096, 1, hq=16, hkv=8, d=256, model="gemma-3-12b").rstrip("\n")
        (c,) = an.read_case_list(header + line + ",1023;1023;-1\n")
        self.assertTrue(an.windowed_decode(c))
        layers = an.decode_layer_cases(c)
        # a windowed layer reads window_left + 1 keys (attnbench's min(prefix + new, window_left + new)), the global
        # layer all 4097
        self.assertEqual([lc.kv_len for lc in layers], [1024, 1024, 4097])
        b_win, b_full = an.layer_work(layers[0])[1], an.layer_work(layers[2])[1]
        figs = {1024: 2.0, 4097: 4.0}
        expect = (2 * b_win + b_full) / (2 * b_win / 2e12 + b_full / 4e12) / 1e12
        self.assertAlmostEqual(an.step_figure(layers, figs), expect)
        self.assertLess(an.step_figure(layers, figs), 4.0)  # not the global layer's rate alone
        self.assertIsNone(an.step_figure(layers, {1024: 2.0, 4097: None}))  # a refused layer: no step figure
        with self.assertRaises(an.InputError):
            an.read_case_list(header + line + ",1023;x;-1\n")
        (full,) = an.read_case_list(header + line + ",-1;-1;-1\n")
        self.assertFalse(an.windowed_decode(full))

    def test_ratio_is_against_the_better_anchor(self):
        self.assertAlmostEqual(an.ratio_to_best(300.0, 600.0, 320.0), 0.5)
        self.assertAlmostEqual(an.ratio_to_best(4.0, None, 3.2), 1.25)
        self.assertIsNone(an.ratio_to_best(None, 600.0, 320.0))
        self.assertIsNone(an.ratio_to_best(300.0, None, None))


class Rounds(unittest.TestCase):
    def test_the_best_round_is_the_fastest_median(self):
        # 2026-12-01's collapse: one slow stretch must not become the anchor, whichever round it falls on
        self.assertEqual(an.best_round([812.0, 1650.0, 790.0]), 790.0)
        self.assertEqual(an.best_round([1650.0, 790.0, 812.0]), 790.0)
        self.assertEqual(an.best_round([42.5]), 42.5)

    def test_spread_is_max_minus_min_over_min_in_percent(self):
        self.assertEqual(an.spread_pct([100.0, 120.0]), 20.0)
        self.assertAlmostEqual(an.spread_pct([812.0, 1650.0, 790.0]), (1650.0 - 790.0) / 790.0 * 100.0)
        self.assertEqual(an.spread_pct([120.0, 100.0, 110.0]), 20.0)  # order does not matter
        self.assertEqual(an.spread_pct([17.0]), 0.0)

    def test_log_gives_every_round_and_warns_above_20_percent(self):
        lines = an.rounds_log("d/b=16", "cudnn", "none", [120.0, 100.0, 110.0], 2.37, "TB/s")
        self.assertEqual(lines, ["d/b=16: cudnn (none) rounds 120.0 / 100.0 / 110.0 us, spread 20.0%: best 100.0 us "
                                 "-> 2.37 TB/s"])  # exactly 20%: no warning
        lines = an.rounds_log("d/b=16", "flash", "none", [100.0, 120.5], 1.91, "TB/s")
        self.assertEqual(len(lines), 2)
        self.assertIn("rounds 100.0 / 120.5 us, spread 20.5%: best 100.0 us -> 1.91 TB/s", lines[0])
        self.assertTrue(lines[1].startswith("d/b=16: WARNING: flash rounds spread 20.5%"), lines[1])
        self.assertEqual(an.SPREAD_WARN_PCT, 20.0)

    def test_rounds_interleave_the_backends_cudnn_first(self):
        calls = []

        def timer(name, times):
            it = iter(times)
            return lambda: calls.append(name) or next(it)

        # given flash first (as measure_case builds an extend-with-prefix case's runs): still cudnn, flash, ...
        got = an.run_rounds({"flash": timer("flash", [5.0, 6.0, 7.0]), "cudnn": timer("cudnn", [1.0, 2.0, 3.0])}, 3)
        self.assertEqual(calls, ["cudnn", "flash"] * 3)
        self.assertEqual(got, {"cudnn": [1.0, 2.0, 3.0], "flash": [5.0, 6.0, 7.0]})
        calls.clear()
        self.assertEqual(an.run_rounds({"flash": timer("flash", [9.0, 8.0])}, 2), {"flash": [9.0, 8.0]})
        self.assertEqual(calls, ["flash", "flash"])  # a refused backend: the other alone
        self.assertEqual(an.run_rounds({}, 3), {})

    def test_sidecar_lists_every_round_next_to_the_anchors_csv(self):
        self.assertEqual(an.rounds_path(os.path.join("out", "anchors.csv")), os.path.join("out", "anchors-rounds.csv"))
        self.assertEqual(an.rounds_path("a"), "a-rounds.csv")
        rows = an.round_rows("g@keys=1024", {"flash": [16.8, 17.25], "cudnn": [12.0, 1650.5]})
        rows += an.round_rows("d", {"cudnn": [3.0]})
        with TempDirPath() as tmp:
            path = os.path.join(tmp, "sub", "anchors-rounds.csv")
            an.write_rounds_csv(path, rows)
            with open(path, encoding="utf-8") as f:
                text = f.read()
        self.assertEqual(text, "case_id,backend,round,median_us\n"
                               "g@keys=1024,cudnn,1,12.000\n"
                               "g@keys=1024,cudnn,2,1650.500\n"
                               "g@keys=1024,flash,1,16.800\n"
                               "g@keys=1024,flash,2,17.250\n"
                               "d,cudnn,1,3.000\n")


class TempDirPath:
    """A temporary folder as a context manager (for tests outside TempDir)."""

    def __enter__(self):
        import tempfile
        self._tmp = tempfile.TemporaryDirectory()
        return self._tmp.name

    def __exit__(self, *exc):
        self._tmp.cleanup()


class FakeOut:
    """What measure_case does with an SDPA output: (a - b).float().abs().max().item()."""

    def __init__(self, v):
        self.v = v

    def float(self):
        return self

    def __sub__(self, other):
        return FakeOut(self.v - other.v)

    def abs(self):
        return FakeOut(abs(self.v))

    def max(self):
        return self

    def item(self):
        return self.v


class FakeSdpa:
    """Sdpa without torch: time_us returns the scripted round medians of (kv_len, backend), in order; the K / V
    write alone ("store") takes 2 us unless scripted; host_bound is what every instance reports as host-bound."""
    script = {}  # (kv_len, backend) -> [round medians, us]
    calls = []  # (kv_len, backend, reps, warmup) per time_us call
    stores = []  # the store flag of every instance
    host_bound = 0

    def __init__(self, c, seed=0, store=True):
        self.c = c
        FakeSdpa.stores.append(store)
        self.timed_calls = 0
        self.host_bound_calls = FakeSdpa.host_bound

    def call(self, backend, how):
        def run():
            return FakeOut(0.0)
        run.backend = backend
        return run

    def write_kv(self):
        pass
    write_kv.backend = "store"  # what time_us keys the fake's script on

    def store_bytes(self):
        return 4000

    def time_us(self, run, reps, warmup):
        FakeSdpa.calls.append((self.c.kv_len, run.backend, reps, warmup))
        self.timed_calls += reps
        if run.backend == "store" and (self.c.kv_len, "store") not in FakeSdpa.script:
            return 2.0
        return FakeSdpa.script[(self.c.kv_len, run.backend)].pop(0)


def fake_torch():
    t = types.ModuleType("torch")
    t.cuda = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None)
    return t


class MeasureWithFakes(TempDir):
    def setUp(self):
        super().setUp()
        FakeSdpa.calls = []
        FakeSdpa.stores = []
        FakeSdpa.host_bound = 0
        patches = [mock.patch.dict(sys.modules, {"torch": fake_torch()}), mock.patch.object(an, "Sdpa", FakeSdpa)]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)

    def test_measure_case_keeps_each_backends_best_round(self):
        (c,) = an.read_case_list(CASE_HEADER + case_line("d", "decode", 16, 1024, 1))
        FakeSdpa.script = {(1025, "cudnn"): [30.0, 12.5, 14.0], (1025, "flash"): [16.8, 17.0, 16.9]}
        logged, rows = [], []
        FakeSdpa.script[(1025, "store")] = [3.0, 2.5, 2.75]
        cudnn, flash = an.measure_case(c, 7, 2, 3, logged.append, "d", rows)
        self.assertEqual([(k, b) for k, b, _, _ in FakeSdpa.calls],
                         [(1025, "cudnn"), (1025, "flash")] * 3 + [(1025, "store")] * 3)
        self.assertEqual({(r, w) for _, _, r, w in FakeSdpa.calls}, {(7, 2)})  # every round: --reps after --warmup
        self.assertEqual(FakeSdpa.stores, [True])  # the step: the K / V write, then the attention
        self.assertIn("d: in each timed call the K / V write of the new tokens took 2.5 us (2 GB/s read + write; best "
                      "of 3 rounds), the attention the rest", logged)
        self.assertEqual(cudnn, an.figure(c, 12.5e-6))
        self.assertEqual(flash, an.figure(c, 16.8e-6))
        warnings = [m for m in logged if "WARNING" in m]
        self.assertEqual(warnings, ["d: WARNING: cudnn rounds spread 140.0% (> 20%): the GPU was not steady; the best "
                                    "round is kept"])
        self.assertIn("d: flash (none) rounds 16.8 / 17.0 / 16.9 us, spread 1.2%%: best 16.8 us -> %.4g TB/s" % flash,
                      logged)
        self.assertEqual([(r["backend"], r["round"], r["median_us"]) for r in rows],
                         [("cudnn", "1", "30.000"), ("cudnn", "2", "12.500"), ("cudnn", "3", "14.000"),
                          ("flash", "1", "16.800"), ("flash", "2", "17.000"), ("flash", "3", "16.900")])
        self.assertEqual({r["case_id"] for r in rows}, {"d"})

    def test_no_store_times_the_attention_alone_and_host_bound_calls_warn(self):
        (c,) = an.read_case_list(CASE_HEADER + case_line("d", "decode", 16, 1024, 1))
        FakeSdpa.script = {(1025, "cudnn"): [12.0], (1025, "flash"): [16.0]}
        FakeSdpa.host_bound = 3
        logged = []
        an.measure_case(c, 5, 1, 1, logged.append, "d", [], store=False)
        self.assertEqual(FakeSdpa.stores, [False])
        self.assertEqual([b for _, b, _, _ in FakeSdpa.calls], ["cudnn", "flash"])  # no store timed
        self.assertFalse(any("K / V write" in m for m in logged))
        self.assertIn("d: WARNING: 3 of 10 timed calls found the GPU at their start event before their launches were "
                      "queued (host-bound: those times include the host's dispatch)", logged)

    def test_main_passes_no_store(self):
        cases = self.write("cases.csv", CASE_HEADER + case_line("d", "decode", 16, 1024, 1))
        results = self.write("r.csv", results_text([["d", "b", "eager", "ok", "", "2.5"]]))
        for extra, want in (([], [True]), (["--no-store"], [False])):
            FakeSdpa.stores = []
            FakeSdpa.script = {(1025, "cudnn"): [12.0], (1025, "flash"): [16.0]}
            with contextlib.redirect_stderr(io.StringIO()):
                rc = an.main(["--cases", cases, "--results", results, "--out", os.path.join(self.tmp, "a.csv"),
                              "--rounds", "1"] + extra)
            self.assertEqual(rc, 0)
            self.assertEqual(FakeSdpa.stores, want, extra)

    def test_main_writes_best_rounds_and_the_sidecar_windowed_layers_included(self):
        header = CASE_HEADER.rstrip("\n") + ",layer_windows\n"
        text = header + case_line("d", "decode", 16, 1024, 1).rstrip("\n") + ",\n" + \
            case_line("g", "decode", 16, 4096, 1, hq=16, hkv=8, d=256, model="gemma-3-12b").rstrip("\n") + \
            ",1023;1023;-1\n"
        cases = self.write("cases.csv", text)
        results = self.write("r.csv", results_text([["d", "b", "eager", "ok", "", "2.5"],
                                                    ["g", "b", "eager", "ok", "", "3.0"]]))
        FakeSdpa.script = {(1025, "cudnn"): [40.0, 20.0], (1025, "flash"): [25.0, 50.0],
                           (1024, "cudnn"): [10.0, 11.0], (1024, "flash"): [13.0, 12.0],
                           (4097, "cudnn"): [60.0, 30.0], (4097, "flash"): [35.0, 36.0]}
        out = os.path.join(self.tmp, "perf", "anchors.csv")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = an.main(["--cases", cases, "--results", results, "--out", out, "--rounds", "2"])
        self.assertEqual(rc, 0, err.getvalue())
        # three measurements (d, g's two key counts) x 2 rounds x (2 backends + the K / V write alone)
        self.assertEqual(len(FakeSdpa.calls), 3 * 2 * 3)
        with open(out, encoding="utf-8") as f:
            rows = {r["kv_len"]: r for r in csv.DictReader(f)}
        c_d, c_g = an.read_case_list(text)
        self.assertEqual((rows["1025"]["cudnn"], rows["1025"]["flash"]),
                         ("%.4g" % an.figure(c_d, 20e-6), "%.4g" % an.figure(c_d, 25e-6)))
        layers = an.decode_layer_cases(c_g)
        want = an.step_figure(layers, {1024: an.figure(layers[0], 10e-6), 4097: an.figure(layers[2], 30e-6)})
        self.assertEqual(rows["4097"]["cudnn"], "%.4g" % want)
        with open(os.path.join(self.tmp, "perf", "anchors-rounds.csv"), encoding="utf-8") as f:
            side = list(csv.DictReader(f))
        self.assertEqual(sorted({r["case_id"] for r in side}), ["d", "g@keys=1024", "g@keys=4097"])
        self.assertEqual(len(side), 12)
        self.assertEqual([(r["backend"], r["round"], r["median_us"]) for r in side if r["case_id"] == "g@keys=4097"],
                         [("cudnn", "1", "60.000"), ("cudnn", "2", "30.000"), ("flash", "1", "35.000"),
                          ("flash", "2", "36.000")])
        self.assertIn("d: WARNING: cudnn rounds spread 100.0%", err.getvalue())
        self.assertIn("g@keys=4097: WARNING: cudnn rounds spread 100.0%", err.getvalue())
        self.assertNotIn("g@keys=1024: WARNING", err.getvalue())


class WindowedExtendMain(MeasureWithFakes):
    def test_main_builds_the_windowed_extend_step_and_logs_the_full_layer(self):
        header = CASE_HEADER.rstrip("\n") + ",layer_windows\n"
        text = header + case_line("g", "extend", 1, 0, 2048, hq=16, hkv=8, d=256, model="gemma-3-12b").rstrip("\n") + \
            ",1023;-1\n"
        cases = self.write("cases.csv", text)
        results = self.write("r.csv", results_text([["g", "b", "eager", "ok", "300", ""]]))
        FakeSdpa.script = {(2048, "cudnn"): [100.0], (2048, "flash"): [200.0], (2048, "store"): [10.0]}
        out = os.path.join(self.tmp, "anchors.csv")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = an.main(["--cases", cases, "--results", results, "--out", out, "--rounds", "1"])
        self.assertEqual(rc, 0, err.getvalue())
        (c,) = an.read_case_list(text)
        with open(out, encoding="utf-8") as f:
            (row,) = list(csv.DictReader(f))
        self.assertEqual(row["cudnn"], "%.4g" % an.extend_step_figure(c, 100.0, 10.0))
        self.assertEqual(row["flash"], "%.4g" % an.extend_step_figure(c, 200.0, 10.0))
        self.assertIn("g: the step of 2 layers (windows 1023/-1): each layer's K / V write (10.0 us) and its attention "
                      "at the full layer's rate: cudnn %s, flash %s TFLOP/s (the full layer alone: cudnn %s, flash %s)"
                      % (row["cudnn"], row["flash"], "%.4g" % an.figure(c, 100e-6), "%.4g" % an.figure(c, 200e-6)),
                      err.getvalue())


class TimeUsWithFakeTorch(unittest.TestCase):
    """Sdpa.time_us's order of operations, with a fake torch.cuda that logs them: the flush, the GPU spin, the start
    event, the call, the stop event; a call whose start event had completed by then counts as host-bound."""

    def make(self, query_results, has_sleep=True):
        ops = []
        elapsed = iter([5.0, 1.0, 3.0, 2.0, 4.0])  # ms per call, warm-up first

        class Event:
            def __init__(self, enable_timing=False):
                pass

            def record(self):
                ops.append("record")

            def query(self):
                ops.append("query")
                return query_results.pop(0)

            def elapsed_time(self, other):
                return next(elapsed)

        cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: ops.append("sync"))
        if has_sleep:
            cuda._sleep = lambda cycles: ops.append("sleep %d" % cycles)
        s = object.__new__(an.Sdpa)
        s.torch = types.SimpleNamespace(cuda=cuda)
        s.flush = types.SimpleNamespace(zero_=lambda: ops.append("flush"))
        s.timed_calls = s.host_bound_calls = 0
        return s, ops

    def test_each_call_spins_the_gpu_between_the_flush_and_the_start_event(self):
        s, ops = self.make([False] * 5)
        med = s.time_us(lambda: ops.append("call"), reps=4, warmup=1)
        one = ["flush", "sleep %d" % an.LEAD_CYCLES, "record", "call", "record", "query", "sync"]
        self.assertEqual(ops, one * 5)
        self.assertEqual(med, 3000.0)  # the median of 1, 3, 2, 4 ms (the 5 ms warm-up dropped): the upper middle
        self.assertEqual((s.timed_calls, s.host_bound_calls), (4, 0))

    def test_a_call_the_gpu_waited_for_is_counted_warm_up_excluded(self):
        s, ops = self.make([True, False, True, True, False])
        s.time_us(lambda: None, reps=4, warmup=1)
        self.assertEqual((s.timed_calls, s.host_bound_calls), (4, 2))

    def test_without_torch_cuda_sleep_the_calls_still_run_and_are_checked(self):
        s, ops = self.make([True] * 3, has_sleep=False)
        s.time_us(lambda: None, reps=3, warmup=0)
        self.assertNotIn("sleep", " ".join(ops))
        self.assertEqual((s.timed_calls, s.host_bound_calls), (3, 3))


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "ATTNBENCH_BINARY is not set")
class AgainstAttnbench(TempDir):
    def smoke_cases(self):
        r = subprocess.run([BINARY, "run", "--config", SMOKE, "--list-cases", "--format", "csv"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_work_matches_attnbench_figures_on_the_baseline(self):
        """tflops * forward time (one layer) is the layer's FLOPs, tb_per_s * forward time its bytes."""
        cases = {c.case_id: c for c in an.read_case_list(self.smoke_cases())}
        self.assertTrue(any(c.mode == "extend" for c in cases.values()))
        self.assertTrue(any(c.mode == "decode" for c in cases.values()))
        checked = 0
        with open(BASELINE_CSV, encoding="utf-8") as f:
            for r in csv.DictReader(f):
                c = cases.get(r["case_id"])
                if c is None or r["status"] != "ok" or r["sliding_window"] != "-1":
                    continue
                seconds = float(r["forward_median_us"]) * 1e-6  # one layer
                flops, nbytes = an.layer_work(c)
                self.assertAlmostEqual(float(r["tflops"]) * 1e12 * seconds / flops, 1.0, places=6, msg=r["case_id"])
                self.assertAlmostEqual(float(r["tb_per_s"]) * 1e12 * seconds / nbytes, 1.0, places=6, msg=r["case_id"])
                checked += 1
        self.assertGreaterEqual(checked, 6)

    def test_dry_run_writes_every_case_with_attnbench_figures(self):
        out = os.path.join(self.tmp, "perf", "anchors.csv")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = an.main(["--attnbench", BINARY, "--config", SMOKE, "--results", BASELINE_CSV, "--out", out, "--dry-run"])
        self.assertEqual(rc, 0, err.getvalue())
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text.splitlines()[0], ",".join(an.COLUMNS))
        rows = list(csv.DictReader(io.StringIO(text)))
        cases = an.read_case_list(self.smoke_cases())
        self.assertEqual(len(rows), len(cases))
        with open(BASELINE_CSV, encoding="utf-8") as f:
            figs = an.read_attnbench_figures(f.read())
        for r, c in zip(rows, cases):
            self.assertEqual((r["mode"], r["model"], int(r["batch"])), (c.mode, c.model, c.batch))
            self.assertEqual(r["unit"], "TFLOP/s" if c.mode == "extend" else "TB/s")
            want = figs[c.case_id]["tflops" if c.mode == "extend" else "tb_per_s"]
            self.assertAlmostEqual(float(r["attnbench"]) / want, 1.0, places=3)
            self.assertEqual((r["cudnn"], r["flash"], r["ratio_to_best"]), ("", "", ""))


class CommandLine(TempDir):
    def run_main(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = an.main(list(argv))
        return rc, err.getvalue()

    def test_written_csv_has_the_issue_columns_in_order(self):
        (c,) = an.read_case_list(CASE_HEADER + case_line("e", "extend", 4, 0, 4096))
        path = os.path.join(self.tmp, "sub", "a.csv")
        an.write_anchors_csv(path, [an.anchor_row(c, 290.0, 532.0, 320.0)])
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "mode,model,batch,prefix_len,extend_len,kv_len,attnbench,cudnn,flash,unit,ratio_to_best")
        self.assertEqual(lines[1], "extend,llama-3.1-8b,4,0,4096,4096,290,532,320,TFLOP/s,0.5451")

    def test_bad_input_is_one_line_and_exit_2(self):
        cases = self.write("cases.csv", CASE_HEADER + case_line("e", "extend", 1, 0, 16))
        results = self.write("r.csv", results_text([["e", "b", "eager", "ok", "1", "1"]]))
        for argv, needle in [
            (["--cases", os.path.join(self.tmp, "none.csv"), "--results", results, "--out", "o.csv"], "--cases: cannot read"),
            (["--cases", cases, "--results", os.path.join(self.tmp, "none.csv"), "--out", "o.csv"], "--results: cannot read"),
            (["--results", results, "--out", "o.csv"], "--cases: give a case list"),
            (["--cases", cases, "--results", results, "--out", "o.csv", "--reps", "0"], "--reps: must be >= 1"),
            (["--cases", cases, "--results", results, "--out", "o.csv", "--reps", "x"], "--reps: 'x' is not an integer"),
            (["--cases", results, "--results", results, "--out", "o.csv"], "not an attnbench case list"),
        ]:
            rc, err = self.run_main(*argv)
            self.assertEqual(rc, 2, argv)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(needle, err)

    def test_bad_rounds_is_one_line_naming_rounds_and_exit_2(self):
        cases = self.write("cases.csv", CASE_HEADER + case_line("e", "extend", 1, 0, 16))
        results = self.write("r.csv", results_text([["e", "b", "eager", "ok", "1", "1"]]))
        out = os.path.join(self.tmp, "o.csv")
        for bad, line in [("0", "--rounds: must be >= 1 (0)"), ("-2", "--rounds: must be >= 1 (-2)"),
                          ("1.5", "--rounds: '1.5' is not an integer (must be >= 1)"),
                          ("three", "--rounds: 'three' is not an integer (must be >= 1)"),
                          ("", "--rounds: '' is not an integer (must be >= 1)")]:
            rc, err = self.run_main("--cases", cases, "--results", results, "--out", out, "--dry-run", "--rounds", bad)
            self.assertEqual(rc, 2, bad)
            self.assertEqual(err.strip().splitlines(), ["anchors: " + line], bad)
            self.assertFalse(os.path.exists(out), bad)
        base = ["--cases", cases, "--results", results, "--out", out]
        self.assertEqual(an.parse_args(base).rounds, 3)
        self.assertEqual(an.parse_args(base + ["--rounds", "1"]).rounds, 1)
        self.assertEqual(an.parse_args(base + ["--rounds", "5"]).rounds, 5)

    def test_dry_run_writes_a_header_only_sidecar_over_a_stale_one(self):
        cases = self.write("cases.csv", CASE_HEADER + case_line("e", "extend", 1, 0, 16))
        results = self.write("r.csv", results_text([["e", "b", "eager", "ok", "1", "1"]]))
        stale = self.write("anchors-rounds.csv", "case_id,backend,round,median_us\nold,cudnn,1,5.000\n")
        rc, err = self.run_main("--cases", cases, "--results", results, "--out", os.path.join(self.tmp, "anchors.csv"),
                                "--dry-run")
        self.assertEqual(rc, 0, err)
        with open(stale, encoding="utf-8") as f:
            self.assertEqual(f.read(), "case_id,backend,round,median_us\n")

    def test_script_never_imports_torch_without_measuring(self):
        cases = self.write("cases.csv", CASE_HEADER + case_line("e", "extend", 1, 0, 16))
        results = self.write("r.csv", results_text([["e", "b", "eager", "ok", "1", "1"]]))
        out = os.path.join(self.tmp, "o.csv")
        code = ("import sys; sys.path.insert(0, %r); sys.modules['torch'] = None; import anchors; "
                "sys.exit(anchors.main(['--cases', %r, '--results', %r, '--out', %r, '--dry-run']))"
                % (os.path.join(ROOT, "scripts"), cases, results, out))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()

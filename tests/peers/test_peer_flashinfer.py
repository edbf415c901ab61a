#!/usr/bin/env python3
"""scripts/peer_flashinfer.py without a GPU: attnbench's case-list export read back, the sampling policy and
statistics, the row schema (checked against the header attnbench writes), the step-work formula (checked
against attnbench's own tb_per_s), bad input (exit 2, one line), and whole runs on a fake backend, whose
rows `attnbench report --peers` and `attnbench compare --peers` then read as peers.

Plain unittest: `python3 tests/peers/test_peer_flashinfer.py` (ctest runs exactly that, with ATTNBENCH_BINARY
naming the built attnbench)."""

import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_test_util import BINARY, ROOT, TempDir  # noqa: E402
import peer_flashinfer as pf  # noqa: E402
SMOKE = os.path.join(ROOT, "configs", "smoke.toml")
BASELINE_CSV = os.path.join(ROOT, "results", "baseline", "smoke.csv")


def attnbench(*args):
    return subprocess.run([BINARY] + list(args), capture_output=True, text=True, timeout=600)


def case_list_text(*extra):
    r = attnbench("run", "--config", SMOKE, "--list-cases", "--format", "csv", *extra)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return r.stdout


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "ATTNBENCH_BINARY is not set")
class CaseListExport(TempDir):
    def test_every_smoke_case_is_exported_and_read_back(self):
        ids = attnbench("run", "--config", SMOKE, "--list-cases").stdout.split()
        cases = pf.read_case_list(self.write("cases.csv", case_list_text()))
        self.assertEqual([c.case_id for c in cases], ids)
        for c in cases:
            self.assertEqual(len(c.prefix_lens), c.batch)
            self.assertEqual(sum(c.new_lens), c.q_tokens)
            self.assertEqual(len(c.layer_windows), c.layers)
            self.assertAlmostEqual(c.sm_scale, 1 / math.sqrt(c.head_dim), places=6)
            if c.mode == "decode":
                self.assertEqual(set(c.new_lens), {1})
            if c.mode == "verify":
                self.assertEqual(set(c.new_lens), {c.draft_tokens})
            self.assertEqual((c.warmup, c.min_samples, c.max_samples, c.time_budget_s), (1, 3, 5, 0.1))
            self.assertEqual(c.trtllm_workspace_bytes, 512 << 20)

    def test_the_export_carries_the_options_given(self):
        cases = pf.read_case_list(self.write("c.csv", case_list_text(
            "--mode", "decode", "--batch", "2", "--kv-len", "33", "--seed", "7", "--timing", "eager",
            "--no-flush-l2", "--flashinfer-workspace-size", "1048576")))
        self.assertEqual(len(cases), 1)
        c = cases[0]
        self.assertEqual((c.batch, c.prefix_lens, c.new_lens, c.seed), (2, [33, 33], [1, 1], 7))
        self.assertEqual(c.timings, ["eager"])
        self.assertFalse(c.flush_l2)
        self.assertEqual(c.flashinfer_workspace_bytes, 1 << 20)
        # SGLang's ctor reads SGLANG_FLASHINFER_WORKSPACE_SIZE for TRTLLM's zeroed workspace too.
        self.assertEqual(c.trtllm_workspace_bytes, 1 << 20)

    def test_the_export_carries_the_kv_cache_dtype(self):
        # --kv-cache-dtype fp8_e4m3: the case list names the cache dtype and SGLang's default scales; the peer
        # counts the KV read at 1 byte per element and FlashInfer's decode takes tensor cores (fp8 -> True).
        cases = pf.read_case_list(self.write("f.csv", case_list_text(
            "--mode", "decode", "--batch", "2", "--kv-len", "33", "--kv-cache-dtype", "fp8_e4m3")))
        c = cases[0]
        self.assertEqual((c.kv_cache_dtype, c.kv_dtype, c.kv_fp8, c.k_scale, c.v_scale), ("fp8_e4m3", "fp8_e4m3", True, 1.0, 1.0))
        self.assertIn("/kvcache=fp8_e4m3", c.case_id)
        self.assertTrue(c.flashinfer_use_tensor_cores)
        bf16 = pf.read_case_list(self.write("b.csv", case_list_text("--mode", "decode", "--batch", "2", "--kv-len", "33")))[0]
        self.assertEqual(bf16.kv_dtype, bf16.dtype)
        self.assertFalse(bf16.kv_fp8)
        # decode: the KV read halves, q / o / new k, v stay in bf16
        layers, hkv, hq, d = c.layers, c.num_kv_heads, c.num_qo_heads, c.head_dim
        kv_read = sum(2.0 * (p + n) * hkv * d for p, n in zip(c.prefix_lens, c.new_lens)) * layers
        rest = layers * c.q_tokens * (2.0 * hq + 2.0 * hkv) * d * 2
        self.assertEqual(pf.step_work(c)["bytes"], kv_read * 1 + rest)
        self.assertEqual(pf.step_work(bf16)["bytes"], kv_read * 2 + rest)

    def test_a_case_list_without_the_kv_columns_reads_as_the_model_dtype(self):
        text = case_list_text("--mode", "decode", "--batch", "2", "--kv-len", "33")
        lines = [ln.split(",") for ln in text.strip().split("\n")]
        keep = [i for i, name in enumerate(lines[0]) if name not in ("kv_cache_dtype", "k_scale", "v_scale")]
        old = "\n".join(",".join(row[i] for i in keep) for row in lines) + "\n"
        c = pf.read_case_list(self.write("old.csv", old))[0]
        self.assertEqual((c.kv_dtype, c.k_scale, c.v_scale), ("bf16", 1.0, 1.0))

    def test_the_export_carries_the_model_runners_window(self):
        # Gemma-3 (tiny-swa): the runner learns the layers' window (31 = sliding_window - 1); Cohere2: the layers
        # carry sliding_window itself and the runner none (-1), which is what keeps SGLang's FlashInfer unwindowed.
        g = pf.read_case_list(self.write("g.csv", case_list_text(
            "--model", "tiny-swa", "--mode", "decode", "--batch", "1", "--kv-len", "40")))[0]
        self.assertEqual((g.layer_windows, g.runner_sliding_window_size, g.runner_window, g.sliding_window),
                         ([31, -1], 31, 31, 32))
        self.assertEqual(g.architecture, "Gemma3ForCausalLM")
        cfg = self.write("command-r7b-tiny.json", json.dumps({
            "architectures": ["Cohere2ForCausalLM"], "num_hidden_layers": 4, "num_attention_heads": 4,
            "num_key_value_heads": 2, "hidden_size": 256, "head_dim": 64, "max_position_embeddings": 4096,
            "sliding_window": 32, "sliding_window_pattern": 4, "torch_dtype": "bfloat16"}))
        c = pf.read_case_list(self.write("c.csv", case_list_text(
            "--model", cfg, "--mode", "decode", "--batch", "1", "--kv-len", "40")))[0]
        self.assertEqual((c.layer_windows, c.runner_sliding_window_size, c.runner_window, c.sliding_window),
                         ([32, 32, 32, -1], -1, -1, 32))
        self.assertEqual(c.config_sliding_window, 32)  # the config's own value, from the case list's column

    def test_the_export_says_which_flashinfer_extend_path_runs(self):
        # ragged by default; paged under SGLANG_FLASHINFER_USE_PAGED and for a multimodal model, which the
        # library peer does not run (a skipped row naming why)
        c = pf.read_case_list(self.write("r.csv", case_list_text("--mode", "extend", "--batch", "1")))[0]
        self.assertIs(c.flashinfer_extend_ragged, True)
        cfg = self.write("qwen2.5-vl-tiny.json", json.dumps({
            "architectures": ["Qwen2_5_VLForConditionalGeneration"], "num_hidden_layers": 2,
            "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 512,
            "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}))
        m = pf.read_case_list(self.write("m.csv", case_list_text("--model", cfg, "--mode", "extend", "--batch", "1")))[0]
        self.assertIs(m.flashinfer_extend_ragged, False)
        why = pf.FlashInferLib.supports(type("B", (), {"unmodelled": staticmethod(pf.TorchBackend.unmodelled)})(),
                                        m, "eager")
        self.assertIn("paged path", why)

    def test_a_case_list_without_the_runner_window_reads_the_layers_window(self):
        text = case_list_text("--model", "tiny-swa", "--mode", "decode", "--batch", "1", "--kv-len", "40")
        lines = [ln.split(",") for ln in text.strip().split("\n")]
        keep = [i for i, name in enumerate(lines[0]) if name != "runner_sliding_window_size"]
        old = "\n".join(",".join(row[i] for i in keep) for row in lines) + "\n"
        c = pf.read_case_list(self.write("old.csv", old))[0]
        self.assertIsNone(c.runner_sliding_window_size)
        self.assertEqual(c.runner_window, 31)
        with self.assertRaises(pf.InputError) as e:
            bad = text.strip()
            # runner_sliding_window_size, flashinfer_extend_ragged, config_sliding_window
            self.assertTrue(bad.endswith(",31,1,32"), bad)
            pf.read_case_list(self.write("bad.csv", bad[:-len(",31,1,32")] + ",-7,1,32\n"))
        self.assertIn("runner_sliding_window_size", str(e.exception))
        for bad_window, says in (("-5", "config_sliding_window -5 is below -1"), ("x", "line 2")):
            with self.assertRaises(pf.InputError) as e:
                pf.read_case_list(self.write("badw.csv", text.strip()[:-len(",32")] + "," + bad_window + "\n"))
            self.assertIn(says, str(e.exception))

    def test_a_bad_kv_cache_dtype_names_the_line(self):
        text = case_list_text("--mode", "decode", "--batch", "2", "--kv-len", "33", "--kv-cache-dtype", "fp8_e5m2")
        with self.assertRaises(pf.InputError) as e:
            pf.read_case_list(self.write("bad.csv", text.replace("fp8_e5m2,1,1", "int4,1,1")))
        self.assertIn("line 2", str(e.exception))
        self.assertIn("kv_cache_dtype", str(e.exception))

    def test_format_without_list_cases_is_a_usage_error(self):
        r = attnbench("run", "--config", SMOKE, "--format", "csv")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--format", r.stderr)

    def test_zipf_lengths_are_exported_request_by_request(self):
        cases = pf.read_case_list(self.write("z.csv", case_list_text(
            "--mode", "decode", "--batch", "8", "--kv-len", "60", "--length-dist", "zipf", "--length-min", "2")))
        c = cases[0]
        self.assertEqual(len(c.prefix_lens), 8)
        self.assertTrue(all(2 <= x <= 60 for x in c.prefix_lens))
        self.assertGreater(len(set(c.prefix_lens)), 1)


class Schema(unittest.TestCase):
    def test_result_columns_are_attnbenchs(self):
        with open(BASELINE_CSV, encoding="utf-8") as f:
            header = f.readline().strip().split(",")
        self.assertEqual(pf.RESULT_COLUMNS, header)

    @unittest.skipUnless(BINARY and os.path.exists(BINARY), "ATTNBENCH_BINARY is not set")
    def test_step_work_matches_attnbenchs_throughput(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "cases.csv")
            with open(p, "w") as f:
                f.write(case_list_text())
            cases = {c.case_id: c for c in pf.read_case_list(p)}
        checked = 0
        with open(BASELINE_CSV, encoding="utf-8") as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok" or not r["tb_per_s"] or r["case_id"] not in cases:
                    continue
                c = cases[r["case_id"]]
                w = pf.step_work(c)
                fwd_s = float(r["forward_median_us"]) * c.layers * 1e-6
                self.assertAlmostEqual(w["bytes"] / fwd_s / 1e12 / float(r["tb_per_s"]), 1.0, places=9, msg=r["case_id"])
                self.assertAlmostEqual(w["flops"] / fwd_s / 1e12 / float(r["tflops"]), 1.0, places=9, msg=r["case_id"])
                checked += 1
        self.assertGreater(checked, 5)

    def test_importing_the_script_loads_neither_torch_nor_flashinfer(self):
        code = ("import sys; sys.path.insert(0, %r); import peer_flashinfer; "
                "print('torch' in sys.modules, 'flashinfer' in sys.modules)" % os.path.join(ROOT, "scripts"))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.stdout.strip(), "False False", out.stderr)


def make_case(**kw):
    base = dict(case_id="decode/tiny/b=2/kv=5/p=16/bf16", mode="decode", model="tiny", layers=2, num_qo_heads=4,
                num_kv_heads=2, num_attention_heads=4, head_dim=64, dtype="bf16", page_size=16, batch=2, q_tokens=2,
                prefix_lens=[5, 5], new_lens=[1, 1], draft_tokens=0, seed=1, sinks=False, layer_windows=[-1, -1],
                sm_scale=0.125, context_len=4096, max_running_requests=4096, cuda_graph_max_bs=256,
                flashinfer_workspace_bytes=384 << 20, flashinfer_use_tensor_cores=False, flashinfer_use_paged=False,
                trtllm_workspace_bytes=512 << 20, timings=["eager"], warmup=2, min_samples=3, max_samples=10,
                target_spread_pct=5.0, time_budget_s=1.0, flush_l2=True)
    base.update(kw)
    return pf.Case(**base)


class FakeClock:
    def __init__(self, step):
        self.t, self.step = 0.0, step

    def __call__(self):
        self.t += self.step
        return self.t


class Sampling(unittest.TestCase):
    def test_converges_after_min_samples_when_the_spread_is_small(self):
        calls = []
        s = pf.sample(make_case(), lambda: calls.append(1) or 100.0, FakeClock(0.0))
        self.assertEqual((s.stop_reason, s.summary.n, len(calls)), ("converged", 3, 5))  # 2 warm-up + 3

    def test_stops_at_the_cap_when_noisy(self):
        vals = iter([100.0, 100.0] + [100.0 * (1 + (i % 2)) for i in range(100)])
        s = pf.sample(make_case(max_samples=10), lambda: next(vals), FakeClock(0.0))
        self.assertEqual((s.stop_reason, s.summary.n), ("max samples", 10))

    def test_stops_on_the_time_budget_but_not_before_three_samples(self):
        vals = iter([1.0, 1.0] + [10.0 * (1 + (i % 2)) for i in range(100)])
        s = pf.sample(make_case(time_budget_s=0.5, max_samples=100), lambda: next(vals), FakeClock(1.0))
        self.assertEqual((s.stop_reason, s.summary.n), ("time budget", 3))

    def test_first_warmup_outlier_is_flagged(self):
        vals = iter([1000.0, 10.0, 10.0, 10.0, 10.0])
        s = pf.sample(make_case(), lambda: next(vals), FakeClock(0.0))
        self.assertTrue(s.first_sample_outlier)

    def test_percentiles_interpolate_like_attnbench(self):
        s = pf.summarize([4.0, 1.0, 3.0, 2.0])
        self.assertAlmostEqual(s.median, 2.5)
        self.assertAlmostEqual(s.p10, 1.3)
        self.assertAlmostEqual(s.p90, 3.7)
        self.assertAlmostEqual(s.spread_pct, (3.7 - 1.3) / 2.5 * 100)
        with self.assertRaises(ValueError):
            pf.summarize([1.0, float("nan")])


class Errors(unittest.TestCase):
    def test_nan_is_a_mismatch_and_fails(self):
        s = pf.ErrorStats()
        s.add(1.0, 1.0, 0.01, 0.01)
        s.add(float("nan"), 1.0, 0.01, 0.01)
        self.assertFalse(s.passed())
        self.assertEqual((s.nans, s.mismatches, s.elements), (1, 1, 2))

    def test_tolerance_is_atol_plus_rtol_times_ref(self):
        atol, rtol = pf.TOLERANCES["bf16"]
        s = pf.ErrorStats()
        s.add(2.0 + atol + 2 * rtol - 1e-9, 2.0, atol, rtol)
        self.assertTrue(s.passed())
        s.add(2.0 + atol + 2 * rtol + 1e-6, 2.0, atol, rtol)
        self.assertFalse(s.passed())
        self.assertAlmostEqual(s.mismatch_frac(), 0.5)

    def test_no_elements_is_not_a_pass(self):
        self.assertFalse(pf.ErrorStats().passed())

    def test_a_nan_error_is_not_a_pass(self):
        # A NaN reference element: |got - ref| is NaN, no tolerance test fails, and the errors are written empty.
        s = pf.ErrorStats()
        s.add(1.0, 1.0, 0.01, 0.01)
        s.add(1.0, float("nan"), 0.01, 0.01)
        self.assertEqual(s.mismatches, 0)
        self.assertTrue(math.isnan(s.rel_l2()))
        self.assertFalse(s.passed())
        s = pf.ErrorStats(max_abs=float("nan"), elements=1)  # as check() sets it from a tensor max
        self.assertFalse(s.passed())


class BadInput(TempDir):
    def run_main(self, *args):
        err = io.StringIO()
        old = sys.stderr
        sys.stderr = err
        try:
            rc = pf.main(list(args), make_backend=lambda n: pf.FakeBackend(n))
        finally:
            sys.stderr = old
        return rc, err.getvalue()

    def good_cases(self):
        c = make_case()
        cols = ["case_list_version"] + list(pf.Case.__dataclass_fields__)
        row = {"case_list_version": "1"}
        for k in pf.Case.__dataclass_fields__:
            v = getattr(c, k)
            row[k] = ";".join(map(str, v)) if isinstance(v, list) else ("1" if v is True else "0" if v is False
                                                                        else "" if v is None else str(v))
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerow(row)
        return buf.getvalue()

    def test_missing_file(self):
        rc, err = self.run_main("--cases", os.path.join(self.tmp, "nope.csv"), "--out", os.path.join(self.tmp, "o.csv"))
        self.assertEqual(rc, 2)
        self.assertIn("--cases", err)
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_missing_column_is_named(self):
        text = self.good_cases().replace("layer_windows", "windows")
        rc, err = self.run_main("--cases", self.write("c.csv", text), "--out", os.path.join(self.tmp, "o.csv"))
        self.assertEqual(rc, 2)
        self.assertIn("layer_windows", err)

    def test_bad_values_name_the_line(self):
        good = self.good_cases()
        for old, new, what in ((",decode,", ",prefill,", "mode"), (",5;5,", ",5;x,", "prefix_lens"),
                               (",5;5,", ",5,", "prefix_lens"), ("\n1,", "\n2,", "case_list_version")):
            text = good.replace(old, new, 1)
            self.assertNotEqual(text, good, what)
            rc, err = self.run_main("--cases", self.write("c.csv", text), "--out", os.path.join(self.tmp, "o.csv"))
            self.assertEqual(rc, 2, what)
            self.assertIn("line 2", err, what)

    def test_unknown_backend(self):
        rc, err = self.run_main("--cases", self.write("c.csv", self.good_cases()), "--out",
                                os.path.join(self.tmp, "o.csv"), "--backend", "flashinfer")
        self.assertEqual(rc, 2)
        self.assertIn("--backend", err)

    def test_out_may_not_overwrite_the_case_list(self):
        p = self.write("c.csv", self.good_cases())
        rc, err = self.run_main("--cases", p, "--out", p)
        self.assertEqual(rc, 2)
        with open(p) as f:
            self.assertEqual(f.read(), self.good_cases())

    def test_read_bandwidth_must_be_a_positive_number(self):
        for bad in ("0", "-5e12", "nan", "inf"):
            rc, err = self.run_main("--cases", self.write("c.csv", self.good_cases()), "--out",
                                    os.path.join(self.tmp, "o.csv"), "--read-bandwidth=" + bad)
            self.assertEqual(rc, 2, bad)
            self.assertIn("--read-bandwidth", err, bad)
            self.assertEqual(len(err.strip().splitlines()), 1, bad)

    def test_read_bandwidth_is_the_bw_fraction_denominator(self):
        out = os.path.join(self.tmp, "o.csv")
        rc, err = self.run_main("--cases", self.write("c.csv", self.good_cases()), "--out", out, "--read-bandwidth", "2e12")
        self.assertEqual(rc, 0, err)
        with open(out, encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["status"] == "ok" and r["tb_per_s"]]
        self.assertTrue(rows)
        for r in rows:
            self.assertAlmostEqual(float(r["bw_fraction"]), float(r["tb_per_s"]) / 2.0, places=9)

    def test_empty_file(self):
        rc, err = self.run_main("--cases", self.write("c.csv", ""), "--out", os.path.join(self.tmp, "o.csv"))
        self.assertEqual(rc, 2)
        self.assertIn("no case", err)


class FakeRuns(TempDir):
    def test_rows_in_attnbenchs_schema_with_skips_and_failures(self):
        cases = [make_case(), make_case(case_id="extend/tiny/b=2/pre=5/ext=3/p=16/bf16", mode="extend",
                                        new_lens=[3, 3], q_tokens=6, timings=["eager", "graph"])]
        out, js = os.path.join(self.tmp, "p.csv"), os.path.join(self.tmp, "p.json")
        w = pf.ResultWriter(out, js, {"device": "fake"}, "test")
        backends = [pf.FakeBackend("flashinfer_lib"), pf.FakeBackend("trtllm_lib", unsupported_modes=["extend"])]
        bad = pf.run_all(cases, backends, w, "repro", 4e12, progress=False, clock=FakeClock(0.0))
        w.close()
        self.assertEqual(bad, 0)
        with open(out, encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * 1 + 2 * 2)
        self.assertEqual(list(rows[0].keys()), pf.RESULT_COLUMNS)
        by = {(r["case_id"], r["backend"], r["timing"]): r for r in rows}
        ok = by[("decode/tiny/b=2/kv=5/p=16/bf16", "flashinfer_lib", "eager")]
        self.assertEqual(ok["status"], "ok")
        self.assertEqual(ok["ref_pass"], "1")
        self.assertAlmostEqual(float(ok["metadata_median_us"]), 10.0)
        self.assertAlmostEqual(float(ok["forward_median_us"]) * 2, float(ok["step_median_us"]) - 10.0, places=6)
        self.assertEqual(ok["kv_len_max"], "6")
        self.assertIn("--backend flashinfer_lib", ok["repro"])
        self.assertGreater(float(ok["tb_per_s"]), 0)
        # bw_fraction is the KV read over the read bandwidth given (4e12 B/s here): tb_per_s * 1e12 / 4e12
        self.assertAlmostEqual(float(ok["bw_fraction"]), float(ok["tb_per_s"]) * 1e12 / 4e12, places=9)
        skipped = by[("extend/tiny/b=2/pre=5/ext=3/p=16/bf16", "trtllm_lib", "eager")]
        self.assertEqual(skipped["status"], "skipped")
        self.assertIn("does not run extend", skipped["note"])
        with open(js, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "attnbench.results")
        self.assertEqual(len(doc["rows"]), len(rows))
        first = doc["rows"][0]
        self.assertEqual(len(first["samples_us"]), first["samples"])
        self.assertEqual(first["ledger"][0]["tag"], "flashinfer.workspace_buffer")
        self.assertEqual(first["ref_pass"], 1)

    def test_a_wrong_output_fails_the_row_and_is_not_timed(self):
        w = pf.ResultWriter(os.path.join(self.tmp, "p.csv"), os.path.join(self.tmp, "p.json"), {}, "t")
        b = pf.FakeBackend(error=0.5)
        bad = pf.run_all([make_case()], [b], w, "r", 0, progress=False, clock=FakeClock(0.0))
        w.close()
        self.assertEqual(bad, 1)
        r = w.rows[0]
        self.assertEqual((r["status"], r["ref_pass"], r["samples"]), ("failed", False, 0))
        self.assertAlmostEqual(r["ref_max_abs_err"], 0.5)
        self.assertEqual(b.steps, 1)  # the validation step only

    def test_exceptions_become_failed_or_oom_rows_and_the_sweep_goes_on(self):
        w = pf.ResultWriter(os.path.join(self.tmp, "p.csv"), os.path.join(self.tmp, "p.json"), {}, "t")
        cases = [make_case(), make_case(case_id="decode/tiny/b=2/kv=6/p=16/bf16")]
        bad = pf.run_all(cases, [pf.FakeBackend(raise_in="prepare")], w, "r", 0, progress=False)
        w.close()
        self.assertEqual(bad, 2)
        self.assertEqual([r["status"] for r in w.rows], ["oom", "oom"])
        w2 = pf.ResultWriter(os.path.join(self.tmp, "q.csv"), os.path.join(self.tmp, "q.json"), {}, "t")
        pf.run_all(cases[:1], [pf.FakeBackend(raise_in="forward")], w2, "r", 0, progress=False)
        w2.close()
        self.assertEqual(w2.rows[0]["status"], "failed")
        self.assertIn("kernel launch failed", w2.rows[0]["note"])

    def test_graph_rows_say_how_the_replay_compares_with_eager(self):
        class Said(pf.FakeBackend):
            def prepare(self, c, timing):
                prep = super().prepare(c, timing)
                prep.replay_vs_eager = lambda: "replay differs from eager in 3 elements (max abs 0.5)"
                return prep

        w = pf.ResultWriter(os.path.join(self.tmp, "p.csv"), os.path.join(self.tmp, "p.json"), {}, "t")
        pf.run_all([make_case(timings=["eager", "graph"])], [Said()], w, "r", 0, progress=False, clock=FakeClock(0.0))
        w.close()
        eager, graph = w.rows
        self.assertNotIn("replay", eager["note"])
        self.assertIn("replay differs from eager in 3 elements", graph["note"])

    def test_the_l2_is_flushed_before_every_timed_step(self):
        w = pf.ResultWriter(os.path.join(self.tmp, "p.csv"), os.path.join(self.tmp, "p.json"), {}, "t")
        b = pf.FakeBackend()
        pf.run_all([make_case()], [b], w, "r", 0, progress=False, clock=FakeClock(0.0))
        self.assertEqual(b.flushes, b.steps - 1)  # every step but the validation one
        b2 = pf.FakeBackend()
        pf.run_all([make_case(flush_l2=False)], [b2], w, "r", 0, progress=False, clock=FakeClock(0.0))
        w.close()
        self.assertEqual(b2.flushes, 0)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "ATTNBENCH_BINARY is not set")
class PeersInAttnbench(TempDir):
    """A real attnbench run of two smoke cases, fake library rows for the same cases, then attnbench's own
    `report --peers` and `compare --peers` reading them as peers."""

    def test_report_and_compare_read_fake_peer_rows(self):
        model_csv = os.path.join(self.tmp, "model.csv")
        filt = "^decode/"
        r = attnbench("run", "--config", SMOKE, "--filter", filt, "--out", model_csv, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        cases_csv = self.write("cases.csv", case_list_text("--filter", filt))
        peers_csv = os.path.join(self.tmp, "peers.csv")
        err = io.StringIO()
        old = sys.stderr
        sys.stderr = err
        try:
            rc = pf.main(["--cases", cases_csv, "--out", peers_csv], make_backend=lambda n: pf.FakeBackend(n))
        finally:
            sys.stderr = old
        self.assertEqual(rc, 0, err.getvalue())
        peers_json = peers_csv[:-4] + ".json"
        rep = attnbench("report", model_csv[:-4] + ".json", "--peers", peers_json)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn("Model vs library", rep.stdout)
        self.assertIn("flashinfer_lib", rep.stdout)
        cmp_ = attnbench("compare", "--peers", model_csv[:-4] + ".json", peers_json, "--allow-env-mismatch")
        self.assertEqual(cmp_.returncode, 0, cmp_.stderr)
        self.assertIn("peer comparison", cmp_.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)

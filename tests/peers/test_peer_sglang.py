#!/usr/bin/env python3
"""scripts/peer_sglang.py without a GPU, torch or SGLang: the command line (bad input: exit 2, one line), SGLang's
capture list, the per-tensor ledger (tags as attnbench's ledger spells them, views and the runner's pools left
out), the memory CSV (checked against the header `attnbench memory` writes), the stand-in policy, the lean class
(TRTLLM's body on the lean base, super() re-bound), and whole runs on fake backends with the lean rows
bit-compared with the inheriting ones.

Plain unittest: `python3 tests/peers/test_peer_sglang.py` (ctest runs it with ATTNBENCH_BINARY set)."""

import abc
import csv
import io
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_test_util import BINARY, ROOT, TempDir  # noqa: E402
import peer_flashinfer as pf  # noqa: E402
import peer_sglang as ps  # noqa: E402


def make_case(**kw):
    base = dict(case_id="decode/llama-3.1-8b/b=2/kv=5/p=16/bf16", mode="decode", model="llama-3.1-8b", layers=2,
                num_qo_heads=4, num_kv_heads=2, num_attention_heads=4, head_dim=64, dtype="bf16", page_size=16,
                batch=2, q_tokens=2, prefix_lens=[5, 5], new_lens=[1, 1], draft_tokens=0, seed=1, sinks=False,
                layer_windows=[-1, -1], sm_scale=0.125, context_len=4096, max_running_requests=4096,
                cuda_graph_max_bs=256, flashinfer_workspace_bytes=384 << 20, flashinfer_use_tensor_cores=False,
                flashinfer_use_paged=False, trtllm_workspace_bytes=512 << 20, timings=["eager"], warmup=1,
                min_samples=3, max_samples=5, target_spread_pct=5.0, time_budget_s=1.0, flush_l2=False)
    base.update(kw)
    return pf.Case(**base)


def case_csv(cases):
    cols = ["case_list_version"] + list(pf.Case.__dataclass_fields__)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for c in cases:
        row = {"case_list_version": "1"}
        for k in pf.Case.__dataclass_fields__:
            v = getattr(c, k)
            row[k] = ";".join(map(str, v)) if isinstance(v, list) else ("1" if v is True else "0" if v is False
                                                                        else "" if v is None else str(v))
        w.writerow(row)
    return buf.getvalue()


class Imports(unittest.TestCase):
    def test_importing_the_script_loads_neither_torch_nor_sglang_nor_flashinfer(self):
        code = ("import sys; sys.path.insert(0, %r); import peer_sglang; "
                "print(any(m in sys.modules for m in ('torch', 'sglang', 'flashinfer')))" % os.path.join(ROOT, "scripts"))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.stdout.strip(), "False", out.stderr)


class SglangDefaults(unittest.TestCase):
    def test_capture_list_is_sglangs(self):
        # facts-0.5.23 §0: 36 sizes summing to 4243 for max_bs 256, 24 for 160
        self.assertEqual(len(ps.capture_list(256)), 36)
        self.assertEqual(sum(ps.capture_list(256)), 4243)
        self.assertEqual(len(ps.capture_list(160)), 24)
        self.assertEqual(ps.capture_list(4)[-1], 4)
        self.assertEqual(ps.capture_list(600)[-3:], [512, 544, 576])

    def test_architecture_comes_from_the_preset(self):
        d = os.path.join(ROOT, "configs", "models")
        self.assertEqual(ps.model_architecture("qwen2.5-7b", d), "Qwen2ForCausalLM")
        self.assertEqual(ps.model_architecture("llama-3.1-8b", d), "LlamaForCausalLM")
        with self.assertRaises(ps.InputError):
            ps.model_architecture("no-such-model", d)


class LayerWindows(unittest.TestCase):
    """Windowed layers run on SGLang's classes; which reference each class is checked against."""

    def model(self, name, c):
        return ps.SglangBackend.window_model(type("B", (), {"name": name})(), c)

    def test_trtllm_classes_follow_the_layers_windows_flashinfer_the_runners(self):
        gemma = make_case(layer_windows=[31, -1], runner_sliding_window_size=31, architecture="Gemma3ForCausalLM")
        cohere = make_case(layer_windows=[32, -1], runner_sliding_window_size=-1, architecture="Cohere2ForCausalLM")
        plain = make_case()
        self.assertEqual(gemma.mode, "decode")
        for name in ps.PEER_BACKENDS:
            self.assertEqual(self.model(name, gemma), "windowed", name)
            self.assertEqual(self.model(name, plain), "windowed", name)
        self.assertEqual(self.model("flashinfer_sglang", cohere), "unwindowed")
        self.assertEqual(self.model("trtllm_mha_sglang", cohere), "windowed")
        self.assertEqual(self.model("trtllm_mha_lean_sglang", cohere), "windowed")
        # a case list without the column: the runner is taken to know the layers' window (every windowed model
        # before Cohere2 did)
        self.assertEqual(self.model("flashinfer_sglang", make_case(layer_windows=[31, -1])), "windowed")

    def test_flashinfers_ragged_extend_windows_only_the_cached_keys(self):
        for name in ps.PEER_BACKENDS:
            gemma = make_case(mode="extend", layer_windows=[31, -1], runner_sliding_window_size=31)
            self.assertEqual(self.model(name, gemma), "prefix" if name == "flashinfer_sglang" else "windowed", name)
            self.assertEqual(self.model(name, make_case(mode="extend")), "windowed", name)
        self.assertIn("prefix", pf.Workload.WINDOW_MODELS)

    def test_windows_are_run_sinks_are_not(self):
        b = type("B", (), {})()
        self.assertIsNone(ps.SglangBackend.supports(b, make_case(layer_windows=[31, -1]), "eager"))
        self.assertIn("sinks", ps.SglangBackend.supports(b, make_case(sinks=True), "eager"))
        self.assertIn("graph", ps.SglangBackend.supports(b, make_case(), "graph"))

    def test_flashinfers_paged_extend_path_is_not_run(self):
        b = type("B", (), {})()
        self.assertIn("paged extend path", ps.SglangBackend.supports(b, make_case(flashinfer_extend_ragged=False), "eager"))
        self.assertIsNone(ps.SglangBackend.supports(b, make_case(flashinfer_extend_ragged=True), "eager"))

    def test_the_architecture_comes_from_the_case_list_first(self):
        self.assertEqual(make_case(architecture="Cohere2ForCausalLM").architecture, "Cohere2ForCausalLM")
        self.assertEqual(make_case(architecture="Cohere2ForCausalLM", layer_windows=[32, -1]).sliding_window, 32)
        self.assertEqual(make_case(layer_windows=[31, -1]).sliding_window, 32)


# ---- the ledger on fake tensors ------------------------------------------------------------------------

class FailureNotes(unittest.TestCase):
    def test_a_jit_failure_note_names_the_compilers_error(self):
        e = RuntimeError("Ninja build failed. Ninja output:\n[1/3] nvcc -c quantization.cu\n"
                         "nvcc fatal   : Could not open input file quantization.cu\nninja: build stopped")
        text = ps.exc_text(e)
        self.assertTrue(text.startswith("RuntimeError: Ninja build failed. Ninja output:"), text)
        self.assertIn(" ... nvcc fatal   : Could not open input file quantization.cu", text)
        self.assertNotIn("ninja: build stopped", text)

    def test_a_one_line_message_stays_as_it_is(self):
        self.assertEqual(ps.exc_text(ValueError("bad shape")), "ValueError: bad shape")


class FakeStorage:
    def __init__(self, nbytes):
        self.nbytes = nbytes


class T:
    """A fake tensor: a storage (shared by views), a kind."""

    def __init__(self, storage, kind="device"):
        self.storage, self.kind = storage, kind


def ledger(obj, trt, phase="construct", skip=None):
    def prefix_of(attr):
        return "flashinfer" if (not trt or attr in ps.FLASHINFER_ATTRS) else "trtllm_mha"
    return ps.ledger_from(ps.walk_tensors(obj, lambda v: isinstance(v, T)), phase, prefix_of,
                          set() if skip is None else skip, lambda t: id(t.storage), lambda t: t.storage.nbytes,
                          lambda t: t.kind, shared_tags=("flashinfer.workspace_buffer", "trtllm_mha.workspace_buffer"))


class Wrapper:  # stands for a FlashInfer wrapper (walk_tensors enters objects of this module)
    pass


Wrapper.__module__ = "peer_sglang"


class Obj:
    pass


Obj.__module__ = "peer_sglang"


def fake_trtllm(float_ws, runner_r2t):
    b = Obj()
    w = Wrapper()
    w._float_workspace_buffer = T(float_ws)
    w._int_workspace_buffer = T(FakeStorage(8 << 20))
    w._pin_memory_int_workspace_buffer = T(FakeStorage(8 << 20), "pinned")
    w._kv_lens_buffer = T(FakeStorage(131072))
    b.decode_wrappers = [w]
    b.kv_indptr = [T(FakeStorage(16388))]
    t1 = FakeStorage(545259520)
    b.workspace_buffer = T(t1)
    b.fmha_v2_workspace_buffer = T(t1)  # a view of T1: counted once
    b._multi_ctas_kv_counter_buffer = T(FakeStorage(1048576))
    b._default_kv_scale = T(FakeStorage(4))
    b.req_to_token = T(runner_r2t)  # the runner's pool: not the backend's
    b.host_only = T(FakeStorage(99), "host")
    return b


class Ledger(unittest.TestCase):
    def test_tags_are_attnbenchs(self):
        ws, r2t = FakeStorage(402653184), FakeStorage(1 << 30)
        entries = {e["tag"]: e for e in ledger(fake_trtllm(ws, r2t), trt=True)}
        self.assertEqual(sorted(entries), [
            "flashinfer.decode_wrappers[0].int_workspace", "flashinfer.decode_wrappers[0].kv_lens_buffer",
            "flashinfer.decode_wrappers[0].pin_memory_int_workspace", "flashinfer.kv_indptr[0]",
            "flashinfer.workspace_buffer", "trtllm_mha.default_kv_scale", "trtllm_mha.multi_ctas_kv_counter_buffer",
            "trtllm_mha.workspace_buffer"])
        self.assertEqual(entries["trtllm_mha.workspace_buffer"]["bytes"], 545259520)  # the view adds nothing
        self.assertEqual(entries["flashinfer.workspace_buffer"]["bytes"], 402653184)
        self.assertTrue(entries["flashinfer.workspace_buffer"]["shared"])
        self.assertEqual(entries["flashinfer.decode_wrappers[0].pin_memory_int_workspace"]["kind"], "pinned")
        self.assertFalse(entries["trtllm_mha.multi_ctas_kv_counter_buffer"]["shared"])

    def test_the_flashinfer_class_tags_everything_flashinfer(self):
        entries = {e["tag"] for e in ledger(fake_trtllm(FakeStorage(1), FakeStorage(2)), trt=False)}
        self.assertIn("flashinfer.multi_ctas_kv_counter_buffer", entries)
        self.assertNotIn("trtllm_mha.workspace_buffer", entries)

    def test_storages_seen_before_are_left_out(self):
        b = fake_trtllm(FakeStorage(1), FakeStorage(2))
        skip = set()
        first = ledger(b, trt=True, skip=skip)
        b.cuda_graph_kv_indices = [T(FakeStorage(134217728))]
        again = ledger(b, trt=True, phase="graph_state", skip=skip)
        self.assertEqual(len(first), 8)
        self.assertEqual([(e["tag"], e["phase"], e["bytes"]) for e in again],
                         [("flashinfer.cuda_graph_kv_indices[0]", "graph_state", 134217728)])

    def test_capture_tags_name_the_batch_bs(self):
        b = Obj()
        meta = Obj()
        meta.cu_seqlens_q = T(FakeStorage(1028))
        b.decode_cuda_graph_metadata = {256: meta, 8: [Wrapper()]}
        b.decode_cuda_graph_metadata[8][0]._int_workspace_buffer = T(FakeStorage(8 << 20))
        # TRTLLM's per-bs metadata objects (_build_cuda_graph_metadata) and FlashInfer's per-bs decode wrappers
        # (_create_decode_wrappers) under attnbench's tags: the batch size becomes [bs]
        tags = sorted(e["tag"] for e in ledger(b, trt=True, phase="capture"))
        self.assertIn("trtllm_mha.decode_cuda_graph_metadata[bs].cu_seqlens_q", tags)
        tags = sorted(e["tag"] for e in ledger(b, trt=False, phase="capture", skip=set()))
        self.assertEqual(tags, ["flashinfer.cuda_graph_decode_wrappers[0].int_workspace",
                                "flashinfer.decode_cuda_graph_metadata[bs].cu_seqlens_q"])


class MemoryCsv(TempDir):
    def test_rows_in_attnbench_memorys_format(self):
        led = [{"phase": "capture", "tag": "b", "kind": "device", "bytes": 3, "shared": False, "count": 36},
               {"phase": "construct", "tag": "z", "kind": "pinned", "bytes": 8, "shared": True, "count": 1}]
        path = os.path.join(self.tmp, "m.csv")
        w = ps.TableWriter(path, ps.MEMORY_COLUMNS, "--out-dir")
        for r in ps.memory_rows("llama-3.1-8b", 64, "trtllm_mha_sglang", led):
            w.add(r)
        w.close()
        lines = open(path).read().splitlines()
        self.assertEqual(lines, ["model,page,backend,phase,tag,kind,bytes,shared,count",
                                 "llama-3.1-8b,64,trtllm_mha_sglang,construct,z,pinned,8,1,1",
                                 "llama-3.1-8b,64,trtllm_mha_sglang,capture,b,device,3,0,36"])

    @unittest.skipUnless(BINARY and os.path.exists(BINARY), "ATTNBENCH_BINARY is not set")
    def test_header_after_model_and_page_is_attnbench_memorys(self):
        r = subprocess.run([BINARY, "memory", "--format", "csv"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[0].split(","), ps.MEMORY_COLUMNS[2:])


# ---- the stand-in policy -------------------------------------------------------------------------------

class FakeFrame:
    def __init__(self, name):
        self.f_globals = {"__name__": name}
        self.f_code = type("C", (), {"co_filename": name + ".py"})()
        self.f_back = None


class Stubs(unittest.TestCase):
    def setUp(self):
        self.importer = "sglang.srt.server_args"
        self.finder = ps.StubFinder(["attnbench_missing_mod", "json", "torchcodec"],
                                    frame_source=lambda: FakeFrame(self.importer))
        sys.meta_path.insert(0, self.finder)

    def tearDown(self):
        sys.meta_path.remove(self.finder)
        for m in [m for m in sys.modules if m.startswith("attnbench_missing_mod")]:
            del sys.modules[m]

    def test_sglang_gets_a_stand_in_for_a_missing_module_and_it_is_recorded(self):
        import attnbench_missing_mod.sub as sub  # noqa: PLC0415
        self.assertTrue(getattr(sys.modules["attnbench_missing_mod"], "__attnbench_stub__", False))

        class Sub(sub.Thing, flag=True):  # subclassed with keyword arguments
            pass
        self.assertIsInstance(Sub(1, x=2), sub.Thing)
        self.assertEqual(sub.Thing.CONST.__name__, "CONST")
        self.assertEqual(ps.stub_lines(self.finder), ["attnbench_missing_mod (imported by sglang.srt.server_args)",
                                                      "attnbench_missing_mod.sub (imported by sglang.srt.server_args)"])

    def test_a_third_party_probe_gets_its_import_error(self):
        self.importer = "transformers.utils.import_utils"
        with self.assertRaises(ImportError):
            import attnbench_missing_mod  # noqa: F401,PLC0415
        self.assertEqual(self.finder.used, {})

    def test_an_installed_module_is_never_replaced(self):
        sys.modules.pop("json", None)
        import json as j  # noqa: PLC0415
        self.assertFalse(getattr(j, "__attnbench_stub__", False))
        self.assertTrue(hasattr(j, "dumps"))
        self.assertEqual(self.finder.used, {})

    def test_torchcodec_stays_absent(self):
        self.assertNotIn("torchcodec", self.finder.names)

    def test_no_stubs_no_lines(self):
        self.assertEqual(ps.stub_lines(None), [])


# ---- the lean class ------------------------------------------------------------------------------------

class Base(abc.ABC):  # AttentionBackend (an ABC, as SGLang's)
    extend_dummy_seqs_capped_by_req_pool = False

    def __init__(self):
        self.base_init = True

    def shared_read_ends(self, fm):
        return "base:" + fm


class FlashInfer(Base):
    extend_dummy_seqs_capped_by_req_pool = True

    def __init__(self, mr, skip_prefill=False, kv_indptr_buf=None, kv_last_page_len_buf=None):
        super().__init__()
        self.wrappers = ["allocated"]
        self.token_to_kv_pool = mr.token_to_kv_pool
        self.kv_index_translator = mr.kv_index_translator
        self.kv_cache_quant_method = mr.token_to_kv_pool.get_kv_cache_quant_method()

    def _kv_write_scales(self, layer):
        return "flashinfer"


class TRTLLM(FlashInfer):
    def __init__(self, mr, skip_prefill=False, kv_indptr_buf=None, kv_last_page_len_buf=None):
        super().__init__(mr, skip_prefill, kv_indptr_buf, kv_last_page_len_buf)
        self.workspace_buffer = "T1"

    @staticmethod
    def _resolve_swa_kv_pool(mr):
        return None

    def shared_read_ends(self, fm):
        return "trt+" + super().shared_read_ends(fm)

    def scales(self, layer):
        return self._kv_write_scales(layer)


class Quant:
    def __init__(self, global_scale):
        self.g = global_scale

    def needs_global_scale(self):
        return self.g

    def get_kv_cache_quant_method(self):
        return self


class Runner:
    def __init__(self, global_scale=False):
        self.token_to_kv_pool = Quant(global_scale)
        self.kv_index_translator = "translator"


class Layer:
    k_scale, v_scale = "ks", "vs"


class LeanClass(unittest.TestCase):
    def test_the_body_runs_on_the_lean_base(self):
        Lean = ps.make_lean_class(TRTLLM, Base)
        self.assertNotIn(FlashInfer, Lean.__mro__)
        self.assertIn(Base, Lean.__mro__)
        b = Lean(Runner())
        self.assertEqual(b.workspace_buffer, "T1")
        self.assertFalse(hasattr(b, "wrappers"))  # nothing of FlashInfer's constructor
        self.assertTrue(b.base_init)
        self.assertEqual(b.kv_index_translator, "translator")
        self.assertFalse(b.use_sliding_window_kv_pool)
        self.assertEqual(b.shared_read_ends("extend"), "trt+base:extend")  # super() reaches the lean base
        self.assertEqual(b.scales(Layer()), ("ks", "vs"))  # flashinfer_backend.py L997-1000, not FlashInfer's
        self.assertEqual(Lean(Runner(global_scale=True)).scales(Layer()), (None, None))
        self.assertTrue(Lean.extend_dummy_seqs_capped_by_req_pool)

    def test_the_inheriting_class_is_untouched(self):
        ps.make_lean_class(TRTLLM, Base)
        t = TRTLLM(Runner())
        self.assertIn(FlashInfer, TRTLLM.__mro__)
        self.assertEqual(t.wrappers, ["allocated"])
        self.assertEqual(t.scales(Layer()), "flashinfer")
        self.assertEqual(t.shared_read_ends("x"), "trt+base:x")


# ---- whole runs on fake backends -----------------------------------------------------------------------

class FakeSglang(pf.FakeBackend):
    """pf's fake backend, plus what the SGLang driver reads: outputs of the checked layers, a memory pass."""

    def __init__(self, name, outputs):
        super().__init__(name)
        self.outputs = outputs
        self.last_outputs = {}

    def prepare(self, c, timing):
        p = super().prepare(c, timing)
        inner = p.check
        me = self

        def check(layer):
            me.last_outputs.setdefault(c.case_id, {})[layer] = me.outputs(c, layer)
            return inner(layer)
        p.check = check
        return p

    def memory_pass(self, c, phases, modes):
        phases.add(dict(model=c.model, page=c.page_size, backend=self.name, phase="construct", status="ok",
                        allocated_delta_bytes=10, note="fake"))
        return [{"phase": "construct", "tag": "trtllm_mha.workspace_buffer", "kind": "device", "bytes": 10,
                 "shared": True, "count": 1}]


class WholeRun(TempDir):
    def run_main(self, outputs, *extra):
        cases = self.write("cases.csv", case_csv([make_case(), make_case(case_id="extend/llama-3.1-8b/x",
                                                                         mode="extend", batch=1, q_tokens=3,
                                                                         prefix_lens=[4], new_lens=[3])]))
        out = os.path.join(self.tmp, "out")
        err = io.StringIO()
        old, sys.stderr = sys.stderr, err
        try:
            rc = ps.main(["--cases", cases, "--out-dir", out, "-q"] + list(extra),
                         make_backend=lambda n: FakeSglang(n, outputs))
        finally:
            sys.stderr = old
        return rc, out, err.getvalue()

    def test_rows_memory_and_bit_identity(self):
        rc, out, err = self.run_main(lambda c, layer: (c.case_id, layer))
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "rows.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(list(rows[0].keys()), pf.RESULT_COLUMNS)
        self.assertEqual([r["backend"] for r in rows], list(ps.PEER_BACKENDS) * 2)
        lean = [r for r in rows if r["backend"] == "trtllm_mha_lean_sglang"]
        self.assertEqual({r["bitwise_equal_to"] for r in lean}, {"trtllm_mha_sglang"})
        doc = json.load(open(os.path.join(out, "rows.json")))
        self.assertEqual(doc["environment"]["stubs"], "none")
        self.assertEqual(len(doc["rows"]), 6)
        with open(os.path.join(out, "memory.csv")) as f:
            mem = list(csv.DictReader(f))
        self.assertEqual({m["backend"] for m in mem}, set(ps.PEER_BACKENDS))
        self.assertEqual(mem[0]["model"], "llama-3.1-8b")
        self.assertEqual(open(os.path.join(out, "stubs.txt")).read(), "")

    def test_a_run_stopped_in_its_second_case_keeps_the_first_cases_comparison(self):
        def outputs(c, layer):
            if c.mode == "extend":
                raise KeyboardInterrupt  # what a time limit's signal does to the run
            return (c.case_id, layer)
        with self.assertRaises(KeyboardInterrupt):
            self.run_main(outputs)
        rows = list(csv.DictReader(open(os.path.join(self.tmp, "out", "rows.csv"))))
        lean = [r for r in rows if r["backend"] == "trtllm_mha_lean_sglang"]
        self.assertEqual([(r["case_id"], r["bitwise_equal_to"]) for r in lean],
                         [("decode/llama-3.1-8b/b=2/kv=5/p=16/bf16", "trtllm_mha_sglang")])

    def test_a_differing_lean_output_is_said(self):
        rc, out, err = self.run_main(lambda c, layer: (c.case_id, layer, "x") if False else object())
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(open(os.path.join(out, "rows.csv"))))
        lean = [r for r in rows if r["backend"] == "trtllm_mha_lean_sglang"]
        self.assertTrue(all(r["bitwise_equal_to"] == "" for r in lean))
        self.assertTrue(all("differs from trtllm_mha_sglang" in r["note"] for r in lean))

    def test_bad_input_is_one_line_and_exit_2(self):
        for extra, want in ((["--backend", "flashinfer_lib"], "--backend: unknown backend 'flashinfer_lib'"),
                            (["--filter", "^nothing"], "--filter: no case id matches"),
                            (["--filter", "("], "--filter: invalid regular expression"),
                            (["--models-dir", "/nonexistent"], "--models-dir: cannot read")):
            rc, _, err = self.run_main(lambda c, layer: 0, *extra)
            self.assertEqual(rc, 2, extra)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(want, err)

    @unittest.skipUnless(BINARY and os.path.exists(BINARY), "ATTNBENCH_BINARY is not set")
    def test_report_reads_the_rows_as_peers(self):
        rc, out, err = self.run_main(lambda c, layer: (c.case_id, layer))
        self.assertEqual(rc, 0, err)
        r = subprocess.run([BINARY, "report", os.path.join(out, "rows.json"), "--peers",
                            os.path.join(out, "rows.json")], capture_output=True, text=True, timeout=300)
        self.assertNotIn("not a library backend", r.stderr)


if __name__ == "__main__":
    unittest.main()

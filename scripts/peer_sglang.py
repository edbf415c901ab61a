#!/usr/bin/env python3
"""SGLang's own backend classes beside the model (issue 13): SGLang 0.5.23's FlashInferAttnBackend and
TRTLLMHAAttnBackend, constructed and driven by SGLang's code, and the lean TRTLLM class as the open PRs write it.

Backends (rows in attnbench's schema, docs/result-schema.md):
  flashinfer_sglang       sglang.srt.layers.attention.flashinfer_backend.FlashInferAttnBackend
  trtllm_mha_sglang       sglang.srt.layers.attention.trtllm_mha_backend.TRTLLMHAAttnBackend (inherits
                          FlashInferAttnBackend, as shipped)
  trtllm_mha_lean_sglang  the same class body on base AttentionBackend (defined here, the wheel untouched): its
                          own methods, re-bound so that super() reaches the lean base, which sets up only what
                          those methods read from FlashInfer (facts-0.5.23 §1.1 / §4): token_to_kv_pool,
                          kv_cache_quant_method, kv_index_translator, use_sliding_window_kv_pool, _kv_write_scales,
                          and keeps extend_dummy_seqs_capped_by_req_pool = True (flashinfer_backend.py L324).

Model runner: SGLang's attention unit-test kit (sglang/test/kits/attention_unittest, MockModelRunner) for the
server args, the mock model and the KV index translator, with the kit's pools replaced by SGLang's own
ReqToTokenPool at R x (context_len + 4 + draft) (allocation_sizing.py L96-116) and an MHATokenToKVPool sized to the
case's pages (the kit sizes it R x context tokens: 2 TiB at R = 4096, 128 Ki context). R, context length, page
size, the FlashInfer workspace and the CUDA-graph max batch come from attnbench's case list (SGLang's defaults
for the preset); the architecture from configs/models/<model>.json (Qwen2 gets the 512 MiB workspace through
SGLang's own rule, flashinfer_backend.py L421-431).

Per (model, backend) the memory pass measures construct, init_cuda_graph_state, the capture metadata per capture
size (init_forward_metadata_out_graph(in_capture=True), cuda_graph_hook.py L500-532) and one eager step per mode:
torch.cuda.memory_allocated deltas, memory_stats peaks, pinned host bytes (the host allocator's stats, else the
pinned tensors held), the driver's free memory, and per tensor (the storages the backend object holds, tagged as
attnbench's ledger tags them). Output: memory.csv (model,page, + `attnbench memory`'s CSV), phases.csv.
Per case (eager timing) the rows: init_forward_metadata + forward over every layer through the class's own
methods on seeded inputs (scripts/peer_flashinfer.py's Workload: the same generator, float64 reference), the lean
class bit-compared with the inheriting one.

Modules SGLang imports that the machine lacks get a stand-in only when the real module is not importable, only
for imports made from SGLang's own modules (a third-party probe still gets its ImportError), never on the
measured path; every stand-in is printed and listed in stubs.txt. With SGLang installed: no stand-ins.

torch / sglang / flashinfer are imported on use only: tests/peers/test_peer_sglang.py runs this file without them.
"""

from __future__ import annotations

import argparse
import csv
import gc
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import sys
import time
import traceback
import types
from typing import Callable, Dict, List, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_flashinfer as pf  # noqa: E402  (the case list, rows, writer, sampling, Workload)

PEER_BACKENDS = ("flashinfer_sglang", "trtllm_mha_sglang", "trtllm_mha_lean_sglang")
SGLANG_NAME = {"flashinfer_sglang": "flashinfer", "trtllm_mha_sglang": "trtllm_mha",
               "trtllm_mha_lean_sglang": "trtllm_mha"}
MEMORY_COLUMNS = ["model", "page", "backend", "phase", "tag", "kind", "bytes", "shared", "count"]
PHASE_COLUMNS = ["model", "page", "backend", "phase", "status", "allocated_delta_bytes", "peak_delta_bytes",
                 "pinned_bytes", "driver_delta_bytes", "ledger_device_bytes", "ledger_pinned_bytes", "note"]

# Modules the SGLang 0.5.23 import path touches that the H200 image lacks (facts-0.5.23, last section).
STUB_CANDIDATES = ("IPython", "aiter", "compressed_tensors", "deep_ep", "deep_gemm", "fastapi", "fastsafetensors",
                   "flash_attn", "gguf", "kt_kernel", "megatron", "opentelemetry", "partial_json_parser",
                   "petit_kernel", "pplx_kernels", "sgl_kernel", "torch_memory_saver", "triton_kernels", "uvicorn",
                   "xgrammar", "xielu")
STUB_NEVER = ("torchcodec",)  # transformers reads its package metadata once it is importable: must stay absent


class InputError(pf.InputError):
    pass


# ---- stand-ins for missing modules ---------------------------------------------------------------------

class _StandInMeta(type):
    """Any attribute of a stand-in class is another stand-in class (module.Class.CONSTANT chains import)."""

    def __new__(mcls, name, bases, ns, **kwargs):
        return super().__new__(mcls, name, bases, ns)

    def __init__(cls, name, bases, ns, **kwargs):
        super().__init__(name, bases, ns)

    def __getattr__(cls, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        sub = _StandInMeta(attr, (cls,), {"__module__": cls.__module__})
        setattr(cls, attr, sub)
        return sub


class _StandIn(metaclass=_StandInMeta):
    """A class that a stand-in module hands out for any name: accepts any arguments, subclassable with keyword
    arguments, usable as a field type in pydantic models. It computes nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return getattr(type(self), attr)

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        from pydantic_core import core_schema  # noqa: PLC0415
        return core_schema.any_schema()


class StubModule(types.ModuleType):
    """A stand-in module: every attribute is a _StandIn subclass of that name; submodules are stand-ins too."""

    def __init__(self, name: str):
        super().__init__(name)
        self.__path__ = []  # a package: "from x.y import z" works
        self.__file__ = f"<attnbench stand-in {name}>"
        self.__attnbench_stub__ = True

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        cls = _StandInMeta(attr, (_StandIn,), {"__module__": self.__name__})
        setattr(self, attr, cls)
        return cls


def importer_module(frame) -> str:
    """The module name of the first frame outside the import machinery (and outside this file)."""
    f = frame
    while f is not None:
        name = f.f_globals.get("__name__", "")
        fn = f.f_code.co_filename
        if not (name.startswith("importlib") or fn.startswith("<frozen") or fn == __file__):
            return name
        f = f.f_back
    return ""


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers imports of `names` (and their submodules) with StubModule, only when the importing module is
    one of SGLang's own (`owners` prefixes) and the real module cannot be found. Records what it answered."""

    def __init__(self, names: Sequence[str], owners: Sequence[str] = ("sglang",),
                 frame_source: Callable[[], object] = lambda: sys._getframe(2)):
        self.names = set(names) - set(STUB_NEVER)
        self.owners = tuple(owners)
        self.frame_source = frame_source
        self.used: Dict[str, str] = {}  # stubbed module -> the SGLang module that imported it first
        self._real: Dict[str, bool] = {}

    def _really_missing(self, top: str) -> bool:
        if top not in self._real:
            sys.meta_path.remove(self)
            try:
                self._real[top] = importlib.util.find_spec(top) is None
            except (ImportError, ValueError):
                self._real[top] = True
            finally:
                sys.meta_path.insert(0, self)
        return self._real[top]

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if top not in self.names:
            return None
        parent = sys.modules.get(top)
        if fullname != top and parent is not None and getattr(parent, "__attnbench_stub__", False):
            self.used.setdefault(fullname, importer_module(self.frame_source()))
            return importlib.machinery.ModuleSpec(fullname, self)  # submodule of a stand-in already given
        if not self._really_missing(top):
            return None
        who = importer_module(self.frame_source())
        if not who.startswith(self.owners):
            return None  # a third-party probe: let it get its ImportError
        self.used.setdefault(fullname, who)
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return StubModule(spec.name)

    def exec_module(self, module):
        pass


def install_stubs(names: Sequence[str] = STUB_CANDIDATES) -> StubFinder:
    finder = StubFinder(names)
    sys.meta_path.insert(0, finder)
    return finder


def stub_lines(finder: Optional[StubFinder]) -> List[str]:
    if finder is None:
        return []
    return [f"{m} (imported by {who})" for m, who in sorted(finder.used.items())]


# ---- SGLang's defaults that attnbench's case list does not carry ---------------------------------------

def capture_list(max_bs: int) -> List[int]:
    """SGLang's decode capture list without speculative decoding (arg_groups/cuda_graph_hook.py L500-532)."""
    sizes = [1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16)) + list(range(512, max_bs + 1, 32))
    return [b for b in sizes if b <= max_bs]


def model_architecture(model: str, models_dir: str) -> str:
    """architectures[0] of configs/models/<model>.json (SGLang's workspace rule reads it)."""
    path = os.path.join(models_dir, model + ".json")
    try:
        with open(path) as f:
            arch = json.load(f).get("architectures", [""])
    except (OSError, ValueError) as e:
        raise InputError(f"--models-dir: cannot read '{path}': {e}") from None
    if not arch or not isinstance(arch[0], str):
        raise InputError(f"--models-dir: '{path}' has no architectures list")
    return arch[0]


# ---- per-tensor ledger: the storages an object holds, tagged like attnbench's ledger -------------------

# FlashInfer wrapper attributes -> attnbench's wrapper sub-tags (src/backends/flashinfer_wrappers.cpp)
WRAPPER_NAMES = {"_int_workspace_buffer": "int_workspace", "_pin_memory_int_workspace_buffer":
                 "pin_memory_int_workspace", "_kv_lens_buffer": "kv_lens_buffer", "_qo_indptr_buf": "qo_indptr_buf"}
# Attributes of FlashInferAttnBackend.__init__ (flashinfer_backend.py L457-555): tagged "flashinfer." also on the
# inheriting TRTLLM class, as attnbench's trtllm_mha_legacy ledger does.
FLASHINFER_ATTRS = ("kv_indptr", "kv_last_page_len", "qo_indptr", "prefill_wrapper_ragged", "prefill_wrappers_paged",
                    "prefill_wrappers_verify", "decode_wrappers", "cuda_graph_kv_indices", "cuda_graph_custom_mask",
                    "cuda_graph_qk_indptr", "cuda_graph_qo_indptr")
# Attributes that are views of another attribute's storage
VIEW_ATTRS = ("fmha_v2_workspace_buffer",)
# Capture-phase names: SGLang's attribute path with the batch size -> attnbench's tag
CAPTURE_ALIASES = [(re.compile(r"^flashinfer\.decode_cuda_graph_metadata\[bs\]\[(\d+)\]"),
                    r"flashinfer.cuda_graph_decode_wrappers[\1]")]


def tag_name(prefix: str, path: Sequence[object]) -> str:
    s = prefix
    for p in path:
        if isinstance(p, int):
            s += f"[{p}]"
        else:
            s += "." + WRAPPER_NAMES.get(p, p.lstrip("_"))
    return s


def walk_tensors(obj: object, is_tensor: Callable[[object], bool], max_depth: int = 4):
    """(path, tensor) for every tensor reachable from obj's attributes through dicts, lists, tuples and objects
    of SGLang's / FlashInfer's classes; each object visited once."""
    seen = set()
    out = []

    def visit(v, path, depth):
        if is_tensor(v):
            out.append((tuple(path), v))
            return
        if depth > max_depth or id(v) in seen:
            return
        if isinstance(v, dict):
            seen.add(id(v))
            for k in sorted(v, key=str):
                visit(v[k], path + [k if isinstance(k, (int, str)) else str(k)], depth + 1)
        elif isinstance(v, (list, tuple)):
            seen.add(id(v))
            for i, x in enumerate(v):
                visit(x, path + [i], depth + 1)
        elif hasattr(v, "__dict__") and type(v).__module__.split(".")[0] in ("sglang", "flashinfer", "__main__",
                                                                            "peer_sglang"):
            seen.add(id(v))
            for k, x in sorted(vars(v).items()):
                if k in ("model_runner", "req_to_token_pool", "token_to_kv_pool", "kv_index_translator",
                         "indices_updater_decode", "indices_updater_prefill", "attn_backend"):
                    continue  # references to the runner's objects, not the backend's allocations
                visit(x, path + [k], depth + 1)

    for k, x in sorted(vars(obj).items()):
        if k in ("model_runner", "req_to_token_pool", "token_to_kv_pool", "kv_index_translator", "req_to_token",
                 "indices_updater_decode", "indices_updater_prefill"):
            continue
        visit(x, [k], 0)
    return out


def ledger_from(items, phase: str, prefix_of: Callable[[str], str], skip_storages: set,
                storage_of: Callable[[object], int], nbytes_of: Callable[[object], int],
                kind_of: Callable[[object], str], shared_tags: Sequence[str] = ()) -> List[Dict[str, object]]:
    """Ledger entries for (path, tensor) items: one per storage not in skip_storages (a view of a storage counts
    once, under the first path that reaches it); host (unpinned) tensors are left out."""
    entries: Dict[str, Dict[str, object]] = {}
    # a view (fmha_v2_workspace_buffer = T1[semaphore_bytes:], L318) is named after the tensor it views
    items = sorted(items, key=lambda it: it[0][0] in VIEW_ATTRS)
    for path, t in items:
        st = storage_of(t)
        if st in skip_storages:
            continue
        kind = kind_of(t)
        if kind == "host":
            continue
        skip_storages.add(st)
        attr = path[0]
        if attr == "_float_workspace_buffer" or (len(path) > 1 and path[-1] == "_float_workspace_buffer"):
            tag = "flashinfer.workspace_buffer"  # F1, shared by the wrappers (TRTLLM's workspace_buffer is T1)
        else:
            tag = tag_name(prefix_of(str(attr)), path)
        if phase == "capture":
            tag = re.sub(r"\[(\d+)\]", "[bs]", tag, count=1) if "cuda_graph_metadata[" in tag else tag
            for rx, rep in CAPTURE_ALIASES:
                tag = rx.sub(rep, tag)
        e = entries.setdefault(tag, {"phase": phase, "tag": tag, "kind": kind, "bytes": 0,
                                     "shared": tag in shared_tags, "count": 0})
        e["bytes"] += nbytes_of(t)
        e["count"] += 1
    return sorted(entries.values(), key=lambda e: e["tag"])


# ---- output files --------------------------------------------------------------------------------------

class TableWriter:
    """A CSV written row by row (flushed), so that an interrupted run keeps every finished row."""

    def __init__(self, path: str, columns: Sequence[str], option: str):
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._f = open(path, "w", newline="")
        except OSError as e:
            raise InputError(f"{option}: cannot write '{path}': {e.strerror}") from None
        self.columns = list(columns)
        self._w = csv.writer(self._f, lineterminator="\n")
        self._w.writerow(self.columns)
        self._f.flush()
        self.rows: List[Dict[str, object]] = []

    def add(self, row: Dict[str, object]) -> None:
        self._w.writerow([pf._cell(row.get(k)) for k in self.columns])
        self._f.flush()
        self.rows.append(row)

    def close(self) -> None:
        self._f.close()


def memory_rows(model: str, page: int, backend: str, ledger: Sequence[Dict[str, object]]) -> List[Dict[str, object]]:
    """`attnbench memory`'s CSV rows (backend,phase,tag,kind,bytes,shared,count) with model,page in front."""
    order = {"construct": 0, "graph_state": 1, "capture": 2}
    return [dict(model=model, page=page, backend=backend, **{k: e[k] for k in
                                                             ("phase", "tag", "kind", "bytes", "shared", "count")})
            for e in sorted(ledger, key=lambda e: (order.get(str(e["phase"]), 9), str(e["tag"])))]


# ---- the GPU side (imported on use) --------------------------------------------------------------------

class Sgl:
    """torch, SGLang and FlashInfer, imported once; the three classes; the kit."""

    def __init__(self):
        import torch  # noqa: PLC0415
        self.torch = torch
        from sglang.test.kits.attention_unittest.attention_methods import dense_attention as kit  # noqa: PLC0415
        self.kit = kit
        from sglang.srt.layers.attention import flashinfer_backend as fib  # noqa: PLC0415
        from sglang.srt.layers.attention import trtllm_mha_backend as tmb  # noqa: PLC0415
        from sglang.srt.layers.attention.base_attn_backend import AttentionBackend  # noqa: PLC0415
        from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool, ReqToTokenPool  # noqa: PLC0415
        from sglang.srt.model_executor.forward_batch_info import ForwardBatch, ForwardMode  # noqa: PLC0415
        from sglang.srt.layers.radix_attention import RadixAttention  # noqa: PLC0415
        from sglang.srt import runtime_context  # noqa: PLC0415
        self.fib, self.tmb = fib, tmb
        self.AttentionBackend = AttentionBackend
        self.ReqToTokenPool, self.MHATokenToKVPool = ReqToTokenPool, MHATokenToKVPool
        self.ForwardBatch, self.ForwardMode = ForwardBatch, ForwardMode
        self.RadixAttention = RadixAttention
        self.runtime_context = runtime_context
        self.classes = {"flashinfer_sglang": fib.FlashInferAttnBackend, "trtllm_mha_sglang": tmb.TRTLLMHAAttnBackend,
                        "trtllm_mha_lean_sglang": make_lean_class(tmb.TRTLLMHAAttnBackend, AttentionBackend)}

    def clear_shared_buffers(self) -> None:
        """SGLang's named process-wide buffers (get_buffer: the first creator sizes them): dropped before each
        construction, so that each backend's construction allocates its own, as in a fresh server."""
        ctx = self.runtime_context.get_context()
        ctx.resources.buffers.clear()


def make_lean_class(trtllm_cls, base_cls):
    """TRTLLMHAAttnBackend's own class body on base AttentionBackend: the functions of its namespace, re-bound
    (a fresh __class__ cell) so that their super() calls reach _LeanBase; the wheel's class is untouched."""

    class _LeanBase(base_cls):
        # kept as the PRs keep it: FlashInfer's True (flashinfer_backend.py L324; base default False, L168)
        extend_dummy_seqs_capped_by_req_pool = True

        def __init__(self, model_runner, skip_prefill=False, kv_indptr_buf=None, kv_last_page_len_buf=None):
            base_cls.__init__(self)
            # the five things TRTLLM reads from FlashInfer (facts-0.5.23 §1.1, §4): references only
            self.token_to_kv_pool = model_runner.token_to_kv_pool
            self.kv_index_translator = model_runner.kv_index_translator
            self._swa_kv_pool = trtllm_cls._resolve_swa_kv_pool(model_runner)
            self.use_sliding_window_kv_pool = self._swa_kv_pool is not None
            self.kv_cache_quant_method = self.token_to_kv_pool.get_kv_cache_quant_method()

        def _kv_write_scales(self, layer):
            # flashinfer_backend.py L997-1000
            if self.kv_cache_quant_method.needs_global_scale():
                return None, None
            return layer.k_scale, layer.v_scale

    # the class body; not the class machinery (ABCMeta makes its own abstract-method bookkeeping)
    ns = {k: v for k, v in trtllm_cls.__dict__.items()
          if k not in ("__dict__", "__weakref__", "__abstractmethods__", "_abc_impl")}
    lean = type("TRTLLMHAAttnBackend", (_LeanBase,), ns)
    lean.__qualname__ = "TRTLLMHAAttnBackend(AttentionBackend)"
    cell = types.CellType(lean)

    def rebind(f):
        if isinstance(f, types.FunctionType) and "__class__" in f.__code__.co_freevars:
            cells = tuple(cell if n == "__class__" else c for n, c in zip(f.__code__.co_freevars, f.__closure__))
            g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, cells)
            g.__kwdefaults__, g.__qualname__, g.__doc__ = f.__kwdefaults__, f.__qualname__, f.__doc__
            return g
        return f

    for k, v in ns.items():
        if isinstance(v, (staticmethod, classmethod)):
            setattr(lean, k, type(v)(rebind(v.__func__)))
        elif isinstance(v, property):
            setattr(lean, k, property(rebind(v.fget), rebind(v.fset) if v.fset else None))
        else:
            setattr(lean, k, rebind(v))
    return lean


class Measure:
    """Allocated / peak / pinned / driver figures around a phase."""

    def __init__(self, torch):
        self.t = torch

    def pinned(self) -> Optional[int]:
        try:
            s = self.t.cuda.host_memory_stats()
            for k in ("allocated_bytes.current", "allocated_bytes.all.current", "allocations.current"):
                if k in s:
                    return int(s[k]) if k != "allocations.current" else None
        except Exception:
            pass
        return None

    def start(self):
        t = self.t
        # The host allocator frees a pinned block only once the events recorded on it have completed, which it
        # checks lazily at its next allocation: without this, the previous backend's 32 MiB of pinned buffers
        # were released inside the next construction and its pinned delta read 0 (H200, first run).
        gc.collect()
        t.cuda.synchronize()
        empty_host_cache = getattr(t._C, "_host_emptyCache", None)
        if empty_host_cache is not None:
            empty_host_cache()
        t.cuda.reset_peak_memory_stats()
        free, total = t.cuda.mem_get_info()
        self.a0, self.drv0, self.p0 = t.cuda.memory_allocated(), total - free, self.pinned()

    def stop(self) -> Dict[str, Optional[int]]:
        t = self.t
        t.cuda.synchronize()
        free, total = t.cuda.mem_get_info()
        p1 = self.pinned()
        return {"allocated_delta_bytes": t.cuda.memory_allocated() - self.a0,
                "peak_delta_bytes": t.cuda.max_memory_allocated() - self.a0,
                "pinned_bytes": None if p1 is None or self.p0 is None else p1 - self.p0,
                "driver_delta_bytes": (total - free) - self.drv0}


class SglangBackend(pf.Backend):
    """One of the three classes on attnbench's cases (pf.run_one drives it)."""

    def __init__(self, name: str, sgl: Sgl, models_dir: str):
        self.name = name
        self.sgl = sgl
        self.torch = sgl.torch
        self.cls = sgl.classes[name]
        self.models_dir = models_dir
        props = self.torch.cuda.get_device_properties(0)
        self.device = props.name
        self._l2 = self.torch.empty(2 * max(int(getattr(props, "L2_cache_size", 0)), 1 << 20),
                                    dtype=self.torch.uint8, device="cuda")
        self._l2_value = 0
        self.last_outputs: Dict[str, Dict[int, object]] = {}

    def flush_l2(self) -> None:
        self._l2_value = (self._l2_value + 1) & 0xFF
        self._l2.fill_(self._l2_value)

    def timer(self) -> pf.Timer:
        return pf.CudaTimer()

    def supports(self, c: pf.Case, timing: str) -> Optional[str]:
        if timing == "graph":
            return ("graph timing: not run by the SGLang peer (the capture phase's memory is measured per capture "
                    "size in memory.csv)")
        if c.sinks:
            return "attention sinks: not run by the SGLang peer"
        if c.flashinfer_use_paged:
            return "SGLANG_FLASHINFER_USE_PAGED: not run by the SGLang peer"
        if c.flashinfer_extend_ragged is False:
            return ("FlashInfer's paged extend path (deterministic inference or a multimodal model): not run by the "
                    "SGLang peer (its mock model runner is neither)")
        return None

    def window_model(self, c: pf.Case) -> str:
        """Which keys the layers' windows hide in this class's output (one of pf.Workload.WINDOW_MODELS), as
        attnbench's AttentionBackend::layer_windows: the TRTLLM classes pass every layer's sliding_window_size to
        their kernels ("windowed"); FlashInfer applies none where the model runner has no window (one wrapper set,
        flashinfer_backend.py L407-416: "unwindowed"), and in its ragged extend (the only extend path this peer
        runs) windows only the cached keys: the ragged wrapper is planned without a window (L2297-2304; "prefix")."""
        if self.name != "flashinfer_sglang" or not any(w >= 0 for w in c.layer_windows):
            return "windowed"
        if c.runner_window < 0:
            return "unwindowed"
        return "prefix" if c.mode == "extend" else "windowed"

    def make_runner(self, c: pf.Case, num_slots: int, draft: int):
        torch, kit, sgl = self.torch, self.sgl.kit, self.sgl
        dt = getattr(torch, pf.TORCH_DTYPES[c.dtype])
        mode = sgl.ForwardMode.TARGET_VERIFY if draft else sgl.ForwardMode.DECODE
        case = kit.DenseAttentionCase(name="attnbench", backend=SGLANG_NAME[self.name], forward_mode=mode,
                                      num_heads=c.num_qo_heads, num_kv_heads=c.num_kv_heads, page_size=c.page_size,
                                      prefix_lens=(0,), extend_lens=(draft,) if draft else ())
        cfg = kit.TinyModelConfig(num_heads=c.num_qo_heads, num_kv_heads=c.num_kv_heads, head_dim=c.head_dim,
                                  hidden_size=c.num_qo_heads * c.head_dim, context_len=c.page_size)
        # the kit's pools at a one-page context (its R x context KV pool is far too large), replaced below
        runner = kit.MockModelRunner(case=case, model_config=cfg, dtype=dt, device="cuda",
                                     max_context_len=c.page_size, head_dim=c.head_dim,
                                     runner_batch_size=c.max_running_requests)
        cfg.context_len = c.context_len
        cfg.hf_config.architectures = [c.architecture or model_architecture(c.model, self.models_dir)]
        # What the model class tells SGLang's model runner (model_runner.sliding_window_size): FlashInfer plans its
        # two wrapper sets from it; None for a model without windows and for Cohere2, whose layers' windows only
        # the TRTLLM backend applies. The pool stays the full MHATokenToKVPool (no hybrid-SWA pool: as
        # --disable-hybrid-swa-memory; attnbench models that pool).
        runner.sliding_window_size = c.runner_window if c.runner_window >= 0 else None
        runner.req_to_token_pool = None
        runner.token_to_kv_pool = None
        gc.collect()
        torch.cuda.empty_cache()
        extra = 4 + draft  # allocation_sizing.py L96-116
        runner.req_to_token_pool = sgl.ReqToTokenPool(size=c.max_running_requests,
                                                      max_context_len=c.context_len + extra, device="cuda",
                                                      enable_memory_saver=False)
        runner.token_to_kv_pool = sgl.MHATokenToKVPool(size=num_slots, page_size=c.page_size, dtype=dt,
                                                       head_num=c.num_kv_heads, head_dim=c.head_dim,
                                                       layer_num=c.layers, device="cuda", enable_memory_saver=False,
                                                       enable_alt_stream=False)
        pool = runner.token_to_kv_pool
        runner.token_to_kv_pool_allocator = types.SimpleNamespace(page_size=c.page_size, get_kvcache=lambda: pool)
        runner.init_kv_index_translator()
        return runner

    def runner_storages(self, runner) -> set:
        torch = self.torch
        st = set()
        for obj in (runner.req_to_token_pool, runner.token_to_kv_pool):
            for _, t in walk_tensors(obj, torch.is_tensor):
                st.add(t.untyped_storage().data_ptr())
        st.add(runner.req_to_token_pool.req_to_token.untyped_storage().data_ptr())
        return st

    def construct(self, runner):
        """The constructor, measured: Measure around it, the ledger of what the object holds."""
        torch = self.torch
        env_key = "SGLANG_FLASHINFER_WORKSPACE_SIZE"
        saved = os.environ.get(env_key)  # the FlashInfer ctor .set()s it for Qwen: restore for the next one
        self.sgl.clear_shared_buffers()
        gc.collect()
        torch.cuda.empty_cache()
        m = Measure(torch)
        m.start()
        try:
            backend = self.cls(runner)
        finally:
            if saved is None:
                os.environ.pop(env_key, None)
            else:
                os.environ[env_key] = saved
        figures = m.stop()
        skip = self.runner_storages(runner)
        ledger = self.ledger(backend, "construct", skip)
        return backend, figures, ledger, skip

    def ledger(self, backend, phase: str, skip: set):
        torch = self.torch
        trt = self.name != "flashinfer_sglang"

        def prefix_of(attr: str) -> str:
            return "flashinfer" if (not trt or attr in FLASHINFER_ATTRS) else "trtllm_mha"

        def kind_of(t):
            return "device" if t.is_cuda else ("pinned" if t.is_pinned() else "host")

        return ledger_from(walk_tensors(backend, torch.is_tensor), phase, prefix_of, skip,
                           lambda t: t.untyped_storage().data_ptr(), lambda t: t.untyped_storage().nbytes(),
                           kind_of, shared_tags=("flashinfer.workspace_buffer", "trtllm_mha.workspace_buffer",
                                                 "trtllm_mha.default_kv_scale"))

    # -- forward batches ---------------------------------------------------------------------------------
    def forward_batch(self, c: pf.Case, wl, runner, backend, mode: str):
        torch, sgl = self.torch, self.sgl
        bs = c.batch
        FM = sgl.ForwardMode
        rows = torch.arange(1, bs + 1, dtype=torch.int32, device="cuda")  # row 0: the padding row
        r2t = runner.req_to_token_pool.req_to_token
        width = wl.req_to_token.shape[1]
        r2t[1:bs + 1, :width] = wl.req_to_token
        seq = c.prefix_lens if mode == "verify" else c.kv_lens  # verify: seq_lens are the prefixes (kit L420-424)
        positions = torch.cat([torch.arange(p, p + n) for p, n in zip(c.prefix_lens, c.new_lens)]).to("cuda")
        fm = {"decode": FM.DECODE, "extend": FM.EXTEND, "verify": FM.TARGET_VERIFY}[mode]
        fb = sgl.ForwardBatch(forward_mode=fm, batch_size=bs,
                              input_ids=torch.arange(c.q_tokens, dtype=torch.int64, device="cuda"),
                              req_pool_indices=rows, seq_lens=torch.tensor(seq, dtype=torch.int32, device="cuda"),
                              seq_lens_cpu=torch.tensor(seq, dtype=torch.int32),
                              out_cache_loc=wl.out_cache_loc, seq_lens_sum=sum(seq), positions=positions)
        runner.kv_index_translator.bind_own_plan(fb)
        fb.attn_backend = backend
        if mode == "extend":
            fb.extend_prefix_lens = torch.tensor(c.prefix_lens, dtype=torch.int32, device="cuda")
            fb.extend_prefix_lens_cpu = list(c.prefix_lens)
            fb.extend_seq_lens = torch.tensor(c.new_lens, dtype=torch.int32, device="cuda")
            fb.extend_seq_lens_cpu = list(c.new_lens)
            fb.extend_num_tokens = c.q_tokens
        if mode == "verify":
            from sglang.test.kits.attention_unittest.runner_modes import (  # noqa: PLC0415
                speculative_target_verify_runner as tv)
            case = self.sgl.kit.DenseAttentionCase(
                name="attnbench", backend=SGLANG_NAME[self.name], forward_mode=FM.TARGET_VERIFY,
                num_heads=c.num_qo_heads, num_kv_heads=c.num_kv_heads, page_size=c.page_size,
                prefix_lens=tuple(c.prefix_lens), extend_lens=tuple(c.new_lens))
            fb.spec_info = tv._make_spec_verify_input(case, fb, topk=1, device="cuda", spec_kind="eagle")
        return fb

    def layers(self, c: pf.Case, runner):
        R = self.sgl.RadixAttention
        # sliding_window_size per layer as the model classes pass it (-1: full attention)
        return [R(num_heads=c.num_qo_heads, head_dim=c.head_dim, scaling=c.sm_scale, num_kv_heads=c.num_kv_heads,
                  layer_id=i, sliding_window_size=c.layer_windows[i]) for i in range(c.layers)]

    def prepare(self, c: pf.Case, timing: str) -> pf.Prepared:
        torch = self.torch
        wl = pf.TorchBackend.workload(self, c)  # shared per case across the three backends
        draft = c.draft_tokens if c.mode == "verify" else 0
        runner = self.make_runner(c, wl.num_slots, draft)
        pool = runner.token_to_kv_pool
        for i in range(c.layers):
            pool.get_key_buffer(i)[:wl.num_slots].copy_(wl.k_pool[i])
            pool.get_value_buffer(i)[:wl.num_slots].copy_(wl.v_pool[i])
        try:
            backend, figures, ledger, _ = self.construct(runner)
            layers = self.layers(c, runner)
            fb = self.forward_batch(c, wl, runner, backend, c.mode)
        except BaseException:
            runner._server_args_override.restore()
            raise
        me = self
        Hq, Hkv, D = c.num_qo_heads, c.num_kv_heads, c.head_dim

        class P(pf.Prepared):
            pass

        p = P()
        p.construct_ledger = ledger
        p.ctor_device_bytes = figures["allocated_delta_bytes"]
        p.ctor_pinned_bytes = figures["pinned_bytes"] if figures["pinned_bytes"] is not None else \
            sum(int(e["bytes"]) for e in ledger if e["kind"] == "pinned")
        p.ctor_driver_delta_bytes = figures["driver_delta_bytes"]
        p.notes = [f"{type(backend).__module__}.{type(backend).__qualname__} "
                   f"(MRO {' -> '.join(k.__name__ for k in type(backend).__mro__[1:3])})"]
        outs: List[object] = [None] * c.layers
        q2, k2, v2 = wl.q.reshape(c.q_tokens, Hq * D), wl.k, wl.v
        base = torch.cuda.memory_allocated()

        def metadata():
            backend.init_forward_metadata(fb)

        def forward():
            for i, layer in enumerate(layers):
                outs[i] = backend.forward(q2, k2, v2, layer, fb, save_kv_cache=True)

        used = self.window_model(c)
        if used == "unwindowed":
            p.notes.append("unwindowed: SGLang's FlashInferAttnBackend plans one wrapper set with no window when the "
                           "model runner has none (model_runner.sliding_window_size None), so the layers' windows "
                           "do not apply; checked against the unwindowed reference")
        elif used == "prefix":
            p.notes.append("new tokens unwindowed: SGLang's FlashInfer ragged wrapper is planned without a window, so "
                           "the sliding layers window only the cached keys; checked against that reference")

        p.check_notes = []

        def check(layer):
            o = outs[layer].reshape(c.q_tokens, Hq, D)
            me.last_outputs.setdefault(c.case_id, {})[layer] = o.clone()
            st = wl.check(layer, o, model=used)
            if c.layer_windows[layer] >= 0:
                # which window model the output follows, said beside the verdict whichever it is: the other
                # references (pf.Workload.WINDOW_MODELS; "prefix" differs from "unwindowed" only with a prefix)
                for model in pf.Workload.WINDOW_MODELS:
                    if model == used or (model == "prefix" and not any(c.prefix_lens)):
                        continue
                    alt = wl.check(layer, o, model=model)
                    p.check_notes.append(f"layer {layer} against the {model} reference instead: "
                                         f"{'pass' if alt.passed() else 'FAIL'} (max_abs {alt.max_abs:.3g}, rel_l2 "
                                         f"{alt.rel_l2():.3g}, mismatches {alt.mismatch_frac():.3g})")
            return st

        def step_peak():
            return torch.cuda.max_memory_allocated() - base

        def release():
            runner._server_args_override.restore()
            p.__dict__.clear()
            gc.collect()
            torch.cuda.empty_cache()

        torch.cuda.reset_peak_memory_stats()
        p.metadata, p.forward, p.check, p.step_peak_device_bytes, p.release = \
            metadata, forward, check, step_peak, release
        p.keep = (runner, backend, layers, fb)
        return p

    # -- the memory pass: construct, graph state, capture per size, one step per mode --------------------
    def memory_pass(self, c: pf.Case, phases: TableWriter, modes: Dict[str, pf.Case]) -> List[Dict[str, object]]:
        torch, sgl = self.torch, self.sgl
        ledger: List[Dict[str, object]] = []

        def phase_row(phase, status, fig=None, led=(), note=""):
            fig = fig or {}
            phases.add(dict(model=c.model, page=c.page_size, backend=self.name, phase=phase, status=status,
                            ledger_device_bytes=sum(int(e["bytes"]) for e in led if e["kind"] == "device"),
                            ledger_pinned_bytes=sum(int(e["bytes"]) for e in led if e["kind"] == "pinned"),
                            note=note, **fig))

        wl = pf.TorchBackend.workload(self, c)
        runner = backend = None
        try:
            runner = self.make_runner(c, wl.num_slots, 0)
            backend, fig, led, skip = self.construct(runner)
            ledger += led
            phase_row("construct", "ok", fig, led, f"{type(backend).__qualname__}")
        except Exception as e:
            phase_row("construct", "failed", note=exc_text(e))
            if runner is not None:
                runner._server_args_override.restore()
            return ledger
        try:
            max_bs = c.cuda_graph_max_bs
            m = Measure(torch)
            m.start()
            backend.init_cuda_graph_state(max_bs, max_bs)  # max_num_token = max_bs x 1 (decode_cuda_graph_runner L424)
            fig = m.stop()
            led = self.ledger(backend, "graph_state", skip)
            ledger += led
            phase_row("graph_state", "ok", fig, led, f"init_cuda_graph_state({max_bs}, {max_bs})")
            sizes = capture_list(max_bs)
            m.start()
            cap: List[Dict[str, object]] = []
            for bs in sizes:
                fb = sgl.ForwardBatch(
                    forward_mode=sgl.ForwardMode.DECODE, batch_size=bs,
                    input_ids=torch.zeros(bs, dtype=torch.int64, device="cuda"),
                    req_pool_indices=torch.zeros(bs, dtype=torch.int32, device="cuda"),
                    seq_lens=torch.ones(bs, dtype=torch.int32, device="cuda"),
                    seq_lens_cpu=torch.ones(bs, dtype=torch.int32), out_cache_loc=torch.zeros(bs, dtype=torch.int64,
                                                                                           device="cuda"),
                    seq_lens_sum=bs, positions=torch.zeros(bs, dtype=torch.int64, device="cuda"))
                runner.kv_index_translator.bind_own_plan(fb)
                fb.attn_backend = backend
                backend.init_forward_metadata_out_graph(fb, in_capture=True)
                cap += self.ledger(backend, "capture", skip)
            fig = m.stop()
            merged: Dict[str, Dict[str, object]] = {}
            for e in cap:
                x = merged.setdefault(str(e["tag"]), dict(e, bytes=0, count=0))
                x["bytes"] += int(e["bytes"])
                x["count"] += int(e["count"])
            led = sorted(merged.values(), key=lambda e: e["tag"])
            ledger += led
            phase_row("capture", "ok", fig, led, f"{len(sizes)} sizes, max {max_bs}")
        except Exception as e:
            phase_row("graph_state/capture", "failed", note=exc_text(e))
        for mode, mc in modes.items():
            prep = None
            try:
                gc.collect()
                torch.cuda.empty_cache()
                prep = self.prepare(mc, "eager")
                m = Measure(torch)
                m.start()
                prep.metadata()
                prep.forward()
                fig = m.stop()
                phase_row(f"step_{mode}", "ok", fig, (), mc.case_id)
            except Exception as e:
                phase_row(f"step_{mode}", "failed", note=f"{mc.case_id}: {exc_text(e)}")
            finally:
                if prep is not None:
                    prep.release()
        runner._server_args_override.restore()
        del backend, runner
        gc.collect()
        torch.cuda.empty_cache()
        return ledger


def exc_text(e: BaseException) -> str:
    """The exception's first line; for a multi-line message (FlashInfer's "Ninja build failed. Ninja output:"
    with the compiler's output below) also its first line that names an error, which says what failed."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    s = lines[0] if lines else ""
    cause = next((ln for ln in lines[1:] if re.search(r"error|fatal|No such file|not found|could not", ln, re.I)), "")
    if cause:
        s += " ... " + cause
    return f"{type(e).__name__}: {s}"[:400]


# ---- the driver ------------------------------------------------------------------------------------------

def compare_bitwise(rows: List[Dict[str, object]], outputs: Dict[str, Dict[str, Dict[int, object]]],
                    equal: Callable[[object, object], bool]) -> None:
    """The lean rows against the inheriting rows of the same case: bitwise_equal_to / a note."""
    by_key = {(r["case_id"], r["backend"]): r for r in rows}
    for r in rows:
        if r["backend"] != "trtllm_mha_lean_sglang" or r["status"] != "ok":
            continue
        other = by_key.get((r["case_id"], "trtllm_mha_sglang"))
        a = outputs.get("trtllm_mha_lean_sglang", {}).get(r["case_id"])
        b = outputs.get("trtllm_mha_sglang", {}).get(r["case_id"])
        if other is None or other["status"] != "ok" or not a or not b:
            pf.append_note(r, "not bit-compared (trtllm_mha_sglang has no ok row of this case)")
            continue
        same = set(a) == set(b) and all(equal(a[k], b[k]) for k in a)
        if same:
            r["bitwise_equal_to"] = "trtllm_mha_sglang"
            other["bitwise_equal_to"] = "trtllm_mha_lean_sglang"
        else:
            pf.append_note(r, "output differs from trtllm_mha_sglang (checked layers)")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="SGLang 0.5.23's own attention backend classes on attnbench's cases.")
    ap.add_argument("--cases", required=True, help="attnbench run ... --list-cases --format csv output")
    ap.add_argument("--out-dir", required=True, help="folder for rows.csv/.json, memory.csv, phases.csv, stubs.txt")
    ap.add_argument("--backend", default="all", help="flashinfer_sglang, trtllm_mha_sglang, trtllm_mha_lean_sglang "
                                                     "or all (comma separated)")
    ap.add_argument("--filter", default="", help="only the cases whose id matches this regular expression")
    ap.add_argument("--models-dir", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                         "configs", "models"),
                    help="model presets (architectures)")
    ap.add_argument("--no-memory", action="store_true", help="rows only, no memory pass")
    ap.add_argument("--no-rows", action="store_true", help="memory pass only")
    ap.add_argument("--no-stubs", action="store_true", help="install no stand-ins (a full SGLang install)")
    ap.add_argument("-q", "--quiet", action="store_true")
    return ap.parse_args(argv)


def memory_cases(cases: List[pf.Case]) -> Dict[str, Dict[str, pf.Case]]:
    """Per model: the case per mode whose step the memory pass measures (the first of each mode)."""
    out: Dict[str, Dict[str, pf.Case]] = {}
    for c in cases:
        out.setdefault(c.model, {}).setdefault(c.mode, c)
    return out


def main(argv: Sequence[str], make_backend: Optional[Callable[[str], pf.Backend]] = None) -> int:
    try:
        a = parse_args(argv)
        names = pf.select_backends(a.backend, PEER_BACKENDS)
        try:
            pattern = re.compile(a.filter)
        except re.error as e:
            raise InputError(f"--filter: invalid regular expression '{a.filter}' ({e})") from None
        cases = [c for c in pf.read_case_list(a.cases) if pattern.search(c.case_id)]
        if not cases:
            raise InputError(f"--filter: no case id matches '{a.filter}'")
        for m in sorted({c.model for c in cases if not c.architecture}):  # a list without the column: the preset's
            model_architecture(m, a.models_dir)
        os.makedirs(a.out_dir, exist_ok=True)
    except pf.InputError as e:
        print(f"peer_sglang: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"peer_sglang: error: --out-dir: cannot create '{a.out_dir}': {e.strerror}", file=sys.stderr)
        return 2
    log = (lambda s: None) if a.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    finder = None
    command = "python3 scripts/peer_sglang.py " + " ".join(argv)
    repro = f"python3 scripts/peer_sglang.py --cases {a.cases} --out-dir {a.out_dir}"
    if make_backend is None:
        if not a.no_stubs:
            finder = install_stubs()
        try:
            sgl = Sgl()
        except Exception as e:
            traceback.print_exc()
            print(f"peer_sglang: error: importing SGLang 0.5.23 failed: {exc_text(e)}", file=sys.stderr)
            write_stubs(a.out_dir, finder)
            return 2
        if not sgl.torch.cuda.is_available():
            print("peer_sglang: error: no usable GPU (torch.cuda.is_available() is False)", file=sys.stderr)
            return 2
        env = environment(sgl)
        backends = {n: SglangBackend(n, sgl, a.models_dir) for n in names}
        equal = lambda x, y: bool(sgl.torch.equal(x, y))  # noqa: E731
    else:
        env = {"tool": "scripts/peer_sglang.py", "device": "fake"}
        backends = {n: make_backend(n) for n in names}
        equal = lambda x, y: x == y  # noqa: E731
    lines = stub_lines(finder)
    env["stubs"] = "; ".join(lines) if lines else "none"
    write_stubs(a.out_dir, finder)
    for s in lines:
        log(f"peer_sglang: stand-in module: {s}")
    try:
        writer = pf.ResultWriter(os.path.join(a.out_dir, "rows.csv"), os.path.join(a.out_dir, "rows.json"), env, command)
        mem = TableWriter(os.path.join(a.out_dir, "memory.csv"), MEMORY_COLUMNS, "--out-dir")
        phases = TableWriter(os.path.join(a.out_dir, "phases.csv"), PHASE_COLUMNS, "--out-dir")
    except pf.InputError as e:
        print(f"peer_sglang: error: {e}", file=sys.stderr)
        return 2
    bad = 0
    pass_ledgers: Dict[tuple, List[Dict[str, object]]] = {}  # (model, backend) -> the memory pass's ledger
    try:
        if not a.no_memory:
            for model, modes in memory_cases(cases).items():
                first = next(iter(modes.values()))
                for n, b in backends.items():
                    t0 = time.monotonic()
                    try:
                        led = b.memory_pass(first, phases, modes)
                    except Exception as e:  # the pass writes its own failed rows; this is the last resort
                        traceback.print_exc()
                        phases.add(dict(model=model, page=first.page_size, backend=n, phase="memory pass",
                                        status="failed", note=exc_text(e)))
                        led = []
                    for r in memory_rows(model, first.page_size, n, led):
                        mem.add(r)
                    pass_ledgers[(model, first.page_size, n)] = led
                    log(f"peer_sglang: memory {model} {n}: {len(led)} tags ({time.monotonic() - t0:.1f} s)")
            bad += sum(1 for r in phases.rows if r.get("status") == "failed")
        if not a.no_rows:
            outputs: Dict[str, Dict[str, Dict[int, object]]] = {}
            for c in cases:
                for n, b in backends.items():
                    for timing in c.timings:
                        t0 = time.monotonic()
                        row = pf.run_one(b, c, timing, repro, 0.0)
                        if row["status"] in ("failed", "oom"):
                            bad += 1
                        # the row's own construct ledger, and the memory pass's graph state and capture
                        row["ledger"] = list(row["ledger"]) + [e for e in pass_ledgers.get((c.model, c.page_size, n), [])
                                                               if e["phase"] != "construct"]
                        writer.add(row)
                        log(f"peer_sglang: {c.case_id} {n} {timing}: {row['status']} "
                            f"({time.monotonic() - t0:.1f} s) {row['note'] if row['status'] != 'ok' else ''}")
                    outs = getattr(b, "last_outputs", {}).pop(c.case_id, None)
                    if outs is not None:
                        outputs.setdefault(n, {})[c.case_id] = outs
                # bit-compare the lean rows of this case with the inheriting ones, then rewrite the files
                case_rows = [r for r in writer.rows if r["case_id"] == c.case_id]
                compare_bitwise(case_rows, outputs, equal)
                for n in list(outputs):
                    outputs[n].pop(c.case_id, None)
                rewrite(writer)  # after every case: a run stopped by its time limit keeps the comparisons made
    finally:
        writer.close()
        mem.close()
        phases.close()
    ok = sum(1 for r in writer.rows if r["status"] == "ok")
    print(f"peer_sglang: {len(writer.rows)} rows, {ok} ok, {bad} failed (rows or phases) -> {a.out_dir}",
          file=sys.stderr)
    return 1 if bad else 0


def rewrite(writer: "pf.ResultWriter") -> None:
    """The CSV again with every row as it stands now (bitwise_equal_to is filled in after the rows are written)."""
    path = writer._csv.name
    writer._csv.close()
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(pf.RESULT_COLUMNS)
        for r in writer.rows:
            w.writerow([pf._cell(r[k]) for k in pf.RESULT_COLUMNS])
    writer._csv = open(path, "a", newline="")
    writer._writer = csv.writer(writer._csv, lineterminator="\n")
    writer._write_json()


def write_stubs(out_dir: str, finder: Optional[StubFinder]) -> None:
    with open(os.path.join(out_dir, "stubs.txt"), "w") as f:
        for s in stub_lines(finder):
            f.write(s + "\n")


def environment(sgl: Sgl) -> Dict[str, str]:
    torch = sgl.torch
    env = {"tool": "scripts/peer_sglang.py", "torch_version": torch.__version__, "device": "cuda",
           "cuda_runtime": str(torch.version.cuda)}
    for mod, key in (("sglang", "sglang_version"), ("flashinfer", "flashinfer_version")):
        try:
            env[key] = str(getattr(sys.modules.get(mod) or __import__(mod), "__version__", ""))
        except Exception:
            pass
    props = torch.cuda.get_device_properties(0)
    env.update(gpu_name=props.name, compute_capability=f"{props.major}.{props.minor}",
               sm_count=str(props.multi_processor_count), memory_total_bytes=str(props.total_memory))
    return env


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

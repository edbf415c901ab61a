#!/usr/bin/env python3
"""The real thing beside the model: FlashInfer's own kernels on attnbench's cases.

attnbench models SGLang's FlashInfer and TRTLLM-MHA backends with its own kernels. This script runs the
*library* on the same cases, as SGLang calls it (docs: docs/facts-30cb848d4.md and docs/facts-0.5.23.md, section 3), and
writes rows in attnbench's result schema (CSV + JSON) under two peer backend names:

  flashinfer_lib  BatchDecodeWithPagedKVCacheWrapper (page size 1, tensor cores per SGLang's rule) for decode;
                  BatchPrefillWithRaggedKVCacheWrapper (new vs new, causal) + BatchPrefillWithPagedKVCacheWrapper
                  (new vs cached prefix) + merge_state for extend; the paged prefill wrapper (causal chain) for
                  verify. Wrappers built as FlashInferAttnBackend builds them (F1, F5-F8).
  trtllm_lib      flashinfer.decode.trtllm_batch_decode_with_kv_cache over block tables and the HND view of the
                  pool (XQA on SM90, trtllm-gen on SM100) for decode and verify (q_len_per_req = draft tokens).
                  Extend: with FlashInfer >= 0.7 on SM90 / SM120, trtllm_fmha_v2_prefill over paged KV as SGLang
                  0.5.23 calls it (fused K/V halves, [bs, 2, pages] block table); with 0.6.15 it is skipped
                  (SGLang 30cb848d4 runs trtllm_mha there as a decode backend only).

Usage (a GPU, PyTorch and flashinfer-python installed):
  attnbench run --config configs/pr-evidence.toml --filter 'llama-3.1-8b/' --list-cases --format csv > cases.csv
  python3 scripts/peer_flashinfer.py --cases cases.csv --out results/local/peers.csv
  attnbench report results/local/run.json --peers results/local/peers.json

Timing follows attnbench: one step = the metadata (index building + plan) then every layer's forward (KV
write + attention), CUDA events around each part, the L2 flushed before each step, the same warm-up / sample
policy (carried in the case list). Inputs are seeded uniform random values (q in [-4, 4), K/V in [-1, 1), as
attnbench draws them, from torch's generator: the same distribution, not the same numbers), checked against
a float64 PyTorch computation on the same inputs for the first and last layer.

Nothing here imports torch or flashinfer at module load: the parsing, sampling, statistics and row writing
are plain Python, tested without a GPU (tests/peers/test_peer_flashinfer.py) on a fake backend.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import math
import os
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

CASE_LIST_VERSION = 1
SCHEMA_VERSION = 2  # attnbench results schema (src/report/results_io.hpp)
PEER_BACKENDS = ("flashinfer_lib", "trtllm_lib")

# attnbench's results schema, version 1 (docs/csv-schema.md), in attnbench's column order, plus `repro`.
# tests/peers/test_peer_flashinfer.py checks this list against the header attnbench itself writes.
RESULT_COLUMNS = [
    "schema_version", "case_id", "backend", "device", "sglang_version", "arch", "mode", "timing", "status", "note", "model", "layers", "batch",
    "q_tokens", "kv_len_mean", "kv_len_max", "prefix_len_mean", "num_qo_heads", "num_kv_heads", "head_dim",
    "page_size", "dtype", "sliding_window", "seed", "step_median_us", "step_p10_us", "step_p90_us", "step_min_us",
    "step_max_us", "step_spread_pct", "samples", "metadata_median_us", "forward_median_us", "tflops", "tb_per_s",
    "bw_fraction", "ctor_device_bytes", "ctor_pinned_bytes", "ctor_driver_delta_bytes", "graph_state_device_bytes",
    "capture_device_bytes", "capture_pinned_bytes", "step_peak_device_bytes", "ref_max_abs_err", "ref_rel_l2_err",
    "ref_mismatch_frac", "ref_pass", "bitwise_equal_to", "repro",
]

# Per storage dtype (atol, rtol): the same numbers as attnbench's tolerance_for (src/runner/validation.cpp).
TOLERANCES = {"bf16": (4 * 0.00390625, 4 * 0.00390625), "fp16": (4 * 0.0009765625, 4 * 0.0009765625),
              "fp32": (1e-4, 1e-4)}
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
# The KV cache's storage dtypes (the case list's kv_cache_dtype): the model dtype or SGLang's fp8 formats.
KV_DTYPE_BYTES = {**DTYPE_BYTES, "fp8_e4m3": 1, "fp8_e5m2": 1}


class InputError(Exception):
    """Bad input: one line naming the option or file at fault; exit code 2."""


# ---- the case list (attnbench run --list-cases --format csv) ---------------------------------------------

@dataclass
class Case:
    case_id: str
    mode: str  # decode | extend | verify
    model: str
    layers: int
    num_qo_heads: int
    num_kv_heads: int
    num_attention_heads: int
    head_dim: int
    dtype: str
    page_size: int
    batch: int
    q_tokens: int
    prefix_lens: List[int]
    new_lens: List[int]
    draft_tokens: int
    seed: int
    sinks: bool
    layer_windows: List[int]
    sm_scale: float
    context_len: int
    max_running_requests: int
    cuda_graph_max_bs: int
    flashinfer_workspace_bytes: int
    flashinfer_use_tensor_cores: bool
    flashinfer_use_paged: bool
    trtllm_workspace_bytes: int
    timings: List[str]
    warmup: int
    min_samples: int
    max_samples: int
    target_spread_pct: float
    time_budget_s: float
    flush_l2: bool
    # --kv-cache-dtype (case lists before it lack these: the cache is in the model dtype, scales 1)
    kv_cache_dtype: str = ""
    k_scale: float = 1.0
    v_scale: float = 1.0
    # SGLang's model_runner.sliding_window_size (-1: None); case lists before the column: None here, read as the
    # windowed layers' window (every windowed model before Cohere2 gave its runner the window)
    runner_sliding_window_size: Optional[int] = None
    architecture: str = ""  # HF architectures[0] (the case list's column; empty in hand-written lists)
    # FlashInfer's extend path as attnbench derives it (the case list's column): False = paged (USE_PAGED,
    # deterministic inference or a multimodal model); None in lists before the column (flashinfer_use_paged decides)
    flashinfer_extend_ragged: Optional[bool] = None
    # config.sliding_window (-1: no window); None in lists before the column (derived from layer_windows)
    config_sliding_window: Optional[int] = None

    @property
    def runner_window(self) -> int:
        """SGLang's model_runner.sliding_window_size, -1 for None."""
        if self.runner_sliding_window_size is not None:
            return self.runner_sliding_window_size
        windowed = [w for w in self.layer_windows if w >= 0]
        return windowed[0] if windowed else -1

    @property
    def kv_dtype(self) -> str:
        return self.kv_cache_dtype or self.dtype

    @property
    def kv_fp8(self) -> bool:
        return self.kv_dtype in ("fp8_e4m3", "fp8_e5m2")

    @property
    def kv_lens(self) -> List[int]:
        return [p + n for p, n in zip(self.prefix_lens, self.new_lens)]

    @property
    def sliding_window(self) -> int:
        """The model's window for the row's `sliding_window` column (-1 = none), as attnbench reports it."""
        if self.config_sliding_window is not None:
            return self.config_sliding_window
        windowed = [w for w in self.layer_windows if w >= 0]
        if not windowed:
            return -1
        # an older case list: layer.sliding_window_size is config.sliding_window - 1, but Cohere2's
        # config.sliding_window itself (models/commandr.py L206-210; ModelConfig::sliding_window_offset)
        return windowed[0] + (0 if self.architecture == "Cohere2ForCausalLM" else 1)


def _ints(text: str, what: str) -> List[int]:
    if text == "":
        return []
    try:
        return [int(x) for x in text.split(";")]
    except ValueError:
        raise InputError(f"{what}: not a ';'-separated list of integers: '{text}'") from None


def read_case_list(path: str) -> List[Case]:
    """Reads attnbench's case list; InputError names the file, the line and the column at fault."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
            header = rows[0].keys() if rows else None
    except OSError as e:
        raise InputError(f"--cases: cannot read '{path}': {e.strerror}") from None
    except csv.Error as e:
        raise InputError(f"--cases: '{path}' is not a CSV file: {e}") from None
    if not rows:
        raise InputError(f"--cases: '{path}' holds no case (expected the output of "
                         "'attnbench run ... --list-cases --format csv')")
    optional = ("kv_cache_dtype", "k_scale", "v_scale", "runner_sliding_window_size", "architecture",
                "flashinfer_extend_ragged", "config_sliding_window")
    required = [f.name for f in Case.__dataclass_fields__.values() if f.name not in optional] + ["case_list_version"]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(f"--cases: '{path}' lacks column(s) {', '.join(missing)} "
                         "(expected the output of 'attnbench run ... --list-cases --format csv')")
    cases = []
    for line, r in enumerate(rows, start=2):
        where = f"--cases: '{path}' line {line}"
        try:
            if int(r["case_list_version"]) != CASE_LIST_VERSION:
                raise InputError(f"{where}: case_list_version {r['case_list_version']} is not {CASE_LIST_VERSION}")
            c = Case(
                case_id=r["case_id"], mode=r["mode"], model=r["model"], layers=int(r["layers"]),
                num_qo_heads=int(r["num_qo_heads"]), num_kv_heads=int(r["num_kv_heads"]),
                num_attention_heads=int(r["num_attention_heads"]), head_dim=int(r["head_dim"]), dtype=r["dtype"],
                page_size=int(r["page_size"]), batch=int(r["batch"]), q_tokens=int(r["q_tokens"]),
                prefix_lens=_ints(r["prefix_lens"], f"{where}: prefix_lens"),
                new_lens=_ints(r["new_lens"], f"{where}: new_lens"), draft_tokens=int(r["draft_tokens"]),
                seed=int(r["seed"]), sinks=r["sinks"] == "1",
                layer_windows=_ints(r["layer_windows"], f"{where}: layer_windows"), sm_scale=float(r["sm_scale"]),
                context_len=int(r["context_len"]), max_running_requests=int(r["max_running_requests"]),
                cuda_graph_max_bs=int(r["cuda_graph_max_bs"]),
                flashinfer_workspace_bytes=int(r["flashinfer_workspace_bytes"]),
                flashinfer_use_tensor_cores=r["flashinfer_use_tensor_cores"] == "1",
                flashinfer_use_paged=r["flashinfer_use_paged"] == "1",
                trtllm_workspace_bytes=int(r["trtllm_workspace_bytes"]),
                timings=[t for t in r["timings"].split(";") if t], warmup=int(r["warmup"]),
                min_samples=int(r["min_samples"]), max_samples=int(r["max_samples"]),
                target_spread_pct=float(r["target_spread_pct"]), time_budget_s=float(r["time_budget_s"]),
                flush_l2=r["flush_l2"] == "1", kv_cache_dtype=r.get("kv_cache_dtype") or "",
                k_scale=float(r.get("k_scale") or 1.0), v_scale=float(r.get("v_scale") or 1.0),
                runner_sliding_window_size=(int(r["runner_sliding_window_size"])
                                            if r.get("runner_sliding_window_size") else None),
                architecture=r.get("architecture") or "",
                flashinfer_extend_ragged=(r["flashinfer_extend_ragged"] == "1"
                                          if r.get("flashinfer_extend_ragged") else None),
                config_sliding_window=(int(r["config_sliding_window"])
                                       if r.get("config_sliding_window") else None))
        except ValueError as e:
            raise InputError(f"{where}: {e}") from None
        if c.mode not in ("decode", "extend", "verify"):
            raise InputError(f"{where}: mode '{c.mode}' is not decode, extend or verify")
        if c.dtype not in DTYPE_BYTES:
            raise InputError(f"{where}: dtype '{c.dtype}' is not bf16, fp16 or fp32")
        if c.kv_dtype not in KV_DTYPE_BYTES or (not c.kv_fp8 and c.kv_dtype != c.dtype):
            raise InputError(f"{where}: kv_cache_dtype '{c.kv_cache_dtype}' is neither the dtype nor fp8_e4m3 / fp8_e5m2")
        if not (c.k_scale > 0 and c.v_scale > 0):
            raise InputError(f"{where}: k_scale / v_scale must be positive")
        if len(c.prefix_lens) != c.batch or len(c.new_lens) != c.batch:
            raise InputError(f"{where}: prefix_lens / new_lens hold {len(c.prefix_lens)} / {len(c.new_lens)} "
                             f"values for batch {c.batch}")
        if sum(c.new_lens) != c.q_tokens:
            raise InputError(f"{where}: new_lens sum to {sum(c.new_lens)}, q_tokens is {c.q_tokens}")
        if len(c.layer_windows) != c.layers:
            raise InputError(f"{where}: layer_windows holds {len(c.layer_windows)} values for {c.layers} layers")
        if c.runner_sliding_window_size is not None and c.runner_sliding_window_size < -1:
            raise InputError(f"{where}: runner_sliding_window_size {c.runner_sliding_window_size} is below -1")
        if c.config_sliding_window is not None and c.config_sliding_window < -1:
            raise InputError(f"{where}: config_sliding_window {c.config_sliding_window} is below -1")
        if min(c.prefix_lens + [0]) < 0 or min(c.new_lens + [1]) < 1:
            raise InputError(f"{where}: negative prefix or empty request")
        if any(t not in ("eager", "graph") for t in c.timings):
            raise InputError(f"{where}: timings '{r['timings']}' holds something other than eager / graph")
        if c.warmup < 0 or c.min_samples < 1 or c.max_samples < c.min_samples or c.time_budget_s <= 0:
            raise InputError(f"{where}: invalid sampling policy")
        cases.append(c)
    return cases


# ---- statistics and the sampling policy (attnbench's core/stats.cpp and runner/sampler.cpp) --------------

def percentile_sorted(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), as attnbench computes it."""
    if not sorted_values:
        raise ValueError("percentile of no samples")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass
class Summary:
    n: int
    median: float
    p10: float
    p90: float
    min: float
    max: float
    spread_pct: float


def summarize(values: Sequence[float]) -> Summary:
    if any(not math.isfinite(v) for v in values):
        raise ValueError("a sample is not a finite number")
    s = sorted(values)
    med = percentile_sorted(s, 50)
    p10, p90 = percentile_sorted(s, 10), percentile_sorted(s, 90)
    return Summary(len(s), med, p10, p90, s[0], s[-1], 0.0 if med == 0 else (p90 - p10) / med * 100.0)


@dataclass
class Samples:
    us: List[float]
    summary: Summary
    stop_reason: str
    first_sample_outlier: bool
    warmup_runs: int


def sample(case: Case, measure_once_us: Callable[[], float], clock: Callable[[], float] = time.monotonic) -> Samples:
    """Warm up, then measure until converged (spread <= target after min_samples), the cap, or the budget."""
    first = 0.0
    for i in range(case.warmup):
        v = measure_once_us()
        if i == 0:
            first = v
    budget_floor = min(3, case.max_samples)
    start = clock()
    us: List[float] = []
    while True:
        us.append(measure_once_us())
        n = len(us)
        if n >= case.min_samples and summarize(us).spread_pct <= case.target_spread_pct:
            reason = "converged"
            break
        if n >= case.max_samples:
            reason = "max samples"
            break
        if n >= budget_floor and clock() - start >= case.time_budget_s:
            reason = "time budget"
            break
    summ = summarize(us)
    return Samples(us, summ, reason, case.warmup > 0 and first > 3 * summ.median, case.warmup)


@dataclass
class ErrorStats:
    """Element-wise comparison with the reference, as attnbench's ErrorStats (NaN / inf = mismatch)."""
    max_abs: float = 0.0
    sum_sq_err: float = 0.0
    sum_sq_ref: float = 0.0
    elements: int = 0
    mismatches: int = 0
    nans: int = 0

    def add(self, got: float, ref: float, atol: float, rtol: float) -> None:
        self.elements += 1
        if math.isnan(got) or math.isinf(got):
            self.nans += 1
            self.mismatches += 1
            return
        e = abs(got - ref)
        self.max_abs = max(self.max_abs, e)
        self.sum_sq_err += e * e
        self.sum_sq_ref += ref * ref
        if e > atol + rtol * abs(ref):
            self.mismatches += 1

    def merge(self, o: "ErrorStats") -> None:
        self.max_abs = max(self.max_abs, o.max_abs)
        self.sum_sq_err += o.sum_sq_err
        self.sum_sq_ref += o.sum_sq_ref
        self.elements += o.elements
        self.mismatches += o.mismatches
        self.nans += o.nans

    def rel_l2(self) -> float:
        return math.sqrt(self.sum_sq_err / self.sum_sq_ref) if self.sum_sq_ref > 0 else math.sqrt(self.sum_sq_err)

    def mismatch_frac(self) -> float:
        return self.mismatches / self.elements if self.elements else 0.0

    def passed(self) -> bool:
        # A pass only beside finite error figures (attnbench's readers refuse ref_pass 1 beside an empty error, and
        # a NaN / inf error is written empty): a NaN reference element compares false with every tolerance.
        return (self.elements > 0 and self.nans == 0 and self.mismatches == 0 and math.isfinite(self.max_abs)
                and math.isfinite(self.rel_l2()))


def validated_layers(num_layers: int) -> List[int]:
    """The first and the last layer, as attnbench checks them."""
    return list(range(num_layers)) if num_layers <= 2 else [0, num_layers - 1]


def step_work(c: Case) -> Dict[str, float]:
    """FLOPs and bytes of one step's forward (every layer), with attnbench's formula (runner/case_work.cpp)."""
    es = DTYPE_BYTES[c.dtype]
    kes = KV_DTYPE_BYTES[c.kv_dtype]  # the KV cache read: 1 byte per element with fp8
    flops = byts = 0.0
    for layer in range(c.layers):
        window = c.layer_windows[layer]
        kv_layer = 0.0
        for pre, n in zip(c.prefix_lens, c.new_lens):
            if window >= 0:
                pairs = sum(min(pre + j + 1, window + 1) for j in range(n))
                keys = min(pre + n, window + n)
            else:
                pairs = n * pre + n * (n + 1) / 2
                keys = pre + n
            flops += 4.0 * pairs * c.num_qo_heads * c.head_dim
            kv_layer += 2.0 * keys * c.num_kv_heads * c.head_dim * kes
        byts += kv_layer
    byts += c.layers * c.q_tokens * (2.0 * c.num_qo_heads + 2.0 * c.num_kv_heads) * c.head_dim * es
    return {"flops": flops, "bytes": byts}


# ---- rows ----------------------------------------------------------------------------------------------

def base_row(c: Case, backend: str, device: str, timing: str, repro: str) -> Dict[str, object]:
    row: Dict[str, object] = {k: None for k in RESULT_COLUMNS}
    kv = c.kv_lens
    # sglang_version / arch stay empty: library rows run FlashInfer itself, not a modelled SGLang release.
    row.update(schema_version=SCHEMA_VERSION, case_id=c.case_id, backend=backend, device=device,
               sglang_version="", arch="", mode=c.mode,
               timing=timing, status="ok", note="", model=c.model, layers=c.layers, batch=c.batch,
               q_tokens=c.q_tokens, kv_len_mean=sum(kv) / len(kv), kv_len_max=max(kv),
               prefix_len_mean=sum(c.prefix_lens) / len(c.prefix_lens), num_qo_heads=c.num_qo_heads,
               num_kv_heads=c.num_kv_heads, head_dim=c.head_dim, page_size=c.page_size, dtype=c.dtype,
               sliding_window=c.sliding_window, seed=c.seed, samples=0, bitwise_equal_to="",
               repro=f"{repro} --backend {backend} --case-id '{c.case_id}'")
    row["samples_us"] = []
    row["ledger"] = []
    return row


def append_note(row: Dict[str, object], text: str) -> None:
    row["note"] = f"{row['note']}; {text}" if row["note"] else text


def fill_timing(row: Dict[str, object], c: Case, smp: Samples, meta: List[float], fwd: List[float],
                read_bandwidth: float) -> None:
    s = smp.summary
    row.update(step_median_us=s.median, step_p10_us=s.p10, step_p90_us=s.p90, step_min_us=s.min, step_max_us=s.max,
               step_spread_pct=s.spread_pct, samples=s.n)
    row["samples_us"] = list(smp.us)
    ms, fs = summarize(meta), summarize(fwd)
    row["metadata_median_us"] = ms.median
    row["forward_median_us"] = fs.median / c.layers
    w = step_work(c)
    if fs.median > 0:
        row["tflops"] = w["flops"] / (fs.median * 1e-6) / 1e12
        row["tb_per_s"] = w["bytes"] / (fs.median * 1e-6) / 1e12
        if read_bandwidth > 0:  # attnbench's denominator: a read-only stream (--read-bandwidth or the probe)
            row["bw_fraction"] = w["bytes"] / (fs.median * 1e-6) / read_bandwidth
    append_note(row, f"stop: {smp.stop_reason}")
    if smp.first_sample_outlier:
        append_note(row, "first run was an outlier (cold start)")


def _cell(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ""
    return str(v)


class ResultWriter:
    """The CSV (one row flushed as soon as it exists) and the JSON report beside it, rewritten after each row,
    so an interrupted run keeps every finished row in both files."""

    def __init__(self, csv_path: str, json_path: str, environment: Dict[str, str], command: str):
        for p, opt in ((csv_path, "--out"), (json_path, "--json")):
            d = os.path.dirname(os.path.abspath(p))
            try:
                os.makedirs(d, exist_ok=True)
            except OSError as e:
                raise InputError(f"{opt}: cannot create '{d}': {e.strerror}") from None
        try:
            self._csv = open(csv_path, "w", newline="")
        except OSError as e:
            raise InputError(f"--out: cannot write '{csv_path}': {e.strerror}") from None
        self._writer = csv.writer(self._csv, lineterminator="\n")
        self._writer.writerow(RESULT_COLUMNS)
        self._csv.flush()
        self.json_path = json_path
        self.environment = environment
        self.command = command
        self.rows: List[Dict[str, object]] = []
        self._write_json()

    def add(self, row: Dict[str, object]) -> None:
        self._writer.writerow([_cell(row[k]) for k in RESULT_COLUMNS])
        self._csv.flush()
        self.rows.append(row)
        self._write_json()

    def _write_json(self) -> None:
        def clean(v: object) -> object:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, bool):
                return 1 if v else 0
            return v
        doc = {"schema": "attnbench.results", "schema_version": SCHEMA_VERSION, "environment": self.environment,
               "command": self.command,
               "rows": [{k: clean(v) if k in RESULT_COLUMNS else v for k, v in r.items()} for r in self.rows]}
        tmp = self.json_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, self.json_path)

    def close(self) -> None:
        self._csv.close()


# ---- the driver: one backend, one case, one timing -----------------------------------------------------

class Unsupported(Exception):
    """The backend cannot run this case (a skipped row saying why)."""


class Prepared:
    """A case made ready by a backend for one timing mode. The driver calls metadata() then forward() per
    step; check(layer) compares that layer's output of the last step with the reference."""

    construct_ledger: Sequence[Dict[str, object]] = ()
    ctor_device_bytes: Optional[int] = None
    ctor_pinned_bytes: Optional[int] = None
    ctor_driver_delta_bytes: Optional[int] = None
    graph_state_device_bytes: Optional[int] = None
    capture_device_bytes: Optional[int] = None
    capture_pinned_bytes: Optional[int] = None
    notes: Sequence[str] = ()
    check_notes: Sequence[str] = ()  # what check() found beside its verdict (appended to the row after the checks)

    def poison(self) -> None: ...
    def metadata(self) -> None: ...
    def forward(self) -> None: ...
    def check(self, layer: int) -> ErrorStats: ...
    def step_peak_device_bytes(self) -> Optional[int]: return None
    def replay_vs_eager(self) -> Optional[str]: return None  # graph rows: a note comparing the two outputs
    def release(self) -> None: ...


class Backend:
    name = ""
    device = ""

    def supports(self, c: Case, timing: str) -> Optional[str]:
        """None when the case runs, else why not."""
        return None

    def prepare(self, c: Case, timing: str) -> Prepared:
        raise NotImplementedError

    def timer(self) -> "Timer":
        raise NotImplementedError

    def flush_l2(self) -> None: ...

    def is_oom(self, e: BaseException) -> bool:
        return "OutOfMemory" in type(e).__name__ or "out of memory" in str(e)


class Timer:
    """Measures metadata and forward of one step: mark() at the three points, then elapsed() -> (µs, µs)."""

    def mark(self, i: int) -> None: ...
    def elapsed(self) -> "tuple[float, float]": ...


def run_one(backend: Backend, c: Case, timing: str, repro: str, read_bandwidth: float,
            clock: Callable[[], float] = time.monotonic) -> Dict[str, object]:
    row = base_row(c, backend.name, backend.device, timing, repro)
    why = backend.supports(c, timing)
    if why:
        row["status"] = "skipped"
        row["note"] = why
        return row
    prep: Optional[Prepared] = None
    try:
        prep = backend.prepare(c, timing)
        row["ledger"] = list(prep.construct_ledger)
        for k in ("ctor_device_bytes", "ctor_pinned_bytes", "ctor_driver_delta_bytes", "graph_state_device_bytes",
                  "capture_device_bytes", "capture_pinned_bytes"):
            row[k] = getattr(prep, k)
        for n in prep.notes:
            append_note(row, n)
        # The validation step: poisoned outputs, one whole step, then the reference on the checked layers.
        prep.poison()
        prep.metadata()
        prep.forward()
        stats = ErrorStats()
        for layer in validated_layers(c.layers):
            stats.merge(prep.check(layer))
        row.update(ref_max_abs_err=stats.max_abs, ref_rel_l2_err=stats.rel_l2(),
                   ref_mismatch_frac=stats.mismatch_frac(), ref_pass=stats.passed())
        for n in prep.check_notes:
            append_note(row, n)
        append_note(row, "ref: float64 PyTorch on the same inputs, layers " +
                    " ".join(str(x) for x in validated_layers(c.layers)))
        if timing == "graph":  # as attnbench's graph rows: the replay against an eager run of the same calls
            note = prep.replay_vs_eager()
            if note:
                append_note(row, note)
        if not stats.passed():
            row["status"] = "failed"
            append_note(row, "reference check FAILED")
            return row
        t = backend.timer()
        meta: List[float] = []
        fwd: List[float] = []

        def once() -> float:
            if c.flush_l2:
                backend.flush_l2()
            t.mark(0)
            prep.metadata()
            t.mark(1)
            prep.forward()
            t.mark(2)
            a, b = t.elapsed()
            meta.append(a)
            fwd.append(b)
            return a + b

        smp = sample(c, once, clock)
        del meta[:smp.warmup_runs]
        del fwd[:smp.warmup_runs]
        fill_timing(row, c, smp, meta, fwd, read_bandwidth)
        row["step_peak_device_bytes"] = prep.step_peak_device_bytes()
    except Unsupported as e:
        row["status"] = "skipped"
        row["note"] = str(e)
    except Exception as e:  # a failing case becomes a row; the sweep goes on
        row["status"] = "oom" if backend.is_oom(e) else "failed"
        append_note(row, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    finally:
        if prep is not None:
            prep.release()
    return row


def run_all(cases: List[Case], backends: List[Backend], writer: ResultWriter, repro: str, read_bandwidth: float,
            progress: bool = True, clock: Callable[[], float] = time.monotonic) -> int:
    """Runs every (case, backend, timing); returns the number of failed / oom rows."""
    bad = 0
    total = sum(len(c.timings) for c in cases) * len(backends)
    done = 0
    for c in cases:
        for b in backends:
            for timing in c.timings:
                started = time.monotonic()
                row = run_one(b, c, timing, repro, read_bandwidth, clock)
                writer.add(row)
                done += 1
                if row["status"] in ("failed", "oom"):
                    bad += 1
                if progress:
                    med = row["step_median_us"]
                    print(f"[{done}/{total}] {c.case_id} {b.name} {timing}: {row['status']}"
                          + (f" {med:.1f} us" if isinstance(med, float) else "")
                          + f" ({time.monotonic() - started:.1f} s)"
                          + (f" {row['note']}" if row["status"] != "ok" else ""), file=sys.stderr, flush=True)
    return bad


# ---- the fake backend (tests: no GPU, no torch) --------------------------------------------------------

class FakeBackend(Backend):
    """Deterministic stand-in: timings from a counter, outputs equal to the reference plus `error`."""

    def __init__(self, name: str = "flashinfer_lib", error: float = 0.0, unsupported_modes: Sequence[str] = (),
                 raise_in: Optional[str] = None):
        self.name = name
        self.device = "fake"
        self.error = error
        self.unsupported_modes = tuple(unsupported_modes)
        self.raise_in = raise_in
        self.steps = 0
        self.flushes = 0

    def supports(self, c: Case, timing: str) -> Optional[str]:
        return f"{self.name} does not run {c.mode}" if c.mode in self.unsupported_modes else None

    def flush_l2(self) -> None:
        self.flushes += 1

    def prepare(self, c: Case, timing: str) -> Prepared:
        backend = self
        if self.raise_in == "prepare":
            raise RuntimeError("CUDA out of memory (fake)")

        class P(Prepared):
            construct_ledger = [{"phase": "construct", "tag": "flashinfer.workspace_buffer", "kind": "device",
                                 "bytes": c.flashinfer_workspace_bytes, "shared": True, "count": 1}]
            ctor_device_bytes = c.flashinfer_workspace_bytes
            ctor_pinned_bytes = 0
            notes = ["fake backend"]

            def metadata(self) -> None:
                backend.steps += 1

            def forward(self) -> None:
                if backend.raise_in == "forward":
                    raise RuntimeError("kernel launch failed (fake)")

            def check(self, layer: int) -> ErrorStats:
                atol, rtol = TOLERANCES[c.dtype]
                s = ErrorStats()
                for i in range(c.q_tokens * c.num_qo_heads):
                    ref = math.sin(i + layer)
                    s.add(ref + backend.error, ref, atol, rtol)
                return s

        return P()

    def timer(self) -> Timer:
        backend = self

        class T(Timer):
            def mark(self, i: int) -> None: ...

            def elapsed(self) -> "tuple[float, float]":
                # Metadata 10 µs, forward 100 µs + 1 µs per 10 steps: a deterministic, slightly noisy series.
                return 10.0, 100.0 + (backend.steps % 10) * 0.1

        return T()


# ---- the real backends (torch + flashinfer, imported on use) --------------------------------------------

def _torch():
    import torch  # noqa: PLC0415 (imported on use: CI tests this file without torch)
    return torch


TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8_e4m3": "float8_e4m3fn",
                "fp8_e5m2": "float8_e5m2"}


class CudaTimer(Timer):
    def __init__(self):
        torch = _torch()
        self.ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]

    def mark(self, i: int) -> None:
        self.ev[i].record()

    def elapsed(self) -> "tuple[float, float]":
        self.ev[2].synchronize()
        return self.ev[0].elapsed_time(self.ev[1]) * 1e3, self.ev[1].elapsed_time(self.ev[2]) * 1e3


def tensor_ledger(obj: object, prefix: str, skip_ptrs: Sequence[int]) -> List[Dict[str, object]]:
    """The tensors a library object holds, as ledger entries tagged like attnbench's (`_int_workspace_buffer`
    -> `<prefix>.int_workspace`); tensors whose storage is in `skip_ptrs` (the caller's buffers) are left out."""
    torch = _torch()
    names = {"_int_workspace_buffer": "int_workspace", "_pin_memory_int_workspace_buffer": "pin_memory_int_workspace",
             "_kv_lens_buffer": "kv_lens_buffer", "_qo_indptr_buf": "qo_indptr_buf"}
    out = []
    for attr, v in sorted(vars(obj).items()):
        if not torch.is_tensor(v) or v.data_ptr() in skip_ptrs or v.numel() == 0:
            continue
        kind = "device" if v.is_cuda else ("pinned" if v.is_pinned() else "host")
        if kind == "host":
            continue
        out.append({"phase": "construct", "tag": f"{prefix}.{names.get(attr, attr.lstrip('_'))}", "kind": kind,
                    "bytes": v.numel() * v.element_size(), "shared": False, "count": 1})
    return out


class Workload:
    """One case's inputs on the GPU: a paged KV pool per layer ([slots, Hkv, D], pages shuffled, as SGLang's
    token-granular pool with page-aligned allocation), req_to_token, out_cache_loc, q / k / v of the new
    tokens, and the float64 reference of the checked layers."""

    def __init__(self, c: Case, device: str = "cuda"):
        torch = _torch()
        self.c = c
        dev = torch.device(device)
        self.dtype = getattr(torch, TORCH_DTYPES[c.dtype])
        self.kv_dtype = getattr(torch, TORCH_DTYPES[c.kv_dtype])  # the pool's (fp8 with --kv-cache-dtype fp8_*)
        P = c.page_size
        g = torch.Generator(device="cpu").manual_seed(c.seed)
        pages_per_req = [-(-kv // P) for kv in c.kv_lens]
        total_pages = sum(pages_per_req)
        perm = torch.randperm(total_pages, generator=g) + 1  # page 0 is never handed out, as slot 0 in SGLang
        self.num_slots = (total_pages + 1) * P
        self.max_kv = max(c.kv_lens)
        self.max_pages = -(-self.max_kv // P)
        r2t = torch.zeros(c.batch, self.max_pages * P, dtype=torch.int32)
        at = 0
        for i, np_ in enumerate(pages_per_req):
            pages = perm[at:at + np_]
            at += np_
            r2t[i, :np_ * P] = (pages[:, None] * P + torch.arange(P)[None, :]).reshape(-1).to(torch.int32)
        self.req_to_token = r2t.to(dev)
        out_loc, gather = [], []
        stride = r2t.shape[1]
        for i, (pre, n) in enumerate(zip(c.prefix_lens, c.new_lens)):
            out_loc.append(r2t[i, pre:pre + n])
            gather.append(i * stride + torch.arange(pre + n))
        self.out_cache_loc = torch.cat(out_loc).to(dev, torch.int64)
        # The flat positions of every request's tokens in req_to_token: kv_indices = take(req_to_token, this).
        self.gather_all = torch.cat(gather).to(dev)
        self.gather_prefix = torch.cat([i * stride + torch.arange(pre) for i, pre in enumerate(c.prefix_lens)]).to(dev)
        self.seq_lens = torch.tensor(c.kv_lens, dtype=torch.int32, device=dev)
        self.prefix_lens = torch.tensor(c.prefix_lens, dtype=torch.int32, device=dev)
        self.new_lens = torch.tensor(c.new_lens, dtype=torch.int32, device=dev)
        gd = torch.Generator(device=dev).manual_seed(c.seed)

        def uniform(shape, lo, hi):
            return (torch.rand(shape, generator=gd, device=dev, dtype=torch.float32) * (hi - lo) + lo).to(self.dtype)

        T, Hq, Hkv, D = c.q_tokens, c.num_qo_heads, c.num_kv_heads, c.head_dim
        self.q = uniform((T, Hq, D), -4.0, 4.0)
        self.k = uniform((T, Hkv, D), -1.0, 1.0)
        self.v = uniform((T, Hkv, D), -1.0, 1.0)
        self.k_pool = [uniform((self.num_slots, Hkv, D), -1.0, 1.0).to(self.kv_dtype) for _ in range(c.layers)]
        self.v_pool = [uniform((self.num_slots, Hkv, D), -1.0, 1.0).to(self.kv_dtype) for _ in range(c.layers)]
        self.r2t_host = r2t
        # With an fp8 cache the new tokens reach attention through the fp8 pool (decode / verify write first),
        # except in FlashInfer's ragged extend (new vs new from k / v, the pool written after): the only extend
        # path the peer runs.
        self.quantize_new = c.kv_fp8 and c.mode != "extend"
        self.refs = {layer: self.reference(layer) for layer in validated_layers(c.layers)}
        self.refs_other: Dict[Tuple[int, str], object] = {}  # (layer, window model) -> the other models' references

    # Which keys a layer's window hides in a reference (Workload.reference / check):
    #   "windowed": every key outside the window (the model's attention);
    #   "unwindowed": none (a backend that does not apply the model's windows);
    #   "prefix": only prefix keys (the cached tokens), the new tokens seeing each other causally: what SGLang's
    #   FlashInfer computes if its ragged half ignores the window (docs/facts-0.5.23.md section 13).
    WINDOW_MODELS = ("windowed", "unwindowed", "prefix")

    def reference(self, layer: int, model: str = "windowed"):
        """float64 attention per request on K / V gathered by logical position (prefix from the pool, new
        tokens from k / v), causal with the prefix offset, the layer's window as `model` (one of WINDOW_MODELS)
        says: no backend metadata involved."""
        torch = _torch()
        c = self.c
        Hq, Hkv, D = c.num_qo_heads, c.num_kv_heads, c.head_dim
        group = Hq // Hkv
        if model not in self.WINDOW_MODELS:
            raise ValueError(f"reference: unknown window model {model!r}")
        window = c.layer_windows[layer] if model != "unwindowed" else -1
        outs = []
        q_at = 0
        for i, (pre, n) in enumerate(zip(c.prefix_lens, c.new_lens)):
            slots = self.r2t_host[i, :pre].to(self.q.device, torch.int64)
            ks, vs = (c.k_scale, c.v_scale) if c.kv_fp8 else (1.0, 1.0)
            kn, vn = self.k[q_at:q_at + n], self.v[q_at:q_at + n]
            if self.quantize_new:
                kn, vn = self.quantize(kn, c.k_scale), self.quantize(vn, c.v_scale)
            # stored * scale: the values the kernels read (fp8 -> float64 is exact)
            k = torch.cat([self.k_pool[layer][slots].double() * ks, kn.double() * (ks if self.quantize_new else 1.0)])
            v = torch.cat([self.v_pool[layer][slots].double() * vs, vn.double() * (vs if self.quantize_new else 1.0)])
            q = self.q[q_at:q_at + n].double()  # [n, Hq, D]
            qpos = pre + torch.arange(n, device=q.device)
            kpos = torch.arange(pre + n, device=q.device)
            visible = kpos[None, :] <= qpos[:, None]
            if window >= 0:
                in_window = kpos[None, :] >= qpos[:, None] - window
                if model == "prefix":
                    in_window |= kpos[None, :] >= pre
                visible &= in_window
            o = torch.empty(n, Hq, D, dtype=torch.float64, device=q.device)
            for h in range(Hkv):
                qh = q[:, h * group:(h + 1) * group, :].transpose(0, 1)  # [group, n, D]
                for r0 in range(0, n, 1024):
                    s = qh[:, r0:r0 + 1024] @ k[:, h, :].T * c.sm_scale  # [group, rows, keys]
                    s = s.masked_fill(~visible[r0:r0 + 1024][None], float("-inf"))
                    p = torch.softmax(s, dim=-1)
                    o[r0:r0 + 1024, h * group:(h + 1) * group, :] = (p @ v[:, h, :]).transpose(0, 1)
            outs.append(o)
            q_at += n
        return torch.cat(outs)

    def check(self, layer: int, got, model: str = "windowed") -> ErrorStats:
        """got against the layer's reference under window model `model` (one of WINDOW_MODELS; the layer's own,
        "windowed", is computed up front, the others once, on first use)."""
        torch = _torch()
        if model == "windowed" or self.c.layer_windows[layer] < 0:
            ref = self.refs[layer]
        else:
            key = (layer, model)
            if key not in self.refs_other:
                self.refs_other[key] = self.reference(layer, model=model)
            ref = self.refs_other[key]
        atol, rtol = TOLERANCES[self.c.dtype]
        g = got.double().reshape(ref.shape)
        bad_val = ~torch.isfinite(g)
        e = (g - ref).abs()
        e_fin = torch.where(bad_val, torch.zeros_like(e), e)
        s = ErrorStats()
        s.elements = ref.numel()
        s.nans = int(bad_val.sum())
        s.max_abs = float(e_fin.max()) if s.elements else 0.0
        s.sum_sq_err = float((e_fin ** 2).sum())
        s.sum_sq_ref = float((torch.where(bad_val, torch.zeros_like(ref), ref) ** 2).sum())
        s.mismatches = int((bad_val | (e_fin > atol + rtol * ref.abs())).sum())
        return s

    def quantize(self, x, scale: float):
        """SGLang's fp8 KV write: (x / scale).to(fp8) (memory_pool.py set_kv_buffer; scale 1.0 by default)."""
        return (x.float() / scale).to(self.kv_dtype)

    def write_kv(self, layer: int) -> None:
        # set_kv_buffer: cache_k[loc] = k, cache_v[loc] = v (memory_pool.py); fp8: quantized with the scales
        if self.c.kv_fp8:
            self.k_pool[layer][self.out_cache_loc] = self.quantize(self.k, self.c.k_scale)
            self.v_pool[layer][self.out_cache_loc] = self.quantize(self.v, self.c.v_scale)
        else:
            self.k_pool[layer][self.out_cache_loc] = self.k
            self.v_pool[layer][self.out_cache_loc] = self.v


class TorchBackend(Backend):
    """What both library backends share: flashinfer, the device, L2 flush, memory probes, the case's inputs."""

    # One case's inputs at a time, shared by every backend and timing of that case: the pools are filled and
    # the float64 reference computed once per case, not once per row (the KV writes are idempotent).
    _workload: "Optional[Workload]" = None

    def __init__(self):
        torch = _torch()
        import flashinfer  # noqa: PLC0415
        self.fi = flashinfer
        self.version = flashinfer.__version__
        self.torch = torch
        props = torch.cuda.get_device_properties(0)
        self.device = props.name
        self.props = props
        self._l2 = torch.empty(2 * max(int(getattr(props, "L2_cache_size", 0)), 1 << 20), dtype=torch.uint8,
                               device="cuda")
        self._l2_value = 0

    def flush_l2(self) -> None:
        self._l2_value = (self._l2_value + 1) & 0xFF
        self._l2.fill_(self._l2_value)

    def timer(self) -> Timer:
        return CudaTimer()

    def allocated(self) -> int:
        return self.torch.cuda.memory_allocated()

    def driver_used(self) -> int:
        free, total = self.torch.cuda.mem_get_info()
        return total - free

    def workload(self, c: Case) -> "Workload":
        cached = TorchBackend._workload
        if cached is not None and cached.c is c:
            return cached
        TorchBackend._workload = cached = None  # the previous case's pools go before this case's are made
        gc.collect()
        self.torch.cuda.empty_cache()
        TorchBackend._workload = Workload(c)
        return TorchBackend._workload

    @staticmethod
    def unmodelled(c: Case) -> Optional[str]:
        """What neither library backend of this script reproduces from SGLang yet."""
        if any(w >= 0 for w in c.layer_windows):
            return "sliding-window layers: the peer script does not model SGLang's SWA index trimming yet"
        if c.sinks:
            return "attention sinks: not run by the peer script"
        return None

    def capture(self, p: "Prepared", metadata: Callable[[], None], layers: Callable[[], None]) -> None:
        """Plans, warms `layers` up on a side stream (torch's capture recipe), captures it in a CUDA graph at
        the case's batch (no padding) and makes the replay p.forward; the capture's bytes go to the row."""
        torch = self.torch
        metadata()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            layers()
        torch.cuda.current_stream().wait_stream(s)
        before = self.allocated()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            layers()
        p.capture_device_bytes = self.allocated() - before
        p.graph = g
        p.forward = g.replay
        p.notes.append("graph captured at the case's batch (no padding)")


class _PreparedTorch(Prepared):
    def __init__(self, backend: TorchBackend, wl: Workload):
        self.b = backend
        self.wl = wl
        self.outs: List[object] = [None] * wl.c.layers
        self.notes = []
        self.construct_ledger = []
        self._base_alloc = backend.allocated()
        backend.torch.cuda.reset_peak_memory_stats()

    def check(self, layer: int) -> ErrorStats:
        return self.wl.check(layer, self.outs[layer])

    def step_peak_device_bytes(self) -> Optional[int]:
        return self.b.torch.cuda.max_memory_allocated() - self._base_alloc

    def replay_vs_eager(self) -> Optional[str]:
        """After a replay: the outputs kept, the same calls run eagerly (p.layers), compared element by element."""
        layers = getattr(self, "layers", None)
        if layers is None:
            return None
        torch = self.b.torch
        replayed = [o.clone() for o in self.outs]
        self.poison()
        self.metadata()
        layers()
        torch.cuda.synchronize()
        diff = [(r.float() - o.float()).abs() for r, o in zip(replayed, self.outs)]
        n = sum(int((r != o).sum()) for r, o in zip(replayed, self.outs))
        if n == 0:
            return "replay bit-identical to eager"
        worst = max(float(d.nan_to_num(float("inf")).max()) for d in diff)
        return f"replay differs from eager in {n} elements (max abs {worst:.3g})"

    def release(self) -> None:
        # The closures installed as metadata / forward hold this object and the workload (a reference cycle):
        # drop everything, collect, and hand the cached blocks back before the next case allocates its pool.
        b = self.b
        self.__dict__.clear()
        gc.collect()
        b.torch.cuda.empty_cache()


class FlashInferLib(TorchBackend):
    name = "flashinfer_lib"

    def supports(self, c: Case, timing: str) -> Optional[str]:
        if why := self.unmodelled(c):
            return why
        if c.flashinfer_use_paged:
            return "SGLANG_FLASHINFER_USE_PAGED: the peer script runs the ragged extend path only"
        if c.mode == "extend" and c.flashinfer_extend_ragged is False:
            return ("FlashInfer's extend runs its paged path here (deterministic inference or a multimodal model): "
                    "the peer script runs the ragged extend path only")
        if timing == "graph" and c.mode == "extend":
            return "extend is not captured in CUDA graphs"
        return None

    def construct(self, c: Case):
        """F1 and F5-F8 of FlashInferAttnBackend.__init__, measured: torch's allocated bytes around each
        wrapper, the driver's used memory around the whole, the wrapper's own tensors as ledger entries."""
        torch, fi = self.torch, self.fi
        torch.cuda.synchronize()
        drv0, a0 = self.driver_used(), self.allocated()
        ws = torch.empty(c.flashinfer_workspace_bytes, dtype=torch.uint8, device="cuda")  # F1 (L423-431)
        ledger = [{"phase": "construct", "tag": "flashinfer.workspace_buffer", "kind": "device",
                   "bytes": ws.numel(), "shared": True, "count": 1}]
        skip = [ws.data_ptr()]
        fmha_backend = "auto"  # F5: "cutlass" only on SM100
        wrappers = {}
        notes = []

        def build(tag: str, make):
            before = self.allocated()
            w = make()
            entries = tensor_ledger(w, tag, skip)
            measured = self.allocated() - before
            listed = sum(e["bytes"] for e in entries if e["kind"] == "device")
            if measured != listed:
                notes.append(f"{tag}: torch counted {measured} B of device memory, its tensors hold {listed} B")
            ledger.extend(entries)
            wrappers[tag] = w
            return w

        n = 1  # two wrapper sets only for sliding-window models (not run here)
        build("flashinfer.prefill_wrapper_ragged",
              lambda: fi.BatchPrefillWithRaggedKVCacheWrapper(ws, "NHD", backend=fmha_backend))
        for i in range(n):
            build(f"flashinfer.prefill_wrappers_paged[{i}]",
                  lambda: fi.BatchPrefillWithPagedKVCacheWrapper(ws, "NHD", backend="fa2"))
            build(f"flashinfer.prefill_wrappers_verify[{i}]",
                  lambda: fi.BatchPrefillWithPagedKVCacheWrapper(ws, "NHD", backend="fa2"))
            build(f"flashinfer.decode_wrappers[{i}]",
                  lambda: fi.BatchDecodeWithPagedKVCacheWrapper(
                      ws, "NHD", backend="fa2", use_tensor_cores=c.flashinfer_use_tensor_cores))
        torch.cuda.synchronize()
        dev_bytes = self.allocated() - a0
        drv = self.driver_used() - drv0
        pinned = sum(e["bytes"] for e in ledger if e["kind"] == "pinned")
        return ws, wrappers, ledger, dev_bytes, pinned, drv, notes

    def prepare(self, c: Case, timing: str) -> Prepared:
        torch, fi = self.torch, self.fi
        wl = self.workload(c)
        p = _PreparedTorch(self, wl)
        ws, wrappers, ledger, dev_bytes, pinned, drv, notes = self.construct(c)
        p.construct_ledger, p.ctor_device_bytes, p.ctor_pinned_bytes, p.ctor_driver_delta_bytes = \
            ledger, dev_bytes, pinned, drv
        p.notes = notes + [f"flashinfer {self.version}"]
        p.ws, p.wrappers = ws, wrappers  # kept alive with the case
        bs, Hq, Hkv, D, dt = c.batch, c.num_qo_heads, c.num_kv_heads, c.head_dim, wl.dtype
        kvt = wl.kv_dtype  # plan(data_type = the KV cache dtype), as SGLang plans (flashinfer_backend.py L1476-1489)
        # forward(k_scale=layer.k_scale_float, v_scale=layer.v_scale_float) (sglang-backends.md §3.1)
        scales = {"k_scale": c.k_scale, "v_scale": c.v_scale} if c.kv_fp8 else {}
        dev = "cuda"
        # SGLang's persistent index buffers (F2-F4): kv_indptr, kv_last_page_len (ones), qo_indptr.
        R = c.max_running_requests
        kv_indptr = torch.zeros(R + 1, dtype=torch.int32, device=dev)
        qo_indptr = torch.zeros(R + 1, dtype=torch.int32, device=dev)
        last_page_len = torch.ones(R, dtype=torch.int32, device=dev)
        outs_buf = [torch.empty(c.q_tokens, Hq, D, dtype=dt, device=dev) for _ in range(c.layers)]

        def poison():
            for o in outs_buf:
                o.fill_(float("nan"))
        p.poison = poison

        if c.mode in ("decode", "verify"):
            causal_verify = c.mode == "verify"
            graph = timing == "graph"
            if graph:
                before = self.allocated()
                # init_cuda_graph_state: cuda_graph_kv_indices [max_num_tokens... ] sized to this case
                indices_buf = torch.empty(int(sum(c.kv_lens)), dtype=torch.int32, device=dev)
                p.graph_state_device_bytes = self.allocated() - before
                before = self.allocated()
                if c.mode == "decode":
                    w = fi.BatchDecodeWithPagedKVCacheWrapper(
                        ws, "NHD", use_cuda_graph=True, use_tensor_cores=c.flashinfer_use_tensor_cores,
                        paged_kv_indptr_buffer=kv_indptr[:bs + 1], paged_kv_indices_buffer=indices_buf,
                        paged_kv_last_page_len_buffer=last_page_len[:bs], backend="fa2")
                else:
                    w = fi.BatchPrefillWithPagedKVCacheWrapper(
                        ws, "NHD", use_cuda_graph=True, qo_indptr_buf=qo_indptr[:bs + 1],
                        paged_kv_indptr_buf=kv_indptr[:bs + 1], paged_kv_indices_buf=indices_buf,
                        paged_kv_last_page_len_buf=last_page_len[:bs], backend="fa2")
                wrapper_tag = "flashinfer.cuda_graph_decode_wrappers[0]" if c.mode == "decode" \
                    else "flashinfer.cuda_graph_verify_wrappers[0]"
                cap_entries = tensor_ledger(w, wrapper_tag, [ws.data_ptr(), kv_indptr.data_ptr(),
                                                             indices_buf.data_ptr(), last_page_len.data_ptr(),
                                                             qo_indptr.data_ptr()])
                for e in cap_entries:
                    e["phase"] = "capture"
                p.construct_ledger = p.construct_ledger + cap_entries
                p.capture_pinned_bytes = sum(e["bytes"] for e in cap_entries if e["kind"] == "pinned")
            else:
                w = wrappers["flashinfer.decode_wrappers[0]" if c.mode == "decode"
                             else "flashinfer.prefill_wrappers_verify[0]"]

            def metadata():
                # kv_indptr[1:bs+1] = cumsum(seq_lens); kv_indices = req_to_token gathered (SGLang's Triton
                # create_flashinfer_kv_indices_triton: one kernel); then plan() (D2H of indptr: a sync).
                kv_indptr[1:bs + 1] = torch.cumsum(wl.seq_lens, 0, dtype=torch.int32)
                kv_indices = torch.take(wl.req_to_token, wl.gather_all)
                if c.mode == "decode":
                    w.plan(kv_indptr[:bs + 1], kv_indices, last_page_len[:bs], Hq, Hkv, D, 1,
                           q_data_type=dt, kv_data_type=kvt, sm_scale=c.sm_scale, non_blocking=True)
                else:
                    qo_indptr[1:bs + 1] = torch.cumsum(wl.new_lens, 0, dtype=torch.int32)
                    w.plan(qo_indptr[:bs + 1], kv_indptr[:bs + 1], kv_indices, last_page_len[:bs], Hq, Hkv, D, 1,
                           causal=causal_verify, sm_scale=c.sm_scale, q_data_type=dt, kv_data_type=kvt,
                           non_blocking=True)

            def layers():
                for layer in range(c.layers):
                    wl.write_kv(layer)  # SGLang writes the KV before decode / verify attention
                    w.run(wl.q, (wl.k_pool[layer], wl.v_pool[layer]), out=outs_buf[layer], **scales)
                    p.outs[layer] = outs_buf[layer]

            p.metadata = metadata
            p.layers = layers  # the eager forward, also in graph mode (replay_vs_eager)
            if graph:
                self.capture(p, metadata, layers)
            else:
                p.forward = layers
            return p

        # extend: ragged (new vs new, causal) + paged (new vs cached prefix) + merge_state; KV written after
        ragged = wrappers["flashinfer.prefill_wrapper_ragged"]
        paged = wrappers["flashinfer.prefill_wrappers_paged[0]"]
        has_prefix = any(x > 0 for x in c.prefix_lens)

        def metadata_extend():
            qo_indptr[1:bs + 1] = torch.cumsum(wl.new_lens, 0, dtype=torch.int32)
            ragged.plan(qo_indptr[:bs + 1], qo_indptr[:bs + 1], Hq, Hkv, D, causal=True, sm_scale=c.sm_scale,
                        q_data_type=dt, kv_data_type=dt)
            if has_prefix:
                kv_indptr[1:bs + 1] = torch.cumsum(wl.prefix_lens, 0, dtype=torch.int32)
                kv_indices = torch.take(wl.req_to_token, wl.gather_prefix)
                paged.plan(qo_indptr[:bs + 1], kv_indptr[:bs + 1], kv_indices, last_page_len[:bs], Hq, Hkv, D, 1,
                           causal=False, sm_scale=c.sm_scale, q_data_type=dt, kv_data_type=kvt, non_blocking=True)

        def layers_extend():
            for layer in range(c.layers):
                if has_prefix:
                    o1, s1 = ragged.run_return_lse(wl.q, wl.k, wl.v)
                    o2, s2 = paged.run_return_lse(wl.q, (wl.k_pool[layer], wl.v_pool[layer]), **scales)
                    o, _ = fi.merge_state(o1, s1, o2, s2)
                    p.outs[layer] = o
                else:
                    ragged.run(wl.q, wl.k, wl.v, out=outs_buf[layer])
                    p.outs[layer] = outs_buf[layer]
                wl.write_kv(layer)

        p.metadata, p.forward = metadata_extend, layers_extend
        if has_prefix:
            p.notes.append("ragged + paged + merge_state")
        return p


class TrtllmLib(TorchBackend):
    name = "trtllm_lib"

    def __init__(self):
        super().__init__()
        from flashinfer.decode import trtllm_batch_decode_with_kv_cache  # noqa: PLC0415
        self.decode = trtllm_batch_decode_with_kv_cache
        self.sm100 = self.props.major == 10
        # FlashInfer 0.7.2 (SGLang 0.5.23): trtllm_mha serves extend on SM90 / SM120 through trtllm_fmha_v2_prefill,
        # and T1 carries XQA's 8 MiB semaphore prefix there (facts-0.5.23 §1.1 T1, §1.4, §3.3).
        self.fmha_v2 = flashinfer_at_least(self.version, (0, 7)) and self.props.major in (9, 12)
        self.semaphore_bytes = 8 << 20 if self.fmha_v2 else 0  # _XQA_SEMAPHORE_BYTES (trtllm_mha_backend.py L83)

    def supports(self, c: Case, timing: str) -> Optional[str]:
        if c.mode == "extend" and self.fmha_v2:
            if timing == "graph":
                return "extend is not captured in CUDA graphs"
            return self.unmodelled(c)
        if c.mode == "extend":
            # Not run anywhere: SGLang's extend calls trtllm_batch_context_with_kv_cache, trtllm-gen only (SM100),
            # and on SM90 it runs trtllm_mha as the decode backend only (server_args.py L5919-5928).
            return ("extend: trtllm_batch_context_with_kv_cache (trtllm-gen, SM100) is not run by the peer script; "
                    "on SM90 SGLang runs trtllm_mha as the decode backend only (server_args.py L5919-5928)")
        return self.unmodelled(c)

    def prepare(self, c: Case, timing: str) -> Prepared:
        torch = self.torch
        wl = self.workload(c)
        p = _PreparedTorch(self, wl)
        torch.cuda.synchronize()
        drv0, a0 = self.driver_used(), self.allocated()
        # T1, zeroed (30cb848d4 L158-167; 0.5.23 L306-317: the semaphore prefix + W on SM90 / SM120)
        ws = torch.zeros(self.semaphore_bytes + c.trtllm_workspace_bytes, dtype=torch.uint8, device="cuda")
        # T2 (#33063): round_up(max(B*Hq_cfg, sm_count), 8) * 4 bytes, B = max(8192, (R+1)*max(1, draft)).
        B = max(8192, (c.max_running_requests + 1) * max(1, c.draft_tokens))
        counter_bytes = -(-max(B * c.num_attention_heads, self.props.multi_processor_count) // 8) * 8 * 4
        counters = torch.zeros(counter_bytes, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        p.ctor_device_bytes = self.allocated() - a0
        p.ctor_pinned_bytes = 0
        p.ctor_driver_delta_bytes = self.driver_used() - drv0
        p.construct_ledger = [
            {"phase": "construct", "tag": "trtllm_mha.workspace_buffer", "kind": "device", "bytes": ws.numel(),
             "shared": True, "count": 1},
            {"phase": "construct", "tag": "trtllm_mha.multi_ctas_kv_counter_buffer", "kind": "device",
             "bytes": counters.numel(), "shared": False, "count": 1}]
        p.notes = [f"flashinfer {self.version}", "backend auto: " + ("trtllm-gen" if self.sm100 else "xqa")]
        p.ws, p.counters = ws, counters
        if c.mode == "extend":
            return self.prepare_fmha_v2_extend(c, p, wl, ws)
        bs, Hq, Hkv, D, P, dt = c.batch, c.num_qo_heads, c.num_kv_heads, c.head_dim, c.page_size, wl.dtype
        num_pages = wl.num_slots // P
        # The pool [slots, Hkv, D] viewed as [pages, P, Hkv, D] and permuted to the HND view [pages, Hkv, P, D]
        # (non-contiguous), as trtllm_mha_backend.py passes it with kv_layout="HND".
        k_views = [kp.view(num_pages, P, Hkv, D).permute(0, 2, 1, 3) for kp in wl.k_pool]
        v_views = [vp.view(num_pages, P, Hkv, D).permute(0, 2, 1, 3) for vp in wl.v_pool]
        graph = timing == "graph"
        before = self.allocated()
        page_table = torch.zeros(bs, wl.max_pages, dtype=torch.int32, device="cuda")
        cache_seqlens = torch.zeros(bs, dtype=torch.int32, device="cuda")
        cu_seqlens_k = torch.zeros(bs + 1, dtype=torch.int32, device="cuda")
        if graph:
            p.graph_state_device_bytes = self.allocated() - before
        outs_buf = [torch.empty(c.q_tokens, Hq, D, dtype=dt, device="cuda") for _ in range(c.layers)]
        q_len = 1 if c.mode == "decode" else c.draft_tokens
        if c.mode == "verify" and any(n != q_len for n in c.new_lens):
            raise Unsupported("verify with uneven draft lengths")
        strided = torch.arange(0, wl.max_pages * P, P, device="cuda")

        def poison():
            for o in outs_buf:
                o.fill_(float("nan"))

        def metadata():
            # init_forward_metadata: cache_seqlens_int32, cu_seqlens_k, page_table = req_to_token[:, ::P] // P
            cache_seqlens.copy_(wl.seq_lens)
            cu_seqlens_k[1:] = torch.cumsum(wl.seq_lens, 0, dtype=torch.int32)
            page_table.copy_(wl.req_to_token[:, strided] // P)

        mask = None  # SGLang passes none (facts, section 3: chain verify, topk 1)
        # _get_bmm_scales (L425-440): fp8 KV: bmm1 = q_scale * k_scale * scaling (q_scale 1), bmm2 = v_scale. XQA
        # takes q in the model dtype (SGLang casts q to fp8 only outside XQA, L1134-1138).
        bmm1_scale = c.sm_scale * (c.k_scale if c.kv_fp8 else 1.0)
        bmm2_scale = c.v_scale if c.kv_fp8 else 1.0

        def layers():
            for layer in range(c.layers):
                wl.write_kv(layer)
                self.decode(query=wl.q, kv_cache=(k_views[layer], v_views[layer]), workspace_buffer=ws,
                            block_tables=page_table, seq_lens=cache_seqlens, max_seq_len=c.context_len,
                            bmm1_scale=bmm1_scale, bmm2_scale=bmm2_scale, window_left=-1, out=outs_buf[layer],
                            out_dtype=dt, q_len_per_req=q_len, multi_ctas_kv_counter_buffer=counters, mask=mask)
                p.outs[layer] = outs_buf[layer]

        if q_len > 1 and not self.sm100:
            # XQA's speculative mode asserts "Mask is required for speculative decoding" when called as SGLang
            # calls it (no mask). Say so, and run it with the chain's causal mask: [bs, q_len, words] uint16,
            # bit j of row i set when draft token i sees draft token j (32-bit words, low half first).
            try:
                metadata()
                layers()
                torch.cuda.synchronize()
            except AssertionError as e:
                p.notes.append(f"as SGLang calls it (no mask) XQA raises '{e}': run with an explicit causal mask")
                words = (q_len + 31) // 32
                rows = torch.zeros(bs, q_len, words, dtype=torch.int64)
                for i in range(q_len):
                    for w_ in range(words):
                        bits = max(0, min(32, i + 1 - 32 * w_))
                        rows[:, i, w_] = (1 << bits) - 1
                mask = rows.to(torch.int32).view(torch.uint16).contiguous().cuda()  # little-endian: low half first

        p.poison, p.metadata = poison, metadata
        p.layers = layers  # the eager forward, also in graph mode (replay_vs_eager)
        if graph:
            self.capture(p, metadata, layers)
        else:
            p.forward = layers
        return p


    def prepare_fmha_v2_extend(self, c: Case, p: "_PreparedTorch", wl: "Workload", ws) -> "Prepared":
        """Extend as SGLang 0.5.23 runs it on SM90 (trtllm_mha_backend.py L1890-1921): K and V of a layer are the
        two block-aligned halves of one allocation (memory_pool.py L2630-2645), so the block table is
        [page_table, page_table + delta] stacked to [bs, 2, max_pages] once per forward (_fmha_v2_paged_inputs,
        L429-468: the no-copy fast path), the KV written first, then trtllm_fmha_v2_prefill per layer with
        out=None (FlashInfer allocates the output, prefill.py L7749-7756)."""
        torch = self.torch
        from flashinfer.prefill import trtllm_fmha_v2_prefill  # noqa: PLC0415
        bs, Hq, Hkv, D, P, dt = c.batch, c.num_qo_heads, c.num_kv_heads, c.head_dim, c.page_size, wl.dtype
        num_pages = wl.num_slots // P
        kv = []  # per layer: one [2, slots, Hkv, D] allocation; K = [0], V = [1] (V delta = num_pages pages)
        for layer in range(c.layers):
            buf = torch.empty(2, wl.num_slots, Hkv, D, dtype=dt, device="cuda")
            buf[0].copy_(wl.k_pool[layer])
            buf[1].copy_(wl.v_pool[layer])
            kv.append(buf)
        delta = num_pages
        fmha_ws = ws[self.semaphore_bytes:]  # fmha_v2_workspace_buffer = T1[semaphore_bytes:] (L318)
        strided = torch.arange(0, wl.max_pages * P, P, device="cuda")
        max_q = max(c.new_lens)
        has_prefix = any(x > 0 for x in c.prefix_lens)
        state = {}

        def metadata():
            # init_forward_metadata, EXTEND (L1309-1380): cache_seqlens, cu_seqlens_k, cu_seqlens_q (an alias of
            # cu_seqlens_k without a prefix), the page table; the stacked table memoized per forward (L429-468).
            cache_seqlens = wl.seq_lens
            cu_k = torch.nn.functional.pad(torch.cumsum(wl.seq_lens, 0, dtype=torch.int32), (1, 0))
            cu_q = torch.nn.functional.pad(torch.cumsum(wl.new_lens, 0, dtype=torch.int32), (1, 0)) \
                if has_prefix else cu_k
            page_table = (wl.req_to_token[:, strided] // P).to(torch.int32)
            state.update(cache_seqlens=cache_seqlens, cu_k=cu_k, cu_q=cu_q,
                         block_tables=torch.stack([page_table, page_table + delta], dim=1))

        def layers():
            for layer in range(c.layers):
                buf = kv[layer]
                buf[0][wl.out_cache_loc] = wl.k  # set_kv_buffer before attention (L1712-1747)
                buf[1][wl.out_cache_loc] = wl.v
                k_cache = buf[0].view(num_pages, P, Hkv, D)
                v_cache = buf[1].view(num_pages, P, Hkv, D)
                p.outs[layer] = trtllm_fmha_v2_prefill(
                    (wl.q, (k_cache, v_cache)), input_layout="Q_PAGED_KV_NHD", workspace_buffer=fmha_ws,
                    seq_lens=state["cache_seqlens"], max_q_len=max_q, max_kv_len=c.context_len,
                    bmm1_scale=c.sm_scale, bmm2_scale=1.0, batch_size=bs, cum_seq_lens_q=state["cu_q"],
                    cum_seq_lens_kv=state["cu_k"], block_tables=state["block_tables"], out=None, out_dtype=dt,
                    mask_mode="causal", window_left=-1, sinks=None, skip_softmax_threshold_scale_factor=0.0)

        p.kv = kv
        p.poison = lambda: None  # FlashInfer allocates each output: nothing stale to poison
        p.metadata, p.forward = metadata, layers
        p.notes.append("extend: trtllm_fmha_v2_prefill, Q_PAGED_KV_NHD, fused K/V halves, [bs, 2, pages] table")
        return p


def flashinfer_at_least(version: str, want: "tuple[int, ...]") -> bool:
    """'0.7.2' / '0.6.15.post1' compared with `want` on the leading numbers."""
    nums = []
    for part in version.split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        nums.append(int(m.group()))
    return tuple(nums[:len(want)]) >= tuple(want)


def copy_bandwidth_bytes_per_s() -> float:
    """Device-to-device copy of 2 GiB, best of 10 after a warm-up: read + written bytes / time (attnbench's)."""
    torch = _torch()
    n = 2 << 30
    src = torch.ones(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    best = None
    for i in range(11):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        ms = a.elapsed_time(b)
        if i > 0 and (best is None or ms < best):
            best = ms
    del src, dst
    torch.cuda.empty_cache()
    return 2.0 * n / (best * 1e-3)


def read_bandwidth_bytes_per_s() -> float:
    """A read-only stream: amax over 4 GiB of seeded random float32, best of 10 after a warm-up (bytes read /
    time). The fallback denominator of bw_fraction when attnbench's own read probe (--read-bandwidth) is not
    given; a torch reduction, so it may sit a few per cent below attnbench's probe on the same GPU."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.rand(1 << 30, dtype=torch.float32, device="cuda", generator=g)
    best = None
    for i in range(11):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        m = x.amax()
        b.record()
        b.synchronize()
        ms = a.elapsed_time(b)
        if i > 0 and (best is None or ms < best):
            best = ms
    if not 0.0 < float(m) < 1.0:
        raise RuntimeError(f"read probe: amax {float(m)} outside (0, 1)")
    nbytes = x.numel() * x.element_size()
    del x
    torch.cuda.empty_cache()
    return nbytes / (best * 1e-3)


def environment(copy_bw: float, read_bw: float, read_source: str) -> Dict[str, str]:
    torch = _torch()
    env = {"tool": "scripts/peer_flashinfer.py", "python": platform.python_version(), "torch_version": torch.__version__,
           "cuda_runtime": str(torch.version.cuda), "device": "cuda"}
    try:
        import flashinfer  # noqa: PLC0415
        env["flashinfer_version"] = flashinfer.__version__
    except ImportError:
        pass
    props = torch.cuda.get_device_properties(0)
    env.update(gpu_name=props.name, compute_capability=f"{props.major}.{props.minor}",
               sm_count=str(props.multi_processor_count), memory_total_bytes=str(props.total_memory))
    if hasattr(props, "uuid"):
        env["gpu_uuid"] = "GPU-" + str(props.uuid)
    if hasattr(props, "L2_cache_size"):
        env["l2_bytes"] = str(props.L2_cache_size)
    try:
        import pynvml  # noqa: PLC0415 (nvidia-ml-py)
        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        env["driver"] = v.decode() if isinstance(v, bytes) else v
    except Exception:  # the driver version is informative only
        pass
    env["copy_bandwidth_bytes_per_s"] = repr(copy_bw)
    env["read_bandwidth_bytes_per_s"] = repr(read_bw)  # bw_fraction's denominator
    env["read_bandwidth_source"] = read_source
    return env


# ---- command line ----------------------------------------------------------------------------------------

def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Run FlashInfer's own kernels on attnbench's cases; write rows in attnbench's schema.")
    ap.add_argument("--cases", required=True, help="attnbench run ... --list-cases --format csv output")
    ap.add_argument("--out", required=True, help="results CSV (the JSON report goes beside it, .json)")
    ap.add_argument("--json", help="JSON report path (default: --out with .json)")
    ap.add_argument("--backend", default="all", help="flashinfer_lib, trtllm_lib or all (comma separated)")
    ap.add_argument("--filter", default="", help="only the cases whose id matches this regular expression")
    ap.add_argument("--read-bandwidth", type=float, default=None, metavar="BYTES_PER_S",
                    help="bw_fraction's denominator: attnbench's read probe on this GPU (its JSON environment's "
                         "read_bandwidth_bytes_per_s), so both fractions share it; default: a torch read probe")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return ap.parse_args(argv)


def select_backends(spec: str, known: Sequence[str] = PEER_BACKENDS) -> List[str]:
    """--backend: a comma-separated list of `known` names, or all (peer_sglang.py passes its own names)."""
    names = list(known) if spec == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    for n in names:
        if n not in known:
            raise InputError(f"--backend: unknown backend '{n}' (expected {', '.join(known)} or all)")
    if not names:
        raise InputError("--backend: no backend named")
    return names


def main(argv: Sequence[str], make_backend: Optional[Callable[[str], Backend]] = None) -> int:
    try:
        a = parse_args(argv)
        names = select_backends(a.backend)
        try:
            pattern = re.compile(a.filter)
        except re.error as e:
            raise InputError(f"--filter: invalid regular expression '{a.filter}' ({e})") from None
        cases = [c for c in read_case_list(a.cases) if pattern.search(c.case_id)]
        if not cases:
            raise InputError(f"--filter: no case id matches '{a.filter}'")
        json_path = a.json or (a.out[:-4] + ".json" if a.out.endswith(".csv") else a.out + ".json")
        if os.path.abspath(json_path) == os.path.abspath(a.out):
            raise InputError(f"--json: '{json_path}' is the --out file")
        if os.path.abspath(a.out) == os.path.abspath(a.cases) or os.path.abspath(json_path) == os.path.abspath(a.cases):
            raise InputError("--out: would overwrite the --cases file")
        if a.read_bandwidth is not None and not (a.read_bandwidth > 0 and math.isfinite(a.read_bandwidth)):
            raise InputError(f"--read-bandwidth: expected bytes per second > 0, got {a.read_bandwidth}")
    except InputError as e:
        print(f"peer_flashinfer: error: {e}", file=sys.stderr)
        return 2
    command = "python3 scripts/peer_flashinfer.py " + " ".join(argv)
    repro = "python3 scripts/peer_flashinfer.py --cases " + a.cases + " --out " + a.out
    if make_backend is None:  # the real thing: a GPU, torch and flashinfer
        try:
            torch = _torch()
            if not torch.cuda.is_available():
                print("peer_flashinfer: error: no usable GPU (torch.cuda.is_available() is False)", file=sys.stderr)
                return 2
            import flashinfer  # noqa: F401,PLC0415
        except ImportError as e:
            print(f"peer_flashinfer: error: {e} (pip install flashinfer-python; see the README)", file=sys.stderr)
            return 2
        copy_bw = copy_bandwidth_bytes_per_s()
        if a.read_bandwidth is not None:
            bw, source = a.read_bandwidth, "--read-bandwidth (attnbench's read probe)"
        else:
            bw, source = read_bandwidth_bytes_per_s(), "torch amax probe (scripts/peer_flashinfer.py)"
        env = environment(copy_bw, bw, source)
        backends: List[Backend] = [FlashInferLib() if n == "flashinfer_lib" else TrtllmLib() for n in names]
    else:
        bw = a.read_bandwidth or 0.0
        env = {"tool": "scripts/peer_flashinfer.py", "device": "fake"}
        backends = [make_backend(n) for n in names]
    try:
        writer = ResultWriter(a.out, json_path, env, command)
    except InputError as e:
        print(f"peer_flashinfer: error: {e}", file=sys.stderr)
        return 2
    try:
        bad = run_all(cases, backends, writer, repro, bw, progress=not a.quiet)
    finally:
        writer.close()
    n = len(writer.rows)
    ok = sum(1 for r in writer.rows if r["status"] == "ok")
    print(f"peer_flashinfer: {n} rows, {ok} ok, {bad} failed -> {a.out}, {json_path}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

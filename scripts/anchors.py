#!/usr/bin/env python3
"""PyTorch SDPA anchors for attnbench's kernel figures (issue 15, part 4).

Runs torch.nn.functional.scaled_dot_product_attention with its cuDNN and its flash (FlashAttention-2) backend
(torch.nn.attention.sdpa_kernel, one backend at a time) on the shapes of attnbench's extend and decode cases,
on the same GPU right after attnbench, and writes one CSV row per case:

    mode,model,batch,prefix_len,extend_len,kv_len,attnbench,cudnn,flash,unit,ratio_to_best

unit is TFLOP/s for extend and TB/s for decode; ratio_to_best = attnbench / max(cudnn, flash).

What each figure is:
  attnbench  the best `tflops` (extend) or `tb_per_s` (decode) of the case's ok rows in attnbench's results
             CSV (any backend, any timing; not a row whose note says "unwindowed: ": a backend that computed other
             attention than the model's windowed layers, SGLang's FlashInfer extend on Gemma): attention FLOPs or
             bytes of the step over its forward time, the metadata excluded, the L2 flushed before each step
             (docs/result-schema.md). The forward time is
             SGLang's forward: the new tokens' K / V written into the cache, then the attention.
  cudnn/flash  one layer's step of the same shape with PyTorch's kernels, timed the same way: the new tokens'
             K / V written into pool slots (one device-to-device copy_ of [batch * extend_len, 2, Hkv, D], the
             fastest any K / V write can be; --no-store leaves it out, as the anchors before 2026-12-02 did),
             then SDPA with q [batch, Hq, extend_len, D] over a dense (gathered, contiguous) K/V
             [batch, Hkv, kv_len, D] in the case's dtype, GQA through enable_gqa (K/V read once, not expanded),
             the case's sm_scale. The write is also timed alone and logged (the step's time minus it is the
             attention's). A round is the median of `--reps` calls between CUDA events, each after a write of
             256 MiB that evicts the L2 (as attnbench flushes it) and a GPU spin of ~0.5 ms that lets the host
             queue the call before the GPU reaches the start event (a call the GPU waited for is counted and
             logged as a WARNING: host-bound), after `--warmup` calls;
             `--rounds` rounds per backend, interleaved (cudnn, flash, cudnn, flash, ...), and the figure is the
             best round's (the fastest median: what PyTorch can reach; one slow round is noise, not the anchor).
             The log gives every round and their spread, (max - min) / min, with a WARNING line above 20%;
             OUT's sidecar OUT-rounds.csv (anchors.csv -> anchors-rounds.csv) lists every round:
                 case_id,backend,round,median_us
             (a windowed decode step's layers as CASE_ID@keys=N, one per distinct key count). The figure
             counts the work as attnbench's runner/case_work.cpp counts it for one full-attention layer:
               extend: 4 * Hq * D * sum over requests and rows j of (prefix_len + j + 1) FLOPs (causal pairs)
               decode: 2 * kv_len * Hkv * D * es (K and V) + (2 Hq + 2 Hkv) * D * es (q, o, new k, v) per
                       request, es = bytes per element
             decode: one query row per request sees every key (no mask).
             extend, prefix 0: is_causal=True (both backends).
             extend with a prefix (query row j at position prefix_len + j: a bottom-right causal mask):
               flash: torch.nn.attention.bias.causal_lower_right (flash's causal mask is bottom-right
                      aligned: no mask tensor is read);
               cudnn: is_causal=True when its output matches flash's bottom-right one on this shape (printed),
                      else an explicit boolean [extend_len, kv_len] mask broadcast over batch and heads (the
                      mask read is part of its time; the log says which).
             Sliding windows (Gemma-3's local layers, the case list's layer_windows): decode is the step's rate
             like attnbench's, each windowed layer an SDPA call over the last min(kv_len, window_left + 1) keys
             (exactly what a query at the end of its sequence sees through the window), the others over all:
             figure = the step's bytes / the sum of the layers' median times (one measurement per distinct key
             count). Extend: SDPA takes a window only as a dense mask, so the full-attention layer is measured
             (its write and attention, and the write alone) and the step built from it as attnbench's step is
             built: per layer the K / V write plus the layer's windowed FLOPs at the full layer's attention rate,
             figure = the step's FLOPs / that time (extend_step_figure; the windowed layers credited with a
             full layer's rate, more than a windowed kernel reaches). The full layer's own figure, which amortised
             one write over a full layer where attnbench's step writes once per windowed layer too (the anchors
             before 2026-12-07), is logged beside it.
A backend that refuses a shape leaves its cell empty (the reason on stderr); ratio_to_best is empty when
attnbench has no ok row or neither backend ran.

Usage:
  scripts/anchors.py --results RESULTS.csv --out results/h200/perf/anchors.csv
                     (--cases CASES.csv | --attnbench BIN --config configs/pr-evidence.toml)
                     [--reps 20] [--warmup 3] [--rounds 3] [--no-store]
CASES.csv is `attnbench run --config ... --list-cases --format csv`; with --attnbench the script runs that.
Bad input: one line on stderr naming the option or file, exit 2. torch is imported only when measuring.
"""

import argparse
import csv
import io
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

COLUMNS = ["mode", "model", "batch", "prefix_len", "extend_len", "kv_len", "attnbench", "cudnn", "flash", "unit",
           "ratio_to_best"]
UNITS = {"extend": "TFLOP/s", "decode": "TB/s"}
CASE_COLUMNS = ["case_id", "mode", "model", "num_qo_heads", "num_kv_heads", "head_dim", "dtype", "batch",
                "prefix_lens", "new_lens", "sm_scale"]
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
FLUSH_BYTES = 256 * 1024 * 1024  # > 4x the H200's 60 MB L2
LEAD_CYCLES = 1_000_000  # the GPU spin before each timed call: ~0.5 ms at the H200's ~2 GHz, ahead of Python's dispatch
BACKENDS = ("cudnn", "flash")  # the order of each round
ROUND_COLUMNS = ["case_id", "backend", "round", "median_us"]
SPREAD_WARN_PCT = 20.0  # a round spread above this is logged as a WARNING


class InputError(Exception):
    """Bad input: main() prints one line and exits 2."""


@dataclass
class AnchorCase:
    case_id: str
    mode: str
    model: str
    batch: int
    num_qo_heads: int
    num_kv_heads: int
    head_dim: int
    dtype: str
    prefix_lens: List[int]
    new_lens: List[int]
    sm_scale: float
    kv_dtype: str = ""  # the KV cache's storage dtype (empty: the model dtype)
    layer_windows: Tuple[int, ...] = ()  # window_left per layer, -1: none (empty: every layer full)

    def uniform(self) -> bool:
        """Dense SDPA tensors need every request of the same lengths."""
        return len(set(self.prefix_lens)) == 1 and len(set(self.new_lens)) == 1

    @property
    def prefix_len(self) -> int:
        return self.prefix_lens[0]

    @property
    def extend_len(self) -> int:
        return self.new_lens[0]

    @property
    def kv_len(self) -> int:
        return self.prefix_lens[0] + self.new_lens[0]


def _int_list(text: str, where: str) -> List[int]:
    try:
        v = [int(x) for x in text.split(";")]
    except ValueError:
        raise InputError("%s: '%s' is not a ';'-separated list of integers" % (where, text)) from None
    if not v or min(v) < 0:
        raise InputError("%s: '%s' must list lengths >= 0" % (where, text))
    return v


def read_case_list(text: str, source: str = "case list") -> List[AnchorCase]:
    """The extend and decode cases of attnbench's --list-cases CSV (verify and others dropped)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CASE_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError("%s: not an attnbench case list (no column %s)" % (source, ", ".join(missing)))
    cases = []
    for n, r in enumerate(reader, start=2):
        if r["mode"] not in UNITS:
            continue
        where = "%s line %d" % (source, n)
        try:
            ints = {k: int(r[k]) for k in ("num_qo_heads", "num_kv_heads", "head_dim", "batch")}
            scale = float(r["sm_scale"])
        except ValueError:
            raise InputError("%s: a head count, head_dim, batch or sm_scale is not a number" % where) from None
        windows: Tuple[int, ...] = ()
        if r.get("layer_windows"):
            try:
                windows = tuple(int(x) for x in r["layer_windows"].split(";"))
            except ValueError:
                raise InputError("%s layer_windows: '%s' is not a ';'-separated list of integers" %
                                 (where, r["layer_windows"])) from None
            if min(windows) < -1:
                raise InputError("%s layer_windows: '%s' must list -1 or windows >= 0" % (where, r["layer_windows"]))
        c = AnchorCase(r["case_id"], r["mode"], r["model"], ints["batch"], ints["num_qo_heads"], ints["num_kv_heads"],
                       ints["head_dim"], r["dtype"], _int_list(r["prefix_lens"], where + " prefix_lens"),
                       _int_list(r["new_lens"], where + " new_lens"), scale, r.get("kv_cache_dtype") or "", windows)
        if len(c.prefix_lens) != c.batch or len(c.new_lens) != c.batch:
            raise InputError("%s: prefix_lens / new_lens do not list batch=%d requests" % (where, c.batch))
        cases.append(c)
    return cases


# A row whose note says its backend computed other attention than the model's (SGLang's FlashInfer on windowed
# layers: "unwindowed: ..." where the model runner knows no window, "new tokens unwindowed: ..." in its ragged
# extend) is left out of the attnbench figure: it times other work than the windowed model the anchor stands for.
OTHER_ATTENTION_NOTE = "unwindowed: "


def read_attnbench_figures(text: str, source: str = "results") -> Dict[str, Dict[str, float]]:
    """case_id -> {'tflops': best, 'tb_per_s': best} over the ok rows of an attnbench results CSV that computed
    the model's attention (OTHER_ATTENTION_NOTE)."""
    reader = csv.DictReader(io.StringIO(text))
    need = ["case_id", "status", "tflops", "tb_per_s"]
    missing = [c for c in need if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError("%s: not an attnbench results CSV (no column %s)" % (source, ", ".join(missing)))
    best: Dict[str, Dict[str, float]] = {}
    for n, r in enumerate(reader, start=2):
        if r["status"] != "ok" or OTHER_ATTENTION_NOTE in (r.get("note") or ""):
            continue
        for col in ("tflops", "tb_per_s"):
            if r[col] == "":
                continue
            try:
                v = float(r[col])
            except ValueError:
                raise InputError("%s line %d: %s '%s' is not a number" % (source, n, col, r[col])) from None
            if not math.isfinite(v) or v < 0:
                raise InputError("%s line %d: %s '%s' is not a finite number >= 0" % (source, n, col, r[col]))
            d = best.setdefault(r["case_id"], {})
            d[col] = max(d.get(col, 0.0), v)
    return best


def layer_work(c: AnchorCase) -> Tuple[float, float]:
    """(FLOPs, bytes) of one full-attention layer of the case, as runner/case_work.cpp counts them."""
    es = DTYPE_BYTES[c.dtype]
    flops = 0.0
    kv_bytes = 0.0
    for pre, n in zip(c.prefix_lens, c.new_lens):
        pairs = n * pre + n * (n + 1) / 2.0  # sum over rows j < n of (pre + j + 1)
        flops += 4.0 * pairs * c.num_qo_heads * c.head_dim
        kv_bytes += 2.0 * (pre + n) * c.num_kv_heads * c.head_dim * es
    tokens = sum(c.new_lens)
    return flops, kv_bytes + tokens * (2.0 * c.num_qo_heads + 2.0 * c.num_kv_heads) * c.head_dim * es


def figure(c: AnchorCase, seconds: float) -> float:
    """The anchor's figure for one layer taking `seconds`: TFLOP/s (extend) or TB/s (decode)."""
    flops, nbytes = layer_work(c)
    return (flops if c.mode == "extend" else nbytes) / seconds / 1e12


def decode_layer_cases(c: AnchorCase) -> List[AnchorCase]:
    """One full-attention case per layer of a windowed decode step: the keys a layer reads, as attnbench's
    runner/case_work.cpp counts them (min(prefix + new, window_left + new) with a window), as its prefix."""
    out = []
    for w in c.layer_windows:
        pre = [min(p + n, w + n) - n if w >= 0 else p for p, n in zip(c.prefix_lens, c.new_lens)]
        out.append(AnchorCase(c.case_id, c.mode, c.model, c.batch, c.num_qo_heads, c.num_kv_heads, c.head_dim, c.dtype,
                              pre, list(c.new_lens), c.sm_scale, c.kv_dtype, ()))
    return out


def windowed_decode(c: AnchorCase) -> bool:
    return c.mode == "decode" and any(w >= 0 for w in c.layer_windows)


def windowed_extend(c: AnchorCase) -> bool:
    return c.mode == "extend" and any(w >= 0 for w in c.layer_windows)


def extend_layer_flops(c: AnchorCase, window_left: int) -> float:
    """FLOPs of one extend layer whose queries see at most window_left + 1 keys (-1: no window), as attnbench's
    runner/case_work.cpp counts them: 4 * Hq * D * sum over requests and rows j of min(prefix + j + 1, window_left + 1)."""
    pairs = 0.0
    for pre, n in zip(c.prefix_lens, c.new_lens):
        lo, hi = pre + 1, pre + n  # row j sees prefix + j + 1 keys without a window: lo .. hi
        cap = hi if window_left < 0 else min(hi, window_left + 1)
        if cap >= lo:  # rows below the cap see all their keys, the rest window_left + 1
            pairs += (lo + cap) * (cap - lo + 1) / 2.0 + (hi - cap) * float(cap)
        else:
            pairs += n * float(window_left + 1)
    return 4.0 * pairs * c.num_qo_heads * c.head_dim


def extend_step_figure(c: AnchorCase, call_us: Optional[float], write_us: float) -> Optional[float]:
    """A windowed extend step's TFLOP/s with one backend's kernels, built as attnbench's step is: every layer writes
    the new tokens' K / V (write_us, measured alone) and runs its attention, each layer's attention taking its FLOPs
    at the rate the backend reached on the full-attention layer (call_us: that layer's write + attention). SDPA takes
    a window only as a dense mask, so the windowed layers are credited with the full layer's rate (more than a
    windowed kernel reaches: its partial tiles at both window edges); the write is counted once per layer, as in
    attnbench's step. None where the backend refused or its call was not longer than the write."""
    if call_us is None or call_us <= write_us:
        return None
    full = layer_work(c)[0]
    rate = full / (call_us - write_us)  # FLOPs per us
    flops = [extend_layer_flops(c, w) for w in c.layer_windows]
    step_us = sum(f / rate for f in flops) + len(flops) * write_us
    return sum(flops) / step_us / 1e6


def step_figure(layers: Sequence[AnchorCase], figures: Dict[int, Optional[float]]) -> Optional[float]:
    """A step's TB/s from its layers' anchors: the layers' bytes over the sum of their times, each layer's time its
    bytes over the figure measured at its key count (figures: key count -> TB/s; None where the anchor refused)."""
    total_bytes = total_s = 0.0
    for lc in layers:
        fig = figures.get(lc.kv_len)
        if fig is None or fig <= 0:
            return None
        nbytes = layer_work(lc)[1]
        total_bytes += nbytes
        total_s += nbytes / (fig * 1e12)
    return total_bytes / total_s / 1e12 if total_s > 0 else None


def fmt(x: Optional[float]) -> str:
    return "-" if x is None else "%.4g" % x


def ratio_to_best(attnbench: Optional[float], cudnn: Optional[float], flash: Optional[float]) -> Optional[float]:
    anchors = [x for x in (cudnn, flash) if x is not None and x > 0]
    if attnbench is None or not anchors:
        return None
    return attnbench / max(anchors)


def anchor_row(c: AnchorCase, attnbench: Optional[float], cudnn: Optional[float], flash: Optional[float]) -> dict:
    def cell(x: Optional[float]) -> str:
        return "" if x is None else "%.4g" % x

    r = ratio_to_best(attnbench, cudnn, flash)
    return {"mode": c.mode, "model": c.model, "batch": str(c.batch), "prefix_len": str(c.prefix_len),
            "extend_len": str(c.extend_len), "kv_len": str(c.kv_len), "attnbench": cell(attnbench),
            "cudnn": cell(cudnn), "flash": cell(flash), "unit": UNITS[c.mode], "ratio_to_best": cell(r)}


def write_csv(path: str, columns: Sequence[str], rows: Sequence[dict]) -> None:
    """rows under a header of columns, the folder created when missing."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def write_anchors_csv(path: str, rows: Sequence[dict]) -> None:
    write_csv(path, COLUMNS, rows)


def attnbench_figure(c: AnchorCase, figs: Dict[str, Dict[str, float]]) -> Optional[float]:
    return figs.get(c.case_id, {}).get("tflops" if c.mode == "extend" else "tb_per_s")


# ---- rounds (pure: the measuring below feeds them timers) ------------------------------------------------------


def spread_pct(times_us: Sequence[float]) -> float:
    """(max - min) / min of a backend's round medians, in %."""
    return (max(times_us) - min(times_us)) * 100.0 / min(times_us)


def best_round(times_us: Sequence[float]) -> float:
    """The figure's time: the fastest round's median (what PyTorch can reach; a slow round is a collapse)."""
    return min(times_us)


def run_rounds(timers: Dict[str, Callable[[], float]], rounds: int) -> Dict[str, List[float]]:
    """Every backend's round medians (us), the backends interleaved in BACKENDS order within each round, so that a
    slow stretch of the GPU lands on a round of each rather than on all rounds of one."""
    times: Dict[str, List[float]] = {name: [] for name in BACKENDS if name in timers}
    for _ in range(rounds):
        for name in times:
            times[name].append(timers[name]())
    return times


def rounds_log(label: str, backend: str, how: str, times_us: Sequence[float], fig: float, unit: str) -> List[str]:
    """The log lines of one backend's rounds: every round's time, the spread and the figure kept; a WARNING line
    when the spread exceeds SPREAD_WARN_PCT."""
    sp = spread_pct(times_us)
    lines = ["%s: %s (%s) rounds %s us, spread %.1f%%: best %.1f us -> %.4g %s" % (
        label, backend, how, " / ".join("%.1f" % t for t in times_us), sp, best_round(times_us), fig, unit)]
    if sp > SPREAD_WARN_PCT:
        lines.append("%s: WARNING: %s rounds spread %.1f%% (> %g%%): the GPU was not steady; the best round is kept" %
                     (label, backend, sp, SPREAD_WARN_PCT))
    return lines


def round_rows(label: str, times: Dict[str, Sequence[float]]) -> List[dict]:
    """The sidecar's rows of one measurement: one per backend and round (rounds counted from 1)."""
    return [{"case_id": label, "backend": name, "round": str(i + 1), "median_us": "%.3f" % t}
            for name in BACKENDS if name in times for i, t in enumerate(times[name])]


def rounds_path(out: str) -> str:
    """The sidecar next to OUT: anchors.csv -> anchors-rounds.csv."""
    stem, ext = os.path.splitext(out)
    return stem + "-rounds" + (ext or ".csv")


def write_rounds_csv(path: str, rows: Sequence[dict]) -> None:
    write_csv(path, ROUND_COLUMNS, rows)


# ---- measuring (torch only here) ----------------------------------------------------------------------------


class Sdpa:
    """One case's tensors on the GPU and the SDPA calls of each backend."""

    def __init__(self, c: AnchorCase, seed: int = 0, store: bool = True):
        import torch

        self.torch = torch
        self.c = c
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[c.dtype]
        g = torch.Generator(device="cuda").manual_seed(seed)
        B, Hq, Hkv, D, n, L = c.batch, c.num_qo_heads, c.num_kv_heads, c.head_dim, c.extend_len, c.kv_len
        self.q = torch.empty(B, Hq, n, D, device="cuda", dtype=dt).uniform_(-1, 1, generator=g)
        self.k = torch.empty(B, Hkv, L, D, device="cuda", dtype=dt).uniform_(-1, 1, generator=g)
        self.v = torch.empty(B, Hkv, L, D, device="cuda", dtype=dt).uniform_(-1, 1, generator=g)
        self.flush = torch.empty(FLUSH_BYTES, device="cuda", dtype=torch.uint8)
        self.gqa = Hq != Hkv
        # The step's K / V write (SGLang's set_kv_buffer before the attention, as attnbench's step times it): the
        # new tokens' K and V, token-major [B * n, 2, Hkv, D], copied into as many contiguous pool slots by one
        # copy_, a device-to-device copy: the floor of what any write of these bytes costs, so the anchor's step
        # is never slower than its attention plus the best possible write. (index_copy_ into the same slots, as
        # SGLang's older set_kv_buffer indexes, measured 1.1-1.35 TB/s on the H200 where attnbench's write_kv
        # and copy_ reach ~4.1: that store would have flattered attnbench by up to 15 % on the extend anchors.)
        self.store = store
        if store:
            self.kv_new = torch.empty(B * n, 2, Hkv, D, device="cuda", dtype=dt).uniform_(-1, 1, generator=g)
            self.kv_pool = torch.empty(B * n, 2, Hkv, D, device="cuda", dtype=dt)
        self.timed_calls = 0  # time_us's timed calls, and those that found the GPU idle before their launches
        self.host_bound_calls = 0

    def call(self, backend: str, how: str):
        """how: 'none' (no mask), 'causal' (is_causal), 'lower_right' (CausalBias), 'mask' (explicit bool)."""
        torch = self.torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        be = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]
        c = self.c
        mask, causal = None, how == "causal"
        if how == "lower_right":
            from torch.nn.attention.bias import causal_lower_right

            mask = causal_lower_right(c.extend_len, c.kv_len)
        elif how == "mask":
            n, L = c.extend_len, c.kv_len
            rows = torch.arange(n, device="cuda").unsqueeze(1) + (L - n)
            mask = (torch.arange(L, device="cuda").unsqueeze(0) <= rows).view(1, 1, n, L)

        def run():
            if self.store:
                self.write_kv()
            with sdpa_kernel([be]):
                return F.scaled_dot_product_attention(self.q, self.k, self.v, attn_mask=mask, is_causal=causal,
                                                      scale=c.sm_scale, enable_gqa=self.gqa)

        return run

    def write_kv(self) -> None:
        """The step's K / V write: every call's first part, and timed alone by measure_case (the step's time minus it
        is the attention's)."""
        self.kv_pool.copy_(self.kv_new)

    def store_bytes(self) -> int:
        """Bytes the K / V write moves: the new K and V read once and written once."""
        return 2 * self.kv_new.numel() * self.kv_new.element_size()

    def flash_allowed(self) -> bool:
        """Whether flash takes this shape (CausalBias would otherwise fall back to another kernel silently)."""
        torch = self.torch
        from torch.backends.cuda import SDPAParams, can_use_flash_attention

        try:
            p = SDPAParams(self.q, self.k, self.v, None, 0.0, True, self.gqa)
        except TypeError:  # older signature, without enable_gqa
            p = SDPAParams(self.q, self.k, self.v, None, 0.0, True)
        return bool(can_use_flash_attention(p, False)) and torch.cuda.is_available()

    def time_us(self, run, reps: int, warmup: int) -> float:
        """The median of `reps` timed calls of run(), each after the L2 flush and a GPU spin of LEAD_CYCLES, so that
        the host has queued the call's launches before the GPU reaches the start event: the time between the
        events is then the GPU's alone, not Python's dispatch of a call whose kernels take microseconds (without
        the spin, small decode anchors measured 3-5x slow on a busy host). A timed call whose start event had
        already completed when its launches were queued is counted in host_bound_calls (measure_case warns)."""
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        sleep = getattr(torch.cuda, "_sleep", None)
        times = []
        for i in range(warmup + reps):
            self.flush.zero_()
            if sleep is not None:
                sleep(LEAD_CYCLES)
            start.record()
            run()
            stop.record()
            ahead = not start.query()  # the GPU had not reached the start event when the last launch was queued
            torch.cuda.synchronize()
            if i >= warmup:
                times.append(start.elapsed_time(stop) * 1e3)
                self.timed_calls += 1
                self.host_bound_calls += 0 if ahead else 1
        times.sort()
        return times[len(times) // 2]


def measure_case(c: AnchorCase, reps: int, warmup: int, rounds: int, log, label: str = "",
                 round_log: Optional[List[dict]] = None, store: bool = True,
                 times_us: Optional[Dict[str, float]] = None) -> Tuple[Optional[float], Optional[float]]:
    """(cudnn, flash) figures for one case, each its best of `rounds` interleaved rounds; None where the backend
    refused (logged). label names the measurement in the log and the sidecar (default the case_id); round_log,
    when given, collects the sidecar's rows. store: each timed call is the step (the new tokens' K / V write, then
    the attention), whose write is also timed alone and logged; False: the attention alone. times_us, when given,
    receives each backend's best call time and (store) the write's, "write" (0.0 without store)."""
    import torch

    label = label or c.case_id

    s = Sdpa(c, store=store)
    out: Dict[str, Optional[float]] = {"cudnn": None, "flash": None}
    runs = {}
    if c.mode == "decode" or c.extend_len == 1:
        runs = {"cudnn": ("none", s.call("cudnn", "none")), "flash": ("none", s.call("flash", "none"))}
    elif c.prefix_len == 0:
        runs = {"cudnn": ("causal", s.call("cudnn", "causal")), "flash": ("causal", s.call("flash", "causal"))}
    else:
        ref = None
        if s.flash_allowed():
            runs["flash"] = ("lower_right", s.call("flash", "lower_right"))
            try:
                ref = runs["flash"][1]()
            except Exception as e:  # noqa: BLE001 (a refusal of any kind leaves the cell empty)
                log("%s: flash (lower-right causal) refused: %s" % (label, str(e).splitlines()[0]))
                del runs["flash"]
        else:
            log("%s: flash cannot take this shape (can_use_flash_attention is false)" % label)
        how = "mask"
        if ref is not None:
            try:
                got = s.call("cudnn", "causal")()
                diff = (got.float() - ref.float()).abs().max().item()
                log("%s: cudnn is_causal vs flash bottom-right: max abs diff %.3g" % (label, diff))
                if diff < 0.05:
                    how = "causal"
            except Exception as e:  # noqa: BLE001 (a refusal of any kind leaves the cell empty)
                log("%s: cudnn is_causal refused: %s" % (label, str(e).splitlines()[0]))
        runs["cudnn"] = (how, s.call("cudnn", how))
    results = {}
    for name, (how, run) in runs.items():
        try:
            results[name] = run()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            log("%s: %s (%s) refused: %s" % (label, name, how, str(e).splitlines()[0]))
    timers = {name: (lambda run=runs[name][1]: s.time_us(run, reps, warmup)) for name in results}
    times = run_rounds(timers, rounds)
    for name, ts in times.items():
        out[name] = figure(c, best_round(ts) * 1e-6)
        if times_us is not None:
            times_us[name] = best_round(ts)
        for line in rounds_log(label, name, runs[name][0], ts, out[name], UNITS[c.mode]):
            log(line)
    if round_log is not None:
        round_log.extend(round_rows(label, times))
    if times_us is not None:
        times_us["write"] = 0.0
    if store and times:
        store_us = min(s.time_us(s.write_kv, reps, warmup) for _ in range(rounds))
        if times_us is not None:
            times_us["write"] = store_us
        log("%s: in each timed call the K / V write of the new tokens took %.1f us (%.0f GB/s read + write; best of "
            "%d rounds), the attention the rest" % (label, store_us, s.store_bytes() / (store_us * 1e-6) / 1e9, rounds))
    if s.host_bound_calls:
        log("%s: WARNING: %d of %d timed calls found the GPU at their start event before their launches were queued "
            "(host-bound: those times include the host's dispatch)" % (label, s.host_bound_calls, s.timed_calls))
    if "cudnn" in results and "flash" in results:
        diff = (results["cudnn"].float() - results["flash"].float()).abs().max().item()
        log("%s: cudnn vs flash outputs: max abs diff %.3g" % (label, diff))
        if diff > 0.05:
            log("%s: WARNING: the two anchors disagree: they do not compute the same attention" % label)
    del s
    torch.cuda.empty_cache()
    return out["cudnn"], out["flash"]


# ---- command line -------------------------------------------------------------------------------------------


def read_text(path: str, option: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise InputError("%s: cannot read %s: %s" % (option, path, e.strerror)) from None


def case_list_text(args) -> str:
    if args.cases:
        return read_text(args.cases, "--cases")
    if not args.attnbench or not args.config:
        raise InputError("--cases: give a case list, or --attnbench and --config to export one")
    try:
        r = subprocess.run([args.attnbench, "run", "--config", args.config, "--list-cases", "--format", "csv"],
                           capture_output=True, text=True, timeout=300)
    except OSError as e:
        raise InputError("--attnbench: cannot run %s: %s" % (args.attnbench, e.strerror)) from None
    if r.returncode != 0:
        raise InputError("--config: attnbench could not list the cases of %s: %s" %
                         (args.config, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]))
    return r.stdout


def parse_args(argv: Sequence[str]):
    p = argparse.ArgumentParser(description="PyTorch SDPA anchors for attnbench's extend and decode figures")
    p.add_argument("--results", required=True, help="attnbench's results CSV of the same cases")
    p.add_argument("--out", required=True, help="the anchors CSV to write")
    p.add_argument("--cases", help="attnbench's --list-cases --format csv output")
    p.add_argument("--attnbench", help="the attnbench binary (exports the case list of --config)")
    p.add_argument("--config", help="the sweep's config (with --attnbench)")
    p.add_argument("--reps", default="20", help="timed calls per round (their median is the round's time)")
    p.add_argument("--warmup", default="3", help="untimed calls before each round")
    p.add_argument("--rounds", default="3", help="rounds per backend, interleaved; the fastest round is the figure")
    p.add_argument("--no-store", action="store_true",
                   help="time the attention alone, without the step's K / V write (the anchors before 2026-12-02)")
    p.add_argument("--dry-run", action="store_true", help="no GPU: write the rows with attnbench's figures only")
    args = p.parse_args(argv)
    args.reps = count_option(args.reps, "--reps", 1)
    args.warmup = count_option(args.warmup, "--warmup", 0)
    args.rounds = count_option(args.rounds, "--rounds", 1)
    return args


def count_option(text: str, option: str, minimum: int) -> int:
    """An integer option's value, >= minimum (an InputError naming the option otherwise)."""
    try:
        v = int(text)
    except ValueError:
        raise InputError("%s: '%s' is not an integer (must be >= %d)" % (option, text, minimum)) from None
    if v < minimum:
        raise InputError("%s: must be >= %d (%d)" % (option, minimum, v))
    return v


def main(argv: Sequence[str]) -> int:
    def log(msg: str) -> None:
        print("anchors: " + msg, file=sys.stderr, flush=True)

    try:
        args = parse_args(argv)
        cases = read_case_list(case_list_text(args), args.cases or "the case list of " + str(args.config))
        figs = read_attnbench_figures(read_text(args.results, "--results"), args.results)
    except InputError as e:
        print("anchors: " + str(e), file=sys.stderr)
        return 2
    rows: List[dict] = []
    round_log: List[dict] = []
    for c in cases:
        att = attnbench_figure(c, figs)
        cudnn = flash = None
        if att is None:
            log("%s: no ok attnbench row with a figure: not measured" % c.case_id)
        elif not c.uniform():
            log("%s: requests of different lengths: no dense SDPA shape, not measured" % c.case_id)
        elif c.dtype not in DTYPE_BYTES or c.kv_dtype not in ("", c.dtype):
            log("%s: dtype %s, KV cache %s: no SDPA anchor (same-dtype K/V only), not measured" %
                (c.case_id, c.dtype, c.kv_dtype or c.dtype))
        elif not args.dry_run and windowed_decode(c):
            layers = decode_layer_cases(c)
            by_keys = {lc.kv_len: lc for lc in layers}
            meas = {k: measure_case(lc, args.reps, args.warmup, args.rounds, log, "%s@keys=%d" % (c.case_id, k),
                                    round_log, not args.no_store) for k, lc in sorted(by_keys.items())}
            cudnn = step_figure(layers, {k: m[0] for k, m in meas.items()})
            flash = step_figure(layers, {k: m[1] for k, m in meas.items()})
            log("%s: the step of %d layers (keys %s): cudnn %s, flash %s TB/s" % (
                c.case_id, len(layers), "/".join(str(lc.kv_len) for lc in layers), cudnn, flash))
        elif not args.dry_run and windowed_extend(c):
            t: Dict[str, float] = {}
            layer = measure_case(c, args.reps, args.warmup, args.rounds, log, c.case_id, round_log, not args.no_store, t)
            cudnn = extend_step_figure(c, t.get("cudnn"), t["write"])
            flash = extend_step_figure(c, t.get("flash"), t["write"])
            log("%s: the step of %d layers (windows %s): each layer's K / V write (%.1f us) and its attention at the "
                "full layer's rate: cudnn %s, flash %s TFLOP/s (the full layer alone: cudnn %s, flash %s)" % (
                    c.case_id, len(c.layer_windows), "/".join(str(w) for w in c.layer_windows), t["write"],
                    fmt(cudnn), fmt(flash), fmt(layer[0]), fmt(layer[1])))
        elif not args.dry_run:
            cudnn, flash = measure_case(c, args.reps, args.warmup, args.rounds, log, c.case_id, round_log,
                                        not args.no_store)
        rows.append(anchor_row(c, att, cudnn, flash))
    write_anchors_csv(args.out, rows)
    # written on every run (header only with --dry-run), so no earlier run's rounds sit beside these rows
    write_rounds_csv(rounds_path(args.out), round_log)
    log("%d rows written to %s, %d rounds to %s" % (len(rows), args.out, len(round_log), rounds_path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Strips the SGLang 0.5.23 / FlashInfer 0.7.2 wheels to what the attention path imports and JIT-compiles, and
lays the result out as pre-extracted site trees of at most --part-mib each (for a machine without network,
scripts/h200_sglang.sh copies them into one site folder). A user with a normal `pip install sglang==0.5.23`
needs none of this.

  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
      --platform manylinux_2_28_x86_64 ... -d .whl sglang==0.5.23 flashinfer-python==0.7.2 apache-tvm-ffi==0.1.11 ...
  python3 scripts/sglang_site.py --wheels .whl --out .carry --part-mib 48 --tar [--all-python]

What is kept (everything else of the wheels is left out; the list is in each part's MANIFEST):
- Python: every module reachable by module-level imports (`import` statements outside function bodies,
  conditional ones included: a superset of what runs) from the attention path's roots (ROOTS), plus the
  function-level imports of the files that run on the measured path (HOP_DIRS / HOP_FILES), closed again
  under module-level imports; SGLang's and FlashInfer's *.dist-info/METADATA. Every other wheel (pyzmq with
  pyzmq.libs, pydantic(-core), msgspec, orjson, pybase64, jiter, tvm-ffi, openai, starlette, ...) whole: they pick
  compiled backends and submodules by name at import time (zmq.backend.select), which the scan cannot see.
- FlashInfer's JIT sources: the csrc files of the kernels SGLang's two backends call on SM90 (batch decode and
  prefill fa2 / fa3, cascade merge, page, XQA, fmha_v2; CSRC_KEEP, and every top-level csrc file whose name
  matches CSRC_NAMES), the headers those reach through #include (a textual scan, conditional lines included), and
  whole every include folder the JIT passes to nvcc: FlashInfer's include/, CUTLASS's include/ and
  tools/util/include, spdlog/include, CCCL's cub, libcudacxx/include and thrust (the vendored CCCL is -I, ahead of
  the toolkit's, so a header missing from it silently mixes two CCCL versions; CUTLASS also includes through
  macros, #include CUDA_STD_HEADER(utility), that a textual scan misses).
Left out: SGLang's Rust extensions, multimodal_gen, models, and everything not reached; FlashInfer's MoE,
GEMM, communication, experimental kernels and their sources (but for CSRC_NAMES matches); CUTLASS / CCCL
examples, tests, Python.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import os
import re
import shutil
import sys
import zipfile

ROOTS = [
    "sglang.srt.layers.attention.flashinfer_backend", "sglang.srt.layers.attention.trtllm_mha_backend",
    "sglang.srt.layers.attention.base_attn_backend", "sglang.srt.mem_cache.memory_pool",
    "sglang.srt.mem_cache.kv_index_translator", "sglang.srt.model_executor.forward_batch_info",
    "sglang.srt.layers.radix_attention", "sglang.srt.server_args", "sglang.srt.configs.model_config",
    "sglang.srt.environ", "sglang.srt.utils", "sglang.srt.utils.common", "sglang.srt.runtime_context",
    "sglang.srt.speculative.spec_info", "sglang.test.kits.attention_unittest",
    "sglang.kernels.ops.attention", "sglang.version",
    "flashinfer", "flashinfer.prefill", "flashinfer.decode", "flashinfer.xqa", "flashinfer.cascade",
    "flashinfer.page", "flashinfer.utils", "flashinfer.jit", "flashinfer.jit.attention", "flashinfer.jit.xqa",
    "tvm_ffi", "pydantic", "zmq", "msgspec", "orjson", "pybase64", "openai", "starlette", "dill",
]
# Files whose function-level imports run on the measured path (constructors, init_forward_metadata, forward_*).
HOP_DIRS = ["sglang/srt/layers/attention", "sglang/srt/mem_cache", "sglang/kernels/ops/attention",
            "sglang/srt/model_executor", "sglang/srt/utils", "sglang/test/kits/attention_unittest",
            "flashinfer/jit", "flashinfer/attention"]
# Whole trees of SGLang's own Python whose functions run on the path and import at call time from all over the
# package (server-args validation: sglang/srt/arg_groups/pipeline.py imports parallel_hook inside its functions):
# every .py kept and its function-level imports followed, but for the folders named in HOP_SKIP (the model
# classes, multimodal, disaggregation, ...: never reached by the attention path, and half the size). The H200
# runs of 2026-12-04 stopped twice on such an import before this.
HOP_TREES = ["sglang/srt"]
HOP_SKIP = ["sglang/srt/models", "sglang/srt/multimodal", "sglang/srt/disaggregation", "sglang/srt/hardware_backend",
            "sglang/srt/function_call", "sglang/srt/parser", "sglang/srt/lora", "sglang/srt/entrypoints",
            "sglang/srt/debug_utils", "sglang/srt/model_loader"]
HOP_FILES = ["flashinfer/prefill.py", "flashinfer/decode.py", "flashinfer/xqa.py", "flashinfer/utils.py",
             "flashinfer/cascade.py", "flashinfer/page.py", "flashinfer/__init__.py", "sglang/srt/environ.py",
             "sglang/srt/runtime_context.py", "sglang/srt/server_args.py"]
# FlashInfer csrc (data/csrc) of the kernels on the path, as globs relative to csrc.
CSRC_KEEP = ["batch_decode*", "batch_prefill*", "single_decode*", "single_prefill*", "cascade.cu",
             "flashinfer_cascade_binding.cu", "page.cu", "flashinfer_page_binding.cu", "xqa/*",
             "flashinfer_xqa_binding.cu", "fmha_v2/*", "fmha_v2_*", "*.h", "*.cuh", "logging.cc", "runtime*",
             "tvm_ffi_utils*", "pytorch_*",
             # segment_packbits: SGLang's verify path packs the EAGLE custom mask with it (the H200's third run
             # failed to JIT-compile FlashInfer's `quantization` module without these two)
             "quantization.cu", "flashinfer_quantization_binding.cu"]
# top-level names of SGLang's and FlashInfer's wheels (stripped); every other wheel in --wheels is kept whole
OWN_TOPS = ("sglang", "flashinfer")
OWN_DIST_INFO = ("sglang-", "flashinfer_python-")
# FlashInfer csrc top-level file names of the attention path (a superset of CSRC_KEEP's): kept whole
CSRC_NAMES = re.compile(r"prefill|decode|xqa|fmha_v2|page|cascade|sm90|trtllm")


def extract(wheels: str, into: str) -> None:
    for w in sorted(os.listdir(wheels)):
        if w.endswith(".whl"):
            with zipfile.ZipFile(os.path.join(wheels, w)) as z:
                z.extractall(into)


def resolve(site: str, mod: str):
    """A dotted name -> (files of the module and its packages' __init__, found)."""
    out, p = [], site
    parts = mod.split(".")
    for i, part in enumerate(parts):
        d = os.path.join(p, part)
        if os.path.isdir(d):
            init = os.path.join(d, "__init__.py")
            if os.path.exists(init):
                out.append(init)
            p = d
            continue
        if os.path.exists(d + ".py"):
            out.append(d + ".py")
            return out, True
        return out, False
    return out, True


def module_name(site: str, f: str) -> str:
    rel = os.path.relpath(f, site)[:-3].replace(os.sep, ".")
    return rel[:-9] if rel.endswith(".__init__") else rel


def imports(site: str, f: str, top_only: bool):
    try:
        with open(f, "rb") as fh:
            tree = ast.parse(fh.read())
    except SyntaxError:
        return
    me, is_pkg = module_name(site, f), f.endswith("__init__.py")
    todo = [tree]
    while todo:
        n = todo.pop()
        for c in ast.iter_child_nodes(n):
            if top_only and isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            todo.append(c)
        if isinstance(n, ast.Import):
            for a in n.names:
                yield a.name
        elif (isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "import_module"
              and n.args and isinstance(n.args[0], ast.JoinedStr) and n.args[0].values
              and isinstance(n.args[0].values[0], ast.FormattedValue)
              and getattr(n.args[0].values[0].value, "id", "") == "__name__"):
            # A package importing its own submodules by a list of names (sglang/kernels/ops/__init__.py:
            # `for _group in _GROUPS: import_module(f"{__name__}.{_group}")`): every string of the module's
            # top-level tuples and lists is taken as a submodule name (a superset; names that are not modules
            # resolve to nothing).
            for a in tree.body:
                if isinstance(a, (ast.Assign, ast.AnnAssign)) and isinstance(a.value, (ast.Tuple, ast.List)):
                    for e in a.value.elts:
                        if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.isidentifier():
                            yield me + "." + e.value
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = me.split(".") if is_pkg else me.split(".")[:-1]
                base = base[:len(base) - (n.level - 1)]
                m = ".".join(base + ([n.module] if n.module else []))
            else:
                m = n.module or ""
            yield m
            for a in n.names:
                yield m + "." + a.name


def closure(site: str, roots, extra_files=()) -> set:
    seen, stack = set(), []

    def add(m):
        for f in resolve(site, m)[0]:
            if f not in seen:
                seen.add(f)
                stack.append(f)
    for r in roots:
        add(r)
    for f in extra_files:
        if f not in seen:
            seen.add(f)
            stack.append(f)
    while stack:
        for m in imports(site, stack.pop(), top_only=True):
            add(m)
    return seen


def python_keep(site: str) -> set:
    keep = closure(site, ROOTS)
    hop_sources = [os.path.join(site, f) for f in HOP_FILES]
    for d in HOP_DIRS:
        for dp, _, fs in os.walk(os.path.join(site, d)):
            hop_sources += [os.path.join(dp, f) for f in fs if f.endswith(".py")]
    skip = tuple(os.path.join(site, d) for d in HOP_SKIP)
    for d in HOP_TREES:
        for dp, dns, fs in os.walk(os.path.join(site, d)):
            dns[:] = [x for x in dns if x != "__pycache__" and not os.path.join(dp, x).startswith(skip)]
            hop_sources += [os.path.join(dp, f) for f in fs if f.endswith(".py")]
    hop_roots = set()
    for f in hop_sources:
        if os.path.exists(f):
            hop_roots.update(imports(site, f, top_only=False))
    keep |= closure(site, sorted(hop_roots), [f for f in hop_sources if os.path.exists(f)])
    # the third-party wheels whole (every file: .py, compiled extensions, .libs, dist-info): they pick backends
    # and submodules at import time by name (pyzmq's zmq.backend.select imports zmq.backend.cython / cffi), which
    # the import scan cannot see
    for top in os.listdir(site):
        if top in OWN_TOPS or top.startswith(OWN_DIST_INFO):
            continue
        for dp, dns, fs in os.walk(os.path.join(site, top)):
            dns[:] = [x for x in dns if x != "__pycache__"]
            keep.update(os.path.join(dp, f) for f in fs)
    for e in os.listdir(site):
        if e.endswith(".dist-info"):
            keep.add(os.path.join(site, e, "METADATA"))
        if e.endswith(".py") and os.path.isfile(os.path.join(site, e)):
            keep.add(os.path.join(site, e))  # typing_extensions.py
    # SGLang's JIT kernel folder whole: sglang/kernels/jit/utils/compile/paths.py resolves its source folder at
    # import time ("Cannot find sglang.kernels.jit path" on the H200 when only its .py files were kept)
    jit = os.path.join(site, "sglang", "kernels", "jit")
    for dp, dns, fs in os.walk(jit):
        dns[:] = [x for x in dns if x != "__pycache__"]
        keep.update(os.path.join(dp, f) for f in fs)
    # package data the kept modules read at import time (py.typed, version files)
    for f in list(keep):
        d = os.path.dirname(f)
        for x in ("py.typed", "_build_meta.py", "VERSION"):
            if os.path.exists(os.path.join(d, x)):
                keep.add(os.path.join(d, x))
    return keep


INCLUDE = re.compile(rb'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def flashinfer_data_keep(site: str) -> set:
    data = os.path.join(site, "flashinfer", "data")
    csrc = os.path.join(data, "csrc")
    dirs = [os.path.join(data, "include"), csrc, os.path.join(data, "cutlass", "include"),
            os.path.join(data, "cutlass", "tools", "util", "include"), os.path.join(data, "spdlog", "include"),
            os.path.join(data, "cccl", "cub"), os.path.join(data, "cccl", "libcudacxx", "include"),
            os.path.join(data, "cccl", "thrust")]
    start = []
    for dp, _, fs in os.walk(csrc):
        for f in fs:
            rel = os.path.relpath(os.path.join(dp, f), csrc)
            # a glob without "/" names files at the top of csrc only
            if any(fnmatch.fnmatch(rel, g) and ("/" in g or "/" not in rel) for g in CSRC_KEEP):
                start.append(os.path.join(dp, f))
        for f in fs:
            if dp == csrc and CSRC_NAMES.search(f):
                start.append(os.path.join(dp, f))
    # the include folders the JIT puts on the command line, whole: the vendored CCCL comes first (-I) and a header
    # missing from it falls through to the toolkit's own, other-version copy; CUTLASS includes through macros
    # (#include CUDA_STD_HEADER(utility)) that a textual scan misses
    for d in dirs:
        if d == csrc:
            continue
        for dp, dns, fs in os.walk(d):
            dns[:] = [x for x in dns if x != "__pycache__"]
            start += [os.path.join(dp, f) for f in fs]
    for f in ("build_utils.py", "build_backend.py"):
        if os.path.exists(os.path.join(data, f)):
            start.append(os.path.join(data, f))
    keep, stack = set(start), list(start)
    while stack:
        f = stack.pop()
        try:
            text = open(f, "rb").read()
        except OSError:
            continue
        for inc in INCLUDE.findall(text):
            inc = inc.decode(errors="replace")
            for base in [os.path.dirname(f)] + dirs:
                p = os.path.normpath(os.path.join(base, inc))
                if os.path.isfile(p):
                    if p not in keep:
                        keep.add(p)
                        stack.append(p)
                    break
    return keep


def write_parts(site: str, keep: set, out: str, part_bytes: int, prefix: str) -> list:
    files = sorted(keep, key=lambda f: os.path.relpath(f, site))
    parts, cur, size = [], [], 0
    for f in files:
        b = os.path.getsize(f)
        if cur and size + b > part_bytes:
            parts.append(cur)
            cur, size = [], 0
        cur.append(f)
        size += b
    if cur:
        parts.append(cur)
    names = []
    for i, fs in enumerate(parts, start=1):
        name = f"{prefix}{i}"
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        for f in fs:
            dst = os.path.join(d, "site", os.path.relpath(f, site))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(f, dst)
        names.append((name, d, fs))
    for i, (name, d, fs) in enumerate(names, start=1):
        with open(os.path.join(d, "MANIFEST"), "w") as m:
            m.write(f"part {i} of {len(names)}\n")
            for f in fs:
                m.write(f"{os.path.getsize(f)} {os.path.relpath(f, site)}\n")
    return names


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheels", required=True, help="folder of the downloaded wheels")
    ap.add_argument("--out", required=True, help="folder that receives sgl1, sgl2, ... (each site/ + MANIFEST)")
    ap.add_argument("--part-mib", type=float, default=48.0, help="the most bytes of one part, MiB")
    ap.add_argument("--work", default="/tmp/sglang_site_work", help="scratch folder for the extracted wheels")
    ap.add_argument("--reuse", action="store_true", help="keep the wheels extracted in --work by an earlier run")
    ap.add_argument("--all-python", action="store_true",
                    help="with --tar: the archive (OUT/sgl-full/sgl.tar.gz) also holds every Python file of SGLang "
                         "(but multimodal_gen) and FlashInfer (but data/ and experimental/): a hedge against a "
                         "module the import scan missed")
    ap.add_argument("--tar", action="store_true", help="also write OUT/sgl-all/sgl.tar.gz: every part (and the "
                                                       "markers scripts/h200_sglang.sh reads) in one archive")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.wheels):
        print(f"sglang_site: error: --wheels: no folder '{a.wheels}'", file=sys.stderr)
        return 2
    site = os.path.join(a.work, "site")
    if not (a.reuse and os.path.isdir(site)):
        shutil.rmtree(a.work, ignore_errors=True)
        extract(a.wheels, site)
    keep = python_keep(site) | flashinfer_data_keep(site)
    total = sum(os.path.getsize(f) for f in keep)
    parts = write_parts(site, keep, a.out, int(a.part_mib * (1 << 20)), "sgl")
    for name, d, fs in parts:
        print(f"{name}: {len(fs)} files, {sum(os.path.getsize(f) for f in fs) / (1 << 20):.1f} MiB -> {d}")
    print(f"kept {len(keep)} files, {total / (1 << 20):.1f} MiB, in {len(parts)} part(s)")
    if a.tar:
        import tarfile  # noqa: PLC0415
        d = os.path.join(a.out, "sgl-full" if a.all_python else "sgl-all")
        os.makedirs(d, exist_ok=True)
        with tarfile.open(os.path.join(d, "sgl.tar.gz"), "w:gz") as t:
            if a.all_python:
                skip = ("flashinfer/data", "flashinfer/experimental", "sglang/multimodal_gen")
                for top in ("sglang", "flashinfer", "openai", "pydantic", "starlette"):
                    for dp, dns, fs in os.walk(os.path.join(site, top)):
                        rel = os.path.relpath(dp, site)
                        dns[:] = [x for x in dns if os.path.join(rel, x) not in skip and x != "__pycache__"]
                        for f in fs:
                            p = os.path.join(dp, f)
                            if f.endswith(".py") and p not in keep:
                                t.add(p, arcname=os.path.relpath(p, site))
            for i, (name, pd, fs) in enumerate(parts, start=1):
                t.add(os.path.join(pd, "site"), arcname=".")
                marker = os.path.join(a.work, f".{name}.installed")
                with open(marker, "w") as m:
                    m.write(f"part {i} of {len(parts)}\n")
                t.add(marker, arcname=f".{name}.installed")
        print(f"all parts: {os.path.getsize(os.path.join(d, 'sgl.tar.gz')) / (1 << 20):.1f} MiB -> {d}/sgl.tar.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

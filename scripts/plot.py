#!/usr/bin/env python3
"""Draws PNG figures from an attnbench results CSV (docs/csv-schema.md, version 1).

    python3 scripts/plot.py RESULTS.csv --out DIR [--memory-csv MEMORY.csv]

Figures (a handful of files, whatever the number of cases):
  latency_<model>.png    step latency (median, p10-p90 bars) vs batch and vs context, one row of panels per
                         mode, one colour per backend, one marker per context (resp. batch); log axes. Graph
                         timing where the mode has graph rows (what SGLang serves decode with), else eager.
  bandwidth_fraction.png KV bytes moved per step / time, as a fraction of the copy bandwidth measured in the
                         same run, vs batch x context, decode and verify (memory-bound), one panel per model.
  memory_rows.png        stacked bars per backend: construct / graph state / capture, device and pinned, from
                         the rows' memory columns of one case per model (the first case every backend ran).
  memory_tags.png        with --memory-csv (`attnbench memory --format csv`): stacked bars per backend by tag.

Prints the path of every file written. Exits 2 with one line on stderr for bad input (missing file, missing
column, a cell that is not a number, no ok rows), 1 when matplotlib cannot be imported.
Only the standard library and matplotlib (Debian python3-matplotlib, Agg backend) are used.
"""

import argparse
import csv
import os
import sys
from collections import OrderedDict

RESULT_COLUMNS = [
    "case_id", "backend", "mode", "timing", "status", "model", "batch", "kv_len_mean",
    "step_median_us", "step_p10_us", "step_p90_us", "bw_fraction",
    "ctor_device_bytes", "ctor_pinned_bytes", "graph_state_device_bytes",
    "capture_device_bytes", "capture_pinned_bytes",
]
NUMERIC = {"batch", "kv_len_mean", "step_median_us", "step_p10_us", "step_p90_us", "bw_fraction",
           "ctor_device_bytes", "ctor_pinned_bytes", "graph_state_device_bytes", "capture_device_bytes",
           "capture_pinned_bytes"}
MEMORY_COLUMNS = ["backend", "phase", "tag", "kind", "bytes"]

# Fixed colours per backend so that every figure agrees; others cycle through the rest.
BACKEND_STYLE = OrderedDict([
    ("flashinfer", dict(color="#1f77b4", linestyle="-")),
    ("trtllm_mha", dict(color="#d62728", linestyle="-")),
    ("trtllm_mha_legacy", dict(color="#2ca02c", linestyle="--")),  # dashed: it overlays trtllm_mha exactly
])
OTHER_COLORS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
MIB = 1024.0 * 1024.0


class BadInput(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


def read_csv(path, required, numeric, what):
    """Rows of `path` as dicts (numeric columns as float or None when empty); BadInput when unreadable."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            if not header:
                raise BadInput(f"{what} {path}: empty file, no header")
            missing = [c for c in required if c not in header]
            if missing:
                raise BadInput(f"{what} {path}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
            rows = []
            for row in reader:
                for c in numeric:
                    cell = (row.get(c) or "").strip()
                    if cell == "":
                        row[c] = None
                        continue
                    try:
                        row[c] = float(cell)
                    except ValueError:
                        raise BadInput(f"{what} {path} line {reader.line_num}: {c} '{cell}' is not a number") from None
                rows.append(row)
            return rows
    except OSError as e:
        raise BadInput(f"{what} {path}: cannot read ({e.strerror})") from None
    except csv.Error as e:
        raise BadInput(f"{what} {path}: malformed CSV ({e})") from None


def backend_style(backend, order):
    if backend in BACKEND_STYLE:
        return BACKEND_STYLE[backend]
    i = [b for b in order if b not in BACKEND_STYLE].index(backend)
    return dict(color=OTHER_COLORS[i % len(OTHER_COLORS)], linestyle="-")


def ordered_unique(values):
    return list(OrderedDict.fromkeys(values))


def preferred_timing(rows):
    """graph when any row of `rows` is a graph row, else eager."""
    return "graph" if any(r["timing"] == "graph" for r in rows) else "eager"


def context_label(v):
    """Tokens as "1k" / "4k" / "16k" when within 5% of a whole number of Ki-tokens (means like 1025 or 4100
    are a decode's +1 or a verify's draft tokens), else "1.5k" or the plain number."""
    if v >= 1024:
        k = v / 1024
        return f"{round(k)}k" if abs(k - round(k)) < 0.05 * k else f"{k:.1f}k"
    return f"{v:g}"


def series(rows, x_col, group_col):
    """{(backend, group value): sorted [(x, median, p10, p90)]}; duplicates at one x keep the smallest median."""
    out = OrderedDict()
    for r in rows:
        key = (r["backend"], r[group_col])
        pts = out.setdefault(key, {})
        x = r[x_col]
        if x not in pts or r["step_median_us"] < pts[x][0]:
            pts[x] = (r["step_median_us"], r["step_p10_us"], r["step_p90_us"])
    return OrderedDict((k, sorted((x,) + v for x, v in pts.items())) for k, pts in out.items())


def plot_latency_panel(ax, rows, x_col, group_col, backends, group_name, plt):
    xs = sorted({r[x_col] for r in rows})
    if len(xs) < 2:  # one value only: a line against it says nothing (the other panel shows these rows)
        ax.text(0.5, 0.5, f"one {x_col} value only ({context_label(xs[0]) if x_col == 'kv_len_mean' else f'{xs[0]:g}'})",
                ha="center", va="center", transform=ax.transAxes, color="gray")
        ax.set_xticks([])
        ax.set_yticks([])
        return
    groups = sorted({r[group_col] for r in rows})
    marker_of = {g: MARKERS[i % len(MARKERS)] for i, g in enumerate(groups)}
    for (backend, g), pts in series(rows, x_col, group_col).items():
        st = backend_style(backend, backends)
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        lo = [p[1] - (p[2] if p[2] is not None else p[1]) for p in pts]
        hi = [(p[3] if p[3] is not None else p[1]) - p[1] for p in pts]
        hollow = backend == "trtllm_mha_legacy"
        ax.errorbar(xs, ys, yerr=[lo, hi], color=st["color"], linestyle=st["linestyle"], marker=marker_of[g],
                    markersize=5, linewidth=1.2, capsize=2, markerfacecolor="none" if hollow else st["color"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xticks(xs)
    ax.set_xticklabels([context_label(x) if x_col == "kv_len_mean" else f"{x:g}" for x in xs])
    ax.minorticks_off()
    # Two legends in one: colours = backends, markers = the other axis.
    handles = [plt.Line2D([], [], label=b, **backend_style(b, backends)) for b in ordered_unique(r["backend"] for r in rows)]
    handles += [plt.Line2D([], [], color="gray", linestyle="none", marker=marker_of[g],
                           label=f"{group_name}={context_label(g) if group_col == 'kv_len_mean' else f'{g:g}'}")
                for g in groups]
    ax.legend(handles=handles, fontsize=7, ncol=2, loc="best")


def plot_latency(rows, out_dir, plt):
    written = []
    backends = ordered_unique(r["backend"] for r in rows)
    for model in ordered_unique(r["model"] for r in rows):
        by_mode = OrderedDict()
        for mode in ordered_unique(r["mode"] for r in rows if r["model"] == model):
            mr = [r for r in rows if r["model"] == model and r["mode"] == mode]
            timing = preferred_timing(mr)
            mr = [r for r in mr if r["timing"] == timing and r["step_median_us"] is not None
                  and r["batch"] is not None and r["kv_len_mean"] is not None]
            if mr:
                by_mode[(mode, timing)] = mr
        if not by_mode:
            continue
        fig, axes = plt.subplots(len(by_mode), 2, figsize=(12, 3.6 * len(by_mode)), squeeze=False)
        for i, ((mode, timing), mr) in enumerate(by_mode.items()):
            plot_latency_panel(axes[i][0], mr, "batch", "kv_len_mean", backends, "ctx", plt)
            axes[i][0].set_xlabel("batch (requests)")
            axes[i][0].set_ylabel("step latency, µs (median, p10-p90)")
            axes[i][0].set_title(f"{mode}, {timing}: latency vs batch", fontsize=10)
            plot_latency_panel(axes[i][1], mr, "kv_len_mean", "batch", backends, "b", plt)
            axes[i][1].set_xlabel("context (mean KV length, tokens)")
            axes[i][1].set_title(f"{mode}, {timing}: latency vs context", fontsize=10)
        layers = ordered_unique(r.get("layers", "") for mr in by_mode.values() for r in mr)
        fig.suptitle(f"{model}: step latency (one step = metadata + {'/'.join(layers)} layers)", fontsize=12)
        fig.tight_layout()
        path = os.path.join(out_dir, f"latency_{safe_name(model)}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def plot_bandwidth(rows, out_dir, plt):
    backends = ordered_unique(r["backend"] for r in rows)
    models = ordered_unique(r["model"] for r in rows)
    panels = []
    for model in models:
        pts = []
        for mode in ("decode", "verify"):
            mr = [r for r in rows if r["model"] == model and r["mode"] == mode]
            timing = preferred_timing(mr)
            pts += [r for r in mr if r["timing"] == timing and r["bw_fraction"] is not None
                    and r["batch"] is not None and r["kv_len_mean"] is not None]
        if pts:
            panels.append((model, pts))
    if not panels:
        return []
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2), squeeze=False, sharey=True)
    for ax, (model, pts) in zip(axes[0], panels):
        modes = ordered_unique(r["mode"] for r in pts)
        for backend in ordered_unique(r["backend"] for r in pts):
            st = backend_style(backend, backends)
            for j, mode in enumerate(modes):
                sel = sorted(((r["batch"] * r["kv_len_mean"], r["bw_fraction"]) for r in pts
                              if r["backend"] == backend and r["mode"] == mode))
                if not sel:
                    continue
                hollow = backend == "trtllm_mha_legacy"
                ax.scatter([s[0] for s in sel], [s[1] for s in sel], color=st["color"], marker=MARKERS[j],
                           facecolors="none" if hollow else st["color"], s=28 if hollow else 18,
                           label=f"{backend} {mode}")
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("batch x context (KV tokens per step)")
        ax.set_title(model, fontsize=10)
        ax.legend(fontsize=7, loc="upper left")
    axes[0][0].set_ylabel("KV read bandwidth / measured copy bandwidth")
    fig.suptitle("Bandwidth fraction (decode and verify; graph timing where measured)", fontsize=12)
    fig.tight_layout()
    path = os.path.join(out_dir, "bandwidth_fraction.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return [path]


def memory_case(rows, model):
    """The rows (by backend) of the first case of `model` every backend ran ok, preferring a graph row."""
    mr = [r for r in rows if r["model"] == model and r["ctor_device_bytes"] is not None]
    backends = ordered_unique(r["backend"] for r in rows if r["model"] == model)
    for want_graph in (True, False):
        groups = OrderedDict()
        for r in mr:
            if want_graph and r["timing"] != "graph":
                continue
            groups.setdefault((r["case_id"], r["timing"]), {}).setdefault(r["backend"], r)
        for (case_id, timing), by_backend in groups.items():
            if all(b in by_backend for b in backends):
                return case_id, timing, [by_backend[b] for b in backends]
    return None


def stacked_bars(ax, labels, components, colors, plt):
    """Bars at 0..n-1, `components` = [(name, [bytes per bar])], stacked in MiB, total printed on top, with
    headroom above the tallest bar for its label."""
    bottoms = [0.0] * len(labels)
    for (name, values), color in zip(components, colors):
        mib = [(v or 0) / MIB for v in values]
        ax.bar(range(len(labels)), mib, bottom=bottoms, color=color, label=name, width=0.7)
        bottoms = [b + m for b, m in zip(bottoms, mib)]
    for i, total in enumerate(bottoms):
        ax.text(i, total, f"{total:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, max(bottoms + [1.0]) * 1.1)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylabel("MiB")
    ax.grid(True, axis="y", alpha=0.3)


def plot_memory_rows(rows, out_dir, plt):
    panels = []
    for model in ordered_unique(r["model"] for r in rows):
        picked = memory_case(rows, model)
        if picked:
            panels.append((model,) + picked)
    if not panels:
        return []
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.6), squeeze=False)
    for ax, (model, case_id, timing, picked) in zip(axes[0], panels):
        labels = []
        comps = OrderedDict((k, []) for k in ("construct", "graph state", "capture"))
        for r in picked:
            for kind in ("device", "pinned"):
                labels.append(f"{r['backend']}\n{kind}")
                comps["construct"].append(r[f"ctor_{kind}_bytes"])
                comps["graph state"].append(r["graph_state_device_bytes"] if kind == "device" else 0)
                comps["capture"].append(r[f"capture_{kind}_bytes"])
        stacked_bars(ax, labels, list(comps.items()), ["#4c72b0", "#dd8452", "#55a868"], plt)
        ax.set_title(f"{model}\n{case_id} ({timing})", fontsize=8)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8)
    fig.suptitle("Memory per backend, MiB (ledger, requested bytes; the rows carry no graph-state pinned part)",
                 fontsize=12)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    path = os.path.join(out_dir, "memory_rows.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return [path]


def tag_label(phase, tag):
    """Groups like tags: 'flashinfer.decode_wrappers[0].int_workspace' -> 'construct: flashinfer.*.int_workspace'
    (owner and buffer name, whatever wrapper or index holds it); 'flashinfer.workspace_buffer' stays."""
    parts = [p.split("[")[0] for p in tag.split(".")]
    if len(parts) > 2:
        parts = [parts[0], "*", parts[-1]]
    return f"{phase}: {'.'.join(parts)}"


def plot_memory_tags(mem_rows, out_dir, plt):
    backends = ordered_unique(r["backend"] for r in mem_rows)
    bars = [(b, k) for b in backends for k in ("device", "pinned")]
    totals = OrderedDict()  # label -> {bar: bytes}
    for r in mem_rows:
        if r["kind"] not in ("device", "pinned") or not r["bytes"]:
            continue
        totals.setdefault(tag_label(r["phase"], r["tag"]), {}).setdefault((r["backend"], r["kind"]), 0.0)
        totals[tag_label(r["phase"], r["tag"])][(r["backend"], r["kind"])] += r["bytes"]
    if not totals:
        return []
    # Tags under 2% of the largest bar fold into "other" per phase, so the legend stays readable.
    largest = max(sum(v.get(bar, 0) for v in totals.values()) for bar in bars) or 1
    comps = OrderedDict()
    for label, per_bar in totals.items():
        name = label if max(per_bar.values()) >= 0.02 * largest else label.split(":")[0] + ": other"
        dst = comps.setdefault(name, [0.0] * len(bars))
        for i, bar in enumerate(bars):
            dst[i] += per_bar.get(bar, 0)
    # Phases in lifecycle order, "other" last within its phase.
    phase_rank = {"construct": 0, "graph_state": 1, "capture": 2}
    comps = OrderedDict(sorted(comps.items(), key=lambda kv: (phase_rank.get(kv[0].split(":")[0], 3),
                                                              kv[0].endswith(": other"))))
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(11, 5.5))
    stacked_bars(ax, [f"{b}\n{k}" for b, k in bars], list(comps.items()), [cmap(i % 20) for i in range(len(comps))], plt)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("attnbench memory: per backend by tag (construct, graph state, capture)", fontsize=11)
    fig.tight_layout()
    path = os.path.join(out_dir, "memory_tags.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return [path]


def safe_name(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def import_pyplot():
    """matplotlib.pyplot with the Agg backend. Where this interpreter lacks matplotlib (e.g. a pyenv python
    shadowing Debian's), re-runs the script once with /usr/bin/python3, which python3-matplotlib serves."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if os.environ.get("ATTNBENCH_PLOT_REEXEC") != "1" and os.path.exists(system) \
                and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.environ["ATTNBENCH_PLOT_REEXEC"] = "1"
            sys.stdout.flush()
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        print("plot.py: matplotlib is not installed for " + sys.executable +
              " (Debian: apt-get install -y python3-matplotlib)", file=sys.stderr)
        sys.exit(1)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def main(argv):
    parser = argparse.ArgumentParser(description="PNG figures from an attnbench results CSV.")
    parser.add_argument("results", help="results CSV written by `attnbench run --out`")
    parser.add_argument("--out", required=True, help="output directory (created when missing)")
    parser.add_argument("--memory-csv", help="`attnbench memory --format csv` output: adds memory_tags.png")
    args = parser.parse_args(argv)
    try:
        rows = read_csv(args.results, RESULT_COLUMNS, NUMERIC, "results")
        rows = [r for r in rows if r["status"] == "ok"]
        if not rows:
            raise BadInput(f"results {args.results}: no rows with status ok, nothing to plot")
        mem_rows = read_csv(args.memory_csv, MEMORY_COLUMNS, {"bytes"}, "memory") if args.memory_csv else None
        if mem_rows is not None and not mem_rows:
            raise BadInput(f"memory {args.memory_csv}: no rows")
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise BadInput(f"--out {args.out}: cannot create ({e.strerror})") from None
    except BadInput as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    plt = import_pyplot()
    plt.rcParams.update({"font.size": 8})
    written = plot_latency(rows, args.out, plt) + plot_bandwidth(rows, args.out, plt) + plot_memory_rows(rows, args.out, plt)
    if mem_rows:
        written += plot_memory_tags(mem_rows, args.out, plt)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

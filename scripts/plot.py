#!/usr/bin/env python3
"""Draws PNG figures from an attnbench results CSV (docs/csv-schema.md, version 1).

    python3 scripts/plot.py RESULTS.csv --out DIR [--memory-csv MEMORY.csv]

Figures (a handful of files, whatever the number of cases):
  ratio_<model>.png      the point of the change: per mode (graph timing where the mode has graph rows, else
                         eager), per case, the step-time ratios trtllm_mha / trtllm_mha_legacy and
                         trtllm_mha / flashinfer, each with its noise band (p10/p90 - p90/p10, the band
                         `attnbench report` prints for rows without raw samples); 1.0 dotted. Modes without
                         a ratio get no panel; the legend sits below the panels.
  bandwidth_fraction.png the rows' bw_fraction (KV bytes moved per step / forward time, over the read-only
                         bandwidth probe of the same run; results written before 2026-12-01 divided by the
                         copy bandwidth) vs batch x context, decode and verify (memory-bound), one panel per model.
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


# The ratios a reviewer of the change needs: the change's candidate over its baseline (same kernels: ~1.0 is
# "no behavioural change") and over FlashInfer (what else SGLang could serve with). Pairs missing in a file
# are left out.
RATIO_PAIRS = [("trtllm_mha", "trtllm_mha_legacy"), ("trtllm_mha", "flashinfer")]
PAIR_STYLE = {("trtllm_mha", "trtllm_mha_legacy"): dict(color="#d62728", marker="o"),
              ("trtllm_mha", "flashinfer"): dict(color="#1f77b4", marker="s")}


def ratio_band(a, b):
    """(ratio, lo, hi) of two rows' step times: median(a) / median(b), and the noise band p10(a) / p90(b) to
    p90(a) / p10(b) (a fast step of one over a slow step of the other), widened to hold the ratio; the same
    definition as `attnbench report` uses for rows without raw samples. lo = hi = ratio when a percentile is
    missing. None when a median is missing or not positive."""
    ma, mb = a.get("step_median_us"), b.get("step_median_us")
    if not ma or not mb or ma <= 0 or mb <= 0:
        return None
    r = ma / mb
    p10a, p90a, p10b, p90b = (a.get("step_p10_us"), a.get("step_p90_us"), b.get("step_p10_us"), b.get("step_p90_us"))
    if None in (p10a, p90a, p10b, p90b) or p10b <= 0 or p90b <= 0:
        return r, r, r
    return r, min(p10a / p90b, r), max(p90a / p10b, r)


def token_label(v):
    """Token counts for an axis: 512, 2k, 128k, 2M (powers of two as Ki / Mi tokens)."""
    if v >= 1024 * 1024:
        return f"{v / (1024 * 1024):g}M"
    if v >= 1024:
        return f"{v / 1024:g}k"
    return f"{v:g}"


def case_labels(case_ids):
    """Short tick labels: the segments of the case ids that differ between them ("b=64\nkv=4096"), so that
    the model, dtype and page size shared by every case of a panel do not crowd the axis."""
    parts = [c.split("/") for c in case_ids]
    n = max(len(p) for p in parts)
    varying = [i for i in range(n) if len({p[i] if i < len(p) else "" for p in parts}) > 1]
    if not varying:
        return ["" for _ in case_ids]
    return ["\n".join(p[i] for i in varying if i < len(p)) for p in parts]


def ratio_points(rows):
    """{(mode, timing): (case ids in batch / context order, {pair: [(x index, ratio, lo, hi)]})} for the modes of
    `rows` (one model) that have at least one ratio; graph timing where the mode has graph rows (what SGLang
    serves decode with), else eager. Modes without any ratio are left out: no empty panels."""
    out = OrderedDict()
    for mode in ordered_unique(r["mode"] for r in rows):
        mr = [r for r in rows if r["mode"] == mode]
        timing = preferred_timing(mr)
        by_case = OrderedDict()
        for r in mr:
            if r["timing"] == timing:
                by_case.setdefault(r["case_id"], {})[r["backend"]] = r
        cases = sorted(by_case, key=lambda c: (next(iter(by_case[c].values()))["batch"] or 0,
                                               next(iter(by_case[c].values()))["kv_len_mean"] or 0, c))
        pairs = OrderedDict()
        for a, b in RATIO_PAIRS:
            pts = []
            for i, c in enumerate(cases):
                if a in by_case[c] and b in by_case[c]:
                    band = ratio_band(by_case[c][a], by_case[c][b])
                    if band:
                        pts.append((i,) + band)
            if pts:
                pairs[(a, b)] = pts
        if pairs:
            used = sorted({p[0] for pts in pairs.values() for p in pts})
            keep = [cases[i] for i in used]
            remap = {old: new for new, old in enumerate(used)}
            pairs = OrderedDict((k, [(remap[p[0]],) + p[1:] for p in pts]) for k, pts in pairs.items())
            out[(mode, timing)] = (keep, pairs)
    return out


def plot_ratio_panel(ax, cases, pairs):
    n_pairs = len(pairs)
    for k, ((a, b), pts) in enumerate(pairs.items()):
        st = PAIR_STYLE.get((a, b), dict(color=OTHER_COLORS[k % len(OTHER_COLORS)], marker=MARKERS[k % len(MARKERS)]))
        off = (k - (n_pairs - 1) / 2) * 0.18  # side by side, so that equal bands do not hide each other
        xs = [p[0] + off for p in pts]
        ys = [p[1] for p in pts]
        ax.errorbar(xs, ys, yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]], linestyle="none",
                    capsize=2, markersize=4, linewidth=1.0, label=f"{a} / {b}", **st)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xticks(range(len(cases)))
    labels = case_labels(cases)
    ax.set_xticklabels(labels, fontsize=7, rotation=0 if len(cases) <= 12 else 60,
                       ha="center" if len(cases) <= 12 else "right")
    ax.set_xlim(-0.6, len(cases) - 0.4)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_ylabel("step-time ratio (median;\nband: p10/p90 - p90/p10)")


def plot_ratios(rows, out_dir, plt):
    """ratio_<model>.png: one panel per mode with ratios, the legend below the panels (never on the data)."""
    written = []
    for model in ordered_unique(r["model"] for r in rows):
        mr = [r for r in rows if r["model"] == model and r["step_median_us"] is not None]
        panels = ratio_points(mr)
        if not panels:
            continue
        widest = max(len(cases) for cases, _ in panels.values())
        fig, axes = plt.subplots(len(panels), 1, figsize=(max(7.0, 0.55 * widest + 2), 3.0 * len(panels) + 0.8),
                                 squeeze=False)
        handles, names = [], []
        for ax, ((mode, timing), (cases, pairs)) in zip(axes[:, 0], panels.items()):
            plot_ratio_panel(ax, cases, pairs)
            ax.set_title(f"{mode} ({timing} timing): below 1 = trtllm_mha faster", fontsize=9)
            for h, n in zip(*ax.get_legend_handles_labels()):
                if n not in names:
                    handles.append(h)
                    names.append(n)
        layers = ordered_unique(r.get("layers", "") for r in mr)
        fig.suptitle(f"{model}: step-time ratios per case (one step = metadata + {'/'.join(layers)} layers)",
                     fontsize=11)
        fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.07 if len(panels) == 1 else 0.04, 1, 1))
        path = os.path.join(out_dir, f"ratio_{safe_name(model)}.png")
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
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.8), squeeze=False, sharey=True)
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
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: token_label(v)))
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("batch x context (KV tokens per step)")
        ax.set_title(model, fontsize=10)
    axes[0][0].set_ylabel("bw_fraction: KV read bandwidth / read-only probe")
    # One legend for every panel, below them: never on the data.
    handles, names = [], []
    for ax in axes[0]:
        for h, n in zip(*ax.get_legend_handles_labels()):
            if n not in names:
                handles.append(h)
                names.append(n)
    fig.legend(handles, names, loc="lower center", ncol=min(len(names), 4), fontsize=7, frameon=False)
    fig.suptitle("Bandwidth fraction (decode and verify; graph timing where measured)", fontsize=12)
    fig.tight_layout(rect=(0, 0.06 * ((len(names) + 3) // 4), 1, 1))
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
    written = plot_ratios(rows, args.out, plt) + plot_bandwidth(rows, args.out, plt) + plot_memory_rows(rows, args.out, plt)
    if mem_rows:
        written += plot_memory_tags(mem_rows, args.out, plt)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""bench/lib/day_targets.py
     Issue 45's targets for a server's day, before and after side by side:
     from the output directories of bench/scale.sh and bench/steady.sh of
     two runs (each a directory holding scale.csv-style rounds.csv and
     steady.csv), a Markdown table with, per target, the value of each run
     and its verdict:
       - steady-state TPC-B: nvm's tps >= 1.5 x heap's (per-round ratio);
       - server-side TPC-C, checkpoints inside the run: >= 1.3 x heap;
       - the checkpoint after the single-row updates: nvm's checkpoint
         files <= 1 MB, and its seconds <= heap's (per-round ratio <= 1);
       - a clean restart: WAL of the stop and start <= 1 MB at every size,
         the first query within 1.5 x heap's time;
       - recovery after a power loss, until every row answers: <= 1.5 x
         heap's time, at 2M and 10M rows.
     A value is the median of the rounds with their range.  The verdict:
     "met" when every round meets the target, "missed" when none does,
     "within noise" when some rounds do and some do not (the rounds are
     interleaved, so a verdict that differs between rounds is the noise of
     the machine, not of the engine).
     With --plot FILE, also a PNG of the scale family's costs against the
     rows, heap and nvm of both runs (medians of the rounds; matplotlib,
     skipped without it).
         day_targets.py [--plot FILE] BEFORE_SCALE BEFORE_STEADY AFTER_SCALE[,MORE...] AFTER_STEADY
     (a side's scale results may come from several directories, joined by
     commas, as when its sizes ran apart; a missing directory or size
     reads "not measured").
"""

import os
import statistics
import sys

from round_stats import fmt, num, read_rows as read

MB = 1048576


def scale_rounds(dirs):
    """rounds.csv of every directory of a comma-separated list."""
    out = []
    for d in dirs.split(","):
        out += read(os.path.join(d, "rounds.csv"))
    return out


def per_round(rows, value, ref="heap", mine="nvm", ratio=True):
    """Per-round values of mine (ratio: over ref's of the same round)."""
    by = {(r["contender"], r["round"]): value(r) for r in rows}
    out = []
    for (c, rnd), v in sorted(by.items()):
        if c != mine or v is None:
            continue
        if not ratio:
            out.append(v)
            continue
        w = by.get((ref, rnd))
        if w:
            out.append(v / w)
    return out


def cell(values, unit, ok):
    """'median (low–high) unit: verdict' of the rounds' values."""
    if not values:
        return "not measured"
    med, lo, hi = statistics.median(values), min(values), max(values)
    met = sum(1 for v in values if ok(v))
    verdict = "met" if met == len(values) else "missed" if met == 0 else "within noise"
    rng = "" if lo == hi else f" ({fmt(lo)}–{fmt(hi)})"
    return f"{fmt(med)}{rng}{unit}, {len(values)} rounds: **{verdict}**"


def targets(scale, steady):
    """[(target, cell)] of one side."""
    out = []
    for w, name, bound in [("tpcb", "steady-state TPC-B, nvm / heap tps", 1.5),
                           ("tpccsp-4wh", "server-side TPC-C, nvm / heap tps", 1.3)]:
        rs = [r for r in steady if r["workload"] == w]
        out.append((f"{name} ≥ {bound}", cell(per_round(rs, lambda r: num(r["tps"])), " ×",
                                             lambda v, b=bound: v >= b)))
    sizes = sorted({r["rows"] for r in scale}, key=int)

    def at(n):
        return [r for r in scale if r["rows"] == n]
    for n in sizes:
        rs = at(n)
        out.append((f"checkpoint after 200 updates, {int(n):,} rows: nvm's checkpoint files ≤ 1 MB",
                    cell(per_round(rs, lambda r: (num(r["ckpt_pool_bytes"]) or 0) / MB, ratio=False),
                         " MB", lambda v: v <= 1)))
        out.append((f"checkpoint after 200 updates, {int(n):,} rows: nvm / heap seconds ≤ 1",
                    cell(per_round(rs, lambda r: num(r["ckpt_s"])), " ×", lambda v: v <= 1)))
    for n in sizes:
        rs = at(n)
        out.append((f"clean restart, {int(n):,} rows: nvm's WAL of the stop and start ≤ 1 MB",
                    cell(per_round(rs, lambda r: num(r["restart_wal_bytes"]) / MB, ratio=False),
                         " MB", lambda v: v <= 1)))
        out.append((f"clean restart, {int(n):,} rows: first query, nvm / heap seconds ≤ 1.5",
                    cell(per_round(rs, lambda r: num(r["restart_s"])), " ×", lambda v: v <= 1.5)))
    for n in sizes:
        if int(n) < 2000000:
            continue
        rs = at(n)
        out.append((f"power loss, {int(n):,} rows: every row answers, nvm / heap seconds ≤ 1.5",
                    cell(per_round(rs, lambda r: num(r["recovery_all_s"])), " ×",
                         lambda v: v <= 1.5)))
    return out


# the plot's panels: (column of rounds.csv, title, unit, scale)
PANELS = [
    ("ckpt_bytes", "checkpoint after 200 updates: bytes written", "MB", MB),
    ("ckpt_s", "checkpoint after 200 updates", "s", 1),
    ("restart_wal_bytes", "clean restart: WAL of the stop and start", "MB", MB),
    ("restart_s", "clean restart: first query", "s", 1),
    ("recovery_all_s", "power loss: every row answers", "s", 1),
    ("recovery_first_s", "power loss: first query", "s", 1),
]


def plot(before, after, path):
    """path: each panel of PANELS against the rows, heap and nvm of both
    runs; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    for ax, (col, title, unit, div) in zip(axes.flat, PANELS):
        for side, rounds, dash in [("before", before, "--"), ("after", after, "-")]:
            for c, mark, color in [("heap", "o", "tab:blue"), ("nvm", "s", "tab:red")]:
                xs, ys = [], []
                for n in sorted({r["rows"] for r in rounds}, key=int):
                    vs = [num(r.get(col)) for r in rounds if r["rows"] == n and r["contender"] == c]
                    vs = [v / div for v in vs if v is not None]
                    if vs:
                        xs.append(int(n))
                        ys.append(statistics.median(vs))
                if xs:
                    ax.plot(xs, ys, dash + mark, color=color, label=f"{c}, {side}",
                            alpha=0.55 if side == "before" else 1.0)
        ax.set_xscale("log")
        # log above a floor, linear below it (bytes of WAL may be near 0)
        ax.set_yscale("symlog", linthresh=1e-3 if unit == "MB" else 1e-2)
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("rows")
        ax.set_ylabel(unit)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("A server's day against the table's size, before and after (medians of the rounds)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def main(argv):
    png = None
    if len(argv) > 2 and argv[1] == "--plot":
        png = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    if png and not plot(scale_rounds(argv[1]), scale_rounds(argv[3]), png):
        sys.stderr.write("no matplotlib: no plot\n")
    before = dict(targets(scale_rounds(argv[1]), read(os.path.join(argv[2], "steady.csv"))))
    after = dict(targets(scale_rounds(argv[3]), read(os.path.join(argv[4], "steady.csv"))))
    keys = list(dict.fromkeys(list(before) + list(after)))
    print("| target | before | after |")
    print("|---|---|---|")
    for k in keys:
        print(f"| {k} | {before.get(k, 'not measured')} | {after.get(k, 'not measured')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

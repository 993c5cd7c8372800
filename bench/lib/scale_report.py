#!/usr/bin/env python3
"""bench/lib/scale_report.py
     The report of bench/scale.sh: from DIR/sizes.csv and DIR/rounds.csv,
     DIR/summary.md (DIR/settings.md, then per size and contender the
     load, the bytes per row, and the median and range of the rounds of
     every step; nvm against heap as the median and range of the per-round
     ratios) and DIR/scale.png (each cost against the rows, heap and nvm,
     medians with the rounds' range; matplotlib, skipped without it).
         scale_report.py DIR
"""

import os
import sys

from round_stats import fmt, fmt_spread, num, read_rows, spread

# the rounds' columns shown, with their headings (rounds.csv)
ROUND_COLUMNS = [
    ("update_tps", "the updates before the checkpoint, one client: tps"),
    ("ckpt_s", "checkpoint after the updates, s"),
    ("ckpt_mb", "its bytes written, MB"),
    ("ckpt_pool_mb", "of them the pool's checkpoint files, MB"),
    ("ckpt_watch_mb", "the checkpoint worker's write_bytes, MB"),
    ("ckpt_wal_mb", "its WAL, MB"),
    ("stop_s", "clean stop, s"),
    ("stop_pool_mb", "the stop's capture of the pool into its checkpoint files, MB"),
    ("restart_s", "start until the first query answers, s"),
    ("restart_wal_mb", "WAL of the stop and start, MB"),
    ("restart_ckpt_s", "first checkpoint after the start, s"),
    ("restart_ckpt_mb", "its bytes written, MB"),
    ("crash_updates", "updates before the power loss"),
    ("crash_tps", "their tps"),
    ("crash_wal_mb", "their WAL, MB"),
    ("recovery_first_s", "power loss: start until the first query answers, s"),
    ("recovery_all_s", "power loss: start until every row answers, s"),
    ("redo_s", "redo, as the log says, s"),
    ("rebuild_load_s", "nvm's rebuild: load of the checkpoint files, s (nvm_rebuild)"),
    ("rebuild_replay_s", "nvm's rebuild: replay after the files, s (nvm_rebuild)"),
]
# the ratios nvm / heap shown, per round
RATIO_COLUMNS = ["ckpt_s", "ckpt_mb", "restart_s", "restart_wal_mb", "recovery_first_s",
                 "recovery_all_s"]
# the plot's panels: (file, column, title, y label); bytes per row on a
# linear axis from 0, the others log-log where every value is positive
PANELS = [
    ("sizes", "load_s", "load (INSERT of N rows)", "s"),
    ("rounds", "ckpt_s", "checkpoint after the updates", "s"),
    ("rounds", "ckpt_mb", "bytes the checkpoint wrote", "MB"),
    ("rounds", "restart_s", "clean restart: first query", "s"),
    ("rounds", "restart_wal_mb", "WAL of a clean restart", "MB"),
    ("rounds", "restart_ckpt_mb", "bytes of the first checkpoint after it", "MB"),
    ("rounds", "recovery_all_s", "power loss: every row answers", "s"),
    ("sizes", "bytes_per_row", "bytes per row (table or pool used, index)", "bytes"),
]
CONTENDERS = ["heap", "nvm"]


def read_csv(path):
    """The lines of a CSV file as dicts; every column NAME_bytes also as
    NAME_mb (MB)."""
    rows = read_rows(path)
    for r in rows:
        for k in [k for k in r if k.endswith("_bytes")]:
            v = num(r[k])
            r[k[:-len("_bytes")] + "_mb"] = None if v is None else v / 1048576
    return rows


def round_ratios(rounds, rows, col, mine="nvm", ref="heap"):
    """The per-round ratios mine / ref of col at rows (rounds paired by
    number); their spread, or None."""
    by = {}
    for r in rounds:
        if r["rows"] == rows:
            by[(r["contender"], r["round"])] = num(r.get(col))
    out = []
    for (c, rnd), v in by.items():
        if c != mine:
            continue
        w = by.get((ref, rnd))
        if v is not None and w:
            out.append(v / w)
    return spread(out)


def render(sizes, rounds):
    """summary.md's tables, as a list of lines."""
    out = []
    all_rows = sorted({r["rows"] for r in sizes} | {r["rows"] for r in rounds}, key=int)
    out += ["## Once per size: the load, its first checkpoint, bytes per row", "",
            "| rows | contender | load, s | first checkpoint, s | its bytes, MB | table (heap) or pool used (nvm), bytes | index, bytes | bytes per row | nvm's checkpoint files per row |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in sorted(sizes, key=lambda r: (int(r["rows"]), r["contender"])):
        tbl = s["table_bytes"] if s["contender"] == "heap" else s["pool_used_bytes"]
        out.append(f"| {int(s['rows']):,} | {s['contender']} | {fmt(num(s['load_s']))} | "
                   f"{fmt(num(s['load_ckpt_s']))} | {fmt(s['load_ckpt_mb'])} | "
                   f"{int(num(tbl) or 0):,} | {int(num(s['index_bytes']) or 0):,} | "
                   f"{fmt(num(s['bytes_per_row']))} | "
                   f"{fmt(num(s['ckpt_file_bytes_per_row'])) if s['contender'] != 'heap' else '-'} |")
    out += ["", "## Every round: median (lowest–highest round)", ""]
    head = "| | " + " | ".join(f"{int(n):,} rows, {c}" for n in all_rows for c in CONTENDERS) + " |"
    out += [head, "|---|" + "---:|" * (len(all_rows) * len(CONTENDERS))]
    for col, title in ROUND_COLUMNS:
        cells = []
        for n in all_rows:
            for c in CONTENDERS:
                cells.append(fmt_spread(spread(r.get(col) for r in rounds
                                               if r["rows"] == n and r["contender"] == c)))
        out.append(f"| {title} | " + " | ".join(cells) + " |")
    cells = []
    for n in all_rows:
        for c in CONTENDERS:
            rs = [r for r in rounds if r["rows"] == n and r["contender"] == c]
            ok = sum(1 for r in rs if r["rows_ok"] == "ok")
            cells.append(f"{ok} of {len(rs)}")
    out.append("| every row and every acknowledged update after the power loss | " + " | ".join(cells) + " |")
    cells = []
    for n in all_rows:
        for c in CONTENDERS:
            rs = [r for r in rounds if r["rows"] == n and r["contender"] == c]
            cells.append(str(sum(int(num(r["rebuilt"]) or 0) for r in rs)) if c != "heap" else "-")
    out.append("| pools rebuilt from checkpoint files and WAL (nvm) | " + " | ".join(cells) + " |")
    out += ["", "## nvm against heap: per-round ratios, median (lowest–highest)", "",
            "| rows | " + " | ".join(dict(ROUND_COLUMNS)[c] for c in RATIO_COLUMNS) + " |",
            "|---:|" + "---:|" * len(RATIO_COLUMNS)]
    for n in all_rows:
        out.append(f"| {int(n):,} | " + " | ".join(
            fmt_spread(round_ratios(rounds, n, c)) for c in RATIO_COLUMNS) + " |")
    return out


def plot(sizes, rounds, path):
    """scale.png: each panel of PANELS against the rows, log-log where
    every value is positive; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    src = {"sizes": sizes, "rounds": rounds}
    fig, axes = plt.subplots(2, 4, figsize=(18, 8.5))
    for ax, (table, col, title, unit) in zip(axes.flat, PANELS):
        positive = True
        for c, style in zip(CONTENDERS, ["o-", "s-"]):
            xs, ys, lo, hi = [], [], [], []
            for n in sorted({r["rows"] for r in src[table]}, key=int):
                s = spread(r[col] for r in src[table] if r["rows"] == n and r["contender"] == c)
                if s is None:
                    continue
                xs.append(int(n))
                ys.append(s[0])
                lo.append(s[0] - s[1])
                hi.append(s[2] - s[0])
                positive = positive and s[1] > 0
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], fmt=style, capsize=3, label=c)
        ax.set_xscale("log")
        if col == "bytes_per_row":
            ax.set_ylim(bottom=0)
        elif positive:
            ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("rows")
        ax.set_ylabel(unit)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Costs against the table's size: heap and nvm (pool at its default place, "
                 "durability auto), medians and range of the rounds")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: scale_report.py DIR\n")
        return 2
    d = argv[1]
    sizes = read_csv(os.path.join(d, "sizes.csv"))
    rounds = read_csv(os.path.join(d, "rounds.csv"))
    lines = ["# Costs against the data's size (bench/scale.sh)", ""]
    settings = os.path.join(d, "settings.md")
    if os.path.exists(settings):
        with open(settings) as f:
            lines += [f.read().rstrip(), ""]
    lines += render(sizes, rounds)
    if plot(sizes, rounds, os.path.join(d, "scale.png")):
        lines += ["", "![each cost against N](scale.png)"]
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

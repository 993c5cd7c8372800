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
         day_targets.py BEFORE_SCALE BEFORE_STEADY AFTER_SCALE[,MORE...] AFTER_STEADY
     (a side's scale results may come from several directories, joined by
     commas, as when its sizes ran apart; a missing directory or size
     reads "not measured").
"""

import csv
import os
import statistics
import sys

MB = 1048576


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


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


def fmt(x):
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:#.3g}"


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


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
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

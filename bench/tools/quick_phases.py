#!/usr/bin/env python3
"""bench/tools/quick_phases.py
     Where a bench/run.sh run's wall time went, from its phases.csv and the
     per-run timings in logs/ (run-times.csv, times.csv; or beside
     phases.csv, as a run of record keeps them): a Markdown table
     of the phases (setup, build, and per family its load, runs, profile
     and teardown, the engine level, the report), the runs' time split into
     pgbench and what surrounds it, and the machine's load average at the
     runs' starts (results.csv's load1).

usage: python3 bench/tools/quick_phases.py OUT [OUT...]
"""

import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from round_stats import read_rows as read_csv  # noqa: E402  (bench/lib/round_stats.py)


def phases(out):
    """[(phase, seconds)] in run order, "end" left out."""
    return [(r["phase"], float(r["seconds"])) for r in read_csv(os.path.join(out, "phases.csv"))
            if r["phase"] != "end"]


def timing_file(out, name):
    """OUT/logs/NAME as bench/run.sh writes it, or OUT/NAME as a run of
    record keeps it."""
    path = os.path.join(out, "logs", name)
    return path if os.path.exists(path) else os.path.join(out, name)


def runs(out):
    """Totals in seconds over the measured runs: pgbench itself, the summary
    of the contender's previous run (finish_prev: the wait for its WAL
    statistics, its readings, pgbench_summary.py and the family's check),
    the autovacuum wait, the CHECKPOINT with the start's readings, the CPU
    reading; and the disk samples."""
    rt = read_csv(timing_file(out, "run-times.csv"))
    tot = collections.OrderedDict((k, 0.0) for k in ("pgbench_ms", "finish_prev_ms", "settle_ms",
                                                      "checkpoint_ms", "before_ms"))
    for r in rt:
        for k in tot:
            tot[k] += int(r[k]) / 1000.0
    disk, n_disk = 0.0, 0
    path = timing_file(out, "times.csv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.strip().split(",")
                if p[0] == "disk":
                    disk += int(p[3]) / 1000.0
                    n_disk += 1
    return len(rt), tot, n_disk, disk


def load_average(out):
    v = sorted(float(r["load1"]) for r in read_csv(os.path.join(out, "results.csv")) if r.get("load1"))
    if not v:
        return None
    return v[0], v[len(v) // 2], v[-1]


def table(out):
    ph = phases(out)
    groups = collections.OrderedDict()
    for name, secs in ph:
        kind = name.split(" ")[0]
        groups.setdefault(kind, []).append((name, secs))
    L = ["### %s" % out, "", "| phase | seconds | of which |", "|---|---|---|"]
    for kind, items in groups.items():
        total = sum(s for _, s in items)
        detail = ", ".join("%s %.1f" % (n.split(" ", 1)[1] if " " in n else n, s) for n, s in items
                           if s >= 0.05) if len(items) > 1 else ""
        L.append("| %s | %.1f | %s |" % (kind, total, detail))
    L.append("| **total** | **%.1f** | |" % sum(s for _, s in ph))
    n, tot, n_disk, disk = runs(out)
    if n:
        L += ["", "%d measured runs: %s; %d disk samples %.1f s." % (
            n, ", ".join("%s %.1f s (%.0f ms a run)" % (k[:-3], v, 1000 * v / n) for k, v in tot.items()),
            n_disk, disk)]
    la = load_average(out)
    if la:
        L += ["", "Load average (1 min) at the runs' starts: lowest %.2f, median %.2f, highest %.2f." % la]
    return "\n".join(L) + "\n"


def main(argv):
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for out in argv:
        print(table(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

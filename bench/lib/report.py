#!/usr/bin/env python3
"""bench/lib/report.py
     The report of a bench/run.sh run: plots, report.md, and the main table
     on stdout.

usage: report.py OUTDIR
       report.py --compare OUTDIR1 OUTDIR2 ...   (the verdicts of several runs
                                                  side by side, line by line)

Reads OUTDIR/results.csv (pgbench runs), OUTDIR/engine.csv (engine level),
OUTDIR/settings.md, and when present OUTDIR/disk.csv (the disk's fsync
samples, which give the disk's drift), OUTDIR/pool-usage.csv,
OUTDIR/engine-delay-*.csv, OUTDIR/profile/ (bench/run.sh --profile) and
OUTDIR/gotpc.md; the workloads' titles, figures, paper numbers and targets
come from their descriptors (bench/workloads/*.toml, through workloads.py).
Writes OUTDIR/report.md and the figures (matplotlib; skipped with a note if
it is missing):
    one per workload family, named in its descriptor: throughput vs clients
    (fig10_ycsb_throughput.png, paper Fig. 10; fig12_tpcc_throughput.png,
    Fig. 12; tpcb.png with latency; rows.png)
    fig13_latency.png           average latency vs clients of the workloads
                                the paper measured (Fig. 13)
    engine.png                  engine level, MCSI vs N2DB, with the 18-thread model

Every target is judged by the ratios of its two contenders within each
round, with PASS, MISS or "within noise" (see Spread in report_stats.py and
verdict_rule_text in report_render.py).
"""

# This file is the command line; the report is made by the modules below,
# each importing only those to its right (no cycles):
#
#   report.py ──> report_compare ──> report_load, report_stats
#             ──> report_render ───> report_load, report_stats, report_model
#             ──> report_plots
#   every report_* module ──> report_common ──> workloads
#
#   report_common   the workloads, contenders, the machine's CPUs, number formats
#   report_load     results.csv, disk.csv, engine*.csv, profiles, the run's other files
#   report_stats    per-round ratios, the run's noise, the disk's drift, the verdict
#                   rule, the targets
#   report_model    the engine level's many-core model
#   report_plots    the figures
#   report_render   report.md and the summary on stdout
#   report_compare  the compare mode

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import CORES, wfamily  # noqa: E402
from report_compare import compare  # noqa: E402
from report_load import (Results, load_disk, load_engine, load_profiles, load_results,  # noqa: E402
                         pg_version)
from report_model import engine_model  # noqa: E402
from report_plots import make_plots  # noqa: E402
from report_render import (comparison, cpu_bound_text, cpu_table, summary,  # noqa: E402
                           verdict_rule_text, write_report)
from report_stats import (ASSUMED_NOISE, DISK_SHIFT, MAD_TO_SIGMA, MIN_DRIFT, MIN_NOISE,  # noqa: E402
                          Z_MARGIN, Drift, Spread, Target, disk_bound, interleaved, robust_noise,
                          run_noise, targets)

# what callers of the report (bench/lib/test_bench.py) reach through this
# module, besides main
__all__ = ["ASSUMED_NOISE", "CORES", "DISK_SHIFT", "Drift", "MAD_TO_SIGMA", "MIN_DRIFT", "MIN_NOISE",
           "Results", "Spread", "Target", "Z_MARGIN", "comparison", "compare", "cpu_bound_text", "cpu_table",
           "disk_bound", "interleaved", "load_disk", "load_results", "pg_version", "robust_noise",
           "run_noise", "targets",
           "summary", "verdict_rule_text", "wfamily", "write_report"]


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--compare":
        print(compare(sys.argv[2:]), end="")
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    res = Results(load_results(out), load_disk(out))
    eng = load_engine(os.path.join(out, "engine.csv"))
    model = engine_model(eng, CORES)
    plots = make_plots(out, res, eng, model)
    note = ""
    if plots and not plots[0].endswith(".png"):
        note, plots = plots[0], []
    tg = write_report(out, res, eng, model, plots, note, load_profiles(out))
    # stdout: the main table and the targets
    print(summary(out, res, tg), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

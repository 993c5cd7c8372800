#!/usr/bin/env python3
"""bench/tools/modes_table.py: the engine level of every concurrency-control
mode from modes_engine.sh's engine-modes.csv: per drain delay, workload and
thread count, each mode's median over the rounds (throughput with its
min-max, snapshot and completion times, flushes and fences per committed
transaction, bytes flushed per transaction) and its throughput against
MCSI's and N2DB's of the same round (median and min-max of the per-round
ratios).  mcsi-dbxn is MCSI with nvm.commit_variant = dbxn.

Usage: python3 bench/tools/modes_table.py engine-modes.csv > table.md
"""
import csv
import statistics
import sys
from collections import defaultdict

ORDER = ["mcsi", "n2db", "pisces", "pomvcc", "mcsi-dbxn"]


def main(path):
    rows = list(csv.DictReader(open(path, newline="")))
    pts = defaultdict(dict)  # (delay, workload, threads) -> {(round, mode): row}
    for r in rows:
        pts[(int(r["delay_ns"]), r["workload"], int(r["threads"]))][(r["round"], r["mode"])] = r
    out = []
    rounds = sorted({r["round"] for r in rows})
    out.append("Engine level, every mode; medians of %d rounds (min-max in brackets), "
               "ratios per round against the same round's MCSI and N2DB.\n" % len(rounds))
    last = None
    for key in sorted(pts):
        delay, wl, th = key
        if (delay, wl) != last:
            out.append("\n### %s, drain delay %d ns\n" % (wl, delay))
            out.append("| threads | mode | tps | vs MCSI | vs N2DB | snapshot ns | complete ns "
                       "| flushes/txn | fences/txn | bytes flushed/txn | abort % |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|")
            last = (delay, wl)
        p = pts[key]
        modes = [m for m in ORDER if any((rd, m) in p for rd in rounds)]
        for m in modes:
            mine = [p[(rd, m)] for rd in rounds if (rd, m) in p]
            tps = [float(x["tps"]) for x in mine]

            def med(col):
                return statistics.median(float(x[col]) for x in mine)

            def ratio(base):
                rs = [float(p[(rd, m)]["tps"]) / float(p[(rd, base)]["tps"])
                      for rd in rounds if (rd, m) in p and (rd, base) in p
                      and float(p[(rd, base)]["tps"]) > 0]
                if not rs or m == base:
                    return "–"
                return "%.2f (%.2f–%.2f)" % (statistics.median(rs), min(rs), max(rs))

            commits = sum(float(x["commits"]) for x in mine)
            aborts = sum(float(x["aborts"]) for x in mine)
            out.append("| %d | %s | %.0f (%.0f–%.0f) | %s | %s | %.0f | %.0f | %.2f | %.2f | %.0f | %.1f |" % (
                th, m, statistics.median(tps), min(tps), max(tps), ratio("mcsi"), ratio("n2db"),
                med("snapshot_ns"), med("complete_ns"), med("flushes_per_txn"),
                med("fences_per_txn"), med("bytes_per_txn"), 100.0 * aborts / max(commits + aborts, 1)))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])

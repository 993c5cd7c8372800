#!/usr/bin/env python3
# bench/results/tpcb-wait-20261207/summarize.py AB.CSV
#   Medians and ranges over the rounds of ab.sh's ab.csv: tps and server CPU
#   per transaction per contender and client count, and the per-round
#   ratios nvm-a / heap, nvm-b / heap and nvm-b / nvm-a.
import csv, statistics, sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
by = defaultdict(dict)
for r in rows:
    by[(int(r['clients']), int(r['round']))][r['contender']] = r

def fmt(xs, d=0):
    xs = sorted(xs)
    return f"{statistics.median(xs):.{d}f} ({xs[0]:.{d}f}–{xs[-1]:.{d}f})"

def cpu(r):
    return float(r['cpu_s']) * 1e6 / int(r['transactions'])

def retried(r):
    return 100.0 * int(r['retried']) / int(r['transactions'])

for n in sorted({k[0] for k in by}):
    rounds = [by[k] for k in sorted(by) if k[0] == n and len(by[k]) == 3]
    print(f"\n{n} client(s), {len(rounds)} rounds: median (range)\n")
    print("| contender | tps | server CPU µs per transaction | transactions retried, % |")
    print("|---|---|---|---|")
    for c in ('heap', 'nvm-a', 'nvm-b'):
        print(f"| {c} | {fmt([float(r[c]['tps']) for r in rounds])} | "
              f"{fmt([cpu(r[c]) for r in rounds])} | {fmt([retried(r[c]) for r in rounds], 1)} |")
    print("\n| ratio, per round | tps | CPU per transaction |")
    print("|---|---|---|")
    for a, b in (('nvm-a', 'heap'), ('nvm-b', 'heap'), ('nvm-b', 'nvm-a')):
        print(f"| {a} / {b} | {fmt([float(r[a]['tps']) / float(r[b]['tps']) for r in rounds], 2)} | "
              f"{fmt([cpu(r[a]) / cpu(r[b]) for r in rounds], 2)} |")

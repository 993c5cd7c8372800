#!/usr/bin/env python3
"""bench/lib/steady_report.py
     The report of bench/steady.sh: from DIR/steady.csv (one line per run)
     and DIR/sizes.csv, DIR/summary.md: DIR/settings.md, then per workload
     and contender the median and range of the rounds of tps and of every
     cost per transaction (WAL bytes, full-page images, WAL fsyncs,
     checkpoint bytes: the checkpoints' buffers x 8 kB plus nvm's pool
     checkpoint files, those of the captures and of the merges between
     checkpoints, server CPU), each contender against heap as the
     median and range of the per-round ratios, and the consistency checks.
         steady_report.py DIR
"""

import os
import sys

from round_stats import fmt, fmt_spread, num, read_rows as read_csv, spread

# per-transaction costs: (name, heading, function of a run's line)
def _per_txn(f):
    def g(r):
        t = num(r["txns"])
        v = f(r)
        return None if not t or v is None else v / t
    return g


def pool_file_bytes(r):
    """The pool's checkpoint files the run wrote (nvm): the bytes of the
    captures and merges (nvm_checkpoints) where the run has them, else the
    kB of the captures' log lines (the engine before incremental
    checkpoints, which merged nothing)."""
    p = num(r.get("pool_bytes"))
    if p is not None:
        return p + (num(r.get("merged_bytes")) or 0)
    k = num(r["pool_kb"])
    return None if k is None else k * 1024


def ckpt_bytes(r):
    """What the run's checkpoints wrote: their buffers (8 kB each) and the
    pool's checkpoint files (nvm)."""
    b, p = num(r["ckpt_buffers"]), pool_file_bytes(r)
    if b is None or p is None:
        return None
    return b * 8192 + p


COSTS = [
    ("wal_bytes", "WAL bytes", _per_txn(lambda r: num(r["wal_bytes"]))),
    ("wal_fpi", "full-page images", _per_txn(lambda r: num(r["wal_fpi"]))),
    ("wal_syncs", "WAL fsyncs", _per_txn(lambda r: num(r["wal_syncs"]))),
    ("ckpt_bytes", "checkpoint bytes written", _per_txn(ckpt_bytes)),
    ("pool_bytes", "of them the pool's checkpoint files", _per_txn(lambda r: pool_file_bytes(r) or 0)),
    ("merged_bytes", "of those the merges of checkpoint files",
     _per_txn(lambda r: num(r.get("merged_bytes")))),
    ("watch_bytes", "checkpoint worker's write_bytes (cross-check)",
     _per_txn(lambda r: num(r["watch_write_bytes"]))),
    ("cpu_us", "server CPU, µs", _per_txn(lambda r: None if num(r["server_cpu_s"]) is None
                                           else num(r["server_cpu_s"]) * 1e6)),
]
PREFERRED = ["heap", "nvm", "nvm-tmpfs", "nvm-shm"]


def ratios(runs, workload, mine, ref, value):
    """Per-round ratios value(mine) / value(ref) of workload; their
    spread."""
    by = {(r["contender"], r["round"]): value(r) for r in runs if r["workload"] == workload}
    out = []
    for (c, rnd), v in by.items():
        w = by.get((ref, rnd))
        if c == mine and v is not None and w:
            out.append(v / w)
    return spread(out)


def contenders_of(runs):
    seen = {r["contender"] for r in runs}
    return [c for c in PREFERRED if c in seen] + sorted(seen - set(PREFERRED))


def render(runs, sizes):
    out = []
    workloads = list(dict.fromkeys(r["workload"] for r in runs))
    conts = contenders_of(runs)
    for w in workloads:
        rs = [r for r in runs if r["workload"] == w]
        out += [f"## {w}", ""]
        out += ["| contender | tps | / heap, per round | checkpoints begun per run | completed (log) | their seconds (log) | " +
                " | ".join(f"{h} per transaction" for _, h, _ in COSTS) + " | consistency |",
                "|---|---:|---:|---:|---:|---:|" + "---:|" * len(COSTS) + "---|"]
        for c in conts:
            cr = [r for r in rs if r["contender"] == c]
            if not cr:
                continue
            tps = spread(num(r["tps"]) for r in cr)
            rat = "-" if c == "heap" else fmt_spread(ratios(runs, w, c, "heap", lambda r: num(r["tps"])))
            ck = spread(num(r["checkpoints"]) for r in cr)
            ckl = spread(num(r["ckpt_logged"]) for r in cr)
            cks = spread(num(r["ckpt_logged_s"]) for r in cr)
            cells = [fmt_spread(spread(f(r) for r in cr)) for _, _, f in COSTS]
            checks = [r["check"] for r in cr]
            chk = "-" if all(x == "-" for x in checks) else \
                f"{sum(1 for x in checks if x == 'ok')} of {len(checks)} ok"
            out.append(f"| {c} | {fmt_spread(tps)} | {rat} | {fmt_spread(ck)} | {fmt_spread(ckl)} | {fmt_spread(cks)} | " +
                       " | ".join(cells) + f" | {chk} |")
        out.append("")
        # the costs per transaction against heap's, round by round
        others = [c for c in conts if c != "heap"]
        if others and any(r["contender"] == "heap" for r in rs):
            out += ["Per-round ratios against heap, median (lowest–highest):", "",
                    "| contender | tps | " + " | ".join(h for _, h, _ in COSTS[:4]) + " | server CPU per transaction |",
                    "|---|---:|" + "---:|" * 5]
            for c in others:
                cells = [fmt_spread(ratios(runs, w, c, "heap", f)) for _, _, f in COSTS[:4]]
                cells.append(fmt_spread(ratios(runs, w, c, "heap", COSTS[-1][2])))
                out.append(f"| {c} | {fmt_spread(ratios(runs, w, c, 'heap', lambda r: num(r['tps'])))} | " +
                           " | ".join(cells) + " |")
            out.append("")
        bad = [r for r in rs if r["check"] not in ("ok", "-")]
        for r in bad:
            out.append(f"- consistency check of {r['contender']}, round {r['round']}: {r['check']}")
        if bad:
            out.append("")
        out += ["Every run:", "",
                "| round | contender | tps | transactions | failed | retried | checkpoints | pool checkpoint files (kB) | load average |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in sorted(rs, key=lambda r: (int(r["round"]), conts.index(r["contender"]))):
            out.append(f"| {r['round']} | {r['contender']} | {fmt(num(r['tps']))} | {r['txns']} | "
                       f"{r['failed']} | {r['retried']} | {r['checkpoints']} | {r['pool_kb']} | {r['load1']} |")
        out.append("")
    if sizes:
        out += ["## Loads", "", "| family | contender | load, s | database, MB | pool used, MB |",
                "|---|---|---:|---:|---:|"]
        for s in sizes:
            used = num(s["pool_used_bytes"])
            out.append(f"| {s['family']} | {s['contender']} | {fmt(num(s['load_s']))} | "
                       f"{fmt((num(s['database_bytes']) or 0) / 1048576)} | "
                       f"{fmt(used / 1048576) if used is not None else '-'} |")
        out.append("")
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: steady_report.py DIR\n")
        return 2
    d = argv[1]
    runs = read_csv(os.path.join(d, "steady.csv"))
    sizes = read_csv(os.path.join(d, "sizes.csv"))
    lines = ["# Steady state (bench/steady.sh)", ""]
    settings = os.path.join(d, "settings.md")
    if os.path.exists(settings):
        with open(settings) as f:
            lines += [f.read().rstrip(), ""]
    lines += render(runs, sizes)
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

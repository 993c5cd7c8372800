"""bench/lib/report_common.py
     The report's vocabulary, shared by its modules: the workloads, SQL and
     engine level (their descriptors, bench/workloads/*.toml, through
     workloads.py), the
     contenders' titles and order, the machine's CPUs, and the number and
     table formats.  Imports no other report module.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as descriptors  # noqa: E402  (bench/lib/workloads.py)

# ---------------------------------------------------------------------------
# the workloads (bench/workloads/*.toml): titles, families, figures, the
# paper's numbers (MCSI paper §5, Tables 4-6) and the targets
# ---------------------------------------------------------------------------


FAMILIES = descriptors.load()
WORKLOADS = descriptors.by_name(FAMILIES)
ALL_WORKLOADS = [w.name for f in FAMILIES for w in f.workloads]
# the engine level's workloads (bench/workloads/engine.toml), in their order
ENGINE = descriptors.load_engine()
ENGINE_WORKLOADS = ENGINE.names()


def wtitle(w):
    return WORKLOADS[w].title if w in WORKLOADS else w


def wfamily(w):
    return WORKLOADS[w].family.name if w in WORKLOADS else w


def worder(w):
    return ALL_WORKLOADS.index(w) if w in ALL_WORKLOADS else len(ALL_WORKLOADS)


def script_names(w):
    """The names of a workload's scripts when it has several (per-script
    columns of the report)."""
    return WORKLOADS[w].script_names if w in WORKLOADS and len(WORKLOADS[w].script_names) > 1 else []


def with_paper(latency=False):
    """The workloads the paper measured (with its 18-thread latency)."""
    return [w.name for f in FAMILIES for w in f.workloads
            if w.paper and (not latency or w.paper.get("mcsi_latency_us") is not None)]


CONTENDER_TITLES = {
    "heap": "heap (sync on, WAL on disk)",
    "heap-tmpfs": "heap (sync on, WAL on tmpfs)",
    "heap-async": "heap (sync off)",
    "nvm-mcsi": "nvm MCSI, pool in /dev/shm standing for persistent memory",
    "nvm-n2db": "nvm N2DB, pool in /dev/shm standing for persistent memory",
    "nvm-pisces": "nvm Pisces, pool in /dev/shm standing for persistent memory",
    "nvm-pomvcc": "nvm POMVCC, pool in /dev/shm standing for persistent memory",
    "nvm-mcsi-tmpfs": "nvm MCSI, pool and WAL on tmpfs",
    "nvm-n2db-tmpfs": "nvm N2DB, pool and WAL on tmpfs",
    "nvm-mcsi-pagecache": "nvm MCSI at its default place and durability (pool and WAL on disk)",
    "nvm-n2db-pagecache": "nvm N2DB at its default place and durability (pool and WAL on disk)",
    "heap-logical": "heap, wal_level = logical",
    "nvm-mcsi-logical": "nvm MCSI, wal_level = logical",
    "nvm-n2db-logical": "nvm N2DB, wal_level = logical",
}
# heap, then nvm at its default place and durability (what a user on
# ordinary storage gets), then the rest; the pools in /dev/shm with
# nvm.durability = pool stand for persistent memory
CONTENDER_ORDER = ["heap", "nvm-mcsi-pagecache", "nvm-n2db-pagecache", "heap-tmpfs", "heap-async",
                   "nvm-mcsi", "nvm-n2db", "nvm-pisces", "nvm-pomvcc", "nvm-mcsi-tmpfs",
                   "nvm-n2db-tmpfs", "heap-logical", "nvm-mcsi-logical", "nvm-n2db-logical"]


def ctitle(c):
    base, _, delay = c.partition("@")
    t = CONTENDER_TITLES.get(base, base)
    return t + (", drain delay %s ns" % delay if delay else "")


def corder(c):
    base, _, delay = c.partition("@")
    i = CONTENDER_ORDER.index(base) if base in CONTENDER_ORDER else 99
    return (1 if delay else 0, int(delay or 0), i)


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fmt_tps(x):
    if x is None:
        return "–"
    if x >= 1e6:
        return "%.2f M" % (x / 1e6)
    if x >= 1e4:
        return "%.1f k" % (x / 1e3)
    if x < 10:
        # bulk work: a COPY of 1M rows is a transaction of seconds
        return "%.2f" % x
    return "%.0f" % x


def fmt_ratio(x):
    return "–" if x is None else "%.2f" % x


def fmt_ms(x):
    if x is None:
        return "–"
    return "%.2f" % x if x < 100 else "%.0f" % x


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def fmt_factor(k):
    return ("%.2f" % k).rstrip("0").rstrip(".")


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines)


def pct(x):
    return "–" if x is None else "%.0f%%" % (100 * x)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


# the machine's CPUs (the report is written on the machine that ran); the
# other modules read it as report_common.CORES, so that a test can set it
CORES = os.cpu_count() or 1

"""bench/lib/report_load.py
     What a bench/run.sh run left in its output directory, read for the
     report: results.csv (pgbench runs, indexed by Results, a point's rounds
     aggregated to their median with its CPU accounts), disk.csv (the
     disk's fsync samples between rounds), engine.csv and
     engine-delay-*.csv (engine level), the profiles (profile/, with
     --profile), the consistency checks after each run (checks.csv, of the
     families whose descriptor names a check), and the run's other files
     (settings.md, modules.csv, pool-usage.csv, gotpc.md).
"""

import csv
import glob
import os
import re

import report_common as common
from report_common import ALL_WORKLOADS, corder, fnum, read


def load_results(out):
    path = os.path.join(out, "results.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["clients"] = int(r["clients"])
        for k in ("tps", "lat_avg_ms", "lat_p50_ms", "lat_p99_ms", "lat_p95_ms",
                  "abort_pct", "script1_tps", "script2_tps", "commits", "wal_fsyncs",
                  "wal_bytes", "server_cpu_s", "client_cpu_s", "duration_s"):
            r[k] = fnum(r.get(k))
        r["ok"] = r["status"] == "ok" and r["tps"] is not None
        r["rep"] = int(r.get("rep") or 1)
    return rows


def load_disk(out):
    """The disk's fsync samples of a run (disk.csv, bench/lib/fsync_probe.py,
    taken between rounds), [{workload, clients, round, mean_us, ...}], or
    None for a run recorded before the disk was sampled (no disk.csv)."""
    path = os.path.join(out, "disk.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("mean_us", "median_us", "p90_us", "max_us", "fsyncs"):
            r[k] = fnum(r.get(k))
    return [r for r in rows if r["mean_us"]]


def load_engine(path):
    """Engine-level points; of repeated points the one with the best
    throughput (the least disturbed by other load on the machine), with the
    number of repetitions in "reps"."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("mode") in ("mcsi", "n2db")]
    best = {}
    for r in rows:
        r["threads"] = int(r["threads"])
        for k in ("tps", "lat_us", "snapshot_ns", "complete_ns", "aborts", "commits",
                  "flushes_per_txn", "fences_per_txn", "bytes_per_txn"):
            r[k] = fnum(r[k])
        key = (r["mode"], r["workload"], r["threads"])
        if key in best:
            r["reps"] = best[key]["reps"] + 1
            if (r["tps"] or 0) <= (best[key]["tps"] or 0):
                best[key]["reps"] = r["reps"]
                continue
        else:
            r["reps"] = 1
        best[key] = r
    return list(best.values())


def load_engine_delays(out):
    """[(delay, points)]: the engine level with an emulated drain delay,
    one engine-delay-DELAY.csv each (load_engine), in the order of their
    names; files without points left out."""
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "engine-delay-*.csv"))):
        points = load_engine(path)
        if points:
            runs.append((os.path.basename(path)[len("engine-delay-"):-4], points))
    return runs


def aggregate(reps):
    """One row for the repetitions of a point: the run with the median
    throughput, with "reps", "tps_min", "tps_max", "fsyncs_per_txn" (WAL
    fsyncs over transactions, summed over the repetitions),
    "wal_bytes_per_txn" (the same for WAL bytes) and the CPU
    accounts of cpu_per_txn added."""
    ok = sorted((r for r in reps if r["ok"]), key=lambda r: r["tps"])
    if not ok:
        return reps[-1]
    row = dict(ok[(len(ok) - 1) // 2])
    row["reps"] = len(ok)
    row["tps_min"], row["tps_max"] = ok[0]["tps"], ok[-1]["tps"]
    counted = [r for r in ok if r.get("wal_fsyncs") is not None and r.get("commits")]
    row["fsyncs_per_txn"] = (sum(r["wal_fsyncs"] for r in counted) /
                             sum(r["commits"] for r in counted)) if counted else None
    counted = [r for r in ok if r.get("wal_bytes") is not None and r.get("commits")]
    row["wal_bytes_per_txn"] = (sum(r["wal_bytes"] for r in counted) /
                                sum(r["commits"] for r in counted)) if counted else None
    row.update(cpu_per_txn(ok))
    return row


def run_seconds(r):
    """How long run r lasted: pgbench's -T, or longer when transactions in
    flight at its end took longer (a COPY of 1M rows takes seconds): the
    transactions over pgbench's tps, which counts to the last one's end."""
    d = r.get("duration_s") or 0
    if r.get("tps") and r.get("commits"):
        d = max(d, r["commits"] / r["tps"])
    return d


def cpu_per_txn(runs):
    """The CPU accounts of a point's runs, summed over them (None where
    the runs did not record them): "server_us_per_txn" and
    "client_us_per_txn", CPU time (user + system) of the server's
    processes and of pgbench over the transactions completed (retried
    attempts included in the time, not in the count), and "cpu_busy", the
    share of the machine's CPUs the two kept busy during the runs."""
    out = {"server_us_per_txn": None, "client_us_per_txn": None, "cpu_busy": None}
    counted = [r for r in runs if r.get("server_cpu_s") is not None
               and r.get("client_cpu_s") is not None and r.get("commits")]
    if not counted:
        return out
    txns = sum(r["commits"] for r in counted)
    server = sum(r["server_cpu_s"] for r in counted)
    client = sum(r["client_cpu_s"] for r in counted)
    out["server_us_per_txn"] = server * 1e6 / txns
    out["client_us_per_txn"] = client * 1e6 / txns
    wall = sum(run_seconds(r) for r in counted)
    if wall:
        out["cpu_busy"] = (server + client) / (wall * common.CORES)
    return out


class Results:
    """Indexed pgbench results: (workload, contender, clients) -> row (the
    median of its repetitions, see aggregate)."""

    def __init__(self, rows, disk=None):
        self.rows = rows
        # the disk's fsync samples (load_disk), None for a run without them
        self.disk = disk
        groups = {}
        for r in rows:
            groups.setdefault((r["workload"], r["contender"], r["clients"]), []).append(r)
        self.groups = groups
        self.idx = {k: aggregate(v) for k, v in groups.items()}
        self.workloads = [w for w in ALL_WORKLOADS if any(r["workload"] == w for r in rows)]
        self.contenders = sorted({r["contender"] for r in rows}, key=corder)
        self.clients = sorted({r["clients"] for r in rows})
        # (workload, contender) of every row, runs skipped after a failure
        # included: a contender absent from a workload's family (its
        # descriptor's skip_contenders) has none
        self.pairs = {(r["workload"], r["contender"]) for r in rows}

    def ran(self, w, c):
        """Whether contender c was among those of workload w's family."""
        return (w, c) in self.pairs

    def get(self, w, c, n):
        r = self.idx.get((w, c, n))
        return r if r and r["ok"] else None

    def tps(self, w, c, n):
        r = self.get(w, c, n)
        return r["tps"] if r else None

    def rounds(self, w, c, n):
        """{round: row} of the point's runs that completed."""
        return {r["rep"]: r for r in self.groups.get((w, c, n), []) if r["ok"]}

    def best(self, w, c):
        """(max tps, clients) over client counts."""
        pts = [(r["tps"], n) for n in self.clients for r in [self.get(w, c, n)] if r]
        return max(pts) if pts else (None, None)

    def series(self, w, c, key):
        xs, ys = [], []
        for n in self.clients:
            r = self.get(w, c, n)
            if r and r.get(key) is not None:
                xs.append(n)
                ys.append(r[key])
        return xs, ys


WAIT_CLASSES = ["CPU", "client", "WAL", "locks", "LWLocks", "I/O", "other"]


def wait_class(typ, ev):
    if typ == "CPU":
        return "CPU"
    if typ == "Client":
        return "client"
    if typ in ("IO", "LWLock") and ev.startswith("WAL"):
        return "WAL"
    if typ == "Lock":
        return "locks"
    if typ == "LWLock":
        return "LWLocks"
    if typ == "IO":
        return "I/O"
    return "other"


PROFILE_RE = re.compile(r"^(%s)-c(\d+)-(.+)\.waits\.csv$"
                        % "|".join(re.escape(w) for w in sorted(ALL_WORKLOADS, key=len, reverse=True)))


def load_profiles(out):
    """{(workload, clients): {contender: profile}}; a profile has "waits"
    [(state, type, event, samples)], "classes" {class: share}, "total"
    samples, "tps" of the profile run, "perf" [(pct, dso, symbol)] and
    "dso" [(pct, dso)] when perf ran."""
    prof = {}
    for path in sorted(glob.glob(os.path.join(out, "profile", "*.waits.csv"))):
        m = PROFILE_RE.match(os.path.basename(path))
        if not m:
            continue
        w, n, c = m.group(1), int(m.group(2)), m.group(3)
        base = path[:-len(".waits.csv")]
        waits = []
        for line in read(path).splitlines():
            parts = line.rsplit(",", 3)
            if len(parts) == 4 and parts[3].isdigit():
                waits.append((parts[0], parts[1], parts[2], int(parts[3])))
        total = sum(x[3] for x in waits)
        classes = {k: 0.0 for k in WAIT_CLASSES}
        for st, typ, ev, k in waits:
            classes[wait_class(typ, ev)] += k / total if total else 0
        tps = None
        mt = re.search(r"^tps = ([\d.]+)", read(base + ".pgbench.txt"), re.M)
        if mt:
            tps = float(mt.group(1))
        perf = []
        for line in read(base + ".perf.txt").splitlines():
            mp = re.match(r"^\s*([\d.]+)%\s+(\S+)(?: \(deleted\))?\s+\[.\]\s+(.*?)\s*$", line)
            if mp:
                perf.append((float(mp.group(1)), mp.group(2), mp.group(3)))
        dso = []
        for line in read(base + ".perf-dso.txt").splitlines():
            mp = re.match(r"^\s*([\d.]+)%\s+(.*?)\s*$", line)
            if mp:
                # a module replaced on disk while the server ran shows as "(deleted)"
                dso.append((float(mp.group(1)), mp.group(2).replace(" (deleted)", "")))
        prof.setdefault((w, n), {})[c] = {"waits": waits, "classes": classes, "total": total,
                                          "tps": tps, "perf": perf, "dso": dso}
    return prof


def run_file(out, name):
    """The text of a file the run wrote in out ("" when it did not):
    settings.md, pool-usage.csv, gotpc.md."""
    return read(os.path.join(out, name))


def pg_version(out):
    """The PostgreSQL version the run measured ("PostgreSQL 18.6"), from the
    line of settings.md that bench/run.sh writes; "" when it names none."""
    m = re.search(r"^- (PostgreSQL \d+(?:\.\d+)*)", run_file(out, "settings.md"), re.M)
    return m.group(1) if m else ""


def load_modules(out):
    """modules.csv: [family, contender, cluster started, nvmam.so md5] of
    every cluster the run started."""
    return [l.split(",") for l in run_file(out, "modules.csv").split("\n") if l.count(",") == 3]


def load_checks(out):
    """checks.csv: one row per run of a family with a check (bench/run.sh
    check_run): run_id, family, workload, contender, clients, rep, status
    (ok, violated or error), conditions (how many the check tested) and
    violations (each violated condition with its count); [] when the run
    checked nothing."""
    path = os.path.join(out, "checks.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))

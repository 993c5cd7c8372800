#!/usr/bin/env python3
"""bench/lib/pgbench_summary.py
     Turns one pgbench run into one line of results.csv.

Reads pgbench's output (the summary it prints at the end) and its
per-transaction logs (-l; one file per pgbench thread, PREFIX.PID and
PREFIX.PID.N), and appends a CSV row with the run's metadata, the counts
pgbench reports (transactions processed, failed, retried, total retries,
serialization and deadlock failures), throughput, and latency average, p50,
p95 and p99 computed from the logs.  Prints the row's main values on stdout
(one line, for the progress display).

usage: pgbench_summary.py --csv FILE --output PGBENCH_OUTPUT --logs PREFIX
                          [--delete-logs] [--error MESSAGE] KEY=VALUE...
       pgbench_summary.py --csv FILE --duplicate-of RUN_ID KEY=VALUE...

KEY=VALUE pairs become leading columns (mode, workload, contender, clients, ...,
rep = the round of the point, wal_fsyncs = the server's WAL fsyncs during
the run, from pg_stat_wal (PostgreSQL 18: pg_stat_io), server_cpu_s = the CPU time, user and system,
of the server's processes during the run, client_cpu_s = pgbench's, load1 =
the machine's 1-minute load average when the run started, wal_bytes = the
bytes of WAL the server wrote from the run's start until its summary, from
its WAL insert position).
--error records a run that did not take place (status "skipped").
--duplicate-of appends a copy of the row of run RUN_ID with the given keys
replaced: a configuration reached under two workload names is measured once.
"""

import argparse
import csv
import glob
import os
import re
import sys

# columns after the metadata ones, in this order
VALUE_COLUMNS = [
    "status", "tps", "commits", "failed", "serialization_failures",
    "deadlock_failures", "retried", "retries", "aborts", "abort_pct",
    "lat_avg_ms", "lat_p50_ms", "lat_p95_ms", "lat_p99_ms", "lat_avg_pgbench_ms",
    "script1_tps", "script2_tps", "script1_lat_avg_ms", "script2_lat_avg_ms",
    "logged_txns", "error",
    # scripts 3 to 5 (server-side TPC-C runs five), after the older columns
    "script3_tps", "script4_tps", "script5_tps",
    "script3_lat_avg_ms", "script4_lat_avg_ms", "script5_lat_avg_ms",
]

META_COLUMNS = [
    "mode", "family", "workload", "contender", "clients", "threads", "warehouses",
    "duration_s", "isolation", "synchronous_commit", "drain_delay_ns", "run_id",
    "started_utc", "rep", "wal_fsyncs", "server_cpu_s", "client_cpu_s", "load1",
    "wal_bytes",
]


def grab(pattern, text, cast=float, default=None):
    m = re.search(pattern, text, re.MULTILINE)
    if not m:
        return default
    try:
        return cast(m.group(1))
    except ValueError:
        return default


def parse_output(text):
    """Values from pgbench's end-of-run summary."""
    r = {}
    r["commits"] = grab(r"^number of transactions actually processed: (\d+)", text, int)
    r["failed"] = grab(r"^number of failed transactions: (\d+)", text, int, 0)
    r["serialization_failures"] = grab(r"^number of serialization failures: (\d+)", text, int, 0)
    r["deadlock_failures"] = grab(r"^number of deadlock failures: (\d+)", text, int, 0)
    r["retried"] = grab(r"^number of transactions retried: (\d+)", text, int, 0)
    r["retries"] = grab(r"^total number of retries: (\d+)", text, int, 0)
    r["tps"] = grab(r"^tps = ([0-9.]+) \(without initial connection time\)", text)
    r["lat_avg_pgbench_ms"] = grab(r"^latency average = ([0-9.]+) ms", text)
    # per-script sections (several -f): " - N transactions (x% of total, tps = T)"
    # then " - latency average = L ms"
    scripts = re.split(r"^SQL script \d+: ", text, flags=re.MULTILINE)[1:]
    for i, sec in enumerate(scripts[:5], start=1):
        r["script%d_tps" % i] = grab(r"^ - \d+ transactions \([^)]*tps = ([0-9.]+)\)", sec)
        r["script%d_lat_avg_ms" % i] = grab(r"^ - latency average = ([0-9.]+) ms", sec)
    errors = [line for line in text.splitlines()
              if "aborted" in line or "error" in line.lower()]
    if r["commits"] is None or r["tps"] is None:
        r["status"] = "error"
    elif any("Run was aborted" in e for e in errors):
        r["status"] = "aborted"
    else:
        r["status"] = "ok"
    # the first server error (the text after "ERROR:"), else pgbench's own
    msg = ""
    for e in errors:
        m = re.search(r"ERROR:\s+(.*)", e)
        if m:
            msg = m.group(1).strip()
            break
    if not msg:
        for e in errors:
            e = re.sub(r"^pgbench: (error|fatal): ", "", e.strip())
            if e and "Run was aborted" not in e:
                msg = e
                break
    msg = msg.replace('"', "'")[:160]
    r["error"] = msg if r["status"] != "ok" else ""
    return r


def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = (len(sorted_vals) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def parse_logs(prefix):
    """Latencies (µs) of successful transactions from pgbench -l files.

    Line format (PostgreSQL 15): client_id transaction_no time script_no
    time_epoch time_us [schedule_lag] [retries]; time is the latency in µs, or
    "failed", "serialization", "deadlock" or "skipped"."""
    lats = []
    files = sorted(glob.glob(prefix + ".*"))
    for fn in files:
        with open(fn) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 6:
                    continue
                try:
                    lats.append(int(parts[2]))
                except ValueError:
                    pass            # a failed or skipped transaction
    return lats, files


def fmt(v, digits=3):
    if v is None:
        return ""
    if isinstance(v, float):
        return ("%." + str(digits) + "f") % v
    return str(v)


def append_row(path, meta, values):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(META_COLUMNS + VALUE_COLUMNS)
        w.writerow([meta.get(k, "") for k in META_COLUMNS] +
                   [fmt(values.get(k)) for k in VALUE_COLUMNS])
    unknown = set(meta) - set(META_COLUMNS)
    if unknown:
        print("pgbench_summary: unknown keys ignored: %s" % ", ".join(sorted(unknown)),
              file=sys.stderr)


def duplicate(path, run_id, meta):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    src = [r for r in rows if r["run_id"] == run_id]
    if not src:
        print("pgbench_summary: no run %s in %s" % (run_id, path), file=sys.stderr)
        return 1
    row = dict(src[-1])
    row.update(meta)
    row["run_id"] = "%s=%s" % (meta.get("run_id", ""), run_id)
    with open(path, "a", newline="") as f:
        csv.writer(f).writerow([row.get(k, "") for k in META_COLUMNS + VALUE_COLUMNS])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--output")
    ap.add_argument("--logs")
    ap.add_argument("--delete-logs", action="store_true")
    ap.add_argument("--error")
    ap.add_argument("--duplicate-of")
    ap.add_argument("meta", nargs="*")
    a = ap.parse_args()

    meta = dict(kv.split("=", 1) for kv in a.meta)
    if a.duplicate_of:
        return duplicate(a.csv, a.duplicate_of, meta)
    if a.error is not None:
        append_row(a.csv, meta, {"status": "skipped", "error": a.error})
        print("skipped: %s" % a.error)
        return 0
    try:
        with open(a.output, errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    r = parse_output(text)
    lats, files = parse_logs(a.logs)
    lats.sort()
    r["logged_txns"] = len(lats)
    if lats:
        r["lat_avg_ms"] = sum(lats) / len(lats) / 1000.0
        for p in (50, 95, 99):
            r["lat_p%d_ms" % p] = percentile(lats, p) / 1000.0
    if r.get("commits") is not None:
        r["aborts"] = (r["retries"] or 0) + (r["failed"] or 0)
        attempts = r["commits"] + r["aborts"]
        r["abort_pct"] = 100.0 * r["aborts"] / attempts if attempts else 0.0
    if a.delete_logs:
        for fn in files:
            os.unlink(fn)

    append_row(a.csv, meta, r)

    if r["status"] == "ok":
        print("%s tps, %s commits, %s retries, %s failed, latency avg %s ms p99 %s ms"
              % (fmt(r["tps"], 0), r["commits"], r["retries"], r["failed"],
                 fmt(r.get("lat_avg_ms"), 2), fmt(r.get("lat_p99_ms"), 2)))
    else:
        print("%s: %s" % (r["status"], r["error"] or "see the pgbench output"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

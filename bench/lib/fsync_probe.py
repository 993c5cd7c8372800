#!/usr/bin/env python3
"""bench/lib/fsync_probe.py
     One sample of the disk's fsync latency, taken by bench/run.sh between
     the rounds of every point: a short burst of 8 kB writes, each followed
     by fdatasync, into a preallocated file on the disk that holds the WAL of
     the contenders on disk (as a WAL segment is written), appended as a line
     of disk.csv (time, point, round, fsyncs, mean, median, p90 and max µs
     per fsync).  The report takes the disk's drift over the run from these
     samples (report_stats.disk_drift).
         fsync_probe.py --file PATH --csv DISK_CSV [--fsyncs N] [--seconds S]
                        [family=F workload=W clients=N round=R]
"""

import argparse
import csv
import os
import sys
import time
from datetime import datetime, timezone

COLUMNS = ["time_utc", "family", "workload", "clients", "round", "fsyncs",
           "mean_us", "median_us", "p90_us", "max_us"]
BLOCK = 8192
# the probe's file: as many blocks as a burst writes at most, written over
# and over, so no fsync has to extend the file (metadata) as a WAL segment's
# preallocated blocks do not
BLOCKS = 64
# fsyncs left out of a sample at its start (the file's blocks back in the
# page cache, the first flush after a pause)
WARMUP = 2


def sample(path, fsyncs, seconds):
    """[µs per fsync]: up to fsyncs writes + fdatasync, stopping after
    seconds (but after at least 8)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_size < BLOCKS * BLOCK:
            os.ftruncate(fd, BLOCKS * BLOCK)
            os.fsync(fd)
        buf = os.urandom(BLOCK)
        lat, start = [], time.perf_counter()
        for i in range(WARMUP + fsyncs):
            os.pwrite(fd, buf, (i % BLOCKS) * BLOCK)
            t = time.perf_counter()
            os.fdatasync(fd)
            if i >= WARMUP:
                lat.append((time.perf_counter() - t) * 1e6)
            if len(lat) >= 8 and time.perf_counter() - start > seconds:
                break
        return lat
    finally:
        os.close(fd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="the probe's file, on the disk to sample")
    ap.add_argument("--csv", required=True, help="disk.csv to append the sample to")
    ap.add_argument("--fsyncs", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=0.25)
    ap.add_argument("meta", nargs="*", help="key=value: family, workload, clients, round")
    a = ap.parse_args()
    meta = dict(kv.split("=", 1) for kv in a.meta)
    lat = sorted(sample(a.file, a.fsyncs, a.seconds))
    n = len(lat)
    row = dict(meta, time_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
               fsyncs=n, mean_us="%.1f" % (sum(lat) / n), median_us="%.1f" % (lat[n // 2] if n % 2 else (lat[n // 2 - 1] + lat[n // 2]) / 2),
               p90_us="%.1f" % lat[min(n - 1, int(0.9 * n))], max_us="%.1f" % lat[-1])
    new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
    with open(a.csv, "a", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)
    print("%d fsyncs, mean %s µs, median %s µs, p90 %s µs" % (n, row["mean_us"], row["median_us"], row["p90_us"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

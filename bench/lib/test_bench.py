#!/usr/bin/env python3
"""bench/lib/test_bench.py
     Self-test of the benchmark's report and workload descriptors: the
     verdict rule (PASS, MISS, within noise) on per-round ratios, the run's
     noise, the disk's drift measured from a run's fsync samples (and the
     fixed shift of runs without them), the targets and report of a
     synthetic run, the consistency checks after each run (a failed one is
     shown), the PostgreSQL version the report names, and the descriptors (every one loads, a new one is a single
     file, the family keys autovacuum, check and skip_contenders, and the
     report of a contender that did not run a family); for bench/steady.sh and
     bench/scale.sh, what the server log says (serverlog.py), checkpoint
     bytes and costs per transaction, per-round ratios, and issue 45's
     targets before and after (day_targets.py).  Run by meson test (the
     unit suite of regress/run-tests.sh) and by hand:
         python3 bench/lib/test_bench.py
"""

import csv
import math
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import report_common  # noqa: E402
import report_load  # noqa: E402
import day_targets  # noqa: E402
import scale_report  # noqa: E402
import serverlog  # noqa: E402
import steady_report  # noqa: E402
import workloads  # noqa: E402


class VerdictRule(unittest.TestCase):
    """Spread: the verdict interval, lowest round / exp(m) to highest
    round x exp(m), m = Z_MARGIN x s / sqrt(R)."""

    def test_clear_pass_and_miss(self):
        sp = report.Spread([2.0, 2.1, 1.9, 2.05], 0.05)
        self.assertEqual(sp.verdict(1.5), "PASS")
        self.assertEqual(sp.verdict(3.0), "MISS")

    def test_target_inside_interval_is_within_noise(self):
        # every round is above the target, but by less than the margin
        sp = report.Spread([1.05, 1.06, 1.04, 1.07], 0.05)
        self.assertGreater(sp.median, 1.0)
        self.assertEqual(sp.verdict(1.0), "within noise")
        # and below it by less than the margin
        self.assertEqual(report.Spread([0.95, 0.96, 0.94, 0.97], 0.05).verdict(1.0), "within noise")

    def test_interval_is_the_stated_formula(self):
        vals, s = [1.2, 1.5, 1.3, 1.4], 0.2
        sp = report.Spread(vals, s)
        m = report.Z_MARGIN * s / math.sqrt(4)
        self.assertAlmostEqual(sp.median, 1.35)
        self.assertEqual((sp.lo, sp.hi), (1.2, 1.5))
        self.assertAlmostEqual(sp.low, 1.2 * math.exp(-m))
        self.assertAlmostEqual(sp.high, 1.5 * math.exp(m))
        # the verdict changes exactly at the interval's ends
        self.assertEqual(sp.verdict(sp.low), "PASS")
        self.assertEqual(sp.verdict(sp.low * 1.001), "within noise")
        self.assertEqual(sp.verdict(sp.high), "within noise")
        self.assertEqual(sp.verdict(sp.high * 1.001), "MISS")

    def test_more_noise_turns_a_verdict_into_within_noise(self):
        vals = [1.3, 1.3, 1.3, 1.3]
        self.assertEqual(report.Spread(vals, 0.05).verdict(1.0), "PASS")
        self.assertEqual(report.Spread(vals, 0.3).verdict(1.0), "within noise")
        self.assertEqual(report.Spread(vals, 0.05).verdict(1.6), "MISS")
        self.assertEqual(report.Spread(vals, 0.3).verdict(1.6), "within noise")

    def test_more_rounds_narrow_the_interval(self):
        four = report.Spread([1.3] * 4, 0.2)
        sixteen = report.Spread([1.3] * 16, 0.2)
        self.assertLess(sixteen.high / sixteen.low, four.high / four.low)

    def test_every_round_must_clear_the_target(self):
        # quiet margin, but one round fell below the target: the spreads
        # of the rounds and the target overlap
        sp = report.Spread([2.0, 2.0, 2.0, 1.4], 0.05)
        self.assertGreater(sp.median * math.exp(-sp.margin), 1.5)
        self.assertEqual(sp.verdict(1.5), "within noise")
        self.assertEqual(sp.verdict(1.4), "within noise")
        self.assertEqual(sp.verdict(1.2), "PASS")
        # and the same from above for a MISS
        sp = report.Spread([0.5, 0.5, 0.5, 1.1], 0.05)
        self.assertEqual(sp.verdict(1.0), "within noise")
        self.assertEqual(sp.verdict(1.2), "MISS")

    def test_noise_floor_and_assumed_noise(self):
        # identical rounds still leave the floor's margin
        sp = report.Spread([1.01] * 4, 0.0)
        self.assertEqual(sp.noise, report.MIN_NOISE)
        self.assertEqual(sp.verdict(1.0), "within noise")
        # unmeasured noise: the assumed one
        sp = report.Spread([1.2], None)
        self.assertEqual(sp.noise, report.ASSUMED_NOISE)
        self.assertFalse(sp.measured)


class DiskShift(unittest.TestCase):
    """tau: a target one of whose contenders waits for the disk at commit
    carries the disk's run-to-run shift in its margin."""

    def test_margin_is_the_stated_formula(self):
        vals, s, tau = [5.0, 5.5, 6.0, 5.2], 0.1, 0.2
        sp = report.Spread(vals, s, tau)
        m = report.Z_MARGIN * math.sqrt(s ** 2 / 4 + tau ** 2)
        self.assertAlmostEqual(sp.margin, m)
        self.assertAlmostEqual(sp.low, 5.0 * math.exp(-m))
        self.assertAlmostEqual(sp.high, 6.0 * math.exp(m))
        # without a shift, the margin of the run's noise alone
        self.assertAlmostEqual(report.Spread(vals, s).margin, report.Z_MARGIN * s / 2)

    def test_the_shift_turns_a_near_pass_into_within_noise(self):
        # every round 1.25 x to 1.5 x the target: a PASS by the rounds alone,
        # but another run on a quieter disk may measure less
        vals = [5.0, 5.5, 6.0, 5.2]
        self.assertEqual(report.Spread(vals, 0.05).verdict(4.0), "PASS")
        self.assertEqual(report.Spread(vals, 0.05, 0.2).verdict(4.0), "within noise")
        # far above the target it still passes
        self.assertEqual(report.Spread([v * 3 for v in vals], 0.05, 0.3).verdict(4.0), "PASS")

    def test_a_clear_miss_stays_a_miss(self):
        # a real miss: nvm at a third and at 40 % of the target factor in
        # every round, on a busy machine (s = 0.25) against a disk-bound heap
        self.assertEqual(report.Spread([1.0, 1.1, 0.9, 1.05, 1.0], 0.25, 0.2).verdict(3.0), "MISS")
        self.assertEqual(report.Spread([1.0, 1.1, 0.9, 1.05, 1.0], 0.25, 0.2).verdict(2.5), "MISS")

    def test_which_contenders_wait_for_the_disk(self):
        tps = {("insert", c): 10000 for c in ("heap", "heap-tmpfs", "heap-async", "nvm-mcsi", "nvm-n2db")}
        tps.update({("ycsb-c", c): 10000 for c in ("heap", "nvm-mcsi")})
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, tps)
            res = report.Results(report.load_results(d))
            # heap: 0.9 WAL fsyncs per transaction, WAL on disk
            self.assertTrue(report.disk_bound(res, "insert", "heap", 4))
            # heap-tmpfs takes as many fsyncs, but of a WAL in /dev/shm
            self.assertFalse(report.disk_bound(res, "insert", "heap-tmpfs", 4))
            # and heap-async's commits do not wait for its WAL flushes
            self.assertFalse(report.disk_bound(res, "insert", "heap-async", 4))
            # nvm's log-free commits, and read-only transactions
            self.assertFalse(report.disk_bound(res, "insert", "nvm-mcsi", 4))
            self.assertFalse(report.disk_bound(res, "ycsb-c", "heap", 4))
            shift = {(t.workload, t.mine, t.ref): t.spread.shift for t in report.targets(res) if t.spread}
        self.assertEqual(shift[("insert", "nvm-mcsi", "heap")], report.DISK_SHIFT)
        self.assertEqual(shift[("insert", "nvm-mcsi", "nvm-n2db")], 0.0)
        self.assertEqual(shift[("ycsb-c", "nvm-mcsi", "heap")], 0.0)

    def test_two_runs_on_disks_apart_by_the_shift_never_disagree(self):
        # the same build twice: once on a quieter disk (heap faster by
        # exp(tau)), once on a busier one (slower by exp(tau)); whatever the
        # true ratio, one run never says PASS where the other says MISS
        # (without the disk's shift in the margin, ratios near the target do)
        self.assertEqual(opposite_verdicts(report.DISK_SHIFT), [])


def opposite_verdicts(tau, disk=None):
    """The (ratio, target) pairs on which two runs of the same build read PASS
    and MISS: one run on a disk quieter by exp(tau) (heap faster), one on a
    disk busier by exp(tau), for true ratios from 0.5 to 10.25; with disk
    (write_disk's points) both runs also carry those fsync samples."""
    opposite = []
    for i in range(40):
        k = 0.5 + 0.25 * i
        tps = {("update", "heap"): 10000, ("update", "nvm-mcsi"): 10000 * k,
               ("update", "nvm-n2db"): 10000 * k}
        verdicts = []
        for seed, f in ((1, math.exp(tau)), (2, math.exp(-tau))):
            with tempfile.TemporaryDirectory() as d:
                synthetic_run(d, tps, rounds=5, seed=seed, shift={"heap": f})
                if disk is None:
                    res = report.Results(report.load_results(d))
                else:
                    write_disk(d, disk)
                    res = load(d)
                verdicts.append({t[0]: t[1] for t in report.targets(res)})
        for name, v in verdicts[0].items():
            if {v, verdicts[1][name]} == {"PASS", "MISS"}:
                opposite.append((k, name))
    return opposite


def write_disk(out, points, rounds=4):
    """disk.csv of a run: points {workload: [log offsets of its samples
    from 100 µs per fsync]}, rounds + 1 samples each (fewer given: cycled)."""
    with open(os.path.join(out, "disk.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["time_utc", "family", "workload", "clients", "round", "fsyncs",
                     "mean_us", "median_us", "p90_us", "max_us"])
        for w, offs in sorted(points.items()):
            for r in range(rounds + 1):
                us = 100 * math.exp(offs[r % len(offs)])
                wr.writerow(["2026-11-29T00:00:00Z", report.wfamily(w), w, 4, r + 1, 64,
                             "%.3f" % us, "%.3f" % us, "%.3f" % (2 * us), "%.3f" % (4 * us)])


def load(d):
    return report.Results(report.load_results(d), report.load_disk(d))


# a steady disk: every point's samples scatter alike (0.1x to 10x of
# 100 µs, seconds apart), but the points' levels do not move
STEADY = {w: [0.0, 2.3, -2.3, 0.5, -0.5] for w in ("insert", "update", "ycsb-c", "tpcb")}
# a drifting disk: the points' levels lie 0.6 apart (minutes apart), each
# point's samples close to its level
DRIFTING = {w: [lv, lv + 0.05, lv - 0.05] for w, lv in
            (("insert", -0.9), ("update", -0.3), ("ycsb-c", 0.3), ("tpcb", 0.9))}


class MeasuredDrift(unittest.TestCase):
    """tau of a run with fsync samples (disk.csv): the drift of the disk's
    level between the run's points, beyond the scatter within a point."""

    def test_drift_is_the_stated_formula(self):
        # levels 0.1, 0.5, 0.9 (standard deviation 0.4), each point's two
        # samples 0.1 from its level (within^2 = 6 x 0.01 / 3 dof = 0.02)
        samples = [{"workload": w, "clients": "4", "mean_us": 100 * math.exp(x)}
                   for w, xs in (("a", [0.0, 0.2]), ("b", [0.4, 0.6]), ("c", [0.8, 1.0])) for x in xs]
        d = report.Drift(samples)
        self.assertEqual(d.rule, "measured")
        self.assertAlmostEqual(d.between, 0.4)
        self.assertAlmostEqual(d.within, math.sqrt(0.02))
        self.assertAlmostEqual(d.tau, math.sqrt(0.16 - 0.02 / 2))
        # a quiet disk is credited with the floor, not 0
        quiet = [dict(r, mean_us=100.0) for r in samples]
        self.assertEqual(report.Drift(quiet).tau, report.MIN_DRIFT)
        # no samples: the fixed shift of the earlier rule
        self.assertEqual(report.Drift(None).rule, "fixed")
        self.assertEqual(report.Drift(None).tau, report.DISK_SHIFT)

    def test_scatter_within_points_is_not_drift(self):
        # a disk whose samples scatter by 10x but whose level stays put:
        # the scatter moves the rounds (and s), not every round alike
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, {("insert", "heap"): 10000, ("insert", "nvm-mcsi"): 60000})
            write_disk(d, STEADY)
            self.assertEqual(report.Drift(report.load_disk(d)).tau, report.MIN_DRIFT)

    def verdict(self, disk, ratio=6.0, seed=1):
        """The verdict of nvm-mcsi >= 3 x heap on INSERT with every round
        near ratio x heap, with disk.csv's points (None: no disk.csv)."""
        tps = {("insert", "heap"): 10000, ("insert", "nvm-mcsi"): 10000 * ratio,
               ("insert", "nvm-n2db"): 10000 * ratio}
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, tps, rounds=5, jitter=0.1, seed=seed)
            if disk is not None:
                write_disk(d, disk, rounds=5)
            res = load(d)
            t = [t for t in report.targets(res) if (t.workload, t.mine, t.ref) == ("insert", "nvm-mcsi", "heap")]
            return t[0]

    def test_clear_rounds_pass_on_a_steady_disk_and_not_on_a_drifting_one(self):
        # every round about 2x the target (rounds 4.9-7.5 x heap against 3 x,
        # as the quick runs measured single-row INSERTs)
        t = self.verdict(STEADY)
        self.assertGreater(t.spread.lo, 4.5)
        self.assertEqual(t.spread.shift, report.MIN_DRIFT)
        self.assertEqual(t[1], "PASS")
        self.assertIn("with the disk's measured drift 0.10", t[2])
        # the same rounds on a disk whose level drifted over the run
        t = self.verdict(DRIFTING)
        self.assertGreater(t.spread.shift, 0.5)
        self.assertEqual(t[1], "within noise")
        # and a run recorded before the disk was sampled keeps the fixed tau
        t = self.verdict(None)
        self.assertEqual(t.spread.shift, report.DISK_SHIFT)
        self.assertEqual(t[1], "within noise")
        self.assertIn("fixed shift", t[2])

    def test_clear_misses_miss_on_a_steady_disk(self):
        t = self.verdict(STEADY, ratio=1.5)
        self.assertEqual(t[1], "MISS")
        self.assertEqual(self.verdict(DRIFTING, ratio=1.5)[1], "within noise")

    def test_targets_without_a_disk_bound_contender_carry_no_drift(self):
        tps = {("insert", c): 10000 for c in ("heap", "heap-tmpfs", "nvm-mcsi", "nvm-n2db")}
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, tps)
            write_disk(d, DRIFTING)
            shift = {(t.workload, t.mine, t.ref): t.spread.shift for t in report.targets(load(d)) if t.spread}
        self.assertGreater(shift[("insert", "nvm-mcsi", "heap")], 0.5)
        self.assertEqual(shift[("insert", "nvm-mcsi", "nvm-n2db")], 0.0)

    def test_the_report_says_which_rule_and_what_it_measured(self):
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, TargetsOfARun.TPS)
            write_disk(d, STEADY)
            res = load(d)
            text = report.verdict_rule_text(res)
            self.assertIn("**The disk's drift in this run:** measured, tau = 0.10", text)
            self.assertIn("4 points of 5.0 samples", text)
            self.assertIn("with the disk's measured drift tau = 0.10", text)
            self.assertNotIn("keep the earlier rule", text)
            # the disk's samples around the point next to heap's time per WAL fsync
            report.write_report(d, res, [], {}, [], "", {})
            with open(os.path.join(d, "report.md")) as f:
                self.assertRegex(f.read(), r"\| insert \| heap \| 4 \| 0\.90 \| \d+ \(\d+–\d+\) \| 100 \(10–997\) \|")

    def test_two_runs_on_disks_apart_by_the_measured_drift_never_disagree(self):
        # as for the fixed shift: a run on a disk drifting by tau, and the
        # next on one that moved by tau each way, never read PASS and MISS
        disk = {w: [lv, lv + 0.3, lv - 0.3] for w, lv in
                (("update", -0.3), ("insert", 0.0), ("ycsb-c", 0.3))}
        with tempfile.TemporaryDirectory() as d:
            write_disk(d, disk)
            tau = report.Drift(report.load_disk(d)).tau
        self.assertGreater(tau, report.MIN_DRIFT)
        self.assertEqual(opposite_verdicts(tau, disk), [])


class FsyncProbe(unittest.TestCase):
    def test_samples_append_to_disk_csv(self):
        # bench/lib/fsync_probe.py as run.sh calls it, twice: one header,
        # one line per sample, read back by the report
        import subprocess
        probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fsync_probe.py")
        with tempfile.TemporaryDirectory() as d:
            for r in (1, 2):
                subprocess.run([sys.executable, probe, "--file", os.path.join(d, "probe"),
                                "--csv", os.path.join(d, "disk.csv"), "--fsyncs", "8", "--seconds", "0.05",
                                "family=rows", "workload=insert", "clients=4", "round=%d" % r],
                               check=True, stdout=subprocess.DEVNULL)
            rows = report.load_disk(d)
        self.assertEqual([(r["workload"], r["round"]) for r in rows], [("insert", "1"), ("insert", "2")])
        for r in rows:
            self.assertEqual(r["fsyncs"], 8)
            self.assertGreater(r["mean_us"], 0)
            self.assertLessEqual(r["median_us"], r["max_us"])


class Noise(unittest.TestCase):
    def test_robust_noise_of_known_groups(self):
        # each group's two values lie 0.05 from their median; 3 degrees of
        # freedom for 6 values
        s, n = report.robust_noise([[0.0, 0.1], [0.2, 0.3], [-0.1, 0.0], [0.5]])
        self.assertEqual(n, 6)
        self.assertAlmostEqual(s, report.MAD_TO_SIGMA * 0.05 * math.sqrt(6 / 3))

    def test_too_few_values(self):
        self.assertIsNone(report.robust_noise([[0.0, 0.1], [0.3]])[0])

    def test_one_wild_value_barely_moves_it(self):
        base = [[0.0, 0.1, 0.05, 0.02]] * 6
        s0 = report.robust_noise(base)[0]
        s1 = report.robust_noise(base[:-1] + [[0.0, 0.1, 0.05, 3.0]])[0]
        self.assertLess(abs(s1 - s0) / s0, 0.25)


COLUMNS = ["mode", "family", "workload", "contender", "clients", "threads", "warehouses",
           "duration_s", "synchronous_commit", "rep", "run_id", "status", "tps", "commits", "wal_fsyncs", "failed",
           "retried", "retries", "abort_pct", "lat_avg_ms", "lat_p50_ms", "lat_p99_ms", "error",
           "server_cpu_s", "client_cpu_s", "wal_bytes"]


def fsyncs_of(w, c):
    """WAL fsyncs per transaction of a synthetic run: none for the read-only
    YCSB-C, nvm's log-free commits 0.01, heap's 0.9."""
    return 0.0 if w == "ycsb-c" else (0.01 if c.startswith("nvm") else 0.9)


def synthetic_run(out, tps, rounds=4, jitter=0.03, seed=1, shift=None, serial=False, cpu=None, wal=None):
    """results.csv of a quick run: tps {(workload, contender): value} at 4
    clients, each round's value moved by a common factor (load that hits
    every contender alike) and by its own jitter; shift {contender: factor}
    moves a contender's every round alike (a disk busier for the whole
    run); serial numbers the runs as full mode's serial order does, one
    contender's rounds after the other's; cpu {(workload, contender):
    (server µs, pgbench µs)} per transaction gives the runs CPU accounts;
    wal {(workload, contender): bytes} per transaction their WAL bytes."""
    rng = random.Random(seed)
    rows, rid = [], 0
    for w in sorted({w for w, _ in tps}):
        for r in range(1, rounds + 1):
            common = math.exp(rng.gauss(0, 0.3))
            for (w2, c), v in sorted(tps.items()):
                if w2 != w:
                    continue
                rid += 1
                t = v * common * math.exp(rng.gauss(0, jitter)) * (shift or {}).get(c, 1.0)
                rows.append({"mode": "quick", "family": report.wfamily(w), "workload": w,
                             "contender": c, "clients": 4, "threads": 2, "warehouses": "",
                             "duration_s": 2,
                             "synchronous_commit": "off" if c == "heap-async" else "on",
                             "rep": r, "run_id": rid, "status": "ok",
                             "tps": "%.1f" % t, "commits": int(2 * t),
                             "wal_fsyncs": int(2 * t * fsyncs_of(w, c)),
                             "failed": 0, "retried": 0, "retries": 0, "abort_pct": "0.0",
                             "lat_avg_ms": "1.0", "lat_p50_ms": "0.9", "lat_p99_ms": "3.0",
                             "error": ""})
                if wal and (w, c) in wal:
                    rows[-1]["wal_bytes"] = int(2 * t) * wal[(w, c)]
                if cpu and (w, c) in cpu:
                    rows[-1]["server_cpu_s"] = "%.2f" % (int(2 * t) * cpu[(w, c)][0] / 1e6)
                    rows[-1]["client_cpu_s"] = "%.2f" % (int(2 * t) * cpu[(w, c)][1] / 1e6)
    if serial:
        for i, r in enumerate(sorted(rows, key=lambda r: (r["contender"], r["workload"], r["rep"]))):
            r["run_id"] = i + 1
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, COLUMNS)
        wr.writeheader()
        wr.writerows(rows)


class TargetsOfARun(unittest.TestCase):
    TPS = {
        # nvm-mcsi 10 x heap: PASS of ">= 3 x heap" even with the disk's
        # shift (heap takes 0.9 fsyncs per txn); nvm 0.01 fsyncs per txn
        ("insert", "heap"): 5000, ("insert", "heap-tmpfs"): 40000,
        ("insert", "nvm-mcsi"): 50000, ("insert", "nvm-n2db"): 50000,
        # nvm-mcsi 0.5 x heap: MISS of ">= 1 x heap"; nvm-n2db 0.98 x:
        # within noise of it
        ("ycsb-c", "heap"): 20000, ("ycsb-c", "heap-tmpfs"): 20000,
        ("ycsb-c", "nvm-mcsi"): 10000, ("ycsb-c", "nvm-n2db"): 19600,
    }

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        synthetic_run(self.dir.name, self.TPS)
        self.res = report.Results(report.load_results(self.dir.name))

    def tearDown(self):
        self.dir.cleanup()

    def verdicts(self):
        return {(t.workload, t.mine, t.ref, t.kind): t[1] for t in report.targets(self.res)}

    def test_verdicts(self):
        v = self.verdicts()
        self.assertEqual(v[("insert", "nvm-mcsi", "heap", "ratio")], "PASS")
        self.assertEqual(v[("insert", "nvm-mcsi", None, "metric")], "PASS")
        self.assertEqual(v[("ycsb-c", "nvm-mcsi", "heap", "ratio")], "MISS")
        self.assertEqual(v[("ycsb-c", "nvm-n2db", "heap", "ratio")], "within noise")
        # MCSI and N2DB equal: within noise, in both workloads
        self.assertEqual(v[("insert", "nvm-mcsi", "nvm-n2db", "ratio")], "within noise")
        # ycsb-c MCSI at half of N2DB is a MISS of MCSI >= N2DB
        self.assertEqual(v[("ycsb-c", "nvm-mcsi", "nvm-n2db", "ratio")], "MISS")

    def test_common_load_cancels(self):
        # the rounds' common factor (sd 0.3) is far above the jitter (0.03):
        # the run's noise sees only the jitter of a ratio (about 0.03 x sqrt 2)
        s = report.run_noise(self.res)[0]
        self.assertLess(s, 0.1)

    def test_report_says_how_to_read_it(self):
        report.write_report(self.dir.name, self.res, [], {}, [], "", {})
        with open(os.path.join(self.dir.name, "report.md")) as f:
            text = f.read()
        self.assertIn("How to read the spread", text)
        self.assertIn("**within noise**", text)
        self.assertIn("Expected **within noise** on", text)
        # the targets against heap carry the disk's shift (this run has no
        # fsync samples: the earlier rule's fixed one, and the report says
        # so), and the report lists the contenders that waited for the disk
        self.assertIn("with the disk's fixed shift 0.30 (no fsync samples in this run)", text)
        self.assertIn("its verdicts keep the earlier rule's fixed tau = 0.30", text)
        self.assertRegex(text, r"\| insert \| heap \| 4 \| 0\.90 \| \d+ \(\d+–\d+\) \| – \|")
        # every ratio of the main table has its spread, and so has every
        # ratio at each client count
        self.assertRegex(text, r"\| insert \|.*\| \d\.\d\d \(\d\.\d\d–\d\.\d\d\) \|")
        per_count = text[text.index("## Throughput and ratios at every client count"):]
        self.assertRegex(per_count, r"\n\| 4 \|[^\n]*\| \d\.\d\d \(\d\.\d\d–\d\.\d\d\) \|")


class CpuAccounts(unittest.TestCase):
    """The report's CPU per transaction: server and pgbench time over the
    transactions, the share of the CPUs they kept busy, and the server CPU
    a target needs when both contenders are limited by the CPUs."""

    TPS = {("tpcc-4wh", "heap-tmpfs"): 6000, ("tpcc-4wh", "nvm-mcsi"): 6000}
    CPU = {("tpcc-4wh", "heap-tmpfs"): (300, 100), ("tpcc-4wh", "nvm-mcsi"): (280, 110)}

    def results(self, d, cores, cpu=CPU):
        saved = report_common.CORES
        report_common.CORES = cores
        try:
            synthetic_run(d, self.TPS, cpu=cpu)
            return report.Results(report.load_results(d))
        finally:
            report_common.CORES = saved

    def test_a_run_longer_than_its_time(self):
        # four COPYs that took 16 s in a run of -T 1: the busy share is over 16 s
        run = {"server_cpu_s": 24.0, "client_cpu_s": 0.04, "commits": 4, "tps": 0.25,
               "duration_s": 1}
        acc = report_load.cpu_per_txn([run])
        self.assertAlmostEqual(acc["server_us_per_txn"], 6e6)
        self.assertAlmostEqual(acc["cpu_busy"], 24.04 / (16 * report_common.CORES))

    def test_per_transaction_and_busy_share(self):
        with tempfile.TemporaryDirectory() as d:
            res = self.results(d, 2)
            r = res.get("tpcc-4wh", "nvm-mcsi", 4)
            # 0.01 s rounding of the CPU seconds over about 50,000 transactions
            self.assertAlmostEqual(r["server_us_per_txn"], 280, delta=1)
            self.assertAlmostEqual(r["client_us_per_txn"], 110, delta=1)
            # 390 µs per transaction at about 6000 tps: about 2.3 CPUs of 2
            self.assertGreater(r["cpu_busy"], 0.85)
            self.assertRegex(report.cpu_table(res), r"\| tpcc-4wh \| 300 \+ 100, \d+% \(4\) \| 280 \+ 110, \d+% \(4\) \|")
            busy = self.results(d, 64).get("tpcc-4wh", "nvm-mcsi", 4)["cpu_busy"]
            self.assertAlmostEqual(busy, r["cpu_busy"] * 2 / 64)

    def test_bound_when_both_are_limited_by_the_cpus(self):
        with tempfile.TemporaryDirectory() as d:
            text = report.cpu_bound_text(self.results(d, 2), "tpcc-4wh", "nvm-mcsi", "heap-tmpfs", 1.2)
            self.assertIn("nvm-mcsi 280 + 110 µs, heap-tmpfs 300 + 100 µs", text)
            # (300 + 100) / 1.2 - 110 = 223 µs: 26 % below heap-tmpfs's 300
            self.assertRegex(text, r"takes at most 22[234] µs per transaction, 2[567]% less than heap-tmpfs's")
        with tempfile.TemporaryDirectory() as d:
            text = report.cpu_bound_text(self.results(d, 64), "tpcc-4wh", "nvm-mcsi", "heap-tmpfs", 1.2)
            self.assertIn("280 + 110", text)
            self.assertNotIn("at most", text)

    def test_missed_target_is_explained_by_the_cpus(self):
        with tempfile.TemporaryDirectory() as d:
            res = self.results(d, 2)
            saved = report_common.CORES
            report_common.CORES = 2
            try:
                report.write_report(d, res, [], {}, [], "", {})
            finally:
                report_common.CORES = saved
            with open(os.path.join(d, "report.md")) as f:
                text = f.read()
            self.assertIn("## CPU per transaction", text)
            miss = [line for line in text.splitlines() if line.startswith("- **nvm")
                    and "1.2" in line and "heap-tmpfs" in line]
            self.assertTrue(miss, "the missed TPC-C target is listed")
            self.assertRegex(miss[0], r"takes at most 22[234] µs per transaction")

    def test_runs_without_accounts(self):
        with tempfile.TemporaryDirectory() as d:
            res = self.results(d, 2, cpu={})
            self.assertIsNone(res.get("tpcc-4wh", "nvm-mcsi", 4)["server_us_per_txn"])
            self.assertIn("| tpcc-4wh | – | – |", report.cpu_table(res))
            self.assertEqual(report.cpu_bound_text(res, "tpcc-4wh", "nvm-mcsi", "heap-tmpfs", 1.2), "")


class Comparison(unittest.TestCase):
    def test_not_like_for_like_says_why(self):
        t = report.Target("x", "MISS", "", "tpcc-4wh", "nvm-mcsi", "heap-tmpfs")
        ran = {"heap-tmpfs", "nvm-mcsi", "nvm-mcsi-tmpfs"}
        self.assertIn("NOT like for like (nvm-mcsi's WAL is on disk)", report.comparison(t, ran))
        self.assertNotIn("did not run", report.comparison(t, ran))
        self.assertIn("nvm-mcsi-tmpfs did not run", report.comparison(t, ran - {"nvm-mcsi-tmpfs"}))


    def test_durable_only_where_a_power_loss_keeps_the_commits(self):
        # nvm at its default place against heap: both durable through the WAL
        t = report.Target("x", "PASS", "", "insert", "nvm-mcsi-pagecache", "heap")
        self.assertIn("like for like, both durable", report.comparison(t, {"heap", "nvm-mcsi-pagecache"}))
        # the pool in /dev/shm stands for persistent memory: never durable
        t = report.Target("x", "PASS", "", "insert", "nvm-mcsi", "heap")
        text = report.comparison(t, {"heap", "nvm-mcsi"})
        self.assertIn("standing for persistent memory", text)
        self.assertIn("NOT like for like, only heap is durable", text)
        self.assertNotIn("both durable", text)
        t = report.Target("x", "PASS", "", "insert", "nvm-mcsi-tmpfs", "heap-tmpfs")
        text = report.comparison(t, {"heap-tmpfs", "nvm-mcsi-tmpfs"})
        self.assertIn("neither survives a power loss", text)
        self.assertNotIn("both durable", text)


class HonestHeadline(unittest.TestCase):
    """nvm at its default place and durability comes first against heap;
    the pools in /dev/shm are labelled as standing for persistent memory;
    the WAL-bytes targets are judged round by round."""
    TPS = {("insert", c): v for c, v in (("heap", 5000), ("nvm-mcsi-pagecache", 5500),
                                            ("nvm-mcsi", 50000), ("nvm-n2db", 50000))}

    def run_of(self, d, tps, wal=None):
        synthetic_run(d, tps, wal=wal)
        return report.Results(report.load_results(d))

    def test_default_place_first(self):
        with tempfile.TemporaryDirectory() as d:
            res = self.run_of(d, self.TPS)
            self.assertEqual(res.contenders[:2], ["heap", "nvm-mcsi-pagecache"])
            out = report.summary(d, res, report.targets(res))
            header = [line for line in out.splitlines() if line.startswith("| workload")][0]
            cols = [x.strip() for x in header.strip("|").split("|")]
            self.assertEqual(cols[1:3], ["heap max tps (clients)", "nvm-mcsi-pagecache max tps (clients)"])
            self.assertEqual(cols[5], "nvm default place/heap")
            self.assertIn("MCSI pmem stand-in/heap", cols)
            self.assertRegex(out, r"- `nvm-mcsi-pagecache`: [^\n]*durable: its commits survive a power loss")
            self.assertRegex(out, r"- `nvm-mcsi`: [^\n]*standing for persistent memory[^\n]*NOT durable here")
            v = {(t.mine, t.ref, t.kind): t for t in report.targets(res) if t.workload == "insert"}
            # nvm at its default place >= 1.0 x heap (1.1 x, within noise
            # against a disk-bound heap), and the persistent-memory target named as such
            self.assertIn(("nvm-mcsi-pagecache", "heap", "ratio"), v)
            self.assertIn("standing for persistent memory", v[("nvm-mcsi", "heap", "ratio")][0])

    def wal_verdict(self, nvm_bytes):
        tps = {("copy", "heap"): 1.0, ("copy", "nvm-mcsi-pagecache"): 1.0}
        with tempfile.TemporaryDirectory() as d:
            res = self.run_of(d, tps, wal={("copy", "heap"): 1000, ("copy", "nvm-mcsi-pagecache"): nvm_bytes}
                              if nvm_bytes is not None else None)
            tg = [t for t in report.targets(res) if t.kind == "metric" and t.ref == "heap"]
            self.assertEqual(len(tg), 1)
            self.assertIn("WAL bytes per transaction <= 1 x heap", tg[0][0])
            return tg[0][1]

    def test_wal_bytes_against_heap(self):
        self.assertEqual(self.wal_verdict(800), "PASS")
        self.assertEqual(self.wal_verdict(1000), "PASS")
        self.assertEqual(self.wal_verdict(1900), "MISS")
        # a run recorded before WAL bytes were
        self.assertEqual(self.wal_verdict(None), "NO DATA")


class ContendersPerFamily(unittest.TestCase):
    """A contender that did not run a workload's family (quick mode's
    nvm-n2db outside YCSB and TPC-C) has no MCSI >= N2DB target there and
    shows as a dash the report explains; one whose runs failed still has
    its target, with NO DATA."""
    TPS = {("ycsb-a", c): 10000 for c in ("heap", "nvm-mcsi-pagecache", "nvm-mcsi", "nvm-n2db")}
    TPS.update({("insert", c): 10000 for c in ("heap", "nvm-mcsi-pagecache", "nvm-mcsi")})

    def test_mcsi_against_n2db_only_where_both_ran(self):
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, self.TPS)
            res = report.Results(report.load_results(d))
            self.assertTrue(res.ran("ycsb-a", "nvm-n2db"))
            self.assertFalse(res.ran("insert", "nvm-n2db"))
            tg = [t for t in report.targets(res) if t.ref == "nvm-n2db"]
            self.assertEqual([t.workload for t in tg], ["ycsb-a"])
            self.assertNotIn("NO DATA", [t[1] for t in report.targets(res)])
            report.write_report(d, res, [], {}, [], "", {})
            with open(os.path.join(d, "report.md")) as f:
                text = f.read()
        self.assertIn("`nvm-n2db` did not run insert", text)
        self.assertIn("Not profiled in this run: full mode profiles by default, quick mode does not", text)

    def test_failed_runs_still_have_their_target(self):
        with tempfile.TemporaryDirectory() as d:
            tps = dict(self.TPS)
            tps[("insert", "nvm-n2db")] = 10000
            synthetic_run(d, tps)
            path = os.path.join(d, "results.csv")
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            for r in rows:
                if r["workload"] == "insert" and r["contender"] == "nvm-n2db":
                    r.update(status="skipped", tps="", commits="", error="setup or load failed")
            with open(path, "w", newline="") as f:
                wr = csv.DictWriter(f, COLUMNS)
                wr.writeheader()
                wr.writerows(rows)
            res = report.Results(report.load_results(d))
            v = {t.workload: t[1] for t in report.targets(res) if t.ref == "nvm-n2db"}
        self.assertEqual(v, {"ycsb-a": v["ycsb-a"], "insert": "NO DATA"})


class PostgreSQLVersion(unittest.TestCase):
    """The report, its summary and the compare mode name the PostgreSQL
    version that settings.md records (15 or 18), and nothing when it does
    not."""

    def run_with(self, d, settings):
        synthetic_run(d, TargetsOfARun.TPS, rounds=2)
        if settings is not None:
            with open(os.path.join(d, "settings.md"), "w") as f:
                f.write("# Benchmark settings\n\n- mode: quick\n" + settings)
        res = report.Results(report.load_results(d))
        report.write_report(d, res, [], {}, [], "", {})
        with open(os.path.join(d, "report.md")) as f:
            return f.read(), report.summary(d, res, [])

    def test_version_named(self):
        with tempfile.TemporaryDirectory() as d:
            text, summary = self.run_with(d, "- PostgreSQL 18.6; pgbench (PostgreSQL) 18.6\n")
            self.assertTrue(text.startswith("# nvmam benchmark report: PostgreSQL 18.6\n"))
            self.assertIn("## nvmam benchmark (quick, PostgreSQL 18.6):", summary)
            self.assertEqual(report_load.pg_version(d), "PostgreSQL 18.6")
            with tempfile.TemporaryDirectory() as d15:
                self.run_with(d15, "- PostgreSQL 15.14 (Debian 15.14-0+deb12u1); pgbench\n")
                table = report.compare([d15, d])
                self.assertIn("PostgreSQL 15.14)", table)
                self.assertIn("PostgreSQL 18.6)", table)

    def test_no_version_recorded(self):
        with tempfile.TemporaryDirectory() as d:
            text, summary = self.run_with(d, None)
            self.assertTrue(text.startswith("# nvmam benchmark report\n"))
            self.assertIn("## nvmam benchmark (quick):", summary)


class SerialOrder(unittest.TestCase):
    """Full mode runs the contenders one after the other, in rounds: the
    report says so and judges the per-round ratios the same way."""

    def test_serial_rounds_are_reported_as_such(self):
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, TargetsOfARun.TPS, rounds=3, serial=True)
            res = report.Results(report.load_results(d))
            self.assertFalse(report.interleaved(res))
            text = report.verdict_rule_text(res)
            self.assertIn("serial order", text)
            self.assertIn("ran 3 round(s)", text)
            v = {(t.workload, t.mine, t.ref, t.kind): t for t in report.targets(res)}
            self.assertEqual(v[("insert", "nvm-mcsi", "heap", "ratio")][1], "PASS")
            self.assertEqual(v[("insert", "nvm-mcsi", "heap", "ratio")].spread.n, 3)
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, TargetsOfARun.TPS, rounds=3)
            res = report.Results(report.load_results(d))
            self.assertTrue(report.interleaved(res))
            self.assertIn("back to back", report.verdict_rule_text(res))


class ConsistencyChecks(unittest.TestCase):
    """checks.csv (bench/run.sh check_run) in the report: a run that broke
    a condition is named at the top and in its section."""

    TPS = {("tpccsp-4wh", "heap"): 1000, ("tpccsp-4wh", "nvm-mcsi"): 2000}

    def write(self, d, rows):
        synthetic_run(d, self.TPS, rounds=2)
        with open(os.path.join(d, "checks.csv"), "w") as f:
            f.write("run_id,family,workload,contender,clients,rep,status,conditions,violations\n")
            f.writelines(r + "\n" for r in rows)
        res = report.Results(report.load_results(d))
        report.write_report(d, res, [], {}, [], "", {})
        with open(os.path.join(d, "report.md")) as f:
            return f.read(), report.summary(d, res, [])

    def test_all_passed(self):
        with tempfile.TemporaryDirectory() as d:
            text, summary = self.write(d, ['%d,tpccsp,tpccsp-4wh,%s,4,%d,ok,11,""' % (i, c, r)
                                           for i, (c, r) in enumerate(
                                               [("heap", 1), ("nvm-mcsi", 1), ("heap", 2), ("nvm-mcsi", 2)])])
            self.assertIn("## Consistency checks", text)
            self.assertIn("Every run of every contender passed every condition", text)
            self.assertRegex(text, r"\| tpccsp-4wh \| nvm-mcsi \| 2 \| 11 \| none \|")
            self.assertIn("Consistency checks: 4 run(s) checked, all passed", summary)

    def test_a_violation_is_shown(self):
        with tempfile.TemporaryDirectory() as d:
            text, summary = self.write(d, [
                '1,tpccsp,tpccsp-4wh,heap,4,1,ok,11,""',
                '2,tpccsp,tpccsp-4wh,nvm-mcsi,4,1,violated,11,"3.3.2.1: 1 warehouses with W_YTD <> sum(D_YTD)"'])
            self.assertIn("**1 run(s) broke a consistency condition", text.split("## Main comparison")[0])
            self.assertRegex(text, r"\| tpccsp-4wh \| nvm-mcsi \| 1 \| 11 \| \*\*1\*\* \|")
            self.assertIn("| 2 | tpccsp-4wh | nvm-mcsi | 4 | 1 | **violated** | 3.3.2.1: 1 warehouses", text)
            self.assertIn("1 FAILED", summary)

    def test_no_checks_no_section(self):
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d, self.TPS, rounds=2)
            res = report.Results(report.load_results(d))
            report.write_report(d, res, [], {}, [], "", {})
            with open(os.path.join(d, "report.md")) as f:
                self.assertNotIn("Consistency checks", f.read())


class Descriptors(unittest.TestCase):
    def test_every_descriptor_loads_and_plans(self):
        fams = workloads.load()
        names = [w.name for f in fams for w in f.workloads]
        for w in ("ycsb-a", "ycsb-b", "ycsb-c", "tpcc-1wh", "tpcc-4wh", "tpcc-uncontended",
                  "tpccsp-4wh", "tpcb", "insert", "update", "copy", "seqscan-count", "seqscan-sum"):
            self.assertIn(w, names)
        for mode in workloads.MODES:
            plan = workloads.shell_plan(fams, mode, [1, 4], names, ["tpcc-1wh:8"])
            for w in names:
                self.assertIn("WL_ARGS['%s 4']=" % w, plan)
            self.assertIn("WL_ARGS['tpcc-1wh 8']=", plan)
            # a COPY of the whole file per client: up to 4 clients only
            self.assertIn("WL_UPTO[copy]=4", plan)
            self.assertIn("WL_UPTO[update]=0", plan)

    def test_a_new_workload_is_one_file(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "kv.toml"), "w") as f:
                f.write('[family]\nname = "kv"\ntitle = "KV"\norder = 50\n'
                        'sizes.rows = { quick = 10, full = 100 }\n'
                        'load = [{ psql = ["rows_schema.sql"], vars = { rows = "rows" } }]\n'
                        '[[workload]]\nname = "kv-read"\ntitle = "reads"\n'
                        'scripts = ["update.sql"]\ndefines = { rows = "rows * 2" }\n'
                        'targets = [{ mine = "nvm-mcsi", ref = "heap", factor = 1.0 }]\n')
            fams = workloads.load(d)
            plan = workloads.shell_plan(fams, "quick", [4], ["kv-read"], [])
            self.assertIn("rows=20", plan)
            self.assertEqual(fams[0].workloads[0].targets[0].factor, 1.0)

    def test_autovacuum_and_check(self):
        fams = {f.name: f for f in workloads.load()}
        # server-side TPC-C runs with autovacuum and its consistency check;
        # every other family without either
        self.assertTrue(fams["tpccsp"].autovacuum)
        self.assertEqual(fams["tpccsp"].check, "tpccsp_check.sql")
        self.assertFalse(fams["tpcc"].autovacuum)
        self.assertIsNone(fams["tpcc"].check)
        plan = workloads.shell_plan(list(fams.values()), "quick", [4], ["tpccsp-4wh", "tpcc-4wh"], [])
        self.assertIn("FAM_AUTOVACUUM[tpccsp]=on", plan)
        self.assertIn("FAM_AUTOVACUUM[tpcc]=off", plan)
        self.assertRegex(plan, r"FAM_CHECK\[tpccsp\]=\S*/bench/workloads/tpccsp_check\.sql")
        self.assertIn("FAM_CHECK[tpcc]=''", plan)
        # the check holds the conditions of clause 3.3.2.1-3.3.2.4 at least
        with open(os.path.join(workloads.WORKLOAD_DIR, "tpccsp_check.sql")) as f:
            sql = f.read()
        for k in range(1, 5):
            self.assertIn("SELECT '3.3.2.%d'," % k, sql)
        # the like-for-like target, with nvm-mcsi standing in when
        # nvm-mcsi-tmpfs did not run
        t = [t for t in fams["tpccsp"].workloads[0].targets if t.ref == "heap-tmpfs"][0]
        self.assertEqual((t.mine, t.factor, t.instead), ("nvm-mcsi-tmpfs", 1.3, "nvm-mcsi"))

    def test_autovacuum_and_check_mistakes(self):
        head = ('[family]\nname = "b"\ntitle = "B"\norder = 1\nload = []\n%s\n'
                '[[workload]]\nname = "b1"\ntitle = "b"\nscripts = ["update.sql"]\n')
        self.assert_refused(head, (('autovacuum = "on"', "autovacuum is true or false"),
                                   ('check = "no_such_check.sql"', "check script no_such_check.sql not found")))

    def assert_refused(self, head, cases):
        """Each (line, message) of cases: the descriptor head with line put
        in at its %s is refused with the message."""
        for line, msg in cases:
            with self.subTest(line=line), tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "bad.toml"), "w") as f:
                    f.write(head % line)
                with self.assertRaisesRegex(workloads.DescriptorError, msg):
                    workloads.load(d)

    def test_contenders_left_out_of_a_mode(self):
        fams = {f.name: f for f in workloads.load()}
        # quick mode runs nvm-n2db only in the families the report compares
        # with MCSI as the paper does (YCSB, TPC-C); full mode everywhere
        for name in ("ycsb", "tpcc"):
            self.assertEqual(fams[name].skip_contenders["quick"], [])
        for name in ("tpccsp", "tpcb", "rows", "bulk"):
            self.assertEqual(fams[name].skip_contenders["quick"], ["nvm-n2db"])
        for f in fams.values():
            self.assertEqual(f.skip_contenders["full"], [])
        plan = workloads.shell_plan(list(fams.values()), "quick", [4], ["ycsb-a", "insert"], [])
        self.assertIn("FAM_SKIP[rows]=nvm-n2db", plan)
        self.assertIn("FAM_SKIP[ycsb]=''", plan)
        plan = workloads.shell_plan(list(fams.values()), "full", [4], ["insert"], [])
        self.assertIn("FAM_SKIP[rows]=''", plan)

    def test_a_left_out_contender_a_target_needs_is_refused(self):
        head = ('[family]\nname = "b"\ntitle = "B"\norder = 1\nload = []\n%s\n'
                '[[workload]]\nname = "b1"\ntitle = "b"\nscripts = ["update.sql"]\n'
                'targets = [{ mine = "nvm-n2db", ref = "heap", factor = 1.0 }]\n')
        self.assert_refused(head, (('skip_contenders = { quick = ["nvm-n2db"] }', "leaves out nvm-n2db, which a target"),
                                   ('skip_contenders = { fast = ["heap"] }', "unknown key"),
                                   ('skip_contenders = { quick = "nvm-n2db" }', "a list of contender names")))

    def test_engine_workloads(self):
        engine = workloads.load_engine()
        self.assertIn(engine.stand_in, engine.names())
        self.assertEqual(engine.by_name["micro"].write_fraction, 1.0)
        self.assertEqual(engine.by_name["ycsb-c"].write_fraction, 0.0)
        # ycsb-a: 1-5 rows, each updated with probability 1/2
        self.assertAlmostEqual(engine.by_name["ycsb-a"].write_fraction,
                               1 - sum(0.5 ** k for k in range(1, 6)) / 5)
        plan = workloads.shell_plan(workloads.load(), "quick", [4], ["ycsb-a"], [], engine)
        self.assertIn("ENGINE_WL=(%s)" % " ".join(engine.names()), plan)
        self.assertIn("ENGINE_MB[micro]=", plan)
        # the engine's file is not a family
        self.assertNotIn(workloads.ENGINE_FILE, [os.path.basename(f.path) for f in workloads.load()])

    def test_mistakes_are_reported(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "bad.toml"), "w") as f:
                f.write('[family]\nname = "b"\ntitle = "B"\norder = 1\nload = []\n'
                        '[[workload]]\nname = "b1"\ntitle = "b"\nscripts = ["update.sql"]\n'
                        'factor = 2\n')
            with self.assertRaisesRegex(workloads.DescriptorError, "unknown key"):
                workloads.load(d)


class ServerDay(unittest.TestCase):
    """bench/steady.sh and bench/scale.sh: what the server log says
    (serverlog.py), the per-transaction costs and per-round ratios of
    steady_report.py, and scale_report.py's rounds paired by number."""

    LOG = "\n".join([
        "2026-12-07 06:11:26.092 UTC [1] LOG:  checkpoint starting: time",
        "2026-12-07 06:11:26.168 UTC [1] LOG:  checkpoint complete: wrote 4 buffers (0.0%); 0 WAL file(s) "
        "added, 0 removed, 0 recycled; write=0.018 s, sync=0.019 s, total=0.076 s; sync files=3, "
        "longest=0.017 s, average=0.007 s; distance=0 kB, estimate=0 kB",
        "2026-12-07 06:12:11.260 UTC [2] LOG:  nvm: checkpoint of the pool: wrote the files of 2 nvm tables "
        "(20000 rows, 3066 kB), kept 1 unchanged, removed 0; logged 0 prepared transactions",
        "2026-12-07 06:12:12.168 UTC [1] LOG:  checkpoint complete: wrote 10 buffers (0.0%); 0 WAL file(s) "
        "added, 0 removed, 0 recycled; write=0.018 s, sync=0.019 s, total=1.500 s; sync files=3, "
        "longest=0.017 s, average=0.007 s; distance=0 kB, estimate=0 kB",
        "2026-12-07 06:12:13.507 UTC [3] LOG:  nvm: logged the rows of 1 nvm tables (20000 rows, "
        "0 prepared transactions, 3 MB of WAL) as the image of the pool at the start of the server",
        "2026-12-07 06:12:28.474 UTC [4] LOG:  nvm: nvm pool \"/x/pg_nvm/pool\" is perhaps torn after a "
        "crash of the operating system, a power loss or a reboot: it is rebuilt from the WAL",
        "2026-12-07 06:12:31.326 UTC [5] LOG:  nvm: loaded the checkpoint files of 1 nvm tables "
        "(20000 rows) into the rebuilt pool",
        "2026-12-07 06:12:31.358 UTC [5] LOG:  redo done at 0/2337C98 system usage: CPU: user: 0.01 s, "
        "system: 0.02 s, elapsed: 0.17 s",
    ])

    def test_log_summary(self):
        s = serverlog.summarize(self.LOG)
        self.assertEqual((s.checkpoints, s.ckpt_buffers), (2, 14))
        self.assertAlmostEqual(s.ckpt_seconds, 1.576)
        self.assertEqual((s.pool_ckpts, s.pool_files, s.pool_rows, s.pool_kb, s.pool_kept),
                         (1, 2, 20000, 3066, 1))
        self.assertEqual((s.images, s.image_rows, s.image_mb), (1, 20000, 3))
        self.assertEqual((s.rebuilds, s.loaded_rows), (1, 20000))
        self.assertAlmostEqual(s.redo_seconds, 0.17)
        self.assertEqual(serverlog.summarize("LOG:  database system is ready").redo_seconds, -1.0)

    # the same events as the incremental checkpoints of the pool log them:
    # captures at a checkpoint, a clean stop and the end of recovery, a
    # merge, no image at the start, and a rebuild's parallel load
    NEW_LOG = "\n".join([
        "2026-12-07 12:11:26.060 UTC [2] LOG:  nvm: checkpoint of the pool at a checkpoint: wrote 41 kB "
        "(200 rows) for 1 changed and 0 whole nvm tables, kept 2 unchanged, dropped 0, 0 in doubt; 0.004 s",
        "2026-12-07 12:11:26.168 UTC [1] LOG:  checkpoint complete: wrote 4 buffers (0.0%); 0 WAL file(s) "
        "added, 0 removed, 0 recycled; write=0.018 s, sync=0.019 s, total=0.076 s; sync files=3, "
        "longest=0.017 s, average=0.007 s; distance=0 kB, estimate=0 kB",
        "2026-12-07 12:11:40.000 UTC [2] LOG:  nvm: merged the checkpoint files of 1 nvm tables "
        "(9 files into 20000 rows, 3066 kB)",
        "2026-12-07 12:12:11.260 UTC [2] LOG:  nvm: checkpoint of the pool at the clean stop: wrote 3070 kB "
        "(20001 rows) for 0 changed and 1 whole nvm tables, kept 1 unchanged, dropped 1, 2 in doubt; 0.250 s",
        "2026-12-07 12:12:28.474 UTC [4] LOG:  nvm: nvm pool \"/x/pg_nvm/pool\" is gone after a "
        "crash of the operating system, a power loss or a reboot: it is rebuilt from the WAL",
        "2026-12-07 12:12:31.326 UTC [4] LOG:  nvm: loaded the checkpoint files of 2 nvm tables "
        "(20001 rows, 3 MB) into the rebuilt pool in 1.5 s with 2 workers",
        "2026-12-07 12:12:31.358 UTC [4] LOG:  redo done at 0/2337C98 system usage: CPU: user: 0.01 s, "
        "system: 0.02 s, elapsed: 0.17 s",
        "2026-12-07 12:12:31.400 UTC [4] LOG:  nvm: checkpoint of the pool at the end of recovery: wrote "
        "12 kB (30 rows) for 2 changed and 0 whole nvm tables, kept 0 unchanged, dropped 0, 0 in doubt; "
        "0.010 s",
    ])

    def test_log_summary_of_incremental_checkpoints(self):
        s = serverlog.summarize(self.NEW_LOG)
        self.assertEqual((s.checkpoints, s.ckpt_buffers), (1, 4))
        self.assertEqual((s.pool_ckpts, s.pool_kb, s.pool_rows), (3, 41 + 3070 + 12, 200 + 20001 + 30))
        self.assertEqual((s.pool_changed, s.pool_whole, s.pool_files, s.pool_kept), (3, 1, 4, 3))
        self.assertAlmostEqual(s.pool_seconds, 0.264)
        self.assertEqual((s.merges, s.merged_kb), (1, 3066))
        self.assertEqual((s.images, s.image_mb), (0, 0))
        self.assertEqual((s.rebuilds, s.loaded_rows, s.load_workers), (1, 20001, 2))
        self.assertAlmostEqual(s.load_seconds, 1.5)
        self.assertAlmostEqual(s.redo_seconds, 0.17)
        # the first line alone: a checkpoint after 200 single-row updates
        s = serverlog.summarize(self.NEW_LOG.splitlines()[0])
        self.assertEqual((s.pool_ckpts, s.pool_kb, s.pool_rows, s.pool_files), (1, 41, 200, 1))
        # the old engine's lines carry no load seconds
        self.assertEqual(serverlog.summarize(self.LOG).load_seconds, -1.0)
        self.assertEqual(serverlog.summarize(self.LOG).pool_whole, 2)

    def test_log_from_offset_to_end(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write(self.LOG + "\n")
        try:
            first = len(self.LOG.splitlines()[0]) + 1
            two = first + len(self.LOG.splitlines()[1]) + 1
            s = serverlog.summarize(serverlog.read_from(f.name, first, two))
            self.assertEqual((s.checkpoints, s.ckpt_buffers, s.pool_ckpts), (1, 4, 0))
            s = serverlog.summarize(serverlog.read_from(f.name, two))
            self.assertEqual((s.checkpoints, s.pool_kb), (1, 3066))
        finally:
            os.unlink(f.name)

    @staticmethod
    def line(contender, rnd, tps, txns, buffers, pool_kb, cpu):
        return {"workload": "tpcb", "contender": contender, "round": str(rnd), "tps": str(tps),
                "txns": str(txns), "ckpt_buffers": str(buffers), "pool_kb": str(pool_kb),
                "wal_bytes": "0", "wal_fpi": "0", "wal_syncs": "0", "watch_write_bytes": "",
                "server_cpu_s": str(cpu)}

    def test_steady_checkpoint_bytes_per_transaction(self):
        # nvm's checkpoints write buffers (index, catalog) and pool files
        r = self.line("nvm", 1, 100, 1000, 10, 2000, 1.0)
        self.assertEqual(steady_report.ckpt_bytes(r), 10 * 8192 + 2000 * 1024)
        per_txn = dict((n, f) for n, _, f in steady_report.COSTS)
        self.assertAlmostEqual(per_txn["ckpt_bytes"](r), (10 * 8192 + 2000 * 1024) / 1000)
        self.assertAlmostEqual(per_txn["cpu_us"](r), 1000.0)
        self.assertIsNone(per_txn["watch_bytes"](r))

    def test_steady_ratios_pair_rounds(self):
        runs = [self.line("heap", 1, 100, 1, 0, 0, 1), self.line("nvm", 1, 80, 1, 0, 0, 1),
                self.line("heap", 2, 50, 1, 0, 0, 1), self.line("nvm", 2, 60, 1, 0, 0, 1),
                self.line("nvm", 3, 70, 1, 0, 0, 1)]   # a round heap lacks: left out
        med, lo, hi = steady_report.ratios(runs, "tpcb", "nvm", "heap", lambda r: float(r["tps"]))
        self.assertAlmostEqual(lo, 0.8)
        self.assertAlmostEqual(hi, 1.2)
        self.assertAlmostEqual(med, 1.0)
        text = "\n".join(steady_report.render(
            [dict(r, checkpoints="1", ckpt_logged="1", ckpt_logged_s="0.5", check="-", failed="0",
                  retried="0", load1="1") for r in runs], []))
        self.assertIn("| nvm | 70.0 (60.0–80.0) | 1.00 (0.800–1.20) |", text)

    def test_scale_ratios_pair_rounds_and_sizes(self):
        rounds = [{"rows": "200", "contender": "heap", "round": "1", "ckpt_s": "0.1"},
                  {"rows": "200", "contender": "nvm", "round": "1", "ckpt_s": "0.4"},
                  {"rows": "200", "contender": "heap", "round": "2", "ckpt_s": "0.2"},
                  {"rows": "200", "contender": "nvm", "round": "2", "ckpt_s": "0.2"},
                  {"rows": "2000", "contender": "nvm", "round": "1", "ckpt_s": "9"}]
        med, lo, hi = scale_report.round_ratios(rounds, "200", "ckpt_s")
        self.assertEqual((lo, hi), (1.0, 4.0))
        self.assertAlmostEqual(med, 2.5)
        self.assertIsNone(scale_report.round_ratios(rounds, "2000", "ckpt_s"))

    def test_targets_before_and_after(self):
        # per-round ratios paired by round; a verdict per target: met when
        # every round meets it, missed when none does, else within noise
        scale = [{"rows": "2000000", "contender": c, "round": str(r), "ckpt_s": s,
                  "ckpt_pool_bytes": str(p), "restart_wal_bytes": "120", "restart_s": "1",
                  "recovery_all_s": a}
                 for c, r, s, p, a in [("heap", 1, "0.2", 0, "2"), ("nvm", 1, "0.1", 40000, "2.5"),
                                       ("heap", 2, "0.2", 0, "2"), ("nvm", 2, "0.3", 2 * 1048576, "4")]]
        steady = [{"workload": "tpcb", "contender": c, "round": "1", "tps": t}
                  for c, t in [("heap", "100"), ("nvm", "160")]]
        got = dict(day_targets.targets(scale, steady))
        self.assertIn("1.60 ×, 1 rounds: **met**", got["steady-state TPC-B, nvm / heap tps ≥ 1.5"])
        self.assertEqual(got["server-side TPC-C, nvm / heap tps ≥ 1.3"], "not measured")
        files = got["checkpoint after 200 updates, 2,000,000 rows: nvm's checkpoint files ≤ 1 MB"]
        self.assertIn("**within noise**", files)
        self.assertIn("(0.0381–2.00) MB", files)
        self.assertIn("**within noise**", got["checkpoint after 200 updates, 2,000,000 rows: "
                                              "nvm / heap seconds ≤ 1"])
        self.assertIn("**met**", got["clean restart, 2,000,000 rows: first query, nvm / heap seconds ≤ 1.5"])
        self.assertIn("1.62 (1.25–2.00) ×, 2 rounds: **within noise**",
                      got["power loss, 2,000,000 rows: every row answers, nvm / heap seconds ≤ 1.5"])
        slow = [dict(r, recovery_all_s="9") if r["contender"] == "nvm" else r for r in scale]
        self.assertIn("**missed**", dict(day_targets.targets(slow, []))[
            "power loss, 2,000,000 rows: every row answers, nvm / heap seconds ≤ 1.5"])


if __name__ == "__main__":
    unittest.main(verbosity=2)

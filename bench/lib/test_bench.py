#!/usr/bin/env python3
"""bench/lib/test_bench.py
     Self-test of the benchmark's report and workload descriptors: the
     verdict rule (PASS, MISS, within noise) on per-round ratios, the run's
     noise, the targets and report of a synthetic run, and the descriptors
     (every one loads, a new one is a single file).  Run by meson test (the
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
           "duration_s", "rep", "run_id", "status", "tps", "commits", "wal_fsyncs", "failed",
           "retried", "retries", "abort_pct", "lat_avg_ms", "lat_p50_ms", "lat_p99_ms", "error"]


def synthetic_run(out, tps, rounds=4, jitter=0.03, seed=1):
    """results.csv of a quick run: tps {(workload, contender): value} at 4
    clients, each round's value moved by a common factor (load that hits
    every contender alike) and by its own jitter."""
    rng = random.Random(seed)
    rows, rid = [], 0
    for w in sorted({w for w, _ in tps}):
        for r in range(1, rounds + 1):
            common = math.exp(rng.gauss(0, 0.3))
            for (w2, c), v in sorted(tps.items()):
                if w2 != w:
                    continue
                rid += 1
                t = v * common * math.exp(rng.gauss(0, jitter))
                rows.append({"mode": "quick", "family": report.wfamily(w), "workload": w,
                             "contender": c, "clients": 4, "threads": 2, "warehouses": "",
                             "duration_s": 2, "rep": r, "run_id": rid, "status": "ok",
                             "tps": "%.1f" % t, "commits": int(2 * t),
                             "wal_fsyncs": int(2 * t * (0.01 if c.startswith("nvm") else 0.9)),
                             "failed": 0, "retried": 0, "retries": 0, "abort_pct": "0.0",
                             "lat_avg_ms": "1.0", "lat_p50_ms": "0.9", "lat_p99_ms": "3.0",
                             "error": ""})
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, COLUMNS)
        wr.writeheader()
        wr.writerows(rows)


class TargetsOfARun(unittest.TestCase):
    TPS = {
        # nvm-mcsi 5 x heap: PASS of ">= 3 x heap"; fsyncs 0.01 per txn
        ("insert", "heap"): 10000, ("insert", "heap-tmpfs"): 40000,
        ("insert", "nvm-mcsi"): 50000, ("insert", "nvm-n2db"): 50000,
        # nvm-mcsi 0.5 x heap: MISS of ">= 0.9 x heap"; nvm-n2db 0.92 x:
        # within noise of it
        ("ycsb-c", "heap"): 20000, ("ycsb-c", "heap-tmpfs"): 20000,
        ("ycsb-c", "nvm-mcsi"): 10000, ("ycsb-c", "nvm-n2db"): 18400,
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
        # every ratio of the main table has its spread
        self.assertRegex(text, r"\| insert \|.*\| \d\.\d\d \(\d\.\d\d–\d\.\d\d\) \|")


class Descriptors(unittest.TestCase):
    def test_every_descriptor_loads_and_plans(self):
        fams = workloads.load()
        names = [w.name for f in fams for w in f.workloads]
        for w in ("ycsb-a", "ycsb-b", "ycsb-c", "tpcc-1wh", "tpcc-4wh", "tpcc-uncontended",
                  "tpcb", "insert", "update"):
            self.assertIn(w, names)
        for mode in workloads.MODES:
            plan = workloads.shell_plan(fams, mode, [1, 4], names, ["tpcc-1wh:8"])
            for w in names:
                self.assertIn("WL_ARGS['%s 4']=" % w, plan)
            self.assertIn("WL_ARGS['tpcc-1wh 8']=", plan)

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

    def test_mistakes_are_reported(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "bad.toml"), "w") as f:
                f.write('[family]\nname = "b"\ntitle = "B"\norder = 1\nload = []\n'
                        '[[workload]]\nname = "b1"\ntitle = "b"\nscripts = ["update.sql"]\n'
                        'factor = 2\n')
            with self.assertRaisesRegex(workloads.DescriptorError, "unknown key"):
                workloads.load(d)


if __name__ == "__main__":
    unittest.main(verbosity=2)

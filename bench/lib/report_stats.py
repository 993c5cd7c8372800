"""bench/lib/report_stats.py
     The statistics of the report and its verdict rule: per-round ratios of
     two contenders, the run's noise, the disk's drift (measured in the run
     from its fsync samples, or the fixed shift of runs without them), the
     verdict interval (Spread) and the targets of a run with their verdicts
     (PASS, MISS, within noise, NO DATA).
"""

import math
import os

from report_common import WORKLOADS, ctitle, fmt_factor, fmt_tps, median, wtitle


# ---------------------------------------------------------------------------
# verdicts: per-round ratios, the run's noise and the disk's shift
# ---------------------------------------------------------------------------
#
# The rule (report_render.verdict_rule_text says it in the report,
# bench/README.md in "Reading the report"): a target "A >= k x B" takes the
# ratio of A and B in each round of the point, rho_r = tps_A / tps_B (in a
# round the contenders run back to back, seconds apart, so load that hits
# both alike cancels).
# Its spread, the verdict interval, reaches from the lowest round's ratio
# less the noise margin to the highest round's plus the margin:
#     from lowest rho_r / exp(m)  to  highest rho_r x exp(m),
#     m = Z_MARGIN x sqrt(s^2 / R + tau^2),
# where s, the run's noise, is how far one round's log ratio of two
# contenders strays from the median of its point: pooled over every pair of
# contenders and every point of the run, robustly (1.4826 x the median
# absolute deviation, corrected for the few rounds of a point), and at
# least MIN_NOISE; and tau, the disk's drift, is 0 unless one of the two
# contenders waits for the disk at commit (disk_bound); then it is the drift
# measured in the run (disk_drift: from the fsync samples of disk.csv,
# taken between rounds), or, for a run recorded without them, the fixed
# DISK_SHIFT of the earlier rule.
# PASS: the interval lies at or above k (every round clears k by the
# margin); MISS: it lies below k; within noise: k lies inside it, so the
# spread of the measurement and the target overlap.

# how many noise units the margin adds beyond the extreme rounds: run-to-run
# differences on a shared machine (other work's load shifting between
# runs) exceed what the rounds of one run show; chosen so that two
# consecutive quick runs agree on every target (bench/results/quick-repeat*)
Z_MARGIN = 3.0
# the least noise a run is credited with: a quiet run's rounds agree more
# closely than two runs do
MIN_NOISE = 0.05
# the noise of one round when the run cannot measure it (one round per
# point): the log ratio of two contenders moves by this much from run to
# run on a shared 2-core machine
ASSUMED_NOISE = 0.25
# consistency constant of the median absolute deviation for normal noise
MAD_TO_SIGMA = 1.4826
# a contender waits for the disk at commit when its WAL is on disk (not in
# /dev/shm), synchronous_commit is on, and its rounds at the point took at
# least this many WAL fsyncs per transaction: heap takes one per commit
# alone and, as concurrent commits share a flush, about 0.5 at 4 clients
# and 0.3 at 8; nvm's log-free commits about 0.03 at most, read-only
# transactions none
DISK_BOUND_FSYNCS = 0.1
# The earlier rule's tau, kept for runs recorded without fsync samples (no
# disk.csv): how far the log ratio of a disk-bound contender and another
# one moved from one run to the next on a disk shared with other work,
# assumed from the worst seen: the standard deviation of heap / heap-tmpfs's
# median's log between consecutive quick runs was 0.33 for single-row
# INSERT and UPDATE, 0.24 for TPC-C (bench/results/quick-repeat2-20261126/).
DISK_SHIFT = 0.3
# NVM_BENCH_DISK_SHIFT, when set, fixes tau for every run, with or without
# samples (0 on a disk no other work uses)
DISK_SHIFT_FIXED = os.environ.get("NVM_BENCH_DISK_SHIFT")
# the least drift a run with fsync samples is credited with: a quick run
# has about nine points of six samples, from which a drift is estimated to
# about +-0.1 (simulated: a true drift of 0.3 under a scatter of 0.3 within
# points comes out between 0.19 and 0.41 in 80 % of runs), so a quiet
# run's estimate can come out near 0 by chance
MIN_DRIFT = 0.1
# a contender whose server and pgbench kept at least this share of the
# machine's CPUs busy during its runs is limited by the CPUs
CPU_SATURATED = 0.85


def per_round(res, w, a, na, b, nb):
    """{round: tps of a / tps of b} over the rounds in which both ran."""
    ra, rb = res.rounds(w, a, na), res.rounds(w, b, nb)
    return {k: ra[k]["tps"] / rb[k]["tps"] for k in sorted(set(ra) & set(rb))
            if ra[k]["tps"] > 0 and rb[k]["tps"] > 0}


def robust_noise(groups):
    """(s, values): the robust standard deviation of one value of a group
    about its group's median, pooled over the groups of at least two (lists
    of log ratios, one per point and pair): 1.4826 x the median absolute
    deviation, scaled by sqrt(values / degrees of freedom), since values lie
    closer to their own group's median than to the true centre; None when
    there are fewer than three degrees of freedom."""
    dev, dof = [], 0
    for v in groups:
        if len(v) < 2:
            continue
        m = median(v)
        dev += [abs(x - m) for x in v]
        dof += len(v) - 1
    if dof < 3:
        return None, len(dev)
    return MAD_TO_SIGMA * median(dev) * math.sqrt(len(dev) / dof), len(dev)


def pair_groups(res, a, b):
    """The log ratios a / b of every point, one list per point."""
    return [[math.log(x) for x in per_round(res, w, a, n, b, n).values()]
            for w in res.workloads for n in res.clients]


def run_noise(res):
    """(s, values): the run's noise, pooled over every pair of contenders
    (drain-delay contenders left out) and every point."""
    cs = [c for c in res.contenders if "@" not in c]
    groups = []
    for i, a in enumerate(cs):
        for b in cs[i + 1:]:
            groups += pair_groups(res, a, b)
    return robust_noise(groups)


class Spread:
    """The per-round values of a ratio and its verdict interval (see the
    rule above); noise is the run's s, or None when it could not be
    measured; shift is tau, the disk's run-to-run shift when one of the two
    contenders is disk-bound, else 0."""

    def __init__(self, vals, noise, shift=0.0, drift=None):
        self.vals = list(vals)
        self.n = len(self.vals)
        self.median = median(self.vals)
        self.lo, self.hi = min(self.vals), max(self.vals)
        self.measured = noise is not None
        self.noise = max(noise, MIN_NOISE) if noise is not None else ASSUMED_NOISE
        self.shift = shift
        # how the line names its tau (Drift.name), when it has one
        self.drift_name = drift.name() if drift is not None and shift else "with the disk's shift %.2f" % shift
        self.margin = Z_MARGIN * math.sqrt(self.noise ** 2 / self.n + shift ** 2)
        self.low = self.lo * math.exp(-self.margin)
        self.high = self.hi * math.exp(self.margin)

    def verdict(self, need):
        if self.low >= need:
            return "PASS"
        if self.high < need:
            return "MISS"
        return "within noise"

    def text(self, digits=2):
        f = "%%.%df" % digits
        disk = ", " + self.drift_name if self.shift else ""
        if self.n == 1:
            return (f + " (1 round; verdict interval " + f + "–" + f + ", noise %s%s)") % (
                self.median, self.low, self.high, "measured" if self.measured else "assumed", disk)
        return (f + " (rounds " + f + "–" + f + ", %d rounds; verdict interval " + f + "–" + f + "%s)") % (
            self.median, self.lo, self.hi, self.n, self.low, self.high, disk)


class Target(tuple):
    """(target, verdict, detail), with the workload, the two contenders
    compared (mine, ref) and the spread as attributes."""

    def __new__(cls, target, verdict, detail, workload=None, mine=None, ref=None,
                spread=None, need=None, kind="ratio"):
        t = super().__new__(cls, (target, verdict, detail))
        t.workload, t.mine, t.ref = workload, mine, ref
        t.spread, t.need, t.kind = spread, need, kind
        return t


def noise_of(res):
    """The run's noise s (run_noise), computed once per Results."""
    if not hasattr(res, "noise"):
        res.noise = run_noise(res)[0]
    return res.noise


def wal_on_disk(c):
    """Whether contender c keeps its WAL on disk (every contender but the
    -tmpfs ones, whose data directory is in /dev/shm)."""
    return "tmpfs" not in c


def fsyncs_per_txn(res, w, c, n):
    """WAL fsyncs per transaction over the rounds of a point, or None."""
    rs = [r for r in res.rounds(w, c, n).values() if r.get("wal_fsyncs") is not None and r.get("commits")]
    if not rs:
        return None
    return sum(r["wal_fsyncs"] for r in rs) / sum(r["commits"] for r in rs)


def disk_bound(res, w, c, n):
    """Whether contender c waits for the disk at commit at this point: its
    WAL is on disk, synchronous_commit is on, and its rounds took at least
    DISK_BOUND_FSYNCS WAL fsyncs per transaction."""
    f = fsyncs_per_txn(res, w, c, n)
    sync = all(r.get("synchronous_commit", "on") != "off" for r in res.rounds(w, c, n).values())
    return wal_on_disk(c) and sync and f is not None and f >= DISK_BOUND_FSYNCS


class Drift:
    """The disk's drift over a run, tau of the targets against a contender
    that waits for the disk: how far the disk's level (the log of its time
    per fsync) moves over minutes, which moves every round of a point alike,
    so the point's rounds cannot see it, and which a next run, minutes
    later, may find elsewhere.

    From the run's fsync samples (disk.csv: one before every round of a
    point and one after its last, every contender idle), the random-effects
    analysis of variance of their logs (each sample's mean µs per fsync) by
    point: a point's level is the mean of its samples' logs; between is the
    standard deviation of the levels over the run's points, within that of
    a sample about its point's level (pooled), and the part of between that
    within cannot explain (the mean of k samples strays by
    within / sqrt(k)) is the drift:
        tau = max(MIN_DRIFT, sqrt(max(0, between^2 - within^2 / k))).
    The scatter within a point, seconds apart, moves the rounds of a point
    apart, and with them the per-round ratios and the run's noise s; so do
    the disk-waiting contender's own times per WAL fsync between its rounds
    (the report lists them): tau adds only what moves every round alike.
    A run without samples keeps the fixed DISK_SHIFT (rule "fixed"), and
    NVM_BENCH_DISK_SHIFT fixes tau for any run."""

    def __init__(self, samples):
        self.samples = samples or []
        self.points, self.between, self.within, self.k = 0, None, None, 0
        if DISK_SHIFT_FIXED is not None:
            self.rule, self.tau = "set", float(DISK_SHIFT_FIXED)
            return
        if samples is None:
            self.rule, self.tau = "fixed", DISK_SHIFT
            return
        self.rule = "measured"
        groups = {}
        for r in self.samples:
            groups.setdefault((r.get("workload"), r.get("clients")), []).append(math.log(r["mean_us"]))
        groups = list(groups.values())
        self.points = len(groups)
        dof = sum(len(g) - 1 for g in groups)
        if self.points >= 3 and dof >= 1:
            levels = [sum(g) / len(g) for g in groups]
            self.k = sum(len(g) for g in groups) / self.points
            self.within = math.sqrt(sum((x - lv) ** 2 for g, lv in zip(groups, levels) for x in g) / dof)
            m = sum(levels) / self.points
            self.between = math.sqrt(sum((lv - m) ** 2 for lv in levels) / (self.points - 1))
            self.tau = max(MIN_DRIFT, math.sqrt(max(0.0, self.between ** 2 - self.within ** 2 / self.k)))
        else:
            logs = [x for g in groups for x in g]
            if len(logs) >= 3:
                # too few points to see a drift between them: the whole
                # scatter of the samples
                m = sum(logs) / len(logs)
                self.between = math.sqrt(sum((x - m) ** 2 for x in logs) / (len(logs) - 1))
                self.tau = max(MIN_DRIFT, self.between)
            else:
                self.rule, self.tau = "fixed", DISK_SHIFT

    def latency(self):
        """(median, lowest, highest) mean µs per fsync of the samples."""
        v = [r["mean_us"] for r in self.samples]
        return (median(v), min(v), max(v)) if v else (None, None, None)

    def name(self):
        """How the line of a target against a disk-bound contender says
        which tau it carries."""
        if self.rule == "measured":
            return "with the disk's measured drift %.2f" % self.tau
        if self.rule == "set":
            return "with the disk's drift set to %.2f" % self.tau
        return "with the disk's fixed shift %.2f (no fsync samples in this run)" % self.tau


def drift_of(res):
    """The run's Drift, computed once per Results."""
    if not hasattr(res, "drift"):
        res.drift = Drift(getattr(res, "disk", None))
    return res.drift


def disk_shift(res, w, points):
    """tau for a ratio of the points [(contender, clients)] of workload w:
    the run's drift (Drift) if any of them is disk-bound, else 0."""
    return drift_of(res).tau if any(disk_bound(res, w, c, n) for c, n in points) else 0.0


def targets(res):
    """[Target]: the suite's MCSI >= N2DB in every workload, then each
    workload's targets from its descriptor."""
    out = []
    have = set(res.contenders)

    # MCSI >= N2DB at >= 4 clients, every workload both ran in (quick mode
    # runs N2DB in the paper's families only): per round, the geometric
    # mean of the ratios at the client counts from 4 up
    if {"nvm-mcsi", "nvm-n2db"} <= have:
        noise = noise_of(res)
        for w in res.workloads:
            if not (res.ran(w, "nvm-mcsi") and res.ran(w, "nvm-n2db")):
                continue
            counts = [n for n in res.clients if n >= 4]
            logs = {}
            for n in counts:
                for r, v in per_round(res, w, "nvm-mcsi", n, "nvm-n2db", n).items():
                    logs.setdefault(r, []).append(math.log(v))
            vals = [math.exp(sum(v) / len(v)) for r, v in sorted(logs.items()) if len(v) == len(counts)]
            name = "nvm MCSI >= nvm N2DB at >= 4 clients, %s" % w
            if not vals:
                out.append(Target(name, "NO DATA", "", w, "nvm-mcsi", "nvm-n2db"))
                continue
            sp = Spread(vals, noise, disk_shift(res, w, [(c, n) for c in ("nvm-mcsi", "nvm-n2db")
                                                         for n in counts]), drift_of(res))
            by = ", ".join("%d: %.2f" % (n, median(list(per_round(res, w, "nvm-mcsi", n, "nvm-n2db", n).values())))
                           for n in counts if per_round(res, w, "nvm-mcsi", n, "nvm-n2db", n))
            out.append(Target(name, sp.verdict(1.0),
                              "MCSI/N2DB %s%s" % (sp.text(), "; by clients (medians): " + by if len(counts) > 1 else ""),
                              w, "nvm-mcsi", "nvm-n2db", sp, 1.0))
    for w in res.workloads:
        for t in WORKLOADS[w].targets if w in WORKLOADS else []:
            if t.kind == "metric":
                out += metric_target(res, w, t)
                continue
            mine = t.mine
            if mine not in have:
                if not t.instead or t.instead not in have:
                    continue
                mine = t.instead
            if t.ref not in have:
                continue
            name = "%s >= %s x %s (max throughput), %s" % (ctitle(mine), fmt_factor(t.factor), ctitle(t.ref), w)
            m, mn = res.best(w, mine)
            h, hn = res.best(w, t.ref)
            vals = list(per_round(res, w, mine, mn, t.ref, hn).values()) if m and h else []
            if not vals:
                out.append(Target(name, "NO DATA", "", w, mine, t.ref))
                continue
            sp = Spread(vals, noise_of(res), disk_shift(res, w, [(mine, mn), (t.ref, hn)]), drift_of(res))
            out.append(Target(name, sp.verdict(t.factor), "%s/%s %s; medians %s %s (%d clients), %s %s (%d clients)" % (
                mine, t.ref, sp.text(), mine, fmt_tps(m), mn, t.ref, fmt_tps(h), hn),
                w, mine, t.ref, sp, t.factor))
    return out


def metric_target(res, w, t):
    """A bound on a metric (WAL fsyncs per transaction) of one contender,
    at its maximum throughput: PASS if every round is within it, MISS if
    none is, otherwise within noise; WAL bytes per transaction in
    wal_bytes_target."""
    c = t.contender
    if t.metric == "wal_bytes_per_txn":
        return wal_bytes_target(res, w, t)
    name = "%s, %s: <= %s WAL fsyncs per transaction" % (wtitle(w), ctitle(c), fmt_factor(t.max))
    if c not in res.contenders:
        return []
    m, mn = res.best(w, c)
    rounds = res.rounds(w, c, mn) if mn is not None else {}
    vals = [r["wal_fsyncs"] / r["commits"] for r in rounds.values()
            if r.get("wal_fsyncs") is not None and r.get("commits")]
    if not vals:
        return [Target(name, "NO DATA", "", w, c, None, kind="metric")]
    verdict = "PASS" if max(vals) <= t.max else ("MISS" if min(vals) > t.max else "within noise")
    return [Target(name, verdict, "%.4f fsyncs per transaction (median of %d rounds, %.4f–%.4f) at %d clients (the server's WAL fsyncs)"
                   % (median(vals), len(vals), min(vals), max(vals), mn), w, c, None, kind="metric")]


def wal_bytes_per_txn(r):
    """The WAL bytes per transaction of run r, or None."""
    if r.get("wal_bytes") is None or not r.get("commits"):
        return None
    return r["wal_bytes"] / r["commits"]


def wal_bytes_target(res, w, t):
    """WAL bytes per transaction of t.contender against t.ref's, each at
    its maximum throughput, within each round: PASS if every round's ratio
    is at most t.max, MISS if none is, otherwise within noise.  A COPY's
    transaction copies the same rows for both, so its ratio is the ratio
    of WAL bytes per row."""
    c, ref = t.contender, t.ref
    name = "%s, %s: WAL bytes per transaction <= %s x %s's" % (wtitle(w), ctitle(c), fmt_factor(t.max),
                                                                ctitle(ref))
    if c not in res.contenders or ref not in res.contenders:
        return []
    mn, hn = res.best(w, c)[1], res.best(w, ref)[1]
    mine = res.rounds(w, c, mn) if mn is not None else {}
    theirs = res.rounds(w, ref, hn) if hn is not None else {}
    pairs = [(wal_bytes_per_txn(mine[r]), wal_bytes_per_txn(theirs[r])) for r in sorted(set(mine) & set(theirs))]
    pairs = [(a, b) for a, b in pairs if a is not None and b]
    if not pairs:
        return [Target(name, "NO DATA", "", w, c, ref, kind="metric")]
    vals = [a / b for a, b in pairs]
    verdict = "PASS" if max(vals) <= t.max else ("MISS" if min(vals) > t.max else "within noise")
    return [Target(name, verdict, "%s/%s %.2f (%.2f–%.2f, %d rounds); medians %.0f against %.0f WAL bytes "
                   "per transaction (%d and %d clients; the WAL insert position around each run)"
                   % (c, ref, median(vals), min(vals), max(vals), len(vals), median([a for a, _ in pairs]),
                      median([b for _, b in pairs]), mn, hn), w, c, ref, kind="metric")]


def interleaved(res):
    """Whether the rounds were interleaved (every contender ran round r of
    a point before any ran round r + 1; quick mode) rather than serial (one
    contender's rounds after the other's; full mode), judged by the run ids
    of the first point with two rounds of two contenders."""
    points = {}
    for r in res.rows:
        # a run reported under a second name ("61=41", see run.sh) is left out
        if str(r["run_id"]).isdigit():
            points.setdefault((r["workload"], r["clients"]), {}).setdefault(r["rep"], []).append(int(r["run_id"]))
    for ids in points.values():
        if len(ids) >= 2 and len(ids[min(ids)]) >= 2:
            first, second = sorted(ids)[:2]
            return max(ids[first]) < min(ids[second])
    return True

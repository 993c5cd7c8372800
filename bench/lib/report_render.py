"""bench/lib/report_render.py
     The report in Markdown: report.md, section by section (settings, the
     main comparison, WAL fsyncs and CPU per transaction, the paper's
     tables, ratios at every client count, the targets with the rule and
     the run's noise, the profile and why targets were missed, the engine
     level and its model, drain delays, go-tpc, the consistency checks,
     every run), and the summary report.py prints on stdout.
"""

import math
import os

import report_common as common
from report_common import (ENGINE, ENGINE_WORKLOADS, FAMILIES, WORKLOADS, corder, fmt_factor,
                           fmt_ms, fmt_ratio, fmt_tps, fnum, md_table, median, pct, ratio,
                           script_names, with_paper, wfamily, worder, wtitle)
from report_load import WAIT_CLASSES, load_checks, load_engine_delays, load_modules, pg_version, run_file
from report_model import T_XFER_NS, WRITE_FRACTION, engine_workload
from report_stats import (ASSUMED_NOISE, CPU_SATURATED, DISK_BOUND_FSYNCS, DISK_SHIFT, MIN_DRIFT,
                          MIN_NOISE, Z_MARGIN, disk_bound, drift_of, fsyncs_per_txn, interleaved,
                          noise_of, pair_groups, per_round, robust_noise, run_noise, targets)


def main_table(res):
    """Max throughput per workload and contender (the median of its
    rounds), with the ratios of the maxima: the median of the per-round
    ratios and their range."""
    cs = res.contenders
    header = ["workload"] + ["%s max tps (clients)" % c for c in cs]
    extra = []
    # first nvm as a user on ordinary storage has it: pool at its default
    # place, default durability (through the WAL)
    if "nvm-mcsi-pagecache" in cs and "heap" in cs:
        extra.append(("nvm default place/heap", "nvm-mcsi-pagecache", "heap"))
    if "nvm-mcsi" in cs and "nvm-n2db" in cs:
        extra.append(("MCSI/N2DB", "nvm-mcsi", "nvm-n2db"))
    for other, title in (("nvm-pisces", "Pisces"), ("nvm-pomvcc", "POMVCC")):
        if other in cs and "nvm-mcsi" in cs:
            extra.append(("%s/MCSI" % title, other, "nvm-mcsi"))
        if other in cs and "nvm-n2db" in cs:
            extra.append(("%s/N2DB" % title, other, "nvm-n2db"))
    if "nvm-mcsi" in cs and "heap" in cs:
        extra.append(("MCSI pmem stand-in/heap", "nvm-mcsi", "heap"))
    if "nvm-mcsi" in cs and "heap-tmpfs" in cs:
        extra.append(("MCSI pmem stand-in/heap-tmpfs", "nvm-mcsi", "heap-tmpfs"))
    if "nvm-mcsi-tmpfs" in cs and "heap-tmpfs" in cs:
        extra.append(("MCSI-tmpfs/heap-tmpfs", "nvm-mcsi-tmpfs", "heap-tmpfs"))
    for base in ("nvm-mcsi", "nvm-n2db", "heap"):
        if base in cs and base + "-logical" in cs:
            extra.append(("%s logical/replica" % base, base + "-logical", base))
    header += [e[0] for e in extra]
    rows = []
    for w in res.workloads:
        best = {c: res.best(w, c) for c in cs}
        row = [w]
        for c in cs:
            t, n = best[c]
            row.append("%s (%s)" % (fmt_tps(t), n) if t is not None else "–")
        for _, a, b in extra:
            row.append(fmt_spread(res, w, a, best[a][1], b, best[b][1]))
        rows.append(row)
    return md_table(header, rows)


def absent_text(res):
    """What a dash in the tables means where a contender did not run a
    workload at all (its family's descriptor leaves it out of the mode:
    skip_contenders), or "" when every contender ran every workload."""
    out = []
    for c in res.contenders:
        ws = [w for w in res.workloads if not res.ran(w, c)]
        if ws:
            out.append("`%s` did not run %s" % (c, ", ".join(ws)))
    if not out:
        return ""
    why = ""
    if any(not res.ran(w, "nvm-n2db") for w in res.workloads) and "nvm-n2db" in res.contenders:
        why = (" Quick mode runs `nvm-n2db` where the report compares it with MCSI, as the paper "
               "does: YCSB and TPC-C.")
    return ("A dash where a contender did not run a workload: %s (its family's descriptor leaves "
            "it out of this mode, `skip_contenders`).%s" % ("; ".join(out), why))


# the contenders whose acknowledged commits survive a power loss on this
# machine: WAL (and pool) on disk, synchronous_commit on, and nvm's commits
# durable through the WAL
DURABLE = {"heap", "heap-logical", "nvm-mcsi-pagecache", "nvm-n2db-pagecache"}


def contender_legend(res):
    """What each contender of the run stands for, and whether its commits
    survive a power loss on this machine: a list in Markdown."""
    L = []
    for c in res.contenders:
        base = c.partition("@")[0]
        if base in DURABLE:
            dur = "durable: its commits survive a power loss"
        elif base in ("nvm-mcsi", "nvm-n2db", "nvm-pisces", "nvm-pomvcc"):
            dur = ("NOT durable here: this machine has no persistent memory, and with "
                   "nvm.durability = pool the pool in /dev/shm is lost at a power loss")
        elif base == "heap-async":
            dur = "NOT durable: synchronous_commit = off loses the last commits at a crash"
        elif base.endswith("-logical"):
            dur = ("pool in /dev/shm standing for persistent memory (nvm.durability = pool): "
                   "NOT durable here, the pool is lost at a power loss")
        else:
            dur = "NOT durable: its WAL (and pool) are in /dev/shm, lost at a power loss"
        L.append("- `%s`: %s; %s." % (c, common.ctitle(c), dur))
    return "\n".join(L)


def wal_bytes_table(res):
    """WAL bytes per transaction of every contender, at its maximum
    throughput (clients in brackets), from the WAL insert position around
    each run."""
    def cell(r, n):
        b = r.get("wal_bytes_per_txn")
        return None if b is None else "%.0f (%d)" % (b, n)
    return best_point_table(res, "%s WAL bytes/txn", cell)


def fmt_spread(res, w, a, na, b, nb):
    """The ratio a / b at the given client counts: the median of the
    per-round ratios and, with several rounds, their lowest and highest in
    brackets."""
    if na is None or nb is None:
        return "–"
    v = list(per_round(res, w, a, na, b, nb).values())
    if not v:
        return fmt_ratio(ratio(res.tps(w, a, na), res.tps(w, b, nb)))
    if len(v) == 1:
        return fmt_ratio(v[0])
    return "%.2f (%.2f–%.2f)" % (median(v), min(v), max(v))


def best_point_table(res, title, cell):
    """A table of every workload and contender at the contender's maximum
    throughput: the column titles title % contender, the cells cell(row,
    clients), "–" where the point did not run or cell returns None."""
    cs = res.contenders
    rows = []
    for w in res.workloads:
        row = [w]
        for c in cs:
            n = res.best(w, c)[1]
            r = res.get(w, c, n) if n is not None else None
            v = cell(r, n) if r else None
            row.append("–" if v is None else v)
        rows.append(row)
    return md_table(["workload"] + [title % c for c in cs], rows)


def fsync_table(res):
    """WAL fsyncs per transaction of every contender, at its maximum
    throughput (clients in brackets), from pg_stat_wal (18: pg_stat_io)."""
    def cell(r, n):
        f = r.get("fsyncs_per_txn")
        return None if f is None else "%.3f (%d)" % (f, n)
    return best_point_table(res, "%s fsyncs/txn", cell)


def cpu_table(res):
    """CPU per transaction of every contender at its maximum throughput:
    server + pgbench µs, and the share of the CPUs they kept busy."""
    def cell(r, n):
        if r.get("server_us_per_txn") is None:
            return None
        busy = r.get("cpu_busy")
        return "%.0f + %.0f%s (%d)" % (r["server_us_per_txn"], r["client_us_per_txn"],
                                       "" if busy is None else ", %d%%" % round(100 * busy), n)
    return best_point_table(res, "%s µs/txn", cell)


def cpu_bound_text(res, w, mine, ref, factor):
    """What the CPU accounts say about the ratio mine/ref of workload w at
    the two contenders' maxima, or "" without them: their CPU per
    transaction, and when both kept the CPUs busy, the server CPU per
    transaction mine would need to reach factor x ref with its pgbench
    share as measured."""
    m = res.get(w, mine, res.best(w, mine)[1])
    h = res.get(w, ref, res.best(w, ref)[1])
    if not m or not h or m.get("server_us_per_txn") is None or h.get("server_us_per_txn") is None:
        return ""
    s = ("CPU per transaction (server + pgbench): %s %.0f + %.0f µs, %s %.0f + %.0f µs"
         % (mine, m["server_us_per_txn"], m["client_us_per_txn"],
            ref, h["server_us_per_txn"], h["client_us_per_txn"]))
    busy = [x.get("cpu_busy") for x in (m, h)]
    if factor and all(b is not None and b >= CPU_SATURATED for b in busy):
        need = (h["server_us_per_txn"] + h["client_us_per_txn"]) / factor - m["client_us_per_txn"]
        s += ("; both kept the CPUs busy (%d%% and %d%%), so throughput is the cores over the "
              "CPU per transaction: %s x %s needs a server of %s that takes at most %.0f µs per "
              "transaction, %d%% less than %s's" % (
                  round(100 * busy[0]), round(100 * busy[1]), fmt_factor(factor), ref, mine,
                  need, round(100 * (1 - need / h["server_us_per_txn"])), ref))
    return s + ". "


def spread_table(res, wls):
    """Median throughput of the rounds with their range, per client count,
    for the workloads wls, and the per-round ratio nvm-mcsi / heap."""
    out = []
    cs = res.contenders
    for w in wls:
        rows = []
        for n in res.clients:
            row = [n]
            for c in cs:
                r = res.get(w, c, n)
                row.append("–" if not r else "%s (%s–%s, %d runs)" % (
                    fmt_tps(r["tps"]), fmt_tps(r.get("tps_min")), fmt_tps(r.get("tps_max")),
                    r.get("reps", 1)))
            if "nvm-mcsi" in cs and "heap" in cs:
                v = list(per_round(res, w, "nvm-mcsi", n, "heap", n).values())
                row.append("–" if not v else "%.2f (%.2f–%.2f)" % (median(v), min(v), max(v)))
            rows.append(row)
        header = ["clients"] + ["%s median tps (range)" % c for c in cs]
        if "nvm-mcsi" in cs and "heap" in cs:
            header.append("MCSI/heap per round: median (range)")
        out.append("### %s\n" % wtitle(w))
        out.append(md_table(header, rows) + "\n")
    return out


def verdict_rule_text(res):
    """How to read the spread and the verdicts, for the report."""
    reps = max((r["rep"] for r in res.rows), default=1)
    s = noise_of(res)
    if interleaved(res):
        how = ("in a round the contenders ran back to back, seconds apart, so a target takes the "
               "ratio of its two contenders in each round, rho_r = tps_A / tps_B, and load that "
               "hit both alike cancels")
    else:
        how = ("the contenders ran one after the other (serial order: each on its own, paper-sized "
               "data do not fit side by side), so round r of one contender and round r of the "
               "other were minutes apart; a target still takes their ratio round by round, "
               "rho_r = tps_A / tps_B, and the noise s below includes the machine's drift "
               "between them")
    L = ["**How to read the spread.** Every point ran %d round(s); %s. A target line shows the "
         "median of the rho_r, their lowest and highest value (how far single rounds strayed), "
         "and the **verdict interval**, the spread the verdict uses: from the lowest round / "
         "exp(m) to the highest round × exp(m), with m = %.1f × sqrt(s² / R + tau²) for R "
         "rounds. s is this run's noise: how far one round's log ratio of two contenders strays "
         "from the median of its point, pooled over every pair of contenders and every point of "
         "the run (robustly: 1.4826 × the median absolute deviation, corrected for the few "
         "rounds of a point), and at least %.2f. tau is the disk's drift, for a target one "
         "of whose contenders waits for the disk at commit (its WAL on disk and at least %.1f "
         "WAL fsyncs per transaction in the rounds, `synchronous_commit = on`: heap; the line "
         "says \"with the disk's measured drift\" and its value), else 0: a disk shared with "
         "other work slows every commit for minutes at a time, which moves every round of a "
         "point alike, so the rounds cannot see it, and a next run may find the disk elsewhere. "
         "The run measures it: before every round of a point and after its last, every "
         "contender idle, it times a burst of 8 kB writes each followed by fdatasync on that "
         "disk (disk.csv); a point's level is the mean log time per fsync of its samples, and "
         "tau is how far the levels move between the run's points beyond what the scatter of "
         "the samples within a point explains (the standard deviation between points, less "
         "the within-point scatter / number of samples, in quadrature), at least %.2f. The "
         "scatter within a point, seconds apart, already moves the rounds apart, and with them "
         "s; so does the disk-waiting contender's own time per WAL fsync from round to round "
         "(listed below). A run recorded without fsync samples keeps the earlier rule's fixed "
         "tau = %.2f (how far heap's ratios moved between consecutive quick runs, "
         "bench/results/quick-repeat2-20261126/); `NVM_BENCH_DISK_SHIFT=x` fixes tau = x for "
         "any run (0 for a disk no other work uses). The rule: **PASS** when the whole verdict interval is at or above the "
         "target factor k (every round clears k by the margin); **MISS** when it is wholly "
         "below k; **within noise** when k lies inside it, i.e. the spread of the measured "
         "ratio and the target overlap, so this run cannot tell the difference from the target "
         "apart from the machine's noise. The interval is wide on purpose: two runs on a shared "
         "machine differ by more than the rounds of one run do, and a verdict should not flip "
         "from one run to the next. A busier machine raises s and spreads the rounds, which "
         "turns verdicts into \"within noise\", never into the opposite verdict; a quiet one "
         "narrows the interval." % (reps, how, Z_MARGIN, MIN_NOISE, DISK_BOUND_FSYNCS, MIN_DRIFT,
                                     DISK_SHIFT)]
    L.append(" " + drift_text(res))
    if s is None:
        L.append(" This run has too few rounds to measure its noise; the interval assumes "
                 "s = %.2f." % ASSUMED_NOISE)
    else:
        eff = max(s, MIN_NOISE)
        m0 = Z_MARGIN * eff / math.sqrt(reps)
        tau = drift_of(res).tau
        m1 = Z_MARGIN * math.sqrt(eff ** 2 / reps + tau ** 2)
        L.append(" In this run s = %.3f (one round's ratio strays by about ±%.0f%%), so with "
                 "%d rounds the margin beyond the extreme rounds is ×/÷ %.2f (−%.0f%% / +%.0f%%), "
                 "and ×/÷ %.2f with the disk's %s tau = %.2f."
                 % (s, 100 * (math.exp(s) - 1), reps, math.exp(m0),
                    100 * (1 - math.exp(-m0)), 100 * (math.exp(m0) - 1), math.exp(m1),
                    {"measured": "measured drift", "set": "set drift"}.get(drift_of(res).rule,
                                                                           "fixed shift"), tau))
    return "".join(L)


def drift_text(res):
    """Which rule of tau the run's verdicts apply, and what it measured."""
    d = drift_of(res)
    if d.rule == "set":
        return "**The disk's drift in this run:** set to tau = %.2f (NVM_BENCH_DISK_SHIFT)." % d.tau
    if d.rule == "fixed":
        return ("**The disk's drift in this run:** not measured (no disk.csv: a run recorded "
                "before the disk was sampled, or too few samples); its verdicts keep the earlier "
                "rule's fixed tau = %.2f." % d.tau)
    med, lo, hi = d.latency()
    if d.within is None:
        how = "the scatter of its %d samples, %.2f" % (len(d.samples), d.between)
    else:
        how = ("%d points of %.1f samples: levels %.2f apart between points (standard deviation "
               "of the log), samples %.2f within a point" % (d.points, d.k, d.between, d.within))
    return ("**The disk's drift in this run:** measured, tau = %.2f (at least %.2f), from %d "
            "fsync samples (mean %.0f µs per fsync, median of the samples; %.0f–%.0f), %s."
            % (d.tau, MIN_DRIFT, len(d.samples), med, lo, hi, how))


def disk_table(res):
    """The contenders that waited for the disk at commit, per workload at
    their maximum throughput: WAL fsyncs per transaction and the run's time
    per WAL fsync (its seconds over its fsyncs, the median of the rounds: at
    most the disk's time per flush, and equal to it when the commits queue
    for the disk, as single-row INSERTs and UPDATEs do), so two runs' disks
    can be compared."""
    rows = []
    for w in res.workloads:
        for c in res.contenders:
            t, n = res.best(w, c)
            if n is None or not disk_bound(res, w, c, n):
                continue
            per = [float(r["duration_s"]) * 1e6 / r["wal_fsyncs"] for r in res.rounds(w, c, n).values()
                   if r.get("wal_fsyncs") and fnum(r.get("duration_s"))]
            probe = [r["mean_us"] for r in drift_of(res).samples
                     if r.get("workload") == w and str(r.get("clients")) == str(n)]
            rows.append([w, c, str(n), "%.2f" % fsyncs_per_txn(res, w, c, n),
                         "–" if not per else "%.0f (%.0f–%.0f)" % (median(per), min(per), max(per)),
                         "–" if not probe else "%.0f (%.0f–%.0f)" % (median(probe), min(probe), max(probe))])
    if not rows:
        return ""
    return ("Contenders that waited for the disk at commit (the targets against them carry the "
            "disk's drift tau), with the run's time per WAL fsync: at most the disk's time per "
            "flush, and equal to it where commits queue for the disk (single-row INSERT and "
            "UPDATE), so it shows how busy the disk was in this run; and the disk's own fsync "
            "samples around the point (disk.csv, between its rounds, every contender idle):\n\n"
            + md_table(["workload", "contender", "clients", "WAL fsyncs per transaction",
                        "µs of the run per WAL fsync: median (rounds)",
                        "disk's samples: mean µs per fsync, median (samples)"], rows))


def noise_table(res, tg):
    """The noise of one round's ratio per pair of contenders the targets
    compare, for information (the verdicts use the pooled s)."""
    pairs = []
    for t in tg:
        if t.kind == "ratio" and t.mine and t.ref and (t.mine, t.ref) not in pairs:
            pairs.append((t.mine, t.ref))
    rows = []
    for a, b in pairs:
        s, n = robust_noise(pair_groups(res, a, b))
        rows.append(["%s / %s" % (a, b), "–" if s is None else "%.3f (±%.0f%%)" % (s, 100 * (math.exp(s) - 1)),
                     str(n)])
    s, n = run_noise(res)
    rows.append(["**every pair (the s of the verdicts)**",
                 "–" if s is None else "**%.3f (±%.0f%%)**" % (s, 100 * (math.exp(s) - 1)), str(n)])
    return ("The noise of one round's ratio in this run (s: robust standard deviation of the "
            "log ratio about its point's median; values: the per-round ratios it is taken "
            "from), per pair of contenders the targets compare and pooled over every pair:\n\n"
            + md_table(["ratio", "s, noise of one round", "values"], rows))


def mcsi_n2db_text(res, tg, eng, model, cores):
    """Why MCSI and N2DB are expected within noise of each other through
    SQL on a few cores, with the engine level's per-transaction costs and
    the model as the evidence for many cores."""
    lines = [t for t in tg if t.mine == "nvm-mcsi" and t.ref == "nvm-n2db" and t.spread]
    if not lines:
        return ""
    L = ["### MCSI and N2DB through SQL on %d cores\n" % cores]
    verdicts = {}
    for t in lines:
        verdicts[t[1]] = verdicts.get(t[1], 0) + 1
    L.append(
        "Expected: **within noise of each other**. The MCSI paper measured the two designs equal "
        "at 1 thread and apart only from a few threads on (its Fig. 10 and 12); what separates "
        "them is contention on N2DB's one global lock and shared commit-log line, which needs "
        "many cores. Through SQL, each transaction also spends tens of µs in parsing, "
        "executing, and the client round trip, so the concurrency control is a small share of "
        "it. Here: %s of %d workloads.\n" % (", ".join("%s %d" % (v, k) for v, k in verdicts.items()),
                                            len(lines)))
    one = {(r["workload"], r["mode"]): r for r in eng if r["threads"] == 1}
    rows = []
    shares = []
    for t in lines:
        w = t.workload
        m, mn = res.best(w, "nvm-mcsi")
        sql_us = cores * 1e6 / m if m else None
        ew = engine_workload(w)
        em, en = one.get((ew, "mcsi")), one.get((ew, "n2db"))
        if em and en and em["tps"] and en["tps"]:
            tm, tn = 1e6 / em["tps"], 1e6 / en["tps"]
            cc = "%.2f / %.2f µs (%s); snapshot + commit %.0f / %.0f ns" % (
                tm, tn, ew, (em["snapshot_ns"] or 0) + (em["complete_ns"] or 0),
                (en["snapshot_ns"] or 0) + (en["complete_ns"] or 0))
            diff = abs(tm - tn) / sql_us if sql_us else None
            if diff is not None:
                shares.append(diff)
            whole = max(tm, tn) / sql_us if sql_us else None
        else:
            cc, diff, whole = "– (engine level not run)", None, None
        rows.append([w, "%.0f" % sql_us if sql_us else "–", cc,
                     "–" if whole is None else "%.1f%%" % (100 * whole),
                     "–" if diff is None else "%.2f%%" % (100 * diff),
                     "%.2f (%.2f–%.2f)" % (t.spread.median, t.spread.lo, t.spread.hi), t[1]])
    L.append(md_table(["workload", "SQL: µs of CPU per transaction (%d cores / nvm-mcsi tps)" % cores,
                       "engine, 1 thread: µs per transaction MCSI / N2DB (its workload)",
                       "engine transaction / SQL transaction",
                       "MCSI - N2DB difference / SQL transaction",
                       "measured MCSI/N2DB per round: median (range)", "verdict"], rows) + "\n")
    if shares:
        L.append("The whole storage-core transaction of the engine level (snapshot, row "
                 "operations, commit, without SQL) is the share of a SQL transaction above, and "
                 "the difference between the two designs at most %.2f%% of it: far inside the "
                 "noise margins of this run, so a PASS or MISS of MCSI >= N2DB here would be "
                 "noise, not a finding (the engine's 1-thread times are themselves short "
                 "measurements on a shared machine)." % (100 * max(shares)))
    mm, nn = model.get((ENGINE.stand_in, "mcsi")), model.get((ENGINE.stand_in, "n2db"))
    ya, yn = model.get(("ycsb-a", "mcsi")), model.get(("ycsb-a", "n2db"))
    if mm and nn and ya and yn:
        L.append(" For many cores the evidence is the model of the engine level (section \"Engine "
                 "level\" below, a model, not a measurement): MCSI/N2DB = %.2f at 2 threads and "
                 "%.2f at 18 for %s, %.2f and %.2f for YCSB-A, against %.2f measured by the "
                 "paper for YCSB-A at its maxima." % (
                     mm["x"](2) / nn["x"](2), mm["x"](18) / nn["x"](18), ENGINE.stand_in,
                     ya["x"](2) / yn["x"](2), ya["x"](18) / yn["x"](18),
                     WORKLOADS["ycsb-a"].paper["mcsi_tps"] / WORKLOADS["ycsb-a"].paper["n2db_tps"]
                     if "ycsb-a" in WORKLOADS and WORKLOADS["ycsb-a"].paper else float("nan")))
    else:
        L.append(" The engine level did not run (`--no-engine`), so its per-transaction costs and "
                 "the many-core model are missing here.")
    L.append("\n")
    return "\n".join(L)


# where each contender keeps what: for the comparison column of the targets
WHERE = {
    "heap": "heap, WAL on disk",
    "heap-tmpfs": "heap, data directory and WAL in /dev/shm",
    "heap-async": "heap, synchronous_commit off",
    "nvm-mcsi": "pool in /dev/shm standing for persistent memory, not durable here; index and catalog WAL on disk",
    "nvm-n2db": "pool in /dev/shm standing for persistent memory, not durable here; index and catalog WAL on disk",
    "nvm-pisces": "pool in /dev/shm standing for persistent memory, not durable here; index and catalog WAL on disk",
    "nvm-pomvcc": "pool in /dev/shm standing for persistent memory, not durable here; index and catalog WAL on disk",
    "nvm-mcsi-tmpfs": "pool, data directory and WAL in /dev/shm",
    "nvm-n2db-tmpfs": "pool, data directory and WAL in /dev/shm",
    "nvm-mcsi-pagecache": "pool at its default place (pg_nvm/pool) and WAL on disk, commits durable through the WAL",
    "nvm-n2db-pagecache": "pool at its default place (pg_nvm/pool) and WAL on disk, commits durable through the WAL",
    "heap-logical": "heap, WAL on disk, wal_level = logical",
    "nvm-mcsi-logical": "pool in /dev/shm standing for persistent memory, WAL on disk, wal_level = logical",
    "nvm-n2db-logical": "pool in /dev/shm standing for persistent memory, WAL on disk, wal_level = logical",
}


def comparison(t, ran):
    """What a target compares, in words; ran is the set of contenders that
    ran."""
    if not t.mine:
        return ""
    a, b = t.mine, t.ref
    if not b:
        return "%s (%s)" % (a, WHERE.get(a, a))
    if {a, b} == {"nvm-mcsi", "nvm-n2db"}:
        return ("nvm-mcsi vs nvm-n2db: the same store and settings, only the concurrency control "
                "differs. Expected **within noise** on %d cores through SQL: the paper measured "
                "the two equal up to a few threads; the evidence for many cores is the engine "
                "level's per-operation costs and its model (\"MCSI and N2DB through SQL\" "
                "below, \"Engine level\")" % common.CORES)
    ba, bb = a.partition("@")[0], b.partition("@")[0]
    if a == "nvm-mcsi" and b == "heap-tmpfs":
        return ("nvm-mcsi (%s) vs heap-tmpfs (%s): NOT like for like (nvm-mcsi's WAL is on "
                "disk)%s" % (WHERE[a], WHERE[b], "" if "nvm-mcsi-tmpfs" in ran else
                             ", nvm-mcsi-tmpfs did not run"))
    if ba in DURABLE and bb in DURABLE:
        how = ": like for like, both durable (WAL on disk)"
    elif ba.endswith("-tmpfs") and bb.endswith("-tmpfs"):
        how = ": like for like, everything in /dev/shm (neither survives a power loss)"
    elif ba in DURABLE or bb in DURABLE:
        how = ": NOT like for like, only %s is durable on this machine" % (a if ba in DURABLE else b)
    else:
        how = ""
    return "%s (%s) vs %s (%s)%s" % (a, WHERE.get(a, a), b, WHERE.get(b, b), how)


WAIT_CLASS_TITLES = {
    "CPU": "on CPU (active, no wait event)",
    "client": "waiting for the client (Client:ClientRead)",
    "WAL": "WAL write and flush (IO:WAL*, LWLock:WAL*)",
    "locks": "heavyweight locks: rows, transactions (Lock:*)",
    "LWLocks": "other LWLocks",
    "I/O": "other I/O",
    "other": "other waits (IPC, timeouts, ...)",
}
# what a backend is doing in each class, for the explanations
WAIT_CLASS_DOING = {
    "CPU": "on the CPU (perf says where)",
    "client": "waiting for pgbench (the client round trip; pgbench shares the cores)",
    "WAL": "waiting for WAL writes and flushes at commit",
    "locks": "waiting for row or transaction locks held by other transactions (hot rows)",
    "LWLocks": "waiting for PostgreSQL's internal locks",
    "I/O": "in data file I/O",
    "other": "in other waits",
}


def profile_section(prof):
    """Markdown lines of the profile section."""
    L = []
    for (w, n) in sorted(prof, key=lambda k: (worder(k[0]), k[1])):
        ps = prof[(w, n)]
        cs = sorted(ps, key=corder)
        L.append("### %s, %d clients\n" % (wtitle(w), n))
        rows = [["tps of the profile run"] + [fmt_tps(ps[c]["tps"]) for c in cs],
                ["backend samples"] + [str(ps[c]["total"]) for c in cs]]
        for k in WAIT_CLASSES:
            if any(ps[c]["classes"][k] >= 0.005 for c in cs):
                rows.append([WAIT_CLASS_TITLES[k]] + [pct(ps[c]["classes"][k]) for c in cs])
        L.append(md_table(["share of backend time"] + cs, rows) + "\n")
        rows = []
        for c in cs:
            tot = ps[c]["total"] or 1
            top = sorted(ps[c]["waits"], key=lambda x: -x[3])[:6]
            rows.append([c, "; ".join("%s %s:%s %.0f%%" % (st, typ, ev, 100.0 * k / tot)
                                      for st, typ, ev, k in top)])
        L.append(md_table(["contender", "most frequent state and wait event (share of samples)"],
                          rows) + "\n")
        if any(ps[c]["dso"] or ps[c]["perf"] for c in cs):
            pc = [c for c in cs if ps[c]["dso"] or ps[c]["perf"]]
            dsos = []
            for c in pc:
                for v, d in ps[c]["dso"][:6]:
                    if d not in dsos:
                        dsos.append(d)
            if dsos:
                rows = []
                for d in dsos:
                    row = [d]
                    for c in pc:
                        v = [x for x, dd in ps[c]["dso"] if dd == d]
                        row.append("%.1f%%" % v[0] if v else "–")
                    rows.append(row)
                L.append("perf, the backends' on-CPU samples by binary:\n")
                L.append(md_table(["binary"] + pc, rows) + "\n")
            depth = max(len(ps[c]["perf"]) for c in pc)
            rows = []
            for i in range(min(depth, 12)):
                row = [i + 1]
                for c in pc:
                    pp = ps[c]["perf"]
                    row.append("%.1f%% %s (%s)" % (pp[i][0], pp[i][2], os.path.basename(pp[i][1]))
                               if i < len(pp) else "")
                rows.append(row)
            L.append("perf, top symbols (share of the backends' on-CPU samples):\n")
            L.append(md_table(["#"] + pc, rows) + "\n")
        else:
            L.append("perf did not run (not installed, or not allowed here): wait events only.\n")
    return L


def explain(t, prof):
    """Why target t was missed, from the profile of its workload."""
    both = sorted(k for k, ps in prof.items() if t.mine in ps and t.ref in ps)
    if not both:
        if prof:
            return ("no profile with both %s and %s (profiled: %s)"
                    % (t.mine, t.ref, ", ".join("%s at %d clients" % k for k in sorted(prof))))
        return "not profiled (`bench/run.sh --profile`)"
    # the workload's own profile, else one of the same family (TPC-C, YCSB)
    fam = wfamily(t.workload)
    pts = [k for k in both if k[0] == t.workload] or [k for k in both if wfamily(k[0]) == fam]
    lead = ""
    if not pts or pts[-1][0] != t.workload:
        pts = pts or both
        lead = "no profile of %s, so the nearest one: " % t.workload
    w, n = pts[-1]
    a, b = prof[(w, n)][t.mine], prof[(w, n)][t.ref]

    def shares(p):
        return ", ".join("%s %s" % (k, pct(p["classes"][k])) for k in WAIT_CLASSES
                         if p["classes"][k] >= 0.01)
    diffs = sorted(((a["classes"][k] - b["classes"][k], k) for k in WAIT_CLASSES),
                   key=lambda x: -abs(x[0]))
    why = []
    for d, k in diffs[:2]:
        if abs(d) < 0.05:
            continue
        why.append("%s spends %d points more of its time %s" % (
            t.mine if d > 0 else t.ref, round(100 * abs(d)), WAIT_CLASS_DOING[k]))
    s = lead + ("profile of %s at %d clients, shares of backend time: %s (%s tps) %s; %s (%s tps) %s. " % (
        w, n, t.mine, fmt_tps(a["tps"]), shares(a), t.ref, fmt_tps(b["tps"]), shares(b)))
    top = max(WAIT_CLASSES, key=lambda k: a["classes"][k] + b["classes"][k])
    if a["classes"][top] + b["classes"][top] >= 0.6:
        s += "Both spend the most time %s (%s and %s). " % (
            WAIT_CLASS_DOING[top], pct(a["classes"][top]), pct(b["classes"][top]))
    if why:
        s += "Differences: " + "; ".join(why) + "."
    else:
        s += "Otherwise they spend their time alike (within 5 points in every class)."
    if a["perf"]:
        s += " Top symbols of %s: %s." % (t.mine, ", ".join("%s %.1f%%" % (p[2], p[0]) for p in a["perf"][:4]))
    return s


def explain_target(t, prof, res):
    """Why target t was missed: the CPU accounts of its workload, then its
    profile."""
    return cpu_bound_text(res, t.workload, t.mine, t.ref, t.need) + explain(t, prof)


def failed_checks(checks):
    """The rows of checks.csv whose check found a violated condition or did
    not run to its end."""
    return [r for r in checks if r.get("status") != "ok"]


def checks_section(checks):
    """The consistency checks after each run: per workload and contender
    the runs checked and those that failed, then every failed run with the
    conditions it broke."""
    if not checks:
        return []
    L = ["## Consistency checks\n"]
    bad = failed_checks(checks)
    fams = sorted({r["family"] for r in checks})
    L.append("After every run of %s, the family's check (its descriptor's `check`) ran on the "
             "contender's database, on one snapshot once the run's clients were gone: for "
             "server-side TPC-C the consistency conditions of TPC-C clause 3.3.2 "
             "(`bench/workloads/tpccsp_check.sql` lists them). %s\n"
             % (", ".join(fams), "**%d run(s) broke a condition or could not be checked; "
                "bench/run.sh ended with status 1.**" % len(bad) if bad
                else "Every run of every contender passed every condition."))
    groups = {}
    for r in checks:
        groups.setdefault((r["workload"], r["contender"]), []).append(r)
    rows = []
    for (w, c), rs in sorted(groups.items(), key=lambda kv: (worder(kv[0][0]), corder(kv[0][1]))):
        nb = len(failed_checks(rs))
        rows.append([w, c, len(rs), max(int(r["conditions"] or 0) for r in rs),
                     "none" if not nb else "**%d**" % nb])
    L.append(md_table(["workload", "contender", "runs checked", "conditions", "runs failed"], rows)
             + "\n")
    if bad:
        L.append(md_table(["run", "workload", "contender", "clients", "round", "status",
                           "conditions broken (count)"],
                          [[r["run_id"], r["workload"], r["contender"], r["clients"], r["rep"],
                            "**%s**" % r["status"], r["violations"]] for r in bad]) + "\n")
    return L


def write_report(out, res, eng, model, plots, plot_note, prof):
    L = []
    add = L.append
    version = pg_version(out)
    add("# nvmam benchmark report%s\n" % (": " + version if version else ""))
    reps = max((r["rep"] for r in res.rows), default=1)
    add("SQL-level comparison through pgbench, and the engine-level benchmark of the core. "
        "Every pgbench number is the median of %d short run(s) on a shared %d-core machine, and "
        "the targets are judged by the spread of their rounds (section \"Targets\": PASS, MISS "
        "or within noise); client counts above %d oversubscribe the CPUs (they show queueing "
        "and lock convoys, not parallel speed-up). The paper ran its engine directly on an "
        "18-core Xeon with Optane: its absolute numbers are 10-1000x ours, and only ratios are "
        "comparable, with care.\n" % (reps, common.CORES, common.CORES))
    add(run_file(out, "settings.md").replace("# Benchmark settings", "## Settings"))
    checks = load_checks(out)
    if failed_checks(checks):
        add("**%d run(s) broke a consistency condition or could not be checked: see "
            "\"Consistency checks\".**\n" % len(failed_checks(checks)))
    mods = load_modules(out)
    md5s = sorted({m[3] for m in mods})
    if len(md5s) > 1:
        add("**The installed nvmam module changed during this run** (another build was installed "
            "meanwhile); each cluster used the module it preloaded at its start:\n")
        add(md_table(["family", "contender", "cluster started", "nvmam.so md5"], mods) + "\n")
    elif md5s:
        add("Every cluster preloaded the same nvmam.so (md5 %s...).\n" % md5s[0])
    pool = run_file(out, "pool-usage.csv").strip()
    if pool:
        add("Pool use at the end of each workload family (family, contender, pool size, used bytes):\n")
        add("```\n" + pool + "\n```\n")

    add("## Main comparison: maximum throughput (best client count in brackets)\n")
    add("tps = transactions completed per second (pgbench's \"without initial connection time\"); "
        "for TPC-C it counts every transaction of the mix (New-Order and Payment; server-side "
        "TPC-C all five), the 1% rolled-back New-Orders included. Ratios compare the maxima.\n")
    add(main_table(res) + "\n")
    absent = absent_text(res)
    if absent:
        add(absent + "\n")
    add("What each contender stands for:\n")
    add(contender_legend(res) + "\n")

    add("## WAL fsyncs per transaction\n")
    add("WAL fsyncs of the whole server (pg_stat_wal.wal_sync, on PostgreSQL 18 pg_stat_io's "
        "WAL fsyncs: backends, WAL writer, checkpointer) during each run, over the transactions it completed, at each contender's "
        "maximum throughput. heap pays a flush at every commit that wrote WAL (fewer than one "
        "when group commit shares them), and so does nvm at its default place and durability "
        "(its commits are durable through the WAL). With the pool standing for persistent "
        "memory (nvm.durability = pool), nvm commits that wrote only nvm rows and index "
        "entries pay none (the WAL writer flushes their index WAL later), those that also wrote "
        "heap rows pay PostgreSQL's own.\n")
    add(fsync_table(res) + "\n")

    add("## WAL bytes per transaction\n")
    add("Bytes of WAL each server wrote during a run (its WAL insert position before the run "
        "and when the run's summary was taken, about a second after its end), over the "
        "transactions it completed, at each contender's maximum throughput. A COPY's "
        "transaction copies the same rows on every contender, so its ratio is that of WAL "
        "bytes per row. Every run starts right after a CHECKPOINT, so the first change to each "
        "heap or index page in a run logs a full-page image: in short runs that weighs more "
        "than between the checkpoints of a long run, on heap tables most, on nvm tables only "
        "for their indexes.\n")
    add(wal_bytes_table(res) + "\n")

    add("## CPU per transaction\n")
    add("CPU time (user + system) per completed transaction at each contender's maximum "
        "throughput, from /proc: the server's processes (backends, WAL writer, checkpointer, "
        "...) + pgbench, summed over the rounds; in brackets the clients, and the share of "
        "the machine's %d CPUs the two kept busy. Where that share is near 100%%, throughput is "
        "the cores over the CPU per transaction: a contender is faster only by the CPU it "
        "saves, and pgbench's share (measured per contender: it is not the same for all) caps "
        "the ratio. Time spent "
        "on attempts that were retried counts; the attempts do not.\n" % common.CORES)
    add(cpu_table(res) + "\n")
    wls = [w for w in res.workloads if any((res.get(w, c, n) or {}).get("reps", 1) > 1
                                           for c in res.contenders for n in res.clients)]
    if wls:
        add("## Repetitions\n")
        add("Each point ran once per round, back to back with the other contenders; the "
            "tables above use the median run. The range shows the spread the shared machine "
            "caused; the ratio is taken within each round (the two runs seconds apart) and "
            "shown as the median and range over the rounds.\n")
        L.extend(spread_table(res, wls))

    # Table 4 / 5
    for f in FAMILIES:
        if not f.paper_table:
            continue
        title, unit = f.paper_table["title"], f.paper_table["unit"]
        wls = [w.name for w in f.workloads if w.paper and w.name in res.workloads]
        if not wls:
            continue
        add("## %s\n" % title)
        rows = []
        for w in wls:
            m, mn = res.best(w, "nvm-mcsi")
            n2, nn = res.best(w, "nvm-n2db")
            imp = ratio(m, n2)
            pp = WORKLOADS[w].paper
            p = (pp["mcsi_tps"], pp["mcsi_threads"], pp["n2db_tps"], pp["n2db_threads"])
            div, fm = (1e6, "%.3f %s (%d)") if unit == "M" else (1e3, "%.2f %s (%d)")
            rows.append([w, "%s (%s)" % (fmt_tps(m), mn), "%s (%s)" % (fmt_tps(n2), nn),
                         "–" if imp is None else "%+.0f%%" % (100 * (imp - 1)),
                         fm % (p[0] / div, unit, p[1]),
                         fm % (p[2] / div, unit, p[3]),
                         "%+.0f%%" % (100 * (p[0] / p[2] - 1))])
        add(md_table(["workload", "ours: MCSI tps (clients)", "ours: N2DB tps (clients)",
                      "ours: improvement", "paper: MCSI tps (threads)", "paper: N2DB tps (threads)",
                      "paper: improvement"], rows) + "\n")

    # Table 6
    wls = [w for w in with_paper(latency=True) if w in res.workloads]
    if wls and res.clients:
        top = max(res.clients)
        add("## Table 6 shape: average latency at the highest client count (%d clients)\n" % top)
        add("Latency per transaction from pgbench's per-transaction log (retries included), "
            "average, p50 and p99 in ms. The paper's column is µs at 18 threads of its engine.\n")
        rows = []
        for w in wls:
            row = [w]
            vals = {}
            for c in res.contenders:
                r = res.get(w, c, top)
                vals[c] = r
                row.append("–" if not r else "%s / %s / %s" % (
                    fmt_ms(r["lat_avg_ms"]), fmt_ms(r["lat_p50_ms"]), fmt_ms(r["lat_p99_ms"])))
            a, b = vals.get("nvm-mcsi"), vals.get("nvm-n2db")
            red = None
            if a and b and a["lat_avg_ms"] and b["lat_avg_ms"]:
                red = 100 * (1 - a["lat_avg_ms"] / b["lat_avg_ms"])
            row.append("–" if red is None else "%.0f%%" % red)
            p = (WORKLOADS[w].paper["mcsi_latency_us"], WORKLOADS[w].paper["n2db_latency_us"])
            row.append("%.1f / %.1f µs, %.0f%%" % (p[0], p[1], 100 * (1 - p[0] / p[1])))
            rows.append(row)
        add(md_table(["workload"] + ["%s avg / p50 / p99 ms" % c for c in res.contenders] +
                     ["MCSI vs N2DB avg: reduced", "paper (18 threads): MCSI / N2DB, reduced"],
                     rows) + "\n")

    # ratios at every client count
    add("## Throughput and ratios at every client count\n")
    add("MCSI/N2DB and nvm/heap ratios per client count (the paper's Fig. 10/12 compare MCSI "
        "and N2DB at each thread count; at 1 thread they were equal): throughputs are the "
        "medians of the rounds, ratios the median of the per-round ratios with the lowest and "
        "highest round in brackets.\n")
    for w in res.workloads:
        add("### %s\n" % wtitle(w))
        cs = [c for c in res.contenders if res.ran(w, c)]
        pairs = []
        for a, b in (("nvm-mcsi-pagecache", "heap"), ("nvm-mcsi", "nvm-n2db"), ("nvm-mcsi", "heap"),
                     ("nvm-mcsi", "heap-tmpfs"),
                     ("nvm-n2db", "heap"), ("nvm-n2db", "heap-tmpfs")):
            if a in cs and b in cs:
                pairs.append((a, b))
        header = ["clients"] + ["%s tps" % c for c in cs] + \
            ["%s/%s" % (a.replace("nvm-", "").upper() if a.startswith("nvm") else a,
                        b.replace("nvm-", "").upper() if b.startswith("nvm") else b) for a, b in pairs] + \
            ["abort %% (%s)" % ", ".join(c for c in cs)]
        rows = []
        for n in res.clients:
            row = [n]
            for c in cs:
                row.append(fmt_tps(res.tps(w, c, n)))
            for a, b in pairs:
                row.append(fmt_spread(res, w, a, n, b, n))
            ab = []
            for c in cs:
                r = res.get(w, c, n)
                ab.append("–" if not r or r["abort_pct"] is None else "%.1f" % r["abort_pct"])
            row.append(" / ".join(ab))
            rows.append(row)
        add(md_table(header, rows) + "\n")

    # targets
    add("## Targets\n")
    tg = targets(res)
    add(verdict_rule_text(res) + "\n")
    add("Each target compares maximum throughputs (over client counts) of two contenders, "
        "except MCSI >= N2DB, which takes the geometric mean of the ratios at the client counts "
        "from 4 up, and the WAL bounds. The comparison column says which two and where each "
        "keeps its data and WAL. The targets of nvm on ordinary storage compare "
        "`nvm-mcsi-pagecache` (the pool at its default place, commits durable through the WAL "
        "on disk) with heap (`synchronous_commit = on`, WAL on disk): both durable. The targets "
        "of `nvm-mcsi` compare a pool in /dev/shm with nvm.durability = pool, standing for "
        "persistent memory, which this machine does not have: they say what nvm does on "
        "persistent memory, and its commits there do not survive a power loss. Against "
        "heap-tmpfs the nvm contender is `nvm-mcsi-tmpfs`, everything in /dev/shm, when that "
        "ran.\n")
    add(md_table(["target", "verdict", "measured: median of the per-round ratios (lowest–highest round; verdict interval)",
                  "comparison"],
                 [[t[0], "**%s**" % t[1], t[2], comparison(t, set(res.contenders))] for t in tg]) + "\n")
    add(noise_table(res, tg) + "\n")
    dt = disk_table(res)
    if dt:
        add(dt + "\n")
    add(mcsi_n2db_text(res, tg, eng, model, common.CORES) + "\n")
    if "nvm-mcsi-tmpfs" not in res.contenders and "heap-tmpfs" in res.contenders and \
            any(t.mine == "nvm-mcsi-tmpfs" for w in res.workloads if w in WORKLOADS
                for t in WORKLOADS[w].targets if t.kind == "ratio"):
        add("Note: nvm-mcsi-tmpfs did not run, so the like-for-like targets against heap-tmpfs "
            "are missing (or, where the descriptor says so, `nvm-mcsi` stands in, marked as not "
            "like for like): nvm-mcsi keeps its data directory, hence the WAL of indexes and "
            "catalog, on disk, while heap-tmpfs has its WAL in /dev/shm (New-Order's index "
            "entries are logged in the pool and their WAL is flushed later, so nvm-mcsi waits for "
            "the disk only when the WAL writer or a full index log does). Full mode runs "
            "nvm-mcsi-tmpfs by default; in quick mode add it with `--contenders \"heap heap-tmpfs "
            "nvm-mcsi nvm-n2db nvm-mcsi-tmpfs\"`.\n")
    counts = {v: sum(1 for t in tg if t[1] == v) for v in ("PASS", "within noise", "MISS", "NO DATA")}
    add("**%d targets: %s.**\n" % (len(tg), ", ".join("%d %s" % (k, v) for v, k in counts.items() if k)))
    misses = [t for t in tg if t[1] == "MISS" or (
        t[1] == "within noise" and t.kind == "ratio" and t.spread and t.need
        and t.spread.median < t.need)]
    if misses:
        add("Missed targets, and those within noise whose median falls short, are reported as "
            "measured. Why, from the CPU accounts (section \"CPU per transaction\") and the "
            "profile (wait events sampled from pg_stat_activity, perf symbols; section "
            "\"Profile\" below):\n")
        for t in misses:
            add("- **%s** (%s): %s" % (t[0], t[1], explain_target(t, prof, res)))
        add("")

    # profile
    add("## Profile\n")
    if not prof:
        add("Not profiled in this run: full mode profiles by default, quick mode does not (to "
            "stay within its 6 minutes); `bench/run.sh --quick --profile` adds its profile point, "
            "TPC-C with 1 warehouse at 8 clients, about 20 s.\n")
    else:
        add("With `--profile`, after the measured runs of a workload every contender ran once "
            "more at each profile point (these runs are not in the results above). During that "
            "run, every 10 ms, the state and wait event of each of its client backends were read "
            "from pg_stat_activity: a share below is the fraction of those backend samples, so "
            "it is the share of the backends' time. \"On CPU\" is an active backend with no wait "
            "event (parsing, executing, the nvm pool's own work and spinning included); "
            "\"waiting for the client\" is a backend idle or idle in transaction, waiting for "
            "pgbench's next statement. When perf works, `perf record -F 499 -p` sampled the same "
            "backends on the CPU for the same time.\n")
        L.extend(profile_section(prof))

    # figures
    add("## Figures\n")
    if plot_note:
        add(plot_note + "\n")
    for p in plots:
        add("![%s](%s)\n" % (p, p))

    # engine
    add("## Engine level (no SQL)\n")
    if not eng:
        add("Not run (--no-engine) or it failed: see logs/engine-0.log.\n")
    else:
        add("`build-bench/nvm_engine_bench --workloads %s` drives the "
            "storage core with threads, the way the paper measured: a fresh pool per point (in "
            "/dev/shm), both modes side by side. %s = %s. "
            "Measured on %d cores: thread counts above that oversubscribe the machine.\n"
            % (",".join(ENGINE_WORKLOADS), ENGINE.stand_in, ENGINE.by_name[ENGINE.stand_in].what,
               common.CORES))
        rows = []
        by = {(r["workload"], r["mode"], r["threads"]): r for r in eng}
        for w in ENGINE_WORKLOADS:
            for n in sorted({r["threads"] for r in eng if r["workload"] == w}):
                m, d = by.get((w, "mcsi", n)), by.get((w, "n2db", n))

                def g(r, k, f="%.0f"):
                    return "–" if not r or r[k] is None else f % r[k]
                rows.append([w, n, fmt_tps(m and m["tps"]), fmt_tps(d and d["tps"]),
                             fmt_ratio(ratio(m and m["tps"], d and d["tps"])),
                             "%s / %s" % (g(m, "lat_us", "%.1f"), g(d, "lat_us", "%.1f")),
                             "%s / %s" % (g(m, "snapshot_ns"), g(d, "snapshot_ns")),
                             "%s / %s" % (g(m, "complete_ns"), g(d, "complete_ns")),
                             "%s / %s" % (g(m, "aborts"), g(d, "aborts")),
                             "%s / %s" % (g(m, "fences_per_txn", "%.1f"), g(d, "fences_per_txn", "%.1f"))])
        add(md_table(["workload", "threads", "MCSI tps", "N2DB tps", "MCSI/N2DB",
                      "latency µs (M/N)", "snapshot ns (M/N)", "complete ns (M/N)",
                      "aborts (M/N)", "fences/txn (M/N)"], rows) + "\n")
        reps = max((r["reps"] for r in eng), default=1)
        if reps > 1:
            add("Each point ran %d times; the table keeps the repetition with the best "
                "throughput (the one least disturbed by other load on the machine).\n" % reps)
        add("### Model: extrapolation to 18 threads (a model, not a measurement)\n")
        add("Only %d threads run in parallel here, so the paper's 18-thread point cannot be "
            "measured, and the measured points above 1 thread are dominated by noise and "
            "oversubscription. The model takes from the measurements only the 1-thread time per "
            "transaction T1 (= 1 / throughput) and N2DB's 1-thread snapshot time S, and assumes "
            "t = %.0f ns to move a written cache line between two cores of one socket (a typical "
            "figure, not measured here) and the fraction w of transactions that write (micro 1, "
            "YCSB-A %.2f, B %.2f, C 0, from the workload definitions).\n"
            % (common.CORES, T_XFER_NS, WRITE_FRACTION.get("ycsb-a", math.nan),
               WRITE_FRACTION.get("ycsb-b", math.nan)))
        add("- **MCSI:** X(N) = N / (T1 + (N - 1) t). Nothing global is written, so nothing is "
            "serialized; each snapshot reads the N - 1 other slots' last-completed clocks, one "
            "cache line each (counting no snapshot reuse, which is pessimistic for MCSI).")
        add("- **N2DB:** X(N) = min(N / T1, 1 / h(N), 1 / (w t)), with h(N) = (1 + w)(S + t) + "
            "(N - 1) t / 8. The one global lock is held at every transaction start "
            "(snapshot: counter plus a scan of the N - 1 active entries, 8 to a cache line) and "
            "at every writer's end, and each hold moves the lock's cache line; 1 / (w t) bounds "
            "commits that write the same shared commit-log line in turn.\n")
        add("What the model leaves out: the SQL layer, aborts, NUMA, memory bandwidth and "
            "Optane's slower media, and the growth of N2DB's lock hold time with waiting. It "
            "says where the designs' costs come from, not what 18 threads would measure.\n")
        rows = []
        for w in ENGINE_WORKLOADS:
            mm, nn = model.get((w, "mcsi")), model.get((w, "n2db"))
            if not mm and not nn:
                continue
            pp = WORKLOADS[w].paper if w in WORKLOADS else None
            paper = (pp["mcsi_tps"], 0, pp["n2db_tps"]) if pp else None
            row = [w, mm["desc"] if mm else "–", nn["desc"] if nn else "–"]
            for n in (1, 2, 8, 18):
                a = mm["x"](n) if mm else None
                b = nn["x"](n) if nn else None
                row.append("%s / %s (%s)" % (fmt_tps(a), fmt_tps(b), fmt_ratio(ratio(a, b))))
            row.append("%.2f" % (paper[0] / paper[2]) if paper else "–")
            rows.append(row)
        add(md_table(["workload", "MCSI inputs", "N2DB inputs",
                      "model @1: MCSI / N2DB (ratio)", "model @2", "model @8", "model @18",
                      "paper MCSI/N2DB (max)"], rows) + "\n")
        for d, de in load_engine_delays(out):
            add("### Engine level with an emulated drain delay of %s ns\n" % d)
            byd = {(r["workload"], r["mode"], r["threads"]): r for r in de}
            rows = []
            for w in ENGINE_WORKLOADS:
                for n in sorted({r["threads"] for r in de if r["workload"] == w}):
                    m, dd = byd.get((w, "mcsi", n)), byd.get((w, "n2db", n))
                    m0, d0 = by.get((w, "mcsi", n)), by.get((w, "n2db", n))
                    rows.append([w, n, fmt_tps(m and m["tps"]), fmt_tps(dd and dd["tps"]),
                                 fmt_ratio(ratio(m and m["tps"], dd and dd["tps"])),
                                 fmt_ratio(ratio(m and m["tps"], m0 and m0["tps"])),
                                 fmt_ratio(ratio(dd and dd["tps"], d0 and d0["tps"]))])
            add(md_table(["workload", "threads", "MCSI tps", "N2DB tps", "MCSI/N2DB",
                          "MCSI vs no delay", "N2DB vs no delay"], rows) + "\n")

    # drain-delay SQL runs
    delayed = [c for c in res.contenders if "@" in c]
    if delayed:
        add("## Emulated NVM write latency (nvm.emulated_drain_delay_ns), SQL level\n")
        rows = []
        for w in res.workloads:
            for c in delayed:
                base = c.split("@")[0]
                for n in res.clients:
                    a, b = res.tps(w, c, n), res.tps(w, base, n)
                    if a is None and b is None:
                        continue
                    rows.append([w, c, n, fmt_tps(a), fmt_tps(b), fmt_ratio(ratio(a, b))])
        add(md_table(["workload", "contender", "clients", "tps with delay", "tps without",
                      "ratio"], rows) + "\n")

    gotpc = run_file(out, "gotpc.md").strip()
    if gotpc:
        add("## go-tpc cross-check\n")
        add(gotpc + "\n")

    L.extend(checks_section(checks))

    # every run
    add("## Every run\n")
    add("commits = transactions processed; retried = transactions that needed at least one "
        "retry; retries = total retries (each one a serialization failure or deadlock); failed "
        "= gave up after --max-tries; abort % = (retries + failed) / (commits + retries + failed).\n")
    rows = []
    for r in sorted(res.rows, key=lambda r: (worder(r["workload"]),
                                              r["clients"], corder(r["contender"]))):
        rows.append([r["workload"], r["contender"], r["clients"], r["warehouses"] or "",
                     r["status"] + (" (%s)" % r["error"] if r.get("error") else ""),
                     fmt_tps(r["tps"]), r["commits"], r["retried"], r["retries"], r["failed"],
                     "–" if r["abort_pct"] is None else "%.1f" % r["abort_pct"],
                     fmt_ms(r["lat_avg_ms"]), fmt_ms(r["lat_p50_ms"]), fmt_ms(r["lat_p99_ms"]),
                     " / ".join(fmt_ms(fnum(r.get("script%d_lat_avg_ms" % (i + 1))))
                                for i in range(len(script_names(r["workload"])))),
                     r["run_id"]])
    add(md_table(["workload", "contender", "clients", "wh / scale", "status", "tps", "commits",
                  "retried", "retries", "failed", "abort %", "avg ms", "p50 ms", "p99 ms",
                  "per script avg ms (%s)" % "; ".join(
                      "%s: %s" % (w, " / ".join(script_names(w))) for w in res.workloads
                      if script_names(w)), "run"], rows) + "\n")
    add("Runs marked `a=b` in the run column were not repeated: the configuration is the same as "
        "run b (TPC-C with 1 warehouse at 1 client, or 4 warehouses at 4 clients, is also the "
        "uncontended configuration).\n")

    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(L))
    return tg


def summary(out, res, tg):
    """What report.py prints on stdout: the main table and the targets."""
    L = ["", "## nvmam benchmark (%s): maximum throughput, best client count in brackets"
         % ", ".join(x for x in (res.rows[0]["mode"] if res.rows else "?", pg_version(out)) if x),
         "", main_table(res), "", contender_legend(res), "",
         "Targets (PASS / MISS when the ratio's verdict interval lies wholly above / below the "
         "target, within noise when the target lies inside it; report.md, \"How to read the "
         "spread\"):", ""]
    for t in tg:
        L.append("- %s: %s (%s)" % (t[1], t[0], t[2]))
    if any(t.mine == "nvm-mcsi" and t.ref == "nvm-n2db" for t in tg):
        L += ["", "MCSI vs N2DB: expected within noise of each other on %d cores through SQL (the "
              "paper measured them equal up to a few threads); the evidence for many cores is "
              "the engine level's per-operation costs and its model in report.md."
              % common.CORES]
    checks = load_checks(out)
    if checks:
        bad = failed_checks(checks)
        L += ["", "Consistency checks: %d run(s) checked, %s." % (
            len(checks), "%d FAILED (report.md, \"Consistency checks\")" % len(bad) if bad
            else "all passed")]
    L += ["", "Full report: %s" % os.path.join(out, "report.md")]
    return "\n".join(L) + "\n"

"""bench/lib/report_model.py
     The engine level's many-core model: from the 1-thread measurements of
     bench/engine/nvm_engine_bench.c, a throughput X(N) of MCSI and N2DB at
     N threads, N beyond the machine's cores (a model, not a measurement),
     and which engine workload stands for a SQL workload.
"""

from report_common import ENGINE

# assumed cost of moving a written cache line from one core to another on a
# one-socket server like the paper's (not measured here)
T_XFER_NS = 100.0
# fraction of transactions that write, per engine workload (its descriptor in
# bench/workloads/engine.toml: k rows, uniform in rows_per_txn, each updated
# with probability u: 1 - mean((1-u)^k))
WRITE_FRACTION = {w.name: w.write_fraction for w in ENGINE.workloads}


def engine_model(eng, cores):
    """Per (workload, mode): X(N), a throughput model for N threads.

    Inputs measured at 1 thread: T1 = 1 / throughput (µs per transaction on
    one thread) and S = N2DB's snapshot time.  Assumed: T_XFER_NS per
    cache-line transfer between cores, and the write fraction w.
      MCSI: X(N) = N / (T1 + (N-1) t), every snapshot reading the N-1 other
            slots' last-completed clocks (one cache line each; no snapshot
            reuse counted, which is pessimistic for MCSI).  Nothing global is
            written, so nothing is serialized.
      N2DB: X(N) = min(N / T1, 1 / h(N), 1 / (w t)), h(N) = (1 + w)(S + t) +
            (N-1) t / 8: the one global lock is held at every start
            (snapshot: counter and a scan of the N-1 active entries, 8 to a
            cache line) and at every writer's end, each hold moving the lock's
            line; 1 / (w t) bounds commits that write the same shared
            commit-log line one after another."""
    model = {}
    t = T_XFER_NS / 1000.0                  # µs
    for w in sorted({r["workload"] for r in eng}):
        wf = WRITE_FRACTION.get(w)
        if wf is None:
            continue
        for mode in ("mcsi", "n2db"):
            one = [r for r in eng if r["workload"] == w and r["mode"] == mode and r["threads"] == 1]
            if not one or not one[0]["tps"]:
                continue
            t1 = 1e6 / one[0]["tps"]        # µs per transaction on one thread
            if mode == "mcsi":
                def x(n, t1=t1):
                    return n / ((t1 + (n - 1) * t) / 1e6)
                desc = "T1 = %.2f µs" % t1
            else:
                snap = (one[0]["snapshot_ns"] or 0) / 1000.0

                def x(n, t1=t1, snap=snap, wf=wf):
                    h = (1 + wf) * (snap + t) + (n - 1) / 8.0 * t
                    bounds = [n / (t1 / 1e6), 1e6 / h]
                    if wf > 0:
                        bounds.append(1e6 / (wf * t))
                    return min(bounds)
                desc = "T1 = %.2f µs, S = %.0f ns, w = %.2f" % (t1, snap * 1000, wf)
            model[(w, mode)] = {"x": x, "desc": desc}
    return model


# the engine workload whose transaction stands for a SQL workload's in the
# comparison of MCSI and N2DB: its own name's, else the stand-in
def engine_workload(w):
    return w if w in WRITE_FRACTION else ENGINE.stand_in

#!/usr/bin/env python3
"""bench/lib/workloads.py
     The benchmark's workload descriptors.  bench/workloads/*.toml holds one
     file per family of workloads (the workloads that share a database and
     its load: YCSB, TPC-C, TPC-B, single rows), and in it one [[workload]]
     table per workload: its scripts and pgbench arguments, the sizes of its
     data per mode, what the report shows for it and its targets.
     bench/workloads/engine.toml holds the engine level's workloads (those
     bench/engine/nvm_engine_bench.c runs against the core, without SQL).
     This module reads and checks them, and hands them to bench/run.sh (as
     shell assignments, `workloads.py shell`) and to bench/lib/report.py (as
     objects), so adding a workload is a change of one file.

usage: workloads.py shell --mode quick|full --clients "4" [--workloads "..."]
                          [--profile-points "W:N ..."]
       workloads.py list [--mode quick|full]

The descriptor format is described in bench/README.md ("Adding a workload").
Expressions (sizes, derived values, pgbench -D values, warehouses) are
arithmetic over numbers and the names defined before them: the family's
sizes, its derived values, max_clients (the most clients any run of the
family uses, profile runs included) and, in a workload, clients; with the
functions min, max, int, round and nurand_a.
"""

import argparse
import ast
import glob
import math
import operator
import os
import shlex
import sys
import tomllib

WORKLOAD_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "workloads")
MODES = ("quick", "full")
# the engine level's workloads; every other *.toml file is a family
ENGINE_FILE = "engine.toml"


class DescriptorError(Exception):
    pass


# ---------------------------------------------------------------------------
# expressions
# ---------------------------------------------------------------------------

def nurand_a(n, a_std, n_std):
    """TPC-C's NURand constant A for a range of n values, where the standard
    has a_std for n_std values: 2^round(log2(n (a_std + 1) / n_std)) - 1,
    at least 1."""
    x = n * (a_std + 1) / n_std
    k = max(1, int(math.log2(x) + 0.5))
    return 2 ** k - 1


FUNCTIONS = {"min": min, "max": max, "int": int, "round": round, "nurand_a": nurand_a}
BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
          ast.Pow: operator.pow}


def evaluate(expr, names, where):
    """The value of expr (a number, or a string holding an arithmetic
    expression over names)."""
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        return expr
    if not isinstance(expr, str):
        raise DescriptorError("%s: %r is not a number or an expression" % (where, expr))

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise DescriptorError("%s: unknown name %s in %r (known: %s)"
                                      % (where, node.id, expr, ", ".join(sorted(names))))
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            return BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in FUNCTIONS and not node.keywords:
            return FUNCTIONS[node.func.id](*[ev(a) for a in node.args])
        raise DescriptorError("%s: %r is not a plain arithmetic expression" % (where, expr))

    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise DescriptorError("%s: %r: %s" % (where, expr, e))
    v = ev(tree)
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return v


# ---------------------------------------------------------------------------
# descriptors
# ---------------------------------------------------------------------------

def check_keys(table, allowed, required, where):
    if not isinstance(table, dict):
        raise DescriptorError("%s: expected a table" % where)
    extra = sorted(set(table) - set(allowed))
    if extra:
        raise DescriptorError("%s: unknown key(s) %s (allowed: %s)"
                              % (where, ", ".join(extra), ", ".join(sorted(allowed))))
    missing = [k for k in required if k not in table]
    if missing:
        raise DescriptorError("%s: missing %s" % (where, ", ".join(missing)))


class Target:
    """One target of a workload: "mine >= factor x ref" (maximum
    throughputs; `instead` stands in for mine when mine did not run, marked
    as not like for like), or a metric bound "metric of contender <= max"
    (fsyncs_per_txn: WAL fsyncs per transaction) or "<= max x ref's"
    (wal_bytes_per_txn: WAL bytes per transaction against ref's)."""

    def __init__(self, t, where):
        if "metric" in t:
            check_keys(t, ("metric", "contender", "max", "ref"), ("metric", "contender", "max"), where)
            if t["metric"] not in ("fsyncs_per_txn", "wal_bytes_per_txn"):
                raise DescriptorError("%s: the metrics are fsyncs_per_txn and wal_bytes_per_txn" % where)
            if (t["metric"] == "wal_bytes_per_txn") != ("ref" in t):
                raise DescriptorError("%s: wal_bytes_per_txn is bounded by a factor of a ref "
                                      "contender's, fsyncs_per_txn by a number" % where)
            self.kind = "metric"
            self.metric, self.contender, self.max = t["metric"], t["contender"], float(t["max"])
            self.ref = t.get("ref")
        else:
            check_keys(t, ("mine", "ref", "factor", "instead"), ("mine", "ref", "factor"), where)
            self.kind = "ratio"
            self.mine, self.ref, self.factor = t["mine"], t["ref"], float(t["factor"])
            self.instead = t.get("instead")


class Workload:
    KEYS = ("name", "title", "what", "scripts", "builtin", "defines", "pgbench_args",
            "warehouses", "script_names", "paper", "targets", "clients_up_to")
    PAPER_KEYS = ("mcsi_tps", "mcsi_threads", "n2db_tps", "n2db_threads",
                  "mcsi_latency_us", "n2db_latency_us")

    def __init__(self, family, t, where):
        check_keys(t, self.KEYS, ("name", "title"), where)
        self.family = family
        self.name = t["name"]
        self.title = t["title"]
        self.what = t.get("what", "")
        self.scripts = list(t.get("scripts", []))
        self.builtin = t.get("builtin")
        if not self.scripts and not self.builtin:
            raise DescriptorError("%s: needs scripts or builtin" % where)
        for s in self.scripts:
            path = os.path.join(WORKLOAD_DIR, s.split("@")[0])
            if not os.path.exists(path):
                raise DescriptorError("%s: script %s not found in %s" % (where, s, WORKLOAD_DIR))
        self.defines = dict(t.get("defines", {}))
        self.pgbench_args = list(t.get("pgbench_args", []))
        self.warehouses = t.get("warehouses")
        self.script_names = list(t.get("script_names", []))
        self.paper = t.get("paper")
        if self.paper is not None:
            check_keys(self.paper, self.PAPER_KEYS, self.PAPER_KEYS[:4], where + ".paper")
        self.targets = [Target(x, "%s.targets[%d]" % (where, i))
                        for i, x in enumerate(t.get("targets", []))]
        # runs only at the run's client counts up to this one (0: all)
        self.clients_up_to = t.get("clients_up_to", 0)
        if not isinstance(self.clients_up_to, int) or self.clients_up_to < 0:
            raise DescriptorError("%s: clients_up_to is a client count" % where)

    def values(self, sizes, clients):
        v = dict(sizes)
        v["clients"] = clients
        return v

    def args(self, sizes, clients):
        """pgbench's arguments (scripts, -b, -D) at this client count."""
        v = self.values(sizes, clients)
        where = "workload %s" % self.name
        out = []
        for s in self.scripts:
            out += ["-f", os.path.join(WORKLOAD_DIR, s)]
        if self.builtin:
            out += ["-b", self.builtin]
        for k, e in self.defines.items():
            out += ["-D", "%s=%s" % (k, evaluate(e, v, where + ".defines." + k))]
        out += [fill(x, v, where + ".pgbench_args") for x in self.pgbench_args]
        return out

    def warehouses_at(self, sizes, clients):
        """The value of results.csv's warehouses column ("" when none)."""
        if self.warehouses is None:
            return ""
        return evaluate(self.warehouses, self.values(sizes, clients),
                        "workload %s.warehouses" % self.name)


class EngineWorkload:
    """One workload of the engine level (bench/engine/nvm_engine_bench.c
    implements it): what it does, how many rows a transaction touches and
    how often it updates one (hence write_fraction, the share of its
    transactions that write, for the report's model), and how fast it
    writes to the pool (for the size of its pool in bench/run.sh)."""

    KEYS = ("name", "what", "update_pct", "rows_per_txn", "write_mb_per_s")

    def __init__(self, t, where):
        check_keys(t, self.KEYS, self.KEYS, where)
        self.name = t["name"]
        self.what = t["what"]
        self.update_pct = t["update_pct"]
        self.write_mb_per_s = t["write_mb_per_s"]
        rows = t["rows_per_txn"]
        if not (isinstance(rows, list) and len(rows) == 2 and 1 <= rows[0] <= rows[1]):
            raise DescriptorError("%s: rows_per_txn is [least, most], 1 <= least <= most" % where)
        if not 0 <= self.update_pct <= 100:
            raise DescriptorError("%s: update_pct is between 0 and 100" % where)
        self.rows_per_txn = rows
        # k rows, uniform in rows_per_txn, each updated with probability u:
        # 1 - mean((1 - u)^k)
        keep = (100 - self.update_pct) / 100
        ks = range(rows[0], rows[1] + 1)
        self.write_fraction = 1 - sum(keep ** k for k in ks) / len(ks)


class Engine:
    """bench/workloads/engine.toml: the engine level's workloads, in the
    order they run and are reported, and stand_in, the one whose
    transaction stands for a SQL workload's that has no engine workload of
    its name."""

    def __init__(self, path):
        where = os.path.basename(path)
        doc = read_toml(path, ("engine", "workload"))
        check_keys(doc["engine"], ("stand_in",), ("stand_in",), where + " [engine]")
        self.path = path
        self.workloads = [EngineWorkload(x, "%s workload[%d]" % (where, i))
                          for i, x in enumerate(doc["workload"])]
        self.by_name = {w.name: w for w in self.workloads}
        if len(self.by_name) != len(self.workloads):
            raise DescriptorError("%s: two workloads have the same name" % where)
        self.stand_in = doc["engine"]["stand_in"]
        if self.stand_in not in self.by_name:
            raise DescriptorError("%s: stand_in %s is not a workload here" % (where, self.stand_in))

    def names(self):
        return [w.name for w in self.workloads]


def read_toml(path, tables):
    """A descriptor file's document, which must hold exactly these tables."""
    where = os.path.basename(path)
    with open(path, "rb") as f:
        try:
            doc = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise DescriptorError("%s: %s" % (where, e))
    check_keys(doc, tables, tables, where)
    return doc


class Family:
    KEYS = ("name", "title", "order", "sizes", "pool_size", "derived", "load", "settings",
            "figure", "paper_table", "run_order", "autovacuum", "check", "skip_contenders")

    def __init__(self, path):
        where = os.path.basename(path)
        doc = read_toml(path, ("family", "workload"))
        t = doc["family"]
        check_keys(t, self.KEYS, ("name", "title", "order", "load"), where + " [family]")
        self.path = path
        self.name = t["name"]
        self.title = t["title"]
        self.order = t["order"]
        self.sizes = {}
        for k, s in t.get("sizes", {}).items():
            check_keys(s, ("quick", "full", "env", "doc"), ("quick", "full"), "%s sizes.%s" % (where, k))
            self.sizes[k] = s
        ps = t.get("pool_size", {"quick": "1GB", "full": "1GB"})
        check_keys(ps, ("quick", "full"), ("quick", "full"), where + " pool_size")
        self.pool_size = ps
        self.derived = dict(t.get("derived", {}))
        self.load = []
        for i, step in enumerate(t["load"]):
            w = "%s load[%d]" % (where, i)
            check_keys(step, ("psql", "vars", "pgbench_init"), (), w)
            if ("psql" in step) == ("pgbench_init" in step):
                raise DescriptorError("%s: one of psql or pgbench_init" % w)
            for s in step.get("psql", []):
                if not os.path.exists(os.path.join(WORKLOAD_DIR, s)):
                    raise DescriptorError("%s: script %s not found" % (w, s))
            self.load.append(step)
        # autovacuum on the family's clusters (off unless asked for: no
        # background work lands in another run's measurement)
        self.autovacuum = t.get("autovacuum", False)
        if not isinstance(self.autovacuum, bool):
            raise DescriptorError("%s: autovacuum is true or false" % (where + " [family]"))
        # a psql script run after every run, one row per condition
        # (condition, what, violations)
        self.check = t.get("check")
        if self.check is not None:
            if not isinstance(self.check, str) or \
                    not os.path.exists(os.path.join(WORKLOAD_DIR, self.check)):
                raise DescriptorError("%s: check script %s not found in %s"
                                      % (where + " [family]", self.check, WORKLOAD_DIR))
        # contenders of a mode's default list that this family does not run
        # in that mode (a list given with --contenders runs in every family)
        sk = t.get("skip_contenders", {})
        check_keys(sk, MODES, (), where + " skip_contenders")
        for m, names in sk.items():
            if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
                raise DescriptorError("%s skip_contenders.%s: a list of contender names" % (where, m))
        self.skip_contenders = {m: list(sk.get(m, [])) for m in MODES}
        self.settings = t.get("settings", "")
        self.figure = t.get("figure")
        if self.figure is not None:
            check_keys(self.figure, ("file", "title", "latency"), ("file", "title"), where + " figure")
        self.paper_table = t.get("paper_table")
        if self.paper_table is not None:
            check_keys(self.paper_table, ("title", "unit"), ("title", "unit"), where + " paper_table")
        self.workloads = [Workload(self, x, "%s workload[%d]" % (where, i))
                          for i, x in enumerate(doc["workload"])]
        names = [w.name for w in self.workloads]
        order = list(t.get("run_order", []))
        for n in order:
            if n not in names:
                raise DescriptorError("%s: run_order names %s, which is not a workload here" % (where, n))
        self.run_order = order + [n for n in names if n not in order]
        # a contender left out must not be one the family's targets compare
        for m, skipped in self.skip_contenders.items():
            for w in self.workloads:
                for tg in w.targets:
                    named = {tg.contender, tg.ref} if tg.kind == "metric" else {tg.mine, tg.ref, tg.instead}
                    both = sorted(named & set(skipped))
                    if both:
                        raise DescriptorError("%s: skip_contenders.%s leaves out %s, which a target of %s "
                                              "compares" % (where, m, ", ".join(both), w.name))

    def size_values(self, mode, max_clients, env=None):
        """Sizes and derived values of this family in this mode."""
        env = os.environ if env is None else env
        v = {}
        for k, s in self.sizes.items():
            raw = env.get(s["env"]) if s.get("env") and env.get(s.get("env")) else s[mode]
            v[k] = evaluate(raw, {}, "%s size %s" % (self.name, k))
        v["max_clients"] = max_clients
        for k, e in self.derived.items():
            v[k] = evaluate(e, v, "%s derived.%s" % (self.name, k))
        return v

    def pool(self, mode, env=None):
        env = os.environ if env is None else env
        return env.get("NVM_BENCH_POOL_SIZE") or self.pool_size[mode]

    def load_steps(self, values):
        """The load as command lines: "psql ARGS..." or "pgbench ARGS...",
        run against the family's database."""
        out = []
        for step in self.load:
            if "psql" in step:
                args = ["psql"]
                for k, e in step.get("vars", {}).items():
                    args += ["-v", "%s=%s" % (k, evaluate(e, values, "%s load vars.%s" % (self.name, k)))]
                for s in step["psql"]:
                    args += ["-f", os.path.join(WORKLOAD_DIR, s)]
            else:
                args = ["pgbench"] + [fill(x, values, self.name + " load") for x in step["pgbench_init"]]
            out.append(args)
        return out

    def settings_line(self, values):
        return "%s: %s" % (self.title, self.settings.format_map(values)) if self.settings else ""


def fill(x, values, where):
    """A string with {expression} parts replaced by their values."""
    x = str(x)
    out, i = "", 0
    while i < len(x):
        j = x.find("{", i)
        if j < 0:
            return out + x[i:]
        k = x.find("}", j)
        if k < 0:
            raise DescriptorError("%s: unbalanced { in %r" % (where, x))
        out += x[i:j] + str(evaluate(x[j + 1:k], values, where))
        i = k + 1
    return out


def load(directory=None):
    """Every family, in their order; their workloads in report order."""
    directory = directory or WORKLOAD_DIR
    fams = [Family(p) for p in sorted(glob.glob(os.path.join(directory, "*.toml")))
            if os.path.basename(p) != ENGINE_FILE]
    fams.sort(key=lambda f: (f.order, f.name))
    seen = {}
    for f in fams:
        for w in f.workloads:
            if w.name in seen:
                raise DescriptorError("workload %s is described in both %s and %s"
                                      % (w.name, os.path.basename(seen[w.name]), os.path.basename(f.path)))
            seen[w.name] = f.path
    names = [f.name for f in fams]
    if len(set(names)) != len(names):
        raise DescriptorError("two families have the same name: %s" % names)
    return fams


def by_name(fams):
    return {w.name: w for f in fams for w in f.workloads}


def load_engine(directory=None):
    """The engine level's workloads (ENGINE_FILE)."""
    return Engine(os.path.join(directory or WORKLOAD_DIR, ENGINE_FILE))


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def shell_plan(fams, mode, clients, selected, profile_points, engine=None):
    """Shell assignments for bench/run.sh; with engine, also the engine
    level's workloads in order (ENGINE_WL) and the MB per second each
    writes to its pool (ENGINE_MB)."""
    wl = by_name(fams)
    for w in selected:
        if w not in wl:
            raise DescriptorError("unknown workload %s (known: %s)" % (w, " ".join(wl)))
    points = []
    for p in profile_points:
        name, _, n = p.partition(":")
        if not n.isdigit() or int(n) < 1:
            raise DescriptorError("--profile-points takes workload:clients, not %s" % p)
        if name in selected:
            points.append((name, int(n)))
    q = shlex.quote
    L = ["declare -gA WL_FAMILY=() WL_ARGS=() WL_WH=() WL_UPTO=() FAM_POOL=() FAM_LOAD=() FAM_SETTINGS=() "
         "FAM_AUTOVACUUM=() FAM_CHECK=() FAM_SKIP=() ENGINE_MB=()"]
    run, families = [], []
    for f in fams:
        mine = [n for n in f.run_order if n in selected]
        if not mine:
            continue
        families.append(f.name)
        counts = set(clients) | {n for w, n in points if w in mine}
        values = f.size_values(mode, max(counts))
        FAM = f.name
        L.append("FAM_POOL[%s]=%s" % (FAM, q(str(f.pool(mode)))))
        L.append("FAM_LOAD[%s]=%s" % (FAM, q("\n".join(shlex.join(s) for s in f.load_steps(values)))))
        L.append("FAM_SETTINGS[%s]=%s" % (FAM, q(f.settings_line(values))))
        L.append("FAM_AUTOVACUUM[%s]=%s" % (FAM, "on" if f.autovacuum else "off"))
        L.append("FAM_CHECK[%s]=%s" % (FAM, q(os.path.join(WORKLOAD_DIR, f.check) if f.check else "")))
        L.append("FAM_SKIP[%s]=%s" % (FAM, q(" ".join(f.skip_contenders[mode]))))
        for name in mine:
            w = wl[name]
            run.append(name)
            L.append("WL_FAMILY[%s]=%s" % (q(name), FAM))
            L.append("WL_UPTO[%s]=%d" % (q(name), w.clients_up_to))
            for n in sorted(counts):
                L.append("WL_ARGS[%s]=%s" % (q("%s %d" % (name, n)), q(shlex.join(w.args(values, n)))))
                L.append("WL_WH[%s]=%s" % (q("%s %d" % (name, n)), q(str(w.warehouses_at(values, n)))))
    L.append("WL_RUN=(%s)" % " ".join(q(x) for x in run))
    L.append("FAMILIES=(%s)" % " ".join(q(x) for x in families))
    L.append("WL_ALL=(%s)" % " ".join(q(w.name) for f in fams for w in f.workloads))
    if engine:
        L.append("ENGINE_WL=(%s)" % " ".join(q(x) for x in engine.names()))
        for w in engine.workloads:
            L.append("ENGINE_MB[%s]=%s" % (q(w.name), q(str(w.write_mb_per_s))))
    return "\n".join(L)


def listing(fams, mode, engine=None):
    """A Markdown table of the workloads and their families' sizes, and
    one of the engine level's workloads."""
    L = ["| workload | family | what | pgbench | targets |", "|---|---|---|---|---|"]
    for f in fams:
        for w in f.workloads:
            args = describe_args(w)
            tg = "; ".join(describe_target(t) for t in w.targets) or "–"
            L.append("| `%s` | %s | %s | `%s` | %s |" % (w.name, f.name, w.what or w.title, args, tg))
    L.append("")
    L.append("| family | sizes (%s) | pool_size | load | autovacuum | check after each run "
             "| default contenders left out |" % mode)
    L.append("|---|---|---|---|---|---|---|")
    for f in fams:
        sizes = ", ".join("%s = %s%s" % (k, s[mode], " (%s)" % s["env"] if s.get("env") else "")
                          for k, s in f.sizes.items()) or "–"
        load_ = "; ".join(("psql " + " ".join(s["psql"])) if "psql" in s else
                          "pgbench " + " ".join(str(x) for x in s["pgbench_init"]) for s in f.load)
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            f.name, sizes, f.pool_size[mode], load_, "on" if f.autovacuum else "off", f.check or "–",
            " ".join(f.skip_contenders[mode]) or "–"))
    if engine:
        L.append("")
        L.append("| engine workload | what | rows per transaction | updates | writing transactions |")
        L.append("|---|---|---|---|---|")
        for w in engine.workloads:
            L.append("| `%s`%s | %s | %d-%d | %d %% | %.2f |" % (
                w.name, " (stand-in)" if w.name == engine.stand_in else "", w.what,
                w.rows_per_txn[0], w.rows_per_txn[1], w.update_pct, w.write_fraction))
    return "\n".join(L)


def describe_args(w):
    out = []
    for s in w.scripts:
        out += ["-f", s]
    if w.builtin:
        out += ["-b", w.builtin]
    for k, e in w.defines.items():
        out += ["-D", "%s=%s" % (k, e)]
    out += [str(x) for x in w.pgbench_args]
    return " ".join(out)


def describe_target(t):
    if t.kind == "metric":
        return "%s %s <= %g" % (t.contender, t.metric, t.max)
    return "%s >= %g x %s" % (t.mine, t.factor, t.ref)


def main(argv):
    ap = argparse.ArgumentParser(prog="workloads.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shell")
    s.add_argument("--mode", choices=MODES, required=True)
    s.add_argument("--clients", required=True)
    s.add_argument("--workloads", default="")
    s.add_argument("--profile-points", default="")
    li = sub.add_parser("list")
    li.add_argument("--mode", choices=MODES, default="quick")
    a = ap.parse_args(argv)
    try:
        fams = load()
        engine = load_engine()
        if a.cmd == "list":
            print(listing(fams, a.mode, engine))
            return 0
        clients = [int(x) for x in a.clients.split()]
        selected = a.workloads.split() or [w.name for f in fams for w in f.workloads]
        print(shell_plan(fams, a.mode, clients, selected, a.profile_points.split(), engine))
    except DescriptorError as e:
        print("workloads.py: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

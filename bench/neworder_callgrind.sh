#!/usr/bin/env bash
#
# bench/neworder_callgrind.sh
#	  Instructions per server-side TPC-C transaction (one CALL of a PL/pgSQL
#	  procedure of bench/workloads/tpccsp_procs.sql: New-Order by default,
#	  or any other of the five with --transaction) on heap and on nvm,
#	  counted by valgrind's callgrind: the whole-transaction counterpart of
#	  bench/pointread_callgrind.sh's single-row INSERT and UPDATE, for
#	  before/after comparisons of a change that should cost nothing.
#
# One throwaway cluster with nvmam preloaded runs under callgrind (every
# server process; only the client backends matter).  It holds the TPC-C
# tables twice, in the database tp_heap (heap) and in tp_nvm (nvm as its
# default access method), loaded by the server-side family's scripts
# (tpcc_schema.sql, tpcc_load.sql, tpccsp_load.sql, tpccsp_procs.sql) at
# one warehouse and the sizes below.  For each database, pgbench runs the
# transaction's script, bench/workloads/tpccsp_TRANSACTION.sql (nwh = 1;
# 1 % of New-Orders roll back, as the specification asks), with prepared
# statements in one connection, twice: SHORT and LONG transactions, the
# same random draws in every run (pgbench --random-seed).  The backend's
# instruction count of the long run minus the short one's, divided by the
# difference in transactions, is the cost of one transaction, without
# connection start-up and exit; the same difference by function shows
# where they go.  TRANSACTION is neworder (the default), payment,
# orderstatus, delivery or stocklevel.  A Delivery delivers the oldest new
# order of each district (90 of them per district at the default sizes),
# so LONG stays below that for it: its defaults are 10 and 60.
#
# Usage:
#	bash bench/neworder_callgrind.sh [--transaction T] [--items N]
#									 [--customers N] [--orders N]
#									 [--short N] [--long N] [--mode MODE]
#									 [--out DIR] [--clock-tick NS]
#
# --clock-tick NS makes the clocks that drive nvm's pruning advance by NS
# at every reading (bench/tools/slowclock.c; see bench/pointread_callgrind.sh):
# the same pruning work in every run, whatever the load of the machine.
#
# Uses the installed module.  PG_CONFIG selects PostgreSQL 15.  Writes
# DIR/summary.md, DIR/<database>.self.txt and DIR/<database>.inclusive.txt.
#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=bench/lib/callgrind.sh
. "$ROOT/bench/lib/callgrind.sh"

ITEMS=2000
CUSTOMERS=300
ORDERS=300
SHORT=
LONG=
MODE=mcsi
OUT=
CLOCK_TICK=
TRANSACTION=neworder

nvm_options "transaction=TRANSACTION items=ITEMS customers=CUSTOMERS orders=ORDERS short=SHORT long=LONG mode=MODE out=OUT clock-tick=CLOCK_TICK" "$@"
case "$TRANSACTION" in
	neworder) NAME=New-Order ;;
	payment) NAME=Payment ;;
	orderstatus) NAME=Order-Status ;;
	delivery) NAME=Delivery ;;
	stocklevel) NAME=Stock-Level ;;
	*) nvm_die "--transaction is neworder, payment, orderstatus, delivery or stocklevel, not $TRANSACTION" ;;
esac
if [ "$TRANSACTION" = delivery ]; then
	SHORT=${SHORT:-10} LONG=${LONG:-60}
else
	SHORT=${SHORT:-100} LONG=${LONG:-600}
fi
[ "$LONG" -gt "$SHORT" ] || nvm_die "--long must exceed --short"
command -v valgrind >/dev/null 2>&1 || nvm_die "valgrind not found (apt-get install valgrind)"

# nurand_a N A_STD N_STD: TPC-C's NURand constant A scaled to N values
# (bench/lib/workloads.py's nurand_a)
nurand_a()
{
	python3 -c 'import math, sys
n, a, s = (int(v) for v in sys.argv[1:])
print(2 ** max(1, int(math.log2(n * (a + 1) / s) + 0.5)) - 1)' "$@"
}
A_ITEM=$(nurand_a "$ITEMS" 8191 100000)
A_CUST=$(nurand_a "$CUSTOMERS" 1023 3000)
# the last names (bench/workloads/tpccsp.toml's derived values)
LAST_MAX=$((CUSTOMERS < 1000 ? CUSTOMERS - 1 : 999))
A_LAST=$(nurand_a $((LAST_MAX + 1)) 255 1000)

nvm_find_pg
OUT=${OUT:-$ROOT/build-bench/$TRANSACTION-callgrind-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

nvm_cleanup_at_exit

D=$(nvm_pg_tmpdir /dev/shm nvmam-callgrind)
PORT=$(nvm_free_port)
PRELOAD=()
if [ -n "$CLOCK_TICK" ]; then
	cc -O2 -shared -fPIC -o "$D/slowclock.so" "$ROOT/bench/tools/slowclock.c" -ldl ||
		nvm_die "cannot build bench/tools/slowclock.c"
	chmod 755 "$D/slowclock.so"
	PRELOAD=(env LD_PRELOAD="$D/slowclock.so" SLOWCLOCK_TICK_NS="$CLOCK_TICK")
fi
cg_cluster_start "$MODE" "${PRELOAD[*]}" "" -- "max_locks_per_transaction = 256"

pg()
{
	local prog=$1
	shift
	nvm_as_pg env PGHOST="$D" PGPORT="$PORT" PGUSER=postgres "$PG_BINDIR/$prog" "$@"
}

W=$ROOT/bench/workloads
for db in tp_heap tp_nvm; do
	echo "==> loading TPC-C (1 warehouse, $ITEMS items, $CUSTOMERS customers, $ORDERS orders) into $db" >&2
	pg psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db"
	if [ "$db" = tp_nvm ]; then
		pg psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION nvmam" \
			-c "ALTER DATABASE $db SET default_table_access_method = nvm"
	fi
	pg psql -X -q -v ON_ERROR_STOP=1 -d "$db" -v warehouses=1 -v items="$ITEMS" \
		-v customers="$CUSTOMERS" -v orders="$ORDERS" \
		-f "$W/tpcc_schema.sql" -f "$W/tpcc_load.sql" -f "$W/tpccsp_load.sql" \
		-f "$W/tpccsp_procs.sql" >"$OUT/load-$db.log" 2>&1
	pg psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "VACUUM ANALYZE"
done
am=$(pg psql -X -At -d tp_nvm -c "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'stock'")
[ "$am" = nvm ] || nvm_die "tp_nvm's stock uses $am, not nvm"

# backend_ir DB N: the instructions of the backend that ran N transactions
# in DB: of the processes that ended meanwhile, the one that did the most
backend_ir()
{
	local db=$1 n=$2 before
	cg_settle
	before=$(ls "$D/cg")
	pg pgbench -n -M prepared -f "$W/tpccsp_$TRANSACTION.sql" \
		-D nwh=1 -D items="$ITEMS" -D customers="$CUSTOMERS" -D a_item="$A_ITEM" \
		-D a_cust="$A_CUST" -D a_last="$A_LAST" -D last_max="$LAST_MAX" \
		-c 1 -t "$n" --random-seed=1 "$db" >"$OUT/pgbench-$db-$n.log" 2>&1
	sleep 2
	cg_busiest_since "$before" "$OUT/callgrind.$db.$n" "$db"
}

{
	echo "Instructions per server-side TPC-C $NAME, counted by callgrind (valgrind $(valgrind --version | sed 's/valgrind-//'))."
	echo "One backend, pgbench -M prepared -f bench/workloads/tpccsp_$TRANSACTION.sql, 1 warehouse, $ITEMS items,"
	echo "$CUSTOMERS customers and $ORDERS initial orders per district;"
	echo "(Ir of $LONG transactions - Ir of $SHORT) / $((LONG - SHORT)). nvm.concurrency_control = $MODE."
	[ -n "$CLOCK_TICK" ] && echo "Pruning clocks advanced $CLOCK_TICK ns per reading (--clock-tick, bench/tools/slowclock.c)."
	echo "Module: $(md5sum "$PG_PKGLIBDIR/nvmam.so" | cut -c1-12), git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo
	echo "| database | instructions per $NAME |"
	echo "|---|---|"
} >"$OUT/summary.md"

for db in tp_heap tp_nvm; do
	echo "==> $db: $SHORT and $LONG transactions ($NAME) under callgrind" >&2
	short=$(backend_ir "$db" "$SHORT")
	long=$(backend_ir "$db" "$LONG")
	echo "| $db | $(((long - short) / (LONG - SHORT))) |" >>"$OUT/summary.md"
	for incl in no yes; do
		suffix=self
		[ "$incl" = yes ] && suffix=inclusive
		cg_by_function "$OUT/callgrind.$db.$SHORT" "$OUT/callgrind.$db.$LONG" \
			"$((LONG - SHORT))" 1 "per $NAME" 1 22.0f --inclusive="$incl" >"$OUT/$db.$suffix.txt"
	done
done
{
	echo
	echo "Where they go: <database>.self.txt (instructions per $NAME by function, its own),"
	echo "<database>.inclusive.txt (with its callees); callgrind_annotate of the long run"
	echo "minus the short run's, divided by the number of transactions between them."
} >>"$OUT/summary.md"
rm -f "$OUT"/callgrind.tp_*
cat "$OUT/summary.md"
echo "results: $OUT" >&2

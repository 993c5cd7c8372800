#!/usr/bin/env bash
#
# bench/pointread_callgrind.sh
#	  Instructions per single-row primary-key SELECT (or INSERT, or UPDATE)
#	  on heap and on nvm, counted by valgrind's callgrind: repeatable on a
#	  busy machine, where timings are not, so it is what before/after
#	  comparisons of the read and write paths use.
#
# One throwaway cluster with nvmam preloaded runs under callgrind (every
# server process; only the client backends matter).  It holds the same
# table twice, pr_heap (heap) and pr_nvm (nvm): id int PRIMARY KEY, v int,
# pad text of 100 bytes, ROWS rows.  For each table, pgbench runs the
# workload's query with random ids and prepared statements (pgbench -M
# prepared; --protocol simple or extended parses and plans every query) in
# one connection, twice: SHORT and LONG transactions, each one query:
#	select	"SELECT v, pad FROM <table> WHERE id = :id" (the default)
#	update	"UPDATE <table> SET v = v + 1 WHERE id = :id" (no indexed column)
#	range-update
#			"UPDATE <table> SET v = v + 1 WHERE id BETWEEN :id AND :id + 99",
#			100 rows written by one statement, as server-side procedures do
#	insert	"INSERT INTO <table> VALUES (nextval('<table>_ins'), :id, <pad>)",
#			ids above ROWS from a sequence of the table's own
# The random ids are the same in every run (pgbench --random-seed).  The
# backend's instruction count of the long run minus the short one's,
# divided by the difference in queries, is the cost of one query, without
# connection start-up and exit; the same difference by function (its own
# instructions, and with its callees) shows where they go.
#
# Usage:
#	bash bench/pointread_callgrind.sh [--rows N] [--short N] [--long N]
#									  [--mode mcsi|n2db] [--out DIR] [--cache-sim]
#									  [--protocol prepared|extended|simple]
#									  [--workload select|update|range-update|insert]
#									  [--clock-factor F | --clock-tick NS]
#
# --cache-sim also simulates the caches (callgrind's model of a first-level
# and a last-level cache) and reports last-level misses per query: memory
# traffic that instruction counts do not show.
#
# --clock-factor F runs the server with bench/tools/slowclock.c preloaded:
# the clocks that drive nvm's pruning (deferred pruning's 20 ms age, the
# horizon's 10 ms refresh, the standby feedback's 100 ms samples) run F
# times slower.  A backend under callgrind runs many times slower than
# natively, so without it that time-driven work happens many times more
# often per query than in a native run (and the deferred list is shorter).
# F is the native query rate divided by the rate under callgrind (the
# pgbench logs in DIR give the latter).  --clock-tick NS instead makes both
# clocks advance by NS at every reading, whatever the load of the machine:
# the same work in every run (the core reads its clock about four times per
# row written, so NS near a quarter of the native time per row keeps the
# native frequency of the pruning work).
#
# Uses the installed module (build and install first, e.g. a release build:
# bench/pointread.sh does both, or meson + ninja install).  PG_CONFIG selects
# PostgreSQL 15.  Writes DIR/summary.md, DIR/<table>.self.txt and
# DIR/<table>.inclusive.txt.
#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=bench/lib/callgrind.sh
. "$ROOT/bench/lib/callgrind.sh"

ROWS=100000
SHORT=2000
LONG=12000
MODE=mcsi
PROTOCOL=prepared
OUT=
CACHE_SIM=0
WORKLOAD=select
CLOCK_FACTOR=
CLOCK_TICK=

nvm_options "rows=ROWS short=SHORT long=LONG mode=MODE protocol=PROTOCOL workload=WORKLOAD out=OUT cache-sim!=CACHE_SIM clock-factor=CLOCK_FACTOR clock-tick=CLOCK_TICK" "$@"
[ "$LONG" -gt "$SHORT" ] || nvm_die "--long must exceed --short"
case "$PROTOCOL" in simple | extended | prepared) ;; *) nvm_die "--protocol is simple, extended or prepared" ;; esac
case "$WORKLOAD" in select | update | range-update | insert) ;; *) nvm_die "--workload is select, update, range-update or insert" ;; esac
command -v valgrind >/dev/null 2>&1 || nvm_die "valgrind not found (apt-get install valgrind)"

nvm_find_pg
OUT=${OUT:-$ROOT/build-bench/$WORKLOAD-callgrind-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

nvm_cleanup_at_exit

D=$(nvm_pg_tmpdir /dev/shm nvmam-callgrind)
PORT=$(nvm_free_port)
# the postmaster under callgrind, following its children (fork)
CG_ARGS=()
[ "$CACHE_SIM" = 1 ] && CG_ARGS+=(--cache-sim=yes)
PRELOAD=()
if [ -n "$CLOCK_FACTOR$CLOCK_TICK" ]; then
	cc -O2 -shared -fPIC -o "$D/slowclock.so" "$ROOT/bench/tools/slowclock.c" -ldl ||
		nvm_die "cannot build bench/tools/slowclock.c"
	chmod 755 "$D/slowclock.so"
	PRELOAD=(env LD_PRELOAD="$D/slowclock.so")
	[ -n "$CLOCK_FACTOR" ] && PRELOAD+=(SLOWCLOCK_FACTOR="$CLOCK_FACTOR")
	[ -n "$CLOCK_TICK" ] && PRELOAD+=(SLOWCLOCK_TICK_NS="$CLOCK_TICK")
fi
cg_cluster_start "$MODE" "${PRELOAD[*]}" "${CG_ARGS[*]}" --

pg()
{
	local prog=$1
	shift
	nvm_as_pg env PGHOST="$D" PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres \
		"$PG_BINDIR/$prog" "$@"
}

echo "==> loading $ROWS rows into pr_heap and pr_nvm" >&2
pg psql -X -q -v ON_ERROR_STOP=1 \
	-c "CREATE EXTENSION nvmam" \
	-c "CREATE TABLE pr_heap (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL) USING heap" \
	-c "CREATE TABLE pr_nvm (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL) USING nvm" \
	-c "INSERT INTO pr_heap SELECT g, g, repeat('x', 100) FROM generate_series(1, $ROWS) g" \
	-c "INSERT INTO pr_nvm SELECT * FROM pr_heap" \
	-c "CREATE SEQUENCE pr_heap_ins START $((ROWS + 1))" \
	-c "CREATE SEQUENCE pr_nvm_ins START $((ROWS + 1))" \
	-c "VACUUM ANALYZE pr_heap" -c "VACUUM ANALYZE pr_nvm"

# query TABLE: the workload's query on TABLE
query()
{
	case "$WORKLOAD" in
		select) echo "SELECT v, pad FROM $1 WHERE id = :id;" ;;
		update) echo "UPDATE $1 SET v = v + 1 WHERE id = :id;" ;;
		range-update) echo "UPDATE $1 SET v = v + 1 WHERE id BETWEEN :id AND :id + 99;" ;;
		insert) echo "INSERT INTO $1 VALUES (nextval('$1_ins'), :id, repeat('x', 100));" ;;
	esac
}

# backend_ir TABLE N: the instructions of the backend that ran N queries on
# TABLE: of the processes that ended meanwhile (a client connection may
# start a short-lived one first), the one that did the most
backend_ir()
{
	local table=$1 n=$2 before
	cg_settle
	before=$(ls "$D/cg")
	printf '%s\n' '\set id random(1, :rows)' "$(query "$table")" |
		nvm_as_pg tee "$D/q_$table.sql" >/dev/null
	pg pgbench -n -M "$PROTOCOL" -f "$D/q_$table.sql" -D rows="$ROWS" -c 1 -t "$n" \
		--random-seed=1 >"$OUT/pgbench-$table-$n.log" 2>&1
	sleep 2
	cg_busiest_since "$before" "$OUT/callgrind.$table.$n" "$table"
}

# ll_misses FILE: last-level cache misses (reads + writes) of a callgrind
# file made with --cache-sim
ll_misses()
{
	awk '/^events:/ {for (i = 2; i <= NF; i++) col[$i] = i}
		/^totals:/ {print $(col["ILmr"]) + $(col["DLmr"]) + $(col["DLmw"])}' "$1"
}

{
	echo "Instructions per query ($WORKLOAD), counted by callgrind (valgrind $(valgrind --version | sed 's/valgrind-//'))."
	echo "One backend, pgbench -M $PROTOCOL, $(query '<table>') on $ROWS rows;"
	echo "(Ir of $LONG queries - Ir of $SHORT queries) / $((LONG - SHORT)). nvm.concurrency_control = $MODE."
	[ -n "$CLOCK_FACTOR" ] && echo "Pruning clocks slowed by $CLOCK_FACTOR (--clock-factor, bench/tools/slowclock.c)."
	[ -n "$CLOCK_TICK" ] && echo "Pruning clocks advanced $CLOCK_TICK ns per reading (--clock-tick, bench/tools/slowclock.c)."
	echo "Module: $(md5sum "$PG_PKGLIBDIR/nvmam.so" | cut -c1-12), git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo
	if [ "$CACHE_SIM" = 1 ]; then
		echo "| table | instructions per query | last-level cache misses per query (simulated) |"
		echo "|---|---|---|"
	else
		echo "| table | instructions per query |"
		echo "|---|---|"
	fi
} >"$OUT/summary.md"
# per_query TABLE SCALE [callgrind_annotate options]: the event (Ir unless
# --show says otherwise) per SCALE queries by function, the long run's minus
# the short run's (start-up and exit cancel out)
per_query()
{
	local table=$1 scale=$2
	shift 2
	cg_by_function "$OUT/callgrind.$table.$SHORT" "$OUT/callgrind.$table.$LONG" \
		"$((LONG - SHORT))" "$scale" "per $scale queries" 1 22.0f "$@"
}

for table in pr_heap pr_nvm; do
	echo "==> $table: $SHORT and $LONG queries under callgrind" >&2
	short=$(backend_ir "$table" "$SHORT")
	long=$(backend_ir "$table" "$LONG")
	if [ "$CACHE_SIM" = 1 ]; then
		ll=$((($(ll_misses "$OUT/callgrind.$table.$LONG") - $(ll_misses "$OUT/callgrind.$table.$SHORT")) * 100 / (LONG - SHORT)))
		echo "| $table | $(((long - short) / (LONG - SHORT))) | $((ll / 100)).$(printf '%02d' $((ll % 100))) |" >>"$OUT/summary.md"
	else
		echo "| $table | $(((long - short) / (LONG - SHORT))) |" >>"$OUT/summary.md"
	fi
	per_query "$table" 1 >"$OUT/$table.self.txt"
	per_query "$table" 1 --inclusive=yes >"$OUT/$table.inclusive.txt"
	if [ "$CACHE_SIM" = 1 ]; then
		per_query "$table" 100 --show=DLmr --sort=DLmr >"$OUT/$table.llmiss-read.txt"
		per_query "$table" 100 --show=DLmr --sort=DLmr --inclusive=yes >"$OUT/$table.llmiss-read-inclusive.txt"
	fi
done
{
	echo
	echo "Where they go: <table>.self.txt (instructions per query by function, its own),"
	echo "<table>.inclusive.txt (with its callees); callgrind_annotate of the long run"
	echo "minus the short run's, divided by the number of queries between them."
	[ "$CACHE_SIM" = 1 ] && echo "<table>.llmiss-read*.txt: last-level read misses per 100 queries, the same way."
	true
} >>"$OUT/summary.md"
rm -f "$OUT"/callgrind.pr_*
cat "$OUT/summary.md"
echo "results: $OUT" >&2

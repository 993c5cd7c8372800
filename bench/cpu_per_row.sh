#!/usr/bin/env bash
#
# bench/cpu_per_row.sh
#	  Instructions per row of the bulk family's three workloads, COPY, a
#	  count(*) scan and a sum scan, on heap and on nvm over the same rows,
#	  counted by valgrind's callgrind (repeatable on a busy machine, where
#	  timings are not), with the difference by function: what nvm runs that
#	  heap does not, and what both run where nvm costs more.
#
# One throwaway cluster with nvmam preloaded (wal_level = replica, the
# default, so nvm.wal_redo logs nvm's rows at commit as the bench's
# contenders do) runs under callgrind.  For each access method it holds two
# tables of the bulk family's ORDER-LINE columns (bench/workloads/
# bulk_schema.sql), without index, filled from two files of the same rows:
# SHORT rows and LONG rows.  Each measured piece of work is one connection:
#	copy	BEGIN; TRUNCATE; COPY of the file; COMMIT (as bulk_copy.sql)
#	count	SELECT count(*) FROM the table (bulk_count.sql)
#	sum		the sums of four int columns (bulk_sum.sql)
# The scans run on the tables the COPYs filled, after every table was read
# once (count(*)) and CHECKPOINTed, as bench/run.sh does after its load;
# parallel query and JIT are off.  The backend's instruction count of the
# LONG run minus the SHORT one's, divided by the difference in rows, is the
# cost of one row, without connection start-up, planning, commit and exit;
# the same difference by function (its own instructions, and with its
# callees) shows where they go.
#
# Usage:
#	bash bench/cpu_per_row.sh [--short N] [--long N] [--mode MODE]
#							  [--out DIR] [--tag NAME] [--keep]
#
# --keep keeps the backends' callgrind files in DIR (callgrind.<workload>.
# <am>.<rows>, for callgrind_annotate --tree=caller and the like).
# MODE is nvm.concurrency_control (mcsi, n2db, pisces, pomvcc).  --tag NAME
# goes into the name of the scratch directory in /dev/shm.  Uses the
# installed module (build and install first, a release build for numbers
# of record).  PG_CONFIG selects PostgreSQL.  Writes DIR/summary.md (the
# counts per row, and for each workload the functions where nvm's row
# costs more than heap's), and DIR/<workload>.<am>.self.txt and
# DIR/<workload>.<am>.inclusive.txt (instructions per row by function).
#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=bench/lib/callgrind.sh
. "$ROOT/bench/lib/callgrind.sh"

SHORT=20000
LONG=100000
MODE=mcsi
OUT=
TAG=
KEEP=

nvm_options "short=SHORT long=LONG mode=MODE out=OUT tag=TAG keep!=KEEP" "$@"
TAG=${TAG:+-$TAG}
[ "$LONG" -gt "$SHORT" ] || nvm_die "--long must exceed --short"
command -v valgrind >/dev/null 2>&1 || nvm_die "valgrind not found (apt-get install valgrind)"

nvm_find_pg
OUT=${OUT:-$ROOT/build-bench/cpu-per-row-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

nvm_cleanup_at_exit

D=$(nvm_pg_tmpdir /dev/shm "nvmam-cpu-per-row$TAG")
PORT=$(nvm_free_port)
cg_cluster_start "$MODE" "" "" -- "max_wal_size = '4GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off"

echo "==> files of $SHORT and $LONG rows, tables heap_N and nvm_N" >&2
cg_psql -c "CREATE EXTENSION nvmam"
for am in heap nvm; do
	for n in "$SHORT" "$LONG"; do
		cg_psql -c "CREATE TABLE ${am}_$n (
			ol_w_id integer NOT NULL, ol_d_id integer NOT NULL, ol_o_id integer NOT NULL,
			ol_number integer NOT NULL, ol_i_id integer NOT NULL,
			ol_supply_w_id integer NOT NULL, ol_delivery_d timestamp,
			ol_quantity integer NOT NULL, ol_amount numeric(6, 2) NOT NULL,
			ol_dist_info char(24) NOT NULL) USING $am"
	done
done
cg_bulk_rows_file "$SHORT"
cg_bulk_rows_file "$LONG"

# measure WORKLOAD AM N SQL...: runs the SQL commands in one connection and
# prints the instructions of its backend (its callgrind file is kept as
# $OUT/callgrind.WORKLOAD.AM.N)
measure()
{
	local workload=$1 am=$2 n=$3 before args=() c
	shift 3
	for c in "$@"; do args+=(-c "$c"); done
	cg_settle
	before=$(ls "$D/cg")
	cg_psql "${args[@]}" >"$OUT/psql-$workload-$am-$n.log" 2>&1
	cg_busiest_since "$before" "$OUT/callgrind.$workload.$am.$n" "$workload $am"
}

declare -A IR
for am in heap nvm; do
	for n in "$SHORT" "$LONG"; do
		echo "==> $am: COPY of $n rows under callgrind" >&2
		IR[copy.$am.$n]=$(measure copy "$am" "$n" "BEGIN" "TRUNCATE ${am}_$n" \
			"COPY ${am}_$n FROM 'cp_$n.copy'" "COMMIT")
	done
done
echo "==> every table read once, CHECKPOINT" >&2
for am in heap nvm; do
	for n in "$SHORT" "$LONG"; do
		cg_psql -c "SELECT count(*) FROM ${am}_$n" >/dev/null
	done
done
cg_psql -c "CHECKPOINT"
for am in heap nvm; do
	for n in "$SHORT" "$LONG"; do
		echo "==> $am: scans of $n rows under callgrind" >&2
		IR[count.$am.$n]=$(measure count "$am" "$n" "SELECT count(*) FROM ${am}_$n")
		IR[sum.$am.$n]=$(measure sum "$am" "$n" "SELECT sum(ol_w_id), sum(ol_i_id),
			sum(ol_supply_w_id), sum(ol_quantity) FROM ${am}_$n")
	done
done

# per_row WORKLOAD AM [callgrind_annotate options]: instructions per row by
# function, the long run's minus the short run's
per_row()
{
	local workload=$1 am=$2
	shift 2
	cg_by_function "$OUT/callgrind.$workload.$am.$SHORT" "$OUT/callgrind.$workload.$am.$LONG" \
		"$((LONG - SHORT))" 1 "per row" 0.05 10.2f "$@"
}

# compare HEAP_FILE NVM_FILE: the functions whose instructions per row are
# higher in nvm's account than in heap's, largest difference first, as a
# markdown table (those heap does not run at all marked)
compare()
{
	python3 - "$1" "$2" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path).readlines()[1:]:
        v, k = line.split(None, 1)
        out[k.strip()] = float(v)
    return out
h, n = read(sys.argv[1]), read(sys.argv[2])
rows = sorted(((n.get(k, 0) - h.get(k, 0)), k) for k in set(h) | set(n))
print("| function | heap | nvm | nvm − heap |")
print("|---|---|---|---|")
for d, k in rows[::-1]:
    if d < 1:
        break
    hv = "%.1f" % h[k] if k in h else "not run"
    print("| `%s` | %s | %.1f | +%.1f |" % (k, hv, n.get(k, 0), d))
print()
print("Where heap costs more (its row's functions nvm does not run, or runs for less):")
print()
print("| function | heap | nvm | heap − nvm |")
print("|---|---|---|---|")
for d, k in rows:
    if d > -1:
        break
    nv = "%.1f" % n[k] if k in n else "not run"
    print("| `%s` | %.1f | %s | %.1f |" % (k, h.get(k, 0), nv, -d))
PY
}

{
	echo "Instructions per row, counted by callgrind (valgrind $(valgrind --version | sed 's/valgrind-//'))."
	echo "(Ir of $LONG rows - Ir of $SHORT rows) / $((LONG - SHORT)), one backend each."
	echo "nvm.concurrency_control = $MODE, wal_level = replica."
	echo "Module: $(md5sum "$PG_PKGLIBDIR/nvmam.so" | cut -c1-12), git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo
	echo "| workload | heap | nvm | nvm / heap |"
	echo "|---|---|---|---|"
	for w in copy count sum; do
		h=$(((IR[$w.heap.$LONG] - IR[$w.heap.$SHORT]) / (LONG - SHORT)))
		v=$(((IR[$w.nvm.$LONG] - IR[$w.nvm.$SHORT]) / (LONG - SHORT)))
		echo "| $w | $h | $v | $(python3 -c "print('%.2f' % ($v / $h))") |"
	done
} >"$OUT/summary.md"
for w in copy count sum; do
	for am in heap nvm; do
		per_row "$w" "$am" >"$OUT/$w.$am.self.txt"
		per_row "$w" "$am" --inclusive=yes >"$OUT/$w.$am.inclusive.txt"
	done
	{
		echo
		echo "## $w: functions whose own instructions per row are higher in nvm"
		echo
		compare "$OUT/$w.heap.self.txt" "$OUT/$w.nvm.self.txt"
	} >>"$OUT/summary.md"
done
{
	echo
	echo "Where they go: <workload>.<am>.self.txt (instructions per row by function, its own),"
	echo "<workload>.<am>.inclusive.txt (with its callees)."
} >>"$OUT/summary.md"
[ -n "$KEEP" ] || rm -f "$OUT"/callgrind.*
cat "$OUT/summary.md"
echo "results: $OUT" >&2

#!/usr/bin/env bash
#
# bench/copy_callgrind.sh
#	  Instructions per row of a COPY into heap and into nvm, counted by
#	  valgrind's callgrind: repeatable on a busy machine, where timings are
#	  not, so it is what before/after comparisons of the COPY path use.
#
# One throwaway cluster with nvmam preloaded (wal_level = replica, the
# default, so nvm.wal_redo logs nvm's rows as the bench's contenders do)
# runs under callgrind.  It holds cp_heap (heap) and cp_nvm (nvm), both of
# the bulk family's ORDER-LINE columns (bench/workloads/bulk_schema.sql),
# without index, and two files of the same rows: SHORT rows and LONG rows.
# For each table, one connection runs, in one transaction, TRUNCATE and
# COPY of a file, once with each file.  The backend's instruction count of
# the long COPY minus the short one's, divided by the difference in rows, is
# the cost of one row, without connection start-up, TRUNCATE, commit and
# exit; the same difference by function (its own instructions, and with its
# callees) shows where they go.
#
# Usage:
#	bash bench/copy_callgrind.sh [--short N] [--long N] [--mode mcsi|n2db]
#								 [--out DIR] [--tag NAME]
#
# --tag NAME goes into the name of the scratch directory in /dev/shm (to
# tell runs of several checkouts apart).  Uses the installed module (build
# and install first).  PG_CONFIG selects PostgreSQL 15.  Writes
# DIR/summary.md, DIR/<table>.self.txt and DIR/<table>.inclusive.txt.
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

nvm_options "short=SHORT long=LONG mode=MODE out=OUT tag=TAG" "$@"
TAG=${TAG:+-$TAG}
[ "$LONG" -gt "$SHORT" ] || nvm_die "--long must exceed --short"
command -v valgrind >/dev/null 2>&1 || nvm_die "valgrind not found (apt-get install valgrind)"

nvm_find_pg
OUT=${OUT:-$ROOT/build-bench/copy-callgrind-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

nvm_cleanup_at_exit

D=$(nvm_pg_tmpdir /dev/shm "nvmam-copy-callgrind$TAG")
PORT=$(nvm_free_port)
cg_cluster_start "$MODE" "" "" -- "max_wal_size = '4GB'"

echo "==> files of $SHORT and $LONG rows, tables cp_heap and cp_nvm" >&2
cg_psql -c "CREATE EXTENSION nvmam"
for am in heap nvm; do
	cg_psql -c "CREATE TABLE cp_$am (
		ol_w_id integer NOT NULL, ol_d_id integer NOT NULL, ol_o_id integer NOT NULL,
		ol_number integer NOT NULL, ol_i_id integer NOT NULL,
		ol_supply_w_id integer NOT NULL, ol_delivery_d timestamp,
		ol_quantity integer NOT NULL, ol_amount numeric(6, 2) NOT NULL,
		ol_dist_info char(24) NOT NULL) USING $am"
done
cg_bulk_rows_file "$SHORT"
cg_bulk_rows_file "$LONG"

# backend_ir TABLE N: the instructions of the backend that copied N rows
# into TABLE (of the processes that ended meanwhile, the one that did the
# most)
backend_ir()
{
	local table=$1 n=$2 before
	cg_settle
	before=$(ls "$D/cg")
	cg_psql -c "BEGIN" -c "TRUNCATE $table" -c "COPY $table FROM 'cp_$n.copy'" -c "COMMIT" \
		>"$OUT/psql-$table-$n.log" 2>&1
	cg_psql -c "CHECKPOINT" >/dev/null
	sleep 2
	cg_busiest_since "$before" "$OUT/callgrind.$table.$n" "$table"
}

{
	echo "Instructions per row of a COPY, counted by callgrind (valgrind $(valgrind --version | sed 's/valgrind-//'))."
	echo "One backend: BEGIN; TRUNCATE; COPY of the bulk family's ORDER-LINE rows; COMMIT."
	echo "(Ir of $LONG rows - Ir of $SHORT rows) / $((LONG - SHORT)). nvm.concurrency_control = $MODE, wal_level = replica."
	echo "Module: $(md5sum "$PG_PKGLIBDIR/nvmam.so" | cut -c1-12), git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo
	echo "| table | instructions per row |"
	echo "|---|---|"
} >"$OUT/summary.md"

# per_row TABLE [callgrind_annotate options]: instructions per row by
# function, the long run's minus the short run's
per_row()
{
	local table=$1
	shift
	cg_by_function "$OUT/callgrind.$table.$SHORT" "$OUT/callgrind.$table.$LONG" \
		"$((LONG - SHORT))" 1 "per row" 0.5 10.1f "$@"
}

for table in cp_heap cp_nvm; do
	echo "==> $table: COPY of $SHORT and of $LONG rows under callgrind" >&2
	short=$(backend_ir "$table" "$SHORT")
	long=$(backend_ir "$table" "$LONG")
	echo "| $table | $(((long - short) / (LONG - SHORT))) |" >>"$OUT/summary.md"
	per_row "$table" >"$OUT/$table.self.txt"
	per_row "$table" --inclusive=yes >"$OUT/$table.inclusive.txt"
done
{
	echo
	echo "Where they go: <table>.self.txt (instructions per row by function, its own),"
	echo "<table>.inclusive.txt (with its callees); callgrind_annotate of the long COPY"
	echo "minus the short one's, divided by the number of rows between them."
} >>"$OUT/summary.md"
rm -f "$OUT"/callgrind.cp_*
cat "$OUT/summary.md"
echo "results: $OUT" >&2

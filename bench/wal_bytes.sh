#!/usr/bin/env bash
# bench/wal_bytes.sh
#   WAL bytes per row that heap and nvm write for the same rows, in one
#   cluster on disk (wal_level = replica, nvmam preloaded, the pool at its
#   default place and nvm.durability at its default: commits durable through
#   the WAL, so every nvm commit writes its redo):
#     copy-narrow    COPY of --rows rows (id int, k int, pad text of 20
#                    bytes), one transaction, no index
#     copy-orderline COPY of --rows TPC-C ORDER-LINE rows (bench/workloads/
#                    bulk_schema.sql's), one transaction, no index
#     insert-1row    --single single-row INSERTs of narrow rows, each its
#                    own transaction, no index
#     update-mid-1row --single single-row UPDATEs, each its own transaction,
#                    of the middle integer column of a wide row (six
#                    columns, ~270 bytes), found by its primary key
#   For each table access method and workload, the WAL written is the
#   difference of pg_current_wal_insert_lsn() around it (a CHECKPOINT
#   before, full_page_writes off so that page images do not count), and
#   pg_waldump --stats of that range says which resource manager wrote it.
#   Prints a table (workload, am, WAL bytes per row) and writes it to
#   OUT/wal-per-row.csv, the waldump statistics to OUT/waldump-*.txt.
#
#   bash bench/wal_bytes.sh [--rows N] [--single N] [--out DIR]
#   (as root: servers run as postgres; nvmam must be installed; PG_CONFIG
#   selects PostgreSQL 15)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

ROWS=200000
SINGLE=2000
OUT="bench/results/wal-bytes-$(date -u +%Y%m%d)"
nvm_options "rows=ROWS single=SINGLE out=OUT" "$@"

nvm_find_pg
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

nvm_cleanup_at_exit
nvm_cluster_new DIR /var/tmp nvm-wal-bytes "$OUT/server.log"
nvm_cluster_conf "$DIR" \
	"shared_preload_libraries = 'nvmam'" \
	"wal_level = replica" \
	"full_page_writes = off" \
	"max_wal_size = 4GB" \
	"checkpoint_timeout = 1h" \
	"nvm.pool_size = '2GB'"
nvm_cluster_start "$DIR"

sql() { nvm_psql "$DIR" postgres -Atq -c "$1"; }

sql "CREATE EXTENSION nvmam"
sql "COPY (SELECT i, i % 1000, md5(i::text)::char(20) FROM generate_series(1, $ROWS) i) TO '$DIR/narrow.copy'"
sql "COPY (SELECT 1 + i % 4, 1 + (i / 4) % 10, 1 + i / 40, 1 + i % 15,
		   1 + (i * 7919) % 100000, 1 + i % 4,
		   CASE WHEN i % 3 = 0 THEN NULL
				ELSE timestamp '2026-01-01' + i * interval '1 second' END,
		   1 + i % 10, ((i * 37) % 999999) / 100.0,
		   left(md5(i::text), 24)
	FROM generate_series(1, $ROWS) i) TO '$DIR/orderline.copy'"

# measure NAME AM ROWS SQL...: the WAL the statements write, per row
measure()
{
	local name=$1 am=$2 n=$3 before after bytes
	shift 3
	sql "CHECKPOINT"
	before=$(sql "SELECT pg_current_wal_insert_lsn()")
	for s in "$@"; do
		nvm_psql "$DIR" postgres -Atq -c "$s" >/dev/null
	done
	after=$(sql "SELECT pg_current_wal_insert_lsn()")
	bytes=$(sql "SELECT pg_wal_lsn_diff('$after', '$before')")
	nvm_as_pg "$PG_BINDIR/pg_waldump" -p "$DIR/data/pg_wal" -s "$before" -e "$after" --stats \
		>"$OUT/waldump-$name-$am.txt" 2>&1 || true
	printf '%s,%s,%s,%s\n' "$name" "$am" "$n" \
		"$(sql "SELECT round($bytes::numeric / $n, 1)")" | tee -a "$OUT/wal-per-row.csv"
}

echo "workload,am,rows,wal_bytes_per_row" | tee "$OUT/wal-per-row.csv"
for am in heap nvm; do
	sql "CREATE TABLE narrow_$am (id int, k int, pad char(20)) USING $am"
	sql "CREATE TABLE ol_$am (ol_w_id int NOT NULL, ol_d_id int NOT NULL, ol_o_id int NOT NULL,
		ol_number int NOT NULL, ol_i_id int NOT NULL, ol_supply_w_id int NOT NULL,
		ol_delivery_d timestamp, ol_quantity int NOT NULL, ol_amount numeric(6, 2) NOT NULL,
		ol_dist_info char(24) NOT NULL) USING $am"
	sql "CREATE TABLE ins_$am (id int, k int, pad char(20)) USING $am"
	sql "CREATE TABLE wide_$am (id int PRIMARY KEY, a char(60), b char(60), mid int,
		c char(60), d char(60)) USING $am"
	sql "INSERT INTO wide_$am SELECT i, 'a', 'b', 0, 'c', 'd' FROM generate_series(1, $SINGLE) i"
done
for am in heap nvm; do
	measure copy-narrow "$am" "$ROWS" "COPY narrow_$am FROM '$DIR/narrow.copy'"
	measure copy-orderline "$am" "$ROWS" "COPY ol_$am FROM '$DIR/orderline.copy'"
done
# single-row statements, each its own transaction: a pgbench script per row
for am in heap nvm; do
	sql "CHECKPOINT"
	before=$(sql "SELECT pg_current_wal_insert_lsn()")
	seq 1 "$SINGLE" | sed "s/.*/INSERT INTO ins_$am VALUES (&, 1, 'x');/" |
		nvm_psql "$DIR" postgres -Atq >/dev/null
	after=$(sql "SELECT pg_current_wal_insert_lsn()")
	nvm_as_pg "$PG_BINDIR/pg_waldump" -p "$DIR/data/pg_wal" -s "$before" -e "$after" --stats \
		>"$OUT/waldump-insert1-$am.txt" 2>&1 || true
	printf 'insert-1row,%s,%s,%s\n' "$am" "$SINGLE" \
		"$(sql "SELECT round(pg_wal_lsn_diff('$after', '$before')::numeric / $SINGLE, 1)")" |
		tee -a "$OUT/wal-per-row.csv"

	sql "CHECKPOINT"
	before=$(sql "SELECT pg_current_wal_insert_lsn()")
	seq 1 "$SINGLE" | sed "s/.*/UPDATE wide_$am SET mid = mid + 1 WHERE id = &;/" |
		nvm_psql "$DIR" postgres -Atq >/dev/null
	after=$(sql "SELECT pg_current_wal_insert_lsn()")
	nvm_as_pg "$PG_BINDIR/pg_waldump" -p "$DIR/data/pg_wal" -s "$before" -e "$after" --stats \
		>"$OUT/waldump-update1-$am.txt" 2>&1 || true
	printf 'update-mid-1row,%s,%s,%s\n' "$am" "$SINGLE" \
		"$(sql "SELECT round(pg_wal_lsn_diff('$after', '$before')::numeric / $SINGLE, 1)")" |
		tee -a "$OUT/wal-per-row.csv"
done
sql "SELECT 'nvm.durability=' || current_setting('nvm.durability') || ' nvm.wal_redo=' || current_setting('nvm.wal_redo') || ' wal_level=' || current_setting('wal_level')" |
	tee "$OUT/settings.txt"

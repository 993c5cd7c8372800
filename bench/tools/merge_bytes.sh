#!/usr/bin/env bash
#
# bench/tools/merge_bytes.sh
#	  What the merges of the pool's checkpoint files write under updates
#	  that come back to the same rows: one nvm table of ROWS rows (the scale
#	  family's rows, bench/scale.sh), then ROUNDS rounds of UPDATES
#	  single-row updates of ids drawn from the first HOT rows (2 clients)
#	  followed by a CHECKPOINT, so that every round adds a delta of at most
#	  HOT rows to the table's files.  Prints the totals of nvm_checkpoints
#	  (captures, bytes written by them, tables merged, bytes written by
#	  merges), each merge's log line, and count/sum of the table (which
#	  must be ROWS/the number of updates).
#
#	  bash bench/tools/merge_bytes.sh [--rows N] [--hot N] [--updates N]
#									  [--rounds N]
#
#	  Uses the installed module (PG_CONFIG selects PostgreSQL); the cluster
#	  lives on disk (NVM_BENCH_DATA_DIR or /var/tmp), the pool at its
#	  default place with the default durability.  Run as root from the top
#	  directory (the server runs as postgres).  Compares builds when run
#	  once with each installed.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

ROWS=2000000
HOT=200000
UPDATES=10000
ROUNDS=20
nvm_options "rows=ROWS hot=HOT updates=UPDATES rounds=ROUNDS" "$@"

nvm_find_pg
nvm_cleanup_at_exit
nvm_cluster_new DIR "${NVM_BENCH_DATA_DIR:-/var/tmp}" nvmam-merge-bytes
nvm_cluster_conf "$DIR" "shared_preload_libraries = 'nvmam'" \
	"nvm.pool_size = '$(( (ROWS * 320 / 1048576 + 1023) / 1024 ))GB'" \
	"shared_buffers = '256MB'" "max_wal_size = '8GB'" "checkpoint_timeout = '1d'" \
	"autovacuum = off" "log_checkpoints = on"
nvm_cluster_start "$DIR"
nvm_psql "$DIR" postgres -c "CREATE EXTENSION nvmam" \
	-c "CREATE TABLE t (id int PRIMARY KEY, n bigint NOT NULL, pad text NOT NULL) USING nvm" \
	-c "INSERT INTO t SELECT g, 0, repeat('p', 84) FROM generate_series(1, $ROWS) g" \
	-c "CHECKPOINT"
printf '\\set id random(1, %d)\nUPDATE t SET n = n + 1 WHERE id = :id;\n' "$HOT" >"$DIR/update.sql"
chmod 644 "$DIR/update.sql"
for r in $(seq 1 "$ROUNDS"); do
	nvm_pg_client "$DIR" pgbench -n -c 2 -t $((UPDATES / 2)) -f "$DIR/update.sql" >/dev/null
	nvm_psql "$DIR" postgres -c "CHECKPOINT"
	sleep 2 # the worker merges right after the checkpoint's capture
done
sleep 5
echo "captures|bytes_written|tables_merged|merged_bytes"
nvm_psql "$DIR" postgres -At -c "SELECT captures, bytes_written, tables_merged, merged_bytes FROM nvm_checkpoints"
grep "merged the checkpoint" "$DIR/server.log" | sed 's/.*LOG: *//' || true
echo "count|sum (want $ROWS|$((UPDATES / 2 * 2 * ROUNDS)))"
nvm_psql "$DIR" postgres -At -c "SELECT count(*), sum(n) FROM t"

#!/usr/bin/env bash
# bench/backup_cost.sh
#   What an online base backup of nvm tables costs, against the same rows in
#   heap: three clusters with one table accounts (id, balance, filler) of
#   --rows rows and its primary key, wal_level = replica, data directories
#   on disk:
#     heap         the table in heap (the cluster's pool, empty, in /dev/shm)
#     nvm          the table in nvm, the pool in /dev/shm (outside the data
#                  directory: the backup copies no pool)
#     nvm-inside   the table in nvm, the pool at its default place
#                  (pg_nvm/pool, copied by the backup and then not used)
#   For every backup (pg_basebackup -c fast -X stream, to disk): seconds,
#   bytes copied (the backup's size), MB copied per second, the WAL the
#   primary wrote during the backup (the rest of the segment the backup
#   switches from, and for nvm the image of the pool), and the
#   restore: seconds from the start of the restored server until the table
#   answers, and whether it holds every row.  Contenders are interleaved in
#   every round.
#
#   bash bench/backup_cost.sh [--rounds N] [--rows R] [--out DIR]
#   (as root: servers run as postgres; nvmam must be installed; PG_CONFIG
#   selects PostgreSQL 15; clusters and options through regress/lib)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

ROUNDS=3
ROWS=200000
OUT="bench/results/backup-cost-$(date -u +%Y%m%d)"
nvm_options "rounds=ROUNDS rows=ROWS out=OUT" "$@"

nvm_find_pg
mkdir -p "$OUT"
CONTENDERS="heap nvm nvm-inside"
declare -A DIR

nvm_cleanup_at_exit
SHM=$(nvm_pg_tmpdir /dev/shm nvm-backup-cost)
nvm_cleanup_add "rm -rf '$SHM'"

psql_at() { nvm_psql "$1" postgres -Atq -c "$2"; }

# make_cluster NAME: initdb, settings, the table and its rows
make_cluster()
{
	local c=$1 dir am=heap
	nvm_cluster_new dir /var/tmp "nvm-backup-cost-$c"
	DIR[$c]=$dir
	# the restored copy, inside the cluster's directory, stopped before it is removed
	nvm_cleanup_add "nvm_cluster_stop '$dir/restored'"
	nvm_cluster_conf "$dir" \
		"shared_preload_libraries = 'nvmam'" \
		"wal_level = replica" \
		"max_wal_senders = 4" \
		"max_wal_size = 4GB" \
		"nvm.pool_size = '1GB'" \
		"nvm.durability = 'pool'"
	[ "$c" != nvm-inside ] && nvm_cluster_conf "$dir" "nvm.pool_path = '$SHM/$c.pool'"
	nvm_cluster_start "$dir"
	[ "$c" != heap ] && am=nvm
	psql_at "$dir" "CREATE EXTENSION nvmam;
		CREATE TABLE accounts (id int PRIMARY KEY, balance bigint, filler text) USING $am;
		INSERT INTO accounts SELECT g, 1000, repeat('x', 80) FROM generate_series(1, $ROWS) g;
		CHECKPOINT;"
}

# backup_once NAME ROUND: one backup and its restore; prints a result line
backup_once()
{
	local c=$1 r=$2 dir dest lsn0 lsn1 t0 t1 t2 t3 bytes wal rows
	dir=${DIR[$c]}
	dest=$dir/restored
	rm -rf "$dest"
	nvm_as_pg mkdir "$dest"
	lsn0=$(psql_at "$dir" "SELECT pg_current_wal_insert_lsn()")
	t0=$(date +%s.%N)
	nvm_pg_client "$dir" pg_basebackup -D "$dest/data" -c fast -X stream
	t1=$(date +%s.%N)
	lsn1=$(psql_at "$dir" "SELECT pg_current_wal_insert_lsn()")
	wal=$(psql_at "$dir" "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')")
	bytes=$(du -sb "$dest/data" | cut -f1)
	nvm_free_port | nvm_as_pg tee "$dest/port" >/dev/null
	nvm_cluster_conf "$dest" "port = $(cat "$dest/port")" "unix_socket_directories = '$dest'"
	[ "$c" != nvm-inside ] && nvm_cluster_conf "$dest" "nvm.pool_path = '$SHM/$c.restored.pool'"
	rm -f "$SHM/$c.restored.pool"
	t2=$(date +%s.%N)
	nvm_cluster_start "$dest"
	rows=$(psql_at "$dest" "SELECT count(*) FROM accounts")
	t3=$(date +%s.%N)
	nvm_cluster_stop "$dest"
	rm -f "$SHM/$c.restored.pool"
	awk -v c="$c" -v r="$r" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" \
		-v bytes="$bytes" -v wal="$wal" -v rows="$rows" -v want="$ROWS" 'BEGIN {
		s = t1 - t0;
		printf "%-10s %5d %8.2f %12d %8.1f %12d %9.2f %s\n", c, r, s, bytes, bytes / s / 1048576,
			wal, t3 - t2, (rows == want ? "all" : "MISSING " rows);
	}'
}

for c in $CONTENDERS; do make_cluster "$c"; done
{
	echo "# bash bench/backup_cost.sh --rounds $ROUNDS --rows $ROWS ($(date -u +%Y-%m-%dT%H:%MZ))"
	printf "%-10s %5s %8s %12s %8s %12s %9s %s\n" contender round seconds bytes "MB/s" wal_bytes restore_s rows
} | tee "$OUT/backups.txt"
for r in $(seq 1 "$ROUNDS"); do
	for c in $CONTENDERS; do backup_once "$c" "$r" | tee -a "$OUT/backups.txt"; done
done

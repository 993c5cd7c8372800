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
#   (as root: servers run as postgres; nvmam must be installed)
set -euo pipefail

ROUNDS=3
ROWS=200000
OUT="bench/results/backup-cost-$(date -u +%Y%m%d)"
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS="$2"; shift 2 ;;
		--rows) ROWS="$2"; shift 2 ;;
		--out) OUT="$2"; shift 2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

BIN=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$BIN/initdb" ] || BIN=/usr/lib/postgresql/15/bin
WORK=$(mktemp -d /var/tmp/nvm-backup-cost.XXXXXX)
SHM=$(mktemp -d /dev/shm/nvm-backup-cost.XXXXXX)
chown postgres "$WORK" "$SHM"
mkdir -p "$OUT"
AS_PG=(runuser -u postgres --)
CONTENDERS="heap nvm nvm-inside"

cleanup()
{
	for c in $CONTENDERS; do
		"${AS_PG[@]}" "$BIN/pg_ctl" -D "$WORK/$c" -m immediate stop >/dev/null 2>&1 || true
		"${AS_PG[@]}" "$BIN/pg_ctl" -D "$WORK/$c.restored" -m immediate stop >/dev/null 2>&1 || true
	done
	rm -rf "$WORK" "$SHM"
}
trap cleanup EXIT

port_of() { case "$1" in heap) echo 5481 ;; nvm) echo 5482 ;; nvm-inside) echo 5483 ;; esac; }
psql_at() { "${AS_PG[@]}" "$BIN/psql" -h "$WORK" -p "$1" -d postgres -Atq -c "$2"; }

# make_cluster NAME: initdb, settings, the table and its rows
make_cluster()
{
	local c=$1 port
	port=$(port_of "$c")
	"${AS_PG[@]}" "$BIN/initdb" -D "$WORK/$c" -A trust >/dev/null
	{
		echo "port = $port"
		echo "unix_socket_directories = '$WORK'"
		echo "listen_addresses = ''"
		echo "shared_preload_libraries = 'nvmam'"
		echo "wal_level = replica"
		echo "max_wal_senders = 4"
		echo "max_wal_size = 4GB"
		echo "nvm.pool_size = '1GB'"
		echo "nvm.durability = 'pool'"
		[ "$c" != nvm-inside ] && echo "nvm.pool_path = '$SHM/$c.pool'"
		true
	} >> "$WORK/$c/postgresql.conf"
	"${AS_PG[@]}" "$BIN/pg_ctl" -D "$WORK/$c" -l "$WORK/$c.log" -w start >/dev/null
	local am=heap
	[ "$c" != heap ] && am=nvm
	psql_at "$port" "CREATE EXTENSION nvmam;
		CREATE TABLE accounts (id int PRIMARY KEY, balance bigint, filler text) USING $am;
		INSERT INTO accounts SELECT g, 1000, repeat('x', 80) FROM generate_series(1, $ROWS) g;
		CHECKPOINT;"
}

# backup_once NAME ROUND: one backup and its restore; prints a result line
backup_once()
{
	local c=$1 r=$2 port dest lsn0 lsn1 t0 t1 t2 bytes wal rows rport
	port=$(port_of "$c")
	dest="$WORK/$c.restored"
	rm -rf "$dest"
	lsn0=$(psql_at "$port" "SELECT pg_current_wal_insert_lsn()")
	t0=$(date +%s.%N)
	"${AS_PG[@]}" "$BIN/pg_basebackup" -h "$WORK" -p "$port" -D "$dest" -c fast -X stream
	t1=$(date +%s.%N)
	lsn1=$(psql_at "$port" "SELECT pg_current_wal_insert_lsn()")
	wal=$(psql_at "$port" "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')")
	bytes=$(du -sb "$dest" | cut -f1)
	rport=$((port + 10))
	{
		echo "port = $rport"
		[ "$c" != nvm-inside ] && echo "nvm.pool_path = '$SHM/$c.restored.pool'"
		true
	} >> "$dest/postgresql.conf"
	rm -f "$SHM/$c.restored.pool"
	t2=$(date +%s.%N)
	"${AS_PG[@]}" "$BIN/pg_ctl" -D "$dest" -l "$WORK/$c.restored.log" -w start >/dev/null
	rows=$(psql_at "$rport" "SELECT count(*) FROM accounts")
	local t3
	t3=$(date +%s.%N)
	"${AS_PG[@]}" "$BIN/pg_ctl" -D "$dest" -m fast -w stop >/dev/null
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

#!/usr/bin/env bash
# bench/durability_cost.sh
#   What durability through the WAL costs an nvm pool on ordinary storage,
#   against the same rows in heap: two clusters on disk (data directory and
#   WAL), wal_level = replica, a table accounts (id, balance, filler) of
#   --rows rows and its primary key, and a table still of the same rows that
#   no round changes:
#     heap   the table in heap
#     nvm    the table in nvm, the pool at its default place (pg_nvm/pool, a
#            page-cache file), nvm.durability at its default (auto: through
#            the WAL)
#   Each round, contenders interleaved:
#     - a CHECKPOINT (after a rebuild, nvm writes the changes since the
#       files it loaded);
#     - --seconds of single-row UPDATEs of random accounts (pgbench, 2
#       clients), with tps and WAL fsyncs per transaction (pg_stat_wal);
#     - a second CHECKPOINT, with its seconds, the WAL it wrote and, for
#       nvm, the checkpoint files it wrote and kept (from the server log,
#       read by bench/lib/serverlog.py: the tables whose files it wrote,
#       a delta of the rows that changed or a whole base file, their kB,
#       and the tables kept; the engine before incremental checkpoints
#       wrote accounts whole and kept still);
#     - every server process killed (kill -9); for nvm, a power loss on top:
#       the pool file removed and a new boot of the operating system
#       (nvm.debug_boot_id), so the start rebuilds the pool from its
#       checkpoint files and the WAL after them; for heap, crash recovery
#       of the same WAL volume;
#     - recovery: seconds from the start of the server until a count of
#       the table answers, the redo the log reports, and whether every row
#       is there with the balance total conserved (updates add 0).
#
#   bash bench/durability_cost.sh [--rounds N] [--rows R] [--seconds S] [--out DIR]
#   (as root: servers run as postgres; nvmam must be installed; PG_CONFIG
#   selects PostgreSQL 15; clusters and options through regress/lib)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=3
ROWS=200000
SECONDS_LOAD=10
OUT="bench/results/durability-$(date -u +%Y%m%d)"
nvm_options "rounds=ROUNDS rows=ROWS seconds=SECONDS_LOAD out=OUT" "$@"

nvm_find_pg
mkdir -p "$OUT"
CONTENDERS="heap nvm"
declare -A DIR

nvm_cleanup_at_exit
WORK=$(nvm_pg_tmpdir /var/tmp nvm-durability-cost)
nvm_cleanup_add "rm -rf '$WORK'"

psql_at() { nvm_psql "${DIR[$1]}" postgres -Atq -c "$2"; }

# make_cluster NAME: initdb, settings, the table and its rows
make_cluster()
{
	local c=$1 dir am=heap
	[ "$c" = nvm ] && am=nvm
	nvm_cluster_new dir /var/tmp "nvm-durability-cost-$c"
	DIR[$c]=$dir
	nvm_cluster_conf "$dir" \
		"shared_preload_libraries = 'nvmam'" \
		"wal_level = replica" \
		"max_wal_size = 4GB" \
		"checkpoint_timeout = 1d" \
		"autovacuum = off" \
		"nvm.pool_size = '1GB'" \
		"nvm.debug_boot_id = 'boot-0'"
	nvm_cluster_start "$dir"
	psql_at "$c" "CREATE EXTENSION nvmam;
		CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, filler text) USING $am;
		INSERT INTO accounts SELECT g, 1000, repeat('x', 80) FROM generate_series(1, $ROWS) g;
		CREATE TABLE still (id int PRIMARY KEY, balance bigint NOT NULL, filler text) USING $am;
		INSERT INTO still SELECT g, 1000, repeat('x', 80) FROM generate_series(1, $ROWS) g;" >/dev/null
	printf '\\set id random(1, %d)\nUPDATE accounts SET balance = balance + 0 WHERE id = :id;\n' "$ROWS" |
		nvm_as_pg tee "$WORK/update.sql" >/dev/null
}

# round_once NAME ROUND: the checkpoint, the load, the crash and the recovery of NAME
round_once()
{
	local c=$1 r=$2 dir boot log t0 t1 w0 w1 tps f0 f1 rows total redo off0 files
	dir=${DIR[$c]}
	log="$dir/server.log"
	psql_at "$c" "CHECKPOINT" >/dev/null
	f0=$(psql_at "$c" "SELECT wal_sync FROM pg_stat_wal")
	tps=$(nvm_pg_client "$dir" pgbench -n -c 2 -j 2 -T "$SECONDS_LOAD" \
		-f "$WORK/update.sql" postgres 2>/dev/null | awk '/^tps/ { print $3; exit }')
	f1=$(psql_at "$c" "SELECT wal_sync FROM pg_stat_wal")
	off0=$(stat -c %s "$log")
	w0=$(psql_at "$c" "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
	t0=$(date +%s.%N)
	psql_at "$c" "CHECKPOINT" >/dev/null
	t1=$(date +%s.%N)
	w1=$(psql_at "$c" "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
	files=$(python3 "$HERE/lib/serverlog.py" sum "$log" "$off0" | awk -F= '{ v[$1] = $2 }
		END { if (v["POOL_CKPTS"] > 0) printf "%dw/%dkB/%dk", v["POOL_FILES"], v["POOL_KB"], v["POOL_KEPT"] }')
	local txns
	txns=$(awk -v t="$tps" -v s="$SECONDS_LOAD" 'BEGIN { printf "%d", t * s }')
	nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null
	if [ "$c" = nvm ]; then
		rm -f "$dir/data/pg_nvm/pool"
		boot="boot-$r"
		nvm_cluster_conf "$dir" "nvm.debug_boot_id = '$boot'"
	fi
	local off t2 t3
	off=$(stat -c %s "$log")
	t2=$(date +%s.%N)
	nvm_cluster_start "$dir"
	rows=$(psql_at "$c" "SELECT count(*) || ' ' || sum(balance) FROM accounts")
	t3=$(date +%s.%N)
	redo=$(tail -c +"$((off + 1))" "$log" | sed -n 's/.*redo done at .*elapsed: \([0-9.]*\) s.*/\1/p' | head -1)
	total=$((ROWS * 1000))
	awk -v c="$c" -v r="$r" -v t0="$t0" -v t1="$t1" -v w0="$w0" -v w1="$w1" -v tps="$tps" \
		-v f0="$f0" -v f1="$f1" -v txns="$txns" -v t2="$t2" -v t3="$t3" -v redo="${redo:-?}" \
		-v rows="$rows" -v want="$ROWS $total" -v files="${files:--}" 'BEGIN {
		printf "%-5s %5d %8.2f %10.1f %14s %9.0f %8.3f %9.2f %7s %s\n", c, r, t1 - t0, (w1 - w0) / 1048576,
			files, tps, (txns > 0 ? (f1 - f0) / txns : 0), t3 - t2, redo,
			(rows == want ? "all" : "WRONG " rows);
	}'
}

for c in $CONTENDERS; do make_cluster "$c"; done
{
	echo "# bash bench/durability_cost.sh --rounds $ROUNDS --rows $ROWS --seconds $SECONDS_LOAD ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo "# checkpoint_s, checkpoint_wal_mb: the second CHECKPOINT of the round, after the updates;"
	echo "# ckpt_files: nvm checkpoint files it wrote (tables)/kB/kept (tables);"
	echo "# tps, fsyncs_per_txn: ${SECONDS_LOAD} s of single-row UPDATEs, 2 clients;"
	echo "# recovery_s: start until the table answers, after kill -9 (nvm: and a power loss: pool removed, new boot);"
	echo "# redo_s: what the log says of redo; rows: every row and the total conserved"
	printf "%-5s %5s %8s %10s %14s %9s %8s %9s %7s %s\n" contender round checkpoint_s checkpoint_wal_mb \
		ckpt_files tps fsyncs_per_txn recovery_s redo_s rows
} | tee "$OUT/durability.txt"
for r in $(seq 1 "$ROUNDS"); do
	for c in $CONTENDERS; do round_once "$c" "$r" | tee -a "$OUT/durability.txt"; done
done

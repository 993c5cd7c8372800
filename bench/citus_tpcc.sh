#!/usr/bin/env bash
#
# bench/citus_tpcc.sh
#	  TPC-C (New-Order 45 % + Payment 55 %, bench/workloads/tpcc_*.sql)
#	  distributed by warehouse on a Citus cluster on this machine: a
#	  coordinator and two workers, every TPC-C table hash-distributed by its
#	  warehouse column and colocated, item a reference table; the clients
#	  (pgbench) connect to the coordinator.  Run once with heap tables and
#	  once with nvm tables (default_table_access_method = nvm on every
#	  node, MCSI, the pools in /dev/shm standing for persistent memory:
#	  nvm.durability = 'pool'), each on fresh clusters with the WAL on
#	  disk and synchronous_commit = on.  Reports tps, the ratio, and the
#	  WAL fsyncs per transaction of each node.
#
#	  A New-Order or Payment whose rows are all on one warehouse runs on one
#	  worker (a router transaction: one commit there); one that touches a
#	  remote warehouse on the other worker (about 10 % of New-Orders, 15 %
#	  of Payments) commits in two phases (PREPARE TRANSACTION and COMMIT
#	  PREPARED on each worker, and the coordinator's own commit record).
#
#	  bench/citus_tpcc.sh [--out DIR] [--clients N] [--time SECONDS]
#	                      [--warehouses N]
#	  Writes DIR/citus-tpcc.md and the logs; DIR defaults to
#	  build-bench/citus-tpcc.  Needs Citus installed (regress/build-citus.sh)
#	  and nvmam installed; root (the servers run as "postgres").

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

OUT=$ROOT/build-bench/citus-tpcc
CLIENTS=4
TIME=30
WAREHOUSES=4
ITEMS=2000
CUSTOMERS=100
ORDERS=100
while [ $# -gt 0 ]; do
	case "$1" in
		--out) OUT=$2; shift 2 ;;
		--clients) CLIENTS=$2; shift 2 ;;
		--time) TIME=$2; shift 2 ;;
		--warehouses) WAREHOUSES=$2; shift 2 ;;
		*) nvm_die "usage: bench/citus_tpcc.sh [--out DIR] [--clients N] [--time SECONDS] [--warehouses N]" ;;
	esac
done
nvm_find_pg
[ -f "$PG_PKGLIBDIR/citus.so" ] || nvm_die "Citus is not installed in $PG_PKGLIBDIR (regress/build-citus.sh $PG_MAJOR)"
[ -f "$PG_PKGLIBDIR/nvmam.so" ] || nvm_die "nvmam is not installed in $PG_PKGLIBDIR"
if [ "$PG_MAJOR" -ge 18 ]; then
	WAL_SYNC_SQL="SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal'"
else
	WAL_SYNC_SQL="SELECT wal_sync FROM pg_stat_wal"
fi
mkdir -p "$OUT"
WL=$ROOT/bench/workloads
WORK=$(nvm_pg_tmpdir /var/tmp nvmam-citus-tpcc) || nvm_die "cannot make a directory"
SHM=$(nvm_pg_tmpdir /dev/shm nvmam-citus-tpcc) || nvm_die "cannot make a directory in /dev/shm"
trap 'nvm_stop_all_under "$WORK"; rm -rf "$WORK" "$SHM"' EXIT
cp "$WL"/tpcc_*.sql "$WORK/"
chmod a+r "$WORK"/*.sql

# NURand A constants scaled to the loaded sizes (bench/lib/workloads.py's
# nurand_a: the standard's, scaled, at least 1)
nurand_a() { local a=$(($2 * $1 / $3)); [ "$a" -ge 1 ] || a=1; echo "$a"; }
A_ITEM=$(nurand_a "$ITEMS" 8191 100000)
A_CUST=$(nurand_a "$CUSTOMERS" 1023 3000)
LAST_MAX=$((CUSTOMERS < 1000 ? CUSTOMERS - 1 : 999))
A_LAST=$(nurand_a $((LAST_MAX + 1)) 255 1000)

# the tables and their warehouse columns
DIST="warehouse:w_id district:d_w_id customer:c_w_id history:h_w_id orders:o_w_id new_order:no_w_id order_line:ol_w_id stock:s_w_id"

# run_contender AM: a fresh cluster, the load, the run; appends a line to
# $OUT/results.txt
run_contender()
{
	local am=$1 n dir port q first=1 t spec tps
	local -a dirs=() f0=() f1=()
	for n in coordinator worker1 worker2; do
		dir=$WORK/$am-$n
		mkdir -p "$dir"
		chown "$(nvm_pg_user):" "$dir"
		port=$(nvm_free_port)
		nvm_cluster_init "$dir" "$port"
		nvm_cluster_conf "$dir" \
			"shared_preload_libraries = 'citus,nvmam'" \
			"nvm.pool_path = '$SHM/$am-$n.pool'" "nvm.pool_size = '1GB'" "nvm.durability = 'pool'" \
			"default_table_access_method = $am" \
			"max_connections = 100" "max_prepared_transactions = 100" \
			"shared_buffers = '256MB'" "synchronous_commit = on" \
			"citus.node_conninfo = 'sslmode=disable'" "citus.local_hostname = '$dir'" \
			"citus.enable_statistics_collection = off" \
			"citus.max_adaptive_executor_pool_size = 1"
		nvm_cluster_start "$dir"
		nvm_psql "$dir" postgres -c 'CREATE EXTENSION citus' -c 'CREATE EXTENSION nvmam'
		dirs+=("$dir")
	done
	q=(nvm_psql "${dirs[0]}" postgres)
	"${q[@]}" -c "SELECT citus_set_coordinator_host('${dirs[0]}', $(cat "${dirs[0]}/port"))" \
		-c "SELECT citus_add_node('${dirs[1]}', $(cat "${dirs[1]}/port"))" \
		-c "SELECT citus_add_node('${dirs[2]}', $(cat "${dirs[2]}/port"))" >/dev/null
	nvm_log "$am: loading $WAREHOUSES warehouses on the coordinator, then distributing them"
	"${q[@]}" -f "$WORK/tpcc_schema.sql" >/dev/null
	"${q[@]}" -v warehouses="$WAREHOUSES" -v items="$ITEMS" -v customers="$CUSTOMERS" \
		-v orders="$ORDERS" -f "$WORK/tpcc_load.sql" >/dev/null
	{
		echo "SET citus.shard_count = $((WAREHOUSES < 8 ? 8 : WAREHOUSES));"
		echo "SELECT create_reference_table('item');"
		for spec in $DIST; do
			t=${spec%%:*}
			if [ "$first" = 1 ]; then
				echo "SELECT create_distributed_table('$t', '${spec#*:}');"
				first=0
			else
				echo "SELECT create_distributed_table('$t', '${spec#*:}', colocate_with := 'warehouse');"
			fi
			echo "SELECT truncate_local_data_after_distributing_table('$t');"
		done
		echo "SELECT truncate_local_data_after_distributing_table('item');"
		echo "SELECT DISTINCT result FROM run_command_on_placements('stock', \$\$SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '%s'::regclass\$\$);"
	} >"$WORK/distribute.sql"
	"${q[@]}" -At -f "$WORK/distribute.sql" 2>/dev/null | tail -n 1 >"$WORK/$am-shard-am"
	[ "$(cat "$WORK/$am-shard-am")" = "$am" ] ||
		nvm_die "$am: the shards of stock are not $am tables ($(cat "$WORK/$am-shard-am"))"
	"${q[@]}" -c 'CHECKPOINT' -c "SELECT run_command_on_workers('CHECKPOINT')" >/dev/null
	for dir in "${dirs[@]}"; do
		f0+=("$(nvm_psql "$dir" postgres -At -c "$WAL_SYNC_SQL")")
	done
	nvm_log "$am: $CLIENTS clients through the coordinator for ${TIME}s"
	nvm_as_pg "$PG_BINDIR/pgbench" -n -h "${dirs[0]}" -p "$(cat "${dirs[0]}/port")" -U postgres \
		-c "$CLIENTS" -j 2 -T "$TIME" \
		-D nwh="$WAREHOUSES" -D items="$ITEMS" -D customers="$CUSTOMERS" -D a_item="$A_ITEM" \
		-D a_cust="$A_CUST" -D a_last="$A_LAST" -D last_max="$LAST_MAX" \
		-f "$WORK/tpcc_neworder.sql@45" -f "$WORK/tpcc_payment.sql@55" postgres \
		>"$OUT/pgbench-$am.log" 2>&1 || { tail -n 20 "$OUT/pgbench-$am.log"; nvm_die "$am: pgbench failed"; }
	for dir in "${dirs[@]}"; do
		f1+=("$(nvm_psql "$dir" postgres -At -c "$WAL_SYNC_SQL")")
	done
	tps=$(sed -nE 's/^tps = ([0-9.]+).*/\1/p' "$OUT/pgbench-$am.log" | tail -n 1)
	txns=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$OUT/pgbench-$am.log")
	failed=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' "$OUT/pgbench-$am.log")
	printf '%s %s %s %s %s %s %s\n' "$am" "$tps" "$txns" "${failed:-0}" \
		"$(awk -v a="${f0[0]}" -v b="${f1[0]}" -v n="$txns" 'BEGIN { printf "%.2f", (b - a) / n }')" \
		"$(awk -v a="${f0[1]}" -v b="${f1[1]}" -v n="$txns" 'BEGIN { printf "%.2f", (b - a) / n }')" \
		"$(awk -v a="${f0[2]}" -v b="${f1[2]}" -v n="$txns" 'BEGIN { printf "%.2f", (b - a) / n }')" \
		>>"$OUT/results.txt"
	for dir in "${dirs[@]}"; do
		nvm_cluster_stop "$dir"
	done
}

rm -f "$OUT/results.txt"
for am in heap nvm; do
	run_contender "$am"
done

heap_tps=$(awk '$1 == "heap" { print $2 }' "$OUT/results.txt")
nvm_tps=$(awk '$1 == "nvm" { print $2 }' "$OUT/results.txt")
{
	echo "# TPC-C distributed by warehouse on Citus: heap against nvm"
	echo
	echo "$PG_VERSION_STRING, Citus $(sed -nE "s/^default_version *= *'([^']*)'.*/\1/p" "$PG_SHAREDIR/extension/citus.control"),"
	echo "$(nproc) cores; a coordinator and two workers on this machine; $WAREHOUSES warehouses"
	echo "($ITEMS items, $CUSTOMERS customers and $ORDERS orders per district), $CLIENTS pgbench clients"
	echo "through the coordinator for ${TIME}s; New-Order 45 % + Payment 55 %; synchronous_commit = on,"
	echo "WAL on disk; nvm: default_table_access_method = nvm on every node, MCSI, pools in /dev/shm"
	echo "(nvm.durability = 'pool')."
	echo
	echo "| tables | tps | transactions | failed | WAL fsyncs / txn: coordinator | worker1 | worker2 |"
	echo "|---|---|---|---|---|---|---|"
	awk '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$OUT/results.txt"
	echo
	echo "nvm / heap: $(awk -v a="$nvm_tps" -v b="$heap_tps" 'BEGIN { printf "%.2f", a / b }')"
	echo
	echo "Command: bench/citus_tpcc.sh --clients $CLIENTS --time $TIME --warehouses $WAREHOUSES"
} >"$OUT/citus-tpcc.md"
cat "$OUT/citus-tpcc.md"

#!/usr/bin/env bash
#
# ab.sh: the measurement behind bench/results/xid-standin-20261126/.  Two builds of
# nvmam (the commit before the xid stand-in, and the one with it) take
# turns on one nvm cluster (pool in /dev/shm, data directory and WAL on
# disk, MCSI), with a heap cluster whose data directory and WAL are in
# /dev/shm (heap-tmpfs) as the yardstick; in every round each runs once,
# back to back.  Per run it prints tps and the CPU time per transaction of
# the server's processes (reaped backends included) and of pgbench.
#
#	ab.sh BASE_SO NEW_SO WORKLOAD(insert|tpcc) CLIENTS ROUNDS SECONDS
#
# Run as root from the repository's top directory, with nothing else
# running (it replaces the installed nvmam.so and restores NEW_SO at the
# end).  Debian's PostgreSQL 15 and the clusters' helpers of regress/lib.
set -euo pipefail
base_so=$1; new_so=$2; workload=$3; clients=$4; rounds=$5; secs=$6
top=$(pwd)
source regress/lib/common.sh
source regress/lib/cluster.sh
nvm_find_pg
W=$top/bench/workloads
lib=$($PG_BINDIR/pg_config --pkglibdir)
work=$(mktemp -d /var/tmp/nvm-ab.XXXXXX)
shm=$(mktemp -d /dev/shm/nvm-ab.XXXXXX)
chown postgres "$work" "$shm"

install_so() { cp "$1" "$lib/nvmam.so.new" && mv "$lib/nvmam.so.new" "$lib/nvmam.so"; }

declare -A dir port
dir[heap]=$shm/heap; dir[nvm]=$work/nvm
install_so "$new_so"
for c in heap nvm; do
	mkdir -p "${dir[$c]}"; chown postgres "${dir[$c]}"
	port[$c]=$(nvm_free_port)
	nvm_cluster_init "${dir[$c]}" "${port[$c]}"
	nvm_cluster_conf "${dir[$c]}" "shared_buffers = '256MB'" "max_connections = 60" \
		"max_wal_size = '1GB'" "checkpoint_timeout = '1d'" "autovacuum = off"
	if [ $c = nvm ]; then
		nvm_cluster_conf "${dir[$c]}" "shared_preload_libraries = 'nvmam'" \
			"nvm.pool_path = '$shm/pool'" "nvm.pool_size = '1GB'" "nvm.concurrency_control = 'mcsi'"
	fi
	nvm_cluster_start "${dir[$c]}"
	psql_c() { nvm_as_pg env PGHOST="${dir[$c]}" PGPORT="${port[$c]}" PGUSER=postgres \
		$PG_BINDIR/psql -X -q -v ON_ERROR_STOP=1 "$@"; }
	psql_c -d postgres -c "CREATE DATABASE ab"
	if [ $c = nvm ]; then
		psql_c -d ab -c "CREATE EXTENSION nvmam" -c "ALTER DATABASE ab SET default_table_access_method = nvm"
	fi
	if [ "$workload" = tpcc ]; then
		psql_c -d ab -v warehouses=4 -v items=2000 -v customers=100 -v orders=100 \
			-f "$W/tpcc_schema.sql" -f "$W/tpcc_load.sql" >/dev/null 2>&1
	else
		psql_c -d ab -v rows=1000 -f "$W/rows_schema.sql" >/dev/null 2>&1
	fi
done

ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
server_ticks() {
	local pm s=0
	pm=$(head -1 "$1/data/postmaster.pid")
	for p in $pm $(pgrep -P "$pm"); do s=$((s + $(ticks "$p" 2>/dev/null || echo 0))); done
	echo $s
}

one_run() {
	local c=$1 label=$2 out t0 t1 n tps pgb
	nvm_as_pg $PG_BINDIR/psql -X -q -h "${dir[$c]}" -p "${port[$c]}" -d ab -c CHECKPOINT
	t0=$(server_ticks "${dir[$c]}")
	if [ "$workload" = tpcc ]; then
		args=(-f "$W/tpcc_neworder.sql@45" -f "$W/tpcc_payment.sql@55" -D nwh=4 -D items=2000
			  -D customers=100 -D a_item=127 -D a_cust=31 -D a_last=31 -D last_max=99 --max-tries=1000)
	else
		args=(-f "$W/insert.sql")
	fi
	out=$( { /usr/bin/time -f "PGB %U %S" runuser -u postgres -- env PGOPTIONS='-c default_transaction_isolation=repeatable\ read' \
		$PG_BINDIR/pgbench -h "${dir[$c]}" -p "${port[$c]}" -n -M prepared -c "$clients" -j 2 -T "$secs" \
		"${args[@]}" ab; } 2>&1 )
	sleep 1.2
	t1=$(server_ticks "${dir[$c]}")
	n=$(echo "$out" | awk '/actually processed/ {print $NF}')
	tps=$(echo "$out" | awk '/^tps/ {print $3; exit}')
	pgb=$(echo "$out" | awk '/^PGB/ {print $2 + $3}')
	awk -v l="$label" -v r="$round" -v tps="$tps" -v n="$n" -v s="$((t1 - t0))" -v p="$pgb" \
		-v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%s,%s,%.0f,%.1f,%.1f\n", r, l, tps, s / hz * 1e6 / n, p * 1e6 / n }'
}

echo "round,contender,tps,server_us_per_txn,pgbench_us_per_txn"
for round in $(seq "$rounds"); do
	for v in base new; do
		if [ $v = base ]; then install_so "$base_so"; else install_so "$new_so"; fi
		nvm_as_pg $PG_BINDIR/pg_ctl -D "${dir[nvm]}/data" -w -l "${dir[nvm]}/server.log" restart >/dev/null
		one_run nvm "nvm-mcsi-$v"
	done
	one_run heap heap-tmpfs
done
install_so "$new_so"
for c in heap nvm; do nvm_as_pg $PG_BINDIR/pg_ctl -D "${dir[$c]}/data" -m fast stop >/dev/null; done
rm -rf "$work" "$shm"

#!/usr/bin/env bash
#
# bench/results/tpcb-wait-20261207/ab.sh
#	  pgbench's built-in TPC-B on heap and on nvm tables with two builds of
#	  nvmam side by side (before and after a change), interleaved, with the
#	  server's CPU per transaction.
#
#	  bash bench/results/tpcb-wait-20261207/ab.sh OUT MODULE_A MODULE_B \
#		  [ROUNDS] [SECONDS] [CLIENTS...]
#
#	  MODULE_A and MODULE_B are two builds of nvmam.so (release builds,
#	  meson -Dbuildtype=release -Db_ndebug=if-release).  Each is installed
#	  in turn (atomic rename into the package library directory) and a
#	  cluster started on it; a cluster keeps the module it preloaded.
#	  Contenders: heap; nvm-a and nvm-b, nvm tables with the pool at its
#	  default place (pg_nvm/pool in the data directory) and the default
#	  durability (auto: commits durable through the WAL); every WAL on
#	  disk, synchronous_commit on.  pgbench -i -s $NVM_AB_SCALE (10 by
#	  default); then ROUNDS rounds (5) in which every contender runs once
#	  for each client count (4 by default) for SECONDS (20), in an order
#	  that rotates from round to round, each run after a CHECKPOINT;
#	  REPEATABLE READ, -M prepared, --max-tries 1000, as bench/run.sh.
#	  The server's CPU of a run: user + system time of the postmaster, its
#	  reaped children and its live children, read before the run and 1 s
#	  after it (the run's backends have exited and been reaped).
#	  Output: OUT/ab.csv (one line per run), OUT/logs/.
#	  Run as root from the top directory.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
nvm_find_pg

OUT=$1 MOD_A=$2 MOD_B=$3
ROUNDS=${4:-5} SECS=${5:-20}
shift 3; shift $(($# < 2 ? $# : 2))
CLIENTS=("$@")
[ ${#CLIENTS[@]} -gt 0 ] || CLIENTS=(4)
SCALE=${NVM_AB_SCALE:-10}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
CLK_TCK=$(getconf CLK_TCK)
nvm_cleanup_at_exit

declare -A DIR
CONTENDERS=(heap nvm-a nvm-b)

install_module()
{
	cp -f "$1" "$PG_PKGLIBDIR/nvmam.so.new"
	mv -f "$PG_PKGLIBDIR/nvmam.so.new" "$PG_PKGLIBDIR/nvmam.so"
}

for c in "${CONTENDERS[@]}"; do
	nvm_cluster_new DIR[$c] "${TMPDIR:-/tmp}" "nvmam-ab-$c" "$OUT/logs/server-$c.log"
	nvm_cluster_conf "${DIR[$c]}" \
		"shared_buffers = '512MB'" \
		"max_connections = 40" \
		"synchronous_commit = on" \
		"max_wal_size = '4GB'" \
		"checkpoint_timeout = '1d'" \
		"autovacuum = off" \
		"deadlock_timeout = '50ms'"
	case $c in
		nvm-a) install_module "$MOD_A" ;;
		nvm-b) install_module "$MOD_B" ;;
	esac
	if [ "$c" != heap ]; then
		nvm_cluster_conf "${DIR[$c]}" \
			"shared_preload_libraries = 'nvmam'" \
			"nvm.pool_size = '1GB'" \
			"nvm.concurrency_control = 'mcsi'"
	fi
	nvm_cluster_start "${DIR[$c]}"
	printf '%s,%s\n' "$c" "$(md5sum "$PG_PKGLIBDIR/nvmam.so" | cut -c1-12)" >>"$OUT/modules.csv"
	nvm_psql "${DIR[$c]}" postgres -c "CREATE DATABASE tpcb"
	if [ "$c" != heap ]; then
		nvm_psql "${DIR[$c]}" tpcb -c "CREATE EXTENSION nvmam" \
			-c "ALTER DATABASE tpcb SET default_table_access_method = nvm"
	fi
	nvm_pg_client "${DIR[$c]}" pgbench -i -q -s "$SCALE" tpcb >"$OUT/logs/load-$c.log" 2>&1
	nvm_psql "${DIR[$c]}" tpcb -At -c "SELECT sum(abalance) FROM pgbench_accounts" >/dev/null
done

# server_cpu C: user + system seconds of C's postmaster and its children
server_cpu()
{
	local pm ticks=0 p
	pm=$(head -n 1 "${DIR[$1]}/data/postmaster.pid")
	# postmaster: utime stime cutime cstime (fields 14-17)
	ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
	for p in $(ps -o pid= --ppid "$pm"); do
		ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$ticks"
}

echo "round,contender,clients,seconds,tps,transactions,failures,retried,retries,cpu_s,cpu_us_per_xact,load1" >"$OUT/ab.csv"
for ((r = 1; r <= ROUNDS; r++)); do
	for n in "${CLIENTS[@]}"; do
		for ((i = 0; i < ${#CONTENDERS[@]}; i++)); do
			c=${CONTENDERS[$(((i + r) % ${#CONTENDERS[@]}))]}
			nvm_psql "${DIR[$c]}" tpcb -c CHECKPOINT
			log=$OUT/logs/run-$r-$c-$n.txt
			before=$(server_cpu "$c")
			PGOPTIONS='-c default_transaction_isolation=repeatable\ read' \
				nvm_pg_client "${DIR[$c]}" pgbench -n -M prepared -c "$n" -j "$(( n < 2 ? n : 2 ))" \
				-T "$SECS" --max-tries=1000 --failures-detailed tpcb >"$log" 2>&1
			sleep 1
			after=$(server_cpu "$c")
			tps=$(sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p' "$log")
			xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$log")
			fails=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$log")
			retried=$(sed -n 's/^number of transactions retried: \([0-9]*\).*/\1/p' "$log")
			retries=$(sed -n 's/^total number of retries: \([0-9]*\).*/\1/p' "$log")
			cpu=$(echo "$before $after $CLK_TCK" | awk '{printf "%.2f", ($2 - $1) / $3}')
			per=$(echo "$cpu ${xacts:-0}" | awk '{printf "%.1f", ($2 > 0) ? $1 * 1e6 / $2 : 0}')
			echo "$r,$c,$n,$SECS,$tps,$xacts,${fails:-0},${retried:-0},${retries:-0},$cpu,$per,$(cut -d' ' -f1 /proc/loadavg)" |
				tee -a "$OUT/ab.csv"
		done
	done
done

# With NVM_AB_PROFILE=1, after the rounds: one more run of each contender at
# the first client count, not counted above, during which the client
# backends' wait events are sampled every 10 ms for SECONDS - 6 s
# (bench/lib/wait_sample.sql: OUT/waits-C.csv) and perf records them with
# call graphs for the same time (OUT/perf-C.txt: the top functions by self
# time, and the callers of the hottest).
if [ "${NVM_AB_PROFILE:-0}" = 1 ]; then
	n=${CLIENTS[0]}
	for c in "${CONTENDERS[@]}"; do
		nvm_psql "${DIR[$c]}" tpcb -c CHECKPOINT
		PGOPTIONS='-c default_transaction_isolation=repeatable\ read' \
			nvm_pg_client "${DIR[$c]}" pgbench -n -M prepared -c "$n" -j "$(( n < 2 ? n : 2 ))" \
			-T "$SECS" --max-tries=1000 --failures-detailed tpcb >"$OUT/logs/profile-$c.txt" 2>&1 &
		bench=$!
		sleep 3
		pids=$(nvm_psql "${DIR[$c]}" postgres -At -c \
			"SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE datname = 'tpcb' AND backend_type = 'client backend'")
		nvm_pg_client "${DIR[$c]}" psql -X -At -F , -v secs=$((SECS - 6)) -v db=tpcb \
			-f "$ROOT/bench/lib/wait_sample.sql" postgres >"$OUT/waits-$c.csv" 2>&1 &
		sampler=$!
		perf record -g -o "$OUT/logs/perf-$c.data" -p "$pids" -- sleep $((SECS - 6)) >/dev/null 2>&1 || true
		wait "$sampler" || true
		wait "$bench" || true
		perf report -i "$OUT/logs/perf-$c.data" --no-children --sort symbol --stdio 2>/dev/null |
			grep -v '^$' | grep -E '^ +[0-9]' | head -n 40 >"$OUT/perf-$c.txt" || true
		perf report -i "$OUT/logs/perf-$c.data" --no-children --sort symbol --stdio -G 2>/dev/null |
			head -n 200 >"$OUT/perf-$c-callers.txt" || true
	done
fi

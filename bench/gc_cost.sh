#!/usr/bin/env bash
# bench/gc_cost.sh
#   What collecting old row versions costs in CPU, nvm against heap: after a
#   burst of single-row UPDATEs, the CPU seconds of a VACUUM of the table per
#   row the burst updated.  Three throwaway clusters with the same settings
#   (autovacuum off, so nothing collects but the updates themselves and the
#   VACUUM measured):
#     heap        the table in heap, data directory and WAL on disk (/var/tmp)
#     heap-tmpfs  the table in heap, data directory and WAL in /dev/shm
#     nvm         the table in nvm (MCSI), pool and data directory in /dev/shm
#   A table u (k integer primary key, n bigint, pad text of 100 bytes) of
#   --rows rows.  Each round, contenders interleaved in an order that rotates
#   from round to round:
#     - --updates single-row UPDATEs of a random row's n (pgbench, --clients
#       clients, prepared; the same number for every contender, so the
#       VACUUMs find as much to collect): the updated rows, tps, and the server's
#       CPU per update (user + system of every process of the cluster, from
#       /proc, with the children each has reaped), which holds the pruning
#       each engine does on the update path (heap: HOT pruning of a full
#       page; nvm: nvm.prune_on_update);
#     - then a VACUUM (VERBOSE) of u: its wall seconds and its backend's CPU
#       time (read by the backend itself from /proc/self/schedstat before
#       and after, in ns), per updated row; as cross-checks, the CPU of the
#       whole cluster meanwhile (clock ticks) and, for heap, VACUUM
#       VERBOSE's own "CPU: user ... system ..." line.
#   Ratios nvm / heap-tmpfs and nvm / heap of the VACUUM's CPU per updated
#   row, per round, with their median and range.
#
#   bash bench/gc_cost.sh [--rounds N] [--rows R] [--updates U] [--clients C] [--out DIR]
#   (as root: servers run as postgres; nvmam must be installed; PG_CONFIG
#   selects PostgreSQL 15)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

ROUNDS=5
ROWS=100000
UPDATES=20000
CLIENTS=2
OUT="bench/results/gc-cost-$(date -u +%Y%m%d)"
nvm_options "rounds=ROUNDS rows=ROWS updates=UPDATES clients=CLIENTS out=OUT" "$@"

nvm_find_pg
CLK_TCK=$(getconf CLK_TCK)
CONTENDERS=(heap heap-tmpfs nvm)
DISK_BASE=${NVM_BENCH_DATA_DIR:-/var/tmp}
mkdir -p "$OUT"
declare -A DIR

nvm_cleanup_at_exit

psql_at() { nvm_psql "${DIR[$1]}" postgres -At -c "$2"; }

# server_cpu_ticks CONTENDER: the CPU time (user + system, clock ticks) of
# every live process of the cluster, with the children each has reaped
server_cpu_ticks()
{
	local pm
	pm=$(head -n 1 "${DIR[$1]}/data/postmaster.pid")
	# shellcheck disable=SC2046 # one argument per child pid
	cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null |
		awk '{ t += $14 + $15 + $16 + $17 } END { print t + 0 }'
}

# make_cluster NAME: initdb, settings, the table and its rows
make_cluster()
{
	local c=$1 base=/dev/shm am=heap dir
	[ "$c" = heap ] && base=$DISK_BASE
	[ "$c" = nvm ] && am=nvm
	nvm_cluster_new dir "$base" "nvmam-gc-cost-$c"
	DIR[$c]=$dir
	nvm_cluster_conf "$dir" \
		"shared_buffers = '256MB'" \
		"max_wal_size = '2GB'" \
		"checkpoint_timeout = '1d'" \
		"autovacuum = off" \
		"shared_preload_libraries = 'nvmam'" \
		"nvm.pool_size = '2GB'" \
		"nvm.pool_path = '$dir/pool'" \
		"nvm.durability = 'pool'"
	nvm_cluster_start "$dir"
	psql_at "$c" "CREATE EXTENSION nvmam" >/dev/null
	psql_at "$c" "CREATE TABLE u (k integer PRIMARY KEY, n bigint NOT NULL, pad text NOT NULL) USING $am" >/dev/null
	psql_at "$c" "INSERT INTO u SELECT k, 0, repeat('p', 100) FROM generate_series(1, $ROWS) k" >/dev/null
	psql_at "$c" "VACUUM ANALYZE u" >/dev/null
	psql_at "$c" "SELECT count(*) FROM u" >/dev/null
	psql_at "$c" "CHECKPOINT" >/dev/null
}

# round_once NAME ROUND: the burst of updates and the VACUUM after it
round_once()
{
	local c=$1 r=$2 dir=${DIR[$1]} cpu0 cpu1 cpu2 out txns tps t0 t1 vcpu ns
	psql_at "$c" "CHECKPOINT" >/dev/null
	cpu0=$(server_cpu_ticks "$c")
	out=$(nvm_as_pg env PGHOST="$dir" PGPORT="$(cat "$dir/port")" PGUSER=postgres \
		"$PG_BINDIR/pgbench" -n -M prepared -c "$CLIENTS" -j "$CLIENTS" -t "$((UPDATES / CLIENTS))" \
		-D rows="$ROWS" -f "$WORK_SQL" postgres 2>&1)
	sleep 0.5
	cpu1=$(server_cpu_ticks "$c")
	txns=$(awk '/^number of transactions actually processed/ { print $NF; exit }' <<<"$out")
	tps=$(awk '/^tps/ { print $3; exit }' <<<"$out")
	# the VACUUM's backend reads its own CPU time in ns (/proc/self/schedstat)
	# before and after, in the same session
	t0=$(date +%s.%N)
	nvm_psql "$dir" postgres -At \
		-c "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)" \
		-c "VACUUM (VERBOSE) u" \
		-c "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)" \
		>"$OUT/.ns" 2>"$OUT/vacuum-verbose-$c-r$r.txt"
	t1=$(date +%s.%N)
	ns=$(awk 'NR == 1 { a = $1 } END { print $1 - a }' "$OUT/.ns")
	rm -f "$OUT/.ns"
	sleep 0.5
	cpu2=$(server_cpu_ticks "$c")
	vcpu=$(sed -n 's/.*CPU: user: \([0-9.]*\) s, system: \([0-9.]*\) s.*/\1 \2/p' \
		"$OUT/vacuum-verbose-$c-r$r.txt" |
		awk '{ u += $1; s += $2 } END { if (NR) printf "%.2f", u + s; else print "-" }')
	awk -v c="$c" -v r="$r" -v txns="$txns" -v tps="$tps" -v c0="$cpu0" -v c1="$cpu1" \
		-v c2="$cpu2" -v hz="$CLK_TCK" -v t0="$t0" -v t1="$t1" -v vcpu="$vcpu" -v ns="$ns" 'BEGIN {
		printf "%-10s %5d %9d %8.0f %13.1f %9.3f %11.4f %14.3f %15.2f %s\n", c, r, txns, tps,
			1e6 * (c1 - c0) / hz / txns, t1 - t0, ns / 1e9, ns / 1e3 / txns, (c2 - c1) / hz, vcpu
	}'
}

WORK_SQL=$(mktemp /var/tmp/nvmam-gc-cost.XXXXXX.sql)
nvm_cleanup_add "rm -f '$WORK_SQL'"
printf '\\set k random(1, :rows)\nUPDATE u SET n = n + 1 WHERE k = :k;\n' >"$WORK_SQL"
chmod 644 "$WORK_SQL"

for c in "${CONTENDERS[@]}"; do make_cluster "$c"; done
{
	echo "# bash bench/gc_cost.sh --rounds $ROUNDS --rows $ROWS --updates $UPDATES --clients $CLIENTS ($(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "# updates: rows updated by the burst (single-row UPDATEs, $CLIENTS clients);"
	echo "# burst_us_per_update: server CPU of the burst per update (pruning on the update path included);"
	echo "# vacuum_s: wall seconds of VACUUM (VERBOSE) u after it; vacuum_cpu_s: its backend's CPU"
	echo "# (/proc/self/schedstat, ns); vacuum_us_per_update: vacuum_cpu_s per updated row;"
	echo "# cluster_cpu_s: every process of the cluster meanwhile (clock ticks); verbose_cpu_s: heap's own VERBOSE CPU line"
	printf "%-10s %5s %9s %8s %13s %9s %11s %14s %15s %s\n" contender round updates tps \
		burst_us_per_update vacuum_s vacuum_cpu_s vacuum_us_per_update cluster_cpu_s verbose_cpu_s
} | tee "$OUT/gc-cost.txt"
n=${#CONTENDERS[@]}
for r in $(seq 1 "$ROUNDS"); do
	for i in $(seq 0 $((n - 1))); do
		round_once "${CONTENDERS[$(((i + r - 1) % n))]}" "$r" | tee -a "$OUT/gc-cost.txt"
	done
done
# per round: nvm's VACUUM CPU per updated row over each heap contender's
{
	echo
	echo "# ratios of vacuum_us_per_update, per round: nvm / heap-tmpfs, nvm / heap (median, range)"
	awk '!/^#/ && NF >= 9 && $1 != "contender" { v[$1, $2] = $8; if ($2 > R) R = $2 }
		function stat(ref,   r, k, x, a, t) {
			k = 0
			for (r = 1; r <= R; r++) if (v[ref, r] > 0) a[++k] = v["nvm", r] / v[ref, r]
			for (x = 1; x <= k; x++) for (t = x + 1; t <= k; t++) if (a[t] < a[x]) { s = a[x]; a[x] = a[t]; a[t] = s }
			if (!k) return "-"
			return sprintf("%.2f (%.2f-%.2f, %d rounds)", (k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2), a[1], a[k], k)
		}
		END { printf "nvm / heap-tmpfs %s\nnvm / heap       %s\n", stat("heap-tmpfs"), stat("heap") }' "$OUT/gc-cost.txt"
} | tee -a "$OUT/gc-cost.txt"

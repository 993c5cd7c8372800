#!/usr/bin/env bash
#
# bench/gc_soak.sh
#	  Space under a steady update load: a YCSB-A load (1M rows of key + 10 x
#	  100-byte fields, uniform keys, 1 to 5 rows per transaction, half of
#	  them updated) runs against nvm tables for 10 minutes while the pool's
#	  use is sampled every 15 s.  Garbage collection must keep the pool's
#	  used bytes under 1.5 x the live data, without VACUUM (autovacuum is
#	  off: pruning by updates alone).  "Live data" is the rows' size as
#	  PostgreSQL stores them (the sum of pg_column_size of every row, heap
#	  tuple headers included), measured after the load.  The pool starts
#	  at 64MB and grows (nvm.pool_grow_step, 128MB) as the load and the run
#	  need; its size (what the file takes) is reported next to its use.
#
#	  bench/gc_soak.sh [--rows N] [--minutes M] [--clients C] [--mode mcsi|n2db]
#	                   [--limit 1.5] [--out DIR] [--no-build]
#
#	  Writes samples.csv (elapsed seconds, used bytes, versions, ratio, tps)
#	  and summary.md into the output directory (default
#	  build-bench/gc-soak-TIMESTAMP), prints the summary, and exits non-zero
#	  if the ratio ever reached the limit.  Runs as root (or a user that can
#	  run the server); the pool lives in /dev/shm.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WL=$ROOT/bench/workloads
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=regress/lib/packages.sh
. "$ROOT/regress/lib/packages.sh"

ROWS=1000000
MINUTES=10
CLIENTS=8
MODE=mcsi
LIMIT=1.5
OUT=
BUILD=1
SAMPLE_SECONDS=15

nvm_options "rows=ROWS minutes=MINUTES clients=CLIENTS mode=MODE limit=LIMIT out=OUT no-build!=BUILD=0" "$@"

if [ "${NVM_SKIP_PACKAGES:-0}" = 0 ] && [ "$(id -u)" -eq 0 ]; then
	nvm_install_packages
fi
nvm_find_pg
# build-bench, or build-bench-pg18 on PostgreSQL 18 (NVM_PG_VERSION=18)
BUILD_DIR=$ROOT/$(nvm_build_dir_name build-bench)
if [ "$BUILD" = 1 ]; then
	nvm_build "$ROOT" "$BUILD_DIR" -Dbuildtype=release -Db_ndebug=if-release >/dev/null
	nvm_install "$BUILD_DIR" >/dev/null
fi

OUT=${OUT:-$BUILD_DIR/gc-soak-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
# pool: small at first; it grows with the rows and the versions in flight
POOL_SIZE=64MB

DIR=$(nvm_pg_tmpdir /var/tmp nvmam-gc-soak)
SHM=$(nvm_pg_tmpdir /dev/shm nvmam-gc-soak-pool)
trap 'nvm_cluster_stop "$DIR"; cp -f "$DIR/server.log" "$OUT/server.log" 2>/dev/null; rm -rf "$DIR" "$SHM"' EXIT
nvm_cluster_init "$DIR" "$(nvm_free_port)"
nvm_cluster_conf "$DIR" \
	"shared_preload_libraries = 'nvmam'" \
	"nvm.pool_path = '$SHM/pool'" "nvm.durability = 'pool'" \
	"nvm.pool_size = '$POOL_SIZE'" \
	"nvm.concurrency_control = '$MODE'" \
	"max_connections = $((CLIENTS + 20))" \
	"shared_buffers = '256MB'" \
	"autovacuum = off" \
	"default_transaction_isolation = 'repeatable read'"
nvm_cluster_start "$DIR"
PORT=$(cat "$DIR/port")

q() { nvm_psql "$DIR" ycsb -At "$@"; }

nvm_log "loading $ROWS rows (nvm, $MODE, pool $POOL_SIZE in /dev/shm)"
nvm_psql "$DIR" postgres -c "CREATE DATABASE ycsb"
q -c "CREATE EXTENSION nvmam" -c "ALTER DATABASE ycsb SET default_table_access_method = nvm"
nvm_psql "$DIR" ycsb -v rows="$ROWS" -f "$WL/ycsb_schema.sql" -f "$WL/ycsb_load.sql" >/dev/null
LIVE=$(q -c "SELECT sum(pg_column_size(u.*)) FROM usertable u")
read -r USED0 VERSIONS0 SIZE0 < <(q -F ' ' -c "SELECT used_bytes, versions, pool_size FROM nvm_pool")
nvm_log "live data $LIVE bytes; pool used $USED0 bytes after the load ($(awk -v u="$USED0" -v l="$LIVE" 'BEGIN{printf "%.3f", u/l}') x), pool size $SIZE0 bytes"

echo "elapsed_s,used_bytes,versions,ratio,transactions,pool_size" >"$OUT/samples.csv"
SECONDS_TOTAL=$((MINUTES * 60))
nvm_as_pg env PGHOST="$DIR" PGPORT="$PORT" PGUSER=postgres "$PG_BINDIR/pgbench" -n -M prepared \
	-c "$CLIENTS" -j "$(nproc)" -T "$SECONDS_TOTAL" --max-tries=1000 \
	-f "$WL/ycsb.sql" -D rows="$ROWS" -D update_pct=50 -P 60 ycsb >"$OUT/pgbench.log" 2>&1 &
PGB=$!
START=$(date +%s)
MAX_RATIO=0
while kill -0 "$PGB" 2>/dev/null; do
	sleep "$SAMPLE_SECONDS"
	kill -0 "$PGB" 2>/dev/null || break
	read -r used versions size < <(q -F ' ' -c "SELECT used_bytes, versions, pool_size FROM nvm_pool")
	xacts=$(q -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'ycsb'")
	elapsed=$(($(date +%s) - START))
	ratio=$(awk -v u="$used" -v l="$LIVE" 'BEGIN{printf "%.3f", u/l}')
	MAX_RATIO=$(awk -v a="$MAX_RATIO" -v b="$ratio" 'BEGIN{print (b > a) ? b : a}')
	echo "$elapsed,$used,$versions,$ratio,$xacts,$size" >>"$OUT/samples.csv"
	nvm_log "$(printf '%4d s of %d: pool used %.2f GB = %s x live data, %s versions' \
		"$elapsed" "$SECONDS_TOTAL" "$(awk -v u="$used" 'BEGIN{print u/1e9}')" "$ratio" "$versions")"
done
wait "$PGB" || nvm_warn "pgbench failed: see $OUT/pgbench.log"
TPS=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$OUT/pgbench.log" | head -1)
read -r USED1 VERSIONS1 COLLECTED SIZE1 SEGMENTS1 < <(q -F ' ' -c "SELECT used_bytes, versions, versions_collected, pool_size, segments FROM nvm_pool")

PASS=$(awk -v m="$MAX_RATIO" -v l="$LIMIT" 'BEGIN{print (m < l) ? "yes" : "no"}')
{
	echo "# Garbage collection under a steady update load"
	echo
	echo "YCSB-A through pgbench: $ROWS rows, $CLIENTS clients, $MINUTES minutes, REPEATABLE READ,"
	echo "nvm.concurrency_control = $MODE, synchronous_commit = on, pool in /dev/shm, data directory"
	echo "on disk, autovacuum off (collection by updates alone)."
	echo
	echo "| | value |"
	echo "|---|---|"
	echo "| live data (sum of pg_column_size of the rows) | $LIVE bytes |"
	echo "| pool used after the load | $USED0 bytes ($(awk -v u="$USED0" -v l="$LIVE" 'BEGIN{printf "%.3f", u/l}') x) |"
	echo "| highest pool use during the run | $MAX_RATIO x live data (limit $LIMIT) |"
	echo "| pool used at the end | $USED1 bytes ($(awk -v u="$USED1" -v l="$LIVE" 'BEGIN{printf "%.3f", u/l}') x) |"
	echo "| pool size after the load / at the end (from 64MB) | $SIZE0 / $SIZE1 bytes ($(awk -v u="$SIZE1" -v l="$LIVE" 'BEGIN{printf "%.3f", u/l}') x live data), $SEGMENTS1 growths |"
	echo "| versions after the load / at the end | $VERSIONS0 / $VERSIONS1 |"
	echo "| versions collected | $COLLECTED |"
	echo "| throughput | ${TPS:-?} tps |"
	echo "| under the limit all the time | $PASS |"
	echo
	echo "Samples: samples.csv; pgbench output: pgbench.log."
} >"$OUT/summary.md"
cat "$OUT/summary.md"
[ "$PASS" = yes ]

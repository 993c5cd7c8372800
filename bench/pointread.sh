#!/usr/bin/env bash
#
# bench/pointread.sh
#	  Single-row primary-key SELECTs on heap and on nvm, side by side: the
#	  read path users meet most (an ORM fetching one row by its key).
#
# Two throwaway clusters, both with their data directory in /dev/shm and
# the same settings: "heap" (plain PostgreSQL) and "nvm" (nvmam preloaded,
# the table created USING nvm, pool in /dev/shm).  Each gets the same table
# (id int PRIMARY KEY, v int, pad text of 100 bytes; ROWS rows) and pgbench
# runs "SELECT v, pad FROM pr WHERE id = :id" with uniformly random ids,
# prepared statements (pgbench -M prepared; --protocol simple or extended
# parses and plans every query), for SECONDS at each client count.
# Rounds alternate the order (heap first in odd rounds, nvm first in even
# ones), so slow drifts of a shared machine hit both alike; the result is
# the median over the rounds of each contender's throughput, their ratio,
# and the spread of the per-round ratios.
#
# Usage:
#	bash bench/pointread.sh [--rounds N] [--clients "1 2 8"] [--seconds S]
#							[--rows N] [--mode mcsi|n2db] [--out DIR]
#							[--protocol prepared|extended|simple] [--no-build]
#
# Builds a release build in build-bench/ and installs it (as bench/run.sh
# does) unless --no-build.  PG_CONFIG selects the PostgreSQL 15
# installation.  Writes DIR/results.csv (round, clients, contender, tps),
# DIR/summary.md and the servers' logs; prints the summary.  The target of
# the project: nvm >= 1.1 x heap at 2 clients, >= 1.0 x heap at 1 and 8.
#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

ROUNDS=5
CLIENTS="1 2 8"
SECONDS_PER_RUN=10
ROWS=1000000
MODE=mcsi
PROTOCOL=prepared
DO_BUILD=1
OUT=

nvm_options "rounds=ROUNDS clients=CLIENTS seconds=SECONDS_PER_RUN rows=ROWS mode=MODE protocol=PROTOCOL out=OUT no-build!=DO_BUILD=0" "$@"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || nvm_die "--rounds takes a number"
case "$MODE" in mcsi | n2db) ;; *) nvm_die "--mode is mcsi or n2db" ;; esac
case "$PROTOCOL" in simple | extended | prepared) ;; *) nvm_die "--protocol is simple, extended or prepared" ;; esac

nvm_find_pg
# build-bench, or build-bench-pg18 on PostgreSQL 18 (NVM_PG_VERSION=18)
BUILD_DIR=$ROOT/$(nvm_build_dir_name build-bench)
OUT=${OUT:-$BUILD_DIR/pointread-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)

nvm_cleanup_at_exit

if [ "$DO_BUILD" = 1 ]; then
	echo "==> building a release build in build-bench and installing it" >&2
	nvm_build "$ROOT" "$BUILD_DIR" -Dbuildtype=release -Db_ndebug=if-release \
		>"$OUT/logs/build.log" 2>&1 || { tail -n 40 "$OUT/logs/build.log" >&2; nvm_die "build failed"; }
	nvm_install "$BUILD_DIR" >"$OUT/logs/install.log" 2>&1 || nvm_die "install failed (run as root)"
fi

MAX_CLIENTS=1
for n in $CLIENTS; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || nvm_die "bad client count $n"
	if [ "$n" -gt "$MAX_CLIENTS" ]; then MAX_CLIENTS=$n; fi
done

declare -A DIR
for c in heap nvm; do
	nvm_cluster_new d /dev/shm "nvmam-pointread-$c" "$OUT/logs/server-$c.log"
	DIR[$c]=$d
	nvm_cluster_conf "$d" \
		"shared_buffers = '512MB'" \
		"max_connections = $((MAX_CLIENTS + 10))" \
		"autovacuum = off" \
		"checkpoint_timeout = '1d'" \
		"max_wal_size = '2GB'"
	if [ "$c" = nvm ]; then
		nvm_cluster_conf "$d" \
			"shared_preload_libraries = 'nvmam'" \
			"nvm.pool_path = '$d/pool'" "nvm.durability = 'pool'" \
			"nvm.pool_size = '2GB'" \
			"nvm.concurrency_control = '$MODE'"
	fi
	nvm_cluster_start "$d"
done

# pg CONTENDER PROG ARGS...: a client program against the contender's cluster
pg()
{
	local c=$1 prog=$2
	shift 2
	nvm_as_pg env PGHOST="${DIR[$c]}" PGPORT="$(cat "${DIR[$c]}/port")" PGUSER=postgres \
		PGDATABASE=postgres "$PG_BINDIR/$prog" "$@"
}

echo "==> loading $ROWS rows into each" >&2
for c in heap nvm; do
	am=heap
	if [ "$c" = nvm ]; then
		pg "$c" psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION nvmam"
		am=nvm
	fi
	pg "$c" psql -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE TABLE pr (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL) USING $am" \
		-c "INSERT INTO pr SELECT g, g, repeat('x', 100) FROM generate_series(1, $ROWS) g" \
		-c "VACUUM ANALYZE pr"
done

SCRIPT=${DIR[heap]}/pointread.sql
printf '%s\n' '\set id random(1, :rows)' 'SELECT v, pad FROM pr WHERE id = :id;' |
	nvm_as_pg tee "$SCRIPT" >/dev/null
cp "$SCRIPT" "$OUT/"

# run CONTENDER CLIENTS SECONDS: prints the throughput (transactions/s)
run()
{
	local c=$1 n=$2 secs=$3 j
	j=$n
	if [ "$j" -gt "$(nproc)" ]; then j=$(nproc); fi
	pg "$c" pgbench -n -M "$PROTOCOL" -f "$SCRIPT" -D rows="$ROWS" -c "$n" -j "$j" -T "$secs" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

echo "==> warming up" >&2
for c in heap nvm; do run "$c" "$MAX_CLIENTS" 3 >/dev/null; done

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "round,clients,contender,tps" >"$OUT/results.csv"
for r in $(seq 1 "$ROUNDS"); do
	order="heap nvm"
	if [ $((r % 2)) -eq 0 ]; then order="nvm heap"; fi
	for n in $CLIENTS; do
		for c in $order; do
			tps=$(run "$c" "$n" "$SECONDS_PER_RUN")
			echo "$r,$n,$c,$tps" >>"$OUT/results.csv"
			echo "round $r, $n clients, $c: $tps tps" >&2
		done
	done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/results.csv" "$LOAD_BEFORE" "$LOAD_AFTER" "$MODE" "$ROWS" "$SECONDS_PER_RUN" "$PROTOCOL" >"$OUT/summary.md" <<'EOF'
import csv, statistics, sys
path, load_before, load_after, mode, rows, secs, protocol = sys.argv[1:]
runs = {}
for row in csv.DictReader(open(path)):
    runs.setdefault((int(row['clients']), int(row['round'])), {})[row['contender']] = float(row['tps'] or 0)
clients = sorted({c for c, _ in runs})
targets = {2: 1.1}
print(f"Point reads (SELECT v, pad FROM pr WHERE id = :id, {rows} rows, -M {protocol}, "
      f"{secs} s per run), heap vs nvm ({mode}); rounds alternate the order.\n")
print("| clients | heap tps (median) | nvm tps (median) | nvm / heap (medians) | per-round ratios (min .. max) | target | |")
print("|---|---|---|---|---|---|---|")
for c in clients:
    rounds = [v for (cc, _), v in sorted(runs.items()) if cc == c and 'heap' in v and 'nvm' in v]
    h = statistics.median(r['heap'] for r in rounds)
    n = statistics.median(r['nvm'] for r in rounds)
    ratios = [r['nvm'] / r['heap'] for r in rounds if r['heap'] > 0]
    t = targets.get(c, 1.0)
    ok = 'PASS' if h > 0 and n / h >= t else 'MISS'
    print(f"| {c} | {h:.0f} | {n:.0f} | {n / h:.3f} | {min(ratios):.3f} .. {max(ratios):.3f} | >= {t} | {ok} |")
print(f"\nLoad average (1, 5, 15 min) before: {load_before}; after: {load_after} "
      "(a number near or above the core count means other work shared the machine).")
EOF
cat "$OUT/summary.md"
echo "results: $OUT" >&2

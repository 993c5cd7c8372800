#!/usr/bin/env bash
# bench/standby_cost.sh
#   What the redo of physical standbys costs: the row workloads (single-row
#   INSERT with an identity key, single-row UPDATE of a non-indexed column;
#   bench/workloads/rows_schema.sql, insert.sql, update.sql) on heap and on
#   nvm (MCSI), each at three WAL settings:
#     minimal          wal_level = minimal, no WAL senders (nvm writes no redo)
#     replica          wal_level = replica, no standby (nvm writes its redo)
#     replica+standby  as replica, with one asynchronous streaming standby
#                      (heap: from pg_basebackup; nvm: a cold copy with its own pool)
#     replica+standby+walwriter  nvm only: as replica+standby with
#                      nvm.redo_flusher = off (the WAL writer writes the redo)
#   For every run: transactions per second, WAL bytes per transaction, WAL
#   fsyncs per transaction (pg_stat_wal), and with a standby the replay lag
#   sampled every 0.5 s (the primary's insert position minus the standby's
#   replay position, in bytes; pg_stat_replication.replay_lag, in ms; mean
#   and maximum; and commit to replay: every 50 ms, the time from reading
#   the primary's insert position until the standby reports having
#   replayed up to it, mean and maximum) and
#   whether the standby ends with the primary's rows.  Contenders and
#   settings are interleaved in every round.  Data directories (WAL
#   included) on disk, pools in /dev/shm.
#
#   bash bench/standby_cost.sh [--rounds N] [--seconds S] [--clients C] [--out DIR]
#        [--levels "minimal replica replica+standby"] [--workloads "update insert"]
#        [--rate TPS]   (pgbench --rate: every contender offered the same load)
#   (as root: servers run as postgres; nvmam must be installed; PG_CONFIG
#   selects PostgreSQL 15; clusters and options through regress/lib)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

ROUNDS=3
SECONDS_PER_RUN=15
CLIENTS=2
ROWS=10000
OUT="bench/results/standby-cost-$(date -u +%Y%m%d)"
LEVELS="minimal replica replica+standby"
WORKLOADS="update insert"
RATE=""
nvm_options "levels=LEVELS workloads=WORKLOADS rate=RATE rounds=ROUNDS seconds=SECONDS_PER_RUN clients=CLIENTS out=OUT" "$@"

nvm_find_pg
mkdir -p "$OUT"
nvm_cleanup_at_exit
WORK=$(nvm_pg_tmpdir /var/tmp nvm-standby-cost)
SHM=$(nvm_pg_tmpdir /dev/shm nvm-standby-cost)
# the primary in $WORK/p, the standby in $WORK/s (made again for every run)
nvm_cleanup_add "nvm_cluster_stop '$WORK/s'; nvm_cluster_stop '$WORK/p'; rm -rf '$WORK' '$SHM'"
PPORT=$(nvm_free_port)
SPORT=$(nvm_free_port)
while [ "$SPORT" = "$PPORT" ]; do SPORT=$(nvm_free_port); done

psql_p() { nvm_pg_client "$WORK/p" psql -X -Atq "$@"; }
psql_s() { nvm_pg_client "$WORK/s" psql -X -Atq "$@"; }

# setup AM LEVEL: a fresh primary (and standby) with the row tables
setup()
{
	local am=$1 level=$2
	rm -rf "$WORK/p" "$WORK/s" "${SHM:?}"/*
	nvm_as_pg mkdir "$WORK/p"
	nvm_cluster_init "$WORK/p" "$PPORT"
	nvm_cluster_conf "$WORK/p" \
		"shared_preload_libraries = 'nvmam'" \
		"nvm.pool_path = '$SHM/p.pool'" \
		"nvm.durability = 'pool'" \
		"nvm.pool_size = '1GB'" \
		"default_table_access_method = $am" \
		"shared_buffers = '256MB'" \
		"max_wal_size = '4GB'" \
		"autovacuum = off"
	if [ "$level" = minimal ]; then
		nvm_cluster_conf "$WORK/p" "wal_level = minimal" "max_wal_senders = 0"
	else
		nvm_cluster_conf "$WORK/p" "wal_level = replica" "wal_keep_size = '1GB'"
	fi
	if [ "$level" = replica+standby+walwriter ]; then nvm_cluster_conf "$WORK/p" "nvm.redo_flusher = off"; fi
	nvm_cluster_start "$WORK/p"
	psql_p -c "CREATE EXTENSION nvmam" >/dev/null
	nvm_pg_client "$WORK/p" psql -X -q -v rows="$ROWS" -f "$HERE/workloads/rows_schema.sql" >/dev/null
	psql_p >/dev/null <<'EOS'
CREATE PROCEDURE c2r_once(INOUT ms numeric DEFAULT NULL) LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
	target pg_lsn := pg_current_wal_insert_lsn();
BEGIN
	WHILE coalesce((SELECT min(replay_lsn) FROM pg_stat_replication), '0/0') < target LOOP
		COMMIT;
		PERFORM pg_sleep(0.0002);
	END LOOP;
	ms := round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2);
END $$;
EOS
	psql_p -c "CHECKPOINT" >/dev/null
	if [ "${level#replica+standby}" != "$level" ]; then
		if [ "$am" = nvm ]; then
			# a cold copy: data directory and pool, the primary stopped
			nvm_cluster_stop "$WORK/p"
			nvm_as_pg cp -a "$WORK/p" "$WORK/s"
			nvm_as_pg cp "$SHM/p.pool" "$SHM/s.pool"
			nvm_cluster_start "$WORK/p"
		else
			nvm_as_pg mkdir "$WORK/s"
			nvm_pg_client "$WORK/p" pg_basebackup -D "$WORK/s/data" -X stream >/dev/null
		fi
		nvm_as_pg touch "$WORK/s/data/standby.signal"
		echo "$SPORT" | nvm_as_pg tee "$WORK/s/port" >/dev/null
		nvm_cluster_conf "$WORK/s" \
			"port = $SPORT" \
			"unix_socket_directories = '$WORK/s'" \
			"nvm.pool_path = '$SHM/s.pool'" \
			"primary_conninfo = 'host=$WORK/p port=$PPORT'" \
			"hot_standby = on"
		nvm_cluster_start "$WORK/s"
	fi
}

teardown()
{
	nvm_cluster_stop "$WORK/s"
	nvm_cluster_stop "$WORK/p"
}

# commit_to_replay SECONDS: samples, for SECONDS seconds, every 50 ms, the
# time from reading the primary's insert position until the standby reports
# that it has replayed up to it (pg_stat_replication.replay_lsn; the
# procedure c2r_once, in one session on the primary: nothing runs on the
# standby that its replay could have to wait for); prints "samples mean_ms
# max_ms"
commit_to_replay()
{
	local n=$(( $1 * 1000 / 55 ))
	for _ in $(seq 1 "$n"); do echo "CALL c2r_once(); SELECT pg_sleep(0.05);"; done \
		| psql_p -f - 2>/dev/null | awk '/^[0-9.]+$/ {n++; s+=$1; if ($1 > m) m=$1}
		END {if (n) printf "%d %.2f %.1f\n", n, s/n, m}'
}

# run AM LEVEL WORKLOAD ROUND: one pgbench run; appends a CSV line
run()
{
	local am=$1 level=$2 wl=$3 round=$4
	local lsn0 sync0 out tps tx lsn1 sync1 lagfile lag_mean lag_max same
	lsn0=$(psql_p -c "SELECT pg_current_wal_insert_lsn() - '0/0'")
	sync0=$(psql_p -c "SELECT wal_sync FROM pg_stat_wal")
	lagfile="$WORK/lag"
	: > "$lagfile"
	if [ "${level#replica+standby}" != "$level" ]; then
		(
			end=$((SECONDS + SECONDS_PER_RUN))
			while [ $SECONDS -lt $end ]; do
				s=$(psql_s -c "SELECT pg_last_wal_replay_lsn() - '0/0'" 2>/dev/null || echo)
				p=$(psql_p -c "SELECT pg_current_wal_insert_lsn() - '0/0'" 2>/dev/null || echo)
				ms=$(psql_p -c "SELECT coalesce(round(extract(epoch FROM max(replay_lag)) * 1000), 0) FROM pg_stat_replication" 2>/dev/null || echo)
				[ -n "$p" ] && [ -n "$s" ] && [ -n "$ms" ] && echo "$(( p > s ? p - s : 0 )) $ms" >> "$lagfile"
				sleep 0.5
			done
		) &
		commit_to_replay "$((SECONDS_PER_RUN - 2))" > "$WORK/c2r" &
	fi
	out=$(nvm_pg_client "$WORK/p" pgbench -n -c "$CLIENTS" -j "$CLIENTS" \
		${RATE:+--rate "$RATE"} -T "$SECONDS_PER_RUN" -D rows="$ROWS" -f "$HERE/workloads/$wl.sql" postgres 2>&1)
	wait
	tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
	tx=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	lsn1=$(psql_p -c "SELECT pg_current_wal_insert_lsn() - '0/0'")
	sync1=$(psql_p -c "SELECT wal_sync FROM pg_stat_wal")
	lag_mean=""; lag_max=""; lag_ms_mean=""; lag_ms_max=""; c2r_mean=""; c2r_max=""; same=""
	if [ -s "$lagfile" ]; then
		read -r _ c2r_mean c2r_max < "$WORK/c2r" || true
		lag_mean=$(awk '{s+=$1} END {printf "%.0f", s/NR}' "$lagfile")
		lag_max=$(awk '{print $1}' "$lagfile" | sort -n | tail -1)
		lag_ms_mean=$(awk '{s+=$2} END {printf "%.0f", s/NR}' "$lagfile")
		lag_ms_max=$(awk '{print $2}' "$lagfile" | sort -n | tail -1)
	fi
	if [ "${level#replica+standby}" != "$level" ]; then
		local target
		target=$(psql_p -c "SELECT pg_current_wal_insert_lsn()")
		for _ in $(seq 1 600); do
			[ "$(psql_s -c "SELECT pg_last_wal_replay_lsn() >= '$target'")" = t ] && break
			sleep 0.1
		done
		local q="SELECT count(*) || ':' || coalesce(sum(n), 0) || ':' || (SELECT count(*) FROM o) FROM u"
		[ "$(psql_p -c "$q")" = "$(psql_s -c "$q")" ] && same=yes || same=NO
	fi
	echo "$round,$am,$level,$wl,$tps,$tx,$(( (lsn1 - lsn0) / (tx > 0 ? tx : 1) )),$(awk -v a="$sync0" -v b="$sync1" -v t="$tx" 'BEGIN {printf "%.4f", (b - a) / (t > 0 ? t : 1)}'),$lag_mean,$lag_max,$lag_ms_mean,$lag_ms_max,$c2r_mean,$c2r_max,$same" \
		| tee -a "$OUT/runs.csv"
}

echo "round,am,level,workload,tps,transactions,wal_bytes_per_txn,wal_fsyncs_per_txn,lag_mean_bytes,lag_max_bytes,replay_lag_mean_ms,replay_lag_max_ms,commit_to_replay_mean_ms,commit_to_replay_max_ms,standby_same_rows" > "$OUT/runs.csv"
for round in $(seq 1 "$ROUNDS"); do
	for level in $LEVELS; do
		for am in heap nvm; do
			[ "$level" = replica+standby+walwriter ] && [ "$am" = heap ] && continue
			setup "$am" "$level"
			for wl in $WORKLOADS; do
				run "$am" "$level" "$wl" "$round"
			done
			teardown
		done
	done
done

python3 - "$OUT/runs.csv" > "$OUT/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| workload | level | am | tps median (min-max) | WAL bytes/txn | fsyncs/txn | lag mean / max (bytes) | replay_lag mean / max (ms) | commit to replay mean / max (ms) | standby same rows |")
print("|---|---|---|---|---|---|---|---|---|---|")
key = lambda r: (r["workload"], r["level"], r["am"])
groups = {}
for r in rows:
    groups.setdefault(key(r), []).append(r)
levels = ["minimal", "replica", "replica+standby", "replica+standby+walwriter"]
for k in sorted(groups, key=lambda k: (k[0], levels.index(k[1]), k[2])):
    g = groups[k]
    tps = [float(r["tps"]) for r in g if r["tps"]]
    wal = statistics.median(int(r["wal_bytes_per_txn"]) for r in g)
    fs = statistics.median(float(r["wal_fsyncs_per_txn"]) for r in g)
    lags = [r for r in g if r["lag_mean_bytes"]]
    lag = "-" if not lags else "%d / %d" % (statistics.median(int(r["lag_mean_bytes"]) for r in lags),
                                            max(int(r["lag_max_bytes"]) for r in lags))
    lagms = "-" if not lags else "%d / %d" % (statistics.median(int(r["replay_lag_mean_ms"]) for r in lags),
                                              max(int(r["replay_lag_max_ms"]) for r in lags))
    lags = [r for r in g if r["commit_to_replay_mean_ms"]]
    c2r = "-" if not lags else "%.1f (%s) / %.0f" % (
        statistics.median(float(r["commit_to_replay_mean_ms"]) for r in lags),
        " ".join(r["commit_to_replay_mean_ms"] for r in lags),
        max(float(r["commit_to_replay_max_ms"]) for r in lags))
    same = ",".join(sorted(set(r["standby_same_rows"] for r in g))) or "-"
    print("| %s | %s | %s | %.0f (%.0f-%.0f) | %d | %.3f | %s | %s | %s | %s |" % (
        k[0], k[1], k[2], statistics.median(tps), min(tps), max(tps), wal, fs, lag, lagms, c2r, same))
print()
for wl in ("update", "insert"):
    for level in levels:
        n = [float(r["tps"]) for r in rows if r["workload"] == wl and r["level"] == level and r["am"] == "nvm"]
        h = [float(r["tps"]) for r in rows if r["workload"] == wl and r["level"] == level and r["am"] == "heap"]
        if n and h:
            print("- %s at %s: nvm/heap = %.2f (medians)" % (wl, level, statistics.median(n) / statistics.median(h)))
EOF
cat "$OUT/summary.md"

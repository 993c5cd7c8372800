#!/usr/bin/env bash
#
# bench/steady.sh
#	  Steady state as a server runs it all day: pgbench's TPC-B (built-in
#	  tpcb-like, scale --scale, 50 by default: 5M accounts) and the
#	  server-side TPC-C (the five transactions as procedures, 4 warehouses
#	  at the specification's initial population; bench/workloads/tpccsp.toml),
#	  in runs of minutes with checkpoint_timeout short enough that several
#	  checkpoints fall inside every run (30 s by default), autovacuum on,
#	  and tables larger than what changes between two checkpoints.  The
#	  workloads' scripts, sizes and loads come from their descriptors
#	  (bench/workloads/*.toml, read by bench/lib/workloads.py at full size;
#	  --scale sets TPC-B's).  Contenders (bench/lib/day.sh; every WAL on disk):
#		heap	PostgreSQL's heap
#		nvm		the pool at its default place (pg_nvm/pool, a page-cache file
#				in the data directory) and the default durability (auto:
#				through the WAL)
#		nvm-shm	the pool in /dev/shm, nvm.durability = pool: stands for
#				persistent memory (not durable here)
#		nvm-tmpfs	the pool in /dev/shm, the default durability (auto:
#				through the WAL, durable), where the kernel never writes the
#				pool back (only with --contenders)
#	  Each workload family gets fresh clusters, all up at once and loaded
#	  one after the other; then --rounds rounds, in each of which every
#	  contender runs once, back to back, in an order that rotates from
#	  round to round, so the noise of a shared machine falls on all alike.
#	  Before each run: a wait (up to 30 s) until no autovacuum worker runs
#	  in the other clusters, then a CHECKPOINT of its own cluster.
#	  Measured around each run (counters read before it and 1.2 s after it,
#	  when every process has reported them):
#		tps, transactions, failures and retries (pgbench, REPEATABLE READ,
#		-M prepared, --max-tries 1000; as bench/run.sh runs them)
#		WAL bytes, records and full-page images (pg_stat_wal), WAL fsyncs
#		(pg_stat_wal.wal_sync; PostgreSQL 18: pg_stat_io)
#		checkpoints completed and the buffers they wrote
#		(pg_stat_bgwriter.buffers_checkpoint x 8 kB; 17 and later
#		pg_stat_checkpointer), and for nvm the checkpoint files of the pool
#		they wrote: the bytes of the captures and of the merges of files
#		between checkpoints (the view nvm_checkpoints, exact), the tables
#		and rows from the server log ("nvm: checkpoint of the pool at a
#		checkpoint: wrote K kB (R rows) for D changed and B whole nvm
#		tables, ...", log_checkpoints = on), with the write_bytes of the
#		"nvm backup watch" worker that writes them (/proc/PID/io) as a
#		cross-check
#		the server's CPU (user + system of every process of the cluster,
#		with the children each reaped, from /proc)
#		server-side TPC-C: the consistency conditions after every run
#		(bench/workloads/tpccsp_check.sql)
#	  bench/lib/steady_report.py turns them into per-transaction costs,
#	  medians and spreads of the rounds, and per-round ratios against heap.
#
#	  bash bench/steady.sh [options]
#
#	  Output directory (--out, default build-bench/steady-TIMESTAMP):
#		steady.csv		one line per run
#		sizes.csv		per workload family and contender: load seconds,
#						database size, nvm pool bytes used
#		checks.csv		server-side TPC-C's consistency check after each run
#		uptime.txt		the machine's load before every round
#		settings.md, summary.md (bench/lib/steady_report.py)
#		logs/			pgbench's output of every run, loads, server logs
#	  Runtime on 2 shared cores with the defaults: about 2 hours (two
#	  workloads x three contenders x three rounds of 3-minute runs, about
#	  55 minutes each, plus the loads: TPC-B at scale 50 about 3 minutes
#	  per contender, TPC-C's 4 warehouses about 5).
#
# Options:
#	--workloads "..."		tpcb and/or tpccsp-4wh (default both)
#	--contenders "..."		among heap nvm nvm-shm nvm-tmpfs (default the
#							first three)
#	--rounds R				rounds (default 3)
#	--seconds S				seconds per run (default 180)
#	--clients N				pgbench clients (default 4)
#	--scale S				TPC-B's scale (default 50)
#	--checkpoint-timeout T	checkpoint_timeout (default 30s)
#	--shared-buffers SIZE	shared_buffers (default 1GB)
#	--max-wal-size SIZE		max_wal_size (default 4GB)
#	--out DIR				output directory
#	--pg-config PATH		pg_config of the PostgreSQL to run on (default PG_CONFIG, else 15's)
#	--no-build				use the installed module as it is (default: build
#							build-bench/ as bench/run.sh does and install it)
#	Run as root (servers run as postgres) from the top directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=/usr/bin/python3
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=bench/lib/day.sh
. "$ROOT/bench/lib/day.sh"

WORKLOADS="tpcb tpccsp-4wh"
CONTENDERS="heap nvm nvm-shm"
ROUNDS=3
SECONDS_RUN=180
CLIENTS=4
SCALE=50
CKPT_TIMEOUT=30s
SHARED_BUFFERS=1GB
MAX_WAL_SIZE=4GB
MAX_TRIES=1000
OUT=
DO_BUILD=1
ARGS_GIVEN="$*"
while [ $# -gt 0 ]; do
	case "$1" in
		--workloads) WORKLOADS=${2:?}; shift ;;
		--contenders) CONTENDERS=${2:?}; shift ;;
		--rounds) ROUNDS=${2:?}; shift ;;
		--seconds) SECONDS_RUN=${2:?}; shift ;;
		--clients) CLIENTS=${2:?}; shift ;;
		--scale) SCALE=${2:?}; shift ;;
		--checkpoint-timeout) CKPT_TIMEOUT=${2:?}; shift ;;
		--shared-buffers) SHARED_BUFFERS=${2:?}; shift ;;
		--max-wal-size) MAX_WAL_SIZE=${2:?}; shift ;;
		--out) OUT=${2:?}; shift ;;
		--pg-config) PG_CONFIG=${2:?}; export PG_CONFIG; shift ;;
		--no-build) DO_BUILD=0 ;;
		-h | --help) sed -n '3,/^set -euo/p' "$0" | sed -e '$d' -e 's/^#\t\{0,1\}//'; exit 0 ;;
		*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
for v in $ROUNDS $SECONDS_RUN $CLIENTS $SCALE; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || nvm_die "rounds, seconds, clients and scale are positive counts, not $v"
done
for c in $CONTENDERS; do day_describe "$c" >/dev/null; done
for w in $WORKLOADS; do
	case "$w" in
		tpcb | tpccsp-4wh) ;;
		*) nvm_die "unknown workload $w (tpcb, tpccsp-4wh)" ;;
	esac
done

nvm_find_pg >&2
OUT=${OUT:-$ROOT/build-bench/steady-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
CLK_TCK=$(getconf CLK_TCK)
NPROC=$(nproc)

trap 'nvm_cleanup' EXIT
trap 'nvm_cleanup; exit 130' INT TERM

if [ "$DO_BUILD" = 1 ]; then
	nvm_log "building a release build in build-bench and installing it into $PG_PKGLIBDIR" >&2
	{ nvm_build "$ROOT" "$ROOT/build-bench" -Dbuildtype=release -Db_ndebug=if-release &&
		nvm_install "$ROOT/build-bench"; } >"$OUT/logs/build.log" 2>&1 ||
		nvm_die "build or install failed (log: $OUT/logs/build.log)"
fi

# the plan from the descriptors, at full size (TPC-B at --scale):
# FAM_LOAD, FAM_CHECK, WL_FAMILY, WL_ARGS ...
plan=$(NVM_BENCH_TPCB_SCALE=$SCALE "$PYTHON" "$ROOT/bench/lib/workloads.py" shell --mode full \
	--clients "$CLIENTS" --workloads "$WORKLOADS" --profile-points "") || exit 2
eval "$plan"

# pool_size FAMILY: nvm.pool_size, room for the data and what the runs add
# (the pool grows when it must)
pool_size()
{
	case "$1" in
		tpcb) awk -v s="$SCALE" 'BEGIN { mb = s * 60; if (mb < 2048) mb = 2048; printf "%dMB\n", mb }' ;;
		*) echo "${FAM_POOL[$1]}" ;;
	esac
}

# load C FAMILY: the family's database and data (the descriptor's load
# steps), every table read once, a CHECKPOINT; a line of sizes.csv
load()
{
	local c=$1 fam=$2 log=$OUT/logs/load-$2-$1.log step args t0 secs used=''
	t0=$EPOCHREALTIME
	{
		day_psql "$c" postgres "CREATE DATABASE $fam" || exit 1
		if [ "$c" != heap ]; then
			nvm_psql "${DAY_DIR[$c]}" "$fam" -c "CREATE EXTENSION nvmam" \
				-c "ALTER DATABASE $fam SET default_table_access_method = nvm" || exit 1
		fi
		while IFS= read -r step; do
			eval "args=($step)"
			case "${args[0]}" in
				psql) nvm_psql "${DAY_DIR[$c]}" "$fam" "${args[@]:1}" || exit 1 ;;
				pgbench) day_pgbench "$c" "${args[@]:1}" "$fam" || exit 1 ;;
				*) echo "unknown load step: $step"; exit 1 ;;
			esac
		done <<<"${FAM_LOAD[$fam]}"
	} >"$log" 2>&1 || { tail -n 20 "$log" >&2; nvm_die "$c: the load of $fam failed"; }
	secs=$(day_since "$t0")
	local bad
	bad=$(day_psql "$c" "$fam" "SELECT string_agg(c.relname || ' uses ' || a.amname, ', ')
		FROM pg_class c JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = 'public' AND a.amname <> '$([ "$c" = heap ] && echo heap || echo nvm)'")
	[ -z "$bad" ] || nvm_die "$c: tables of $fam in another access method: $bad"
	nvm_psql "${DAY_DIR[$c]}" "$fam" -c "DO \$\$ DECLARE r record; n bigint; BEGIN
		FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
				 WHERE c.relkind = 'r' AND s.nspname = 'public' LOOP
			EXECUTE format('SELECT count(*) FROM %s', r.t) INTO n;
		END LOOP; END \$\$" >>"$log" 2>&1
	day_psql "$c" postgres "CHECKPOINT" >/dev/null
	if [ "$c" != heap ]; then used=$(day_psql "$c" postgres "SELECT used_bytes FROM nvm_pool_stats()"); fi
	echo "$fam,$c,$secs,$(day_psql "$c" postgres "SELECT pg_database_size('$fam')"),$used" >>"$OUT/sizes.csv"
	nvm_log "$c: $fam loaded in $secs s" >&2
}

# autovacuum_settle C: waits (up to 30 s) until no autovacuum worker runs
# in the other contenders' clusters, so that their background work does not
# start inside C's run; C's own may run in it, as on a user's server
autovacuum_settle()
{
	local c=$1 o busy _
	for _ in $(seq 1 150); do
		busy=0
		for o in $CONTENDERS; do
			[ "$o" != "$c" ] || continue
			if [ "$(day_psql "$o" postgres "SELECT count(*) FROM pg_stat_activity
				WHERE backend_type = 'autovacuum worker'" 2>/dev/null)" != 0 ]; then
				busy=1
			fi
		done
		[ "$busy" = 1 ] || return 0
		sleep 0.2
	done
}

# check C FAMILY: the family's consistency check (server-side TPC-C); "ok",
# or what it found
check()
{
	local c=$1 fam=$2 lines bad=''
	[ -n "${FAM_CHECK[$fam]:-}" ] || { echo '-'; return; }
	if ! lines=$(nvm_psql "${DAY_DIR[$c]}" "$fam" -At -F ',' -f "${FAM_CHECK[$fam]}" 2>&1); then
		echo "error: $(head -c 200 <<<"$lines" | tr '\n,' '  ')"
		return
	fi
	bad=$(awk -F, '$NF != 0 { printf "%s%s=%s", (n++ ? " " : ""), $1, $NF }' <<<"$lines")
	echo "${bad:-ok}"
}

# run_once C WORKLOAD ROUND: one measured run; a line of steady.csv
run_once()
{
	local c=$1 w=$2 r=$3 fam=${WL_FAMILY[$2]} out s0 s1 cpu0 cpu1 p0 wb0 p1 wb1 off0 off1 args j
	local txns tps failed retried chk v0 v1
	# shellcheck disable=SC2034 # set by the eval of day_log_sum's lines
	local CHECKPOINTS CKPT_BUFFERS CKPT_SECONDS POOL_CKPTS POOL_FILES POOL_KB POOL_ROWS POOL_KEPT IMAGES
	# shellcheck disable=SC2034
	local IMAGE_ROWS IMAGE_MB REDO_SECONDS REBUILDS LOADED_ROWS POOL_CHANGED POOL_WHOLE POOL_SECONDS
	# shellcheck disable=SC2034
	local MERGES MERGED_KB LOAD_SECONDS LOAD_WORKERS
	eval "args=(${WL_ARGS[$w $CLIENTS]})"
	j=$((CLIENTS < NPROC ? CLIENTS : NPROC))
	out=$OUT/logs/run-$w-$c-r$r.txt
	autovacuum_settle "$c"
	day_psql "$c" postgres "CHECKPOINT" >/dev/null
	nvm_log "$w, round $r of $ROUNDS: $c (${SECONDS_RUN} s; load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	read -r -a s0 < <(day_stats "$c")
	cpu0=$(day_cpu_ticks "$c")
	read -r p0 wb0 < <(day_watch_io "$c")
	read -r -a v0 < <(day_pool_ckpt "$c")
	off0=$(day_log_size "$c")
	echo "# pgbench ${args[*]} -n -M prepared -c $CLIENTS -j $j -T $SECONDS_RUN --max-tries=$MAX_TRIES --failures-detailed ($DAY_PGOPTIONS)" >"$out"
	day_pgbench "$c" "${args[@]}" -n -M prepared -c "$CLIENTS" -j "$j" -T "$SECONDS_RUN" \
		--max-tries="$MAX_TRIES" --failures-detailed "$fam" >>"$out" 2>&1 || true
	sleep 1.2
	read -r -a s1 < <(day_stats "$c")
	cpu1=$(day_cpu_ticks "$c")
	read -r p1 wb1 < <(day_watch_io "$c")
	read -r -a v1 < <(day_pool_ckpt "$c")
	off1=$(day_log_size "$c")
	eval "$(day_log_sum "$c" "$off0" "$off1")"
	txns=$(awk '/^number of transactions actually processed/ { split($NF, a, "/"); print a[1]; exit }' "$out")
	tps=$(awk '/^tps/ { print $3; exit }' "$out")
	failed=$(awk '/^number of failed transactions/ { print $5; exit }' "$out")
	retried=$(awk '/^number of transactions retried/ { print $5; exit }' "$out")
	chk=$(check "$c" "$fam")
	[ "$p0" = "$p1" ] || wb0=-1		# the worker restarted: no cross-check
	echo "$w,$c,$r,$SECONDS_RUN,$CLIENTS,${tps:-0},${txns:-0},${failed:-0},${retried:-0},$((s1[0] - s0[0])),$((s1[1] - s0[1])),$((s1[2] - s0[2])),$((s1[3] - s0[3])),$((s1[4] - s0[4])),$((s1[5] - s0[5])),$CHECKPOINTS,$CKPT_SECONDS,$POOL_CKPTS,$POOL_FILES,$POOL_KB,$POOL_ROWS,$([ "$wb0" = -1 ] && echo '' || echo $((wb1 - wb0))),$(awk -v a="$cpu0" -v b="$cpu1" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / hz }'),$(cut -d' ' -f1 /proc/loadavg),$chk,$((v1[0] - v0[0])),$((v1[3] - v0[3])),$POOL_CHANGED,$POOL_WHOLE" >>"$OUT/steady.csv"
	if [ "$chk" != ok ] && [ "$chk" != - ]; then nvm_warn "$c, $w round $r: consistency check: $chk"; fi
	nvm_log "  $c: ${tps:-?} tps, $((s1[4] - s0[4])) checkpoints, pool files $(((v1[0] - v0[0]) >> 10)) kB (merges $(((v1[3] - v0[3]) >> 10)) kB), check $chk" >&2
}

DAY_PGOPTIONS='-c default_transaction_isolation=repeatable\ read'
echo "workload,contender,round,seconds,clients,tps,txns,failed,retried,wal_records,wal_fpi,wal_bytes,wal_syncs,checkpoints,ckpt_buffers,ckpt_logged,ckpt_logged_s,pool_ckpts,pool_files,pool_kb,pool_rows,watch_write_bytes,server_cpu_s,load1,check,pool_bytes,merged_bytes,pool_changed,pool_whole" >"$OUT/steady.csv"
echo "family,contender,load_s,database_bytes,pool_used_bytes" >"$OUT/sizes.csv"
: >"$OUT/uptime.txt"
T_START=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
read -r -a CONT <<<"$CONTENDERS"
n=${#CONT[@]}
for fam in "${FAMILIES[@]}"; do
	DAY_POOL_SIZE=$(pool_size "$fam")
	for c in "${CONT[@]}"; do
		day_make "$c" "$fam" \
			"shared_buffers = '$SHARED_BUFFERS'" \
			"max_connections = $((CLIENTS + 20))" \
			"synchronous_commit = on" \
			"wal_level = replica" \
			"max_wal_size = '$MAX_WAL_SIZE'" \
			"checkpoint_timeout = '$CKPT_TIMEOUT'" \
			"autovacuum = on" \
			"deadlock_timeout = '50ms'"
		load "$c" "$fam"
	done
	for w in "${WL_RUN[@]}"; do
		[ "${WL_FAMILY[$w]}" = "$fam" ] || continue
		for r in $(seq 1 "$ROUNDS"); do
			echo "$w round $r: $(uptime)" >>"$OUT/uptime.txt"
			for i in $(seq 0 $((n - 1))); do
				run_once "${CONT[$(((i + r - 1) % n))]}" "$w" "$r"
			done
		done
		echo "$w end: $(uptime)" >>"$OUT/uptime.txt"
	done
	for c in "${CONT[@]}"; do day_drop "$c"; done
done

{
	echo "- command: \`bash bench/steady.sh${ARGS_GIVEN:+ $ARGS_GIVEN}\`"
	echo "- started $T_START, ended $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the start $LOAD_START (uptime.txt: before every round)"
	echo "- $PG_VERSION_STRING; $("$PG_BINDIR/pgbench" --version); $NPROC CPU cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM; data directories on $(stat -f -c %T "$DAY_DISK")"
	echo "- nvmam: git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (with uncommitted changes in src/)')"
	echo "- $ROUNDS rounds of $SECONDS_RUN s runs per workload, contenders back to back in a rotating order; $CLIENTS clients (pgbench -j $((CLIENTS < NPROC ? CLIENTS : NPROC))), -M prepared, REPEATABLE READ, --max-tries=$MAX_TRIES"
	for fam in "${FAMILIES[@]}"; do echo "- ${FAM_SETTINGS[$fam]}"; done
	echo "- every cluster: shared_buffers = $SHARED_BUFFERS, max_wal_size = $MAX_WAL_SIZE, checkpoint_timeout = $CKPT_TIMEOUT (checkpoint_completion_target 0.9), autovacuum = on, synchronous_commit = on, wal_level = replica, log_checkpoints = on; a CHECKPOINT before each run; nvm.pool_size: $(for fam in "${FAMILIES[@]}"; do printf '%s %s; ' "$fam" "$(pool_size "$fam")"; done)"
	for c in "${CONT[@]}"; do echo "- $(day_describe "$c")"; done
} >"$OUT/settings.md"
# the scripts' paths as the repository names them, not as this machine does
sed -i "s|$ROOT/||g" "$OUT"/logs/run-*.txt "$OUT"/logs/load-*.log 2>/dev/null || true
"$PYTHON" "$ROOT/bench/lib/steady_report.py" "$OUT"

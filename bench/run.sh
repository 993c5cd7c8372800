#!/usr/bin/env bash
#
# bench/run.sh
#	  The benchmark suite: the MCSI paper's experiment (§5: YCSB A/B/C,
#	  TPC-C New-Order + Payment at 1, 4 and one warehouse per client, Fig. 10,
#	  12, 13 and Tables 4-6) through SQL with pgbench, plus pgbench's TPC-B and
#	  the engine-level benchmark (bench/engine/nvm_engine_bench.c) that drives
#	  the core with threads the way the paper did; and two row-level
#	  workloads, single-row INSERTs with an identity primary key and
#	  single-row UPDATEs of a non-indexed column.  Every run records the
#	  server's WAL fsyncs (pg_stat_wal), so the report shows fsyncs per
#	  transaction for every contender.
#
#	  The workloads are described in bench/workloads/*.toml, one file per
#	  family (the workloads that share a database and its load): scripts,
#	  pgbench arguments, sizes per mode, what the report shows and the
#	  targets.  bench/lib/workloads.py reads them for this script and for
#	  bench/lib/report.py; --list-workloads prints them.
#
#	  bench/run.sh [--quick | --full] [--out DIR] [options]
#
#	  Contenders, each on a fresh cluster of its own (made per workload
#	  family as a copy of one initdb, stopped immediately after it; a
#	  family's descriptor may leave some of a mode's default contenders out,
#	  skip_contenders: quick mode runs nvm-n2db in YCSB and TPC-C only, where
#	  the report compares it with MCSI as the paper does):
#		heap		heap, synchronous_commit = on, data directory (and WAL) on disk
#		nvm-mcsi-pagecache	nvm tables, MCSI, as a user on ordinary storage
#					has them: the pool at its default place (pg_nvm/pool,
#					a page-cache file in the data directory on disk) and
#					nvm.durability at its default (auto: through the WAL,
#					so each commit flushes its nvm redo as heap's flushes
#					its commit record), synchronous_commit = on: the first
#					contender against heap, both durable
#		nvm-mcsi	nvm tables, MCSI; pool in /dev/shm with nvm.durability =
#					pool, standing for persistent memory, which the machine
#					does not have (log-free commits; NOT durable here: the
#					pool is lost at a power loss); data directory (index
#					WAL) on disk, synchronous_commit = on
#		nvm-n2db	the same with nvm.concurrency_control = n2db
#		heap-tmpfs	heap, synchronous_commit = on, data directory (and WAL) in
#					/dev/shm (not durable): heap with its WAL in memory, like
#					the pools standing for persistent memory (full mode's
#					default; in quick mode with --contenders)
#		nvm-mcsi-tmpfs	nvm-mcsi with its data directory, so the WAL of
#					indexes and catalog, in /dev/shm like heap-tmpfs: the
#					like-for-like contender against heap-tmpfs, neither
#					durable (full mode's default; quick with --contenders)
#	  Optional (--contenders): nvm-n2db-pagecache (nvm-mcsi-pagecache with
#	  nvm.concurrency_control = n2db); nvm-pisces, nvm-pomvcc (nvm-mcsi with
#	  nvm.concurrency_control = pisces or pomvcc: the other designs of
#	  doc/modes.md's table of modes); heap-async (heap, synchronous_commit = off);
#	  nvm-n2db-tmpfs (nvm-n2db with its data directory in /dev/shm);
#	  heap-logical, nvm-mcsi-logical, nvm-n2db-logical (heap, nvm-mcsi and
#	  nvm-n2db with wal_level = logical instead of replica: what logging
#	  row changes for logical decoding costs; no slot consumes them).
#	  Every transaction runs at REPEATABLE READ (snapshot isolation); pgbench
#	  retries serialization failures and deadlocks (--max-tries) and counts
#	  commits, retries and failures apart.
#
#	  Repetitions run in rounds: --reps N runs every point (workload and
#	  client count) N times in a row.  Quick mode interleaves the contenders:
#	  all their clusters are up at once, and in every round of a point each
#	  contender runs once, back to back (in an order that rotates from round
#	  to round), so the noise of a shared machine falls on all of them alike
#	  and the ratio of two contenders within one round is measured seconds
#	  apart.  Full mode runs one contender after the other (its cluster alone
#	  in memory and /dev/shm: paper-sized data of four clusters does not fit
#	  at once on a small machine), each point in 3 rounds by default; the
#	  report pairs round r of two contenders as in quick mode, though taken
#	  minutes apart, so its noise also holds the machine's drift between
#	  them, and shows and judges the spread the same way.  Autovacuum is off
#	  (except in the families whose descriptor turns it on: server-side
#	  TPC-C) and each run starts right after a CHECKPOINT of its own
#	  cluster, so no background work lands in another run's measurement.
#	  A family whose descriptor names a check (server-side TPC-C: its
#	  consistency conditions) runs it on every contender after every run;
#	  checks.csv records each, the report shows them, and a violated
#	  condition makes this script end with status 1.
#
#	  Output directory (default build-bench/bench-MODE-TIMESTAMP, and
#	  build-bench/bench-latest points to it; build-bench-pg18/ on
#	  PostgreSQL 18):
#		settings.md		PostgreSQL version, machine, settings of every contender,
#						where WAL and pool live, sizes, clients, isolation
#		results.csv		one line per pgbench run
#		engine.csv		one line per engine-level point (header added here)
#		engine.md		the engine benchmark's own tables
#		report.md		verdicts with their spread, Tables 4/5/6 shapes, ratios,
#						paper numbers, profile, model
#		fig10_ycsb_throughput.png, fig12_tpcc_throughput.png,
#		fig13_latency.png, tpcb.png, rows.png, engine.png
#		checks.csv		the family's check after each run (families with one)
#		phases.csv		the wall time of each phase: setup, build, each
#						family's load, runs, profile and teardown, the engine
#						level, the report
#		profile/		with --profile: wait events and perf top symbols
#		logs/			pgbench output of every run, server logs, load logs;
#						run-times.csv and times.csv, what each run, summary,
#						disk sample and load spent outside pgbench
#	  Progress (contender, workload, clients, estimated time left) goes to
#	  stderr; the main comparison table and the verdicts to stdout at the end.
#
# Options:
#	--quick					small data, 4 clients, 5 rounds of 1 s runs (default;
#							about 5 minutes on 2 idle cores, the build of
#							an unchanged tree included)
#	--full					paper sizes (YCSB 1M rows, TPC-C with standard items and
#							customers), clients 1 2 4 8 16 32, 3 rounds of 5 s runs
#							(about 2 hours on 2 cores, estimated)
#	--order interleaved|serial	run order (default: quick interleaved, full serial)
#	--out DIR				output directory
#	--clients "1 4 16"		client counts (default: quick 4, full 1 2 4 8 16 32)
#	--time S				seconds per pgbench run (default: quick 1, full 5)
#	--workloads "..."		among those of bench/workloads/*.toml (default: all;
#							--list-workloads)
#	--reps N				rounds: run every point N times in a row, each time
#							interleaved with the other contenders; the report
#							takes the median and judges the targets by the
#							noise interval of the per-round ratios (default:
#							quick 5, full 3; with 2 or more the report
#							measures the run's noise)
#	--contenders "..."		among heap heap-tmpfs nvm-mcsi nvm-n2db nvm-pisces nvm-pomvcc heap-async
#							nvm-mcsi-tmpfs nvm-n2db-tmpfs nvm-mcsi-pagecache
#							nvm-n2db-pagecache heap-logical
#							nvm-mcsi-logical nvm-n2db-logical (default: quick
#							heap nvm-mcsi-pagecache nvm-mcsi nvm-n2db, full
#							the same and heap-tmpfs nvm-mcsi-tmpfs; less
#							those a family's descriptor leaves out of the
#							mode; a list given here runs in every family)
#	--drain-delay "NS ..."	sensitivity: also run nvm-mcsi and nvm-n2db with
#							nvm.emulated_drain_delay_ns = NS (off by default)
#	--profile, --no-profile	after the measured runs of a family, profile given
#							points on every contender (extra runs, not in
#							results.csv): wait events sampled from
#							pg_stat_activity every 10 ms, and the backends' top
#							symbols with perf when it works; the report explains
#							missed targets with them (default: full mode on,
#							quick mode off, to stay within its 6 minutes)
#	--profile-points "W:N ..."	what to profile, workload:clients (default: quick
#							"tpcc-1wh:8", full "tpcc-1wh:8 tpcc-4wh:8 ycsb-a:8")
#	--no-engine				skip the engine-level benchmark
#	--no-build				use the installed module and build-bench as they are
#	--pg-config PATH		pg_config of the PostgreSQL to run on, 15 or 18
#							(default: PG_CONFIG, else the version
#							NVM_PG_VERSION names; see below)
#	--keep-logs				keep pgbench's per-transaction logs
#	--list-workloads		print the workloads, their families' sizes and targets
#
# Environment overrides (mode defaults in brackets, quick / full):
#	the data sizes of each family: see --list-workloads (e.g.
#	NVM_BENCH_YCSB_ROWS [50000 / 1000000], NVM_BENCH_TPCC_ITEMS [2000 / 100000])
#	NVM_BENCH_POOL_SIZE [1GB / per family, up to 7GB] (room to spare: updates
#		prune old versions, and autovacuum is off during the runs)
#	NVM_BENCH_SHARED_BUFFERS [256MB / 1GB]	NVM_BENCH_MAX_WAL_SIZE [1GB / 2GB]
#	NVM_BENCH_MAX_TRIES [1000]				NVM_BENCH_DATA_DIR [/var/tmp] (disk)
#	NVM_BENCH_ENGINE_THREADS [1,2 / 1,2,4,8,16]
#	NVM_BENCH_ENGINE_SECONDS [0.2 / 0.5]	NVM_BENCH_ENGINE_ROWS [20000 / 1000000]
#	NVM_BENCH_ENGINE_REPS [1 / 2] (repetitions; the report keeps each point's best)
#	NVM_BENCH_NVM_CONF="a = 1; b = 2"		extra postgresql.conf lines for nvm clusters
#											(e.g. "nvm.write_conflict = abort")
#	NVM_BENCH_PERF_CALLGRAPH=fp|dwarf		--profile: perf records call chains, kept as
#										profile/*.perf-script.txt.gz (bench/tools/am_share.py)
#	NVM_SKIP_PACKAGES=1						do not check for Debian packages
#	PG_CONFIG=path							pg_config of PostgreSQL 15 or 18
#	NVM_PG_VERSION=18						PostgreSQL 18 (built once by
#											regress/build-postgresql.sh 18)
#											instead of 15, when neither
#											--pg-config nor PG_CONFIG is given
#	The build and the output go to build-bench/ for PostgreSQL 15 and to
#	build-bench-pg18/ for 18, so that both coexist; settings.md and
#	report.md name the version.

set -euo pipefail

T_START=${EPOCHREALTIME/./}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
PYTHON=/usr/bin/python3
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=regress/lib/packages.sh
. "$ROOT/regress/lib/packages.sh"

usage()
{
	sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^#\t\{0,1\}//' -e 's/^#$//'
	exit "${1:-0}"
}

# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------

MODE=quick
OUT=
OPT_CLIENTS=
OPT_TIME=
OPT_WORKLOADS=
OPT_CONTENDERS=
OPT_REPS=
ORDER=
DRAIN_DELAYS=
PROFILE=
PROFILE_POINTS=
RUN_ENGINE=1
DO_BUILD=1
OPT_PG_CONFIG=
KEEP_LOGS=0
LIST=0
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) MODE=quick ;;
		--full) MODE=full ;;
		--out) OUT=${2:?--out needs a directory}; shift ;;
		--out=*) OUT=${1#--out=} ;;
		--clients) OPT_CLIENTS=${2:?}; shift ;;
		--time) OPT_TIME=${2:?}; shift ;;
		--reps) OPT_REPS=${2:?}; shift ;;
		--workloads) OPT_WORKLOADS=${2:?}; shift ;;
		--contenders) OPT_CONTENDERS=${2:?}; shift ;;
		--order) ORDER=${2:?}; shift ;;
		--drain-delay) DRAIN_DELAYS=${2:?}; shift ;;
		--profile) PROFILE=1 ;;
		--no-profile) PROFILE=0 ;;
		--profile-points) PROFILE_POINTS=${2:?}; shift ;;
		--no-engine) RUN_ENGINE=0 ;;
		--no-build) DO_BUILD=0 ;;
		--pg-config) OPT_PG_CONFIG=${2:?--pg-config needs a path}; shift ;;
		--pg-config=*) OPT_PG_CONFIG=${1#--pg-config=} ;;
		--keep-logs) KEEP_LOGS=1 ;;
		--list-workloads) LIST=1 ;;
		-h | --help) usage 0 ;;
		*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
if [ "$LIST" = 1 ]; then
	exec "$PYTHON" "$BENCH/lib/workloads.py" list --mode "$MODE"
fi

if [ "$MODE" = quick ]; then
	CLIENTS=${OPT_CLIENTS:-4}
	DURATION=${OPT_TIME:-1}
	REPS=${OPT_REPS:-5}
	SHARED_BUFFERS=${NVM_BENCH_SHARED_BUFFERS:-256MB}
	MAX_WAL_SIZE=${NVM_BENCH_MAX_WAL_SIZE:-1GB}
	ORDER=${ORDER:-interleaved}
	ENGINE_THREADS=${NVM_BENCH_ENGINE_THREADS:-1,2}
	ENGINE_SECONDS=${NVM_BENCH_ENGINE_SECONDS:-0.2}
	ENGINE_WARMUP=0.05
	ENGINE_ROWS=${NVM_BENCH_ENGINE_ROWS:-20000}
	ENGINE_REPS=${NVM_BENCH_ENGINE_REPS:-1}
	# heap-tmpfs runs in full mode (and with --contenders): with nvm at its
	# default place as a fourth contender, quick mode stays within 6 minutes
	DEFAULT_CONTENDERS="heap nvm-mcsi-pagecache nvm-mcsi nvm-n2db"
	# no profile by default (--profile adds its point, about 20 s)
	PROFILE=${PROFILE:-0}
	PROFILE_POINTS=${PROFILE_POINTS:-tpcc-1wh:8}
else
	CLIENTS=${OPT_CLIENTS:-1 2 4 8 16 32}
	DURATION=${OPT_TIME:-5}
	REPS=${OPT_REPS:-3}
	SHARED_BUFFERS=${NVM_BENCH_SHARED_BUFFERS:-1GB}
	MAX_WAL_SIZE=${NVM_BENCH_MAX_WAL_SIZE:-2GB}
	ORDER=${ORDER:-serial}
	ENGINE_THREADS=${NVM_BENCH_ENGINE_THREADS:-1,2,4,8,16}
	ENGINE_SECONDS=${NVM_BENCH_ENGINE_SECONDS:-0.5}
	ENGINE_WARMUP=0.1
	ENGINE_ROWS=${NVM_BENCH_ENGINE_ROWS:-1000000}
	ENGINE_REPS=${NVM_BENCH_ENGINE_REPS:-2}
	DEFAULT_CONTENDERS="heap nvm-mcsi-pagecache heap-tmpfs nvm-mcsi nvm-n2db nvm-mcsi-tmpfs"
	PROFILE=${PROFILE:-1}
	PROFILE_POINTS=${PROFILE_POINTS:-tpcc-1wh:8 tpcc-4wh:8 ycsb-a:8}
fi
[[ $REPS =~ ^[1-9][0-9]*$ ]] || nvm_die "--reps takes a positive count, not $REPS"
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || nvm_die "--time takes whole seconds, not $DURATION"
CONTENDERS=${OPT_CONTENDERS:-$DEFAULT_CONTENDERS}
for d in $DRAIN_DELAYS; do
	[[ $d =~ ^[0-9]+$ ]] || nvm_die "--drain-delay takes nanoseconds: $d"
	CONTENDERS="$CONTENDERS nvm-mcsi@$d nvm-n2db@$d"
done
MAX_TRIES=${NVM_BENCH_MAX_TRIES:-1000}
case "$ORDER" in
	interleaved | serial) ;;
	*) nvm_die "--order is interleaved or serial, not $ORDER" ;;
esac
DISK_BASE=${NVM_BENCH_DATA_DIR:-/var/tmp}
ISOLATION="repeatable read"
NPROC=$(nproc)
CLK_TCK=$(getconf CLK_TCK)

for c in $CONTENDERS; do
	case "${c%@*}" in
		heap | heap-tmpfs | heap-async | nvm-mcsi | nvm-n2db | nvm-mcsi-tmpfs | nvm-n2db-tmpfs) ;;
		nvm-pisces | nvm-pomvcc) ;;
		nvm-mcsi-pagecache | nvm-n2db-pagecache) ;;
		heap-logical | nvm-mcsi-logical | nvm-n2db-logical) ;;
		*) nvm_die "unknown contender $c" ;;
	esac
done
MAX_CLIENTS=0
for n in $CLIENTS; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || nvm_die "bad client count $n"
	if [ "$n" -gt "$MAX_CLIENTS" ]; then MAX_CLIENTS=$n; fi
done
if [ "$PROFILE" != 1 ]; then PROFILE_POINTS=; fi

# ---------------------------------------------------------------------------
# packages and PostgreSQL
# ---------------------------------------------------------------------------

if ! nvm_truthy "${NVM_SKIP_PACKAGES:-}"; then
	nvm_install_packages >&2 || nvm_die "cannot install the packages nvmam needs"
fi
# PostgreSQL 15 or 18: --pg-config, else PG_CONFIG, else the version
# NVM_PG_VERSION names (15 by default; 18 is built the first time)
if [ -n "$OPT_PG_CONFIG" ]; then
	PG_CONFIG=$OPT_PG_CONFIG
fi
nvm_find_pg >&2
# WAL fsyncs of a whole server: PostgreSQL 18 counts them in pg_stat_io
# and the WAL's insert position, in bytes, for the WAL bytes of a run
WAL_POS_SQL="pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint"
if [ "$PG_MAJOR" -ge 18 ]; then
	WAL_SYNC_SQL="SELECT (SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal') || ' ' || $WAL_POS_SQL"
	WAL_SYNC_SOURCE="pg_stat_io's WAL fsyncs"
else
	WAL_SYNC_SQL="SELECT wal_sync || ' ' || $WAL_POS_SQL FROM pg_stat_wal"
	WAL_SYNC_SOURCE="pg_stat_wal.wal_sync"
fi

# build-bench, or build-bench-pg18 for PostgreSQL 18
BUILD_DIR=$ROOT/$(nvm_build_dir_name build-bench)
STAMP=$(date -u +%Y%m%d-%H%M%S)
OUT=${OUT:-$BUILD_DIR/bench-$MODE-$STAMP}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/results.csv" "$OUT/engine.csv" "$OUT/modules.csv" "$OUT/pool-usage.csv" "$OUT/pool-storage.txt" \
	"$OUT/checks.csv" "$OUT/disk.csv" "$OUT/phases.csv" "$OUT/logs/run-times.csv"
echo "phase,start_s,seconds" >"$OUT/phases.csv"
echo "run_id,contender,workload,round,finish_prev_ms,settle_ms,checkpoint_ms,before_ms,pgbench_ms" >"$OUT/logs/run-times.csv"
# phase NAME: ends the phase that ran so far and begins NAME (phases.csv:
# each phase's start, in seconds since this script started, and its wall
# time; the first phase, setup, began with the script)
PHASE=setup
PHASE_T=$T_START
phase()
{
	local now=${EPOCHREALTIME/./}
	awk -v p="$PHASE" -v s="$PHASE_T" -v n="$now" -v t0="$T_START" \
		'BEGIN { printf "%s,%.1f,%.1f\n", p, (s - t0) / 1e6, (n - s) / 1e6 }' >>"$OUT/phases.csv"
	PHASE=$1 PHASE_T=$now
}
T0=$(date +%s)
LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)

# progress and messages go to stderr; stdout gets the final table only
say()
{
	printf '%s\n' "$*" >&2
}

# shellcheck disable=SC2317 # called through trap
on_exit()
{
	local rc=$?
	nvm_kill_group
	nvm_cleanup
	if [ -n "${RAW:-}" ]; then rm -rf "$RAW"; fi
	if [ -n "${TEMPLATE:-}" ]; then rm -rf "$TEMPLATE"; fi
	exit "$rc"
}
trap on_exit EXIT
trap 'nvm_kill_group; exit 130' INT TERM

# ---------------------------------------------------------------------------
# plots, build, install
# ---------------------------------------------------------------------------

if ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
	say "==> installing python3-matplotlib (for the plots)"
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		python3-matplotlib </dev/null >"$OUT/logs/matplotlib-install.log" 2>&1 ||
		nvm_warn "python3-matplotlib could not be installed: no plots"
fi
# the plan from the workload descriptors (python3 comes with the packages) (bench/workloads/*.toml): WL_RUN
# (the workloads in run order), FAMILIES, and per workload its family
# (WL_FAMILY), per "workload clients" pgbench's arguments (WL_ARGS) and the
# warehouses column (WL_WH), per family its pool size, load and settings line;
# the engine level's workloads (ENGINE_WL) and what each writes (ENGINE_MB)
plan=$("$PYTHON" "$BENCH/lib/workloads.py" shell --mode "$MODE" --clients "$CLIENTS" \
	--workloads "$OPT_WORKLOADS" --profile-points "$PROFILE_POINTS") || exit 2
eval "$plan"
WORKLOADS=" ${WL_RUN[*]} "
# profile points (workload:clients) among the workloads that run
PROFILES=()
for p in $PROFILE_POINTS; do
	[[ $p =~ ^([a-z0-9-]+):([1-9][0-9]*)$ ]] || nvm_die "--profile-points takes workload:clients, not $p"
	[[ $WORKLOADS == *" ${p%:*} "* ]] && PROFILES+=("$p")
done
# most connections a run opens (the measured ones, or a profile run)
MAX_CONN=$MAX_CLIENTS
for p in "${PROFILES[@]}"; do
	if [ "${p#*:}" -gt "$MAX_CONN" ]; then MAX_CONN=${p#*:}; fi
done

if [ "$DO_BUILD" = 1 ]; then
	phase build
	say "==> building a release build in ${BUILD_DIR#"$ROOT"/}"
	nvm_build "$ROOT" "$BUILD_DIR" -Dbuildtype=release -Db_ndebug=if-release \
		>"$OUT/logs/build.log" 2>&1 || {
		tail -n 40 "$OUT/logs/build.log" >&2
		nvm_die "build failed (log: $OUT/logs/build.log)"
	}
	say "==> installing into $PG_PKGLIBDIR"
	nvm_install "$BUILD_DIR" >"$OUT/logs/install.log" 2>&1 || {
		cat "$OUT/logs/install.log" >&2
		nvm_die "install failed: run as root (or with sudo)"
	}
fi

phase setup
AS_PG=()
if [ "$(id -u)" -eq 0 ]; then
	AS_PG=(runuser -u "$(nvm_pg_user)" --)
fi
# pgbench's per-transaction logs: written by the server user, summarised and
# removed after each run
RAW=$(nvm_pg_tmpdir "$DISK_BASE" "nvmam-bench-txlogs")
# one initdb for the run: every cluster starts as a copy of it
# (nvm_cluster_template), not from an initdb of its own
TEMPLATE=$(nvm_pg_tmpdir "$DISK_BASE" "nvmam-bench-template")
nvm_cluster_template "$TEMPLATE" || nvm_die "initdb failed"

# ---------------------------------------------------------------------------
# time estimate
# ---------------------------------------------------------------------------

# family_contenders FAMILY: the contenders that run in the family: every
# one --contenders names, else the mode's default list less those the
# family's descriptor leaves out in this mode (FAM_SKIP; a drain-delay
# contender goes with its base)
family_contenders()
{
	local c out=''
	for c in $CONTENDERS; do
		if [ -z "$OPT_CONTENDERS" ] && [[ " ${FAM_SKIP[$1]:-} " == *" ${c%@*} "* ]]; then continue; fi
		out+="${out:+ }$c"
	done
	printf '%s' "$out"
}

declare -A FAM_CONT
FAM_NOW=
TOTAL_RUNS=0
LOADS_LEFT=0
PROFILE_RUNS_LEFT=0
for fam in "${FAMILIES[@]}"; do
	FAM_CONT[$fam]=$(family_contenders "$fam")
	LOADS_LEFT=$((LOADS_LEFT + $(wc -w <<<"${FAM_CONT[$fam]}")))
done
for w in "${WL_RUN[@]}"; do
	for n in $CLIENTS; do
		[ "${WL_UPTO[$w]:-0}" = 0 ] || [ "$n" -le "${WL_UPTO[$w]}" ] || continue
		TOTAL_RUNS=$((TOTAL_RUNS + $(wc -w <<<"${FAM_CONT[${WL_FAMILY[$w]}]}") * REPS))
	done
done
DONE_RUNS=0
RUN_US=0			# wall time spent in the runs measured so far (RUNS_TIMED)
RUNS_TIMED=0
# first guesses, replaced by measurements as they come
EST_RUN=$((DURATION + 1))
if [ "$MODE" = quick ]; then EST_LOAD=4; else EST_LOAD=50; fi
PROFILE_SECS=$((DURATION > 2 ? DURATION : 2))
for p in "${PROFILES[@]}"; do
	for c in ${FAM_CONT[${WL_FAMILY[${p%:*}]}]}; do
		[[ $c == *@* ]] || PROFILE_RUNS_LEFT=$((PROFILE_RUNS_LEFT + 1))
	done
done
LOAD_SECS=0
LOADS_DONE=0
# the engine level runs in steps (one workload, all thread counts, both modes)
ENGINE_STEPS_LEFT=0
ENGINE_STEPS_DONE=0
ENGINE_SECS=0
if [ "$RUN_ENGINE" = 1 ]; then
	ENGINE_STEPS_LEFT=$((${#ENGINE_WL[@]} * ENGINE_REPS * (1 + $(wc -w <<<"$DRAIN_DELAYS"))))
fi
# per point: run, warm-up, load (~2.5 s per 1M rows), pool creation (~0.85 s
# per GB here, about 2 s per second run)
ENGINE_STEP_EST=$(awk -v t="$(tr ',' ' ' <<<"$ENGINE_THREADS" | wc -w)" -v s="$ENGINE_SECONDS" \
	-v w="$ENGINE_WARMUP" -v r="$ENGINE_ROWS" \
	'BEGIN { printf "%d", 2 * t * (3 * (s + w) + 0.3 + 2.5 * r / 1e6) }')

eta()
{
	local per_run=$((EST_RUN * 1000000)) per_load=$EST_LOAD per_step=$ENGINE_STEP_EST left
	# µs per run, and about 0.3 s to summarise each
	if [ "$RUNS_TIMED" -gt 0 ]; then per_run=$((RUN_US / RUNS_TIMED + 300000)); fi
	if [ "$LOADS_DONE" -gt 0 ]; then per_load=$((LOAD_SECS / LOADS_DONE)); fi
	if [ "$ENGINE_STEPS_DONE" -gt 0 ]; then per_step=$((ENGINE_SECS / ENGINE_STEPS_DONE)); fi
	left=$(((TOTAL_RUNS - DONE_RUNS) * per_run / 1000000 + LOADS_LEFT * per_load + ENGINE_STEPS_LEFT * per_step +
		PROFILE_RUNS_LEFT * (PROFILE_SECS + 3)))
	printf '%dm%02ds' $((left / 60)) $((left % 60))
}

progress()
{
	printf '[%3d/%d, elapsed %ds, ~%s left] %s\n' "$DONE_RUNS" "$TOTAL_RUNS" \
		$(($(date +%s) - T0)) "$(eta)" "$*" >&2
}

# ---------------------------------------------------------------------------
# clusters
# ---------------------------------------------------------------------------

declare -A CDIR CAM CSYNC CDELAY CWAL CCC CSHM CPC

fs_of()
{
	printf '%s (%s)' "$1" "$(stat -f -c %T "$1" 2>/dev/null || echo '?')"
}

# pg CONTENDER PROG ARGS...: a client program against the contender's cluster
pg()
{
	local c=$1 prog=$2
	shift 2
	nvm_as_pg env PGHOST="${CDIR[$c]}" PGPORT="$(cat "${CDIR[$c]}/port")" PGUSER=postgres \
		"$PG_BINDIR/$prog" "$@"
}

psql_c()
{
	local c=$1 db=$2
	shift 2
	pg "$c" psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"
}

# prepare_contender NAME FAMILY: the directories and settings of a fresh
# cluster for NAME (nothing started yet; cleaned up by nvm_cleanup)
prepare_contender()
{
	local c=$1 fam=$2 base=$DISK_BASE sync=on am=heap cc='' delay=0 wal=replica dir shm='' pc=0
	case "${c%@*}" in
		heap) ;;
		heap-logical) wal=logical ;;
		nvm-mcsi-logical) am=nvm cc=mcsi wal=logical ;;
		nvm-n2db-logical) am=nvm cc=n2db wal=logical ;;
		heap-tmpfs) base=/dev/shm ;;
		heap-async) sync=off ;;
		nvm-mcsi) am=nvm cc=mcsi ;;
		nvm-n2db) am=nvm cc=n2db ;;
		nvm-pisces) am=nvm cc=pisces ;;
		nvm-pomvcc) am=nvm cc=pomvcc ;;
		nvm-mcsi-tmpfs) am=nvm cc=mcsi base=/dev/shm ;;
		nvm-n2db-tmpfs) am=nvm cc=n2db base=/dev/shm ;;
		nvm-mcsi-pagecache) am=nvm cc=mcsi pc=1 ;;
		nvm-n2db-pagecache) am=nvm cc=n2db pc=1 ;;
	esac
	if [[ $c == *@* ]]; then delay=${c#*@}; fi
	dir=$(nvm_pg_tmpdir "$base" "nvmam-bench-${c//@/-}") || return 1
	nvm_cleanup_add "nvm_cluster_stop '$dir'; cp -f '$dir/server.log' '$OUT/logs/server-$fam-${c//@/-}.log' 2>/dev/null; rm -rf '$dir'"
	if [ "$am" = nvm ] && [ "$pc" = 0 ]; then
		shm=$(nvm_pg_tmpdir /dev/shm "nvmam-bench-pool") || return 1
		nvm_cleanup_add "rm -rf '$shm'"
	fi
	CDIR[$c]=$dir CAM[$c]=$am CSYNC[$c]=$sync CDELAY[$c]=$delay CWAL[$c]=$wal CCC[$c]=$cc CSHM[$c]=$shm CPC[$c]=$pc
}

# start_contender NAME FAMILY: initdb, settings and start of NAME's cluster
# (prepared by prepare_contender)
start_contender()
{
	local c=$1 fam=$2 dir=${CDIR[$1]} cc=${CCC[$1]} delay=${CDELAY[$1]}
	nvm_cluster_init "$dir" "$(nvm_free_port)" "$TEMPLATE/data" || return 1
	nvm_cluster_conf "$dir" \
		"shared_buffers = '$SHARED_BUFFERS'" \
		"max_connections = $((MAX_CONN + 20))" \
		"synchronous_commit = ${CSYNC[$c]}" \
		"wal_level = ${CWAL[$c]}" \
		"max_wal_size = '$MAX_WAL_SIZE'" \
		"checkpoint_timeout = '1d'" \
		"autovacuum = ${FAM_AUTOVACUUM[$fam]:-off}" \
		"deadlock_timeout = '50ms'" \
		"default_transaction_isolation = 'read committed'"
	if [ "${CAM[$c]}" = nvm ]; then
		nvm_cluster_conf "$dir" \
			"shared_preload_libraries = 'nvmam'" \
			"nvm.pool_size = '${FAM_POOL[$fam]}'" \
			"nvm.concurrency_control = '$cc'"
		if [ "${CPC[$c]}" = 0 ]; then
			# the pool in /dev/shm stands for persistent memory, which the
			# machine does not have: not durable here
			nvm_cluster_conf "$dir" "nvm.pool_path = '${CSHM[$c]}/pool'" "nvm.durability = 'pool'"
		fi
		if [ "$delay" != 0 ]; then
			nvm_cluster_conf "$dir" "nvm.emulated_drain_delay_ns = $delay"
		fi
		if [ -n "${NVM_BENCH_NVM_CONF:-}" ]; then
			local line extra
			IFS=';' read -r -a extra <<<"$NVM_BENCH_NVM_CONF"
			for line in "${extra[@]}"; do
				nvm_cluster_conf "$dir" "$line"
			done
		fi
	fi
	nvm_cluster_start "$dir" || return 1
	# the module this cluster preloaded (others may install new builds meanwhile)
	printf '%s,%s,%s,%s\n' "$fam" "$c" "$(date -u +%FT%TZ)" \
		"$(md5sum "$PG_PKGLIBDIR/nvmam.so" 2>/dev/null | cut -c1-12)" >>"$OUT/modules.csv"
	if [ "${CAM[$c]}" = nvm ]; then
		local mode
		mode=$(pg "$c" psql -X -At -d postgres -c "SHOW nvm.concurrency_control") || return 1
		[ "$mode" = "$cc" ] || { nvm_warn "$c: server runs nvm.concurrency_control = $mode"; return 1; }
		if [ "$delay" != 0 ]; then
			mode=$(pg "$c" psql -X -At -d postgres -c "SHOW nvm.emulated_drain_delay_ns" 2>/dev/null) || mode=
			[ "$mode" = "$delay" ] || {
				nvm_warn "$c: nvm.emulated_drain_delay_ns is not available in the installed module"
				return 1
			}
		fi
	fi
}

# create_db CONTENDER DB: the database, with nvm as its default access method
# for nvm contenders
create_db()
{
	local c=$1 db=$2
	psql_c "$c" postgres -c "CREATE DATABASE $db" || return 1
	if [ "${CAM[$c]}" = nvm ]; then
		psql_c "$c" "$db" -c "CREATE EXTENSION nvmam" \
			-c "ALTER DATABASE $db SET default_table_access_method = nvm" || return 1
	fi
}

# check_am CONTENDER DB: every table of DB uses the contender's access method
check_am()
{
	local c=$1 db=$2 bad
	bad=$(pg "$c" psql -X -At -d "$db" -c \
		"SELECT c.relname || ' uses ' || a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		 JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE c.relkind = 'r' AND n.nspname = 'public' AND a.amname <> '${CAM[$c]}'") || return 1
	if [ -n "$bad" ]; then
		nvm_warn "$c: tables not using ${CAM[$c]}: $bad"
		return 1
	fi
}

# load CONTENDER FAMILY: the family's database and data, by the load steps
# of its descriptor (psql scripts, or pgbench -i)
load()
{
	local c=$1 fam=$2 log=$OUT/logs/load-$1-$2.log step args
	{
		create_db "$c" "$fam" || exit 1
		while IFS= read -r step; do
			eval "args=($step)"
			case "${args[0]}" in
				psql) psql_c "$c" "$fam" "${args[@]:1}" || exit 1 ;;
				pgbench) pg "$c" pgbench "${args[@]:1}" "$fam" || exit 1 ;;
				*) echo "unknown load step: $step"; exit 1 ;;
			esac
		done <<<"${FAM_LOAD[$fam]}"
	} >"$log" 2>&1 || { tail -n 20 "$log" >&2; return 1; }
	check_am "$c" "$fam" || return 1
	# read every row once, so no measured run pays for first touches after
	# the load (heap: hint bits; nvm: version status look-ups)
	psql_c "$c" "$fam" -c "DO \$\$ DECLARE r record; n bigint; BEGIN
		FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
				 WHERE c.relkind = 'r' AND s.nspname = 'public' LOOP
			EXECUTE format('SELECT count(*) FROM %s', r.t) INTO n;
		END LOOP; END \$\$" >>"$log" 2>&1 || return 1
	psql_c "$c" postgres -c CHECKPOINT
}

# ---------------------------------------------------------------------------
# one run
# ---------------------------------------------------------------------------

RUN_ID=0
declare -A DONE_KEY		# "contender clients arguments round" -> run id
declare -A FAILED_CONT	# contender -> reason it is skipped in this family
# a run's summary waits until the server reported its WAL fsyncs (within a
# second of the run's end); meanwhile the other contenders run.  Per
# contender: the finished run awaiting its summary.
declare -A PEND_END PEND_S0 PEND_OUT PEND_META PEND_RUN PEND_CPU0 PEND_CLIENT PEND_CHECK

# workload_args WORKLOAD CLIENTS: pgbench's arguments in ARGS, the
# warehouses column (TPC-C: warehouses in play; TPC-B: scale) in NWH
workload_args()
{
	eval "ARGS=(${WL_ARGS[$1 $2]})"
	NWH=${WL_WH[$1 $2]}
}

# wal_syncs CONTENDER: the WAL fsyncs of the contender's server so far
# (WAL_SYNC_SQL: pg_stat_wal, or 18's pg_stat_io; processes report theirs
# within a second) and its WAL insert position in bytes, as "FSYNCS BYTES"
wal_syncs()
{
	pg "$1" psql -X -At -d postgres -c "$WAL_SYNC_SQL" 2>/dev/null || echo ''
}

# The CPU readings around each run use shell builtins only: on a loaded
# machine every process started costs tens of ms, several times per run.

# stat_fields PID: the fields of /proc/PID/stat after "pid (comm) " in the
# array STAT (STAT[0] is field 3, the state; field k is STAT[k - 3]);
# fails when the process is gone
stat_fields()
{
	local line
	{ read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
	read -r -a STAT <<<"${line##*) }"
}

# server_cpu_ticks CONTENDER: sets TICKS to the CPU time (user + system,
# clock ticks) its server has used so far: every live process of the
# cluster (the postmaster and its children) with the time of the children
# each has reaped, so a backend that exited still counts (fields 14-17 of
# /proc/PID/stat); empty when the server does not run.  A backend that
# exits between the list of children and its reading is left out (its time
# goes to the postmaster's reaped children).
server_cpu_ticks()
{
	local pm p t=0 n=0
	local -a kids=()
	TICKS=
	{ read -r pm <"${CDIR[$1]}/data/postmaster.pid"; } 2>/dev/null || return 0
	[[ $pm =~ ^[0-9]+$ ]] || return 0
	{ read -r -a kids <"/proc/$pm/task/$pm/children"; } 2>/dev/null || true
	for p in "$pm" "${kids[@]}"; do
		stat_fields "$p" || continue
		t=$((t + STAT[11] + STAT[12] + STAT[13] + STAT[14]))
		n=$((n + 1))
	done
	if [ "$n" -gt 0 ]; then TICKS=$t; fi
}

# reaped_cpu_ticks: sets TICKS to the CPU time of the children this
# script's shell has waited for (user + system, clock ticks: fields 16-17);
# taken around a pgbench run (from the main shell, which waits for it),
# pgbench's own
reaped_cpu_ticks()
{
	stat_fields $$ || { TICKS=0; return 0; }
	TICKS=$((STAT[13] + STAT[14]))
}

# ticks_seconds TICKS: clock ticks as seconds, two decimals, rounded
ticks_seconds()
{
	local t=$1 v
	if [ "$t" -lt 0 ]; then
		awk -v t="$t" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", t / hz }'
		return
	fi
	v=$(((t * 1000 / CLK_TCK + 5) / 10))
	printf '%d.%02d' $((v / 100)) $((v % 100))
}

now_us()
{
	echo "${EPOCHREALTIME/./}"
}

# check_run CONTENDER RUN FAMILY WORKLOAD CLIENTS ROUND: the family's check
# (its descriptor's check script, FAM_CHECK) on the contender's database
# after a run, as one line of checks.csv: the run, "ok", "violated" (with
# each violated condition and its count) or "error" (the check did not
# run to its end).  The script prints one line per condition:
# condition,what,violations.
check_run()
{
	local c=$1 id=$2 fam=$3 w=$4 n=$5 r=$6 lines line status=ok bad='' cond count checked=0
	local log=$OUT/logs/check-$2.log
	[ -n "${FAM_CHECK[$fam]:-}" ] || return 0
	[ -s "$OUT/checks.csv" ] ||
		echo "run_id,family,workload,contender,clients,rep,status,conditions,violations" >"$OUT/checks.csv"
	if lines=$(psql_c "$c" "$fam" -At -F ',' -f "${FAM_CHECK[$fam]}" 2>"$log"); then
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			cond=${line%%,*} count=${line##*,} line=${line#*,}
			checked=$((checked + 1))
			if ! [[ $count =~ ^[0-9]+$ ]]; then
				status=error bad+="${bad:+; }$cond: no count"
			elif [ "$count" != 0 ]; then
				[ "$status" = error ] || status=violated
				bad+="${bad:+; }$cond: $count ${line%,*}"
			fi
		done <<<"$lines"
		if [ "$checked" = 0 ]; then status=error bad="the check printed nothing"; fi
	else
		status=error bad="the check failed: $(head -c 300 "$log" | tr '\n' ' ')"
	fi
	[ -s "$log" ] || rm -f "$log"
	# no quotes inside the CSV field, and paths as the repository names them
	bad=${bad//\"/} bad=${bad//"$ROOT"\//}
	echo "$id,$fam,$w,$c,$n,$r,$status,$checked,\"$bad\"" >>"$OUT/checks.csv"
	if [ "$status" != ok ]; then
		nvm_warn "$c run $id ($w): consistency check $status: $bad"
	fi
}

# finish_run CONTENDER [next]: the summary of the contender's last run,
# once its server has reported the run's WAL fsyncs (1.2 s after its end),
# then the family's check (after the CPU reading, so the run's CPU does not
# hold it).  With "next" (run_point, when the contender's next run follows
# and the family has no check), the session that reads the run's end also
# takes the next run's CHECKPOINT and start (NEXT_S0): one connection less
# per run; the server's CPU is then read before that session, not after.
NEXT_S0=
finish_run()
{
	local c=$1 next=${2:-} left s1 fsyncs='' wal_bytes='' summary meta del=(--delete-logs) id cpu1 server_cpu=
	local f0 b0 f1 b1 ta tb tc td lines line after=0
	NEXT_S0=
	[ -n "${PEND_END[$c]:-}" ] || return 0
	ta=$(now_us)
	left=$((PEND_END[$c] + 1200000 - $(now_us)))
	if [ "$left" -gt 0 ]; then sleep "$(printf '%d.%06d' $((left / 1000000)) $((left % 1000000)))"; fi
	tb=$(now_us)
	if [ -n "$next" ]; then
		server_cpu_ticks "$c"
		cpu1=$TICKS
		s1=
		lines=$(pg "$c" psql -X -q -At -d postgres -c "$WAL_SYNC_SQL" -c CHECKPOINT -c '\echo --' \
			-c "$WAL_SYNC_SQL" 2>/dev/null) || true
		while IFS= read -r line; do
			if [ "$line" = -- ]; then after=1; elif [ "$after" = 0 ]; then s1=$line; else NEXT_S0=$line; fi
		done <<<"$lines"
	else
		s1=$(wal_syncs "$c")
		server_cpu_ticks "$c"
		cpu1=$TICKS
	fi
	read -r f0 b0 <<<"${PEND_S0[$c]}" || true
	read -r f1 b1 <<<"$s1" || true
	if [[ ${f0:-} =~ ^[0-9]+$ && ${f1:-} =~ ^[0-9]+$ ]]; then fsyncs=$((f1 - f0)); fi
	# the WAL written from the run's start to its summary (the checkpoint
	# before the run is behind its start)
	if [[ ${b0:-} =~ ^[0-9]+$ && ${b1:-} =~ ^[0-9]+$ ]]; then wal_bytes=$((b1 - b0)); fi
	if [ -n "${PEND_CPU0[$c]}" ] && [ -n "$cpu1" ]; then
		server_cpu=$(ticks_seconds $((cpu1 - PEND_CPU0[$c])))
	fi
	eval "meta=(${PEND_META[$c]})"
	meta+=(wal_fsyncs="$fsyncs" wal_bytes="$wal_bytes" server_cpu_s="$server_cpu" client_cpu_s="${PEND_CLIENT[$c]}")
	id=${PEND_RUN[$c]}
	if [ "$KEEP_LOGS" = 1 ]; then del=(); fi
	summary=$("$PYTHON" "$BENCH/lib/pgbench_summary.py" --csv "$OUT/results.csv" \
		--output "${PEND_OUT[$c]}" --logs "$RAW/r$id" "${del[@]}" "${meta[@]}") ||
		summary="(summary failed)"
	if [ "$KEEP_LOGS" = 1 ]; then
		mkdir -p "$OUT/txlogs"
		mv "$RAW"/r"$id".* "$OUT/txlogs/" 2>/dev/null || true
	fi
	say "      $c run $id: $summary"
	tc=$(now_us)
	# shellcheck disable=SC2086 # the run, family, workload, clients, round
	check_run "$c" ${PEND_CHECK[$c]}
	td=$(now_us)
	echo "finish,$id,$c,sleep=$(((tb - ta) / 1000)),summary=$(((tc - tb) / 1000)),check=$(((td - tc) / 1000))" >>"$OUT/logs/times.csv"
	DONE_RUNS=$((DONE_RUNS + 1))
	unset "PEND_END[$c]"
	# a server that died takes the contender out of this family
	if [ -z "$s1" ] && ! pg "$c" psql -X -At -d postgres -c "SELECT 1" >/dev/null 2>&1; then
		FAILED_CONT[$c]="server not answering after run $id"
		nvm_warn "$c: ${FAILED_CONT[$c]}; its remaining runs in this family are skipped"
	fi
}

finish_all()
{
	local c
	for c in $CONTENDERS; do
		finish_run "$c"
	done
}

# autovacuum_settle CONTENDER: in a family with autovacuum on, waits (up
# to 30 s) until no autovacuum worker runs in the other contenders'
# clusters, so that their background work does not start this contender's
# run; its own autovacuum may run in its runs, as on a user's server.  A
# worker is a child of the postmaster whose process title says so (no
# query, so no connection to start in each cluster before every run).
autovacuum_settle()
{
	local c=$1 o pm busy tries=0
	while [ "$tries" -lt 150 ]; do
		busy=0
		for o in ${FAM_CONT[$FAM_NOW]}; do
			[ "$o" != "$c" ] && [ -z "${FAILED_CONT[$o]:-}" ] && [ -n "${CDIR[$o]:-}" ] || continue
			pm=$(head -n 1 "${CDIR[$o]}/data/postmaster.pid" 2>/dev/null) || continue
			[[ $pm =~ ^[0-9]+$ ]] || continue
			if pgrep -P "$pm" -f 'autovacuum worker' >/dev/null; then busy=1; fi
		done
		[ "$busy" = 1 ] || return 0
		sleep 0.2
		tries=$((tries + 1))
	done
}

# run_point CONTENDER WORKLOAD CLIENTS ROUND
run_point()
{
	local c=$1 w=$2 n=$3 r=$4 fam db args=() nwh='' j key t1 out s0 cpu0 cc0 cc1 ta tb tc td te next=
	ta=$(now_us)
	fam=${WL_FAMILY[$w]}
	key="$c $n ${WL_ARGS[$w $n]} $r"
	# the last run's end and this run's start in one session, when this run
	# takes place and nothing (check, autovacuum wait) comes between them
	if [ -z "${FAILED_CONT[$c]:-}" ] && [ -z "${DONE_KEY[$key]:-}" ] && [ -z "${FAM_CHECK[$fam]:-}" ] &&
		[ "${FAM_AUTOVACUUM[$fam]:-off}" != on ]; then
		next=1
	fi
	finish_run "$c" "$next"
	s0=$NEXT_S0
	tb=$(now_us)
	db=$fam
	j=$((n < NPROC ? n : NPROC))
	workload_args "$w" "$n"
	args=("${ARGS[@]}")
	nwh=$NWH
	RUN_ID=$((RUN_ID + 1))
	local meta=(mode="$MODE" family="$fam" workload="$w" contender="$c" clients="$n"
		threads="$j" warehouses="$nwh" duration_s="$DURATION" isolation="$ISOLATION"
		synchronous_commit="${CSYNC[$c]}" drain_delay_ns="${CDELAY[$c]}"
		started_utc="$(date -u +%FT%TZ)" rep="$r" load1="$(cut -d' ' -f1 /proc/loadavg)"
		run_id="$RUN_ID")

	if [ -n "${FAILED_CONT[$c]:-}" ]; then
		"$PYTHON" "$BENCH/lib/pgbench_summary.py" --csv "$OUT/results.csv" \
			--error "${FAILED_CONT[$c]}" "${meta[@]}" >/dev/null
		DONE_RUNS=$((DONE_RUNS + 1))
		progress "$c $w clients=$n: skipped (${FAILED_CONT[$c]})"
		return 0
	fi
	# the same configuration under another name (TPC-C with 1 warehouse at
	# 1 client, or 4 at 4, is also the uncontended one): measured once
	if [ -n "${DONE_KEY[$key]:-}" ]; then
		"$PYTHON" "$BENCH/lib/pgbench_summary.py" --csv "$OUT/results.csv" \
			--duplicate-of "${DONE_KEY[$key]}" "${meta[@]}" >/dev/null
		DONE_RUNS=$((DONE_RUNS + 1))
		progress "$c $w clients=$n: same configuration as run ${DONE_KEY[$key]} (not rerun)"
		return 0
	fi
	DONE_KEY[$key]=$RUN_ID

	t1=$(now_us)
	out=$OUT/logs/run-$(printf %03d "$RUN_ID")-$w-${c//@/-}-c$n.txt
	local label=''
	if [ "$REPS" -gt 1 ]; then label=", round $r of $REPS"; fi
	progress "$c $w clients=$n${nwh:+ wh=$nwh} (${DURATION}s$label)"
	if [ "${FAM_AUTOVACUUM[$fam]:-off}" = on ]; then autovacuum_settle "$c"; fi
	tc=$(now_us)
	# the CHECKPOINT, then the WAL fsyncs and insert position the run starts
	# from, in one session (a failed CHECKPOINT leaves the reading to do),
	# unless finish_run took them
	if [ -z "$s0" ]; then
		s0=$(pg "$c" psql -X -q -At -d postgres -c CHECKPOINT -c "$WAL_SYNC_SQL" 2>/dev/null | tail -n 1) || s0=
	fi
	td=$(now_us)
	server_cpu_ticks "$c"
	cpu0=$TICKS
	te=$(now_us)
	{
		echo "# $c $w clients=$n: pgbench ${args[*]} -n -M prepared -c $n -j $j -T $DURATION" \
			"--max-tries=$MAX_TRIES --failures-detailed -l ($ISOLATION)"
	} >"$out"
	reaped_cpu_ticks
	cc0=$TICKS
	nvm_run_group $((DURATION + 180)) "$out.tmp" "${AS_PG[@]}" env \
		PGHOST="${CDIR[$c]}" PGPORT="$(cat "${CDIR[$c]}/port")" PGUSER=postgres \
		PGOPTIONS='-c default_transaction_isolation=repeatable\ read' \
		"$PG_BINDIR/pgbench" "${args[@]}" -n -M prepared -c "$n" -j "$j" -T "$DURATION" \
		--max-tries="$MAX_TRIES" --failures-detailed \
		-l --log-prefix="$RAW/r$RUN_ID" "$db" >/dev/null 2>&1 || true
	reaped_cpu_ticks
	cc1=$TICKS
	cat "$out.tmp" >>"$out" 2>/dev/null
	rm -f "$out.tmp" "$out.tmp.timeout"
	PEND_END[$c]=$(now_us)
	echo "$RUN_ID,$c,$w,$r,$(((tb - ta) / 1000)),$(((tc - t1) / 1000)),$(((td - tc) / 1000)),$(((te - td) / 1000)),$(((PEND_END[$c] - te) / 1000))" \
		>>"$OUT/logs/run-times.csv"
	PEND_S0[$c]=$s0
	PEND_CPU0[$c]=$cpu0
	PEND_CLIENT[$c]=$(ticks_seconds $((cc1 - cc0)))
	PEND_OUT[$c]=$out
	RUN_US=$((RUN_US + $(now_us) - t1))
	RUNS_TIMED=$((RUNS_TIMED + 1))
	PEND_META[$c]=$(printf '%q ' "${meta[@]}")
	PEND_RUN[$c]=$RUN_ID
	PEND_CHECK[$c]="$RUN_ID $fam $w $n $r"
}

# ---------------------------------------------------------------------------
# profile (--profile): one extra run per contender and profile point, not
# counted in results.csv, after the rounds of its family.  During PROFILE_SECS of it, from 1 s in, the wait
# events of the run's backends are sampled from pg_stat_activity every 10 ms
# (bench/lib/wait_sample.sql) and, when perf works, perf records their
# on-CPU samples; report.py summarises both.
# ---------------------------------------------------------------------------

PERF=
if [ "${#PROFILES[@]}" -gt 0 ]; then
	mkdir -p "$OUT/profile"
	if command -v perf >/dev/null 2>&1 &&
		perf record -q -F 99 -o "$OUT/profile/perf-check.data" -- sleep 0.1 \
			>"$OUT/profile/perf-check.log" 2>&1; then
		PERF=perf
		rm -f "$OUT/profile/perf-check.log"
	else
		say "==> perf is not available or not allowed here: profiles have wait events only"
		say "    (perf comes with Debian's linux-perf; it needs root or kernel.perf_event_paranoid <= 1)"
	fi
	rm -f "$OUT/profile/perf-check.data"
fi

# profile_point CONTENDER WORKLOAD CLIENTS
profile_point()
{
	local c=$1 w=$2 n=$3 fam j base pb pids perf_pid=''
	if [ -n "${FAILED_CONT[$c]:-}" ]; then
		PROFILE_RUNS_LEFT=$((PROFILE_RUNS_LEFT - 1))
		return 0
	fi
	fam=${WL_FAMILY[$w]}
	j=$((n < NPROC ? n : NPROC))
	base=$OUT/profile/$w-c$n-${c//@/-}
	workload_args "$w" "$n"
	progress "$c $w clients=$n: profile run (${PROFILE_SECS}s, not measured)"
	psql_c "$c" postgres -c CHECKPOINT >/dev/null 2>&1 || true
	timeout $((PROFILE_SECS + 120)) "${AS_PG[@]}" env \
		PGHOST="${CDIR[$c]}" PGPORT="$(cat "${CDIR[$c]}/port")" PGUSER=postgres \
		PGOPTIONS='-c default_transaction_isolation=repeatable\ read' \
		"$PG_BINDIR/pgbench" "${ARGS[@]}" -n -M prepared -c "$n" -j "$j" -T $((PROFILE_SECS + 2)) \
		--max-tries="$MAX_TRIES" --failures-detailed "$fam" >"$base.pgbench.txt" 2>&1 &
	pb=$!
	sleep 1
	pids=$(pg "$c" psql -X -At -d postgres -c "SELECT string_agg(pid::text, ',') FROM pg_stat_activity
		WHERE datname = '$fam' AND backend_type = 'client backend'" 2>/dev/null) || pids=
	if [ -n "$PERF" ] && [ -n "$pids" ]; then
		# NVM_BENCH_PERF_CALLGRAPH=fp|dwarf records call chains too, and keeps
		# them as perf script text (bench/tools/am_share.py reads it)
		timeout $((PROFILE_SECS + 60)) perf record -q -F 499 -p "$pids" -o "$base.perf.data" \
			${NVM_BENCH_PERF_CALLGRAPH:+--call-graph "$NVM_BENCH_PERF_CALLGRAPH"} \
			-- sleep "$PROFILE_SECS" >"$base.perf.log" 2>&1 &
		perf_pid=$!
	fi
	pg "$c" psql -X -q -At -F ',' -d postgres -v secs="$PROFILE_SECS" -v db="$fam" \
		-f "$BENCH/lib/wait_sample.sql" >"$base.waits.csv" 2>"$base.waits.log" || true
	if [ -n "$perf_pid" ]; then
		wait "$perf_pid" || true
		perf report -i "$base.perf.data" --stdio --no-children -g none --sort dso,sym \
			--percent-limit 0.5 2>>"$base.perf.log" | grep -v '^#' | grep -v '^[[:space:]]*$' |
			head -n 40 >"$base.perf.txt" || true
		perf report -i "$base.perf.data" --stdio --no-children -g none --sort dso \
			--percent-limit 0.5 2>>"$base.perf.log" | grep -v '^#' | grep -v '^[[:space:]]*$' |
			head -n 20 >"$base.perf-dso.txt" || true
		if [ -n "${NVM_BENCH_PERF_CALLGRAPH:-}" ]; then
			perf script -i "$base.perf.data" -F comm,tid,time,event,ip,sym,dso 2>>"$base.perf.log" |
				gzip >"$base.perf-script.txt.gz" || true
		fi
		rm -f "$base.perf.data" "$base.perf.data.old"
	fi
	wait "$pb" || true
	# the scripts' paths as the repository names them, not as this machine does
	sed -i "s|$ROOT/||g" "$base.pgbench.txt" 2>/dev/null || true
	PROFILE_RUNS_LEFT=$((PROFILE_RUNS_LEFT - 1))
	[ -s "$base.waits.log" ] || rm -f "$base.waits.log"
	[ -s "$base.perf.log" ] || rm -f "$base.perf.log"
	say "      $(grep -m1 '^tps' "$base.pgbench.txt" || echo 'pgbench failed: see '"$base.pgbench.txt")"
}

# profile_family FAMILY CONTENDERS... : the profile points of the family's
# workloads
profile_family()
{
	local fam=$1 p c
	shift
	for p in "${PROFILES[@]}"; do
		[ "${WL_FAMILY[${p%:*}]}" = "$fam" ] || continue
		for c in "$@"; do
			[[ $c == *@* ]] || profile_point "$c" "${p%:*}" "${p#*:}"
		done
	done
}

# ---------------------------------------------------------------------------
# settings record
# ---------------------------------------------------------------------------

{
	echo "# Benchmark settings"
	echo
	echo "- mode: $MODE; started $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- $PG_VERSION_STRING; $("$PG_BINDIR/pgbench" --version)"
	echo "- machine: $NPROC CPU core(s) ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM; kernel $(uname -r)"
	echo "- nvmam: git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (with uncommitted changes in src/)'); module $(md5sum "$PG_PKGLIBDIR/nvmam.so" 2>/dev/null | cut -c1-12) as installed at start (other builds may be installed while this runs; each cluster keeps the module it preloaded)"
	echo "- clients: $CLIENTS (pgbench threads: min(clients, $NPROC)); $DURATION s per run; -M prepared; -n"
	echo "- isolation: REPEATABLE READ (PGOPTIONS default_transaction_isolation), i.e. snapshot isolation"
	echo "- retries: --max-tries=$MAX_TRIES --failures-detailed (serialization failures and deadlocks are retried; commits, retries and failures counted apart)"
	echo "- workloads: ${WL_RUN[*]} (bench/workloads/*.toml)"
	for fam in "${FAMILIES[@]}"; do
		[ -z "${FAM_SETTINGS[$fam]}" ] || echo "- ${FAM_SETTINGS[$fam]}"
	done
	for fam in "${FAMILIES[@]}"; do
		if [ "${FAM_CONT[$fam]}" != "$CONTENDERS" ]; then
			echo "- the $fam family runs ${FAM_CONT[$fam]}: its descriptor (skip_contenders) leaves ${FAM_SKIP[$fam]} out of $MODE mode"
		fi
	done
	if [ "$ORDER" = interleaved ]; then
		echo "- repetitions: $REPS rounds per point, in a row (in each round every contender runs once, back to back, in rotating order; the report takes the median and judges the targets by the spread of the per-round ratios); WAL fsyncs from $WAL_SYNC_SOURCE around each run (all server processes)"
	else
		echo "- repetitions: $REPS rounds per point and contender, in a row (serial order: contenders are not measured side by side; the report pairs round r of each contender, taken minutes apart, so the run's noise also holds the machine's drift between them); WAL fsyncs from $WAL_SYNC_SOURCE around each run (all server processes)"
	fi
	echo "- the disk's drift: its fsync latency sampled before every round of a point and after its last, every contender idle (disk.csv: up to 64 writes of 8 kB, each followed by fdatasync, within 0.25 s, in $(fs_of "$DISK_BASE"))"
	pools=
	for fam in "${FAMILIES[@]}"; do pools+="${pools:+, }${FAM_POOL[$fam]} ($fam)"; done
	echo "- per cluster: shared_buffers = $SHARED_BUFFERS, max_wal_size = $MAX_WAL_SIZE, checkpoint_timeout = 1d, autovacuum = off, deadlock_timeout = 50ms (YCSB transactions update their rows in random order and can deadlock: detected after 50 ms instead of 1 s, then retried; TPC-C New-Orders update stock rows in item order and do not deadlock on them); after the load every table is read once (count(*)) and CHECKPOINTed; CHECKPOINT before each run; nvm.pool_size = $pools; a fresh cluster per contender and workload family (a copy of one initdb), stopped with an immediate shutdown at the family's end"
	for fam in "${FAMILIES[@]}"; do
		if [ "${FAM_AUTOVACUUM[$fam]}" = on ]; then
			echo "- autovacuum = on in the $fam family's clusters (its descriptor asks for it): a cluster's autovacuum may run during its own runs; before each run, the run waits (up to 30 s) until no autovacuum worker runs in the other contenders' clusters"
		fi
		if [ -n "${FAM_CHECK[$fam]}" ]; then
			echo "- after every run of the $fam family: its check, ${FAM_CHECK[$fam]#"$ROOT"/}, on the contender's database (checks.csv)"
		fi
	done
	if [ "$ORDER" = interleaved ]; then
		echo "- order: interleaved (all contenders' clusters up at once, loaded side by side; at each point of a round the contenders run back to back, in rotating order)"
	else
		echo "- order: serial (one contender's cluster at a time: it loads, runs every workload and client count of the family, and is removed)"
	fi
	echo "- machine load (load average 1, 5, 15 min) at the start: $LOAD_AT_START"
	echo "- drain delay (emulated NVM write latency) runs: ${DRAIN_DELAYS:-none}"
	if [ "${#PROFILES[@]}" -gt 0 ]; then
		echo "- profile (extra runs, not in the results): ${PROFILES[*]} (workload:clients), ${PROFILE_SECS} s each; wait events sampled from pg_stat_activity every 10 ms; perf: $([ -n "$PERF" ] && echo "perf record -F 499 of the same backends" || echo "not available")"
	else
		echo "- profile: off"
	fi
	if [ -n "${NVM_BENCH_NVM_CONF:-}" ]; then
		echo "- extra settings of the nvm clusters: $NVM_BENCH_NVM_CONF"
	fi
	echo
	echo "| contender | access method | concurrency control | synchronous_commit | where data, WAL and pool live | survives a power loss |"
	echo "|---|---|---|---|---|---|"
	for c in $CONTENDERS; do
		case "${c%@*}" in
			heap) echo "| $c | heap | PostgreSQL (heap MVCC) | on | data directory and WAL: $(fs_of "$DISK_BASE") | yes |" ;;
			heap-tmpfs) echo "| $c | heap | PostgreSQL (heap MVCC) | on | data directory and WAL: $(fs_of /dev/shm) | no (WAL in memory) |" ;;
			heap-async) echo "| $c | heap | PostgreSQL (heap MVCC) | off | data directory and WAL: $(fs_of "$DISK_BASE") | the last commits are lost |" ;;
			heap-logical) echo "| $c | heap | PostgreSQL (heap MVCC) | on | data directory and WAL: $(fs_of "$DISK_BASE"); wal_level = logical | yes |" ;;
			nvm-*-logical) c2=${c#nvm-}; echo "| $c | nvm | ${c2%%-*} | on | pool: $(fs_of /dev/shm), nvm.durability = pool, standing for persistent memory; data directory and WAL: $(fs_of "$DISK_BASE"); wal_level = logical (row changes logged) | no (the pool stands for persistent memory) |" ;;
			nvm-*-pagecache) c2=${c#nvm-}; echo "| $c | nvm | ${c2%%-*} | on | pool at its default place (pg_nvm/pool, a page-cache file in the data directory), nvm.durability = auto (through the WAL); data directory and WAL: $(fs_of "$DISK_BASE") | yes |" ;;
			nvm-*-tmpfs*) c2=${c#nvm-}; echo "| $c | nvm | ${c2%%-*} | on | pool: $(fs_of /dev/shm), nvm.durability = pool; data directory and WAL (indexes, catalog): $(fs_of /dev/shm) | no (everything in memory) |" ;;
			nvm-*) c2=${c#nvm-}; echo "| $c | nvm | ${c2%%@*} | on | pool: $(fs_of /dev/shm), nvm.durability = pool, standing for persistent memory; data directory and WAL (indexes, catalog): $(fs_of "$DISK_BASE") | no (the pool stands for persistent memory) |" ;;
		esac
	done
} >"$OUT/settings.md"

say "==> $MODE benchmark: ${WL_RUN[*]}; clients $CLIENTS; $REPS round(s); contenders $CONTENDERS; output $OUT"

# ---------------------------------------------------------------------------
# the runs
# ---------------------------------------------------------------------------

# setup_and_load FAMILY CONTENDERS...: fresh clusters and data, made side by
# side (a failure takes the contender out of the family)
setup_and_load()
{
	local fam=$1 c t1 rc ta tb
	local -A pid=()
	shift
	t1=$(date +%s)
	for c in "$@"; do
		prepare_contender "$c" "$fam" || FAILED_CONT[$c]="setup failed"
	done
	progress "$* : fresh clusters, loading $fam"
	for c in "$@"; do
		[ -z "${FAILED_CONT[$c]:-}" ] || continue
		{
			ta=$(now_us)
			start_contender "$c" "$fam" || exit 1
			tb=$(now_us)
			load "$c" "$fam" || exit 1
			echo "load,$fam,$c,start=$(((tb - ta) / 1000)),load=$((($(now_us) - tb) / 1000))" >>"$OUT/logs/times.csv"
		} &
		pid[$c]=$!
	done
	for c in "$@"; do
		[ -n "${pid[$c]:-}" ] || continue
		rc=0
		wait "${pid[$c]}" || rc=$?
		if [ "$rc" != 0 ]; then
			FAILED_CONT[$c]="setup or load failed"
			nvm_warn "$c: setup or load of $fam failed (logs in $OUT/logs); its $fam runs are skipped"
		fi
	done
	LOAD_SECS=$((LOAD_SECS + $(date +%s) - t1))
	LOADS_DONE=$((LOADS_DONE + $#))
	LOADS_LEFT=$((LOADS_LEFT - $#))
}

# stop_now CONTENDERS...: an immediate stop of their servers, side by side.
# Their clusters are thrown away next (nvm_cleanup): the shutdown
# checkpoint of a fast stop, and nvm's capture of the pool into its
# checkpoint files at a clean stop, would write for nothing.
stop_now()
{
	local c
	local -a pids=()
	for c in "$@"; do
		if [ -z "${CDIR[$c]:-}" ] || [ ! -f "${CDIR[$c]}/data/postmaster.pid" ]; then continue; fi
		nvm_as_pg "$PG_BINDIR/pg_ctl" -D "${CDIR[$c]}/data" -m immediate -w -t 60 stop >/dev/null 2>&1 &
		pids+=($!)
	done
	for c in "${pids[@]}"; do
		wait "$c" || true
	done
}

# record_pool CONTENDER FAMILY: pool use at the end of the family (a sizing
# hint for nvm.pool_size)
record_pool()
{
	local c=$1 fam=$2
	if [ "${CAM[$c]:-}" = nvm ] && [ -z "${FAILED_CONT[$c]:-}" ]; then
		pg "$c" psql -X -At -F ',' -d "$fam" -c \
			"SELECT '$fam', '$c', pool_size, used_bytes FROM nvm_pool_stats()" \
			>>"$OUT/pool-usage.csv" 2>/dev/null || true
		pg "$c" psql -X -At -d "$fam" -c \
			"SELECT '$c: ' || storage || ' (' || storage_detail || ')' FROM nvm_pool_stats()" \
			>>"$OUT/pool-storage.txt" 2>/dev/null || true
	fi
}

# rounds FAMILY CONTENDERS...: every workload and client count of the
# family, REPS rounds each; in a round the contenders run back to back, their
# order rotating from round to round, so none of them always runs first or
# right after another.  The rounds of a point follow one another, so every
# round of a workload sees its table in the state the workloads before it
# left (the read-only YCSB-C an unchanged one).
POINT=0

# disk_sample WORKLOAD CLIENTS ROUND: a sample of the fsync latency of the
# disk that holds the WAL of the contenders on disk (DISK_BASE), taken with
# every contender idle, before round ROUND of the point (ROUND = REPS + 1:
# after its last), as a line of disk.csv: the report's measure of the disk's
# drift over the run (bench/lib/fsync_probe.py, report_stats.disk_drift)
disk_sample()
{
	"$PYTHON" "$BENCH/lib/fsync_probe.py" --file "$RAW/fsync-probe" --csv "$OUT/disk.csv" \
		family="${WL_FAMILY[$1]}" workload="$1" clients="$2" round="$3" >/dev/null 2>&1 ||
		nvm_warn "fsync sample before round $3 of $1 at $2 clients failed"
}

rounds()
{
	local fam=$1 r w n k c ta
	local -a order
	shift
	for w in "${WL_RUN[@]}"; do
		[ "${WL_FAMILY[$w]}" = "$fam" ] || continue
		for n in $CLIENTS; do
			# a workload with clients_up_to runs at the counts up to it
			[ "${WL_UPTO[$w]:-0}" = 0 ] || [ "$n" -le "${WL_UPTO[$w]}" ] || continue
			for r in $(seq 1 "$REPS"); do
				ta=$(now_us)
				disk_sample "$w" "$n" "$r"
				echo "disk,$w,$r,$((($(now_us) - ta) / 1000))" >>"$OUT/logs/times.csv"
				order=("$@")
				k=$((POINT % ${#order[@]}))
				POINT=$((POINT + 1))
				for c in "${order[@]:k}" "${order[@]:0:k}"; do
					run_point "$c" "$w" "$n" "$r"
				done
			done
			disk_sample "$w" "$n" $((REPS + 1))
		done
	done
	finish_all
}

for fam in "${FAMILIES[@]}"; do
	FAILED_CONT=()
	FAM_NOW=$fam
	if [ "$ORDER" = serial ]; then
		for c in ${FAM_CONT[$fam]}; do
			setup_and_load "$fam" "$c"
			rounds "$fam" "$c"
			profile_family "$fam" "$c"
			record_pool "$c" "$fam"
			stop_now "$c"
			nvm_cleanup
		done
		continue
	fi
	phase "load $fam"
	# shellcheck disable=SC2086 # a list of names
	setup_and_load "$fam" ${FAM_CONT[$fam]}
	phase "runs $fam"
	# shellcheck disable=SC2086
	rounds "$fam" ${FAM_CONT[$fam]}
	phase "profile $fam"
	# shellcheck disable=SC2086
	profile_family "$fam" ${FAM_CONT[$fam]}
	phase "teardown $fam"
	for c in ${FAM_CONT[$fam]}; do
		record_pool "$c" "$fam"
	done
	# shellcheck disable=SC2086
	stop_now ${FAM_CONT[$fam]}
	nvm_cleanup
done

# ---------------------------------------------------------------------------
# engine level
# ---------------------------------------------------------------------------

# engine_run CSV DELAY: every workload and thread count in both modes,
# ENGINE_REPS times; each workload (ENGINE_WL, bench/workloads/engine.toml)
# gets a pool sized for what it writes (doubled and retried when it fills up)
engine_run()
{
	local csv=$1 delay=$2 rep w mb tries log t1 label=
	if [ "$delay" != 0 ]; then label=", drain delay $delay ns"; fi
	for rep in $(seq 1 "$ENGINE_REPS"); do
		for w in "${ENGINE_WL[@]}"; do
			# MB written per second at the machine's peak here, per 2 cores
			mb=$(awk -v m="${ENGINE_MB[$w]}" -v c="$NPROC" -v s="$ENGINE_SECONDS" -v w="$ENGINE_WARMUP" -v r="$ENGINE_ROWS" \
				'BEGIN { printf "%d", 64 + r * 1.3 / 1024 + m * c / 2 * (s + w) * 1.3 }')
			t1=$(date +%s)
			for tries in 1 2 3; do
				log=$OUT/logs/engine-$delay-$w-$rep.log
				progress "engine level: $w, threads $ENGINE_THREADS, both modes$label (repetition $rep of $ENGINE_REPS)"
				if nvm_run_group 3600 "$log" "$BUILD_DIR/nvm_engine_bench" \
					--workloads "$w" --threads "$ENGINE_THREADS" --seconds "$ENGINE_SECONDS" \
					--warmup "$ENGINE_WARMUP" --rows "$ENGINE_ROWS" --pool "$ENGINE_POOL" \
					--pool-size "$mb" --drain-delay-ns "$delay" --csv "$csv" >/dev/null; then
					grep -v '^# ' "$log" >>"$OUT/engine.md" || true
					break
				fi
				rm -f "$ENGINE_POOL"
				if grep -q 'pool full\|pool too small' "$log" && [ "$tries" -lt 3 ]; then
					mb=$((mb * 2))
					nvm_warn "engine level: pool full, again with $mb MB"
					continue
				fi
				nvm_warn "engine level: $w failed (log: $log)"
				break
			done
			ENGINE_SECS=$((ENGINE_SECS + $(date +%s) - t1))
			ENGINE_STEPS_DONE=$((ENGINE_STEPS_DONE + 1))
			ENGINE_STEPS_LEFT=$((ENGINE_STEPS_LEFT - 1))
		done
	done
}

phase engine
if [ "$RUN_ENGINE" = 1 ]; then
	ENGINE_POOL=/dev/shm/nvmam-bench-engine-$$
	nvm_cleanup_add "rm -f '$ENGINE_POOL'"
	header="mode,workload,threads,seconds,tps,commits,aborts,lat_us,snapshot_ns,complete_ns,flushes_per_txn,fences_per_txn,bytes_per_txn"
	echo "$header" >"$OUT/engine.csv"
	: >"$OUT/engine.md"
	engine_run "$OUT/engine.csv" 0
	for d in $DRAIN_DELAYS; do
		echo "$header" >"$OUT/engine-delay-$d.csv"
		echo "## drain delay $d ns" >>"$OUT/engine.md"
		engine_run "$OUT/engine-delay-$d.csv" "$d"
	done
	rm -f "$ENGINE_POOL"
fi

# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

# the storage class each nvm pool ran on (what a flush of the pool costs
# and promises: persistent memory, a page-cache file or volatile memory)
if [ -s "$OUT/pool-storage.txt" ]; then
	printf -- '\n- storage class of the nvm pools (nvm_pool_stats()): %s\n' \
		"$(sort -u "$OUT/pool-storage.txt" | paste -sd ';' | sed 's/;/; /g')" >>"$OUT/settings.md"
fi
rm -f "$OUT/pool-storage.txt"

ELAPSED=$(($(date +%s) - T0))
printf '\nTotal time of the run: %d s; machine load (load average 1, 5, 15 min) at the end: %s.\n' \
	"$ELAPSED" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/settings.md"
ln -sfn "$OUT" "$BUILD_DIR/bench-latest" 2>/dev/null || true
say "==> writing the report ($OUT/report.md)"
phase report
"$PYTHON" "$BENCH/lib/report.py" "$OUT"
phase end
say "==> done in ${ELAPSED} s: $OUT"
# a run that broke its family's consistency conditions fails the benchmark
if [ -s "$OUT/checks.csv" ] && grep -q ',\(violated\|error\),' "$OUT/checks.csv"; then
	say "==> CONSISTENCY CHECK FAILED in $(grep -c ',\(violated\|error\),' "$OUT/checks.csv") run(s): see $OUT/checks.csv and report.md"
	exit 1
fi

#!/usr/bin/env bash
#
# bench/scale.sh
#	  What the operations of a server's day cost against the size of its
#	  data: one table t (id int primary key, n bigint, pad text of 84
#	  bytes: rows of about 100 bytes) of N rows, for each N of --sizes,
#	  in heap and in nvm side by side (bench/lib/day.sh's contenders heap
#	  and nvm: the pool at its default place, pg_nvm/pool in the data
#	  directory, and nvm.durability at its default, auto; data directories
#	  and WAL on disk).  For each size both clusters are made fresh and
#	  loaded, then every round runs the three steps below on each contender
#	  in turn (the order alternates from round to round):
#	    checkpoint   --updates single-row UPDATEs of random rows (one
#	                 client), then a CHECKPOINT: its seconds, the WAL it
#	                 wrote, and the bytes it wrote: the buffers of its
#	                 "checkpoint complete" log line (8 kB each: heap's table
#	                 and index, nvm's index and catalog) plus, for nvm, the
#	                 checkpoint files of the pool its capture wrote (the
#	                 bytes_written of the view nvm_checkpoints, exact; the
#	                 log's "checkpoint of the pool at a checkpoint: wrote K
#	                 kB (R rows) ...", log_checkpoints = on, for its rows;
#	                 the write_bytes of the "nvm backup watch" worker in
#	                 /proc/PID/io as a cross-check);
#	    restart      a clean stop (pg_ctl stop -m fast: its seconds; nvm
#	                 captures the pool into its checkpoint files at the stop:
#	                 the kB its log line says) and a start, timed until a
#	                 single-row SELECT answers; the WAL written from before
#	                 the stop until the WAL rests 2 s after the start (the
#	                 engine before incremental checkpoints logged an image
#	                 of the pool at every start: its MB as the log said),
#	                 and the first CHECKPOINT after the start (seconds and
#	                 bytes, as above);
#	    power loss   a CHECKPOINT, --crash-seconds of single-row UPDATEs
#	                 (--clients clients, at --rate transactions a second
#	                 in all, so both replay as many updates), then SIGKILL to every
#	                 server process; for nvm a new boot of the operating
#	                 system on top (nvm.debug_boot_id, as the tests do), so
#	                 its start finds the pool perhaps torn and rebuilds it
#	                 from the checkpoint files and the WAL; for both, the
#	                 data directory's pages dropped from the page cache
#	                 (synced, then posix_fadvise DONTNEED: a new boot starts
#	                 cold); the start timed until a single-row SELECT
#	                 answers and until a count and sum of every row do,
#	                 which must find every row and every acknowledged
#	                 update (the sum of n); redo seconds from the log; for
#	                 nvm the seconds of the rebuild's load of the checkpoint
#	                 files and of the replay after it, and its workers (the
#	                 view nvm_rebuild).
#	  Per size and contender, once after the load: the load's seconds (one
#	  INSERT ... SELECT of N rows into the table with its primary key), the
#	  first CHECKPOINT after it (seconds, bytes), and bytes per row: heap
#	  the table (pg_table_size) and its index, nvm the pool's used bytes
#	  (nvm_pool_stats()) and the index; nvm's checkpoint files (the files
#	  in pg_nvm/checkpoint) beside.  Autovacuum is off: every operation
#	  measured is the server's own, and autovacuum's work would land in
#	  whichever one it overlapped.
#
#	  bash bench/scale.sh [options]
#
#	  Output directory (--out, default build-bench/scale-TIMESTAMP):
#		sizes.csv		one line per size and contender: load, first
#						checkpoint, bytes per row
#		rounds.csv		one line per size, contender and round: the three steps
#		summary.md		medians and ranges per size, nvm against heap, the
#						commands and settings (bench/lib/scale_report.py)
#		scale.png		each cost against N, heap and nvm (matplotlib)
#		logs/			the server logs, pgbench's output
#	  Runtime on 2 shared cores: about 3 minutes for 200,000 rows, 6 for
#	  2M, 25 for 10M with the default 3 rounds (each round holds
#	  2 x --crash-seconds of updates); the 10M load alone takes several
#	  minutes per contender.
#
# Options:
#	--sizes "N ..."			rows of t, one run per size (default 200000 2000000 10000000)
#	--rounds R				rounds per size (default 3)
#	--updates U				single-row UPDATEs before the measured checkpoint (default 200)
#	--crash-seconds S		seconds of updates before the power loss (default 60)
#	--rate TPS				their rate, all clients together (default 250, which both reach
#							on a loaded 2-core machine; 0: as fast as they go)
#	--clients C				their clients (default 2)
#	--shared-buffers SIZE	shared_buffers of both clusters (default 512MB)
#	--pool-size SIZE		nvm.pool_size (default N x 320 bytes, at least 1GB, in steps of 256MB)
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

SIZES="200000 2000000 10000000"
ROUNDS=3
UPDATES=200
CRASH_SECONDS=60
RATE=250
CLIENTS=2
SHARED_BUFFERS=512MB
POOL_SIZE=
OUT=
DO_BUILD=1
ARGS_GIVEN="$*"
while [ $# -gt 0 ]; do
	case "$1" in
		--sizes) SIZES=${2:?}; shift ;;
		--rounds) ROUNDS=${2:?}; shift ;;
		--updates) UPDATES=${2:?}; shift ;;
		--crash-seconds) CRASH_SECONDS=${2:?}; shift ;;
		--rate) RATE=${2:?}; shift ;;
		--clients) CLIENTS=${2:?}; shift ;;
		--shared-buffers) SHARED_BUFFERS=${2:?}; shift ;;
		--pool-size) POOL_SIZE=${2:?}; shift ;;
		--out) OUT=${2:?}; shift ;;
		--pg-config) PG_CONFIG=${2:?}; export PG_CONFIG; shift ;;
		--no-build) DO_BUILD=0 ;;
		-h | --help) sed -n '3,/^set -euo/p' "$0" | sed -e '$d' -e 's/^#\t\{0,1\}//'; exit 0 ;;
		*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
for v in $SIZES $ROUNDS $UPDATES $CRASH_SECONDS $CLIENTS; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || nvm_die "sizes, rounds, updates, seconds and clients are positive counts, not $v"
done
[[ $RATE =~ ^[0-9]+$ ]] || nvm_die "--rate takes transactions a second, not $RATE"

nvm_find_pg >&2
OUT=${OUT:-$ROOT/build-bench/scale-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
CONTENDERS=(heap nvm)

trap 'nvm_cleanup' EXIT
trap 'nvm_cleanup; exit 130' INT TERM

if [ "$DO_BUILD" = 1 ]; then
	nvm_log "building a release build in build-bench and installing it into $PG_PKGLIBDIR" >&2
	{ nvm_build "$ROOT" "$ROOT/build-bench" -Dbuildtype=release -Db_ndebug=if-release &&
		nvm_install "$ROOT/build-bench"; } >"$OUT/logs/build.log" 2>&1 ||
		nvm_die "build or install failed (log: $OUT/logs/build.log)"
fi

SQL=$(nvm_pg_tmpdir "$DAY_DISK" "nvmam-scale-sql")
nvm_cleanup_add "rm -rf '$SQL'"
printf '\\set id random(1, :rows)\nUPDATE t SET n = n + 1 WHERE id = :id;\n' >"$SQL/update.sql"
chmod 644 "$SQL/update.sql"

# pool_size_for N: nvm.pool_size for N rows (--pool-size, else N x 320
# bytes, at least 1GB, in steps of 256MB: room for the table and its
# versions without growing the pool during the load)
pool_size_for()
{
	if [ -n "$POOL_SIZE" ]; then echo "$POOL_SIZE"; return; fi
	awk -v n="$1" 'BEGIN { mb = n * 320 / 1048576; mb = int((mb + 255) / 256) * 256;
		if (mb < 1024) mb = 1024; printf "%dMB\n", mb }'
}

# mb BYTES: megabytes, three decimals
mb() { awk -v b="$1" 'BEGIN { printf "%.3f", b / 1048576 }'; }

# ckpt_bytes C OFFSET: the bytes the checkpoints logged from OFFSET on wrote:
# buffers x 8 kB, plus the pool's checkpoint files; "TOTAL BUFFERS POOL
# POOL_ROWS CHECKPOINTS POOL_CAPTURES"
ckpt_bytes()
{
	# shellcheck disable=SC2034 # set by the eval of day_log_sum's lines
	local CHECKPOINTS CKPT_BUFFERS CKPT_SECONDS POOL_CKPTS POOL_FILES POOL_KB POOL_ROWS POOL_KEPT IMAGES
	# shellcheck disable=SC2034
	local IMAGE_ROWS IMAGE_MB REDO_SECONDS REBUILDS LOADED_ROWS POOL_CHANGED POOL_WHOLE POOL_SECONDS
	# shellcheck disable=SC2034
	local MERGES MERGED_KB LOAD_SECONDS LOAD_WORKERS
	eval "$(day_log_sum "$1" "$2")"
	echo "$((CKPT_BUFFERS * 8192 + POOL_KB * 1024)) $((CKPT_BUFFERS * 8192)) $((POOL_KB * 1024)) $POOL_ROWS $CHECKPOINTS $POOL_CKPTS"
}

# timed_checkpoint C: a CHECKPOINT, with what it wrote; prints
# "SECONDS TOTAL_BYTES BUFFER_BYTES POOL_BYTES POOL_ROWS WAL_BYTES WATCH_BYTES";
# nvm's POOL_BYTES are those of nvm_checkpoints (the log's kB when the view
# saw no capture)
timed_checkpoint()
{
	local c=$1 off l0 l1 t0 s w0 w1 _p b checkpoints v0 v1
	off=$(day_log_size "$c")
	read -r -a v0 < <(day_pool_ckpt "$c")
	read -r _p w0 < <(day_watch_io "$c")
	l0=$(day_lsn "$c")
	t0=$EPOCHREALTIME
	day_psql "$c" postgres "CHECKPOINT" >/dev/null
	s=$(day_since "$t0")
	l1=$(day_lsn "$c")
	read -r _p w1 < <(day_watch_io "$c")
	# the log line of the checkpoint follows its end by a moment
	for _ in $(seq 1 50); do
		read -r -a b < <(ckpt_bytes "$c" "$off")
		checkpoints=${b[4]}
		[ "$checkpoints" -lt 1 ] || break
		sleep 0.1
	done
	read -r -a v1 < <(day_pool_ckpt "$c")
	if [ "${v1[1]}" -gt "${v0[1]}" ]; then
		b[2]=$((v1[0] - v0[0]))
		b[0]=$((b[1] + b[2]))
	fi
	echo "$s ${b[0]} ${b[1]} ${b[2]} ${b[3]} $((l1 - l0)) $((w1 - w0))"
}

# load C N: the table and its N rows; a line of sizes.csv
load()
{
	local c=$1 n=$2 am=heap t0 load_s ck used=0 tbl idx files=0 per_row
	[ "$c" = heap ] || am=nvm
	day_psql "$c" postgres "CREATE TABLE t (id int PRIMARY KEY, n bigint NOT NULL, pad text NOT NULL) USING $am" >/dev/null
	t0=$EPOCHREALTIME
	day_psql "$c" postgres "INSERT INTO t SELECT g, 0, repeat('p', 84) FROM generate_series(1, $n) g" >/dev/null
	load_s=$(day_since "$t0")
	# every row read once (heap: hint bits), then the first checkpoint
	day_psql "$c" postgres "SELECT count(*) FROM t" >/dev/null
	read -r -a ck < <(timed_checkpoint "$c")
	idx=$(day_psql "$c" postgres "SELECT pg_indexes_size('t')")
	if [ "$c" = heap ]; then
		tbl=$(day_psql "$c" postgres "SELECT pg_table_size('t')")
		per_row=$(awk -v a="$tbl" -v b="$idx" -v n="$n" 'BEGIN { printf "%.1f", (a + b) / n }')
	else
		read -r tbl used < <(day_psql "$c" postgres "SELECT s.version_bytes, p.used_bytes
			FROM nvm_table_stats('t') s, nvm_pool_stats() p")
		files=$(du -sb "${DAY_DIR[$c]}/data/pg_nvm/checkpoint" 2>/dev/null | cut -f1) || files=0
		per_row=$(awk -v a="$used" -v b="$idx" -v n="$n" 'BEGIN { printf "%.1f", (a + b) / n }')
	fi
	echo "$n,$c,$load_s,${ck[0]},${ck[1]},$tbl,$idx,$used,${files:-0},$per_row,$(awk -v f="${files:-0}" -v n="$n" 'BEGIN { printf "%.1f", f / n }')" >>"$OUT/sizes.csv"
	nvm_log "$c, $n rows: loaded in $load_s s; first checkpoint ${ck[0]} s, $(mb "${ck[1]}") MB; $per_row bytes per row" >&2
}

declare -A TOTAL		# updates acknowledged so far, per contender: the sum of n
UPD=()

# updates C CLIENTS ARGS...: pgbench's single-row UPDATEs; sets UPD to
# (TRANSACTIONS TPS) and adds them to TOTAL (run it in the main shell)
updates()
{
	local c=$1 n=$2 log out txns tps
	shift 2
	log="$OUT/logs/pgbench-$c-$ROWS-r$ROUND-$STEP.txt"
	out=$(day_pgbench "$c" -n -M prepared -c "$n" -j "$n" "$@" -D rows="$ROWS" \
		-f "$SQL/update.sql" postgres 2>&1) || { echo "$out" >"$log"; nvm_die "pgbench failed: $log"; }
	echo "$out" >"$log"
	txns=$(awk '/^number of transactions actually processed/ { split($NF, a, "/"); print a[1]; exit }' <<<"$out")
	tps=$(awk '/^tps/ { printf "%.0f", $3; exit }' <<<"$out")
	TOTAL[$c]=$((TOTAL[$c] + txns))
	UPD=("$txns" "$tps")
}

# round_once C: the three steps on C; a line of rounds.csv
round_once()
{
	local c=$1 up ck st stop_s lsn0 lsn1 off t0 rck crash lsn_a lsn_b first all_s got want rb
	# shellcheck disable=SC2034 # set by the eval of day_log_sum's lines
	local CHECKPOINTS CKPT_BUFFERS CKPT_SECONDS POOL_CKPTS POOL_FILES POOL_KB POOL_ROWS POOL_KEPT IMAGES
	# shellcheck disable=SC2034
	local IMAGE_ROWS IMAGE_MB REDO_SECONDS REBUILDS LOADED_ROWS POOL_CHANGED POOL_WHOLE POOL_SECONDS
	# shellcheck disable=SC2034
	local MERGES MERGED_KB LOAD_SECONDS LOAD_WORKERS image_mb stop_pool_bytes
	local dir=${DAY_DIR[$c]}

	# the checkpoint after --updates single-row updates
	STEP=checkpoint
	day_psql "$c" postgres "CHECKPOINT" >/dev/null
	updates "$c" 1 -t "$UPDATES"
	up=("${UPD[@]}")
	read -r -a ck < <(timed_checkpoint "$c")

	# a clean restart
	STEP=restart
	lsn0=$(day_lsn "$c")
	off=$(day_log_size "$c")
	t0=$EPOCHREALTIME
	nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 1800 stop >/dev/null
	stop_s=$(day_since "$t0")
	read -r -a st < <(day_start_timed "$c" postgres "SELECT n FROM t WHERE id = 1")
	day_wal_quiet "$c" 2
	lsn1=$(day_lsn "$c")
	eval "$(day_log_sum "$c" "$off")"
	image_mb=$IMAGE_MB
	stop_pool_bytes=$((POOL_KB * 1024))
	read -r -a rck < <(timed_checkpoint "$c")

	# a power loss after a checkpoint and --crash-seconds of updates
	STEP=crash
	day_psql "$c" postgres "CHECKPOINT" >/dev/null
	lsn_a=$(day_lsn "$c")
	local rate=()
	[ "$RATE" = 0 ] || rate=(-R "$RATE")
	updates "$c" "$CLIENTS" -T "$CRASH_SECONDS" "${rate[@]}"
	crash=("${UPD[@]}")
	lsn_b=$(day_lsn "$c")
	day_kill9 "$c"
	if [ "$c" != heap ]; then
		nvm_cluster_conf "$dir" "nvm.debug_boot_id = 'boot-$ROWS-$ROUND'"
	fi
	"$PYTHON" "$ROOT/bench/lib/evict_cache.py" "$dir" >>"$OUT/logs/evict.txt"
	off=$(day_log_size "$c")
	read -r -a first < <(day_start_timed "$c" postgres "SELECT n FROM t WHERE id = 1")
	got=$(day_psql "$c" postgres "SELECT count(*) || '/' || sum(n) FROM t")
	all_s=$(day_since "${first[1]}")
	read -r -a rb < <(day_rebuild "$c")
	want="$ROWS/${TOTAL[$c]}"
	day_wal_quiet "$c" 2
	eval "$(day_log_sum "$c" "$off")"
	if [ "$got" != "$want" ]; then
		nvm_warn "$c, $ROWS rows, round $ROUND: after the power loss count/sum(n) is $got, expected $want"
		got="WRONG $got"
	else
		got=ok
	fi
	echo "$ROWS,$c,$ROUND,${up[1]},${ck[0]},${ck[1]},${ck[2]},${ck[3]},${ck[4]},${ck[6]},${ck[5]},$stop_s,${st[0]},$((lsn1 - lsn0)),$image_mb,${rck[0]},${rck[1]},${crash[0]},${crash[1]},$((lsn_b - lsn_a)),${first[0]},$all_s,$REDO_SECONDS,$REBUILDS,$LOADED_ROWS,$got,$stop_pool_bytes,${rb[1]},${rb[2]},${rb[4]}" >>"$OUT/rounds.csv"
	nvm_log "$c, $ROWS rows, round $ROUND: checkpoint ${ck[0]} s $(mb "${ck[1]}") MB; restart ${st[0]} s, $(mb $((lsn1 - lsn0))) MB of WAL; power loss: first query ${first[0]} s, every row ${all_s} s ($got)" >&2
}

echo "rows,contender,load_s,load_ckpt_s,load_ckpt_bytes,table_bytes,index_bytes,pool_used_bytes,ckpt_files_bytes,bytes_per_row,ckpt_file_bytes_per_row" >"$OUT/sizes.csv"
echo "rows,contender,round,update_tps,ckpt_s,ckpt_bytes,ckpt_buffer_bytes,ckpt_pool_bytes,ckpt_pool_rows,ckpt_watch_bytes,ckpt_wal_bytes,stop_s,restart_s,restart_wal_bytes,restart_image_mb,restart_ckpt_s,restart_ckpt_bytes,crash_updates,crash_tps,crash_wal_bytes,recovery_first_s,recovery_all_s,redo_s,rebuilt,loaded_rows,rows_ok,stop_pool_bytes,rebuild_load_s,rebuild_replay_s,rebuild_workers" >"$OUT/rounds.csv"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(date -u '+%Y-%m-%d %H:%M UTC')
UPTIMES=()
for ROWS in $SIZES; do
	DAY_POOL_SIZE=$(pool_size_for "$ROWS")
	DAY_NVM_CONF=("nvm.debug_boot_id = 'boot-0'")
	UPTIMES+=("$ROWS rows, start: $(uptime)")
	for c in "${CONTENDERS[@]}"; do
		day_make "$c" "scale-$ROWS" \
			"shared_buffers = '$SHARED_BUFFERS'" \
			"max_wal_size = '8GB'" \
			"checkpoint_timeout = '1d'" \
			"autovacuum = off" \
			"wal_level = replica"
		TOTAL[$c]=0
		load "$c" "$ROWS"
	done
	for ROUND in $(seq 1 "$ROUNDS"); do
		if [ $((ROUND % 2)) = 1 ]; then order=(heap nvm); else order=(nvm heap); fi
		for c in "${order[@]}"; do round_once "$c"; done
	done
	UPTIMES+=("$ROWS rows, end: $(uptime)")
	for c in "${CONTENDERS[@]}"; do day_drop "$c"; done
done

{
	echo "- command: \`bash bench/scale.sh${ARGS_GIVEN:+ $ARGS_GIVEN}\`"
	echo "- started $T_START, ended $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the start $LOAD_START"
	for u in "${UPTIMES[@]}"; do echo "- uptime, $u"; done
	echo "- $PG_VERSION_STRING; $(nproc) CPU cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM; data directories on $(stat -f -c %T "$DAY_DISK")"
	echo "- nvmam: git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (with uncommitted changes in src/)')"
	echo "- sizes: $SIZES rows; $ROUNDS rounds, contenders alternating; $UPDATES updates before the measured checkpoint; $CRASH_SECONDS s of updates at $([ "$RATE" = 0 ] && echo "full speed" || echo "$RATE per second") by $CLIENTS clients before the power loss"
	echo "- both clusters: shared_buffers = $SHARED_BUFFERS, max_wal_size = 8GB, checkpoint_timeout = 1d, autovacuum = off, wal_level = replica, log_checkpoints = on; nvm: nvm.pool_size = N x 320 bytes (at least 1GB)${POOL_SIZE:+ (--pool-size $POOL_SIZE)}"
	for c in "${CONTENDERS[@]}"; do echo "- $(day_describe "$c")"; done
} >"$OUT/settings.md"
# pgbench's output names its script without this machine's paths
sed -i "s|$SQL/||g" "$OUT"/logs/pgbench-*.txt 2>/dev/null || true
"$PYTHON" "$ROOT/bench/lib/scale_report.py" "$OUT"

# shellcheck shell=bash
#
# bench/lib/day.sh
#	  What bench/steady.sh and bench/scale.sh share: the contenders' clusters,
#	  client programs against them, the counters read around a measurement
#	  (WAL, full-page images, WAL fsyncs, checkpoints and the buffers they
#	  wrote, the insert position of the WAL, the server's CPU, the writes of
#	  the pool's checkpoint worker), what the server log says (through
#	  bench/lib/serverlog.py), a crash of every server process, and a start
#	  timed until a query answers.  Sourced after regress/lib/common.sh and
#	  regress/lib/cluster.sh, once nvm_find_pg ran; the caller sets OUT (its
#	  output directory: server logs go to OUT/logs) and PYTHON.
#
#	  Contenders (every data directory, so every WAL, on disk: DAY_DISK,
#	  NVM_BENCH_DATA_DIR or /var/tmp):
#		heap	PostgreSQL's heap; nvmam not loaded
#		nvm		nvm tables, the pool at its default place (pg_nvm/pool in the
#				data directory, a page-cache file) and nvm.durability at its
#				default (auto: through the WAL off persistent memory)
#		nvm-shm	nvm tables, the pool in /dev/shm and nvm.durability = pool:
#				stands for persistent memory (not durable here)
#		nvm-tmpfs	nvm tables, the pool in /dev/shm and nvm.durability at its
#				default (auto: through the WAL, as at the default place, so
#				durable): the pool where the kernel never writes it back
#
#	day_describe C				one line: what C is and where it keeps what
#	day_make C TAG CONF...		a fresh cluster for C, started; TAG names its log
#	day_drop C					immediate stop, its log kept (OUT/logs), its files removed
#	day_psql C DB SQL			psql -At, fields separated by a space
#	day_pgbench C DB ARGS...	pgbench against C's cluster
#	day_cpu_ticks C				CPU (user + system, clock ticks) of the server so far
#	day_stats C					wal_records wal_fpi wal_bytes wal_syncs checkpoints
#								buffers_checkpoint insert_lsn (bytes)
#	day_lsn C					the WAL's insert position, in bytes
#	day_watch_io C				"PID WRITE_BYTES" of the "nvm backup watch" worker
#	day_pool_ckpt C				"BYTES CAPTURES SECONDS MERGED_BYTES" the checkpoints of
#								the pool wrote since the server started (nvm_checkpoints;
#								"0 0 0 0" for heap)
#	day_rebuild C				"STATE LOAD_S REPLAY_S ROWS WORKERS" of the rebuild of the
#								pool since the start (nvm_rebuild; "none 0 0 0 0" without)
#	day_log_size C				the server log's size (an offset for day_log_sum)
#	day_log_sum C OFFSET [END]	serverlog.py's NAME=VALUE lines from OFFSET on (to END)
#	day_kill9 C					SIGKILL to every server process, as a crash does
#	day_start_timed C DB SQL [TIMEOUT]	starts C and prints the seconds until SQL
#								answers in DB (fails after TIMEOUT s, 1800) and
#								the start's time
#	day_since T0				the seconds since T0 (an EPOCHREALTIME)
#	day_wal_quiet C SECS		waits until the WAL's insert position rests SECS s

DAY_DISK=${NVM_BENCH_DATA_DIR:-/var/tmp}
DAY_NVM_CONF=()
declare -A DAY_DIR DAY_SHM DAY_TAG

day_describe()
{
	case "$1" in
		heap) echo "heap: PostgreSQL's heap, data directory and WAL on disk ($DAY_DISK)" ;;
		nvm) echo "nvm: nvm tables, the pool at its default place (pg_nvm/pool in the data directory, a page-cache file on disk), nvm.durability = auto (through the WAL), WAL on disk" ;;
		nvm-shm) echo "nvm-shm: nvm tables, the pool in /dev/shm, nvm.durability = pool: stands for persistent memory (not durable here), WAL on disk" ;;
		nvm-tmpfs) echo "nvm-tmpfs: nvm tables, the pool in /dev/shm (tmpfs, never written back by the kernel), nvm.durability = auto (through the WAL: durable), WAL on disk" ;;
		*) nvm_die "unknown contender $1 (heap, nvm, nvm-shm, nvm-tmpfs)" ;;
	esac
}

# day_make C TAG CONF...: initdb, the settings CONF (and nvmam's for the nvm
# contenders: DAY_POOL_SIZE is nvm.pool_size, DAY_NVM_CONF more lines),
# log_checkpoints, start
day_make()
{
	local c=$1 tag=$2 dir shm=''
	shift 2
	day_describe "$c" >/dev/null
	dir=$(nvm_pg_tmpdir "$DAY_DISK" "nvmam-day-$c") || return 1
	if [ "$c" = nvm-shm ] || [ "$c" = nvm-tmpfs ]; then
		shm=$(nvm_pg_tmpdir /dev/shm "nvmam-day-pool") || return 1
	fi
	DAY_DIR[$c]=$dir DAY_SHM[$c]=$shm DAY_TAG[$c]=$tag
	nvm_cleanup_add "day_drop '$c'"
	nvm_cluster_init "$dir" "$(nvm_free_port)" || return 1
	nvm_cluster_conf "$dir" "log_checkpoints = on" "$@"
	case "$c" in
		nvm | nvm-shm | nvm-tmpfs)
			nvm_cluster_conf "$dir" "shared_preload_libraries = 'nvmam'" \
				"nvm.pool_size = '${DAY_POOL_SIZE:-1GB}'" "${DAY_NVM_CONF[@]}" ;;
	esac
	if [ "$c" = nvm-shm ]; then
		nvm_cluster_conf "$dir" "nvm.pool_path = '$shm/pool'" "nvm.durability = 'pool'"
	elif [ "$c" = nvm-tmpfs ]; then
		nvm_cluster_conf "$dir" "nvm.pool_path = '$shm/pool'"
	fi
	nvm_cluster_start "$dir" || return 1
	if [ "$c" != heap ]; then
		day_psql "$c" postgres "CREATE EXTENSION nvmam" >/dev/null || return 1
	fi
}

# day_drop C: the cluster stopped at once (nothing of it is measured any
# more), its log copied to OUT/logs, its directories removed
day_drop()
{
	local c=$1 dir=${DAY_DIR[$1]:-}
	[ -n "$dir" ] || return 0
	if [ -f "$dir/data/postmaster.pid" ]; then
		nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	mkdir -p "$OUT/logs"
	# the log without this machine's paths: the cluster's directory reads CLUSTER
	sed -e "s|$dir|CLUSTER|g" ${DAY_SHM[$c]:+-e "s|${DAY_SHM[$c]}|SHM|g"} "$dir/server.log" \
		>"$OUT/logs/server-${DAY_TAG[$c]}-$c.log" 2>/dev/null || true
	rm -rf "$dir"
	[ -z "${DAY_SHM[$c]:-}" ] || rm -rf "${DAY_SHM[$c]}"
	DAY_DIR[$c]='' DAY_SHM[$c]=''
}

day_psql()
{
	nvm_psql "${DAY_DIR[$1]}" "$2" -At -F ' ' -c "$3"
}

day_pgbench()
{
	local c=$1 dir=${DAY_DIR[$1]}
	shift
	nvm_as_pg env PGHOST="$dir" PGPORT="$(cat "$dir/port")" PGUSER=postgres \
		${DAY_PGOPTIONS:+PGOPTIONS="$DAY_PGOPTIONS"} "$PG_BINDIR/pgbench" "$@"
}

# day_cpu_ticks C: every live process of the cluster (the postmaster and its
# children) with the time of the children each has reaped, so a backend
# that exited still counts (fields 14-17 of /proc/PID/stat)
day_cpu_ticks()
{
	local pm
	pm=$(head -n 1 "${DAY_DIR[$1]}/data/postmaster.pid" 2>/dev/null) || return 0
	# shellcheck disable=SC2046 # one argument per child pid
	cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null |
		awk '{ t += $14 + $15 + $16 + $17 } END { if (NR) print t }'
}

# day_stats C: the WAL's records, full-page images, bytes and fsyncs
# (pg_stat_wal; PostgreSQL 18 counts the fsyncs in pg_stat_io), the
# checkpoints completed and the buffers they wrote (pg_stat_bgwriter; 17 and
# later pg_stat_checkpointer) and the WAL's insert position, in bytes.
# Processes report their counters within a second: read 1.2 s after the
# work measured.
day_stats()
{
	local sync ckpt
	if [ "$PG_MAJOR" -ge 18 ]; then
		sync="(SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal')"
	else
		sync="(SELECT wal_sync FROM pg_stat_wal)"
	fi
	if [ "$PG_MAJOR" -ge 17 ]; then
		ckpt="(SELECT num_timed + num_requested FROM pg_stat_checkpointer),
			(SELECT buffers_written FROM pg_stat_checkpointer)"
	else
		ckpt="(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter),
			(SELECT buffers_checkpoint FROM pg_stat_bgwriter)"
	fi
	day_psql "$1" postgres "SELECT wal_records, wal_fpi, wal_bytes, $sync, $ckpt,
		pg_current_wal_insert_lsn() - '0/0'::pg_lsn FROM pg_stat_wal"
}

day_lsn()
{
	day_psql "$1" postgres "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn"
}

# day_watch_io C: the pid of the "nvm backup watch" worker, which writes the
# pool's checkpoint files, and the bytes it has written (/proc/PID/io:
# write_bytes, counted as it dirties pages); "- 0" without one
day_watch_io()
{
	local pid
	pid=$(day_psql "$1" postgres "SELECT pid FROM pg_stat_activity
		WHERE backend_type = 'nvm backup watch'" 2>/dev/null | head -n 1) || pid=
	if [ -n "$pid" ] && [ -r "/proc/$pid/io" ]; then
		echo "$pid $(awk '/^write_bytes/ { print $2 }' "/proc/$pid/io")"
	else
		echo "- 0"
	fi
}

# day_pool_ckpt C: what the captures of the pool wrote since the server
# started, from the view nvm_checkpoints (exact bytes, where the log says kB):
# "BYTES CAPTURES SECONDS MERGED_BYTES"; "0 0 0 0" for heap
day_pool_ckpt()
{
	if [ "$1" = heap ]; then echo "0 0 0 0"; return; fi
	day_psql "$1" postgres "SELECT bytes_written, captures, round(capture_seconds::numeric, 3),
		merged_bytes FROM nvm_checkpoints"
}

# day_rebuild C: the rebuild of the pool since the server started, from the
# view nvm_rebuild: "STATE LOAD_S REPLAY_S ROWS WORKERS" (the seconds of the
# load of the checkpoint files and of the replay after it); "none 0 0 0 0"
# for heap
day_rebuild()
{
	if [ "$1" = heap ]; then echo "none 0 0 0 0"; return; fi
	day_psql "$1" postgres "SELECT state,
		coalesce(round(extract(epoch FROM loaded - started)::numeric, 3), 0),
		coalesce(round(extract(epoch FROM finished - loaded)::numeric, 3), 0),
		coalesce(rows_loaded, 0), coalesce(workers, 0) FROM nvm_rebuild"
}

day_log_size()
{
	stat -c %s "${DAY_DIR[$1]}/server.log"
}

day_log_sum()
{
	"$PYTHON" "$ROOT/bench/lib/serverlog.py" sum "${DAY_DIR[$1]}/server.log" "$2" ${3:+"$3"}
}

# day_kill9 C: every process of the server stopped, then killed (SIGSTOP
# first, so none of them does anything after another died), as a crash of
# the server or of the operating system ends them
day_kill9()
{
	local pm pids _
	pm=$(head -n 1 "${DAY_DIR[$1]}/data/postmaster.pid")
	pids="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
	# shellcheck disable=SC2086 # one argument per pid
	kill -STOP $pids 2>/dev/null || true
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
	for _ in $(seq 1 200); do
		# shellcheck disable=SC2086
		kill -0 $pids 2>/dev/null || return 0
		sleep 0.05
	done
	nvm_warn "$1: server processes still alive after SIGKILL: $pids"
	return 1
}

# day_start_timed C DB SQL [TIMEOUT]: starts the cluster without waiting and
# prints "SECONDS T0": the seconds from the start until SQL answers in DB
# (every 20 ms a new connection tries it) and the start's time
# (EPOCHREALTIME), from which a caller times what it asks next
day_start_timed()
{
	local c=$1 db=$2 sql=$3 limit=${4:-1800} dir=${DAY_DIR[$1]} t0 now
	t0=$EPOCHREALTIME
	nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -W start >/dev/null || return 1
	while :; do
		if nvm_psql "$dir" "$db" -At -c "$sql" >/dev/null 2>&1; then
			now=$EPOCHREALTIME
			awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.3f %s\n", b - a, a }'
			return 0
		fi
		now=$EPOCHREALTIME
		if awk -v a="$t0" -v b="$now" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
			nvm_warn "$c: no answer $limit s after its start; end of its log:"
			tail -n 20 "$dir/server.log" >&2
			return 1
		fi
		sleep 0.02
	done
}

# day_since T0: the seconds since T0 (an EPOCHREALTIME)
day_since()
{
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
}

# day_wal_quiet C SECS: waits (up to 30 minutes) until the WAL's insert
# position has not moved for SECS seconds (after a start, the pool's
# checkpoint worker may still write: the engine before incremental
# checkpoints logged an image of the pool in the WAL in the background)
day_wal_quiet()
{
	local c=$1 secs=$2 last='' cur still=0 i
	for i in $(seq 1 3600); do
		cur=$(day_lsn "$c" 2>/dev/null) || cur=
		if [ -n "$cur" ] && [ "$cur" = "$last" ]; then
			still=$((still + 1))
			[ "$still" -lt $((secs * 2)) ] || return 0
		else
			still=0
		fi
		last=$cur
		sleep 0.5
	done
	: "$i"
}

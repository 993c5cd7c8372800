#!/usr/bin/env bash
#
# bench/quick.sh
#	  A short side-by-side comparison (about 3 minutes on 2 cores): pgbench
#	  TPC-B at REPEATABLE READ against
#		heap	PostgreSQL's heap, synchronous_commit = on (WAL on disk)
#		nvm		the nvm table AM (MCSI), rows in a pool in /dev/shm
#		heap-async	heap with synchronous_commit = off, as a reference: it
#				shows what skipping the commit flush alone is worth
#	  Each contender gets its own throwaway cluster (run as the "postgres"
#	  user when called as root), initialised with `pgbench -i -s 10`, then
#	  `pgbench -c 2 -j 2 -T 20 -M prepared --max-tries=10`.  Prints a Markdown
#	  table; exits non-zero if a contender failed.
#
#	  Installs the Debian packages it needs when missing (as .ci/run does),
#	  builds a release build in build-bench/ and installs it (root or sudo).
#	  The N2DB baseline mode does not exist yet: its row says so.
#
# Environment (optional):
#	NVM_BENCH_SCALE=10			pgbench scale factor
#	NVM_BENCH_CLIENTS=2			clients (and threads)
#	NVM_BENCH_TIME=20			seconds per run
#	NVM_BENCH_CONTENDERS="heap nvm heap-async"
#								(nvm-n2db: nvm with nvm.concurrency_control = n2db,
#								for when that mode exists)
#	NVM_BENCH_POOL_SIZE=2GB		nvm.pool_size
#	NVM_BENCH_DATA_DIR=/var/tmp	where data directories (and so WAL) live
#	NVM_SKIP_BUILD=1			use the installed module as it is
#	NVM_SKIP_PACKAGES=1			do not check for Debian packages
#	PG_CONFIG=path				pg_config of PostgreSQL 15

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=regress/lib/packages.sh
. "$ROOT/regress/lib/packages.sh"

SCALE=${NVM_BENCH_SCALE:-10}
CLIENTS=${NVM_BENCH_CLIENTS:-2}
DURATION=${NVM_BENCH_TIME:-20}
CONTENDERS=${NVM_BENCH_CONTENDERS:-heap nvm heap-async}
POOL_SIZE=${NVM_BENCH_POOL_SIZE:-2GB}
DATA_BASE=${NVM_BENCH_DATA_DIR:-/var/tmp}
BUILD_DIR=$ROOT/build-bench
OUT_DIR=$BUILD_DIR/benchrun
ISOLATION="repeatable read"

ROWS=()
FAILED=0
HEAP_TPS=

# shellcheck disable=SC2317 # called through trap
on_exit()
{
	local rc=$?
	nvm_kill_group
	nvm_cleanup
	exit "$rc"
}
trap on_exit EXIT
trap 'nvm_kill_group; exit 130' INT TERM

fs_of()
{
	printf '%s (%s)' "$1" "$(stat -f -c %T "$1" 2>/dev/null || echo '?')"
}

# ---------------------------------------------------------------------------
# build and install
# ---------------------------------------------------------------------------

if ! nvm_truthy "${NVM_SKIP_PACKAGES:-}"; then
	nvm_install_packages || nvm_die "cannot install the packages nvmam needs"
fi
nvm_find_pg
mkdir -p "$BUILD_DIR"
rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"

if ! nvm_truthy "${NVM_SKIP_BUILD:-}"; then
	nvm_log "building a release build in ${BUILD_DIR#"$ROOT"/}"
	nvm_build "$ROOT" "$BUILD_DIR" -Dbuildtype=release -Db_ndebug=if-release \
		>"$OUT_DIR/build.log" 2>&1 || {
		tail -n 40 "$OUT_DIR/build.log" >&2
		nvm_die "build failed (log: $OUT_DIR/build.log)"
	}
	nvm_log "installing into $PG_PKGLIBDIR"
	nvm_install "$BUILD_DIR" >"$OUT_DIR/install.log" 2>&1 || {
		cat "$OUT_DIR/install.log" >&2
		nvm_die "install failed: run as root (or with sudo)"
	}
fi

# ---------------------------------------------------------------------------
# one contender
# ---------------------------------------------------------------------------

# pg DIR CMD ARGS...: runs a PostgreSQL client program against the cluster in
# DIR, as the server user.
pg()
{
	local dir=$1 prog=$2
	shift 2
	nvm_as_pg env PGHOST="$dir" PGPORT="$(cat "$dir/port")" PGUSER=postgres \
		"$PG_BINDIR/$prog" "$@"
}

# value LOG REGEX: first number captured by REGEX (sed -E, one group) in LOG.
value()
{
	sed -nE "s/$2/\\1/p" "$1" | head -n 1
}

# add_row CONTENDER SYNC LOCATION TPS COMMITS RETRIED FAILED
add_row()
{
	local IFS=$'\t'
	ROWS+=("$*")
}

# print_row ROW: one Markdown table row, with the ratio to heap's tps.
print_row()
{
	local contender sync location tps commits retried failed ratio="–"
	IFS=$'\t' read -r contender sync location tps commits retried failed <<<"$1"
	if [ -n "$HEAP_TPS" ] && [[ $tps =~ ^[0-9.]+$ ]]; then
		ratio=$(awk -v a="$tps" -v b="$HEAP_TPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }')
	fi
	echo "| $contender | $CLIENTS | $ISOLATION | $sync | $location | $tps | $commits | $retried | $failed | $ratio |"
}

# run_contender NAME: sets up, loads and measures one contender.
run_contender()
{
	local name=$1 am sync label dir shm='' location log tps commits retried failed cc=mcsi
	case "$name" in
		heap) am=heap sync=on label="heap" ;;
		heap-async) am=heap sync=off label="heap (reference)" ;;
		nvm) am=nvm sync=on label="nvm" cc=mcsi ;;
		nvm-n2db) am=nvm sync=on label="nvm-n2db" cc=n2db ;;
		*) nvm_die "unknown contender $name (heap, nvm, heap-async, nvm-n2db)" ;;
	esac
	log=$OUT_DIR/$name
	nvm_log "$label: synchronous_commit = $sync"

	dir=$(nvm_pg_tmpdir "$DATA_BASE" "nvmam-bench-$name")
	nvm_cleanup_add "nvm_cluster_stop '$dir'; cp -f '$dir/server.log' '$log.server.log' 2>/dev/null; rm -rf '$dir'"
	location="WAL: $(fs_of "$DATA_BASE")"
	nvm_cluster_init "$dir" "$(nvm_free_port)" || return 1
	nvm_cluster_conf "$dir" \
		"shared_buffers = '512MB'" \
		"max_connections = 50" \
		"synchronous_commit = $sync" \
		"max_wal_size = '4GB'" \
		"checkpoint_timeout = '30min'"
	if [ "$am" = nvm ]; then
		shm=$(nvm_pg_tmpdir /dev/shm "nvmam-bench")
		nvm_cleanup_add "rm -rf '$shm'"
		location="pool: $(fs_of /dev/shm); $location"
		nvm_cluster_conf "$dir" \
			"shared_preload_libraries = 'nvmam'" \
			"nvm.pool_path = '$shm/pool'" \
			"nvm.pool_size = '$POOL_SIZE'"
		# the default mode is left implicit, so this also runs on builds
		# that know no nvm.concurrency_control
		if [ "$cc" != mcsi ]; then
			nvm_cluster_conf "$dir" "nvm.concurrency_control = '$cc'"
		fi
	fi
	nvm_cluster_start "$dir" || return 1

	pg "$dir" psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE bench" || return 1
	if [ "$am" = nvm ]; then
		pg "$dir" psql -X -q -v ON_ERROR_STOP=1 -d bench \
			-c "CREATE EXTENSION nvmam" \
			-c "ALTER DATABASE bench SET default_table_access_method = nvm" || return 1
	fi

	nvm_log "$label: pgbench -i -s $SCALE"
	nvm_run_group 1200 "$log.init.log" "${AS_PG[@]}" env PGHOST="$dir" \
		PGPORT="$(cat "$dir/port")" PGUSER=postgres \
		"$PG_BINDIR/pgbench" -i -q -s "$SCALE" bench >/dev/null || {
		tail -n 20 "$log.init.log" >&2
		return 1
	}
	# every pgbench table must use the contender's access method
	if pg "$dir" psql -X -At -d bench -c \
		"SELECT c.relname || ' uses ' || a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		 WHERE c.relname LIKE 'pgbench\\_%' AND c.relkind = 'r' AND a.amname <> '$am'" |
		grep .; then
		nvm_warn "$label: tables above do not use $am"
		return 1
	fi
	pg "$dir" psql -X -q -d bench -c "CHECKPOINT" || return 1

	nvm_log "$label: pgbench -c $CLIENTS -j $CLIENTS -T $DURATION -M prepared --max-tries=10"
	nvm_run_group $((DURATION + 300)) "$log.run.log" "${AS_PG[@]}" env PGHOST="$dir" \
		PGPORT="$(cat "$dir/port")" PGUSER=postgres \
		PGOPTIONS='-c default_transaction_isolation=repeatable\ read' \
		"$PG_BINDIR/pgbench" -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" \
		-M prepared --max-tries=10 bench >/dev/null || {
		tail -n 20 "$log.run.log" >&2
		return 1
	}
	tps=$(value "$log.run.log" '^tps = ([0-9.]+) \(without initial connection time\).*')
	commits=$(value "$log.run.log" '^number of transactions actually processed: ([0-9]+).*')
	retried=$(value "$log.run.log" '^number of transactions retried: ([0-9]+).*')
	failed=$(value "$log.run.log" '^number of failed transactions: ([0-9]+).*')
	[ -n "$tps" ] || {
		nvm_warn "$label: no tps in $log.run.log"
		return 1
	}
	tps=$(printf '%.0f' "$tps")
	if [ "$name" = heap ]; then
		HEAP_TPS=$tps
	fi
	if [ "$am" = nvm ]; then
		# the mode the server really ran (nvm.concurrency_control)
		label="nvm, $(pg "$dir" psql -X -At -d bench -c \
			"SELECT upper(coalesce(current_setting('nvm.concurrency_control', true), 'mcsi'))")"
	fi
	add_row "$label" "$sync" "$location" "$tps" "${commits:-?}" "${retried:-0}" "${failed:-0}"
	nvm_cleanup
}

AS_PG=()
if [ "$(id -u)" -eq 0 ]; then
	AS_PG=(runuser -u "$(nvm_pg_user)" --)
fi

START=$(date +%s)
for c in $CONTENDERS; do
	if ! run_contender "$c"; then
		nvm_warn "contender $c failed (logs: $OUT_DIR)"
		add_row "$c" "–" "–" "error (see ${OUT_DIR#"$ROOT"/}/$c.*)" "–" "–" "–"
		FAILED=$((FAILED + 1))
		nvm_cleanup
	fi
done

# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
{
	echo
	echo "## nvmam quick benchmark: pgbench TPC-B (scale $SCALE)"
	echo
	echo "- $PG_VERSION_STRING; $(nproc) cores${cpu:+ ($cpu)}; $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- each contender: fresh cluster, \`pgbench -i -s $SCALE\`, CHECKPOINT, then"
	echo "  \`pgbench -c $CLIENTS -j $CLIENTS -T $DURATION -M prepared --max-tries=10\`"
	echo "  with default_transaction_isolation = '$ISOLATION' (snapshot isolation)"
	echo "- tps excludes connection time; commits = transactions processed; retried = transactions"
	echo "  that hit a serialization failure and succeeded on a later try; failed = gave up after 10 tries"
	echo "- ratio = tps / tps of heap with synchronous_commit = on"
	echo
	echo "| contender | clients | isolation | synchronous_commit | pool / WAL location | tps | commits | retried | failed | ratio to heap |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for r in "${ROWS[@]}"; do
		print_row "$r"
	done
	if [[ " $CONTENDERS " != *" nvm-n2db "* ]]; then
		echo "| nvm, N2DB baseline | – | – | – | – | not measured | – | – | – | – |"
		echo
		echo "N2DB mode does not exist yet (nvm.concurrency_control = n2db is planned): no N2DB number above."
	fi
	echo "Single short runs on a small machine: differences under ~10% are noise."
	echo "Total time: $(($(date +%s) - START)) s. Logs: $OUT_DIR"
} | tee "$OUT_DIR/results.md"

[ "$FAILED" -eq 0 ] || exit 1

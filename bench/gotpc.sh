#!/usr/bin/env bash
#
# bench/gotpc.sh
#	  Cross-check of our TPC-C scripts with an outside implementation:
#	  pingcap/go-tpc v1.0.9 (TPC-C over the PostgreSQL protocol), New-Order
#	  45% + Payment 55% at REPEATABLE READ (--isolation 4), on heap
#	  (synchronous_commit = on, WAL on disk) and on nvm (MCSI, and N2DB),
#	  each on a fresh cluster, then go-tpc's consistency check.  Not part of
#	  bench/run.sh --quick.
#
#	  bench/gotpc.sh [--out DIR] [--warehouses N] [--threads N] [--time 60s]
#	                 [--contenders "heap nvm-mcsi nvm-n2db"]
#
#	  go-tpc is built from the Go module proxy into a scratch directory
#	  outside the repository (NVM_GOTPC_DIR, default /var/tmp/nvmam-gotpc;
#	  needs `go`).  It draws a random home warehouse per transaction and does
#	  not retry aborted transactions: it counts them as NEW_ORDER_ERR /
#	  PAYMENT_ERR, so it cross-checks bench/workloads/tpcc_*.sql rather than
#	  replacing them.
#
#	  Writes DIR/gotpc.md (a table per contender) and DIR/gotpc-*.log; when
#	  DIR holds a bench/run.sh result (results.csv) its report.md is
#	  regenerated with a go-tpc section.  DIR defaults to
#	  build-bench/bench-latest.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

OUT=$ROOT/build-bench/bench-latest
WAREHOUSES=1
THREADS=4
TIME=60s
CONTENDERS="heap nvm-mcsi nvm-n2db"
nvm_options "out=OUT warehouses=WAREHOUSES threads=THREADS time=TIME contenders=CONTENDERS" "$@"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
GODIR=${NVM_GOTPC_DIR:-/var/tmp/nvmam-gotpc}
GOTPC=$GODIR/bin/go-tpc

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

nvm_find_pg

# ---------------------------------------------------------------------------
# go-tpc v1.0.9, built in a scratch directory
# ---------------------------------------------------------------------------

if [ ! -x "$GOTPC" ]; then
	command -v go >/dev/null 2>&1 || nvm_die "go not found: install Go (golang-go) to build go-tpc"
	mkdir -p "$GODIR"
	nvm_log "building go-tpc v1.0.9 in $GODIR"
	(
		cd "$GODIR"
		printf 'module peers\n\ngo 1.21\n\nrequire github.com/pingcap/go-tpc v1.0.9\n' >go.mod
		printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/pingcap/go-tpc/cmd/go-tpc"\n' >tools.go
		GONOSUMDB=github.com/pingcap/go-tpc GOFLAGS=-buildvcs=false go mod tidy
		GOFLAGS=-buildvcs=false go build -o bin/go-tpc github.com/pingcap/go-tpc/cmd/go-tpc
	) >"$OUT/gotpc-build.log" 2>&1 || {
		tail -n 20 "$OUT/gotpc-build.log" >&2
		nvm_die "building go-tpc failed (log: $OUT/gotpc-build.log)"
	}
fi

# ---------------------------------------------------------------------------
# one contender
# ---------------------------------------------------------------------------

# summary LOG: the [Summary] lines of a go-tpc run as Markdown table rows
summary()
{
	awk '/^\[Summary\]/ {
		name = $2; count = ""; tpm = ""; avg = ""; p50 = ""; p99 = ""
		for (i = 3; i <= NF; i++) {
			v = $(i + 1); sub(/,$/, "", v)
			if ($i == "Count:") count = v
			else if ($i == "TPM:") tpm = v
			else if ($i == "Avg(ms):") avg = v
			else if ($i == "50th(ms):") p50 = v
			else if ($i == "99th(ms):") p99 = v
		}
		printf "| %s | %s | %s | %s | %s | %s |\n", name, count, tpm, avg, p50, p99
	}' "$1"
}

ROWS=()
run_contender()
{
	local c=$1 dir shm port am=heap cc='' log=$OUT/gotpc-$1.log go_args
	case "$c" in
		heap) ;;
		nvm-mcsi) am=nvm cc=mcsi ;;
		nvm-n2db) am=nvm cc=n2db ;;
		*) nvm_die "unknown contender $c (heap, nvm-mcsi, nvm-n2db)" ;;
	esac
	nvm_cluster_new dir /var/tmp "nvmam-gotpc-$c" "$OUT/gotpc-$c.server.log" || return 1
	port=$(cat "$dir/port")
	# go-tpc speaks TCP
	nvm_cluster_conf "$dir" "listen_addresses = '127.0.0.1'" "shared_buffers = '512MB'" \
		"max_connections = 100" "synchronous_commit = on" "max_wal_size = '2GB'" \
		"autovacuum = off"
	if [ "$am" = nvm ]; then
		shm=$(nvm_pg_tmpdir /dev/shm "nvmam-gotpc-pool")
		nvm_cleanup_add "rm -rf '$shm'"
		nvm_cluster_conf "$dir" "shared_preload_libraries = 'nvmam'" \
			"nvm.pool_path = '$shm/pool'" "nvm.pool_size = '2GB'" "nvm.durability = 'pool'" \
			"nvm.concurrency_control = '$cc'"
	fi
	nvm_cluster_start "$dir" || return 1
	nvm_psql "$dir" postgres -c "CREATE DATABASE tpcc" || return 1
	if [ "$am" = nvm ]; then
		nvm_psql "$dir" tpcc -c "CREATE EXTENSION nvmam" \
			-c "ALTER DATABASE tpcc SET default_table_access_method = nvm" || return 1
	fi
	go_args=(-d postgres -U postgres -D tpcc -H 127.0.0.1 -P "$port"
		--conn-params sslmode=disable --warehouses "$WAREHOUSES")
	{
		echo "## prepare"
		"$GOTPC" tpcc prepare "${go_args[@]}" -T 2
	} >"$log" 2>&1 || { tail -n 20 "$log" >&2; return 1; }
	# every table must use the contender's access method
	if nvm_psql "$dir" tpcc -At -c "SELECT c.relname || ' uses ' || a.amname FROM pg_class c
		JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = 'public' AND a.amname <> '$am'" | grep .; then
		nvm_warn "$c: go-tpc's tables do not all use $am"
		return 1
	fi
	nvm_psql "$dir" postgres -c CHECKPOINT
	nvm_log "$c: go-tpc tpcc run, $WAREHOUSES warehouse(s), $THREADS threads, $TIME, REPEATABLE READ"
	{
		echo "## run"
		"$GOTPC" tpcc run "${go_args[@]}" -T "$THREADS" --weight 45,55,0,0,0 \
			--isolation 4 --ignore-error --time "$TIME"
		echo "## check"
		"$GOTPC" tpcc check "${go_args[@]}" && echo "check: passed" || echo "check: FAILED"
	} >>"$log" 2>&1 || true
	local s check
	s=$(summary "$log")
	check=$(grep -E '^check: ' "$log" | tail -n 1)
	ROWS+=("### $c (consistency check: ${check#check: })" "" \
		"| transaction | count | tpm | avg ms | p50 ms | p99 ms |" "|---|---|---|---|---|---|" \
		"${s:-| (no summary: see gotpc-$c.log) | | | | | |}" "")
	nvm_cleanup
}

for c in $CONTENDERS; do
	if ! run_contender "$c"; then
		nvm_warn "$c failed (logs: $OUT/gotpc-$c.*)"
		ROWS+=("### $c: failed (see gotpc-$c.log)" "")
		nvm_cleanup
	fi
done

{
	echo "go-tpc v1.0.9 \`tpcc run --warehouses $WAREHOUSES -T $THREADS --weight 45,55,0,0,0" \
		"--isolation 4 --ignore-error --time $TIME\` ($PG_VERSION_STRING; $(nproc) cores;" \
		"synchronous_commit = on, WAL on disk; nvm pool in /dev/shm), then \`tpcc check\`" \
		"(TPC-C consistency conditions): the heading says whether it passed. go-tpc picks a" \
		"random home warehouse per transaction and does not retry: *_ERR rows are aborted" \
		"transactions (serialization failures at REPEATABLE READ). tpm = per minute."
	echo
	printf '%s\n' "${ROWS[@]}"
} >"$OUT/gotpc.md"
cat "$OUT/gotpc.md"
if [ -f "$OUT/results.csv" ]; then
	/usr/bin/python3 "$ROOT/bench/lib/report.py" "$OUT" >/dev/null &&
		nvm_log "report regenerated: $OUT/report.md"
fi

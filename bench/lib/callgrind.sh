# bench/lib/callgrind.sh
#	  What the callgrind benchmarks (bench/pointread_callgrind.sh,
#	  bench/cpu_per_row.sh,
#	  bench/copy_callgrind.sh) share: a throwaway cluster whose postmaster
#	  runs under callgrind with its children, the instruction count of the
#	  backend that did a piece of work, and the difference of two such
#	  counts by function; psql on that cluster, and the file of the bulk
#	  family's rows that the COPY benchmarks load.  Sourced after regress/lib/common.sh and
#	  regress/lib/cluster.sh; every function uses the caller's D (the
#	  cluster's scratch directory), PORT and PG_BINDIR.

# cg_psql ARGS...: psql on the cluster's postgres database as postgres,
# stopping at the first error
cg_psql()
{
	nvm_as_pg env PGHOST="$D" PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres \
		"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

# cg_bulk_rows_file N: writes the first N of the bulk family's rows
# (bench/workloads/bulk_rows.sql) to $D/data/cp_N.copy
cg_bulk_rows_file()
{
	cg_psql -v rows="$1" -v copyfile="$D/data/cp_$1.copy" -f "$ROOT/bench/workloads/bulk_rows.sql"
}

# cg_cluster_start MODE PRELOAD_CMD CG_ARGS -- CONF...: makes the cluster in
# $D with nvmam preloaded (pool in $D, durability pool, MODE's concurrency
# control) and the settings CONF, and starts its postmaster under callgrind
# (valgrind options CG_ARGS, a space-separated string; PRELOAD_CMD, also a
# string, runs it, e.g. "env LD_PRELOAD=..."), one callgrind file per
# process in $D/cg; returns once it accepts connections.
cg_cluster_start()
{
	local mode=$1 preload=$2 cg_args=$3
	shift 4
	mkdir -p "$D/cg"
	chown "$(nvm_pg_user):" "$D/cg" 2>/dev/null || true
	nvm_cleanup_add "nvm_as_pg '$PG_BINDIR/pg_ctl' -D '$D/data' -m immediate -w stop >/dev/null 2>&1; rm -rf '$D'"
	nvm_cluster_init "$D" "$PORT"
	nvm_cluster_conf "$D" \
		"shared_buffers = '256MB'" \
		"autovacuum = off" \
		"checkpoint_timeout = '1d'" \
		"$@" \
		"shared_preload_libraries = 'nvmam'" \
		"nvm.pool_path = '$D/pool'" "nvm.durability = 'pool'" \
		"nvm.pool_size = '1GB'" \
		"nvm.concurrency_control = '$mode'"
	# shellcheck disable=SC2086 # preload and cg_args are word lists
	nvm_as_pg $preload valgrind --tool=callgrind --trace-children=yes $cg_args \
		--callgrind-out-file="$D/cg/callgrind.out.%p" \
		"$PG_BINDIR/postgres" -D "$D/data" >"$D/server.log" 2>&1 &
	for _ in $(seq 1 600); do
		if nvm_as_pg "$PG_BINDIR/pg_isready" -q -h "$D" -p "$PORT"; then break; fi
		sleep 1
	done
	nvm_as_pg "$PG_BINDIR/pg_isready" -q -h "$D" -p "$PORT" || nvm_die "the server under valgrind did not start"
}

# cg_settle: waits until processes that ended have written their callgrind
# files (the count of files stays the same for two seconds)
cg_settle()
{
	local last=-1 now
	while :; do
		now=$(find "$D/cg" -type f -size +0 | wc -l)
		[ "$now" = "$last" ] && return
		last=$now
		sleep 2
	done
}

# cg_busiest_since BEFORE DEST WHAT: of the callgrind files written since
# BEFORE (a listing of $D/cg), copies the one with the most instructions
# (the backend that did the work: a client may start a short-lived process
# first) to DEST and prints its count; dies naming WHAT when there is none
cg_busiest_since()
{
	local before=$1 dest=$2 what=$3 best=0 best_file= f ir
	cg_settle
	for f in $(comm -13 <(printf '%s\n' "$before") <(ls "$D/cg")); do
		ir=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$D/cg/$f")
		if [ -n "$ir" ] && [ "$ir" -gt "$best" ]; then
			best=$ir
			best_file=$f
		fi
	done
	[ -n "$best_file" ] || nvm_die "no callgrind file for the $what backend"
	cp "$D/cg/$best_file" "$dest"
	echo "$best"
}

# cg_by_function SHORT_FILE LONG_FILE COUNT SCALE HEADER MIN FORMAT
# [callgrind_annotate options]: the event (Ir unless --show says otherwise)
# by function, the long file's minus the short one's per SCALE of the COUNT
# operations between them (start-up and exit cancel out),
# functions at MIN or more, largest first, each value in the Python FORMAT
# under the column HEADER
cg_by_function()
{
	local short=$1 long=$2 count=$3 scale=$4 header=$5 min=$6 fmt=$7
	shift 7
	python3 - "$count" "$scale" "$header" "$min" "$fmt" \
		<(callgrind_annotate "$@" --threshold=100 "$short" 2>/dev/null) \
		<(callgrind_annotate "$@" --threshold=100 "$long" 2>/dev/null) <<'PY'
import re, sys
per = int(sys.argv[1]) / int(sys.argv[2])
header, low, fmt = sys.argv[3], float(sys.argv[4]), sys.argv[5]
def costs(path):
    out = {}
    for line in open(path):
        m = re.match(r'\s*([0-9,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$', line)
        if m and ':' in m.group(2) and 'PROGRAM TOTALS' not in m.group(2):
            name = re.sub(r' \[.*\]$', '', m.group(2))
            name = name.split(':', 1)[1] if name.startswith(('???', '.', '/')) else name
            out[name] = out.get(name, 0) + int(m.group(1).replace(',', ''))
    return out
a, b = costs(sys.argv[6]), costs(sys.argv[7])
rows = sorted(((b.get(k, 0) - a.get(k, 0)) / per, k) for k in set(a) | set(b))
rows = [r for r in rows if r[0] >= low][::-1]
print(header + "  function")
for v, k in rows[:400]:
    print(format(v, fmt) + "  " + k)
PY
}

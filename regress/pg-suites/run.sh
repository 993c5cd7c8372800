#!/usr/bin/env bash
#
# regress/pg-suites/run.sh
#	  Runs PostgreSQL's own core regression suite and isolation suite (of
#	  PostgreSQL 15, or 18 with --pg-version 18) with nvm as the default
#	  table access method, in both concurrency-control modes, and compares
#	  the outcome with an explicit allow-list of known differences of that
#	  version (regress/pg-suites/MAJOR/allowlist, one line per test with its
#	  reason, and the accepted diff of each in
#	  regress/pg-suites/MAJOR/expected/).  A test that fails without being
#	  allow-listed, an allow-listed test whose diff is not exactly the
#	  accepted one, or a server crash fails the run.  Tests in
#	  regress/pg-suites/MAJOR/skiplist (with their reasons) are taken out of
#	  the schedules: they cannot finish on nvm tables (they would wait for a
#	  timeout).
#
# PostgreSQL 15: the test sources come from Debian's source package of
# PostgreSQL 15 (the version in PG_SUITES_DEB_VERSION), fetched with apt-get
# into a private apt state under the cache directory (the system's apt
# configuration is not touched).  The tests run on that same minor release: its binary packages
# (postgresql-15, postgresql-client-15, postgresql-server-dev-15) are
# unpacked into a private tree under the cache, nvmam is built from this
# checkout against that tree's headers and installed into it, and the
# servers, psql, pg_regress and pg_isolation_regress all come from it.  The
# installed server is often a later security release whose source package
# Debian's archive does not serve, and a later release's changes (rule
# deparsing, error messages, contrib/spi) would show up as differences that
# have nothing to do with nvm.  regress.so is built from the sources with
# the tree's pgxs.
#
# PostgreSQL 18: the sources and the programs are those regress/build-
# postgresql.sh 18 built (its prefix, with the configured source tree and
# regress.so in its src/): the tests, the servers, psql, pg_regress and
# pg_isolation_regress all come from that one build.
#
# Needs root (or the postgres user's rights) like regress/run-tests.sh: the
# servers run as "postgres".  Builds nvmam in build-pgsuites/nvmam-VERSION
# and installs it into the tree (unless --no-build).
#
# Usage: regress/pg-suites/run.sh [options]
#	--pg-version 15|18			which PostgreSQL (default NVM_PG_VERSION, else 15)
#	--suites "core isolation"	which suites (default both)
#	--modes "mcsi n2db"			nvm.concurrency_control modes (default both)
#	--am nvm|heap				default_table_access_method (heap: a baseline
#								run in one mode; its failures show the version
#								skew between the tests and the server, and are
#								checked against the same allow-list, so the
#								nvm-only entries show up as differences)
#	--tests "a b"				core tests to run instead of the schedule
#	--specs "a b"				isolation specs to run instead of the schedule
#	--record					write the diffs of every failing test into
#								expected/ (a starting point for the allow-list;
#								review them, then add reasons to allowlist)
#	--out DIR					keep outputs in DIR (default build-pgsuites/out,
#								build-pgsuites/out-pg18 for 18)
#	--no-build					use the nvmam installed in the tree as it is
#								(regress/run-tests.sh on 18, which installed
#								it there)
#
# Environment: PG_SUITES_CACHE (default build-pgsuites/cache in the checkout;
# 15 only), PG_SUITES_TIMEOUT (seconds per suite run, default 900),
# NVM_PG_VERSION (the default of --pg-version).
#
# The last line printed is "pg-suites: N passed, M failed" counting every
# test of every run (allow-listed differences count as passed); the exit
# status is non-zero when anything failed.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

# apt.sh after common.sh: its helpers use nvm_log
# shellcheck source=regress/lib/apt.sh
. "$ROOT/regress/lib/apt.sh"

PG_SUITES_DEB_VERSION=${PG_SUITES_DEB_VERSION:-15.18-0+deb12u1}
CACHE=${PG_SUITES_CACHE:-$ROOT/build-pgsuites/cache}
PGV=${NVM_PG_VERSION:-15}
OUT=
BUILD=1
SUITES="core isolation"
MODES="mcsi n2db"
AM=nvm
TESTS=
SPECS=
RECORD=0
TIMEOUT=${PG_SUITES_TIMEOUT:-900}

while [ $# -gt 0 ]; do
	case "$1" in
		--suites) SUITES=$2; shift 2 ;;
		--modes) MODES=$2; shift 2 ;;
		--am) AM=$2; shift 2 ;;
		--tests) TESTS=$2; shift 2 ;;
		--specs) SPECS=$2; shift 2 ;;
		--record) RECORD=1; shift ;;
		--out) OUT=$2; shift 2 ;;
		--pg-version) PGV=$2; shift 2 ;;
		--no-build) BUILD=0; shift ;;
		-h | --help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) nvm_die "unknown option $1 (see --help)" ;;
	esac
done
case "$AM" in
	nvm | heap) ;;
	*) nvm_die "--am must be nvm or heap" ;;
esac
[ "$AM" = heap ] && MODES=mcsi
case "$PGV" in
	15 | 18) ;;
	*) nvm_die "--pg-version must be 15 or 18, not $PGV" ;;
esac
# the version's allow-list, skip-list and accepted diffs
LISTS=$HERE/$PGV
[ -f "$LISTS/allowlist" ] || nvm_die "no ${LISTS#"$ROOT"/}/allowlist"
if [ -z "$OUT" ]; then
	OUT=$ROOT/build-pgsuites/out
	[ "$PGV" = 15 ] || OUT=$OUT-pg$PGV
fi

WORK=
SHM=
PASSED=0
FAILED=0
SUMMARY=()

# shellcheck disable=SC2317 # called through trap
on_exit()
{
	local rc=$?
	nvm_kill_group
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		nvm_stop_all_under "$WORK"
		rm -rf "$WORK"
	fi
	[ -n "$SHM" ] && rm -rf "$SHM"
	exit "$rc"
}
trap on_exit EXIT
trap 'nvm_kill_group; exit 130' INT TERM

# ---------------------------------------------------------------------------
# sources, client and regress.so
# ---------------------------------------------------------------------------

# apt_private ARGS...: apt-get on Debian 12's binary and source packages,
# with a private state under the cache
apt_private()
{
	nvm_apt_private "$CACHE" bookworm "deb deb-src" "$@"
}

# The binary packages of PG_SUITES_DEB_VERSION unpacked into the tree.
PACKAGES="postgresql-15 postgresql-client-15 postgresql-server-dev-15"

# The tree the suites run on, set by prepare_sources_15 or _18:
#	UPSTREAM	its version (15.18)
#	SRC			PostgreSQL's source tree, with src/test/regress/regress.so
#	TREE		the directory that holds the programs (made readable)
#	TREE_CONFIG	its pg_config; TREE_BIN, TREE_LIB (pkglibdir) and
#				TREE_TEST (pgxs's src/test) from it (tree_dirs)
tree_dirs()
{
	local pgxs
	TREE_BIN=$("$TREE_CONFIG" --bindir)
	TREE_LIB=$("$TREE_CONFIG" --pkglibdir)
	pgxs=$("$TREE_CONFIG" --pgxs)
	TREE_TEST=$(dirname "$(dirname "$pgxs")")/test
	[ -x "$TREE_BIN/psql" ] || nvm_die "no psql in $TREE_BIN"
	[ -x "$TREE_TEST/regress/pg_regress" ] || nvm_die "no pg_regress in $TREE_TEST/regress"
	[ -x "$TREE_TEST/isolation/pg_isolation_regress" ] ||
		nvm_die "no pg_isolation_regress in $TREE_TEST/isolation"
	[ -f "$SRC/src/test/regress/regress.so" ] || nvm_die "no regress.so in $SRC/src/test/regress"
}

# PostgreSQL 15: downloads (once) and unpacks the sources and the binary
# packages of the same version into TREE; builds regress.so against TREE.
prepare_sources_15()
{
	local dl=$CACHE/downloads src p missing=0 tree_pg
	UPSTREAM=${PG_SUITES_DEB_VERSION%%-*}
	SRC=$CACHE/postgresql-$UPSTREAM
	TREE=$CACHE/pg-$UPSTREAM
	tree_pg=$TREE/usr/lib/postgresql/15
	mkdir -p "$dl"
	[ -f "$dl/postgresql-15_$UPSTREAM.orig.tar.bz2" ] || missing=1
	for p in $PACKAGES; do
		[ -f "$dl/${p}_${PG_SUITES_DEB_VERSION}_amd64.deb" ] || missing=1
	done
	if [ "$missing" = 1 ]; then
		nvm_log "fetching postgresql-15 $PG_SUITES_DEB_VERSION (source and binary packages)"
		apt_private update >"$CACHE/apt-update.log" 2>&1 ||
			{ cat "$CACHE/apt-update.log" >&2; nvm_die "apt-get update (private state) failed"; }
		# shellcheck disable=SC2086 # one argument per package
		(cd "$dl" && apt_private source --download-only "postgresql-15=$PG_SUITES_DEB_VERSION" &&
			apt_private download $(printf "%s=$PG_SUITES_DEB_VERSION " $PACKAGES)) \
			>"$CACHE/apt-download.log" 2>&1 ||
			{ cat "$CACHE/apt-download.log" >&2; nvm_die "downloading postgresql-15 $PG_SUITES_DEB_VERSION failed"; }
	fi
	if [ ! -f "$SRC/src/test/regress/regress.so" ] || [ ! -x "$tree_pg/bin/postgres" ]; then
		nvm_log "unpacking PostgreSQL $UPSTREAM and building regress.so"
		rm -rf "$SRC" "$TREE"
		tar -C "$CACHE" -xjf "$dl/postgresql-15_$UPSTREAM.orig.tar.bz2" || nvm_die "cannot unpack the sources"
		[ -d "$SRC" ] || nvm_die "$SRC missing after unpacking"
		src=$(ls "$dl"/postgresql-15_"$PG_SUITES_DEB_VERSION".debian.tar.*)
		tar -C "$SRC" -xf "$src" || nvm_die "cannot unpack $src"
		for p in $PACKAGES; do
			dpkg -x "$dl/${p}_${PG_SUITES_DEB_VERSION}_amd64.deb" "$TREE" || nvm_die "cannot unpack $p"
		done
		make -C "$SRC/src/test/regress" -f "$SRC/debian/tests/Makefile.regress" \
			PG_CONFIG="$tree_pg/bin/pg_config" with_llvm=no >"$CACHE/regress-build.log" 2>&1 ||
			{ cat "$CACHE/regress-build.log" >&2; nvm_die "building regress.so failed"; }
	fi
	TREE_CONFIG=$tree_pg/bin/pg_config
	# PostgreSQL finds its libraries and share directory relative to its
	# programs, so the tree's pg_config names the tree's directories.
	case "$("$TREE_CONFIG" --pkglibdir)" in
		"$TREE"/*) ;;
		*) nvm_die "$TREE_CONFIG does not name the unpacked tree's directories" ;;
	esac
	tree_dirs
}

# PostgreSQL 18: the build of regress/build-postgresql.sh 18 (made the
# first time), its prefix and the source tree in it.
prepare_sources_18()
{
	local out
	out=$(bash "$ROOT/regress/build-postgresql.sh" 18) || nvm_die "regress/build-postgresql.sh 18 failed"
	TREE_CONFIG=$(printf '%s\n' "$out" | tail -n 1)
	TREE=$(dirname "$(dirname "$TREE_CONFIG")")
	SRC=$TREE/src
	UPSTREAM=$("$TREE_CONFIG" --version | awk '{print $2}')
	tree_dirs
}

# Builds nvmam from this checkout against the tree's headers and installs it
# into the tree.
build_nvmam()
{
	local build=$ROOT/build-pgsuites/nvmam-$UPSTREAM
	nvm_log "building nvmam against PostgreSQL $UPSTREAM in ${build#"$ROOT"/}"
	(PG_CONFIG=$TREE_CONFIG nvm_build "$ROOT" "$build" >"$build.log" 2>&1 &&
		meson install -C "$build" --no-rebuild >>"$build.log" 2>&1) ||
		{ tail -n 40 "$build.log" >&2; nvm_die "building nvmam against PostgreSQL $UPSTREAM failed (${build#"$ROOT"/}.log)"; }
}

# Copies what the server user must read into WORK: the test directories and
# a bindir with the tree's programs.
prepare_work()
{
	local p
	WORK=$(nvm_pg_tmpdir "${TMPDIR:-/tmp}" nvmam-pgsuites) || nvm_die "cannot make a temporary directory"
	SHM=$(nvm_pg_tmpdir /dev/shm nvmam-pgsuites) || nvm_die "cannot make a directory in /dev/shm"
	mkdir -p "$WORK/bin" "$WORK/regress" "$WORK/isolation" "$WORK/lib"
	for p in initdb pg_ctl postgres pg_controldata psql; do
		ln -s "$TREE_BIN/$p" "$WORK/bin/$p"
	done
	cp -r "$SRC/src/test/regress/sql" "$SRC/src/test/regress/expected" "$SRC/src/test/regress/data" \
		"$SRC/src/test/regress/parallel_schedule" "$SRC/src/test/regress/resultmap" "$WORK/regress/"
	cp "$SRC/src/test/regress/regress.so" "$WORK/lib/"
	# 15's triggers test loads contrib/spi's modules from the same directory
	for p in autoinc refint; do
		[ ! -f "$TREE_LIB/$p.so" ] || ln -s "$TREE_LIB/$p.so" "$WORK/lib/$p.so"
	done
	cp -r "$SRC/src/test/isolation/specs" "$SRC/src/test/isolation/expected" \
		"$SRC/src/test/isolation/isolation_schedule" "$WORK/isolation/"
	if [ "$(id -u)" -eq 0 ]; then
		chown -R "$(nvm_pg_user):" "$WORK"
	fi
	chmod -R a+rX "$WORK" "$TREE"
	AS_PG=()
	if [ "$(id -u)" -eq 0 ]; then
		AS_PG=(runuser -u "$(nvm_pg_user)" --)
	fi
}

# ---------------------------------------------------------------------------
# one run of a suite
# ---------------------------------------------------------------------------

# write_conf FILE MODE POOL
write_conf()
{
	{
		echo "# written by regress/pg-suites/run.sh"
		echo "max_prepared_transactions = 10"
		if [ "$AM" = nvm ]; then
			echo "shared_preload_libraries = 'nvmam'"
			echo "nvm.pool_path = '$3'"
			echo "nvm.pool_size = '1GB'"
			echo "nvm.concurrency_control = '$2'"
			echo "default_table_access_method = nvm"
			# Pruning at every update hands freed version numbers (TIDs)
			# to the next write at once, so the row order of small
			# updated tables would depend on the snapshots of concurrent
			# tests; heap prunes a page only when it is nearly full, and
			# the suites expect that.  VACUUM and autovacuum still collect.
			echo "nvm.prune_on_update = off"
			# the mode's own settings for the suites (regress/modes/)
			if [ -f "$ROOT/regress/modes/$2.conf" ]; then
				grep -v '^#' "$ROOT/regress/modes/$2.conf"
			fi
		fi
	} >"$1"
	chmod 644 "$1"
}

# normalise_diff: the diff of one test without file names, dates and line
# numbers, so that an accepted diff stays comparable.
normalise_diff()
{
	sed -E -e '/^diff /d' -e '/^(---|\+\+\+) /d' -e 's/^@@ -[0-9,]+ \+[0-9,]+ @@.*/@@/'
}

# split_diffs DIFFS DIR: writes DIR/TEST.diff (normalised) per test in the
# pg_regress diff file DIFFS.
split_diffs()
{
	mkdir -p "$2"
	[ -f "$1" ] || return 0
	awk -v dir="$2" '
		/^diff / {
			n = split($NF, parts, "/"); name = parts[n]; sub(/\.out$/, "", name)
			file = dir "/" name ".diff"; next
		}
		file != "" { print > file }
	' "$1"
	local f
	for f in "$2"/*.diff; do
		[ -f "$f" ] || continue
		normalise_diff <"$f" >"$f.tmp" && mv "$f.tmp" "$f"
	done
}

# list_reason FILE SUITE TEST: prints the reason, fails when not listed.
list_reason()
{
	awk -v s="$2" -v t="$3" '
		/^[ \t]*(#|$)/ { next }
		$1 == s && $2 == t { $1 = ""; $2 = ""; sub(/^ +/, ""); print; found = 1; exit }
		END { exit !found }
	' "$1"
}

# allowlist_reason SUITE TEST MODE: the allow-list's reason for TEST in
# MODE; an entry whose reason starts with [mode:M ...] holds in those modes
# only (a mode that differs from PostgreSQL by design, e.g. POMVCC's
# refusal of SERIALIZABLE).
allowlist_reason()
{
	local reason modes
	reason=$(list_reason "$LISTS/allowlist" "$1" "$2") || return 1
	if [[ $reason =~ ^\[mode:([a-z0-9 ]+)\]\ *(.*)$ ]]; then
		modes=" ${BASH_REMATCH[1]} "
		[[ $modes == *" $3 "* ]] || return 1
		reason=${BASH_REMATCH[2]}
	fi
	printf '%s\n' "$reason"
}

# filter_schedule SUITE IN OUT: the schedule IN without the tests that the
# skip-list names for SUITE.
filter_schedule()
{
	local skip
	skip=$(awk -v s="$1" '!/^[ \t]*(#|$)/ && $1 == s {print $2}' "$LISTS/skiplist" 2>/dev/null | paste -sd ' ' -)
	awk -v skip="$skip" '
		BEGIN { n = split(skip, a, " "); for (i = 1; i <= n; i++) drop[a[i]] = 1 }
		/^test:/ {
			line = "test:"; kept = 0
			for (i = 2; i <= NF; i++) if (!($i in drop)) { line = line " " $i; kept++ }
			if (kept) print line
			next
		}
		{ print }
	' "$2" >"$3"
}

# accepted_diff SUITE TEST MODE: the accepted diff's file (a mode's own when
# it has one).
accepted_diff()
{
	if [ -f "$LISTS/expected/$1/$2.$3.diff" ]; then
		echo "$LISTS/expected/$1/$2.$3.diff"
	else
		echo "$LISTS/expected/$1/$2.diff"
	fi
}

# record_diff SUITE TEST MODE DIFF: --record keeps DIFF as the accepted
# diff: the suite's, or the mode's own when the suite's differs.
record_diff()
{
	local dir=$LISTS/expected/$1
	mkdir -p "$dir"
	if [ ! -f "$dir/$2.diff" ] || { [ ! -f "$dir/$2.$3.diff" ] && [ "$3" = mcsi ]; }; then
		cp "$4" "$dir/$2.diff"
		echo "RECORDED    $1 $2: ${dir#"$ROOT"/}/$2.diff"
	elif ! cmp -s "$4" "$dir/$2.diff"; then
		cp "$4" "$dir/$2.$3.diff"
		echo "RECORDED    $1 $2 ($3): ${dir#"$ROOT"/}/$2.$3.diff"
	else
		rm -f "$dir/$2.$3.diff"
	fi
}

# test_results LOG: "ok TEST" or "FAILED TEST" per test that pg_regress or
# pg_isolation_regress reported in LOG, in either of their formats: 15's
# ("test name ... ok", "     name ... FAILED") and 18's TAP ("ok 1 - name",
# "not ok 2 + name"); a test that failed but was ignored counts as neither
test_results()
{
	sed -nE \
		-e 's/^(test)? +([a-zA-Z0-9_.-]+) +\.\.\. +ok.*/ok \2/p' \
		-e 's/^(test)? +([a-zA-Z0-9_.-]+) +\.\.\. +FAILED.*/FAILED \2/p' \
		-e 's/^(test)? +([a-zA-Z0-9_.-]+) +\.\.\. .*/other \2/p' \
		-e 's/^ok +[0-9]+ +[-+] +([a-zA-Z0-9_.-]+) .*/ok \1/p' \
		-e 's/^not ok +[0-9]+ +[-+] +([a-zA-Z0-9_.-]+) .*/FAILED \1/p' "$1" 2>/dev/null
}

# run_suite SUITE MODE
run_suite()
{
	local suite=$1 mode=$2 name out conf port log rc driver db inputdir
	local -a args tests=()
	local t total=0 exact=0 allowed=0 bad=0 failed_list crashed=0 reason acc skipped results
	name=$suite-$mode
	[ "$AM" = heap ] && name=$suite-heap
	out=$WORK/$name
	conf=$WORK/$name.conf
	log=$OUT/$name.log
	write_conf "$conf" "$mode" "$SHM/$name.pool"
	port=$(nvm_free_port)
	nvm_as_pg mkdir -p "$out"
	if [ "$suite" = core ]; then
		driver=$TREE_TEST/regress/pg_regress
		db=regression
		inputdir=$WORK/regress
		[ -n "$TESTS" ] && read -r -a tests <<<"$TESTS"
		if [ ${#tests[@]} -eq 0 ]; then
			filter_schedule core "$inputdir/parallel_schedule" "$WORK/$name.schedule"
			tests=(--schedule="$WORK/$name.schedule")
		fi
	else
		driver=$TREE_TEST/isolation/pg_isolation_regress
		db=isolation_regression
		inputdir=$WORK/isolation
		[ -n "$SPECS" ] && read -r -a tests <<<"$SPECS"
		if [ ${#tests[@]} -eq 0 ]; then
			filter_schedule isolation "$inputdir/isolation_schedule" "$WORK/$name.schedule"
			tests=(--schedule="$WORK/$name.schedule")
		fi
	fi
	args=(
		--bindir="$WORK/bin"
		--dlpath="$WORK/lib"
		--temp-instance="$WORK/$name-instance"
		--temp-config="$conf"
		--port="$port"
		--inputdir="$inputdir"
		--outputdir="$out"
		--dbname="$db"
		--no-locale
		--encoding=UTF8
		--max-concurrent-tests=20
	)
	[ "$AM" = nvm ] && args+=(--load-extension=nvmam)
	nvm_log "$name: $(grep -v '^#' "$conf" | grep -v pool_path | paste -sd ';' -)"
	nvm_run_group "$TIMEOUT" "$log" "${AS_PG[@]}" env -C "$WORK" PATH="$WORK/bin:$PATH" \
		"$driver" "${args[@]}" "${tests[@]}" >/dev/null
	rc=$?
	nvm_stop_all_under "$WORK/$name-instance"
	rm -f "$SHM/$name.pool"
	rm -rf "$OUT/$name"
	mkdir -p "$OUT/$name"
	cp "$out/regression.diffs" "$OUT/$name/" 2>/dev/null
	cp "$out/log/postmaster.log" "$OUT/$name/" 2>/dev/null
	split_diffs "$out/regression.diffs" "$OUT/$name/diffs"

	# every test pg_regress reported, and whether it passed, from its
	# output (it deletes regression.out when every test passed)
	results=$(test_results "$log")
	total=$(grep -c . <<<"$results")
	failed_list=$(sed -n 's/^FAILED //p' <<<"$results")
	exact=$(grep -c '^ok ' <<<"$results")
	for t in $failed_list; do
		if ! reason=$(allowlist_reason "$suite" "$t" "$mode"); then
			echo "UNEXPECTED  $name $t: not in the allow-list (diff: ${OUT#"$ROOT"/}/$name/diffs/$t.diff)"
			bad=$((bad + 1))
			[ "$RECORD" = 1 ] && record_diff "$suite" "$t" "$mode" "$OUT/$name/diffs/$t.diff"
			continue
		fi
		acc=$(accepted_diff "$suite" "$t" "$mode")
		if [ "${reason#\[any\]}" != "$reason" ] || { [ -f "$acc" ] && cmp -s "$acc" "$OUT/$name/diffs/$t.diff"; }; then
			allowed=$((allowed + 1))
			continue
		fi
		if [ "$RECORD" = 1 ]; then
			record_diff "$suite" "$t" "$mode" "$OUT/$name/diffs/$t.diff"
			allowed=$((allowed + 1))
			continue
		fi
		echo "CHANGED     $name $t: allow-listed ($reason) but the diff differs from ${acc#"$ROOT"/}:"
		diff -u "$acc" "$OUT/$name/diffs/$t.diff" 2>&1 | head -n 40 | sed 's/^/    /'
		bad=$((bad + 1))
	done
	# allow-listed tests that now pass: tell, so the list shrinks
	if [ "$AM" = nvm ]; then
		while read -r t; do
			reason=$(allowlist_reason "$suite" "$t" "$mode") || continue
			if grep -qxF "ok $t" <<<"$results"; then
				echo "NOW PASSES  $name $t: remove it from the allow-list"
			fi
		done < <(awk -F '\t' -v s="$suite" '$1 == s && $3 !~ /^\[any\]/ {print $2}' "$LISTS/allowlist")
	fi
	# a crash restarts every backend and would hide behind the diffs
	if grep -Eq 'terminated by signal|server process .* was terminated|was terminated by exception|all server processes terminated|PANIC:' \
		"$out/log/postmaster.log" 2>/dev/null; then
		crashed=1
		echo "CRASH       $name: the server log reports a crash:"
		grep -E -B2 -A2 'terminated by signal|was terminated|all server processes terminated|PANIC:' \
			"$out/log/postmaster.log" | head -n 30 | sed 's/^/    /'
	fi
	if [ "$total" -eq 0 ]; then
		echo "FAILED      $name: no test ran (pg_regress exit $rc); see ${log#"$ROOT"/}"
		tail -n 20 "$log" | sed 's/^/    /'
		bad=$((bad + 1))
	fi
	[ "$rc" -eq 124 ] && { echo "TIMEOUT     $name after ${TIMEOUT}s"; bad=$((bad + 1)); }
	bad=$((bad + crashed))
	skipped=0
	if [ -z "$TESTS$SPECS" ]; then
		skipped=$(awk -v s="$suite" '!/^[ \t]*(#|$)/ && $1 == s' "$LISTS/skiplist" 2>/dev/null | wc -l)
	fi
	SUMMARY+=("$(printf '%-16s %4d tests: %4d exact (%5.1f%%), %3d allow-listed, %3d unexpected; %d skipped%s' \
		"$name" "$total" "$exact" "$(awk -v e="$exact" -v t="$total" 'BEGIN {print t ? 100 * e / t : 0}')" \
		"$allowed" "$((bad - crashed))" "$skipped" "$([ $crashed -eq 1 ] && echo ', SERVER CRASHED')")")
	PASSED=$((PASSED + exact + allowed))
	FAILED=$((FAILED + bad))
}

prepare_sources_"$PGV"
nvm_log "PostgreSQL $UPSTREAM's suites (lists: ${LISTS#"$ROOT"/})"
if [ "$AM" = nvm ] && [ "$BUILD" = 1 ]; then
	build_nvmam
elif [ "$AM" = nvm ] && [ ! -f "$TREE_LIB/nvmam.so" ]; then
	nvm_die "--no-build, but nvmam is not installed in $TREE_LIB"
fi
prepare_work
mkdir -p "$OUT"
for suite in $SUITES; do
	case "$suite" in
		core | isolation) ;;
		*) nvm_die "unknown suite $suite" ;;
	esac
	for mode in $MODES; do
		run_suite "$suite" "$mode"
	done
done

printf '\n'
printf '%s\n' "${SUMMARY[@]}"
printf 'outputs: %s\n' "$OUT"
printf 'pg-suites: %d passed, %d failed\n' "$PASSED" "$FAILED"
[ "$FAILED" -eq 0 ]

#!/usr/bin/env bash
#
# regress/run-tests.sh
#	  Runs every test of nvmam: build, install, unit tests, the pg_regress
#	  suite (sql/ + expected/), the isolation suite (specs/, when present) and
#	  the TAP tests (regress/t/*.pl).  Exits non-zero if anything failed.
#
# PostgreSQL 15 (Debian 12's) by default; NVM_PG_VERSION=18 tests against
# PostgreSQL 18 (regress/build-postgresql.sh 18 builds it the first time)
# in its own build directory, build-pg18: everything but the unit tests,
# which test the storage core alone (no PostgreSQL header) and run with 15.
# NVM_PG_VERSION=17 only compiles nvmam against PostgreSQL 17's server
# headers (build-pg17), which Debian 12 cannot run: nothing is installed
# or tested.
#
# Installs into PostgreSQL's directories, so it needs root (or sudo).  Servers
# run as the "postgres" user when called as root, on throwaway clusters in
# temporary directories, with their pools in /dev/shm; nothing is left behind
# except the logs in build/testrun/.
#
# Environment (all optional; CI=true ignores the NVM_SKIP_* ones):
#	NVM_SKIP_BUILD=1		use what is installed: no build, no install
#	NVM_SKIP_INSTALL=1		build but do not install
#	NVM_PG_VERSION=18		PostgreSQL 18 instead of 15 (or 17: compile only)
#	NVM_SKIP_UNIT=1			skip the unit tests (meson test)
#	NVM_SKIP_STRUCTURE=1	skip the structure check (include cycles, layers,
#							maps, the documentation's links and settings)
#	NVM_SKIP_SQL=1			skip the pg_regress suite
#	NVM_CC_MODES="mcsi"	run every suite in these modes only (default
#							"mcsi n2db")
#	NVM_CC_MORE_MODES="pisces"	run the SQL and isolation suites and the
#							crash TAP tests in these modes too (default
#							"pisces pomvcc"; none when NVM_CC_MODES is set)
#	NVM_SKIP_ISOLATION=1	skip the isolation suite
#	NVM_SKIP_TAP=1			skip the TAP tests
#	NVM_SKIP_CITUS=1		skip Citus's own tests on nvm tables
#							(regress/citus/run.sh; needs Citus installed,
#							regress/build-citus.sh, and NVM_CITUS_SOURCES)
#	NVM_CITUS_SOURCES=dir	the directory of Citus's release archives
#	NVM_CITUS_REQUIRED=1	a missing Citus fails regress/t/043_citus.pl and
#							the citus stage instead of skipping them (CI)
#	NVM_SKIP_PG_SUITES=1	skip PostgreSQL's own suites on nvm tables
#							(regress/pg-suites/run.sh; on 15 downloads
#							Debian's source package once into
#							build-pgsuites/, on 18 runs them from the
#							source tree regress/build-postgresql.sh built)
#	NVM_SQL_TESTS="a b"		run only these sql/ tests (no schedule)
#	NVM_ISOLATION_TESTS="a"	run only these specs/
#	NVM_TAP_TESTS="regress/t/001_x.pl ..."	run only these TAP tests
#	NVM_TAP_TEST_TIMEOUT=s	kill one TAP test after s seconds (default 900);
#							the others still run
#	NVM_TAP_LOAD_CLIENTS=n	multiply the clients of the TAP tests' loads
#							(regress/t/lib/NvmBackup.pm; default 1)
#	NVM_TAP_LOAD_SECONDS=n	multiply the least duration of those loads
#	NVM_TAP_SMALL_WAL=1		TAP nodes checkpoint as often as the WAL allows
#							(max_wal_size 32MB): WAL a test needs and lets a
#							checkpoint recycle shows
#	NVM_BUILD_DIR=dir		meson build directory (default build; build-pg18
#							on 18, build-pg17 on 17)
#	NVM_MESON_ARGS="..."	extra `meson setup` options
#	NVM_KEEP=1				keep the temporary directories and pools
#	NVM_SUITE_TIMEOUT=s		kill a stage after s seconds (default 2400)
#	PG_CONFIG=path			pg_config of PostgreSQL 15 or 18 (default: the
#							version NVM_PG_VERSION names)
#
# What the suites get:
#	pg_regress and pg_isolation_regress start their own temporary instance
#	whose postgresql.conf ends with the settings written by write_conf below
#	(shared_preload_libraries = 'nvmam', a fresh nvm.pool_path in /dev/shm,
#	nvm.pool_size = '256MB', max_prepared_transactions = 10) followed by
#	regress/regress.conf if that file exists, and regress/modes/MODE.conf
#	in a mode that has one.  They load the extension with
#	CREATE EXTENSION nvmam; the database is contrib_regression
#	(isolation_regression for the isolation suite).  A schedule file
#	regress/schedule (regress/isolation_schedule) is used when present, else
#	every sql/*.sql (specs/*.spec) in name order.
#	CI (CI=true) runs every mode on 15, and MCSI alone on 18 (.ci/run runs
#	both): the code that differs between the versions is the table-AM
#	layer's, the same in every mode.
#	TAP tests run under prove with PATH starting at PostgreSQL's bindir,
#	PERL5LIB holding PostgreSQL::Test::* (and regress/t/lib), PG_REGRESS,
#	TESTDIR, and NVM_SOURCE_DIR (a copy of the checkout the server user can
#	read), NVM_SHM_DIR (a directory in /dev/shm for pools, removed afterwards),
#	NVM_POOL_SIZE (256MB).  They choose their own nvm.* settings.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"
# shellcheck source=regress/lib/packages.sh
. "$ROOT/regress/lib/packages.sh"

# the build directory (default NAME: build, or build-pgMAJOR for another
# major version than 15) and its testrun/, where the logs stay
set_build_dir()
{
	BUILD_DIR=${NVM_BUILD_DIR:-$(nvm_build_dir_name build "$1")}
	case "$BUILD_DIR" in
		/*) ;;
		*) BUILD_DIR=$ROOT/$BUILD_DIR ;;
	esac
	RUN_DIR=$BUILD_DIR/testrun
}

BUILD_DIR=
RUN_DIR=
POOL_SIZE=256MB
PG_VERSION_STRING=

WORK=
SHM=
STAGES=()
TOTAL_PASSED=0
TOTAL_FAILED=0
START_TIME=$(date +%s)

# ---------------------------------------------------------------------------
# bookkeeping
# ---------------------------------------------------------------------------

# record STAGE RESULT PASSED FAILED NOTE
record()
{
	STAGES+=("$(printf '%-10s %-7s %5s %6s  %s' "$1" "$2" "$3" "$4" "$5")")
	TOTAL_PASSED=$((TOTAL_PASSED + $3))
	TOTAL_FAILED=$((TOTAL_FAILED + $4))
}

# skipped NAME VAR: true when the developer asked to skip stage NAME.
skipped()
{
	local var=$2
	nvm_truthy "${!var:-}" || return 1
	if nvm_truthy "${CI:-}"; then
		nvm_warn "$var is ignored on CI: every stage runs"
		return 1
	fi
	record "$1" skipped 0 0 "$var set"
	return 0
}

banner()
{
	printf '\n'
	printf '=%.0s' {1..78}
	printf '\n== %s\n' "$*"
	printf '=%.0s' {1..78}
	printf '\n'
}

summary_and_exit()
{
	local line status=0 elapsed
	elapsed=$(($(date +%s) - START_TIME))
	banner "nvmam test summary (${PG_VERSION_STRING:-PostgreSQL ?}, $(date -u '+%Y-%m-%d %H:%M UTC'), ${elapsed}s)"
	printf '%-10s %-7s %5s %6s  %s\n' stage result pass fail note
	for line in "${STAGES[@]}"; do
		printf '%s\n' "$line"
	done
	[ -n "$RUN_DIR" ] && [ -d "$RUN_DIR" ] && printf 'logs: %s\n' "$RUN_DIR"
	[ "$TOTAL_FAILED" -eq 0 ] || status=1
	if [ "$status" -eq 0 ]; then
		printf 'RESULT: PASS\n'
	else
		printf 'RESULT: FAIL\n'
	fi
	# the closing line, counted in tests (unit programs, SQL tests, specs,
	# TAP scripts); a stage that failed before running tests counts as one
	printf 'summary: %d passed, %d failed\n' "$TOTAL_PASSED" "$TOTAL_FAILED"
	exit "$status"
}

# shellcheck disable=SC2317 # called through trap
on_exit()
{
	local rc=$?
	nvm_kill_group
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		nvm_stop_all_under "$WORK"
		if ! nvm_truthy "${NVM_KEEP:-}"; then
			rm -rf "$WORK"
		else
			printf 'kept: %s\n' "$WORK"
		fi
	fi
	if [ -n "$SHM" ] && [ -d "$SHM" ]; then
		if ! nvm_truthy "${NVM_KEEP:-}"; then
			rm -rf "$SHM"
		else
			printf 'kept: %s\n' "$SHM"
		fi
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'nvm_kill_group; exit 130' INT TERM

# ---------------------------------------------------------------------------
# build and install
# ---------------------------------------------------------------------------

if command -v dpkg-query >/dev/null 2>&1; then
	missing_pkgs=$(nvm_missing_packages | sort -u | paste -sd ' ' -)
	if [ -n "$missing_pkgs" ]; then
		nvm_warn "missing Debian packages: $missing_pkgs (bash .ci/run installs them)"
	fi
fi
# compile_only MAJOR: builds nvmam against PostgreSQL MAJOR's server
# headers alone (regress/build-postgresql.sh MAJOR unpacks them; meson's
# -Dpg_includedir_server), for a version whose programs Debian 12 cannot
# run: nothing is installed or tested.  Ends the script.
compile_only()
{
	local major=$1 out inc
	set_build_dir "$major"
	cd "$ROOT" || nvm_die "cannot cd to $ROOT"
	mkdir -p "$RUN_DIR"
	out=$(bash "$ROOT/regress/build-postgresql.sh" "$major") ||
		nvm_die "regress/build-postgresql.sh $major failed"
	inc=$(printf '%s\n' "$out" | tail -n 1)
	PG_VERSION_STRING="PostgreSQL $major (server headers only)"
	printf 'nvmam tests: %s in %s, %s, %s\n' "$PG_VERSION_STRING" "$inc" "$(uname -m)" "$(nproc) cores"
	banner "build against PostgreSQL $major's headers (meson + ninja into ${BUILD_DIR#"$ROOT"/}; compile only)"
	if PG_CONFIG='' nvm_build "$ROOT" "$BUILD_DIR" -Dpg_includedir_server="$inc" 2>&1 |
		tee "$RUN_DIR/build.log"; then
		record build ok 1 0 "nvmam.so compiles against PostgreSQL $major; nothing installed or tested"
	else
		record build FAILED 0 1 "see ${RUN_DIR#"$ROOT"/}/build.log"
	fi
	summary_and_exit
}

if [ "${NVM_PG_VERSION:-}" = 17 ]; then
	compile_only 17
fi
nvm_find_pg
set_build_dir "$PG_MAJOR"
cd "$ROOT" || nvm_die "cannot cd to $ROOT"
mkdir -p "$BUILD_DIR"
rm -rf "$RUN_DIR"
mkdir -p "$RUN_DIR"

printf 'nvmam tests: %s (%s), %s, %s\n' "$PG_VERSION_STRING" "$PG_CONFIG" "$(uname -m)" "$(nproc) cores"

if skipped build NVM_SKIP_BUILD; then
	:
else
	banner "build (meson + ninja into ${BUILD_DIR#"$ROOT"/})"
	# shellcheck disable=SC2086 # NVM_MESON_ARGS is a list of options
	if nvm_build "$ROOT" "$BUILD_DIR" ${NVM_MESON_ARGS:-} 2>&1 | tee "$RUN_DIR/build.log"; then
		record build ok 0 0 ""
	else
		record build FAILED 0 1 "see ${RUN_DIR#"$ROOT"/}/build.log"
		summary_and_exit
	fi

	if skipped install NVM_SKIP_INSTALL; then
		:
	else
		banner "install into $PG_PKGLIBDIR and $PG_SHAREDIR/extension"
		if nvm_install "$BUILD_DIR" 2>&1 | tee "$RUN_DIR/install.log"; then
			record install ok 0 0 ""
		else
			record install FAILED 0 1 "needs root or sudo"
			summary_and_exit
		fi
	fi
fi

# ---------------------------------------------------------------------------
# unit tests
# ---------------------------------------------------------------------------

run_unit()
{
	local log=$RUN_DIR/unit.log rc ok fail
	banner "unit tests (meson test)"
	if [ ! -f "$BUILD_DIR/build.ninja" ]; then
		record unit FAILED 0 1 "no build in $BUILD_DIR"
		return
	fi
	nvm_run_group "${NVM_SUITE_TIMEOUT:-2400}" "$log" meson test -C "$BUILD_DIR" --print-errorlogs
	rc=$?
	if grep -q '^No tests defined' "$log"; then
		record unit skipped 0 0 "no regress/unit/test_*.c"
		return
	fi
	ok=$(awk '/^Ok:/ {print $2}' "$log")
	fail=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {n += $NF} END {print n + 0}' "$log")
	ok=${ok:-0}
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
	fi
	if [ "$fail" -eq 0 ]; then
		record unit ok "$ok" 0 ""
	else
		record unit FAILED "$ok" "$fail" "see ${BUILD_DIR#"$ROOT"/}/meson-logs/testlog.txt"
	fi
}

if [ "$PG_MAJOR" != 15 ]; then
	# the storage core includes no PostgreSQL header: its tests are the
	# same on every version, and run with 15
	record unit skipped 0 0 "PostgreSQL $PG_MAJOR: the core's unit tests run with 15"
elif ! skipped unit NVM_SKIP_UNIT; then
	run_unit
fi

# ---------------------------------------------------------------------------
# structure: no include cycle between modules, layers kept, maps that name
# every file; the documentation's links and settings (--docs)
# ---------------------------------------------------------------------------

# the source folders whose structure is checked (regress/check-structure.sh)
STRUCTURE_DIRS=(src/core src/pg)

run_structure()
{
	local log=$RUN_DIR/structure.log
	banner "structure (regress/check-structure.sh --docs ${STRUCTURE_DIRS[*]})"
	if (cd "$ROOT" && bash regress/check-structure.sh --docs "${STRUCTURE_DIRS[@]}") >"$log" 2>&1; then
		record structure ok "${#STRUCTURE_DIRS[@]}" 0 ""
	else
		cat "$log"
		record structure FAILED 0 1 "see ${RUN_DIR#"$ROOT"/}/structure.log"
	fi
}

if ! skipped structure NVM_SKIP_STRUCTURE; then
	run_structure
fi

# ---------------------------------------------------------------------------
# PostgreSQL suites: common set-up
# ---------------------------------------------------------------------------

PG_REGRESS=$PG_PGXS_TEST/regress/pg_regress
PG_ISOLATION_REGRESS=$PG_PGXS_TEST/isolation/pg_isolation_regress

# A copy of the checkout the server user can read (the checkout may sit under
# /root); pg_regress reads sql/ and expected/ from it, TAP tests anything.
prepare_work()
{
	[ -n "$WORK" ] && return 0
	WORK=$(nvm_pg_tmpdir "${TMPDIR:-/tmp}" nvmam-tests) || nvm_die "cannot make a temporary directory"
	SHM=$(nvm_pg_tmpdir /dev/shm nvmam-tests) || nvm_die "cannot make a directory in /dev/shm"
	mkdir -p "$WORK/src"
	tar -C "$ROOT" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$WORK/src" -xf - ||
		nvm_die "cannot copy the checkout to $WORK/src"
	if [ "$(id -u)" -eq 0 ]; then
		chown -R "$(nvm_pg_user):" "$WORK/src"
	fi
	chmod -R a+rX "$WORK/src"
}

# missing_expected SUBDIR EXT: pg_regress gives up on the whole run when a
# test has no expected output; give such tests an empty one in the copy so the
# run goes on and the diff shows the complete output.
missing_expected()
{
	local f name
	for f in "$WORK/src/$1"/*."$2"; do
		[ -f "$f" ] || continue
		name=${f##*/}
		name=${name%."$2"}
		if [ ! -f "$WORK/src/expected/$name.out" ]; then
			nvm_warn "expected/$name.out is missing: its output will be in $RUN_DIR/$3-out/results/$name.out"
			mkdir -p "$WORK/src/expected"
			: >"$WORK/src/expected/$name.out"
			chmod 644 "$WORK/src/expected/$name.out"
		fi
	done
}

# MCSI and N2DB run every suite.  The modes that share MCSI's status store
# and persistent write paths (Pisces, POMVCC) run the SQL and isolation
# suites and the crash TAP tests (CRASH_TAP_TESTS): what they do
# differently is their snapshots, their commits' visibility and their
# recovery, which those cover; the rest would repeat MCSI's run.
# NVM_CC_MODES and NVM_CC_MORE_MODES narrow this for a developer; CI runs
# all of it.
CC_MODES=${NVM_CC_MODES:-mcsi n2db}
if [ -n "${NVM_CC_MODES:-}" ]; then
	CC_MORE_MODES=${NVM_CC_MORE_MODES:-}
else
	CC_MORE_MODES=${NVM_CC_MORE_MODES-pisces pomvcc}
fi
if [ "${CI:-}" = true ] && [ "$PG_MAJOR" = 15 ]; then
	CC_MODES="mcsi n2db"
	CC_MORE_MODES="pisces pomvcc"
elif [ "${CI:-}" = true ]; then
	# on another version, CI runs MCSI alone: what differs between the
	# versions is the table-AM layer, the same in every mode
	CC_MODES=mcsi
	CC_MORE_MODES=
fi
CRASH_TAP_TESTS="regress/t/005_kill9_load.pl regress/t/030_logfree_kill9.pl"
# TAP tests of the pool's file, its growth and what a copy of the cluster
# takes of it, whose code is the same in every mode: they run in the first
# of CC_MODES only
MODE_FREE_TAP_TESTS="regress/t/017_pool_growth.pl regress/t/023_backup_paths.pl"
# The Citus cluster test runs in the first of CC_MODES only (MCSI): what it
# adds to the other TAP tests is Citus's use of nvm tables (shard DDL,
# two-phase commit, logical replication of shards), the same in every mode
MODE_FREE_TAP_TESTS="$MODE_FREE_TAP_TESTS regress/t/043_citus.pl"
# A crash of the operating system at every step of the checkpoint files
# (the heaviest TAP test, about two minutes) runs in the first mode only:
# its captures read through the same bounded view in every mode; it passed
# in N2DB too when it was written (NVM_CC_MODES=n2db NVM_TAP_TESTS=... runs it)
MODE_FREE_TAP_TESTS="$MODE_FREE_TAP_TESTS regress/t/035_crash_every_step.pl"
CC_MODE=mcsi

# write_conf FILE POOLNAME: the settings every pg_regress instance gets.
write_conf()
{
	{
		echo "# written by regress/run-tests.sh"
		echo "shared_preload_libraries = 'nvmam'"
		echo "nvm.pool_path = '$SHM/$2.pool'"
		echo "nvm.pool_size = '$POOL_SIZE'"
		echo "max_prepared_transactions = 10"
		echo "nvm.concurrency_control = '$CC_MODE'"
		if [ -f "$WORK/src/regress/regress.conf" ]; then
			echo "# from regress/regress.conf"
			cat "$WORK/src/regress/regress.conf"
		fi
		if [ -f "$WORK/src/regress/modes/$CC_MODE.conf" ]; then
			echo "# from regress/modes/$CC_MODE.conf"
			cat "$WORK/src/regress/modes/$CC_MODE.conf"
		fi
	} >"$1"
	chmod 644 "$1"
}

# mode_inputdir MODE: the input directory of pg_regress in MODE: the sources
# themselves, or, where expected/modes/MODE/ holds the mode's own expected
# outputs (a mode whose semantics differ from heap's by design, e.g.
# POMVCC's HISTORICAL READ), a directory that links every source but has
# those in place of the common ones in its expected/.
mode_inputdir()
{
	local mode=$1 dir=$WORK/in-$1 f
	if [ ! -d "$WORK/src/expected/modes/$mode" ]; then
		echo "$WORK/src"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir/expected"
	for f in "$WORK/src"/*; do
		[ "${f##*/}" = expected ] || ln -s "$f" "$dir/${f##*/}"
	done
	for f in "$WORK/src/expected"/*.out "$WORK/src/expected/modes/$mode"/*.out; do
		[ -f "$f" ] && ln -sf "$f" "$dir/expected/${f##*/}"
	done
	chmod -R a+rX "$dir"
	echo "$dir"
}

# True when the module is installed; records a failure for STAGE otherwise.
module_installed()
{
	if [ -f "$PG_PKGLIBDIR/nvmam.so" ] && [ -f "$PG_SHAREDIR/extension/nvmam.control" ]; then
		return 0
	fi
	nvm_warn "nvmam is not installed in $PG_PKGLIBDIR (is there a .c file under src/pg?)"
	record "$1" FAILED 0 1 "nvmam.so not installed"
	return 1
}

# run_pg_regress STAGE DRIVER DBNAME POOLNAME SCHEDULE TESTS...
#	Runs pg_regress or pg_isolation_regress with a temporary instance.
run_pg_regress()
{
	local stage=$1 driver=$2 db=$3 pool=$4 schedule=$5
	shift 5
	local out=$WORK/$stage-out conf=$WORK/$stage.conf port log=$RUN_DIR/$stage.log
	local rc passed=0 failed=0 total timeout_s=${NVM_SUITE_TIMEOUT:-2400}
	local -a args

	write_conf "$conf" "$pool"
	port=$(nvm_free_port)
	nvm_as_pg mkdir -p "$out"
	args=(
		--bindir="$PG_BINDIR"
		--temp-instance="$WORK/$stage-instance"
		--temp-config="$conf"
		--port="$port"
		--inputdir="$(mode_inputdir "$CC_MODE")"
		--outputdir="$out"
		--dbname="$db"
		--load-extension=nvmam
		--no-locale
		--encoding=UTF8
	)
	if [ -n "$schedule" ]; then
		args+=(--schedule="$schedule")
	fi
	printf 'settings: '
	grep -v '^#' "$conf" | paste -sd ';' -
	nvm_run_group "$timeout_s" "$log" "${AS_PG[@]}" env -C "$WORK" PATH="$PG_BINDIR:$PATH" \
		"$driver" "${args[@]}" "$@"
	rc=$?
	nvm_stop_all_under "$WORK/$stage-instance"

	if total=$(grep -Eo 'All [0-9]+ tests passed' "$log" | grep -Eo '[0-9]+'); then
		passed=$total
	elif grep -Eq '[0-9]+ of [0-9]+ tests (failed|passed)' "$log"; then
		# "N of M tests failed." or "N of M tests passed, K failed test(s) ignored."
		read -r failed total < <(grep -Eo '[0-9]+ of [0-9]+ tests failed' "$log" |
			awk '{print $1, $3}')
		if [ -z "${total:-}" ]; then
			read -r passed total < <(grep -Eo '[0-9]+ of [0-9]+ tests passed' "$log" |
				awk '{print $1, $3}')
			failed=0
		else
			passed=$((total - failed))
		fi
	fi
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi

	# keep the outputs
	cp -r "$out" "$RUN_DIR/$stage-out" 2>/dev/null || true
	if [ "$failed" -eq 0 ]; then
		record "$stage" ok "$passed" 0 ""
		return
	fi
	if [ "$rc" -eq 124 ]; then
		record "$stage" FAILED "$passed" "$failed" "timed out after ${timeout_s}s (NVM_SUITE_TIMEOUT)"
	else
		record "$stage" FAILED "$passed" "$failed" "see ${RUN_DIR#"$ROOT"/}/$stage-out/regression.diffs"
	fi
	if [ -s "$out/regression.diffs" ]; then
		banner "$stage: regression.diffs (first 200 lines)"
		head -n 200 "$out/regression.diffs"
	fi
	if [ -f "$out/log/postmaster.log" ]; then
		banner "$stage: end of postmaster.log"
		tail -n 40 "$out/log/postmaster.log"
	fi
}

# The command prefix that runs a program as the server user (an array, so
# that nvm_run_group can run it).
AS_PG=()
if [ "$(id -u)" -eq 0 ]; then
	AS_PG=(runuser -u "$(nvm_pg_user)" --)
fi

# list_tests DIR EXT: basenames of DIR/*.EXT in the copy, sorted.
list_tests()
{
	local f
	for f in "$WORK/src/$1"/*."$2"; do
		[ -f "$f" ] || continue
		f=${f##*/}
		printf '%s\n' "${f%."$2"}"
	done | LC_ALL=C sort
}

have_files()
{
	compgen -G "$ROOT/$1" >/dev/null
}

# ---------------------------------------------------------------------------
# pg_regress suite: sql/ + expected/
# ---------------------------------------------------------------------------

run_sql()
{
	local -a tests=()
	local schedule=
	banner "pg_regress suite (sql/, expected/)"
	if ! have_files 'sql/*.sql'; then
		record sql skipped 0 0 "no sql/*.sql"
		return
	fi
	module_installed sql || return
	prepare_work
	missing_expected sql sql sql
	if [ -n "${NVM_SQL_TESTS:-}" ]; then
		read -r -a tests <<<"$NVM_SQL_TESTS"
	elif [ -f "$WORK/src/regress/schedule" ]; then
		schedule=$WORK/src/regress/schedule
	else
		mapfile -t tests < <(list_tests sql sql)
	fi
	for CC_MODE in $CC_MODES $CC_MORE_MODES; do
		banner "pg_regress suite, nvm.concurrency_control = $CC_MODE"
		run_pg_regress "sql-$CC_MODE" "$PG_REGRESS" contrib_regression "regress-$CC_MODE" \
			"$schedule" "${tests[@]}"
	done
}

if ! skipped sql NVM_SKIP_SQL; then
	run_sql
fi

# ---------------------------------------------------------------------------
# isolation suite: specs/ + expected/ (only when specs/ exists)
# ---------------------------------------------------------------------------

run_isolation()
{
	local -a tests=()
	local schedule=
	if ! have_files 'specs/*.spec'; then
		record isolation skipped 0 0 "no specs/*.spec"
		return
	fi
	banner "isolation suite (specs/, expected/)"
	module_installed isolation || return
	prepare_work
	missing_expected specs spec isolation
	if [ -n "${NVM_ISOLATION_TESTS:-}" ]; then
		read -r -a tests <<<"$NVM_ISOLATION_TESTS"
	elif [ -f "$WORK/src/regress/isolation_schedule" ]; then
		schedule=$WORK/src/regress/isolation_schedule
	else
		mapfile -t tests < <(list_tests specs spec)
	fi
	for CC_MODE in $CC_MODES $CC_MORE_MODES; do
		banner "isolation suite, nvm.concurrency_control = $CC_MODE"
		run_pg_regress "isolation-$CC_MODE" "$PG_ISOLATION_REGRESS" isolation_regression \
			"isolation-$CC_MODE" "$schedule" "${tests[@]}"
	done
}

if ! skipped isolation NVM_SKIP_ISOLATION; then
	run_isolation
fi

# ---------------------------------------------------------------------------
# PostgreSQL's own core regression and isolation suites with nvm as the
# default access method, against regress/pg-suites/MAJOR/allowlist
# ---------------------------------------------------------------------------

run_pg_suites()
{
	local log=$RUN_DIR/pg-suites.log rc passed failed out
	local -a opts=()
	banner "PostgreSQL $PG_MAJOR's own suites on nvm tables (regress/pg-suites/run.sh)"
	module_installed pg-suites || return
	# on 18 the suites run on the PostgreSQL regress/build-postgresql.sh
	# built, from its source tree: when that is the one nvmam was just
	# installed into, they use it as installed (15's run on a tree of
	# their own, 15.18's, with a build of their own)
	if [ "$PG_MAJOR" != 15 ] && out=$(bash "$ROOT/regress/build-postgresql.sh" "$PG_MAJOR" 2>/dev/null) &&
		[ "$PG_CONFIG" -ef "$(printf '%s\n' "$out" | tail -n 1)" ]; then
		opts+=(--no-build)
	fi
	nvm_run_group "${NVM_SUITE_TIMEOUT:-2400}" "$log" \
		bash "$ROOT/regress/pg-suites/run.sh" --pg-version "$PG_MAJOR" --modes "$CC_MODES" \
		--out "$RUN_DIR/pg-suites-out" "${opts[@]}"
	rc=$?
	read -r passed failed < <(sed -nE 's/^pg-suites: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$log")
	passed=${passed:-0}
	failed=${failed:-0}
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	if [ "$failed" -eq 0 ]; then
		record pg-suites ok "$passed" 0 ""
	elif [ "$rc" -eq 124 ]; then
		record pg-suites FAILED "$passed" "$failed" "timed out after ${NVM_SUITE_TIMEOUT:-2400}s (NVM_SUITE_TIMEOUT)"
	else
		record pg-suites FAILED "$passed" "$failed" "see ${RUN_DIR#"$ROOT"/}/pg-suites.log"
	fi
}

if ! skipped pg-suites NVM_SKIP_PG_SUITES; then
	run_pg_suites
fi

# ---------------------------------------------------------------------------
# Citus's own tests (tableam, distributed DML and 2PC) through its harness,
# with nvm the default access method, against regress/citus/allowlist
# ---------------------------------------------------------------------------

run_citus()
{
	local log=$RUN_DIR/citus.log rc passed failed
	banner "Citus's own tests on nvm tables (regress/citus/run.sh)"
	module_installed citus || return
	if [ ! -f "$PG_PKGLIBDIR/citus.so" ] || [ -z "${NVM_CITUS_SOURCES:-}" ]; then
		if nvm_truthy "${NVM_CITUS_REQUIRED:-}"; then
			record citus FAILED 0 1 "Citus not installed or NVM_CITUS_SOURCES unset (regress/build-citus.sh)"
		else
			record citus skipped 0 0 "Citus not installed or NVM_CITUS_SOURCES unset (regress/build-citus.sh)"
		fi
		return
	fi
	nvm_run_group "${NVM_SUITE_TIMEOUT:-2400}" "$log" \
		bash "$ROOT/regress/citus/run.sh" --pg-version "$PG_MAJOR" --sources "$NVM_CITUS_SOURCES" \
		--out "$RUN_DIR/citus-out"
	rc=$?
	read -r passed failed < <(sed -nE 's/^citus-suite: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$log")
	passed=${passed:-0}
	failed=${failed:-0}
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	if [ "$failed" -eq 0 ]; then
		record citus ok "$passed" 0 ""
	else
		record citus FAILED "$passed" "$failed" "see ${RUN_DIR#"$ROOT"/}/citus.log"
	fi
}

if ! skipped citus NVM_SKIP_CITUS; then
	run_citus
fi

# ---------------------------------------------------------------------------
# TAP tests: regress/t/*.pl with PostgreSQL::Test::Cluster
# ---------------------------------------------------------------------------

# run_tap MODE [TESTS]: the TAP tests (or the TESTS given, unless
# NVM_TAP_TESTS names them) with nvm.concurrency_control = MODE.  Each test
# runs under a prove of its own, in a process group of its own with a
# timeout of its own (NVM_TAP_TEST_TIMEOUT), and the servers it left are
# stopped after it: a test that bails out, hangs or crashes fails alone, and
# every other test still runs.  The stage's note names every failed test.
run_tap()
{
	local mode=$1 only=${2:-}
	local -a tests=() failed_names=() skipped_names=()
	local stage=tap-$mode
	local log=$RUN_DIR/$stage.log tlog rc t name f passed note skip_note
	local timeout_s=${NVM_TAP_TEST_TIMEOUT:-900}
	banner "TAP tests (regress/t/*.pl), nvm.concurrency_control = $mode"
	if ! have_files 'regress/t/*.pl'; then
		record tap skipped 0 0 "no regress/t/*.pl"
		return
	fi
	module_installed "$stage" || return
	command -v prove >/dev/null 2>&1 || {
		record tap FAILED 0 1 "prove not found (perl)"
		return
	}
	prepare_work
	if [ -n "${NVM_TAP_TESTS:-}" ]; then
		read -r -a tests <<<"$NVM_TAP_TESTS"
	elif [ -n "$only" ]; then
		read -r -a tests <<<"$only"
	else
		mapfile -t tests < <(cd "$WORK/src" && printf '%s\n' regress/t/*.pl | LC_ALL=C sort)
		if [ "$mode" != "${CC_MODES%% *}" ]; then
			mapfile -t tests < <(printf '%s\n' "${tests[@]}" | grep -vxF -f <(tr ' ' '\n' <<<"$MODE_FREE_TAP_TESTS"))
		fi
	fi
	nvm_as_pg rm -rf "$WORK/tap"
	nvm_as_pg mkdir -p "$WORK/tap"
	: >"$log"
	tlog=$(mktemp)
	for t in "${tests[@]}"; do
		name=${t##*/}
		nvm_run_group "$timeout_s" "$tlog" "${AS_PG[@]}" env -C "$WORK/src" \
			PATH="$PG_BINDIR:$PATH" \
			PERL5LIB="$PG_PGXS_TEST/perl:$WORK/src/regress/t/lib${PERL5LIB:+:$PERL5LIB}" \
			PG_REGRESS="$PG_REGRESS" \
			TESTDIR="$WORK/tap" \
			TESTDATADIR="$WORK/tap/tmp_check" \
			TESTLOGDIR="$WORK/tap/tmp_check/log" \
			NVM_SOURCE_DIR="$WORK/src" \
			NVM_SHM_DIR="$SHM" \
			NVM_POOL_SIZE="$POOL_SIZE" \
			NVM_CC_MODE="$mode" \
			NVM_CITUS_REQUIRED="${NVM_CITUS_REQUIRED:-}" \
			NVM_TAP_LOAD_CLIENTS="${NVM_TAP_LOAD_CLIENTS:-1}" \
			NVM_TAP_LOAD_SECONDS="${NVM_TAP_LOAD_SECONDS:-1}" \
			NVM_TAP_SMALL_WAL="${NVM_TAP_SMALL_WAL:-0}" \
			prove --timer "$t"
		rc=$?
		cat "$tlog" >>"$log"
		nvm_stop_all_under "$WORK/tap"
		# prove's summary says "Result: PASS" only when every test of the
		# script passed and its plan was met, and "Result: NOTESTS" when the
		# script skipped itself (skip_all: a test that needs what is not
		# installed, e.g. Citus): it is named in the note and counted
		# neither passed nor failed
		if [ "$rc" -eq 0 ] && grep -q '^Result: NOTESTS' "$tlog" &&
			grep -qE "(^|\] )$t \.+ skipped" "$tlog"; then
			skipped_names+=("$name")
		elif [ "$rc" -ne 0 ] || ! grep -q '^Result: PASS' "$tlog"; then
			if [ "$rc" -eq 124 ]; then
				failed_names+=("$name (timed out after ${timeout_s}s)")
			elif grep -q 'Bailout called' "$tlog"; then
				failed_names+=("$name (bailed out)")
			else
				failed_names+=("$name")
			fi
			f=$WORK/tap/tmp_check/log/regress_log_${name%.pl}
			if [ -f "$f" ]; then
				banner "tap: end of ${f##*/}"
				tail -n 60 "$f"
			fi
		fi
	done
	rm -f "$tlog"
	cp -r "$WORK/tap/tmp_check/log" "$RUN_DIR/$stage-logs" 2>/dev/null || true

	passed=$((${#tests[@]} - ${#failed_names[@]} - ${#skipped_names[@]}))
	skip_note=
	if [ "${#skipped_names[@]}" -gt 0 ]; then
		skip_note=$(printf '%s, ' "${skipped_names[@]}")
		skip_note="skipped: ${skip_note%, }"
	fi
	if [ "${#failed_names[@]}" -eq 0 ]; then
		record "$stage" ok "$passed" 0 "$skip_note"
		return
	fi
	note=$(printf '%s, ' "${failed_names[@]}")
	record "$stage" FAILED "$passed" "${#failed_names[@]}" "${note%, }${skip_note:+; $skip_note} (logs: ${RUN_DIR#"$ROOT"/}/$stage-logs)"
}

if ! skipped tap NVM_SKIP_TAP; then
	for mode in $CC_MODES; do
		run_tap "$mode"
	done
	for mode in $CC_MORE_MODES; do
		run_tap "$mode" "$CRASH_TAP_TESTS"
	done
fi

summary_and_exit

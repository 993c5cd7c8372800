#!/usr/bin/env bash
#
# regress/citus/run.sh
#	  Runs a part of Citus's own regression suite through Citus's own
#	  harness (src/test/regress/pg_regress_multi.pl of the release's
#	  sources: a coordinator and two workers) with nvmam loaded on every
#	  node and nvm as the default table access method of every node (a
#	  server option: CREATE EXTENSION citus's own tables stay heap, as
#	  sql/nvm_default_am.sql checks first), and compares the
#	  outcome with regress/citus/allowlist: a test that fails must be listed
#	  there with its reason; anything else fails the run.
#
#	  The tests (TESTS below): tableam, Citus's test of third-party table
#	  access methods (its tables use a test AM of Citus; its partitioned
#	  and distributed siblings take the default, nvm), and distributed DML,
#	  COPY and two-phase-commit tests that run on the harness's minimal
#	  cluster set-up (minimal_schedule).  Citus's other 2PC tests
#	  (multi_transaction_recovery, multi_modifying_xacts) and multi_copy
#	  depend on the tables, users and node counts of the whole multi
#	  schedule before them and fail the same way on heap; regress/t/043_
#	  citus.pl covers their ground on nvm tables.
#
#	  The harness runs from the release archive's src/test/regress
#	  (nothing of Citus needs building for it: the Citus installed in
#	  this PostgreSQL is used), unpacked into a temporary directory.
#	  Needs root (the servers run as "postgres") and Citus installed
#	  (regress/build-citus.sh).
#
# Usage: regress/citus/run.sh [--pg-version 15|18] [--sources DIR]
#	[--am nvm|heap] [--out DIR]
#	--sources	the directory of Citus's release archives (as for
#			regress/build-citus.sh; default NVM_CITUS_SOURCES)
#	--am heap	a baseline run without nvm (what fails there fails
#			for reasons of the harness, not of nvm)
#	--out		keep the outputs there (default build-citus-suite/out-MAJOR)
# Prints "citus-suite: N passed, M failed" last.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/cluster.sh
. "$ROOT/regress/lib/cluster.sh"

SOURCES=${NVM_CITUS_SOURCES:-}
AM=nvm
OUT=
while [ $# -gt 0 ]; do
	case "$1" in
		--pg-version) NVM_PG_VERSION=$2; shift 2 ;;
		--sources) SOURCES=$2; shift 2 ;;
		--am) AM=$2; shift 2 ;;
		--out) OUT=$2; shift 2 ;;
		*) nvm_die "usage: regress/citus/run.sh [--pg-version 15|18] [--sources DIR] [--am nvm|heap] [--out DIR]" ;;
	esac
done
case "$AM" in nvm | heap) ;; *) nvm_die "--am is nvm or heap" ;; esac

# the tests, after the minimal cluster set-up (and nvm_default_am's checks)
TESTS=(tableam multi_shard_update_delete multi_upsert multi_modifications
	multi_distributed_transaction_id multi_real_time_transaction)

nvm_find_pg
case "$PG_MAJOR" in
	15) CITUS_VERSION=13.2.2 ;;
	18) CITUS_VERSION=14.0.1 ;;
esac
[ -f "$PG_PKGLIBDIR/citus.so" ] || nvm_die "Citus is not installed in $PG_PKGLIBDIR (regress/build-citus.sh $PG_MAJOR)"
[ -f "$PG_PKGLIBDIR/nvmam.so" ] || nvm_die "nvmam is not installed in $PG_PKGLIBDIR"
[ -n "$SOURCES" ] || nvm_die "no --sources (the directory of Citus's release archives)"
TARBALL=$SOURCES/citus-$CITUS_VERSION.tar.gz
[ -f "$TARBALL" ] || nvm_die "no $TARBALL"
OUT=${OUT:-$ROOT/build-citus-suite/out-$PG_MAJOR}
case "$OUT" in /*) ;; *) OUT=$ROOT/$OUT ;; esac

WORK=$(nvm_pg_tmpdir "${TMPDIR:-/tmp}" nvmam-citus-suite) || nvm_die "cannot make a temporary directory"
# NVM_KEEP=1 keeps the work directory (the nodes' data directories and logs)
trap 'nvm_stop_all_under "$WORK"; nvm_truthy "${NVM_KEEP:-}" && echo "kept: $WORK" || rm -rf "$WORK"' EXIT
tar -C "$WORK" -xzf "$TARBALL" "citus-$CITUS_VERSION/src/test/regress" ||
	nvm_die "cannot unpack src/test/regress from $TARBALL"
REG=$WORK/citus-$CITUS_VERSION/src/test/regress
cp "$ROOT/regress/citus/sql/"*.sql "$REG/sql/"
cp "$ROOT/regress/citus/expected/"*.out "$REG/expected/"
{
	echo "test: minimal_cluster_management"
	echo "test: multi_test_helpers multi_test_helpers_superuser multi_create_fdw multi_test_catalog_views"
	[ "$AM" = nvm ] && echo "test: nvm_default_am"
	for t in "${TESTS[@]}"; do
		echo "test: $t"
	done
} >"$REG/nvm_schedule"
chown -R "$(nvm_pg_user):" "$WORK" 2>/dev/null
chmod -R a+rX "$WORK"

preload=citus
[ -f "$PG_SHAREDIR/extension/pg_stat_statements.control" ] && preload=$preload,pg_stat_statements
opts=()
if [ "$AM" = nvm ]; then
	# each node's pool is pg_nvm/pool in its data directory
	opts=(--server-option="shared_preload_libraries='$preload,nvmam'"
		--server-option="nvm.pool_size='256MB'"
		--server-option="default_table_access_method='nvm'"
		--load-extension=nvmam)
fi

nvm_log "Citus $CITUS_VERSION's harness on $PG_VERSION_STRING, default access method $AM: ${TESTS[*]}"
as_pg=()
[ "$(id -u)" -eq 0 ] && as_pg=(runuser -u "$(nvm_pg_user)" --)
"${as_pg[@]}" env -C "$REG" PATH="$REG/bin:$PG_BINDIR:$PATH" PG_REGRESS_DIFF_OPTS="-dU10 -w" \
	perl "$REG/pg_regress_multi.pl" --pgxsdir="$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")" \
	--bindir="$PG_BINDIR" --libdir="$("$PG_CONFIG" --libdir)" --majorversion="$PG_MAJOR" \
	--postgres-builddir=/nonexistent --postgres-srcdir=/nonexistent --citus_abs_srcdir="$REG" \
	"${opts[@]}" --load-extension=citus \
	-- --inputdir="$REG" --outputdir="$REG" --launcher="$REG/log_test_times" \
	--schedule="$REG/nvm_schedule" >"$WORK/harness.log" 2>&1
rc=$?
rm -rf "$OUT"
mkdir -p "$OUT"
cp "$WORK/harness.log" "$OUT/"
cp -r "$REG/results" "$OUT/" 2>/dev/null
cp "$REG/regression.diffs" "$OUT/" 2>/dev/null
grep -E '^(test +| +)[a-z_0-9]+ +\.\.\. |^(not )?ok [0-9]+ ' "$WORK/harness.log"

# the outcome of each test against the allow-list
declare -A listed=()
while IFS=$'\t' read -r ver am test reason; do
	case "$ver" in '' | '#'*) continue ;; esac
	[ "$ver" = any ] || [ "$ver" = "$PG_MAJOR" ] || continue
	[ "$am" = any ] || [ "$am" = "$AM" ] || continue
	listed[$test]=$reason
done <"$ROOT/regress/citus/allowlist"
passed=0
failed=0
while read -r test result; do
	if [ "$result" = ok ]; then
		passed=$((passed + 1))
	elif [ -n "${listed[$test]:-}" ]; then
		printf 'allow-listed: %s (%s)\n' "$test" "${listed[$test]}"
		passed=$((passed + 1))
	else
		printf 'FAILED, not allow-listed: %s (diff in %s/regression.diffs)\n' "$test" "$OUT"
		failed=$((failed + 1))
	fi
done < <(
	# pg_regress's lines: "test NAME ... ok" (15), "ok N - NAME" or "not ok N
	# - NAME" (TAP, from 16 on)
	sed -nE -e 's/^(test +| +)([a-z_0-9]+) +\.\.\. (ok|FAILED).*/\2 \3/p' \
		-e 's/^ok [0-9]+ +[-+] +([a-z_0-9]+) .*/\1 ok/p' \
		-e 's/^not ok [0-9]+ +[-+] +([a-z_0-9]+) .*/\1 FAILED/p' "$WORK/harness.log")
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
	tail -n 30 "$WORK/harness.log"
	nvm_warn "the harness ran no test (exit status $rc; log: $OUT/harness.log)"
	failed=1
fi
if [ "$failed" -ne 0 ] && [ -s "$OUT/regression.diffs" ]; then
	head -n 150 "$OUT/regression.diffs"
fi
echo "citus-suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

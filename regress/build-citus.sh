#!/usr/bin/env bash
#
# regress/build-citus.sh
#	  Makes Citus, the distributed engine of PostgreSQL, available to the
#	  PostgreSQL that nvmam's tests use (regress/t/043_citus.pl): builds it
#	  from its release source archive and installs it into that
#	  PostgreSQL, once.  A later call finds it installed and does nothing.
#
#	  15	Citus 13.2.2 (13.x serves PostgreSQL 15 to 17), into Debian 12's
#		PostgreSQL 15 (or the one PG_CONFIG names)
#	  18	Citus 14.0.1 (14.x serves 16 to 18; it dropped 15), into
#		regress/build-postgresql.sh 18's PostgreSQL 18 (built first if
#		it is not there)
#
#	  The source archives are Citus's own releases: the source archive of
#	  the tag v13.2.2 or v14.0.1 on Citus's GitHub releases page, saved as
#	  citus-13.2.2.tar.gz and citus-14.0.1.tar.gz in one directory, given
#	  as TARBALL_DIR or NVM_CITUS_SOURCES.  Their SHA-256 checksums are
#	  checked against the ones below (and against the directory's
#	  SHA256SUMS when it has one) before anything is unpacked.  Nothing is
#	  fetched at build time: the archives carry configure and the libraries
#	  Citus vendors.  libcurl is left out (--without-libcurl): Citus uses it
#	  only to send usage statistics.
#
#	  The one patch, for 13.2.2 against PostgreSQL 15.18 and later (Debian
#	  12 serves 15.20): Citus keeps a static copy of
#	  have_createdb_privilege() for 15 in pg_version_compat.h, and 15.18's
#	  commands/dbcommands.h now declares that function extern, so
#	  commands/database.c does not compile.  Citus's copy and its one caller
#	  (commands/serialize_distributed_ddls.c) are renamed
#	  citus_have_createdb_privilege; it is applied only when the server's
#	  dbcommands.h declares the function.  14.0.1 builds against 18 as
#	  released.
#
#	  Prints the installed Citus version on the last line.
#
# Needs root (or sudo) for the build dependencies (apt-get) and, for 15, to
# install into Debian's directories.  Takes about 3 minutes on 2 cores (165 s for
# 13.2.2 into 15, 213 s for 14.0.1 into 18, with other work on the machine);
# about 25 s when ccache has it.
#
# Environment: PG_CONFIG (the PostgreSQL to serve; default as
# regress/run-tests.sh finds it), NVM_CITUS_SOURCES (TARBALL_DIR),
# NVM_CITUS_BUILD_DIR (where the sources are unpacked and built; default a
# temporary directory, removed afterwards), NVM_CITUS_CCACHE_DIR (ccache's
# cache; default NVM_PG_PREFIX/cache/ccache-citus, NVM_PG_PREFIX defaulting
# to /opt/nvmam as for regress/build-postgresql.sh).
#
# Usage: regress/build-citus.sh 15|18 [TARBALL_DIR]

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/packages.sh
. "$ROOT/regress/lib/packages.sh"

# What building Citus needs beyond nvmam's own packages: lz4 and zstd
# (Citus's configure requires them, for columnar), the headers that
# Debian's PostgreSQL 15 server headers include (GSSAPI, OpenSSL, ICU), and
# ccache (see CCACHE_DIR below).
CITUS_BUILD_PACKAGES=(
	build-essential liblz4-dev libzstd-dev libkrb5-dev libssl-dev libicu-dev ccache
)

case "${1:-}" in
	15) CITUS_VERSION=13.2.2 SHA256=dd2453caec20a830e5e63f1def5c5a98cb6f57ae510407cdcd800916fcdab430 ;;
	18) CITUS_VERSION=14.0.1 SHA256=acfa9a77cd84a8e1edab26cca4a71355f39c910c01586da89560e0240d4b05ba ;;
	*) nvm_die "usage: regress/build-citus.sh 15|18 [TARBALL_DIR]" ;;
esac
export NVM_PG_VERSION=$1
SOURCES=${2:-${NVM_CITUS_SOURCES:-}}
# the extension version a release installs: 13.2.2 -> 13.2-1
CONTROL_VERSION=${CITUS_VERSION%.*}-1

nvm_find_pg >&2
CONTROL=$PG_SHAREDIR/extension/citus.control

# installed_version: the default_version of the installed citus.control
# ('' if none, or if citus.so is missing)
installed_version()
{
	[ -f "$PG_PKGLIBDIR/citus.so" ] && [ -f "$CONTROL" ] || return 0
	sed -nE "s/^default_version *= *'([^']*)'.*/\1/p" "$CONTROL"
}

have=$(installed_version)
if [ "$have" = "$CONTROL_VERSION" ]; then
	nvm_log "Citus $have is installed in $PG_PKGLIBDIR: nothing to build" >&2
	echo "$have"
	exit 0
elif [ -n "$have" ]; then
	nvm_die "Citus $have is installed in $PG_PKGLIBDIR, not $CONTROL_VERSION (Citus $CITUS_VERSION); remove it first"
fi

[ -n "$SOURCES" ] ||
	nvm_die "Citus is not installed in $PG_PKGLIBDIR and no source directory was given: download the source archive of Citus's tag v$CITUS_VERSION from its GitHub releases as citus-$CITUS_VERSION.tar.gz into a directory, and run regress/build-citus.sh $1 DIRECTORY"
TARBALL=$SOURCES/citus-$CITUS_VERSION.tar.gz
[ -f "$TARBALL" ] || nvm_die "no $TARBALL (Citus's release v$CITUS_VERSION, its source archive)"
sum=$(sha256sum "$TARBALL" | cut -d ' ' -f 1)
[ "$sum" = "$SHA256" ] ||
	nvm_die "$TARBALL has SHA-256 $sum, not Citus v$CITUS_VERSION's source archive ($SHA256)"
if [ -f "$SOURCES/SHA256SUMS" ]; then
	(cd "$SOURCES" && grep " citus-$CITUS_VERSION.tar.gz\$" SHA256SUMS | sha256sum -c --quiet -) >&2 ||
		nvm_die "$TARBALL does not match $SOURCES/SHA256SUMS"
fi

nvm_install_package_list "${CITUS_BUILD_PACKAGES[@]}" >&2

if [ -n "${NVM_CITUS_BUILD_DIR:-}" ]; then
	WORK=$NVM_CITUS_BUILD_DIR
	mkdir -p "$WORK"
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvmam-citus.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
fi
SRC=$WORK/citus-$CITUS_VERSION
LOG=${TMPDIR:-/tmp}/nvmam-citus-$CITUS_VERSION-build.log
rm -rf "$SRC"
tar -C "$WORK" -xzf "$TARBALL" || nvm_die "cannot unpack $TARBALL"
[ -x "$SRC/configure" ] || nvm_die "$TARBALL has no citus-$CITUS_VERSION/configure"

# the patch for 13.x against 15.18 and later (see the header)
if [ "$PG_MAJOR" = 15 ] &&
	grep -q 'have_createdb_privilege' "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h"; then
	nvm_log "patch: Citus's static have_createdb_privilege renamed ($PG_VERSION_STRING declares it)" >&2
	sed -i 's/^have_createdb_privilege(void)$/citus_have_createdb_privilege(void)/' \
		"$SRC/src/include/pg_version_compat.h"
	sed -i 's/!have_createdb_privilege()/!citus_have_createdb_privilege()/' \
		"$SRC/src/backend/distributed/commands/serialize_distributed_ddls.c"
	[ "$(cat "$SRC/src/include/pg_version_compat.h" \
		"$SRC/src/backend/distributed/commands/serialize_distributed_ddls.c" |
		grep -c citus_have_createdb_privilege)" = 2 ] ||
		nvm_die "the have_createdb_privilege patch did not apply to Citus $CITUS_VERSION"
fi

# What is built, and how:
#  - citus.so and what it loads (citus_columnar.so, which citus.so loads
#    at start, and the CDC decoders), as Citus's own "make install" does,
#    but not the headers for building against Citus (install-headers);
#  - no LLVM bitcode (with_llvm=no): Debian's PostgreSQL 15 is built with
#    LLVM, and PGXS would compile every file a second time with clang for
#    JIT inlining; without it, JIT still compiles queries that call Citus's
#    functions, it only does not inline them;
#  - through ccache, whose cache (NVM_CITUS_CCACHE_DIR, default
#    NVM_PG_PREFIX/cache/ccache-citus, beside regress/build-postgresql.sh's
#    downloads) outlives the build directory: building again for the same
#    PostgreSQL (Citus removed, or its directories replaced) compiles
#    nothing (a copy of PostgreSQL elsewhere has its headers elsewhere, and
#    misses).
export CCACHE_DIR=${NVM_CITUS_CCACHE_DIR:-${NVM_PG_PREFIX:-/opt/nvmam}/cache/ccache-citus}
export CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=true
mkdir -p "$CCACHE_DIR"
ccache --zero-stats >/dev/null 2>&1
MAKE_ARGS=(PG_CONFIG="$PG_CONFIG" with_llvm=no)
nvm_log "building Citus $CITUS_VERSION for $PG_VERSION_STRING ($PG_CONFIG; log: $LOG)" >&2
(
	# Citus's Makefile.global sets CC to what configure found: ccache goes
	# to configure
	cd "$SRC" &&
		./configure PG_CONFIG="$PG_CONFIG" CC="ccache $("$PG_CONFIG" --cc)" --without-libcurl &&
		make -j"$(nproc)" "${MAKE_ARGS[@]}" extension &&
		make "${MAKE_ARGS[@]}" install-extension
) >"$LOG" 2>&1 || { tail -n 40 "$LOG" >&2; nvm_die "building Citus $CITUS_VERSION failed (log: $LOG)"; }
ccache --show-stats 2>/dev/null | sed -nE 's/^ *(Hits|Misses): *([0-9]+).*/\1 \2/p' | paste -sd ' ' |
	sed 's/^/ccache: /' >&2

have=$(installed_version)
[ "$have" = "$CONTROL_VERSION" ] ||
	nvm_die "after make install, $CONTROL says '$have', not $CONTROL_VERSION"
nvm_log "Citus $CITUS_VERSION installed into $PG_PKGLIBDIR" >&2
echo "$have"

#!/usr/bin/env bash
#
# regress/build-postgresql.sh
#	  Makes a PostgreSQL major version other than Debian 12's 15 available
#	  to nvmam's build and tests, from Debian's packages only, and prints the
#	  path of its pg_config (or, for 17, of its server headers) on the last
#	  line.  Done once: a later call finds the result and reuses it.
#
#	  15	Debian 12's postgresql-15 (regress/lib/packages.sh installs it);
#		prints /usr/lib/postgresql/15/bin/pg_config.
#	  18	Debian's source package of PostgreSQL 18 (from Debian's
#		development suite, whose binary packages need a newer C library
#		than Debian 12's), built with Debian 12's toolchain into
#		NVM_PG_PREFIX/postgresql-18: the server, the client programs,
#		contrib, pg_regress, pg_isolation_regress and the TAP modules
#		(PostgreSQL::Test::*).  The configured source tree stays in
#		NVM_PG_PREFIX/postgresql-18/src: PostgreSQL's own suites
#		(regress/pg-suites/run.sh) run from it.  Takes about 5 minutes on
#		2 cores.  Then the wal2json output plugin (regress/t/040 decodes
#		with it; Debian 12 packages it for 15 only), from Debian's source
#		package of the same suite, built with 18's pg_config and
#		installed into the same prefix (a few seconds).
#	  17	Only the server headers: Debian 13's postgresql-server-dev-17,
#		unpacked (not installed: its programs need a newer C library).
#		Prints the include directory; meson's -Dpg_includedir_server
#		compiles against it (regress/run-tests.sh does, with
#		NVM_PG_VERSION=17).
#
# Needs root (or sudo) for the build dependencies (apt-get); the download
# uses a private apt state under NVM_PG_PREFIX and leaves the system's
# apt sources alone.
#
# Environment: NVM_PG_PREFIX (default /opt/nvmam), NVM_PG18_DEB_VERSION
# (a version of Debian's postgresql-18 source package; default the newest
# the development suite serves).
#
# Usage: regress/build-postgresql.sh 15|17|18

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=regress/lib/common.sh
. "$ROOT/regress/lib/common.sh"
# shellcheck source=regress/lib/apt.sh
. "$ROOT/regress/lib/apt.sh"
# shellcheck source=regress/lib/packages.sh
. "$ROOT/regress/lib/packages.sh"

PREFIX_ROOT=${NVM_PG_PREFIX:-/opt/nvmam}
CACHE=$PREFIX_ROOT/cache

# What PostgreSQL 18's configure needs on Debian 12 (a subset of the source
# package's Build-Depends: the options used below and the TAP tests).
PG18_BUILD_PACKAGES=(
	build-essential dpkg-dev bison flex pkg-config
	libicu-dev liblz4-dev libzstd-dev libreadline-dev zlib1g-dev libssl-dev
	libipc-run-perl
)

# Builds PostgreSQL 18 into PREFIX_ROOT/postgresql-18 unless it is there.
build_18()
{
	local prefix=$PREFIX_ROOT/postgresql-18 src version log
	src=$prefix/src
	if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.nvmam-complete" ]; then
		with_wal2json_18 "$prefix"
		echo "$prefix/bin/pg_config"
		return
	fi
	nvm_install_package_list "${PG18_BUILD_PACKAGES[@]}" >&2
	mkdir -p "$CACHE/downloads"
	log=$CACHE/postgresql-18-build.log
	nvm_log "fetching Debian's source package of PostgreSQL 18 (development suite)" >&2
	nvm_apt_private "$CACHE" sid deb-src update >"$CACHE/apt-update.log" 2>&1 ||
		{ cat "$CACHE/apt-update.log" >&2; nvm_die "apt-get update (private state) failed"; }
	version=${NVM_PG18_DEB_VERSION:-}
	rm -rf "$CACHE/downloads"/postgresql-18*
	(cd "$CACHE/downloads" &&
		nvm_apt_private "$CACHE" sid deb-src source --download-only "postgresql-18${version:+=$version}") \
		>"$CACHE/apt-source.log" 2>&1 ||
		{ cat "$CACHE/apt-source.log" >&2; nvm_die "downloading postgresql-18's source package failed"; }
	rm -rf "$prefix"
	mkdir -p "$prefix"
	tar -C "$prefix" -xf "$(ls "$CACHE/downloads"/postgresql-18_*.orig.tar.*)" ||
		nvm_die "cannot unpack PostgreSQL 18's sources"
	mv "$prefix"/postgresql-18.* "$src"
	nvm_log "building PostgreSQL 18 ($(sed -n 's/^PACKAGE_VERSION=.\(.*\).$/\1/p' "$src/configure")) into $prefix (log: $log)" >&2
	(
		cd "$src" &&
			./configure --prefix="$prefix" --enable-tap-tests --enable-debug \
				--with-lz4 --with-zstd --with-icu --with-openssl --without-readline &&
			make -j"$(nproc)" world-bin &&
			make install-world-bin &&
			make -C src/test/regress &&
			make -C src/test/isolation install
	) >"$log" 2>&1 || { tail -n 40 "$log" >&2; nvm_die "building PostgreSQL 18 failed (see $log)"; }
	chmod -R a+rX "$prefix"
	touch "$prefix/.nvmam-complete"
	with_wal2json_18 "$prefix"
	echo "$prefix/bin/pg_config"
}

# build_wal2json_18 PREFIX: builds Debian's source package of wal2json
# (its Debian patches applied) against PostgreSQL 18 in PREFIX and installs
# it there, unless PREFIX has it.  Fails (status 1, with the reason) when
# the source package cannot be fetched or built: PostgreSQL is usable
# without it, only regress/t/040's wal2json part needs it.
build_wal2json_18()
{
	local prefix=$1 pg_config=$1/bin/pg_config dir log
	if [ -f "$("$pg_config" --pkglibdir)/wal2json.so" ]; then
		return 0
	fi
	log=$CACHE/wal2json-18-build.log
	nvm_log "fetching Debian's source package of wal2json (development suite)" >&2
	if ! nvm_apt_private "$CACHE" sid deb-src update >"$CACHE/apt-update.log" 2>&1; then
		cat "$CACHE/apt-update.log" >&2
		nvm_warn "apt-get update (private state) failed"
		return 1
	fi
	rm -rf "$CACHE/wal2json"
	mkdir -p "$CACHE/wal2json"
	# apt-get source unpacks it with dpkg-source, the Debian patches applied
	if ! (cd "$CACHE/wal2json" && nvm_apt_private "$CACHE" sid deb-src source wal2json) \
		>"$CACHE/apt-source-wal2json.log" 2>&1; then
		grep -E '^(E|Err):' "$CACHE/apt-source-wal2json.log" >&2
		nvm_warn "downloading wal2json's source package failed (log: $CACHE/apt-source-wal2json.log)"
		return 1
	fi
	dir=$(find "$CACHE/wal2json" -mindepth 1 -maxdepth 1 -type d -name 'wal2json*' | head -n 1)
	if [ -z "$dir" ] || [ ! -f "$dir/wal2json.c" ]; then
		nvm_warn "no wal2json.c in $CACHE/wal2json"
		return 1
	fi
	nvm_log "building wal2json ${dir##*/} against PostgreSQL 18 (log: $log)" >&2
	if ! make -C "$dir" USE_PGXS=1 PG_CONFIG="$pg_config" install >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		nvm_warn "building wal2json failed (log: $log)"
		return 1
	fi
	chmod -R a+rX "$prefix"
}

# with_wal2json_18 PREFIX: build_wal2json_18, a warning when it fails
with_wal2json_18()
{
	build_wal2json_18 "$1" ||
		nvm_warn "PostgreSQL 18 has no wal2json: regress/t/040_logical_decoding.pl skips its wal2json part (and says so)"
}

# Unpacks Debian 13's postgresql-server-dev-17 into PREFIX_ROOT/postgresql-17
# unless it is there; prints the server include directory.
headers_17()
{
	local dir=$PREFIX_ROOT/postgresql-17 inc
	inc=$dir/usr/include/postgresql/17/server
	if [ -f "$inc/pg_config.h" ]; then
		echo "$inc"
		return
	fi
	mkdir -p "$CACHE/downloads"
	nvm_log "fetching Debian 13's postgresql-server-dev-17 (headers only)" >&2
	nvm_apt_private "$CACHE" trixie deb update >"$CACHE/apt-update.log" 2>&1 ||
		{ cat "$CACHE/apt-update.log" >&2; nvm_die "apt-get update (private state) failed"; }
	rm -f "$CACHE/downloads"/postgresql-server-dev-17_*.deb
	(cd "$CACHE/downloads" && nvm_apt_private "$CACHE" trixie deb download postgresql-server-dev-17) \
		>"$CACHE/apt-download.log" 2>&1 ||
		{ cat "$CACHE/apt-download.log" >&2; nvm_die "downloading postgresql-server-dev-17 failed"; }
	rm -rf "$dir"
	dpkg -x "$(ls "$CACHE/downloads"/postgresql-server-dev-17_*.deb)" "$dir" ||
		nvm_die "cannot unpack postgresql-server-dev-17"
	[ -f "$inc/pg_config.h" ] || nvm_die "no pg_config.h in $inc"
	chmod -R a+rX "$dir"
	echo "$inc"
}

case "${1:-}" in
	15)
		nvm_install_packages >&2
		echo /usr/lib/postgresql/15/bin/pg_config
		;;
	17) headers_17 ;;
	18) build_18 ;;
	*) nvm_die "usage: regress/build-postgresql.sh 15|17|18" ;;
esac

# shellcheck shell=bash
#
# regress/lib/common.sh
#	  Shared helpers of the test and benchmark scripts (regress/, bench/):
#	  messages, a script's usage and command-line options (nvm_options),
#	  locating PostgreSQL 15 or 18, building and installing the extension.
#	  Throwaway clusters are regress/lib/cluster.sh's.
#
# Source it from bash; it sets no shell options of its own.  Variables it
# defines (all may be preset in the environment):
#	NVM_PG_VERSION	the major version to use when PG_CONFIG is not set:
#				15 (default, Debian 12's) or 18 (built once by
#				regress/build-postgresql.sh 18)
#	PG_CONFIG	pg_config of PostgreSQL 15 or 18
#	PG_MAJOR	its major version (15 or 18)
#	PG_BINDIR	its bindir (initdb, pg_ctl, postgres, psql, pgbench)
#	PG_PKGLIBDIR, PG_SHAREDIR, PG_PGXS_TEST (pgxs's src/test: pg_regress,
#				pg_isolation_regress, perl/PostgreSQL/Test)

nvm_log()
{
	printf '==> %s\n' "$*"
}

nvm_warn()
{
	printf 'WARNING: %s\n' "$*" >&2
}

nvm_die()
{
	printf 'ERROR: %s\n' "$*" >&2
	exit 1
}

# nvm_usage prints the calling script's header comment (from its second
# line to the first line that is not a comment), which states its usage.
nvm_usage()
{
	sed -n '2,/^[^#]/{/^#/!d; s/^# \{0,1\}//; p}' "$0" | sed '/./,$!d'
}

# nvm_usage_error MESSAGE: says what is wrong with the command line and
# exits 2.
nvm_usage_error()
{
	printf 'ERROR: %s (see %s --help)\n' "$*" "$0" >&2
	exit 2
}

# nvm_options SPEC ARG...: parses a script's command line ARG... as SPEC
# says.  SPEC is a list of NAME=VAR words: --NAME VALUE sets the variable
# VAR to VALUE, and a NAME ending in ! is a flag, --NAME setting VAR to 1
# (NAME!=VAR=VALUE: to VALUE, e.g. no-build!=BUILD=0).
# -h and --help print the script's usage (nvm_usage) and exit 0; an unknown
# option, or one without its value, is an error (nvm_usage_error).  The
# caller sets each VAR's default before.  E.g.
#	nvm_options "rounds=ROUNDS out=OUT cache-sim!=CACHE_SIM" "$@"
nvm_options()
{
	# prefixed locals: a VAR of the caller's may be named spec, name, ...
	local _nvm_spec=$1 _nvm_word _nvm_name _nvm_var _nvm_found
	shift
	while [ $# -gt 0 ]; do
		case "$1" in
			-h | --help) nvm_usage; exit 0 ;;
		esac
		_nvm_found=
		for _nvm_word in $_nvm_spec; do
			_nvm_name=${_nvm_word%%=*}
			_nvm_var=${_nvm_word#*=}
			[ "--${_nvm_name%!}" = "$1" ] || continue
			_nvm_found=1
			if [ "${_nvm_name%!}" != "$_nvm_name" ]; then
				case "$_nvm_var" in
					*=*) printf -v "${_nvm_var%%=*}" '%s' "${_nvm_var#*=}" ;;
					*) printf -v "$_nvm_var" '%s' 1 ;;
				esac
				shift
			else
				[ $# -ge 2 ] || nvm_usage_error "$1 needs a value"
				printf -v "$_nvm_var" '%s' "$2"
				shift 2
			fi
			break
		done
		[ -n "$_nvm_found" ] || nvm_usage_error "unknown option $1"
	done
}

# True when $1 is set to something other than "", "0", "no" or "false".
nvm_truthy()
{
	case "${1:-}" in
		'' | 0 | no | false | NO | FALSE | off | OFF) return 1 ;;
		*) return 0 ;;
	esac
}

# The PostgreSQL major versions nvmam is built and tested against.
NVM_PG_VERSIONS="15 18"

# Prints the major version NVM_PG_VERSION asks for (15 when unset); dies
# unless it is one of NVM_PG_VERSIONS.
nvm_pg_version()
{
	local v=${NVM_PG_VERSION:-15}
	case " $NVM_PG_VERSIONS " in
		*" $v "*) echo "$v" ;;
		*) nvm_die "NVM_PG_VERSION is \"$v\"; nvmam is tested on PostgreSQL 15 and 18 (NVM_PG_VERSION=15 or 18)" ;;
	esac
}

# nvm_build_dir_name NAME [MAJOR]: the build directory NAME for PostgreSQL
# 15, and NAME-pgMAJOR for another version (MAJOR, else PG_MAJOR, else
# NVM_PG_VERSION), so that the builds for each version live side by side.
nvm_build_dir_name()
{
	local major=${2:-${PG_MAJOR:-$(nvm_pg_version)}}
	if [ "$major" = 15 ]; then
		echo "$1"
	else
		echo "$1-pg$major"
	fi
}

# Finds PostgreSQL 15 or 18 and sets PG_CONFIG, PG_MAJOR, PG_BINDIR,
# PG_PKGLIBDIR, PG_SHAREDIR and PG_PGXS_TEST.  Without PG_CONFIG it takes
# the version NVM_PG_VERSION names: 15's pg_config of Debian's package, or
# 18's from regress/build-postgresql.sh 18 (which builds it the first
# time).  Dies unless it is PostgreSQL 15 or 18, or when NVM_PG_VERSION
# names another version than PG_CONFIG's.
nvm_find_pg()
{
	local version pgxs want out root

	want=$(nvm_pg_version) || exit 1
	if [ -z "${PG_CONFIG:-}" ]; then
		if [ "$want" = 18 ]; then
			root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
			nvm_log "PostgreSQL 18: regress/build-postgresql.sh 18 (builds it the first time)" >&2
			out=$(bash "$root/regress/build-postgresql.sh" 18) ||
				nvm_die "regress/build-postgresql.sh 18 failed"
			PG_CONFIG=$(printf '%s\n' "$out" | tail -n 1)
		elif [ -x /usr/lib/postgresql/15/bin/pg_config ]; then
			PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
		elif command -v pg_config >/dev/null 2>&1; then
			PG_CONFIG=$(command -v pg_config)
		else
			nvm_die "pg_config not found: install postgresql-server-dev-15 (bash .ci/run does)"
		fi
	fi
	version=$("$PG_CONFIG" --version) || nvm_die "$PG_CONFIG --version failed"
	case "$version" in
		"PostgreSQL 15."*) PG_MAJOR=15 ;;
		"PostgreSQL 18."*) PG_MAJOR=18 ;;
		*) nvm_die "$PG_CONFIG is \"$version\"; nvmam needs PostgreSQL 15 or 18 (set PG_CONFIG, or NVM_PG_VERSION=18)" ;;
	esac
	if [ -n "${NVM_PG_VERSION:-}" ] && [ "$NVM_PG_VERSION" != "$PG_MAJOR" ]; then
		nvm_die "NVM_PG_VERSION=$NVM_PG_VERSION, but PG_CONFIG ($PG_CONFIG) is \"$version\""
	fi
	PG_VERSION_STRING=$version
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
	PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
	pgxs=$("$PG_CONFIG" --pgxs)
	# .../lib/pgxs/src/makefiles/pgxs.mk -> .../lib/pgxs/src/test
	PG_PGXS_TEST=$(dirname "$(dirname "$pgxs")")/test
	if [ ! -x "$PG_BINDIR/postgres" ]; then
		if [ "$PG_MAJOR" = 15 ]; then
			nvm_die "no PostgreSQL server in $PG_BINDIR: install postgresql-15"
		fi
		nvm_die "no PostgreSQL server in $PG_BINDIR: run regress/build-postgresql.sh $PG_MAJOR"
	fi
	# the version chosen, for the scripts this one starts
	NVM_PG_VERSION=$PG_MAJOR
	export PG_CONFIG PG_MAJOR PG_BINDIR PG_PKGLIBDIR PG_SHAREDIR PG_PGXS_TEST PG_VERSION_STRING \
		NVM_PG_VERSION
}

# nvm_build SRCDIR BUILDDIR [meson setup options...]
#	Configures (or reconfigures, so new source files are picked up) and
#	builds with meson + ninja.
nvm_build()
{
	local src=$1 build=$2
	shift 2

	command -v meson >/dev/null 2>&1 || nvm_die "meson not found (apt-get install meson; bash .ci/run does)"
	command -v ninja >/dev/null 2>&1 || nvm_die "ninja not found (apt-get install ninja-build)"

	if [ -f "$build/meson-private/coredata.dat" ]; then
		if ! meson setup --reconfigure "$build" "$src" -Dpg_config="$PG_CONFIG" "$@"; then
			nvm_warn "reconfiguring $build failed; configuring it from scratch"
			meson setup --wipe "$build" "$src" -Dpg_config="$PG_CONFIG" "$@" || return 1
		fi
	else
		meson setup "$build" "$src" -Dpg_config="$PG_CONFIG" "$@" || return 1
	fi
	ninja -C "$build" || return 1
}

# nvm_install BUILDDIR
#	Installs into PostgreSQL's directories: directly when root or when they
#	are writable, else through sudo; fails clearly otherwise.
nvm_install()
{
	local build=$1

	if [ "$(id -u)" -eq 0 ] || { [ -w "$PG_PKGLIBDIR" ] && [ -w "$PG_SHAREDIR/extension" ]; }; then
		meson install -C "$build" --no-rebuild
	elif command -v sudo >/dev/null 2>&1; then
		nvm_log "installing through sudo (not root)"
		sudo meson install -C "$build" --no-rebuild
	else
		nvm_warn "installing needs root: $PG_PKGLIBDIR and $PG_SHAREDIR/extension are not writable and sudo is missing"
		return 1
	fi
}

# nvm_run_group SECONDS LOG CMD...
#	Runs CMD in a process group of its own, its output both on stdout and in
#	LOG, and returns its status.  The whole group (servers and clients that
#	CMD started included) is killed after SECONDS (status 124) or when
#	nvm_kill_group is called, e.g. from an INT/TERM trap.
NVM_GROUP=
nvm_run_group()
{
	local secs=$1 log=$2 pid watchdog rc
	shift 2
	rm -f "$log.timeout"
	# started from a non-interactive shell, the job is no group leader, so
	# setsid execs in place and $! is the new group's id
	# shellcheck disable=SC2016 # expanded by the inner bash
	setsid bash -c 'set -o pipefail; log=$1; shift; "$@" 2>&1 | tee "$log"' \
		nvm-group "$log" "$@" </dev/null &
	pid=$!
	NVM_GROUP=$pid
	# shellcheck disable=SC2016 # expanded by the inner bash
	setsid bash -c 'sleep "$1"; echo "timed out after $1 s" >"$3.timeout";
		kill -TERM -- "-$2" 2>/dev/null; sleep 20; kill -KILL -- "-$2" 2>/dev/null' \
		nvm-watchdog "$secs" "$pid" "$log" </dev/null >/dev/null 2>&1 &
	watchdog=$!
	wait "$pid"
	rc=$?
	kill -KILL -- "-$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	NVM_GROUP=
	if [ -f "$log.timeout" ]; then
		nvm_warn "$(cat "$log.timeout"): killed $*"
		return 124
	fi
	return "$rc"
}

# Kills the group started by nvm_run_group, if one is running.
nvm_kill_group()
{
	local _
	[ -n "$NVM_GROUP" ] || return 0
	kill -TERM -- "-$NVM_GROUP" 2>/dev/null || return 0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 -- "-$NVM_GROUP" 2>/dev/null || break
		sleep 1
	done
	kill -KILL -- "-$NVM_GROUP" 2>/dev/null
	NVM_GROUP=
	return 0
}

# shellcheck shell=bash
#
# regress/lib/cluster.sh
#	  Throwaway PostgreSQL clusters for the test harness and the benchmarks.
#
# PostgreSQL refuses to run as root, so when the caller is root every server
# and client program runs as Debian's "postgres" user (runuser); any other
# user runs them as itself.  Every directory handed to the server must be
# reachable by that user: make them with nvm_pg_tmpdir.  Clusters listen on a
# Unix socket in their own directory only (listen_addresses = ''), so they
# cannot clash with other servers on the machine.
#
# Needs regress/lib/common.sh and nvm_find_pg first.
#
#	nvm_pg_user						user that runs the server
#	nvm_as_pg CMD...				run CMD as that user
#	nvm_pg_tmpdir BASE NAME			new dir BASE/NAME.XXXXXX (mode 755) owned by it
#	nvm_free_port					a TCP port nothing listens on
#	nvm_cluster_new VAR BASE NAME [LOG]	a new cluster directory, initdb'd on a free port
#									and registered for clean-up; VAR names it
#	nvm_cluster_init DIR PORT [TEMPLATE]	initdb DIR/data (or a copy of the data
#									directory TEMPLATE); socket in DIR; log DIR/server.log
#	nvm_cluster_template DIR		initdb DIR/data once, for nvm_cluster_init to copy
#	nvm_cluster_conf DIR LINE...	append LINEs to DIR/data/postgresql.conf
#	nvm_cluster_start DIR			start (waits); prints the log tail on failure
#	nvm_cluster_stop DIR			fast stop if running
#	nvm_psql DIR DB ARGS...			psql -X -v ON_ERROR_STOP=1 to the cluster in DIR
#	nvm_pg_client DIR PROG ARGS...	a PostgreSQL program (pgbench, pg_basebackup, ...)
#									connected to the cluster in DIR
#	nvm_cleanup_add CMD				run CMD (a string) at nvm_cleanup
#	nvm_cleanup						stop registered clusters, remove registered dirs
#	nvm_cleanup_at_exit				run nvm_cleanup at exit, and on INT or TERM
#	nvm_stop_all_under DIR			immediate stop of every server with data under DIR

NVM_CLEANUP_CMDS=()

nvm_pg_user()
{
	if [ "$(id -u)" -eq 0 ]; then
		echo postgres
	else
		id -un
	fi
}

nvm_as_pg()
{
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 ||
			nvm_die "user postgres missing: install postgresql-15 (bash .ci/run does)"
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# nvm_pg_tmpdir BASE NAME: prints the new directory's path.
nvm_pg_tmpdir()
{
	local dir
	dir=$(mktemp -d "$1/$2.XXXXXX") || return 1
	chmod 755 "$dir"
	if [ "$(id -u)" -eq 0 ]; then
		chown "$(nvm_pg_user):" "$dir"
	fi
	printf '%s\n' "$dir"
}

# True when something listens on TCP port $1 (or a socket file in /tmp or
# /var/run/postgresql claims it).
nvm_port_in_use()
{
	local port=$1
	[ -e "/tmp/.s.PGSQL.$port" ] && return 0
	[ -e "/var/run/postgresql/.s.PGSQL.$port" ] && return 0
	if command -v ss >/dev/null 2>&1; then
		ss -Htln 2>/dev/null | awk '{print $4}' | grep -Eq "[:.]$port\$"
		return $?
	fi
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

nvm_free_port()
{
	local port tries=0
	port=$((30000 + RANDOM % 20000))
	while nvm_port_in_use "$port"; do
		tries=$((tries + 1))
		[ "$tries" -lt 200 ] || nvm_die "no free port found"
		port=$((30000 + RANDOM % 20000))
	done
	echo "$port"
}

# nvm_cluster_new VAR BASE NAME [LOG]: a throwaway cluster in a new directory
# BASE/NAME.XXXXXX (nvm_pg_tmpdir), initdb'd on a free port (nvm_cluster_init)
# and registered for clean-up: stopped, its server log copied to LOG if
# given, removed.  Sets the variable VAR to its directory; the caller adds
# its settings (nvm_cluster_conf) and starts it (nvm_cluster_start).
nvm_cluster_new()
{
	# prefixed locals: the caller's VAR may be named dir, log, ...
	local _nvm_var=$1 _nvm_log=${4:-} _nvm_dir
	_nvm_dir=$(nvm_pg_tmpdir "$2" "$3") || return 1
	nvm_cleanup_add "nvm_cluster_stop '$_nvm_dir'${_nvm_log:+; cp -f '$_nvm_dir/server.log' '$_nvm_log' 2>/dev/null}; rm -rf '$_nvm_dir'"
	nvm_cluster_init "$_nvm_dir" "$(nvm_free_port)" || return 1
	printf -v "$_nvm_var" '%s' "$_nvm_dir"
}

# nvm_cluster_template DIR: DIR/data made by initdb as nvm_cluster_init makes
# a cluster's, with no settings of a cluster of its own, to be copied by
# nvm_cluster_init DIR PORT DIR/data (a copy takes a few ms, initdb about a
# second of CPU).  The copies share initdb's database system identifier.
nvm_cluster_template()
{
	local dir=$1
	nvm_as_pg "$PG_BINDIR/initdb" -D "$dir/data" -A trust -U postgres \
		--no-locale -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		return 1
	}
}

nvm_cluster_init()
{
	local dir=$1 port=$2 template=${3:-}
	if [ -n "$template" ]; then
		nvm_as_pg cp -a "$template" "$dir/data" || return 1
	else
		nvm_cluster_template "$dir" || return 1
	fi
	nvm_cluster_conf "$dir" \
		"" \
		"# throwaway cluster made by regress/lib/cluster.sh" \
		"port = $port" \
		"listen_addresses = ''" \
		"unix_socket_directories = '$dir'" \
		"logging_collector = off"
	echo "$port" >"$dir/port"
}

nvm_cluster_conf()
{
	local dir=$1
	shift
	printf '%s\n' "$@" | nvm_as_pg tee -a "$dir/data/postgresql.conf" >/dev/null
}

nvm_cluster_start()
{
	local dir=$1
	if ! nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
		-w -t 300 start >/dev/null; then
		nvm_warn "server in $dir did not start; end of its log:"
		tail -n 40 "$dir/server.log" >&2 || true
		return 1
	fi
}

nvm_cluster_stop()
{
	local dir=$1
	if [ -f "$dir/data/postmaster.pid" ]; then
		nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 120 stop >/dev/null 2>&1 ||
			nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 ||
			true
	fi
}

nvm_psql()
{
	local dir=$1 db=$2
	shift 2
	nvm_as_pg "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" \
		-p "$(cat "$dir/port")" -U postgres -d "$db" "$@"
}

# nvm_pg_client DIR PROG ARGS...: runs the PostgreSQL program PROG (psql,
# pgbench, pg_basebackup, ...) as the server's user, connected to the
# cluster in DIR (PGHOST, PGPORT, PGUSER; database postgres unless ARGS
# name another).
nvm_pg_client()
{
	local dir=$1 prog=$2
	shift 2
	nvm_as_pg env PGHOST="$dir" PGPORT="$(cat "$dir/port")" PGUSER=postgres PGDATABASE=postgres \
		"$PG_BINDIR/$prog" "$@"
}

nvm_cleanup_add()
{
	NVM_CLEANUP_CMDS+=("$1")
}

# Runs the registered commands, newest first.
nvm_cleanup()
{
	local i
	for ((i = ${#NVM_CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${NVM_CLEANUP_CMDS[$i]}" || true
	done
	NVM_CLEANUP_CMDS=()
}

# nvm_cleanup_at_exit: runs nvm_cleanup when the script exits, and when it
# is interrupted (INT, TERM: exit status 130).
nvm_cleanup_at_exit()
{
	trap 'nvm_cleanup' EXIT
	trap 'nvm_cleanup; exit 130' INT TERM
}

# nvm_stop_all_under DIR: stops every server whose data directory lies under
# DIR (pg_regress temp instances, TAP nodes left behind by a killed run).
nvm_stop_all_under()
{
	local base=$1 pidfile
	[ -d "$base" ] || return 0
	while IFS= read -r pidfile; do
		nvm_as_pg "$PG_BINDIR/pg_ctl" -D "$(dirname "$pidfile")" -m immediate -w stop \
			>/dev/null 2>&1 || true
	done < <(find "$base" -name postmaster.pid -type f 2>/dev/null)
}

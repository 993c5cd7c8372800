# shellcheck shell=bash
#
# regress/lib/packages.sh
#	  The Debian 12 packages nvmam needs to build, test and benchmark, and
#	  nvm_install_packages, which installs the missing ones (apt-get, as root
#	  or through sudo, non-interactively).  Used by .ci/run and
#	  bench/quick.sh; running it again when all are present changes nothing.

NVM_PACKAGES=(
	build-essential          # gcc, make, libc headers
	pkg-config
	meson
	ninja-build
	libpmem-dev              # PMDK libpmem (the storage core)
	postgresql-15            # server: initdb, postgres, pg_ctl
	postgresql-client-15     # psql, pgbench, pg_regress, PostgreSQL::Test::*
	postgresql-server-dev-15 # headers, pg_config, pgxs
	postgresql-contrib       # amcheck and friends, used by tests
	postgresql-15-wal2json   # the wal2json output plugin (logical decoding tests)
	libipc-run-perl          # needed by PostgreSQL::Test::Cluster (TAP)
	perl                     # prove
	util-linux               # runuser, setsid
	iproute2                 # ss (free-port check)
	procps
	coreutils
	bzip2                    # PostgreSQL's source tarball (regress/pg-suites)
	xz-utils
)

# Prints the packages of NVM_PACKAGES that are not installed, one a line;
# also postgresql-client-15 when its version differs from the server's
# (psql, pg_regress and pgbench should match the server exactly).
nvm_missing_packages()
{
	local p
	for p in "${NVM_PACKAGES[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			echo "$p"
		fi
	done
	if [ "$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null)" != \
		"$(dpkg-query -W -f='${Version}' postgresql-client-15 2>/dev/null)" ]; then
		echo postgresql-client-15
	fi
}

nvm_install_packages()
{
	local -a missing
	mapfile -t missing < <(nvm_missing_packages | awk '!seen[$0]++')
	nvm_install_package_list "${missing[@]}"
}

# nvm_install_package_list PACKAGE...: installs those of the packages that
# are missing (apt-get, as root or through sudo).
nvm_install_package_list()
{
	local -a missing=() sudo=()
	local p
	command -v dpkg-query >/dev/null 2>&1 || {
		echo "not a Debian system: install the equivalents of: $*" >&2
		return 1
	}
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		echo "==> packages: all present"
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			sudo=(sudo)
		else
			echo "missing packages (${missing[*]}) and not root: run as root" >&2
			return 1
		fi
	fi
	echo "==> installing: ${missing[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"${missing[@]}" </dev/null
}

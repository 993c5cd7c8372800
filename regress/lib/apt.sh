# shellcheck shell=bash
#
# regress/lib/apt.sh
#	  nvm_apt_private: apt-get with a private source list and state under a
#	  cache directory, reusing the Debian mirror the machine is configured
#	  with.  Fetches Debian's source and binary packages of other releases
#	  (PostgreSQL 15's exact minor release, 17, 18) without touching the
#	  system's apt configuration.

# nvm_apt_private CACHE SUITE TYPES ARGS...
#	Runs apt-get ARGS with one source, the configured mirror's SUITE
#	(bookworm, trixie, sid...) with TYPES ("deb", "deb-src" or both);
#	its state is CACHE/apt-SUITE.
nvm_apt_private()
{
	local state=$1/apt-$2 suite=$2 types=$3 uri parts
	shift 3
	parts=$state/parts
	if [ ! -f "$parts/$suite.sources" ]; then
		uri=$(grep -h -m1 '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2; exit}')
		if [ -z "$uri" ]; then
			uri=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
		fi
		uri=${uri:-http://deb.debian.org/debian}
		mkdir -p "$parts" "$state/lists/partial" "$state/cache/archives/partial"
		printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
			"$types" "$uri" "$suite" >"$parts/$suite.sources"
	fi
	apt-get -q -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$parts" \
		-o Dir::State::Lists="$state/lists" \
		-o Dir::Cache="$state/cache" \
		-o APT::Sandbox::User=root "$@"
}

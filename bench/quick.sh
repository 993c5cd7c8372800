#!/usr/bin/env bash
#
# bench/quick.sh
#	  The README's main command: the benchmark suite in quick mode (about 5
#	  minutes on 2 idle cores, build included).  Same as `bench/run.sh --quick`; extra arguments
#	  are passed on (e.g. --out DIR, --no-engine).  See bench/run.sh.
#
#	  NVM_SKIP_BUILD=1 (as before) uses the installed module as it is.
#	  NVM_PG_VERSION=18 runs it on PostgreSQL 18 (built once by
#	  regress/build-postgresql.sh 18) instead of 15, with its build and
#	  output in build-bench-pg18/; --pg-config PATH names either version's
#	  pg_config.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
args=(--quick)
case "${NVM_SKIP_BUILD:-}" in
	'' | 0 | no | false | off) ;;
	*) args+=(--no-build) ;;
esac
exec bash "$ROOT/bench/run.sh" "${args[@]}" "$@"

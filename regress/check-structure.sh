#!/usr/bin/env bash
#
# regress/check-structure.sh
#	  Checks the structure of source folders: no include cycle between
#	  their modules (X.c and X.h are module X), and a README.md map that
#	  names every .c and .h file of the folder and no file it does not have.
#
# Usage:
#	regress/check-structure.sh [--graph] FOLDER...
#
# e.g. regress/check-structure.sh src/core.  Folders are taken from the
# current directory or from the top of the repository.  Prints one line per
# folder, "ok" or "FAIL" followed by every cycle (with the include lines
# that make it) and every file the map misses or names wrongly; --graph also
# prints each module's dependencies, lowest modules first.  Exits 0 when
# every folder passes, 1 otherwise (2 on a usage error).  The rules are
# stated in regress/lib/check_structure.py, which does the work (Python 3).
#
set -euo pipefail

exec python3 "$(dirname "${BASH_SOURCE[0]}")/lib/check_structure.py" "$@"

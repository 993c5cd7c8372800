#!/usr/bin/env bash
#
# regress/check-structure.sh
#	  Checks the structure of source folders: no include cycle between
#	  their modules (X.c and X.h are module X), no file that includes one of
#	  a layer above its own (where the folder's README.md orders its
#	  subfolders in layers, as src/pg/README.md does), and a README.md map
#	  that names every .c and .h file of the folder and no file it does not
#	  have.  With --docs, also the documentation: the links between the
#	  repository's Markdown pages, and the settings pages against the code.
#
# Usage:
#	regress/check-structure.sh [--graph] [--docs] FOLDER...
#
# e.g. regress/check-structure.sh src/core.  Folders are taken from the
# current directory or from the top of the repository.  Prints one line per
# folder, "ok" or "FAIL" followed by every cycle (with the include lines
# that make it), every include across the layers the wrong way and every
# file the map misses or names wrongly, and with --docs one line for the
# documentation, "ok" or "FAIL" followed by every broken link and setting
# missing from a page; --graph also prints each module's dependencies,
# lowest modules first.  Exits 0 when everything passes, 1 otherwise (2 on
# a usage error).  The rules are stated in regress/lib/check_structure.py
# and regress/lib/check_docs.py, which do the work (Python 3).
#
set -euo pipefail

exec python3 "$(dirname "${BASH_SOURCE[0]}")/lib/check_structure.py" "$@"

#!/usr/bin/env bash
#
# bench/tools/modes_engine.sh
#	  The engine level of every concurrency-control mode side by side:
#	  nvm_engine_bench in rounds, each round every emulated drain delay
#	  (a persistent-memory write latency) and within each point the modes
#	  one after the other, in an order that rotates per round, and MCSI
#	  with DBX-N's non-temporal row writes (nvm.commit_variant = dbxn,
#	  labelled mcsi-dbxn) before or after them; then
#	  modes_table.py's medians, spreads and ratios (table.md).
#
# Usage (from the top directory):
#	bash bench/tools/modes_engine.sh OUT [ROUNDS [DELAYS [THREADS [WORKLOADS]]]]
# with DELAYS in ns, e.g. "0 300"; the defaults are 3 rounds, "0 300",
# "1,2" threads and micro,ycsb-a,ycsb-c.  Each point runs 1.5 s on a fresh
# 2 GB pool of 20,000 rows (small pages: a new pool per point is then
# quicker to make).  It builds a release build of the core into
# build-bench-engine/ unless NVM_ENGINE_BENCH names a binary.
# Keep the machine quiet while it runs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:?usage: modes_engine.sh OUT [ROUNDS [DELAYS [THREADS [WORKLOADS]]]]}
ROUNDS=${2:-3}
DELAYS=${3:-0 300}
THREADS=${4:-1,2}
WORKLOADS=${5:-micro,ycsb-a,ycsb-c}
MODES=(mcsi n2db pisces pomvcc)

BIN=${NVM_ENGINE_BENCH:-}
if [ -z "$BIN" ]; then
	if [ ! -d "$ROOT/build-bench-engine" ]; then
		meson setup "$ROOT/build-bench-engine" "$ROOT" --buildtype=release -Db_ndebug=if-release >/dev/null
	fi
	ninja -C "$ROOT/build-bench-engine" nvm_engine_bench >/dev/null
	BIN=$ROOT/build-bench-engine/nvm_engine_bench
fi
mkdir -p "$OUT"
CSV=$OUT/engine-modes.csv
echo "round,delay_ns,mode,workload,threads,seconds,tps,commits,aborts,lat_us,snapshot_ns,complete_ns,flushes_per_txn,fences_per_txn,bytes_per_txn" >"$CSV"
{
	echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "# bash bench/tools/modes_engine.sh OUT $ROUNDS \"$DELAYS\" $THREADS $WORKLOADS"
} >"$OUT/runs.txt"
for r in $(seq 1 "$ROUNDS"); do
	# the modes' order rotates per round
	k=$(((r - 1) % ${#MODES[@]}))
	order=$(printf '%s\n' "${MODES[@]:$k}" "${MODES[@]:0:$k}" | paste -sd, -)
	for d in $DELAYS; do
		# MCSI with DBX-N's non-temporal row writes, before the modes in odd
		# rounds, after them in even ones
		runs=(modes dbxn)
		[ $((r % 2)) -eq 1 ] && runs=(dbxn modes)
		for run in "${runs[@]}"; do
			tmp=$OUT/.round.csv
			rm -f "$tmp"
			if [ "$run" = modes ]; then
				"$BIN" --seconds 1.5 --warmup 0.3 --pool-size 2048 --rows 20000 --huge-pages off --threads "$THREADS" --modes "$order" \
					--workloads "$WORKLOADS" --drain-delay-ns "$d" --csv "$tmp" >>"$OUT/runs.txt" 2>&1
				sed "s/^/$r,$d,/" "$tmp" >>"$CSV"
			else
				"$BIN" --seconds 1.5 --warmup 0.3 --pool-size 2048 --rows 20000 --huge-pages off --threads "$THREADS" --modes mcsi --variant dbxn \
					--workloads "$WORKLOADS" --drain-delay-ns "$d" --csv "$tmp" >>"$OUT/runs.txt" 2>&1
				sed "s/^mcsi,/$r,$d,mcsi-dbxn,/" "$tmp" >>"$CSV"
			fi
			rm -f "$tmp"
		done
	done
done
python3 "$ROOT/bench/tools/modes_table.py" "$CSV" >"$OUT/table.md"
cat "$OUT/table.md"

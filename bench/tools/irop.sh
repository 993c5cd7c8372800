#!/bin/bash
# irop.sh BASE_BENCH BRANCH_BENCH ["MODES"] ["WORKLOADS"]: instructions per
# committed transaction of the engine benchmark (one thread) under
# callgrind, for two builds of nvm_engine_bench.  Only the worker's
# instructions are collected (--toggle-collect=worker_main: no pool set-up,
# no loading), and they are divided by the worker's calls of nvm_txn_commit
# (bench/tools/callgrind_calls.py), not by the benchmark's own count, which
# under callgrind's one-thread-at-a-time scheduling can start late.
# MODES default "mcsi n2db", WORKLOADS "micro ycsb-c ycsb-a".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MODES=${3:-mcsi n2db}
WORKLOADS=${4:-micro ycsb-c ycsb-a}
TMP=$(mktemp -d)
POOL=/dev/shm/irop-$$.pool
echo "build,mode,workload,instructions,commits,instructions_per_commit"
for w in $WORKLOADS; do
	for m in $MODES; do
		for v in base branch; do
			if [ $v = base ]; then b=$1; else b=$2; fi
			rm -f "$TMP/cg.out" "$POOL"
			valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" \
				--toggle-collect=worker_main --collect-atstart=no "$b" \
				--pool "$POOL" --pool-size 512 --seconds 2 --warmup 0 \
				--threads 1 --modes "$m" --workloads "$w" --rows 2000 >/dev/null 2>&1
			rm -f "$POOL"
			python3 "$HERE/callgrind_calls.py" --label "$v,$m,$w" "$TMP/cg.out" nvm_txn_commit
		done
	done
done
rm -rf "$TMP"

#!/bin/bash
# irop.sh BASE_BENCH BRANCH_BENCH: instructions per operation of the engine
# benchmark (one thread) under callgrind, for two builds of nvm_engine_bench.
# The benchmark runs for a fixed time, so each configuration runs for 1 s and
# for 4 s and the difference of instructions over the difference of
# operations is reported: set-up (pool creation, loading the rows) cancels.
set -u
run() {	# BENCH MODE WORKLOAD SECONDS -> "instructions operations"
	rm -f "$TMP/p.csv" "$TMP/cg.out" "$POOL"
	valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$1" \
		--pool "$POOL" --pool-size 512 --seconds "$4" --warmup 0 \
		--threads 1 --modes "$2" --workloads "$3" --rows 1000 --csv "$TMP/p.csv" \
		>/dev/null 2>&1
	rm -f "$POOL"
	echo "$(grep -E '^(summary|totals):' "$TMP/cg.out" | head -1 | awk '{print $2}')" \
		"$(grep "^$2," "$TMP/p.csv" | tail -1 | cut -d, -f6)"
}
TMP=$(mktemp -d)
POOL=/dev/shm/irop-$$.pool
for w in ycsb-c micro; do
	for m in mcsi n2db; do
		for v in base branch; do
			if [ $v = base ]; then b=$1; else b=$2; fi
			read -r i1 o1 <<<"$(run "$b" $m $w 1)"
			read -r i4 o4 <<<"$(run "$b" $m $w 4)"
			echo "$v $m $w marginal Ir/op = $(( (i4 - i1) / (o4 - o1) ))  ops $o1 $o4"
		done
	done
done
rm -rf "$TMP"

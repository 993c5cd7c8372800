#!/bin/bash
# hugepages-ab.sh BENCH WORKLOAD ROWS PAIRS: the engine benchmark with the pool
# mapped in small pages (--huge-pages off) and in huge pages (on), interleaved,
# one binary; POOLMB sets the pool's size (default 512). Prints one CSV line a run.
B=$1; W=$2; ROWS=$3; PAIRS=$4
P=${POOL:-/dev/shm/nvm-hugepages-ab.pool}
CSV=$(mktemp)
for r in $(seq 1 "$PAIRS"); do
  for v in off on; do
    rm -f "$P" "$CSV"
    "$B" --pool "$P" --pool-size "${POOLMB:-512}" --seconds 3 --warmup 1 --threads 1 --modes mcsi \
      --workloads "$W" --rows "$ROWS" --huge-pages $v --csv "$CSV" >/dev/null 2>&1
    echo "$W $v $(tail -1 "$CSV")"
  done
done
rm -f "$P" "$CSV"

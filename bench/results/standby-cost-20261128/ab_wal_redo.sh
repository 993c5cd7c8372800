# bench/results/standby-cost-20261128/ab_wal_redo.sh
#   The A/B of the README here, as last run: one cluster, three interleaved
#   rounds of 10 s single-row UPDATEs (WL=insert for INSERTs) at
#   wal_level = replica with nvm.wal_redo off and on, and at minimal.  The
#   first table of the README ran a build that read NVM_NOWAKE (no wake of
#   the WAL writer at all) in place of the minimal column; that switch is
#   not in the code.
set -e
B=/usr/lib/postgresql/15/bin
W=/var/tmp/ab; rm -rf $W; mkdir -p $W; chown postgres $W
rm -f /dev/shm/ab.pool
runuser -u postgres -- $B/initdb -D $W/d >/dev/null 2>&1
cat >> $W/d/postgresql.conf <<EOC
port=5482
unix_socket_directories='$W'
shared_preload_libraries='nvmam'
nvm.pool_path='/dev/shm/ab.pool'
default_table_access_method=nvm
autovacuum=off
shared_buffers='256MB'
max_wal_size='4GB'
EOC
runuser -u postgres -- $B/pg_ctl -D $W/d -l $W/log -w start >/dev/null
runuser -u postgres -- $B/psql -h $W -p 5482 -d postgres -qc "CREATE EXTENSION nvmam" -v rows=10000 -f ./bench/workloads/rows_schema.sql >/dev/null 2>&1
runuser -u postgres -- $B/pg_ctl -D $W/d -w stop >/dev/null
for r in 1 2 3; do
 for cfg in "wal_level=replica nvm.wal_redo=off" "wal_level=replica nvm.wal_redo=on" "wal_level=minimal max_wal_senders=0"; do
  opts=""; nw=""; for c in $cfg; do [ $c = NOWAKE ] && nw=1 && continue; opts="$opts -c $c"; done
  NVM_NOWAKE=$nw; [ -z "$nw" ] && unset NVM_NOWAKE || export NVM_NOWAKE
  runuser -u postgres --preserve-environment -- $B/pg_ctl -D $W/d -l $W/log -o "$opts" -w start >/dev/null
  t=$(runuser -u postgres -- $B/pgbench -n -h $W -p 5482 -c 2 -j 2 -T 10 -D rows=10000 -f ./bench/workloads/${WL:-update}.sql postgres | sed -n 's/^tps = \([0-9]*\).*/\1/p')
  echo "$r $cfg $t"
  runuser -u postgres -- $B/pg_ctl -D $W/d -w stop >/dev/null
 done
done

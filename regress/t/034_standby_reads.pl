# regress/t/034_standby_reads.pl
#	  Every read of a hot standby is exact while replay runs.  Under a
#	  transfer load on the primary (two accounts updated a transaction, and
#	  an item inserted into a log table and one deleted), readers on a
#	  standby (two sessions) and on a cascading standby (one) read as fast
#	  as they can, through commits of 10 MB (logged in parts) and three
#	  crashes of the primary (kill -9 of every process), and check every
#	  read: in one snapshot, the accounts by a sequential scan and through
#	  their primary key hold every row and the total each time, and the
#	  sequential and index scans of the items and of the large table
#	  return the same rows (one read in five also reads the accounts by a
#	  parallel sequential scan, by TID ranges and by TABLESAMPLE BERNOULLI
#	  (100): every row each way); and a read alone in its statement holds
#	  every row and the total.  After each crash, before anything on the primary
#	  touches the tables again, the standbys' index and sequential scans
#	  agree: the primary puts back the index entries a crash lost at its
#	  start, and in its WAL they come before the rows it logs again (read
#	  with pg_walinspect).  In the end both standbys hold the primary's
#	  rows.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmBackup;
use NvmStandby;
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $ROWS = 10000;
my $BIG = 8000;
my $ROUND_SECONDS = 16;

my ($primary, $primary_pool) = nvm_node('primary', init => { allows_streaming => 1 });
# nothing in the load takes an xid, so nothing wakes the WAL writer: with
# the redo flusher off, seconds of WAL wait in its buffers for a crash
$primary->append_conf('postgresql.conf', qq{
wal_writer_delay = '10s'
wal_buffers = '16MB'
wal_keep_size = '512MB'
max_wal_senders = 10
});
$primary->start;
nvm_accounts_create($primary, $ROWS);
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
# as a user's table of balances: the updates change no indexed column, so
# the primary reuses the numbers of the versions it collects
$primary->safe_psql('postgres', qq{
	DROP INDEX accounts_balance;
	CREATE TABLE items (id bigint PRIMARY KEY, owner int NOT NULL, payload text) USING nvm;
	INSERT INTO items SELECT g, g, md5(g::text) FROM generate_series(1, 300) g;
	CREATE TABLE big (id int PRIMARY KEY, v int NOT NULL, pad text) USING nvm;
	INSERT INTO big SELECT g, CASE WHEN g % 2 = 0 THEN 1 ELSE -1 END, repeat(md5(g::text), 40)
	  FROM generate_series(1, $BIG) g;
});

my ($standby, $standby_pool) = nvm_standby_from_cold_copy($primary, $primary_pool, 'standby');
my ($cascade) = nvm_standby_from_cold_copy($standby, $standby_pool, 'cascade');
is(nvm_pool_state($standby), 'standby', 'the standby replays into its own pool');
is(nvm_pool_state($cascade), 'standby', 'the cascading standby replays into its own pool');

my %tables = (items => 'id:id % 1000', big => 'id:v');

# the readers' index reads are index scans
my $plans = $standby->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM accounts WHERE id > -2147483648;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE id > '-9223372036854775808'::int8;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM big WHERE id > '-9223372036854775808'::int8;});
like($plans, qr/Index Scan using accounts_pkey.*Index Scan using items_pkey.*Index Scan using big_pkey/s,
	'the readers\' index reads are index scans');
$plans = $standby->safe_psql('postgres', q{
	SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
	SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
	SET max_parallel_workers_per_gather = 2;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM accounts;
	SET max_parallel_workers_per_gather = 0;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM accounts WHERE ctid >= '(30,1)';
	EXPLAIN (COSTS OFF) SELECT count(*) FROM accounts TABLESAMPLE BERNOULLI (100);});
like($plans, qr/Parallel Seq Scan on accounts.*Tid Range Scan on accounts.*Sample Scan on accounts/s,
	'the readers\' other reads are parallel, TID range and sample scans');

# index_agrees NODE NAME: the node's index and sequential scans of items and
# accounts return the same rows, and every account is there
sub index_agrees
{
	my ($node, $name) = @_;
	my $d = nvm_scan_digests($node, 'items', 'id', "id || ':' || payload");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans of items agree");
	$d = nvm_scan_digests($node, 'accounts', 'id', "id || ':' || balance");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans of accounts agree");
	like($d->{seq}, qr/^$ROWS\|/, "$name: every account is there");
	return;
}

# kinds BAD...: how many of the bad reads missed rows in a sequential scan
# of accounts (or in the statement alone), and how many had index and
# sequential scans disagree
sub kinds
{
	my ($short, $disagree, $more) = (0, 0, 0);
	foreach my $line (@_)
	{
		if ($line =~ /^bad-more/)
		{
			$more++;
			next;
		}
		my ($sc, $ss, $kc, $ks, $rc, $rs, @t) = (split / /, $line)[1 .. 14];
		$short++ if $sc != $ROWS || $ss != $ROWS * 1000 || $rc != $ROWS || $rs != $ROWS * 1000;
		$disagree++ if $sc != $kc || $ss != $ks || $t[0] != $t[2] || $t[1] != $t[3]
		  || $t[4] != $t[6] || $t[5] != $t[7];
	}
	return "$short with rows missing from a sequential scan, $disagree with index and sequential scans disagreeing, "
	  . "$more with rows missing from a parallel, TID range or sample scan";
}

my ($all_reads, $all_bad) = (0, 0);
for my $round (1 .. 3)
{
	my $readers = nvm_readers_start($standby, 2, $ROUND_SECONDS, $ROWS, \%tables);
	my $cascade_readers = nvm_readers_start($cascade, 1, $ROUND_SECONDS, $ROWS, \%tables);
	my $load = nvm_mixed_load_start($primary, $ROWS, 60, 2, 0);
	sleep 1;
	# a commit of 10 MB of rows, logged in parts among the load's commits
	$primary->safe_psql('postgres', 'UPDATE big SET v = -v');
	# rounds 1 and 3: COMMIT records wait for the WAL writer, so the crash
	# loses seconds of them (and the index entries of their commits); round
	# 2: the redo flusher streams them, and the crash loses the last few
	if ($round != 2)
	{
		$primary->safe_psql('postgres', q{ALTER SYSTEM SET nvm.redo_flusher = off; SELECT pg_reload_conf()});
	}
	sleep 2;
	my $offset = -s $primary->logfile;
	nvm_crash($primary);
	$load->{h}->kill_kill;
	$primary->start;
	$primary->safe_psql('postgres', q{ALTER SYSTEM RESET nvm.redo_flusher; SELECT pg_reload_conf()});

	# at its start the primary logs again what the crash may have lost; then
	# the standbys catch up, and before anything touches the primary's
	# tables, their indexes agree with their rows
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	usleep(100_000)
	  while time < $deadline
	  && !$primary->log_contains(qr/logged \d+ rows of \d+ nvm tables again for physical standbys/, $offset);
	ok($primary->log_contains(qr/logged \d+ rows of \d+ nvm tables again for physical standbys/, $offset),
		"round $round: the primary logged the rows of its tables again at its start");
	# in the primary's WAL the index entries put back come before the rows
	# logged again, so that no standby replays a row before its entries
	my $order = $primary->safe_psql('postgres', q{
		WITH r AS (SELECT * FROM pg_get_wal_records_info(
					(SELECT redo_lsn FROM pg_control_checkpoint()), pg_current_wal_flush_lsn())),
			 resync AS (SELECT min(start_lsn) AS at FROM r
						 WHERE resource_manager = 'nvmam' AND record_type = 'RESYNC'),
			 repair AS (SELECT r.start_lsn FROM r
						 WHERE resource_manager = 'Btree' AND record_type LIKE 'INSERT%'
						   AND block_ref ~ ('/' || pg_relation_filenode('items_pkey') || '( |$)'))
		SELECT (SELECT at IS NOT NULL FROM resync)
			|| '|' || (SELECT count(*) FROM repair WHERE start_lsn < (SELECT at FROM resync))
			|| '|' || (SELECT count(*) FROM repair WHERE start_lsn > (SELECT at FROM resync))});
	my ($resynced, $before, $after) = split /\|/, $order;
	my ($inserted) = slurp_file($primary->logfile, $offset) =~ /re-inserted (\d+) index entries of table "items"/;
	note("round $round: $before index entries of items put back before the rows were logged again, $after after");
	is("$resynced|$after", 'true|0',
		"round $round: in the primary's WAL, the index entries put back come before the rows logged again");
	cmp_ok($before, '>=', $inserted // 0,
		"round $round: ... all of them (" . ($inserted // 0) . ' re-inserted)');
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	$standby->wait_for_catchup($cascade, 'replay', $standby->lsn('replay'));
	index_agrees($standby, "round $round, standby, before the primary's tables are touched");
	index_agrees($cascade, "round $round, cascading standby, before the primary's tables are touched");

	my ($reads, @bad) = nvm_readers_finish($readers, "round $round, standby");
	my ($creads, @cbad) = nvm_readers_finish($cascade_readers, "round $round, cascading standby");
	note("round $round: $reads reads on the standby, " . scalar(@bad) . ' bad (' . kinds(@bad) . '); '
		  . "$creads on the cascading standby, " . scalar(@cbad) . ' bad (' . kinds(@cbad) . ')');
	ok($reads > 50, "round $round: the standby's readers read many times ($reads)");
	ok($creads > 20, "round $round: the cascading standby's reader read many times ($creads)");
	is(scalar(@bad), 0, "round $round: every read on the standby was exact")
	  or diag(join("\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)]));
	is(scalar(@cbad), 0, "round $round: every read on the cascading standby was exact")
	  or diag(join("\n", @cbad[0 .. ($#cbad < 9 ? $#cbad : 9)]));
	$all_reads += $reads + $creads;
	$all_bad += @bad + @cbad;
}
note("in all: $all_reads reads, $all_bad bad");
ok($all_reads > 1000, "thousands of reads across the three crashes ($all_reads)");

# in the end both standbys hold the primary's rows
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
$standby->wait_for_catchup($cascade, 'replay', $standby->lsn('replay'));
for my $node ($standby, $cascade)
{
	my $name = $node->name;
	is(nvm_rows_digest($node), nvm_rows_digest($primary), "$name: every account row is the primary's");
	is(nvm_items_digest($node, 'seq'), nvm_items_digest($primary, 'seq'), "$name: every item row is the primary's");
	is($node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM big'), "$BIG|0",
		"$name: the large table holds every row");
	is(nvm_log_crashes($node), '', "$name: no crash in the log");
}
nvm_accounts_check($primary, 'primary', $ROWS);

done_testing();

# regress/t/029_standby_primary_crash.pl
#	  A crash of the primary never makes a standby diverge.  Commits of nvm
#	  rows wait for no WAL flush, so a crash keeps them in the pool while
#	  their COMMIT records, still in WAL buffers, are lost (wal_writer_delay
#	  = 10s and large WAL buffers make sure they are: nothing in the load
#	  takes an xid, so nothing wakes the WAL writer; the standby is stopped
#	  first in two rounds, as the redo flusher flushes COMMIT records while
#	  walsenders run).  The primary, killed under a transfer load
#	  with inserts and deletes, logs the rows of the tables that may have
#	  lost records again before any new work (a resync), and after each
#	  restart and catch-up the standby holds exactly the primary's rows:
#	  count, total, a digest of every row by key; its index and sequential
#	  scans agree.  (The index entries of the last log-free commits, lost
#	  with the WAL, are put back by the primary at its start, before it
#	  logs the rows again; 034_standby_reads.pl checks the standby's index
#	  before anything touches the primary's tables.)  Three rounds.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmBackup;
use NvmStandby;
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $ROWS = 1000;

my ($primary, $primary_pool) = nvm_node('primary', init => { allows_streaming => 1 });
$primary->append_conf('postgresql.conf', qq{
wal_writer_delay = '10s'
wal_buffers = '16MB'
wal_keep_size = '256MB'
});
$primary->start;
nvm_accounts_create($primary, $ROWS);
$primary->safe_psql('postgres', q{
	CREATE TABLE items (id bigint PRIMARY KEY, owner int NOT NULL, payload text) USING nvm;
	INSERT INTO items SELECT g, g, md5(g::text) FROM generate_series(1, 300) g;
	CREATE TABLE quiet (id int PRIMARY KEY) USING nvm;
	INSERT INTO quiet SELECT generate_series(1, 50);
});

# a standby from a cold copy of the primary, with a pool of its own
my ($standby) = nvm_standby_from_cold_copy($primary, $primary_pool, 'standby');

for my $round (1 .. 3)
{
	# new items take no xid: nothing wakes the WAL writer
	my $load = nvm_mixed_load_start($primary, $ROWS, 30, 2, 0);
	nvm_load_wait_running($load);
	# rounds 1 and 3: the standby is down when the primary dies, so the redo
	# flusher, which flushes COMMIT records only while walsenders run, is
	# idle and seconds of records are lost; round 2: it streams, and only
	# what the flusher had not flushed yet is lost
	$standby->stop('fast') if $round != 2;
	sleep 2;
	my $before = $primary->safe_psql('postgres',
		q{SELECT pg_current_wal_insert_lsn() - pg_current_wal_flush_lsn()});
	nvm_crash($primary);
	nvm_load_kill($load);
	ok($before > 0,
		"round $round: WAL was written but not flushed when the primary was killed ($before bytes)")
	  if $round != 2;
	$primary->start;
	$standby->start if $round != 2;

	# the first access to nvm rows logs the marked tables again
	is($primary->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
		"$ROWS|" . ($ROWS * 1000), "round $round: the primary kept the total");
	ok($primary->log_contains(qr/logged \d+ rows of \d+ nvm tables again for physical standbys/),
		"round $round: the primary logged the rows of its tables again");

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	is(nvm_rows_digest($standby), nvm_rows_digest($primary),
		"round $round: every account row on the standby is the primary's");
	is(nvm_items_digest($standby, 'seq'), nvm_items_digest($primary, 'seq'),
		"round $round: every item row on the standby is the primary's");
	# the index entries of the last log-free commits, lost with the WAL,
	# were put back by the primary at its start
	is(nvm_items_digest($standby, 'index'), nvm_items_digest($primary, 'seq'),
		"round $round: the standby's index of items finds every row");
	is($standby->safe_psql('postgres', 'SELECT count(*) FROM quiet'), '50',
		"round $round: a table no transaction wrote is unchanged");
	my $d = nvm_scan_digests($standby, 'items', 'id', "id || ':' || payload");
	is($d->{index}, $d->{seq}, "round $round: the standby's index and sequential scans of items agree");
	$d = nvm_scan_digests($standby, 'accounts', 'id', "id || ':' || balance");
	is($d->{index}, $d->{seq}, "round $round: the standby's index and sequential scans of accounts agree");
}

# after the rounds, the standby goes on replaying normal commits
$primary->safe_psql('postgres', q{UPDATE accounts SET balance = balance + 5 WHERE id = 1;
	UPDATE accounts SET balance = balance - 5 WHERE id = 2;});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is(nvm_rows_digest($standby), nvm_rows_digest($primary), 'after the crashes, commits replay as before');
is(nvm_log_crashes($standby), '', 'no crash in the standby\'s log');

done_testing();

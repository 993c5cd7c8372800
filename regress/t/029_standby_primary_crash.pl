# regress/t/029_standby_primary_crash.pl
#	  A crash of the primary never makes a standby diverge.  Commits of nvm
#	  rows wait for no WAL flush, so a crash keeps them in the pool while
#	  their COMMIT records, still in WAL buffers, are lost (wal_writer_delay
#	  = 10s and large WAL buffers make sure they are: nothing in the load
#	  takes an xid, so nothing wakes the WAL writer).  The primary, killed under a transfer load
#	  with inserts and deletes, logs the rows of the tables that may have
#	  lost records again before any new work (a resync), and after each
#	  restart and catch-up the standby holds exactly the primary's rows:
#	  count, total, a digest of every row by key; its index and sequential
#	  scans agree.  Three rounds.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use File::Copy qw(copy);
use IPC::Run ();
use NvmBackup;
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
$primary->stop('fast');
$primary->backup_fs_cold('cold');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'cold', has_streaming => 1);
my $standby_pool = nvm_pool_path('standby');
copy($primary_pool, $standby_pool) or die "cannot copy the pool: $!";
chmod 0600, $standby_pool;
$standby->append_conf('postgresql.conf', qq{
nvm.pool_path = '$standby_pool'
hot_standby = on
wal_retrieve_retry_interval = '200ms'
});
$primary->start;
$standby->start;

my $script = PostgreSQL::Test::Utils::tempdir() . '/mixed.sql';
open(my $fh, '>', $script) or die "cannot write $script: $!";
print $fh <<"EOS";
\\set a random(1, $ROWS)
\\set b random(1, $ROWS)
\\set amount random(1, 100)
\\set item random(1000, 1000000000000)
BEGIN;
UPDATE accounts SET balance = balance - :amount WHERE id = :a;
UPDATE accounts SET balance = balance + :amount WHERE id = :b;
INSERT INTO items VALUES (:item, :a, md5(:item::text));
DELETE FROM items WHERE id = :item % 400 + 1;
END;
EOS
close $fh;

sub items_digest
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT count(*) || '|' || md5(string_agg(id || ':' || owner || ':' || payload, ',' ORDER BY id))
		  FROM items});
}

for my $round (1 .. 3)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '30', '--max-tries', '1000',
			'-f', $script, '-h', $primary->host, '-p', $primary->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	sleep 3;
	my $before = $primary->safe_psql('postgres',
		q{SELECT pg_current_wal_insert_lsn() - pg_current_wal_flush_lsn()});
	nvm_crash($primary);
	$h->kill_kill;
	ok($before > 0, "round $round: WAL was written but not flushed when the primary was killed ($before bytes)");
	$primary->start;

	# the first access to nvm rows logs the marked tables again
	is($primary->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
		"$ROWS|" . ($ROWS * 1000), "round $round: the primary kept the total");
	ok($primary->log_contains(qr/logged \d+ rows of \d+ nvm tables again for physical standbys/),
		"round $round: the primary logged the rows of its tables again");

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	is(nvm_rows_digest($standby), nvm_rows_digest($primary),
		"round $round: every account row on the standby is the primary's");
	is(items_digest($standby), items_digest($primary),
		"round $round: every item row on the standby is the primary's");
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

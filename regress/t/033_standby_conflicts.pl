# regress/t/033_standby_conflicts.pl
#	  Conflicts between a physical standby's replay and its queries on nvm
#	  tables behave as heap's (max_standby_streaming_delay = 0: replay
#	  cancels at once what it would wait for):
#	   - without hot_standby_feedback, the primary's DELETE and VACUUM remove
#	     the index entries of rows that a standby transaction's snapshot
#	     still sees; replay cancels that transaction (CONFLICT records,
#	     nvm_replay.c) instead of letting it miss rows;
#	   - with hot_standby_feedback, the primary keeps those rows and their
#	     index entries while the standby's snapshot is open (nvm_feedback.c):
#	     the transaction keeps reading them, by index and by sequential
#	     scan, and is not cancelled; once it ends the primary collects them.
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

my ($primary, $primary_pool) = nvm_node('primary', init => { allows_streaming => 1 });
$primary->append_conf('postgresql.conf', qq{
max_wal_senders = 10
wal_keep_size = '64MB'
autovacuum = off
});
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	INSERT INTO t SELECT g, g FROM generate_series(1, 2000) g;});

my ($standby) = nvm_standby_from_cold_copy($primary, $primary_pool, 'standby');
$standby->append_conf('postgresql.conf', qq{
max_standby_streaming_delay = 0
hot_standby_feedback = off
wal_receiver_status_interval = 1
});
$standby->reload;

my $by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) || '|' || sum(v) FROM t WHERE id BETWEEN 1 AND 1000;};
my $by_seq = q{SET enable_indexscan = off; SET enable_bitmapscan = off;
	SELECT count(*) || '|' || sum(v) FROM t WHERE id BETWEEN 1 AND 1000;};
my $full = '1000|500500';

# ask C SQL: runs SQL in client C, returns its output lines and the errors
# that came meanwhile
my $asked = 0;
sub ask
{
	my ($c, $sql) = @_;
	my $mark = 'done' . ++$asked;
	my @lines;
	$c->{err} = '';
	$c->{in} .= "$sql\n\\echo $mark\n";
	my $until = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $until)
	{
		for my $l (nvm_pump_client($c))
		{
			return (join("\n", @lines), $c->{err}) if $l eq $mark;
			push @lines, $l if $l ne '' && $l !~ /^(SET|BEGIN)$/;
		}
		last if $c->{dead};
		usleep(20_000);
	}
	return (join("\n", @lines), $c->{err} || 'no answer');
}

# delete_and_vacuum: the primary deletes the rows the standby's snapshot
# reads by index and VACUUMs them away (index entries included); returns
# once the standby replayed it all.
sub delete_and_vacuum
{
	$primary->safe_psql('postgres', 'DELETE FROM t WHERE id <= 500');
	$primary->safe_psql('postgres', 'VACUUM t');
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	return;
}

# --- without feedback: replay cancels the standby transaction ---------------
my $c = nvm_client_start($standby, {});
ask($c, 'BEGIN ISOLATION LEVEL REPEATABLE READ;');
is((ask($c, $by_index))[0], $full, 'no feedback: the standby transaction reads every row');
delete_and_vacuum();
my ($out, $err) = ask($c, $by_index);
like($err . $out, qr/conflict with recovery/,
	'no feedback: replay of the primary\'s VACUUM cancelled the standby transaction, which would miss rows');
$c->{h}->kill_kill;
is($standby->safe_psql('postgres', $by_index), '500|375250',
	'no feedback: a new standby query sees the rows deleted');

# --- with feedback: the primary keeps what the standby's snapshot sees -------
$primary->safe_psql('postgres', 'INSERT INTO t SELECT g, g FROM generate_series(1, 500) g');
$standby->append_conf('postgresql.conf', "hot_standby_feedback = on\n");
$standby->reload;
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
$c = nvm_client_start($standby, {});
ask($c, 'BEGIN ISOLATION LEVEL REPEATABLE READ;');
is((ask($c, $by_index))[0], $full, 'feedback: the standby transaction reads every row');
my $snap_xmin = (ask($c, 'SELECT backend_xmin FROM pg_stat_activity WHERE pid = pg_backend_pid();'))[0];
ok($snap_xmin =~ /^\d+$/, "feedback: the standby transaction has an xmin ($snap_xmin)");
# the primary has the standby's xmin once its walsender holds one this old
$primary->safe_psql('postgres', 'SELECT txid_current()') for 1 .. 3;
$primary->poll_query_until('postgres', qq{
	SELECT count(*) = 1 FROM pg_stat_replication
	 WHERE backend_xmin IS NOT NULL AND backend_xmin::text::bigint <= $snap_xmin})
  or die 'the standby\'s feedback did not reach the primary';
my $versions_before = $primary->safe_psql('postgres', q{SELECT versions FROM nvm_table_stats('t')});
delete_and_vacuum();
($out, $err) = ask($c, $by_index);
is($err, '', 'feedback: replay of the primary\'s VACUUM did not cancel the standby transaction');
is($out, $full, 'feedback: its index scan still finds every row of its snapshot');
is((ask($c, $by_seq))[0], $full, 'feedback: ... and so does its sequential scan');
my $versions_held = $primary->safe_psql('postgres', q{SELECT versions FROM nvm_table_stats('t')});
ok($versions_held > $versions_before,
	"feedback: the primary kept the deleted rows' versions ($versions_before before, $versions_held after VACUUM)");
ask($c, 'COMMIT;');
$c->{in} .= "\\q\n";
nvm_pump_client($c) until $c->{dead};

# once the standby transaction has ended, the primary collects them: the
# primary lowers its horizon to a sample it took with a next xid below the
# standby's xmin (nvm_feedback.c), so a sample is taken first (a VACUUM
# computes a horizon; samples are at least 100 ms apart), and an xid is
# assigned after it, which the standby's xmin then passes
usleep(150_000);
$primary->safe_psql('postgres', 'VACUUM t');
my $xid = $primary->safe_psql('postgres', 'SELECT txid_current()');
$primary->poll_query_until('postgres', qq{
	SELECT count(*) = 1 FROM pg_stat_replication
	 WHERE backend_xmin IS NULL OR backend_xmin::text::bigint > $xid})
  or die 'the standby\'s feedback did not advance';
$primary->safe_psql('postgres', 'VACUUM t');
my $versions_after = $primary->safe_psql('postgres', q{SELECT versions FROM nvm_table_stats('t')});
ok($versions_after < $versions_held,
	"feedback: after the standby transaction the primary collects them ($versions_held, then $versions_after)");
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', $by_index), '500|375250', 'feedback: the standby has the deletion');
is(nvm_log_crashes($standby), '', 'no crash in the standby\'s log');
is(nvm_log_crashes($primary), '', 'no crash in the primary\'s log');

done_testing();

# regress/t/042_apply_waits.pl
#	  A logical replication apply worker that must update a row of an nvm
#	  table which a local transaction of the subscriber is deleting waits
#	  for that transaction, asleep in the lock manager, as on heap: the
#	  local transaction has no xid (an nvm delete takes an xid stand-in,
#	  src/pg/xact/nvm_standin.c), and the apply worker's own wait
#	  (XactLockTableWait of what SnapshotDirty reports) would return at
#	  once and retry, busy, until the local transaction ended.  After the
#	  local transaction rolls back, the update is applied.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my ($pub) = nvm_node('publisher');
$pub->append_conf('postgresql.conf', qq{
wal_level = logical
max_wal_senders = 4
max_replication_slots = 4
});
$pub->start;
my ($sub) = nvm_node('subscriber');
$sub->append_conf('postgresql.conf', qq{
wal_retrieve_retry_interval = '200ms'
});
$sub->start;

my $schema = q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v text) USING nvm;
};
$pub->safe_psql('postgres', $schema . q{
	INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 10) g;
	CREATE PUBLICATION p FOR TABLE t;
});
$sub->safe_psql('postgres', $schema);
$sub->safe_psql('postgres', sprintf(
	q{CREATE SUBSCRIPTION s CONNECTION '%s dbname=postgres' PUBLICATION p}, $pub->connstr));
$sub->wait_for_subscription_sync;
is($sub->safe_psql('postgres', 'SELECT count(*) FROM t'), '10', 'the subscriber has the rows');

# a local transaction of the subscriber deletes row 7 and stays open
my $local = nvm_client_start($sub, { in => q{
BEGIN;
DELETE FROM t WHERE id = 7;
SELECT 'deleted ' || (pg_current_xact_id_if_assigned() IS NULL);
} });
my $said = '';
for (my $i = 0; $i < 300 && $said !~ /deleted/; $i++)
{
	$said .= join("\n", nvm_pump_client($local));
	usleep(100_000);
}
like($said, qr/deleted t/, 'the local delete runs without an xid');

# the publisher updates row 7: the apply worker meets the local delete
$pub->safe_psql('postgres', q{UPDATE t SET v = 'updated' WHERE id = 7});

# its wait, sampled: asleep on the stand-in's lock, again and again (the
# worker's backend type is "logical replication apply worker" from 17 on)
my $apply_wait = q{SELECT coalesce(wait_event_type || ':' || wait_event, 'running')
	FROM pg_stat_activity
	WHERE backend_type IN ('logical replication worker', 'logical replication apply worker')};
my ($asleep, $samples) = (0, 0);
for (my $i = 0; $i < 200 && $asleep < 5; $i++)
{
	my $w = $sub->safe_psql('postgres', $apply_wait);
	$samples++;
	$asleep = $w eq 'Lock:spectoken' ? $asleep + 1 : 0;
	usleep(50_000);
}
is($asleep, 5, "the apply worker sleeps on the local transaction's xid stand-in ($samples samples)");
is($sub->safe_psql('postgres', q{SELECT v FROM t WHERE id = 7}), 'v7',
	'the update is not applied while the local delete is open');

# the local transaction rolls back: the update goes through
$local->{in} .= "ROLLBACK;\n\\q\n";
for (my $i = 0; $i < 300 && !$local->{dead}; $i++)
{
	nvm_pump_client($local);
	usleep(100_000);
}
$pub->wait_for_catchup('s');
is($sub->safe_psql('postgres', q{SELECT v FROM t WHERE id = 7}), 'updated',
	'after the local rollback the update is applied');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM t'), '10', '... and every row is there');

done_testing();

# regress/t/041_logical_replication.pl
#	  Logical replication of nvm tables to a second and a third cluster on
#	  loopback: a publication of nvm tables, one subscriber whose tables are
#	  heap tables and one whose tables are nvm tables.  A transfer load
#	  (pgbench: money moved between accounts, items inserted with INSERT
#	  ... ON CONFLICT and deleted, now and then a wide value that is
#	  toasted) runs while the subscriptions make their initial table
#	  synchronisation (each copy reads by its slot's snapshot, whose xmin can
#	  lie above its xmax under load) and goes on while they stream; after
#	  catching up, both subscribers hold exactly the publisher's rows.  Then
#	  the publisher (synchronous_commit = off) is killed under the load
#	  (every process SIGKILLed at once) and restarted, the load goes on, and
#	  after catching up all three are equal again, row for row: no
#	  transaction the publisher kept is missing downstream, none it lost is
#	  there.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IPC::Run ();
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $ACCOUNTS = 1000;
my $BALANCE = 1000;

my ($pub) = nvm_node('publisher');
$pub->append_conf('postgresql.conf', qq{
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
synchronous_commit = off
restart_after_crash = on
});
$pub->start;

my %sub;
for my $am (qw(heap nvm))
{
	($sub{$am}) = nvm_node("subscriber_$am");
	$sub{$am}->append_conf('postgresql.conf', qq{
wal_retrieve_retry_interval = '200ms'
max_logical_replication_workers = 6
max_sync_workers_per_subscription = 2
});
	$sub{$am}->start;
}

my $schema = q{
	CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, note text) USING %AM%;
	CREATE TABLE items (id int PRIMARY KEY, owner int NOT NULL, payload text) USING %AM%;
};
$pub->safe_psql('postgres', "CREATE EXTENSION nvmam;" . ($schema =~ s/%AM%/nvm/gr) . qq{
	INSERT INTO accounts SELECT g, $BALANCE, CASE WHEN g % 50 = 0 THEN
		(SELECT string_agg(md5(g::text || h::text), '') FROM generate_series(1, 100) h) END
	  FROM generate_series(1, $ACCOUNTS) g;
	INSERT INTO items SELECT g, g % $ACCOUNTS + 1, 'p' || g FROM generate_series(1, 500) g;
	CREATE PUBLICATION pub FOR TABLE accounts, items;
});
for my $am (qw(heap nvm))
{
	$sub{$am}->safe_psql('postgres', "CREATE EXTENSION nvmam;" . ($schema =~ s/%AM%/$am/gr));
}

# The transfer load.  Two updates of accounts in id order (no deadlocks),
# an upsert and a delete of items, and in one transaction of ten a new
# wide note (incompressible: stored out of line).
my $script = PostgreSQL::Test::Utils::tempdir() . "/transfer.sql";
PostgreSQL::Test::Utils::append_to_file($script, qq{
\\set a random(1, $ACCOUNTS)
\\set b random(1, $ACCOUNTS)
\\set d random(1, 100)
\\set i random(1, 2000)
\\set j random(1, 2000)
BEGIN;
UPDATE accounts SET balance = balance - :d WHERE id = least(:a, :b) AND :a <> :b;
UPDATE accounts SET balance = balance + :d WHERE id = greatest(:a, :b) AND :a <> :b;
INSERT INTO items VALUES (:i, :a, 'p' || :d) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, payload = items.payload || 'u';
DELETE FROM items WHERE id = :j;
\\if :d <= 10
UPDATE accounts SET note = (SELECT string_agg(md5(h::text || :d), '') FROM generate_series(1, 100) h) WHERE id = :b;
\\endif
COMMIT;
});

# load_start SECONDS: pgbench with 4 clients in the background
sub load_start
{
	my ($seconds) = @_;
	my %l = (out => '', err => '');
	$l{h} = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '4', '-T', $seconds, '--max-tries', '100',
			'-f', $script, $pub->connstr('postgres')
		],
		'>', \$l{out}, '2>', \$l{err});
	return \%l;
}

# digest NODE: the rows of both tables, and the sum of the balances
sub digest
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT (SELECT count(*) || ' ' || sum(balance) || ' ' ||
			md5(string_agg(id || ':' || balance || ':' || coalesce(md5(note), '-'), ',' ORDER BY id))
			FROM accounts) || ' / ' ||
		  (SELECT count(*) || ' ' ||
			md5(string_agg(id || ':' || owner || ':' || payload, ',' ORDER BY id)) FROM items)});
}

# compare WHAT: waits until both subscribers have caught up, then compares
sub compare
{
	my ($what) = @_;
	for my $am (qw(heap nvm))
	{
		$pub->wait_for_catchup("sub_$am");
	}
	my $want = digest($pub);
	like($want, qr/^$ACCOUNTS \Q${\($ACCOUNTS * $BALANCE)}\E /, "$what: the transfers kept the total");
	for my $am (qw(heap nvm))
	{
		is(digest($sub{$am}), $want, "$what: the subscriber with $am tables has the publisher's rows");
	}
	return;
}

# --- initial synchronisation under load, then streaming under load -------------
# The subscriptions are created, and copy the tables, while the load writes
# them: each copy must hold exactly what its slot's stream leaves out.  The
# load runs until both are synchronised, and is then stopped.
my $next_xid = q{SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint};
my $load = load_start(600);
sleep 1;
my $xid_before = $pub->safe_psql('postgres', $next_xid);
for my $am (qw(heap nvm))
{
	$sub{$am}->safe_psql('postgres', sprintf(
		q{CREATE SUBSCRIPTION sub_%s CONNECTION '%s dbname=postgres' PUBLICATION pub},
		$am, $pub->connstr));
}
for my $am (qw(heap nvm))
{
	$sub{$am}->wait_for_subscription_sync;
}
ok($load->{h}->pumpable, 'the load still ran when the tables were synchronised');
cmp_ok($pub->safe_psql('postgres', $next_xid) - $xid_before, '>=', 100,
	'the load wrote while the subscriptions copied the tables');
$load->{h}->kill_kill;
# the killed clients' sessions end (a transaction not yet committed rolls back)
$pub->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'pgbench'})
  or die 'the load\'s sessions did not end';
compare('initial synchronisation');
$load = load_start(8);
$load->{h}->finish;
like($load->{out}, qr/number of transactions actually processed: [1-9]/,
	'the load ran while the subscriptions streamed');
compare('streaming under load');

# --- the publisher killed under load --------------------------------------------
for my $round (1 .. 2)
{
	$load = load_start(20);
	sleep 3;
	nvm_crash($pub);
	$load->{h}->finish;
	diag("crash $round: pgbench said: " . join(' | ', $load->{err} =~ /^(.*(?:processed|terminated|aborted|lost).*)$/mg));
	$pub->start;
	# the load goes on after the restart
	$load = load_start(3);
	$load->{h}->finish;
	like($load->{out}, qr/number of transactions actually processed: [1-9]/,
		"crash $round: the load goes on after the restart");
	compare("publisher killed under load, round $round");
}

my $crashes = join("\n", grep { $_ ne '' } map { nvm_log_crashes($_) } ($sub{heap}, $sub{nvm}));
is($crashes, '', 'no subscriber process crashed');

$_->stop for ($sub{heap}, $sub{nvm}, $pub);
done_testing();

# regress/t/019_mode_conversion.pl
#	  Changing nvm.concurrency_control converts the pool at the next start,
#	  from MCSI through every other mode and back.  Each start follows a
#	  crash with a transaction in flight (an insert and an update of every
#	  row); after it the log says the pool was converted, nvm_pool_stats()
#	  reports the new mode, every row committed in every earlier mode is
#	  there, with every committed update and none of the transaction in
#	  flight, through the index as through a sequential scan, and the new
#	  mode writes.  A prepared transaction that wrote nvm rows holds the
#	  conversion back (a WARNING) until it is committed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use NvmTest;

my ($node) = nvm_node('convert');
$node->append_conf('postgresql.conf',
	"max_prepared_transactions = 2\nnvm.concurrency_control = 'mcsi'\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE t (id int PRIMARY KEY, mode text NOT NULL, n int NOT NULL DEFAULT 0) USING nvm;
});

my %count;			# committed rows per mode they were written in
my $rows = 0;
my $sum_n = 0;		# every row's n: the number of updates since its insert
my $from = 'mcsi';

# check_rows WHEN: the table holds exactly the committed rows
sub check_rows
{
	my ($when) = @_;
	my $expect = join ',', map { "$_:$count{$_}" } sort keys %count;
	is( $node->safe_psql('postgres',
			q{SELECT string_agg(mode || ':' || c, ',' ORDER BY mode)
			  FROM (SELECT mode, count(*) AS c FROM t GROUP BY mode) s}),
		$expect, "$when: every committed row of every mode, none in flight");
	is($node->safe_psql('postgres', 'SELECT sum(n) FROM t'),
		$sum_n, "$when: every committed update, none in flight");
	my $d = nvm_scan_digests($node, 't', 'id', "id || ':' || mode || ':' || n");
	is($d->{index}, $d->{seq}, "$when: the index and a sequential scan agree");
	like($d->{seq}, qr/^$rows\|/, "$when: $rows rows");
	return;
}

# pool_mode: the mode the pool runs in
sub pool_mode
{
	return $node->safe_psql('postgres', 'SELECT concurrency_control FROM nvm_pool_stats()');
}

foreach my $to (qw(n2db pisces pomvcc mcsi))
{
	my $first = $rows + 1;
	my $last = $rows + 100;
	$node->safe_psql('postgres', qq{
		INSERT INTO t (id, mode) SELECT g, '$from' FROM generate_series($first, $last) g;
		UPDATE t SET n = n + 1;
	});
	$count{$from} += 100;
	$rows += 100;
	$sum_n += $rows;

	# a transaction in flight at the crash
	my $c = nvm_client_start($node, {});
	$c->{in} .= "BEGIN;\n"
	  . "INSERT INTO t (id, mode) SELECT g, 'lost' FROM generate_series(1000001, 1000050) g;\n"
	  . "UPDATE t SET n = n + 1000;\n"
	  . "SELECT 'written';\n";
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my $written = 0;
	while (!$written && time < $deadline && !$c->{dead})
	{
		$written = grep { $_ eq 'written' } nvm_pump_client($c);
		usleep(10_000) unless $written;
	}
	ok($written, "$from: a transaction writes and stays open");
	nvm_crash($node);
	$c->{h}->kill_kill;

	$node->append_conf('postgresql.conf', "nvm.concurrency_control = '$to'\n");
	my $offset = -s $node->logfile;
	$node->start;
	ok( $node->log_contains(
			qr/converting nvm pool "[^"]*" from concurrency control $from to $to/, $offset),
		"$from to $to: the start after the crash converts the pool (logged)");
	is(pool_mode(), $to, "$from to $to: the pool runs in $to");
	check_rows("after $from to $to");
	$from = $to;
}

# the last mode writes too
$node->safe_psql('postgres', q{INSERT INTO t (id, mode) VALUES (100001, 'mcsi')});
$count{mcsi}++;
$rows++;

# a pending prepared transaction that wrote nvm rows holds the conversion back
$node->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO t (id, mode) VALUES (100002, 'prepared');
	PREPARE TRANSACTION 'held';
});
$node->append_conf('postgresql.conf', "nvm.concurrency_control = 'n2db'\n");
my $offset = -s $node->logfile;
$node->restart;
ok( $node->log_contains(
		qr/WARNING:  nvm pool "[^"]*" not converted: a prepared transaction that wrote nvm rows is still pending/,
		$offset),
	'a pending prepared transaction holds the conversion back, with a WARNING');
is(pool_mode(), 'mcsi', 'the pool stays in its mode while the prepared transaction is pending');
$node->safe_psql('postgres', q{COMMIT PREPARED 'held'});
$count{prepared} = 1;
$rows++;
check_rows('after COMMIT PREPARED');

$offset = -s $node->logfile;
$node->restart;
ok( $node->log_contains(qr/converting nvm pool "[^"]*" from concurrency control mcsi to n2db/, $offset),
	'once the prepared transaction is committed, the next start converts the pool');
is(pool_mode(), 'n2db', 'the pool runs in n2db');
check_rows('after the held conversion');
nvm_check_indexes($node, 't', 'after every conversion');
is(nvm_log_crashes($node), '', 'no server process crashed');

$node->stop;
done_testing();

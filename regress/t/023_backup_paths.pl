# regress/t/023_backup_paths.pl
#	  The backups of nvm tables doc/backups.md describes, each taken under a
#	  transfer load (the total of the accounts is constant), restored, and
#	  compared: every row, the total, index against sequential scan,
#	  amcheck's heapallindexed.
#	   - pg_dump / pg_restore: the dump taken under load restores to a
#	     consistent state; one taken at rest restores every row; a
#	     parallel dump (--jobs, whose workers import the leader's
#	     snapshot) reads every nvm table at the same moment;
#	   - an atomic snapshot of the data directory and the pool (every
#	     server process frozen while the files are copied, which is what a
#	     file-system snapshot of both at one instant gives), with the pool
#	     inside the data directory and outside it: the copy recovers like a
#	     crash and is consistent; at rest it holds every row;
#	   - a copy of the data directory and the pool made while the server is
#	     stopped: every row.
#	  The copies and the original then go on independently.
use strict;
use warnings;

use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;
use NvmBackup;

my $ROWS = 50_000;

# --- pg_dump / pg_restore -------------------------------------------------------
my ($node, $pool) = nvm_node('dump_source');
$node->start;
nvm_accounts_create($node, $ROWS);
my $dumps = PostgreSQL::Test::Utils::tempdir();
my $load = nvm_transfers_start($node, $ROWS, 4, 4);
nvm_load_wait_running($load);
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dumps/under_load.dump", '-d', $node->connstr('postgres') ],
	'pg_dump under load');
ok(nvm_load_running($load), 'pg_dump ended while the transfers ran');
nvm_transfers_finish($load, 'the transfers during pg_dump');
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dumps/at_rest.dump", '-d', $node->connstr('postgres') ],
	'pg_dump at rest');
my $source_rows = nvm_rows_digest($node);

my ($target) = nvm_node('dump_target');
$target->start;
foreach my $dump ('under_load', 'at_rest')
{
	$target->command_ok(
		[ 'pg_restore', '--clean', '--if-exists', '-d', $target->connstr('postgres'), "$dumps/$dump.dump" ],
		"pg_restore of the dump taken $dump");
	is( $target->safe_psql('postgres', q{
			SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'accounts'}),
		'nvm', "$dump: the restored table is an nvm table");
	nvm_accounts_check($target, "restored from the dump taken $dump", $ROWS);
}
is(nvm_rows_digest($target), $source_rows, 'the dump taken at rest restores every row');

# pg_dump --jobs: every worker imports the leader's snapshot, and reads the
# nvm tables as the leader does; money moves from accounts to reserve, so
# only the sum over both tables is constant
$node->safe_psql('postgres', qq{
	CREATE TABLE reserve (id int PRIMARY KEY, balance bigint NOT NULL) USING nvm;
	INSERT INTO reserve SELECT g, 0 FROM generate_series(1, $ROWS) g;
});
my $sum_both = q{SELECT (SELECT sum(balance) FROM accounts) + (SELECT sum(balance) FROM reserve)};
my $before = $node->safe_psql('postgres', $sum_both);
$load = nvm_transfers_start($node, $ROWS, 4, 5, 'reserve');
nvm_load_wait_running($load);
$node->command_ok(
	[ 'pg_dump', '-Fd', '-j', '2', '-f', "$dumps/parallel", '-d', $node->connstr('postgres') ],
	'pg_dump --jobs 2 under load');
ok(nvm_load_running($load), 'pg_dump --jobs 2 ended while the transfers ran');
nvm_transfers_finish($load, 'the transfers during the parallel dump');
is($node->safe_psql('postgres', $sum_both), $before, 'the source keeps the sum over both tables');
$target->command_ok(
	[ 'pg_restore', '--clean', '--if-exists', '-j', '2', '-d', $target->connstr('postgres'), "$dumps/parallel" ],
	'pg_restore of the parallel dump');
is($target->safe_psql('postgres', $sum_both), $before,
	'the parallel dump read both nvm tables at one moment: the sum over both is kept');
is($target->safe_psql('postgres', 'SELECT count(*) FROM accounts') + 0, $ROWS, 'the parallel dump: every account');
$target->stop;
$node->stop;

# --- atomic snapshots under load and a copy of a stopped server ------------------

# check_copy NAME COPY: the copy recovers, keeps the invariant, and goes on
sub check_copy
{
	my ($name, $copy) = @_;
	$copy->start;
	is(nvm_pool_state($copy), 'attached', "$name: the copy uses its pool");
	nvm_accounts_check($copy, $name, $ROWS);
	$copy->safe_psql('postgres', 'UPDATE accounts SET balance = balance + 3 WHERE id = 10; UPDATE accounts SET balance = balance - 3 WHERE id = 11');
	$copy->restart;
	nvm_accounts_check($copy, "$name, after writes and a restart", $ROWS);
	my $rows = nvm_rows_digest($copy);
	$copy->stop;
	return $rows;
}

# a node made from a copy of a data directory, with nvm.pool_path set
sub copy_node
{
	my ($source, $name, $dir, $pool_path) = @_;
	my $dest = $source->backup_dir . "/$name";
	PostgreSQL::Test::RecursiveCopy::copypath($dir, $dest);
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init_from_backup($source, $name);
	$copy->append_conf('postgresql.conf', "nvm.pool_path = '$pool_path'\n") if $pool_path;
	return $copy;
}

foreach my $inside (1, 0)
{
	my $where = $inside ? 'pool inside the data directory' : 'pool outside the data directory';
	my ($orig, $orig_pool) = nvm_node($inside ? 'snap_inside' : 'snap_outside', pool_in_datadir => $inside);
	$orig->start;
	nvm_accounts_create($orig, $ROWS);

	# under load
	my $tmp = PostgreSQL::Test::Utils::tempdir();
	my %pairs = ($orig->data_dir => "$tmp/data");
	my $copied_pool = $inside ? undef : "$orig_pool.snapshot";
	if (!$inside)
	{
		$pairs{$orig_pool} = $copied_pool;
		push @NvmTest::extra_files, $copied_pool;
	}
	$load = nvm_transfers_start($orig, $ROWS, 4, 4);
	nvm_load_wait_running($load);
	nvm_freeze_and_copy($orig, %pairs);
	nvm_transfers_finish($load, "$where: the transfers during the snapshot");
	my $snap = copy_node($orig, ($inside ? 'in' : 'out') . '_under_load', "$tmp/data", $copied_pool);
	check_copy("$where: atomic snapshot under load", $snap);

	# at rest: every row
	my $rows = nvm_rows_digest($orig);
	$tmp = PostgreSQL::Test::Utils::tempdir();
	%pairs = ($orig->data_dir => "$tmp/data");
	$pairs{$orig_pool} = "$copied_pool.rest" if !$inside;
	push @NvmTest::extra_files, "$copied_pool.rest" if !$inside;
	nvm_freeze_and_copy($orig, %pairs);
	$snap = copy_node($orig, ($inside ? 'in' : 'out') . '_at_rest', "$tmp/data",
		$inside ? undef : "$copied_pool.rest");
	$snap->start;
	is(nvm_rows_digest($snap), $rows, "$where: an atomic snapshot at rest holds every row");
	$snap->stop;

	# a copy made while the server is stopped
	$orig->stop;
	$tmp = PostgreSQL::Test::Utils::tempdir();
	PostgreSQL::Test::RecursiveCopy::copypath($orig->data_dir, "$tmp/data");
	my $cold_pool;
	if (!$inside)
	{
		$cold_pool = "$orig_pool.cold";
		push @NvmTest::extra_files, $cold_pool;
		copy($orig_pool, $cold_pool) or die;
		chmod 0600, $cold_pool;
	}
	my $cold = copy_node($orig, ($inside ? 'in' : 'out') . '_cold', "$tmp/data", $cold_pool);
	$cold->start;
	is(nvm_rows_digest($cold), $rows, "$where: a copy of the stopped server holds every row");
	$cold->stop;
	check_copy("$where: copy of the stopped server", $cold);

	# the original is independent of its copies
	$orig->start;
	is(nvm_rows_digest($orig), $rows, "$where: the original keeps its rows");
	nvm_accounts_check($orig, "$where: the original", $ROWS);
	$orig->stop;
}
done_testing();

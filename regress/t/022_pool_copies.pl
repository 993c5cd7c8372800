# regress/t/022_pool_copies.pl
#	  A pool kept outside the data directory goes only with the data
#	  directory that last claimed it, at the same point of its history.
#	  With one cluster and its pool, and a transfer load between accounts:
#	   - a stale copy of the pool (taken at an earlier clean stop) is
#	     refused as older than the data directory;
#	   - a copy of the pool taken while the server ran is refused under the
#	     data directory once that was stopped cleanly;
#	   - a copy of the data directory taken while the server ran (an atomic
#	     snapshot of its files only) is refused by the pool after the
#	     original stopped cleanly, and, after the original crashed, is
#	     detached at its first access to nvm rows because its WAL ends
#	     before the WAL the pool depends on; the original then recovers
#	     with every row;
#	   - a copy of the data directory made while the server was stopped
#	     opens the pool with exactly the original's rows, and from then on
#	     the original is refused: one pool, one owner.
#	  Every refusal is a FATAL (or an error) that names the pool, with a
#	  hint, and leaves the pool usable by its owner.
use strict;
use warnings;

use File::Copy qw(copy move);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;
use NvmBackup;

my $ROWS = 20_000;

my ($node, $pool) = nvm_node('owner');
$node->start;
nvm_accounts_create($node, $ROWS);
my $load = nvm_transfers_start($node, $ROWS, 4, 3);
nvm_transfers_finish($load, 'the first transfers');
$node->stop;

my $aside = "$pool.real";
push @NvmTest::extra_files, $aside, "$pool.stale", "$pool.hot";

# refused NAME PATTERN: the node does not start; the FATAL names the pool,
# says PATTERN, and has a hint
sub refused
{
	my ($n, $name, $pattern) = @_;
	my $offset = -s $n->logfile;
	ok(!$n->start(fail_ok => 1), "$name: the server refuses to start");
	my $fatal = nvm_fatal_text($n, $offset);
	like($fatal, qr/\Q$pool\E/, "$name: the FATAL names the pool");
	like($fatal, $pattern, "$name: the FATAL says why");
	like($fatal, qr/HINT:/, "$name: with a hint");
	return;
}

# copy_node NAME SOURCE_DIR: a node made from a copy of a data directory
sub copy_node
{
	my ($name, $dir) = @_;
	my $dest = $node->backup_dir . "/$name";
	PostgreSQL::Test::RecursiveCopy::copypath($dir, $dest,
		filterfn => sub { return $_[0] ne 'postmaster.pid'; });
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init_from_backup($node, $name);
	return $copy;
}

# --- a stale copy of the pool --------------------------------------------------
copy($pool, "$pool.stale") or die;
$node->start;
$node->safe_psql('postgres', 'UPDATE accounts SET balance = balance + 5 WHERE id = 1; UPDATE accounts SET balance = balance - 5 WHERE id = 2');
$node->stop;
move($pool, $aside) or die;
copy("$pool.stale", $pool) or die;
chmod 0600, $pool;
refused($node, 'a copy of the pool from an earlier stop', qr/older than this data directory/);
move($aside, $pool) or die;
$node->start;
is($node->safe_psql('postgres', 'SELECT balance FROM accounts WHERE id = 1') - 0 > 0, 1,
	'with its own pool back, the data directory starts');
nvm_accounts_check($node, 'after the stale pool', $ROWS);

# --- a copy of the pool taken while the server ran ------------------------------
$load = nvm_transfers_start($node, $ROWS, 4, 3);
nvm_load_wait_running($load);
nvm_freeze_and_copy($node, $pool => "$pool.hot");
nvm_transfers_finish($load, 'the transfers while the pool was copied');
$node->stop;
move($pool, $aside) or die;
copy("$pool.hot", $pool) or die;
chmod 0600, $pool;
refused($node, 'a copy of the pool taken while the server ran', qr/was not stopped cleanly, but this data directory was/);
move($aside, $pool) or die;
$node->start;
nvm_accounts_check($node, 'after the hot pool copy', $ROWS);

# --- a copy of the data directory taken while the server ran, original stopped
my $snap = PostgreSQL::Test::Utils::tempdir() . '/snapshot_clean';
$load = nvm_transfers_start($node, $ROWS, 4, 3);
nvm_load_wait_running($load);
nvm_freeze_and_copy($node, $node->data_dir => $snap);
nvm_transfers_finish($load, 'the transfers while the data directory was copied');
$node->stop;
my $hot_copy = copy_node('hot_copy', $snap);
refused($hot_copy, "a running server's data directory with the pool of its stopped original",
	qr/was stopped cleanly, but this data directory was not/);
$node->start;
nvm_accounts_check($node, 'the original after its hot copy was refused', $ROWS);

# --- the same after the original crashed: the WAL check after replay ----------
$snap = PostgreSQL::Test::Utils::tempdir() . '/snapshot_crash';
$load = nvm_transfers_start($node, $ROWS, 4, 4);
nvm_load_wait_running($load);
nvm_freeze_and_copy($node, $node->data_dir => $snap);
# after the copy, commits flush WAL the copy does not have
$node->safe_psql('postgres', q{INSERT INTO ledger VALUES ('after the copy')});
nvm_transfers_finish($load, 'the transfers around the copy');
$node->safe_psql('postgres', 'UPDATE accounts SET balance = balance + 1 WHERE id = 3; UPDATE accounts SET balance = balance - 1 WHERE id = 4');
my $before_crash = nvm_rows_digest($node);
nvm_crash($node);
my $old_copy = copy_node('old_copy', $snap);
$old_copy->start;
{
	my ($rc, $out, $err) = $old_copy->psql('postgres', 'SELECT count(*) FROM accounts');
	isnt($rc, 0, 'a copy older than the crashed pool: reading the nvm table fails');
	like($err, qr/\Q$pool\E/, 'a copy older than the crashed pool: the error names the pool');
	like($err, qr/WAL replay of this data directory ended at/,
		'a copy older than the crashed pool: the error says its WAL ends before the pool');
	like($err, qr/HINT:/, 'a copy older than the crashed pool: with a hint');
	is(nvm_pool_state($old_copy), 'detached', 'a copy older than the crashed pool: detached');
}
$old_copy->restart;
is(nvm_pool_state($old_copy), 'detached', 'a copy older than the crashed pool: still detached after a restart');
$old_copy->stop;
$node->start;
nvm_accounts_check($node, 'the crashed original after its old copy was refused', $ROWS);
is(nvm_rows_digest($node), $before_crash, 'the crashed original: every committed row');

# --- a copy made while the server was stopped: the pool has one owner ----------
$node->stop;
my $owned = nvm_rows_digest_of_stopped();
my $cold = copy_node('cold_copy', $node->data_dir);
$cold->start;
is(nvm_rows_digest($cold), $owned, 'a cold copy opens the pool with exactly the original rows');
nvm_accounts_check($cold, 'the cold copy', $ROWS);
$cold->safe_psql('postgres', 'UPDATE accounts SET balance = balance + 7 WHERE id = 5; UPDATE accounts SET balance = balance - 7 WHERE id = 6');
$cold->stop;
refused($node, 'the original after its cold copy used the pool', qr/was used by another copy of this data directory/);
$cold->start;
is($cold->safe_psql('postgres', 'SELECT balance FROM accounts WHERE id = 5') - 0 > 0, 1,
	'the copy that owns the pool goes on');
$cold->stop;
done_testing();

# the digest the stopped node had (it was stopped right after the check)
sub nvm_rows_digest_of_stopped
{
	$node->start;
	my $d = nvm_rows_digest($node);
	$node->stop;
	return $d;
}

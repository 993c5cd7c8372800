# regress/t/lib/NvmStandby.pm
#	  Helpers of the TAP tests of physical standbys of a cluster with nvm
#	  tables: a standby made from a cold copy (data directory and pool,
#	  copied while the source was stopped cleanly), a transfer load with
#	  inserts and deletes of items run by pgbench in the background, a
#	  digest of every item row, and readers that check every read of a
#	  standby while it replays.
package NvmStandby;

use strict;
use warnings;

use Exporter 'import';
use File::Copy qw(copy);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmBackup;
use NvmTest;

our @EXPORT = qw(nvm_standby_from_cold_copy nvm_mixed_load_start nvm_items_digest
  nvm_readers_start nvm_readers_finish);

# nvm_standby_from_cold_copy SRC SRC_POOL NAME: a hot standby of SRC (a
# primary or a standby) made from a copy of its data directory and pool
# taken while it was stopped cleanly, with a pool of its own; SRC is
# started again, then the standby.  Returns the standby and its pool.
sub nvm_standby_from_cold_copy
{
	my ($src, $src_pool, $name) = @_;
	$src->stop('fast');
	$src->backup_fs_cold("cold_$name");
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($src, "cold_$name", has_streaming => 1);
	my $pool = nvm_pool_path($name);
	copy($src_pool, $pool) or die "cannot copy the pool: $!";
	chmod 0600, $pool;
	$node->append_conf('postgresql.conf', qq{
nvm.pool_path = '$pool'
hot_standby = on
wal_retrieve_retry_interval = '200ms'
});
	$src->start;
	$node->start;
	return ($node, $pool);
}

# nvm_mixed_load_start NODE ROWS SECONDS CLIENTS UPSERT: pgbench in the
# background: each transaction moves money between two of the ROWS
# accounts (the total stays constant), adds an item (with UPSERT, one of
# 20,000 ids, updated when it exists; else a new random bigint id, which
# takes no xid) and deletes one of the first 700.  Returns a handle for
# nvm_transfers_finish (NvmBackup.pm, which runs pgbench).
sub nvm_mixed_load_start
{
	my ($node, $rows, $seconds, $clients, $upsert) = @_;
	my $script = PostgreSQL::Test::Utils::tempdir() . '/mixed.sql';
	my ($set_item, $insert_sql) = $upsert
	  ? ('\set item random(1, 20000)',
		 "INSERT INTO items VALUES (:item + 1000, :a, md5(:item::text)) ON CONFLICT (id) DO UPDATE SET payload = excluded.payload || 'x';")
	  : ('\set item random(1000, 1000000000000)',
		 'INSERT INTO items VALUES (:item, :a, md5(:item::text));');
	open(my $fh, '>', $script) or die "cannot write $script: $!";
	print $fh <<"EOS";
\\set a random(1, $rows)
\\set b random(1, $rows)
\\set amount random(1, 100)
$set_item
BEGIN;
UPDATE accounts SET balance = balance - :amount WHERE id = :a;
UPDATE accounts SET balance = balance + :amount WHERE id = :b;
$insert_sql
DELETE FROM items WHERE id = :item % 700 + 1;
END;
EOS
	close $fh;
	return nvm_pgbench_start($node, $script, $clients, $seconds);
}

# nvm_items_digest NODE [HOW]: "count|md5" of every item row, by id, read
# by a sequential scan (HOW 'seq'), through items' primary key ('index'),
# or as the planner likes (the default).
sub nvm_items_digest
{
	my ($node, $how) = @_;
	my %settings = (
		seq => 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;',
		index => 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;');
	my $set = defined $how ? $settings{$how} : '';
	return $node->safe_psql('postgres', qq{$set
		SELECT count(*) || '|' || md5(string_agg(id || ':' || owner || ':' || payload, ',' ORDER BY id))
		  FROM (SELECT * FROM items WHERE id > 0 OFFSET 0) s});
}

# nvm_readers_start NODE CLIENTS SECONDS ROWS TABLES: readers of NODE (a
# hot standby) that read as fast as they can, CLIENTS sessions of pgbench
# for SECONDS seconds, and check every read:
#   - in one REPEATABLE READ transaction, accounts by a sequential scan and
#     through its primary key: ROWS rows and a total of ROWS * 1,000 both
#     ways; and each table of TABLES (a hash: table => "key column:summed
#     expression", whose sum must stay small) by a sequential scan and
#     through the index on the key column: the same count and sum both ways;
#   - one read in five also reads accounts in the same snapshot by a
#     parallel sequential scan, as two TID range scans (below and from
#     block 30) and as TABLESAMPLE BERNOULLI (100): every row each way;
#   - then accounts again, alone in a statement (READ COMMITTED), in the
#     plan the planner likes.
# A read that breaks a check appends a line "bad <accounts: seq, pkey,
# alone> <each table: seq, index>" (a count and a sum each), or "bad-more
# <parallel> <TID ranges> <sample>", to a file of the handle.  Returns a
# handle for nvm_readers_finish.
sub nvm_readers_start
{
	my ($node, $clients, $seconds, $rows, $tables) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my $script = "$dir/reader.sql";
	my $bad = "$dir/bad_reads";
	my $total = $rows * 1000;
	my ($seq, $index, $cond, $shown) = ('', '', '', '');
	my $t = 0;
	foreach my $table (sort keys %$tables)
	{
		my ($key, $expr) = split /:/, $tables->{$table}, 2;
		$t++;
		$seq .= "SELECT count(*) AS s${t}c, coalesce(sum($expr), 0) AS s${t}s FROM $table \\gset\n";
		$index .= "SELECT count(*) AS i${t}c, coalesce(sum($expr), 0) AS i${t}s FROM $table"
		  . " WHERE $key > '-9223372036854775808'::int8 \\gset\n";
		$cond .= " or :s${t}c != :i${t}c or :s${t}s != :i${t}s";
		$shown .= " :s${t}c :s${t}s :i${t}c :i${t}s";
	}
	open(my $fh, '>', $script) or die "cannot write $script: $!";
	# (pgbench's shell commands are short: the file's name comes from the
	# environment)
	print $fh <<"EOS";
\\set more random(1, 5)
\\set pc $rows
\\set ps $total
\\set tc $rows
\\set ts $total
\\set bc $rows
\\set bs $total
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT count(*) AS sc, coalesce(sum(balance), -1) AS ss FROM accounts \\gset
$seq
SET LOCAL enable_seqscan = off;
SET LOCAL enable_indexscan = on;
SELECT count(*) AS kc, coalesce(sum(balance), -1) AS ks FROM accounts WHERE id > -2147483648 \\gset
$index
\\if :more = 1
SET LOCAL enable_seqscan = on;
SET LOCAL enable_tidscan = on;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT count(*) AS pc, coalesce(sum(balance), -1) AS ps FROM accounts \\gset
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT (SELECT count(*) FROM accounts WHERE ctid < '(30,1)') + (SELECT count(*) FROM accounts WHERE ctid >= '(30,1)') AS tc,
  (SELECT coalesce(sum(balance), 0) FROM accounts WHERE ctid < '(30,1)') + (SELECT coalesce(sum(balance), 0) FROM accounts WHERE ctid >= '(30,1)') AS ts \\gset
SELECT count(*) AS bc, coalesce(sum(balance), -1) AS bs FROM accounts TABLESAMPLE BERNOULLI (100) \\gset
\\endif
COMMIT;
SELECT count(*) AS rc, coalesce(sum(balance), -1) AS rs FROM accounts \\gset
\\if :sc != $rows or :ss != $total or :kc != $rows or :ks != $total or :rc != $rows or :rs != $total$cond
\\shell echo bad :sc :ss :kc :ks :rc :rs$shown >> "\$NVM_BAD_READS"
\\endif
\\if :pc != $rows or :ps != $total or :tc != $rows or :ts != $total or :bc != $rows or :bs != $total
\\shell echo bad-more :pc :ps :tc :ts :bc :bs >> "\$NVM_BAD_READS"
\\endif
EOS
	close $fh;
	my ($out, $err) = ('', '');
	local $ENV{NVM_BAD_READS} = $bad;
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', $clients, '-T', $seconds, '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err, bad => $bad, script => $script };
}

# nvm_readers_finish HANDLE NAME: waits for the readers to end; checks that
# none of them failed (an error ends a pgbench client).  Returns the number
# of reads and the bad ones.
sub nvm_readers_finish
{
	my ($r, $name) = @_;
	$r->{h}->finish;
	my ($reads) = ${ $r->{out} } =~ /number of transactions actually processed: (\d+)/;
	ok(defined $reads && ${ $r->{err} } !~ /aborted|error/i,
		"$name: every reader ran to its end without an error")
	  or diag(${ $r->{out} } . ${ $r->{err} });
	my @bad;
	if (-f $r->{bad})
	{
		@bad = split /\n/, PostgreSQL::Test::Utils::slurp_file($r->{bad});
	}
	return ($reads // 0, @bad);
}

1;

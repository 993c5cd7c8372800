# regress/t/lib/NvmStandby.pm
#	  Helpers of the TAP tests of physical standbys of a cluster with nvm
#	  tables: a standby made from a cold copy (data directory and pool,
#	  copied while the source was stopped cleanly), a transfer load with
#	  inserts and deletes of items run by pgbench in the background, and a
#	  digest of every item row.
package NvmStandby;

use strict;
use warnings;

use Exporter 'import';
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use NvmBackup;
use NvmTest;

our @EXPORT = qw(nvm_standby_from_cold_copy nvm_mixed_load_start nvm_items_digest);

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

1;

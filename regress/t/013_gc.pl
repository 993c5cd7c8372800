# regress/t/013_gc.pl
#	  Garbage collection with a running server:
#	  - autovacuum collects nvm tables: with pruning by updates turned off,
#	    updated and deleted rows count as dead, autovacuum comes, and the
#	    table is left with one version per live row and no dead rows;
#	  - collection under concurrent load loses nothing: pgbench-style
#	    transfers run while VACUUM runs over and over, then the total is
#	    unchanged, index and sequential scans agree, and amcheck is clean;
#	  - collected space survives a crash-restart: after kill -9 the table's
#	    rows, indexes and statistics are as before, and the free lists hand
#	    their numbers out again.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my ($node) = nvm_node('gc');
$node->append_conf('postgresql.conf', q{
autovacuum_naptime = 1
autovacuum_vacuum_threshold = 10
autovacuum_vacuum_scale_factor = 0
autovacuum_vacuum_insert_threshold = -1
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE av (id int PRIMARY KEY, v int) USING nvm WITH (autovacuum_enabled = false);
	INSERT INTO av SELECT g, 0 FROM generate_series(1, 1000) g;
});

# autovacuum
$node->safe_psql('postgres', q{
	SET nvm.prune_on_update = off;
	UPDATE av SET v = v + 1;
	UPDATE av SET v = v + 1;
	DELETE FROM av WHERE id > 900;
});
is($node->safe_psql('postgres', 'SELECT versions, dead_rows FROM nvm_table_stats(\'av\')'),
	'3100|100', 'before autovacuum: three versions per row, four for the 100 deleted rows');
$node->safe_psql('postgres', 'ALTER TABLE av SET (autovacuum_enabled = true)');
ok( $node->poll_query_until('postgres',
		q{SELECT versions = 900 AND dead_rows = 0 AND removed_rows_waiting = 0
		    FROM nvm_table_stats('av')}),
	'autovacuum collects the old versions and the deleted rows');
ok($node->safe_psql('postgres',
		q{SELECT autovacuum_count > 0 FROM pg_stat_user_tables WHERE relname = 'av'}) eq 't',
	'autovacuum ran on the nvm table');
is($node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM av'), '900|1800',
	'the rows are intact');
is($node->safe_psql('postgres', q{SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'av'}),
	'0', 'autovacuum reset the dead-row count');

# collection under load: transfers between accounts while VACUUM loops
$node->safe_psql('postgres', q{
	CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL) USING nvm;
	INSERT INTO acct SELECT g, 1000 FROM generate_series(1, 200) g;
});
my $script = "$PostgreSQL::Test::Utils::tmp_check/transfer.sql";
open(my $fh, '>', $script) or die;
print $fh q{\set a random(1, 200)
\set b random(1, 200)
\set x random(1, 50)
BEGIN ISOLATION LEVEL REPEATABLE READ;
UPDATE acct SET bal = bal - :x WHERE id = :a;
UPDATE acct SET bal = bal + :x WHERE id = :b;
COMMIT;
};
close $fh;
my $vacuums = 0;
my $bg = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-T', '8', '--max-tries=100', '-f', $script,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \my $out, '2>', \my $err);
my $deadline = time() + 8;
while (time() < $deadline)
{
	$node->safe_psql('postgres', 'VACUUM acct');
	$vacuums++;
}
$bg->finish;
like($out, qr/number of transactions actually processed: [1-9]/, 'transfers ran during the VACUUMs');
ok($vacuums > 3, "VACUUM ran $vacuums times during the load");
is($node->safe_psql('postgres', 'SELECT count(*), sum(bal) FROM acct'), '200|200000',
	'the total is unchanged after collection under load');
my $d = nvm_scan_digests($node, 'acct', 'id', "id || ':' || bal");
is($d->{index}, $d->{seq}, 'index and sequential scans agree');
nvm_check_indexes($node, 'acct', 'after collection under load');
nvm_verify_clean($node, 'acct', 'after collection under load');
$node->safe_psql('postgres', 'VACUUM acct');
is($node->safe_psql('postgres', q{SELECT reclaimable_versions, longest_chain <= 2 FROM nvm_table_stats('acct')}),
	'0|t', 'once the load is over, nothing reclaimable is left');
# a transfer that failed after its first update leaves a rolled-back version
# at the head of that row, kept until the row is written again
$node->safe_psql('postgres', 'UPDATE acct SET bal = bal; VACUUM acct');
is($node->safe_psql('postgres', q{SELECT versions FROM nvm_table_stats('acct')}), '200',
	'one version per row after the next write of every row');

# a crash-restart keeps what collection did
my $before = $node->safe_psql('postgres', q{SELECT count(*), sum(v) FROM av});
my $numbers = $node->safe_psql('postgres',
	q{SELECT version_numbers, free_version_numbers FROM nvm_table_stats('av')});
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', q{SELECT count(*), sum(v) FROM av}), $before,
	'rows are the same after a crash-restart');
is($node->safe_psql('postgres',
		q{SELECT version_numbers, free_version_numbers FROM nvm_table_stats('av')}),
	$numbers, 'the free list of version numbers survives the crash');
$node->safe_psql('postgres', 'INSERT INTO av SELECT g, 7 FROM generate_series(2001, 2050) g');
my ($vn, $free) = split /\|/, $numbers;
is($node->safe_psql('postgres',
		q{SELECT version_numbers, free_version_numbers FROM nvm_table_stats('av')}),
	$vn . '|' . ($free - 50), 'new rows take numbers from the free list');
nvm_check_indexes($node, 'av', 'after the crash-restart');
is($node->safe_psql('postgres', 'SELECT count(*) FROM av WHERE v = 7'), '50', 'the new rows are there');
nvm_verify_clean($node, $_, 'after the crash-restart') foreach ('av', 'acct', 'all');

$node->stop;
done_testing();

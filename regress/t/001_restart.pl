# regress/t/001_restart.pl
#	  Committed rows of an nvm table survive a clean restart exactly: counts,
#	  sums, every row through the index and through a sequential scan, and
#	  amcheck finds every row in every index.  Rows written after the
#	  restart get TIDs of their own.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my ($node) = nvm_node('restart');
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL, s text) USING nvm;
	CREATE INDEX t_v ON t (v);
	INSERT INTO t SELECT g, g * 2, md5(g::text) FROM generate_series(1, 10000) g;
	UPDATE t SET v = v + 1, s = s || '+' WHERE id % 10 = 0;
	UPDATE t SET id = id + 100000 WHERE id % 100 = 1;
	DELETE FROM t WHERE id % 7 = 0;
});
# a transaction that rolled back before the restart must stay invisible
$node->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO t SELECT g, -1, 'rolled back' FROM generate_series(50001, 50100) g;
	UPDATE t SET v = -1 WHERE id <= 100;
	ROLLBACK;
});

# The expected table, computed here from the same statements.
my %rows;
for my $g (1 .. 10000)
{
	my ($id, $v) = ($g, $g * 2);
	$v += 1 if $g % 10 == 0;
	$id += 100000 if $g % 100 == 1;
	next if $id % 7 == 0;
	$rows{$id} = $v;
}
my $count = scalar keys %rows;
my $sum = 0;
$sum += $_ for values %rows;

my $relam = $node->safe_psql('postgres',
	"SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 't'");
is($relam, 'nvm', 'the table uses the nvm access method');

sub check_table
{
	my ($when) = @_;
	is( $node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM t'),
		"$count|$sum", "$when: count and sum of v are exact");
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM t WHERE v = -1 OR s = 'rolled back'"),
		'0', "$when: rolled-back changes are absent");
	is( $node->safe_psql('postgres',
			'SELECT count(*) FROM t WHERE id % 100 = 1 AND id <= 10000'),
		'0', "$when: no row under a key it was moved away from");

	my $d = nvm_scan_digests($node, 't', 'id', "id || ':' || v || ':' || s");
	like($d->{seq_plan}, qr/Seq Scan on t/, "$when: sequential plan is a Seq Scan");
	like($d->{index_plan}, qr/Index Scan using t_pkey/, "$when: index plan uses t_pkey");
	is($d->{index}, $d->{seq}, "$when: index scan and sequential scan return the same rows");
	like($d->{seq}, qr/^$count\|/, "$when: sequential scan sees $count rows");

	# the secondary index agrees too
	my $dv = nvm_scan_digests($node, 't', 'v', "id || ':' || v || ':' || s", 'id');
	like($dv->{index_plan}, qr/Index Scan using t_v/, "$when: index plan uses t_v");
	is($dv->{index}, $d->{seq}, "$when: scan through t_v returns the same rows");

	nvm_check_indexes($node, 't', $when);
	return;
}

check_table('before restart');
my $digest_before = nvm_scan_digests($node, 't', 'id', "id || ':' || v || ':' || s")->{seq};

$node->restart;

check_table('after restart');
is(nvm_scan_digests($node, 't', 'id', "id || ':' || v || ':' || s")->{seq},
	$digest_before, 'after restart: the rows are exactly those before it');

# Rows written after the restart: found by their keys, with TIDs distinct
# from every existing row's.
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, g, 'after restart' FROM generate_series(20001, 21000) g;
	UPDATE t SET v = v + 5 WHERE id BETWEEN 2 AND 50;
	UPDATE t SET id = id + 1000 WHERE id BETWEEN 20001 AND 20010;
	DELETE FROM t WHERE id BETWEEN 60 AND 69;
});
for my $g (20001 .. 21000)
{
	my $id = $g <= 20010 ? $g + 1000 : $g;
	$rows{$id} = $g;
}
for my $id (2 .. 50) { $rows{$id} += 5 if exists $rows{$id}; }
delete $rows{$_} for 60 .. 69;
$count = scalar keys %rows;
$sum = 0;
$sum += $_ for values %rows;

is( $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM t WHERE id BETWEEN 20011 AND 21010 AND s = 'after restart'}),
	'1000', 'rows inserted after the restart are found through the primary key');
is( $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM t WHERE id BETWEEN 2 AND 50}),
	scalar(grep { $_ >= 2 && $_ <= 50 } keys %rows),
	'old rows updated after the restart are found once each');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT ctid) FROM t'),
	't', 'every row has a TID of its own');
check_table('after writes following the restart');

# A second restart, this time an immediate stop (no shutdown checkpoint).
$digest_before = nvm_scan_digests($node, 't', 'id', "id || ':' || v || ':' || s")->{seq};
$node->stop('immediate');
$node->start;
check_table('after an immediate stop');
is(nvm_scan_digests($node, 't', 'id', "id || ':' || v || ':' || s")->{seq},
	$digest_before, 'after an immediate stop: the rows are exactly those before it');

# tables created, dropped and truncated before a restart stay so
$node->safe_psql('postgres', q{
	CREATE TABLE t_dropped (id int) USING nvm;
	INSERT INTO t_dropped VALUES (1);
	DROP TABLE t_dropped;
	CREATE TABLE t_truncated (id int PRIMARY KEY) USING nvm;
	INSERT INTO t_truncated SELECT generate_series(1, 100);
	TRUNCATE t_truncated;
	INSERT INTO t_truncated VALUES (7);
	CREATE TABLE t_kept (id int PRIMARY KEY) USING nvm;
	INSERT INTO t_kept SELECT generate_series(1, 100);
	BEGIN;
	DROP TABLE t_kept;
	ROLLBACK;
	BEGIN;
	TRUNCATE t_kept;
	ROLLBACK;
});
$node->restart;
is($node->safe_psql('postgres', 'SELECT array_agg(id) FROM t_truncated'),
	'{7}', 'a truncated table holds only the rows written after TRUNCATE');
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t_kept'),
	'100|5050', 'rolled-back DROP and TRUNCATE kept the rows across a restart');
check_table('after the third restart');

$node->stop;
done_testing();

# regress/t/014_persistence.pl
#	  Temporary and unlogged nvm tables across restarts and crashes, as on
#	  heap: a clean restart keeps an unlogged table's rows; after a crash
#	  (an immediate stop, and a crash-restart after one backend is killed)
#	  the unlogged table is empty and its indexes agree (sequential and
#	  index scans return nothing, new rows are found), the pool storage of a
#	  temporary table that a session had open is gone, and permanent tables
#	  are intact.  Another session's temporary nvm table cannot be read and
#	  is not listed in nvm_tables.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my ($node) = nvm_node('persistence');
# PostgreSQL::Test::Cluster turns this off; the backend crash below needs it
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE p (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	CREATE INDEX p_v ON p (v);
	INSERT INTO p SELECT g, g * 3 FROM generate_series(1, 5000) g;
	UPDATE p SET v = v + 1 WHERE id % 10 = 0;
	DELETE FROM p WHERE id % 7 = 0;
	CREATE UNLOGGED TABLE u (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	CREATE INDEX u_v ON u (v);
});

is( $node->safe_psql('postgres', q{
		SELECT string_agg(c.relname || ':' || a.amname || ':' || c.relpersistence::text, ',' ORDER BY c.relname)
		  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname IN ('p', 'u')}),
	'p:nvm:p,u:nvm:u', 'a permanent and an unlogged nvm table');

my $p_digest = nvm_scan_digests($node, 'p', 'id', "id || ':' || v")->{seq};

# fill_unlogged: rows in u, some updated and deleted; returns the expected digest
sub fill_unlogged
{
	$node->safe_psql('postgres', q{
		INSERT INTO u SELECT g, g FROM generate_series(1, 2000) g;
		UPDATE u SET v = v + 100000 WHERE id % 4 = 0;
		DELETE FROM u WHERE id % 9 = 0;
	});
	my $d = nvm_scan_digests($node, 'u', 'id', "id || ':' || v");
	is($d->{index}, $d->{seq}, 'the unlogged table: index and sequential scans agree');
	like($d->{seq}, qr/^1778\|/, 'the unlogged table holds its rows');
	return $d->{seq};
}

sub pool_tables
{
	return $node->safe_psql('postgres', 'SELECT tables FROM nvm_pool');
}

sub check_permanent
{
	my ($when) = @_;
	my $d = nvm_scan_digests($node, 'p', 'id', "id || ':' || v");
	is($d->{seq}, $p_digest, "$when: the permanent table is intact");
	is($d->{index}, $p_digest, "$when: its index finds every row");
	nvm_check_indexes($node, 'p', "$when: permanent table");
	nvm_verify_clean($node, 'p', "$when: permanent table");
	nvm_verify_clean($node, 'all', $when);
	return;
}

# check_unlogged_empty WHEN: u is empty by every path, and new rows work
sub check_unlogged_empty
{
	my ($when) = @_;
	my $d = nvm_scan_digests($node, 'u', 'id', "id || ':' || v");
	like($d->{seq_plan}, qr/Seq Scan on u/, "$when: sequential plan is a Seq Scan");
	like($d->{index_plan}, qr/Index Scan using u_pkey/, "$when: index plan uses u_pkey");
	is($d->{seq}, '0|', "$when: the unlogged table is empty (sequential scan)");
	is($d->{index}, '0|', "$when: the unlogged table is empty (index scan)");
	my $dv = nvm_scan_digests($node, 'u', 'v', "id || ':' || v", 'id');
	is($dv->{index}, '0|', "$when: the unlogged table's second index is empty");
	is($node->safe_psql('postgres', 'SELECT live_rows, records FROM nvm_tables WHERE relation = \'u\'::regclass'),
		'0|0', "$when: its pool storage is empty");
	nvm_check_indexes($node, 'u', "$when: unlogged table");
	nvm_verify_clean($node, 'u', "$when: unlogged table");
	$node->safe_psql('postgres', 'INSERT INTO u SELECT g, -g FROM generate_series(1, 100) g');
	$d = nvm_scan_digests($node, 'u', 'id', "id || ':' || v");
	like($d->{seq}, qr/^100\|/, "$when: new rows can be written");
	is($d->{index}, $d->{seq}, "$when: and are found through the index");
	$dv = nvm_scan_digests($node, 'u', 'v', "id || ':' || v", 'id');
	is($dv->{index}, $d->{seq}, "$when: and through the second index");
	$node->safe_psql('postgres', 'TRUNCATE u');
	return;
}

# open_temp: a session holding a temporary nvm table with rows and an
# index, left open; returns the session and its pid
sub open_temp
{
	my $tables = pool_tables();
	my $bg = $node->background_psql('postgres', on_error_stop => 1);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	$bg->query_safe(q{
		CREATE TEMP TABLE tt (id int PRIMARY KEY, v text) USING nvm;
		INSERT INTO tt SELECT g, 'temp' || g FROM generate_series(1, 1000) g;
		UPDATE tt SET v = v || '+' WHERE id % 3 = 0;
	});
	is($bg->query_safe('SET enable_seqscan = off; SELECT count(*) FROM tt WHERE id > 0'),
		'1000', 'the session reads its temporary nvm table through the index');
	is(pool_tables(), $tables + 1, 'the temporary table has storage in the pool');
	my $schema = $bg->query_safe(
		"SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'tt'::regclass");
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM $schema.tt");
	like($err, qr/cannot access temporary tables of other sessions/,
		'another session cannot read the temporary nvm table');
	is($node->safe_psql('postgres', "SELECT count(*) FROM nvm_tables WHERE relation::text LIKE '%tt'"),
		'0', 'nvm_tables of another session does not list it');
	return ($bg, $pid);
}

sub close_session
{
	my ($bg) = @_;
	eval { $bg->quit; };
	return;
}

my $base_tables = pool_tables();

# --- a clean restart keeps the unlogged rows -------------------------------
my $u_digest = fill_unlogged();
$node->restart;
my $d = nvm_scan_digests($node, 'u', 'id', "id || ':' || v");
is($d->{seq}, $u_digest, 'after a clean restart: the unlogged rows are kept');
is($d->{index}, $u_digest, 'after a clean restart: the index finds them');
nvm_check_indexes($node, 'u', 'after a clean restart');
check_permanent('after a clean restart');
is(pool_tables(), $base_tables, 'after a clean restart: the pool holds the same tables');

# check_swept WHEN LOG_OFFSET: after an unclean stop, the start-up sweep
# (logged after LOG_OFFSET) dropped the temporary table's storage and
# emptied the unlogged table; the permanent table is intact
sub check_swept
{
	my ($when, $log_offset) = @_;
	ok( $node->log_contains(
			qr/nvm pool: dropped the storage of 1 temporary tables, emptied 1 unlogged tables/,
			$log_offset),
		"$when: the start-up sweep reports the temporary and the unlogged table");
	is(pool_tables(), $base_tables, "$when: the temporary table's storage is gone");
	check_unlogged_empty($when);
	check_permanent($when);
	return;
}

# --- an immediate stop with a temporary table open -------------------------
my ($bg, $pid) = open_temp();
my $log_offset = -s $node->logfile;
$node->stop('immediate');
close_session($bg);
$node->start;
check_swept('after an immediate stop', $log_offset);

# --- a clean restart again: rows written since are kept --------------------
$u_digest = fill_unlogged();
$log_offset = -s $node->logfile;
$node->restart;
is(nvm_scan_digests($node, 'u', 'id', "id || ':' || v")->{index}, $u_digest,
	'after a second clean restart: the unlogged rows are kept');
ok(!$node->log_contains(qr/nvm pool: dropped/, $log_offset),
	'a clean restart sweeps nothing');

# --- one backend killed: crash-restart without a postmaster restart ---------
($bg, $pid) = open_temp();
$log_offset = -s $node->logfile;
kill 'KILL', $pid;
close_session($bg);
ok(nvm_wait_ready($node), 'the server accepts queries again after the backend crash');
ok($node->log_contains(qr/all server processes terminated; reinitializing/, $log_offset),
	'the postmaster reinitialised shared memory');
check_swept('after the backend crash', $log_offset);

# --- a temporary table dropped with its session, no crash ------------------
($bg, $pid) = open_temp();
close_session($bg);
ok($node->poll_query_until('postgres', 'SELECT tables FROM nvm_pool', $base_tables),
	'a temporary table\'s storage goes when its session ends');

$node->stop;
done_testing();

# regress/t/002_crash.pl
#	  Crash recovery of nvm tables: after the whole server is killed with
#	  SIGKILL (and after a single backend is), every committed change is
#	  there and no uncommitted one is; index scans and sequential scans
#	  return exactly the expected rows, and amcheck finds every row in every
#	  index.
use strict;
use warnings;

use Digest::MD5 qw(md5_hex);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use NvmTest;

my ($node) = nvm_node('crash');
# PostgreSQL::Test::Cluster turns this off; crash 3 below needs it
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL, s text NOT NULL) USING nvm;
	CREATE INDEX t_v ON t (v);
	CREATE INDEX t_s ON t (s);
});

is( $node->safe_psql('postgres',
		"SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 't'"),
	'nvm', 'the table uses the nvm access method');

# The expected contents: id => [v, s], kept in step with every committed
# statement by the sim_* functions.
my %rows;

sub sim_insert
{
	my ($from, $to, $vf, $sf) = @_;
	$rows{$_} = [ $vf->($_), $sf->($_) ] for $from .. $to;
	return;
}

sub sim_update
{
	my ($cond, $f) = @_;
	for my $id (grep { $cond->($_) } keys %rows) { $f->($rows{$id}); }
	return;
}

sub sim_delete
{
	my ($cond) = @_;
	delete $rows{$_} for grep { $cond->($_) } keys %rows;
	return;
}

sub sim_rekey
{
	my ($cond, $f) = @_;
	my %moved;
	for my $id (grep { $cond->($_) } keys %rows)
	{
		$moved{ $f->($id) } = delete $rows{$id};
	}
	%rows = (%rows, %moved);
	return;
}

# 100,000 rows, 10,000 of them updated, 1,000 deleted: 99,000 remain
$node->safe_psql('postgres',
	q{INSERT INTO t SELECT g, g, md5(g::text) FROM generate_series(1, 100000) g});
sim_insert(1, 100000, sub { $_[0] }, sub { md5_hex($_[0]) });
$node->safe_psql('postgres', 'UPDATE t SET v = v + 1000000 WHERE id % 10 = 0');
sim_update(sub { $_[0] % 10 == 0 }, sub { $_[0][0] += 1000000 });
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 100 = 1');
sim_delete(sub { $_[0] % 100 == 1 });
# and 100 key updates, in several small transactions
for my $k (0 .. 9)
{
	my $lo = $k * 10000;
	my $hi = $lo + 9999;
	$node->safe_psql('postgres',
		"UPDATE t SET id = id + 1000000 WHERE id % 1000 = 2 AND id BETWEEN $lo AND $hi");
}
sim_rekey(sub { $_[0] % 1000 == 2 && $_[0] <= 100000 }, sub { $_[0] + 1000000 });
is(scalar(keys %rows), 99000, 'the expected table has 99,000 rows');

sub expected
{
	my @ids = sort { $a <=> $b } keys %rows;
	my $sum = 0;
	$sum += $rows{$_}[0] for @ids;
	my $digest = md5_hex(join(',', map { "$_:$rows{$_}[0]:$rows{$_}[1]" } @ids));
	return (scalar(@ids), $sum, $digest);
}

# check_table WHEN: the table holds exactly the expected rows, by every path
sub check_table
{
	my ($when) = @_;
	my ($count, $sum, $digest) = expected();
	is($node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM t'),
		"$count|$sum", "$when: count ($count) and sum of v are exact");
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM t WHERE v < 0 OR s = 'uncommitted' OR id < 0"),
		'0', "$when: no uncommitted insert or update is visible");
	is( $node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id BETWEEN 3000 AND 4000'),
		scalar(grep { $_ >= 3000 && $_ <= 4000 } keys %rows),
		"$when: rows deleted by an uncommitted transaction are all there");

	my $d = nvm_scan_digests($node, 't', 'id', "id || ':' || v || ':' || s");
	like($d->{seq_plan}, qr/Seq Scan on t/, "$when: sequential plan is a Seq Scan");
	like($d->{index_plan}, qr/Index Scan using t_pkey/, "$when: index plan uses t_pkey");
	is($d->{seq}, "$count|$digest", "$when: sequential scan returns exactly the expected rows");
	is($d->{index}, "$count|$digest", "$when: index scan returns exactly the expected rows");
	my $dv = nvm_scan_digests($node, 't', 'v', "id || ':' || v || ':' || s", 'id');
	like($dv->{index_plan}, qr/Index Scan using t_v/, "$when: index plan uses t_v");
	is($dv->{index}, "$count|$digest", "$when: scan through t_v returns exactly the expected rows");

	is(nvm_check_indexes($node, 't', $when), 3, "$when: all three btree indexes checked");
	nvm_verify_clean($node, 't', $when);
	nvm_verify_clean($node, 'all', $when);
	return;
}

check_table('before any crash');

# open_uncommitted NAME: a session with a transaction that inserts, updates,
# deletes and moves keys, left open.  Returns the session and its pid.
sub open_uncommitted
{
	my $bg = $node->background_psql('postgres', on_error_stop => 1);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	$bg->query_safe(q{
		BEGIN;
		INSERT INTO t SELECT g, -g, 'uncommitted' FROM generate_series(200001, 205000) g;
		UPDATE t SET v = -1, s = 'uncommitted' WHERE id BETWEEN 1000 AND 2000;
		DELETE FROM t WHERE id BETWEEN 3000 AND 4000;
		UPDATE t SET id = -id WHERE id BETWEEN 5000 AND 5100;
	});
	# the writes are done, not committed
	my $updated = grep { $_ >= 1000 && $_ <= 2000 } keys %rows;
	is($bg->query_safe("SELECT count(*) FROM t WHERE s = 'uncommitted'"),
		5000 + $updated, 'the open transaction sees its own writes');
	return ($bg, $pid);
}

sub close_session
{
	my ($bg) = @_;
	eval { $bg->quit; };
	return;
}

# --- crash 1: every server process killed at once, mid-transaction ----------
my ($bg, $pid) = open_uncommitted();
# a transaction that commits while the other one is still open
$node->safe_psql('postgres', 'UPDATE t SET v = v + 1 WHERE id BETWEEN 10 AND 20');
sim_update(sub { $_[0] >= 10 && $_[0] <= 20 }, sub { $_[0][0] += 1 });
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE s = 'uncommitted'"),
	'0', 'other sessions do not see the open transaction');

nvm_crash($node, $pid);
close_session($bg);
$node->start;
check_table('after crash 1 (all processes killed)');

# --- crash 2: committed work after the restart, then SIGKILL of the
# postmaster alone (its children exit when they notice) ----------------------
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, g, md5(g::text) FROM generate_series(300001, 305000) g;
	UPDATE t SET v = v + 7 WHERE id % 10 = 5;
	DELETE FROM t WHERE id % 100 = 3;
	UPDATE t SET id = id + 2000000 WHERE id % 1000 = 4;
});
sim_insert(300001, 305000, sub { $_[0] }, sub { md5_hex($_[0]) });
sim_update(sub { $_[0] % 10 == 5 }, sub { $_[0][0] += 7 });
sim_delete(sub { $_[0] % 100 == 3 });
sim_rekey(sub { $_[0] % 1000 == 4 }, sub { $_[0] + 2000000 });
# and many small committed transactions
for my $i (1 .. 50)
{
	$node->safe_psql('postgres', "UPDATE t SET v = v + $i WHERE id = $i * 7");
	sim_update(sub { $_[0] == $i * 7 }, sub { $_[0][0] += $i });
}
check_table('before crash 2');

($bg, $pid) = open_uncommitted();
my ($pm, @children) = nvm_server_pids($node);
$node->kill9;
ok(nvm_wait_gone($pm, @children), 'the postmaster and its children are gone');
close_session($bg);
$node->start;
check_table('after crash 2 (postmaster killed)');

# --- crash 3: one backend killed mid-transaction; the postmaster kills the
# others and reinitialises without a restart ---------------------------------
$node->safe_psql('postgres', 'UPDATE t SET v = v + 3 WHERE id BETWEEN 100 AND 199');
sim_update(sub { $_[0] >= 100 && $_[0] <= 199 }, sub { $_[0][0] += 3 });
my $log_offset = -s $node->logfile;
($bg, $pid) = open_uncommitted();
kill 'KILL', $pid;
close_session($bg);
ok(nvm_wait_ready($node), 'the server accepts queries again after the backend crash');
ok( $node->log_contains(qr/(?:server process|client backend) \(PID $pid\) was terminated by signal 9/, $log_offset),
	'the postmaster noticed the backend crash');
ok($node->log_contains(qr/all server processes terminated; reinitializing/, $log_offset),
	'the postmaster reinitialised shared memory');
check_table('after crash 3 (one backend killed)');

# --- after the crashes: new rows are found, TIDs are not reused --------------
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT g, g, md5(g::text) FROM generate_series(400001, 401000) g;
	UPDATE t SET v = v + 1 WHERE id BETWEEN 400001 AND 400100;
});
sim_insert(400001, 401000, sub { $_[0] }, sub { md5_hex($_[0]) });
sim_update(sub { $_[0] >= 400001 && $_[0] <= 400100 }, sub { $_[0][0] += 1 });
is( $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM t WHERE id BETWEEN 400001 AND 401000}),
	'1000', 'rows inserted after the crashes are found through the primary key');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT ctid) FROM t'),
	't', 'every row has a TID of its own');
check_table('after writes following the crashes');

# --- crash 5: all processes killed in the middle of a large INSERT ----------
{
	my $bg5 = $node->background_psql('postgres', on_error_stop => 1);
	my $pid5 = $bg5->query_safe('SELECT pg_backend_pid()');
	# start the statement without waiting for it to finish
	$bg5->{stdin} .= "INSERT INTO t SELECT g, g, 'in flight' FROM generate_series(500001, 3000000) g;\n";
	$bg5->{run}->pump_nb;
	ok( $node->poll_query_until('postgres', qq{
			SELECT count(*) > 0 FROM pg_stat_activity
			 WHERE pid = $pid5 AND state = 'active' AND query LIKE 'INSERT INTO t %'}),
		'a large INSERT is running');
	# give it time to write a good part of its rows
	usleep(500_000);
	is( $node->safe_psql('postgres',
			"SELECT state FROM pg_stat_activity WHERE pid = $pid5"),
		'active', 'the large INSERT is still running when the server is killed');
	nvm_crash($node, $pid5);
	close_session($bg5);
}
$node->start;
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE s = 'in flight'"),
	'0', 'after crash 5: no row of the interrupted INSERT is visible');
check_table('after crash 5 (in the middle of a large INSERT)');

# --- and once more, all processes killed right after a commit ----------------
$node->safe_psql('postgres', 'DELETE FROM t WHERE id BETWEEN 400001 AND 400500');
sim_delete(sub { $_[0] >= 400001 && $_[0] <= 400500 });
nvm_crash($node);
$node->start;
check_table('after crash 4 (right after a commit)');

$node->stop;
done_testing();

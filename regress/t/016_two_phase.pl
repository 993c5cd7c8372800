# regress/t/016_two_phase.pl
#	  Prepared transactions (PREPARE TRANSACTION) that wrote nvm rows,
#	  across crashes.  A transaction is prepared, then the server stops
#	  with an immediate shutdown or crashes (every process SIGKILLed) and
#	  restarts: PostgreSQL restores the prepared transaction from its state
#	  file, the nvm transaction stays in doubt, its rows stay invisible and
#	  hold their row (a writer waits); VACUUM collects none of its versions.
#	  COMMIT PREPARED then makes every row visible, ROLLBACK PREPARED
#	  removes them, and sequential and index scans agree, indexes clean.
#	  Row locks a prepared transaction holds (FOR UPDATE, a foreign-key
#	  check's FOR KEY SHARE, thousands of rows) still keep writers waiting
#	  after a restart.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('two_phase');
$node->append_conf('postgresql.conf',
	"max_prepared_transactions = 10\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE t (id int PRIMARY KEY, v text) USING nvm;
	CREATE INDEX t_v ON t (v);
});

sub query
{
	return $node->safe_psql('postgres', $_[0]);
}

# reset_table: rows 1..100, v = 'v<id>'
sub reset_table
{
	query(q{TRUNCATE t; INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g; VACUUM t});
}

# prepare GID: inserts 1001..1100, updates 1..10, deletes 11..20, prepares
sub prepare
{
	my ($gid) = @_;
	query(qq{
		BEGIN;
		INSERT INTO t SELECT g, 'n' || g FROM generate_series(1001, 1100) g;
		UPDATE t SET v = 'u' || id WHERE id <= 10;
		DELETE FROM t WHERE id BETWEEN 11 AND 20;
		PREPARE TRANSACTION '$gid';
	});
}

my $before = '100|' . query(q{SELECT md5(string_agg(id || ':' || 'v' || id, ',' ORDER BY id)) FROM generate_series(1, 100) id});
my $after = '190|' . query(q{
	SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM (
		SELECT id, 'u' || id AS v FROM generate_series(1, 10) id
		UNION ALL SELECT id, 'v' || id FROM generate_series(21, 100) id
		UNION ALL SELECT id, 'n' || id FROM generate_series(1001, 1100) id) s});

# check_rows NAME EXPECTED: both scans return EXPECTED, indexes clean
sub check_rows
{
	my ($name, $expected) = @_;
	my $d = nvm_scan_digests($node, 't', 'id', q{id || ':' || v});
	like($d->{seq_plan}, qr/Seq Scan/, "$name: sequential plan");
	like($d->{index_plan}, qr/Index Scan/, "$name: index plan");
	is($d->{seq}, $expected, "$name: sequential scan");
	is($d->{index}, $expected, "$name: index scan");
	is(query(q{SET enable_seqscan = off; SET enable_bitmapscan = off;
				SELECT count(*) FROM t WHERE v LIKE 'n%' OR v LIKE 'u%'}),
	   $expected eq $after ? '110' : '0', "$name: scan of the second index");
	nvm_check_indexes($node, 't', $name);
	# the pool check takes no lock: a pending prepared transaction holds t
	nvm_verify_clean($node, 'all', $name);
}

# restart KIND: an immediate stop, or a crash of every process
sub restart
{
	my ($kind) = @_;
	if ($kind eq 'immediate')
	{
		$node->stop('immediate');
	}
	else
	{
		nvm_crash($node);
	}
	$node->start;
}

foreach my $kind ('immediate', 'kill9')
{
	foreach my $end ('COMMIT', 'ROLLBACK')
	{
		my $name = "$kind, $end PREPARED";
		my $gid = lc("g_${kind}_$end");
		reset_table();
		prepare($gid);
		check_rows("$name: prepared, before the restart", $before);
		restart($kind);
		is(query(qq{SELECT count(*) FROM pg_prepared_xacts WHERE gid = '$gid'}), '1',
		   "$name: the prepared transaction is restored");
		check_rows("$name: prepared, after the restart", $before);

		# the prepared transaction still holds its rows; others write on
		my ($rc, $out, $err) = $node->psql('postgres',
			q{SET lock_timeout = '200ms'; UPDATE t SET v = 'x' WHERE id = 1});
		like($err, qr/lock timeout/, "$name: a writer of a prepared row waits");
		($rc, $out, $err) = $node->psql('postgres',
			q{SET lock_timeout = '200ms'; INSERT INTO t VALUES (1001, 'dup')});
		like($err, qr/lock timeout/, "$name: a duplicate of a prepared insert waits");
		query(q{UPDATE t SET v = 'w' || id WHERE id = 50; UPDATE t SET v = 'v' || id WHERE id = 50});
		query(q{VACUUM t});

		# a second crash while it is pending
		restart($kind);
		check_rows("$name: prepared, after a second restart", $before);

		query(qq{$end PREPARED '$gid'});
		is(query(q{SELECT count(*) FROM pg_prepared_xacts}), '0', "$name: finished");
		check_rows("$name: finished", $end eq 'COMMIT' ? $after : $before);

		# the rows are final and writable; and stay so after a restart
		query(q{UPDATE t SET v = v WHERE id IN (1, 1001); VACUUM t});
		restart($kind);
		check_rows("$name: finished, after a restart", $end eq 'COMMIT' ? $after : $before);
	}
}

# row locks of a prepared transaction survive restarts: their lock words
# are persisted, marked PREPARED, before the prepare record
query(q{
	CREATE TABLE p (id int PRIMARY KEY, v text) USING nvm;
	CREATE TABLE c (id int PRIMARY KEY, parent int REFERENCES p) USING nvm;
	INSERT INTO p SELECT g, 'p' || g FROM generate_series(1, 10) g;
});
foreach my $kind ('immediate', 'kill9')
{
	my $gid = "g_locks_$kind";
	query(qq{
		BEGIN;
		SELECT id FROM p WHERE id = 2 FOR UPDATE;
		INSERT INTO c VALUES (1, 1);
		PREPARE TRANSACTION '$gid';
	});
	restart($kind);
	my ($rc, $out, $err) = $node->psql('postgres',
		q{SET lock_timeout = '200ms'; UPDATE p SET v = 'x' WHERE id = 2});
	like($err, qr/lock timeout/,
		"$kind: a writer of a row the prepared transaction locked FOR UPDATE waits after a restart");
	($rc, $out, $err) = $node->psql('postgres',
		q{SET lock_timeout = '200ms'; DELETE FROM p WHERE id = 1});
	like($err, qr/lock timeout/,
		"$kind: a delete of a row its foreign-key check locked waits after a restart");
	query(q{UPDATE p SET v = 'y' WHERE id = 3; UPDATE p SET v = 'z' WHERE id = 1});
	is(query(q{SELECT string_agg(v, ',' ORDER BY id) FROM p WHERE id IN (1, 3)}), 'z,y',
	   "$kind: writes the locks allow go on");
	query(qq{COMMIT PREPARED '$gid'});
	query(q{UPDATE p SET v = 'x' WHERE id = 2});
	is(query(q{SELECT v FROM p WHERE id = 2}), 'x', "$kind: after COMMIT PREPARED the writer goes on");
	($rc, $out, $err) = $node->psql('postgres', q{DELETE FROM p WHERE id = 1});
	like($err, qr/violates foreign key constraint/, "$kind: the prepared child row is committed");
	query(q{DELETE FROM c});
}

# a prepared transaction that locked more rows than a backend remembers for
# PREPARE (4,096): PREPARE finds the rest in the table's lock words, and a
# word another session added itself to later keeps the prepared lock
query(q{INSERT INTO p SELECT g, 'p' || g FROM generate_series(11, 6000) g});
query(q{
	BEGIN;
	SELECT count(*) FROM (SELECT id FROM p WHERE id > 10 FOR KEY SHARE) s;
	PREPARE TRANSACTION 'g_many_locks';
});
query(q{BEGIN; SELECT id FROM p WHERE id = 5998 FOR KEY SHARE; COMMIT});
restart('kill9');
foreach my $id (11, 5998, 5999)
{
	my ($rc, $out, $err) = $node->psql('postgres',
		qq{SET lock_timeout = '200ms'; DELETE FROM p WHERE id = $id});
	like($err, qr/lock timeout/,
		"many locks: a delete of row $id the prepared transaction locked waits after a restart");
}
query(q{UPDATE p SET v = 'kept' WHERE id = 5999});
is(query(q{SELECT v FROM p WHERE id = 5999}), 'kept',
   'many locks: an update keeping the key goes on');
query(q{COMMIT PREPARED 'g_many_locks'});
query(q{DELETE FROM p WHERE id > 10});
is(query(q{SELECT count(*) FROM p}), '10', 'many locks: after COMMIT PREPARED the deletes go on');

is(nvm_log_crashes($node), '', 'no PANIC, assertion failure or unexpected signal')
  or diag(nvm_log_crashes($node));

# a crash after the in-doubt marker, before the prepare record: the
# transaction never prepared, its rows are gone
reset_table();
my ($ret) = $node->psql('postgres', q{
	SET nvm.debug_crash_point = 'after_indoubt';
	BEGIN;
	INSERT INTO t SELECT g, 'n' || g FROM generate_series(1001, 1100) g;
	UPDATE t SET v = 'u' || id WHERE id <= 10;
	DELETE FROM t WHERE id BETWEEN 11 AND 20;
	PREPARE TRANSACTION 'g_crash';});
isnt($ret, 0, 'after_indoubt: PREPARE TRANSACTION does not return success');
ok(nvm_wait_ready($node), 'after_indoubt: the server is back after crash recovery');
is(query(q{SELECT count(*) FROM pg_prepared_xacts}), '0', 'after_indoubt: nothing was prepared');
check_rows('after_indoubt: crashed before the prepare record', $before);
query(q{UPDATE t SET v = v WHERE id IN (1, 11)});
check_rows('after_indoubt: rows writable', $before);


$node->stop;
done_testing();

# regress/t/004_concurrency.pl
#	  Two sessions writing the same rows of nvm tables behave as they do on
#	  heap tables: in READ COMMITTED a writer waits for the other writer of a
#	  row and then works on its newest version; row locks (FOR UPDATE, FOR
#	  SHARE, NOWAIT, SKIP LOCKED) exclude writers; unique and foreign keys
#	  hold under concurrency; deadlocks are detected; REPEATABLE READ keeps
#	  its snapshot and refuses to update a row changed since.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use NvmTest;

my ($node) = nvm_node('concurrency');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	INSERT INTO t SELECT g, 0 FROM generate_series(1, 100) g;
	CREATE TABLE p (id int PRIMARY KEY) USING nvm;
	CREATE TABLE c (id int PRIMARY KEY, pid int REFERENCES p (id)) USING nvm;
	INSERT INTO p SELECT generate_series(1, 10);
});

# Two sessions that keep going after errors.
my %session;
my %pid;
for my $name (qw(a b))
{
	$session{$name} = $node->background_psql('postgres', on_error_stop => 0);
	$pid{$name} = $session{$name}->query('SELECT pg_backend_pid()');
}

# run NAME SQL: runs SQL in session NAME to completion; returns
# "stdout|ERROR-text" (the error's first line without the psql prefix).
sub run
{
	my ($name, $sql) = @_;
	my $s = $session{$name};
	$s->{stderr} = '';
	my $out = $s->query($sql);
	return $out . '|' . _error($s->{stderr});
}

sub _error
{
	my ($stderr) = @_;
	return '' unless defined $stderr && $stderr =~ /ERROR:\s+([^\n]*)/;
	return $1;
}

# start NAME SQL: sends SQL to session NAME without waiting for it.
my $mark = 0;
my %pending;
sub start
{
	my ($name, $sql) = @_;
	my $s = $session{$name};
	$mark++;
	$pending{$name} = "nvm_done_$mark";
	$s->{stdout} = '';
	$s->{stderr} = '';
	$s->{stdin} .= "$sql\n;\n\\echo '$pending{$name}'\n\\warn '$pending{$name}'\n";
	$s->{run}->pump_nb;
	return;
}

sub _finished
{
	my ($name) = @_;
	my $s = $session{$name};
	$s->{run}->pump_nb;
	return $s->{stdout} =~ /$pending{$name}/ && $s->{stderr} =~ /$pending{$name}/;
}

# waits NAME: true when the statement started in NAME is waiting on a lock
# (it is checked for ten seconds); false when it finished without waiting.
sub waits
{
	my ($name) = @_;
	for (1 .. 100)
	{
		return 0 if _finished($name);
		my $w = $node->safe_psql('postgres',
			"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $pid{$name}");
		return 1 if $w eq 'Lock';
		usleep(100_000);
	}
	return 0;
}

# finish NAME: waits for the statement started in NAME; returns it like run.
sub finish
{
	my ($name) = @_;
	my $s = $session{$name};
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	until (_finished($name))
	{
		die "statement in session $name did not finish" if time > $deadline;
		usleep(10_000);
	}
	my ($out, $err) = ($s->{stdout}, $s->{stderr});
	$out =~ s/\n?$pending{$name}\n//;
	$s->{stdout} = '';
	$s->{stderr} = '';
	return $out . '|' . _error($err);
}

sub reset_sessions
{
	run($_, 'ROLLBACK') for qw(a b);
	return;
}

sub value
{
	my ($id) = @_;
	return $node->safe_psql('postgres', "SELECT v FROM t WHERE id = $id");
}

# --- READ COMMITTED: a second writer waits, then uses the newest version ----
run('a', 'BEGIN; UPDATE t SET v = v + 1 WHERE id = 1');
start('b', 'UPDATE t SET v = v + 10 WHERE id = 1 RETURNING v');
ok(waits('b'), 'update/update: the second updater waits for the first');
run('a', 'COMMIT');
is(finish('b'), '11|', 'update/update: after the commit it updates the new version');
is(value(1), '11', 'update/update: both increments are kept');
reset_sessions();

run('a', 'BEGIN; UPDATE t SET v = v + 1 WHERE id = 2');
start('b', 'UPDATE t SET v = v + 10 WHERE id = 2 RETURNING v');
ok(waits('b'), 'update/rollback: the second updater waits');
run('a', 'ROLLBACK');
is(finish('b'), '10|', 'update/rollback: after the rollback it updates the old version');
reset_sessions();

run('a', 'BEGIN; DELETE FROM t WHERE id = 3');
start('b', 'UPDATE t SET v = 33 WHERE id = 3 RETURNING v');
ok(waits('b'), 'delete/update: the updater waits for the deleter');
run('a', 'COMMIT');
is(finish('b'), '|', 'delete/update: after the delete commits the update finds no row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id = 3'), '0',
	'delete/update: the row stays deleted');
reset_sessions();

# a key update by the first writer: the second, looking for the old key,
# finds nothing; one looking by another column follows the row to its new key
run('a', 'BEGIN; UPDATE t SET id = 1004 WHERE id = 4');
start('b', 'UPDATE t SET v = 44 WHERE id = 4 RETURNING id');
ok(waits('b'), 'key update/update: the updater waits');
run('a', 'COMMIT');
is(finish('b'), '|', 'key update/update: the old key no longer matches');
run('a', 'BEGIN; UPDATE t SET id = 2004 WHERE id = 1004');
start('b', 'UPDATE t SET v = 45 WHERE id > 1000 AND v = 0 RETURNING id');
ok(waits('b'), 'key update/update by value: the updater waits');
run('a', 'COMMIT');
is(finish('b'), '2004|', 'key update/update by value: the moved row is updated once');
reset_sessions();

# --- unique keys under concurrency ------------------------------------------
run('a', 'BEGIN; INSERT INTO t VALUES (500, 1)');
start('b', 'INSERT INTO t VALUES (500, 2)');
ok(waits('b'), 'unique: an insert of an uncommitted key waits');
run('a', 'ROLLBACK');
is(finish('b'), '|', 'unique: it succeeds when the other insert rolls back');
run('a', 'BEGIN; INSERT INTO t VALUES (501, 1)');
start('b', 'INSERT INTO t VALUES (501, 2)');
ok(waits('b'), 'unique: a second insert of an uncommitted key waits');
run('a', 'COMMIT');
like(finish('b'), qr/^\|duplicate key value violates unique constraint "t_pkey"/,
	'unique: it fails when the other insert commits');
run('a', 'BEGIN; INSERT INTO t VALUES (502, 1) ON CONFLICT (id) DO UPDATE SET v = t.v + 1');
start('b', 'INSERT INTO t VALUES (502, 1) ON CONFLICT (id) DO UPDATE SET v = t.v + 1 RETURNING v');
ok(waits('b'), 'upsert: a concurrent upsert of the same key waits');
run('a', 'COMMIT');
is(finish('b'), '2|', 'upsert: it then updates the committed row');
is($node->safe_psql('postgres', 'SELECT v FROM t WHERE id IN (500, 501, 502) ORDER BY id'),
	"2\n1\n2", 'unique: the rows are as committed');
reset_sessions();

# --- row locks ----------------------------------------------------------------
run('a', 'BEGIN; SELECT v FROM t WHERE id = 5 FOR UPDATE');
like(run('b', 'SELECT v FROM t WHERE id = 5 FOR UPDATE NOWAIT'),
	qr/^\|could not obtain lock on row/, 'FOR UPDATE NOWAIT fails on a locked row');
is(run('b', 'SELECT id FROM t WHERE id IN (5, 6) ORDER BY id FOR UPDATE SKIP LOCKED'),
	'6|', 'FOR UPDATE SKIP LOCKED skips the locked row');
start('b', 'UPDATE t SET v = 55 WHERE id = 5 RETURNING v');
ok(waits('b'), 'an update of a row locked FOR UPDATE waits');
run('a', 'UPDATE t SET v = 50 WHERE id = 5');
run('a', 'COMMIT');
is(finish('b'), '55|', 'the update proceeds after the lock holder commits');
is(value(5), '55', 'the waiting update came last');
reset_sessions();

run('a', 'BEGIN; SELECT v FROM t WHERE id = 7 FOR SHARE');
is(run('b', 'SELECT v FROM t WHERE id = 7 FOR SHARE'), '0|', 'FOR SHARE does not block FOR SHARE');
run('b', 'ROLLBACK');
start('b', 'DELETE FROM t WHERE id = 7');
ok(waits('b'), 'a delete of a row locked FOR SHARE waits');
run('a', 'COMMIT');
is(finish('b'), '|', 'the delete proceeds after the lock holder commits');
reset_sessions();

# --- deadlocks ------------------------------------------------------------------
run('a', 'BEGIN; UPDATE t SET v = 1 WHERE id = 8');
run('b', 'BEGIN; UPDATE t SET v = 1 WHERE id = 9');
start('a', 'UPDATE t SET v = 2 WHERE id = 9');
ok(waits('a'), 'deadlock: the first session waits');
start('b', 'UPDATE t SET v = 2 WHERE id = 8');
# the deadlock detector picks one of the two: the one whose statement ends
# with the error (the other finishes right after, as the victim's locks go
# at its error: on a loaded machine both have finished by the first look)
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
my $victim;
until (defined $victim)
{
	foreach my $name (qw(a b))
	{
		$victim = $name
		  if !defined $victim && _finished($name)
		  && $session{$name}{stderr} =~ /deadlock detected/;
	}
	die 'neither session failed with a deadlock' if time > $deadline;
	usleep(10_000);
}
my $survivor = $victim eq 'a' ? 'b' : 'a';
like(finish($victim), qr/^\|deadlock detected/, 'deadlock: it is detected, one session fails');
run($victim, 'ROLLBACK');
is(finish($survivor), '|', 'deadlock: the other session goes on');
run($survivor, 'COMMIT');
is($node->safe_psql('postgres', 'SELECT string_agg(v::text, \',\' ORDER BY id) FROM t WHERE id IN (8, 9)'),
	$survivor eq 'a' ? '1,2' : '2,1',
	'deadlock: the surviving transaction committed both its changes');
reset_sessions();

# --- foreign keys under concurrency ------------------------------------------------
run('a', 'BEGIN; DELETE FROM p WHERE id = 1');
start('b', 'INSERT INTO c VALUES (1, 1)');
ok(waits('b'), 'FK: a child insert waits for an uncommitted delete of its parent');
run('a', 'COMMIT');
like(finish('b'), qr/^\|insert or update on table "c" violates foreign key constraint/,
	'FK: the child insert fails once the parent delete commits');
reset_sessions();

run('a', 'BEGIN; DELETE FROM p WHERE id = 2');
start('b', 'INSERT INTO c VALUES (2, 2)');
ok(waits('b'), 'FK: a child insert waits for a parent delete');
run('a', 'ROLLBACK');
is(finish('b'), '|', 'FK: the child insert succeeds once the parent delete rolls back');
reset_sessions();

run('a', 'BEGIN; INSERT INTO c VALUES (3, 3)');
start('b', 'DELETE FROM p WHERE id = 3');
ok(waits('b'), 'FK: a parent delete waits for an uncommitted child insert');
run('a', 'COMMIT');
like(finish('b'), qr/^\|update or delete on table "p" violates foreign key constraint/,
	'FK: the parent delete fails once the child insert commits');
reset_sessions();
is( $node->safe_psql('postgres',
		'SELECT count(*) FROM c WHERE NOT EXISTS (SELECT 1 FROM p WHERE p.id = c.pid)'),
	'0', 'FK: no child row lost its parent');

# --- REPEATABLE READ ------------------------------------------------------------------
run('a', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
my $before = run('a', 'SELECT count(*), sum(v) FROM t');
$node->safe_psql('postgres', q{
	UPDATE t SET v = v + 100 WHERE id = 10;
	INSERT INTO t VALUES (600, 6);
	DELETE FROM t WHERE id = 11;
});
is(run('a', 'SELECT count(*), sum(v) FROM t'), $before,
	'REPEATABLE READ: a sequential scan keeps the snapshot');
is( run('a', 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;'
		  . ' SELECT count(*), sum(v) FROM t WHERE id > 0'),
	$before, 'REPEATABLE READ: an index scan keeps the snapshot');
like(run('a', 'UPDATE t SET v = v + 1 WHERE id = 10'),
	qr/^\|could not serialize access due to concurrent update/,
	'REPEATABLE READ: updating a row changed since the snapshot fails');
reset_sessions();
run('a', 'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1');
run('b', 'BEGIN; UPDATE t SET v = v + 1 WHERE id = 12');
start('a', 'UPDATE t SET v = v + 1 WHERE id = 12');
ok(waits('a'), 'REPEATABLE READ: an update waits for an uncommitted writer');
run('b', 'ROLLBACK');
is(finish('a'), '|', 'REPEATABLE READ: it proceeds when the writer rolls back');
run('a', 'COMMIT');
is(value(12), '1', 'REPEATABLE READ: the update is committed');
reset_sessions();

# --- each statement in READ COMMITTED sees the commits before it --------------------
my $stale = 0;
for my $i (1 .. 100)
{
	run('b', "UPDATE t SET v = $i WHERE id = 13");
	$stale++ if run('a', 'SELECT v FROM t WHERE id = 13') ne "$i|";
	run('a', "UPDATE t SET v = -$i WHERE id = 14");
	$stale++ if run('a', 'SELECT v FROM t WHERE id = 14') ne "-$i|";
}
is($stale, 0, "READ COMMITTED: every read sees the other session's and its own last commit");

$session{$_}->quit for qw(a b);
$node->stop;
done_testing();

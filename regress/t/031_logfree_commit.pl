# regress/t/031_logfree_commit.pl
#	  How transactions that wrote nvm rows commit, and what survives a crash
#	  at each step:
#	   - single-row inserts into an nvm table with an identity primary key
#	     and secondary indexes commit on the pool alone: no WAL fsync but
#	     the first of the sequence's log-ahead records after a checkpoint,
#	     and no xid but for those records (others wait on an xid stand-in);
#	   - a transaction that also wrote a heap row is tied to PostgreSQL's
#	     commit record and pays exactly one WAL flush (no tie record); its
#	     rows go into one nvm COMMIT record, before its commit record, and
#	     no second one follows unless a checkpoint's cut came between
#	     (then the second one is after the cut, where a rebuild replays it);
#	   - a crash right after a log-free commit, before its WAL is flushed
#	     (nvm.debug_crash_point = after_nvm_commit): the row is found
#	     through every index after the restart, its index entries having
#	     been put back from the pool; a table of another database is
#	     repaired when that database first uses it, after a clean restart;
#	   - the sequence of an identity column never hands a committed value
#	     out again, also when the crash comes right after the insert that
#	     made it log ahead: the commit kept the sequence's position in the
#	     pool, and the end of WAL replay advances the sequence (or, the
#	     first log-ahead after a checkpoint, the commit flushed it);
#	   - a tied transaction whose commit record a crash lost
#	     (after_indoubt): its xid is handed out again after the restart,
#	     and the new owner's commit does not make the lost transaction's
#	     nvm row appear;
#	   - synchronous_commit = off: a transaction that wrote heap and nvm
#	     rows still waits for its commit record, so a crash right after the
#	     COMMIT returned keeps both halves; a log-free one keeps its row;
#	   - where a log-free commit cannot log its index entries (an index
#	     that is not a btree) or does not know the sequence it used (a
#	     serial column, nextval()), it flushes the WAL instead.
#	   - a commit whose status is final but which has not completed (it
#	     waits for a synchronous standby, as a commit durable through the
#	     WAL waits for its record's flush) is waited for in the lock manager
#	     by a writer of its row and by a row lock that follows the row, and
#	     its row is returned to neither before it completes.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my ($node) = nvm_node('logfree_commit');
# fsync on (the test harness turns it off): pg_stat_wal (18: pg_stat_io) counts WAL fsyncs
$node->append_conf('postgresql.conf', qq{
restart_after_crash = on
wal_writer_delay = '10s'
autovacuum = off
fsync = on
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE o (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
					u bigint NOT NULL UNIQUE, n int NOT NULL) USING nvm;
	CREATE INDEX o_n ON o (n);
	CREATE TABLE h (id int PRIMARY KEY, note text);
	CREATE TABLE s (id serial PRIMARY KEY, v int) USING nvm;
	CREATE TABLE x (k int, v int) USING nvm;
	CREATE INDEX x_k ON x USING hash (k);
	CREATE TABLE w (id int PRIMARY KEY, t text) USING nvm;
});

# wal_syncs: WAL fsyncs of the whole server so far (PostgreSQL 18 counts
# them in pg_stat_io, 15 in pg_stat_wal)
my $wal_syncs_sql = $node->pg_version >= 18
  ? q{SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal'}
  : q{SELECT wal_sync FROM pg_stat_wal};
sub wal_syncs
{
	return $node->safe_psql('postgres', $wal_syncs_sql);
}

# run_counted SQL: runs SQL in one session and returns the session's nvm
# commit counters and the server's WAL fsyncs during it
sub run_counted
{
	my ($sql) = @_;
	my $before = wal_syncs();
	my $out = $node->safe_psql('postgres', qq{
		$sql
		SELECT pg_stat_force_next_flush();
		SELECT log_free_commits || ' ' || tied_commits || ' ' || index_log_entries
			   || ' ' || commit_wal_flushes || ' ' || sequence_positions FROM nvm_backend_stats();
	});
	my ($counters) = $out =~ /(\d+ \d+ \d+ \d+ \d+)\s*$/;
	my ($lf, $tied, $entries, $flushes, $positions) = split / /, $counters;
	return { log_free => $lf, tied => $tied, entries => $entries, flushes => $flushes,
		positions => $positions, syncs => wal_syncs() - $before };
}

# wal_writer_just_flushed: the WAL writer flushes asynchronous commits at
# most every wal_writer_delay (10 s here): one asynchronous commit and a
# moment's wait, and the WAL of the next commits stays in memory for a while
my $async_n = 0;
sub wal_writer_just_flushed
{
	$async_n++;
	$node->safe_psql('postgres',
		"SET synchronous_commit = off; INSERT INTO h VALUES (-$async_n, 'async'); SELECT pg_sleep(0.3);");
	return;
}

# found_everywhere U: the row of o with u = U, through every index and a
# sequential scan ("id|n" four times when all agree)
sub found_everywhere
{
	my ($u) = @_;
	my $q = "SELECT id || '|' || n FROM o";
	my $idx = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
	my $row = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; $q WHERE u = $u");
	return '' if $row eq '';
	my ($id, $n) = split /\|/, $row;
	return join(',',
		$row,
		$node->safe_psql('postgres', "$idx $q WHERE id = $id"),
		$node->safe_psql('postgres', "$idx $q WHERE u = $u"),
		$node->safe_psql('postgres', "$idx $q WHERE n = $n AND u = $u"));
}

# ---------------------------------------------------------------------------
# 1. fsyncs of log-free and tied commits
# ---------------------------------------------------------------------------

my $inserts = join("\n", map { "INSERT INTO o (u, n) VALUES ($_, " . ($_ % 7) . ");" } 1 .. 200);
my $xid_before = $node->safe_psql('postgres', 'SELECT pg_current_xact_id()');
my $r = run_counted($inserts);
my $xids = $node->safe_psql('postgres', 'SELECT pg_current_xact_id()') - $xid_before - 1;
is($r->{log_free}, 200, 'single-row inserts into an nvm table commit on the pool alone');
cmp_ok($xids, '<=', 200 / 32 + 3,
	"... they take no xid but for the sequence's log-ahead records ($xids xids for 200 inserts)");
is($r->{tied}, 0, '... none is tied to the commit record');
cmp_ok($r->{entries}, '>', 150, "... their index roots are logged in the pool ($r->{entries})");
cmp_ok($r->{flushes}, '<=', 2,
	"... the sequence's log-ahead records go to the pool: at most the first after a checkpoint is flushed ($r->{flushes} flushes)");
cmp_ok($r->{positions}, '>=', 200 / 32 - 2,
	"... nvm_backend_stats() counts the sequence positions kept in the pool ($r->{positions})");
cmp_ok($r->{syncs}, '<=', 200 * 0.05,
	"200 log-free inserts cost at most 0.05 WAL fsyncs each ($r->{syncs} fsyncs)");

$r = run_counted(join("\n",
	map { "BEGIN; INSERT INTO h VALUES ($_); INSERT INTO o (u, n) VALUES (" . (1000 + $_) . ", 1); COMMIT;" }
	  1 .. 20));
is($r->{tied}, 20, 'transactions that wrote heap and nvm rows are tied to the commit record');
is($r->{log_free}, 0, '... none is log-free');
cmp_ok($r->{syncs}, '>=', 20, "... each flushes the WAL ($r->{syncs} fsyncs for 20)");
cmp_ok($r->{syncs}, '<=', 22, '... exactly once (no separate flush for the nvm part)');

# a wide row: its out-of-line values are heap (TOAST) rows
$r = run_counted("INSERT INTO w VALUES (1, (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 2000) g));");
is($r->{tied}, 1, 'a row with TOAST values (heap rows) is tied to the commit record');

# ---------------------------------------------------------------------------
# 2. a crash right after a log-free commit
# ---------------------------------------------------------------------------

wal_writer_just_flushed();
my $offset = -s $node->logfile;
nvm_commit_and_crash($node, 'after_nvm_commit', 'INSERT INTO o (u, n) VALUES (777777, 3);');
is(found_everywhere(777777) =~ tr/,//, 3, 'the row committed just before the crash is there');
my @f = split /,/, found_everywhere(777777);
is(scalar(grep { $_ eq $f[0] } @f), 4,
	'... and found through the primary key, the unique and the non-unique index');
ok($node->log_contains(qr/re-inserted [1-9]\d* index entries of table "o"/, $offset),
	'its index entries, lost with the WAL, were put back from the pool');
nvm_check_indexes($node, 'o', 'after a crash after a log-free commit');

# a table of another database is repaired when that database first uses
# it, also after a clean restart in between
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE p (id int PRIMARY KEY, v text) USING nvm;
});
$node->safe_psql('other', "INSERT INTO p VALUES (0, 'first')");
wal_writer_just_flushed();
$offset = -s $node->logfile;
$node->safe_psql('other', join("\n", map { "INSERT INTO p VALUES ($_, 'v$_');" } 1 .. 50));
nvm_crash($node);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM o WHERE u = 777777'), '1',
	'after a crash, a table of this database is used first');
$node->restart;
ok(!$node->log_contains(qr/index entries of table "p"/, $offset),
	'the other database\'s table is not repaired before it is used');
is( $node->safe_psql('other',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM p WHERE id >= 0'),
	'51', 'every row of a table of another database is found through its index after a clean restart');
ok($node->log_contains(qr/re-inserted [1-9]\d* index entries of table "p"/, $offset),
	'... whose entries were put back when the database first used the table');
$node->safe_psql('other', 'CREATE EXTENSION amcheck');
is($node->safe_psql('other', "SELECT bt_index_check('p_pkey', true)"), '',
	'... and amcheck finds every row in the index');

# ---------------------------------------------------------------------------
# 3. identity values are not handed out again
# ---------------------------------------------------------------------------

# use_up_sequence N: inserts into o until the sequence has logged ahead
# N times and used up its logged range again (log_cnt 0), so that the next
# insert makes it log ahead
sub use_up_sequence
{
	my ($times) = @_;
	my $prev = $node->safe_psql('postgres', 'SELECT log_cnt FROM o_id_seq');
	for (1 .. 40 * ($times + 1))
	{
		last if $times == 0 && $prev eq '0';
		$node->safe_psql('postgres', "INSERT INTO o (u, n) VALUES (800000 + (SELECT count(*) FROM o), 1)");
		my $cnt = $node->safe_psql('postgres', 'SELECT log_cnt FROM o_id_seq');
		$times-- if $cnt > $prev;
		$prev = $cnt;
	}
	return $prev;
}

# a log-ahead after the first one since the checkpoint: its record is not
# flushed, the sequence's position goes to the pool; the crash loses the
# record, and the end of WAL replay puts the position back
is(use_up_sequence(1), '0', 'the sequence has logged ahead and used up its logged values');
wal_writer_just_flushed();
$offset = -s $node->logfile;
nvm_commit_and_crash($node, 'after_nvm_commit', 'INSERT INTO o (u, n) VALUES (888888, 4);');
my ($crash_id) = split /\|/, found_everywhere(888888);
ok(defined $crash_id && $crash_id ne '', 'the row that made the sequence log ahead is there');
ok($node->log_contains(qr/advanced sequence with relfilenode \S+ to \d+ at the end of recovery/, $offset),
	'... its log-ahead record was lost, and the sequence was advanced from the pool at the end of recovery');
my ($rc, $out, $err) = $node->psql('postgres',
	'INSERT INTO o (u, n) VALUES (888889, 4) RETURNING id');
is($rc, 0, 'the next insert gets a new identity value') or diag($err);
cmp_ok($out, '>', $crash_id // 0, '... above the one committed before the crash');

# right after a shutdown checkpoint, a crash that loses all newer WAL does
# not run the end-of-replay step: the first log-ahead after a checkpoint
# is flushed (with a record after the checkpoint), so nothing is lost.
# The WAL writer is stopped so that it flushes nothing after the restart
# (its first flush takes everything); the postmaster kills it in the crash.
is(use_up_sequence(0), '0', 'the sequence has used up its logged values again');
$node->restart;
my $walwriter = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'");
ok($walwriter =~ /^\d+$/ && kill('STOP', $walwriter), 'the WAL writer is stopped');
$offset = -s $node->logfile;
nvm_commit_and_crash($node, 'after_nvm_commit', 'INSERT INTO o (u, n) VALUES (888891, 4);');
($crash_id) = split /\|/, found_everywhere(888891);
ok(defined $crash_id && $crash_id ne '', 'a row committed right after a clean restart is there');
($rc, $out, $err) = $node->psql('postgres',
	'INSERT INTO o (u, n) VALUES (888892, 4) RETURNING id');
is($rc, 0, 'the next insert gets a new identity value') or diag($err);
cmp_ok($out, '>', $crash_id // 0, '... above the one committed before the crash');
ok(!$node->log_contains(qr/advanced sequence .* after recovery/, $offset),
	'... and no statement had to advance the sequence after recovery (replay ran, or nothing was lost)');

# ---------------------------------------------------------------------------
# 4. a tied transaction whose commit record was lost; its xid is reused
# ---------------------------------------------------------------------------

($rc, $out, $err) = $node->psql('postgres', q{
	SET nvm.debug_crash_point = 'after_indoubt';
	BEGIN;
	SELECT 'X' || pg_current_xact_id();
	INSERT INTO h VALUES (5000, 'lost');
	INSERT INTO o (u, n) VALUES (5000000, 5);
	COMMIT;
});
my ($lost_xid) = $out =~ /X(\d+)/;
isnt($rc, 0, 'the tied transaction crashes before its commit record');
ok(nvm_wait_ready($node), 'the server is back after crash recovery');
$offset = -s $node->logfile;
# without touching nvm tables, take xids until the lost one comes back
my $reused = 0;
for (1 .. 200)
{
	my $x = $node->safe_psql('postgres', 'SELECT pg_current_xact_id()');
	if ($x == $lost_xid)
	{
		$reused = 1;
		last;
	}
	last if $x > $lost_xid;
}
ok($reused, "the lost transaction's xid $lost_xid was handed out again and committed");
ok($node->log_contains(qr/resolved an in-doubt transaction as aborted: its xid $lost_xid was handed out again/,
		$offset), '... whose commit first resolved the lost transaction as aborted');
is( $node->safe_psql('postgres',
		'SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM o WHERE u = 5000000'),
	'0', 'the lost transaction\'s nvm row is not there');
is($node->safe_psql('postgres', 'SELECT count(*) FROM h WHERE id = 5000'), '0',
	'nor its heap row');

# ---------------------------------------------------------------------------
# 5. synchronous_commit = off
# ---------------------------------------------------------------------------

# The log-free commit comes before the tied one, whose commit record
# would otherwise wait for the WAL writer.
wal_writer_just_flushed();
$node->safe_psql('postgres', q{
	SET synchronous_commit = off;
	INSERT INTO o (u, n) VALUES (6000001, 6);
	BEGIN; INSERT INTO h VALUES (6000, 'async'); INSERT INTO o (u, n) VALUES (6000000, 6); COMMIT;
});
nvm_crash($node);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM h WHERE id = 6000')
	  . $node->safe_psql('postgres', 'SELECT count(*) FROM o WHERE u = 6000000'), '11',
	'synchronous_commit = off: a transaction with heap and nvm rows keeps both halves across a crash');
is($node->safe_psql('postgres', 'SELECT count(*) FROM o WHERE u = 6000001'), '1',
	'synchronous_commit = off: a log-free commit keeps its row');

# ---------------------------------------------------------------------------
# 6. what a log-free commit flushes for
# ---------------------------------------------------------------------------

$r = run_counted(join("\n", map { "INSERT INTO s (v) VALUES ($_);" } 1 .. 10));
is($r->{log_free}, 10, 'inserts with a serial column are log-free');
is($r->{flushes}, 10, '... but flush the WAL, as nextval() may have logged ahead');
is($r->{positions}, 0, '... and keep no sequence position in the pool');

$r = run_counted(join("\n", map { "INSERT INTO x VALUES ($_, $_);" } 1 .. 10));
is($r->{log_free} . ' ' . $r->{entries}, '10 0',
	'inserts into a table with a hash index log no index roots');
is($r->{flushes}, 10, '... and flush their index WAL instead');
nvm_commit_and_crash($node, 'after_nvm_commit', 'INSERT INTO x VALUES (4242, 1);');
is( $node->safe_psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM x WHERE k = 4242'),
	'1', '... so the row is found through the hash index after a crash');

# ---------------------------------------------------------------------------
# 7. the WAL records of a tied commit, where commits are durable through the
#    WAL (a pool at its default place, durability auto) and copies replay
#    them (wal_level replica)
# ---------------------------------------------------------------------------

nvm_check_indexes($node, 'o', 'at the end');
$node->stop;

my ($tnode) = nvm_node('tied_records', pool_in_datadir => 1, pool_size => '64MB',
	durability => 'auto', init => { allows_streaming => 1 });
$tnode->append_conf('postgresql.conf', "autovacuum = off\n");
$tnode->start;
$tnode->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION pg_walinspect;
	CREATE TABLE h (id int PRIMARY KEY, note text);
	CREATE TABLE o (id int PRIMARY KEY, n int NOT NULL) USING nvm;
});

# nvm_records XID FROM: the WAL records of rmgr nvmam that transaction XID
# wrote from position FROM on, as "TYPE@LSN" (pg_walinspect), and the
# position of its commit record
sub nvm_records
{
	my ($xid, $from) = @_;
	my $end = $tnode->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	my $rows = $tnode->safe_psql('postgres', qq{
		SELECT resource_manager || ' ' || record_type || ' ' || start_lsn
		  FROM pg_get_wal_records_info('$from', '$end')
		 WHERE xid = '$xid'::xid AND resource_manager IN ('nvmam', 'Transaction')
		 ORDER BY start_lsn});
	my (@nvm, $commit);
	for my $row (split /\n/, $rows)
	{
		my ($rm, $type, $lsn) = split / /, $row;
		if ($rm eq 'Transaction') { $commit = $lsn if $type eq 'COMMIT'; next; }
		push @nvm, "$type\@$lsn";
	}
	return (\@nvm, $commit // '0/0');
}

# lsn_cmp A B: -1, 0 or 1 as position A is before, at or after B
sub lsn_cmp
{
	my ($a, $b) = @_;
	return $tnode->safe_psql('postgres', "SELECT sign('$a'::pg_lsn - '$b'::pg_lsn)");
}

my $from = $tnode->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my $xid = $tnode->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO h VALUES (1, 'tied');
	INSERT INTO o VALUES (1, 1);
	SELECT pg_current_xact_id();
	COMMIT;});
my ($recs, $commit) = nvm_records($xid, $from);
my @commits = grep { /^COMMIT@/ } @$recs;
is(scalar(@commits), 1, 'a tied commit writes one nvm COMMIT record (' . join(' ', @$recs) . ')');
is(lsn_cmp((split /@/, $commits[0] // '@0/0')[1], $commit), -1,
	'... before its PostgreSQL commit record (none after its nvm status)');

# A checkpoint whose cut comes between the tied commit's nvm record and its
# nvm status (the commit waits for a synchronous standby that never comes,
# after its commit record, before the status): the commit writes its COMMIT
# record again after the cut, as the checkpoint's files do not hold it and
# its record before the cut is not replayed after them.
$tnode->append_conf('postgresql.conf', "synchronous_standby_names = 'nobody'\n");
$tnode->reload;
$from = $tnode->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my $waiter = nvm_client_start($tnode, { in => q{
	BEGIN;
	INSERT INTO h VALUES (2, 'tied, waiting');
	INSERT INTO o VALUES (2, 2);
	SELECT 'xid ' || pg_current_xact_id();
	SELECT 'pid ' || pg_backend_pid();
	COMMIT;
	SELECT 'done';
} });
my ($wpid, $wxid);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (time < $deadline && !defined $wpid)
{
	for (nvm_pump_client($waiter))
	{
		$wxid = $1 if /^xid (\d+)/;
		$wpid = $1 if /^pid (\d+)/;
	}
	usleep(20_000);
}
ok($tnode->poll_query_until('postgres',
		"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE pid = $wpid"),
	'a tied commit waits for the synchronous standby, before its nvm status');
my $redo = $tnode->safe_psql('postgres', 'CHECKPOINT; SELECT redo_lsn FROM pg_control_checkpoint()');
$tnode->safe_psql('postgres', "SELECT pg_cancel_backend($wpid)");
my $done = 0;
while (time < $deadline && !$done)
{
	$done = grep { /^done/ } nvm_pump_client($waiter);
	usleep(20_000);
}
ok($done, '... and commits once its wait is cancelled')
  or diag("out: $waiter->{out}\nerr: $waiter->{err}");
$waiter->{in} .= "\\q\n";
nvm_pump_client($waiter);
($recs, $commit) = nvm_records($wxid, $from);
is(scalar(grep { /^COMMIT@/ && lsn_cmp((split /@/)[1], $redo) > 0 } @$recs), 1,
	'... after a checkpoint cut it writes its nvm COMMIT record again, after the cut ('
	  . join(' ', @$recs) . ", redo $redo)");
$tnode->append_conf('postgresql.conf', "synchronous_standby_names = ''\n");
$tnode->reload;

# A commit whose nvm status is final but which has not completed (its
# record is being flushed, here: it waits for a synchronous standby that
# never comes, after its status, before its completion is published).  A
# writer of the same row, and a row lock that would follow the row to its
# newest version (READ COMMITTED's SELECT FOR UPDATE), wait for it in the
# lock manager on its virtual transaction id, as heap's wait for the xid
# of a commit still waiting for its flush: no busy loop, and no row of a
# commit not yet acknowledged is returned.  Once the commit completes the
# writer updates, and the lock returns, its newest version.
$tnode->safe_psql('postgres', q{
	CREATE TABLE w (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	INSERT INTO w VALUES (1, 0);
});
$tnode->append_conf('postgresql.conf', "synchronous_standby_names = 'nobody'\n");
$tnode->reload;

# client_pid C: the pid C printed as "pid N" (the lines after it are left
# for the next nvm_pump_client)
sub client_pid
{
	my ($c) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my @lines = nvm_pump_client($c);
		while (defined(my $line = shift @lines))
		{
			next unless $line =~ /^pid (\d+)/;
			$c->{out} = join('', map { "$_\n" } @lines) . $c->{out};
			return $1;
		}
		usleep(20_000);
	}
	return undef;
}

# waits_on_vxid PID: true when PID is seen waiting on a virtual transaction
# id's lock within ten seconds
sub waits_on_vxid
{
	my ($pid) = @_;
	for (1 .. 100)
	{
		return 1 if $tnode->safe_psql('postgres',
			"SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity WHERE pid = $pid")
		  eq 'Lock/virtualxid';
		usleep(100_000);
	}
	return 0;
}

# held_commit WHAT SQL ADD: commits an update of w's row adding ADD, held
# by the synchronous standby after its status; runs SQL in another session
# (synchronous_commit = local, so its own commit is not held) and checks
# that it waits on the held commit's vxid; then lets the held commit go
# (its wait cancelled) and returns what the other session printed, once
# both are done
sub held_commit
{
	my ($what, $sql, $add) = @_;
	my $held = nvm_client_start($tnode, { in => qq{
	SELECT 'pid ' || pg_backend_pid();
	UPDATE w SET v = v + $add WHERE id = 1;
	SELECT 'done';
} });
	my $hpid = client_pid($held);
	ok($tnode->poll_query_until('postgres',
			"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE pid = $hpid"),
		"$what: the commit of an nvm row waits for the synchronous standby, its status final");
	my $before = $tnode->safe_psql('postgres', 'SELECT v FROM w WHERE id = 1');
	my $other = nvm_client_start($tnode, { in => qq{
	SET synchronous_commit = local;
	SELECT 'pid ' || pg_backend_pid();
	$sql;
	SELECT 'done';
} });
	ok(waits_on_vxid(client_pid($other)), "$what waits on its vxid in the lock manager");
	is($tnode->safe_psql('postgres', 'SELECT v FROM w WHERE id = 1'), $before,
		"$what: a read does not see the held commit's row yet");
	$tnode->safe_psql('postgres', "SELECT pg_cancel_backend($hpid)");
	my (%done, $out);
	my $until = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $until && keys(%done) < 2)
	{
		for my $c ([ held => $held ], [ other => $other ])
		{
			for (nvm_pump_client($c->[1]))
			{
				$done{ $c->[0] } = 1 if /^done/;
				$out .= "$_\n" if $c->[0] eq 'other';
			}
		}
		usleep(20_000);
	}
	is(join(' ', sort keys %done), 'held other', "$what: both finish once the commit completes");
	$_->{in} .= "\\q\n", nvm_pump_client($_) for ($held, $other);
	return $out // '';
}

held_commit('an update of its row', 'UPDATE w SET v = v + 10 WHERE id = 1', 1);
is($tnode->safe_psql('postgres', 'SELECT v FROM w WHERE id = 1'), '11',
	'... the update is applied to the committed row');
like(held_commit('a row lock of its row (READ COMMITTED, FOR UPDATE)',
		q{BEGIN; SELECT 'locked ' || v FROM w WHERE id = 1 FOR UPDATE; COMMIT}, 100),
	qr/^locked 111$/m, '... the lock returns the committed row (READ COMMITTED follows it)');
$tnode->append_conf('postgresql.conf', "synchronous_standby_names = ''\n");
$tnode->reload;

# a power loss (a new boot): the pool is rebuilt from the checkpoint's files
# and the WAL after it, with both tied commits
$tnode->stop('immediate');
$tnode->append_conf('postgresql.conf', "nvm.debug_boot_id = 'tied-records-power-loss'\n");
$tnode->start;
is($tnode->safe_psql('postgres', 'SELECT count(*) FROM h') . ' '
	  . $tnode->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM o'),
	'2 1,2', 'after a power loss both tied commits have both halves');
$tnode->stop;
done_testing();

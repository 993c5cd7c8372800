# regress/t/035_crash_every_step.pl
#	  No moment without a way back: a crash of the operating system at each
#	  step of a checkpoint, a merge of checkpoint files, a start and a
#	  clean stop finds every acknowledged commit in the pool rebuilt from
#	  the checkpoint files and the WAL.
#
#	  Why: on ordinary storage (a page-cache file, tmpfs) a crash of the
#	  operating system can tear or lose the pool at any instant, and the
#	  pool is then rebuilt from the checkpoint files and the WAL after
#	  them; a checkpoint, a merge, a start and a stop each rewrite those
#	  files, and a step done in the wrong order (a manifest naming files
#	  already removed, the marks of changed records dropped before the
#	  files holding them are named, a rebuild taken for done before its
#	  files are loaded, files trusted beyond the WAL) loses
#	  acknowledged commits or serves rows the WAL never had only if the
#	  crash falls between the two steps.  So the test crashes at every
#	  crash point of the checkpoint files that nvm.debug_crash_point has
#	  (README.md lists them): capture_after_cut, capture_after_files,
#	  capture_after_manifest, merge_after_files, merge_after_manifest,
#	  recovery_end_after_capture, rebuild_mid_load, stop_before_capture,
#	  stop_after_capture; and, without a crash point, right after a
#	  checkpoint (a start with no nvm record to replay), after a clean
#	  stop and after a promotion.
#
#	  What it does not cover: its crash of the operating system removes or
#	  tears the pool alone; every write to the checkpoint files and the WAL
#	  that reached the kernel stays.  A checkpoint file or manifest renamed
#	  into place without its fsync is not lost here (the files' own persist
#	  order is stated in redo/nvm_ckptfile.h).
#
#	  The pool is at its default place (pg_nvm/pool, a page-cache file)
#	  with nvm.durability at its default (auto: commits durable through the
#	  WAL), wal_level replica and restart_after_crash off.  Two clients move
#	  money between accounts and log each transfer in an insert-only
#	  history table, echoing "ack ID" only once its COMMIT succeeded; a
#	  prepared transaction (an update, an insert and a FOR UPDATE lock in a
#	  table of its own) is held across several steps and committed later;
#	  a table is created, emptied and refilled, and dropped on the way.
#
#	  Each step stops the server where it is (the PANIC of an
#	  nvm.debug_crash_point, or every process killed), then "crashes the
#	  operating system": the pool is removed, or each of its 4 KiB pages is
#	  taken at random from a copy made earlier in the step or from the file
#	  at the crash, and the next start sees a new boot (nvm.debug_boot_id),
#	  so the pool is rebuilt from the checkpoint files and the WAL after
#	  them.  The steps:
#	   - a checkpoint's capture: after its cut; after its files, before its
#	     manifest; after its manifest, before the files it no longer names
#	     are removed; after its files with the server alone crashing (the
#	     pool kept, its changes still marked), then the next start's
#	     capture at the end of recovery, then the operating system;
#	   - a merge of checkpoint files (the history given as many rows again
#	     as it holds, so that its delta outgrows half its base): after the
#	     merged files, before the manifest; after the manifest, before the
#	     merged files are removed;
#	   - a merge of a table's deltas alone (a ninth small delta of table
#	     dm, with rows updated, deleted and inserted since its base): the
#	     base is not rewritten and the deltas become one, which keeps the
#	     deleted rows deleted; then the same two crash points;
#	   - a start: after the capture at the end of crash recovery, before the
#	     end-of-recovery checkpoint; a recovery that replays no nvm record
#	     (a crash right after a checkpoint), whose first access loads the
#	     files, cut short with half of them loaded, begun again at the next
#	     start in the same boot, then a checkpoint capturing records of
#	     that load; a rebuild cut short with half its files loaded, begun
#	     again in the same boot; a rebuild cut short, then the operating
#	     system crashing again;
#	   - a clean stop: before and after its last capture (the PANIC leaves
#	     no shutdown checkpoint: the next start is crash recovery); a clean
#	     stop, then the pool gone (no recovery: the files are loaded at the
#	     first access);
#	   - the promotion of a standby made from a cold copy, with its pool at
#	     its default place and the same durability, and a crash of its
#	     operating system right after (then it takes writes).
#	  After each, the rebuilt pool serves every account with the total
#	  conserved, every acknowledged transfer, index and sequential scans
#	  agreeing, amcheck (heapallindexed) and nvm_verify_table clean, the
#	  prepared transaction still prepared (its rows invisible, its updated
#	  and FOR UPDATE rows still locked), and the table created, emptied
#	  and dropped as it was.
#
#	  Checkpoint files newer than the WAL (the data directory of an earlier
#	  moment, whose WAL after its checkpoint holds nvm commits or none,
#	  with the current checkpoint files) make the start stop with a FATAL
#	  that names the WAL missing, instead of serving rows the WAL lacks.
use strict;
use warnings;

use File::Copy;
use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use NvmTest;

my $ACCOUNTS = 2000;
my $INITIAL = 1000;
my $TOTAL = $ACCOUNTS * $INITIAL;

my ($node, $pool) = nvm_node('crash_every_step', pool_in_datadir => 1, pool_size => '64MB',
	durability => 'auto', init => { allows_streaming => 1 });
$node->append_conf('postgresql.conf', qq{
autovacuum = off
restart_after_crash = off
max_prepared_transactions = 5
log_checkpoints = on
checkpoint_timeout = '1h'
wal_keep_size = '256MB'
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL) USING nvm;
	CREATE INDEX accounts_balance ON accounts (balance);
	INSERT INTO accounts SELECT g, $INITIAL FROM generate_series(1, $ACCOUNTS) g;
	CREATE TABLE history (id bigint PRIMARY KEY, from_id int, to_id int, amount int) USING nvm;
	CREATE TABLE reserve (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	INSERT INTO reserve VALUES (1, 100), (2, 200);
});
$node->safe_psql('postgres', 'CHECKPOINT');

# ---------------------------------------------------------------------------
# the load: clients that echo "ack ID" only after their COMMIT succeeded
# ---------------------------------------------------------------------------
my %acked;
my @clients;
my $load_round = 0;

# load_start: two clients, each with transfers enough for a step
sub load_start
{
	$load_round++;
	@clients = ();
	foreach my $n (1 .. 2)
	{
		# the transfers are not logged: the server's log, which the test's
		# log takes in, would hold every statement of every step
		my $c = { n => $n, in => "SET log_statement = 'none';\n" };
		foreach my $i (1 .. 20000)
		{
			my $id = $load_round * 10_000_000 + $n * 1_000_000 + $i;
			my $from = 1 + int(rand($ACCOUNTS));
			my $to = 1 + int(rand($ACCOUNTS));
			my $amount = 1 + int(rand(100));
			# the lower id first: no deadlock, so a COMMIT that returns no
			# error committed
			my @moves = sort { $a->[0] <=> $b->[0] } ([ $from, -$amount ], [ $to, $amount ]);
			$c->{in} .= "BEGIN;\n"
			  . "UPDATE accounts SET balance = balance + $moves[0][1] WHERE id = $moves[0][0];\n"
			  . "UPDATE accounts SET balance = balance + $moves[1][1] WHERE id = $moves[1][0];\n"
			  . "INSERT INTO history VALUES ($id, $from, $to, $amount);\n"
			  . "COMMIT;\n"
			  . "\\if :ERROR\n\\else\n\\echo ack $id\n\\endif\n";
		}
		push @clients, nvm_client_start($node, $c);
	}
	return;
}

sub pump_all
{
	foreach my $c (@clients)
	{
		foreach my $line (nvm_pump_client($c))
		{
			$acked{$1} = 1 if $line =~ /^ack (\d+)$/;
		}
	}
	return;
}

# run_for SECONDS: pumps the clients for that long
sub run_for
{
	my ($seconds) = @_;
	my $end = time + $seconds;
	while (time < $end)
	{
		pump_all();
		usleep(10_000);
	}
	return;
}

# load_end: the clients ended, and the acknowledgements they printed until
# then counted (once the server is gone, no more can come)
sub load_end
{
	my $deadline = time + 0.5;
	while (time < $deadline && grep { !$_->{dead} } @clients)
	{
		pump_all();
		usleep(20_000);
	}
	foreach my $c (@clients)
	{
		eval { $c->{h}->kill_kill; };
		$acked{$1} = 1 while $c->{out} =~ s/^ack (\d+)\n//m;
	}
	@clients = ();
	return;
}

# ---------------------------------------------------------------------------
# the crash points, the server stopping by itself, the operating system
# ---------------------------------------------------------------------------

# crash_point POINT: sets nvm.debug_crash_point for the next start, or for
# the running server (the worker reads it between two looks)
sub crash_point
{
	my ($point) = @_;
	$node->append_conf('postgresql.conf', "nvm.debug_crash_point = '$point'\n");
	if (defined $node->{_pid})
	{
		$node->reload;
		usleep(300_000);
	}
	return;
}

# wait_down NAME: waits until the server stopped by itself (a PANIC with
# restart_after_crash off); true if it did
sub wait_down
{
	my ($name) = @_;
	my $pid = $node->{_pid};
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	usleep(50_000) while time < $deadline && kill(0, $pid);
	my $down = !kill(0, $pid);
	ok($down, "$name: the server stopped");
	$node->{_pid} = undef if $down;
	return $down;
}

my $image_a = $node->basedir . '/pool.image-a';
my $image_b = $node->basedir . '/pool.image-b';

# image_a: a copy of the pool while it runs, for a torn pool later
sub image_a
{
	copy($pool, $image_a) or die "cannot copy $pool: $!";
	return;
}

# tear_pool: the pool as a crash of the operating system can leave it,
# from image A and the file at the crash; returns (pages differing, from A)
sub tear_pool
{
	copy($pool, $image_b) or die "cannot copy $pool: $!";
	return nvm_mix_pages($image_a, $image_b, $pool);
}

# os_crash NAME HOW: the operating system crashes with the server stopped:
# the pool is removed (HOW 'gone') or torn ('torn'), the next start sees a
# new boot, and no crash point is set any more
my $boot = 0;
sub os_crash
{
	my ($name, $how) = @_;
	if ($how eq 'gone')
	{
		unlink $pool or die "cannot remove $pool: $!";
	}
	else
	{
		my ($differ, $from_a) = tear_pool();
		ok($from_a > 0 && $from_a < $differ,
			"$name: $differ pages of the pool differ from the copy made earlier, $from_a taken from it");
	}
	$boot++;
	$node->append_conf('postgresql.conf',
		"nvm.debug_boot_id = 'boot-$boot'\nnvm.debug_crash_point = 'none'\n");
	return;
}

# ---------------------------------------------------------------------------
# what a served pool must hold
# ---------------------------------------------------------------------------
my $prepared = 0;			# the prepared transaction is held
my $reserve_before = '2|1:100,2:200';
my $reserve_after = '3|1:93,2:200,3:7';
my $scratch = undef;		# the digest of table scratch, if it exists
my $dm = undef;				# the digest of table dm, once it exists

sub reserve_rows
{
	return $node->safe_psql('postgres',
		q{SELECT count(*) || '|' || string_agg(id || ':' || v, ',' ORDER BY id) FROM reserve});
}

sub dm_digest
{
	return $node->safe_psql('postgres',
		q{SELECT count(*) || '|' || md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM dm});
}

sub scratch_digest
{
	return $node->safe_psql('postgres',
		q{SELECT count(*) || '|' || md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM scratch});
}

# served_exactly NAME: every account and the total, every acknowledged
# transfer, scans agreeing, the integrity check and amcheck clean, the
# prepared transaction and the table scratch as they were
sub served_exactly
{
	my ($name) = @_;
	is($node->safe_psql('postgres', 'SELECT state FROM nvm_pool_stats()'), 'attached',
		"$name: the pool is attached");
	is($node->safe_psql('postgres', q{SELECT count(*) || '|' || sum(balance) FROM accounts}),
		"$ACCOUNTS|$TOTAL", "$name: every account, and the total conserved");
	# the ids the history holds, compared here (a statement naming every
	# acknowledged id would fill the server's log)
	my %have = map { $_ => 1 } split /\n/, $node->safe_psql('postgres', 'SELECT id FROM history');
	my @missing = sort { $a <=> $b } grep { !$have{$_} } keys %acked;
	is(scalar @missing, 0, "$name: every acknowledged transfer is there (" . scalar(keys %acked) . ')')
	  or diag('missing: ' . join(' ', @missing[0 .. ($#missing < 9 ? $#missing : 9)]));
	my $d = nvm_scan_digests($node, 'accounts', 'id', "id || ':' || balance");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans of accounts agree");
	my $h = nvm_scan_digests($node, 'history', 'id', "id || ':' || amount");
	is($h->{index}, $h->{seq}, "$name: index and sequential scans of history agree");
	nvm_verify_clean($node, 'accounts', $name);
	nvm_verify_clean($node, 'history', $name);
	nvm_check_indexes($node, 'accounts', $name);
	nvm_check_indexes($node, 'history', $name);
	if ($prepared)
	{
		is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'held'}),
			'1', "$name: the prepared transaction is still prepared");
		is(reserve_rows(), $reserve_before, "$name: its rows are not visible yet");
		my ($rc, $out, $err) = $node->psql('postgres',
			q{SET lock_timeout = '100ms'; UPDATE reserve SET v = 0 WHERE id = 1});
		like($err, qr/lock timeout/, "$name: a writer of the row it updated waits");
		($rc, $out, $err) = $node->psql('postgres',
			q{SET lock_timeout = '100ms'; UPDATE reserve SET v = 0 WHERE id = 2});
		like($err, qr/lock timeout/, "$name: a writer of the row it locked FOR UPDATE waits");
	}
	else
	{
		nvm_verify_clean($node, 'reserve', $name);
	}
	if (defined $scratch)
	{
		is(scratch_digest(), $scratch, "$name: the table scratch is as it was");
		my $s = nvm_scan_digests($node, 'scratch', 'id', "id || ':' || v");
		is($s->{index}, $s->{seq}, "$name: index and sequential scans of scratch agree");
		nvm_verify_clean($node, 'scratch', $name);
	}
	else
	{
		is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relname = 'scratch'}),
			'0', "$name: the table scratch is gone");
	}
	if (defined $dm)
	{
		is(dm_digest(), $dm, "$name: the table dm is as it was");
		nvm_verify_clean($node, 'dm', $name);
	}
	return;
}

# rebuilt NAME HOW: starts the server after a crash of the operating
# system that left the pool HOW ('gone', 'torn'), which is rebuilt, and
# checks what it serves
sub rebuilt
{
	my ($name, $how) = @_;
	my $offset = -s $node->logfile;
	ok($node->start(fail_ok => 1), "$name: the server starts");
	my $log = slurp_file($node->logfile, $offset);
	my $state = $how eq 'gone' ? 'gone' : 'perhaps torn';
	like($log,
		qr/nvm pool "\Q$pool\E" is \Q$state\E after a crash of the operating system, a power loss or a reboot: it is rebuilt from the WAL/,
		"$name: the pool is rebuilt from the checkpoint files and the WAL");
	unlike($log, qr/as the image of the pool/, "$name: no start logs an image of the pool");
	served_exactly($name);
	return;
}

# step NAME: a step begins: the load runs, and a copy of the pool is made
sub step_begin
{
	load_start();
	run_for(0.6);
	image_a();
	run_for(0.4);
	return;
}

# crashed_at NAME POINT OFFSET: the log says the server stopped at POINT
sub crashed_at
{
	my ($name, $what, $offset) = @_;
	like(slurp_file($node->logfile, $offset), qr/PANIC:  nvm.debug_crash_point: crashing \Q$what\E/,
		"$name: the server crashed $what");
	return;
}

# ---------------------------------------------------------------------------
# a checkpoint's capture
# ---------------------------------------------------------------------------
my @capture = (
	[ 'capture_after_cut', 'after the cut of a checkpoint of the nvm pool', 'torn' ],
	[ 'capture_after_files', 'after the files of a checkpoint of the nvm pool, before its manifest', 'gone' ],
	[ 'capture_after_manifest', 'after the manifest of a checkpoint of the nvm pool', 'torn' ]);
foreach my $c (@capture)
{
	my ($point, $what, $how) = @$c;
	my $name = "a checkpoint, $point";
	if ($point eq 'capture_after_files')
	{
		# a table made for the steps, captured whole for the first time
		# by this checkpoint, and a prepared transaction held from here
		$node->safe_psql('postgres', q{
			CREATE TABLE scratch (id int PRIMARY KEY, v text) USING nvm;
			INSERT INTO scratch SELECT g, md5(g::text) FROM generate_series(1, 500) g;
			BEGIN;
			UPDATE reserve SET v = v - 7 WHERE id = 1;
			INSERT INTO reserve VALUES (3, 7);
			SELECT * FROM reserve WHERE id = 2 FOR UPDATE;
			PREPARE TRANSACTION 'held';
		});
		$prepared = 1;
		$scratch = scratch_digest();
		# PostgreSQL 18 (18.6) loses a transaction prepared after the last
		# completed checkpoint when the server crashes in a checkpoint that
		# wrote its state file (heap's too): recovery takes the file for a
		# "future" one, removes it under a wrong name (an epoch of
		# FFFFFFFF), then skips the PREPARE record because the file is
		# still there.  So on 18 a checkpoint completes after the PREPARE
		# (doc/limitations.md).
		$node->safe_psql('postgres', 'CHECKPOINT') if $node->pg_version >= 18;
	}
	elsif ($point eq 'capture_after_manifest')
	{
		# emptied and refilled: its next capture is a base again
		$node->safe_psql('postgres', q{
			TRUNCATE scratch;
			INSERT INTO scratch SELECT g, 'again ' || g FROM generate_series(100, 400) g;
			VACUUM accounts;
		});
		$scratch = scratch_digest();
	}
	step_begin();
	crash_point($point);
	my $offset = -s $node->logfile;
	run_for(0.3);
	$node->psql('postgres', 'CHECKPOINT');
	wait_down($name);
	load_end();
	crashed_at($name, $what, $offset);
	os_crash($name, $how);
	rebuilt($name, $how);
}

# a checkpoint's capture cut short after its files, the server alone
# crashing (the pool kept): the next start in the same boot goes on with
# the pool, whose changes since the last manifest are still marked, and
# its capture at the end of recovery writes them; the operating system
# crashing after that start finds them in the files (the redo point of the
# end-of-recovery checkpoint is past their WAL)
{
	my $name = 'a checkpoint, capture_after_files, the server alone';
	step_begin();
	crash_point('capture_after_files');
	my $offset = -s $node->logfile;
	run_for(0.3);
	$node->psql('postgres', 'CHECKPOINT');
	wait_down($name);
	load_end();
	crashed_at($name, 'after the files of a checkpoint of the nvm pool, before its manifest', $offset);
	crash_point('none');
	$offset = -s $node->logfile;
	ok($node->start(fail_ok => 1), "$name: the next start in the same boot starts");
	my $log = slurp_file($node->logfile, $offset);
	unlike($log, qr/it is rebuilt from the WAL/, "$name: the pool is kept");
	like($log, qr/checkpoint of the pool at the end of recovery/, "$name: the end of recovery captures the pool");
	served_exactly("$name, the pool kept");
	nvm_crash($node);
	os_crash("$name, then the operating system", 'gone');
	rebuilt("$name, then the operating system", 'gone');
}

# crash_step NAME POINT WHAT HOW TRIGGER: a step under the load with the
# crash point POINT set, TRIGGER (a sub) making the server reach it; the
# server stops WHAT, the operating system crashes leaving the pool HOW, and
# the rebuilt pool serves every acknowledged commit
sub crash_step
{
	my ($name, $point, $what, $how, $trigger) = @_;
	step_begin();
	crash_point($point);
	my $offset = -s $node->logfile;
	$trigger->();
	run_for(0.3);
	wait_down($name);
	load_end();
	crashed_at($name, $what, $offset);
	os_crash($name, $how);
	rebuilt($name, $how);
	return;
}

# ---------------------------------------------------------------------------
# a merge of checkpoint files: before each step the history gets as many
# rows again as it holds (negative ids, no transfer's), so its delta at
# the step's checkpoint outgrows half its base however fast the clients
# ran, and the worker merges its files right after that checkpoint
# ---------------------------------------------------------------------------
my @merge = (
	[ 'merge_after_files', 'after the files of a merge of nvm checkpoint files, before its manifest', 'gone' ],
	[ 'merge_after_manifest', 'after the manifest of a merge of nvm checkpoint files, before the merged files go', 'torn' ]);
foreach my $c (@merge)
{
	my ($point, $what, $how) = @$c;
	my $name = "a merge, $point";
	if ($point eq 'merge_after_files')
	{
		# the table scratch goes with a checkpoint's files
		$node->safe_psql('postgres', 'DROP TABLE scratch');
		$scratch = undef;
	}
	my $k = $point eq 'merge_after_files' ? 1 : 2;
	$node->safe_psql('postgres', qq{
		INSERT INTO history
		SELECT -($k * 10000000 + g), 1, 1, 0
		FROM generate_series(1, (SELECT count(*) + 1000 FROM history)) g;
	});
	crash_step($name, $point, $what, $how, sub { $node->psql('postgres', 'CHECKPOINT') });
}

# ---------------------------------------------------------------------------
# a merge of deltas: past 8 deltas that hold less than half their base, the
# worker merges the deltas alone into one delta, which keeps their
# tombstones (rows deleted since the base), and the base stays; then a
# crash of the operating system at each step of such a merge
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', q{
	CREATE TABLE dm (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	INSERT INTO dm SELECT g, 0 FROM generate_series(1, 20000) g;
});
$node->safe_psql('postgres', 'CHECKPOINT');
$dm = dm_digest();
my $dm_round = 0;

# dm_files: dm's checkpoint files, "base" and "delta" suffixes by name
sub dm_files
{
	my $key = $node->safe_psql('postgres',
		q{SELECT d.oid || '_' || pg_relation_filenode('dm') FROM pg_database d WHERE datname = 'postgres'});
	my $dir = $node->data_dir . '/pg_nvm/checkpoint';
	opendir(my $dh, $dir) or die "cannot open $dir: $!";
	my @f = sort grep { /^\d+_${key}_\d+\.\d+\.(base|delta)$/ } readdir($dh);
	closedir($dh);
	return @f;
}

# dm_named: the files of dm the manifest names (those on disk that no
# merge is about to remove: waits until a merge after the last checkpoint
# is done, that is until the count of files stops changing)
sub dm_named
{
	my @f = dm_files();
	for (1 .. 10)
	{
		usleep(200_000);
		my @g = dm_files();
		last if "@g" eq "@f";
		@f = @g;
	}
	return @f;
}

# dm_delta: a few rows of dm updated, one deleted, one inserted, then a
# checkpoint: one more delta of dm
sub dm_delta
{
	$dm_round++;
	my $del = $dm_round * 11;
	my $ins = 100000 + $dm_round;
	$node->safe_psql('postgres', qq{
		UPDATE dm SET v = v + 1 WHERE id % 1000 = $dm_round;
		DELETE FROM dm WHERE id = $del;
		INSERT INTO dm VALUES ($ins, $dm_round);
	});
	$dm = dm_digest();
	$node->safe_psql('postgres', 'CHECKPOINT');
	return;
}

{
	my $name = 'a merge of deltas';
	my @before = dm_named();
	my ($base) = grep { /\.base$/ } @before;
	ok(defined $base, "$name: dm has a base file");
	dm_delta() while scalar(grep { /\.delta$/ } dm_named()) < 8;
	my $offset = -s $node->logfile;
	dm_delta();
	my @after = dm_named();
	like(slurp_file($node->logfile, $offset), qr/nvm: merged the checkpoint files of \d+ nvm tables/,
		"$name: the ninth delta's checkpoint is followed by a merge");
	is(join(' ', grep { /\.base$/ } @after), $base, "$name: the base of dm is not rewritten");
	is(scalar(grep { /\.delta$/ } @after), 1, "$name: its deltas are merged into one");
	served_exactly("$name, the pool kept");
	nvm_crash($node);
	os_crash("$name, then the operating system", 'gone');
	rebuilt("$name, then the operating system", 'gone');
}

foreach my $c (@merge)
{
	my ($point, $what, $how) = @$c;
	my $name = "a merge of deltas, $point";
	dm_delta() while scalar(grep { /\.delta$/ } dm_named()) < 8;
	crash_step($name, $point, $what, $how, \&dm_delta);
}

# ---------------------------------------------------------------------------
# a start
# ---------------------------------------------------------------------------

# save_data_directory NAME: a copy of the stopped server's data directory
# but its pool, for the end of the test
sub save_data_directory
{
	my ($name) = @_;
	my $dir = $node->basedir . "/$name";
	PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir, $dir,
		filterfn => sub { $_[0] ne 'pg_nvm/pool' });
	return $dir;
}

# the capture at the end of crash recovery, before its checkpoint
my $earlier_with_records;
{
	my $name = 'a start, recovery_end_after_capture';
	step_begin();
	nvm_crash($node);
	load_end();
	# a moment whose WAL after its checkpoint holds nvm commits
	$earlier_with_records = save_data_directory('earlier_with_records');
	crash_point('recovery_end_after_capture');
	my $offset = -s $node->logfile;
	ok(!$node->start(fail_ok => 1), "$name: the start after a crash of the server crashes");
	crashed_at($name, 'after the capture of the nvm pool at the end of recovery', $offset);
	os_crash($name, 'torn');
	rebuilt($name, 'torn');
}

# a crash right after a checkpoint: recovery replays no nvm record, and
# the first access loads the files; that load cut short, then the next
# start in the same boot
my $earlier_without_records;
{
	my $name = 'a start with no nvm record after the checkpoint';
	step_begin();
	load_end();
	$node->safe_psql('postgres', 'CHECKPOINT');
	nvm_crash($node);
	$earlier_without_records = save_data_directory('earlier_without_records');
	os_crash($name, 'gone');
	crash_point('rebuild_mid_load');
	my $offset = -s $node->logfile;
	# the start may end before or after the server is ready
	$node->start(fail_ok => 1);
	if (defined $node->{_pid})
	{
		wait_down($name);
	}
	else
	{
		ok(1, "$name: the server stopped");
	}
	crashed_at($name, 'with half the nvm checkpoint files loaded', $offset);
	unlike(slurp_file($node->logfile, $offset), qr/nvm: loaded the checkpoint files/,
		"$name: the load at the first access was cut short");
	crash_point('none');
	$offset = -s $node->logfile;
	ok($node->start(fail_ok => 1), "$name: the next start in the same boot starts");
	my $log = slurp_file($node->logfile, $offset);
	like($log,
		qr/the rebuild of nvm pool "\Q$pool\E" stopped before its checkpoint files were loaded: it starts again from them/,
		"$name: the next start begins the rebuild again");
	like($log, qr/database system was not properly shut down/,
		"$name: ... after a crash that followed the end of recovery");
	served_exactly("$name, begun again");
	like(slurp_file($node->logfile, $offset),
		qr/loaded the checkpoint files of \d+ nvm tables .* into the rebuilt pool/,
		"$name: the files are loaded at the first access");
	# the next checkpoint captures a record of that load (the prepared
	# transaction's, loaded on top), and the next rebuild still has it
	step_begin();
	$node->safe_psql('postgres', 'CHECKPOINT');
	nvm_crash($node);
	load_end();
	os_crash("$name, then a checkpoint", 'torn');
	rebuilt("$name, then a checkpoint", 'torn');
}

# a rebuild cut short with half its files loaded: the next start in the
# same boot begins it again
{
	my $name = 'a start, rebuild_mid_load';
	step_begin();
	nvm_crash($node);
	load_end();
	os_crash($name, 'gone');
	crash_point('rebuild_mid_load');
	my $offset = -s $node->logfile;
	ok(!$node->start(fail_ok => 1), "$name: the rebuild crashes");
	crashed_at($name, 'with half the nvm checkpoint files loaded', $offset);
	crash_point('none');
	$offset = -s $node->logfile;
	ok($node->start(fail_ok => 1), "$name: the next start in the same boot starts");
	like(slurp_file($node->logfile, $offset),
		qr/the rebuild of nvm pool "\Q$pool\E" stopped before its checkpoint files were loaded: it starts again from them/,
		"$name: the next start begins the rebuild again");
	served_exactly("$name, begun again");
}

# a rebuild cut short, then the operating system crashing again
{
	my $name = 'a start, rebuild_mid_load then a crash of the operating system';
	step_begin();
	nvm_crash($node);
	load_end();
	os_crash($name, 'gone');
	crash_point('rebuild_mid_load');
	my $offset = -s $node->logfile;
	ok(!$node->start(fail_ok => 1), "$name: the rebuild crashes");
	crashed_at($name, 'with half the nvm checkpoint files loaded', $offset);
	# the pool of the rebuild, torn: each page as loaded or never written
	open(my $fh, '>', $image_a) or die "cannot create $image_a: $!";
	close $fh;
	truncate($image_a, -s $pool) or die "cannot extend $image_a: $!";
	os_crash($name, 'torn');
	rebuilt($name, 'torn');
}

# ---------------------------------------------------------------------------
# a clean stop
# ---------------------------------------------------------------------------
my @stop = (
	[ 'stop_before_capture', 'at a clean stop, before the last capture of the nvm pool', 'gone' ],
	[ 'stop_after_capture', 'at a clean stop, after the last capture of the nvm pool', 'torn' ]);
foreach my $c (@stop)
{
	my ($point, $what, $how) = @$c;
	my $name = "a clean stop, $point";
	if ($point eq 'stop_after_capture')
	{
		# the prepared transaction commits
		$node->safe_psql('postgres', q{COMMIT PREPARED 'held'});
		$prepared = 0;
		is(reserve_rows(), $reserve_after, "$name: the prepared transaction committed");
		$reserve_before = $reserve_after;
	}
	step_begin();
	crash_point($point);
	my $offset = -s $node->logfile;
	my $pid = $node->{_pid};
	$node->stop('fast', fail_ok => 1);
	ok(nvm_wait_gone($pid), "$name: the server stopped");
	$node->{_pid} = undef;
	load_end();
	crashed_at($name, $what, $offset);
	os_crash($name, $how);
	$offset = -s $node->logfile;
	rebuilt($name, $how);
	like(slurp_file($node->logfile, $offset), qr/database system was not properly shut down/,
		"$name: the start after it is crash recovery");
}

# a clean stop, then the pool gone: no recovery, the files loaded at the
# first access
{
	my $name = 'a clean stop, then the pool gone';
	step_begin();
	$node->stop('fast');
	load_end();
	os_crash($name, 'gone');
	my $offset = -s $node->logfile;
	rebuilt($name, 'gone');
	my $log = slurp_file($node->logfile, $offset);
	unlike($log, qr/database system was not properly shut down/, "$name: the start is no recovery");
	like($log, qr/loaded the checkpoint files of \d+ nvm tables .* into the rebuilt pool/,
		"$name: the files are loaded at the first access");
}

# ---------------------------------------------------------------------------
# checkpoint files newer than the WAL: the data directory of an earlier
# moment (whose WAL after its checkpoint holds nvm commits, or none) with
# the current checkpoint files
# ---------------------------------------------------------------------------
step_begin();
$node->safe_psql('postgres', 'CHECKPOINT');
nvm_crash($node);
load_end();
my $current = $node->basedir . '/current';
rename($node->data_dir, $current) or die "cannot move the data directory: $!";
foreach my $earlier ([ 'with nvm commits after its checkpoint', $earlier_with_records ],
	[ 'with no nvm record after its checkpoint', $earlier_without_records ])
{
	my ($what, $dir) = @$earlier;
	my $name = "checkpoint files newer than the WAL, $what";
	rmtree($node->data_dir);
	PostgreSQL::Test::RecursiveCopy::copypath($dir, $node->data_dir);
	rmtree($node->data_dir . '/pg_nvm/checkpoint');
	PostgreSQL::Test::RecursiveCopy::copypath("$current/pg_nvm/checkpoint",
		$node->data_dir . '/pg_nvm/checkpoint');
	chmod 0700, $node->data_dir;
	$boot++;
	$node->append_conf('postgresql.conf', "nvm.debug_boot_id = 'boot-$boot'\n");
	my $offset = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "$name: the start is refused");
	like(nvm_fatal_text($node, $offset),
		qr/FATAL:  could not rebuild nvm pool "\Q$pool\E": its checkpoint files are as of WAL position [0-9A-F\/]+, but the WAL ends at [0-9A-F\/]+\n.*DETAIL:  The WAL that the checkpoint files follow is missing\./,
		"$name: the FATAL names the WAL missing");
	$node->stop('immediate') if $started;
}
rmtree($node->data_dir);
rename($current, $node->data_dir) or die "cannot move the data directory back: $!";
os_crash('the current data directory again', 'gone');
rebuilt('the current data directory again', 'gone');

# ---------------------------------------------------------------------------
# the promotion of a standby (made from a cold copy, with its pool at its
# default place and the same durability), and a crash of its operating
# system right after
# ---------------------------------------------------------------------------
{
	my $name = 'a promoted standby';
	$node->stop('fast');
	$node->backup_fs_cold('cold');
	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($node, 'cold', has_streaming => 1);
	$standby->append_conf('postgresql.conf', "hot_standby = on\n");
	$node->start;
	$standby->start;
	load_start();
	run_for(1.5);
	load_end();
	$node->wait_for_catchup($standby, 'replay', $node->lsn('flush'));
	my $offset = -s $standby->logfile;
	$standby->promote;
	$node->stop('immediate');
	# from here on the promoted standby is the server
	$node = $standby;
	$pool = $standby->data_dir . '/pg_nvm/pool';
	like(slurp_file($node->logfile, $offset), qr/checkpoint of the pool at the end of recovery/,
		"$name: the promotion captures the pool");
	nvm_crash($node);
	os_crash($name, 'gone');
	rebuilt($name, 'gone');
	unlike(slurp_file($node->logfile, $offset), qr/as the image of the pool/,
		"$name: no image of the pool is logged");
	load_start();
	run_for(0.5);
	load_end();
	served_exactly("$name, writable");
	$node->stop('fast');
}

done_testing();

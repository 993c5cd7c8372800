# regress/t/020_basebackup.pl
#	  Online base backups carry nvm rows.  A cluster with its pool at the
#	  default place (pg_nvm/pool, inside the data directory, so
#	  pg_basebackup copies it byte by byte while backends write it) holds
#	  200,000 accounts of 1,000 each; four clients move money between them
#	  (the total is constant) while pg_basebackup takes backups in plain and
#	  tar format, with -X stream and -X fetch (wal_keep_size keeps the WAL
#	  that -X fetch copies at the end).  Every restored copy rebuilds
#	  its pool from the WAL (the torn copy of the pool is replaced) and
#	  holds every account, the total kept, index and sequential scans
#	  agreeing, amcheck and the integrity checks clean, across a restart.
#	  A backup taken without load holds exactly the rows of its end, and a
#	  transaction prepared before it with its row lock and its row.  A
#	  streaming standby made from a backup serves hot-standby reads of nvm
#	  rows that keep the total, catches up, and is promoted; archive
#	  recovery replays to the end of the archive; point-in-time recovery to
#	  a named restore point, to a time taken under load and to the xid of
#	  a transaction with heap and nvm rows (inclusive and not) restores a
#	  marker table to the right moment, the transaction's heap and nvm
#	  parts together.  A restore whose WAL holds no image
#	  of the pool (the primary ran without nvm redo) refuses its nvm tables
#	  with a hint, also after a restart.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use NvmTest;
use NvmBackup;

my $ROWS = 200_000;

my ($primary, $pool) = nvm_node('bb_primary', pool_in_datadir => 1,
	init => { allows_streaming => 1, has_archiving => 1 });
# -X fetch copies the WAL at the backup's end: wal_keep_size keeps what a
# load's checkpoints would recycle meanwhile, as PostgreSQL's documentation
# of pg_basebackup asks (-X stream uses a temporary slot)
$primary->append_conf('postgresql.conf', "max_prepared_transactions = 5\nwal_keep_size = '1GB'\n");
$primary->start;
nvm_accounts_create($primary, $ROWS);
$primary->safe_psql('postgres', 'CREATE TABLE marks (note text) USING nvm');
ok(-f $pool, 'the pool is at its default place, inside the data directory');

# --- backups under load ------------------------------------------------------
my @backups = (
	[ 'plain_stream', [] ],
	[ 'plain_fetch', [ '-X', 'fetch' ] ],
	[ 'tar_stream', ['-Ft'] ],
	[ 'tar_fetch', [ '-Ft', '-X', 'fetch' ] ]);
my $load = nvm_transfers_start($primary, $ROWS, 4, 2);
nvm_load_wait_running($load);
foreach my $b (@backups)
{
	my ($name, $opts) = @$b;
	$primary->backup($name, backup_options => $opts);
	ok(nvm_load_running($load), "$name: the backup ended while the transfers ran");
}
ok($primary->log_contains(qr/logged the rows of \d+ nvm tables \(\d+ rows, 0 prepared transactions\) for a base backup/),
	'the primary logged the image of the pool for the backups');

# point-in-time targets, under the same load: a restore point and a time,
# each between two marker rows
$primary->safe_psql('postgres', q{INSERT INTO marks VALUES ('before the restore point')});
$primary->safe_psql('postgres', q{SELECT pg_create_restore_point('nvm_rp')});
$primary->safe_psql('postgres', q{INSERT INTO marks VALUES ('after the restore point')});
usleep(300_000);
$primary->safe_psql('postgres', q{INSERT INTO marks VALUES ('before the time')});
usleep(300_000);
my $target_time = $primary->safe_psql('postgres', 'SELECT now()');
usleep(300_000);
$primary->safe_psql('postgres', q{INSERT INTO marks VALUES ('after the time')});
# a heap commit gives PostgreSQL's own replay a place to stop at
$primary->safe_psql('postgres', q{INSERT INTO ledger VALUES ('after the time')});
# a transaction with heap and nvm rows, the target of recovery_target_xid
my $tied_xid = $primary->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO ledger VALUES ('tied');
	INSERT INTO marks VALUES ('tied');
	SELECT txid_current();
	COMMIT;});
$primary->safe_psql('postgres', q{INSERT INTO marks VALUES ('after the tied one')});
nvm_transfers_finish($load, 'the transfers during the backups');
nvm_accounts_check($primary, 'the original after the load', $ROWS);

# a backup without load, while a prepared transaction holds a row lock and
# an inserted row: its restore holds exactly the rows of its end, and the
# prepared transaction with its lock and its row
$primary->safe_psql('postgres', q{
	BEGIN;
	SELECT 1 FROM accounts WHERE id = 10 FOR UPDATE;
	INSERT INTO marks VALUES ('prepared');
	PREPARE TRANSACTION 'p1';});
$primary->backup('quiet');
my $quiet_rows = nvm_rows_digest($primary);
$primary->safe_psql('postgres', q{COMMIT PREPARED 'p1'});
$primary->safe_psql('postgres', 'UPDATE accounts SET balance = balance + 5 WHERE id = 1; UPDATE accounts SET balance = balance - 5 WHERE id = 2');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
my $final_rows = nvm_rows_digest($primary);

# restore NAME BACKUP OPTIONS: a node initialised from a backup
sub restore
{
	my ($name, $backup, %params) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	my $dir = $primary->backup_dir . "/$backup";
	if (-f "$dir/base.tar")
	{
		# -X fetch puts the WAL into base.tar: give init_from_backup an
		# empty pg_wal.tar
		system_or_bail('tar', 'cf', "$dir/pg_wal.tar", '-T', '/dev/null')
		  unless -f "$dir/pg_wal.tar";
		$params{tar_program} = 'tar';
	}
	$copy->init_from_backup($primary, $backup, %params);
	# copies must not archive their own WAL into the primary's archive
	$copy->append_conf('postgresql.conf', "archive_mode = off\n");
	return $copy;
}

foreach my $b (@backups)
{
	my ($name) = @$b;
	my $copy = restore("copy_$name", $name);
	my $copied_pool = $copy->data_dir . '/pg_nvm/pool';
	ok(-f $copied_pool, "$name: the backup holds a copy of the pool file");
	$copy->start;
	ok($copy->log_contains(qr/restored from a base backup: nvm pool .* is rebuilt from the WAL/),
		"$name: the start says the pool is rebuilt from the WAL");
	ok($copy->log_contains(qr/the image of the nvm pool in the WAL is replayed/),
		"$name: replay found the image of the pool");
	is(nvm_pool_state($copy), 'attached', "$name: attached once recovery ended");
	nvm_accounts_check($copy, $name, $ROWS);
	is($copy->safe_psql('postgres', q{SELECT count(*) FROM marks}), '0',
		"$name: no marker of after the backup");
	$copy->safe_psql('postgres', q{UPDATE accounts SET balance = balance + 1 WHERE id = 3; UPDATE accounts SET balance = balance - 1 WHERE id = 4; INSERT INTO marks VALUES ('written on the copy')});
	$copy->restart;
	is($copy->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
		"$ROWS|" . ($ROWS * 1000), "$name: the total is kept across a restart");
	is($copy->safe_psql('postgres', 'SELECT note FROM marks'), 'written on the copy',
		"$name: rows written on the copy survive a restart");
	is(nvm_log_crashes($copy), '', "$name: no crash in the log");
	$copy->stop;
}

{
	my $copy = restore('copy_quiet', 'quiet');
	$copy->start;
	is(nvm_rows_digest($copy), $quiet_rows, 'a backup without load: exactly the rows of its end');
	is($copy->safe_psql('postgres', 'SELECT gid FROM pg_prepared_xacts'), 'p1',
		'a backup without load: the prepared transaction is there');
	my ($rc, $out, $err) = $copy->psql('postgres',
		q{SET lock_timeout = '1s'; UPDATE accounts SET balance = balance WHERE id = 10});
	isnt($rc, 0, 'a backup without load: the prepared transaction holds its row lock');
	like($err, qr/lock timeout/, 'a backup without load: ... an update of the row waits for it');
	is($copy->safe_psql('postgres', q{SELECT count(*) FROM marks WHERE note = 'prepared'}), '0',
		'a backup without load: the prepared row is not visible yet');
	$copy->safe_psql('postgres', q{COMMIT PREPARED 'p1'});
	is($copy->safe_psql('postgres', q{SELECT count(*) FROM marks WHERE note = 'prepared'}), '1',
		'a backup without load: COMMIT PREPARED brings its row');
	$copy->safe_psql('postgres', q{UPDATE accounts SET balance = balance WHERE id = 10});
	$copy->stop;
}

# --- a streaming standby, with hot-standby reads, then promoted --------------
my $standby = restore('standby', 'plain_stream', has_streaming => 1, has_restoring => 1);
$standby->start;
$primary->wait_for_catchup($standby);
is(nvm_rows_digest($standby), $final_rows, 'standby: caught up, every row of the primary');
$load = nvm_transfers_start($primary, $ROWS, 2, 6);
my $bad = 0;
for (1 .. 10)
{
	my $sum = $standby->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts');
	$bad++ if $sum ne "$ROWS|" . ($ROWS * 1000);
	usleep(300_000);
}
is($bad, 0, 'standby: every read under the primary\'s load keeps the total');
nvm_transfers_finish($load, 'the transfers during the standby reads');
$primary->wait_for_catchup($standby);
is(nvm_rows_digest($standby), nvm_rows_digest($primary), 'standby: caught up again');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby did not leave recovery';
is(nvm_pool_state($standby), 'attached', 'promoted standby: attached');
$standby->safe_psql('postgres', q{INSERT INTO marks VALUES ('on the promoted standby')});
nvm_accounts_check($standby, 'promoted standby', $ROWS);
$standby->stop;
my $after_standby = nvm_rows_digest($primary);

# --- archive recovery to the end of the archive ------------------------------
my $last_wal = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
my $archived_by = time + 180;
usleep(100_000) while !-f $primary->archive_dir . "/$last_wal" && time < $archived_by;
ok(-f $primary->archive_dir . "/$last_wal", 'the WAL of the primary is archived');
my $archived = restore('archived', 'plain_fetch', has_restoring => 1, standby => 0);
$archived->start;
$archived->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'archive recovery did not end';
is(nvm_rows_digest($archived), $after_standby, 'archive recovery: every row of the end of the archive');
nvm_accounts_check($archived, 'archive recovery', $ROWS);
$archived->stop;

# --- point-in-time recovery ----------------------------------------------------
sub pitr
{
	my ($name, $target, $want, $want_ledger) = @_;
	my $node = restore($name, 'tar_fetch', has_restoring => 1, standby => 0);
	$node->append_conf('postgresql.conf', "$target\nrecovery_target_action = 'promote'\n");
	$node->start;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$name: recovery did not end";
	is($node->safe_psql('postgres', q{SELECT string_agg(note, ', ' ORDER BY note) FROM marks}),
		$want, "$name: the marker table is at the target");
	is($node->safe_psql('postgres', q{SELECT count(*) FROM ledger WHERE note = 'tied'}),
		$want_ledger, "$name: the heap part of the tied transaction goes with its nvm part")
	  if defined $want_ledger;
	nvm_accounts_check($node, $name, $ROWS);
	$node->stop;
	return;
}
pitr('pitr_name', "recovery_target_name = 'nvm_rp'", 'before the restore point');
pitr('pitr_time', "recovery_target_time = '$target_time'",
	'after the restore point, before the restore point, before the time');
# recovery_target_xid stops right after (inclusive) or before the commit
# record of a transaction with heap and nvm rows: both parts or neither
pitr('pitr_xid', "recovery_target_xid = '$tied_xid'",
	'after the restore point, after the time, before the restore point, before the time, tied', 1);
pitr('pitr_xid_exclusive', "recovery_target_xid = '$tied_xid'\nrecovery_target_inclusive = false",
	'after the restore point, after the time, before the restore point, before the time', 0);

# --- a restore whose WAL holds no image of the pool ---------------------------
# the primary runs a while without redo (nvm.wal_redo off): a backup then
# has no image, and its restore (with redo on) refuses its nvm tables
$primary->append_conf('postgresql.conf', "nvm.wal_redo = off\n");
$primary->restart;
$primary->backup('no_redo');
{
	my $node = restore('no_image', 'no_redo');
	$node->append_conf('postgresql.conf', "nvm.wal_redo = on\n");
	$node->start;
	my ($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM accounts');
	isnt($rc, 0, 'no image: reading the nvm table fails');
	like($err, qr/no image of the nvm pool/, 'no image: the error says why');
	like($err, qr/HINT:.*new base backup/s, 'no image: the hint says to take a new base backup');
	is($node->safe_psql('postgres', q{SELECT count(*) FROM ledger WHERE note = 'heap row'}), '1',
		'no image: heap tables are readable');
	$node->restart;
	($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM accounts');
	like($err, qr/no image of the nvm pool/, 'no image: still refused after a restart');
	$node->stop;
}
$primary->append_conf('postgresql.conf', "nvm.wal_redo = on\n");

# --- the original is intact --------------------------------------------------
$primary->restart;
nvm_accounts_check($primary, 'the original after a restart', $ROWS);
is(nvm_rows_digest($primary), $after_standby, 'the original: every row as before the restart');
$primary->stop;
done_testing();

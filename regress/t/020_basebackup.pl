# regress/t/020_basebackup.pl
#	  File-level copies of a running cluster never serve torn nvm data.  A
#	  cluster with its pool at the default place (pg_nvm/pool, inside the
#	  data directory, so pg_basebackup copies it byte by byte while backends
#	  write it) holds 200,000 accounts of 1,000 each; four clients move
#	  money between them (the total is constant) while pg_basebackup takes
#	  backups in plain and tar format, with -X stream and -X fetch.  Every
#	  restored copy, a streaming standby (hot-standby queries included,
#	  before and after promotion) and a copy that runs archive recovery
#	  start, serve their heap tables, and refuse their nvm tables with an
#	  error that names the table, the pool and the cause, with a hint; the
#	  copied pool file is left untouched, and the refusal survives a
#	  restart.  A copy given a new, empty pool (the README's procedure)
#	  works again with empty nvm tables.  The original keeps every row.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use NvmTest;
use NvmBackup;

my $ROWS = 200_000;

my ($primary, $pool) = nvm_node('bb_primary', pool_in_datadir => 1,
	init => { allows_streaming => 1, has_archiving => 1 });
$primary->start;
nvm_accounts_create($primary, $ROWS);
ok(-f $pool, 'the pool is at its default place, inside the data directory');

# --- backups under load ------------------------------------------------------
my @backups = (
	[ 'plain_stream', [] ],
	[ 'plain_fetch', [ '-X', 'fetch' ] ],
	[ 'tar_stream', ['-Ft'] ],
	[ 'tar_fetch', [ '-Ft', '-X', 'fetch' ] ]);
my $load = nvm_transfers_start($primary, $ROWS, 4, 25);
sleep 1;
my $load_end = time + 24;
foreach my $b (@backups)
{
	my ($name, $opts) = @$b;
	$primary->backup($name, backup_options => $opts);
	cmp_ok(time, '<', $load_end, "$name: the backup ended while the transfers ran");
}
nvm_transfers_finish($load, 'the transfers during the backups');
nvm_accounts_check($primary, 'the original after the load', $ROWS);
my $original_rows = nvm_rows_digest($primary);

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

my $backup_cause = qr/restored from a file-level backup|backup_label/;

foreach my $b (@backups)
{
	my ($name) = @$b;
	my $copy = restore("copy_$name", $name);
	my $copied_pool = $copy->data_dir . '/pg_nvm/pool';
	ok(-f $copied_pool, "$name: the backup holds a copy of the pool file");
	my @before = (stat $copied_pool)[ 7, 9 ];
	$copy->start;
	ok($copy->log_contains(qr/detached from nvm pool/), "$name: the start logs that the copy is detached");
	nvm_refuses_nvm($copy, $name, $copied_pool, $backup_cause, qr/pg_dump/);
	my ($rc, $out, $err) = $copy->psql('postgres', 'CREATE TABLE t2 (a int) USING nvm');
	isnt($rc, 0, "$name: no new nvm table either");
	like($err, qr/detached/, "$name: ... with the same error");
	$copy->safe_psql('postgres', q{INSERT INTO ledger VALUES ('written on the copy')});
	$copy->restart;
	nvm_refuses_nvm($copy, "$name, restarted", $copied_pool, $backup_cause, qr/pg_dump/);
	is(join(',', (stat $copied_pool)[ 7, 9 ]), join(',', @before),
		"$name: the copied pool file was not touched");
	$copy->stop;

	next unless $name eq 'plain_stream';

	# the README's way to give a detached data directory a new, empty pool
	unlink($copy->data_dir . '/pg_nvm/binding', $copied_pool)
	  or die "cannot remove the binding and the pool: $!";
	$copy->start;
	is(nvm_pool_state($copy), 'attached', 'a new, empty pool: attached');
	($rc, $out, $err) = $copy->psql('postgres', 'SELECT count(*) FROM accounts');
	like($err, qr/has no storage in the pool/, 'a new, empty pool: the old nvm table has no storage');
	$copy->safe_psql('postgres', 'TRUNCATE accounts; INSERT INTO accounts VALUES (1, 5)');
	is($copy->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'), '1|5',
		'a new, empty pool: TRUNCATE gives the table new storage, and it works');
	$copy->restart;
	is($copy->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'), '1|5',
		'a new, empty pool: its rows survive a restart');
	$copy->stop;
}

# --- a streaming standby, with hot-standby queries, then promoted -----------
my $standby = restore('standby', 'plain_stream', has_streaming => 1, has_restoring => 1);
$standby->start;
$primary->safe_psql('postgres', q{INSERT INTO ledger VALUES ('after the backup')});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{SELECT count(*) FROM ledger WHERE note = 'after the backup'}), '1',
	'standby: heap rows are replicated and readable');
{
	my ($rc, $out, $err) = $standby->psql('postgres', 'SELECT count(*) FROM accounts');
	isnt($rc, 0, 'standby: reading the nvm table fails');
	like($err, qr/nvm table "accounts" cannot be read on a physical standby/,
		'standby: the error says physical standbys carry no nvm rows');
	like($err, qr/\Q$standby->{_basedir}\E|pg_nvm\/pool/, 'standby: the error names the pool');
	like($err, qr/HINT:.*logical replication/s, 'standby: the hint points to the primary and logical replication');
}
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby did not leave recovery';
nvm_refuses_nvm($standby, 'promoted standby', $standby->data_dir . '/pg_nvm/pool',
	qr/physical standby/, qr/primary|logical replication|empty pool/);
$standby->stop;

# --- archive recovery ---------------------------------------------------------
my $archived = restore('archived', 'plain_fetch', has_restoring => 1, standby => 0);
$archived->start;
$archived->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'archive recovery did not end';
nvm_refuses_nvm($archived, 'archive recovery', $archived->data_dir . '/pg_nvm/pool',
	qr/archive recovery/, qr/pg_dump/);
$archived->stop;

# --- the original is intact --------------------------------------------------
$primary->restart;
nvm_accounts_check($primary, 'the original after a restart', $ROWS);
is(nvm_rows_digest($primary), $original_rows, 'the original: every row as before the restart');
is(nvm_pool_state($primary), 'attached', 'the original: attached');
$primary->stop;
done_testing();

# regress/t/021_backup_api_rewind.pl
#	  The low-level backup API with the pool outside the data directory, and
#	  pg_rewind.  A backup made with pg_backup_start() / pg_backup_stop()
#	  and a file copy under a transfer load carries the nvm rows: its
#	  restore refuses to start while its settings name an existing pool
#	  (a copy of the pool file, or the original's own pool while the
#	  original runs), saying how to go on, and with nvm.pool_path set to a
#	  new file it rebuilds its pool from the WAL and holds every account,
#	  the total kept.  The WAL the copy needs comes from the original's
#	  archive (archive_command, and restore_command in the copy), as
#	  PostgreSQL's documentation of the low-level API asks: the load goes
#	  on after pg_backup_stop(), and its checkpoints may recycle the
#	  segments of the backup's window before a copy of pg_wal is made.  A
#	  former primary rewound with pg_rewind to follow its promoted standby
#	  (made from a base backup, with its nvm rows) refuses its nvm tables
#	  and points to a new base backup; its old pool is left untouched, and
#	  the originals keep every row.
use strict;
use warnings;

use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;
use NvmBackup;

my $ROWS = 50_000;

# --- pg_backup_start / pg_backup_stop and a file copy ----------------------
my ($node, $pool) = nvm_node('api', init => { allows_streaming => 1, has_archiving => 1 });
$node->start;
nvm_accounts_create($node, $ROWS);

my $load = nvm_transfers_start($node, $ROWS, 4, 2);
nvm_load_wait_running($load);
my $session = $node->background_psql('postgres');
$session->query_safe(q{SET client_min_messages = warning});
$session->query_safe(q{SELECT pg_backup_start('nvm file copy', true)});
my $dest = $node->backup_dir . '/api';
PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir, $dest,
	filterfn => sub { my $f = shift; return $f ne 'postmaster.pid' && $f !~ m{^pg_wal/}; });
my $pool_copy = "$pool.backup";
push @NvmTest::extra_files, $pool_copy;
copy($pool, $pool_copy) or die "cannot copy $pool: $!";
# pg_backup_stop(true) returns once the WAL up to the backup's end is in
# the archive
my $label = $session->query_safe(q{SELECT labelfile FROM pg_backup_stop(true)});
$session->quit;
ok(nvm_load_running($load), 'the copy was made under load: the load still ran at pg_backup_stop()');
ok(nvm_transfers_finish($load, 'the transfers during the file copy') > 0, 'the copy was made under load');
# the backup label goes with the copy; its WAL comes from the archive
open(my $fh, '>', "$dest/backup_label") or die "cannot write backup_label: $!";
print $fh "$label\n";
close $fh;
mkdir "$dest/pg_wal";
nvm_accounts_check($node, 'the original after the load', $ROWS);

ok($node->log_contains(qr/logged the rows of \d+ nvm tables .* for a base backup/),
	'the image of the pool was logged for pg_backup_start()');

# the copy, with its settings naming the pool file copied next to it: the
# restore builds a new pool, and will not overwrite an existing file
my $copy = PostgreSQL::Test::Cluster->new('api_copy');
$copy->init_from_backup($node, 'api', has_restoring => 1, standby => 0);
$copy->append_conf('postgresql.conf', "nvm.pool_path = '$pool_copy'\n");
my @before = (stat $pool_copy)[ 7, 9 ];
ok(!$copy->start(fail_ok => 1), 'backup API copy naming an existing pool file: refused');
like(nvm_fatal_text($copy), qr/nvm pool "\Q$pool_copy\E" exists, but this data directory is restored from a base backup/,
	'backup API copy: the FATAL names the pool and says why');
like(nvm_fatal_text($copy), qr/HINT:.*nvm.pool_path to a file that does not exist yet/s,
	'backup API copy: the hint says how to go on');
is(join(',', (stat $pool_copy)[ 7, 9 ]), join(',', @before), 'backup API copy: the pool copy was not touched');

# a second copy whose settings still name the original's pool, which runs
my $copy2 = PostgreSQL::Test::Cluster->new('api_copy2');
$copy2->init_from_backup($node, 'api', has_restoring => 1, standby => 0);
ok(!$copy2->start(fail_ok => 1), "backup API copy naming the original's pool: refused");
like(nvm_fatal_text($copy2), qr/\Q$pool\E" exists/, "backup API copy naming the original's pool: the FATAL names it");
is($node->safe_psql('postgres', 'SELECT count(*) FROM accounts'), $ROWS,
	'the original works while and after the copy names its pool');

# with a new pool path, the copy rebuilds its pool from the WAL
my $new_pool = nvm_pool_path('api_copy_new');
$copy->append_conf('postgresql.conf', "nvm.pool_path = '$new_pool'\n");
$copy->start;
ok(-f $new_pool, 'backup API copy: the new pool is made at the new path');
nvm_accounts_check($copy, 'backup API copy', $ROWS);
$copy->restart;
nvm_accounts_check($copy, 'backup API copy, restarted', $ROWS);
$copy->stop;
nvm_accounts_check($node, 'the original after its copies ran', $ROWS);
$node->stop;

# --- pg_rewind of a former primary --------------------------------------------
my ($old, $old_pool) = nvm_node('rewind_old', init => { allows_streaming => 1 });
$old->append_conf('postgresql.conf', "wal_log_hints = on\nwal_keep_size = 128MB\n");
$old->start;
nvm_accounts_create($old, 1000);
$old->backup('for_standby');
my $new = PostgreSQL::Test::Cluster->new('rewind_new');
$new->init_from_backup($old, 'for_standby', has_streaming => 1);
my $new_pool2 = nvm_pool_path('rewind_new');
$new->append_conf('postgresql.conf', "nvm.pool_path = '$new_pool2'\n");
$new->start;
$old->safe_psql('postgres', q{INSERT INTO ledger VALUES ('before the failover')});
$old->wait_for_catchup($new);
my $before_failover = nvm_rows_digest($old);
$new->promote;
$new->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
# both sides go on: the histories diverge
$new->safe_psql('postgres', q{INSERT INTO ledger VALUES ('on the new primary')});
$old->safe_psql('postgres', q{
	INSERT INTO ledger VALUES ('on the old primary');
	UPDATE accounts SET balance = balance + 1 WHERE id = 1;
	UPDATE accounts SET balance = balance - 1 WHERE id = 2;
});
my $old_rows = nvm_rows_digest($old);
my $new_rows = nvm_rows_digest($new);
is($new_rows, $before_failover, 'the promoted standby holds the nvm rows of before the failover');
$old->stop;
my @old_pool_before = (stat $old_pool)[ 7, 9 ];
# pg_rewind copies the source's configuration: keep the old node's own
my $conf = slurp_file($old->data_dir . '/postgresql.conf');
command_ok(
	[
		'pg_rewind', '--target-pgdata', $old->data_dir,
		'--source-server', $new->connstr('postgres')
	],
	'pg_rewind makes the old primary follow the new one');
open(my $cf, '>', $old->data_dir . '/postgresql.conf') or die;
print $cf $conf;
close $cf;
$old->start;
$old->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the rewound data directory did not finish recovery';
is($old->safe_psql('postgres', q{SELECT count(*) FROM ledger WHERE note = 'on the new primary'}), '1',
	'rewound: the heap rows are those of the new primary');
nvm_refuses_nvm($old, 'rewound', $old_pool, qr/pg_rewind/, qr/new base backup/);
is(nvm_rows_digest($new), $new_rows, 'the new primary (a standby made from a base backup) has its nvm rows');
$old->stop;
is(join(',', (stat $old_pool)[ 7, 9 ]), join(',', @old_pool_before),
	"rewound: the old primary's pool was not touched");

# the old pool still holds the old primary's rows for whoever needs them:
# a cluster that knows nothing of it is refused, and says so
my $probe = PostgreSQL::Test::Cluster->new('rewind_probe');
$probe->init;
$probe->append_conf('postgresql.conf',
	"shared_preload_libraries = 'nvmam'\nnvm.pool_path = '$old_pool'\n");
ok(!$probe->start(fail_ok => 1), 'another cluster cannot open the old pool');
like(nvm_fatal_text($probe), qr/\Q$old_pool\E/, 'another cluster: the FATAL names the pool');
$new->stop;
isnt($old_rows, '', 'the old primary had its rows');
done_testing();

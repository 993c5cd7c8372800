# regress/t/027_storage_reboot.pl
#	  What each storage class guarantees across a restart of the operating
#	  system, simulated with nvm.debug_boot_id (the boot identity the server
#	  reads at start instead of /proc/sys/kernel/random/boot_id):
#	  - a page-cache file (the pool at its default place, in the data
#	    directory on an ordinary file system): after a crash of the server
#	    and a new boot, the pool is refused with a FATAL that names it, its
#	    class and the cause, with a hint; in the same boot (a process crash)
#	    it is served with every row; after a clean stop no page of the pool
#	    is left dirty in the page cache (so a power loss then loses nothing),
#	    and a new boot serves every row;
#	  - volatile memory (tmpfs): a pool that a new boot finds in use is
#	    refused; one that the restart removed is refused as missing, with the
#	    cause;
#	  - persistent memory (PMEM_IS_PMEM_FORCE=1 makes libpmem report the
#	    page-cache file as persistent memory): a crash and a new boot serve
#	    every row.
#	  The page-cache and first volatile parts run with nvm.durability =
#	  pool (the pool's own durability, what persistent memory gives); the
#	  last part runs with the default, auto, which makes commits durable
#	  through the WAL off persistent memory:
#	  - volatile memory, through the WAL: a crash and a new boot that
#	    removed the pool rebuild it from the last checkpoint's image and
#	    the WAL, with every row; a clean stop copies the pool to
#	    pg_nvm/pool.saved, and a new boot that removed the pool copies it
#	    back; the copy is removed once the pool is there; a crash at start
#	    before the first image (nvm.debug_crash_point), then a reboot: the
#	    WAL after the last checkpoint holds no image, and the data directory
#	    is detached with a cause of its own instead of serving an empty pool;
#	    checkpoint files of another version of the format (an earlier
#	    version's magics) make a rebuild stop with an error that says so,
#	    and a start that has its pool writes every table anew.
#	  Each start says the class in the server log and nvm_pool_stats().
use strict;
use warnings;

use Digest::MD5;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my $ROWS = 5000;

# boot_id NODE VALUE: the boot the next start of NODE sees ('' = the OS's)
sub boot_id
{
	my ($node, $value) = @_;
	$node->append_conf('postgresql.conf', "nvm.debug_boot_id = '$value'\n");
	return;
}

# fill NODE: the table t of every part, with its rows
sub fill
{
	my ($node) = @_;
	$node->safe_psql('postgres', qq{
		CREATE EXTENSION nvmam;
		CREATE TABLE t (id int PRIMARY KEY, v text) USING nvm;
		INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, $ROWS) g;
	});
	return;
}

# storage_of NODE: "storage|storage_detail" of nvm_pool_stats()
sub storage_of
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{SELECT storage || '|' || storage_detail FROM nvm_pool_stats()});
}

# rows_digest NODE: count and md5 of every row of t
sub rows_digest
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT count(*) || '|' || md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM t});
}

# start_refused NODE NAME: starts NODE, which must refuse; returns the FATAL
sub start_refused
{
	my ($node, $name) = @_;
	my $offset = -s $node->logfile;
	my $ok = $node->start(fail_ok => 1);
	ok(!$ok, "$name: the server refuses to start");
	$node->stop('immediate') if $ok;
	return nvm_fatal_text($node, $offset);
}

# dirty_pages FILE: (pages dirty, pages under writeback) of FILE in the
# page cache, from the cachestat system call (Linux 6.5)
sub dirty_pages
{
	my ($file) = @_;
	open(my $fh, '<', $file) or die "cannot open $file: $!";
	my $range = pack('QQ', 0, 0);
	my $stat = "\0" x 40;
	my $rc = syscall(451, fileno($fh), $range, $stat, 0);
	die "cachestat($file) failed: $!" if $rc != 0;
	close $fh;
	my (undef, $dirty, $writeback) = unpack('Q5', $stat);
	return ($dirty, $writeback);
}

# ---------------------------------------------------------------------------
# a page-cache file
# ---------------------------------------------------------------------------
my ($node, $pool) = nvm_node('reboot_pc', pool_in_datadir => 1, pool_size => '64MB');
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
fill($node);
my ($class, $detail) = split /\|/, storage_of($node);
is($class, 'page-cache file', 'a pool in the data directory is a page-cache file');
ok($detail ne '' && $detail !~ /tmpfs|MAP_SYNC/, "page-cache: nvm_pool_stats names its file system ($detail)");
ok($node->log_contains(qr/WARNING:  nvm pool "\Q$pool\E" is a page-cache file \(\Q$detail\E\): a crash of the operating system or a power loss/),
	'page-cache: the start warns of what is at risk');
my $digest = rows_digest($node);

nvm_crash($node);
boot_id($node, 'reboot-1');
my $fatal = start_refused($node, 'page-cache, crash and a new boot');
like($fatal, qr/FATAL:  nvm pool "\Q$pool\E" may have been torn by a crash of the operating system or a power loss/,
	'page-cache, crash and a new boot: the FATAL names the pool and the cause');
like($fatal, qr/DETAIL:  The pool is a page-cache file \(\Q$detail\E\)\. The server that used it did not stop cleanly, and the operating system has restarted since/,
	'page-cache, crash and a new boot: the detail names the class and why');
like($fatal, qr/HINT:  Restore the data directory and the pool together from a backup, or give this data directory a new, empty pool/,
	'page-cache, crash and a new boot: the hint says what to do');

# the same boot: a crash of the server's processes keeps the page cache
boot_id($node, '');
$node->start;
is(rows_digest($node), $digest, 'page-cache, crash in the same boot: every row is served');
nvm_verify_clean($node, 't', 'page-cache, crash in the same boot');

# a clean stop leaves nothing in the page cache alone: a power loss now
# keeps every row, and a new boot serves them
$node->safe_psql('postgres', qq{
	UPDATE t SET v = v || 'x' WHERE id % 3 = 0;
	INSERT INTO t SELECT g, md5(g::text) FROM generate_series($ROWS + 1, 2 * $ROWS) g;
});
$digest = rows_digest($node);
my ($dirty_before) = dirty_pages($pool);
ok($dirty_before > 0, "page-cache: pages of the running pool are dirty ($dirty_before)");
$node->stop;
my ($dirty, $writeback) = dirty_pages($pool);
is("$dirty|$writeback", '0|0', 'page-cache, clean stop: no page of the pool is dirty or under writeback');
boot_id($node, 'reboot-2');
$node->start;
is(rows_digest($node), $digest, 'page-cache, clean stop and a new boot: every row is served');
is($node->safe_psql('postgres', 'SELECT state FROM nvm_pool_stats()'), 'attached',
	'page-cache, clean stop and a new boot: the pool is attached');
nvm_verify_clean($node, 't', 'page-cache, clean stop and a new boot');
$node->stop;

# ---------------------------------------------------------------------------
# volatile memory (tmpfs)
# ---------------------------------------------------------------------------
my ($vnode, $vpool) = nvm_node('reboot_tmpfs', pool_size => '64MB');
$vnode->start;
fill($vnode);
is(storage_of($vnode),
	'volatile|tmpfs', 'a pool in /dev/shm is volatile, on tmpfs');
ok($vnode->log_contains(qr/WARNING:  nvm pool "\Q$vpool\E" is in volatile memory \(tmpfs\): a restart of the operating system or a power loss loses every nvm row/),
	'volatile: the start warns of what is at risk');
$digest = rows_digest($vnode);

nvm_crash($vnode);
boot_id($vnode, 'reboot-1');
$fatal = start_refused($vnode, 'volatile, crash and a new boot');
like($fatal, qr/FATAL:  nvm pool "\Q$vpool\E" may have been torn.*\n.*DETAIL:  The pool is in volatile memory \(tmpfs\)\./,
	'volatile, crash and a new boot that kept the file: refused as torn');

boot_id($vnode, '');
$vnode->start;
is(rows_digest($vnode), $digest, 'volatile, crash in the same boot: every row is served');
$vnode->stop;

# a restart of the operating system empties tmpfs
unlink $vpool or die "cannot remove $vpool: $!";
boot_id($vnode, 'reboot-2');
$fatal = start_refused($vnode, 'volatile, a new boot that removed the pool');
like($fatal, qr/FATAL:  nvm pool "\Q$vpool\E" is missing/,
	'volatile, pool gone: the FATAL names the pool');
like($fatal, qr/DETAIL:  .*It was on volatile storage \(such as tmpfs\), which a restart of the operating system empties, and the operating system has restarted since: the rows of every nvm table are lost\./,
	'volatile, pool gone: the detail says why');
like($fatal, qr/HINT:  .*remove pg_nvm\/binding to start with a new, empty pool/,
	'volatile, pool gone: the hint says what to do');

# ---------------------------------------------------------------------------
# volatile memory (tmpfs), commits durable through the WAL
# ---------------------------------------------------------------------------
my ($wnode, $wpool) = nvm_node('reboot_tmpfs_wal', pool_size => '64MB', durability => 'auto',
	init => { allows_streaming => 1 });
$wnode->start;
fill($wnode);
ok($wnode->log_contains(qr/LOG:  nvm pool "\Q$wpool\E" is in volatile memory \(tmpfs\): commits of nvm rows are made durable through the WAL/),
	'volatile, through the WAL: the start says so');
$wnode->safe_psql('postgres', 'CHECKPOINT');
$wnode->safe_psql('postgres', qq{
	UPDATE t SET v = v || 'y' WHERE id % 4 = 0;
	DELETE FROM t WHERE id % 7 = 0;
	INSERT INTO t SELECT g, md5(g::text) FROM generate_series($ROWS + 1, $ROWS + 500) g;
});
$digest = rows_digest($wnode);
nvm_crash($wnode);
unlink $wpool or die "cannot remove $wpool: $!";
boot_id($wnode, 'reboot-1');
my $offset = -s $wnode->logfile;
$wnode->start;
like(slurp_file($wnode->logfile, $offset),
	qr/LOG:  nvm: nvm pool "\Q$wpool\E" is gone after a crash of the operating system, a power loss or a reboot: it is rebuilt from the WAL/,
	'volatile, through the WAL, crash and a new boot that removed the pool: the log says it is rebuilt');
is(rows_digest($wnode), $digest,
	'volatile, through the WAL, crash and a new boot that removed the pool: every row is served');
is($wnode->safe_psql('postgres', 'SELECT state FROM nvm_pool_stats()'), 'attached',
	'volatile, through the WAL, rebuilt: the pool is attached');
nvm_verify_clean($wnode, 't', 'volatile, through the WAL, rebuilt');

# a clean stop copies the pool to disk; a reboot that removed it brings it back
$wnode->safe_psql('postgres', "UPDATE t SET v = 'z' WHERE id < 100");
$digest = rows_digest($wnode);
$wnode->stop;
my $saved = $wnode->data_dir . '/pg_nvm/pool.saved';
ok(-f $saved, 'volatile, through the WAL, clean stop: the pool is copied to pg_nvm/pool.saved');
unlink $wpool or die "cannot remove $wpool: $!";
boot_id($wnode, 'reboot-2');
$offset = -s $wnode->logfile;
$wnode->start;
like(slurp_file($wnode->logfile, $offset),
	qr/LOG:  nvm: volatile nvm pool "\Q$wpool\E" was gone after a clean stop; it is copied back from pg_nvm\/pool.saved/,
	'volatile, through the WAL, clean stop and a new boot: the pool is copied back');
is(rows_digest($wnode), $digest,
	'volatile, through the WAL, clean stop and a new boot: every row is served');
ok(!-e $saved, 'volatile, through the WAL: the copy is removed once the pool is there');
nvm_verify_clean($wnode, 't', 'volatile, through the WAL, copied back');

# a base backup of it: the checkpoint that starts the backup writes the
# pool's checkpoint files, which a restore must not take for the backup's
# image; the restore drops the files it came with (and writes its own at
# the end of its recovery)
$wnode->safe_psql('postgres', 'CHECKPOINT');
ok(-d $wnode->data_dir . '/pg_nvm/checkpoint' && glob($wnode->data_dir . '/pg_nvm/checkpoint/*'),
	'volatile, through the WAL: checkpoints write checkpoint files');
$wnode->backup('wal_backup');
my $rnode = PostgreSQL::Test::Cluster->new('reboot_tmpfs_wal_restored');
my $rpool = nvm_pool_path('reboot_tmpfs_wal_restored');
$rnode->init_from_backup($wnode, 'wal_backup');
$rnode->append_conf('postgresql.conf', "nvm.pool_path = '$rpool'\n");
# the files it came with: the name and an md5 of the contents of each
# (the restore's own files are as of its own position of the WAL)
my $files_of = sub {
	my %f;
	foreach my $file (glob($rnode->data_dir . '/pg_nvm/checkpoint/*'))
	{
		open(my $fh, '<:raw', $file) or next;
		$f{"$file:" . Digest::MD5->new->addfile($fh)->hexdigest} = 1;
		close $fh;
	}
	return \%f;
};
my $came_with = $files_of->();
ok(scalar(keys %$came_with) > 0, 'volatile, through the WAL, a base backup: it comes with checkpoint files');
$rnode->start;
is(rows_digest($rnode), $digest, 'volatile, through the WAL, a base backup restored: every row');
is(join(' ', grep { $came_with->{$_} } sort keys %{ $files_of->() }), '',
	'volatile, through the WAL, a base backup restored: the checkpoint files it came with are gone');
ok($rnode->log_contains(qr/checkpoint of the pool at the end of recovery: wrote \d+ kB \(\d+ rows\) for 0 changed and 1 whole nvm tables/),
	'volatile, through the WAL, a base backup restored: the end of its recovery writes checkpoint files of its own');
$rnode->stop;
$wnode->stop;

# no moment without a way back: a crash of the server, then a crash of the
# operating system at the end of the recovery that follows (after its
# capture, before its checkpoint) and a reboot that empties tmpfs: the
# checkpoint files and the WAL rebuild every row
$wnode->start;
$wnode->safe_psql('postgres', q{UPDATE t SET v = v || 'w' WHERE id % 5 = 0});
$digest = rows_digest($wnode);
nvm_crash($wnode);
$wnode->append_conf('postgresql.conf',
	"restart_after_crash = off\nnvm.debug_crash_point = 'recovery_end_after_capture'\n");
$offset = -s $wnode->logfile;
$wnode->start(fail_ok => 1);
$wnode->wait_for_log(qr/PANIC:  nvm.debug_crash_point: crashing after the capture of the nvm pool at the end of recovery/, $offset);
$wnode->wait_for_log(qr/database system is shut down/, $offset);
ok(1, 'volatile, through the WAL: the start crashed at the end of its recovery, after its capture, before the end-of-recovery checkpoint');
$wnode->stop('immediate', fail_ok => 1);
unlink $wpool;
$wnode->append_conf('postgresql.conf', "restart_after_crash = on\nnvm.debug_crash_point = 'none'\n");
boot_id($wnode, 'reboot-3');
$offset = -s $wnode->logfile;
$wnode->start;
is(rows_digest($wnode), $digest,
	'volatile, through the WAL, a crash at the end of recovery and a new boot: every row is served');
unlike(slurp_file($wnode->logfile, $offset), qr/as the image of the pool/,
	'volatile, through the WAL: no start logs an image of the pool');
is($wnode->safe_psql('postgres', 'SELECT state FROM nvm_pool_stats()'), 'attached',
	'volatile, through the WAL, rebuilt after a crash at the end of recovery: attached');
$wnode->stop;

# checkpoint files of another version of nvmam's checkpoint format (an
# earlier version's "NVMCKF2" and "NVMMAN2": its in-doubt file codes its
# COMMIT records in another redo coding) are never read as this version's:
# a rebuild refuses them with an error that says so; a start that finds
# them with its pool writes every table anew at once
my $set_magics = sub {
	my ($file_magic, $manifest_magic) = @_;
	my @set;
	foreach my $file (glob($wnode->data_dir . '/pg_nvm/checkpoint/*'))
	{
		my $magic = $file =~ m{/manifest$} ? $manifest_magic : $file_magic;
		next if !defined $magic;
		open(my $fh, '+<:raw', $file) or die "cannot open $file: $!";
		syswrite($fh, "$magic\0") == 8 or die "cannot write $file: $!";
		close $fh or die "cannot close $file: $!";
		push @set, $file =~ s{.*/}{}r;
	}
	return @set;
};
my $magics = sub {
	my %m;
	foreach my $file (glob($wnode->data_dir . '/pg_nvm/checkpoint/*'))
	{
		open(my $fh, '<:raw', $file) or die "cannot open $file: $!";
		(sysread($fh, my $magic, 8) // 0) == 8 or die "cannot read $file";
		close $fh;
		$m{ $magic =~ s/\0.*//sr } = 1;
	}
	return join(' ', sort keys %m);
};
my $rebuild_fails = sub {
	my ($boot) = @_;
	unlink $wpool;
	boot_id($wnode, $boot);
	$offset = -s $wnode->logfile;
	$wnode->start(fail_ok => 1);
	$wnode->wait_for_log(qr/database system is shut down/, $offset);
	return slurp_file($wnode->logfile, $offset);
};
$wnode->append_conf('postgresql.conf', "max_prepared_transactions = 4\n");
$wnode->start;
$wnode->safe_psql('postgres', q{
	BEGIN;
	UPDATE t SET v = v || 'p' WHERE id = 3;
	PREPARE TRANSACTION 'in_doubt';
});
$wnode->safe_psql('postgres', 'CHECKPOINT');
$wnode->safe_psql('postgres', q{UPDATE t SET v = v || 'o' WHERE id % 11 = 0});
$digest = rows_digest($wnode);
nvm_crash($wnode);
is($magics->(), 'NVMCKF3 NVMMAN3', 'another version of the format: this version writes "NVMCKF3" and "NVMMAN3"');
my @set = $set_magics->('NVMCKF2', undef);
ok((grep { /^indoubt\./ } @set) && (grep { /\.base$/ } @set),
	'another version of the format: its table and in-doubt files are made an earlier version\'s');
like($rebuild_fails->('reboot-4'),
	qr/FATAL:  could not rebuild the nvm pool[^\n]*: nvm checkpoint file "pg_nvm\/checkpoint\/[^"]+" is of another version of the format\n[^\n]*DETAIL:  It was written by another version of nvmam, in version "NVMCKF2" of nvmam's checkpoint format; this version reads "NVMCKF3" only.\n[^\n]*HINT:  Start the cluster with the version of nvmam that wrote it, or restore the cluster from a base backup./,
	'another version of the format: a rebuild refuses its files, naming one, the version and what to do');
$set_magics->('NVMCKF2', 'NVMMAN2');
like($rebuild_fails->('reboot-5'),
	qr/nvm checkpoint manifest "pg_nvm\/checkpoint\/manifest" is of another version of the format\n[^\n]*DETAIL:  It was written by another version of nvmam, in version "NVMMAN2" of nvmam's checkpoint format; this version reads "NVMMAN3" only.\n[^\n]*HINT:  Start the cluster with the version of nvmam that wrote it, or restore the cluster from a base backup./,
	'another version of the format: a rebuild refuses its manifest, saying so');

# the files made this version's again: the rebuild serves every row
$set_magics->('NVMCKF3', 'NVMMAN3');
boot_id($wnode, 'reboot-6');
$wnode->start;
is(rows_digest($wnode), $digest, 'another version of the format: this version\'s files rebuild every row');
$wnode->safe_psql('postgres', q{COMMIT PREPARED 'in_doubt'});
$wnode->safe_psql('postgres', q{UPDATE t SET v = v || 'u' WHERE id % 13 = 0});
$digest = rows_digest($wnode);
$wnode->stop;

# a start with the pool (an upgrade of nvmam) over an earlier version's files
$set_magics->('NVMCKF2', 'NVMMAN2');
$offset = -s $wnode->logfile;
$wnode->start;
$wnode->safe_psql('postgres', 'CHECKPOINT');
like(slurp_file($wnode->logfile, $offset),
	qr/LOG:  nvm: the checkpoint files of the pool are of another version of nvmam's format; this checkpoint writes every nvm table anew/,
	'another version of the format, a start with the pool: its first checkpoint writes every table anew');
is($magics->(), 'NVMCKF3 NVMMAN3', 'another version of the format, a start with the pool: the earlier files are gone');
nvm_crash($wnode);
unlink $wpool;
boot_id($wnode, 'reboot-7');
$wnode->start;
is(rows_digest($wnode), $digest,
	'another version of the format, a start with the pool, then a lost pool: the rebuild serves every row');
$wnode->stop;

# ---------------------------------------------------------------------------
# persistent memory (libpmem told so)
# ---------------------------------------------------------------------------
my ($pnode, $ppool) = nvm_node('reboot_pmem', pool_in_datadir => 1, pool_size => '64MB');
{
	local $ENV{PMEM_IS_PMEM_FORCE} = '1';
	$pnode->start;
}
fill($pnode);
is(storage_of($pnode),
	'persistent memory|pmem_is_pmem', 'a pool libpmem calls persistent memory is persistent memory');
ok($pnode->log_contains(qr/LOG:  nvm pool "\Q$ppool\E" is on persistent memory \(pmem_is_pmem\): committed nvm rows survive/),
	'persistent memory: the start says so');
$digest = rows_digest($pnode);
nvm_crash($pnode);
boot_id($pnode, 'reboot-1');
{
	local $ENV{PMEM_IS_PMEM_FORCE} = '1';
	$pnode->start;
}
is(rows_digest($pnode), $digest, 'persistent memory, crash and a new boot: every row is served');
nvm_verify_clean($pnode, 't', 'persistent memory, crash and a new boot');
$pnode->stop;

done_testing();

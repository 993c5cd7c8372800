# regress/t/032_sequence_torn_page.pl
#	  A sequence page that the end of crash recovery advanced from the pool
#	  is written by the end-of-recovery checkpoint without WAL; a power loss
#	  during that write tears it.  With data checksums the page then fails
#	  its checksum, and the next recovery, which finds the sequence's
#	  position still in the pool and no record of the sequence to rebuild
#	  the page from, must not leave the sequence unusable: it puts the
#	  page's content back (its layout is intact) and advances it, so the
#	  identity column goes on with values above every committed one.
#
#	  The tear is made by hand: the server is killed (SIGKILL, every
#	  process) after a log-free insert whose sequence log-ahead record was
#	  not flushed, and one byte of the sequence's tuple on disk is changed
#	  without updating the page checksum, as a write whose last sector
#	  (the tuple) and first sector (header and checksum) come from two
#	  different writes.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('seq_torn', init => { extra => ['--data-checksums'] });
$node->append_conf('postgresql.conf', qq{
wal_writer_delay = '10s'
autovacuum = off
});
$node->start;
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'data checksums are on');
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE o (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
					u bigint NOT NULL UNIQUE) USING nvm;
	INSERT INTO o (u) SELECT g FROM generate_series(1, 10) g;
});

# log_cnt: how many values the sequence hands out before it logs ahead again
sub log_cnt { return $node->safe_psql('postgres', 'SELECT log_cnt FROM o_id_seq'); }

# A checkpoint, then one insert that does not make the sequence log ahead:
# that first log-free commit after the checkpoint writes the anchor record
# (nvm_seqlog.c) and no record of the sequence, so no record after the redo
# point rebuilds the page in replay.
cmp_ok(log_cnt(), '>', 1, 'the sequence is in the middle of its logged range');
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'INSERT INTO o (u) VALUES (100)');
my $u = 100;
while (log_cnt() ne '0')
{
	$u++;
	$node->safe_psql('postgres', "INSERT INTO o (u) VALUES ($u)");
}
my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('o_id_seq')");

# nothing flushes the WAL from here on: the WAL writer and the background
# writer are stopped (the crash kills them)
foreach my $type ('walwriter', 'background writer')
{
	my $pid = $node->safe_psql('postgres', "SELECT pid FROM pg_stat_activity WHERE backend_type = '$type'");
	ok($pid =~ /^\d+$/ && kill('STOP', $pid), "the $type is stopped");
}
my $flushed = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
# this insert makes the sequence log ahead; its commit keeps the position in the pool
my $crash_id = $node->safe_psql('postgres', 'INSERT INTO o (u) VALUES (999) RETURNING id');
is($node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()'), $flushed,
	'the log-free commit flushed no WAL');
is($node->safe_psql('postgres', 'SELECT sequence_positions FROM nvm_backend_stats()'), '0',
	'(another session counts none)');
nvm_crash($node);

# the tear: one byte of the tuple (the page's last sector) changes, the
# header's checksum does not
open(my $fh, '+<:raw', $file) or die "cannot open $file: $!";
sysseek($fh, 8192 - 8 - 16, 0) or die "seek: $!";
sysread($fh, my $byte, 1) == 1 or die "read: $!";
sysseek($fh, 8192 - 8 - 16, 0) or die "seek: $!";
syswrite($fh, chr(ord($byte) ^ 0x40), 1) == 1 or die "write: $!";
close($fh);

my $offset = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/restored sequence page with relfilenode \S+ that failed its checksum/, $offset),
	'recovery found the torn sequence page and put its content back');
ok($node->log_contains(qr/advanced sequence with relfilenode \S+ to \d+ at the end of recovery/, $offset),
	'... and advanced the sequence from the pool');
is($node->safe_psql('postgres', 'SELECT count(*) FROM o WHERE id = ' . $crash_id), '1',
	'the row committed before the crash is there');
my ($rc, $out, $err) = $node->psql('postgres', 'INSERT INTO o (u) VALUES (1000) RETURNING id');
is($rc, 0, 'the sequence is usable: the next insert succeeds') or diag($err);
cmp_ok($out || 0, '>', $crash_id, '... with an identity value above every committed one');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM o'), '0', 'no identity value repeats');

# once written again, the page passes its checksum: a clean restart reads it
$node->restart;
($rc, $out, $err) = $node->psql('postgres', 'INSERT INTO o (u) VALUES (1001) RETURNING id');
is($rc, 0, 'after a clean restart the sequence page reads back whole') or diag($err);
is(nvm_log_crashes($node), '', 'no crash in the server log');

$node->stop;
done_testing();

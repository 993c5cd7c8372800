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
	CREATE TABLE o2 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, u bigint) USING nvm;
	INSERT INTO o (u) SELECT g FROM generate_series(1, 10) g;
});

# After a checkpoint, the first nextval of each sequence logs ahead.  The
# first log-free commit that keeps a sequence position in the pool after the
# checkpoint flushes instead, with a record after the redo point (the anchor,
# nvm_seqlog.c): here an insert into o2.  An insert into o then keeps o's
# position in the pool and its record is not flushed, so no record of o's
# sequence after the redo point survives the crash to rebuild its page in
# replay: recovery reads the page from disk.
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'INSERT INTO o2 (u) VALUES (1)');
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
my ($crash_id, $positions) = split /\n/, $node->safe_psql('postgres',
	'INSERT INTO o (u) VALUES (999) RETURNING id; SELECT sequence_positions FROM nvm_backend_stats();');
is($positions, '1', "the insert's commit kept the sequence's position in the pool");
is($node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()'), $flushed,
	'... and flushed no WAL');
nvm_crash($node);

# the tear: the tuple (the page's last sector) is an older write's, with a
# smaller last_value, while the header and its checksum are the last
# write's.  The page: header, line pointer, then from the end the special
# space (8 bytes) and the tuple (48 bytes: a 24-byte header, then
# last_value, log_cnt, is_called).
my $at = 8192 - 8 - 48 + 24;
open(my $fh, '+<:raw', $file) or die "cannot open $file: $!";
sysseek($fh, $at, 0) or die "seek: $!";
sysread($fh, my $bytes, 8) == 8 or die "read: $!";
my $last_value = unpack('q<', $bytes);
cmp_ok($last_value, '>=', 10, "the sequence page on disk holds last_value $last_value");
sysseek($fh, $at, 0) or die "seek: $!";
syswrite($fh, pack('q<', $last_value - 5), 8) == 8 or die "write: $!";
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

# regress/t/003_bad_pool.pl
#	  The server refuses to start, with a FATAL message naming the pool file,
#	  when the pool is truncated, has a corrupted header, belongs to another
#	  cluster or cannot be created; without shared_preload_libraries the
#	  extension refuses to be created or used, saying to preload it.  With a
#	  good pool back (the copy taken at the last clean stop), the server
#	  starts and the rows are intact.  The pool file is readable by the
#	  server's user only.
use strict;
use warnings;

use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my ($node, $pool) = nvm_node('bad_pool', pool_size => '64MB');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v text) USING nvm;
	INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 1000) g;
});
$node->stop;

ok(-f $pool, 'the pool file exists');
is(sprintf('%04o', (stat $pool)[2] & 07777), '0600', 'the pool file has mode 0600');
my $pool_size = -s $pool;
cmp_ok($pool_size, '>=', 64 * 1024 * 1024, 'the pool file has the configured size');

my $good = "$pool.good";
copy($pool, $good) or die "cannot copy $pool: $!";
push @NvmTest::extra_files, $good;

# the FATAL message of the last start attempt, with its DETAIL and HINT lines
sub fatal_text
{
	my ($offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my ($text) = $log =~ /(FATAL:[^\n]*\n(?:[^\n]*(?:DETAIL|HINT|CONTEXT):[^\n]*\n)*)/;
	return $text // '';
}

# puts back the copy of the pool taken at the last clean stop (a copy from
# an earlier stop would be refused as older than the data directory)
sub restore_good_pool
{
	copy($good, $pool) or die "cannot restore $pool: $!";
	chmod 0600, $pool;
	return;
}

# refuses NAME: the server does not start; its log has a FATAL naming the pool
sub refuses
{
	my ($name, $pattern) = @_;
	my $offset = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "$name: the server refuses to start");
	$node->stop('immediate') if $started;
	my $fatal = fatal_text($offset);
	like($fatal, qr/\Q$pool\E/, "$name: a FATAL message names the pool file");
	like($fatal, $pattern, "$name: the message says what is wrong") if defined $pattern;
	return;
}

sub starts_with_data
{
	my ($name) = @_;
	ok($node->start(fail_ok => 1), "$name: the server starts with the good pool back");
	is($node->safe_psql('postgres', q{SELECT count(*), sum(id) FROM t}),
		'1000|500500', "$name: the rows are intact");
	is( $node->safe_psql('postgres', q{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT v FROM t WHERE id = 777}),
		'v777', "$name: the rows are found through the index");
	$node->stop;
	copy($pool, $good) or die "cannot copy $pool: $!";
	return;
}

starts_with_data('a good pool');

# 1. truncated to 100 bytes
truncate($pool, 100) or die "cannot truncate $pool: $!";
refuses('pool truncated to 100 bytes', qr/truncated|too short|shorter/i);
is(-s $pool, 100, 'a truncated pool is left as it is (not recreated over)');
restore_good_pool();
starts_with_data('after the truncated pool');

# 2. truncated in the middle (the header is intact, the data is not all there)
truncate($pool, int($pool_size / 2)) or die "cannot truncate $pool: $!";
refuses('pool truncated to half its size', qr/truncated|too short|shorter/i);
restore_good_pool();
starts_with_data('after the half pool');

# 3. the header overwritten with random bytes
{
	open(my $fh, '+<', $pool) or die "cannot open $pool: $!";
	binmode $fh;
	my $junk = join('', map { chr(int(rand(256))) } 1 .. 4096);
	print $fh $junk;
	close $fh or die "cannot write $pool: $!";
}
refuses('header overwritten with random bytes', qr/not an nvmam pool|magic|corrupt/i);
restore_good_pool();
starts_with_data('after the corrupted header');

# 4. one byte of the header changed (a checksum must catch it)
{
	open(my $fh, '+<', $pool) or die "cannot open $pool: $!";
	binmode $fh;
	seek($fh, 20, 0);
	my $byte;
	read($fh, $byte, 1);
	seek($fh, 20, 0);
	print $fh chr(ord($byte) ^ 0x01);
	close $fh or die "cannot write $pool: $!";
}
refuses('one header byte flipped', qr/corrupt|checksum/i);
restore_good_pool();
starts_with_data('after the flipped byte');

# 5. a pool that belongs to another cluster
my ($other, $other_pool) = nvm_node('bad_pool_other', pool_size => '64MB');
$other->start;
$other->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v text) USING nvm;
	INSERT INTO t VALUES (1, 'other cluster');
});
$other->stop;
copy($other_pool, $pool) or die "cannot copy $other_pool: $!";
refuses('pool of another cluster', qr/cluster|system identifier/i);
restore_good_pool();
starts_with_data('after the foreign pool');
# the other cluster still has its own pool and row
$other->start;
is($other->safe_psql('postgres', 'SELECT v FROM t'), 'other cluster',
	'the other cluster is unaffected');
$other->stop;

# 6. a pool path in a directory that does not exist
my $missing = $pool . '_no_such_dir/pool';
$node->append_conf('postgresql.conf', "nvm.pool_path = '$missing'\n");
{
	my $offset = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, 'pool in a missing directory: the server refuses to start');
	$node->stop('immediate') if $started;
	like(fatal_text($offset), qr/\Q$missing\E/,
		'pool in a missing directory: a FATAL message names the pool file');
}
$node->append_conf('postgresql.conf', "nvm.pool_path = '$pool'\n");
starts_with_data('after the missing directory');

# 7. without shared_preload_libraries
my ($plain) = nvm_node('bad_pool_plain', preload => 0, pool_size => '64MB');
$plain->start;
my ($rc, $out, $err) = $plain->psql('postgres', 'CREATE EXTENSION nvmam');
isnt($rc, 0, 'without shared_preload_libraries: CREATE EXTENSION nvmam fails');
like($err, qr/ERROR:.*\n?.*shared_preload_libraries/,
	'without shared_preload_libraries: the error says to use shared_preload_libraries');
is($plain->safe_psql('postgres', q{SELECT count(*) FROM pg_extension WHERE extname = 'nvmam'}),
	'0', 'without shared_preload_libraries: the extension is not created');
is($plain->safe_psql('postgres', 'SELECT 1'), '1',
	'without shared_preload_libraries: the server is still up');
$plain->stop;

# and a cluster whose nvm tables exist, started without preloading: using the
# table fails with an error (no crash), and preloading again brings the rows back
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->start;
($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
isnt($rc, 0, 'nvm table without preloading: a query fails');
like($err, qr/shared_preload_libraries/,
	'nvm table without preloading: the error says to use shared_preload_libraries');
($rc, $out, $err) = $node->psql('postgres', q{INSERT INTO t VALUES (5000, 'x')});
isnt($rc, 0, 'nvm table without preloading: an insert fails');
is($node->safe_psql('postgres', 'SELECT 1'), '1',
	'nvm table without preloading: the server is still up');
$node->stop;
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'nvmam'");
starts_with_data('preloaded again');

done_testing();

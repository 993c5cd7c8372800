# regress/t/007_bad_pool_fuzz.pl
#	  Fuzzing of the pool header and of the path that opens the pool: with
#	  the server stopped, the pool's first 4 KiB are mutated at random (bit
#	  flips, random bytes, zeroed ranges, header fields changed with the
#	  checksum made valid again) or the file is truncated or extended, and
#	  the server is started.  It must either refuse with a FATAL message that
#	  names the pool file, or start with the data intact; it may start only
#	  when the header is left as it was (or was rewritten with a valid
#	  checksum), and must start then; it never crashes or hangs.  (A header
#	  rewritten to name the other concurrency-control mode, with a valid
#	  checksum, makes the server convert the pool from a mode it was not
#	  written in: then only a working server is asked for.)  The good pool
#	  is put back after each mutation, with the data directory's record of
#	  it (pg_nvm/binding); the data is checked at the end.
#
#	  NVM_FUZZ_SEED=N repeats a run's mutations, NVM_FUZZ_ITERATIONS=N
#	  changes their number.
use strict;
use warnings;
no warnings 'portable';    # 64-bit constants

use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use NvmTest;

my $ITERATIONS = $ENV{NVM_FUZZ_ITERATIONS} // 60;
my $SEED = $ENV{NVM_FUZZ_SEED} // 7007;
srand($SEED);
diag("random seed $SEED (NVM_FUZZ_SEED=$SEED repeats these mutations), $ITERATIONS mutations");

# a start that takes longer than this counts as a hang (pg_ctl gives up later)
my $START_LIMIT = 30;
$ENV{PGCTLTIMEOUT} = $START_LIMIT + 10;

my ($node, $pool) = nvm_node('fuzz', pool_size => '32MB');
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL) USING nvm;
	CREATE INDEX t_v ON t (v);
	INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 1000) g;
	UPDATE t SET v = 'u' || id WHERE id % 10 = 0;
	DELETE FROM t WHERE id % 100 = 1;
});
$node->stop;

my $good = "$pool.good";
copy($pool, $good) or die "cannot copy $pool: $!";
push @NvmTest::extra_files, $good;
# the data directory's record of its pool goes with the copy: every start
# claims the pool anew, and a copy older than that record is refused
my $binding = $node->data_dir . '/pg_nvm/binding';
my $good_binding = "$pool.good_binding";
copy($binding, $good_binding) or die "cannot copy $binding: $!";
push @NvmTest::extra_files, $good_binding;
my $pool_size = -s $pool;

sub read_head
{
	my ($file, $len) = @_;
	open(my $fh, '<', $file) or die "cannot open $file: $!";
	binmode $fh;
	my $buf = '';
	read($fh, $buf, $len);
	close $fh;
	return $buf;
}
my $good_head = read_head($good, 4096);
is(length($good_head), 4096, 'the pool has at least 4 KiB');

# The header is the part of the first 4 KiB covered by its checksum: FNV-1a
# (64 bits) over every byte before the checksum, stored right after them.
# Find where the checksum is (arithmetic wraps at 64 bits under "integer").
sub fnv1a
{
	my ($bytes) = @_;
	use integer;
	my $h = unpack('q', pack('Q', 0xcbf29ce484222325));
	foreach my $byte (unpack('C*', $bytes))
	{
		$h ^= $byte;
		$h *= 0x100000001b3;
	}
	return $h;
}

my $ck_off;
{
	use integer;
	my $h = unpack('q', pack('Q', 0xcbf29ce484222325));
	for my $i (0 .. 4087)
	{
		if ($i >= 16 && $i % 8 == 0 && unpack('q<', substr($good_head, $i, 8)) == $h)
		{
			$ck_off = $i;
			last;
		}
		$h ^= ord(substr($good_head, $i, 1));
		$h *= 0x100000001b3;
	}
}
ok(defined $ck_off, 'the header checksum (FNV-1a of the bytes before it) is found')
  or BAIL_OUT('the header checksum was not found: update this test to the pool format');
my $HDR = $ck_off + 8;
# the pool was created with the size in its header
my $header_pool_size = $pool_size;
note("header: $HDR bytes, checksum at $ck_off; file $pool_size bytes");

sub restore_good_pool
{
	copy($good, $pool) or die "cannot restore $pool: $!";
	chmod 0600, $pool;
	copy($good_binding, $binding) or die "cannot restore $binding: $!";
	chmod 0600, $binding;
	return;
}

# ---------------------------------------------------------------------------
# mutations: each returns a description; the file is changed in place
# ---------------------------------------------------------------------------

sub write_at
{
	my ($off, $bytes) = @_;
	open(my $fh, '+<', $pool) or die "cannot open $pool: $!";
	binmode $fh;
	seek($fh, $off, 0) or die "cannot seek in $pool: $!";
	print $fh $bytes or die "cannot write $pool: $!";
	close $fh or die "cannot write $pool: $!";
	return;
}

# an offset in the first 4 KiB, three times in four inside the header
sub some_offset
{
	return rand() < 0.75 ? int(rand($HDR)) : $HDR + int(rand(4096 - $HDR));
}

sub random_bytes
{
	my ($n) = @_;
	return join('', map { chr(int(rand(256))) } 1 .. $n);
}

sub mutate_bit_flips
{
	my $n = 1 + int(rand(3));
	my @what;
	for (1 .. $n)
	{
		my $off = some_offset();
		my $bit = int(rand(8));
		my $byte = ord(substr(read_head($pool, 4096), $off, 1));
		write_at($off, chr($byte ^ (1 << $bit)));
		push @what, "$off.$bit";
	}
	return "bit flips at byte.bit " . join(', ', @what);
}

sub range
{
	my $off = some_offset();
	my $len = 1 + int(rand(rand() < 0.7 ? 32 : 4096 - $off));
	$len = 4096 - $off if $off + $len > 4096;
	return ($off, $len);
}

sub mutate_random_range
{
	my ($off, $len) = range();
	write_at($off, random_bytes($len));
	return "random bytes over [$off, " . ($off + $len) . ')';
}

sub mutate_zero_range
{
	my ($off, $len) = range();
	write_at($off, "\0" x $len);
	return "zeroes over [$off, " . ($off + $len) . ')';
}

sub mutate_truncate
{
	my @choices = (
		sub { 0 },
		sub { int(rand($HDR)) },
		sub { $HDR + int(rand(4096 - $HDR)) },
		sub { 4096 + int(rand($header_pool_size - 4096)) },
		sub { $header_pool_size - 1 },
		sub { $header_pool_size - 4096 },
		sub { int($header_pool_size / 2) });
	my $len = $choices[ int(rand(@choices)) ]->();
	truncate($pool, $len) or die "cannot truncate $pool: $!";
	return "truncated to $len bytes";
}

sub mutate_extend
{
	my $n = 1 + int(rand(3 * 4096));
	open(my $fh, '>>', $pool) or die "cannot open $pool: $!";
	binmode $fh;
	print $fh random_bytes($n);
	close $fh or die "cannot write $pool: $!";
	return "extended by $n random bytes";
}

# a word of the header (4 or 8 bytes, aligned, before the checksum) set to
# another value, and the checksum made valid again: the checks after the
# checksum (layout, size, cluster, mode) must catch what matters
sub mutate_field
{
	my $w = rand() < 0.5 ? 4 : 8;
	my $off = $w * int(rand($ck_off / $w));
	my $fmt = $w == 4 ? 'L<' : 'Q<';
	my $head = read_head($pool, $HDR);
	my $old = unpack($fmt, substr($head, $off, $w));
	my $max = $w == 4 ? 0xffffffff : 0xffffffffffffffff;
	my @values = (0, 1, $max, $old + 1, $old - 1, $old * 2, int($old / 2),
		$old ^ (1 << int(rand($w * 8))), int(rand(2**31)), 4096, 1 << 20);
	my $new = $values[ int(rand(@values)) ];
	$new = $max if $new > $max;
	$new = 0 if $new < 0;
	substr($head, $off, $w) = pack($fmt, $new);
	substr($head, $ck_off, 8) = pack('q<', fnv1a(substr($head, 0, $ck_off)));
	write_at(0, $head);
	return "header word [$off, " . ($off + $w) . ") $old -> $new, checksum fixed";
}

my @mutations = (
	[ \&mutate_bit_flips, 3 ],
	[ \&mutate_random_range, 2 ],
	[ \&mutate_zero_range, 2 ],
	[ \&mutate_truncate, 2 ],
	[ \&mutate_extend, 1 ],
	[ \&mutate_field, 3 ]);
my $total_weight = 0;
$total_weight += $_->[1] for @mutations;

sub some_mutation
{
	my $r = rand($total_weight);
	foreach my $m (@mutations)
	{
		return $m->[0] if $r < $m->[1];
		$r -= $m->[1];
	}
	return $mutations[-1][0];
}

# ---------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------

my $expected_data = '990|495990|u10|v777';

sub data_of
{
	return $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) || '|' || sum(id) FROM t;
		SELECT v FROM t WHERE id = 10;
		SELECT v FROM t WHERE id = 777;});
}

# one start attempt on the pool as it is; checks what must hold whatever
# happened.  Returns true if the server started (it is stopped again).
sub attempt
{
	my ($name, $may_start, $must_start) = @_;
	$node->rotate_logfile;
	my $t0 = time;
	my $started = $node->start(fail_ok => 1);
	my $elapsed = time - $t0;
	cmp_ok($elapsed, '<', $START_LIMIT, "$name: the start attempt ends in time");
	if (!$started && defined $node->{_pid})
	{
		# pg_ctl gave up but a postmaster is there: it hangs
		fail("$name: the server neither starts nor exits");
		$node->stop('immediate', fail_ok => 1);
		$node->kill9;
		$node->{_pid} = undef;
	}
	if ($started)
	{
		ok($may_start, "$name: the server starts only if the header is intact or valid");
		my ($rc, $out, $err);
		if ($node->log_contains(qr/converting nvm pool/))
		{
			# A header rewritten with the other concurrency-control mode and
			# a valid checksum: the server trusts it and converts the pool,
			# running recovery with the status store of a mode the pool was
			# not written in; the latest commits may then be lost.  Nothing
			# can tell such a header from a true one: only ask that the
			# server works.
			($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
			is($rc . $err, '0', "$name: the server converts the pool and answers queries");
		}
		else
		{
			($rc, $out, $err) = $node->psql('postgres', q{
				SET enable_seqscan = off; SET enable_bitmapscan = off;
				SELECT count(*) || '|' || sum(id) FROM t;
				SELECT v FROM t WHERE id = 10;
				SELECT v FROM t WHERE id = 777;
				SELECT 'checked' FROM bt_index_check('t_pkey', true);});
			is(join('|', split /\n/, $out), $expected_data . '|checked',
				"$name: the server starts and the data is intact")
			  or diag("psql: rc $rc, $err");
		}
		ok($node->stop('fast', fail_ok => 1), "$name: the server stops cleanly");
	}
	else
	{
		ok(!$must_start, "$name: the server starts with an unchanged header")
		  or diag(slurp_file($node->logfile));
		if (!$must_start)
		{
			like(nvm_fatal_text($node), qr/\Q$pool\E/,
				"$name: the server refuses with a FATAL message naming the pool file")
			  or diag(slurp_file($node->logfile));
		}
	}
	is(nvm_log_crashes($node), '', "$name: no crash in the server log");
	return $started;
}

# ---------------------------------------------------------------------------
# the fuzzing
# ---------------------------------------------------------------------------

ok(attempt('the good pool', 1, 1), 'the server starts with the good pool');

my %outcomes;
for my $i (1 .. $ITERATIONS)
{
	restore_good_pool();
	my $mutate = some_mutation();
	my $what = $mutate->();
	my $name = "mutation $i ($what)";
	my $size = -s $pool;
	my $head = read_head($pool, $HDR);
	my $header_kept = $head eq substr($good_head, 0, $HDR) && $size >= $header_pool_size;
	# a header rewritten with a valid checksum may pass validation
	my $resummed = $what =~ /checksum fixed/ && length($head) == $HDR
	  && $size >= $header_pool_size;
	my $started = attempt($name, $header_kept || $resummed, $header_kept);
	$outcomes{ $started ? 'started' : 'refused' }++;
}
note("outcomes: " . join(', ', map { "$_ $outcomes{$_}" } sort keys %outcomes));
cmp_ok($outcomes{refused} // 0, '>', $ITERATIONS / 3, 'most mutations were refused');

# --- the good pool at the end --------------------------------------------------
restore_good_pool();
$node->rotate_logfile;
$node->start;
is(join('|', split /\n/, data_of()), $expected_data, 'at the end: the data is intact');
my $d = nvm_scan_digests($node, 't', 'id', "id || ':' || v");
is($d->{index}, $d->{seq}, 'at the end: index and sequential scans agree');
like($d->{seq}, qr/^990\|/, 'at the end: 990 rows');
nvm_check_indexes($node, 't', 'at the end');
$node->stop;
done_testing();

# regress/t/017_pool_growth.pl
#	  A pool that grows online, as tables on disk do.  A pool created at
#	  64MB takes 600MB of committed rows in statements of 50,000 rows
#	  (growing by nvm.pool_grow_step while the statements run, with a log
#	  line per growth); nvm_pool shows the grown size, the maximum and the
#	  number of growth segments, and the file has grown with it.  Then,
#	  twice, an uncommitted batch grows the pool further and the server is
#	  killed while the batch holds that space: once only the batch's backend
#	  is killed (the postmaster, which never saw the growth, reinitialises
#	  and recovers), once the whole server (as in a power loss).  After each
#	  crash exactly the committed rows are there (counts, sequential and
#	  index scans agree, amcheck with heapallindexed is clean), the pool
#	  keeps its size, the space of the lost batch is reused without growing,
#	  and writes go on.  Finally, a server whose file size limit stops the
#	  pool from growing fails the statement with ERRCODE_DISK_FULL and a
#	  hint, and goes on working; so does a pool at nvm.pool_max_size.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use NvmTest;

my $MB = 1024 * 1024;
my $BATCH = 50_000;
my $t0 = time;

my ($node, $pool) = nvm_node('growth', pool_size => '64MB');
$node->append_conf('postgresql.conf', qq{
autovacuum = off
restart_after_crash = on
nvm.pool_grow_step = '64MB'
nvm.pool_max_size = '2GB'
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE big (id int PRIMARY KEY, batch int NOT NULL, pad text NOT NULL) USING nvm;
	CREATE INDEX big_batch ON big (batch);
});

sub pool_stats
{
	my %s;
	@s{qw(size used max segments)} = split /\|/, $node->safe_psql('postgres',
		'SELECT pool_size, used_bytes, max_size, segments FROM nvm_pool');
	return \%s;
}

# insert_batch N [SESSION]: the SQL of batch N, 50,000 rows of about 1 kB
# (stored inline, uncompressed: below the TOAST threshold)
sub batch_sql
{
	my ($n) = @_;
	my $from = ($n - 1) * $BATCH + 1;
	my $to = $n * $BATCH;
	return "INSERT INTO big SELECT g, $n, rpad(md5(g::text), 1000, md5(g::text))"
	  . " FROM generate_series($from, $to) g";
}

my $start = pool_stats();
is($start->{size}, 64 * $MB, 'the pool starts at nvm.pool_size, 64MB');
is($start->{segments}, 0, 'with no growth segment');
is($start->{max}, 2048 * $MB, 'nvm_pool shows the maximum, nvm.pool_max_size');

# --- 600MB of committed rows, 50,000 rows a statement ------------------------
my $committed = 0;
for my $n (1 .. 12)
{
	$node->safe_psql('postgres', batch_sql($n));
	$committed = $n;
}
my $grown = pool_stats();
note("after 12 batches: pool $grown->{size} bytes, $grown->{used} used, $grown->{segments} segments");
cmp_ok($grown->{used}, '>=', 600 * $MB, 'the pool holds 600MB of committed rows');
cmp_ok($grown->{size}, '>=', $grown->{used}, 'its size has grown past them');
cmp_ok($grown->{segments}, '>=', 9, 'by many steps of 64MB');
cmp_ok($grown->{size}, '<=', 64 * $MB + ($grown->{segments} * 64 + 1) * $MB,
	'each step added nvm.pool_grow_step');
cmp_ok(-s $pool, '>=', $grown->{size}, 'the pool file has grown with it');
my @grew = slurp_file($node->logfile) =~ /LOG:\s+nvm pool "[^"]*" grew from \d+ MB to \d+ MB/g;
is(scalar(@grew), $grown->{segments}, 'the server log notes each growth');

my $rows = $committed * $BATCH;

# check_rows WHEN [QUICK]: exactly the committed rows, and clean indexes;
# unless QUICK, also every row's value and index and sequential scans agree
sub check_rows
{
	my ($when, $quick) = @_;
	my $sum = $rows * ($rows + 1) / 2;
	is($node->safe_psql('postgres', 'SELECT count(*), sum(id::int8), max(batch) FROM big'),
		"$rows|$sum|$committed", "$when: exactly the committed rows");
	nvm_check_indexes($node, 'big', $when);
	return if $quick;
	is($node->safe_psql('postgres',
			q{SELECT count(*) FROM big WHERE length(pad) <> 1000 OR left(pad, 32) <> md5(id::text)}),
		'0', "$when: every row has its value");
	my $d = nvm_scan_digests($node, 'big', 'id', "id || ':' || batch");
	like($d->{index_plan}, qr/Index Scan using big_pkey/, "$when: the index plan uses big_pkey");
	is($d->{index}, $d->{seq}, "$when: index and sequential scans agree");
	return;
}
check_rows('after growing');

# --- a crash while an uncommitted batch holds space it grew the pool for ------

# uncommitted_batch N: a session that has inserted batch N in an open
# transaction, after which the pool has grown; returns the session and its
# backend's pid
sub uncommitted_batch
{
	my ($n) = @_;
	my $before = pool_stats();
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	$bg->query_safe('BEGIN');
	$bg->query_safe(batch_sql($n));
	$bg->query_safe(batch_sql($n + 1));
	my $after = pool_stats();
	cmp_ok($after->{segments}, '>', $before->{segments},
		"batch $n: the uncommitted rows made the pool grow");
	is($node->safe_psql('postgres', "SELECT count(*) FROM big WHERE batch >= $n"),
		'0', "batch $n: its rows are not visible to others");
	return ($bg, $pid, $after);
}

sub writes_go_on
{
	my ($when, $held) = @_;
	my $before = pool_stats();
	is($before->{size}, $held->{size}, "$when: the pool keeps its grown size");
	is($before->{segments}, $held->{segments}, "$when: and its segments");
	$committed++;
	$node->safe_psql('postgres', batch_sql($committed));
	$rows += $BATCH;
	is(pool_stats()->{segments}, $before->{segments},
		"$when: a new batch reuses the lost batch's space without growing");
	check_rows("$when, after a new batch", 1);
	return;
}

# only the backend: the postmaster reinitialises shared memory and recovers
{
	my ($bg, $pid, $held) = uncommitted_batch($committed + 1);
	my $log_offset = -s $node->logfile;
	kill 'KILL', $pid;
	eval { $bg->quit; };
	ok($node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset),
		'the postmaster saw the backend die and reinitialises');
	ok(nvm_wait_ready($node), 'the server is back after the backend was killed');
	check_rows('after the backend crash');
	writes_go_on('after the backend crash', $held);
}

# the whole server, as in a power loss
{
	my ($bg, $pid, $held) = uncommitted_batch($committed + 1);
	nvm_crash($node, $pid);
	eval { $bg->quit; };
	$node->start;
	check_rows('after the server crash');
	writes_go_on('after the server crash', $held);
}

$node->restart;
check_rows('after a clean restart');
my $final = pool_stats();
cmp_ok($final->{size}, '>', 64 * $MB * 10, "the pool's size in nvm_pool has grown ($final->{size} bytes)");
is(nvm_log_crashes($node, 0) =~ s/[^\n]*terminated by signal 9[^\n]*\n?//gr, '',
	'no crash in the server log but the backend killed on purpose');
$node->stop;
note(sprintf('growth part: %.0f s', time - $t0));

# --- a pool that cannot grow ----------------------------------------------------
# is_pool_full NAME POOL STDERR HINT: the error is ERRCODE_DISK_FULL naming
# the pool, with a hint matching HINT
sub is_pool_full
{
	my ($name, $file, $err, $hint) = @_;
	like($err, qr/ERROR:\s+53100:[^\n]*\Q$file\E/, "$name: fails with SQLSTATE 53100 naming the pool");
	like($err, qr/HINT:[^\n]*$hint/, "$name: a hint says what to do");
	unlike($err, qr/PANIC|TRAP|terminated|server closed the connection/, "$name: no crash");
	return;
}

# fill_until_full NODE TABLE FROM: inserts 5,000-row batches, ids from
# FROM on, until one fails; returns the rows committed and the error
sub fill_until_full
{
	my ($n, $table, $from) = @_;
	my $done = 0;
	for my $i (1 .. 400)
	{
		my $first = $from + $done;
		my ($rc, $out, $err) = $n->psql('postgres',
			"\\set VERBOSITY verbose\nINSERT INTO $table SELECT g, rpad(md5(g::text), 1000, 'x')"
			  . " FROM generate_series($first, $first + 4999) g", on_error_stop => 0);
		return ($done, $err) if $rc != 0 || $err =~ /ERROR:/;
		$done += 5000;
	}
	return ($done, '');
}

# the file system refuses to extend the file: a file-size limit (ulimit -f)
# on the server, which PostgreSQL sees as EFBIG, as it would ENOSPC
{
	my ($lim, $lim_pool) = nvm_node('growth_limit', pool_size => '32MB');
	$lim->append_conf('postgresql.conf', "autovacuum = off\nnvm.pool_grow_step = '16MB'\n");
	my $pgdata = $lim->data_dir;
	my $logfile = $lim->logfile;
	# 96MB: the pool grows twice, no other file of the cluster comes near
	system('bash', '-c', "ulimit -f 98304 && pg_ctl -D '$pgdata' -l '$logfile' -w start >/dev/null") == 0
	  or BAIL_OUT('could not start the server with a file-size limit');
	$lim->_update_pid(1);
	$lim->safe_psql('postgres', q{
		CREATE EXTENSION nvmam;
		CREATE TABLE fill (id int PRIMARY KEY, pad text NOT NULL) USING nvm;
	});
	my ($done, $err) = fill_until_full($lim, 'fill', 1);
	note("the limited pool took $done rows");
	cmp_ok($done, '>', 40_000, 'the pool grew up to the file-size limit');
	is_pool_full('a pool the file system cannot extend', $lim_pool, $err, 'Free space on that file system');
	like($err, qr/DETAIL:[^\n]*no room to extend it: File too large/,
		'the detail says the file system refused');
	is($lim->safe_psql('postgres', 'SELECT count(*) FROM fill'), $done,
		'the failed statement left the committed rows as they were');
	$lim->safe_psql('postgres', 'TRUNCATE fill');
	my ($more) = fill_until_full($lim, 'fill', 1_000_000);
	cmp_ok($more, '>=', $done - 5000, 'after TRUNCATE the space is written again');
	is(nvm_log_crashes($lim), '', 'no crash in the server log');
	$lim->stop;
}

# a pool at its maximum size
{
	my ($max, $max_pool) = nvm_node('growth_max', pool_size => '32MB');
	$max->append_conf('postgresql.conf', "nvm.pool_max_size = '48MB'\nnvm.pool_grow_step = '8MB'\n");
	$max->start;
	$max->safe_psql('postgres', q{
		CREATE EXTENSION nvmam;
		CREATE TABLE fill (id int PRIMARY KEY, pad text NOT NULL) USING nvm;
	});
	my ($done, $err) = fill_until_full($max, 'fill', 1);
	is_pool_full('a pool at nvm.pool_max_size', $max_pool, $err, 'Raise nvm\.pool_max_size');
	like($err, qr/DETAIL:[^\n]*maximum size of 48 MB/, 'the detail names the maximum');
	my $s = $max->safe_psql('postgres', 'SELECT pool_size, segments FROM nvm_pool');
	like($s, qr/^(\d+)\|2$/, 'the pool grew to its maximum in two steps');
	my ($size) = $s =~ /^(\d+)/;
	cmp_ok($size, '<=', 48 * $MB, 'and not beyond');

	# a larger maximum at the next start: it grows on
	$max->append_conf('postgresql.conf', "nvm.pool_max_size = '96MB'\n");
	$max->restart;
	my ($more) = fill_until_full($max, 'fill', 1_000_000);
	cmp_ok($more, '>', 5000, 'with a larger nvm.pool_max_size the pool grows on');
	is(nvm_log_crashes($max), '', 'no crash in the server log');
	$max->stop;
}
note(sprintf('whole test: %.0f s', time - $t0));
done_testing();

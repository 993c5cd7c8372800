# regress/t/006_full_pool.pl
#	  A full pool: on a pool of the minimum size (32MB) that may not grow
#	  (nvm.pool_max_size = 32MB), inserting until the pool is full fails the
#	  statement with ERRCODE_DISK_FULL (53100), a message naming the pool
#	  file and a hint (a COPY too); the failed transaction leaves
#	  nothing visible, committed rows stay intact (counts, scans, amcheck)
#	  and every table stays readable, also across a restart and a crash.
#	  A rolled-back TRUNCATE or DROP gives no space back; a committed one
#	  does, and inserts work again.  A full pool inside a subtransaction
#	  rolls back only that subtransaction.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my ($node, $pool) = nvm_node('full_pool', pool_size => '32MB');
$node->append_conf('postgresql.conf', "autovacuum = off\nnvm.pool_max_size = '32MB'\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE keep (id int PRIMARY KEY, v text NOT NULL) USING nvm;
	CREATE INDEX keep_v ON keep (v);
	INSERT INTO keep SELECT g, 'k' || g FROM generate_series(1, 1000) g;
	CREATE TABLE other (id int PRIMARY KEY, v text NOT NULL) USING nvm;
	-- values stay inline as they are (no compression, no TOAST table), so a
	-- wide row needs its full size in the pool
	ALTER TABLE other ALTER COLUMN v SET STORAGE PLAIN;
	INSERT INTO other SELECT g, 'o' || g FROM generate_series(1, 100) g;
	CREATE TABLE plain (id int PRIMARY KEY, v text NOT NULL) USING heap;
	INSERT INTO plain SELECT g, 'p' || g FROM generate_series(1, 100) g;
	CREATE TABLE big (id int PRIMARY KEY, pad text NOT NULL) USING nvm;
});
is($node->safe_psql('postgres', 'SELECT pool_size FROM nvm_pool_stats()'),
	32 * 1024 * 1024, 'the pool has the minimum size, 32MB');

# the expected rows of keep: id => v
my %keep = map { $_ => "k$_" } 1 .. 1000;

sub pool_free
{
	return $node->safe_psql('postgres', 'SELECT free_bytes FROM nvm_pool_stats()');
}

# try SQL: runs SQL with verbose errors, going on after an error (as a
# client that rolls back to a savepoint does); returns (rc, stdout, stderr),
# rc non-zero if a statement failed
sub try
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		on_error_stop => 0);
	$rc = 3 if $rc == 0 && $err =~ /ERROR:/;
	return ($rc, $out, $err);
}

# is_pool_full NAME STDERR: the error is ERRCODE_DISK_FULL naming the pool,
# with a hint
sub is_pool_full
{
	my ($name, $err) = @_;
	like($err, qr/ERROR:\s+53100:/, "$name: fails with SQLSTATE 53100 (disk full)");
	like($err, qr/ERROR:\s+53100:[^\n]*\Q$pool\E/, "$name: the message names the pool file");
	like($err, qr/HINT:[^\n]*nvm\.pool_max_size/, "$name: a hint says what to do");
	unlike($err, qr/PANIC|TRAP|terminated|server closed the connection/,
		"$name: no crash");
	return;
}

# the digest of big, kept to see that failed statements change nothing
sub big_digest
{
	return $node->safe_psql('postgres',
		q{SELECT count(*) || '|' || coalesce(md5(string_agg(id || ':' || pad, ',' ORDER BY id)), '') FROM big});
}

# check_tables WHEN BIGROWS: every table holds what it should, by every path
sub check_tables
{
	my ($when, $bigrows) = @_;
	my @ids = sort { $a <=> $b } keys %keep;
	my $sum = 0;
	$sum += $_ for @ids;
	is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM keep'),
		scalar(@ids) . "|$sum", "$when: keep has its rows");
	is($node->safe_psql('postgres', q{SELECT count(*) FROM keep WHERE v <> 'k' || id}),
		'0', "$when: keep's rows have their values");
	my $d = nvm_scan_digests($node, 'keep', 'id', "id || ':' || v");
	like($d->{index_plan}, qr/Index Scan using keep_pkey/, "$when: keep index plan uses keep_pkey");
	is($d->{index}, $d->{seq}, "$when: keep: index and sequential scans agree");
	is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM other'),
		'100|5050', "$when: other is readable and intact");
	is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM plain'),
		'100|5050', "$when: the heap table is readable and intact");
	if (defined $bigrows)
	{
		is($node->safe_psql('postgres', 'SELECT count(*) FROM big'),
			$bigrows, "$when: big has its $bigrows committed rows");
		my $db = nvm_scan_digests($node, 'big', 'id', "id || ':' || pad");
		like($db->{index_plan}, qr/Index Scan using big_pkey/, "$when: big index plan uses big_pkey");
		is($db->{index}, $db->{seq}, "$when: big: index and sequential scans agree");
		nvm_check_indexes($node, 'big', "$when: big");
	}
	nvm_check_indexes($node, 'keep', "$when: keep");
	nvm_check_indexes($node, 'other', "$when: other");
	return;
}

check_tables('before filling the pool', 0);
my $free_empty = pool_free();

# --- fill the pool with committed batches until one fails -------------------
my $batch = 5000;
my $next = 1;
my ($rc, $out, $err);
for my $i (1 .. 200)
{
	($rc, $out, $err) = try(
		"INSERT INTO big SELECT g, repeat(md5(g::text), 6) FROM generate_series($next, "
		  . ($next + $batch - 1) . ') g');
	last if $rc != 0;
	$next += $batch;
	note("after $i batches: " . pool_free() . ' bytes free');
}
my $cap = $next - 1;
isnt($rc, 0, "an insert fails once the pool is full (after $cap committed rows)");
is_pool_full('insert into a full pool', $err);
cmp_ok($cap, '>=', $batch, 'at least one batch was committed before the pool was full');
note('free bytes reported by nvm_pool_stats() when full: ' . pool_free() . " of $free_empty");
is( $node->safe_psql('postgres', qq{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM big WHERE id >= $next}),
	'0', 'no row of the failed insert is visible (index scan)');
is($node->safe_psql('postgres', "SELECT count(*) FROM big WHERE pad IS NOT NULL AND id >= $next"),
	'0', 'no row of the failed insert is visible (sequential scan)');
check_tables('after the pool filled', $cap);
my $free_full = pool_free();
my $digest = big_digest();

# --- more writes into the full pool fail the same way ------------------------
($rc, $out, $err) = try('UPDATE big SET pad = pad || pad');
isnt($rc, 0, 'an update of every row in a full pool fails');
is_pool_full('update in a full pool', $err);
is(big_digest(), $digest, 'the failed update changed nothing');

($rc, $out, $err) = try(
	q{INSERT INTO other VALUES (1000, repeat('x', 48 * 1024 * 1024))});
isnt($rc, 0, 'a row larger than the whole pool fails');
is_pool_full('a 48MB row', $err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM other WHERE id = 1000'), '0',
	'the 48MB row is not there');

# a transaction whose second insert finds the pool full: all of it rolls back
($rc, $out, $err) = try(qq{
	BEGIN;
	INSERT INTO plain VALUES (1000, 'in the failed transaction');
	INSERT INTO big SELECT g, repeat(md5(g::text), 6) FROM generate_series($next, $next + 100000) g;
	COMMIT;
});
isnt($rc, 0, 'a transaction that fills the pool fails');
is_pool_full('a transaction that fills the pool', $err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM plain WHERE id = 1000'), '0',
	'the failed transaction rolled back its other rows');
is(big_digest(), $digest, 'the failed transaction left big as it was');

# a COPY that fills the pool (COPY stores a batch of rows with one call of
# the core, nvm_record_insert_many): the same error, nothing of it left
my $copyfile = $node->data_dir . '/full_copy.data';
$node->safe_psql('postgres', qq{COPY (SELECT g, repeat(md5(g::text), 6)
	FROM generate_series($next, $next + 100000) g) TO '$copyfile'});
($rc, $out, $err) = try("COPY big FROM '$copyfile'");
isnt($rc, 0, 'a COPY that fills the pool fails');
is_pool_full('a COPY that fills the pool', $err);
is(big_digest(), $digest, 'the failed COPY left big as it was');
unlink $copyfile;

# --- a rolled-back TRUNCATE or DROP gives nothing back -----------------------
$node->safe_psql('postgres', 'BEGIN; TRUNCATE big; ROLLBACK;');
is(big_digest(), $digest, 'a rolled-back TRUNCATE keeps the rows');
$node->safe_psql('postgres', 'BEGIN; DROP TABLE big; ROLLBACK;');
is(big_digest(), $digest, 'a rolled-back DROP TABLE keeps the rows');
cmp_ok(pool_free(), '<=', $free_full + 1024 * 1024,
	'a rolled-back TRUNCATE or DROP gives no space back');
($rc, $out, $err) = try(
	"INSERT INTO big SELECT g, repeat(md5(g::text), 6) FROM generate_series($next, $next + $batch - 1) g");
isnt($rc, 0, 'after a rolled-back TRUNCATE and DROP the pool is still full');
is_pool_full('insert after a rolled-back TRUNCATE', $err);

# --- a full pool survives a restart and a crash ------------------------------
$node->restart;
check_tables('after a restart with a full pool', $cap);
is(big_digest(), $digest, 'big is intact after the restart');
nvm_crash($node);
$node->start;
check_tables('after a crash with a full pool', $cap);
is(big_digest(), $digest, 'big is intact after the crash');

# --- TRUNCATE gives the space back when it commits ---------------------------
$node->safe_psql('postgres', 'TRUNCATE big');
my $free_truncated = pool_free();
cmp_ok($free_truncated - $free_full, '>=', ($free_empty - $free_full) / 2,
	'a committed TRUNCATE gives the space back');
my $refill = int($cap * 0.8 / $batch) * $batch;
my $ok = 1;
for (my $from = 1; $from <= $refill; $from += $batch)
{
	($rc, $out, $err) = try("INSERT INTO big SELECT g, repeat(md5(g::text), 6)"
		  . " FROM generate_series($from, " . ($from + $batch - 1) . ') g');
	if ($rc != 0)
	{
		diag("insert of rows $from.. after TRUNCATE failed: $err");
		$ok = 0;
		last;
	}
}
ok($ok, "after TRUNCATE, inserts work again ($refill rows, 80% of what fitted before)");
check_tables('after TRUNCATE and new inserts', $refill);

# --- filling the pool again in a transaction that also wrote elsewhere ------
($rc, $out, $err) = try(qq{
	BEGIN;
	INSERT INTO keep SELECT g, 'k' || g FROM generate_series(2001, 2100) g;
	INSERT INTO big SELECT g, repeat(md5(g::text), 6) FROM generate_series($refill + 1, $refill + 1000000) g;
	COMMIT;
});
isnt($rc, 0, 'the pool fills again');
is_pool_full('filling the pool again', $err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM keep WHERE id BETWEEN 2001 AND 2100'),
	'0', 'the rows the failed transaction inserted into another nvm table are not visible');
check_tables('after the pool filled again', $refill);

# --- DROP TABLE gives the space back; a full pool in a subtransaction --------
$node->safe_psql('postgres', 'DROP TABLE big');
cmp_ok(pool_free() - $free_full, '>=', ($free_empty - $free_full) / 2,
	'a committed DROP TABLE gives the space back');
$node->safe_psql('postgres', 'CREATE TABLE big (id int PRIMARY KEY, pad text NOT NULL) USING nvm');
($rc, $out, $err) = try(q{
	BEGIN;
	INSERT INTO keep SELECT g, 'k' || g FROM generate_series(3001, 3100) g;
	SAVEPOINT s;
	INSERT INTO big SELECT g, repeat(md5(g::text), 6) FROM generate_series(1, 1000000) g;
	ROLLBACK TO SAVEPOINT s;
	SELECT 'inside: ' || count(*) FROM keep WHERE id BETWEEN 3001 AND 3100;
	SELECT 'big inside: ' || count(*) FROM big;
	COMMIT;
});
is_pool_full('a multi-row insert in a subtransaction', $err);
like($out, qr/^inside: 100$/m, 'after ROLLBACK TO SAVEPOINT the rows inserted before it are there');
like($out, qr/^big inside: 0$/m, 'after ROLLBACK TO SAVEPOINT the failed insert left no rows');
is($node->safe_psql('postgres', 'SELECT count(*) FROM keep WHERE id BETWEEN 3001 AND 3100'),
	'100', 'the transaction committed the rows inserted before the savepoint');
$keep{$_} = "k$_" for 3001 .. 3100;
check_tables('after the subtransaction', 0);

# --- and once more: DROP, then inserts work ----------------------------------
$node->safe_psql('postgres', 'DROP TABLE big');
$node->safe_psql('postgres', 'CREATE TABLE big (id int PRIMARY KEY, pad text NOT NULL) USING nvm');
$ok = 1;
for (my $from = 1; $from <= $refill; $from += $batch)
{
	($rc, $out, $err) = try("INSERT INTO big SELECT g, repeat(md5(g::text), 6)"
		  . " FROM generate_series($from, " . ($from + $batch - 1) . ') g');
	if ($rc != 0)
	{
		diag("insert of rows $from.. after DROP failed: $err");
		$ok = 0;
		last;
	}
}
ok($ok, "after DROP TABLE, inserts work again ($refill rows)");
$node->safe_psql('postgres', q{INSERT INTO keep SELECT g, 'k' || g FROM generate_series(4001, 4010) g});
$keep{$_} = "k$_" for 4001 .. 4010;
check_tables('after DROP and new inserts', $refill);

# --- a crash while an insert is filling the pool ------------------------------
# Its rows never become visible; the space it took comes back with TRUNCATE.
$node->safe_psql('postgres', 'TRUNCATE big');
{
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	# slowed down (pg_sleep per row) so that the crash comes in the middle
	$bg->{stdin} .= "INSERT INTO big SELECT g, repeat(md5(g::text), 6)"
	  . " FROM generate_series(1, 1000000) g WHERE pg_sleep(0.0002) IS NOT NULL;\n";
	$bg->{run}->pump_nb;
	ok( $node->poll_query_until('postgres', qq{
			SELECT count(*) > 0 FROM pg_stat_activity
			 WHERE pid = $pid AND state = 'active' AND query LIKE 'INSERT INTO big %'}),
		'a filling insert is running');
	# wait until it has taken a good part of the pool
	ok( $node->poll_query_until('postgres',
			"SELECT free_bytes < $free_empty - 2 * 1024 * 1024 FROM nvm_pool_stats()"),
		'the filling insert has taken space');
	is($node->safe_psql('postgres', "SELECT state FROM pg_stat_activity WHERE pid = $pid"),
		'active', 'the filling insert is still running when the server is killed');
	nvm_crash($node, $pid);
	eval { $bg->quit; };
}
$node->start;
check_tables('after a crash during a filling insert', 0);
$node->safe_psql('postgres', 'TRUNCATE big');
cmp_ok(pool_free() - $free_full, '>=', ($free_empty - $free_full) / 2,
	'TRUNCATE gives back the space of the insert interrupted by the crash');
$ok = 1;
for (my $from = 1; $from <= $refill; $from += $batch)
{
	($rc, $out, $err) = try("INSERT INTO big SELECT g, repeat(md5(g::text), 6)"
		  . " FROM generate_series($from, " . ($from + $batch - 1) . ') g');
	if ($rc != 0)
	{
		diag("insert of rows $from.. after the crash failed: $err");
		$ok = 0;
		last;
	}
}
ok($ok, "after the crash and TRUNCATE, inserts work again ($refill rows)");
check_tables('after the crash, TRUNCATE and new inserts', $refill);

$node->restart;
check_tables('after the last restart', $refill);
is(nvm_log_crashes($node), '', 'no PANIC, failed assertion or crashed process in the server log');
$node->stop;
done_testing();

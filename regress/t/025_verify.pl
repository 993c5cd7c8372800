# regress/t/025_verify.pl
#	  The integrity check on a damaged pool file.  With the server stopped,
#	  words of an nvm table's structures are overwritten in the pool file,
#	  at offsets found with nvm_debug_layout(), one kind of damage at a
#	  time: a chain link into the middle of a block, a chain link outside
#	  the pool, a rolled-back version marked committed (its status disagrees
#	  with the status store), a free list whose head is a number in use,
#	  and an index root naming another record's version.  After each start,
#	  nvm_verify_table() and nvm_verify_pool() name the damage (its kind,
#	  record, version and the pool offset of the damaged word), the server
#	  does not crash, and once the damage is undone both find nothing.
#	  Autovacuum is off: it would walk the damaged chains.
#	  Then, on the intact pool, the checks run over and over while clients
#	  transfer money, insert, roll back and delete, with pruning on and
#	  VACUUM in between: they never report anything (nvm_verify_table locks
#	  the table; nvm_verify_pool either finds the pool quiet for a pass or
#	  fails with "while it was changing", never with a row).
use strict;
use warnings;
no warnings 'portable';    # 64-bit values

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node, $pool) = nvm_node('verify', pool_size => '64MB');
$node->append_conf('postgresql.conf', "autovacuum = off\nnvm.prune_on_update = off\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v text) USING nvm;
	INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g;
	UPDATE t SET v = v || '+' WHERE id <= 20;
	UPDATE t SET v = v || '+' WHERE id <= 20;
	UPDATE t SET id = id + 1000 WHERE id = 60;
	BEGIN;
	UPDATE t SET v = 'rolled back' WHERE id = 50;
	ROLLBACK;
	CREATE TABLE other (id int) USING nvm;
	INSERT INTO other VALUES (1);
});
nvm_verify_clean($node, 't', 'before any damage');
nvm_verify_clean($node, 'all', 'before any damage');

# the layout: item => { "record/version" => [offset, value] }
my %layout;
foreach my $line (split /\n/, $node->safe_psql('postgres', q{
	SELECT item, coalesce(record_no, 0), coalesce(version_no, 0), pool_offset, value
	  FROM nvm_debug_layout('t')}))
{
	my ($item, $rec, $ver, $off, $value) = split /\|/, $line;
	$layout{$item}{"$rec/$ver"} = [ $off, $value ];
}

# head RECORD: the version number of the newest version of RECORD
sub head_version
{
	my ($rec) = @_;
	my $head = $layout{record_head}{"$rec/0"} // die "no record $rec";
	my ($key) = grep { $layout{version}{$_}[0] == $head->[1] } keys %{ $layout{version} };
	die "no head version of record $rec" unless defined $key;
	return (split m{/}, $key)[1];
}

# the record of the row with id ID
sub record_of
{
	my ($id) = @_;
	my $tid = $node->safe_psql('postgres', "SELECT ctid FROM t WHERE id = $id");
	my ($blk, $off) = $tid =~ /\((\d+),(\d+)\)/ or die "no row $id";
	my $ver = $blk * 291 + $off;
	my ($key) = grep { /\/$ver$/ } keys %{ $layout{version} };
	die "no version $ver" unless defined $key;
	return (split m{/}, $key)[0];
}

my $r1 = record_of(1);
my $r2 = record_of(2);
my $r30 = record_of(30);
# the rolled-back version is the newest of id 50's record; its reader sees the older one
my $r50 = record_of(50);

sub read_word
{
	my ($offset) = @_;
	open(my $fh, '<', $pool) or die "cannot open $pool: $!";
	binmode $fh;
	sysseek($fh, $offset, 0) or die "cannot seek: $!";
	sysread($fh, my $buf, 8) == 8 or die "cannot read: $!";
	close $fh;
	return unpack('Q<', $buf);
}

sub write_word
{
	my ($offset, $value) = @_;
	open(my $fh, '+<', $pool) or die "cannot open $pool: $!";
	binmode $fh;
	sysseek($fh, $offset, 0) or die "cannot seek: $!";
	syswrite($fh, pack('Q<', $value), 8) == 8 or die "cannot write: $!";
	close $fh;
	return;
}

# damage NAME OFFSET VALUE CHECK: writes VALUE at OFFSET of the stopped
# server's pool, starts it, runs the checks and hands their rows to CHECK,
# then puts the old word back and checks that nothing is found
sub damage
{
	my ($name, $offset, $value, $check) = @_;
	$node->stop;
	my $old = read_word($offset);
	write_word($offset, $value);
	my $log_offset = -s $node->logfile;
	$node->start;
	my @table = map { [ split /\|/, $_, -1 ] } split /\n/, $node->safe_psql('postgres', q{
		SELECT coalesce(record_no, 0), coalesce(version_no, 0), coalesce(pool_offset, 0), kind, msg
		  FROM nvm_verify_table('t')});
	my @pool = map { [ split /\|/, $_, -1 ] } split /\n/, $node->safe_psql('postgres', q{
		SELECT coalesce(record_no, 0), coalesce(version_no, 0), coalesce(pool_offset, 0), kind, msg
		  FROM nvm_verify_pool() WHERE relation = 't'::regclass});
	$check->("$name: nvm_verify_table", @table);
	$check->("$name: nvm_verify_pool", @pool);
	my ($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM nvm_verify_pool(leaks => true)');
	is($rc . $err, '0', "$name: the pool check with leaks runs to the end");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$name: the server is up");
	is(nvm_log_crashes($node, $log_offset), '', "$name: no server process crashed");
	$node->stop;
	write_word($offset, $old);
	$node->start;
	nvm_verify_clean($node, 't', "$name, undone");
	nvm_verify_clean($node, 'all', "$name, undone");
	return;
}

# expect KIND RECORD OFFSET MSG_RE: a check that one of the rows has kind
# KIND, names RECORD (0: any) and OFFSET (0: any), and a message matching
# MSG_RE
sub expect
{
	my ($kind, $rec, $offset, $re) = @_;
	return sub {
		my ($name, @rows) = @_;
		my @hits = grep {
			$_->[3] eq $kind
			  && ($rec == 0 || $_->[0] == $rec)
			  && ($offset == 0 || $_->[2] == $offset)
			  && $_->[4] =~ $re
		} @rows;
		ok(@hits > 0, "$name reports the $kind problem")
		  or diag(join("\n", map { join(' | ', @$_) } @rows) || 'no rows');
	};
}

my $pool_size = -s $pool;

# a chain link into the middle of a block, and one outside the pool
my $v1 = head_version($r1);
my ($prev_off, $prev) = @{ $layout{'version.prev'}{"$r1/$v1"} };
ok($prev != 0, 'the first row has an older version');
damage('a chain link into the middle of a block', $prev_off, $prev + 16,
	expect('chain', $r1, $prev_off, qr/not the start of a block/));
damage('a chain link outside the pool', $prev_off, $pool_size + 4096,
	expect('chain', $r1, $prev_off, qr/outside the pool/));

# a rolled-back version marked committed: the status store says aborted
my $v50 = head_version($r50);
my ($info_off, $info) = @{ $layout{'version.info'}{"$r50/$v50"} };
is($info & 3, 3, 'the newest version of row 50 is rolled back');
damage('a rolled-back version marked committed', $info_off, ($info & ~3) | 2,
	expect('status', $r50, $layout{version}{"$r50/$v50"}[0], qr/status store says aborted/));

# a free list whose head is the number of a version in use
my $v30 = head_version($r30);
my ($list_off) = @{ $layout{free_versions}{'0/0'} };
damage('a free list reaching a number in use', $list_off, $v30,
	expect('free list', 0, $list_off, qr/reaches $v30, which is in use/));

# an index root naming another record's version
my ($root_off, $root) = @{ $layout{'version.index_root'}{"$r1/$v1"} };
my $v2 = head_version($r2);
damage('an index root naming another record', $root_off, $v2,
	expect('index root', $r1, 0, qr/index root $v2 names a version of record $r2/));

# --- the checks under load: no false report --------------------------------
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET nvm.prune_on_update = on;
	SELECT pg_reload_conf();
	CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL) USING nvm;
	INSERT INTO acct SELECT g, 1000 FROM generate_series(1, 200) g;
	CREATE TABLE hist (a int, b int, x int, at timestamptz DEFAULT now()) USING nvm;
	CREATE INDEX hist_a ON hist (a);
});
my $transfer = "$PostgreSQL::Test::Utils::tmp_check/verify_transfer.sql";
my $undo = "$PostgreSQL::Test::Utils::tmp_check/verify_undo.sql";
open(my $fh, '>', $transfer) or die;
print $fh q{\set a random(1, 200)
\set b random(1, 200)
\set x random(1, 50)
BEGIN;
UPDATE acct SET bal = bal - :x WHERE id = :a;
UPDATE acct SET bal = bal + :x WHERE id = :b;
INSERT INTO hist (a, b, x) VALUES (:a, :b, :x);
COMMIT;
};
close $fh;
open($fh, '>', $undo) or die;
print $fh q{\set a random(1, 200)
BEGIN;
UPDATE acct SET bal = bal + 1 WHERE id = :a;
INSERT INTO hist (a, b, x) VALUES (:a, :a, 0);
ROLLBACK;
DELETE FROM hist WHERE a = :a AND x < 5;
};
close $fh;
my $seconds = 8;
my $bg = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '3', '-T', $seconds, '--max-tries=100',
	  '-f', "$transfer\@4", '-f', "$undo\@1",
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \my $out, '2>', \my $err);
my ($table_checks, $pool_exact, $pool_busy, @reports) = (0, 0, 0);
my $deadline = time() + $seconds;
while (time() < $deadline)
{
	foreach my $table ('acct', 'hist')
	{
		my ($rc, $rows, $stderr) = $node->psql('postgres',
			"SELECT kind || ': ' || msg FROM nvm_verify_table('$table')");
		push @reports, "$table: $rows$stderr" if $rc != 0 || $rows ne '';
		$table_checks++;
	}
	my ($rc, $rows, $stderr) = $node->psql('postgres',
		"SELECT coalesce(relation::text, relfilenode::text) || ' ' || kind || ': ' || msg FROM nvm_verify_pool()");
	if ($rc != 0 && $stderr =~ /while it was changing/)
	{
		$pool_busy++;
	}
	else
	{
		push @reports, "pool: $rows$stderr" if $rc != 0 || $rows ne '';
		$pool_exact++;
	}
	$node->safe_psql('postgres', 'VACUUM acct; VACUUM hist');
}
$bg->finish;
like($out, qr/number of transactions actually processed: [1-9]/, 'the clients ran during the checks');
is(scalar(@reports), 0,
	"under load, $table_checks table checks and $pool_exact pool checks report nothing ($pool_busy pool checks found the pool changing)")
  or diag(join("\n", @reports[ 0 .. ($#reports < 10 ? $#reports : 9) ]));
is($node->safe_psql('postgres', 'SELECT sum(bal) FROM acct'), '200000', 'the total is unchanged');
nvm_verify_clean($node, $_, 'after the load') foreach ('acct', 'hist', 'all');

is(nvm_log_crashes($node), '', 'no PANIC, assertion failure or unexpected signal in the whole test')
  or diag(nvm_log_crashes($node));
$node->stop;
done_testing();

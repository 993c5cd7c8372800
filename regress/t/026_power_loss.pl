# regress/t/026_power_loss.pl
#	  A power loss of a pool on a page-cache file, modelled page by page.
#	  Two clients move money between the accounts of an nvm table and log
#	  each transfer in an nvm history table, with the pool at its default
#	  place (pg_nvm/pool in the data directory, on an ordinary file
#	  system) and nvm.durability at its default (auto: through the WAL on a
#	  page-cache file); a third table stays unchanged.  A checkpoint
#	  writes a base file of every table (pg_nvm/checkpoint); image A of
#	  the pool is copied mid-run; a second checkpoint writes deltas of the
#	  two tables that changed (the records they changed) and keeps the
#	  third (the recovery after the power loss starts at its redo point,
#	  with those files); each checkpoint completes only with its files, as
#	  of its redo point or later;
#	  image B is copied after every server process was killed, with the
#	  data directory.  After a power loss each 4 KiB page of the file holds
#	  whatever the kernel last wrote back: the model takes each page from A
#	  or from B at random (one seed a round), with the WAL and the rest of
#	  the data directory whole, and starts the server in a new boot of the
#	  operating system (nvm.debug_boot_id).
#
#	  The server must rebuild each mixed pool from the WAL and serve it
#	  exactly: every account, the total conserved, index and sequential
#	  scans agreeing, the integrity check and amcheck clean, every
#	  acknowledged transfer there.  A rebuild cut short by a crash of the
#	  startup process (nvm.debug_crash_point = replay_before_note) goes on
#	  at the next start, replaying again what was not noted, exactly.
#	  Then image B alone in the same boot (what a crash of the server's
#	  processes leaves) is served exactly, as it is, without a rebuild.
#
#	  NVM_POWER_LOSS_SEEDS="1 2 3" chooses the seeds.
use strict;
use warnings;

use File::Copy;
use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use NvmTest;

# enough accounts that the records the transfers change between the two
# checkpoints stay well under half of them, however fast the clients run:
# the delta of accounts is not merged into a new base (merges begin once
# a table's deltas outgrow half its base) before the test looks at it
my $ACCOUNTS = 100000;
my $INITIAL = 1000;
my $TOTAL = $ACCOUNTS * $INITIAL;
my @SEEDS = split ' ', ($ENV{NVM_POWER_LOSS_SEEDS} // '11 22 33');

my ($node, $pool) = nvm_node('power_loss', pool_in_datadir => 1, pool_size => '64MB',
	durability => 'auto', init => { allows_streaming => 1 });
# only the test's own CHECKPOINTs run: it asserts what each of them writes
# (also under NVM_TAP_SMALL_WAL, whose checkpoints by time and WAL had
# written the files first)
$node->append_conf('postgresql.conf',
	"autovacuum = off\ncheckpoint_timeout = '1d'\nmax_wal_size = '4GB'\n");
$node->start;
like(slurp_file($node->logfile),
	qr/nvm pool "\Q$pool\E" is a page-cache file .*: commits of nvm rows are made durable through the WAL/,
	'on a page-cache file, commits of nvm rows are made durable through the WAL by default');
$node->safe_psql('postgres', qq{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL) USING nvm;
	INSERT INTO accounts SELECT g, $INITIAL FROM generate_series(1, $ACCOUNTS) g;
	CREATE TABLE history (id bigint PRIMARY KEY, from_id int, to_id int, amount int) USING nvm;
	CREATE TABLE unchanged (id int PRIMARY KEY, v text) USING nvm;
	INSERT INTO unchanged SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
});
my $unchanged_digest = $node->safe_psql('postgres',
	q{SELECT count(*) || '|' || md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM unchanged});

# checkpoint_files TABLE: the paths of TABLE's checkpoint files, oldest first
sub checkpoint_files
{
	my ($table) = @_;
	my $prefix = $node->safe_psql('postgres', qq{
		SELECT (CASE c.reltablespace WHEN 0 THEN d.dattablespace ELSE c.reltablespace END)
			   || '_' || d.oid || '_' || c.relfilenode || '_0.'
		  FROM pg_class c, pg_database d
		 WHERE c.relname = '$table' AND d.datname = current_database()});
	my $dir = $node->data_dir . '/pg_nvm/checkpoint';
	opendir(my $dh, $dir) or return ();
	my @files = sort { ($a =~ /\.(\d+)\.\w+$/)[0] <=> ($b =~ /\.(\d+)\.\w+$/)[0] }
	  grep { index($_, $prefix) == 0 && !/\.tmp$/ } readdir $dh;
	closedir $dh;
	return map { "$dir/$_" } @files;
}

# file_stamps FILES: their names, inodes and modification times
sub file_stamps
{
	return join(' ', map { my @st = stat($_); "$_:" . (@st ? "$st[1]:$st[9].$st[7]" : '') } @_);
}
is($node->safe_psql('postgres', 'SELECT storage FROM nvm_pool_stats()'), 'page-cache file',
	'the pool at its default place is a page-cache file');

# ---------------------------------------------------------------------------
# the load: each client sends transfers, one transaction each, and echoes
# "ack ID" only after its COMMIT succeeded
# ---------------------------------------------------------------------------
srand(2026);
my @clients;
foreach my $n (1 .. 2)
{
	my $c = nvm_client_start($node, { n => $n });
	foreach my $i (1 .. 30000)
	{
		my $id = $n * 1_000_000 + $i;
		my $from = 1 + int(rand($ACCOUNTS));
		my $to = 1 + int(rand($ACCOUNTS));
		my $amount = 1 + int(rand(100));
		# the lower id first: no deadlock, so a COMMIT that returns no
		# error committed (after a failed statement it would roll back)
		my @moves = sort { $a->[0] <=> $b->[0] } ([ $from, -$amount ], [ $to, $amount ]);
		$c->{in} .= "BEGIN;\n"
		  . "UPDATE accounts SET balance = balance + $moves[0][1] WHERE id = $moves[0][0];\n"
		  . "UPDATE accounts SET balance = balance + $moves[1][1] WHERE id = $moves[1][0];\n"
		  . "INSERT INTO history VALUES ($id, $from, $to, $amount);\n"
		  . "COMMIT;\n"
		  . "\\if :ERROR\n\\else\n\\echo ack $id\n\\endif\n";
	}
	push @clients, $c;
}

my %acked;
sub pump_all
{
	foreach my $c (@clients)
	{
		foreach my $line (nvm_pump_client($c))
		{
			$acked{$1} = 1 if $line =~ /^ack (\d+)$/;
		}
	}
	return;
}

# run_for SECONDS: pumps the clients for that long
sub run_for
{
	my ($seconds) = @_;
	my $end = time + $seconds;
	while (time < $end)
	{
		pump_all();
		usleep(10_000);
	}
	return;
}

my $image_a = $node->basedir . '/pool.image-a';
my $image_b = $node->basedir . '/pool.image-b';
my $mixed = $node->basedir . '/pool.mixed';

# checkpoint_covered NAME: a CHECKPOINT, and at once in the same session
# whether it waited for the capture of the pool: the checkpoint files it
# leaves are as of its redo point or later (the WAL before that point may
# be removed once its record is written, so files older than it could
# not be rebuilt from)
sub checkpoint_covered
{
	my ($name) = @_;
	is($node->safe_psql('postgres', q{
			CHECKPOINT;
			SELECT c.last_lsn >= (pg_control_checkpoint()).redo_lsn FROM nvm_checkpoints c}),
		't', "$name: it completes with checkpoint files as of its redo point or later");
	return;
}

# the first checkpoint of the run writes a base file of every table
my $offset0 = -s $node->logfile;
checkpoint_covered('the first checkpoint');
like(slurp_file($node->logfile, $offset0), qr/checkpoint of the pool at a checkpoint: wrote \d+ kB \(\d+ rows\) for 0 changed and 3 whole nvm tables/,
	'the first checkpoint writes a base file of every table');
my %stamp = map { $_ => file_stamps(checkpoint_files($_)) } qw(accounts history unchanged);
foreach my $t (qw(accounts history unchanged))
{
	my @f = checkpoint_files($t);
	ok(@f == 1 && $f[0] =~ /\.base$/, "$t has one checkpoint file, a base");
}
run_for(1.5);
copy($pool, $image_a) or die "cannot copy $pool: $!";
my $acked_at_a = scalar keys %acked;
run_for(0.5);
# the second writes only what changed, as deltas: the recovery after the
# power loss starts at its redo point, with the files it left
$offset0 = -s $node->logfile;
checkpoint_covered('the second checkpoint, under load');
like(slurp_file($node->logfile, $offset0), qr/checkpoint of the pool at a checkpoint: wrote \d+ kB \(\d+ rows\) for 2 changed and 0 whole nvm tables, kept 1 unchanged/,
	'the next checkpoint writes deltas of the two tables that changed and keeps the third');
# accounts keeps its base and gets a delta; the history, whose delta
# outgrows half its base, may be merged into a new base by then
foreach my $t (qw(accounts history))
{
	my @f = checkpoint_files($t);
	isnt(file_stamps(@f), $stamp{$t}, "$t, which changed, has new checkpoint files");
}
my @acc = checkpoint_files('accounts');
ok(@acc == 2 && $acc[0] =~ /\.base$/ && $acc[1] =~ /\.delta$/,
	'accounts has its base and a delta: a checkpoint writes what changed');
is(file_stamps(checkpoint_files('unchanged')), $stamp{unchanged}, 'the file of the unchanged table is not written again');
run_for(1.5);
nvm_crash($node);
run_for(0.5);
$_->{h}->kill_kill foreach @clients;
pump_all();
copy($pool, $image_b) or die "cannot copy $pool: $!";
my $acked_n = scalar keys %acked;
ok($acked_at_a > 0 && $acked_n > $acked_at_a,
	"transfers were acknowledged before image A ($acked_at_a) and before the kill ($acked_n)");

# the data directory at the power loss, restored before each round
my $saved_dir = $node->basedir . '/data_at_power_loss';
PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir, $saved_dir);

# restore_data_directory POOL: the data directory as at the power loss,
# with POOL as its pool file
sub restore_data_directory
{
	my ($pool_file) = @_;
	rmtree($node->data_dir);
	PostgreSQL::Test::RecursiveCopy::copypath($saved_dir, $node->data_dir);
	chmod 0700, $node->data_dir;
	copy($pool_file, $pool) or die "cannot copy $pool_file: $!";
	return;
}

# ---------------------------------------------------------------------------
# the checks of a pool that is served
# ---------------------------------------------------------------------------

# served_exactly NAME: every account, the total, scans agreeing, the
# integrity check and amcheck clean, every acknowledged transfer there
sub served_exactly
{
	my ($name) = @_;
	is($node->safe_psql('postgres', 'SELECT count(*) || \'|\' || sum(balance) FROM accounts'),
		"$ACCOUNTS|$TOTAL", "$name: every account, and the total conserved");
	my $d = nvm_scan_digests($node, 'accounts', 'id', "id || ':' || balance");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans of accounts agree");
	my $h = nvm_scan_digests($node, 'history', 'id', "id || ':' || amount");
	is($h->{index}, $h->{seq}, "$name: index and sequential scans of history agree");
	nvm_verify_clean($node, 'accounts', $name);
	nvm_verify_clean($node, 'history', $name);
	nvm_check_indexes($node, 'accounts', $name);
	is($node->safe_psql('postgres',
			q{SELECT count(*) || '|' || md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM unchanged}),
		$unchanged_digest, "$name: the unchanged table, from its older checkpoint file, is whole");
	my $present = $node->safe_psql('postgres',
		'SELECT count(*) FROM history WHERE id IN (' . join(',', sort keys %acked) . ')');
	is($present, $acked_n, "$name: every acknowledged transfer is there");
	return;
}

# ---------------------------------------------------------------------------
# the power losses: pages from A or B, in a new boot
# ---------------------------------------------------------------------------

# mix_images SEED: writes the mixed image, returns (pages differing, from A)
sub mix_images
{
	my ($seed) = @_;
	srand($seed);
	return nvm_mix_pages($image_a, $image_b, $mixed);
}

my $round = 0;
foreach my $seed (@SEEDS)
{
	my $name = "power loss, seed $seed";
	my ($differ, $from_a) = mix_images($seed);
	ok($from_a > 0 && $from_a < $differ,
		"$name: $differ pages of the two images differ, $from_a taken from image A");
	restore_data_directory($mixed);
	$node->append_conf('postgresql.conf', "nvm.debug_boot_id = 'power-loss-$seed'\n");
	# the first round's rebuild is cut short once by a crash of the startup process
	my $offset = -s $node->logfile;
	if ($round++ == 0)
	{
		$node->append_conf('postgresql.conf', "nvm.debug_crash_point = 'replay_before_note'\n");
		ok(!$node->start(fail_ok => 1), "$name: a rebuild cut short by a crash of the startup process stops the start");
		like(slurp_file($node->logfile, $offset), qr/nvm: debug crash point replay_before_note/,
			"$name: the startup process crashed in the rebuild, after a replayed commit and before its note");
		$node->append_conf('postgresql.conf', "nvm.debug_crash_point = 'none'\n");
	}
	ok($node->start(fail_ok => 1), "$name: the server starts with the mixed pool");
	like(slurp_file($node->logfile, $offset),
		qr/nvm pool "\Q$pool\E" is perhaps torn after a crash of the operating system, a power loss or a reboot: it is rebuilt from the WAL/,
		"$name: the log says the pool is rebuilt from the WAL");
	is($node->safe_psql('postgres', 'SELECT state FROM nvm_pool_stats()'), 'attached',
		"$name: the rebuilt pool is attached");
	served_exactly($name);
	$node->stop('immediate');
}

# ---------------------------------------------------------------------------
# a crash of the server's processes in the same boot: image B is served
# ---------------------------------------------------------------------------
restore_data_directory($image_b);
$node->append_conf('postgresql.conf', "nvm.debug_boot_id = ''\n");
my $offset = -s $node->logfile;
$node->start;
unlike(slurp_file($node->logfile, $offset), qr/rebuilt from the WAL/,
	'process crash in the same boot: the pool is not rebuilt');
served_exactly('process crash in the same boot');
$node->stop;

done_testing();

# regress/t/lib/NvmBackup.pm
#	  Helpers of the TAP tests of backups and copies of a cluster with nvm
#	  tables: an accounts table whose total is constant under a transfer
#	  load run by pgbench in the background, the checks of a copy (every
#	  row, the total, index against sequential scan, amcheck, the integrity
#	  checks of nvm tables and of the pool), the error a
#	  copy detached from its pool gives, and an atomic snapshot of a
#	  running server (every server process frozen while the files are
#	  copied).
package NvmBackup;

use strict;
use warnings;

use Exporter 'import';
use File::Copy qw(copy);
use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use NvmTest;

our @EXPORT = qw(nvm_accounts_create nvm_transfers_start nvm_transfers_finish nvm_pgbench_start
  nvm_load_wait_running nvm_load_running nvm_load_kill nvm_load_transactions
  nvm_accounts_check nvm_rows_digest nvm_refuses_nvm nvm_pool_state
  nvm_freeze_and_copy);

# nvm_accounts_create NODE ROWS: an nvm table accounts (id, balance) with a
# primary key and an index on balance, ROWS rows of 1,000 each, and a heap
# table ledger with one row, in database postgres; amcheck is created.
sub nvm_accounts_create
{
	my ($node, $rows) = @_;
	$node->safe_psql('postgres', qq{
		CREATE EXTENSION IF NOT EXISTS nvmam;
		CREATE EXTENSION IF NOT EXISTS amcheck;
		CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL) USING nvm;
		CREATE INDEX accounts_balance ON accounts (balance);
		INSERT INTO accounts SELECT g, 1000 FROM generate_series(1, $rows) g;
		CREATE TABLE ledger (note text) USING heap;
		INSERT INTO ledger VALUES ('heap row');
		VACUUM ANALYZE accounts;
	});
	return;
}

# nvm_transfers_start NODE ROWS CLIENTS SECONDS [SECOND_TABLE]: pgbench in
# the background, CLIENTS clients moving money between two random accounts
# (two updates a transaction, so the total stays constant) for at least
# SECONDS seconds and until nvm_transfers_finish (nvm_pgbench_start),
# deadlocks retried; with SECOND_TABLE (an nvm table like
# accounts), from an account to a row of that table, so that only the sum
# over both tables is constant.  Returns a handle for nvm_transfers_finish.
sub nvm_transfers_start
{
	my ($node, $rows, $clients, $seconds, $second) = @_;
	my $to = $second // 'accounts';
	my $script = PostgreSQL::Test::Utils::tempdir() . '/transfer.sql';
	open(my $fh, '>', $script) or die "cannot write $script: $!";
	print $fh <<"EOS";
\\set a random(1, $rows)
\\set b random(1, $rows)
\\set amount random(1, 100)
BEGIN;
UPDATE accounts SET balance = balance - :amount WHERE id = :a;
UPDATE $to SET balance = balance + :amount WHERE id = :b;
END;
EOS
	close $fh;
	return nvm_pgbench_start($node, $script, $clients, $seconds);
}

# The load's size, by a setting of the test library: NVM_TAP_LOAD_CLIENTS
# and NVM_TAP_LOAD_SECONDS (regress/run-tests.sh passes them; default 1)
# multiply every load's clients and its least duration, so that a run can
# make the loads heavier or longer on purpose and flush out tests that
# depend on the machine's speed.
my $clients_factor = $ENV{NVM_TAP_LOAD_CLIENTS} || 1;
my $seconds_factor = $ENV{NVM_TAP_LOAD_SECONDS} || 1;

# nvm_pgbench_start NODE SCRIPT CLIENTS SECONDS: pgbench in the background
# on NODE's database postgres, CLIENTS clients running SCRIPT, serialization
# failures and deadlocks retried.  The load runs in rounds of one second
# (one pgbench each) for at least SECONDS seconds and then until
# nvm_transfers_finish stops it, so that whatever a test does between the
# start and the finish runs under load however fast or slow the machine is.
# A round that fails (the server crashed or stopped, a client aborted) ends
# the load.  Returns a handle for nvm_load_wait_running,
# nvm_transfers_finish and nvm_load_kill.
sub nvm_pgbench_start
{
	my ($node, $script, $clients, $seconds) = @_;
	$clients = int($clients * $clients_factor + 0.5);
	$seconds = int($seconds * $seconds_factor + 0.5);
	my $stop = PostgreSQL::Test::Utils::tempdir() . '/stop';
	my ($out, $err) = ('', '');
	my $loop = q{
		stop=$1 min=$2
		shift 2
		trap 'kill -TERM "$child" 2>/dev/null; exit 143' TERM INT
		start=$(date +%s)
		while :; do
			"$@" &
			child=$!
			wait "$child"
			rc=$?
			if [ "$rc" -ne 0 ]; then
				echo "load: pgbench exited with status $rc" >&2
				exit "$rc"
			fi
			if [ -e "$stop" ] && [ $(($(date +%s) - start)) -ge "$min" ]; then
				exit 0
			fi
		done};
	my $h = IPC::Run::start(
		[
			'bash', '-c', $loop, 'load', $stop, $seconds,
			'pgbench', '-n', '-c', $clients, '-j', $clients, '-T', 1,
			'--max-tries', '1000', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err, stop => $stop };
}

# nvm_load_transactions HANDLE: the transactions the load's rounds that
# ended so far committed.
sub nvm_load_transactions
{
	my ($load) = @_;
	my $tx = 0;
	$tx += $1 while ${ $load->{out} } =~ /number of transactions actually processed: (\d+)/g;
	return $tx;
}

# nvm_load_wait_running HANDLE: waits until the load has committed
# transactions (its first round ended), so that what follows runs under a
# load that is really there; false if the load ended first.
sub nvm_load_wait_running
{
	my ($load) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		$load->{h}->pump_nb if $load->{h}->pumpable;
		return 1 if nvm_load_transactions($load) > 0;
		last unless $load->{h}->pumpable;
		usleep(20_000);
	}
	diag('the load did not commit: ' . ${ $load->{err} });
	return 0;
}

# nvm_load_running HANDLE: true while the load still runs.
sub nvm_load_running
{
	my ($load) = @_;
	$load->{h}->pump_nb if $load->{h}->pumpable;
	return $load->{h}->pumpable;
}

# nvm_load_kill HANDLE: ends the load at once, its round cut short (after a
# crash of the server, say).
sub nvm_load_kill
{
	my ($load) = @_;
	$load->{h}->kill_kill;
	return;
}

# nvm_transfers_finish HANDLE NAME: stops the load (at the end of its
# least duration, after the round that runs) and checks it ran
# transactions.  Returns how many.
sub nvm_transfers_finish
{
	my ($load, $name) = @_;
	open(my $fh, '>', $load->{stop}) or die "cannot write $load->{stop}: $!";
	close $fh;
	$load->{h}->finish;
	my $tx = nvm_load_transactions($load);
	ok($tx > 0, "$name: the transfer load committed transactions")
	  or diag(${ $load->{out} } . ${ $load->{err} });
	return $tx;
}

# nvm_rows_digest NODE: "count|md5" of every account row, by id.
sub nvm_rows_digest
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT count(*) || '|' || md5(string_agg(id || ':' || balance, ',' ORDER BY id))
		  FROM accounts});
}

# nvm_accounts_check NODE NAME ROWS: the invariant of the accounts table:
# ROWS rows, total ROWS * 1,000, the same rows through the primary key and
# through a sequential scan, amcheck's heapallindexed clean on both indexes,
# and the integrity checks of the table and of the whole pool clean.
sub nvm_accounts_check
{
	my ($node, $name, $rows) = @_;
	is($node->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
		"$rows|" . ($rows * 1000), "$name: every account is there and the total is kept");
	my $d = nvm_scan_digests($node, 'accounts', 'id', "id || ':' || balance");
	like($d->{index_plan}, qr/accounts_pkey/, "$name: the index scan uses the primary key");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans return the same rows");
	nvm_check_indexes($node, 'accounts', $name);
	nvm_verify_clean($node, 'accounts', $name);
	nvm_verify_clean($node, 'all', $name);
	return;
}

# nvm_pool_state NODE: the state column of nvm_pool.
sub nvm_pool_state
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT state FROM nvm_pool');
}

# nvm_refuses_nvm NODE NAME CAUSE HINT: reading the nvm table fails with an
# error that names the table, the pool (POOL) and matches CAUSE and HINT;
# the heap table is readable and nvm_pool says detached.
sub nvm_refuses_nvm
{
	my ($node, $name, $pool, $cause, $hint) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM accounts');
	isnt($rc, 0, "$name: reading the nvm table fails");
	like($err, qr/accounts/, "$name: the error names the table");
	like($err, qr/\Q$pool\E/, "$name: the error names the pool");
	like($err, $cause, "$name: the error says why");
	like($err, qr/HINT:.*$hint/s, "$name: the hint says how to get the nvm rows back");
	is($node->safe_psql('postgres', q{SELECT count(*) FROM ledger WHERE note = 'heap row'}), '1',
		"$name: heap tables are readable");
	is(nvm_pool_state($node), 'detached', "$name: nvm_pool says detached");
	($rc, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM accounts WHERE id = 7');
	isnt($rc, 0, "$name: an index fetch fails too");
	is(nvm_log_crashes($node), '', "$name: no crash in the log");
	return;
}

# nvm_freeze_and_copy NODE PAIRS...: an atomic snapshot of a running server:
# every server process is frozen (SIGSTOP), each SOURCE => DEST directory
# or file is copied, and the processes go on (SIGCONT).  The copy is what
# a crash at that instant leaves (what the page cache holds, written or
# not: the kernel keeps running).
sub nvm_freeze_and_copy
{
	my ($node, %pairs) = @_;
	my @pids = nvm_freeze_server($node);
	foreach my $src (sort keys %pairs)
	{
		my $dst = $pairs{$src};
		if (-d $src)
		{
			PostgreSQL::Test::RecursiveCopy::copypath($src, $dst,
				filterfn => sub { return $_[0] ne 'postmaster.pid'; });
		}
		else
		{
			copy($src, $dst) or die "cannot copy $src: $!";
			chmod 0600, $dst;
		}
	}
	kill 'CONT', @pids;
	return;
}

1;

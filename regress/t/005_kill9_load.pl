# regress/t/005_kill9_load.pl
#	  kill -9 under load: several clients move money between accounts of an
#	  nvm table (explicit transactions: two balance updates, sometimes a
#	  branch change, and a row in a transfers history table, also nvm) while
#	  the server is killed at a random moment, 20 times: every other time
#	  the whole server (every process at once, or the postmaster alone), in
#	  between a single backend (the postmaster then kills the others and
#	  reinitialises).  After each restart: the total balance is unchanged,
#	  every acknowledged transfer is there with its values, no rolled-back
#	  one is (each attempt carries a reference of its own), every balance
#	  is what the transfers present say, no key is duplicated, index and
#	  sequential scans agree and amcheck finds every row in every index.
#
#	  The schedule (kill moments, kinds, victims, transfers) comes from a
#	  seed printed at the start; NVM_KILL9_SEED=N repeats a run's schedule
#	  (the interleaving of the clients still varies), NVM_KILL9_CYCLES=N
#	  changes the number of kills.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use NvmTest;

my $N_ACCOUNTS = 50;
my $INITIAL = 1000;
my $N_BRANCHES = 5;
my $N_CLIENTS = 4;
my $CYCLES = $ENV{NVM_KILL9_CYCLES} // 20;
my $SEED = $ENV{NVM_KILL9_SEED} // 5005;
srand($SEED);
diag("random seed $SEED (NVM_KILL9_SEED=$SEED repeats this schedule), $CYCLES kills");

my ($node) = nvm_node('kill9_load');
# PostgreSQL::Test::Cluster turns this off; the single-backend kills need it
$node->append_conf('postgresql.conf', qq{
restart_after_crash = on
deadlock_timeout = '100ms'
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL,
						   branch int NOT NULL) USING nvm;
	CREATE INDEX accounts_branch ON accounts (branch);
	CREATE TABLE transfers (id bigserial PRIMARY KEY, from_id int NOT NULL,
							to_id int NOT NULL, amount int NOT NULL,
							ref text NOT NULL) USING nvm;
	CREATE INDEX transfers_from ON transfers (from_id);
	INSERT INTO accounts
		SELECT g, $INITIAL, g % $N_BRANCHES FROM generate_series(1, $N_ACCOUNTS) g;
});
is( $node->safe_psql('postgres', q{
		SELECT string_agg(c.relname || ':' || a.amname, ',' ORDER BY c.relname)
		  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		 WHERE c.relname IN ('accounts', 'transfers')}),
	'accounts:nvm,transfers:nvm', 'both tables use the nvm access method');

# What the clients were told, over all cycles.  Every attempt of a
# transfer carries a reference of its own (the ref column): transfer ids
# come from a sequence, which after a crash can hand out again an id that
# only a rolled-back transaction had used.
my %acked;		# transfer id => "from|to|amount|ref", COMMIT acknowledged
my %aborted;	# ref => how the attempt certainly rolled back
my %aborted_id;	# ref => the transfer id the rolled-back attempt had
my @unexpected;	# errors other than serialization failures and deadlocks
my %stats = (attempts => 0, commits => 0, retries => 0, rollbacks => 0, in_doubt => 0);

# ---------------------------------------------------------------------------
# the clients: one psql each, fed one transaction at a time through stdin;
# its output (command tags, the returned transfer id, the SQLSTATE of a
# failed statement, an end marker) says what happened
# ---------------------------------------------------------------------------

sub new_transfer
{
	my $from = 1 + int(rand($N_ACCOUNTS));
	my $to = 1 + int(rand($N_ACCOUNTS - 1));
	$to++ if $to >= $from;
	return {
		from => $from,
		to => $to,
		amount => 1 + int(rand(100)),
		# a quarter also moves the paying account to another branch (a new
		# index entry), a tenth are rolled back on purpose
		move => rand() < 0.25,
		rollback => rand() < 0.1,
	};
}

sub client_start
{
	my ($n) = @_;
	my $c = nvm_client_start($node, { n => $n, pid => undef, quit => 0 });
	$c->{in} .= "SELECT 'P' || pg_backend_pid();\n";
	return $c;
}

# client_send C: sends C's current transfer (a new one unless it is retrying)
sub client_send
{
	my ($c) = @_;
	my $t = $c->{cur} //= new_transfer();
	$c->{seen_id} = undef;
	$c->{committed} = 0;
	$c->{ref} = 'a' . ++$stats{attempts};
	$c->{commit_sent} = 1;
	my $end = $t->{rollback} ? 'ROLLBACK' : 'COMMIT';
	my $move = $t->{move}
	  ? "UPDATE accounts SET branch = (branch + 1) % $N_BRANCHES WHERE id = $t->{from};\n"
	  : '';
	# after each statement, the SQLSTATE of a failure (the first one is what
	# counts: the later ones are "current transaction is aborted")
	my $check = "\\if :ERROR\n\\echo ERR :SQLSTATE\n\\endif\n";
	$c->{state} = undef;
	$c->{in} .= "BEGIN;\n"
	  . "UPDATE accounts SET balance = balance - $t->{amount} WHERE id = $t->{from};\n$check"
	  . ($move ? "$move$check" : '')
	  . "UPDATE accounts SET balance = balance + $t->{amount} WHERE id = $t->{to};\n$check"
	  . "INSERT INTO transfers (from_id, to_id, amount, ref)"
	  . " VALUES ($t->{from}, $t->{to}, $t->{amount}, '$c->{ref}') RETURNING 'T' || id;\n$check"
	  . "$end;\n$check"
	  . "\\echo END\n";
	return;
}

# client_next C: after a transaction, the next one, or quit when draining
sub client_next
{
	my ($c) = @_;
	if ($c->{quit})
	{
		$c->{in} .= "\\q\n";
	}
	else
	{
		client_send($c);
	}
	return;
}

sub client_line
{
	my ($c, $line) = @_;
	my $t = $c->{cur};
	if ($line =~ /^P(\d+)$/)
	{
		$c->{pid} = $1;
		client_next($c);
	}
	elsif ($line =~ /^T(\d+)$/)
	{
		$c->{seen_id} = $1;
	}
	elsif ($line eq 'COMMIT')
	{
		# the COMMIT returned: the transfer is acknowledged
		die "client $c->{n}: COMMIT without a transfer id" unless defined $c->{seen_id};
		$acked{ $c->{seen_id} } = "$t->{from}|$t->{to}|$t->{amount}|$c->{ref}";
		$c->{committed} = 1;
		$stats{commits}++;
	}
	elsif ($line =~ /^ERR (\S+)$/)
	{
		$c->{state} //= $1;
	}
	elsif ($line eq 'END')
	{
		my $state = $c->{state} // '00000';
		# the server answered the whole transaction: if it did not commit,
		# it rolled back
		if (defined $c->{seen_id} && !$c->{committed})
		{
			$aborted{ $c->{ref} } = "id $c->{seen_id}, backend $c->{pid}, "
			  . ($state eq '00000' ? 'rolled back on purpose' : "SQLSTATE $state");
			$aborted_id{ $c->{ref} } = $c->{seen_id};
		}
		if ($c->{committed})
		{
			$c->{cur} = undef;
		}
		elsif ($state eq '40001' || $state eq '40P01')
		{
			$stats{retries}++;
		}
		elsif ($state eq '00000' && $t->{rollback})
		{
			$stats{rollbacks}++;
			$c->{cur} = undef;
		}
		else
		{
			my ($msg) = $c->{err} =~ /(ERROR:[^\n]*)/;
			push @unexpected, "client $c->{n}: SQLSTATE $state: " . ($msg // '(no message)');
			$c->{cur} = undef;
		}
		$c->{commit_sent} = 0;
		$c->{err} = '';
		client_next($c);
	}
	# command tags (BEGIN, UPDATE 1, INSERT 0 1, ROLLBACK) say nothing more
	return;
}

# pump_clients CLIENTS: moves what is there to move, handles every complete
# line of output; a client whose psql exited is marked dead.
sub pump_clients
{
	my ($clients) = @_;
	foreach my $c (@$clients)
	{
		next if $c->{dead};
		client_line($c, $_) for nvm_pump_client($c);
		if ($c->{dead} && $c->{commit_sent} && !$c->{committed})
		{
			# the connection was lost before the outcome was known
			$stats{in_doubt}++;
			$c->{commit_sent} = 0;
		}
	}
	return;
}

# drain_clients CLIENTS: lets every client finish (a lost connection ends
# psql; an idle one is told to quit); kills what is left after a while.
sub drain_clients
{
	my ($clients) = @_;
	foreach my $c (@$clients)
	{
		$c->{quit} = 1;
		# waiting for input between transactions: quit now
		$c->{in} .= "\\q\n" if !$c->{commit_sent} && defined $c->{pid};
	}
	my $deadline = time + 60;
	while (grep { !$_->{dead} } @$clients)
	{
		pump_clients($clients);
		last if time > $deadline;
		usleep(2_000);
	}
	my @left = grep { !$_->{dead} } @$clients;
	if (@left)
	{
		diag('clients still running after 60 s: ' . join(' ', map { $_->{n} } @left));
		$_->{h}->kill_kill for @left;
	}
	return scalar @left;
}

# run_load SECONDS: starts the clients, runs them for SECONDS once all are
# connected; returns the clients (still running).
sub run_load
{
	my ($seconds) = @_;
	my @clients = map { client_start($_) } 1 .. $N_CLIENTS;
	my $deadline = time + 30;
	while (grep { !defined $_->{pid} && !$_->{dead} } @clients)
	{
		pump_clients(\@clients);
		die 'the clients did not connect in 30 s: ' . join(' ', map { $_->{err} } @clients)
		  if time > $deadline;
		usleep(1_000);
	}
	die 'a client could not connect: ' . join(' ', map { $_->{err} } @clients)
	  if grep { $_->{dead} } @clients;
	my $end = time + $seconds;
	while (time < $end)
	{
		pump_clients(\@clients);
		usleep(1_000);
	}
	pump_clients(\@clients);
	return \@clients;
}

# ---------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------

sub check_state
{
	my ($when) = @_;

	is( $node->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
		$N_ACCOUNTS . '|' . ($N_ACCOUNTS * $INITIAL),
		"$when: $N_ACCOUNTS accounts, total balance unchanged");

	my (%present, %refs);
	foreach my $row (split /\n/,
		$node->safe_psql('postgres', 'SELECT id, from_id, to_id, amount, ref FROM transfers'))
	{
		my ($id, @v) = split /\|/, $row;
		$present{$id} = join('|', @v);
		$refs{ $v[3] } = $id;
	}
	my @missing = grep { !exists $present{$_} } sort { $a <=> $b } keys %acked;
	my @wrong = grep { exists $present{$_} && $present{$_} ne $acked{$_} } keys %acked;
	my @ghosts = grep { exists $refs{$_} } sort keys %aborted;
	# (ids of rolled-back attempts handed out again after a crash)
	my $reused = grep { exists $present{ $aborted_id{$_} } } keys %aborted_id;
	note("$when: $reused ids of rolled-back transfers were handed out again") if $reused;
	is(scalar(@missing), 0,
		"$when: all " . scalar(keys %acked) . ' acknowledged transfers are present')
	  or diag('missing transfer ids: ' . join(' ', @missing[ 0 .. ($#missing < 20 ? $#missing : 19) ]));
	is(scalar(@wrong), 0, "$when: acknowledged transfers have the values committed")
	  or diag('transfers with other values: ' . join(' ', map { "$_: $present{$_} (committed $acked{$_})" } @wrong));
	is(scalar(@ghosts), 0, "$when: no rolled-back transfer is present")
	  or diag('rolled-back transfers present: '
			  . join('; ', map { "$_ ($aborted{$_}): id $refs{$_}" } @ghosts));

	is( $node->safe_psql('postgres', qq{
			SELECT string_agg(a.id || ':' || a.balance || '<>'
							  || ($INITIAL - coalesce(o.s, 0) + coalesce(i.s, 0)), ' ')
			  FROM accounts a
			  LEFT JOIN (SELECT from_id AS id, sum(amount) AS s FROM transfers GROUP BY 1) o
					 USING (id)
			  LEFT JOIN (SELECT to_id AS id, sum(amount) AS s FROM transfers GROUP BY 1) i
					 USING (id)
			 WHERE a.balance <> $INITIAL - coalesce(o.s, 0) + coalesce(i.s, 0)}),
		'', "$when: every balance = initial - transfers out + transfers in");

	is( $node->safe_psql('postgres', q{
			SELECT (SELECT count(*) - count(DISTINCT id) FROM accounts) || '|'
				|| (SELECT count(*) - count(DISTINCT id) FROM transfers) || '|'
				|| (SELECT count(*) - count(DISTINCT ref) FROM transfers)}),
		'0|0|0', "$when: no duplicate keys in accounts or transfers, no transfer twice");
	is( $node->safe_psql('postgres', q{
			SELECT count(*) FROM transfers WHERE id > (SELECT last_value FROM transfers_id_seq)}),
		'0', "$when: the id sequence is not behind any committed transfer");

	my $d = nvm_scan_digests($node, 'accounts', 'id', "id || ':' || balance || ':' || branch");
	like($d->{index_plan}, qr/Index Scan using accounts_pkey/, "$when: accounts index plan uses the primary key");
	is($d->{index}, $d->{seq}, "$when: accounts: index scan and sequential scan agree");
	like($d->{seq}, qr/^$N_ACCOUNTS\|/, "$when: accounts: $N_ACCOUNTS rows by sequential scan");
	my $db = nvm_scan_digests($node, 'accounts', 'branch', "id || ':' || balance || ':' || branch", 'id');
	like($db->{index_plan}, qr/Index Scan using accounts_branch/, "$when: branch index plan uses accounts_branch");
	is($db->{index}, $d->{seq}, "$when: accounts: scan through the branch index agrees");
	my $dt = nvm_scan_digests($node, 'transfers', 'id',
		"id || ':' || from_id || ':' || to_id || ':' || amount || ':' || ref");
	like($dt->{index_plan}, qr/Index Scan using transfers_pkey/, "$when: transfers index plan uses the primary key");
	is($dt->{index}, $dt->{seq}, "$when: transfers: index scan and sequential scan agree");
	my $df = nvm_scan_digests($node, 'transfers', 'from_id',
		"id || ':' || from_id || ':' || to_id || ':' || amount || ':' || ref", 'id');
	like($df->{index_plan}, qr/Index Scan using transfers_from/, "$when: from_id index plan uses transfers_from");
	is($df->{index}, $dt->{seq}, "$when: transfers: scan through transfers_from agrees");

	nvm_check_indexes($node, 'accounts', "$when: accounts");
	nvm_check_indexes($node, 'transfers', "$when: transfers");
	nvm_verify_clean($node, 'accounts', "$when: accounts");
	nvm_verify_clean($node, 'transfers', "$when: transfers");
	nvm_verify_clean($node, 'all', $when);
	return;
}

check_state('before the first kill');

# ---------------------------------------------------------------------------
# the kills
# ---------------------------------------------------------------------------

my $total_start = time;
for my $cycle (1 .. $CYCLES)
{
	my $load = 0.2 + rand(1.3);
	my $kind = $cycle % 2 == 0 ? 'backend' : ($cycle % 4 == 1 ? 'all' : 'postmaster');
	my $victim = int(rand($N_CLIENTS));
	my $when = sprintf('cycle %d (%s killed after %.2f s)', $cycle, $kind, $load);
	my $commits_before = $stats{commits};
	my $log_offset = -s $node->logfile;

	my $clients = run_load($load);
	if ($kind eq 'all')
	{
		# every server process frozen, then killed: a power loss
		nvm_crash($node);
	}
	elsif ($kind eq 'postmaster')
	{
		# the postmaster alone; its children exit when they notice.  It is
		# stopped first so that it forks no child after the list is taken.
		my $pm = $node->{_pid};
		kill 'STOP', $pm;
		my (undef, @children) = nvm_server_pids($node);
		kill 'KILL', $pm;
		$node->{_pid} = undef;
		ok(nvm_wait_gone($pm, @children), "$when: the postmaster and its children are gone");
	}
	else
	{
		my @alive = grep { defined $_->{pid} && !$_->{dead} } @$clients;
		my $c = $alive[ $victim % scalar(@alive) ] // die "$when: no client is connected";
		kill 'KILL', $c->{pid};
		$c->{killed_pid} = $c->{pid};
		$when .= " (pid $c->{pid})";
	}
	is(drain_clients($clients), 0, "$when: every client ended");

	if ($kind eq 'backend')
	{
		ok(nvm_wait_ready($node), "$when: the server accepts queries again");
		my ($c) = grep { defined $_->{killed_pid} } @$clients;
		ok( $node->log_contains(qr/(?:server process|client backend) \(PID $c->{killed_pid}\) was terminated by signal 9/,
				$log_offset),
			"$when: the postmaster noticed the backend's death");
		ok($node->log_contains(qr/all server processes terminated; reinitializing/, $log_offset),
			"$when: the postmaster reinitialised");
	}
	else
	{
		$node->start;
	}
	cmp_ok($stats{commits} - $commits_before, '>', 0, "$when: transfers were committed under load");
	check_state("after $when");
	note(sprintf('after cycle %d: %d commits, %d retries, %d rollbacks, %d in doubt, %.0f s',
			$cycle, $stats{commits}, $stats{retries}, $stats{rollbacks}, $stats{in_doubt},
			time - $total_start));
}

is(scalar(@unexpected), 0, 'the clients met no error other than serialization failures and deadlocks')
  or diag(join("\n", @unexpected[ 0 .. ($#unexpected < 20 ? $#unexpected : 19) ]));
diag(sprintf('%d kills in %.0f s: %d transfers acknowledged, %d retries, %d rolled back on purpose, %d in doubt',
		$CYCLES, time - $total_start, $stats{commits}, $stats{retries}, $stats{rollbacks},
		$stats{in_doubt}));

# and a clean restart at the end
$node->restart;
check_state('after a clean restart');
$node->stop;
done_testing();

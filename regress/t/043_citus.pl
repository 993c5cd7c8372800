# regress/t/043_citus.pl
#	  nvm tables on a Citus cluster: a coordinator and two workers on
#	  loopback, each with its own pool, shared_preload_libraries = 'citus,
#	  nvmam'.  Hash-distributed and reference tables created USING nvm and
#	  with default_table_access_method = nvm (every shard and placement is
#	  an nvm table); create_distributed_table of an nvm table that has rows;
#	  COPY into distributed and reference tables; router and multi-shard
#	  queries, joins with reference tables and between colocated tables; a
#	  multi-shard UPDATE and DELETE in one transaction (two-phase commit
#	  across the workers), rolled back and failing too; the DDL Citus
#	  gives its shards (Citus's own tableam test's checks: USING nvm, a
#	  range-distributed table loaded by COPY, a partitioned table with an
#	  nvm partition); alter_table_set_access_method from heap to nvm and
#	  back.  Then a transfer load through the coordinator (each transfer
#	  updates two accounts and writes two ledger rows, on two shards that
#	  are mostly on different workers) while shards move in both modes
#	  (force_logical and block_writes) and the rebalancer runs: every
#	  acknowledged transfer is there, on both of its sides, nothing twice.
#	  Last, workers killed with SIGKILL in the middle of distributed
#	  two-phase commits: once after its PREPARE and before COMMIT PREPARED
#	  (the coordinator commits; the worker restores the prepared
#	  transaction at its restart, its nvm rows in doubt until Citus's
#	  recovery commits them), once before its PREPARE (the coordinator
#	  aborts; the other worker's prepared part is rolled back), and twice
#	  at random under the load.  After recover_prepared_transactions every
#	  transfer is in on both of its shards or on neither, and the counts
#	  and sums match what the load was told.
#
#	  Skips when Citus is not installed in this PostgreSQL
#	  (regress/build-citus.sh installs it), unless NVM_CITUS_REQUIRED is
#	  set (CI), where that fails.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IPC::Run ();
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
if (!-f "$pkglibdir/citus.so")
{
	my $why = "Citus is not installed in $pkglibdir (regress/build-citus.sh builds and installs it)";
	if ($ENV{NVM_CITUS_REQUIRED})
	{
		fail($why);
		done_testing();
		exit 0;
	}
	plan skip_all => $why;
}

my $ACCOUNTS = 2000;
my $BALANCE = 1000;
my $SHARDS = 8;

# ---------------------------------------------------------------------------
# the cluster
# ---------------------------------------------------------------------------

my %node;
for my $name (qw(coordinator worker1 worker2))
{
	($node{$name}) = nvm_node($name);
	$node{$name}->append_conf('postgresql.conf', q{
shared_preload_libraries = 'citus,nvmam'
max_prepared_transactions = 50
max_connections = 60
wal_level = logical
max_wal_senders = 20
max_replication_slots = 20
max_worker_processes = 20
wal_retrieve_retry_interval = '250ms'
restart_after_crash = on
citus.node_conninfo = 'sslmode=disable'
citus.enable_statistics_collection = off
# the test recovers prepared transactions itself, when it wants to
citus.recover_2pc_interval = -1
citus.distributed_deadlock_detection_factor = 2
# every table created without USING is an nvm table, but the tables of
# CREATE EXTENSION citus (its metadata) stay heap
default_table_access_method = nvm
});
	# a node connects to itself (a shard move's subscription, say) through
	# its socket directory, where the test's servers listen
	$node{$name}->append_conf('postgresql.conf', "citus.local_hostname = '" . $node{$name}->host . "'\n");
	$node{$name}->start;
	$node{$name}->safe_psql('postgres', 'CREATE EXTENSION citus');
}
my ($coord, $w1, $w2) = @node{qw(coordinator worker1 worker2)};
my $host = $coord->host;

sub q_coord { return $coord->safe_psql('postgres', $_[0]); }

q_coord(qq{
	SELECT citus_set_coordinator_host('$host', ${\ $coord->port});
	SELECT citus_add_node('$host', ${\ $w1->port});
	SELECT citus_add_node('$host', ${\ $w2->port});
	CREATE EXTENSION nvmam;
});
for my $w ($w1, $w2)
{
	is($w->safe_psql('postgres', q{SELECT count(*) FROM pg_extension WHERE extname = 'nvmam'}),
		'1', $w->name . ': CREATE EXTENSION nvmam on the coordinator created it here too');
}
for my $n ($coord, $w1, $w2)
{
	like($n->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE a.amname <> 'heap') || ' of ' || count(*)
		FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relname LIKE 'pg_dist%' AND c.relkind = 'r'}),
		qr/^0 of [1-9]\d*$/,
		$n->name . ": Citus's metadata tables are heap tables under default_table_access_method = nvm");
}

# placement_ams TABLE: "AM:N,..." over every placement of TABLE (shards of
# a distributed table, or each node's copy of a reference table)
sub placement_ams
{
	my ($table) = @_;
	return q_coord(qq{
		SELECT string_agg(am || ':' || n, ',' ORDER BY am) FROM (
			SELECT result AS am, count(*) AS n FROM run_command_on_placements('$table',
				\$\$SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
				   WHERE c.oid = '%s'::regclass\$\$) GROUP BY result) s});
}

# placements TABLE: the number of placements of TABLE
sub placements
{
	my ($table) = @_;
	return q_coord(qq{
		SELECT count(*) FROM pg_dist_placement p JOIN pg_dist_shard s USING (shardid)
		 WHERE s.logicalrelid = '$table'::regclass});
}

# all_nvm TABLE NAME: every placement of TABLE is an nvm table
sub all_nvm
{
	my ($table, $name) = @_;
	my $n = placements($table);
	ok($n > 0, "$name: $table has placements");
	is(placement_ams($table), "nvm:$n", "$name: each of the $n placements of $table is an nvm table");
}

# ---------------------------------------------------------------------------
# distributed and reference tables of nvm
# ---------------------------------------------------------------------------

# an nvm table with rows, then distributed: Citus copies them to the shards
q_coord(qq{
	CREATE TABLE accounts (id int PRIMARY KEY, branch int NOT NULL, balance bigint NOT NULL,
		note text) USING nvm;
	INSERT INTO accounts SELECT g, g % 10, $BALANCE, CASE WHEN g % 100 = 0 THEN repeat('n', 3000) END
	  FROM generate_series(1, $ACCOUNTS) g;
	SET citus.shard_count = $SHARDS;
	SELECT create_distributed_table('accounts', 'id');
	SELECT truncate_local_data_after_distributing_table('accounts');
});
is(q_coord(q{SELECT count(*) || '|' || sum(balance) || '|' || sum(length(note)) FROM accounts}),
	"$ACCOUNTS|" . ($ACCOUNTS * $BALANCE) . '|' . (int($ACCOUNTS / 100) * 3000),
	'create_distributed_table of an nvm table with rows: every row is in the shards');
is(placements('accounts'), $SHARDS, "accounts has $SHARDS shards");
all_nvm('accounts', 'USING nvm, distributed');
is(q_coord(q{SELECT count(DISTINCT nodeport) FROM pg_dist_shard_placement
	JOIN pg_dist_shard USING (shardid) WHERE logicalrelid = 'accounts'::regclass}),
	'2', 'the shards are on both workers');

# default_table_access_method = nvm, colocated with accounts
q_coord(q{
	SET default_table_access_method = nvm;
	CREATE TABLE ledger (account int NOT NULL, tid bigint NOT NULL, side int NOT NULL,
		delta bigint NOT NULL, PRIMARY KEY (account, tid, side));
	SELECT create_distributed_table('ledger', 'account', colocate_with := 'accounts');
	CREATE TABLE accounts_start (id int PRIMARY KEY, balance bigint NOT NULL);
	SELECT create_distributed_table('accounts_start', 'id', colocate_with := 'accounts');
});
all_nvm('ledger', 'default_table_access_method = nvm, distributed');

# reference tables: USING nvm, and by the default
q_coord(q{
	CREATE TABLE branches (id int PRIMARY KEY, name text NOT NULL) USING nvm;
	INSERT INTO branches SELECT g, 'branch ' || g FROM generate_series(0, 9) g;
	SELECT create_reference_table('branches');
	SELECT truncate_local_data_after_distributing_table('branches');
	SET default_table_access_method = nvm;
	CREATE TABLE kinds (id int PRIMARY KEY, label text NOT NULL);
	SELECT create_reference_table('kinds');
});
all_nvm('branches', 'USING nvm, reference');
all_nvm('kinds', 'default_table_access_method = nvm, reference');
is(placements('branches'), '3', 'a reference table has a placement on each of the three nodes');

# COPY into a distributed table and into a reference table (server-side
# files: the coordinator reads them)
my $dir = PostgreSQL::Test::Utils::tempdir();
my ($events, $kinds) = ("$dir/events.csv", "$dir/kinds.csv");
{
	open(my $fh, '>', $events) or die "cannot write $events: $!";
	print $fh join(',', $_, $_ % $ACCOUNTS + 1, $_ % 7, "e$_") . "\n" for 1 .. 5000;
	close $fh;
	open($fh, '>', $kinds) or die "cannot write $kinds: $!";
	print $fh "$_,kind $_\n" for 0 .. 6;
	close $fh;
	chmod 0644, $events, $kinds;
}
q_coord(qq{
	SET default_table_access_method = nvm;
	CREATE TABLE events (id int NOT NULL, account int NOT NULL, kind int NOT NULL, tag text,
		PRIMARY KEY (account, id));
	SELECT create_distributed_table('events', 'account', colocate_with := 'accounts');
	COPY events FROM '$events' WITH (FORMAT csv);
	COPY kinds FROM '$kinds' WITH (FORMAT csv);
});
all_nvm('events', 'COPY');
my $ev_sum = 0;
$ev_sum += $_ for 1 .. 5000;
is(q_coord(q{SELECT count(*) || '|' || sum(id) || '|' || sum(kind) FROM events}),
	"5000|$ev_sum|" . eval { my $s = 0; $s += $_ % 7 for 1 .. 5000; $s },
	'COPY into a distributed table: every row, once');
is(q_coord(q{SELECT count(*) || '|' || sum(id) FROM kinds}), '7|21',
	'COPY into a reference table');
for my $w ($w1, $w2)
{
	is($w->safe_psql('postgres', q{SELECT count(*) FROM kinds}), '7',
		$w->name . ': its placement of the reference table has every row');
}

# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------

like(q_coord(q{EXPLAIN (COSTS OFF) SELECT balance FROM accounts WHERE id = 42}),
	qr/Task Count: 1\b/, 'a query on the distribution column is a router query (one task)');
is(q_coord(q{SELECT balance FROM accounts WHERE id = 42}), $BALANCE, 'router query reads its row');
like(q_coord(q{EXPLAIN (COSTS OFF) SELECT sum(balance) FROM accounts}),
	qr/Task Count: $SHARDS\b/, "a query over the whole table has a task per shard ($SHARDS)");
is(q_coord(q{SELECT count(*) || '|' || sum(balance) FROM accounts WHERE branch = 3}),
	($ACCOUNTS / 10) . '|' . ($ACCOUNTS / 10 * $BALANCE), 'multi-shard query with a filter');
is(q_coord(q{SELECT string_agg(name || ':' || n, ',' ORDER BY name) FROM (
		SELECT b.name, count(*) AS n FROM accounts a JOIN branches b ON b.id = a.branch
		 WHERE a.id <= 25 GROUP BY b.name) s}),
	join(',', map { "branch $_:" . ($_ >= 1 && $_ <= 5 ? 3 : 2) } 0 .. 9),
	'join of a distributed table with a reference table');
is(q_coord(q{SELECT count(*) || '|' || sum(e.kind) FROM accounts a JOIN events e ON e.account = a.id
	JOIN kinds k ON k.id = e.kind WHERE a.branch = 1}),
	q_coord(q{SELECT count(*) || '|' || sum(kind) FROM events WHERE account % 10 = 1}),
	'join of colocated tables and a reference table');

# ---------------------------------------------------------------------------
# multi-shard writes in one transaction: two-phase commit
# ---------------------------------------------------------------------------

my $tx_before = q_coord(q{SELECT count(*) FROM pg_dist_transaction});
q_coord(q{
	BEGIN;
	UPDATE accounts SET balance = balance + 10 WHERE id % 2 = 0;
	DELETE FROM events WHERE id % 5 = 0;
	INSERT INTO kinds VALUES (7, 'kind 7');
	COMMIT;
});
my $expect_balance = $ACCOUNTS * $BALANCE + 10 * $ACCOUNTS / 2;
is(q_coord(q{SELECT sum(balance) FROM accounts}), $expect_balance,
	'multi-shard UPDATE in a transaction: every shard updated');
is(q_coord(q{SELECT count(*) FROM events}), '4000', 'multi-shard DELETE in the same transaction');
is(q_coord(q{SELECT count(*) FROM kinds}), '8', 'reference-table write in the same transaction');
cmp_ok(q_coord(q{SELECT count(*) FROM pg_dist_transaction}), '>=', $tx_before + 2,
	'the commit was two-phase on both workers (their prepared transactions are logged)');
for my $w ($w1, $w2)
{
	is($w->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts}), '0',
		$w->name . ': no prepared transaction is left after COMMIT PREPARED');
}

q_coord(q{
	BEGIN;
	UPDATE accounts SET balance = balance + 1000;
	DELETE FROM events;
	ROLLBACK;
});
my ($rc, $out, $err) = $coord->psql('postgres', q{
	BEGIN;
	UPDATE accounts SET balance = balance + 1000;
	UPDATE accounts SET balance = 1 / (id - 1777) WHERE id = 1777;
	COMMIT;
});
like($err, qr/division by zero/, 'a multi-shard transaction that fails on one shard is refused');
is(q_coord(q{SELECT (SELECT sum(balance) FROM accounts) || '|' || (SELECT count(*) FROM events)}),
	"$expect_balance|4000", 'rolled back or failed multi-shard transactions change no shard');

# ---------------------------------------------------------------------------
# the DDL Citus gives shards (Citus's tableam test, with nvm for fake_am)
# ---------------------------------------------------------------------------

like(q_coord(q{SELECT string_agg(e, E'\n') FROM master_get_table_ddl_events('accounts') e}),
	qr/CREATE TABLE public\.accounts .* USING nvm/, 'the shard DDL of a distributed table says USING nvm');
like(q_coord(q{SELECT string_agg(e, E'\n') FROM master_get_table_ddl_events('branches') e}),
	qr/USING nvm/, 'the shard DDL of a reference table says USING nvm');

q_coord(q{
	CREATE TABLE ranged (id int, val int) USING nvm;
	SELECT create_distributed_table('ranged', 'id', 'range');
});
for my $range ([0, 24], [25, 49])
{
	my $shard = q_coord(q{SELECT master_create_empty_shard('ranged')});
	q_coord("UPDATE pg_dist_shard SET shardminvalue = '$range->[0]', shardmaxvalue = '$range->[1]'"
		  . " WHERE shardid = $shard");
}
q_coord(q{
	INSERT INTO ranged VALUES (1, 1);
	COPY ranged FROM PROGRAM 'echo 0, 0 && echo 1, -1 && echo 2, 4 && echo 3, 9' WITH CSV;
	COPY ranged FROM PROGRAM 'echo 25, 16 && echo 26, 1 && echo 27, 4 && echo 7, 9' WITH CSV;
});
all_nvm('ranged', 'range-distributed');
is(q_coord(q{SELECT string_agg(id || ':' || val, ',' ORDER BY id, val) FROM ranged}),
	'0:0,1:-1,1:1,2:4,3:9,7:9,25:16,26:1,27:4', 'range-distributed nvm table loaded by COPY');

q_coord(q{
	CREATE TABLE parted (id int, p int, val int) PARTITION BY RANGE (p);
	CREATE TABLE parted_p1 PARTITION OF parted FOR VALUES FROM (1) TO (10) USING heap;
	CREATE TABLE parted_p2 PARTITION OF parted FOR VALUES FROM (11) TO (20) USING nvm;
	INSERT INTO parted VALUES (1, 5, -1), (2, 15, -2);
	SELECT create_distributed_table('parted', 'id');
	INSERT INTO parted VALUES (3, 6, -6), (4, 16, -4);
});
all_nvm('parted_p2', 'a partition USING nvm');
is(placement_ams('parted_p1'), 'heap:' . placements('parted_p1'), 'its heap sibling stays heap');
is(q_coord(q{SELECT count(*) || '|' || sum(val) FROM parted}), '4|-13',
	'a distributed partitioned table with an nvm partition');

# ---------------------------------------------------------------------------
# alter_table_set_access_method on a distributed table
# ---------------------------------------------------------------------------

q_coord(q{
	CREATE TABLE switch (id int PRIMARY KEY, v text) USING heap;
	INSERT INTO switch SELECT g, md5(g::text) FROM generate_series(1, 3000) g;
	SELECT create_distributed_table('switch', 'id', colocate_with := 'none');
	SELECT truncate_local_data_after_distributing_table('switch');
});
my $switch = q_coord(q{SELECT count(*) || '|' || md5(string_agg(v, ',' ORDER BY id)) FROM switch});
q_coord(q{SELECT alter_table_set_access_method('switch', 'nvm')});
all_nvm('switch', 'alter_table_set_access_method heap -> nvm');
is(q_coord(q{SELECT count(*) || '|' || md5(string_agg(v, ',' ORDER BY id)) FROM switch}), $switch,
	'heap -> nvm keeps every row');
q_coord(q{UPDATE switch SET v = v || 'x' WHERE id % 3 = 0});
$switch = q_coord(q{SELECT count(*) || '|' || md5(string_agg(v, ',' ORDER BY id)) FROM switch});
q_coord(q{SELECT alter_table_set_access_method('switch', 'heap')});
is(placement_ams('switch'), 'heap:' . placements('switch'), 'nvm -> heap: every shard is heap again');
is(q_coord(q{SELECT count(*) || '|' || md5(string_agg(v, ',' ORDER BY id)) FROM switch}), $switch,
	'nvm -> heap keeps every row');

# ---------------------------------------------------------------------------
# the transfer load
# ---------------------------------------------------------------------------

# transfer(tid, a, b, d): d moves from account a to account b (a < b, so
# that the row locks are taken in one order), and two ledger rows record
# it; one transaction on (mostly) two workers
q_coord(q{
	CREATE FUNCTION transfer(p_tid bigint, p_a int, p_b int, p_d int) RETURNS bigint
	LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE accounts SET balance = balance - p_d WHERE id = p_a;
		UPDATE accounts SET balance = balance + p_d WHERE id = p_b;
		INSERT INTO ledger VALUES (p_a, p_tid, 0, -p_d), (p_b, p_tid, 1, p_d);
		RETURN p_tid;
	END $$;
	INSERT INTO accounts_start SELECT id, balance FROM accounts;
});

my $next_tid = 0;
my (%attempted, %acked);
my @clients;

sub start_clients
{
	@clients = map { nvm_client_start($coord, { name => "client $_", fed => 0, done => 0 }) } 1 .. 3;
}

# pump_clients: collects the results and keeps each client a few
# transfers ahead
sub pump_clients
{
	my ($feed) = @_;
	for my $c (@clients)
	{
		for my $line (nvm_pump_client($c))
		{
			if ($line =~ /^~ (\d+)$/)
			{
				$c->{done} = $1;
			}
			elsif ($line =~ /^(\d+)$/)
			{
				$acked{$1}++;
			}
		}
		next unless $feed && !$c->{dead};
		while ($c->{fed} - $c->{done} < 4)
		{
			my $tid = ++$next_tid;
			my $a = 1 + int(rand($ACCOUNTS));
			my $b = 1 + int(rand($ACCOUNTS));
			($a, $b) = ($b, $a) if $b < $a;
			my $d = int(rand(201)) - 100;
			$attempted{$tid} = 1;
			$c->{fed}++;
			$c->{in} .= "SELECT transfer($tid, $a, $b, $d);\n\\echo ~ $c->{fed}\n";
		}
	}
}

# load_while SECONDS [HARNESS]: runs the load for SECONDS, or, with a
# running IPC::Run HARNESS (a command of the test), until it ends
sub load_while
{
	my ($seconds, $h) = @_;
	my $deadline = time + ($h ? $PostgreSQL::Test::Utils::timeout_default : $seconds);
	while (time < $deadline)
	{
		pump_clients(1);
		if ($h)
		{
			eval { $h->pump_nb; };
			last unless $h->pumpable;
		}
		usleep(5_000);
	}
}

# stop_clients [RECOVER]: waits for every fed transfer's outcome (with
# RECOVER, recovering prepared transactions every second meanwhile), ends
# the clients; returns the number of errors they reported
sub stop_clients
{
	my ($recover) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my $next_recovery = time + 1;
	while (time < $deadline && grep { !$_->{dead} && $_->{done} < $_->{fed} } @clients)
	{
		pump_clients(0);
		usleep(5_000);
		if ($recover && time > $next_recovery)
		{
			q_coord(q{SELECT recover_prepared_transactions()});
			$next_recovery = time + 1;
		}
	}
	my $errors = 0;
	for my $c (@clients)
	{
		$c->{in} .= "\\q\n";
		pump_clients(0) until $c->{dead} || !$c->{h}->pumpable;
		eval { $c->{h}->finish; };
		my @e = $c->{err} =~ /^(?:psql:[^\n]*)?ERROR:[^\n]*/mg;
		$errors += @e;
		diag("$c->{name}: " . join("\n", @e[0 .. ($#e < 4 ? $#e : 4)])) if @e;
	}
	return $errors;
}

# coordinator_command SQL: the SQL in a psql of its own, running
sub coordinator_command
{
	my ($sql) = @_;
	my ($o, $e) = ('', '');
	my $h = IPC::Run::start([ 'psql', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1',
		  '-d', $coord->connstr('postgres'), '-c', $sql ], '>', \$o, '2>', \$e);
	return ($h, \$o, \$e);
}

# check_ledger NAME [CRASHED]: the transfers are all-or-nothing (two
# ledger rows or none, balances that follow the ledger, the sum kept);
# every acknowledged one is there and nothing else but attempted ones
# (without crashes: exactly the acknowledged ones)
sub check_ledger
{
	my ($name, $crashed) = @_;
	is(q_coord(q{SELECT count(*) FROM (SELECT tid FROM ledger GROUP BY tid HAVING count(*) <> 2
		OR count(DISTINCT side) <> 2 OR sum(delta) <> 0) s}),
		'0', "$name: every transfer has both of its ledger rows, each once");
	is(q_coord(q{SELECT count(*) FROM accounts a JOIN accounts_start s USING (id)
		LEFT JOIN (SELECT account, sum(delta) AS d FROM ledger GROUP BY account) l ON l.account = a.id
		WHERE a.balance <> s.balance + coalesce(l.d, 0)}),
		'0', "$name: every account's balance is its start plus its ledger");
	is(q_coord(q{SELECT sum(balance) FROM accounts}), $expect_balance, "$name: the sum of balances is kept");
	my %present = map { $_ => 1 } split /\n/, q_coord(q{SELECT DISTINCT tid FROM ledger});
	my @lost = grep { !$present{$_} } keys %acked;
	my @unknown = grep { !$attempted{$_} } keys %present;
	my @doubled = grep { $acked{$_} > 1 } keys %acked;
	is(scalar(@lost), 0, "$name: every acknowledged transfer is there (" . scalar(keys %acked) . ')')
	  or diag("lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)]");
	is(scalar(@unknown) + scalar(@doubled), 0, "$name: no transfer is there that was not made, none twice");
	if (!$crashed)
	{
		is(scalar(keys %present), scalar(keys %acked),
			"$name: exactly the acknowledged transfers are there");
	}
	else
	{
		cmp_ok(scalar(keys %present), '>=', scalar(keys %acked),
			"$name: the transfers there are the acknowledged ones and some whose end the client did not see");
	}
	is(q_coord(q{SELECT count(*) FROM ledger}), 2 * scalar(keys %present),
		"$name: the ledger holds two rows a transfer");
	for my $w ($w1, $w2)
	{
		is($w->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts}), '0',
			"$name: no prepared transaction is left on " . $w->name);
	}
}

# shard_on NODE: a shard of accounts placed on NODE
sub shard_on
{
	my ($n) = @_;
	return q_coord(qq{SELECT min(shardid) FROM pg_dist_shard_placement JOIN pg_dist_shard USING (shardid)
		WHERE logicalrelid = 'accounts'::regclass AND nodeport = ${\ $n->port}});
}

sub shard_port
{
	my ($shard) = @_;
	return q_coord(qq{SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard});
}

# ---------------------------------------------------------------------------
# shard moves and the rebalancer under the load
# ---------------------------------------------------------------------------

start_clients();
load_while(2);
for my $mode (qw(force_logical block_writes))
{
	my $shard = shard_on($w1);
	my $acked_before = scalar(keys %acked);
	my ($h, $o, $e) = coordinator_command(qq{SELECT citus_move_shard_placement($shard, '$host', ${\ $w1->port},
		'$host', ${\ $w2->port}, shard_transfer_mode := '$mode')});
	load_while(0, $h);
	eval { $h->finish; };
	unlike($$e, qr/ERROR|FATAL/, "shard move ($mode) under the load succeeds");
	is(shard_port($shard), $w2->port, "shard move ($mode): the shard is on worker2");
	cmp_ok(scalar(keys %acked), '>', $acked_before, "shard move ($mode): the load went on during the move");
	load_while(1);
}
all_nvm('accounts', 'after the moves');
all_nvm('ledger', 'after the moves (colocated shards move together)');
{
	my $acked_before = scalar(keys %acked);
	my ($h, $o, $e) = coordinator_command(q{SELECT rebalance_table_shards('accounts')});
	load_while(0, $h);
	eval { $h->finish; };
	unlike($$e, qr/ERROR|FATAL/, 'rebalance_table_shards under the load succeeds');
	like($$e, qr/Moving shard/, 'the rebalancer moved shards');
	cmp_ok(scalar(keys %acked), '>', $acked_before, 'the load went on during the rebalance');
}
is(q_coord(q{SELECT string_agg(n::text, ',') FROM (SELECT count(*) AS n FROM pg_dist_shard_placement
	JOIN pg_dist_shard USING (shardid) WHERE logicalrelid = 'accounts'::regclass GROUP BY nodeport) s}),
	($SHARDS / 2) . ',' . ($SHARDS / 2), 'the rebalancer evened out the shards');
all_nvm('accounts', 'after the rebalancer');
load_while(1);
is(stop_clients(), 0, 'the load saw no error through the moves');
check_ledger('moves');

# ---------------------------------------------------------------------------
# a worker killed in the middle of a distributed two-phase commit
# ---------------------------------------------------------------------------

# account_on NODE: an account whose shard is on NODE
sub account_on
{
	my ($n) = @_;
	return q_coord(qq{SELECT min(id) FROM accounts
		WHERE get_shard_id_for_distribution_column('accounts', id) IN (
			SELECT shardid FROM pg_dist_shard_placement WHERE nodeport = ${\ $n->port})});
}

# wait_pumping C QUERY NODE: polls QUERY on NODE until it returns 't',
# pumping client C meanwhile (its statements go to its psql only then)
sub wait_pumping
{
	my ($c, $node, $query) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		nvm_pump_client($c);
		return 1 if $node->safe_psql('postgres', $query) eq 't';
		usleep(20_000);
	}
	diag("timed out waiting for: $query");
	return 0;
}

# the backends of a node whose transaction wrote
my $WRITERS = q{FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()};

# in_doubt_commit KILLED OTHER OUTCOME: a transfer between an account on
# KILLED and one on OTHER; OTHER's backend is stopped before its PREPARE,
# KILLED is SIGKILLed (every process) either after its PREPARE (OUTCOME
# 'commit': the coordinator then gets OTHER's PREPARE and commits) or, with
# OUTCOME 'abort', OTHER is killed instead, before its PREPARE (the
# coordinator aborts).
sub in_doubt_commit
{
	my ($prepared, $other, $outcome) = @_;
	my $name = "SIGKILL of " . ($outcome eq 'commit' ? $prepared->name . ' after' : $other->name . ' before')
	  . ' its PREPARE';
	my $tid = ++$next_tid;
	my ($a, $b) = sort { $a <=> $b } (account_on($prepared), account_on($other));
	$attempted{$tid} = 1;
	my $c = nvm_client_start($coord, { name => 'in-doubt' });
	$c->{in} .= "BEGIN;\nSELECT transfer($tid, $a, $b, 7);\n";
	ok(wait_pumping($c, $other, "SELECT count(*) = 1 $WRITERS")
		  && wait_pumping($c, $prepared, "SELECT count(*) = 1 $WRITERS"),
		"$name: the transfer wrote on both workers");
	my $pid = $other->safe_psql('postgres', "SELECT pid $WRITERS");
	kill 'STOP', $pid;
	$c->{in} .= "COMMIT;\n\\echo ~ end\n";
	# the PREPARE has ended and its result is on its way (the backend is idle
	# after it); the coordinator reads it as it comes
	ok(wait_pumping($c, $prepared, q{SELECT count(*) = 1 FROM pg_prepared_xacts})
		  && wait_pumping($c, $prepared, q{SELECT count(*) = 1 FROM pg_stat_activity
			WHERE state = 'idle' AND query LIKE 'PREPARE TRANSACTION%'
			  AND strpos(query, (SELECT gid FROM pg_prepared_xacts)) > 0}),
		"$name: " . $prepared->name . ' prepared its part');
	my $until = time + 1;
	nvm_pump_client($c), usleep(10_000) while time < $until;
	my $killed = $outcome eq 'commit' ? $prepared : $other;
	nvm_crash($killed);
	kill 'CONT', $pid if $outcome eq 'commit';
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my @out;
	while (time < $deadline && !grep { /^~ end$/ } @out)
	{
		push @out, nvm_pump_client($c);
		usleep(10_000);
	}
	$c->{in} .= "\\q\n";
	nvm_pump_client($c) until $c->{dead};
	$acked{$tid}++ if $outcome eq 'commit' && $c->{err} !~ /ERROR:/;
	if ($outcome eq 'commit')
	{
		unlike($c->{err}, qr/ERROR:/, "$name: the COMMIT succeeds (the coordinator committed)")
		  or diag($c->{err});
		$killed->start;
		is($killed->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts}), '1',
			"$name: after its restart, the worker has the prepared transaction");
		my $shard = q_coord(qq{SELECT 'ledger_' || get_shard_id_for_distribution_column('ledger', ${\ account_on($killed)})});
		is($killed->safe_psql('postgres', qq{SELECT count(*) FROM $shard WHERE tid = $tid}), '0',
			"$name: its nvm rows are in doubt (not visible) until COMMIT PREPARED");
		is(q_coord(q{SELECT recover_prepared_transactions()}), '1',
			"$name: Citus's recovery commits the prepared transaction");
		is(q_coord(qq{SELECT count(*) || '|' || sum(delta) FROM ledger WHERE tid = $tid}), '2|0',
			"$name: the transfer is in on both shards");
	}
	else
	{
		like($c->{err}, qr/ERROR:/, "$name: the COMMIT fails (the coordinator aborted)");
		$killed->start;
		q_coord(q{SELECT recover_prepared_transactions()});
		is(q_coord(qq{SELECT count(*) FROM ledger WHERE tid = $tid}), '0',
			"$name: the transfer is on neither shard");
	}
	check_ledger($name, 1);
}

in_doubt_commit($w1, $w2, 'commit');
in_doubt_commit($w2, $w1, 'commit');
in_doubt_commit($w1, $w2, 'abort');

# SIGKILL at random moments under the load
start_clients();
load_while(2);
for my $w ($w1, $w2)
{
	nvm_crash($w);
	load_while(0.5);
	$w->start;
	# what Citus's maintenance daemon does every citus.recover_2pc_interval:
	# the prepared transactions the kill left in doubt hold row locks that
	# the load waits for
	q_coord(q{SELECT recover_prepared_transactions()});
	load_while(2);
}
my $errors = stop_clients(1);
cmp_ok($errors, '>', 0, 'the kills interrupted transfers') or diag('no transfer failed');
my $recovered = q_coord(q{SELECT recover_prepared_transactions()});
note("recover_prepared_transactions: $recovered");
check_ledger('SIGKILL under the load', 1);
for my $w ($w1, $w2)
{
	nvm_verify_clean($w, 'all', $w->name . ' after the kills');
	is(nvm_log_crashes($w) =~ s/[^\n]*terminated by signal 9[^\n]*//gr =~ s/\n//gr, '',
		$w->name . ': no crash other than the kills');
}
is(nvm_log_crashes($coord), '', 'the coordinator never crashed');

$_->stop for values %node;
done_testing();

# regress/t/040_logical_decoding.pl
#	  Logical decoding of nvm tables (wal_level = logical) gives what heap
#	  gives.  Every case runs the same statements on a heap table and on an
#	  nvm table of the same definition and compares what an output plugin
#	  prints for each (table names aside): test_decoding for inserts,
#	  updates (key changed or not), deletes and COPY under every replica
#	  identity (DEFAULT with and without a primary key, USING INDEX, FULL,
#	  NOTHING), subtransactions and rollbacks to savepoints, INSERT ... ON
#	  CONFLICT, TOAST values (new, unchanged, replaced; flattened into the
#	  old row with REPLICA IDENTITY FULL), an update that toasted a value
#	  and then found the row changed by a concurrent transaction, TRUNCATE,
#	  two-phase decoding (a two_phase slot sees PREPARE, then COMMIT or
#	  ROLLBACK PREPARED); wal2json (format 2) for the same statements.  A
#	  replication slot's exported snapshot, imported by another session
#	  after updates and a VACUUM, shows the table as of the slot's start.
#	  A snapshot whose xmin lies above its xmax (as a slot's can) shows
#	  the rows of an xid between the two, as heap does.  Finally, with
#	  wal_level = replica, nvm updates write no WAL for decoding (only the
#	  redo of physical standbys, none with nvm.wal_redo = off).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my ($node) = nvm_node('logical_decoding');
$node->append_conf('postgresql.conf',
	"wal_level = logical\nmax_wal_senders = 4\nmax_prepared_transactions = 10\nmax_replication_slots = 10\n");
# servers that list the libraries allowed as output plugins (later minor
# releases) must allow wal2json too
$node->append_conf('postgresql.conf',
	"output_plugin_libraries = 'pgoutput, test_decoding, wal2json'\n")
  if `postgres --describe-config 2>/dev/null` =~ /^output_plugin_libraries\t/m;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	SELECT 'slot' FROM pg_create_logical_replication_slot('td', 'test_decoding');
	SELECT 'slot' FROM pg_create_logical_replication_slot('td2', 'test_decoding', false, true);
});

sub query
{
	return $node->safe_psql('postgres', $_[0]);
}

# changes SLOT: what test_decoding says for everything since the last call
sub changes
{
	my ($slot) = @_;
	return query(qq{SELECT string_agg(data, E'\\n' ORDER BY ord) FROM
		(SELECT data, row_number() OVER () AS ord FROM pg_logical_slot_get_changes('$slot', NULL, NULL,
			'include-xids', '0', 'skip-empty-xacts', '1')) c});
}

# on AM SQL: SQL with %T% naming the table of access method AM
sub on
{
	my ($am, $sql) = @_;
	(my $s = $sql) =~ s/%T%/t_$am/g;
	return $s;
}

# pair NAME DEFINITION SETUP: (re)creates t_heap and t_nvm as DEFINITION,
# then runs SETUP (with %T%) on each; the slots skip the DDL.
sub pair
{
	my ($def, $setup) = @_;
	for my $am (qw(heap nvm))
	{
		query(on($am, "DROP TABLE IF EXISTS %T%; CREATE TABLE %T% ($def) USING $am; $setup"));
	}
	changes($_) for qw(td td2);
	return;
}

# same NAME SQL [SLOT]: runs SQL on the heap table, then on the nvm table,
# and compares what SLOT (td) printed for each, table names made equal;
# also checks that something was printed.  Returns the heap output.
sub same
{
	my ($name, $sql, $slot) = @_;
	$slot //= 'td';
	my %out;
	for my $am (qw(heap nvm))
	{
		changes($_) for qw(td td2);
		query(on($am, $sql));
		($out{$am} = changes($slot)) =~ s/t_$am/T/g;
	}
	isnt($out{heap}, '', "$name: heap's changes are decoded");
	is($out{nvm}, $out{heap}, "$name: nvm decodes as heap");
	return $out{heap};
}

my $dml = q{
	INSERT INTO %T% VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three');
	UPDATE %T% SET v = 'uno' WHERE id = 1;
	UPDATE %T% SET id = 12, k = 22 WHERE id = 2;
	UPDATE %T% SET k = 31 WHERE id = 3;
	DELETE FROM %T% WHERE id = 1;
	COPY %T% FROM PROGRAM 'printf "7\t70\tseven\n8\t80\teight\n"';
	DELETE FROM %T% WHERE k >= 70;
};

# --- replica identities ------------------------------------------------------
pair('id int PRIMARY KEY, k int NOT NULL, v text', '');
my $out = same('replica identity default', $dml);
like($out, qr/UPDATE: old-key: id\[integer\]:2 new-tuple: id\[integer\]:12/,
	'replica identity default: a key update carries the old key');

pair('id int PRIMARY KEY, k int NOT NULL, v text',
	'CREATE UNIQUE INDEX %T%_k ON %T% (k); ALTER TABLE %T% REPLICA IDENTITY USING INDEX %T%_k');
$out = same('replica identity using index', $dml);
like($out, qr/UPDATE: old-key: k\[integer\]:30 new-tuple/,
	'replica identity using index: the old value of the index key');

pair('id int PRIMARY KEY, k int NOT NULL, v text', 'ALTER TABLE %T% REPLICA IDENTITY FULL');
$out = same('replica identity full', $dml);
like($out, qr/DELETE: id\[integer\]:1 k\[integer\]:10 v\[text\]:'uno'/,
	'replica identity full: a delete carries the whole old row');

pair('id int PRIMARY KEY, k int NOT NULL, v text', 'ALTER TABLE %T% REPLICA IDENTITY NOTHING');
same('replica identity nothing', $dml);

pair('id int, k int NOT NULL, v text', '');
$out = same('no primary key', $dml);
like($out, qr/DELETE: \(no-tuple-data\)/, 'no primary key: deletes carry no old row');

# --- subtransactions, rollbacks, ON CONFLICT -------------------------------------
pair('id int PRIMARY KEY, k int NOT NULL, v text', '');
same('subtransactions', q{
	BEGIN;
	INSERT INTO %T% VALUES (1, 1, 'top');
	SAVEPOINT a;
	INSERT INTO %T% VALUES (2, 2, 'in a');
	SAVEPOINT b;
	UPDATE %T% SET v = 'rolled back' WHERE id = 1;
	INSERT INTO %T% VALUES (3, 3, 'rolled back');
	ROLLBACK TO b;
	INSERT INTO %T% VALUES (4, 4, 'in a after b');
	RELEASE a;
	SAVEPOINT c;
	DELETE FROM %T% WHERE id = 2;
	ROLLBACK TO c;
	UPDATE %T% SET v = 'kept' WHERE id = 2;
	COMMIT;
	BEGIN;
	INSERT INTO %T% VALUES (5, 5, 'rolled back');
	ROLLBACK;
});
same('insert on conflict', q{
	INSERT INTO %T% VALUES (1, 1, 'again') ON CONFLICT (id) DO UPDATE SET v = 'conflict';
	INSERT INTO %T% VALUES (6, 6, 'new') ON CONFLICT (id) DO UPDATE SET v = 'conflict';
	INSERT INTO %T% VALUES (4, 4, 'skipped') ON CONFLICT DO NOTHING;
	INSERT INTO %T% VALUES (7, 7, 'new') ON CONFLICT DO NOTHING;
});

# --- TOAST ------------------------------------------------------------------------
my $wide = q{(SELECT string_agg(md5(g::text || '%s'), '') FROM generate_series(1, 200) g)};
my $toast_dml = sprintf(q{
	INSERT INTO %%T%% VALUES (1, 0, %s), (2, 0, 'short');
	UPDATE %%T%% SET s = 1 WHERE id = 1;
	UPDATE %%T%% SET big = %s WHERE id = 1;
	UPDATE %%T%% SET big = %s WHERE id = 2;
	DELETE FROM %%T%% WHERE id = 1;
}, sprintf($wide, 'a'), sprintf($wide, 'b'), sprintf($wide, 'c'));
pair('id int PRIMARY KEY, s int, big text', '');
$out = same('toast', $toast_dml);
like($out, qr/big\[text\]:unchanged-toast-datum/, 'toast: an unchanged value is not sent again');
like($out, qr/big\[text\]:'[0-9a-f]{6400}'/, 'toast: a new value is sent whole');
pair('id int PRIMARY KEY, s int, big text', 'ALTER TABLE %T% REPLICA IDENTITY FULL');
$out = same('toast with replica identity full', $toast_dml);
like($out, qr/DELETE: id\[integer\]:1 s\[integer\]:1 big\[text\]:'[0-9a-f]{6400}'/,
	'toast with replica identity full: the old row carries the value inline');

# An update that toasts a value, waits for a concurrent update and then
# finds that the row no longer qualifies: nvm saved the value before
# knowing (heap toasts only after the wait); the next change of the
# transaction must not pick it up.
pair('id int PRIMARY KEY, v text, big text', q{INSERT INTO %T% VALUES (1, 'a', 'x'), (2, 'b', 'y')});
{
	my %h;
	for my $am (qw(heap nvm))
	{
		my $a = $node->background_psql('postgres');
		my $b = $node->background_psql('postgres');
		my $bpid = $b->query_safe('SELECT pg_backend_pid()');
		$a->query_safe(on($am, q{BEGIN; UPDATE %T% SET v = 'c' WHERE id = 1}));
		$b->{stdin} .= on($am, sprintf(q{BEGIN; UPDATE %%T%% SET big = %s WHERE id = 1 AND v = 'a';}, sprintf($wide, 'd'))) . "\n";
		$b->{run}->pump_nb;
		$node->poll_query_until('postgres',
			"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $bpid")
		  or die "the second update does not wait";
		$a->query_safe('COMMIT');
		$b->query_safe(on($am, q{DELETE FROM %T% WHERE id = 2; COMMIT}));
		$a->quit;
		$b->quit;
		($h{$am} = changes('td')) =~ s/t_$am/T/g;
	}
	like($h{heap}, qr/DELETE: id\[integer\]:2\nCOMMIT/, 'toast saved for a failed update: heap deletes the row');
	is($h{nvm}, $h{heap}, 'toast saved for a failed update: nvm decodes as heap');
}

# --- TRUNCATE, two-phase ----------------------------------------------------------
pair('id int PRIMARY KEY, k int NOT NULL, v text', q{INSERT INTO %T% VALUES (1, 1, 'one')});
like(same('truncate', 'TRUNCATE %T%'), qr/TRUNCATE: \(no-flags\)/, 'truncate is decoded');

pair('id int PRIMARY KEY, k int NOT NULL, v text', q{INSERT INTO %T% VALUES (1, 1, 'one')});
$out = same('two-phase, at prepare', q{
	BEGIN;
	INSERT INTO %T% VALUES (2, 2, 'two');
	UPDATE %T% SET v = 'uno' WHERE id = 1;
	PREPARE TRANSACTION 'g_%T%';
}, 'td2');
like($out, qr/INSERT: .*\n.*UPDATE: .*\nPREPARE TRANSACTION 'g_T'$/,
	'two-phase: a two_phase slot sees the changes at PREPARE');
like(same('two-phase, commit prepared', q{COMMIT PREPARED 'g_%T%'}, 'td2'),
	qr/^COMMIT PREPARED 'g_T'$/, 'two-phase: COMMIT PREPARED follows');
same('two-phase, rollback prepared', q{
	BEGIN; DELETE FROM %T% WHERE id = 1; PREPARE TRANSACTION 'r_%T%';
	ROLLBACK PREPARED 'r_%T%';
}, 'td2');
like(same('two-phase, on a slot without two_phase', q{
	BEGIN; DELETE FROM %T% WHERE id = 2; PREPARE TRANSACTION 'c_%T%';
	COMMIT PREPARED 'c_%T%';
}), qr/^BEGIN\ntable public.T: DELETE: id\[integer\]:2\nCOMMIT$/,
	'two-phase: a slot without two_phase sees the transaction at COMMIT PREPARED');

# --- wal2json -----------------------------------------------------------------------
my $pkglibdir = $node->config_data('--pkglibdir');
SKIP:
{
	if (!-e "$pkglibdir/wal2json.so")
	{
		# CI installs postgresql-15-wal2json (regress/lib/packages.sh), so on
		# 15 a missing wal2json fails the test there.  For 18,
		# regress/build-postgresql.sh 18 builds Debian's wal2json source
		# package when the mirror serves it (Debian's binary package of it
		# needs a newer C library than Debian 12's); without it this part
		# does not run on 18, and says so.
		fail("wal2json.so is installed in $pkglibdir")
		  if $ENV{CI} && $node->pg_version < 16;
		skip "wal2json is not installed in $pkglibdir (15: package postgresql-15-wal2json; "
		  . "18: regress/build-postgresql.sh 18, from Debian's source package): its part is not run", 2;
	}
	query(q{SELECT 'slot' FROM pg_create_logical_replication_slot('wj', 'wal2json')});
	pair('id int PRIMARY KEY, k int NOT NULL, v text', '');
	my $get = q{SELECT string_agg(data, E'\n' ORDER BY ord) FROM
		(SELECT data, row_number() OVER () AS ord FROM pg_logical_slot_get_changes('wj', NULL, NULL,
			'format-version', '2', 'include-xids', '0')) c};
	my %w;
	for my $am (qw(heap nvm))
	{
		query($get);			# the DDL's empty transactions
		query(on($am, $dml));
		($w{$am} = query($get)) =~ s/t_$am/T/g;
	}
	like($w{heap}, qr/"action":"U".*"identity":\[\{"name":"id","type":"integer","value":2\}\]/,
		'wal2json: heap updates are decoded with their old key');
	is($w{nvm}, $w{heap}, 'wal2json: nvm decodes as heap');
	query(q{SELECT pg_drop_replication_slot('wj')});
}

# --- a replication slot's exported snapshot ------------------------------------
# A slot created with EXPORT_SNAPSHOT (as CDC tools create theirs) exports
# the snapshot its stream starts after; a reader that imports it must see
# the tables as of that point, although rows were updated, inserted and
# deleted since, and VACUUM ran (the nvm versions it needs are kept).
pair('id int PRIMARY KEY, v text', q{INSERT INTO %T% SELECT g, 'v' || g FROM generate_series(1, 10) g});
{
	my $repl = $node->background_psql('postgres', replication => 'database');
	my $created = $repl->query_safe('CREATE_REPLICATION_SLOT exported LOGICAL test_decoding EXPORT_SNAPSHOT');
	my ($snapshot) = (split /\|/, $created)[2];
	ok(defined $snapshot && $snapshot ne '', 'a replication slot exports its snapshot');
	for my $am (qw(heap nvm))
	{
		query(on($am, q{UPDATE %T% SET v = 'once' WHERE id <= 3}));
		query(on($am, q{UPDATE %T% SET v = 'twice' WHERE id <= 3}));
		query(on($am, q{INSERT INTO %T% VALUES (11, 'new'); DELETE FROM %T% WHERE id = 10; VACUUM %T%}));
	}
	my $before = query(q{SELECT string_agg(g || ':v' || g, ',' ORDER BY g) FROM generate_series(1, 10) g});
	# force_parallel_mode was renamed debug_parallel_query in 16
	my $parallel = $node->pg_version >= 16 ? 'debug_parallel_query' : 'force_parallel_mode';
	for my $am (qw(heap nvm))
	{
		is(query(on($am, qq{BEGIN ISOLATION LEVEL REPEATABLE READ;
			SET TRANSACTION SNAPSHOT '$snapshot';
			SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM %T%; COMMIT})),
			$before, "exported snapshot: a reader of the $am table sees it as of the slot's start");
		is(query(on($am, qq{BEGIN ISOLATION LEVEL REPEATABLE READ;
			SET TRANSACTION SNAPSHOT '$snapshot';
			SET LOCAL $parallel = on;
			SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM %T%; COMMIT})),
			$before, "exported snapshot: so does a parallel worker reading the $am table");
	}
	$repl->quit;
	query(q{SELECT pg_drop_replication_slot('exported')});
}

# --- a slot's snapshot whose xmin lies above its xmax ---------------------------
# A slot's snapshot can have its xmin above its xmax (seen under load: the
# xmin comes from the running transactions logged at the consistent point,
# the xmax from the commits decoded before it); an xid between the two is
# finished for it, as XidInMVCCSnapshot tests xmin first.  The slot's
# stream never sends such a transaction, so the initial copy must hold its
# rows.  The bounds of an exported snapshot are set so, around a
# transaction that wrote one row into each table.
pair('id int PRIMARY KEY, v text', q{INSERT INTO %T% VALUES (1, 'old')});
{
	my $xid = query(q{BEGIN; INSERT INTO t_heap VALUES (2, 'between'); INSERT INTO t_nvm VALUES (2, 'between');
		SELECT txid_current(); COMMIT});
	my $repl = $node->background_psql('postgres', replication => 'database');
	my $created = $repl->query_safe('CREATE_REPLICATION_SLOT inverted LOGICAL test_decoding EXPORT_SNAPSHOT');
	my ($snapshot) = (split /\|/, $created)[2];
	my $file = $node->data_dir . "/pg_snapshots/$snapshot";
	my $text = PostgreSQL::Test::Utils::slurp_file($file);
	my ($xmin) = $text =~ /^xmin:(\d+)$/m;
	cmp_ok($xmin, '>', $xid, "the exported snapshot's xmin ($xmin) follows the writer's xid ($xid)");
	$text =~ s/^xmax:\d+$/xmax:$xid/m;
	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh $text;
	close($fh);
	for my $am (qw(heap nvm))
	{
		is(query(on($am, qq{BEGIN ISOLATION LEVEL REPEATABLE READ;
			SET TRANSACTION SNAPSHOT '$snapshot';
			SELECT pg_current_snapshot();
			SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM %T%; COMMIT})),
			"$xmin:$xid:\n1:old,2:between",
			"snapshot with its xmin above its xmax: a reader of the $am table sees the rows of an xid between them");
	}
	$repl->quit;
	query(q{SELECT pg_drop_replication_slot('inverted')});
}

# --- WAL written with and without wal_level = logical ----------------------------
# wal_bytes N: WAL written by N single-row updates of a non-indexed column
sub wal_bytes
{
	my ($n) = @_;
	query(q{DROP TABLE IF EXISTS w; CREATE TABLE w (id int PRIMARY KEY, v int) USING nvm;
		INSERT INTO w SELECT g, 0 FROM generate_series(1, 100) g; CHECKPOINT});
	my $start = query('SELECT pg_current_wal_insert_lsn()');
	query(join('', map { "UPDATE w SET v = v + 1 WHERE id = " . ($_ % 100 + 1) . ";\n" } 1 .. $n));
	return query("SELECT pg_current_wal_insert_lsn() - '$start'");
}
my $logical = wal_bytes(500);
query(q{SELECT pg_drop_replication_slot(s) FROM unnest(ARRAY['td', 'td2']) s});
$node->append_conf('postgresql.conf', "wal_level = replica\n");
$node->restart;
my $replica = wal_bytes(500);
$node->append_conf('postgresql.conf', "nvm.wal_redo = off\n");
$node->restart;
my $no_redo = wal_bytes(500);
cmp_ok($logical, '>', 500 * 40, "wal_level = logical: nvm updates are logged ($logical bytes)");
cmp_ok($replica, '<', $logical,
	"wal_level = replica: nvm updates write their standbys' redo only, less than for decoding ($replica bytes)");
cmp_ok($no_redo, '<', 4096, "wal_level = replica, nvm.wal_redo = off: nvm updates write no WAL ($no_redo bytes)");

$node->stop;
done_testing();

# regress/t/028_standby.pl
#	  A physical standby of a cluster with nvm tables, made from a cold copy
#	  of the primary (data directory and pool, copied while the primary was
#	  stopped), replays the primary's nvm redo into its own pool:
#	   - under a transfer load with inserts and deletes on the primary,
#	     every read on the hot standby conserves the total, commits larger
#	     than one COMMIT record (parts) replay among the load's, replay prunes
#	     the rows it updates, and after
#	     catching up the standby holds the primary's rows exactly (count,
#	     total, a digest of every row by key), its index and sequential
#	     scans agree and its pool checks clean;
#	   - table storage follows: a new table, TRUNCATE, a truncate in the
#	     creating transaction, SET TABLESPACE, DROP;
#	   - a clean restart and a kill -9 of the standby under load: it
#	     replays again from its restart point and catches up exactly;
#	   - a cascading standby, made from a cold copy of the standby;
#	   - numbers of rolled-back writes, which index entries name, are never
#	     given to other rows by a promoted standby;
#	   - prepared transactions are in doubt on the standby as on the primary:
#	     invisible until COMMIT PREPARED, and one still prepared when the
#	     primary dies holds its row locks (FOR UPDATE, FOR SHARE without a
#	     change) and commits its nvm rows on the promoted standby;
#	   - with a synchronous standby, the primary is killed under load, the
#	     standby promoted (pg_promote), and every acknowledged commit is
#	     there; the promoted standby's nvm tables are writable at once.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmBackup;
use NvmStandby;
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $ROWS = 2000;
my $ITEMS = 500;

my ($primary, $primary_pool) = nvm_node('primary', init => { allows_streaming => 1 });
$primary->append_conf('postgresql.conf', qq{
allow_in_place_tablespaces = on
max_wal_senders = 10
wal_keep_size = '256MB'
max_prepared_transactions = 10
});
$primary->start;
nvm_accounts_create($primary, $ROWS);
$primary->safe_psql('postgres', qq{
	CREATE TABLE items (id int PRIMARY KEY, owner int NOT NULL, payload text) USING nvm;
	INSERT INTO items SELECT g, g % $ROWS + 1, repeat(md5(g::text), 1 + g % 3) FROM generate_series(1, $ITEMS) g;
	CREATE TABLE dropped (id int PRIMARY KEY) USING nvm;
	INSERT INTO dropped SELECT generate_series(1, 100);
});

my ($standby, $standby_pool) = nvm_standby_from_cold_copy($primary, $primary_pool, 'standby');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
is(nvm_pool_state($standby), 'standby', 'nvm_pool says the standby replays into its own pool');

# reads_conserve NODE SECONDS: sums the balances on NODE again and again
# for SECONDS seconds; returns the number of reads and the bad ones.
sub reads_conserve
{
	my ($node, $seconds) = @_;
	my ($reads, @bad) = (0);
	my $until = time() + $seconds;
	while (time() < $until)
	{
		my $r = $node->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts');
		push @bad, $r if $r ne "$ROWS|" . ($ROWS * 1000);
		my $s = $node->safe_psql('postgres', q{
			BEGIN ISOLATION LEVEL REPEATABLE READ;
			SELECT sum(balance) FROM accounts WHERE id <= 1000;
			SELECT sum(balance) FROM accounts WHERE id > 1000;
			COMMIT;});
		my @parts = split /\n/, $s;
		push @bad, "rr:$s" if @parts != 2 || $parts[0] + $parts[1] != $ROWS * 1000;
		$reads++;
	}
	return ($reads, @bad);
}

# same_rows PRIMARY STANDBY NAME: after catching up, the standby holds the
# primary's rows exactly, its scans agree, and its tables check clean.
sub same_rows
{
	my ($p, $s, $name) = @_;
	my $upstream_lsn = $p->safe_psql('postgres', 'SELECT pg_is_in_recovery()') eq 't'
	  ? $p->lsn('replay') : $p->lsn('insert');
	$p->wait_for_catchup($s, 'replay', $upstream_lsn);
	is(nvm_rows_digest($s), nvm_rows_digest($p), "$name: every account row is the primary's");
	is(nvm_items_digest($s), nvm_items_digest($p), "$name: every item row is the primary's");
	is($s->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
		"$ROWS|" . ($ROWS * 1000), "$name: the total is kept");
	my $d = nvm_scan_digests($s, 'items', 'id', "id || ':' || payload");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans of items agree");
	$d = nvm_scan_digests($s, 'accounts', 'id', "id || ':' || balance");
	is($d->{index}, $d->{seq}, "$name: index and sequential scans of accounts agree");
	# the integrity check takes locks a standby does not grant: checked after promotion
	if ($s->safe_psql('postgres', 'SELECT pg_is_in_recovery()') eq 'f')
	{
		nvm_verify_clean($s, 'items', $name);
		nvm_verify_clean($s, 'accounts', $name);
	}
	is(nvm_log_crashes($s), '', "$name: no crash in the standby's log");
	return;
}

# --- streaming under load; reads on the standby conserve the total --------
# (and commits larger than a COMMIT record's 4 MB, logged in parts, while
# the load commits: no other commit's record may come between the parts)
$primary->safe_psql('postgres', 'CREATE TABLE big (id int PRIMARY KEY, pad text) USING nvm');
my $load = nvm_mixed_load_start($primary, $ROWS, 8, 2, 1);
$primary->safe_psql('postgres',
	"INSERT INTO big SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 8000) g");
$primary->safe_psql('postgres', "UPDATE big SET pad = pad || 'x' WHERE id % 2 = 0");
my ($reads, @bad) = reads_conserve($standby, 5);
nvm_transfers_finish($load, 'load under replay');
ok($reads > 5, "reads on the standby ran during the load ($reads)");
is(scalar(@bad), 0, 'every read on the standby conserved the total') or diag(join(' ', @bad));
same_rows($primary, $standby, 'streaming');
my $big = q{SELECT count(*) || ':' || md5(string_agg(id || pad, ',' ORDER BY id)) FROM big};
is($standby->safe_psql('postgres', $big), $primary->safe_psql('postgres', $big),
	'streaming: commits of 10 MB of rows, logged in parts among other commits, are the primary\'s');

# --- updates of wide rows, logged as a change of the version before ----------
# (a middle column, the first, the last, a column going NULL, a row changed
# by several commits in a row, and twice in one transaction: its own
# version before is no diff's base); the standby's rows are the primary's
# byte for byte, tuple header's xmin and cmin included
$primary->safe_psql('postgres', q{
	CREATE TABLE wide (id int PRIMARY KEY, a text, b char(60), mid int, n int, c text, d char(60))
	  USING nvm;
	INSERT INTO wide SELECT g, repeat('a', g % 50), 'b' || g, g, CASE WHEN g % 3 = 0 THEN NULL ELSE g END,
	  repeat(md5(g::text), 8), 'd' || g FROM generate_series(1, 600) g;});
my $wide_lsn = $primary->lsn('insert');
$primary->safe_psql('postgres', 'UPDATE wide SET mid = mid + 1000 WHERE id = 7');
my $wide_bytes = $primary->safe_psql('postgres',
	"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$wide_lsn')");
ok($wide_bytes < 200,
	"an UPDATE of one integer of a 430-byte row logs its change, not the row ($wide_bytes WAL bytes)");
$primary->safe_psql('postgres', 'UPDATE wide SET mid = mid + 1000 WHERE id % 2 = 0');
$primary->safe_psql('postgres', "UPDATE wide SET a = a || 'z' WHERE id % 5 = 0");
$primary->safe_psql('postgres', "UPDATE wide SET d = 'e' WHERE id % 11 = 0");
$primary->safe_psql('postgres', 'UPDATE wide SET n = NULL, mid = -mid WHERE id % 7 = 0');
$primary->safe_psql('postgres', 'UPDATE wide SET n = 1 WHERE id % 9 = 0');
$primary->safe_psql('postgres', "UPDATE wide SET mid = mid + 1 WHERE id = 3") for 1 .. 5;
$primary->safe_psql('postgres', q{
	BEGIN;
	UPDATE wide SET mid = mid + 1 WHERE id = 4;
	SAVEPOINT s;
	UPDATE wide SET c = 'gone' WHERE id = 4;
	ROLLBACK TO s;
	UPDATE wide SET mid = mid + 1 WHERE id = 4;
	COMMIT;});
my $wide = q{SELECT count(*) || ':' || md5(string_agg(w::text || '/' || w.xmin || '/' || w.cmin, ','
	ORDER BY id)) FROM wide w};
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', $wide), $primary->safe_psql('postgres', $wide),
	'streaming: wide rows updated in a middle, first or last column are the primary\'s byte for byte');
is($standby->safe_psql('postgres', 'SELECT mid, n FROM wide WHERE id IN (3, 4, 14) ORDER BY id'),
	"8|\n1006|4\n-1014|", 'streaming: the standby reads the updated values');

my $versions = $standby->safe_psql('postgres', q{SELECT versions FROM nvm_table_stats('accounts')});
ok($versions < 3 * $ROWS, "streaming: replay prunes the rows it updates ($versions versions of $ROWS rows)");

# --- table storage: create, truncate, truncate in the creating transaction,
# --- SET TABLESPACE, drop -----------------------------------------------------
$primary->safe_psql('postgres', q{
	CREATE TABLE fresh (id int PRIMARY KEY, v text) USING nvm;
	INSERT INTO fresh SELECT g, 'v' || g FROM generate_series(1, 300) g;
	BEGIN;
	CREATE TABLE once (id int) USING nvm;
	INSERT INTO once SELECT generate_series(1, 50);
	TRUNCATE once;
	INSERT INTO once SELECT generate_series(1001, 1010);
	COMMIT;
	CREATE TABLE truncated (id int) USING nvm;
	INSERT INTO truncated SELECT generate_series(1, 40);
	TRUNCATE truncated;
	INSERT INTO truncated SELECT generate_series(500, 504);
	CREATE TABLESPACE inplace LOCATION '';
	ALTER TABLE fresh SET TABLESPACE inplace;
	UPDATE fresh SET v = v || '!' WHERE id % 10 = 0;
	DROP TABLE dropped;
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $q = q{SELECT (SELECT count(*) || ':' || sum(id) || ':' || count(*) FILTER (WHERE v LIKE '%!') FROM fresh)
	|| '/' || (SELECT count(*) || ':' || sum(id) FROM once)
	|| '/' || (SELECT count(*) || ':' || sum(id) FROM truncated)};
is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
	'table storage: new, truncated and moved tables hold the primary\'s rows');
is($standby->safe_psql('postgres', $q), '300:45150:30/10:10055/5:2510',
	'table storage: ... which are the rows written');
is($standby->safe_psql('postgres', 'SELECT tables FROM nvm_pool'),
	$primary->safe_psql('postgres', 'SELECT tables FROM nvm_pool'),
	'table storage: the standby\'s pool has as many tables as the primary\'s (drops replayed)');

# --- a clean restart, then a kill -9, of the standby under load --------------
$load = nvm_mixed_load_start($primary, $ROWS, 6, 2, 1);
nvm_load_wait_running($load);
$standby->restart;
nvm_transfers_finish($load, 'load over a restart of the standby');
same_rows($primary, $standby, 'standby restarted');

$load = nvm_mixed_load_start($primary, $ROWS, 6, 2, 1);
nvm_load_wait_running($load);
$standby->stop('immediate');
sleep 1;
$standby->start;
nvm_transfers_finish($load, 'load over a kill of the standby');
same_rows($primary, $standby, 'standby killed and restarted');
is($standby->safe_psql('postgres', $wide), $primary->safe_psql('postgres', $wide),
	'standby killed and restarted: the wide rows are the primary\'s byte for byte');

# --- a cascading standby, from a cold copy of the standby --------------------
my ($cascade) = nvm_standby_from_cold_copy($standby, $standby_pool, 'cascade');
$load = nvm_mixed_load_start($primary, $ROWS, 5, 2, 1);
nvm_transfers_finish($load, 'load with a cascading standby');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
same_rows($standby, $cascade, 'cascading standby');
is(nvm_rows_digest($cascade), nvm_rows_digest($primary), 'cascading standby: the primary\'s rows');
is($cascade->safe_psql('postgres', $wide), $primary->safe_psql('postgres', $wide),
	'cascading standby: the wide rows are the primary\'s byte for byte');
$cascade->stop;

# --- rolled-back writes: their numbers are reserved --------------------------
$primary->safe_psql('postgres', q{
	CREATE TABLE reserved (id int PRIMARY KEY, v int) USING nvm;
	INSERT INTO reserved SELECT g, g FROM generate_series(1, 10) g;
	BEGIN;
	INSERT INTO reserved SELECT g, g FROM generate_series(100001, 105000) g;
	ROLLBACK;
});

# --- prepared transactions: in doubt on the standby too ----------------------
$primary->safe_psql('postgres', q{
	BEGIN;
	UPDATE accounts SET balance = balance - 300 WHERE id = 3;
	UPDATE accounts SET balance = balance + 300 WHERE id = 4;
	PREPARE TRANSACTION 'p1';});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $pair = q{SELECT string_agg(balance::text, ',' ORDER BY id) FROM accounts WHERE id IN (3, 4)};
my $pair_before = $primary->safe_psql('postgres', $pair);
is($standby->safe_psql('postgres', $pair), $pair_before,
	'prepared: the standby does not show the prepared transaction\'s rows');
is($standby->safe_psql('postgres', 'SELECT sum(balance) FROM accounts'), $ROWS * 1000,
	'prepared: the total is kept on the standby');
$primary->safe_psql('postgres', q{COMMIT PREPARED 'p1'});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $pair_after = $primary->safe_psql('postgres', $pair);
isnt($pair_after, $pair_before, 'prepared: COMMIT PREPARED moved the money on the primary');
is($standby->safe_psql('postgres', $pair), $pair_after,
	'prepared: after COMMIT PREPARED the standby shows its rows');
# one more, still prepared when the primary dies below, holding row locks
# without changes too; committed after promotion
$primary->safe_psql('postgres', q{
	CREATE TABLE held (id int PRIMARY KEY, v int) USING nvm;
	INSERT INTO held SELECT g, 0 FROM generate_series(1, 3) g;});
$primary->safe_psql('postgres', q{
	BEGIN;
	UPDATE accounts SET balance = balance - 200 WHERE id = 5;
	UPDATE accounts SET balance = balance + 200 WHERE id = 6;
	SELECT * FROM held WHERE id = 1 FOR UPDATE;
	SELECT * FROM held WHERE id = 2 FOR SHARE;
	PREPARE TRANSACTION 'p2';});
# held_locks NODE: what the row locks of p2 let other sessions do, as
# "update 1 | lock 2 for update | lock 2 for share | update 3" (ok or the error)
sub held_locks
{
	my ($node) = @_;
	my @out;
	for my $sql ('UPDATE held SET v = v + 1 WHERE id = 1',
		'SELECT * FROM held WHERE id = 2 FOR UPDATE NOWAIT',
		'SELECT * FROM held WHERE id = 2 FOR SHARE NOWAIT',
		'UPDATE held SET v = v + 1 WHERE id = 3')
	{
		my ($rc, $o, $e) = $node->psql('postgres', "SET lock_timeout = '300ms'; $sql");
		push @out, $rc == 0 ? 'ok' : ($e =~ /(lock timeout|could not obtain lock)/ ? $1 : $e);
	}
	return join ' | ', @out;
}
my $held_expected = 'lock timeout | could not obtain lock | ok | ok';
is(held_locks($primary), $held_expected, 'prepared: its row locks are held on the primary');
my $pair2 = q{SELECT string_agg(balance::text, ',' ORDER BY id) FROM accounts WHERE id IN (5, 6)};
my $pair2_before = $primary->safe_psql('postgres', $pair2);

# --- a synchronous standby; the primary is killed under load -----------------
$primary->append_conf('postgresql.conf', qq{
synchronous_standby_names = 'standby'
synchronous_commit = on
});
$primary->reload;
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'})
  or die 'the standby did not become synchronous';
$primary->safe_psql('postgres', 'CREATE TABLE acked (id int PRIMARY KEY) USING nvm');
$load = nvm_mixed_load_start($primary, $ROWS, 30, 2, 1);
my @acked;
my $until = time() + 4;
for (my $i = 1; time() < $until; $i++)
{
	my ($rc) = $primary->psql('postgres', "INSERT INTO acked VALUES ($i)");
	push @acked, $i if $rc == 0;
}
nvm_crash($primary);
nvm_load_kill($load);
ok(@acked > 10, 'commits were acknowledged by the synchronous standby (' . scalar(@acked) . ')');
$standby->safe_psql('postgres', 'SELECT pg_promote()');
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
my $have = $standby->safe_psql('postgres',
	'SELECT count(*) FROM acked WHERE id IN (' . join(',', @acked) . ')');
is($have, scalar(@acked), 'promoted: every acknowledged commit is there');
is($standby->safe_psql('postgres', 'SELECT count(*), sum(balance) FROM accounts'),
	"$ROWS|" . ($ROWS * 1000), 'promoted: the total is kept');
is(nvm_pool_state($standby), 'attached', 'promoted: nvm_pool says attached');
is($standby->safe_psql('postgres', q{SELECT gid FROM pg_prepared_xacts}), 'p2',
	'promoted: the prepared transaction is there');
is(held_locks($standby), $held_expected,
	'promoted: the row locks of the transaction still prepared are held');
$standby->safe_psql('postgres', q{COMMIT PREPARED 'p2'});
is(held_locks($standby), 'ok | ok | ok | ok', 'promoted: COMMIT PREPARED releases them');
my ($b5, $b6) = split /,/, $pair2_before;
is($standby->safe_psql('postgres', $pair2), ($b5 - 200) . ',' . ($b6 + 200),
	'promoted: COMMIT PREPARED of a transaction prepared on the old primary commits its nvm rows');

# writable at once; the rolled-back rows' numbers are never reused
$standby->safe_psql('postgres', q{
	UPDATE accounts SET balance = balance + 1 WHERE id = 1;
	UPDATE accounts SET balance = balance - 1 WHERE id = 2;
	INSERT INTO items VALUES (-1, 1, 'after promotion');
	INSERT INTO reserved SELECT g, g FROM generate_series(11, 6000) g;
});
is($standby->safe_psql('postgres', 'SELECT count(*) FROM reserved WHERE id BETWEEN 100001 AND 105000'),
	'0', 'promoted: no index entry of a rolled-back row leads to a new row');
my $d = nvm_scan_digests($standby, 'reserved', 'id', "id || ':' || v");
is($d->{index}, $d->{seq}, 'promoted: index and sequential scans of the reused table agree');
nvm_check_indexes($standby, 'reserved', 'promoted');
nvm_accounts_check($standby, 'promoted', $ROWS);
is($standby->safe_psql('postgres', q{SELECT payload FROM items WHERE id = -1}), 'after promotion',
	'promoted: new rows are written');

$standby->restart;
nvm_accounts_check($standby, 'promoted, restarted', $ROWS);
is(nvm_log_crashes($standby), '', 'no crash in the promoted standby\'s log');

done_testing();

# regress/t/012_dump_restore.pl
#	  pg_dump and pg_restore round trips of a database with nvm tables:
#	  tables created with USING nvm (and one with heap beside them), primary
#	  keys, unique, check and foreign-key constraints, secondary and
#	  expression indexes, identity columns and sequences, updated and deleted
#	  rows, and a partitioned table whose partitions are nvm tables.  The
#	  dump is restored as plain SQL through psql and as a custom-format
#	  archive through pg_restore (two jobs, from a directory archive); each
#	  restored database keeps every table's access method, its rows, its
#	  sequence positions and working constraints, and amcheck is clean on
#	  every btree index.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('dump');
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE customers (
		id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		name text NOT NULL UNIQUE,
		credit numeric(10,2) CHECK (credit >= 0)
	) USING nvm;
	CREATE SEQUENCE order_no START 1000;
	CREATE TABLE orders (
		no bigint PRIMARY KEY DEFAULT nextval('order_no'),
		customer int NOT NULL REFERENCES customers (id),
		placed date NOT NULL,
		note text
	) USING nvm;
	CREATE INDEX orders_customer ON orders (customer, placed);
	CREATE INDEX orders_note_lower ON orders (lower(note));
	CREATE TABLE notes_heap (id serial PRIMARY KEY, body text) USING heap;
	CREATE TABLE events (id int NOT NULL, at date NOT NULL, what text)
		PARTITION BY RANGE (at);
	CREATE TABLE events_2023 PARTITION OF events
		FOR VALUES FROM ('2023-01-01') TO ('2024-01-01') USING nvm;
	CREATE TABLE events_2024 PARTITION OF events
		FOR VALUES FROM ('2024-01-01') TO ('2025-01-01') USING nvm;
	CREATE INDEX events_id ON events (id);

	INSERT INTO customers (name, credit)
		SELECT 'customer ' || g, g * 1.5 FROM generate_series(1, 200) g;
	INSERT INTO orders (customer, placed, note)
		SELECT 1 + g % 200, date '2023-01-01' + g % 500, 'Note ' || g
		  FROM generate_series(1, 2000) g;
	UPDATE customers SET credit = credit + 10 WHERE id % 7 = 0;
	DELETE FROM orders WHERE no % 13 = 0;
	UPDATE orders SET note = NULL WHERE no % 11 = 0;
	INSERT INTO notes_heap (body) SELECT 'heap ' || g FROM generate_series(1, 50) g;
	INSERT INTO events SELECT g, date '2023-06-01' + g, 'event ' || g
		FROM generate_series(1, 400) g;
	DELETE FROM events WHERE id % 17 = 0;
});

# what each database must look like: access methods, and a digest per table
my $am_query = q{
	SELECT string_agg(c.relname || ':' || coalesce(a.amname, '-'), ',' ORDER BY c.relname)
	  FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
	 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')};
my $data_query = q{
	SELECT (SELECT count(*) || '/' || md5(string_agg(t::text, ';' ORDER BY id)) FROM customers t)
	  || ' ' || (SELECT count(*) || '/' || md5(string_agg(t::text, ';' ORDER BY no)) FROM orders t)
	  || ' ' || (SELECT count(*) || '/' || md5(string_agg(t::text, ';' ORDER BY id)) FROM notes_heap t)
	  || ' ' || (SELECT count(*) || '/' || md5(string_agg(t::text, ';' ORDER BY id)) FROM events t)
	  || ' ' || (SELECT last_value FROM order_no)};

my $src_am = $node->safe_psql('src', $am_query);
is( $src_am,
	'customers:nvm,events:-,events_2023:nvm,events_2024:nvm,notes_heap:heap,orders:nvm',
	'source: the access methods');
my $src_data = $node->safe_psql('src', $data_query);

# check_restored DB NAME: the restored database DB matches the source
sub check_restored
{
	my ($db, $name) = @_;
	is($node->safe_psql($db, $am_query), $src_am, "$name: every table keeps its access method");
	is($node->safe_psql($db, $data_query), $src_data, "$name: same rows and sequence positions");

	# the constraints and defaults work on the restored nvm tables
	my ($rc, $out, $err) = $node->psql($db, "INSERT INTO customers (name) VALUES ('customer 1')");
	like($err, qr/duplicate key value violates unique constraint "customers_name_key"/,
		"$name: unique constraint enforced");
	($rc, $out, $err) = $node->psql($db, "INSERT INTO orders (customer, placed) VALUES (100000, now())");
	like($err, qr/violates foreign key constraint "orders_customer_fkey"/,
		"$name: foreign key enforced");
	($rc, $out, $err) = $node->psql($db, "UPDATE customers SET credit = -1 WHERE id = 1");
	like($err, qr/violates check constraint "customers_credit_check"/, "$name: check constraint enforced");
	is( $node->safe_psql(
			$db, q{
		INSERT INTO customers (name) VALUES ('new customer') RETURNING id;
		INSERT INTO orders (customer, placed) VALUES (1, now()) RETURNING no;
		INSERT INTO events VALUES (1000, '2024-03-01', 'restored') RETURNING tableoid::regclass}),
		# (the two failed inserts above used up one value each)
		"202\n" . ($node->safe_psql('src', 'SELECT last_value + 2 FROM order_no')) . "\nevents_2024",
		"$name: identity, sequence and partition routing continue");

	# index scans agree with the rows
	is( $node->safe_psql(
			$db, q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM orders WHERE customer = 5 AND placed > '2023-01-01'}),
		$node->safe_psql('src', q{SELECT count(*) FROM orders WHERE customer = 5 AND placed > '2023-01-01'}),
		"$name: index scan on a restored index");
	$node->safe_psql($db, 'CREATE EXTENSION IF NOT EXISTS amcheck');
	foreach my $index (split /\n/, $node->safe_psql($db, q{
		SELECT c.relname FROM pg_index i
		  JOIN pg_class c ON c.oid = i.indexrelid
		  JOIN pg_am a ON a.oid = c.relam
		  JOIN pg_class t ON t.oid = i.indrelid
		 WHERE a.amname = 'btree' AND t.relnamespace = 'public'::regnamespace
		   AND t.relkind = 'r'
		 ORDER BY 1}))
	{
		($rc, $out, $err) = $node->psql($db, "SELECT bt_index_check('$index'::regclass, true)");
		is($rc . $err, '0', "$name: bt_index_check($index, heapallindexed) is clean");
	}
}

my $dir = PostgreSQL::Test::Utils::tempdir;

# plain SQL through psql
$node->command_ok([ 'pg_dump', '-d', $node->connstr('src'), '-f', "$dir/src.sql" ], 'pg_dump, plain format');
my $dump = slurp_file("$dir/src.sql");
like($dump, qr/^SET default_table_access_method = nvm;$/m, 'the plain dump names the nvm access method');
like($dump, qr/^CREATE EXTENSION IF NOT EXISTS nvmam /m, 'the plain dump creates the extension');
$node->safe_psql('postgres', 'CREATE DATABASE plain');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('plain'), '-f', "$dir/src.sql" ],
	'plain dump restores through psql');
check_restored('plain', 'plain');

# custom format through pg_restore, and a directory archive with two jobs
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', "$dir/src.dump" ],
	'pg_dump, custom format');
$node->safe_psql('postgres', 'CREATE DATABASE custom');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('custom'), "$dir/src.dump" ],
	'custom archive restores through pg_restore');
check_restored('custom', 'custom');

$node->command_ok([ 'pg_dump', '-Fd', '-j', '2', '-d', $node->connstr('src'), '-f', "$dir/src.dir" ],
	'pg_dump, directory format, two jobs');
$node->safe_psql('postgres', 'CREATE DATABASE parallel');
$node->command_ok([ 'pg_restore', '-j', '2', '-d', $node->connstr('parallel'), "$dir/src.dir" ],
	'directory archive restores through pg_restore with two jobs');
check_restored('parallel', 'parallel');

# the source is untouched by the dumps
is($node->safe_psql('src', $data_query), $src_data, 'source unchanged');

$node->stop;
done_testing();

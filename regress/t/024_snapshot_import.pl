# regress/t/024_snapshot_import.pl
#	  A transaction that imports another's snapshot (SET TRANSACTION
#	  SNAPSHOT, as pg_dump --jobs workers do) reads nvm tables as the
#	  exporter does: a commit made after the export is invisible to both,
#	  also through an index, and stays so for the whole importing
#	  transaction.  A snapshot exported by a READ COMMITTED transaction, or
#	  imported after its exporter ended, cannot read nvm tables: the read
#	  fails with an error and a hint (heap tables still read fine); the next
#	  transaction is unaffected.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NvmTest;

my ($node) = nvm_node('import');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE a (id int PRIMARY KEY, v int NOT NULL) USING nvm;
	INSERT INTO a SELECT g, 0 FROM generate_series(1, 100) g;
	CREATE TABLE h (id int PRIMARY KEY, v int NOT NULL) USING heap;
	INSERT INTO h VALUES (1, 0);
});

my $exporter = $node->background_psql('postgres');
my $importer = $node->background_psql('postgres', on_error_stop => 0);
my $sum = 'SELECT sum(v) FROM a';
my $by_index = 'SET enable_seqscan = off; SELECT v FROM a WHERE id = 7';

$exporter->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($exporter->query_safe($sum), '0', 'the exporter reads the table');
my $id = $exporter->query_safe('SELECT pg_export_snapshot()');
$node->safe_psql('postgres', 'UPDATE a SET v = 5 WHERE id = 7; UPDATE h SET v = 5');

$importer->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$importer->query_safe("SET TRANSACTION SNAPSHOT '$id'");
is($importer->query_safe($sum), '0', 'the importer does not see the commit made after the export');
is($importer->query_safe($by_index), '0', '... nor through the index');
is($importer->query_safe('SELECT v FROM h'), '0', '... and sees heap rows as the exporter does');
$node->safe_psql('postgres', 'UPDATE a SET v = 9 WHERE id = 8');
is($importer->query_safe($sum), '0', 'the importer keeps its view for the whole transaction');
is($exporter->query_safe($sum), '0', 'the exporter still sees what it saw');
$importer->query_safe('COMMIT');
is($importer->query_safe($sum), '14', 'the importer\'s next transaction sees every commit');
$exporter->query_safe('COMMIT');

# a READ COMMITTED exporter: its nvm view is not kept
$exporter->query_safe('BEGIN ISOLATION LEVEL READ COMMITTED');
$id = $exporter->query_safe('SELECT pg_export_snapshot()');
$importer->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$importer->query_safe("SET TRANSACTION SNAPSHOT '$id'");
is($importer->query_safe('SELECT v FROM h'), '5', 'a READ COMMITTED export: heap tables read fine');
my ($out, $ret) = $importer->query("$sum");
isnt($ret, 0, 'a READ COMMITTED export: reading the nvm table fails');
like($importer->{stderr}, qr/cannot be read with this imported snapshot/,
	'a READ COMMITTED export: the error says why');
like($importer->{stderr}, qr/HINT:.*REPEATABLE READ/s, 'a READ COMMITTED export: the hint says what works');
$importer->{stderr} = '';
$importer->query_safe('ROLLBACK');
$exporter->query_safe('COMMIT');
is($importer->query_safe($sum), '14', 'after the refused import, the next transaction reads the table');

$exporter->quit;
$importer->quit;
is(nvm_log_crashes($node), '', 'no crash in the log');
$node->stop;
done_testing();

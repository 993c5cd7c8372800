# regress/t/010_heap_nvm_atomic.pl
#	  A transaction that writes heap and nvm tables is atomic across a
#	  crash: PostgreSQL's commit record and the nvm commit status are two
#	  commit points, and the server is made to crash between them (with the
#	  superuser-only nvm.debug_crash_point) and just before the first.  After
#	  crash recovery both parts are there, or neither is; every index agrees
#	  with its table.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('atomic');
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE EXTENSION amcheck;
	CREATE TABLE h (id int PRIMARY KEY, note text);
	CREATE TABLE n (id int PRIMARY KEY, note text) USING nvm;
	CREATE TABLE n_noindex (id int, note text) USING nvm;
});

sub count_of
{
	my ($query) = @_;
	return $node->safe_psql('postgres', $query);
}

# 1. crash after PostgreSQL's commit record, before the nvm status: both parts
nvm_commit_and_crash($node, 'before_nvm_commit',
	"INSERT INTO h VALUES (1, 'heap'); INSERT INTO n VALUES (1, 'nvm');");
is(count_of('SELECT count(*) FROM h WHERE id = 1'), '1',
	'crash before the nvm commit: the heap part is committed');
is(count_of('SELECT count(*) FROM n WHERE id = 1'), '1',
	'crash before the nvm commit: the nvm part is committed too');

# 2. crash after the in-doubt marker, before the commit record: neither part
nvm_commit_and_crash($node, 'after_indoubt',
	"INSERT INTO h VALUES (2, 'heap'); INSERT INTO n VALUES (2, 'nvm');");
is(count_of('SELECT count(*) FROM h WHERE id = 2'), '0',
	'crash before the commit record: no heap part');
is(count_of('SELECT count(*) FROM n WHERE id = 2'), '0',
	'crash before the commit record: no nvm part either');

# 3. the nvm part is an update of an existing row (no new index entry)
$node->safe_psql('postgres', "INSERT INTO n VALUES (3, 'before')");
nvm_commit_and_crash($node, 'before_nvm_commit',
	"INSERT INTO h VALUES (3, 'heap'); UPDATE n SET note = 'after' WHERE id = 3;");
is(count_of("SELECT note FROM n WHERE id = 3"), 'after',
	'an update committed with the heap part survives the crash');
is(count_of('SELECT count(*) FROM h WHERE id = 3'), '1', 'with its heap part');

# 4. an nvm-only transaction without a PostgreSQL xid commits on the nvm
#    status alone: a crash before it loses the (unacknowledged) row
nvm_commit_and_crash($node, 'before_nvm_commit', "INSERT INTO n_noindex VALUES (4, 'nvm only');");
is(count_of('SELECT count(*) FROM n_noindex WHERE id = 4'), '0',
	'an unacknowledged nvm-only commit is absent after the crash');

# the rows are usable, the indexes agree, and later work commits normally
$node->safe_psql('postgres', q{
	UPDATE n SET note = note || '!';
	INSERT INTO h VALUES (5, 'heap'); INSERT INTO n VALUES (5, 'nvm');
});
is(count_of('SELECT count(*) FROM n'), '3', 'the nvm table has exactly the committed rows');
is(count_of('SELECT count(*) FROM h'), '3', 'the heap table has exactly the committed rows');
for my $index ('h_pkey', 'n_pkey')
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT bt_index_check('$index', true)");
	is($ret, 0, "amcheck is clean on $index") or diag($err);
}
nvm_verify_clean($node, $_, 'after the crashes') foreach ('n', 'n_noindex', 'all');
$node->restart;
is(count_of(q{SELECT string_agg(id || ':' || note, ',' ORDER BY id) FROM n}), '1:nvm!,3:after!,5:nvm',
	'the outcome survives a clean restart');

$node->stop;
done_testing();

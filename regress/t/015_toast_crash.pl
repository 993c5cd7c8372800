# regress/t/015_toast_crash.pl
#	  Out-of-line (TOAST) values of nvm rows across crashes.  The values are
#	  heap rows in the TOAST table, committed with PostgreSQL's commit
#	  record; the nvm versions pointing at them commit with the nvm status.
#	  The server is made to crash between the two commit points and just
#	  before the first (nvm.debug_crash_point), and with an immediate stop:
#	  afterwards every row's value is whole, a committed row never points at
#	  a value that was rolled back, a rolled-back update leaves the old value
#	  readable (its deletion rolled back too), and after VACUUM the TOAST
#	  table holds exactly the values the rows point at.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('toast');
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE w (id int PRIMARY KEY, big text) USING nvm;
	CREATE TABLE w_noindex (id int, big text) USING nvm;
	-- an incompressible value of 16,000 bytes, different for each seed
	CREATE FUNCTION wide(seed int) RETURNS text LANGUAGE sql IMMUTABLE AS
		$$ SELECT string_agg(md5((g * 1000 + seed)::text), '') FROM generate_series(1, 500) g $$;
	CREATE FUNCTION toast_values(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE
		n bigint;
	BEGIN
		EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
					   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
		RETURN n;
	END $$;
	INSERT INTO w VALUES (1, wide(1)), (2, wide(2));
	INSERT INTO w_noindex VALUES (1, wide(1));
});

sub query
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

# value_of TABLE ID: the seed whose wide value row ID holds ('none' if the
# row is missing, 'other' if the value is none of the seeds 1..20).
sub value_of
{
	my ($table, $id) = @_;
	return query(qq{
		SELECT coalesce((SELECT coalesce((SELECT s FROM generate_series(1, 20) s WHERE wide(s) = big), -1)
						   FROM $table WHERE id = $id)::text, 'none')});
}

# 1. an immediate stop keeps committed wide rows whole
$node->stop('immediate');
$node->start;
is(value_of('w', 1), '1', 'immediate stop: row 1 keeps its value');
is(value_of('w', 2), '2', 'immediate stop: row 2 keeps its value');
is(value_of('w_noindex', 1), '1', 'immediate stop: the unindexed table keeps its value');

# 2. crash after PostgreSQL's commit record, before the nvm status: the row
#    and its out-of-line value are both committed
nvm_commit_and_crash($node, 'before_nvm_commit', 'INSERT INTO w VALUES (3, wide(3));');
is(value_of('w', 3), '3', 'crash before the nvm commit: the new row reads its value');
nvm_commit_and_crash($node, 'before_nvm_commit', 'UPDATE w SET big = wide(11) WHERE id = 1;');
is(value_of('w', 1), '11', 'crash before the nvm commit: the update is there with its new value');
nvm_commit_and_crash($node, 'before_nvm_commit', 'INSERT INTO w_noindex VALUES (2, wide(2));');
is(value_of('w_noindex', 2), '2',
	'crash before the nvm commit: a row of an unindexed table (its value gave the transaction an xid) is there');

# 3. crash after the in-doubt marker, before the commit record: neither the
#    row nor its value; an update's deletion of the old value rolls back
nvm_commit_and_crash($node, 'after_indoubt', 'INSERT INTO w VALUES (4, wide(4));');
is(value_of('w', 4), 'none', 'crash before the commit record: no new row');
nvm_commit_and_crash($node, 'after_indoubt', 'UPDATE w SET big = wide(12) WHERE id = 2;');
is(value_of('w', 2), '2', 'crash before the commit record: the old value is still whole');
nvm_commit_and_crash($node, 'after_indoubt', 'DELETE FROM w WHERE id = 3;');
is(value_of('w', 3), '3', 'crash before the commit record: a deleted row keeps its value');

# 4. after VACUUM (which vacuums the TOAST tables too) the values are exactly
#    those the rows point at, all readable
query('VACUUM w; VACUUM w_noindex');
is(query("SELECT string_agg(id || ':' || length(big), ',' ORDER BY id) FROM w"),
	'1:16000,2:16000,3:16000', 'the table holds exactly the committed rows');
is(query("SELECT toast_values('w')"), '3', 'the TOAST table holds one value per row');
is(query("SELECT toast_values('w_noindex')"), '2', 'and so does the unindexed table\'s');
is(value_of('w', 1) . value_of('w', 2) . value_of('w', 3), '1123',
	'every value is whole after VACUUM');
nvm_verify_clean($node, $_, 'after the crashes and VACUUM') foreach ('w', 'w_noindex', 'all');

# 5. later work goes on, and survives a clean restart
query('UPDATE w SET big = wide(13) WHERE id = 3');
$node->restart;
is(value_of('w', 3), '13', 'a later update survives a clean restart');
nvm_verify_clean($node, 'all', 'after a clean restart');

$node->stop;
done_testing();

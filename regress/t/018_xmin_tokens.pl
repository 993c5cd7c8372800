# regress/t/018_xmin_tokens.pl
#	  xmin of nvm rows is a row-version token (src/pg/xact/nvm_token.c): every
#	  writing transaction gets one no earlier transaction had, also after a
#	  clean restart, an immediate stop and a crash (tables record the
#	  reservation their tokens come from, durably before the rows); and
#	  functions that take an xid treat tokens as long-frozen transactions:
#	  with track_commit_timestamp on, pg_xact_commit_timestamp(xmin) is
#	  NULL, and pg_xact_status(xmin) never names a status.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('xmin_tokens');
$node->append_conf('postgresql.conf',
	"track_commit_timestamp = on\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION nvmam;
	CREATE TABLE t (id int PRIMARY KEY, v int) USING nvm;
	CREATE TABLE u (id int PRIMARY KEY, v int) USING nvm;
	CREATE FUNCTION status(x xid) RETURNS text LANGUAGE plpgsql AS $$
	BEGIN
	  RETURN coalesce(pg_xact_status(x::text::xid8), 'unknown');
	EXCEPTION WHEN invalid_parameter_value THEN
	  IF SQLERRM LIKE 'transaction ID % is in the future' THEN
	    RETURN 'unknown';
	  END IF;
	  RAISE;
	END $$;
});

my %seen;
my $next_id = 1;

# write N: N transactions, each inserting one row into t (tokens from
# the reservation t's descriptor records) and one into u
sub write_rows
{
	my ($n) = @_;
	for (1 .. $n)
	{
		$node->safe_psql('postgres',
			"BEGIN; INSERT INTO t VALUES ($next_id, 0); INSERT INTO u VALUES ($next_id, 0); COMMIT");
		$next_id++;
	}
}

# check NAME: every row's token is new (none seen before in another row),
# both rows of a transaction share theirs, and no function names a status
sub check_tokens
{
	my ($name) = @_;
	my $rows = $node->safe_psql('postgres',
		q{SELECT t.id, t.xmin, t.xmin = u.xmin FROM t JOIN u USING (id) ORDER BY t.id});
	my ($fresh, $shared) = (1, 1);
	foreach my $line (split /\n/, $rows)
	{
		my ($id, $xmin, $same) = split /\|/, $line;
		$shared = 0 if $same ne 't';
		if (exists $seen{$xmin} && $seen{$xmin} != $id)
		{
			$fresh = 0;
			diag("token $xmin of row $id was row $seen{$xmin}'s");
		}
		$seen{$xmin} = $id;
	}
	ok($fresh, "$name: every transaction has a token of its own");
	ok($shared, "$name: the rows of one transaction share its token");
	is($node->safe_psql('postgres',
			q{SELECT count(*) FROM t WHERE pg_xact_commit_timestamp(xmin) IS NOT NULL}),
		'0', "$name: no token has a commit timestamp");
	is($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT status(xmin), ',') FROM t}),
		'unknown', "$name: no token has a transaction status");
	is($node->safe_psql('postgres', q{SELECT bool_and(age(xmin) > 0) FROM t}),
		't', "$name: age() of every token is positive");
}

write_rows(20);
check_tokens('first start');
$node->restart;
write_rows(20);
check_tokens('after a clean restart');
$node->stop('immediate');
$node->start;
write_rows(20);
check_tokens('after an immediate stop');
nvm_crash($node);
$node->start;
write_rows(20);
check_tokens('after a crash');
is(scalar(keys %seen), 80, 'eighty transactions, eighty tokens');

is(nvm_log_crashes($node), '', 'no PANIC, assertion failure or unexpected signal')
  or diag(nvm_log_crashes($node));
$node->stop;
done_testing();

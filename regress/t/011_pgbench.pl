# regress/t/011_pgbench.pl
#	  pgbench on nvm tables: `pgbench -i` with default_table_access_method
#	  = nvm (COPY, index builds, VACUUM, ANALYZE on nvm tables), then a short
#	  TPC-B run with concurrent clients at REPEATABLE READ with retries.
#	  Afterwards every pgbench table uses nvm, the balances agree with the
#	  history, and amcheck is clean on every index.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use NvmTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node) = nvm_node('pgbench');
$node->append_conf('postgresql.conf', "default_table_access_method = nvm\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION nvmam; CREATE EXTENSION amcheck;');

$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', 'postgres' ], 'pgbench -i on nvm tables');
is( $node->safe_psql(
		'postgres', q{
	SELECT string_agg(c.relname || ':' || a.amname, ',' ORDER BY c.relname)
	  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	 WHERE c.relname LIKE 'pgbench_%' AND c.relkind = 'r'}),
	'pgbench_accounts:nvm,pgbench_branches:nvm,pgbench_history:nvm,pgbench_tellers:nvm',
	'every pgbench table uses nvm');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_accounts'), '200000', 'all accounts loaded');

my $tx_level = "-c default_transaction_isolation=repeatable\\ read";
$ENV{PGOPTIONS} = $tx_level;
$node->command_ok(
	[ 'pgbench', '-c', '4', '-j', '2', '-T', '5', '--max-tries', '20', '-M', 'prepared', 'postgres' ],
	'pgbench runs at REPEATABLE READ with retries');
delete $ENV{PGOPTIONS};

# the balances agree with the history
my $check = $node->safe_psql(
	'postgres', q{
	SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)
	   AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)
	   AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)});
is($check, 't', 'accounts, tellers and branches agree with the history');
ok($node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_history') > 0, 'transactions committed');

for my $index (split /\n/, $node->safe_psql('postgres',
	q{SELECT indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname LIKE 'pgbench_%'}))
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT bt_index_check('$index', true)");
	is($ret, 0, "amcheck is clean on $index") or diag($err);
}

$node->stop;
done_testing();

# regress/t/lib/NvmTest.pm
#	  Helpers shared by the TAP tests of nvmam: a node configured with its
#	  own pool, the pool file removed at the end, index-versus-sequential
#	  scan comparisons, amcheck over every btree index of a table, the
#	  integrity check of nvm tables and of the pool, crashes that kill
#	  every server process at once, and commits that crash the server at a
#	  chosen point.
package NvmTest;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(nvm_pool_path nvm_node nvm_scan_digests nvm_check_indexes
  nvm_verify_clean nvm_server_pids nvm_freeze_server nvm_crash nvm_wait_gone nvm_wait_ready nvm_fatal_text
  nvm_log_crashes nvm_commit_and_crash nvm_client_start nvm_pump_client nvm_mix_pages);

my @pools;
# other files a test makes next to its pools (copies), removed at exit too
our @extra_files;

END
{
	# the pool files live outside the node's data directory: remove them
	foreach my $file (@pools, @extra_files)
	{
		unlink $file;
	}
}

# nvm_pool_path NAME: a pool file name of its own for this test run, in
# NVM_SHM_DIR (set by regress/run-tests.sh) or /dev/shm; removed at exit.
sub nvm_pool_path
{
	my ($name) = @_;
	my $dir = $ENV{NVM_SHM_DIR} // '/dev/shm';
	my $pool = "$dir/nvmam_tap_${name}_$$";
	unlink $pool;
	push @pools, $pool;
	return $pool;
}

# nvm_node NAME [, preload => 0] [, pool_size => SIZE] [, pool_in_datadir
# => 1] [, durability => MODE] [, init => { OPTIONS }]: an initialised (not
# started) node whose postgresql.conf loads nvmam with a pool of its own (by
# default in NVM_SHM_DIR; with pool_in_datadir, at its default place,
# pg_nvm/pool in the data directory) and nvm.durability = MODE (pool by
# default: the pool stands for persistent memory); OPTIONS go to
# PostgreSQL::Test::Cluster's init (allows_streaming, has_archiving).
# Returns the node and the pool's path.
sub nvm_node
{
	my ($name, %opts) = @_;
	my $preload = $opts{preload} // 1;
	my $size = $opts{pool_size} // $ENV{NVM_POOL_SIZE} // '256MB';
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opts{init} // {} });
	my $pool;
	my $conf = "nvm.pool_size = '$size'\n";
	if ($opts{pool_in_datadir})
	{
		$pool = $node->data_dir . '/pg_nvm/pool';
	}
	else
	{
		$pool = nvm_pool_path($name);
		$conf .= "nvm.pool_path = '$pool'\n";
	}
	# the pool emulates persistent memory (commits durable in the pool)
	# unless the test asks for durability through the WAL
	$conf .= "nvm.durability = '" . ($opts{durability} // 'pool') . "'\n";
	# the harness runs every TAP test once per concurrency-control mode
	# (and a mode's own settings for the suites, regress/modes/MODE.conf)
	if ($ENV{NVM_CC_MODE})
	{
		my $modeconf = "$ENV{NVM_SOURCE_DIR}/regress/modes/$ENV{NVM_CC_MODE}.conf";
		$conf .= "nvm.concurrency_control = '$ENV{NVM_CC_MODE}'\n";
		$conf .= PostgreSQL::Test::Utils::slurp_file($modeconf)
		  if $ENV{NVM_SOURCE_DIR} && -f $modeconf;
	}
	# NVM_TAP_SMALL_WAL (a setting of the test library, passed by
	# regress/run-tests.sh): checkpoints as often as the WAL allows, as on a
	# machine fast enough to fill max_wal_size within a test's load, so
	# that a test that needs WAL a checkpoint may recycle shows it
	$conf .= "max_wal_size = '32MB'\nmin_wal_size = '32MB'\ncheckpoint_timeout = '30s'\n"
	  if $ENV{NVM_TAP_SMALL_WAL};
	$conf = "shared_preload_libraries = 'nvmam'\n" . $conf if $preload;
	$node->append_conf('postgresql.conf', $conf);
	return ($node, $pool);
}

# nvm_scan_digests NODE TABLE KEY EXPR [ORDER]: reads the rows of TABLE once
# by a sequential scan and once by an index scan on the integer column KEY
# (plans forced with the enable_* settings; the caller checks them with the
# EXPLAIN output returned).  Returns a hash with "seq" and "index" (each
# "count|md5 of EXPR over the rows in ORDER order", ORDER defaulting to KEY)
# and "seq_plan"/"index_plan".
sub nvm_scan_digests
{
	my ($node, $table, $key, $expr, $order) = @_;
	$order //= $key;
	my $cond = "$key > '-2147483648'::int8";
	# the scan in a subquery of its own (OFFSET 0), so that the aggregate's
	# ORDER BY does not choose the index (from 16 on, the planner prefers an
	# index that gives the aggregate its order, whatever the index asked for)
	my $query = "SELECT count(*) || '|' || coalesce(md5(string_agg($expr, ',' ORDER BY $order)), '')"
	  . " FROM (SELECT * FROM $table WHERE $cond OFFSET 0) s";
	my $seq_settings = "SET enable_indexscan = off; SET enable_indexonlyscan = off;"
	  . " SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;";
	my $index_settings = "SET enable_seqscan = off; SET enable_indexonlyscan = off;"
	  . " SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;";
	my %r;
	$r{seq_plan} = $node->safe_psql('postgres', "$seq_settings EXPLAIN (COSTS OFF) $query");
	$r{seq} = $node->safe_psql('postgres', "$seq_settings $query");
	$r{index_plan} = $node->safe_psql('postgres', "$index_settings EXPLAIN (COSTS OFF) $query");
	$r{index} = $node->safe_psql('postgres', "$index_settings $query");
	return \%r;
}

# nvm_check_indexes NODE TABLE NAME: bt_index_check(index, true) on every
# btree index of TABLE (amcheck must be installed); one test per index.
# Returns the number of indexes checked.
sub nvm_check_indexes
{
	my ($node, $table, $name) = @_;
	my @indexes = split /\n/, $node->safe_psql('postgres', qq{
		SELECT c.relname FROM pg_index i
		  JOIN pg_class c ON c.oid = i.indexrelid
		  JOIN pg_am a ON a.oid = c.relam
		 WHERE i.indrelid = '$table'::regclass AND a.amname = 'btree'
		 ORDER BY c.relname});
	foreach my $index (@indexes)
	{
		my ($rc, $out, $err) = $node->psql('postgres',
			"SELECT bt_index_check('$index'::regclass, true)");
		is($rc . $err, '0', "$name: bt_index_check($index, heapallindexed) is clean");
	}
	return scalar @indexes;
}

# nvm_verify_clean NODE WHAT NAME [DB]: the integrity check finds no damage
# (one test; its diagnostics list what was found).  WHAT is an nvm table,
# checked with nvm_verify_table (which takes a ShareLock: it waits for
# writers of the table, prepared transactions included), or 'all' for the
# whole pool with nvm_verify_pool, which locks nothing but needs the pool
# quiet: while blocks change (autovacuum, say) it fails with "while it was
# changing", and this tries again for up to the default timeout.
sub nvm_verify_clean
{
	my ($node, $what, $name, $db) = @_;
	$db //= 'postgres';
	my $query =
	  $what eq 'all'
	  ? q{SELECT coalesce(relation::text, relfilenode::text, 'pool') || ' ' || kind || ': ' || msg
		  FROM nvm_verify_pool()}
	  : qq{SELECT kind || ' (record ' || coalesce(record_no::text, '-') || ', version '
			|| coalesce(version_no::text, '-') || '): ' || msg FROM nvm_verify_table('$what')};
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my ($rc, $out, $err);
	for (;;)
	{
		($rc, $out, $err) = $node->psql($db, $query);
		last unless $err =~ /while it was changing/ && time < $deadline;
		usleep(200_000);
	}
	my $where = $what eq 'all' ? 'the pool' : $what;
	return is($rc . $err . $out, '0', "$name: the integrity check of $where finds no damage");
}

# nvm_server_pids NODE: the postmaster's pid and those of its children.
sub nvm_server_pids
{
	my ($node) = @_;
	my $pm = $node->{_pid};
	die "node is not running" unless defined $pm;
	my @children;
	opendir(my $dh, '/proc') or die "cannot read /proc: $!";
	foreach my $pid (grep { /^\d+$/ } readdir $dh)
	{
		open(my $fh, '<', "/proc/$pid/stat") or next;
		my $stat = <$fh>;
		close $fh;
		next unless defined $stat;
		# pid (comm) state ppid ...: comm may hold spaces and parentheses
		$stat =~ s/^.*\)\s+//s;
		my (undef, $ppid) = split /\s+/, $stat;
		push @children, $pid if defined $ppid && $ppid == $pm;
	}
	closedir $dh;
	return ($pm, @children);
}

# nvm_freeze_server NODE: freezes every server process with SIGSTOP and
# returns their pids, the postmaster's first.  The postmaster is frozen
# first, so that it forks no child after its children are listed (a client
# that connects meanwhile would get a backend that runs on); the children
# are listed until no new one shows up.
sub nvm_freeze_server
{
	my ($node) = @_;
	my ($pm) = nvm_server_pids($node);
	my %frozen;
	kill 'STOP', $pm;
	for (;;)
	{
		my (undef, @children) = nvm_server_pids($node);
		my @new = grep { !$frozen{$_} } @children;
		last unless @new;
		kill 'STOP', @new;
		$frozen{$_} = 1 for @new;
	}
	return ($pm, sort { $a <=> $b } keys %frozen);
}

# nvm_wait_gone PIDS...: waits until none of the processes exists any more,
# not even as a zombie: the postmaster.pid check of the next start treats a
# zombie as a running postmaster.
sub nvm_wait_gone
{
	my @pids = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		@pids = grep { kill(0, $_) } @pids;
		return 1 unless @pids;
		usleep(50_000);
	}
	diag("still running: @pids");
	return 0;
}

# nvm_crash NODE [FIRST...]: a crash of the whole server, as in a power
# loss: every server process is frozen with SIGSTOP (the pids in FIRST, say a
# backend in the middle of a transaction, before the others; then the
# postmaster and its children, nvm_freeze_server), then killed
# with SIGKILL, so that no process runs any exit or abort code or reacts to
# another's death.  Waits until they are gone and tells the node object that
# it is stopped.
sub nvm_crash
{
	my ($node, @first) = @_;
	kill 'STOP', @first if @first;
	my ($pm, @children) = nvm_freeze_server($node);
	kill 'KILL', @first, $pm, @children;
	$node->{_pid} = undef;
	ok(nvm_wait_gone($pm, @children, @first), 'every server process is gone after SIGKILL');
	return;
}

# nvm_fatal_text NODE [OFFSET]: the first FATAL message in the node's log
# from OFFSET on, with the DETAIL, HINT and CONTEXT lines that follow it;
# '' if there is none.
sub nvm_fatal_text
{
	my ($node, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset // 0);
	my ($text) = $log =~ /(FATAL:[^\n]*\n(?:[^\n]*(?:DETAIL|HINT|CONTEXT):[^\n]*\n)*)/;
	return $text // '';
}

# nvm_log_crashes NODE [OFFSET]: the lines of the node's log from OFFSET on
# that tell of a crash (a PANIC, a failed assertion, a process terminated by
# a signal); '' if there are none.
sub nvm_log_crashes
{
	my ($node, $offset) = @_;
	return '' unless -f $node->logfile;
	my $log = slurp_file($node->logfile, $offset // 0);
	return join("\n",
		grep { /PANIC:|TRAP:|terminated by signal|Segmentation fault|core dumped/ }
		  split(/\n/, $log));
}

# nvm_wait_ready NODE: waits until the node accepts queries again (after a
# crash of one backend, the postmaster reinitialises and recovers).  A psql
# refused while the server recovers can exit before it reads the query from
# its input, and poll_query_until then dies of a broken pipe instead of
# trying again: such a death is one more try.
sub nvm_wait_ready
{
	my ($node) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $ready = eval { $node->poll_query_until('postgres', 'SELECT 1', '1') };
		return $ready if defined $ready;
		die $@ unless $@ =~ /Broken pipe/;
		usleep(100_000);
	}
	return 0;
}


# nvm_commit_and_crash NODE POINT SQL: runs SQL in a transaction whose COMMIT
# crashes the server at POINT (nvm.debug_crash_point, a superuser setting;
# the node needs restart_after_crash = on), and waits until crash recovery
# has finished.
sub nvm_commit_and_crash
{
	my ($node, $point, $sql) = @_;
	my $offset = -s $node->logfile;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"SET nvm.debug_crash_point = '$point'; BEGIN; $sql COMMIT;");
	isnt($ret, 0, "$point: the COMMIT does not return success");
	# the postmaster may not have begun the restart yet: wait for its end
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	usleep(50_000)
	  while time < $deadline
	  && !$node->log_contains(qr/database system is ready to accept connections/, $offset);
	ok(nvm_wait_ready($node), "$point: the server is back after crash recovery");
	return;
}

# nvm_client_start NODE C: starts a psql for client C (a hash) that reads
# the statements appended to $C->{in} and whose output and errors collect
# in $C->{out} and $C->{err}; returns C.
sub nvm_client_start
{
	my ($node, $c) = @_;
	$c->{$_} //= '' for qw(in out err);
	$c->{dead} = 0;
	$c->{h} = IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr('postgres'),
			'-f', '-' ],
		'<', \$c->{in}, '>', \$c->{out}, '2>', \$c->{err});
	return $c;
}

# nvm_pump_client C: moves what is there to move between client C and its
# psql, marks C dead when its psql has exited, and returns the complete
# lines of output that came since the last call.
sub nvm_pump_client
{
	my ($c) = @_;
	my @lines;
	return @lines if $c->{dead};
	if ($c->{h}->pumpable)
	{
		eval { $c->{h}->pump_nb; };
	}
	else
	{
		eval { $c->{h}->finish; };
		$c->{dead} = 1;
	}
	push @lines, $1 while $c->{out} =~ s/^([^\n]*)\n//;
	return @lines;
}

# nvm_mix_pages A B OUT: writes OUT as the image a power loss or a crash of
# the operating system can leave of a file that was A at an earlier moment
# and B at the crash: each 4 KiB page that differs between them taken from
# A or from B at random (rand: seed it with srand for a repeatable mix),
# the first such page from A and the second from B, so that an image
# whose pages differ by two or more is always torn; a page that does not
# differ, or lies beyond A's end, from B.  Returns (pages differing,
# taken from A).
sub nvm_mix_pages
{
	my ($image_a, $image_b, $out) = @_;
	my $page_size = 4096;
	open(my $a, '<:raw', $image_a) or die "$image_a: $!";
	open(my $b, '<:raw', $image_b) or die "$image_b: $!";
	open(my $m, '>:raw', $out) or die "$out: $!";
	my ($differ, $from_a) = (0, 0);
	for (;;)
	{
		my $nb = read($b, my $pb, $page_size);
		last unless $nb;
		my $na = read($a, my $pa, $page_size) // 0;
		my $page = $pb;
		if ($na == $nb && $pa ne $pb)
		{
			$differ++;
			if ($differ == 1 || ($differ > 2 && rand() < 0.5))
			{
				$page = $pa;
				$from_a++;
			}
		}
		print $m $page;
	}
	close $_ foreach ($a, $b, $m);
	return ($differ, $from_a);
}

1;

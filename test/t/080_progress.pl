# 080_progress.pl — the view xxl.progress, seen from a second session while
# an operator is held (xxl.test_hold) in each of its phases: the phase it
# is in, the counts so far (which only grow from phase to phase), the
# query it runs for, nested operators as rows of their own, and who may
# see what (the rule of pg_stat_activity).  Without the library preloaded
# the view says how to get it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
# query ids are computed where the server is told to (or pg_stat_statements asks)
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pgxxl'\ncompute_query_id = on\n");
$node->start;

# 1M rows of ~45 bytes at xxl.memory = 1MB: about a hundred runs and an
# intermediate merge pass.  Owned by alice, whose sessions the others watch.
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;                                  -- sees alice's backends only as pids
	CREATE ROLE carol LOGIN IN ROLE pg_read_all_stats;      -- sees everything
	CREATE ROLE dave LOGIN IN ROLE alice;                   -- has alice's privileges
	GRANT CREATE ON SCHEMA public TO alice;
	SET ROLE alice;
	SELECT setseed(0.5);
	CREATE TABLE src AS
	SELECT (random() * 1e9)::int AS a, md5(g::text) AS b FROM generate_series(1, 1000000) g;
	ANALYZE src;
	CREATE TABLE edges AS
	SELECT g AS source, (g * 7919) % 200000 + 1 AS target, g % 100 AS cost
	FROM generate_series(1, 200000) g;
	ANALYZE edges;
});

my $cols = 'operator, phase, rows_read, rows_total, rows_written, bytes_read, runs, '
  . 'spill_bytes, spill_peak, memory, memory_peak, percent, depth';

# the rows backend $pid shows to $role, as hashes
sub progress_of
{
	my ($pid, $role) = @_;
	my $out = $node->safe_psql('postgres',
		"SET ROLE $role; SELECT $cols, datname, query_id = "
		  . "(SELECT query_id FROM pg_stat_activity WHERE pid = $pid) AS same_query "
		  . "FROM xxl.progress WHERE pid = $pid ORDER BY depth");
	my @rows;
	for my $line (split /\n/, $out)
	{
		my @v = split /\|/, $line, -1;
		my %r;
		@r{ (split(/, /, $cols), 'datname', 'same_query') } = @v;
		push @rows, \%r;
	}
	return @rows;
}

# --- sort_into, held in each phase, as alice; seen by alice's peers ----------

my $sort_into = q{SELECT xxl.sort_into('src', 'b', 'sorted')};
my %at;
for my $phase (qw(input merge output))
{
	my ($bg, $pid) = start_held($node, $phase, ["SET xxl.memory = '1MB'"], $sort_into,
		user => 'alice');
	my @rows = progress_of($pid, 'alice');
	is(scalar @rows, 1, "$phase: one operator");
	my $r = $rows[0];
	$at{$phase} = $r;
	is($r->{operator}, 'sort_into', "$phase: named sort_into");
	is($r->{datname}, 'postgres', "$phase: in its database");
	is($r->{same_query}, 't', "$phase: the query id of the statement it runs for");
	is($r->{depth}, '0', "$phase: not nested");
	is($r->{rows_total}, '1000000', "$phase: rows expected from the table's statistics");
	is($r->{memory}, 1024 * 1024, "$phase: its budget");
	cmp_ok($r->{memory_peak}, '<=', $r->{memory}, "$phase: memory within the budget");
	cmp_ok($r->{spill_bytes}, '<=', $r->{spill_peak}, "$phase: spill now within its peak");
	cmp_ok($r->{bytes_read}, '>=', 33 * $r->{rows_read}, "$phase: bytes of the rows read");
	ok($r->{percent} eq '' || ($r->{percent} >= 0 && $r->{percent} <= 100), "$phase: percent within 0-100");
	# a second look while held: nothing went back
	my ($again) = progress_of($pid, 'alice');
	cmp_ok($again->{$_}, '>=', $r->{$_}, "$phase: $_ did not go back while held")
	  for qw(rows_read runs spill_peak rows_written);

	# who sees what: the owner's peers and readers of all stats everything,
	# others the pid and database only
	for my $role (qw(dave carol postgres))
	{
		my ($seen) = progress_of($pid, $role);
		is($seen->{phase}, $r->{phase}, "$phase: $role sees the phase");
	}
	my @bob = progress_of($pid, 'bob');
	is(scalar @bob, 1, "$phase: bob sees the row");
	is($bob[0]{datname}, 'postgres', "$phase: bob sees its database");
	is(join(',', map { $bob[0]{$_} } qw(operator phase rows_read runs percent)), ',,,,',
		"$phase: bob sees nothing of what it does");

	cancel_held($node, $pid);
	$bg->quit;
	is($node->safe_psql('postgres', "SELECT count(*) FROM xxl.progress WHERE pid = $pid"), '0',
		"$phase: the canceled operator left the view");
}

like($at{input}{phase}, qr/^reading input(, forming runs)?$/, 'input: reading input');
cmp_ok($at{input}{rows_read}, '<', 1000000, 'input: held before the last row');
is($at{input}{rows_written}, '0', 'input: nothing written yet');
is($at{input}{percent}, sprintf('%.1f', 100 * $at{input}{rows_read} / 1000000), 'input: percent of the rows expected');
like($at{merge}{phase}, qr/^(merging|merge pass 1 of [2-9])$/, "merge: merging ($at{merge}{phase})");
is($at{merge}{rows_read}, '1000000', 'merge: every row read');
cmp_ok($at{merge}{runs}, '>', 50, 'merge: the runs formed');
like($at{output}{phase}, qr/^writing output$/, 'output: writing output');
is($at{output}{rows_read}, '1000000', 'output: every row read');
is($at{output}{percent}, sprintf('%.1f', 100 * $at{output}{rows_written} / 1000000),
	'output: percent of the rows written');
for my $c (qw(rows_read runs spill_peak bytes_read))
{
	ok($at{input}{$c} <= $at{merge}{$c} && $at{merge}{$c} <= $at{output}{$c},
		"$c only grows from phase to phase ($at{input}{$c}, $at{merge}{$c}, $at{output}{$c})");
}

# --- an XxlSort in a query plan, nested in a graph function -----------------

{
	my ($bg, $pid) = start_held($node, 'output', [ "SET xxl.memory = '1MB'", "SET work_mem = '1MB'" ],
		q{SELECT count(*) FROM xxl.connected_components('SELECT source, target FROM edges ORDER BY cost, target')},
		user => 'alice');
	my @rows = progress_of($pid, 'carol');
	is(scalar @rows, 2, 'nested: two operators');
	is("$rows[0]{depth} $rows[0]{operator} $rows[0]{phase}", '0 connected_components reading input',
		'nested: the graph function reads its input');
	is("$rows[1]{depth} $rows[1]{operator} $rows[1]{phase}", '1 XxlSort writing output',
		'nested: the sort in its query writes its rows');
	is($rows[1]{rows_total}, '200000', 'nested: the plan\'s estimate as the rows expected');
	cmp_ok($rows[0]{rows_read}, '<=', $rows[1]{rows_written}, 'nested: the graph read no more than the sort wrote');
	cancel_held($node, $pid);
	$bg->quit;
}

# --- a graph operator held in its middle phase -------------------------------

{
	my ($bg, $pid) = start_held($node, 'merge', ["SET xxl.memory = '4MB'"],
		q{SELECT count(*) FROM xxl.pagerank('edges', max_iterations => 5)});
	my ($r) = progress_of($pid, 'postgres');
	is($r->{operator}, 'pagerank', 'pagerank: named');
	like($r->{phase}, qr/^(computing|iteration [1-5] of 5)$/, "pagerank: computing ($r->{phase})");
	is($r->{rows_read}, '200000', 'pagerank: every edge read');
	cancel_held($node, $pid);
	$bg->quit;
}

# track_activities = off hides a backend's operators as it hides its activity
{
	my ($bg, $pid) = start_held($node, 'merge', [ "SET xxl.memory = '1MB'", 'SET track_activities = off' ],
		q{SELECT count(*) FROM xxl.sort('src', 'b') AS s(a int, b text)});
	is($node->safe_psql('postgres', "SELECT count(*) FROM xxl.progress WHERE pid = $pid"), '0',
		'track_activities = off: nothing published');
	# (its pg_stat_activity row says 'disabled', never 'idle': the session's
	# next query waits for the canceled one instead)
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	is($bg->query('SELECT 1'), '1', 'track_activities = off: the session works after the cancel');
	$bg->quit;
}

# a text operator: the text's rows and bytes as they go in
{
	my ($bg, $pid) = start_held($node, 'merge', [ "SET xxl.memory = '2MB'" ],
		q{SELECT xxl.suffix_array_into('SELECT b FROM src WHERE a % 10 = 0', 'sa')});
	my ($r) = progress_of($pid, 'postgres');
	is($r->{operator}, 'suffix_array', 'suffix array: named');
	cmp_ok($r->{rows_read}, '>', 90000, 'suffix array: its rows read');
	cmp_ok($r->{bytes_read}, '>=', 32 * $r->{rows_read}, 'suffix array: their bytes');
	cancel_held($node, $pid);
	$bg->quit;
}

is($node->safe_psql('postgres', 'SELECT count(*) FROM xxl.progress'), '0', 'nothing runs: no rows');

# --- not preloaded ----------------------------------------------------------------

$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT * FROM xxl.progress',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000: xxl.progress needs pgxxl in shared_preload_libraries/,
	'not preloaded: an error that says why (55000)');
like($err, qr/HINT:.*shared_preload_libraries/, 'not preloaded: and how to fix it');
# operators still run without it
is($node->safe_psql('postgres', q{SELECT count(*) FROM xxl.sort('src', 'a') AS s(a int, b text)}),
	'1000000', 'not preloaded: operators run as before');

$node->stop;
done_testing();

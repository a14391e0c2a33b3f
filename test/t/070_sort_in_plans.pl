# 070_sort_in_plans.pl — XxlSort nodes in ordinary query plans
# (xxl.sort_in_plans) under conditions the regress test cannot create: the
# library preloaded (no LOAD, no CREATE EXTENSION in the session), a cancel
# in each phase of a sort inside a window-function query, an error in the
# child plan after runs were spilled, temp_file_limit, a merge join whose
# marked groups outgrow work_mem, and several sessions running sorting
# queries at once (pgbench), each checked against PostgreSQL's Sort; a
# CREATE TABLE AS writing its pages directly, canceled in the sort's output
# phase.  After each failure: no spill file left and the session usable.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('plans');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pgxxl'
xxl.memory = '1MB'
xxl.block_size = '64kB'
max_parallel_workers_per_gather = 0
synchronize_seqscans = off
});
$node->start;

# 600k rows of ~50 bytes: about 30 runs at 1MB and two merge passes, so
# every phase polls for cancels.
$node->safe_psql('postgres', q{
	SELECT setseed(0.5);
	CREATE TABLE src AS
	SELECT g, (random() * 1e6)::int AS a, md5(g::text) AS b
	  FROM generate_series(1, 600000) g;
	CREATE TABLE dup AS
	SELECT g, g % 50 AS k FROM generate_series(1, 40000) g;
	VACUUM ANALYZE src, dup;
});

my $window = q{SELECT count(*), sum(r * a) FROM (SELECT a, row_number() OVER (ORDER BY b DESC) r FROM src) s};

# preloaded: the planner uses the node with no LOAD in the session
like($node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $window"), qr/Custom Scan \(XxlSort\)/,
	'preloaded library: the window query sorts with XxlSort');

my $expected = $node->safe_psql('postgres', "SET xxl.sort_in_plans = off; $window");
is($node->safe_psql('postgres', $window), $expected, 'window query: the same result as Sort');

# --- a cancel in each phase of the sort ------------------------------------------
for my $phase (qw(input merge output))
{
	my ($bg, $pid) = start_held($node, $phase, [], $window);
	cmp_ok(spill_files($node, $pid), '>', 0, "$phase: the held sort has spill files")
	  if $phase ne 'input';
	cancel_held($node, $pid);
	my $again = $bg->query("SET xxl.test_hold = 'none'; $window");
	like($bg->{stderr}, qr/canceling statement due to user request/, "cancel in $phase: canceled");
	is(spill_files($node, $pid), '0', "cancel in $phase: no spill files left");
	is($again, $expected, "cancel in $phase: the session sorts again");
	$bg->quit;
}

# --- CREATE TABLE AS writing its pages directly, canceled in the output phase -----
# Nothing may be left: no table, no relation file, no spill file; the
# session writes the table again, with the rows PostgreSQL's own gives.
my $rel_files = q{SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database WHERE datname = current_database()))};
my $files_before = $node->safe_psql('postgres', $rel_files);
my $ctas = q{CREATE TABLE ctas_out AS SELECT a, b, g FROM src ORDER BY b DESC, g};
my ($cbg, $cpid) = start_held($node, 'output', [], $ctas);
cancel_held($node, $cpid);
$cbg->query("SET xxl.test_hold = 'none'");
like($cbg->{stderr}, qr/canceling statement due to user request/, 'CREATE TABLE AS in output: canceled');
is($node->safe_psql('postgres', q{SELECT to_regclass('ctas_out') IS NULL}), 't',
	'CREATE TABLE AS in output: no table');
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->safe_psql('postgres', $rel_files), $files_before, 'CREATE TABLE AS in output: no relation file left');
is(spill_files($node, $cpid), '0', 'CREATE TABLE AS in output: no spill files left');
$cbg->query($ctas);
$cbg->quit;
is($node->safe_psql('postgres', q{SELECT md5(string_agg(t::text, '|' ORDER BY ctid)) FROM ctas_out t}),
	$node->safe_psql('postgres', q{SELECT md5(string_agg(t::text, '|' ORDER BY b DESC, g)) FROM (SELECT a, b, g FROM src) t}),
	'CREATE TABLE AS again: the rows in ORDER BY order');

# --- an error in the child plan after runs were spilled ---------------------------
my ($ret, $out, $err) = $node->psql('postgres', q{
	SELECT pg_backend_pid();
	SELECT g FROM src ORDER BY CASE WHEN g = 590000 THEN 1 / 0 ELSE a END;
});
like($err, qr/division by zero/, 'error in the child plan: reported as usual');
is(spill_files($node, $out), '0', 'error in the child plan: no spill files left');

# --- temp_file_limit holds for the node as a whole ---------------------------------
($ret, $out, $err) = $node->psql('postgres', qq{
	SELECT pg_backend_pid();
	SET temp_file_limit = '5MB';
	$window;
});
like($err, qr/temporary file size exceeds temp_file_limit \(5120kB\)/,
	"temp_file_limit: PostgreSQL's own error");
is(spill_files($node, $out), '0', 'temp_file_limit: no spill files left');

# --- a merge join whose marked groups outgrow work_mem ----------------------------
# 800 rows per key on each side: the inner node keeps each group in its
# tuplestore (spilled beyond work_mem = 64kB) and restores it 800 times.
my $join = q{SELECT count(*), sum(x.g * y.g % 1000003) FROM dup x JOIN dup y ON x.k = y.k};
my $join_settings = q{SET enable_hashjoin = off; SET enable_nestloop = off; SET enable_material = off; SET work_mem = '64kB';};
my $plan = $node->safe_psql('postgres', "$join_settings EXPLAIN (COSTS OFF) $join");
like($plan, qr/Merge Join.*XxlSort.*XxlSort/s, 'merge join: both inputs sorted by XxlSort');
is($node->safe_psql('postgres', "$join_settings $join"),
	$node->safe_psql('postgres', "$join_settings SET xxl.sort_in_plans = off; $join"),
	'merge join with marks and restores: the same result as Sort');

# --- several sessions sorting at once ---------------------------------------------
my @queries = (
	q{SELECT md5(string_agg(g::text, ',')) FROM (SELECT g FROM src ORDER BY b) s},
	q{SELECT md5(string_agg(a::text || ':' || n, ',')) FROM (SELECT a, count(*) n FROM src GROUP BY a ORDER BY a) s},
	q{SELECT md5(string_agg(r::text, ',')) FROM (SELECT rank() OVER (PARTITION BY a % 100 ORDER BY b) r FROM src ORDER BY g) s},
);
my $script = $node->basedir . '/plans.pgbench';
open(my $fh, '>', $script) or die;
print $fh "SET enable_hashagg = off;\n";
for my $i (0 .. $#queries)
{
	my $want = $node->safe_psql('postgres', "SET enable_hashagg = off; SET xxl.sort_in_plans = off; $queries[$i]");
	# a wrong digest fails the transaction: 1/0
	print $fh "$queries[$i] \\gset q${i}_\n";
	print $fh "SELECT CASE WHEN ':q${i}_md5' = '$want' THEN 1 ELSE 1 / 0 END;\n";
}
close($fh);
$node->command_ok(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-t', '2', '-f', $script, '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench: 4 sessions running sorting queries at once, every result as Sort gives it');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_ls_tmpdir()'), '0',
	'pgbench: no spill files left');

$node->stop;
done_testing();

# 032_paths.pl — BFS and shortest paths at a scale the regress tests avoid
# (400k edges over 100k ids): the in-memory, the semi-external (12MB) and
# the external path give the same distances and depths, and so do the
# external BFS as MM (clusters, hot pool) and the external shortest paths as MO (categories, delayed
# relaxation); peak backend memory stays within xxl.memory plus 32 MB on
# all of them; a cancel in each phase (reading the edges, the search, the
# output; MM, MO: their nested spanning forest) stops the operator and leaves no
# spill file, and the session goes on.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('paths');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	SELECT setseed(0.25);
	CREATE TABLE edges AS
	SELECT i::bigint AS id, (random() * 100000)::bigint * 7 AS source,
		(random() * 100000)::bigint * 7 AS target, floor(random() * 100) AS cost,
		CASE WHEN random() < 0.5 THEN -1 ELSE floor(random() * 100) END AS reverse_cost
	FROM generate_series(1, 400000) i;
	VACUUM ANALYZE edges;
});
my $src = $node->safe_psql('postgres', 'SELECT source FROM edges WHERE id = 1');

# --- both paths, same answers ------------------------------------------------------

for my $case ([ 'mem', '256MB', 'in-memory' ], [ 'semi', '12MB', 'semi-external' ],
	[ 'ext', '2MB', 'external' ])
{
	my ($suffix, $memory, $path) = @$case;
	my @out = split /\n/, $node->safe_psql('postgres', qq{
		SET xxl.memory = '$memory';
		SELECT xxl.shortest_paths_into('edges', $src, 'sp_$suffix');
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT xxl.shortest_paths_into('edges', $src, 'spu_$suffix', false);
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT xxl.bfs_into('edges', ARRAY[$src, 14], 'bfs_$suffix');
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT xxl.bfs_into('edges', ARRAY[$src, 14], 'bfsu_$suffix', false);
		SELECT details->>'path' FROM xxl.last_stats();
	});
	is_deeply([ @out[ 1, 3, 5, 7 ] ], [ ($path) x 4 ], "$memory: the $path path");
	cmp_ok($out[0], '>', 1000, "$memory: the search reaches many nodes ($out[0])");
}
# the external BFS as Mehlhorn-Meyer and the shortest paths as Meyer-Osipov,
# directed and undirected
my @mm = split /\n/, $node->safe_psql('postgres', q{
	SET xxl.memory = '4MB';
	SET xxl.bfs_algorithm = 'mm';
	SET xxl.sssp_algorithm = 'mo';
	SELECT xxl.shortest_paths_into('edges', } . $src . q{, 'sp_mo');
	SELECT xxl.shortest_paths_into('edges', } . $src . q{, 'spu_mo', false);
	SELECT concat_ws(' ', details->>'sssp', details->>'path',
		(details->>'mo_batches')::bigint > 100) FROM xxl.last_stats();
	SELECT xxl.bfs_into('edges', ARRAY[} . $src . q{, 14], 'bfs_mm');
	SELECT details->>'bfs' FROM xxl.last_stats();
	SELECT xxl.bfs_into('edges', ARRAY[} . $src . q{, 14], 'bfsu_mm', false);
	SELECT concat_ws(' ', details->>'bfs', details->>'path',
		(details->>'cluster_loads')::bigint > 100) FROM xxl.last_stats();
});
is_deeply([ @mm[ 2, 4, 6 ] ], [ 'mo external t', 'mm', 'mm external t' ],
	'4MB: MO and the MM BFS ran, in batches and loading clusters');
# at 1MB the budget cannot hold the spanning forest MO and MM cluster by
# (at 2MB they run: their sorts and spools keep their block lists on
# disk), so Dijkstra and MR run instead, and the statistics say why
my @fb = split /\n/, $node->safe_psql('postgres', q{
	SET xxl.memory = '1MB';
	SET xxl.bfs_algorithm = 'mm';
	SET xxl.sssp_algorithm = 'mo';
	SELECT xxl.shortest_paths_into('edges', } . $src . q{, 'spu_fb', false);
	SELECT concat_ws(' / ', details->>'sssp', details->>'clustering') FROM xxl.last_stats();
	SELECT xxl.bfs_into('edges', ARRAY[} . $src . q{, 14], 'bfsu_fb', false);
	SELECT concat_ws(' / ', details->>'bfs', details->>'clustering') FROM xxl.last_stats();
});
is_deeply([ @fb[ 1, 3 ] ],
	[ 'dijkstra / skipped: the budget cannot hold the spanning forest beside the rest',
	  'mr / skipped: the budget cannot hold the spanning forest beside the rest' ],
	'1MB: MO and MM fall back to Dijkstra and MR, saying why');
for my $cmp ([ 'sp', 'semi' ], [ 'spu', 'semi' ], [ 'bfs', 'semi' ], [ 'bfsu', 'semi' ],
	[ 'sp', 'ext' ], [ 'spu', 'ext' ], [ 'bfs', 'ext' ], [ 'bfsu', 'ext' ], [ 'bfs', 'mm' ],
	[ 'bfsu', 'mm' ], [ 'sp', 'mo' ], [ 'spu', 'mo' ], [ 'spu', 'fb' ], [ 'bfsu', 'fb' ])
{
	my ($t, $other) = @$cmp;
	my $col = $t =~ /^bfs/ ? 'depth' : 'distance';
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM (
			(SELECT node, $col FROM ${t}_mem EXCEPT ALL SELECT node, $col FROM ${t}_$other)
			UNION ALL
			(SELECT node, $col FROM ${t}_$other EXCEPT ALL SELECT node, $col FROM ${t}_mem)) d}),
		'0', "$t: in memory and $other give every node the same $col");
}

# Dijkstra, semi-externally, settles every node from the same predecessor
# over the same link as in memory (the links are found again after the
# search, by predecessor and distance)
for my $t ('sp', 'spu')
{
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM (
			(SELECT node, distance, pred, edge FROM ${t}_mem
			 EXCEPT ALL SELECT node, distance, pred, edge FROM ${t}_semi)
			UNION ALL
			(SELECT node, distance, pred, edge FROM ${t}_semi
			 EXCEPT ALL SELECT node, distance, pred, edge FROM ${t}_mem)) d}),
		'0', "$t: in memory and semi-external give every node the same predecessor and link");
}

# --- peak memory --------------------------------------------------------------------

for my $case ([ '64MB', 64 ], [ '12MB', 12 ], [ '8MB', 8 ])
{
	my ($setting, $mb) = @$case;
	my $out = $node->safe_psql('postgres', qq{
		SET xxl.memory = '$setting';
		SELECT count(*) FROM xxl.shortest_paths('edges', $src, false);
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1];
	});
	my @lines = split /\n/, $out;
	cmp_ok($lines[-1], '<=', ($mb + 32) * 1024,
		"VmHWM $lines[-1] kB within xxl.memory = $setting plus 32 MB ($lines[1] path)");
}
{
	my @lines = split /\n/, $node->safe_psql('postgres', qq{
		SET xxl.memory = '8MB';
		SET xxl.graph_force_external = on;
		SET xxl.bfs_algorithm = 'mm';
		SET xxl.sssp_algorithm = 'mo';
		SELECT count(*) FROM xxl.shortest_paths('edges', $src, false);
		SELECT count(*) FROM xxl.bfs('edges', $src, false);
		SELECT details->>'bfs' FROM xxl.last_stats();
		SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1];
	});
	is($lines[2], 'mm', '8MB: the MM BFS ran');
	cmp_ok($lines[-1], '<=', (8 + 32) * 1024,
		"VmHWM $lines[-1] kB within xxl.memory = 8MB plus 32 MB (MO shortest paths, MM BFS)");
}

# --- cancel in each phase ---------------------------------------------------------------


for my $phase ('input', 'merge', 'output')
{
	for my $memory ('2MB', '256MB', 'mm', 'mo')
	{
		my @set = $memory eq 'mm' ?
		  ("SET xxl.memory = '4MB'", "SET xxl.bfs_algorithm = 'mm'") :
		  $memory eq 'mo' ?
		  ("SET xxl.memory = '4MB'", "SET xxl.sssp_algorithm = 'mo'") :
		  ("SET xxl.memory = '$memory'");
		my $query = $memory eq 'mm' ?
		  "SELECT count(*) FROM xxl.bfs('edges', $src, false)" :
		  "SELECT count(*) FROM xxl.shortest_paths('edges', $src)";
		my ($bg, $pid) = start_held($node, $phase, \@set, $query);
		cancel_held($node, $pid);
		$bg->query('SELECT 1');	# collects the canceled statement's error
		like($bg->{stderr}, qr/canceling statement due to user request/,
			"$memory, $phase: the cancel reaches the client");
		$bg->{stderr} = '';
		is(spill_files($node, $pid), '0', "$memory, $phase: no spill files after the cancel");
		is($bg->query_safe("SELECT count(*) FROM xxl.bfs('SELECT 1 AS id, 1 AS source, 2 AS target, 1 AS cost', 1)"),
			'2', "$memory, $phase: the session works after the cancel");
		$bg->quit;
	}
}

$node->stop;
done_testing();

# 034_graph_smallest_budget.pl — every graph operator at the smallest
# budget users can set (xxl.memory = 1MB) on a table of random edges two
# hundred times larger (3.6M edges over 900k ids, with costs): each completes on
# its external path (components and the forests by id in parts), within the budget, with the answers of its in-memory
# path at 512MB (which the regress and other TAP tests check against
# independent oracles), and writes a bounded multiple of its edges; and
# components and the forests of a 1300 x 1300 grid at 1MB, by id in more
# than 8 parts.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('smallest_budget');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	SELECT setseed(0.125);
	CREATE TABLE edges AS
	SELECT i::bigint AS id, (random() * 900000)::bigint AS source,
		(random() * 900000)::bigint AS target, 1 + floor(random() * 9) AS cost
	FROM generate_series(1, 3600000) i;
	VACUUM ANALYZE edges;
});
my $table_bytes = $node->safe_psql('postgres', q{SELECT pg_table_size('edges')});
cmp_ok($table_bytes, '>=', 200 * 1024 * 1024, "the edges take $table_bytes bytes, 200 times the budget");

# operator => [the call that makes table <t>_<suffix>, what must agree: the
# columns of <t> compared row by row, or undef]
my $src = $node->safe_psql('postgres', 'SELECT source FROM edges ORDER BY id LIMIT 1');
my %ops = (
	connected_components => ["xxl.connected_components_into('edges', 'cc_%s')", 'cc', '*'],
	spanning_forest => ["xxl.spanning_forest_into('edges', 'sf_%s')", 'sf', undef],
	minimum_spanning_forest => ["xxl.minimum_spanning_forest_into('edges', 'msf_%s')", 'msf', '*'],
	bfs => ["xxl.bfs_into('edges', $src, 'bfs_%s', false)", 'bfs', 'node, depth'],
	shortest_paths => ["xxl.shortest_paths_into('edges', $src, 'sp_%s', false)", 'sp', 'node, distance'],
	node_triangles => ["xxl.node_triangles_into('edges', 'tri_%s')", 'tri', '*'],
	maximal_independent_set => ["xxl.maximal_independent_set_into('edges', 'mis_%s')", 'mis', '*'],
	coloring => ["xxl.coloring_into('edges', 'col_%s')", 'col', '*'],
	pagerank => ["xxl.pagerank_into('edges', 'pr_%s')", 'pr', undef],
);

sub run_all
{
	my ($memory, $suffix) = @_;
	my %stats;
	for my $op (sort keys %ops)
	{
		my $call = sprintf($ops{$op}[0], $suffix);
		my $out = $node->safe_psql('postgres', qq{
			SET xxl.memory = '$memory';
			SELECT $call;
			SELECT concat_ws(' ', completed, details->>'path', memory_peak,
				(SELECT sum(b) FROM unnest(bytes_written) b))
			FROM xxl.last_stats();
		});
		$stats{$op} = [ split / /, (split /\n/, $out)[1] ];
	}
	return %stats;
}

my %mem = run_all('512MB', 'mem');
my %tiny = run_all('1MB', 'tiny');
my $edge_bytes = 3600000 * 16;
for my $op (sort keys %ops)
{
	my ($done, $path, $peak, $written) = @{ $tiny{$op} };
	is("$mem{$op}[0] $mem{$op}[1]", 't in-memory', "$op: in memory at 512MB");
	# (components and the spanning forest: by id in parts, semi-external, on these serial ids)
	my $want = $op =~ /^(connected_components|spanning_forest)$/ ? 'semi-external' : 'external';
	is("$done $path", "t $want", "$op: $want at 1MB");
	cmp_ok($peak, '<=', 1024 * 1024, "$op: peak memory $peak within 1MB");
	# I/O: a bounded multiple of the edges (a queue that merged too often once wrote 165x)
	cmp_ok($written, '<=', 100 * $edge_bytes,
		sprintf('%s: wrote %.1f times its edges', $op, $written / $edge_bytes));
	my ($t, $cols) = @{ $ops{$op} }[ 1, 2 ];
	next unless defined $cols;
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM ((SELECT $cols FROM ${t}_mem EXCEPT ALL SELECT $cols FROM ${t}_tiny)
			UNION ALL (SELECT $cols FROM ${t}_tiny EXCEPT ALL SELECT $cols FROM ${t}_mem)) d}),
		'0', "$op: 1MB agrees with in-memory on every row");
}

is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pr_mem m FULL JOIN pr_tiny e USING (node)
	WHERE abs(m.rank - e.rank) > 1e-12 OR m.node IS NULL OR e.node IS NULL}),
	'0', 'pagerank: 1MB agrees with in-memory on every node');

# the spanning forest may pick other edges: it must be a spanning forest
is($node->safe_psql('postgres', q{
	SELECT format('%s %s', (SELECT count(*) FROM sf_tiny),
		(SELECT count(*) - count(DISTINCT component) FROM cc_mem))}),
	join(' ', ($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT component) FROM cc_mem')) x 2),
	'1MB spanning forest: nodes - components edges');
is($node->safe_psql('postgres', q{
	SET xxl.memory = '256MB';
	SELECT count(*) FROM (SELECT * FROM xxl.connected_components('sf_tiny') EXCEPT ALL TABLE cc_mem) d}),
	'0', '1MB spanning forest: connects exactly the components');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT source, target FROM sf_tiny EXCEPT ALL SELECT source, target FROM edges) d}),
	'0', '1MB spanning forest: input edges only');

# A grid of 1300 x 1300 (1.69M ids, 3.4M edges in a hashed order): more
# ids than 8 pools' worth of union-find at 1MB, which the row estimate
# says no numbered map would hold either, so components and the forests go
# on by id in parts (up to 32 pools' worth) rather than to the sorters.
$node->safe_psql('postgres', q{
	CREATE TABLE grid AS
	SELECT (2 * (r * 1300 + c) + k)::bigint AS id, (r * 1300 + c)::bigint AS source,
		CASE k WHEN 0 THEN r * 1300 + c + 1 ELSE (r + 1) * 1300 + c END::bigint AS target,
		(1 + (r * 7 + c * 13 + k) % 9)::float8 AS cost
	FROM generate_series(0, 1299) r, generate_series(0, 1299) c, generate_series(0, 1) k
	WHERE (k = 0 AND c < 1299) OR (k = 1 AND r < 1299)
	ORDER BY hashint4(r * 1300 + c + k);
	VACUUM ANALYZE grid;
});
for my $case (
	[ 'connected_components', 'component', 'SELECT count(DISTINCT component) FROM %s' ],
	[ 'spanning_forest', 'forest', 'SELECT count(*) FROM %s' ],
	[ 'minimum_spanning_forest', 'forest', 'SELECT count(*), sum(cost) FROM %s' ])
{
	my ($op, $what, $sum) = @$case;
	my $out = $node->safe_psql('postgres', qq{
		SET xxl.memory = '1MB';
		SELECT xxl.${op}_into('grid', 'grid_${op}_tiny');
		SELECT concat_ws(' ', details->>'path', (details->>'id_parts')::int > 8, memory_peak <= memory_limit)
		FROM xxl.last_stats();
		SET xxl.memory = '512MB';
		SELECT xxl.${op}_into('grid', 'grid_${op}_mem');
	});
	is((split /\n/, $out)[1], 'semi-external t t', "grid: $op at 1MB by id in more than 8 parts, within the budget");
	is($node->safe_psql('postgres', sprintf($sum, "grid_${op}_tiny")),
		$node->safe_psql('postgres', sprintf($sum, "grid_${op}_mem")), "grid: $op at 1MB as in memory");
}
is($node->safe_psql('postgres', q{
	SELECT format('%s %s %s',
		(SELECT count(*) FROM (TABLE grid_connected_components_tiny
			EXCEPT ALL TABLE grid_connected_components_mem) d),
		(SELECT count(*) FROM (TABLE grid_minimum_spanning_forest_tiny
			EXCEPT ALL TABLE grid_minimum_spanning_forest_mem) d),
		(SELECT count(*) FROM (SELECT source, target FROM grid_spanning_forest_tiny
			EXCEPT ALL SELECT source, target FROM grid) d))}),
	'0 0 0', 'grid at 1MB: the same components and minimum spanning forest, a forest of input edges');
is($node->safe_psql('postgres', q{
	SET xxl.memory = '256MB';
	SELECT count(DISTINCT component) FROM xxl.connected_components('grid_spanning_forest_tiny')}),
	'1', 'grid at 1MB: the spanning forest connects the grid');

# BFS at 2MB: its arcs by id take a distribution sort a range of tails at
# a time (at 1MB none fits them, and the merge sort takes them all)
my @ranged = split /\n/, $node->safe_psql('postgres', qq{
	SET xxl.memory = '2MB';
	SELECT xxl.bfs_into('edges', $src, 'bfs_ranged', false);
	SELECT concat_ws(' ', details->>'path', details->>'ids', (details->>'arc_ranges')::int > 1)
	FROM xxl.last_stats();
});
is($ranged[1], 'external by id t', 'bfs at 2MB: the arcs sorted in ranges of tails');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ((SELECT node, depth FROM bfs_mem EXCEPT ALL SELECT node, depth FROM bfs_ranged)
		UNION ALL (SELECT node, depth FROM bfs_ranged EXCEPT ALL SELECT node, depth FROM bfs_mem)) d}),
	'0', 'bfs at 2MB: the in-memory depths');

# dijkstra to the farthest node: the same cost
my $far = $node->safe_psql('postgres', 'SELECT node FROM sp_mem ORDER BY distance DESC, node LIMIT 1');
my @cost = map {
	[ split /\n/, $node->safe_psql('postgres', qq{
		SET xxl.memory = '$_';
		SELECT sum(cost) FROM xxl.dijkstra('edges', $src, $far, false);
		SELECT concat_ws(' ', completed, details->>'path') FROM xxl.last_stats();
	}) ]
} qw(512MB 1MB);
is($cost[1][1], 't external', 'dijkstra at 1MB: external');
is($cost[1][0], $cost[0][0], "dijkstra at 1MB: the in-memory path's cost ($cost[0][0])");

done_testing();

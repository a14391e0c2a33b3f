# 033_graph_analytics.pl — triangles, node triangles, the maximal
# independent set, coloring and PageRank at a scale the regress tests avoid
# (a random graph of 400k edges over 100k ids, a 200-clique inside): the
# in-memory and the external paths give the same answers; peak backend
# memory stays within xxl.memory plus 32 MB; a cancel in each phase of the
# engine (reading the edges, the passes between, the output) stops it and
# leaves no spill file, and the session goes on; temp_file_limit holds for
# the operator as a whole.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('analytics');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	SELECT setseed(0.25);
	CREATE TABLE edges AS
	SELECT (random() * 100000)::bigint AS source, (random() * 100000)::bigint AS target,
		(1 + random() * 9)::int AS weight
	FROM generate_series(1, 400000) i
	UNION ALL SELECT 1000000 + a, 1000000 + b, 1 FROM generate_series(1, 200) a, generate_series(1, 200) b
	WHERE a < b;
	VACUUM ANALYZE edges;
});

# --- both paths, same answers ----------------------------------------------------

sub run_into
{
	my ($memory, $suffix) = @_;
	my @paths;
	for my $f (qw(triangles node_triangles maximal_independent_set coloring pagerank))
	{
		push @paths, $node->safe_psql('postgres', qq{
			SET xxl.memory = '$memory';
			SELECT xxl.${f}_into('edges', '${f}_$suffix');
			SELECT details->>'path' FROM xxl.last_stats();
		});
	}
	return map { (split /\n/)[1] } @paths;
}

my @mem = run_into('512MB', 'mem');
my @ext = run_into('4MB', 'ext');
is_deeply(\@mem, [ ('in-memory') x 5 ], '512MB: nothing spilled');
is_deeply(\@ext, [ ('external') x 5 ], '4MB: external');
for my $f (qw(triangles node_triangles maximal_independent_set coloring))
{
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM ((TABLE ${f}_mem EXCEPT ALL TABLE ${f}_ext)
			UNION ALL (TABLE ${f}_ext EXCEPT ALL TABLE ${f}_mem)) d}),
		'0', "$f: both paths agree");
}
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pagerank_mem m FULL JOIN pagerank_ext e USING (node)
	WHERE abs(m.rank - e.rank) > 1e-12 OR m.node IS NULL OR e.node IS NULL}),
	'0', 'pagerank: both paths agree');
my $count = $node->safe_psql('postgres', q{SET xxl.memory = '4MB'; SELECT xxl.triangle_count('edges')});
is($count, $node->safe_psql('postgres', 'SELECT count(*) FROM triangles_mem'),
	"the count is the listing's ($count)");
cmp_ok($count, '>=', 200 * 199 * 198 / 6, 'the clique is counted');
is($node->safe_psql('postgres', 'SELECT sum(triangles) FROM node_triangles_ext'), 3 * $count,
	'every triangle counts at its three nodes');

# --- peak memory --------------------------------------------------------------------

for my $f (qw(triangle_count maximal_independent_set coloring pagerank))
{
	my $query = $f eq 'triangle_count' ? "SELECT xxl.triangle_count('edges')" :
	  "SELECT count(*) FROM xxl.$f('edges')";
	my $out = $node->safe_psql('postgres', qq{
		SET xxl.memory = '16MB';
		$query;
		SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1];
	});
	my $kb = (split /\n/, $out)[-1];
	cmp_ok($kb, '<=', (16 + 32) * 1024, "VmHWM $kb kB within xxl.memory = 16MB plus 32 MB: $f");
}

# --- cancel in every phase -------------------------------------------------------------

for my $case (
	[ 'input',  'triangle_count', "SELECT xxl.triangle_count('edges')" ],
	[ 'merge',  'node_triangles', "SELECT count(*) FROM xxl.node_triangles('edges')" ],
	[ 'merge',  'pagerank', "SELECT count(*) FROM xxl.pagerank('edges')" ],
	[ 'output', 'coloring', "SELECT count(*) FROM xxl.coloring('edges')" ],
	[ 'output', 'maximal_independent_set', "SELECT count(*) FROM xxl.maximal_independent_set('edges')" ],
	[ 'output', 'triangles', "SELECT count(*) FROM xxl.triangles('edges')" ])
{
	my ($phase, $f, $query) = @$case;
	my ($bg, $pid) = start_held($node, $phase, ["SET xxl.memory = '4MB'"], $query);
	cancel_held($node, $pid);
	my $stats = $bg->query('SELECT operator, completed FROM xxl.last_stats()');
	like($bg->{stderr}, qr/canceling statement due to user request/, "$f canceled in $phase");
	$bg->{stderr} = '';
	is($stats, "$f|f", "$f: last_stats says not completed");
	is(spill_files($node, $pid), '0', "$f: no spill files after a cancel in $phase");
	is($bg->query_safe("RESET xxl.test_hold; SELECT xxl.triangle_count('SELECT 1 AS source, 2 AS target UNION ALL SELECT 2, 3 UNION ALL SELECT 3, 1')"),
		'1', "$f: the session works after the cancel");
	$bg->quit;
}

# --- temp_file_limit holds for the operator as a whole ---------------------------------

my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
	SET xxl.memory = '4MB'; SET temp_file_limit = '1MB';
	SELECT count(*) FROM xxl.triangles('edges')});
like($stderr, qr/temporary file size exceeds temp_file_limit|temp_file_limit/,
	'temp_file_limit stops the operator');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp%.xxl%'}),
	'0', 'no spill files after temp_file_limit');

$node->stop;
done_testing();

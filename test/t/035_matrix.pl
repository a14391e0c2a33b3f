# 035_matrix.pl — xxl.matmul at a scale the regress test avoids: Aᵀ·A of a
# sparse matrix with skewed rows (100k entries, about 2M partial
# products) on the row-by-row path at a roomy budget and in pieces at
# 2MB, against SQL's join and GROUP BY; a dense matrix on the tiles;
# peak backend memory within xxl.memory plus 32 MB on each path; a cancel
# in each phase of each path (also of an ordinary role's call) stops it,
# leaves no spill file, and the session goes on; temp_file_limit holds for
# the operator as a whole.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('matrix');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE ROLE mm_user LOGIN;
	GRANT CREATE ON SCHEMA public TO mm_user;
	SELECT setseed(0.5);
	-- rows of skewed length (a few long ones), columns uniform
	CREATE TABLE sp AS
	SELECT (20000 * power(random(), 2))::bigint AS i, (random() * 20000)::bigint AS j,
		(random() * 8 - 4)::int AS v
	FROM generate_series(1, 100000);
	-- a dense 250 x 250, three fifths full
	CREATE TABLE dn AS
	SELECT i, j, random() - 0.5 AS v FROM generate_series(1, 250) i, generate_series(1, 250) j
	WHERE random() < 0.6;
	GRANT SELECT ON sp, dn TO mm_user;
	VACUUM ANALYZE sp, dn;
});

# --- paths against SQL ------------------------------------------------------------

$node->safe_psql('postgres', q{
	SET work_mem = '256MB';
	CREATE TABLE sp_sql AS SELECT x.j AS i, y.j, sum(x.v * y.v)::float8 AS v
	FROM sp x JOIN sp y ON x.i = y.i GROUP BY 1, 2 HAVING sum(x.v * y.v) <> 0;
});
for my $memory ('256MB', '2MB')
{
	my $out = $node->safe_psql('postgres', qq{
		SET xxl.memory = '$memory';
		SELECT xxl.matmul_into('sp', 'sp', 'sp_$memory', true);
		SELECT details->>'path', (details->>'partial_products')::bigint > 1000000,
			memory_peak <= memory_limit FROM xxl.last_stats();
		SELECT count(*) FROM sp_$memory c FULL JOIN sp_sql o USING (i, j)
		WHERE c.v IS DISTINCT FROM o.v;
	});
	my @l = split /\n/, $out;
	is($l[1], ($memory eq '2MB' ? 'pieces' : 'rows') . '|t|t', "$memory: the path, its products, its budget");
	is($l[2], '0', "$memory: Aᵀ·A equals SQL's join and GROUP BY");
}
is($node->safe_psql('postgres', q{
	SET xxl.memory = '2MB';
	SELECT count(*) FROM xxl.matmul('dn', 'dn') c
	FULL JOIN (SELECT x.i, y.j, sum(x.v * y.v) AS v FROM dn x JOIN dn y ON x.j = y.i GROUP BY 1, 2) o
	USING (i, j) WHERE c.v IS NULL OR o.v IS NULL OR abs(c.v - o.v) > 1e-9 * greatest(abs(o.v), 1);
	SELECT details->>'path' FROM xxl.last_stats();
}), "0\ndense", 'dense at 2MB: the tiles, equal to SQL');

# --- peak memory --------------------------------------------------------------------

for my $case ([ 'sp', 'true', 'pieces' ], [ 'dn', 'false', 'dense' ])
{
	my ($t, $transpose, $path) = @$case;
	my $out = $node->safe_psql('postgres', qq{
		SET xxl.memory = '16MB';
		SELECT count(*) FROM xxl.matmul('$t', '$t', $transpose);
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1];
	});
	my @l = split /\n/, $out;
	is($l[1], $path, "16MB: $t takes the $path path");
	cmp_ok($l[2], '<=', (16 + 32) * 1024, "VmHWM $l[2] kB within xxl.memory = 16MB plus 32 MB: $path");
}

# --- cancel in every phase of every path --------------------------------------------

for my $case (
	[ 'input',  '256MB', "SELECT count(*) FROM xxl.matmul('sp', 'sp', true)" ],
	[ 'merge',  '256MB', "SELECT count(*) FROM xxl.matmul('sp', 'sp', true)" ],
	[ 'output', '256MB', "SELECT count(*) FROM xxl.matmul('sp', 'sp', true)" ],
	[ 'input',  '2MB', "SELECT xxl.matmul_into('sp', 'sp', 'sp_canceled', true)" ],
	[ 'merge',  '2MB', "SELECT xxl.matmul_into('sp', 'sp', 'sp_canceled', true)" ],
	[ 'output', '2MB', "SELECT xxl.matmul_into('sp', 'sp', 'sp_canceled', true)" ],
	[ 'input',  '4MB', "SELECT count(*) FROM xxl.matmul('dn', 'dn')" ],
	[ 'merge',  '4MB', "SELECT count(*) FROM xxl.matmul('dn', 'dn')" ],
	[ 'output', '4MB', "SELECT count(*) FROM xxl.matmul('dn', 'dn')" ],
	[ 'merge',  '2MB', "SELECT count(*) FROM xxl.matmul('sp', 'sp', true)", 'mm_user' ])
{
	my ($phase, $memory, $query, $user) = @$case;
	my $who = $user ? " ($user)" : '';
	my ($bg, $pid) = start_held($node, $phase, ["SET xxl.memory = '$memory'"], $query,
		$user ? (user => $user) : ());
	cmp_ok(spill_files($node, $pid), '>', 0, "$memory, $phase$who: spill files while held")
	  if $memory eq '2MB' && $phase ne 'input';
	cancel_held($node, $pid);
	my $stats = $bg->query('SELECT operator, completed FROM xxl.last_stats()');
	like($bg->{stderr}, qr/canceling statement due to user request/, "$memory, $phase$who: canceled");
	$bg->{stderr} = '';
	is($stats, 'matmul|f', "$memory, $phase$who: last_stats says not completed");
	is(spill_files($node, $pid), '0', "$memory, $phase$who: no spill files after the cancel");
	# (an ordinary role may not reset the hold it logged in with; a call this small never polls)
	is($bg->query_safe(($user ? '' : 'RESET xxl.test_hold; ') .
			"SELECT count(*) FROM xxl.matmul('SELECT 1 AS i, 2 AS j, 3 AS v', 'SELECT 2 AS i, 1 AS j, 1 AS v')"),
		'1', "$memory, $phase$who: the session works after the cancel");
	$bg->quit;
}
is($node->safe_psql('postgres', "SELECT to_regclass('sp_canceled') IS NULL"), 't',
	'no half-written target after the cancels');

# --- temp_file_limit holds for the operator as a whole ---------------------------------

my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
	SET xxl.memory = '2MB'; SET temp_file_limit = '1MB';
	SELECT count(*) FROM xxl.matmul('sp', 'sp', true)});
like($stderr, qr/temporary file size exceeds temp_file_limit/, 'temp_file_limit stops the operator');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp%.xxl%'}),
	'0', 'no spill files after temp_file_limit');

$node->stop;
done_testing();

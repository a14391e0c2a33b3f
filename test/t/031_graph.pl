# 031_graph.pl — the graph functions at a scale the regress tests avoid
# (a random graph of 1M edges over 500k ids): the in-memory paths and, at
# 2MB, by id in parts and (with the cap on semi-external nodes) fully
# external, give the same components and the same minimum spanning forest; peak backend memory stays within xxl.memory plus 32 MB;
# a cancel or a termination in the middle of the engine's work stops it
# quickly and leaves no spill file.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('graph');
$node->init;
# small shared buffers: a scan of the edges then goes through a ring and
# hardly touches shared memory, so VmHWM shows the backend's own memory
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	SELECT setseed(0.5);
	CREATE TABLE edges AS
	SELECT i::bigint AS id, (random() * 500000)::bigint AS source,
		(random() * 500000)::bigint AS target, random() AS cost
	FROM generate_series(1, 1000000) i;
	VACUUM ANALYZE edges;
});

# --- both paths, same answers --------------------------------------------------

sub run_into
{
	my ($memory, $suffix, $setup) = @_;
	$setup //= '';
	return $node->safe_psql('postgres', qq{
		SET xxl.memory = '$memory';
		$setup
		SELECT xxl.connected_components_into('edges', 'cc_$suffix');
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT xxl.minimum_spanning_forest_into('edges', 'msf_$suffix');
		SELECT details->>'path' FROM xxl.last_stats();
		SELECT xxl.spanning_forest_into('edges', 'sf_$suffix');
		SELECT details->>'path' FROM xxl.last_stats();
	});
}

my @semi = split /\n/, run_into('256MB', 'semi');
my @parts = split /\n/, run_into('2MB', 'parts');
# (the cap on semi-external nodes asks for the sorters)
my @ext = split /\n/, run_into('2MB', 'ext', 'SET xxl.graph_max_semi_nodes = 1000;');
is_deeply([ @semi[ 1, 3, 5 ] ], [ ('in-memory') x 3 ], 'roomy budget: in memory');
# by id in parts (semi-external)
is_deeply([ @parts[ 1, 3, 5 ] ], [ ('semi-external') x 3 ], '2MB: every operator by id in parts');
is_deeply([ @ext[ 1, 3, 5 ] ], [ ('external') x 3 ], '2MB with the cap: fully external');
is($parts[0], $semi[0], 'in parts: the same nodes');
is($ext[0], $semi[0], 'external: the same nodes');

for my $t (qw(parts ext))
{
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM ((TABLE cc_semi EXCEPT ALL TABLE cc_$t)
			UNION ALL (TABLE cc_$t EXCEPT ALL TABLE cc_semi)) d}),
		'0', "components ($t): the paths agree on every node");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM ((TABLE msf_semi EXCEPT ALL TABLE msf_$t)
			UNION ALL (TABLE msf_$t EXCEPT ALL TABLE msf_semi)) d}),
		'0', "minimum spanning forest ($t): the paths agree on every edge");
}

my $components = $node->safe_psql('postgres', 'SELECT count(DISTINCT component) FROM cc_semi');
cmp_ok($components, '>', 1, "the graph has several components ($components)");
is($node->safe_psql('postgres', q{
	SELECT format('%s %s %s %s', (SELECT count(*) FROM msf_semi), (SELECT count(*) FROM sf_semi),
		(SELECT count(*) FROM sf_parts), (SELECT count(*) FROM sf_ext))}),
	join(' ', ($ext[0] - $components) x 4),
	'every forest has nodes - components edges');
for my $t (qw(parts ext))
{
	# the 2MB spanning forests span: their components are the graph's
	is($node->safe_psql('postgres', qq{
		SET xxl.memory = '256MB';
		SELECT count(*) FROM ((SELECT * FROM xxl.connected_components('sf_$t') EXCEPT ALL TABLE cc_semi)) d}),
		'0', "the spanning forest ($t) connects exactly the components");
	# input edges only, no duplicates
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM (SELECT source, target FROM sf_$t EXCEPT ALL SELECT source, target FROM edges) d}),
		'0', "the spanning forest ($t) consists of input edges");
}

# --- peak memory ----------------------------------------------------------------

sub vmhwm_after
{
	my ($memory, $query) = @_;
	my $out = $node->safe_psql('postgres', qq{
		SET xxl.memory = '$memory';
		$query;
		SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1];
	});
	my @lines = split /\n/, $out;
	return $lines[-1];
}

for my $case (
	[ '32MB', 32, q{SELECT count(*) FROM xxl.connected_components('edges')} ],
	[ '32MB', 32, q{SELECT count(*) FROM xxl.minimum_spanning_forest('edges')} ],
	[ '8MB', 8, q{SELECT xxl.connected_components_into('edges', 'cc_mem')} ])
{
	my ($setting, $mb, $query) = @$case;
	my $kb = vmhwm_after($setting, $query);
	cmp_ok($kb, '<=', ($mb + 32) * 1024,
		"VmHWM $kb kB within xxl.memory = $setting plus 32 MB: $query");
}

# --- cancel and terminate inside the engine --------------------------------------


# Start a long external run in the background and hold it inside the
# engine once the input has been read (xxl.test_hold): the state a cancel
# or a termination must clean up, reached whatever the machine's speed.
sub start_long_run
{
	return start_held($node, 'merge', ["SET xxl.memory = '2MB'"], "SELECT count(*) FROM xxl.minimum_spanning_forest('edges')");
}

my ($bg, $pid) = start_long_run();
cmp_ok(spill_files($node, $pid), '>', 0, 'the running operator has spill files');
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
  or die 'the canceled query did not end';
my $latency = time - $t0;
note(sprintf('cancel took effect after %.2f s', $latency));
my $stats = $bg->query('SELECT completed, merge_ms > 0, output_ms = 0 FROM xxl.last_stats()');
like($bg->{stderr}, qr/canceling statement due to user request/, 'the cancel error reaches the client');
$bg->{stderr} = '';
is($stats, 'f|t|t', 'canceled inside the engine (after reading the edges, before any output)');
is(spill_files($node, $pid), '0', 'no spill files after the cancel');
is($bg->query_safe("SELECT count(*) FROM xxl.connected_components('SELECT 1 AS source, 2 AS target')"),
	'2', 'the session works after the cancel');
$bg->quit;

($bg, $pid) = start_long_run();
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $pid)")
  or die 'the terminated backend did not exit';
is(spill_files($node, $pid), '0', 'no spill files after a termination');
# psql has lost its connection and may already be gone (EPIPE on \q)
eval { $bg->quit; };

ok($node->log_contains('terminating connection due to administrator command'),
	'the termination was logged');

# log_temp_files reports the operator's spill files as PostgreSQL's own
my $log_offset = -s $node->logfile;
my $gpid = $node->safe_psql('postgres', q{
	SET log_temp_files = 0; SET xxl.memory = '2MB';
	SELECT count(*) FROM xxl.minimum_spanning_forest('edges');
	SELECT pg_backend_pid()});
$gpid = (split /\n/, $gpid)[-1];
like(substr(slurp_file($node->logfile), $log_offset),
	qr/LOG:  temporary file: path "[^"]*pgsql_tmp${gpid}\.xxl[^"]*", size \d+/,
	'log_temp_files logs the spill files with their sizes');
$node->stop;
done_testing();

# 041_suffix.pl — the suffix-array functions at a scale the regress tests
# avoid: a 4.9 MB corpus of many rows built at xxl.memory = 1536kB (less
# than a third of the text; external DC3 with recursion) gives the same
# suffix array as the
# in-memory build, the checker accepts it, and the budget and the backend's
# peak memory hold; a cancel or a termination in the middle of the build
# stops it quickly and leaves no spill file and no target table.  Run by
# `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('suffix');
$node->init;
# small shared buffers, so VmHWM shows mostly the backend's own memory
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->start;

# 4 MB of text in 60000 rows of varying length, with repeats (every row
# also occurs 7 rows later with a small change)
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE corpus AS
	SELECT i AS id, repeat(md5((i % 7000)::text), 1 + i % 4) || i % 10 AS body
	FROM generate_series(1, 60000) i;
	VACUUM ANALYZE corpus;
});
my $n = $node->safe_psql('postgres',
	q{SELECT sum(octet_length(body)) FROM corpus});
cmp_ok($n, '>', 4_000_000, "the corpus has $n bytes");

# --- far below n: the same suffix array as in memory ----------------------------

my $src = 'SELECT body FROM corpus ORDER BY id';
my $tiny = $node->safe_psql('postgres', qq{
	SET xxl.memory = '1536kB';
	SELECT xxl.suffix_array_into('$src', 'sa_tiny');
	SELECT format('%s %s %s %s', details->>'external_levels', details->>'recursion_depth',
		memory_peak <= memory_limit, (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1])
	FROM xxl.last_stats();
});
my ($count, $stats) = split /\n/, $tiny;
my ($external, $depth, $within, $vmhwm) = split / /, $stats;
is($count, $n, 'suffix_array_into at 1536kB returns n');
cmp_ok($external, '>', 0, "external DC3 ($external levels)");
cmp_ok($depth, '>', 0, "with recursion (depth $depth)");
is($within, 't', 'the engine stayed within its budget');
cmp_ok($vmhwm, '<=', (2 + 32) * 1024, "VmHWM $vmhwm kB within xxl.memory = 1536kB plus 32 MB");

my $roomy = $node->safe_psql('postgres', qq{
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_into('$src', 'sa_roomy');
	SELECT details->>'external_levels' FROM xxl.last_stats();
});
is((split /\n/, $roomy)[1], '0', 'the roomy build is in memory');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM sa_roomy r FULL JOIN sa_tiny t USING (rank) WHERE r.pos IS DISTINCT FROM t.pos}),
	'0', 'the external and the in-memory suffix arrays agree');
is($node->safe_psql('postgres', qq{
	SET xxl.memory = '1536kB';
	SELECT xxl.suffix_array_check('$src', 'sa_tiny');
}), 't', 'the checker accepts it at 1536kB');
is($node->safe_psql('postgres', qq{
	SET xxl.memory = '1536kB';
	SELECT xxl.suffix_array_check('$src',
		'SELECT rank, CASE rank WHEN 1000 THEN (SELECT pos FROM sa_tiny WHERE rank = 2000000)
			WHEN 2000000 THEN (SELECT pos FROM sa_tiny WHERE rank = 1000) ELSE pos END FROM sa_tiny');
}), 'f', 'the checker rejects two swapped entries');

# locate against a plain count of matches (position() on each row misses
# matches across rows, so the pattern is one that cannot span rows)
my $pattern = $node->safe_psql('postgres', q{SELECT md5('4242')});
is($node->safe_psql('postgres', qq{
	SET xxl.memory = '1MB';
	SELECT count(*) FROM xxl.locate('$src', 'sa_tiny', convert_to('$pattern', 'UTF8'));
}), $node->safe_psql('postgres', qq{
	SELECT sum((octet_length(body) - octet_length(replace(body, '$pattern', ''))) / 32) FROM corpus}),
	'locate finds every occurrence');

# --- cancel and terminate inside the engine ---------------------------------------

sub leftovers
{
	my ($pid) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp${pid}.xxl%')
			+ (SELECT count(*) FROM pg_class WHERE relname = 'sa_stopped')});
}

# Start a long external run in the background and hold it inside the
# engine once the input has been read (xxl.test_hold): the state a cancel
# or a termination must clean up, reached whatever the machine's speed.
sub start_long_run
{
	return start_held($node, 'merge', ["SET xxl.memory = '1536kB'"], "SELECT xxl.suffix_array_into('$src', 'sa_stopped')");
}

my ($bg, $pid) = start_long_run();
cmp_ok($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp${pid}.xxl%'"),
	'>', 0, 'the running build has spill files');
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
  or die 'the canceled query did not end';
my $latency = time - $t0;
note(sprintf('cancel took effect after %.2f s', $latency));
my $after = $bg->query('SELECT operator, completed FROM xxl.last_stats()');
like($bg->{stderr}, qr/canceling statement due to user request/, 'the cancel error reaches the client');
$bg->{stderr} = '';
is($after, 'suffix_array|f', 'the build was stopped inside the engine');
is(leftovers($pid), '0', 'no spill files and no target after the cancel');
is($bg->query_safe(q{SELECT count(*) FROM xxl.suffix_array('\x616263'::bytea)}),
	'3', 'the session works after the cancel');
$bg->quit;

($bg, $pid) = start_long_run();
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $pid)")
  or die 'the terminated backend did not exit';
is(leftovers($pid), '0', 'no spill files and no target after a termination');
eval { $bg->quit; };

$node->stop;
done_testing();

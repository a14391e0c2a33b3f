# 043_text_smallest_budget.pl — the suffix array at the smallest budget
# users can set (xxl.memory = 1MB) on a corpus two hundred times larger
# (198 MB): it completes within the budget on its external path, through
# the recursion's levels, and passes the independent checker
# (suffix_array_check, itself tested against libdivsufsort).  LCP values
# and repeats at 1MB: 044_text_lcp_smallest_budget.pl.  Run by `make test`
# (scripts/test.sh).
#
# The array goes into an xxl table (default_table_access_method), whose
# pages hold its 198M rows in a tenth of the heap's bytes: the suffix array
# takes as long either way, the checker half as long.  PGXXL_TEXT_TIMES
# (default 200) sets the corpus to that many times the budget.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('text_smallest_budget');
$node->init;
$node->start;

my $times = $ENV{PGXXL_TEXT_TIMES} // 200;
# 300 md5 words of 33 bytes a row: 100 rows a budget
my $rows = 100 * $times;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION pgxxl;
	CREATE TABLE corpus AS
	SELECT g AS id, string_agg(md5((g * 1000 + i)::text), ' ') AS body
	FROM generate_series(1, $rows) g, generate_series(1, 300) i GROUP BY g;
});
my $n = $node->safe_psql('postgres', q{SELECT sum(octet_length(body)) FROM corpus});
cmp_ok($n, '>=', $times * 950_000, "the corpus has $n bytes, $times times the budget");
my $src = 'SELECT body FROM corpus ORDER BY id';

my @sa = split /\n/, $node->safe_psql('postgres', qq{
	SET xxl.memory = '1MB';
	SET default_table_access_method = xxl;
	SELECT xxl.suffix_array_into('$src', 'sa_tiny');
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, runs > 0) FROM xxl.last_stats();
	SELECT format('%s ms, peak %s bytes, %s levels, written %s bytes a text byte, read %s',
				  round(total_ms), memory_peak, details->>'levels', details->>'written_per_input',
				  details->>'read_per_input') FROM xxl.last_stats();
	SELECT concat_ws(' ', details->>'top_level', (details->>'external_levels')::int >= 3,
					 (details->>'recursion_depth')::int >= 2) FROM xxl.last_stats();
	SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'sa_tiny';
});
note("suffix array at 1MB: $sa[2]");
is($sa[0], $n, 'suffix_array_into at 1MB: one suffix per byte');
is($sa[1], 't t t', 'completed, within 1MB, on the external path');
is("$sa[3] $sa[4]", 'induced t t xxl',
	'its top level induced, then two recursion levels or more, all external; into an xxl table');
is($node->safe_psql('postgres', qq{
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_check('$src', 'sa_tiny')}),
	't', 'the checker accepts the suffix array built at 1MB');

done_testing();

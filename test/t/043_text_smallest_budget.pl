# 043_text_smallest_budget.pl — the suffix array at the smallest budget
# users can set (xxl.memory = 1MB) on a corpus twenty times larger: it
# completes within the budget and passes the independent checker
# (suffix_array_check, itself tested against libdivsufsort).  LCP values,
# whose fixed parts need more, say so with 22023 and the budget they need,
# and leave no target behind.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('text_smallest_budget');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE corpus AS
	SELECT g AS id, string_agg(md5((g * 1000 + i)::text), ' ') AS body
	FROM generate_series(1, 2000) g, generate_series(1, 300) i GROUP BY g;
});
my $n = $node->safe_psql('postgres', q{SELECT sum(octet_length(body)) FROM corpus});
cmp_ok($n, '>=', 19_000_000, "the corpus has $n bytes, twenty times the budget");
my $src = 'SELECT body FROM corpus ORDER BY id';

my @sa = split /\n/, $node->safe_psql('postgres', qq{
	SET xxl.memory = '1MB';
	SELECT xxl.suffix_array_into('$src', 'sa_tiny');
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, runs > 0) FROM xxl.last_stats();
});
is($sa[0], $n, 'suffix_array_into at 1MB: one suffix per byte');
is($sa[1], 't t t', 'completed, within 1MB, on the external path');
is($node->safe_psql('postgres', qq{
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_check('$src', 'sa_tiny')}),
	't', 'the checker accepts the suffix array built at 1MB');

my ($rc, $out, $err) = $node->psql('postgres', qq{
	\\set VERBOSITY verbose
	SET xxl.memory = '1MB';
	SELECT xxl.suffix_array_into('$src', 'sa_lcp', true);
});
like($err, qr/ERROR:  22023: .*\n.*HINT:  LCP values and repeats need xxl.memory of at least \d+ kB/,
	'LCP at 1MB: refused with the budget it needs');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_class WHERE relname = 'sa_lcp'}), '0', 'no half-written target');

done_testing();

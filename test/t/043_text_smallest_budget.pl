# 043_text_smallest_budget.pl — the suffix array at the smallest budget
# users can set (xxl.memory = 1MB) on a corpus twenty times larger: it
# completes within the budget and passes the independent checker
# (suffix_array_check, itself tested against libdivsufsort).  LCP values
# and repeats of a corpus of documents (the tightest split: the documents'
# map takes an eighth) complete at 1MB too, equal to the in-memory path's,
# sampled LCP values equal the common prefixes SQL finds, and the LCP
# operator's I/O stays within a bound.  Run by `make test` (scripts/test.sh).
#
# PGXXL_TEXT_TIMES (default 20) sets the suffix array's corpus to that many
# times the budget: `make test` cannot afford 200 (a 200 MB corpus takes
# the suffix array minutes at 1MB, and the checker and the table of 200M
# rows more), so that run is by hand:
#   PGXXL_TEXT_TIMES=200 prove ... test/t/043_text_smallest_budget.pl
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('text_smallest_budget');
$node->init;
$node->start;

my $times = $ENV{PGXXL_TEXT_TIMES} // 20;
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
	SELECT xxl.suffix_array_into('$src', 'sa_tiny');
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, runs > 0) FROM xxl.last_stats();
	SELECT format('%s ms, peak %s bytes, %s levels, written %s bytes a text byte, read %s',
				  round(total_ms), memory_peak, details->>'levels', details->>'written_per_input',
				  details->>'read_per_input') FROM xxl.last_stats();
});
note("suffix array at 1MB: $sa[2]");
is($sa[0], $n, 'suffix_array_into at 1MB: one suffix per byte');
is($sa[1], 't t t', 'completed, within 1MB, on the external path');
is($node->safe_psql('postgres', qq{
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_check('$src', 'sa_tiny')}),
	't', 'the checker accepts the suffix array built at 1MB');

# LCP values and repeats: a corpus of documents with repeated words, at 1MB
# and at 256MB (in memory), about 2 MB (the LCP operator reads and writes
# some 220 bytes a text byte at 1MB, so a larger one would cost CI a minute)
$node->safe_psql('postgres', q{
	CREATE TABLE docs AS
	SELECT g AS id, string_agg(md5(CASE WHEN i % 4 = 0 THEN ((g * 7 + i) % 300)::text
									   ELSE (g * 1000 + i)::text END), ' ' ORDER BY i) AS body
	FROM generate_series(1, 200) g, generate_series(1, 300) i GROUP BY g;
});
my $dsrc = 'SELECT id, body FROM docs ORDER BY id';
my @lcp = split /\n/, $node->safe_psql('postgres', qq{
	SET xxl.memory = '1MB';
	SELECT xxl.suffix_array_into('$dsrc', 'lcp_tiny', lcp => true);
	SELECT concat_ws(' ', completed, memory_peak <= 1048576) FROM xxl.last_stats();
	SELECT (details->>'lcp_io_bytes')::bigint / rows_out FROM xxl.last_stats();
	SELECT xxl.repeats_into('$dsrc', 'rep_tiny', 30);
	SELECT concat_ws(' ', completed, memory_peak <= 1048576) FROM xxl.last_stats();
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_into('$dsrc', 'lcp_roomy', lcp => true);
	SELECT xxl.repeats_into('$dsrc', 'rep_roomy', 30);
});
# the LCP operator's I/O a text byte at 1MB: two permutations of n records
# that each fit a scatter (one write and one read) and the rounds' two
# sorts of the irreducible pairs (three merge passes); 568 when the
# permutations were sorts by slot and the answers a third sort
my $lcp_io = splice(@lcp, 2, 1);
cmp_ok($lcp_io, '<=', 250, "the LCP operator reads and writes $lcp_io bytes a text byte at 1MB");
is_deeply(\@lcp, [1979800, 't t', 15000, 't t', 1979800, 15000],
	'LCP values and repeats at 1MB: every suffix and range, within the budget');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM lcp_tiny t FULL JOIN lcp_roomy r USING (rank)
	WHERE row(t.*) IS DISTINCT FROM row(r.*)}), '0',
	'the suffix array with LCP values at 1MB equals the in-memory one');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ((TABLE rep_tiny EXCEPT ALL TABLE rep_roomy)
						  UNION ALL (TABLE rep_roomy EXCEPT ALL TABLE rep_tiny)) d}), '0',
	'the repeats at 1MB equal the in-memory ones');
# the oracle: a rank's LCP is the longest common prefix of its suffix and the
# previous rank's, within their documents (every value here is below 64)
is($node->safe_psql('postgres', q{
	WITH s AS (
		SELECT rank, doc_id, doc_offset, lcp,
			   lag(doc_id) OVER (ORDER BY rank) AS pid, lag(doc_offset) OVER (ORDER BY rank) AS poff
		FROM lcp_tiny)
	SELECT count(*) FILTER (WHERE s.lcp <> (
			   SELECT coalesce(max(k), 0) FROM generate_series(1, 64) k
			   WHERE octet_length(substr(a.body, s.doc_offset::int, k)) = k
				 AND substr(a.body, s.doc_offset::int, k) = substr(b.body, s.poff::int, k)))
		   || ' of ' || count(*)
	FROM s JOIN docs a ON a.id = s.doc_id JOIN docs b ON b.id = s.pid
	WHERE s.rank % 997 = 0}), '0 of 1985', 'sampled LCP values equal the common prefixes SQL finds');

done_testing();

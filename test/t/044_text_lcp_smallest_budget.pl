# 044_text_lcp_smallest_budget.pl — LCP values and repeats at the smallest
# budget users can set (xxl.memory = 1MB) on a corpus of documents twenty
# times larger (the tightest split: the documents' map takes a sixteenth):
# both complete within the budget and equal the in-memory path's, sampled
# LCP values equal the common prefixes SQL finds, every repeated word is
# found, and the LCP operator's I/O stays within a bound.  Then 20000 short
# documents, more than the document map holds at 1MB: it pages, and the
# suffix array with LCP values, repeats and locate equal the in-memory
# map's.  Run by `make test` (scripts/test.sh).
#
# PGXXL_LCP_TIMES (default 20) sets the corpus to that many times the
# budget: at 200 the two calls at 1MB take some ten minutes here, more than
# `make test` can give them, so that run is by hand:
#   PGXXL_LCP_TIMES=200 prove ... test/t/044_text_lcp_smallest_budget.pl
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('text_lcp_smallest_budget');
$node->init;
$node->start;

# Tables x and y hold the same rows, matched by rank / as bags.
sub same_ranks
{
	my ($x, $y, $name) = @_;
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM $x t FULL JOIN $y r USING (rank)
		WHERE row(t.*) IS DISTINCT FROM row(r.*)}), '0', $name);
}

sub same_rows
{
	my ($x, $y, $name) = @_;
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM ((TABLE $x EXCEPT ALL TABLE $y) UNION ALL (TABLE $y EXCEPT ALL TABLE $x)) d}),
		'0', $name);
}

my $times = $ENV{PGXXL_LCP_TIMES} // 20;
# md5 words of 33 bytes, a quarter of them drawn from 300 words that recur
# across documents, the others unique (g * 100000 + i): 300 words a document and 100 documents a budget, up to
# 2000 documents (which the document map holds in memory at 1MB), then
# longer documents
my $docs = 100 * ($times < 20 ? $times : 20);
my $words = 30_000 * $times / $docs;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION pgxxl;
	CREATE TABLE docs AS
	SELECT g AS id, string_agg(md5(CASE WHEN i % 4 = 0 THEN ((g * 7 + i) % 300)::text
									   ELSE (g * 100000 + i)::text END), ' ' ORDER BY i) AS body
	FROM generate_series(1, $docs) g, generate_series(1, $words) i GROUP BY g;
});
my $n = $node->safe_psql('postgres', q{SELECT sum(octet_length(body)) FROM docs});
cmp_ok($n, '>=', $times * 950_000, "the corpus has $n bytes, $times times the budget");
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
# (a scatter each, or a sort by slot where one does not fit) and the
# rounds' two sorts of the irreducible pairs, in the merge passes a 1MB
# sorter needs for them
my $lcp_io = splice(@lcp, 2, 1);
cmp_ok($lcp_io, '<=', 560, "the LCP operator reads and writes $lcp_io bytes a text byte at 1MB");
# every one of a document's words drawn from the recurring ones (a quarter)
# is a repeat of its 32 characters (they stand between unique words)
my $recurring = $words / 4 * $docs;
is_deeply(\@lcp, [$n, 't t', $recurring, 't t', $n, $recurring],
	'LCP values and repeats at 1MB: every suffix and repeat, within the budget');
same_ranks('lcp_tiny', 'lcp_roomy', 'the suffix array with LCP values at 1MB equals the in-memory one');
same_rows('rep_tiny', 'rep_roomy', 'the repeats at 1MB equal the in-memory ones');
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
	WHERE s.rank % 9973 = 0}), '0 of ' . int($n / 9973), 'sampled LCP values equal the common prefixes SQL finds');

# Many short documents: at 1MB the document map (a sixteenth of the budget)
# holds some 2700 of them, and past that it pages; the suffixes' documents
# are then resolved by two permutations, not looked up one by one.  Suffix
# array with LCP values, repeats and locate at 1MB equal the in-memory
# map's at 256MB.
$node->safe_psql('postgres', q{
	CREATE TABLE many AS
	SELECT g AS id, md5(g::text) || ' ' || md5((g % 977)::text) || ' ' || md5((g * 3)::text) AS body
	FROM generate_series(1, 20000) g;
});
my $msrc = 'SELECT id, body FROM many ORDER BY id';
my $pattern = q{convert_to(md5('5') || ' ', 'UTF8')};
my @many = split /\n/, $node->safe_psql('postgres', qq{
	SET xxl.memory = '1MB';
	SELECT xxl.suffix_array_into('$msrc', 'many_tiny', lcp => true);
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, details->>'documents',
					 details->>'documents_paged', details->>'documents_resolved',
					 (details->>'documents_page_reads')::bigint < 20000)
	FROM xxl.last_stats();
	SELECT xxl.suffix_array_into('$msrc', 'many_sa_tiny');
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, details->>'documents_resolved') FROM xxl.last_stats();
	SELECT xxl.repeats_into('$msrc', 'many_rep_tiny', 30);
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, details->>'documents_paged') FROM xxl.last_stats();
	CREATE TABLE many_loc_tiny AS SELECT * FROM xxl.locate('$msrc', 'many_tiny', $pattern);
	SELECT details->>'documents_paged' FROM xxl.last_stats();
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_into('$msrc', 'many_roomy', lcp => true);
	SELECT details->>'documents_paged' FROM xxl.last_stats();
	SELECT xxl.repeats_into('$msrc', 'many_rep_roomy', 30);
	CREATE TABLE many_loc_roomy AS SELECT * FROM xxl.locate('$msrc', 'many_roomy', $pattern);
});
my $mn = $node->safe_psql('postgres', q{SELECT sum(octet_length(body)) FROM many});
# repeats: every document's middle word recurs, and a third word 3g is the
# first word of document 3g
cmp_ok($many[9], '>', 20000, "$many[9] repeats in 20000 documents");
# the map is read in order (a lookup a suffix would be two million page reads)
is_deeply(\@many, [$mn, 't t 20000 true true t', $mn, 't t true', $many[9], 't t true', 'true', $mn, 'false', $many[9]],
	'20000 documents at 1MB: the map pages and is read in order, within the budget, every suffix and repeat');
same_ranks('many_tiny', 'many_roomy',
	'suffix array, documents and LCP values through the paged map equal the in-memory one');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM many_sa_tiny t FULL JOIN many_roomy r USING (rank)
	WHERE (t.pos, t.doc_id, t.doc_offset) IS DISTINCT FROM (r.pos, r.doc_id, r.doc_offset)}), '0',
	'the suffix array alone through the paged map equals the in-memory one');
same_rows('many_rep_tiny', 'many_rep_roomy', 'repeats through the paged map equal the in-memory ones');
same_rows('many_loc_tiny', 'many_loc_roomy', 'locate through the paged map equals the in-memory map');
is($node->safe_psql('postgres', 'SELECT count(*) FROM many_loc_tiny'),
	$node->safe_psql('postgres', q{
		SELECT sum((length(body) - length(replace(body, md5('5') || ' ', ''))) / 33) FROM many}),
	'locate through the paged map: every match SQL finds');

done_testing();

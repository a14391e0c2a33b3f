# 063_table_smallest_budget.pl — the xxl table access method at the smallest
# budget users can set (xxl.memory = 1MB): a sorted insert of a 190 MB
# input (3M rows of a bigint and a 32-character text, ordered by the text)
# takes several merge passes within the budget, a second insert adds a
# segment, and xxl.compact merges both at 1MB; the table then holds exactly
# the rows inserted (EXCEPT ALL against a heap copy), and its ordered scan
# returns them in key order.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('table_smallest_budget');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE src AS SELECT g::bigint AS k, md5(g::text) AS v FROM generate_series(1, 3000000) g;
	CREATE TABLE t (k bigint, v text) USING xxl;
	SELECT xxl.alter_table_set('t', 'v');
});
my $src_bytes = $node->safe_psql('postgres', q{SELECT pg_table_size('src')});
cmp_ok($src_bytes, '>=', 180 * 1024 * 1024, "the input takes $src_bytes bytes");

my @ins = split /\n/, $node->safe_psql('postgres', q{
	SET xxl.memory = '1MB';
	INSERT INTO t SELECT * FROM src;
	SELECT concat_ws(' ', completed, memory_peak <= 1048576, merge_passes >= 2) FROM xxl.last_stats();
	INSERT INTO t SELECT k, md5((k + 3000000)::text) FROM src WHERE k <= 500000;
	SELECT concat_ws(' ', completed, memory_peak <= 1048576) FROM xxl.last_stats();
	SELECT xxl.compact('t');
	SELECT concat_ws(' ', completed, memory_peak <= 1048576) FROM xxl.last_stats();
});
is($ins[0], 't t t', 'insert at 1MB: completed within the budget, in several merge passes');
is($ins[1], 't t', 'a second insert at 1MB');
is($ins[2], '2', 'compaction merges the two segments');
is($ins[3], 't t', 'compaction at 1MB: completed within the budget');

is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ((TABLE t EXCEPT ALL
			(TABLE src UNION ALL SELECT k, md5((k + 3000000)::text) FROM src WHERE k <= 500000))
		UNION ALL ((TABLE src UNION ALL SELECT k, md5((k + 3000000)::text) FROM src WHERE k <= 500000)
			EXCEPT ALL TABLE t)) d}),
	'0', 'the table holds exactly the rows inserted');
like($node->safe_psql('postgres', q{EXPLAIN (COSTS OFF) SELECT v FROM t ORDER BY v}),
	qr/XxlOrderedScan/, 'ORDER BY the key reads the ordered scan');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT v, lag(v) OVER () AS p FROM (SELECT v FROM t ORDER BY v) s) w
	WHERE p > v}),
	'0', 'the ordered scan returns the rows in key order');

done_testing();

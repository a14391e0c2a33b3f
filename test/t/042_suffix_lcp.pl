# 042_suffix_lcp.pl — LCP values and repeats at a scale the regress tests
# avoid: a corpus of documents of about 4 MB, at xxl.memory = 4MB (the
# document map, the sorter and the LCP operator's parts share it) with the
# external paths forced, gives the same LCP array and repeats as at a roomy
# budget (whose in-memory paths the unit test checks against divsufsort and
# Kasai), within its budget and the backend's peak memory; a cancel in
# every phase of repeats_into and of lcp_into stops it, leaves no spill file
# and no target table, and the session works.  Run by `make test`.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('suffix_lcp');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->start;

# 10000 documents (the document map takes 24 bytes each of an eighth of
# xxl.memory); every fifth carries a boilerplate paragraph, and hashes of
# earlier documents recur (long repeats of several lengths)
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE docs AS
	SELECT i AS id,
	       repeat(md5((i % 3000)::text), 1 + i % 5) || ' ' || md5(i::text) || repeat(md5((i % 777)::text), 8)
	       || CASE WHEN i % 5 = 0 THEN ' This file is part of the corpus; see the license for details.' ELSE '' END AS body
	FROM generate_series(1, 10000) i;
});
my $n = $node->safe_psql('postgres', q{SELECT sum(octet_length(body)) FROM docs});
cmp_ok($n, '>', 3_500_000, "the corpus has $n bytes");
# the table itself, read in its physical order (the order it was made in):
# a query with ORDER BY would sort through the planner's xxl sort node, a
# second operator whose phases would take the test's hold point
my $src = 'docs';

# --- small and roomy budgets agree ----------------------------------------------

my $small = $node->safe_psql('postgres', qq{
	SET xxl.memory = '4MB';
	SET xxl.text_force_external = on;
	SELECT xxl.suffix_array_into('$src', 'sa_small', lcp => true);
	SELECT format('%s %s %s %s', details->>'external_levels', details->>'lcp_method',
		memory_peak <= memory_limit, (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
			'VmHWM:\\s+(\\d+) kB'))[1])
	FROM xxl.last_stats();
});
my ($count, $stats) = split /\n/, $small;
my ($external, $method, $within, $vmhwm) = split / /, $stats;
is($count, $n, 'suffix_array_into(lcp => true) at 4MB returns n');
cmp_ok($external, '>', 0, "external DC3 ($external levels)");
is($method, 'rounds', 'LCP values from the external rounds');
is($within, 't', 'within the budget');
cmp_ok($vmhwm, '<=', (4 + 32) * 1024, "VmHWM $vmhwm kB within xxl.memory = 4MB plus 32 MB");

$node->safe_psql('postgres', qq{
	SET xxl.memory = '256MB';
	SELECT xxl.suffix_array_into('$src', 'sa_roomy', lcp => true);
});
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM sa_roomy r FULL JOIN sa_small s USING (rank)
	WHERE (r.pos, r.doc_id, r.doc_offset, r.lcp) IS DISTINCT FROM (s.pos, s.doc_id, s.doc_offset, s.lcp)}),
	'0', 'the LCP arrays at 4MB and 256MB agree');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM sa_small s JOIN docs d ON d.id = s.doc_id
	WHERE s.lcp > octet_length(d.body) - s.doc_offset + 1}),
	'0', 'no LCP value runs past its document');
# an independent check of 100 sampled ranks: the common prefix of the two
# neighbouring suffixes, counted byte by byte inside their documents
$node->safe_psql('postgres', q{
	CREATE FUNCTION naive_lcp(a text, b text) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE k int := 0;
	BEGIN
		WHILE k < length(a) AND k < length(b) AND substr(a, k + 1, 1) = substr(b, k + 1, 1) LOOP
			k := k + 1;
		END LOOP;
		RETURN k;
	END $$;
});
is($node->safe_psql('postgres', q{
	WITH pick AS (SELECT rank FROM sa_small WHERE rank > 1 ORDER BY md5(rank::text) LIMIT 100)
	SELECT count(*) FROM pick
	JOIN sa_small s ON s.rank = pick.rank JOIN sa_small p ON p.rank = pick.rank - 1
	JOIN docs ds ON ds.id = s.doc_id JOIN docs dp ON dp.id = p.doc_id
	WHERE s.lcp <> naive_lcp(substr(ds.body, s.doc_offset::int), substr(dp.body, p.doc_offset::int))}),
	'0', 'sampled LCP values equal a byte-by-byte count');

$node->safe_psql('postgres', qq{
	SET xxl.memory = '4MB';
	SET xxl.text_force_external = on;
	SELECT xxl.lcp_into('$src', 'SELECT rank, pos FROM sa_small', 'lcp_small');
});
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM lcp_small l FULL JOIN sa_roomy r USING (rank) WHERE l.lcp IS DISTINCT FROM r.lcp}),
	'0', 'lcp_into from the stored suffix array agrees');

# repeats: the same ranges, and each range's windows really occur that often
$node->safe_psql('postgres', qq{
	SET xxl.memory = '4MB';
	SET xxl.text_force_external = on;
	SELECT xxl.repeats_into('$src', 'rep_small', 50);
	SET xxl.memory = '256MB';
	SET xxl.text_force_external = off;
	SELECT xxl.repeats_into('$src', 'rep_roomy', 50);
});
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM (TABLE rep_small EXCEPT ALL TABLE rep_roomy) a)
	     + (SELECT count(*) FROM (TABLE rep_roomy EXCEPT ALL TABLE rep_small) b)}),
	'0', 'repeats at 4MB and 256MB agree');
cmp_ok($node->safe_psql('postgres', q{SELECT count(*) FROM rep_small}), '>', 1000, 'many repeated ranges');
# each sampled range's first window occurs at least as often as reported,
# counted at every offset of the documents that contain it
is($node->safe_psql('postgres', q{
	WITH sample AS (SELECT * FROM rep_small ORDER BY doc_id, doc_offset LIMIT 25),
	     win AS (SELECT s.*, substr(d.body, s.doc_offset::int, 50) AS w FROM sample s JOIN docs d ON d.id = s.doc_id)
	SELECT count(*) FROM win
	WHERE (SELECT count(*) FROM docs d, generate_series(1, octet_length(d.body) - 49) o
	       WHERE strpos(d.body, win.w) > 0 AND substr(d.body, o, 50) = win.w) < win.occurrences}),
	'0', 'the first window of each sampled range occurs at least as often as reported');

# --- cancel in every phase ----------------------------------------------------------

sub leftovers
{
	my ($pid, $target) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp${pid}.xxl%')
			+ (SELECT count(*) FROM pg_class WHERE relname = '$target')});
}

my @setup = ("SET xxl.memory = '4MB'", 'SET xxl.text_force_external = on');
for my $case (
	[ 'input',  "SELECT xxl.repeats_into('$src', 'rep_stopped', 50)", 'repeats' ],
	[ 'merge',  "SELECT xxl.repeats_into('$src', 'rep_stopped', 50)", 'repeats' ],
	[ 'output', "SELECT xxl.repeats_into('$src', 'rep_stopped', 50)", 'repeats' ],
	[ 'input',  "SELECT xxl.lcp_into('$src', 'sa_small', 'rep_stopped')", 'lcp' ],
	[ 'merge',  "SELECT xxl.lcp_into('$src', 'sa_small', 'rep_stopped')", 'lcp' ])
{
	my ($phase, $sql, $op) = @$case;
	my ($bg, $pid) = start_held($node, $phase, \@setup, $sql);
	cancel_held($node, $pid);
	is($bg->query('SELECT operator, completed FROM xxl.last_stats()'), "$op|f",
		"$op: stopped inside the engine in $phase");
	like($bg->{stderr}, qr/canceling statement due to user request/, "$op: canceled in $phase");
	$bg->{stderr} = '';
	$bg->query_safe('RESET xxl.test_hold');
	is(leftovers($pid, 'rep_stopped'), '0', "$op: no spill files and no target after a cancel in $phase");
	is($bg->query_safe(q{SELECT count(*) FROM xxl.repeats('SELECT ''abcabc''', 3)}), '2',
		"$op: the session works after the cancel in $phase");
	$bg->quit;
}

$node->stop;
done_testing();

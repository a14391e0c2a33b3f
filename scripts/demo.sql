-- demo.sql — what `make demo` shows in a throwaway server: the extension,
-- an external sort against ORDER BY on 2M rows with a budget far below the
-- data (the same answer, the time of each, the sorter's statistics), and a
-- glimpse of the graph and suffix-array functions.
\pset footer off
CREATE EXTENSION pgxxl;
SELECT xxl.version();

\echo
\echo '--- 2M rows of (bigint, text), about 110 MB; xxl.memory = work_mem = 16MB'
SELECT setseed(0.5);
CREATE UNLOGGED TABLE demo AS
SELECT (random() * 1e12)::bigint AS k, md5(g::text) AS v FROM generate_series(1, 2000000) g;
VACUUM ANALYZE demo;
SET work_mem = '16MB';
SET xxl.memory = '16MB';
SET max_parallel_workers_per_gather = 0;

\timing on
\echo '--- ORDER BY into a new table'
CREATE UNLOGGED TABLE by_order_by AS SELECT * FROM demo ORDER BY k, v;
\echo '--- xxl.sort_into: the same, through the external sorter'
SELECT xxl.sort_into('demo', 'k, v', 'by_xxl');
\echo '--- consuming sorted rows: ORDER BY, then xxl.sort'
SELECT count(*), sum(k) FROM (SELECT * FROM demo ORDER BY k, v OFFSET 0) s;
SELECT count(*), sum(k) FROM xxl.sort('demo', 'k, v') AS s(k bigint, v text);
\timing off

\echo '--- the same rows in the same order?'
-- (a synchronized scan could start in the middle of a table)
SET synchronize_seqscans = off;
SELECT count(*) AS rows,
	count(*) FILTER (WHERE a.k = b.k AND a.v = b.v) AS equal
FROM (SELECT row_number() OVER () AS i, * FROM by_order_by) a
JOIN (SELECT row_number() OVER () AS i, * FROM by_xxl) b USING (i);

\echo '--- what the sorter did (last operator of this session)'
SELECT operator, rows, runs, merge_passes, pg_size_pretty(memory_peak) AS memory_peak,
	pg_size_pretty((SELECT sum(b) FROM unnest(bytes_written) b)) AS spilled,
	round(total_ms) AS total_ms
FROM xxl.last_stats();

\echo
\echo '--- connected components of a small graph (component = smallest node id)'
SELECT * FROM xxl.connected_components(
	'SELECT * FROM (VALUES (1, 2), (2, 3), (10, 11), (42, 42)) AS e(source, target)')
ORDER BY node;

\echo '--- suffix array and BWT of banana'
SELECT * FROM xxl.suffix_array('banana'::bytea);
SELECT convert_from(bwt, 'UTF8') AS bwt, primary_index FROM xxl.bwt('banana'::bytea);

\echo '--- repeated substrings of at least 5 bytes across three documents (docs/text.md)'
SELECT * FROM xxl.repeats(
	'SELECT * FROM (VALUES (1, ''the cat sat''), (2, ''a cat sat down''), (3, ''the cat'')) AS d(id, body)', 5);

-- demo.sql — what `make demo` shows in a throwaway server: the extension;
-- one ORDER BY over 2M rows with a budget far below the data, run by stock
-- PostgreSQL (xxl.sort_in_plans off), by XxlSort (on), and as
-- xxl.sort_into, each with its time and the same order-sensitive checksum;
-- the sorter's statistics; and a glimpse of the graph and suffix-array
-- functions.
\pset footer off
CREATE EXTENSION pgxxl;
SELECT xxl.version();

\echo
\echo '--- 2M rows of (bigint, text), about 110 MB, in a C.UTF-8 database (the'
\echo '--- default of Debian''s clusters); work_mem = xxl.memory = 16MB, no workers'
CREATE DATABASE demo_utf8 TEMPLATE template0 LOCALE 'C.UTF-8';
\c demo_utf8
CREATE EXTENSION pgxxl;
SELECT setseed(0.5);
CREATE UNLOGGED TABLE demo AS
SELECT (random() * 1e12)::bigint AS k, md5(g::text) AS v FROM generate_series(1, 2000000) g;
VACUUM ANALYZE demo;
SET work_mem = '16MB';
SET xxl.memory = '16MB';
SET max_parallel_workers_per_gather = 0;
SET synchronize_seqscans = off;
-- XxlSort replaces Sort in sessions where the library is loaded: this
-- server preloads it with shared_preload_libraries = 'pgxxl', as the
-- README's "Set-up" says (demo.sh); elsewhere, LOAD 'pgxxl' loads it for
-- one session.

-- The one query, run three ways below: the rows in order, consumed by an
-- order-sensitive checksum (each row's text weighted by its place).
\set sorted 'SELECT * FROM demo ORDER BY v OFFSET 0'
\set checksum 'SELECT count(*) AS rows, sum(n * hashtext(v)::bigint) AS checksum FROM (SELECT row_number() OVER () AS n, v FROM (' :sorted ') s) t'

\echo
\echo '--- 1. stock PostgreSQL: xxl.sort_in_plans off, the plan sorts with Sort'
SET xxl.sort_in_plans = off;
EXPLAIN (COSTS OFF) :sorted;
\timing on
:checksum;
\timing off

\echo
\echo '--- 2. the same query with xxl.sort_in_plans on (the default): XxlSort'
SET xxl.sort_in_plans = on;
EXPLAIN (COSTS OFF) :sorted;
\timing on
:checksum;
\timing off

\echo
\echo '--- 3. xxl.sort_into: the sorted rows straight into a new table'
\timing on
SELECT xxl.sort_into('demo', 'v', 'by_xxl');
\timing off
SELECT count(*) AS rows, sum(n * hashtext(v)::bigint) AS checksum
FROM (SELECT row_number() OVER () AS n, v FROM by_xxl) t;

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

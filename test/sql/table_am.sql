-- table_am.sql — the table access method xxl: every common type round-trips
-- (checked against a heap copy of the same rows, EXCEPT ALL both ways), rows
-- of a statement go in sorted by the order key, transactions and
-- subtransactions decide what is seen, COPY, CREATE TABLE AS, ALTER TABLE
-- SET ACCESS METHOD, TRUNCATE, VACUUM, VACUUM FULL and ANALYZE work, loads
-- far beyond xxl.memory spill and stay sorted, parallel scans see every row,
-- and what is not supported says so with SQLSTATE 0A000 (DELETE and UPDATE:
-- table_dml.sql).
\i test/include/begin.sql
\i test/include/helpers.sql

-- every common type, NULLs, NaN, infinities, long values, dropped columns
CREATE TABLE tam_types_heap (
  i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric,
  b boolean, c "char", nm name, o oid, t text, vc varchar(20), ch char(5), by bytea,
  d date, tm time, tz timetz, ts timestamp, tstz timestamptz, iv interval, u uuid,
  j jsonb, js json, arr int[], tarr text[], inet inet, m money, pt point, r int4range);
INSERT INTO tam_types_heap
SELECT g::smallint, g, g * 1000000000000, g / 3.0, g / 7.0, (g * 12345.6789)::numeric(20, 4),
  g % 2 = 0, chr(65 + g % 26)::"char", 'name' || g, g::oid, repeat('x', g % 50) || g,
  'vc' || g, 'c' || (g % 100), decode(md5(g::text), 'hex'),
  date '2000-01-01' + g, make_time(g / 60 % 24, g % 60, 0),
  (make_time(12, g / 60 % 60, g % 60)::text || '+02')::timetz,
  make_timestamp(2020, 1, 1, 0, 0, 0) + make_interval(hours => g),
  make_timestamptz(2020, 1, 1, 0, 0, 0, 'UTC') + make_interval(days => g),
  make_interval(days => g, secs => g), md5(g::text)::uuid, jsonb_build_object('g', g, 'a', ARRAY[g, g]),
  json_build_object('g', g), ARRAY[g, g + 1, NULL], ARRAY['a' || g, NULL], ('10.0.' || g % 256 || '.1')::inet,
  g::money, point(g, -g), int4range(g, g + 10)
FROM generate_series(1, 500) g;
-- NULLs in every column, NaN and infinities, a long value (no compression), an empty string
INSERT INTO tam_types_heap (i4) VALUES (NULL);
INSERT INTO tam_types_heap (f4, f8, n, ts, d, t) VALUES
  ('NaN', 'NaN', 'NaN', 'infinity', '-infinity', ''),
  ('Infinity', '-Infinity', -0.000001, '-infinity', 'infinity', repeat('long', 1500));
CREATE TABLE tam_types (LIKE tam_types_heap) USING xxl;
INSERT INTO tam_types SELECT * FROM tam_types_heap;
SELECT count(*) AS rows, xt_differ('tam_types', 'tam_types_heap') AS differing FROM tam_types;
-- rows of by-value columns only (the scans' unpack without a width switch
-- when all are 8 bytes), NULLs anywhere in a bitmap of two bytes
CREATE TABLE tam_byval_heap (b boolean, i2 smallint, i4 integer, i8 bigint, f4 real,
  f8 double precision, d date, ts timestamp, c "char", o oid);
INSERT INTO tam_byval_heap
SELECT CASE WHEN g % 10 <> 0 THEN g % 2 = 0 END, CASE WHEN g % 10 <> 1 THEN g::smallint END,
  CASE WHEN g % 10 <> 2 THEN -g END, CASE WHEN g % 10 <> 3 THEN g * 1000000000000 END,
  CASE WHEN g % 10 <> 4 THEN g / 3.0 END, CASE WHEN g % 10 <> 5 THEN g / 7.0 END,
  CASE WHEN g % 10 <> 6 THEN date '2000-01-01' + g END,
  CASE WHEN g % 10 <> 7 THEN make_timestamp(2020, 1, 1, 0, 0, 0) + make_interval(mins => g) END,
  CASE WHEN g % 10 <> 8 THEN chr(65 + g % 26)::"char" END, CASE WHEN g % 10 <> 9 THEN g::oid END
FROM generate_series(1, 2000) g;
INSERT INTO tam_byval_heap VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE tam_byval USING xxl AS SELECT * FROM tam_byval_heap;
CREATE TABLE tam_byval8 USING xxl AS SELECT i8, f8, ts FROM tam_byval_heap;
SELECT count(*) AS rows, xt_differ('tam_byval', 'tam_byval_heap') AS differing,
  (SELECT count(*) FROM (SELECT i8, f8, ts FROM tam_byval8 EXCEPT ALL
    SELECT i8, f8, ts FROM tam_byval_heap) d) AS differing_8,
  (SELECT count(*) FROM (SELECT i8, f8, ts FROM tam_byval_heap EXCEPT ALL
    SELECT i8, f8, ts FROM tam_byval8) d) AS missing_8,
  (SELECT count(*) FROM tam_byval8 WHERE ts IS NULL) AS null_ts
FROM tam_byval;
DROP TABLE tam_byval, tam_byval8, tam_byval_heap;
-- the same through COPY, ordered by a key, and after a column is dropped
CREATE TABLE tam_types_copy (LIKE tam_types_heap) USING xxl;
SELECT xxl.alter_table_set('tam_types_copy', 'i4 DESC NULLS FIRST, t COLLATE "C"');
\copy tam_types_heap TO '/tmp/pgxxl_tam_types.copy'
\copy tam_types_copy FROM '/tmp/pgxxl_tam_types.copy'
SELECT xt_differ('tam_types_copy', 'tam_types_heap') AS differing_after_copy;
SELECT i4 FROM tam_types_copy LIMIT 3;
ALTER TABLE tam_types_copy DROP COLUMN by;
ALTER TABLE tam_types_heap DROP COLUMN by;
INSERT INTO tam_types_copy SELECT * FROM tam_types_heap WHERE i4 <= 10;
INSERT INTO tam_types_heap SELECT * FROM tam_types_heap WHERE i4 <= 10;
SELECT xt_differ('tam_types_copy', 'tam_types_heap') AS differing_after_drop_column;
-- columns added later: missing in the older rows (their default, or NULL)
ALTER TABLE tam_types_copy ADD COLUMN added_default int DEFAULT 42, ADD COLUMN added_null text;
ALTER TABLE tam_types_heap ADD COLUMN added_default int DEFAULT 42, ADD COLUMN added_null text;
INSERT INTO tam_types_copy SELECT * FROM tam_types_heap WHERE i4 <= 3;
INSERT INTO tam_types_heap SELECT * FROM tam_types_heap WHERE i4 <= 3;
SELECT xt_differ('tam_types_copy', 'tam_types_heap') AS differing_after_add_column;
SELECT added_default, added_null, count(*) FROM tam_types_copy GROUP BY 1, 2;

-- rows of one statement go in sorted by the key; earlier segments stay as they were
CREATE TABLE tam_sorted (k int, v text) USING xxl;
INSERT INTO tam_sorted VALUES (3, 'c'), (1, 'a'), (2, 'b');
SELECT xxl.alter_table_set('tam_sorted', 'k');
INSERT INTO tam_sorted VALUES (30, 'z'), (10, 'x'), (20, 'y'), (NULL, 'null last');
SELECT ctid, k, v FROM tam_sorted;
SELECT * FROM xxl.table_options WHERE relation = 'tam_sorted'::regclass;
-- VACUUM FULL merges the segments into one, in key order
VACUUM FULL tam_sorted;
SELECT ctid, k, v FROM tam_sorted;
SELECT xxl.alter_table_set('tam_sorted', NULL);
SELECT count(*) AS options_left FROM xxl.table_options WHERE relation = 'tam_sorted'::regclass;

-- transactions, subtransactions, own rows
CREATE TABLE tam_tx (a int) USING xxl;
CREATE TABLE tam_tx2 (a int) USING xxl;
BEGIN;
INSERT INTO tam_tx VALUES (1);
INSERT INTO tam_tx2 VALUES (10), (20);
INSERT INTO tam_tx VALUES (2);
SELECT (SELECT count(*) FROM tam_tx) AS tx, (SELECT count(*) FROM tam_tx2) AS tx2;
SAVEPOINT s;
INSERT INTO tam_tx VALUES (3);
SELECT count(*) AS before_rollback_to FROM tam_tx;
ROLLBACK TO s;
SELECT count(*) AS after_rollback_to FROM tam_tx;
-- a statement does not see its own rows
INSERT INTO tam_tx SELECT a + 100 FROM tam_tx;
SELECT array_agg(a ORDER BY a) FROM tam_tx;
COMMIT;
BEGIN;
INSERT INTO tam_tx VALUES (999);
ROLLBACK;
SELECT array_agg(a ORDER BY a) AS committed FROM tam_tx;
-- the rolled-back segment is marked dead by VACUUM and never seen
VACUUM tam_tx;
SELECT array_agg(a ORDER BY a) AS after_vacuum FROM tam_tx;

-- CREATE TABLE AS, ALTER TABLE SET ACCESS METHOD both ways, TRUNCATE, ANALYZE
CREATE TABLE tam_ctas USING xxl AS SELECT g AS a, md5(g::text) AS b FROM generate_series(1, 1000) g;
CREATE TABLE tam_heap AS SELECT g AS a, md5(g::text) AS b FROM generate_series(1, 1000) g;
SELECT xt_differ('tam_ctas', 'tam_heap') AS ctas_differing;
ALTER TABLE tam_heap SET ACCESS METHOD xxl;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'tam_heap';
SELECT xt_differ('tam_ctas', 'tam_heap') AS converted_differing;
ALTER TABLE tam_heap SET ACCESS METHOD heap;
SELECT xt_differ('tam_ctas', 'tam_heap') AS back_to_heap_differing;
ANALYZE tam_ctas;
SELECT reltuples FROM pg_class WHERE relname = 'tam_ctas';
SELECT attname, n_distinct FROM pg_stats WHERE tablename = 'tam_ctas' ORDER BY attname;
TRUNCATE tam_ctas;
SELECT count(*) AS after_truncate FROM tam_ctas;
INSERT INTO tam_ctas VALUES (1, 'again');
SELECT * FROM tam_ctas;

-- a load far beyond xxl.memory spills, and its segment is sorted
CREATE TABLE tam_big (a bigint, b bigint, pad text) USING xxl;
SELECT xxl.alter_table_set('tam_big', 'b, a');
SET xxl.memory = '1MB';
INSERT INTO tam_big SELECT g, (g * 7919) % 100003, 'pad' || g FROM generate_series(1, 200000) g;
RESET xxl.memory;
SELECT operator, rows, (SELECT sum(x) FROM unnest(bytes_written) x) > 1000000 AS spilled
FROM xxl.last_stats();
SELECT count(*) AS rows, count(DISTINCT a) AS distinct_a,
  bool_and(prev IS NULL OR (prev_b, prev) <= (b, a)) AS in_key_order
FROM (SELECT a, b, lag(a) OVER w AS prev, lag(b) OVER w AS prev_b
      FROM tam_big WINDOW w AS (ORDER BY ctid)) s;
-- parallel workers see every row once (an aggregate the aggregate scan does not take)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(a + 0) FROM tam_big;
SELECT count(*), sum(a + 0) FROM tam_big;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- ORDER BY the order key: segments merged, no Sort node; the same rows in
-- the same order as PostgreSQL's Sort (xxl.ordered_scan off)
CREATE TABLE tam_ord (k int, t text, n numeric) USING xxl;
INSERT INTO tam_ord SELECT g, 'before the key ' || g, g FROM generate_series(1, 50) g;
SELECT xxl.alter_table_set('tam_ord', 'k, t');
INSERT INTO tam_ord SELECT (g * 37) % 1009, 'one ' || g, g / 7.0 FROM generate_series(1, 3000) g;
INSERT INTO tam_ord SELECT (g * 53) % 1009, NULL, NULL FROM generate_series(1, 3000) g;
INSERT INTO tam_ord VALUES (NULL, 'null key', 0);
CREATE FUNCTION tam_ordered(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE merged text; sorted text;
BEGIN
  -- (the ordered scan against PostgreSQL's Sort: no full or aggregate scan)
  SET LOCAL xxl.full_scan = off;
  SET LOCAL xxl.ordered_scan = on;
  EXECUTE format('SELECT md5(string_agg(x::text, '','')) FROM (%s) x', q) INTO merged;
  SET LOCAL xxl.ordered_scan = off;
  EXECUTE format('SELECT md5(string_agg(x::text, '','')) FROM (%s) x', q) INTO sorted;
  RETURN CASE WHEN merged = sorted THEN 'same' ELSE 'DIFFERENT' END;
END $$;
EXPLAIN (COSTS OFF) SELECT * FROM tam_ord ORDER BY k, t;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM tam_ord ORDER BY k LIMIT 3;
SELECT * FROM tam_ord ORDER BY k, t LIMIT 5;
SELECT tam_ordered('SELECT * FROM tam_ord ORDER BY k, t') AS full_key,
  tam_ordered('SELECT k FROM tam_ord ORDER BY k') AS prefix,
  tam_ordered('SELECT * FROM tam_ord WHERE k BETWEEN 100 AND 200 ORDER BY k, t') AS filtered,
  tam_ordered('SELECT * FROM tam_ord ORDER BY k, t LIMIT 100') AS limited;
-- the key backwards, or another column: PostgreSQL sorts
EXPLAIN (COSTS OFF) SELECT * FROM tam_ord ORDER BY k DESC;
EXPLAIN (COSTS OFF) SELECT * FROM tam_ord ORDER BY t;
-- a new key: segments sorted by the old one are sorted again at run time
SELECT xxl.alter_table_set('tam_ord', 'k DESC, t');
INSERT INTO tam_ord SELECT g, 'under the new key', g FROM generate_series(1, 10) g;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM tam_ord ORDER BY k DESC, t;
SELECT tam_ordered('SELECT * FROM tam_ord ORDER BY k DESC, t') AS new_key;
-- rescans: a subquery run once per outer row
SELECT i, (SELECT k FROM tam_ord WHERE k IS NOT NULL ORDER BY k DESC, t OFFSET i * 25 LIMIT 1)
FROM generate_series(0, 3) i;
-- after VACUUM FULL one segment, read straight
VACUUM FULL tam_ord;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM tam_ord ORDER BY k DESC, t LIMIT 1;
SELECT tam_ordered('SELECT * FROM tam_ord ORDER BY k DESC, t') AS after_vacuum_full;

-- key ranges: the leading key column's bounds skip pages (a binary search per
-- sorted segment, a stop past the range), with the same answers as a full scan
CREATE TABLE tam_rng (a bigint, b int, s text COLLATE "C") USING xxl;
SELECT xxl.alter_table_set('tam_rng', 'a, b');
INSERT INTO tam_rng SELECT (g * 7919) % 20011, g, 'r' || g FROM generate_series(1, 20000) g;
INSERT INTO tam_rng SELECT (g * 104729) % 20011, -g, 'q' || g FROM generate_series(1, 10000) g;
INSERT INTO tam_rng VALUES (NULL, 0, 'null key');
CREATE TABLE tam_rng_desc (LIKE tam_rng) USING xxl;
SELECT xxl.alter_table_set('tam_rng_desc', 'a DESC, b');
INSERT INTO tam_rng_desc SELECT * FROM tam_rng;
CREATE TABLE tam_rng_text (LIKE tam_rng) USING xxl;
SELECT xxl.alter_table_set('tam_rng_text', 's');
INSERT INTO tam_rng_text SELECT * FROM tam_rng;
-- (the ordered scan's bounds: no aggregate scan, which would skip packed pages instead)
SET xxl.full_scan = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM tam_rng WHERE a BETWEEN 1000 AND 1019;
SELECT tam_ordered('SELECT count(*), sum(b) FROM tam_rng WHERE a BETWEEN 1000 AND 1019') AS between_,
  tam_ordered('SELECT * FROM tam_rng WHERE a = 4242 ORDER BY a, b') AS eq,
  tam_ordered('SELECT count(*) FROM tam_rng WHERE a > 19990') AS gt,
  tam_ordered('SELECT count(*) FROM tam_rng WHERE a < 5 OR a IS NULL') AS lt_or_null,
  tam_ordered('SELECT count(*) FROM tam_rng WHERE 100 >= a AND a >= 90') AS commuted,
  tam_ordered('SELECT count(*) FROM tam_rng WHERE a > 100 AND a < 50') AS empty;
SELECT tam_ordered('SELECT count(*), sum(b) FROM tam_rng_desc WHERE a BETWEEN 1000 AND 1019') AS desc_between,
  tam_ordered('SELECT * FROM tam_rng_desc WHERE a <= 3 ORDER BY a DESC, b') AS desc_le,
  tam_ordered($$SELECT count(*) FROM tam_rng_text WHERE s >= 'r1999' AND s < 'r2'$$) AS text_c;
-- bounds in a collation the engine compares (ICU, libc): the same range
CREATE TABLE tam_rng_icu (a bigint, b int, s text COLLATE "en-x-icu") USING xxl;
SELECT xxl.alter_table_set('tam_rng_icu', 's');
INSERT INTO tam_rng_icu SELECT a, b, CASE WHEN b % 3 = 0 THEN upper(s) ELSE s END FROM tam_rng;
CREATE TABLE tam_rng_libc (a bigint, b int, s text COLLATE "en_US") USING xxl;
SELECT xxl.alter_table_set('tam_rng_libc', 's DESC');
INSERT INTO tam_rng_libc SELECT * FROM tam_rng_icu;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM tam_rng_icu WHERE s >= 'r1999' AND s < 'r2';
SELECT tam_ordered($$SELECT count(*), sum(b) FROM tam_rng_icu WHERE s >= 'r1999' AND s < 'r2'$$) AS icu_range,
  tam_ordered($$SELECT * FROM tam_rng_icu WHERE s > 'Q99' ORDER BY s LIMIT 50$$) AS icu_gt,
  tam_ordered($$SELECT count(*), sum(b) FROM tam_rng_libc WHERE s BETWEEN 'q5' AND 'R1'$$) AS libc_desc_between,
  tam_ordered($$SELECT * FROM tam_rng_libc WHERE s <= 'Q1' ORDER BY s DESC LIMIT 50$$) AS libc_desc_le;
-- a prepared statement's parameter in a generic plan, NULL included
SET plan_cache_mode = force_generic_plan;
PREPARE tam_rng_p(bigint) AS SELECT count(*) FROM tam_rng WHERE a >= $1 AND a < 1000;
EXPLAIN (COSTS OFF) EXECUTE tam_rng_p(990);
EXECUTE tam_rng_p(990);
EXECUTE tam_rng_p(NULL);
SELECT count(*) FROM tam_rng WHERE a >= 990 AND a < 1000 AND b IS NOT NULL;
DEALLOCATE tam_rng_p;
RESET plan_cache_mode;
RESET xxl.full_scan;

-- with default_table_access_method = xxl the _into functions create xxl tables
SET default_table_access_method = xxl;
SELECT xxl.sort_into('SELECT g AS a, -g AS b FROM generate_series(1, 1000) g', 'b', 'tam_into_sorted');
SELECT xxl.connected_components_into('SELECT g AS source, g + 1 AS target FROM generate_series(1, 100) g',
  'tam_into_cc');
RESET default_table_access_method;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname IN ('tam_into_sorted', 'tam_into_cc') ORDER BY 1;
SELECT (SELECT count(*) FROM tam_into_sorted) AS sorted_rows,
  (SELECT string_agg(a::text, ',' ORDER BY ctid) FROM (SELECT a, ctid FROM tam_into_sorted LIMIT 3) s) AS first_in_place,
  (SELECT count(DISTINCT component) FROM tam_into_cc) AS components;
DROP TABLE tam_into_sorted, tam_into_cc;

-- values over 2 kB: compressed, or moved to the table's TOAST table, as heap does
CREATE TABLE tam_toast_heap (id int, t text, b bytea, m text, e text, j jsonb);
ALTER TABLE tam_toast_heap ALTER m SET STORAGE MAIN, ALTER e SET STORAGE EXTERNAL;
INSERT INTO tam_toast_heap
SELECT g, (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 400) i),
  decode((SELECT string_agg(md5((g + i)::text), '') FROM generate_series(1, 800) i), 'hex'),
  repeat('compressible ' || g, 5000), repeat('x', 3000 + g),
  (SELECT jsonb_agg(i) FROM generate_series(1, 2000 + g) i)
FROM generate_series(1, 20) g;
INSERT INTO tam_toast_heap VALUES (0, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE tam_toast (LIKE tam_toast_heap INCLUDING STORAGE) USING xxl;
SELECT xxl.alter_table_set('tam_toast', 'id');
INSERT INTO tam_toast SELECT * FROM tam_toast_heap;
SELECT xt_differ('tam_toast', 'tam_toast_heap') AS differing,
  (SELECT reltoastrelid <> 0 FROM pg_class WHERE relname = 'tam_toast') AS has_toast_table,
  pg_relation_size('tam_toast') < 8192 * 10 AS main_fork_small,
  (SELECT sum(length(t) + length(b) + length(m) + length(e)) FROM tam_toast) AS bytes;
-- TOASTed rows survive a compaction and an ordered, bounded scan
SELECT xxl.compact('tam_toast') AS segments_merged;
SELECT xt_differ('tam_toast', 'tam_toast_heap') AS differing_after_compact;
SELECT id, md5(t), length(m) FROM tam_toast WHERE id BETWEEN 3 AND 5 ORDER BY id;
-- a value that may not leave the row (STORAGE PLAIN) and does not fit a page
CREATE TABLE tam_plain (t text) USING xxl;
ALTER TABLE tam_plain ALTER t SET STORAGE PLAIN;
SELECT xt_try($$INSERT INTO tam_plain VALUES (repeat('p', 9000))$$);

-- many segments: a NOTICE suggests compaction; xxl.compact merges them
CREATE TABLE tam_many (a int) USING xxl;
SELECT xxl.alter_table_set('tam_many', 'a');
DO $$ BEGIN FOR i IN 1..64 LOOP INSERT INTO tam_many VALUES (65 - i); END LOOP; END $$;
SELECT xxl.compact('tam_many') AS segments_merged;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM tam_many ORDER BY a LIMIT 2;
SELECT string_agg(a::text, ',' ORDER BY ctid) = string_agg(a::text, ',' ORDER BY a) AS in_key_order,
  count(*) FROM tam_many;
SELECT xt_try($$SELECT xxl.compact('tam_heap')$$);

-- indexes: built from the committed rows; rows inserted later go in as they
-- come (so their index entries have TIDs); index, index-only and bitmap
-- scans give the rows a full scan gives; unique indexes refuse duplicates,
-- also within one statement
CREATE TABLE tam_idx (a int, b text, c int) USING xxl;
SELECT xxl.alter_table_set('tam_idx', 'a');
INSERT INTO tam_idx SELECT (g * 37) % 5003, 'b' || g, g FROM generate_series(1, 5000) g;
BEGIN;
INSERT INTO tam_idx VALUES (-1, 'rolled back', -1);
ROLLBACK;
CREATE INDEX tam_idx_b ON tam_idx (b);
CREATE UNIQUE INDEX tam_idx_c ON tam_idx (c);
CREATE INDEX tam_idx_expr ON tam_idx ((a % 100)) WHERE c > 100;
INSERT INTO tam_idx SELECT g, 'later' || g, 10000 + g FROM generate_series(1, 2000) g;
COPY tam_idx FROM STDIN;
7	copied	20001
8	copied	20002
\.
SELECT count(*), count(DISTINCT c) FROM tam_idx;
-- the rows q gives by index scans, by bitmap scans and by a full scan
CREATE FUNCTION tam_indexed(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE via_index text; via_bitmap text; via_seq text;
  agg text := 'SELECT md5(string_agg(x::text, '','' ORDER BY x::text)) FROM (%s) x';
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL xxl.ordered_scan = off;
  SET LOCAL enable_bitmapscan = off;
  EXECUTE format(agg, q) INTO via_index;
  SET LOCAL enable_bitmapscan = on;
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_indexonlyscan = off;
  EXECUTE format(agg, q) INTO via_bitmap;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_bitmapscan = off;
  EXECUTE format(agg, q) INTO via_seq;
  RETURN CASE WHEN via_index = via_seq AND via_bitmap = via_seq THEN 'same' ELSE 'DIFFERENT' END;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET xxl.ordered_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM tam_idx WHERE b = 'b77';
SELECT * FROM tam_idx WHERE b = 'b77';
SELECT * FROM tam_idx WHERE c = 10007;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tam_idx WHERE c BETWEEN 100 AND 3000;
SELECT count(*) FROM tam_idx WHERE c BETWEEN 100 AND 3000;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET xxl.ordered_scan;
SELECT tam_indexed($$SELECT * FROM tam_idx WHERE b BETWEEN 'b1' AND 'b2'$$) AS btree_range,
  tam_indexed('SELECT * FROM tam_idx WHERE c > 4990') AS unique_range,
  tam_indexed('SELECT * FROM tam_idx WHERE a % 100 = 7 AND c > 100') AS expression_partial,
  tam_indexed($$SELECT * FROM tam_idx WHERE b LIKE 'later1%' OR c < 10$$) AS bitmap_or;
SELECT xt_try('INSERT INTO tam_idx VALUES (1, $$dup$$, 10007)') AS duplicate;
SELECT xt_try('INSERT INTO tam_idx VALUES (1, $$x$$, 30000), (2, $$y$$, 30000)') AS duplicate_in_one_statement;
SELECT count(*) FROM tam_idx WHERE c = 30000;
-- the rows inserted after the indexes (scattered segments) in key order
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM tam_idx ORDER BY a LIMIT 1;
SELECT tam_ordered('SELECT * FROM tam_idx ORDER BY a, b') AS ordered_with_scattered;
-- compaction keeps the indexes right
SELECT xxl.compact('tam_idx') AS segments_merged;
SELECT tam_indexed('SELECT * FROM tam_idx WHERE c BETWEEN 4000 AND 12000') AS after_compact;
-- bitmap scans: a page of narrow rows holds up to 2048 rows, a TID names a
-- slice of 256 of them (offsets stay within a TID bitmap's 291); exact and
-- lossy bitmaps give what heap gives, and TIDs find their rows
CREATE TABLE tam_bm (a int, b int) USING xxl;
INSERT INTO tam_bm SELECT g, (g::bigint * 7919 % 10007)::int FROM generate_series(1, 300000) g;
CREATE INDEX tam_bm_b ON tam_bm (b);
CREATE TABLE tam_bm_heap AS TABLE tam_bm;
SELECT max((ctid::text::point)[1]) AS max_offset,
  count(DISTINCT (ctid::text::point)[0]::int % 8) AS slices_per_page FROM tam_bm;
SET enable_seqscan = off;
SET enable_indexscan = off;
SET xxl.ordered_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(a) FROM tam_bm WHERE b BETWEEN 100 AND 300;
SELECT (SELECT (count(*), sum(a)) FROM tam_bm WHERE b BETWEEN 100 AND 300) =
  (SELECT (count(*), sum(a)) FROM tam_bm_heap WHERE b BETWEEN 100 AND 300) AS exact_same;
SET work_mem = '64kB';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM tam_bm WHERE b < 5000;
SELECT (SELECT (count(*), sum(a), sum(b)) FROM tam_bm WHERE b < 5000) =
  (SELECT (count(*), sum(a), sum(b)) FROM tam_bm_heap WHERE b < 5000) AS lossy_same;
RESET work_mem;
RESET enable_seqscan;
RESET enable_indexscan;
RESET xxl.ordered_scan;
SELECT a, b FROM tam_bm WHERE ctid = (SELECT ctid FROM tam_bm WHERE a = 1000)
UNION ALL SELECT a, b FROM tam_bm WHERE ctid = (SELECT ctid FROM tam_bm WHERE a = 299999);
DROP TABLE tam_bm, tam_bm_heap;
-- a heap table with an index converted: its index is rebuilt over the xxl rows
CREATE TABLE tam_conv AS SELECT g AS a, md5(g::text) AS b FROM generate_series(1, 3000) g;
CREATE INDEX tam_conv_b ON tam_conv (b);
ALTER TABLE tam_conv SET ACCESS METHOD xxl;
SELECT tam_indexed($$SELECT * FROM tam_conv WHERE b < '1'$$) AS converted_index;
DROP TABLE tam_conv;
CREATE INDEX CONCURRENTLY tam_idx_a ON tam_idx (a);

-- what is not supported, and bad settings
SELECT xt_try('SELECT * FROM tam_tx TABLESAMPLE SYSTEM (50)');
-- ON CONFLICT is refused when the statement is analyzed, whatever the
-- data and the indexes (it was accepted when every row conflicted, or with
-- no unique index, and refused when one row would be inserted)
SELECT xt_try('INSERT INTO tam_tx VALUES (1) ON CONFLICT DO NOTHING') AS no_unique_index;
CREATE TABLE tam_oc (k int PRIMARY KEY, v text) USING xxl;
INSERT INTO tam_oc VALUES (1, 'a'), (2, 'b');
SELECT xt_try($$INSERT INTO tam_oc VALUES (1, 'x') ON CONFLICT DO NOTHING$$) AS all_conflict;
SELECT xt_try($$INSERT INTO tam_oc VALUES (1, 'x'), (3, 'c') ON CONFLICT DO NOTHING$$) AS one_new;
SELECT xt_try($$INSERT INTO tam_oc VALUES (2, 'x') ON CONFLICT (k) DO UPDATE SET v = 'u'$$) AS do_update;
SELECT xt_try($$WITH w AS (INSERT INTO tam_oc VALUES (4, 'd') ON CONFLICT DO NOTHING RETURNING k) SELECT * FROM w$$) AS in_cte;
PREPARE tam_oc_q AS INSERT INTO tam_oc VALUES (5, 'e') ON CONFLICT DO NOTHING;
SELECT k, v FROM tam_oc ORDER BY k;
-- RETURNING ctid: refused where rows are sorted and placed at the
-- statement's end (no index), the real TID where they are written at once
SELECT xt_try($$INSERT INTO tam_tx2 VALUES (1) RETURNING ctid$$) AS returning_ctid;
SELECT xt_try($$UPDATE tam_tx2 SET a = a + 1 WHERE a = 10 RETURNING a, ctid$$) AS update_returning_ctid;
SELECT xt_try($$WITH w AS (INSERT INTO tam_tx2 VALUES (2) RETURNING ctid::text) SELECT * FROM w$$) AS in_cte;
SELECT xt_try($$INSERT INTO tam_tx2 VALUES (3) RETURNING a$$) AS returning_columns;
CREATE TEMP TABLE tam_oc_tids AS WITH w AS (INSERT INTO tam_oc VALUES (6, 'f'), (7, 'g') RETURNING k, ctid AS tid) SELECT * FROM w;
SELECT count(*) AS tids_match FROM tam_oc_tids r JOIN tam_oc t ON t.ctid = r.tid AND t.k = r.k;
DROP TABLE tam_oc_tids;
DEALLOCATE ALL;
DROP TABLE tam_oc;
SELECT xt_try($$SELECT xxl.alter_table_set('tam_heap', 'a')$$);
SELECT xt_try($$SELECT xxl.alter_table_set('tam_tx', 'nosuch')$$);
SELECT xt_try($$SELECT xxl.alter_table_set('tam_tx', 'a +')$$);
CREATE TABLE tam_pt (p point) USING xxl;
SELECT xt_try($$SELECT xxl.alter_table_set('tam_pt', 'p')$$);
SELECT xt_try($$INSERT INTO tam_ctas VALUES (1, repeat('x', 9000))$$) AS long_value_compressed;
SELECT pg_temp.xt_role('tam_other');
SET ROLE tam_other;
SELECT xt_try($$SELECT xxl.alter_table_set('tam_tx', 'a')$$);
SELECT xt_try($$INSERT INTO xxl.table_options VALUES ('tam_tx', 'a')$$);
RESET ROLE;
SELECT pg_temp.xt_drop_role('tam_other');
-- a dropped table's settings go with it
DROP TABLE tam_big;
SELECT count(*) AS settings_of_dropped FROM xxl.table_options o
WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = o.relation);
-- pg_dump dumps the settings table
SELECT extconfig::regclass[] FROM pg_extension WHERE extname = 'pgxxl';
-- a function's SELECT (through SPI) inside a transaction's first statement
-- does not end that statement's write: the rows stay one segment (each row
-- was flushed as a segment of its own: 1005 pages instead of 3)
CREATE TABLE tam_spi (k int, v int) USING xxl;
SELECT xxl.alter_table_set('tam_spi', order_by => 'k');
CREATE FUNCTION pg_temp.spi_read(i int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
  SELECT count(*) INTO n FROM pg_namespace WHERE oid < 0;
  RETURN i + n;
END $$;
INSERT INTO tam_spi SELECT 1001 - g, pg_temp.spi_read(g) FROM generate_series(1, 1000) g;
SELECT pg_relation_size('tam_spi') / 8192 AS pages, count(*) AS rows,
  bool_and(k + v = 1001) AS right FROM tam_spi;
-- the session is still usable
SELECT count(*) FROM tam_tx;
DROP TABLE tam_spi;
DROP TABLE tam_types, tam_types_heap, tam_types_copy, tam_sorted, tam_tx, tam_tx2, tam_ctas,
  tam_heap, tam_pt, tam_ord, tam_rng, tam_rng_desc, tam_rng_text, tam_rng_icu, tam_rng_libc, tam_toast, tam_toast_heap, tam_plain,
  tam_many, tam_idx;
DROP FUNCTION xt_try, xt_differ, xt_leftovers, tam_ordered(text), tam_indexed(text);
\i test/include/end.sql

-- table_packed.sql — packed pages of xxl tables (xxl_table_packed.c): rows of
-- fixed width stored column by column, integers in the bits they need.  The
-- same rows go into a packed xxl table, a plain one (xxl.table_compression
-- off) and a heap, and every reader must return the same: the full scan, the
-- sequential scan, the ordered scan with and without key bounds, index and
-- bitmap scans (one row decoded by TID), DELETE and UPDATE, compaction, ALTER
-- TABLE (an added column, a dropped one, a retyped one), ANALYZE, the
-- operators' direct readers, and the full scan's page bounds, which skip
-- packed pages by each integer column's least and greatest value.  Columns:
-- every integer width with its extremes, dates, timestamps, booleans, floats,
-- uuids (stored raw), NULLs here and there, a column that is NULL on whole
-- pages and a constant one.
\i test/include/begin.sql
\i test/include/helpers.sql
SET max_parallel_workers_per_gather = 0;

CREATE FUNCTION pk_rows(n int) RETURNS TABLE (k bigint, i2 smallint, i4 int, i8 bigint,
    d date, ts timestamp, tz timestamptz, flag boolean, f float8, u uuid, sparse int, c int)
LANGUAGE sql AS $$
  SELECT g::bigint * 7919 % 100003,
         CASE WHEN g % 97 = 0 THEN NULL WHEN g % 5 = 0 THEN -32768 WHEN g % 7 = 0 THEN 32767
              ELSE (g % 300 - 150) END::smallint,
         CASE WHEN g % 11 = 0 THEN -2147483648 WHEN g % 13 = 0 THEN 2147483647 ELSE g * 3 END,
         CASE WHEN g % 17 = 0 THEN -9223372036854775808 WHEN g % 19 = 0 THEN 9223372036854775807
              WHEN g % 89 = 0 THEN NULL ELSE g::bigint * g END,
         date '2000-01-01' + g % 5000,
         timestamp '2020-01-01' + g * interval '00:00:01',
         CASE WHEN g % 23 = 0 THEN NULL ELSE timestamptz '2020-01-01 00:00+00' - g * interval '1 minute' END,
         CASE WHEN g % 3 = 0 THEN NULL ELSE g % 2 = 0 END,
         CASE WHEN g % 29 = 0 THEN 'NaN'::float8 ELSE g / 7.0 END,
         md5(g::text)::uuid,
         CASE WHEN g BETWEEN 3000 AND 9000 THEN NULL ELSE g END,
         42
  FROM generate_series(1, n) g
$$;

CREATE TABLE pk_x (k bigint, i2 smallint, i4 int, i8 bigint, d date, ts timestamp,
                   tz timestamptz, flag boolean, f float8, u uuid, sparse int, c int) USING xxl;
SELECT xxl.alter_table_set('pk_x', order_by => 'k');
CREATE TABLE pk_p (LIKE pk_x) USING xxl;
SELECT xxl.alter_table_set('pk_p', order_by => 'k');
CREATE TABLE pk_h (LIKE pk_x);
INSERT INTO pk_x SELECT * FROM pk_rows(20000);
SET xxl.table_compression = off;
INSERT INTO pk_p SELECT * FROM pk_rows(20000);
RESET xxl.table_compression;
INSERT INTO pk_h SELECT * FROM pk_rows(20000);
-- a second segment of each, unsorted by the key (no key for a while)
SELECT xxl.alter_table_set('pk_x', order_by => NULL);
INSERT INTO pk_x SELECT * FROM pk_rows(5000);
SELECT xxl.alter_table_set('pk_x', order_by => 'k');
INSERT INTO pk_p SELECT * FROM pk_rows(5000);
INSERT INTO pk_h SELECT * FROM pk_rows(5000);
ANALYZE pk_x;
ANALYZE pk_p;

-- packing happened, and pays (uuids, floats and integers at their extremes
-- take their bytes; the rest shrink)
SELECT pg_relation_size('pk_x') * 4 < pg_relation_size('pk_p') * 3 AS packed_smaller,
       pg_relation_size('pk_p') < pg_relation_size('pk_h') AS plain_smaller_than_heap;

-- the full scan, the sequential scan, both tables against the heap
SELECT xt_differ('pk_x', 'pk_h') AS full_scan, xt_differ('pk_p', 'pk_h') AS plain_full_scan;
SET xxl.full_scan = off;
SELECT xt_differ('pk_x', 'pk_h') AS seq_scan;
SELECT xt_differ('SELECT i8, tz FROM pk_x', 'SELECT i8, tz FROM pk_h') AS seq_columns;
RESET xxl.full_scan;
SELECT xt_differ('SELECT u, i2, flag FROM pk_x', 'SELECT u, i2, flag FROM pk_h') AS some_columns,
       xt_differ('SELECT sparse, c, k FROM pk_x', 'SELECT sparse, c, k FROM pk_h') AS packed_columns;
SELECT count(*), sum(i8::numeric), sum(i4), sum(i2), min(ts), max(tz), count(sparse), sum(c)
FROM pk_x;
SELECT count(*), sum(i8::numeric), sum(i4), sum(i2), min(ts), max(tz), count(sparse), sum(c)
FROM pk_h;

-- in key order: the merged cursors decode pages, the sorter's rows too
SELECT md5(string_agg(x::text, ',' ORDER BY x.k, x.i4)) = (SELECT md5(string_agg(h::text, ',' ORDER BY h.k, h.i4)) FROM pk_h h) AS ordered
FROM (SELECT * FROM pk_x ORDER BY k) x;
EXPLAIN (COSTS OFF) SELECT * FROM pk_x WHERE k BETWEEN 500 AND 900;
SELECT xt_differ('SELECT * FROM pk_x WHERE k BETWEEN 500 AND 900',
                 'SELECT * FROM pk_h WHERE k BETWEEN 500 AND 900') AS key_range;

-- page bounds on other columns: conditions keep the full scan, which skips
-- the packed pages whose values of a bounded column lie outside
CREATE TABLE pk_t (t timestamptz, id int, v bigint) USING xxl;
SELECT xxl.alter_table_set('pk_t', order_by => 'id');
INSERT INTO pk_t SELECT timestamptz '2024-01-01 00:00+00' + g * interval '1 minute', g, g % 1000
FROM generate_series(1, 50000) g;
CREATE TABLE pk_th AS SELECT * FROM pk_t;
ANALYZE pk_t;
-- t rises with the key: a day of it is a few pages
EXPLAIN (COSTS OFF) SELECT * FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11';
-- (aggregates over it: the aggregate scan, which skips the same pages)
EXPLAIN (COSTS OFF) SELECT count(*) FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11';
CREATE FUNCTION pk_skipped(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE plan json; node json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || q INTO plan;
  node := plan -> 0 -> 'Plan';
  WHILE node ->> 'Node Type' <> 'Custom Scan' LOOP node := node -> 'Plans' -> 0; END LOOP;
  RETURN format('%s of %s pages skipped', node ->> 'Pages Skipped',
                pg_relation_size('pk_t') / current_setting('block_size')::int - 1);
END $$;
SELECT pk_skipped($$SELECT * FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11'$$) AS full_scan,
       pk_skipped($$SELECT count(*) FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11'$$) AS aggregate_scan;
SELECT xt_differ($$SELECT * FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11'$$,
                 $$SELECT * FROM pk_th WHERE t >= '2024-01-10' AND t < '2024-01-11'$$) AS day;
-- every strategy, a cross-type literal, a contradiction, a NULL, a parameter
SELECT xt_differ('SELECT * FROM pk_t WHERE v = 7', 'SELECT * FROM pk_th WHERE v = 7') AS eq,
       xt_differ('SELECT * FROM pk_t WHERE 100 > v', 'SELECT * FROM pk_th WHERE 100 > v') AS commuted,
       xt_differ('SELECT * FROM pk_t WHERE v <= 0', 'SELECT * FROM pk_th WHERE v <= 0') AS le,
       xt_differ('SELECT * FROM pk_t WHERE v > 998', 'SELECT * FROM pk_th WHERE v > 998') AS gt;
PREPARE pk_n(bigint) AS SELECT * FROM pk_t WHERE v = $1;
SET plan_cache_mode = force_generic_plan;
SELECT pk_skipped('SELECT * FROM pk_t WHERE v > 5 AND v < 3') AS contradiction,
       pk_skipped('EXECUTE pk_n(NULL)') AS null_bound,
       pk_skipped('SELECT * FROM pk_t WHERE v > 9223372036854775807') AS past_the_end;
RESET plan_cache_mode;
DEALLOCATE pk_n;
SELECT count(*) FROM pk_t WHERE v > 5 AND v < 3;
PREPARE pk_q(timestamptz, timestamptz) AS SELECT count(*), sum(v) FROM pk_t WHERE t BETWEEN $1 AND $2;
SET plan_cache_mode = force_generic_plan;
EXECUTE pk_q('2024-01-02', '2024-01-03');
EXECUTE pk_q('2024-02-02', '2024-02-03');
SELECT count(*), sum(v) FROM pk_th WHERE t BETWEEN '2024-02-02' AND '2024-02-03';
RESET plan_cache_mode;
DEALLOCATE pk_q;
-- a condition on a column NULL on every row of some pages skips them too
SELECT xt_differ('SELECT k, sparse FROM pk_x WHERE sparse > 100',
                 'SELECT k, sparse FROM pk_h WHERE sparse > 100') AS sparse_bound;
-- with the setting off, no bounds and the same rows
SET xxl.full_scan = off;
SELECT count(*), sum(v) FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11';
RESET xxl.full_scan;
SELECT count(*), sum(v) FROM pk_t WHERE t >= '2024-01-10' AND t < '2024-01-11';

-- rows by TID: an index on a packed column, index and bitmap scans
CREATE INDEX pk_x_i4 ON pk_x (i4);
CREATE INDEX pk_h_i4 ON pk_h (i4);
SET enable_seqscan = off;
SET xxl.full_scan = off;
SET xxl.ordered_scan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pk_x WHERE i4 BETWEEN 3000 AND 9000;
SELECT xt_differ('SELECT * FROM pk_x WHERE i4 BETWEEN 3000 AND 9000',
                 'SELECT * FROM pk_h WHERE i4 BETWEEN 3000 AND 9000') AS index_scan;
RESET enable_bitmapscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pk_x WHERE i4 BETWEEN 3000 AND 9000;
SELECT xt_differ('SELECT * FROM pk_x WHERE i4 BETWEEN 3000 AND 9000',
                 'SELECT * FROM pk_h WHERE i4 BETWEEN 3000 AND 9000') AS bitmap_scan;
RESET enable_indexscan;
RESET enable_seqscan;
RESET xxl.full_scan;
RESET xxl.ordered_scan;

-- DELETE and UPDATE over packed pages; their new rows are packed too
DELETE FROM pk_x WHERE k % 10 = 3;
DELETE FROM pk_h WHERE k % 10 = 3;
UPDATE pk_x SET i8 = i8 / 3, k = k + 1 WHERE i4 % 7 = 1;
UPDATE pk_h SET i8 = i8 / 3, k = k + 1 WHERE i4 % 7 = 1;
SELECT xt_differ('pk_x', 'pk_h') AS after_dml;
SELECT xxl.compact('pk_x') > 0 AS compacted;
SELECT xt_differ('pk_x', 'pk_h') AS after_compaction;
SELECT md5(string_agg(x::text, ',' ORDER BY x.k, x.i4)) = (SELECT md5(string_agg(h::text, ',' ORDER BY h.k, h.i4)) FROM pk_h h) AS ordered_after_compaction
FROM (SELECT * FROM pk_x ORDER BY k) x;

-- schema changes: an added column is missing from older packed pages, a
-- dropped one keeps its place, a retyped one rewrites the table
ALTER TABLE pk_x ADD COLUMN extra int DEFAULT 5;
ALTER TABLE pk_h ADD COLUMN extra int DEFAULT 5;
INSERT INTO pk_x SELECT *, 6 FROM pk_rows(300);
INSERT INTO pk_h SELECT *, 6 FROM pk_rows(300);
ALTER TABLE pk_x DROP COLUMN i2;
ALTER TABLE pk_h DROP COLUMN i2;
SELECT xt_differ('pk_x', 'pk_h') AS added_and_dropped;
SELECT count(*) FROM pk_x WHERE extra = 5;
ALTER TABLE pk_x ALTER COLUMN i4 TYPE bigint;
ALTER TABLE pk_h ALTER COLUMN i4 TYPE bigint;
SELECT xt_differ('pk_x', 'pk_h') AS retyped;
SELECT xt_differ('SELECT k, extra, i4 FROM pk_x WHERE extra > 5',
                 'SELECT k, extra, i4 FROM pk_h WHERE extra > 5') AS bound_on_added_column;

-- the operators read packed pages straight (runs of decoded rows)
CREATE TABLE pk_e (id bigint, source int, target int, cost float8) USING xxl;
INSERT INTO pk_e SELECT g, g % 700, (g * 13) % 700, g % 9 FROM generate_series(1, 6000) g;
CREATE TABLE pk_eh AS SELECT * FROM pk_e;
SELECT xt_differ('SELECT * FROM xxl.connected_components(''pk_e'')',
                 'SELECT * FROM xxl.connected_components(''pk_eh'')') AS components,
       xt_differ('SELECT * FROM xxl.shortest_paths(''pk_e'', 1)',
                 'SELECT * FROM xxl.shortest_paths(''pk_eh'', 1)') AS paths;

-- rows of variable width: text of few distinct values (a dictionary per
-- page), text of many (back to back), numeric, jsonb, arrays, NULLs, values
-- TOASTed, a dropped and an added text column; every reader as above
CREATE TABLE pk_v (k int, city text, note text, amount numeric, doc jsonb, tags int[],
                   big text) USING xxl;
SELECT xxl.alter_table_set('pk_v', order_by => 'k');
CREATE TABLE pk_vp (LIKE pk_v) USING xxl;
SELECT xxl.alter_table_set('pk_vp', order_by => 'k');
CREATE TABLE pk_vh (LIKE pk_v);
CREATE FUNCTION pk_vrows(n int) RETURNS SETOF pk_vh LANGUAGE sql AS $$
  SELECT g, (ARRAY['Berlin', 'Paris', 'Rome', NULL, 'Zürich', ''])[1 + g % 6],
         CASE WHEN g % 4 = 0 THEN NULL ELSE 'note ' || md5(g::text) END,
         CASE WHEN g % 5 = 0 THEN NULL ELSE g * 1.25 END,
         CASE WHEN g % 3 = 0 THEN NULL ELSE jsonb_build_object('g', g, 'odd', g % 2 = 1) END,
         ARRAY[g, g % 7],
         CASE WHEN g % 1000 = 1 THEN repeat(md5(g::text), 200) ELSE NULL END
  FROM generate_series(1, n) g
$$;
INSERT INTO pk_v SELECT * FROM pk_vrows(20000);
SET xxl.table_compression = off;
INSERT INTO pk_vp SELECT * FROM pk_vrows(20000);
RESET xxl.table_compression;
INSERT INTO pk_vh SELECT * FROM pk_vrows(20000);
-- (these rows are mostly distinct strings, numerics and documents: about as
-- large packed as plain; the page takes the form that holds more rows)
SELECT pg_relation_size('pk_v') <= pg_relation_size('pk_vp') AS never_larger;
-- a status of four values (a dictionary), short codes of thousands (back to
-- back), integers (bits); whole pages, and one row at a time through an index
CREATE TABLE pk_s (k bigint, status text, code text, ts timestamptz, amount int) USING xxl;
CREATE TABLE pk_sp (LIKE pk_s) USING xxl;
INSERT INTO pk_s SELECT g, (ARRAY['new', 'paid', 'shipped', 'returned'])[1 + hashint4(g) & 3],
  CASE WHEN g % 9 = 0 THEN NULL ELSE 'c' || g % 5000 END,
  timestamptz '2024-01-01' + g * interval '00:00:01', g % 1000 FROM generate_series(1, 50000) g;
SET xxl.table_compression = off;
INSERT INTO pk_sp SELECT * FROM pk_s;
RESET xxl.table_compression;
SELECT pg_relation_size('pk_s') * 3 < pg_relation_size('pk_sp') AS dictionary_pays,
       xt_differ('pk_s', 'pk_sp') AS dictionary_rows;
CREATE INDEX pk_s_amount ON pk_s (amount);
SET enable_seqscan = off;
SET xxl.full_scan = off;
SET xxl.ordered_scan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pk_s WHERE amount = 77;
SELECT xt_differ('SELECT * FROM pk_s WHERE amount IN (77, 501)',
                 'SELECT * FROM pk_sp WHERE amount IN (77, 501)') AS by_index;
RESET enable_seqscan;
RESET xxl.full_scan;
RESET xxl.ordered_scan;
RESET enable_bitmapscan;
SELECT xt_differ('pk_v', 'pk_vh') AS full_scan, xt_differ('pk_vp', 'pk_vh') AS plain;
SET xxl.full_scan = off;
SELECT xt_differ('pk_v', 'pk_vh') AS seq_scan;
RESET xxl.full_scan;
SELECT md5(string_agg(x::text, ',' ORDER BY x.k)) = (SELECT md5(string_agg(h::text, ',' ORDER BY h.k)) FROM pk_vh h) AS ordered
FROM (SELECT * FROM pk_v ORDER BY k) x;
SELECT xt_differ('SELECT city, count(*), sum(amount) FROM pk_v GROUP BY city',
                 'SELECT city, count(*), sum(amount) FROM pk_vh GROUP BY city') AS grouped,
       xt_differ('SELECT * FROM pk_v WHERE k BETWEEN 700 AND 1300',
                 'SELECT * FROM pk_vh WHERE k BETWEEN 700 AND 1300') AS key_range;
-- one row by TID (an index on the dictionary column), a bitmap scan
CREATE INDEX pk_v_city ON pk_v (city);
SET enable_seqscan = off;
SET xxl.full_scan = off;
SET xxl.ordered_scan = off;
SELECT xt_differ($$SELECT * FROM pk_v WHERE city = 'Zürich'$$,
                 $$SELECT * FROM pk_vh WHERE city = 'Zürich'$$) AS by_index;
RESET enable_seqscan;
RESET xxl.full_scan;
RESET xxl.ordered_scan;
-- DML, a dropped and an added column, compaction
DELETE FROM pk_v WHERE k % 7 = 0;
DELETE FROM pk_vh WHERE k % 7 = 0;
UPDATE pk_v SET city = 'Oslo', note = NULL WHERE k % 11 = 0;
UPDATE pk_vh SET city = 'Oslo', note = NULL WHERE k % 11 = 0;
ALTER TABLE pk_v DROP COLUMN note;
ALTER TABLE pk_vh DROP COLUMN note;
ALTER TABLE pk_v ADD COLUMN extra text DEFAULT 'x';
ALTER TABLE pk_vh ADD COLUMN extra text DEFAULT 'x';
INSERT INTO pk_v (k, city, extra) SELECT g, 'Rome', 'y' || g % 3 FROM generate_series(20001, 21000) g;
INSERT INTO pk_vh (k, city, extra) SELECT g, 'Rome', 'y' || g % 3 FROM generate_series(20001, 21000) g;
SELECT xt_differ('pk_v', 'pk_vh') AS after_dml;
SELECT xxl.compact('pk_v') > 0 AS compacted;
SELECT xt_differ('pk_v', 'pk_vh') AS after_compaction;
SELECT count(*), count(big), sum(length(big)) FROM pk_v;

-- columns that do not shrink (random floats) give plain pages: no more pages than off
CREATE TABLE pk_r (f float8, g float8) USING xxl;
CREATE TABLE pk_rp (f float8, g float8) USING xxl;
INSERT INTO pk_r SELECT sin(g) * 1e9, cos(g) FROM generate_series(1, 20000) g;
SET xxl.table_compression = off;
INSERT INTO pk_rp SELECT sin(g) * 1e9, cos(g) FROM generate_series(1, 20000) g;
RESET xxl.table_compression;
SELECT pg_relation_size('pk_r') <= pg_relation_size('pk_rp') AS never_larger;
SELECT xt_differ('pk_r', 'pk_rp') AS floats;

DROP FUNCTION xt_try, xt_differ, xt_leftovers, pk_rows(int), pk_vrows(int), pk_skipped(text);
DROP TABLE pk_x, pk_p, pk_h, pk_t, pk_th, pk_e, pk_eh, pk_r, pk_rp, pk_v, pk_vp, pk_vh, pk_s, pk_sp;
\i test/include/end.sql

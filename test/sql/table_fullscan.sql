-- table_fullscan.sql — the full scan node for whole xxl tables
-- (xxl_table_fullscan.c): where the planner uses it (conditions too, on
-- columns the plan does not return) and where it must not (a row lock,
-- UPDATE and DELETE targets, TABLESAMPLE, system columns, whole-row
-- references in the plan or a condition, xxl.full_scan off), and the same
-- rows with it on and off: types, NULLs, TOASTed values, dropped and added columns,
-- deleted rows, an aborted insert, an empty table, projections, rescans in
-- a nested loop, a scroll cursor and parallel plans.
\i test/include/begin.sql
\i test/include/helpers.sql
SET max_parallel_workers_per_gather = 0;

-- q's rows with the node and without it, as multisets
CREATE FUNCTION fs_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  d bigint;
BEGIN
  PERFORM set_config('xxl.full_scan', 'on', true);
  EXECUTE 'CREATE TEMP TABLE fs_on AS ' || q;
  PERFORM set_config('xxl.full_scan', 'off', true);
  EXECUTE 'CREATE TEMP TABLE fs_off AS ' || q;
  PERFORM set_config('xxl.full_scan', 'on', true);
  d := xt_differ('fs_on', 'fs_off');
  SELECT count(*) INTO n FROM fs_on;
  DROP TABLE fs_on;
  DROP TABLE fs_off;
  RETURN format('%s rows, %s differ', n, d);
END $$;

CREATE TABLE tfs (a bigint, b bigint) USING xxl;
SELECT xxl.alter_table_set('tfs', order_by => 'a');
INSERT INTO tfs SELECT g % 1000, g FROM generate_series(1, 20000) g;
INSERT INTO tfs VALUES (NULL, 1), (5, NULL), (NULL, NULL);
ANALYZE tfs;

-- where it stands
EXPLAIN (COSTS OFF) SELECT count(*), sum(b) FROM tfs;
EXPLAIN (COSTS OFF, VERBOSE) SELECT b, a FROM tfs;
EXPLAIN (COSTS OFF, VERBOSE) SELECT a + b FROM tfs;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tfs;
EXPLAIN (COSTS OFF) SELECT * FROM tfs t JOIN tfs u ON t.b = u.a;
-- conditions: filtered in the node, their columns read with the plan's
EXPLAIN (COSTS OFF) SELECT count(*) FROM tfs WHERE b > 5;
EXPLAIN (COSTS OFF, VERBOSE) SELECT a FROM tfs WHERE b > 5 AND a + b < 900;
SELECT fs_same('SELECT a FROM tfs WHERE b > 5 AND a + b < 900');
SELECT fs_same('SELECT b FROM tfs WHERE a IS NULL OR b IS NULL');
SELECT fs_same('SELECT a, b FROM tfs WHERE b IN (SELECT a FROM tfs WHERE a < 20)');

-- where it must not
EXPLAIN (COSTS OFF) SELECT a FROM tfs t WHERE t IS NOT NULL;
EXPLAIN (COSTS OFF) SELECT a FROM tfs WHERE ctid > '(1,1)';
EXPLAIN (COSTS OFF) SELECT ctid, a FROM tfs;
EXPLAIN (COSTS OFF) SELECT t FROM tfs t;
EXPLAIN (COSTS OFF) SELECT * FROM tfs FOR UPDATE;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tfs TABLESAMPLE SYSTEM (50);
EXPLAIN (COSTS OFF) DELETE FROM tfs USING tfs u WHERE tfs.a = u.b;
SET xxl.full_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b) FROM tfs;
RESET xxl.full_scan;

-- the same rows, on and off
SELECT fs_same('SELECT count(*) AS n, sum(a) AS sa, sum(b) AS sb, count(a) AS na, count(b) AS nb FROM tfs');
SELECT fs_same('SELECT a, b FROM tfs');
SELECT fs_same('SELECT b, a, b AS b2 FROM tfs');
SELECT fs_same('SELECT a + b, coalesce(a, -1) FROM tfs');
SELECT fs_same('SELECT t.a, u.b FROM tfs t JOIN tfs u ON t.b = u.a');
-- deleted rows, and an insert rolled back
DELETE FROM tfs WHERE b % 7 = 0;
BEGIN;
INSERT INTO tfs SELECT g, g FROM generate_series(1, 500) g;
ROLLBACK;
SELECT fs_same('SELECT a, b FROM tfs');
SELECT count(*), sum(b) FROM tfs;
-- against a heap table of the same rows (the node reads tfs here)
CREATE TABLE tfs_heap (a bigint, b bigint);
INSERT INTO tfs_heap SELECT g % 1000, g FROM generate_series(1, 20000) g WHERE g % 7 <> 0;
INSERT INTO tfs_heap VALUES (NULL, 1), (5, NULL), (NULL, NULL);
SELECT (SELECT count(*) FROM (SELECT a, b FROM tfs EXCEPT ALL SELECT a, b FROM tfs_heap) d) +
       (SELECT count(*) FROM (SELECT a, b FROM tfs_heap EXCEPT ALL SELECT a, b FROM tfs) d)
  AS differ_from_heap;
DROP TABLE tfs_heap;

-- types, NULLs, long and TOASTed values, dropped and added columns
CREATE TABLE tfs_types (i2 smallint, i4 integer, i8 bigint, f8 double precision, n numeric,
  t text, by bytea, ts timestamptz, arr int[], j jsonb, u uuid) USING xxl;
INSERT INTO tfs_types
SELECT g::smallint, g, g * 1000000000000, g / 7.0, (g * 12345.6789)::numeric(20, 4),
  repeat('x', g % 50) || g, decode(md5(g::text), 'hex'),
  make_timestamptz(2020, 1, 1, 0, 0, 0, 'UTC') + make_interval(days => g),
  ARRAY[g, NULL], jsonb_build_object('g', g), md5(g::text)::uuid
FROM generate_series(1, 400) g;
INSERT INTO tfs_types (i4, t) VALUES (NULL, NULL), (1, repeat('long', 3000)),
  (2, (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g));
SELECT fs_same('SELECT i2, i4, i8, f8, n, t, by, ts, arr, j::text, u FROM tfs_types');
SELECT fs_same('SELECT length(t), t FROM tfs_types');
ALTER TABLE tfs_types DROP COLUMN by;
ALTER TABLE tfs_types ADD COLUMN added int DEFAULT 42, ADD COLUMN added_null text;
INSERT INTO tfs_types (i4, added, added_null) VALUES (9999, 7, 'new');
SELECT fs_same('SELECT i4, t, added, added_null FROM tfs_types');
SELECT added, count(*) FROM tfs_types GROUP BY added ORDER BY added;
-- by-value columns of other widths, and 8-byte ones with a dropped column
CREATE TABLE tfs_byval (b boolean, i2 smallint, i4 integer, f4 real, d date) USING xxl;
INSERT INTO tfs_byval SELECT g % 2 = 0, g::smallint, g, g / 3.0, date '2000-01-01' + g
FROM generate_series(1, 1000) g;
INSERT INTO tfs_byval VALUES (NULL, NULL, NULL, NULL, NULL);
SELECT fs_same('SELECT d, i4, b, f4, i2 FROM tfs_byval');
CREATE TABLE tfs_drop (a bigint, gone bigint, b bigint) USING xxl;
INSERT INTO tfs_drop SELECT g, -g, g * 2 FROM generate_series(1, 1000) g;
ALTER TABLE tfs_drop DROP COLUMN gone;
SELECT fs_same('SELECT b, a FROM tfs_drop');
-- an empty table
CREATE TABLE tfs_empty (a bigint) USING xxl;
SELECT fs_same('SELECT count(*) AS n, sum(a) AS s FROM tfs_empty');

-- partitions that are xxl tables, each read by the node; UPDATE of the parent reads them by sequential scans
CREATE TABLE tfs_parts (k int, v bigint) PARTITION BY RANGE (k);
CREATE TABLE tfs_p1 PARTITION OF tfs_parts FOR VALUES FROM (0) TO (100) USING xxl;
CREATE TABLE tfs_p2 PARTITION OF tfs_parts FOR VALUES FROM (100) TO (200) USING xxl;
CREATE TABLE tfs_p3 PARTITION OF tfs_parts FOR VALUES FROM (200) TO (300);
INSERT INTO tfs_parts SELECT g % 300, g FROM generate_series(1, 3000) g;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM tfs_parts;
EXPLAIN (COSTS OFF) UPDATE tfs_parts SET v = v + 1 WHERE v < 0;
EXPLAIN (COSTS OFF) UPDATE tfs_parts SET v = v + 1;
SELECT fs_same('SELECT k, v FROM tfs_parts');
SELECT count(*), sum(v) FROM tfs_parts;
DROP TABLE tfs_parts;

-- rescans: the node inside a nested loop, read again for each outer row
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF) SELECT s.g, count(*) FROM generate_series(1, 3) s(g) JOIN tfs ON tfs.b % 3 = s.g % 3 GROUP BY s.g;
SELECT fs_same('SELECT s.g, count(*) AS n, sum(tfs.a) AS s FROM generate_series(1, 3) s(g) JOIN tfs ON tfs.b % 3 = s.g % 3 GROUP BY s.g');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a scroll cursor: the planner puts a Materialize above the node (it cannot go backwards)
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT b FROM tfs;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT b FROM tfs;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 1000 FROM c;
FETCH LAST FROM c;
COMMIT;

-- parallel plans keep the parallel sequential scan (aggregates the
-- aggregate scan does not take: it would win over them)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b + 1) FROM tfs;
SELECT fs_same('SELECT count(*) AS n, sum(b + 1) AS s FROM tfs');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE tfs, tfs_types, tfs_byval, tfs_drop, tfs_empty;
DROP FUNCTION xt_try, xt_differ, xt_leftovers, fs_same(text);
\i test/include/end.sql

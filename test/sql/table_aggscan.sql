-- table_aggscan.sql — whole-table aggregates of xxl tables computed in the
-- scan (xxl_table_aggscan.c): where the planner uses the node and where it
-- must not, and the same answers as PostgreSQL's own aggregates (the node
-- off, and a heap copy): every aggregate it takes over every integer width,
-- dates and timestamps, NULLs, sums past bigint, empty tables and all-NULL
-- columns, conditions that bound integer-ordered columns (applied a column
-- at a time, packed pages skipped) and ones it leaves to the Aggregate,
-- deleted rows, plain pages (rows of variable width), a column
-- added later (its default), rescans with new parameters, and the rights of
-- an ordinary role.
\i test/include/begin.sql
\i test/include/helpers.sql
SET max_parallel_workers_per_gather = 0;

CREATE TABLE ag_x (k bigint, i2 smallint, i4 int, i8 bigint, d date, ts timestamp,
                   tz timestamptz, t time, note text) USING xxl;
SELECT xxl.alter_table_set('ag_x', order_by => 'k');
INSERT INTO ag_x SELECT g,
  CASE WHEN g % 10 = 0 THEN NULL ELSE (g % 60000 - 30000) END,
  CASE WHEN g % 7 = 0 THEN 2147483647 ELSE -g END,
  CASE WHEN g % 11 = 0 THEN NULL WHEN g % 2 = 0 THEN 9223372036854775807 ELSE 9223372036854775000 - g END,
  date '1999-12-31' + g % 9000,
  CASE WHEN g % 13 = 0 THEN NULL ELSE timestamp '2001-02-03 04:05:06' + g * interval '1 hour' END,
  timestamptz '1970-01-01 00:00+00' - g * interval '1 day',
  time '00:00:01' + g * interval '00:00:01',
  NULL
FROM generate_series(1, 30000) g;
CREATE TABLE ag_h AS SELECT * FROM ag_x;
ANALYZE ag_x;

-- all the aggregates, against the node off and against the heap
CREATE FUNCTION ag_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text; b text; c text; plan text;
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 'ag_x') INTO plan;
  EXECUTE format('SELECT t::text FROM (%s) t', format(q, 'ag_x')) INTO a;
  PERFORM set_config('xxl.full_scan', 'off', true);
  EXECUTE format('SELECT t::text FROM (%s) t', format(q, 'ag_x')) INTO b;
  PERFORM set_config('xxl.full_scan', 'on', true);
  EXECUTE format('SELECT t::text FROM (%s) t', format(q, 'ag_h')) INTO c;
  RETURN format('%s: %s', plan, CASE WHEN a = b AND a = c THEN 'same: ' || a
                               ELSE format('differ: %s | %s | %s', a, b, c) END);
END $$;
SELECT ag_same('SELECT count(*), count(i2), count(note), sum(i2), sum(i4), sum(i8), avg(i2), avg(i4), avg(i8) FROM %I');
SELECT ag_same('SELECT min(i2), max(i2), min(i4), max(i4), min(i8), max(i8), min(k), max(k) FROM %I');
SELECT ag_same('SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz), min(t), max(t) FROM %I');
-- expressions over the aggregates, the same aggregate twice, a constant
SELECT ag_same('SELECT sum(i4) * 2 + count(*), sum(i4), 7 AS seven, max(k) - min(k) FROM %I');
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*), sum(i8) / 2 FROM ag_x;

-- conditions that bound integer-ordered columns: filtered here, a column at a time
SELECT ag_same('SELECT count(*), sum(i4), min(ts), max(i8) FROM %I WHERE k BETWEEN 1000 AND 2999');
SELECT ag_same('SELECT count(*), sum(i2), avg(i4) FROM %I WHERE i4 >= -20000 AND i4 < -100 AND 5 < k');
-- (a wider literal against a narrower column is no bound: the Aggregate filters)
SELECT ag_same('SELECT count(*), sum(i2) FROM %I WHERE i2 > -100');
SELECT ag_same($$SELECT count(*), count(ts), max(tz) FROM %I WHERE d = '2010-06-01' OR FALSE$$);
SELECT ag_same($$SELECT count(*), sum(i4) FROM %I WHERE ts >= '2002-01-01' AND ts < '2002-02-01' AND t > '01:00'$$);
SELECT ag_same('SELECT count(*), sum(i4) FROM %I WHERE i8 = 9223372036854775807');
SELECT ag_same('SELECT count(*), sum(i4), max(k) FROM %I WHERE k > 10 AND k < 5');
SELECT ag_same('SELECT count(*), sum(i4) FROM %I WHERE i8 > 9223372036854775807');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM ag_x WHERE k BETWEEN 1000 AND 2999;
-- packed pages outside the bounds are skipped (ag_x's text column keeps its pages
-- plain); a bound on the key goes to the ordered scan, which reads less
CREATE TABLE ag_k (k int, v bigint) USING xxl;
SELECT xxl.alter_table_set('ag_k', order_by => 'k');
INSERT INTO ag_k SELECT g, g * 3 FROM generate_series(1, 50000) g;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*), sum(k) FROM ag_k WHERE v BETWEEN 60000 AND 60300;
SELECT count(*), sum(k) FROM ag_k WHERE v BETWEEN 60000 AND 60300;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_k WHERE k BETWEEN 20000 AND 20100;
SET xxl.full_scan = off;
SELECT count(*), sum(k) FROM ag_k WHERE v BETWEEN 60000 AND 60300;
RESET xxl.full_scan;
DROP TABLE ag_k;
PREPARE ag_b(int, int) AS SELECT count(*), sum(k) FROM ag_x WHERE i4 >= $1 AND i4 < $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE ag_b(1, 2);
EXECUTE ag_b(-200, -100);
EXECUTE ag_b(NULL, 200);
EXECUTE ag_b(-29000, 2147483647);
SELECT count(*), sum(k) FROM ag_h WHERE i4 >= -29000 AND i4 < 2147483647;
SELECT g, (SELECT count(*) FROM ag_x WHERE i4 < -g * 1000) AS x,
       (SELECT count(*) FROM ag_h WHERE i4 < -g * 1000) AS h
FROM generate_series(1, 3) g;
-- a rescan whose first values are NULL (no row qualifies, no bound kept) and later ones not
EXPLAIN (COSTS OFF) SELECT (SELECT count(*) || ' ' || coalesce(sum(i2), 0) FROM ag_x WHERE k > y AND i4 < x)
FROM (VALUES (NULL::int, NULL::int), (-1000, 1000)) v(x, y);
SELECT x, y, (SELECT count(*) || ' ' || coalesce(sum(i2), 0) FROM ag_x WHERE k > y AND i4 < x) AS x_,
       (SELECT count(*) || ' ' || coalesce(sum(i2), 0) FROM ag_h WHERE k > y AND i4 < x) AS h
FROM (VALUES (NULL::int, NULL::int), (-1000, 1000), (-20000, NULL), (-20000, 5)) v(x, y);
RESET plan_cache_mode;
DEALLOCATE ag_b;

-- where it must not: a condition that is not such a bound, GROUP BY, HAVING,
-- DISTINCT, FILTER, ORDER BY in the aggregate, another aggregate, an
-- expression as the argument, a cast
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x WHERE k > 5 AND k % 2 = 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x WHERE i4 > i2;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x WHERE note IS NULL;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x WHERE k > 5 OR k < 2;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x GROUP BY i2 % 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x HAVING count(*) > 1;
EXPLAIN (COSTS OFF) SELECT count(DISTINCT i4) FROM ag_x;
EXPLAIN (COSTS OFF) SELECT count(*) FILTER (WHERE i4 > 0) FROM ag_x;
EXPLAIN (COSTS OFF) SELECT string_agg(note, ',' ORDER BY k) FROM ag_x;
EXPLAIN (COSTS OFF) SELECT sum(i4 + 1) FROM ag_x;
EXPLAIN (COSTS OFF) SELECT sum(i4::bigint) FROM ag_x;
EXPLAIN (COSTS OFF) SELECT min(note) FROM ag_x;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x, ag_h WHERE ag_x.k = ag_h.k;
SET xxl.full_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ag_x;
RESET xxl.full_scan;

-- rows deleted and updated, a column added later (its default on older pages)
DELETE FROM ag_x WHERE k % 9 = 4;
DELETE FROM ag_h WHERE k % 9 = 4;
UPDATE ag_x SET i4 = i4 / 2 WHERE k % 5 = 1;
UPDATE ag_h SET i4 = i4 / 2 WHERE k % 5 = 1;
ALTER TABLE ag_x ADD COLUMN extra int DEFAULT 11;
ALTER TABLE ag_h ADD COLUMN extra int DEFAULT 11;
INSERT INTO ag_x (k, i4, extra) SELECT g, g, g FROM generate_series(40001, 40100) g;
INSERT INTO ag_h (k, i4, extra) SELECT g, g, g FROM generate_series(40001, 40100) g;
SELECT ag_same('SELECT count(*), sum(i4), sum(i8), count(extra), sum(extra), min(extra), max(extra) FROM %I');

-- plain pages: rows of variable width (a text column with values)
CREATE TABLE ag_v (k int, s text, v bigint) USING xxl;
INSERT INTO ag_v SELECT g, repeat('x', g % 5), g * 1000003::bigint FROM generate_series(1, 5000) g;
SELECT sum(v), count(s), max(v), avg(k) FROM ag_v;
SET xxl.full_scan = off;
SELECT sum(v), count(s), max(v), avg(k) FROM ag_v;
RESET xxl.full_scan;

-- empty, and NULL everywhere
CREATE TABLE ag_e (a int, b bigint) USING xxl;
SELECT count(*), count(a), sum(a), sum(b), avg(b), min(a), max(b) FROM ag_e;
INSERT INTO ag_e SELECT NULL, NULL FROM generate_series(1, 3000);
SELECT count(*), count(a), sum(a), sum(b), avg(b), min(a), max(b) FROM ag_e;
-- sum(integer) is bigint, far past integer's range
CREATE TABLE ag_big (a int) USING xxl;
INSERT INTO ag_big SELECT 2147483647 FROM generate_series(1, 5000);
SELECT sum(a) FROM ag_big;

-- rescans: a subplan run per outer row, a parameter in the target list
SELECT g, (SELECT sum(i4) + g FROM ag_x) = (SELECT sum(i4) + g FROM ag_h) AS same
FROM generate_series(1, 3) g;
PREPARE ag_p(int) AS SELECT count(*) + $1 FROM ag_x;
EXECUTE ag_p(1);
EXECUTE ag_p(2);
DEALLOCATE ag_p;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM ag_x;

-- an ordinary role needs the right to read the table, as for any query
SELECT pg_temp.xt_role('regress_xxl_reader');
SET ROLE regress_xxl_reader;
SELECT xt_try('SELECT count(*) FROM ag_x');
RESET ROLE;
GRANT SELECT ON ag_x TO regress_xxl_reader;
SET ROLE regress_xxl_reader;
SELECT count(*) FROM ag_x;
RESET ROLE;
REVOKE SELECT ON ag_x FROM regress_xxl_reader;
SELECT pg_temp.xt_drop_role('regress_xxl_reader');

DROP TABLE ag_x, ag_h, ag_v, ag_e, ag_big;
DROP FUNCTION xt_try, xt_differ, xt_leftovers, ag_same(text);
\i test/include/end.sql

-- sort_scan.sql — xxl.sort() in FROM runs as a custom scan that streams its
-- rows (src/pg/plan/xxl_sort_scan.c): when it is used and when not, parameters,
-- rescans, scrollable cursors, early ends, dropped columns, privileges,
-- errors, EXPLAIN, and the row estimate of the support function.
\i test/include/begin.sql
SET xxl.memory = '1MB';
SET xxl.block_size = '64kB';

CREATE TABLE ss AS
SELECT g AS id, (g * 7919) % 1000 AS k, 'x' || g AS t, 'gone'::text AS dropme, g::float8 / 3 AS f
  FROM generate_series(1, 20000) g;
ALTER TABLE ss DROP COLUMN dropme;
ANALYZE ss;

-- in FROM, alone: the custom scan, with the row estimate from the source
EXPLAIN (COSTS OFF) SELECT * FROM xxl.sort(NULL::ss, 'k DESC');
EXPLAIN (COSTS OFF) SELECT * FROM xxl.sort('ss', 'k') AS s(id int, k int, t text, f float8) WHERE k > 5;
CREATE FUNCTION plan_rows(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE p json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
  RETURN (p->0->'Plan'->>'Plan Rows')::int;
END $$;
SELECT plan_rows($$SELECT * FROM xxl.sort(NULL::ss, 'k')$$) AS typed_estimate,
       plan_rows($$SELECT * FROM xxl.sort('public.ss', 'k') AS s(id int, k int, t text, f float8)$$) AS named_estimate,
       plan_rows($$SELECT * FROM xxl.sort('SELECT * FROM ss', 'k') AS s(id int, k int, t text, f float8)$$) AS query_estimate;

-- not used: switched off, WITH ORDINALITY, a LATERAL reference, a select list
SET xxl.sort_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM xxl.sort(NULL::ss, 'k');
RESET xxl.sort_scan;
EXPLAIN (COSTS OFF) SELECT * FROM xxl.sort(NULL::ss, 'k') WITH ORDINALITY;
EXPLAIN (COSTS OFF) SELECT * FROM (VALUES ('k'), ('id')) v(o), LATERAL xxl.sort(NULL::ss, v.o) s;
SELECT o, count(*), min(s.id) FROM (VALUES ('k'), ('id DESC')) v(o), LATERAL xxl.sort(NULL::ss, v.o) s
 GROUP BY o ORDER BY o;
SELECT xxl.sort(NULL::ss, 'k DESC, id') LIMIT 2;

-- the same rows as the function scan, in the same order; whole rows (with
-- a dropped column in the row type) as ORDER BY gives them
SELECT count(*) AS differing FROM
  (SELECT row_number() OVER () n, (id, k, t, f)::text r FROM xxl.sort(NULL::ss, 'k, f DESC') s) a
  FULL JOIN (SELECT ordinality n, (id, k, t, f)::text r
               FROM xxl.sort(NULL::ss, 'k, f DESC') WITH ORDINALITY s) b
  USING (n) WHERE a.r IS DISTINCT FROM b.r;
SELECT count(*) AS differing FROM
  (SELECT row_number() OVER () n, s::text r FROM xxl.sort(NULL::ss, 'k, f DESC') s) a
  FULL JOIN (SELECT row_number() OVER (ORDER BY k, f DESC) n, s::text r FROM ss s) b
  USING (n) WHERE a.r IS DISTINCT FROM b.r;
SELECT count(*) AS differing FROM
  (SELECT row_number() OVER () n, s::text r FROM xxl.sort('ss', 'k, f DESC') AS s(id int, k int, t text, f float8)) a
  FULL JOIN (SELECT row_number() OVER (ORDER BY k, f DESC) n, s::text r FROM ss s) b
  USING (n) WHERE a.r IS DISTINCT FROM b.r;
SELECT * FROM xxl.sort(NULL::ss, 'k DESC, id') LIMIT 3;
SELECT s.*, s IS NOT NULL AS whole FROM xxl.sort(NULL::ss, 'id') s WHERE id <= 2;

-- fixed records (no variable-width column): the scan decodes only the
-- columns the plan reads and picks them itself when that is all the
-- projection does; picked, repeated, computed and filtered columns, a key
-- column restored from the key, no column at all
CREATE TABLE sf AS
SELECT g AS id, (g * 7919) % 1000 AS k, CASE WHEN g % 7 = 0 THEN NULL ELSE g::float8 / 3 END AS f
  FROM generate_series(1, 20000) g;
ANALYZE sf;
SELECT count(*) AS differing FROM
  (SELECT row_number() OVER () n, (f1, k, f2, id)::text r FROM (SELECT f AS f1, k, f AS f2, id FROM xxl.sort(NULL::sf, 'k DESC, id') s) q) a
  FULL JOIN (SELECT row_number() OVER (ORDER BY k DESC, id) n, (f, k, f, id)::text r FROM sf) b
  USING (n) WHERE a.r IS DISTINCT FROM b.r;
SELECT count(*) AS differing FROM
  (SELECT row_number() OVER () n, (k2, f2)::text r FROM (SELECT k * 2 AS k2, coalesce(f, -1) AS f2 FROM xxl.sort(NULL::sf, 'f NULLS FIRST, id') s) q) a
  FULL JOIN (SELECT row_number() OVER (ORDER BY f NULLS FIRST, id) n, (k * 2, coalesce(f, -1))::text r FROM sf) b
  USING (n) WHERE a.r IS DISTINCT FROM b.r;
SELECT count(*), sum(k), sum(id) FILTER (WHERE f IS NULL) FROM xxl.sort(NULL::sf, 'k') s WHERE id % 3 = 0;
SELECT count(*), sum(k), sum(id) FILTER (WHERE f IS NULL) FROM sf WHERE id % 3 = 0;
SELECT count(*) FROM xxl.sort(NULL::sf, 'id');
SELECT k FROM xxl.sort(NULL::sf, 'k DESC, id') LIMIT 3;
SELECT id FROM xxl.sort('sf', 'k, id DESC') AS s(id int, k int, f float8) LIMIT 3;

-- parameters: a prepared statement (custom and generic plans) and PL/pgSQL
PREPARE by_order(text, int) AS SELECT id FROM xxl.sort(NULL::ss, $1) OFFSET $2 LIMIT 1;
EXECUTE by_order('k', 0);
EXECUTE by_order('k DESC, id DESC', 0);
EXECUTE by_order('id', 10);
EXECUTE by_order('id DESC', 10);
EXECUTE by_order('t', 1);
SET plan_cache_mode = force_generic_plan;
EXECUTE by_order('f DESC', 5);
EXPLAIN (COSTS OFF) EXECUTE by_order('k', 0);
RESET plan_cache_mode;
DEALLOCATE by_order;
CREATE FUNCTION first_by(o text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  SELECT id INTO r FROM xxl.sort('ss', o) AS s(id int, k int, t text, f float8) LIMIT 1;
  RETURN r;
END $$;
SELECT first_by('k'), first_by('k DESC, id'), first_by('t DESC');

-- rescans: the inner side of a nested loop is sorted again for every outer row
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT v.x, count(*) FROM (VALUES (1), (2), (3)) v(x)
  JOIN xxl.sort(NULL::ss, 'k') s ON s.id % 3 = v.x - 1 GROUP BY v.x ORDER BY v.x;
SELECT v.x, count(*) FROM (VALUES (1), (2), (3)) v(x)
  JOIN xxl.sort(NULL::ss, 'k') s ON s.id % 3 = v.x - 1 GROUP BY v.x ORDER BY v.x;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a scrollable cursor: PostgreSQL puts a Material on top for backward fetches
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM xxl.sort(NULL::ss, 'k DESC, id');
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 20000 FROM c;
CLOSE c;
COMMIT;

-- an early end (LIMIT, a closed cursor) leaves no spill files behind
SELECT id FROM xxl.sort(NULL::ss, 'f DESC') LIMIT 1;
BEGIN;
DECLARE c2 CURSOR FOR SELECT id FROM xxl.sort(NULL::ss, 't');
FETCH 2 FROM c2;
CLOSE c2;
COMMIT;
SELECT count(*) AS spill_files FROM pg_ls_tmpdir() WHERE name LIKE '%xxl%';

-- EXPLAIN ANALYZE reports the sort (numbers that vary are masked)
CREATE FUNCTION explain_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    RETURN NEXT regexp_replace(l, '(Memory|Spilled|Written|Read): [0-9]+', '\1: N');
  END LOOP;
END $$;
SELECT explain_lines($$SELECT count(t) FROM xxl.sort(NULL::ss, 'k')$$);
-- columns no expression reads are not carried through the sort: count(*)
-- needs none, so the text column no longer makes records variable, and
-- the key-only records fit in memory
SELECT explain_lines($$SELECT count(*) FROM xxl.sort(NULL::ss, 'k')$$);

-- errors: as the function raises them
SELECT * FROM xxl.sort(NULL::ss, NULL);
SELECT * FROM xxl.sort(NULL::ss, 'nope');
SELECT * FROM xxl.sort(NULL::ss, 'k LIMIT 3');
SELECT * FROM xxl.sort(NULL, 'k') AS s(a int);
SELECT * FROM xxl.sort(NULL::int, 'k');
SELECT * FROM xxl.sort('no_such_table', 'k') AS s(a int);
SELECT * FROM xxl.sort('ss', 'k') AS s(a int);
-- the session goes on
SELECT count(*) FROM xxl.sort(NULL::ss, 'k');

-- a cached plan outlives ALTER TABLE on the typed form's table: the scan
-- checks the row type when it starts, as the executor's Var checks do
-- (it crashed the server when a column was dropped or retyped)
CREATE TABLE alt (a int, b text);
INSERT INTO alt VALUES (2, 'two'), (1, 'one');
PREPARE alt_q AS SELECT * FROM xxl.sort(NULL::alt, 'a');
EXECUTE alt_q;
ALTER TABLE alt ADD COLUMN c text DEFAULT 'x';
EXECUTE alt_q;
-- the error reset the cached plans: the statement is analyzed anew, and
-- PostgreSQL refuses a prepared statement whose result columns changed,
-- as it does for SELECT * FROM a table; a function's query runs again
EXECUTE alt_q;
ALTER TABLE alt DROP COLUMN b;
EXECUTE alt_q;
EXECUTE alt_q;
DEALLOCATE alt_q;
PREPARE alt_q AS SELECT * FROM xxl.sort(NULL::alt, 'a');
EXECUTE alt_q;
ALTER TABLE alt ALTER COLUMN c DROP DEFAULT, ALTER COLUMN c TYPE int USING 7;
EXECUTE alt_q;
EXECUTE alt_q;
DEALLOCATE alt_q;
PREPARE alt_q AS SELECT a FROM xxl.sort(NULL::alt, 'a');
EXECUTE alt_q;
ALTER TABLE alt ALTER COLUMN a TYPE bigint;
UPDATE alt SET a = a + 5000000000;
EXECUTE alt_q;
DEALLOCATE alt_q;
SELECT a FROM xxl.sort(NULL::alt, 'a');
-- the same through PL/pgSQL, whose plans are cached per session
CREATE FUNCTION alt_rows() RETURNS SETOF alt LANGUAGE plpgsql
AS $$ BEGIN RETURN QUERY SELECT * FROM xxl.sort(NULL::alt, 'a'); END $$;
SELECT * FROM alt_rows();
ALTER TABLE alt DROP COLUMN c;
SELECT * FROM alt_rows();
SELECT * FROM alt_rows();
DROP FUNCTION alt_rows();
DROP TABLE alt;

DROP FUNCTION first_by(text);
DROP FUNCTION plan_rows(text);
DROP FUNCTION explain_lines(text);
DROP TABLE ss;
\i test/include/end.sql

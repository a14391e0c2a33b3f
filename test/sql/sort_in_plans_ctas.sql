-- sort_in_plans_ctas.sql — CREATE TABLE AS and SELECT INTO whose rows come
-- out of an XxlSort (or XxlWindow over one) write the new table's pages directly
-- (src/pg/plan/xxl_plan_ctas.c).  Each table must hold exactly what PostgreSQL's
-- own CREATE TABLE AS gives (setting off), in the same physical order, with
-- the same visibility; where the direct path does not apply (WITH NO DATA,
-- a materialized view, another table AM, a plan not topped by XxlSort) the
-- result is PostgreSQL's.  Which path ran shows in shared buffers: the
-- direct path writes none of the table's pages there, heap_insert does.
\i test/include/begin.sql
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
RESET client_min_messages;
-- any call into the library loads it, and with it the planner's hooks
SELECT xxl.version() IS NOT NULL AS loaded;
SET xxl.memory = '1MB';
SET xxl.block_size = '64kB';
SET xxl.sort_in_plans_threshold = 0;
SET max_parallel_workers_per_gather = 0;

SELECT setseed(0.5);
CREATE TABLE cs AS
SELECT g AS id, (random() * 1e6)::int AS k, md5(g::text) AS t,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g * 1.5 END AS n,
       -- long values the toaster must see: incompressible, over 2 kB
       CASE WHEN g % 500 = 0 THEN (SELECT string_agg(md5((g * 31 + i)::text), '')
                                     FROM generate_series(1, 80) i) END AS wide
  FROM generate_series(1, 40000) g;
ANALYZE cs;

-- a table's rows in physical order, as one digest
CREATE FUNCTION physical_digest(rel regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE d text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(x::text, %L ORDER BY ctid)) FROM %s x', '|', rel) INTO d;
  RETURN d;
END $$;

-- shared buffers holding pages of rel's main fork: looked at before the
-- commit, at which wal_level = minimal may WAL-log a small new table
-- through shared buffers (wal_skip_threshold), and before autovacuum can
-- read it
CREATE FUNCTION buffered(rel regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_buffercache
   WHERE relfilenode = pg_relation_filenode(rel) AND relforknumber = 0
     AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;

-- the rows go to the pages: the setting on, and off for the peer
BEGIN;
CREATE TABLE c_on AS SELECT * FROM cs ORDER BY k DESC, id;
SELECT buffered('c_on') AS direct_buffers;
COMMIT;
SET xxl.sort_in_plans = off;
CREATE TABLE c_off AS SELECT * FROM cs ORDER BY k DESC, id;
SELECT buffered('c_off') > 0 AS heap_insert_buffers;
SET xxl.sort_in_plans = on;
SELECT physical_digest('c_on') = physical_digest('c_off') AS same_rows_same_order,
       (SELECT count(*) FROM c_on) AS rows,
       (SELECT count(*) FROM c_on WHERE length(wide) > 2000) AS long_rows,
       pg_relation_size('c_on') = pg_relation_size('c_off') AS same_size;
-- the long values went out of line as heap_insert put them, and read back whole
SELECT pg_relation_size(a.reltoastrelid) > 0 AS toasted,
       pg_relation_size(a.reltoastrelid) = pg_relation_size(b.reltoastrelid) AS same_toast_size
  FROM pg_class a, pg_class b WHERE a.relname = 'c_on' AND b.relname = 'c_off';
SELECT count(*) AS long_values, bool_and(wide = (SELECT wide FROM cs WHERE cs.id = c_on.id)) AS intact
  FROM c_on WHERE wide IS NOT NULL;

-- a temporary table and a fillfactor: the same pages as heap_insert's
CREATE TEMP TABLE ct_on AS SELECT id, k FROM cs ORDER BY k, id;
CREATE TABLE cf_on WITH (fillfactor = 50) AS SELECT id, k FROM cs ORDER BY k, id;
SET xxl.sort_in_plans = off;
CREATE TEMP TABLE ct_off AS SELECT id, k FROM cs ORDER BY k, id;
CREATE TABLE cf_off WITH (fillfactor = 50) AS SELECT id, k FROM cs ORDER BY k, id;
SET xxl.sort_in_plans = on;
SELECT (SELECT md5(string_agg(x::text || x.ctid::text, '|' ORDER BY ctid)) FROM ct_on x) =
       (SELECT md5(string_agg(x::text || x.ctid::text, '|' ORDER BY ctid)) FROM ct_off x) AS temp_same_ctids,
       (SELECT md5(string_agg(x::text || x.ctid::text, '|' ORDER BY ctid)) FROM cf_on x) =
       (SELECT md5(string_agg(x::text || x.ctid::text, '|' ORDER BY ctid)) FROM cf_off x) AS fillfactor_same_ctids,
       pg_relation_size('cf_on') = 2 * pg_relation_size('ct_on') AS half_full;
DROP TABLE ct_on, ct_off, cf_on, cf_off;

-- in a transaction: the rows are this transaction's, visible to its next
-- commands, and a rollback leaves no table
BEGIN;
SELECT id, t INTO c_tx FROM cs ORDER BY t;
SELECT buffered('c_tx') AS direct_buffers;
SELECT count(*) AS rows, bool_and(xmin::text = txid_current()::text) AS this_xact,
       bool_and(id IS NOT NULL) AS filled
  FROM c_tx;
UPDATE c_tx SET t = 'x' WHERE id = 1;
SELECT t FROM c_tx WHERE id = 1;
ROLLBACK;
SELECT to_regclass('c_tx') IS NULL AS rolled_back;

-- rows numbered by XxlWindow on their way out of the sort go the same way
BEGIN;
CREATE TABLE c_ranked AS
SELECT id, k, rank() OVER (PARTITION BY k % 10 ORDER BY k), row_number() OVER (PARTITION BY k % 10 ORDER BY k, id)
  FROM cs;
SELECT buffered('c_ranked') AS direct_buffers;
COMMIT;
SET xxl.sort_in_plans = off;
CREATE TABLE c_ranked_off AS
SELECT id, k, rank() OVER (PARTITION BY k % 10 ORDER BY k), row_number() OVER (PARTITION BY k % 10 ORDER BY k, id)
  FROM cs;
SET xxl.sort_in_plans = on;
SELECT physical_digest('c_ranked') = physical_digest('c_ranked_off') AS ranked_same_rows_same_order;
DROP TABLE c_ranked, c_ranked_off;

-- EXPLAIN ANALYZE runs it too; CTAS of an empty result
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
CREATE TABLE c_explain AS SELECT id, k FROM cs ORDER BY k, id;
SELECT buffered('c_explain') AS direct_buffers;
COMMIT;
SELECT count(*), count(DISTINCT id) FROM c_explain;
CREATE TABLE c_empty AS SELECT * FROM cs WHERE id < 0 ORDER BY k;
SELECT count(*), pg_relation_size('c_empty') AS size FROM c_empty;

-- after the first row, the rows go from the sort's run to the pages without
-- the executor (xxl_plan_sort_drain), for fixed and variable records, with
-- columns restored from the key; not where the top node's rows carry a
-- column the table does not (junk); the statement still reports its rows
CREATE FUNCTION drained(stmt text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE l text; found bool := false;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || stmt LOOP
    found := found OR l LIKE '%Output: new table''s pages written from the run%';
  END LOOP;
  RETURN found;
END $$;
CREATE FUNCTION ctas_rows(stmt text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE stmt;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
SELECT drained('CREATE TABLE c_d1 AS SELECT * FROM cs ORDER BY k DESC, id') AS variable_rows,
       drained('CREATE TABLE c_d2 AS SELECT id, t FROM cs ORDER BY t') AS restored_from_key,
       drained('CREATE TABLE c_d3 AS SELECT id FROM cs ORDER BY k, id') AS junk_column;
SELECT ctas_rows('CREATE TABLE c_d4 AS SELECT * FROM cs ORDER BY k DESC, id') AS reported_rows;
SET xxl.sort_in_plans = off;
CREATE TABLE c_d2_off AS SELECT id, t FROM cs ORDER BY t;
CREATE TABLE c_d3_off AS SELECT id FROM cs ORDER BY k, id;
SET xxl.sort_in_plans = on;
SELECT physical_digest('c_d1') = physical_digest('c_off') AS variable_same,
       physical_digest('c_d2') = physical_digest('c_d2_off') AS restored_same,
       physical_digest('c_d3') = physical_digest('c_d3_off') AS junk_same,
       physical_digest('c_d4') = physical_digest('c_off') AS counted_same;
DROP TABLE c_d1, c_d2, c_d3, c_d4, c_d2_off, c_d3_off;
DROP FUNCTION drained, ctas_rows;

-- where PostgreSQL's receiver keeps the rows: WITH NO DATA, a materialized
-- view, an xxl table, a plan whose top is not the sort
CREATE TABLE c_nodata AS SELECT * FROM cs ORDER BY k WITH NO DATA;
CREATE MATERIALIZED VIEW c_mv AS SELECT id, k FROM cs ORDER BY k, id;
CREATE TABLE c_xxl USING xxl AS SELECT id, k FROM cs ORDER BY k, id;
CREATE TABLE c_limit AS SELECT id, k FROM cs ORDER BY k, id LIMIT 30000;
SELECT (SELECT count(*) FROM c_nodata) AS nodata,
       (SELECT count(*) FROM c_mv) AS mv, buffered('c_mv') > 0 AS mv_buffers,
       (SELECT count(*) FROM c_xxl) AS xxl_table,
       (SELECT count(*) FROM c_limit) AS limited, buffered('c_limit') > 0 AS limit_buffers;

-- an error while the child is read: no table, the session goes on
CREATE TABLE c_boom AS SELECT id, 1 / (40000 - id) AS boom FROM cs ORDER BY boom;
SELECT to_regclass('c_boom') IS NULL AS no_table;

DROP MATERIALIZED VIEW c_mv;
DROP TABLE cs, c_on, c_off, c_explain, c_empty, c_nodata, c_xxl, c_limit;
DROP FUNCTION physical_digest, buffered;
\i test/include/end.sql

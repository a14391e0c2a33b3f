-- table_dml.sql — DELETE and UPDATE on xxl tables: every statement runs on
-- an xxl table and on a heap copy of the same rows, and the two must hold
-- the same rows afterwards (EXCEPT ALL both ways).  Also: RETURNING, rows
-- a join gives twice, transactions and savepoints, a cursor's older
-- snapshot, the ordered scan and key ranges over deleted rows, indexes
-- (index, bitmap and unique checks), an UPDATE beyond xxl.memory, VACUUM's
-- counts, compaction dropping deleted rows, triggers, row locks and foreign
-- keys to an xxl table.  Concurrent sessions: test/t/061_table_dml.pl.
\i test/include/begin.sql
\i test/include/helpers.sql
-- run a statement (with %s for the table) on both tables; the row counts it reported
CREATE FUNCTION dml_both(stmt text, x text DEFAULT 'dx', h text DEFAULT 'dh') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE nx bigint; nh bigint;
BEGIN
  EXECUTE format(stmt, x);
  GET DIAGNOSTICS nx = ROW_COUNT;
  EXECUTE format(stmt, h);
  GET DIAGNOSTICS nh = ROW_COUNT;
  RETURN format('%s rows, %s differing', CASE WHEN nx = nh THEN nx::text ELSE nx || ' against ' || nh END,
                xt_differ(x, h));
END $$;

-- a keyed table of several segments, and its heap copy
CREATE TABLE dx (a int, b text, c double precision) USING xxl;
SELECT xxl.alter_table_set('dx', 'a');
CREATE TABLE dh (a int, b text, c double precision);
SELECT dml_both($$INSERT INTO %s SELECT (g * 7919) %% 20011, 'r' || g, g / 7.0 FROM generate_series(1, 20000) g$$);
SELECT dml_both($$INSERT INTO %s SELECT g, 'second ' || g, NULL FROM generate_series(1, 3000) g$$);
SELECT dml_both($$DELETE FROM %s WHERE a %% 3 = 0$$);
SELECT dml_both($$DELETE FROM %s WHERE a BETWEEN 1000 AND 4000$$);
SELECT dml_both($$DELETE FROM %s WHERE b LIKE 'second 2%%'$$);
SELECT dml_both($$DELETE FROM %s WHERE a = -1$$) AS nothing_deleted;
-- updates move rows in key order (the new versions form a segment of their own)
SELECT dml_both($$UPDATE %s SET a = a + 50000, b = b || ' moved' WHERE a %% 5 = 1$$);
SELECT dml_both($$UPDATE %s SET c = coalesce(c, 0) * 2 WHERE a > 15000$$);
SELECT dml_both($$UPDATE %s SET a = a - 1 WHERE a > 60000$$) AS moved_again;
-- a row deleted twice: the second time finds nothing
SELECT dml_both($$DELETE FROM %s WHERE a = 7$$);
SELECT dml_both($$DELETE FROM %s WHERE a = 7$$) AS again;
-- a join giving each row several times: updated once, deleted once
CREATE TABLE dml_three (k int);
INSERT INTO dml_three VALUES (1), (2), (3);
SELECT dml_both($$UPDATE %s SET c = -1 FROM dml_three WHERE a BETWEEN 100 AND 200$$) AS updated_once;
SELECT dml_both($$DELETE FROM %s USING dml_three WHERE a BETWEEN 200 AND 300$$) AS deleted_once;
SELECT count(*) AS rows, sum(a) AS sum_a FROM dx;

-- MERGE: deletes, updates and inserts in one statement
CREATE TABLE dml_src AS SELECT g AS a, CASE WHEN g % 3 = 0 THEN 'del' ELSE 'merged ' || g END AS b
FROM generate_series(19000, 21000) g;
SELECT dml_both($$MERGE INTO %s t USING dml_src s ON t.a = s.a
  WHEN MATCHED AND s.b = 'del' THEN DELETE
  WHEN MATCHED THEN UPDATE SET b = s.b
  WHEN NOT MATCHED THEN INSERT VALUES (s.a, s.b, 0)$$) AS merged;
DROP TABLE dml_src;

-- RETURNING gives the deleted rows and the new versions
WITH x AS (DELETE FROM dx WHERE a BETWEEN 500 AND 520 RETURNING *),
     h AS (DELETE FROM dh WHERE a BETWEEN 500 AND 520 RETURNING *)
SELECT (SELECT count(*) FROM x) AS deleted, (SELECT sum(a) FROM x) = (SELECT sum(a) FROM h) AS same;
WITH u AS (UPDATE dx SET b = 'returned' WHERE a BETWEEN 600 AND 605 RETURNING a, b)
SELECT * FROM u ORDER BY a;
UPDATE dh SET b = 'returned' WHERE a BETWEEN 600 AND 605;
SELECT xt_differ('dx', 'dh') AS differing;

-- the ordered scan and key ranges skip deleted rows
SELECT (SELECT md5(string_agg(format('%s %s %s', a, b, c), ',')) FROM (SELECT * FROM dx ORDER BY a, b, c) s) =
       (SELECT md5(string_agg(format('%s %s %s', a, b, c), ',' ORDER BY a, b, c)) FROM dh) AS ordered_same;
EXPLAIN (COSTS OFF) SELECT * FROM dx ORDER BY a LIMIT 5;
SELECT a, b FROM dx ORDER BY a LIMIT 5;
SELECT a, b FROM dh ORDER BY a, b LIMIT 5;
SELECT (SELECT count(*) FROM dx WHERE a BETWEEN 900 AND 5000) AS in_range,
       (SELECT count(*) FROM dh WHERE a BETWEEN 900 AND 5000) AS heap_in_range;
SELECT (SELECT array_agg(a ORDER BY a) FROM dx WHERE a > 69990) =
       (SELECT array_agg(a ORDER BY a) FROM dh WHERE a > 69990) AS top_range_same;
-- DML by key range goes through the ordered scan, which hands out TIDs
EXPLAIN (COSTS OFF) DELETE FROM dx WHERE a BETWEEN 10 AND 20;
SELECT dml_both($$DELETE FROM %s WHERE a BETWEEN 10 AND 20$$) AS range_delete;
-- rows of a segment sorted by the key and of one sorted at run time (written before the key) alike
CREATE TABLE dr (a int, b text) USING xxl;
INSERT INTO dr SELECT (g * 37) % 1000, 'unsorted ' || g FROM generate_series(1, 2000) g;
SELECT xxl.alter_table_set('dr', 'a');
INSERT INTO dr SELECT (g * 53) % 1000, 'sorted ' || g FROM generate_series(1, 2000) g;
CREATE TABLE drh AS SELECT * FROM dr;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) DELETE FROM dr WHERE a BETWEEN 100 AND 199;
SELECT dml_both($$DELETE FROM %s WHERE a BETWEEN 100 AND 199$$, 'dr', 'drh') AS range_delete_both_kinds;
EXPLAIN (COSTS OFF) UPDATE dr SET b = b || '!' WHERE a >= 900;
SELECT dml_both($$UPDATE %s SET b = b || '!' WHERE a >= 900$$, 'dr', 'drh') AS range_update;
SELECT dml_both($$UPDATE %s SET a = a - 300 WHERE a BETWEEN 300 AND 399$$, 'dr', 'drh') AS key_moved_down;
-- the same TIDs as a sequential scan gives (a + 0: no bounds)
SELECT (SELECT array_agg(ctid ORDER BY ctid) FROM dr WHERE a BETWEEN 0 AND 120) =
       (SELECT array_agg(ctid ORDER BY ctid) FROM dr WHERE a + 0 BETWEEN 0 AND 120) AS same_tids;
SELECT (SELECT array_agg(a) FROM (SELECT a FROM dr WHERE a < 50 ORDER BY a FOR UPDATE) s) =
       (SELECT array_agg(a ORDER BY a) FROM drh WHERE a < 50) AS locked_in_key_order;
RESET enable_seqscan;
SELECT xt_differ('dr', 'drh') AS differing;
DROP TABLE dr, drh;
-- a parallel scan skips the same rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET xxl.ordered_scan = off;
SELECT (SELECT count(*) FROM dx WHERE c IS NOT NULL) = (SELECT count(*) FROM dh WHERE c IS NOT NULL) AS parallel_same;
RESET xxl.ordered_scan;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- transactions: a rolled back delete or update leaves every row as it was
BEGIN;
DELETE FROM dx;
SELECT count(*) AS inside FROM dx;
ROLLBACK;
SELECT xt_differ('dx', 'dh') AS after_rollback;
BEGIN;
UPDATE dx SET a = 0;
SELECT count(*) AS zeros FROM dx WHERE a = 0;
ROLLBACK;
SELECT xt_differ('dx', 'dh') AS after_update_rollback;
-- savepoints: the rolled back part is undone, the rest stays
BEGIN;
SELECT dml_both($$DELETE FROM %s WHERE a < 2000$$);
SAVEPOINT s1;
SELECT dml_both($$DELETE FROM %s WHERE a < 8000$$);
ROLLBACK TO s1;
SAVEPOINT s2;
SELECT dml_both($$UPDATE %s SET b = 'kept' WHERE a BETWEEN 8000 AND 8100$$);
RELEASE s2;
COMMIT;
SELECT count(*) AS below_2000, (SELECT count(*) FROM dx WHERE a < 8000) AS below_8000,
       (SELECT count(*) FROM dx WHERE b = 'kept') AS kept
FROM dx WHERE a < 2000;
SELECT xt_differ('dx', 'dh') AS after_savepoints;
-- one transaction: a later statement sees the earlier one's deletes and new versions
BEGIN;
UPDATE dx SET c = 1 WHERE a BETWEEN 9000 AND 9100;
UPDATE dx SET c = c + 1 WHERE a BETWEEN 9000 AND 9100;
DELETE FROM dx WHERE a BETWEEN 9000 AND 9050;
SELECT count(*) AS rows, min(c) AS c_min, max(c) AS c_max FROM dx WHERE a BETWEEN 9000 AND 9100;
ROLLBACK;
-- a cursor keeps the snapshot it was opened with
BEGIN;
DECLARE cur CURSOR FOR SELECT count(*) FROM dx;
DELETE FROM dx WHERE a > 10000;
FETCH cur;
SELECT count(*) AS now FROM dx;
ROLLBACK;

-- indexes: index and bitmap scans do not return deleted rows; unique checks
CREATE TABLE di (k int, v text) USING xxl;
CREATE UNIQUE INDEX di_k ON di (k);
CREATE INDEX di_v ON di (v);
CREATE TABLE di_heap (k int, v text);
SELECT dml_both($$INSERT INTO %s SELECT g, md5(g::text) FROM generate_series(1, 5000) g$$, 'di', 'di_heap');
SELECT dml_both($$DELETE FROM %s WHERE k %% 4 = 0$$, 'di', 'di_heap');
-- the same key again: the old version is gone (no unique violation)
SELECT dml_both($$UPDATE %s SET v = 'u' || v WHERE k %% 4 = 1$$, 'di', 'di_heap');
SELECT dml_both($$UPDATE %s SET k = k WHERE k < 100$$, 'di', 'di_heap') AS same_keys;
SELECT dml_both($$INSERT INTO %s SELECT g, 'back' FROM generate_series(4, 400, 4) g$$, 'di', 'di_heap') AS deleted_keys_reused;
SELECT xt_try($$UPDATE di SET k = 2 WHERE k = 3$$) AS duplicate_key;
SELECT xt_try($$INSERT INTO di VALUES (5, 'dup')$$) AS duplicate_insert;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET xxl.ordered_scan = off;
SELECT count(*) AS by_index, sum(k) FROM di WHERE k > 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM di WHERE v > 'u';
SELECT count(*) AS by_index_v FROM di WHERE v > 'u';
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT count(*) AS by_bitmap, sum(k) FROM di WHERE k > 0;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_seqscan;
RESET xxl.ordered_scan;
SELECT count(*) AS by_scan, sum(k) FROM di;
SELECT count(*) AS heap_rows, sum(k), count(*) FILTER (WHERE v > 'u') AS heap_v FROM di_heap;
-- deleted within the statement: the unique check does not see the old row
SELECT dml_both($$UPDATE %s SET k = k + 100000$$, 'di', 'di_heap') AS all_keys_moved;
SELECT dml_both($$UPDATE %s SET k = k - 100000$$, 'di', 'di_heap') AS and_back;

-- an UPDATE far beyond xxl.memory: the new versions spill and stay sorted
CREATE TABLE dbig (a bigint, b bigint) USING xxl;
SELECT xxl.alter_table_set('dbig', 'a');
INSERT INTO dbig SELECT g, g FROM generate_series(1, 200000) g;
SET xxl.memory = '1MB';
UPDATE dbig SET a = 300000 - a WHERE a % 2 = 0;
RESET xxl.memory;
SELECT operator, bytes_written[1] > 0 AS spilled FROM xxl.last_stats();
SELECT count(*) AS rows, count(DISTINCT a) AS distinct_a, sum(b) AS sum_b FROM dbig;
SELECT bool_and(a > prev) AS ordered FROM (SELECT a, lag(a, 1, -1) OVER () AS prev FROM (SELECT a FROM dbig ORDER BY a) s) t;

-- VACUUM counts deleted rows as dead, and aborted deletes not at all
BEGIN;
DELETE FROM dbig WHERE a < 100000;
ROLLBACK;
DELETE FROM dbig WHERE a > 150000;
-- (the statements' counts reach the statistics before VACUUM sets them)
SELECT pg_stat_force_next_flush();
VACUUM dbig;
SELECT n_live_tup, n_dead_tup, n_tup_upd, n_tup_del FROM pg_stat_user_tables WHERE relname = 'dbig';
-- ANALYZE samples only rows that are there
ANALYZE dbig;
SELECT reltuples FROM pg_class WHERE relname = 'dbig';
-- compaction drops deleted rows: fewer pages, the same rows
SELECT pg_relation_size('dbig') / 8192 AS pages_before;
SELECT xxl.compact('dbig') AS merged;
SELECT pg_relation_size('dbig') / 8192 AS pages_after;
SELECT count(*) AS rows, sum(a) AS sum_a, sum(b) AS sum_b FROM dbig;
SELECT (SELECT count(*) FROM (SELECT a FROM dbig ORDER BY a) s) AS ordered_rows;
-- and on a table with indexes, the indexes are rebuilt without the deleted rows
SELECT xxl.compact('di') AS merged_indexed;
SET enable_seqscan = off;
SET xxl.ordered_scan = off;
SELECT count(*) AS by_index_after_compact, sum(k) FROM di WHERE k > 0;
RESET enable_seqscan;
RESET xxl.ordered_scan;
SELECT xt_differ('di', 'di_heap') AS indexed_differing;
-- VACUUM FULL: the same
SELECT dml_both($$DELETE FROM %s WHERE a %% 7 = 0$$);
VACUUM FULL dx;
SELECT xt_differ('dx', 'dh') AS after_vacuum_full;

-- past 2^23 deleted rows not yet compacted, a NOTICE suggests compaction (once per doubling)
CREATE TABLE dn (a int) USING xxl;
INSERT INTO dn SELECT generate_series(1, 8400000);
DELETE FROM dn WHERE a <= 4200000;
DELETE FROM dn WHERE a > 4200000;
DELETE FROM dn;
SELECT xxl.compact('dn') AS merged, pg_relation_size('dn') AS bytes_after;
DROP TABLE dn;

-- triggers: BEFORE row triggers see and change the rows; AFTER UPDATE row triggers are refused
CREATE FUNCTION dml_upper() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.b := upper(NEW.b); RETURN NEW; END $$;
CREATE TRIGGER dml_upper BEFORE UPDATE ON dx FOR EACH ROW EXECUTE FUNCTION dml_upper();
CREATE TRIGGER dml_upper BEFORE UPDATE ON dh FOR EACH ROW EXECUTE FUNCTION dml_upper();
SELECT dml_both($$UPDATE %s SET b = b || 'x' WHERE a BETWEEN 12000 AND 12100$$) AS before_trigger;
CREATE FUNCTION dml_after() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER dml_after AFTER UPDATE ON dx FOR EACH ROW EXECUTE FUNCTION dml_after();
SELECT xt_try($$UPDATE dx SET b = 'y' WHERE a = (SELECT min(a) FROM dx WHERE a > 12000)$$) AS after_update_trigger;
DROP TRIGGER dml_after ON dx;
-- AFTER DELETE row triggers see the deleted rows
CREATE TABLE dml_log (a int, b text);
CREATE FUNCTION dml_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO dml_log VALUES (OLD.a, OLD.b); RETURN NULL; END $$;
CREATE TRIGGER dml_log AFTER DELETE ON dx FOR EACH ROW EXECUTE FUNCTION dml_log();
DELETE FROM dx WHERE a BETWEEN 13000 AND 13050;
DELETE FROM dh WHERE a BETWEEN 13000 AND 13050;
SELECT count(*) AS logged, sum(a) = (SELECT sum(a) FROM dml_log) AS same FROM dml_log;
SELECT xt_differ('dx', 'dh') AS after_triggers;
-- row locks: FOR UPDATE, FOR SHARE, NOWAIT and SKIP LOCKED (alone: nothing to wait for)
SELECT (SELECT count(*) FROM (SELECT * FROM dx WHERE a BETWEEN 14000 AND 14100 FOR UPDATE) s) =
       (SELECT count(*) FROM dh WHERE a BETWEEN 14000 AND 14100) AS locked_all;
SELECT (SELECT count(*) FROM (SELECT * FROM dx WHERE a BETWEEN 14000 AND 14100 FOR SHARE NOWAIT) s) =
       (SELECT count(*) FROM dh WHERE a BETWEEN 14000 AND 14100) AS shared_all;
SELECT (SELECT count(*) FROM (SELECT * FROM dx WHERE a BETWEEN 14000 AND 14100 FOR UPDATE SKIP LOCKED) s) =
       (SELECT count(*) FROM dh WHERE a BETWEEN 14000 AND 14100) AS skipped_none;
-- a foreign key to an xxl table (its check locks the referenced row)
CREATE TABLE dml_pk (id int PRIMARY KEY, v text) USING xxl;
INSERT INTO dml_pk SELECT g, 'v' || g FROM generate_series(1, 100) g;
CREATE TABLE dml_fk (id int REFERENCES dml_pk, note text);
INSERT INTO dml_fk SELECT g, 'n' FROM generate_series(1, 50) g;
SELECT xt_try($$INSERT INTO dml_fk VALUES (101, 'missing')$$) AS fk_violation;
DELETE FROM dml_pk WHERE id > 90;
SELECT xt_try($$INSERT INTO dml_fk VALUES (95, 'deleted')$$) AS fk_to_deleted;
SELECT xt_try($$DELETE FROM dml_pk WHERE id = 1$$) AS fk_restricts_delete;
SELECT count(*) AS referenced FROM dml_fk JOIN dml_pk USING (id);
DROP TABLE dml_fk, dml_pk;
-- by TID
DELETE FROM dx WHERE ctid = (SELECT ctid FROM dx WHERE a = (SELECT min(a) FROM dx WHERE a > 14000))
RETURNING a;
DELETE FROM dh WHERE a = (SELECT min(a) FROM dh WHERE a > 14000);
SELECT xt_differ('dx', 'dh') AS after_tid_delete;

DROP TABLE dx, dh, di, di_heap, dbig, dml_three, dml_log;
DROP FUNCTION xt_try, xt_differ, xt_leftovers, dml_both, dml_upper, dml_after, dml_log;
\i test/include/end.sql

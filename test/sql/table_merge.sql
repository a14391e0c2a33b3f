-- table_merge.sql — VACUUM merges the small segments at an xxl table's end:
-- a table fed one row per statement got a segment, a page and a directory
-- entry per row, and refused inserts after 65,184 statements.  Every table
-- here has a heap twin that gets the same statements, and both are
-- compared after each VACUUM (rows, index scans, the key's order).
-- Temporary tables: their VACUUM horizon is this session's own, so what is
-- merged does not depend on other sessions (test/t/062_table_merge.pl has
-- the shared tables: WAL, a standby, a crash, autovacuum, a table in use).
\i test/include/begin.sql
\i test/include/helpers.sql
-- pages of a relation, and whether an xxl table and its twin agree
CREATE FUNCTION pg_temp.pages(r regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT pg_relation_size(r) / current_setting('block_size')::int $$;
CREATE FUNCTION pg_temp.same(x text, h text, key text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE rows bigint; ordered boolean;
BEGIN
  rows := xt_differ(x, h);
  EXECUTE format('SELECT (SELECT array_agg(t::text ORDER BY %3$s) FROM %1$s t) IS NOT DISTINCT FROM
                         (SELECT array_agg(t::text ORDER BY %3$s) FROM %2$s t)', x, h, key) INTO ordered;
  RETURN format('%s rows differ, order %s', rows, CASE WHEN ordered THEN 'same' ELSE 'differs' END);
END $$;

-- 1. One row per statement under an order key, no index: 500 segments of a
--    page each become one sorted segment; the file shrinks to it.
CREATE TEMP TABLE m1 (k int, v text) USING xxl;
SELECT xxl.alter_table_set('m1', order_by => 'k');
CREATE TEMP TABLE m1_h (k int, v text);
SET client_min_messages = warning;
DO $$ BEGIN FOR i IN 1..500 LOOP
  INSERT INTO m1 VALUES ((i * 7919) % 500, 'v' || i); INSERT INTO m1_h VALUES ((i * 7919) % 500, 'v' || i);
END LOOP; END $$;
RESET client_min_messages;
SELECT pg_temp.pages('m1') AS pages_before;
VACUUM m1;
SELECT pg_temp.pages('m1') AS pages_after, pg_temp.same('m1', 'm1_h', 'k, v');
-- the key's order without a Sort: one sorted segment, read straight
EXPLAIN (COSTS OFF) SELECT k FROM m1 ORDER BY k;
SELECT (SELECT array_agg(k) FROM (SELECT k FROM m1 ORDER BY k) s) =
       (SELECT array_agg(k ORDER BY k) FROM m1_h) AS key_order;
-- more rows after it: the merged segment is merged again with them (it is
-- smaller than they are together), then nothing is left to merge
SET client_min_messages = warning;
DO $$ BEGIN FOR i IN 501..700 LOOP
  INSERT INTO m1 VALUES (i, 'v' || i); INSERT INTO m1_h VALUES (i, 'v' || i);
END LOOP; END $$;
RESET client_min_messages;
-- told not to truncate (or not to clean indexes), VACUUM does not merge
VACUUM (TRUNCATE false) m1;
VACUUM (INDEX_CLEANUP off) m1;
SELECT pg_temp.pages('m1') AS pages_not_merged;
VACUUM m1;
SELECT pg_temp.pages('m1') AS pages_after_more, pg_temp.same('m1', 'm1_h', 'k, v');
VACUUM m1;
SELECT pg_temp.pages('m1') AS pages_unchanged;

-- 2. Indexes (rows written as they come: scattered segments): a primary
--    key, an expression index with a predicate, a hash index; an aborted
--    insert among the rows.  The merged rows are indexed where they are
--    now, the old places are no longer, and the key stays unique.
CREATE TEMP TABLE m2 (k int PRIMARY KEY, v text, w int) USING xxl;
CREATE INDEX m2_v ON m2 (lower(v)) WHERE w % 2 = 0;
CREATE INDEX m2_w ON m2 USING hash (w);
SELECT xxl.alter_table_set('m2', order_by => 'w, k');
CREATE TEMP TABLE m2_h (k int PRIMARY KEY, v text, w int);
SET client_min_messages = warning;
DO $$ BEGIN FOR i IN 1..400 LOOP
  INSERT INTO m2 VALUES (i, 'V' || i, (i * 37) % 100); INSERT INTO m2_h VALUES (i, 'V' || i, (i * 37) % 100);
END LOOP; END $$;
BEGIN; INSERT INTO m2 VALUES (10000, 'aborted', 1); ROLLBACK;
DO $$ BEGIN FOR i IN 401..450 LOOP
  INSERT INTO m2 VALUES (i, 'V' || i, (i * 37) % 100); INSERT INTO m2_h VALUES (i, 'V' || i, (i * 37) % 100);
END LOOP; END $$;
RESET client_min_messages;
SELECT pg_temp.pages('m2') AS pages_before;
VACUUM m2;
SELECT pg_temp.pages('m2') AS pages_after, pg_temp.same('m2', 'm2_h', 'w, k');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM m2 WHERE k BETWEEN 100 AND 200;
SELECT (SELECT count(*) FROM m2 WHERE k BETWEEN 100 AND 200) AS by_pkey,
       (SELECT count(*) FROM m2 WHERE lower(v) LIKE 'v1%' AND w % 2 = 0) AS by_expression,
       (SELECT count(*) FROM m2 WHERE w = 37) AS by_hash,
       (SELECT count(*) FROM m2 WHERE k = 10000) AS aborted;
SELECT (SELECT count(*) FROM m2_h WHERE k BETWEEN 100 AND 200) AS by_pkey,
       (SELECT count(*) FROM m2_h WHERE lower(v) LIKE 'v1%' AND w % 2 = 0) AS by_expression,
       (SELECT count(*) FROM m2_h WHERE w = 37) AS by_hash;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT (SELECT count(*) FROM m2 WHERE k BETWEEN 100 AND 200) AS bitmap_by_pkey;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT xt_try($$INSERT INTO m2 VALUES (5, 'duplicate', 0)$$) AS duplicate;
-- an index built after the merge sees the same rows
CREATE INDEX m2_k_w ON m2 (k, w);
SET enable_seqscan = off;
SELECT count(*) AS after_new_index FROM m2 WHERE k > 0 AND w >= 0;
RESET enable_seqscan;

-- 3. A queue: a large first segment, then rows in one at a time, old rows
--    deleted and updated, subtransactions that insert and delete and roll
--    back.  Merged delete segments drop the rows they name among the merged
--    segments and keep, as one delete segment, what they name before them.
CREATE TEMP TABLE m3 (id int, grp int, payload text) USING xxl;
SELECT xxl.alter_table_set('m3', order_by => 'grp, id');
CREATE INDEX m3_id ON m3 (id);
CREATE TEMP TABLE m3_h (id int, grp int, payload text);
INSERT INTO m3 SELECT g, g % 10, repeat('x', g % 50) FROM generate_series(1, 3000) g;
INSERT INTO m3_h SELECT g, g % 10, repeat('x', g % 50) FROM generate_series(1, 3000) g;
CREATE FUNCTION pg_temp.queue(first int, last int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN first..last LOOP
    INSERT INTO m3 VALUES (i, i % 10, 'p' || i); INSERT INTO m3_h VALUES (i, i % 10, 'p' || i);
    IF i % 7 = 0 THEN DELETE FROM m3 WHERE id = i - 3000; DELETE FROM m3_h WHERE id = i - 3000; END IF;
    IF i % 11 = 0 THEN DELETE FROM m3 WHERE id = i - 5; DELETE FROM m3_h WHERE id = i - 5; END IF;
    IF i % 13 = 0 THEN
      UPDATE m3 SET payload = 'u' WHERE id = i - 2; UPDATE m3_h SET payload = 'u' WHERE id = i - 2;
    END IF;
    IF i % 17 = 0 THEN
      BEGIN
        INSERT INTO m3 VALUES (-1, 0, 'gone'); DELETE FROM m3 WHERE id = i - 1;
        RAISE EXCEPTION 'roll back';
      EXCEPTION WHEN raise_exception THEN NULL;
      END;
    END IF;
  END LOOP;
END $$;
SET client_min_messages = warning;
SELECT pg_temp.queue(3001, 3400);
RESET client_min_messages;
SELECT pg_temp.pages('m3') AS pages_before, pg_temp.same('m3', 'm3_h', 'grp, id, payload');
VACUUM m3;
SELECT pg_temp.pages('m3') AS pages_after, pg_temp.same('m3', 'm3_h', 'grp, id, payload');
-- deletes of rows before the merged ones stay deletes
DELETE FROM m3 WHERE id % 5 = 0 AND id < 3000;
DELETE FROM m3_h WHERE id % 5 = 0 AND id < 3000;
SET client_min_messages = warning;
SELECT pg_temp.queue(3401, 3500);
RESET client_min_messages;
VACUUM m3;
SELECT pg_temp.pages('m3') AS pages_after_deletes, pg_temp.same('m3', 'm3_h', 'grp, id, payload');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT count(*) FROM m3 WHERE id BETWEEN 1 AND 100000) = (SELECT count(*) FROM m3_h) AS by_index;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- compaction after merges
SELECT xxl.compact('m3') > 0 AS compacted;
SELECT pg_temp.same('m3', 'm3_h', 'grp, id, payload');

-- 4. No statement cap: the directory's pages past the ones the metapage
--    lists form a chain (with the testing setting, after one listed page:
--    160 + 254 entries).  450 statements of a row, one of 40,000 rows,
--    30 of a row: VACUUM merges the last 30 (the large segment is larger
--    than they are), whose entries are on a chained page; then 300 more
--    statements make the chain grow again from there, and the next VACUUM
--    merges everything.
SET xxl.test_listed_dirpages = 1;
CREATE TEMP TABLE m4 (k int PRIMARY KEY, v int) USING xxl;
RESET xxl.test_listed_dirpages;
CREATE TEMP TABLE m4_h (k int PRIMARY KEY, v int);
CREATE FUNCTION pg_temp.rows4(first int, last int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN first..last LOOP
    INSERT INTO m4 VALUES (i, i % 17); INSERT INTO m4_h VALUES (i, i % 17);
  END LOOP;
END $$;
SET client_min_messages = warning;
SELECT pg_temp.rows4(1, 450);
INSERT INTO m4 SELECT g, g % 17 FROM generate_series(451, 40450) g;
INSERT INTO m4_h SELECT g, g % 17 FROM generate_series(451, 40450) g;
SELECT pg_temp.rows4(40451, 40480);
RESET client_min_messages;
SELECT pg_temp.pages('m4') AS pages, pg_temp.same('m4', 'm4_h', 'k');
UPDATE m4 SET v = -v WHERE k % 100 = 1;
UPDATE m4_h SET v = -v WHERE k % 100 = 1;
DELETE FROM m4 WHERE k % 100 = 0;
DELETE FROM m4_h WHERE k % 100 = 0;
SELECT pg_temp.same('m4', 'm4_h', 'k');
VACUUM m4;
SELECT pg_temp.pages('m4') AS pages_after, pg_temp.same('m4', 'm4_h', 'k');
SET client_min_messages = warning;
SELECT pg_temp.rows4(40481, 40780);
RESET client_min_messages;
SELECT pg_temp.pages('m4') AS pages_grown, pg_temp.same('m4', 'm4_h', 'k');
VACUUM m4;
SELECT pg_temp.pages('m4') AS pages_merged, pg_temp.same('m4', 'm4_h', 'k');
SELECT xxl.compact('m4') > 0 AS compacted;
SELECT pg_temp.pages('m4') AS pages_compacted, pg_temp.same('m4', 'm4_h', 'k');

DROP TABLE m1, m1_h, m2, m2_h, m3, m3_h, m4, m4_h;
DROP FUNCTION xt_try(text), xt_differ(text, text), xt_leftovers(text);
\i test/include/end.sql

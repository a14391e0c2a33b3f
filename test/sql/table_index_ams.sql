-- table_index_ams.sql — every index AM that ships with PostgreSQL's core on
-- an xxl table, against a heap copy: btree, hash, gin, gist and spgist
-- answer as on heap through index and bitmap scans; BRIN, whose summaries
-- of heap block ranges lost rows on xxl TIDs (WHERE k > 50000 gave 0 of
-- 50000 rows), is refused with 0A000.  A zero-column xxl table with rows
-- plans and answers (its size estimate divided by zero).
\i test/include/begin.sql
\i test/include/helpers.sql
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloom;
RESET client_min_messages;
CREATE TABLE ia_h AS
SELECT g AS k, ARRAY[g % 10, g % 7] AS arr, point(g % 100, g / 100) AS p,
       int4range(g, g + 10) AS r, 'w' || (g % 1000) AS t
FROM generate_series(1, 100000) g;
CREATE TABLE ia_x USING xxl AS SELECT * FROM ia_h;
SELECT xt_try($$CREATE INDEX ia_brin ON ia_x USING brin (k)$$) AS brin;
SELECT xt_try($$CREATE INDEX ia_brin ON ia_x USING brin (k) WITH (pages_per_range = 1)$$) AS brin_small_ranges;
CREATE INDEX ia_x_bt ON ia_x (k);
CREATE INDEX ia_x_hash ON ia_x USING hash (t);
CREATE INDEX ia_x_gin ON ia_x USING gin (arr);
CREATE INDEX ia_x_gist ON ia_x USING gist (p);
CREATE INDEX ia_x_spgist ON ia_x USING spgist (r);
CREATE INDEX ia_x_bloom ON ia_x USING bloom (k, (length(t)));
CREATE INDEX ia_h_bt ON ia_h (k);
CREATE INDEX ia_h_hash ON ia_h USING hash (t);
CREATE INDEX ia_h_gin ON ia_h USING gin (arr);
CREATE INDEX ia_h_gist ON ia_h USING gist (p);
CREATE INDEX ia_h_spgist ON ia_h USING spgist (r);
CREATE INDEX ia_h_bloom ON ia_h USING bloom (k, (length(t)));
SET enable_seqscan = off;
CREATE FUNCTION pg_temp.both(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE nx bigint; nh bigint;
BEGIN
  EXECUTE 'SELECT count(*) FROM ia_x WHERE ' || cond INTO nx;
  EXECUTE 'SELECT count(*) FROM ia_h WHERE ' || cond INTO nh;
  RETURN nx || ' / ' || nh || ' differing ' ||
    xt_differ('SELECT * FROM ia_x WHERE ' || cond, 'SELECT * FROM ia_h WHERE ' || cond);
END $$;
SELECT pg_temp.both('k > 50000') AS btree_range;
SELECT pg_temp.both('k = 77777') AS btree_eq;
SELECT pg_temp.both($$t = 'w42'$$) AS hash_eq;
SELECT pg_temp.both('arr @> ARRAY[3, 5]') AS gin_contains;
SELECT pg_temp.both($$p <@ box '(10,10),(20,20)'$$) AS gist_box;
SELECT pg_temp.both('r && int4range(500, 520)') AS spgist_overlap;
DROP INDEX ia_x_bt, ia_h_bt;
SELECT pg_temp.both('k = 4242 AND length(t) = 4') AS bloom_eq;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ia_x WHERE k = 4242 AND length(t) = 4;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ia_x WHERE arr @> ARRAY[3, 5];
RESET enable_seqscan;
DROP TABLE ia_x, ia_h;

-- unique indexes count the live version of a key only: an UPDATE's old
-- version, a deleted row, and this transaction's own update are indexed
-- without the uniqueness check (CREATE UNIQUE INDEX, ADD PRIMARY KEY and
-- REINDEX failed with 23505 on a key held once)
CREATE TABLE iu (k int, v text) USING xxl;
INSERT INTO iu SELECT g, 'a' FROM generate_series(1, 1000) g;
UPDATE iu SET v = 'x' WHERE k = 1;
DELETE FROM iu WHERE k = 2;
INSERT INTO iu VALUES (2, 'again');
CREATE UNIQUE INDEX iu_k ON iu (k);
REINDEX TABLE iu;
DROP INDEX iu_k;
ALTER TABLE iu ADD PRIMARY KEY (k);
BEGIN;
UPDATE iu SET v = 'y' WHERE k = 3;
CREATE UNIQUE INDEX iu_k2 ON iu (k);
ROLLBACK;
-- the index still refuses a real duplicate, and finds the live versions
SELECT xt_try($$INSERT INTO iu VALUES (1, 'dup')$$) AS duplicate;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, v FROM iu WHERE k IN (1, 2, 3) ORDER BY k;
RESET enable_bitmapscan;
RESET enable_seqscan;
-- live duplicates still fail the build
ALTER TABLE iu DROP CONSTRAINT iu_pkey;
INSERT INTO iu VALUES (500, 'twice');
SELECT xt_try($$CREATE UNIQUE INDEX iu_k3 ON iu (k)$$) AS live_duplicate;
DROP TABLE iu;

-- zero columns
CREATE TABLE ia_zero () USING xxl;
INSERT INTO ia_zero SELECT FROM generate_series(1, 1000);
ANALYZE ia_zero;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ia_zero;
SELECT count(*) FROM ia_zero;
DROP TABLE ia_zero;
DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

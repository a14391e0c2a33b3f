-- sort_collation_db.sql — xxl.sort and XxlSort in databases whose default
-- collation is not C (en_US.UTF-8, C.UTF-8): plain keys compare as that
-- database's ORDER BY does, alone and mixed with others.  It creates a
-- database and the extension in it, so it runs in the superuser pass only
-- (scripts/test.sh, SUPERUSER_ONLY).
-- a database whose default collation is en_US.UTF-8: plain xxl.sort()
-- compares as its ORDER BY does
CREATE DATABASE xc_en_us TEMPLATE template0 ENCODING 'UTF8'
  LC_COLLATE 'en_US.utf8' LC_CTYPE 'en_US.utf8';
\c xc_en_us
CREATE EXTENSION pgxxl;
SET xxl.memory = '1MB';
SELECT setseed(0.25);
CREATE TABLE xd AS
SELECT g AS id, (SELECT string_agg(substr('0a-_ .bB1', 1 + floor(random() * 9)::int, 1), '')
                 FROM generate_series(1, 1 + (g % 7)) WHERE g > 0) AS s
FROM generate_series(1, 100000) g;
SELECT (SELECT md5(string_agg(s, E'\n')) FROM xxl.sort('xd', 's') AS x(id int, s text))
     = (SELECT md5(string_agg(s, E'\n' ORDER BY s)) FROM xd) AS same_order;
-- bytea compares bytes in every database (it took the collation's path)
SELECT (SELECT md5(string_agg(encode(b, 'hex'), ',')) FROM xxl.sort('SELECT convert_to(s, ''UTF8'') AS b FROM xd', 'b') AS x(b bytea))
     = (SELECT md5(string_agg(encode(convert_to(s, 'UTF8'), 'hex'), ',' ORDER BY convert_to(s, 'UTF8'))) FROM xd) AS bytea_order;
-- ORDER BY through XxlSort (every Sort replaced) against PostgreSQL's Sort,
-- keys mixed: an integer first, the text first, DESC, NULLs
\i test/sql/plans_same.sql
EXPLAIN (COSTS OFF) SELECT id FROM xd ORDER BY id % 97, s, id;
SELECT * FROM plans_same(ARRAY['id % 97, s, id', 's, id', 's DESC NULLS FIRST, id', 'id % 5 DESC, s, id',
  'nullif(s, ''a'') NULLS FIRST, id', 's COLLATE "C", id']);
\c contrib_regression
DROP DATABASE xc_en_us;

-- a database whose default collation is C.UTF-8, which compares as bytes:
-- the same checks, and the order equals COLLATE "C"'s
CREATE DATABASE xc_c_utf8 TEMPLATE template0 ENCODING 'UTF8'
  LC_COLLATE 'C.utf8' LC_CTYPE 'C.utf8';
\c xc_c_utf8
CREATE EXTENSION pgxxl;
SET xxl.memory = '1MB';
SELECT setseed(0.25);
CREATE TABLE xd AS
SELECT g AS id, CASE WHEN g % 101 = 0 THEN NULL
  ELSE (SELECT string_agg(substr('0a-_ .bB1éÉßあ😀', 1 + floor(random() * 14)::int, 1), '')
        FROM generate_series(1, 1 + (g % 7)) WHERE g > 0) END AS s
FROM generate_series(1, 100000) g;
SELECT (SELECT md5(string_agg(coalesce(s, '-'), E'\n')) FROM xxl.sort('xd', 's, id') AS x(id int, s text))
     = (SELECT md5(string_agg(coalesce(s, '-'), E'\n' ORDER BY s, id)) FROM xd) AS same_order,
       (SELECT md5(string_agg(coalesce(s, '-'), E'\n' ORDER BY s, id)) FROM xd)
     = (SELECT md5(string_agg(coalesce(s, '-'), E'\n' ORDER BY s COLLATE "C", id)) FROM xd) AS bytes_order;
\i test/sql/plans_same.sql
EXPLAIN (COSTS OFF) SELECT id FROM xd ORDER BY s, id;
SELECT * FROM plans_same(ARRAY['id % 97, s, id', 's, id', 's DESC NULLS FIRST, id', 'id % 5 DESC, s, id',
  'nullif(s, ''a'') NULLS FIRST, id', 's COLLATE "en_US.utf8", id']);
\c contrib_regression
DROP DATABASE xc_c_utf8;

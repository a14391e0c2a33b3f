-- sort_collation_db.sql — xxl.sort in a database whose default collation is
-- not C: plain keys compare as that database's ORDER BY does.  It creates a
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
\c contrib_regression
DROP DATABASE xc_en_us;

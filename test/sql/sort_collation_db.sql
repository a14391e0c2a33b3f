-- sort_collation_db.sql — xxl.sort and XxlSort in databases whose default
-- collation is not C (en_US.UTF-8, C.UTF-8, ICU) and in one not in UTF-8:
-- plain keys compare as that database's ORDER BY does, alone and mixed
-- with others (an integer first, the text first, two text columns, DESC,
-- NULLs, libc and ICU collations side by side), every order checked
-- against PostgreSQL's Sort (test/include/collation_db.sql).  It creates
-- databases and the extension in them, so it runs in the superuser pass
-- only (scripts/test.sh, SUPERUSER_ONLY).

-- en_US.UTF-8 (libc): the engine compares with strcoll_l
CREATE DATABASE xc_en_us TEMPLATE template0 ENCODING 'UTF8'
  LC_COLLATE 'en_US.utf8' LC_CTYPE 'en_US.utf8';
\c xc_en_us
\set alphabet '0a-_ .bB1éÉßあ😀'
\i test/include/collation_db.sql
-- bytea compares bytes in every database (it took the collation's path)
SELECT (SELECT md5(string_agg(encode(b, 'hex'), ',')) FROM xxl.sort('SELECT convert_to(s, ''UTF8'') AS b FROM xd', 'b') AS x(b bytea))
     = (SELECT md5(string_agg(encode(convert_to(s, 'UTF8'), 'hex'), ',' ORDER BY convert_to(s, 'UTF8'))) FROM xd) AS bytea_order;
EXPLAIN (COSTS OFF) SELECT id FROM xd ORDER BY n, s, id;
SELECT * FROM plans_same(ARRAY['s COLLATE "en_US.utf8" DESC, s2, id', 's COLLATE "C.utf8", id']);
\c contrib_regression
DROP DATABASE xc_en_us;

-- C.UTF-8, which compares as bytes: the order equals COLLATE "C"'s
CREATE DATABASE xc_c_utf8 TEMPLATE template0 ENCODING 'UTF8'
  LC_COLLATE 'C.utf8' LC_CTYPE 'C.utf8';
\c xc_c_utf8
\set alphabet '0a-_ .bB1éÉßあ😀'
\i test/include/collation_db.sql
SELECT (SELECT md5(string_agg(coalesce(s, '-'), E'\n' ORDER BY s, id)) FROM xd)
     = (SELECT md5(string_agg(coalesce(s, '-'), E'\n' ORDER BY s COLLATE "C", id)) FROM xd) AS bytes_order;
EXPLAIN (COSTS OFF) SELECT id FROM xd ORDER BY s, id;
SELECT * FROM plans_same(ARRAY['s COLLATE "en_US.utf8", id', 's2 COLLATE "en_US.utf8" DESC, s, id']);
\c contrib_regression
DROP DATABASE xc_c_utf8;

-- ICU (en-US) by default: the engine compares sort-key prefixes, then
-- with ICU where they tie
CREATE DATABASE xc_icu TEMPLATE template0 ENCODING 'UTF8'
  LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.utf8';
\c xc_icu
\set alphabet '0a-_ .bB1éÉßあ😀'
\i test/include/collation_db.sql
EXPLAIN (COSTS OFF) SELECT id FROM xd ORDER BY s, id;
SELECT * FROM plans_same(ARRAY['s COLLATE "en_US.utf8", id', 's COLLATE "und-x-icu" DESC NULLS LAST, n, id']);
\c contrib_regression
DROP DATABASE xc_icu;

-- LATIN1: an ICU collation takes whole sort keys (no conversion on the
-- engine's threads)
CREATE DATABASE xc_latin1 TEMPLATE template0 ENCODING 'LATIN1' LOCALE 'C';
\c xc_latin1
SET client_encoding = 'UTF8';
\set alphabet '0a-_ .bB1éÉßçÇ'
\i test/include/collation_db.sql
EXPLAIN (COSTS OFF) SELECT id FROM xd ORDER BY s COLLATE "en-x-icu", id;
SELECT * FROM plans_same(ARRAY['s COLLATE "und-x-icu" NULLS FIRST, s2 COLLATE "en-x-icu" DESC, id']);
\c contrib_regression
DROP DATABASE xc_latin1;

-- table_options.sql — the settings of xxl tables stay in step with the
-- tables, and an ordinary role's DDL never needs a right on them:
--  - DROP, ALTER TABLE ... DROP COLUMN, DROP INDEX, DROP VIEW and temporary
--    tables of a role that is not superuser (an event trigger with the
--    dropping user's rights refused them all, 42501);
--  - order keys are stored canonically and follow renames of their columns;
--    a later column of an old key column's name does not become the key;
--    dropping a key column removes the key with a NOTICE;
--  - keys of temporary tables go at ON COMMIT DROP and DISCARD TEMP.
\i test/include/begin.sql
SELECT pg_temp.xt_role('regress_xxl_ddl');
CREATE SCHEMA opt_ddl AUTHORIZATION regress_xxl_ddl;
SET ROLE regress_xxl_ddl;
SET search_path = opt_ddl;

-- an ordinary role's DDL on objects that are not xxl tables
CREATE TABLE t (a int, b int);
ALTER TABLE t DROP COLUMN b;
CREATE INDEX i ON t (a);
DROP INDEX i;
CREATE VIEW v AS SELECT 1 AS one;
DROP VIEW v;
CREATE TEMP TABLE tt (a int);
DROP TABLE tt;
DROP TABLE t;

-- and on its own xxl tables: the key in canonical form (names, not positions)
CREATE TABLE x (a int, b text, c int) USING xxl;
SELECT xxl.alter_table_set('x', '2 DESC, a NULLS FIRST');
SELECT order_by FROM xxl.table_options WHERE relation = 'x'::regclass;
INSERT INTO x SELECT g % 7, 'v' || (g % 5), g FROM generate_series(1, 2000) g;
-- renames follow, one at a time and swapped through a third name
ALTER TABLE x RENAME COLUMN b TO "Bee";
SELECT order_by FROM xxl.table_options WHERE relation = 'x'::regclass;
ALTER TABLE x RENAME COLUMN a TO tmp;
ALTER TABLE x RENAME COLUMN "Bee" TO a;
ALTER TABLE x RENAME COLUMN tmp TO "Bee";
SELECT order_by FROM xxl.table_options WHERE relation = 'x'::regclass;
-- new rows go in by the renamed key, and the ordered scan merges the
-- segments written before and after the renames as sorted ones
INSERT INTO x SELECT g % 3, 'w' || (g % 4), -g FROM generate_series(1, 1000) g;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT * FROM x ORDER BY a DESC, "Bee" NULLS FIRST;
CREATE TEMP TABLE keys_seen AS
SELECT string_agg(a || ':' || "Bee", ',') AS seq FROM (SELECT * FROM x ORDER BY a DESC, "Bee" NULLS FIRST) s;
SET xxl.ordered_scan = off;
SELECT seq = (SELECT string_agg(a || ':' || "Bee", ',') FROM (SELECT * FROM x ORDER BY a DESC, "Bee" NULLS FIRST) s)
  AS same_as_sort, length(seq) > 0 AS nonempty FROM keys_seen;
RESET xxl.ordered_scan;
DROP TABLE keys_seen;
-- a rename of another column, an added and a dropped one leave the key alone
ALTER TABLE x RENAME COLUMN c TO cc;
ALTER TABLE x ADD COLUMN d int;
ALTER TABLE x DROP COLUMN d;
SELECT order_by FROM xxl.table_options WHERE relation = 'x'::regclass;
-- a column that takes an old key column's name does not become the key
ALTER TABLE x RENAME COLUMN a TO aa;
ALTER TABLE x ADD COLUMN a int;
SELECT order_by FROM xxl.table_options WHERE relation = 'x'::regclass;
INSERT INTO x (aa, "Bee", cc, a) VALUES ('zz', 100, 0, -1);
SELECT aa, a FROM x ORDER BY aa DESC LIMIT 1;
-- dropping a key column drops the key, with a NOTICE; inserts go on
ALTER TABLE x DROP COLUMN aa;
SELECT count(*) AS keys FROM xxl.table_options WHERE relation = 'x'::regclass;
INSERT INTO x ("Bee", cc, a) VALUES (1, 1, 2);
SELECT count(*) FROM x;
-- a dropped table's key goes with it
SELECT xxl.alter_table_set('x', 'cc');
CREATE TEMP TABLE x_oid AS SELECT 'x'::regclass::oid AS oid;
DROP TABLE x;
SELECT count(*) AS keys_left FROM xxl.table_options WHERE relation::oid = (SELECT oid FROM x_oid);
DROP TABLE x_oid;

RESET search_path;
RESET ROLE;
DROP SCHEMA opt_ddl CASCADE;
SELECT pg_temp.xt_drop_role('regress_xxl_ddl');

-- temporary xxl tables: ON COMMIT DROP, DISCARD TEMP
BEGIN;
CREATE TEMP TABLE tx (a int) USING xxl ON COMMIT DROP;
SELECT xxl.alter_table_set('tx', 'a DESC');
COMMIT;
CREATE TEMP TABLE ty (a int) USING xxl;
SELECT xxl.alter_table_set('ty', 'a');
SELECT relation, order_by FROM xxl.table_options WHERE relation = 'ty'::regclass;
-- (this drops the helpers of test/include/begin.sql too: last)
DISCARD TEMP;
SELECT count(*) AS temp_keys_left FROM xxl.table_options o
WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = o.relation::oid);

\i test/include/end.sql

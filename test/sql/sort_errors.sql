-- sort_errors.sql — every way a sort can fail gives an error with a fitting
-- SQLSTATE and a message a user understands, and leaves nothing behind: no
-- target table, no spill file, a usable session.
--
-- xt_try() runs a statement in a subtransaction and shows
-- "SQLSTATE: message" (spill file names, which contain the backend's PID,
-- are normalized); a few errors are also shown at top level for their
-- DETAIL and HINT.
\i test/include/begin.sql
\i test/include/helpers.sql
-- spill files of this backend, and targets that must not exist

CREATE TABLE sort_src (a int, b text, p point, j jsonb, arr int[]);
INSERT INTO sort_src SELECT g, md5(g::text), point(g, g), '{}', ARRAY[g] FROM generate_series(1, 100) g;
CREATE TABLE sort_err_exists (a int);

-- order_by: unknown, ambiguous and out-of-range columns
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'nope', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('SELECT a, a FROM sort_src', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', '9', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', '0', 'sort_err_out')$$);
-- order_by: malformed
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a DESC,', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', '', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a ASCENDING', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a LIMIT 1', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a; DROP TABLE sort_src', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a FOR UPDATE', 'sort_err_out')$$);
-- order_by: what is not supported
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a + 1', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'lower(b)', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a USING >', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'sort_src.a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', '*', 'sort_err_out')$$);
-- collations
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a COLLATE "C"', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'b COLLATE "no such collation"', 'sort_err_out')$$);
SELECT xt_try($$SELECT count(*) FROM xxl.sort('SELECT a, b FROM sort_src', 'b COLLATE "und-x-icu"') AS s(a int, b text)$$);
SELECT xt_try($$SELECT xxl.sort_into('SELECT x.c || y.c AS b FROM (SELECT ''x'' COLLATE "C" AS c) x, (SELECT ''y'' COLLATE "POSIX" AS c) y', 'b', 'sort_err_out')$$);
-- key types without an encoding
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'p', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a, j', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'arr DESC', 'sort_err_out')$$);
-- sources
SELECT xt_try($$SELECT xxl.sort_into('no_such_table', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('no_such_schema.t', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('SELEC a FROM sort_src', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('SELECT nope FROM sort_src', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('INSERT INTO sort_src (a) VALUES (1) RETURNING a', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('WITH d AS (DELETE FROM sort_src RETURNING a) SELECT a FROM d', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('SELECT 1 AS a; SELECT 2 AS a', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('SELECT a INTO sort_err_out2 FROM sort_src', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('   ', 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into(NULL, 'a', 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', NULL, 'sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a', NULL)$$);
CREATE MATERIALIZED VIEW sort_mv AS SELECT 1 AS a WITH NO DATA;
SELECT xt_try($$SELECT xxl.sort_into('sort_mv', 'a', 'sort_err_out')$$);
-- targets
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a', 'sort_err_exists')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a', 'sort_src')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a', 'sort err out')$$);
SELECT xt_try($$SELECT xxl.sort_into('sort_src', 'a', 'no_such_schema.sort_err_out')$$);
SELECT xt_try($$SELECT xxl.sort_into('SELECT ROW(1, 2) AS r, 1 AS a', 'a', 'sort_err_out')$$);
-- the rows' shape for the caller
SELECT xt_try($$SELECT * FROM xxl.sort('sort_src', 'a') AS s(a int, b text)$$);
SELECT xt_try($$SELECT * FROM xxl.sort('sort_src', 'a') AS s(a int, b int, p point, j jsonb, arr int[])$$);
SELECT xt_try($$SELECT * FROM xxl.sort(NULL::int, 'a')$$);
CREATE TYPE sort_pair AS (a int, b text);
SELECT xt_try($$SELECT * FROM xxl.sort(NULL::sort_pair, 'a')$$);
SELECT xt_try($$SELECT * FROM xxl.sort(NULL::sort_src, NULL)$$);

-- settings
SELECT xt_try($$SET xxl.memory = '512kB'$$);
SELECT xt_try($$SET xxl.block_size = '6kB'$$);
SELECT xt_try($$SET xxl.disks = 'relative/dir'$$);
SELECT xt_try($$SET xxl.threads = -1$$);
SELECT xt_try($$SET xxl.no_such_setting = 1$$);
SET xxl.disks = '/nonexistent/xxl';
SELECT xt_try($$SELECT xxl.sort_into('SELECT generate_series(1, 300000) AS g', 'g', 'sort_err_out')$$);
-- a directory the server cannot write to
SET xxl.disks = '/';
SET xxl.memory = '1MB';
SELECT xt_try($$SELECT xxl.sort_into('SELECT generate_series(1, 300000) AS g', 'g', 'sort_err_out')$$);
RESET xxl.disks;
SELECT pg_temp.xt_role('regress_xxl_plain');
SET ROLE regress_xxl_plain;
SELECT xt_try($$SET xxl.disks = '/tmp'$$);
-- testing-only settings are the superuser's too
SELECT xt_try($$SET xxl.test_hold = 'merge'$$);
SELECT xt_try($$SET xxl.graph_max_semi_nodes = 10$$);
SELECT xt_try($$SET xxl.debug_fail_writes_after = '1MB'$$);
RESET ROLE;
SELECT pg_temp.xt_drop_role('regress_xxl_plain');

-- engine failures: a record beyond the budget, temp_file_limit, a full disk
SELECT xt_try($$SELECT xxl.sort_into('SELECT repeat(''x'', 2000000) AS a', 'a', 'sort_err_out')$$);
SET temp_file_limit = '1MB';
SELECT xt_try($$SELECT xxl.sort_into('SELECT g, md5(g::text) FROM (SELECT generate_series(1, 100000) AS g) s', 'md5', 'sort_err_out')$$);
RESET temp_file_limit;
SET xxl.debug_fail_writes_after = '256kB';
SELECT xt_try($$SELECT * FROM xxl.sort('SELECT g, md5(g::text) FROM (SELECT generate_series(1, 100000) AS g) s', 'md5') AS s(g int, m text)$$);
RESET xxl.debug_fail_writes_after;
SELECT xt_leftovers('sort_err_out');

-- the same at top level, with detail and hint
SELECT xxl.sort_into('sort_src', 'nope', 'sort_err_out');
SELECT xxl.sort_into('sort_src', 'a b c', 'sort_err_out');
SELECT xxl.sort_into('sort_src', 'p', 'sort_err_out');
SELECT xxl.sort_into('sort_src', 'a', 'sort_err_exists');
SELECT * FROM xxl.sort('sort_src', 'a');
SELECT xxl.sort_into('SELECT repeat(''x'', 2000000) AS a', 'a', 'sort_err_out');
-- with xxl.memory = -1 the hint names the setting the budget came from, not -1
SET xxl.memory = -1;
SET maintenance_work_mem = '1MB';
SELECT xxl.sort_into('SELECT repeat(''x'', 2000000) AS a', 'a', 'sort_err_out');
RESET maintenance_work_mem;
SET xxl.memory = '1MB';
SET temp_file_limit = '1MB';
SELECT xxl.sort_into('SELECT g, md5(g::text) FROM (SELECT generate_series(1, 100000) AS g) s', 'md5', 'sort_err_out');
RESET temp_file_limit;

-- cancel (here by statement_timeout) stops the sort: the real cancel error,
-- no target, no spill files, and the session goes on
SET statement_timeout = '300ms';
SELECT xxl.sort_into('SELECT generate_series(1, 1000000000) AS g', 'g DESC', 'sort_err_out');
RESET statement_timeout;
SELECT completed FROM xxl.last_stats();
SELECT xt_leftovers('sort_err_out');

-- an error after the sort, in the same transaction, takes the target away
BEGIN;
SELECT xxl.sort_into('sort_src', 'a', 'sort_err_out');
SELECT 1 / 0;
ROLLBACK;
SELECT xt_leftovers('sort_err_out');
-- and the session still sorts
RESET xxl.memory;
SELECT xxl.sort_into('sort_src', 'b DESC', 'sort_err_out_ok');
SELECT a FROM sort_err_out_ok ORDER BY ctid LIMIT 3;
SELECT completed, rows FROM xxl.last_stats();

DROP TABLE sort_src, sort_err_exists, sort_err_out_ok;
DROP MATERIALIZED VIEW sort_mv;
DROP TYPE sort_pair;
DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

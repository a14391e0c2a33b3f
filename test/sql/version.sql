-- version.sql — the extension installs, xxl.version() answers in the
-- documented shape, an update from every earlier version gives exactly the
-- objects of a fresh install, and DROP EXTENSION leaves nothing behind
-- (schema included).  The fresh install is the one pg_regress made
-- (--load-extension); the test leaves one behind for the tests after it.
SELECT extversion, extrelocatable FROM pg_extension WHERE extname = 'pgxxl';
-- thread count and O_DIRECT depend on the machine: check the shape only
SELECT xxl.version() ~ '^pgxxl \d+\.\d+(\.\d+)? \(openmp threads=[1-9]\d*, o_direct=(yes|no), block_size=\d+(B|KiB|MiB)\)$' AS version_ok;
-- the version is the installed one, and the block size the current setting
SELECT xxl.version() LIKE 'pgxxl ' || extversion || ' %' AS version_is_extversion
FROM pg_extension WHERE extname = 'pgxxl';
SET xxl.block_size = '512kB';
SELECT substring(xxl.version() FROM 'block_size=[^)]*') AS block_size;
RESET xxl.block_size;
SELECT substring(xxl.version() FROM 'block_size=[^)]*') AS block_size;
SELECT count(*) AS xxl_schemas FROM pg_namespace WHERE nspname = 'xxl';

-- every member object with what defines it (functions: signature, result,
-- volatility, parallel safety, strictness, C symbol, support, comment)
CREATE FUNCTION pg_temp.xxl_members() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
         || coalesce(' | ' || (
              SELECT format('(%s) -> %s %s parallel=%s strict=%s rows=%s symbol=%s support=%s: %s',
                            pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
                            p.provolatile, p.proparallel, p.proisstrict, p.prorows, p.prosrc,
                            p.prosupport, obj_description(p.oid, 'pg_proc'))
              FROM pg_proc p WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid), '')
  FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgxxl')
  UNION ALL
  -- what pg_dump dumps of the configuration tables, and under which condition
  SELECT 'config ' || u.c::regclass::text || ' ' || u.cond
  FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, cond)
  WHERE e.extname = 'pgxxl'
$$;
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.xxl_members() m;
CREATE TEMP TABLE fresh_view AS SELECT pg_get_viewdef('xxl.progress') AS v;
SELECT count(*) > 20 AS many_members FROM fresh;
DROP EXTENSION pgxxl;
CREATE EXTENSION pgxxl VERSION '0.1';
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
-- 0.1's bwt still answers with the new library until the update
SELECT xxl.bwt('banana'::bytea);
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
SELECT * FROM xxl.bwt('banana'::bytea);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.2 (no shortest paths yet)
CREATE EXTENSION pgxxl VERSION '0.2';
SELECT to_regprocedure('xxl.bfs(text,bigint,boolean,bigint)') IS NULL AS no_bfs_in_02;
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.3 (no table access method yet)
CREATE EXTENSION pgxxl VERSION '0.3';
SELECT count(*) AS no_xxl_am_in_03 FROM pg_am WHERE amname = 'xxl';
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.4 (no triangles, independent sets, coloring or PageRank yet)
CREATE EXTENSION pgxxl VERSION '0.4';
SELECT to_regprocedure('xxl.pagerank(text,double precision,integer,double precision)') IS NULL
  AS no_pagerank_in_04;
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.5 (no LCP arrays, repeats or corpora of documents yet)
CREATE EXTENSION pgxxl VERSION '0.5';
SELECT to_regprocedure('xxl.repeats(text,integer,integer)') IS NULL AS no_repeats_in_05;
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.6 (an event trigger kept the settings; keys as written): the
-- update keeps the keys of existing tables, in canonical form, and forgets
-- rows the event trigger missed
CREATE EXTENSION pgxxl VERSION '0.6';
SELECT count(*) AS event_trigger_in_06 FROM pg_event_trigger WHERE evtname = 'xxl_forget_dropped_tables';
CREATE TABLE keyed (a int, "B" text) USING xxl;
SELECT xxl.alter_table_set('keyed', '2 DESC, a');
INSERT INTO xxl.table_options VALUES (4294967000, 'gone');
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
SELECT relation, order_by FROM xxl.table_options;
DROP TABLE keyed;
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.7 (no progress view yet)
CREATE EXTENSION pgxxl VERSION '0.7';
SELECT to_regclass('xxl.progress') IS NULL AS no_progress_in_07;
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
-- the view's definition and grant, as a fresh install has them
SELECT pg_get_viewdef('xxl.progress') = (SELECT v FROM fresh_view) AS same_view,
       has_table_privilege('public', 'xxl.progress', 'SELECT') AS public_may_read;
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.8 (no packed shard reductions yet)
CREATE EXTENSION pgxxl VERSION '0.8';
SELECT to_regprocedure('xxl.shard_reduce_edges(text,text)') IS NULL AS no_shard_reduce_in_08;
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE updated;
DROP EXTENSION pgxxl;
-- and from 0.9 (no matrix products yet)
CREATE EXTENSION pgxxl VERSION '0.9';
SELECT to_regprocedure('xxl.matmul(text,text,boolean)') IS NULL AS no_matmul_in_09;
ALTER EXTENSION pgxxl UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.xxl_members() m;
SELECT 'only after update' AS side, m FROM (SELECT * FROM updated EXCEPT SELECT * FROM fresh) x(m)
UNION ALL
SELECT 'only in a fresh install', m FROM (SELECT * FROM fresh EXCEPT SELECT * FROM updated) x(m);
DROP TABLE fresh, updated, fresh_view;

DROP EXTENSION pgxxl;
SELECT count(*) AS xxl_schemas FROM pg_namespace WHERE nspname = 'xxl';
SELECT to_regprocedure('xxl.version()') IS NULL AS function_gone;
-- the extension must own schema xxl: a schema of that name made by someone
-- else makes CREATE EXTENSION fail instead of mixing objects into it
CREATE SCHEMA xxl;
CREATE EXTENSION pgxxl;
DROP SCHEMA xxl;
-- a fresh install again, for the tests after this one
CREATE EXTENSION pgxxl;
SELECT extversion FROM pg_extension WHERE extname = 'pgxxl';

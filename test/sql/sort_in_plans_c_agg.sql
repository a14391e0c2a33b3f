-- sort_in_plans_c_agg.sql — an aggregate whose transition function is an
-- extension's C function stays Agg's (such a function might insist on an
-- Agg caller, AggCheckCallContext), while a built-in one is grouped over
-- XxlSort.  Only a superuser creates C functions, so this runs in the
-- superuser pass only (scripts/test.sh, SUPERUSER_ONLY).
\i test/include/begin.sql
-- any call into the library loads it, and with it the planner's hooks
SELECT xxl.version() IS NOT NULL AS loaded;
SET xxl.memory = '1MB';
SET xxl.sort_in_plans_threshold = 0;
SET max_parallel_workers_per_gather = 0;
SET enable_hashagg = off;
CREATE TABLE sp AS SELECT g AS id, (g * 7919) % 1000 AS k FROM generate_series(1, 30000) g;
ANALYZE sp;
CREATE FUNCTION ga_larger(int4, int4) RETURNS int4 LANGUAGE internal IMMUTABLE STRICT AS 'int4larger';
CREATE AGGREGATE ga_max(int4) (SFUNC = ga_larger, STYPE = int4);
EXPLAIN (COSTS OFF) SELECT k, ga_max(k) FROM sp GROUP BY k;
EXPLAIN (COSTS OFF) SELECT k, max(k) FROM sp GROUP BY k;
SELECT count(*) FROM (SELECT k, ga_max(id) m FROM sp GROUP BY k) x WHERE m <> (SELECT max(id) FROM sp s WHERE s.k = x.k);
DROP AGGREGATE ga_max(int4);
DROP FUNCTION ga_larger;
DROP TABLE sp;
\i test/include/end.sql

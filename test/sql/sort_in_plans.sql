-- sort_in_plans.sql — big Sort nodes of ordinary queries run as XxlSort
-- (src/pg/plan/xxl_plan_sort.c, xxl_plan_sort_exec.c): where the node appears and
-- where it must not, the executor protocol (rescans, mark/restore, backward
-- fetches, parallel workers), and a differential test: random queries over
-- random tables, each run with xxl.sort_in_plans on and off, whose ordered
-- results must be identical.  Every sort runs with a 1MB budget, far below
-- the larger tables, so the external paths run.
--
-- The differential run takes pgxxl_test.diff_queries queries (200 unless set,
-- e.g. PGOPTIONS='-c pgxxl_test.diff_queries=5000' make installcheck).
\i test/include/begin.sql
-- any call into the library loads it, and with it the planner's hooks
SELECT xxl.version() IS NOT NULL AS loaded;
SET xxl.memory = '1MB';
SET xxl.block_size = '64kB';
SET xxl.sort_in_plans_threshold = 0;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE sp AS
SELECT g AS id, (g * 7919) % 1000 AS k, md5(g::text) AS t, (g % 7)::numeric / 3 AS n,
       '1 day'::interval * (g % 5) AS iv
  FROM generate_series(1, 30000) g;
ANALYZE sp;

-- where it appears: ORDER BY, DISTINCT, GROUP BY, windows, merge joins, set
-- operations, subqueries, CTEs, SubPlans
EXPLAIN (COSTS OFF) SELECT * FROM sp ORDER BY k DESC, t NULLS FIRST;
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT DISTINCT k FROM sp;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM sp GROUP BY k;
EXPLAIN (COSTS OFF) SELECT t FROM sp UNION SELECT t FROM sp;
RESET enable_hashagg;
EXPLAIN (COSTS OFF) SELECT id, rank() OVER (PARTITION BY k ORDER BY t) FROM sp;
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sp a JOIN sp b ON a.t = b.t;
RESET enable_hashjoin;
RESET enable_nestloop;
EXPLAIN (COSTS OFF)
WITH s AS MATERIALIZED (SELECT * FROM sp ORDER BY t) SELECT count(*) FROM s;
EXPLAIN (COSTS OFF)
SELECT id, (SELECT max(r) FROM (SELECT row_number() OVER (ORDER BY t) r FROM sp s2 WHERE s2.k = s1.k) x)
  FROM sp s1 WHERE id < 3;
-- collations: libc, ICU, C
EXPLAIN (COSTS OFF) SELECT t FROM sp ORDER BY t COLLATE "en_US", t COLLATE "en-x-icu", t COLLATE "C";
-- EXPLAIN ANALYZE shows what the sort did (numbers masked: they depend on
-- the machine's cores)
CREATE FUNCTION explain_masked(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    RETURN NEXT regexp_replace(line, '\d+', 'N', 'g');
  END LOOP;
END $$;
SELECT explain_masked('SELECT count(*) FROM (SELECT * FROM sp ORDER BY t OFFSET 0) s');
-- a bound whose top-N heap would not fit work_mem (4MB) is no reason to keep Sort
SELECT explain_masked('SELECT * FROM sp ORDER BY k LIMIT 1 OFFSET 29990');

-- the budget: xxl.memory when set, else work_mem (at least 1MB); the sort's
-- peak stays within it
CREATE FUNCTION sort_memory(q text) RETURNS TABLE (budget_kb int, within boolean) LANGUAGE plpgsql AS $$
DECLARE p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO p;
  p := p->0->'Plan'->'Plans'->0;
  RETURN QUERY SELECT (p->>'Sort Budget')::int, (p->>'Peak Memory')::int <= (p->>'Sort Budget')::int;
END $$;
SELECT * FROM sort_memory('SELECT count(*) FROM (SELECT * FROM sp ORDER BY t OFFSET 0) s');
RESET xxl.memory;
SET work_mem = '2MB';
SELECT * FROM sort_memory('SELECT count(*) FROM (SELECT * FROM sp ORDER BY t OFFSET 0) s');
SET work_mem = '64kB';
SELECT * FROM sort_memory('SELECT count(*) FROM (SELECT * FROM sp ORDER BY t OFFSET 0) s');
RESET work_mem;
SET xxl.memory = '1MB';

-- where it must not appear: a bound from LIMIT (top-N heap sort), a type
-- the sorter does not encode, another operator class, a nondeterministic
-- collation (for these three EXPLAIN VERBOSE says why), a sort expected
-- to fit the threshold, the setting off
EXPLAIN (COSTS OFF) SELECT * FROM sp ORDER BY t LIMIT 10;
EXPLAIN (COSTS OFF) SELECT * FROM (SELECT * FROM sp ORDER BY t) s LIMIT 10;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY iv;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY t USING ~<~;
CREATE COLLATION nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY id, t COLLATE nd;
EXPLAIN (FORMAT JSON, COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY t COLLATE nd;
RESET xxl.sort_in_plans_threshold;
EXPLAIN (COSTS OFF) SELECT * FROM sp WHERE id < 100 ORDER BY t;
EXPLAIN (COSTS OFF) SELECT * FROM sp ORDER BY t;
-- no key is left to PostgreSQL for speed: libc and ICU collations, after
-- an integer or alone, C.UTF-8 and C are all replaced
SET work_mem = '64kB';
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY id, t COLLATE "en-x-icu";
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY t COLLATE "en-x-icu" DESC;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM sp ORDER BY id, t COLLATE "en_US";
EXPLAIN (COSTS OFF) SELECT id FROM sp ORDER BY t COLLATE "C.utf8";
SET xxl.sort_in_plans_threshold = 0;
RESET work_mem;
SET xxl.sort_in_plans = off;
EXPLAIN (COSTS OFF) SELECT * FROM sp ORDER BY t;
RESET xxl.sort_in_plans;

-- the same rows, in the same order, as PostgreSQL's Sort
CREATE FUNCTION digest(q text, on_ boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  PERFORM set_config('xxl.sort_in_plans', on_::text, true);
  EXECUTE 'SELECT count(*) || '' '' || coalesce(md5(string_agg(x::text, E''\n'')), '''') FROM ('
          || q || ') x' INTO r;
  RETURN r;
EXCEPTION WHEN others THEN
  RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE FUNCTION uses_xxl_sort(q text, node text DEFAULT 'XxlSort') RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  PERFORM set_config('xxl.sort_in_plans', 'on', true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%' || node || '%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
EXCEPTION WHEN others THEN
  RETURN false;					-- a query that fails either way (compared by digest)
END $$;
CREATE FUNCTION same(q text) RETURNS boolean LANGUAGE sql
  AS $$ SELECT digest(q, true) = digest(q, false) $$;

-- columns nobody above reads come from the child as NULL constants: the
-- run leaves them out and returns NULLs, and what is read is the same; a
-- column that a key holds relabelled (COLLATE, a cast to varchar) comes
-- back from the key
SELECT same('SELECT count(*), sum(k), max(n) FROM (SELECT * FROM sp ORDER BY k, t COLLATE "C", id OFFSET 0) s') AS unread_columns,
       same('SELECT t, id FROM (SELECT * FROM sp ORDER BY t COLLATE "en-x-icu" DESC, id OFFSET 0) s') AS read_columns,
       same('SELECT t, k, id FROM (SELECT * FROM sp ORDER BY k, t::varchar COLLATE "C" DESC, id OFFSET 0) s') AS relabelled,
       same('SELECT * FROM (SELECT id, t::varchar COLLATE "C" AS tc, t FROM sp ORDER BY 2 DESC, id OFFSET 0) s') AS read_twice,
       same('SELECT t, k FROM (SELECT t, k, id FROM sp ORDER BY t COLLATE "C" DESC, t, id OFFSET 0) s') AS both_keys;
-- rows are decoded only when the parent reads them (xxl_lazy_slot.c): a
-- parent that reads no column, some, all, a whole row; parents that copy
-- rows (Hash, Material, CTE, INSERT, SetOp, a set-returning SQL function,
-- LockRows) or keep them (a scrollable cursor's store, by the same digest)
SET enable_hashagg = off;
SELECT bool_and(uses_xxl_sort(q)) AS all_xxl_sort, bool_and(same(q)) AS all_same
  FROM unnest(ARRAY[
    'SELECT count(*) FROM (SELECT * FROM sp ORDER BY t, id OFFSET 0) s',
    'SELECT k + 1, left(t, 3) FROM (SELECT * FROM sp ORDER BY t DESC, id OFFSET 0) s',
    'SELECT row_to_json(s)::text FROM (SELECT * FROM sp ORDER BY n, t, id OFFSET 0) s',
    'SELECT s.id, b.k FROM (SELECT * FROM sp ORDER BY t, id OFFSET 0) s JOIN sp b ON b.id = s.id ORDER BY 1',
    'SELECT s.t FROM sp b JOIN (SELECT * FROM sp ORDER BY t, id OFFSET 0) s ON b.id = s.k ORDER BY s.t, b.id',
    'WITH c AS MATERIALIZED (SELECT * FROM sp ORDER BY n, t) SELECT * FROM c',
    'SELECT t FROM sp INTERSECT SELECT t FROM sp WHERE id % 3 = 0',
    'SELECT k, t FROM sp WHERE id < 20000 ORDER BY t FOR UPDATE'
  ]) q;
RESET enable_hashagg;
CREATE TEMP TABLE sp_copy (LIKE sp);
INSERT INTO sp_copy SELECT * FROM sp ORDER BY t DESC, id;
SELECT count(*) = 30000 AS copied, count(*) FILTER (WHERE c IS DISTINCT FROM s) = 0 AS equal
  FROM sp_copy c JOIN sp s USING (id);
CREATE FUNCTION sorted_sp() RETURNS SETOF sp LANGUAGE sql AS $$ SELECT * FROM sp ORDER BY t, id $$;
SELECT same('SELECT * FROM sorted_sp()') AS set_returning_function;
DROP FUNCTION sorted_sp();
DROP TABLE sp_copy;
SELECT same('SELECT * FROM sp ORDER BY k DESC, t') AS order_by,
       same('SELECT DISTINCT k, n FROM sp ORDER BY n DESC, k') AS distinct_,
       same('SELECT id, rank() OVER (PARTITION BY k ORDER BY t DESC), sum(id) OVER (ORDER BY n) FROM sp ORDER BY id') AS windows,
       same('SELECT a.id, b.id FROM sp a FULL JOIN sp b ON a.t = b.k::text ORDER BY 1, 2') AS full_join;

-- ranking window functions over an XxlSort are counted as its rows stream
-- out (XxlWindow, xxl.window_in_plans): peers and partitions by the
-- WindowAgg's equality (numeric 1.0 = 1.00, NULLs together), expressions
-- over the functions, windows stacked on one sort, rescans of a SubPlan
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id, row_number() OVER w, rank() OVER w + 1, dense_rank() OVER w
  FROM sp WINDOW w AS (PARTITION BY k ORDER BY t DESC);
SELECT same('SELECT id, row_number() OVER w, rank() OVER w + 1, dense_rank() OVER w FROM sp '
            'WINDOW w AS (PARTITION BY k ORDER BY t DESC, id) ORDER BY id') AS row_number_rank,
       same('SELECT id, rank() OVER (PARTITION BY n ORDER BY k NULLS FIRST), '
            'dense_rank() OVER (PARTITION BY n ORDER BY k NULLS FIRST) FROM '
            '(SELECT id, CASE WHEN id % 5 = 0 THEN NULL ELSE k % 20 END AS k, '
            'CASE WHEN id % 3 = 0 THEN NULL ELSE n END AS n FROM sp) s ORDER BY id') AS nulls,
       same('SELECT x, rank() OVER (ORDER BY x), dense_rank() OVER (ORDER BY x) FROM '
            '(VALUES (1.0), (1.00), (2), (2.000), (NULL::numeric), (1)) v(x) ORDER BY 2, x::text') AS numeric_scales,
       same('SELECT id, dense_rank() OVER (PARTITION BY k), rank() OVER (ORDER BY t COLLATE "en-x-icu"), '
            'row_number() OVER (ORDER BY t COLLATE "en-x-icu", id) FROM sp ORDER BY id') AS partition_only_icu,
       same('SELECT id, rank() OVER (ORDER BY k), row_number() OVER (ORDER BY k, id) FROM sp '
            'WHERE id > 40000 ORDER BY id') AS empty,
       same('SELECT id, (SELECT max(r) FROM (SELECT dense_rank() OVER (ORDER BY t) r FROM sp s2 '
            'WHERE s2.k = s1.k) x) FROM sp s1 WHERE id < 30 ORDER BY id') AS rescans;
SELECT x, rank() OVER (ORDER BY x), dense_rank() OVER (ORDER BY x)
  FROM (VALUES (1.0), (1.00), (2), (2.000), (NULL::numeric), (1)) v(x) ORDER BY 2, x::text;
-- over any sorted input: a Sort kept for a small input, an index scan
SET xxl.sort_in_plans_threshold = '1GB';
EXPLAIN (COSTS OFF) SELECT id, rank() OVER (PARTITION BY k ORDER BY t) FROM sp;
SELECT same('SELECT id, rank() OVER (PARTITION BY k ORDER BY t), row_number() OVER (PARTITION BY k ORDER BY t, id) '
            'FROM sp ORDER BY id') AS over_sort;
RESET xxl.sort_in_plans_threshold;
SET xxl.sort_in_plans_threshold = 0;
CREATE INDEX sp_k ON sp (k, id);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id, dense_rank() OVER (ORDER BY k) FROM sp;
SELECT same('SELECT id, dense_rank() OVER (ORDER BY k), row_number() OVER (ORDER BY k, id) FROM sp ORDER BY id')
  AS over_index_scan;
RESET enable_seqscan;
DROP INDEX sp_k;
-- lag(): values of the partition's earlier rows (text, numeric, NULLs),
-- offsets 0 to beyond the partition, defaults constant or per row
SELECT same('SELECT id, lag(t) OVER w, lag(n, 3) OVER w, lag(t, 0) OVER w, lag(id, 2, -id) OVER w, '
            'lag(k::text || t, 1, ''none'') OVER w FROM (SELECT id, k % 7 AS k, '
            'CASE WHEN id % 4 = 0 THEN NULL ELSE t END AS t, CASE WHEN id % 3 = 0 THEN NULL ELSE n END AS n '
            'FROM sp) s WINDOW w AS (PARTITION BY k ORDER BY t DESC NULLS LAST, id) ORDER BY id') AS lag,
       same('SELECT id, lag(id, 1000) OVER (PARTITION BY k ORDER BY id) FROM sp ORDER BY id') AS lag_beyond,
       same('SELECT id, (SELECT max(l) FROM (SELECT lag(t, 2) OVER (ORDER BY t) l FROM sp s2 '
            'WHERE s2.k = s1.k) x) FROM sp s1 WHERE id < 30 ORDER BY id') AS lag_rescans;
EXPLAIN (COSTS OFF) SELECT lag(t, 2, 'x') OVER (PARTITION BY k ORDER BY id) FROM sp;
-- first_value() of frames that start with the partition: the first row's
SELECT same('SELECT id, first_value(t) OVER (PARTITION BY k % 9 ORDER BY n NULLS FIRST, id), '
            'first_value(n) OVER (PARTITION BY k % 9 ORDER BY n NULLS FIRST, id ROWS BETWEEN UNBOUNDED PRECEDING '
            'AND UNBOUNDED FOLLOWING), first_value(id * 2) OVER (PARTITION BY k % 9 ORDER BY n NULLS FIRST, id '
            'GROUPS UNBOUNDED PRECEDING) FROM (SELECT id, k, t, CASE WHEN id % 5 = 0 THEN NULL ELSE n END AS n '
            'FROM sp) s ORDER BY id') AS first_value,
       same('SELECT id, first_value(CASE WHEN id % 3 = 0 THEN NULL ELSE t END) OVER (PARTITION BY k ORDER BY id '
            'RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM sp ORDER BY id') AS first_value_whole;
-- without ORDER BY the first row of a partition is whichever the sort put
-- first among ties: the same row WindowAgg takes over the same XxlSort
SET xxl.window_in_plans = off;
CREATE TEMP TABLE fv_windowagg AS
SELECT digest('SELECT id, first_value(t) OVER (PARTITION BY k) FROM sp ORDER BY id', true) AS d;
RESET xxl.window_in_plans;
SELECT d = digest('SELECT id, first_value(t) OVER (PARTITION BY k) FROM sp ORDER BY id', true)
       AS first_value_unordered_as_windowagg FROM fv_windowagg;
DROP TABLE fv_windowagg;
EXPLAIN (COSTS OFF) SELECT first_value(t) OVER (PARTITION BY k ORDER BY id) FROM sp;
-- where WindowAgg stays: a run condition, a frame offset, an aggregate over
-- the window, another function, lag of a volatile value or with an offset
-- that is not a constant, first_value of a frame that starts later or
-- excludes rows, the setting off
EXPLAIN (COSTS OFF) SELECT * FROM (SELECT id, row_number() OVER (ORDER BY t) r FROM sp) s WHERE r <= 10;
EXPLAIN (COSTS OFF) SELECT rank() OVER (ORDER BY t ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM sp;
EXPLAIN (COSTS OFF) SELECT rank() OVER w, count(*) OVER w FROM sp WINDOW w AS (ORDER BY t);
EXPLAIN (COSTS OFF) SELECT ntile(4) OVER (ORDER BY t) FROM sp;
EXPLAIN (COSTS OFF) SELECT lead(t) OVER (ORDER BY t) FROM sp;
EXPLAIN (COSTS OFF) SELECT lag(random()) OVER (ORDER BY t) FROM sp;
EXPLAIN (COSTS OFF) SELECT lag(t, k) OVER (ORDER BY t) FROM sp;
EXPLAIN (COSTS OFF) SELECT first_value(t) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM sp;
EXPLAIN (COSTS OFF) SELECT first_value(t) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING EXCLUDE CURRENT ROW) FROM sp;
SET xxl.window_in_plans = off;
EXPLAIN (COSTS OFF) SELECT rank() OVER (ORDER BY t) FROM sp;
RESET xxl.window_in_plans;

-- a sorted GROUP BY is aggregated as the rows stream out (XxlAgg,
-- xxl.group_in_plans): groups by the Agg's equality (numeric 1.0 = 1.00,
-- NULLs together), count() and integer sums counted in C (sum(int8) beyond
-- 64 bits), other aggregates called through their own functions (strict
-- with a NULL start, final functions, polymorphic, SQL-defined), HAVING,
-- columns that depend on the key, empty input, rescans of a SubPlan
SET enable_hashagg = off;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT k, count(*), sum(id), max(t), avg(id) FROM sp GROUP BY k HAVING count(*) > 1;
CREATE TABLE ga AS
SELECT g AS id, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 97 END AS k,
       CASE WHEN g % 7 = 0 THEN NULL ELSE (g % 5)::numeric / 2 END AS n,
       CASE WHEN g % 13 = 0 THEN NULL ELSE md5(g::text) END AS t,
       (g % 3)::int2 AS s, 9000000000000000000 - g AS big, ARRAY[g % 4, g] AS arr,
       CASE WHEN g % 3 = 0 THEN NULL ELSE g % 2 = 0 END AS l
  FROM generate_series(1, 20000) g;
CREATE TABLE ga_pk (id int PRIMARY KEY, v text);
INSERT INTO ga_pk SELECT g, 'v' || g FROM generate_series(1, 3000) g;
ANALYZE ga, ga_pk;
CREATE FUNCTION ga_cat(state text, v text) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT CASE WHEN v IS NULL THEN state ELSE least(coalesce(state, v), v) END $$;
CREATE AGGREGATE ga_least(text) (SFUNC = ga_cat, STYPE = text);
CREATE TABLE ga_queries (name text, q text);
INSERT INTO ga_queries VALUES
  ('aggregates', 'SELECT k, count(*), count(t), sum(id), sum(s), sum(k), sum(big), min(t), max(n), avg(id), '
                 'avg(s), bool_and(l), bool_or(l), bit_or(k), max(arr), ga_least(t), every(id > 5) '
                 'FROM ga GROUP BY k ORDER BY k'),
  ('numeric_groups', 'SELECT n, count(*), min(id) FROM ga GROUP BY n ORDER BY n'),
  ('having', 'SELECT k % 3, n, count(*), max(t) FROM ga GROUP BY 1, 2 HAVING count(*) > 40 AND max(t) > ''8'' '
             'ORDER BY 1, 2'),
  ('dependent', 'SELECT id, v, count(*) FROM ga_pk JOIN ga USING (id) GROUP BY ga_pk.id ORDER BY 1'),
  ('empty', 'SELECT k, count(*), sum(big) FROM ga WHERE id < 0 GROUP BY k'),
  ('rescans', 'SELECT k, (SELECT max(c) FROM (SELECT t2.k % 5, count(*) c FROM ga t2 WHERE t2.id % 97 = t1.k '
              'GROUP BY 1) x) FROM ga t1 WHERE id < 40 ORDER BY id');
SELECT name, uses_xxl_sort(q, 'XxlAgg') AS xxl_agg, same(q) FROM ga_queries;
SELECT n, count(*), sum(big) FROM ga WHERE n IS NULL OR n < 1 GROUP BY n ORDER BY n;
SELECT x, count(*) FROM (VALUES (1.0), (1.00), (2), (2.000), (NULL::numeric), (1)) v(x) GROUP BY x ORDER BY x;
-- where Agg stays: an internal state, DISTINCT, ORDER BY or FILTER inside,
-- grouping sets or GROUPING(), hashing, the setting off
EXPLAIN (COSTS OFF) SELECT k, string_agg(t, ',') FROM sp GROUP BY k;
EXPLAIN (COSTS OFF) SELECT k, sum(n) FROM sp GROUP BY k;
EXPLAIN (COSTS OFF) SELECT k, count(DISTINCT t) FROM sp GROUP BY k;
EXPLAIN (COSTS OFF) SELECT k, count(*) FILTER (WHERE id > 5) FROM sp GROUP BY k;
EXPLAIN (COSTS OFF) SELECT k, t, count(*) FROM sp GROUP BY ROLLUP (k, t);
EXPLAIN (COSTS OFF) SELECT k, grouping(k), count(*) FROM sp GROUP BY k;
-- over a Sort kept for a nondeterministic collation, groups and peers are the
-- collation's ('ab' and 'AB' together), not equal bytes
SELECT same('SELECT upper(t) = t, lower(t), count(*), min(id) FROM (SELECT id, CASE WHEN id % 2 = 0 THEN upper(substr(t, 1, 1)) '
            'ELSE substr(t, 1, 1) END COLLATE nd AS t FROM sp) s GROUP BY t, 1 ORDER BY 2, 1') AS agg_nondeterministic,
       same('SELECT id, rank() OVER (ORDER BY t), dense_rank() OVER (ORDER BY t) FROM (SELECT id, CASE WHEN id % 2 = 0 '
            'THEN upper(substr(t, 1, 1)) ELSE substr(t, 1, 1) END COLLATE nd AS t FROM sp) s ORDER BY id') AS window_nondeterministic;
EXPLAIN (COSTS OFF) SELECT t, count(*) FROM (SELECT upper(t) COLLATE nd AS t FROM sp) s GROUP BY t;
-- (an extension's C aggregate: sort_in_plans_c_agg.sql)
SET xxl.group_in_plans = off;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM sp GROUP BY k;
RESET xxl.group_in_plans;
RESET enable_hashagg;
-- an error in an aggregate: the query fails as usual, the session goes on
SELECT k, sum(1 / (id - 19999)) FROM ga GROUP BY k;
SELECT count(*) FROM (SELECT k, count(*) FROM ga GROUP BY k) x;

-- under a Unique on key columns the sort drops rows whose whole key came
-- before, as they arrive and as they go out: DISTINCT with few keys (most
-- rows dropped), with all keys distinct (the filter turns itself off),
-- DISTINCT ON (the first row of each group by the whole key), UNION, text
-- in an ICU collation and NULLs; a GROUP BY (Agg) reads every row.  When
-- the key is the Unique's columns and nothing more, the Unique goes: equal
-- values have equal key bytes (numeric scales, -0 and 0, NaNs, char(n)
-- blanks, a libc collation); a scrollable cursor over it: see below
SET enable_hashagg = off;
SELECT explain_masked('SELECT DISTINCT k % 10 AS d FROM sp');
SELECT same('SELECT DISTINCT k % 10 AS d FROM sp ORDER BY 1') AS few_keys,
       same('SELECT DISTINCT id, t FROM sp ORDER BY 1') AS all_distinct,
       same('SELECT DISTINCT ON (k) k, t, id FROM sp ORDER BY k, t') AS distinct_on,
       same('SELECT t FROM sp UNION SELECT md5((id % 50)::text) FROM sp ORDER BY 1') AS union_,
       same('SELECT DISTINCT substr(t, 1, 2) COLLATE "en-x-icu" AS p, (CASE WHEN id % 3 = 0 THEN NULL ELSE id % 4 END) AS q FROM sp ORDER BY 1, 2') AS icu_nulls;
SELECT same('SELECT count(*), count(DISTINCT n::text) FROM (SELECT DISTINCT n FROM (SELECT CASE id % 4 WHEN 0 THEN 1.0 '
            'WHEN 1 THEN 1.00 WHEN 2 THEN round(k / 7.0, 2) ELSE NULL END AS n FROM sp) s) d') AS numeric_scales,
       same('SELECT count(*) FROM (SELECT DISTINCT f FROM (SELECT CASE id % 5 WHEN 0 THEN ''-0''::float8 WHEN 1 THEN 0 '
            'WHEN 2 THEN ''NaN'' WHEN 3 THEN -(''NaN''::float8) ELSE k END AS f FROM sp) s) d') AS floats,
       same('SELECT count(*) FROM (SELECT DISTINCT c FROM (SELECT (CASE WHEN id % 2 = 0 THEN ''a'' ELSE ''a  '' END '
            '|| (k % 10))::char(6) AS c FROM sp) s) d') AS char_blanks,
       same('SELECT DISTINCT substr(t, 1, 2) COLLATE "en_US" AS p FROM sp ORDER BY 1') AS libc;
EXPLAIN (COSTS OFF) SELECT DISTINCT k % 300 AS a, n FROM sp;
-- the sort names the result's columns, as the Unique did
SELECT DISTINCT k % 3 AS named FROM sp;
-- the Unique stays where the key has more columns than it compares
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (k) k, t FROM sp ORDER BY k, t;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM sp GROUP BY k;
RESET enable_hashagg;

-- columns restored from the sort key instead of stored: name, varchar, a
-- domain over text, bytea with zero bytes, integers; ascending and
-- descending, NULLs first and last, C and ICU collations
CREATE DOMAIN sp_dom AS text;
CREATE TABLE sp_keys AS
SELECT g AS id, ('n' || (g % 97))::name AS nm, ('v' || (g % 89))::varchar(10) AS vc,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ('d ' || (g % 83))::sp_dom END AS dm,
       decode(lpad(to_hex(g % 251), 4, '0'), 'hex') AS by, (g % 7)::int2 AS i2
  FROM generate_series(1, 20000) g;
SELECT same('SELECT nm, id FROM sp_keys ORDER BY nm DESC, id') AS name_desc,
       same('SELECT vc, dm, id FROM sp_keys ORDER BY vc COLLATE "en-x-icu", dm NULLS FIRST, id DESC') AS varchar_domain_icu,
       same('SELECT by, i2, id FROM sp_keys ORDER BY by DESC, i2 DESC NULLS LAST, id') AS bytea_int2,
       same('SELECT DISTINCT dm FROM sp_keys ORDER BY dm DESC NULLS LAST') AS distinct_domain;

-- merge join: the inner side is marked and restored over groups of equal keys
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM sp a JOIN sp b ON a.k = b.k;
SELECT same('SELECT a.id, b.id FROM sp a JOIN sp b ON a.k = b.k ORDER BY 1, 2') AS merge_join_marks;
RESET enable_material;
-- PostgreSQL puts a Material over an inner Sort expected to spill; over
-- XxlSort it goes: the node keeps the rows since the mark itself, as the
-- sorter's records, and moves a group that outgrows work_mem into a
-- tuplestore (the last group is restored after the inner side's end)
SET work_mem = '64kB';
CREATE TABLE mj_big AS SELECT g AS id, g % 4 AS k, md5(g::text) AS t FROM generate_series(1, 20000) g;
CREATE TABLE mj_few AS SELECT g AS id, g % 4 AS k FROM generate_series(1, 12) g;
ANALYZE mj_big, mj_few;
SET xxl.sort_in_plans = off;
EXPLAIN (COSTS OFF) SELECT f.id, b.t FROM mj_few f JOIN mj_big b ON f.k = b.k;
RESET xxl.sort_in_plans;
SELECT explain_masked('SELECT f.id, b.t FROM mj_few f JOIN mj_big b ON f.k = b.k');
SELECT explain_masked('SELECT a.id, b.id FROM sp a JOIN sp b ON a.k = b.k');
SELECT same('SELECT a.id, b.id FROM sp a JOIN sp b ON a.k = b.k ORDER BY 1, 2') AS small_groups_fixed,
       same('SELECT a.id, b.t FROM sp a JOIN sp b ON a.k = b.k ORDER BY 1, 2') AS small_groups_variable,
       same('SELECT a.id, b.id FROM sp a JOIN sp b ON a.t = b.t ORDER BY 1, 2') AS unique_text_keys,
       same('SELECT f.id, b.t FROM mj_few f JOIN mj_big b ON f.k = b.k ORDER BY 1, 2') AS big_groups_variable,
       same('SELECT f.id, b.id FROM mj_few f JOIN mj_big b ON f.k = b.k ORDER BY 1, 2') AS big_groups_fixed,
       same('SELECT f.id, b.id FROM mj_few f LEFT JOIN mj_big b ON f.k = b.k + 1 ORDER BY 1, 2') AS left_join;
RESET work_mem;
RESET enable_hashjoin;
RESET enable_nestloop;

-- a Seq Scan child is read directly (its heap's pages, its qual and
-- projection evaluated as the node would, EXPLAIN ANALYZE's counts kept):
-- the rows the statement's snapshot sees after deletes and updates of its
-- transaction, filters, expressions and system columns, parameters of a
-- SubPlan, row-level security, and not the rows the statement inserts
CREATE TABLE sp_vis AS SELECT g AS id, g % 100 AS k, md5(g::text) AS t FROM generate_series(1, 20000) g;
BEGIN;
DELETE FROM sp_vis WHERE id % 7 = 0;
UPDATE sp_vis SET k = k + 1000 WHERE id % 11 = 0;
SELECT explain_masked('SELECT k, id FROM sp_vis WHERE id % 3 <> 0 ORDER BY k, id');
SELECT same('SELECT k, id, t FROM sp_vis WHERE id % 3 <> 0 ORDER BY k, id') AS deleted_updated,
       same('SELECT k * 2 + 1 AS e, upper(t), ctid::text, tableoid::regclass::text FROM sp_vis ORDER BY 1, 3') AS expressions_system_columns,
       same($$SELECT id, (SELECT string_agg(t, ',') FROM (SELECT t FROM sp_vis s2 WHERE s2.k = s1.k AND s2.id > s1.id ORDER BY t) x)
                FROM sp_vis s1 WHERE id < 30 ORDER BY id$$) AS parameters;
SET LOCAL xxl.sort_in_plans = on;	-- (same() set it locally)
EXPLAIN (COSTS OFF) INSERT INTO sp_vis SELECT id + 100000, k, t FROM sp_vis ORDER BY k, id;
INSERT INTO sp_vis SELECT id + 100000, k, t FROM sp_vis ORDER BY k, id;
SELECT count(*), count(*) FILTER (WHERE id > 100000) AS inserted FROM sp_vis;
ROLLBACK;
SELECT pg_temp.xt_role('regress_sp_reader');
GRANT SELECT ON sp_vis TO regress_sp_reader;
ALTER TABLE sp_vis ENABLE ROW LEVEL SECURITY;
CREATE POLICY sp_vis_even ON sp_vis FOR SELECT TO regress_sp_reader USING (id % 2 = 0);
SET ROLE regress_sp_reader;
SELECT same('SELECT k, id FROM sp_vis ORDER BY k, id') AS row_security,
       (SELECT count(*) FROM (SELECT k FROM sp_vis ORDER BY k OFFSET 0) x) AS rows_seen;
RESET ROLE;
DROP TABLE sp_vis;
SELECT pg_temp.xt_drop_role('regress_sp_reader');

-- with no qual and no projection (SELECT * of fixed-width columns), or
-- one that only picks columns, the child's tuples are deformed straight
-- from its pages: the rows the snapshot sees, and not the rows the
-- statement inserts
CREATE TABLE sp_fix AS SELECT g AS id, g % 100 AS k, g * 3::bigint AS v FROM generate_series(1, 20000) g;
BEGIN;
DELETE FROM sp_fix WHERE id % 7 = 0;
UPDATE sp_fix SET k = k + 1000 WHERE id % 11 = 0;
SELECT explain_masked('SELECT * FROM sp_fix ORDER BY k, id');
SELECT same('SELECT * FROM sp_fix ORDER BY k, id') AS whole_rows,
       same('SELECT v, id FROM sp_fix ORDER BY v DESC, id') AS columns_picked;
SET LOCAL xxl.sort_in_plans = on;	-- (same() set it locally)
INSERT INTO sp_fix SELECT * FROM sp_fix ORDER BY k, id;
SELECT count(*), count(DISTINCT id), sum(v) FROM sp_fix;
ROLLBACK;
DROP TABLE sp_fix;

-- rescans with changed parameters: a SubPlan sorting per outer row
SELECT same($$SELECT id, (SELECT string_agg(t, ',') FROM (SELECT t FROM sp s2 WHERE s2.k = s1.k ORDER BY t DESC) x)
                FROM sp s1 WHERE id < 40 ORDER BY id$$) AS subplan_rescans;

-- scrollable cursors: backward fetches and absolute positions
CREATE FUNCTION scroll_walk(on_ boolean, q text DEFAULT 'SELECT id, k, t FROM sp ORDER BY k DESC, t',
                            pos int DEFAULT 12345, rel int DEFAULT 29000) RETURNS text LANGUAGE plpgsql AS $$
DECLARE c refcursor; r record; acc text := '';
BEGIN
  PERFORM set_config('xxl.sort_in_plans', on_::text, true);
  OPEN c SCROLL FOR EXECUTE q;
  EXECUTE format('FETCH ABSOLUTE %s FROM %I', pos, c) INTO r; acc := acc || r::text;
  FOR i IN 1..3 LOOP FETCH PRIOR FROM c INTO r; acc := acc || r::text; END LOOP;
  FETCH LAST FROM c INTO r; acc := acc || r::text;
  FETCH PRIOR FROM c INTO r; acc := acc || r::text;
  FETCH FIRST FROM c INTO r; acc := acc || r::text;
  EXECUTE format('FETCH RELATIVE %s FROM %I', rel, c) INTO r; acc := acc || r::text;
  CLOSE c;
  RETURN md5(acc);
END $$;
SELECT scroll_walk(true) = scroll_walk(false) AS scroll_cursor;
-- over a DISTINCT whose Unique the sort replaced (see below)
SET enable_hashagg = off;
SELECT scroll_walk(true, 'SELECT DISTINCT k % 300 AS a, n FROM sp', 1000, 1500) =
       scroll_walk(false, 'SELECT DISTINCT k % 300 AS a, n FROM sp', 1000, 1500) AS scroll_distinct;
RESET enable_hashagg;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM sp ORDER BY k, id;
FETCH ABSOLUTE 3 FROM c;
FETCH BACKWARD 2 FROM c;
MOVE LAST IN c;
FETCH BACKWARD 2 FROM c;
COMMIT;

-- parallel workers each sort their share below Gather Merge
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT id, t FROM sp ORDER BY t;
SELECT same('SELECT id, t FROM sp ORDER BY t') AS parallel_sort;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- errors in the child plan: the query fails as usual, the session goes on
SELECT id FROM (SELECT id, 1 / (30000 - id) AS boom FROM sp) s ORDER BY boom;
SELECT count(*) FROM (SELECT * FROM sp ORDER BY t OFFSET 0) s;

-- Differential testing: random tables (NULLs, duplicates, text in several
-- collations, numerics, NaN and infinities, dates, booleans, bytea with
-- zero bytes; 0 rows to several runs) and random queries of every kind above.
CREATE FUNCTION pick(VARIADIC a text[]) RETURNS text LANGUAGE sql
  AS $$ SELECT a[1 + floor(random() * array_length(a, 1))::int] $$;
CREATE FUNCTION make_table(name text, nrows int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($f$
    CREATE TABLE %I AS
    SELECT g AS id,
           CASE WHEN random() < 0.1 THEN NULL ELSE (random() * %s)::int END AS i,
           CASE WHEN random() < 0.1 THEN NULL ELSE ((random() - 0.5) * 1e12)::bigint END AS b,
           CASE WHEN random() < 0.1 THEN NULL
                ELSE (ARRAY['a', 'B', 'b', 'é', 'e', 'E ', '', 'ab', 'a b', 'Zz', 'zz', 'ä', 'Ä'])[1 + floor(random() * 13)::int]
                     || repeat('x', floor(random() * 3)::int) END AS t,
           CASE WHEN random() < 0.1 THEN NULL ELSE round((random() - 0.5)::numeric * 1000, 2) END AS n,
           CASE WHEN random() < 0.1 THEN NULL
                WHEN random() < 0.05 THEN 'NaN'::float8
                WHEN random() < 0.05 THEN 'Infinity'::float8
                WHEN random() < 0.05 THEN '-Infinity'::float8
                ELSE round((random() - 0.5) * 100)::float8 / 4 + 0.0 END AS f,
           CASE WHEN random() < 0.1 THEN NULL ELSE date '2000-01-01' + (random() * 400)::int END AS d,
           CASE WHEN random() < 0.1 THEN NULL ELSE random() < 0.5 END AS l,
           CASE WHEN random() < 0.1 THEN NULL
                ELSE decode(repeat(pick('00', '01', 'ff', '7f', ''), floor(random() * 4)::int), 'hex') END AS y
      FROM generate_series(1, %s) g$f$, name, greatest(nrows / 20, 3), nrows);
  EXECUTE format('ANALYZE %I', name);
END $$;

-- a column, with a collation now and then for text
CREATE FUNCTION col() RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN c = 't' THEN 't' || pick('', '', ' COLLATE "C"', ' COLLATE "en_US"', ' COLLATE "en-x-icu"')
              ELSE c END
    FROM pick('i', 'b', 't', 'n', 'f', 'd', 'l', 'y') c $$;
CREATE FUNCTION dir() RETURNS text LANGUAGE sql
  AS $$ SELECT pick('', ' DESC', ' ASC') || pick('', '', ' NULLS FIRST', ' NULLS LAST') $$;

CREATE FUNCTION random_query() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ta text := pick('r0', 'r1', 'r2', 'r3', 'r4', 'r4');
  tb text := pick('r1', 'r2', 'r3', 'r4');
  c1 text := col(); c2 text := col(); c3 text := col();
  jc text := pick('i', 'b', 't', 'n', 'd');
BEGIN
  CASE floor(random() * 12)::int
    WHEN 0 THEN
      RETURN format('SELECT id, %s, %s FROM %s ORDER BY %s%s, %s%s, id', c1, c2, ta, c1, dir(), c2, dir());
    WHEN 1 THEN
      RETURN format('SELECT DISTINCT %s, %s FROM %s ORDER BY 1%s, 2%s', c1, c2, ta, dir(), dir());
    WHEN 2 THEN
      RETURN format('SELECT %s, count(*), sum(id) FROM %s GROUP BY 1 ORDER BY 1%s', c1, ta, dir());
    WHEN 3 THEN
      RETURN format('SELECT id, rank() OVER (PARTITION BY %s ORDER BY %s%s), count(*) OVER (ORDER BY %s%s), '
                    'sum(id) OVER (PARTITION BY %s) FROM %s ORDER BY id', c2, c1, dir(), c3, dir(), c1, ta);
    WHEN 4 THEN
      RETURN format('SELECT x.id, y.id FROM %s x %s JOIN %s y ON x.%s = y.%s ORDER BY 1%s, 2%s',
                    ta, pick('', 'LEFT', 'FULL'), tb, jc, jc, dir(), dir());
    WHEN 5 THEN
      RETURN format('SELECT %s FROM %s %s SELECT %s FROM %s ORDER BY 1%s',
                    c1, ta, pick('UNION', 'INTERSECT', 'EXCEPT', 'UNION ALL'), c1, tb, dir());
    WHEN 6 THEN
      RETURN format('WITH s AS MATERIALIZED (SELECT id, %s AS c FROM %s ORDER BY %s%s, id) '
                    'SELECT row_number() OVER (), id, c FROM s', c1, ta, c1, dir());
    WHEN 7 THEN
      RETURN format('SELECT x.id, (SELECT string_agg(z::text, '','') FROM (SELECT %s AS z FROM %s y '
                    'WHERE y.%s = x.%s ORDER BY 1%s, y.id) s) FROM %s x WHERE x.id <= 15 ORDER BY 1',
                    c1, tb, jc, jc, dir(), ta);
    WHEN 8 THEN
      RETURN format('SELECT id, %s FROM %s ORDER BY %s%s, id LIMIT %s OFFSET %s',
                    c1, ta, c1, dir(), floor(random() * 50)::int, floor(random() * 20)::int);
    WHEN 9 THEN
      RETURN format('SELECT id, row_number() OVER u, lag(%s) OVER u, lag(%s, %s, %s) OVER u, first_value(%1$s) OVER u, rank() OVER w, '
                    'dense_rank() OVER w, 10 * rank() OVER (ORDER BY %s%s) FROM %s '
                    'WINDOW u AS (PARTITION BY %s ORDER BY %s%s, id), w AS (PARTITION BY %s ORDER BY %s%s) ORDER BY id',
                    c3, 'id', floor(random() * 4)::int, pick('NULL', '-1', 'id'), c3, dir(), ta,
                    c2, c1, dir(), c2, c1, dir());
    WHEN 11 THEN
      -- XxlAgg: aggregates counted in C, called through their functions, and
      -- kept in Agg (internal states, FILTER, DISTINCT); HAVING; rows of a group
      -- in the sort's order, so order-sensitive aggregates are ordered by id
      RETURN format('SELECT %s, %s, count(*), count(%s), sum(i), sum(b), sum(i::int2), min(%s), max(%s), '
                    'avg(i), avg(f), bool_and(l), bit_or(i), max(t COLLATE "C"), min(n), max(d), every(i > 0)%s '
                    'FROM %s GROUP BY 1, 2 HAVING count(*) %s ORDER BY 1%s, 2%s',
                    c1, c2, c3, c3, c2,
                    pick('', '', ', string_agg(t, '','' ORDER BY id)', ', count(*) FILTER (WHERE i > 5)',
                         ', count(DISTINCT i)', ', sum(n)', ', array_agg(id ORDER BY id)'),
                    ta, pick('> 0', '> 1', '< 3'), dir(), dir());
    ELSE
      RETURN format('SELECT %s, %s, count(*) FROM (SELECT * FROM %s ORDER BY %s%s) s GROUP BY 1, 2 ORDER BY 3 DESC, 1%s, 2%s',
                    c1, c2, ta, c2, dir(), dir(), dir());
  END CASE;
END $$;

CREATE FUNCTION diff_run(n int) RETURNS TABLE (queries int, mismatches int, replaced int, first_mismatch text)
LANGUAGE plpgsql AS $$
DECLARE q text; a text; b text;
BEGIN
  queries := 0; mismatches := 0; replaced := 0;
  FOR k IN 1..n LOOP
    q := random_query();
    -- merge joins and sorted grouping in half of the queries
    PERFORM set_config('enable_hashjoin', (random() < 0.5)::text, true);
    PERFORM set_config('enable_hashagg', (random() < 0.5)::text, true);
    PERFORM set_config('enable_nestloop', 'off', true);
    a := digest(q, true);
    b := digest(q, false);
    queries := queries + 1;
    IF uses_xxl_sort(q) THEN replaced := replaced + 1; END IF;
    IF a IS DISTINCT FROM b THEN
      mismatches := mismatches + 1;
      IF first_mismatch IS NULL THEN first_mismatch := q || ' => ' || a || ' vs ' || b; END IF;
    END IF;
  END LOOP;
  RETURN NEXT;
END $$;

SELECT setseed(0.42);
SELECT make_table('r0', 0), make_table('r1', 1), make_table('r2', 7),
       make_table('r3', 2000), make_table('r4', 30000);
SELECT setseed(0.17);
SELECT queries >= 200 AS ran, mismatches, replaced > queries / 2 AS mostly_replaced, first_mismatch
  FROM diff_run(coalesce(nullif(current_setting('pgxxl_test.diff_queries', true), '')::int, 200));

DROP FUNCTION diff_run, random_query, dir, col, pick, make_table, scroll_walk, same, uses_xxl_sort,
  digest, sort_memory, explain_masked;
DROP TABLE sp, sp_keys, r0, r1, r2, r3, r4, ga, ga_pk, ga_queries;
DROP AGGREGATE ga_least(text);
DROP FUNCTION ga_cat;
DROP DOMAIN sp_dom;
DROP COLLATION nd;
\i test/include/end.sql

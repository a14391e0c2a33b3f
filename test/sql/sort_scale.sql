-- sort_scale.sql — sorts at the smallest budget (1MB) over inputs more than
-- 200 times larger: the sorter keeps its runs and their block lists on disk,
-- so hundreds or thousands of runs merge in several passes with the peak within the
-- budget, where a run list in memory once failed with 53200 after some 800
-- runs.  The rows are PostgreSQL's: all of them (their sum) and in order (no
-- row below the one before it).
\i test/include/begin.sql
SET work_mem = '1MB';
SET xxl.memory = '1MB';
SET xxl.sort_in_plans_threshold = 0;
SET max_parallel_workers_per_gather = 0;
-- XxlSort in a plan: what EXPLAIN ANALYZE says it did
CREATE FUNCTION sort_work(q text) RETURNS TABLE (node text, budget_kb int, within boolean,
    many_runs boolean, passes_at_least_3 boolean, input_over_200x boolean) LANGUAGE plpgsql AS $$
DECLARE p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO p;
  p := p->0->'Plan'->'Plans'->0;
  RETURN QUERY SELECT p->>'Custom Plan Provider', (p->>'Sort Budget')::int,
    (p->>'Peak Memory')::int <= (p->>'Sort Budget')::int,
    (p->>'Runs')::int > 600, (p->>'Merge Passes')::int >= 3,
    (p->>'Spilled')::bigint > 200 * (p->>'Sort Budget')::bigint;
END $$;
SELECT * FROM sort_work('SELECT count(*) FROM (SELECT g, md5(g::text) t FROM generate_series(1, 4000000) g ORDER BY t OFFSET 0) s');
SELECT count(*) AS rows, sum(g) = 4000000::bigint * 4000001 / 2 AS all_rows,
       count(*) FILTER (WHERE t < prev) AS out_of_order
FROM (SELECT g, t, lag(t) OVER () AS prev
      FROM (SELECT g, md5(g::text) t FROM generate_series(1, 4000000) g ORDER BY t OFFSET 0) s) w;
-- sort_into at the same budget
SELECT xxl.sort_into('SELECT g, md5(g::text) AS m FROM generate_series(1, 4000000) g', 'm', 'scale_t');
SELECT runs > 600 AS many_runs, merge_passes >= 3 AS passes_at_least_3,
       memory_peak <= memory_limit AS within,
       (SELECT sum(b) FROM unnest(bytes_written) b) > 200 * memory_limit AS input_over_200x
FROM xxl.last_stats();
SELECT count(*) AS rows, sum(g) = 4000000::bigint * 4000001 / 2 AS all_rows,
       count(*) FILTER (WHERE m < prev) AS out_of_order
FROM (SELECT g, m, lag(m) OVER () AS prev FROM scale_t) w;
DROP TABLE scale_t;
DROP FUNCTION sort_work(text);
\i test/include/end.sql

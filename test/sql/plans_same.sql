\set ECHO none
-- test/sql/plans_same.sql — plans_same(keys): for each ORDER BY list in
-- keys, whether table xd's ids come out in the same order with
-- xxl.sort_in_plans on as with it off (PostgreSQL's Sort, the oracle);
-- and the session set so that every Sort that can be is replaced.  Read
-- with \i in each database a test makes (sort_collation_db.sql).
CREATE FUNCTION plans_same(keys text[]) RETURNS TABLE (order_by text, same boolean) LANGUAGE plpgsql AS $$
DECLARE k text; a text; b text;
BEGIN
  FOREACH k IN ARRAY keys LOOP
    PERFORM set_config('xxl.sort_in_plans', 'off', true);
    EXECUTE format('SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM xd ORDER BY %s OFFSET 0) q', k) INTO a;
    PERFORM set_config('xxl.sort_in_plans', 'on', true);
    EXECUTE format('SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM xd ORDER BY %s OFFSET 0) q', k) INTO b;
    order_by := k;
    same := a = b;
    RETURN NEXT;
  END LOOP;
END $$;
LOAD 'pgxxl';
SET xxl.sort_in_plans_threshold = 0;
SET max_parallel_workers_per_gather = 0;
\set ECHO all

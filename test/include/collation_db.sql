\set ECHO none
-- test/include/collation_db.sql — what sort_collation_db.sql does in each
-- database it makes: the extension; table xd of 100000 rows (id; n, an
-- integer with ties; s, strings of 0 to 7 characters of :alphabet, NULL
-- in every 101st row; s2, one of five strings of it, NULL in every 37th);
-- plans_same(extra): for each ORDER BY list of a common set and extra,
-- whether xd's ids come out in the same order with xxl.sort_in_plans on
-- as with it off (PostgreSQL's Sort, the oracle); and the session set so
-- that every Sort that can be is replaced, at a budget of 1MB.
CREATE EXTENSION pgxxl;
SELECT setseed(0.25) \gset
CREATE TABLE xd AS
SELECT g AS id, g % 97 AS n,
  CASE WHEN g % 101 = 0 THEN NULL
  ELSE (SELECT string_agg(substr(:'alphabet', 1 + floor(random() * length(:'alphabet'))::int, 1), '')
        FROM generate_series(1, g % 8) WHERE g > 0) END AS s,
  CASE WHEN g % 37 = 0 THEN NULL
  ELSE (SELECT substr(:'alphabet', 1 + (g * 7) % length(:'alphabet'), 1 + g % 3)) END AS s2
FROM generate_series(1, 100000) g;
ANALYZE xd;
CREATE FUNCTION plans_same(extra text[]) RETURNS TABLE (order_by text, same boolean) LANGUAGE plpgsql AS $$
DECLARE k text; a text; b text;
BEGIN
  FOREACH k IN ARRAY ARRAY['n, s, id', 's, id', 's DESC NULLS FIRST, id', 'n % 5 DESC, s2, s, id',
                           's2 DESC, s NULLS FIRST, id', 'nullif(s, ''a'') NULLS FIRST, id',
                           's COLLATE "C", id', 's COLLATE "en-x-icu" DESC, n, id',
                           's2 COLLATE "en-x-icu", s, id'] || extra LOOP
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
SET xxl.memory = '1MB';
SET work_mem = '1MB';
SET xxl.sort_in_plans_threshold = 0;
SET max_parallel_workers_per_gather = 0;
\set ECHO all
-- xxl.sort() with the database's default collation, as ORDER BY
SELECT (SELECT md5(string_agg(coalesce(s, '-'), E'\n')) FROM xxl.sort('xd', 's, id') AS x(id int, n int, s text, s2 text))
     = (SELECT md5(string_agg(coalesce(s, '-'), E'\n' ORDER BY s, id)) FROM xd) AS same_order;

-- sort_fixed.sql — rows whose columns all have a fixed width travel through
-- the sorter as fixed-size records (key, null bitmap, raw column bytes; key
-- columns of integer kinds are not stored twice) and come back as values.
-- Checked against ORDER BY for every fixed-width key type, ASC/DESC, NULLS
-- FIRST/LAST and multi-column keys, with NULLs, extremes, NaN, -0 and
-- by-reference payload types (name, uuid, interval, macaddr, point, timetz,
-- tid), a dropped column, and a budget far below the input, through all
-- three ways out: a new table, the custom scan in FROM, and the function
-- scan (xxl.sort_scan = off).  Rows too wide for a fixed record fall back to
-- variable records.
\i test/include/begin.sql
SET xxl.memory = '1MB';
SET xxl.block_size = '64kB';

SELECT setseed(0.17);
CREATE TABLE fx AS
SELECT g AS id,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY[-32768, 32767, 0, -1])[1 + (random() * 3)::int]
       ELSE (random() * 200 - 100)::int2 END AS i2,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY[-2147483648, 2147483647, 0, -1])[1 + (random() * 3)::int]
       ELSE (random() * 2e6 - 1e6)::int4 END AS i4,
  'gone'::text AS dropme,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY[-9223372036854775808, 9223372036854775807, 0, -1])[1 + (random() * 3)::int]
       ELSE (random() * 2e15 - 1e15)::int8 END AS i8,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.1 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', '1.17549435e-38'])[1 + (random() * 5)::int]::float4
       ELSE ((random() - 0.5) * 1000)::float4 END AS f4,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.1 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', '4.9e-324'])[1 + (random() * 5)::int]::float8
       ELSE (random() - 0.5) * 1e6 END AS f8,
  CASE WHEN random() < 0.1 THEN NULL ELSE random() < 0.5 END AS b,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + (random())::int]::date
       ELSE date '2000-01-01' + (random() * 20000 - 10000)::int END AS d,
  CASE WHEN random() < 0.1 THEN NULL ELSE time '00:00' + random() * interval '24 hours' END AS tm,
  CASE WHEN random() < 0.1 THEN NULL
       ELSE timestamp '2000-01-01' + (random() - 0.5) * interval '100 years' END AS ts,
  CASE WHEN random() < 0.1 THEN NULL
       ELSE timestamptz '2000-01-01 00:00+00' + (random() - 0.5) * interval '100 years' END AS tz,
  CASE WHEN random() < 0.1 THEN NULL ELSE md5(((random() * 3000)::int)::text)::uuid END AS u,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 4294967295)::bigint::oid END AS o,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 255 - 128)::int::"char" END AS ch,
  CASE WHEN random() < 0.1 THEN NULL ELSE ((random() - 0.5) * 1e6)::numeric::money END AS m,
  CASE WHEN random() < 0.1 THEN NULL ELSE substr(md5(random()::text), 1, (random() * 30)::int)::name END AS nm,
  CASE WHEN random() < 0.1 THEN NULL ELSE random() * interval '1000 days' END AS iv,
  CASE WHEN random() < 0.1 THEN NULL ELSE ('08:00:2b:01:02:' || lpad(to_hex((random() * 255)::int), 2, '0'))::macaddr END AS mac,
  CASE WHEN random() < 0.1 THEN NULL ELSE point(random() * 100, random() * 100) END AS pt,
  CASE WHEN random() < 0.1 THEN NULL ELSE (time '00:00' + random() * interval '24 hours')::timetz END AS ttz,
  CASE WHEN random() < 0.1 THEN NULL ELSE format('(%s,%s)', (random() * 1000)::int, (random() * 100)::int)::tid END AS ti
FROM generate_series(1, 30000) g;
ALTER TABLE fx DROP COLUMN dropme;
ANALYZE fx;

-- keys: the key columns (compared by position); the oracle orders the
-- same rows with the same ORDER BY list.  Whole rows are compared as
-- multisets of their text form.
CREATE FUNCTION fixed_check(order_by text, keys text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  layout text;
  bad_into bigint;
  bad_scan bigint;
  bad_fscan bigint;
  lost bigint;
BEGIN
  n := xxl.sort_into('fx', order_by, 'fixed_out');
  SELECT details->>'records' INTO layout FROM xxl.last_stats();
  EXECUTE format(
    'SELECT count(*) FROM (SELECT row_number() OVER (ORDER BY ctid) n, ROW(%1$s) k FROM fixed_out) x
       FULL JOIN (SELECT row_number() OVER (ORDER BY %2$s) n, ROW(%1$s) k FROM fx) y USING (n)
      WHERE x.k IS DISTINCT FROM y.k', keys, order_by) INTO bad_into;
  EXECUTE 'SELECT count(*) FROM ((SELECT s::text FROM fixed_out s EXCEPT ALL SELECT t::text FROM fx t)
     UNION ALL (SELECT t::text FROM fx t EXCEPT ALL SELECT s::text FROM fixed_out s)) d' INTO lost;
  DROP TABLE fixed_out;
  -- rows in FROM: the custom scan
  EXECUTE format(
    'SELECT count(*) FROM (SELECT row_number() OVER () n, ROW(%1$s) k FROM xxl.sort(NULL::fx, %2$L)) x
       FULL JOIN (SELECT row_number() OVER (ORDER BY %2$s) n, ROW(%1$s) k FROM fx) y USING (n)
      WHERE x.k IS DISTINCT FROM y.k', keys, order_by) INTO bad_scan;
  -- ... and the function scan
  SET LOCAL xxl.sort_scan = off;
  EXECUTE format(
    'SELECT count(*) FROM (SELECT row_number() OVER () n, ROW(%1$s) k FROM xxl.sort(NULL::fx, %2$L)) x
       FULL JOIN (SELECT row_number() OVER (ORDER BY %2$s) n, ROW(%1$s) k FROM fx) y USING (n)
      WHERE x.k IS DISTINCT FROM y.k', keys, order_by) INTO bad_fscan;
  RESET xxl.sort_scan;
  RETURN CASE WHEN bad_into = 0 AND bad_scan = 0 AND bad_fscan = 0 AND lost = 0
              THEN format('%s rows in order (%s records)', n, layout)
              ELSE format('%s rows (%s records), MISPLACED: %s in the table, %s in the scan, %s in the function scan; %s rows changed',
                          n, layout, bad_into, bad_scan, bad_fscan, lost) END;
END $$;

-- the external path really runs with fixed records: 9 key bytes, a 3-byte
-- null bitmap and the 200 bytes of the other 20 columns (i8 is not stored)
SELECT xxl.sort_into('fx', 'i8', 'fixed_out');
SELECT completed, rows, runs >= 10 AS many_runs, merge_passes >= 2 AS multi_pass,
       memory_peak <= memory_limit AS within_budget, details->>'records' AS records,
       details->>'record_bytes' AS record_bytes
  FROM xxl.last_stats();
DROP TABLE fixed_out;

-- fewer rows for the many checks below: still several runs each
DELETE FROM fx WHERE id > 12000;
VACUUM ANALYZE fx;

-- every fixed-width key type, both directions, both NULL placements
SELECT fixed_check('i2', 'i2');
SELECT fixed_check('i2 DESC NULLS LAST', 'i2');
SELECT fixed_check('i4 NULLS FIRST', 'i4');
SELECT fixed_check('i4 DESC', 'i4');
SELECT fixed_check('i8', 'i8');
SELECT fixed_check('i8 DESC NULLS LAST', 'i8');
SELECT fixed_check('f4', 'f4');
SELECT fixed_check('f4 DESC', 'f4');
SELECT fixed_check('f8 NULLS FIRST', 'f8');
SELECT fixed_check('f8 DESC NULLS LAST', 'f8');
SELECT fixed_check('b', 'b');
SELECT fixed_check('b DESC', 'b');
SELECT fixed_check('d', 'd');
SELECT fixed_check('d DESC NULLS LAST', 'd');
SELECT fixed_check('tm', 'tm');
SELECT fixed_check('ts DESC', 'ts');
SELECT fixed_check('tz NULLS FIRST', 'tz');
SELECT fixed_check('u', 'u');
SELECT fixed_check('u DESC', 'u');
SELECT fixed_check('o', 'o');
SELECT fixed_check('o DESC', 'o');
SELECT fixed_check('ch', 'ch');
SELECT fixed_check('ch DESC', 'ch');
SELECT fixed_check('m', 'm');
SELECT fixed_check('m DESC NULLS LAST', 'm');
-- multi-column keys
SELECT fixed_check('b, i2 DESC, id', 'b, i2, id');
SELECT fixed_check('ch NULLS FIRST, f4 DESC, i8', 'ch, f4, i8');
SELECT fixed_check('d DESC, u, i4 DESC NULLS LAST', 'd, u, i4');

-- inputs around the 256-record batches the rows are encoded in
CREATE TABLE fx_sizes (n int, sorted_rows bigint, in_order bool);
DO $$
DECLARE
  n int;
BEGIN
  FOREACH n IN ARRAY ARRAY[0, 1, 255, 256, 257, 511, 512, 513, 4096] LOOP
    EXECUTE format('CREATE TABLE fx_n AS SELECT id, i8 FROM fx ORDER BY id LIMIT %s', n);
    PERFORM xxl.sort_into('fx_n', 'i8 DESC, id', 'fx_n_out');
    INSERT INTO fx_sizes
      SELECT n, count(*), count(*) = count(*) FILTER (WHERE x.id = y.id)
        FROM (SELECT row_number() OVER (ORDER BY ctid) r, id FROM fx_n_out) x
        FULL JOIN (SELECT row_number() OVER (ORDER BY i8 DESC, id) r, id FROM fx_n) y USING (r);
    DROP TABLE fx_n, fx_n_out;
  END LOOP;
END $$;
SELECT * FROM fx_sizes ORDER BY n;
DROP TABLE fx_sizes;

-- pages with dead rows (whole pages of them, and partly dead pages) and
-- updated rows, not vacuumed: read as a heap scan reads them
CREATE TABLE fx_dead WITH (fillfactor = 70) AS SELECT id, i8, f8 FROM fx;
DELETE FROM fx_dead WHERE id BETWEEN 3000 AND 6000 OR id % 7 = 0;
UPDATE fx_dead SET f8 = coalesce(f8, 0) + 1, i8 = i8 / 2 WHERE id % 5 = 0;
SELECT xxl.sort_into('fx_dead', 'i8 DESC, id', 'fx_dead_out');
SELECT count(*) AS differing FROM
  (SELECT row_number() OVER (ORDER BY ctid) r, (id, i8, f8)::text t FROM fx_dead_out) x
  FULL JOIN (SELECT row_number() OVER (ORDER BY i8 DESC, id) r, (id, i8, f8)::text t FROM fx_dead) y
  USING (r) WHERE x.t IS DISTINCT FROM y.t;
SELECT count(*) = (SELECT count(*) FROM fx_dead) AS all_rows FROM fx_dead_out;
DROP TABLE fx_dead, fx_dead_out;

-- the record form reads the same rows through a query
SELECT count(*) AS misplaced FROM
  (SELECT row_number() OVER () n, i4, id FROM
     xxl.sort('SELECT id, i4, nm, pt FROM fx WHERE id % 3 <> 0', 'i4 DESC, id')
       AS s(id int, i4 int, nm name, pt point)) x
  FULL JOIN (SELECT row_number() OVER (ORDER BY i4 DESC, id) n, i4, id FROM fx WHERE id % 3 <> 0) y
  USING (n)
 WHERE (x.i4, x.id) IS DISTINCT FROM (y.i4, y.id);
SELECT details->>'records' AS records FROM xxl.last_stats();

-- rows too wide for a fixed record go as variable records, just as right
CREATE TABLE fx_wide AS
SELECT id, i4, nm AS n1, nm AS n2, nm AS n3, nm AS n4, nm AS n5, nm AS n6, nm AS n7,
       nm AS n8, nm AS n9, nm AS n10, nm AS n11, nm AS n12, nm AS n13, nm AS n14,
       nm AS n15, nm AS n16, nm AS n17
  FROM fx;
SELECT xxl.sort_into('fx_wide', 'i4 DESC, id', 'fx_wide_out');
SELECT details->>'records' AS records FROM xxl.last_stats();
SELECT count(*) AS misplaced FROM
  (SELECT row_number() OVER (ORDER BY ctid) n, id FROM fx_wide_out) x
  FULL JOIN (SELECT row_number() OVER (ORDER BY i4 DESC, id) n, id FROM fx_wide) y USING (n)
 WHERE x.id IS DISTINCT FROM y.id;
SELECT count(*) AS changed FROM ((SELECT s::text FROM fx_wide_out s EXCEPT ALL SELECT t::text FROM fx_wide t)
  UNION ALL (SELECT t::text FROM fx_wide t EXCEPT ALL SELECT s::text FROM fx_wide_out s)) d;

DROP TABLE fx, fx_wide, fx_wide_out;
DROP FUNCTION fixed_check(text, text);
\i test/include/end.sql

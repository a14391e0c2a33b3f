-- sort_order.sql — xxl.sort_into and xxl.sort give exactly ORDER BY's order
-- for every supported key type, ASC/DESC, NULLS FIRST/LAST and multi-column
-- keys, on random data with NULLs, duplicates, negatives, NaN, infinities,
-- empty, long (TOASTed) and prefix-sharing strings, and zero bytes.  The
-- budget is far below the input so many runs and two merge passes happen.
--
-- The oracle: number the rows of each result in output order (ctid order
-- of the freshly filled target; WITH ORDINALITY for the set-returning
-- form), number the source's rows with row_number() OVER (ORDER BY ...),
-- and count positions whose key values differ.  Rows with equal keys may
-- come in any order, so only the keys are compared by position (with
-- IS DISTINCT FROM, which treats NaN = NaN, -0 = 0 and 1.0 = 1.00 as
-- PostgreSQL's sort does); whole rows are compared as multisets of their
-- text form, so every payload value must come back unchanged.
\i test/include/begin.sql
SET xxl.memory = '1MB';
SET xxl.block_size = '64kB';

SELECT setseed(0.42);
CREATE TABLE sort_data AS
SELECT g AS id,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 200 - 100)::int2 END AS i2,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY[-2147483648, 2147483647, 0, -1])[1 + (random() * 3)::int]
       ELSE (random() * 2e6 - 1e6)::int4 END AS i4,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY[-9223372036854775808, 9223372036854775807, 0, -1])[1 + (random() * 3)::int]
       ELSE (random() * 2e15 - 1e15)::int8 END AS i8,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.1 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', '1.17549435e-38', '-3.4028235e+38'])[1 + (random() * 6)::int]::float4
       ELSE ((random() - 0.5) * 1000)::float4 END AS f4,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.1 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', '2.2250738585072014e-308', '-1.7976931348623157e+308', '4.9e-324'])[1 + (random() * 7)::int]::float8
       ELSE (random() - 0.5) * 1e6 END AS f8,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.1 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '0', '-0.0', '1.000', '1', '0.0001', '-0.0001', '1e100', '-1e100', '1e-100', '-1e-100', '9999.9999', '10000', '99999999', '100000000.00000001'])[1 + (random() * 16)::int]::numeric
       ELSE round(((random() - 0.5) * 10 ^ (random() * 30 - 10))::numeric, (random() * 20)::int) END AS num,
  CASE WHEN random() < 0.1 THEN NULL ELSE random() < 0.5 END AS b,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity', '4713-01-01 BC', '5874897-12-31'])[1 + (random() * 3)::int]::date
       ELSE date '2000-01-01' + (random() * 20000 - 10000)::int END AS d,
  CASE WHEN random() < 0.1 THEN NULL ELSE time '00:00' + random() * interval '24 hours' END AS tm,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + (random())::int]::timestamp
       ELSE timestamp '2000-01-01' + (random() - 0.5) * interval '100 years' END AS ts,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + (random())::int]::timestamptz
       ELSE timestamptz '2000-01-01 00:00+00' + (random() - 0.5) * interval '100 years' END AS tz,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.05 THEN '00000000-0000-0000-0000-000000000000'::uuid
       ELSE md5(((random() * 5000)::int)::text)::uuid END AS u,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.1 THEN (ARRAY['', ' ', 'a', 'ab', 'a b', 'A', 'Z', 'é', 'ü', 'zz', 'ß', '~', E'\t', 'a ', '日本'])[1 + (random() * 14)::int]
       WHEN random() < 0.02 THEN repeat(md5(random()::text), 10 + (random() * 200)::int)
       ELSE substr(md5(random()::text), 1, (random() * 8)::int) END AS tx,
  CASE WHEN random() < 0.1 THEN NULL ELSE substr(md5(random()::text), 1, (random() * 4)::int)::varchar(20) END AS vc,
  CASE WHEN random() < 0.1 THEN NULL ELSE substr(md5(random()::text), 1, (random() * 3)::int)::char(3) END AS bp,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.2 THEN (ARRAY['\x'::bytea, '\x00', '\x0000', '\x00ff', '\x01', '\xff', '\xff00', '\x0001', '\x000100'])[1 + (random() * 8)::int]
       ELSE decode(substr(md5(random()::text), 1, 2 * (random() * 3)::int), 'hex') END AS by,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 255 - 128)::int::"char" END AS ch,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 4294967295)::bigint::oid END AS o,
  CASE WHEN random() < 0.1 THEN NULL ELSE ((random() - 0.5) * 1e6)::numeric::money END AS m,
  CASE WHEN random() < 0.1 THEN NULL ELSE substr(md5(random()::text), 1, (random() * 3)::int)::name END AS nm,
  CASE WHEN random() < 0.05 THEN NULL ELSE jsonb_build_object('k', g, 'v', random()) END AS js,
  CASE WHEN random() < 0.05 THEN NULL ELSE ARRAY[g, g + 1] END AS arr,
  -- about 1% of rows carry a 9.6 kB incompressible value, stored out of line
  CASE WHEN random() < 0.01 THEN (SELECT string_agg(md5(random()::text || x), '') FROM generate_series(1, 300) x) END AS big
FROM generate_series(1, 40000) g;
SELECT count(*) AS rows, count(big) AS toasted,
       pg_relation_size(reltoastrelid) > 0 AS has_toast
  FROM sort_data, pg_class WHERE relname = 'sort_data' GROUP BY reltoastrelid;

-- keys: the key columns (to compare by position); src: a table name;
-- oracle: the ORDER BY list for the oracle if order_by's does not fit a
-- window's ORDER BY (where "ORDER BY 3" sorts by the constant 3)
CREATE FUNCTION sort_check(src text, order_by text, keys text, oracle text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  bad_into bigint;
  bad_srf bigint;
BEGIN
  oracle := coalesce(oracle, order_by);
  n := xxl.sort_into(src, order_by, 'sort_check_out');
  EXECUTE format(
    'SELECT count(*) FROM (SELECT row_number() OVER (ORDER BY ctid) n, ROW(%1$s) k FROM sort_check_out) x
       FULL JOIN (SELECT row_number() OVER (ORDER BY %2$s) n, ROW(%1$s) k FROM %3$s) y USING (n)
      WHERE x.k IS DISTINCT FROM y.k', keys, oracle, src) INTO bad_into;
  DROP TABLE sort_check_out;
  EXECUTE format(
    'SELECT count(*) FROM (SELECT ordinality n, ROW(%1$s) k FROM xxl.sort(NULL::%3$s, %2$L) WITH ORDINALITY) x
       FULL JOIN (SELECT row_number() OVER (ORDER BY %4$s) n, ROW(%1$s) k FROM %3$s) y USING (n)
      WHERE x.k IS DISTINCT FROM y.k', keys, order_by, src, oracle) INTO bad_srf;
  RETURN CASE WHEN bad_into = 0 AND bad_srf = 0 THEN format('%s rows in order', n)
              ELSE format('%s rows, MISPLACED: %s in the table, %s in the set', n, bad_into, bad_srf) END;
END $$;

-- the external path really runs: many runs, at least two merge passes
SELECT xxl.sort_into('sort_data', 'id DESC', 'sort_out');
SELECT completed, rows, rows_out, runs >= 10 AS many_runs, merge_passes >= 2 AS multi_pass,
       memory_peak <= memory_limit AS within_budget, block_size,
       bytes_written[1] > pg_relation_size('sort_data') AS spilled
  FROM xxl.last_stats();
-- every value comes back unchanged, TOASTed ones included
SELECT count(*) AS differing_rows FROM (
  (SELECT s::text FROM sort_out s EXCEPT ALL SELECT t::text FROM sort_data t)
  UNION ALL
  (SELECT t::text FROM sort_data t EXCEPT ALL SELECT s::text FROM sort_out s)) d;
SELECT count(*) AS differing_rows FROM (
  (SELECT s::text FROM xxl.sort(NULL::sort_data, 'tx DESC, id') s EXCEPT ALL SELECT t::text FROM sort_data t)
  UNION ALL
  (SELECT t::text FROM sort_data t EXCEPT ALL SELECT s::text FROM xxl.sort(NULL::sort_data, 'tx') s)) d;
SELECT sum(length(big)) AS big_chars, bool_and(big = (SELECT big FROM sort_data d WHERE d.id = s.id)) AS big_equal
  FROM sort_out s WHERE big IS NOT NULL;
DROP TABLE sort_out;

-- one key per type, both directions, both NULL placements
SELECT sort_check('sort_data', 'i2', 'i2');
SELECT sort_check('sort_data', 'i2 DESC NULLS LAST', 'i2');
SELECT sort_check('sort_data', 'i4 NULLS FIRST', 'i4');
SELECT sort_check('sort_data', 'i8 DESC', 'i8');
SELECT sort_check('sort_data', 'f4', 'f4');
SELECT sort_check('sort_data', 'f4 DESC', 'f4');
SELECT sort_check('sort_data', 'f8 NULLS FIRST', 'f8');
SELECT sort_check('sort_data', 'f8 DESC NULLS LAST', 'f8');
SELECT sort_check('sort_data', 'num', 'num');
SELECT sort_check('sort_data', 'num DESC', 'num');
SELECT sort_check('sort_data', 'b, d DESC', 'b, d');
SELECT sort_check('sort_data', 'tm DESC, ts', 'tm, ts');
SELECT sort_check('sort_data', 'tz NULLS FIRST, u', 'tz, u');
SELECT sort_check('sort_data', 'u DESC NULLS LAST', 'u');
SELECT sort_check('sort_data', 'tx', 'tx');
SELECT sort_check('sort_data', 'tx DESC', 'tx');
SELECT sort_check('sort_data', 'vc DESC, bp, by', 'vc, bp, by');
SELECT sort_check('sort_data', 'by DESC NULLS LAST', 'by');
SELECT sort_check('sort_data', 'ch, o DESC', 'ch, o');
SELECT sort_check('sort_data', 'm DESC, nm', 'm, nm');
-- multi-column keys mixing everything; positions as in ORDER BY 3
SELECT sort_check('sort_data', 'b DESC NULLS FIRST, i2 NULLS FIRST, tx DESC NULLS LAST, id', 'b, i2, tx, id');
SELECT sort_check('sort_data', '3 DESC, 2, 1', 'i4, i2, id', 'i4 DESC, i2, id');
-- collations: "C" and its aliases compare bytes; a libc collation other
-- than C goes through strxfrm (C.utf8 is present on glibc 2.35 and later)
SELECT sort_check('sort_data', 'tx COLLATE "C" DESC', 'tx');
SELECT sort_check('sort_data', 'tx COLLATE ucs_basic', 'tx');
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_collation WHERE collname = 'C.utf8' AND collprovider = 'c'
             AND collencoding IN (-1, pg_char_to_encoding('UTF8'))) THEN
    IF sort_check('sort_data', 'tx COLLATE "C.utf8"', 'tx') NOT LIKE '%in order'
       OR sort_check('sort_data', 'vc COLLATE "C.utf8" DESC, bp COLLATE "C.utf8"', 'vc, bp') NOT LIKE '%in order' THEN
      RAISE EXCEPTION 'C.utf8 order differs from ORDER BY';
    END IF;
  END IF;
END $$;

-- numeric: weights from -100 to +300, up to 120 decimals, specials
SELECT setseed(0.17);
CREATE TABLE sort_num AS
SELECT g AS id, CASE g % 9
  WHEN 0 THEN NULL
  WHEN 1 THEN round((random() - 0.5)::numeric * 10::numeric ^ (random() * 200 - 100)::int, (random() * 120)::int)
  WHEN 2 THEN ((random() * 20 - 10)::int)::numeric
  WHEN 3 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '0', '0.000', '-0'])[1 + (random() * 5)::int]::numeric
  WHEN 4 THEN round((random() - 0.5)::numeric, (random() * 8)::int)
  WHEN 5 THEN (10::numeric ^ (random() * 300)::int) * (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END)
  WHEN 6 THEN 1 / (10::numeric ^ (random() * 300)::int) * (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END)
  WHEN 7 THEN ((random() * 100000)::int)::numeric / 10000
  ELSE (random() * 1e20)::numeric(30,5) - 5e19 END AS n
FROM generate_series(1, 40000) g;
SELECT sort_check('sort_num', 'n', 'n');
SELECT sort_check('sort_num', 'n DESC NULLS LAST', 'n');

-- floats across the whole exponent range, subnormals, NaN of both signs
SELECT setseed(0.23);
CREATE TABLE sort_float AS
SELECT g AS id, CASE WHEN g % 7 = 0
    THEN (ARRAY['NaN', '-NaN', 'Infinity', '-Infinity', '-0', '0', '1e-320', '-1e-320', '1.7976931348623157e308'])[1 + (random() * 8)::int]::float8
    ELSE (random() - 0.5) * 10 ^ ((random() * 600 - 300)::int) END AS f8
FROM generate_series(1, 40000) g;
ALTER TABLE sort_float ADD COLUMN f4 real;
UPDATE sort_float SET f4 = CASE WHEN f8 = 'NaN' OR abs(f8) = 'Infinity' THEN f8::real
                                WHEN abs(f8) > 3e38 OR abs(f8) < 1e-37 THEN 0 ELSE f8::real END;
SELECT sort_check('sort_float', 'f8, f4 DESC', 'f8, f4');
SELECT sort_check('sort_float', 'f4 DESC NULLS LAST, f8', 'f4, f8');

-- a query source and the record form, through SPI
SELECT count(*) AS misplaced
  FROM ROWS FROM (xxl.sort('SELECT id, tx, num FROM sort_data WHERE id % 3 <> 0', 'num DESC, tx')
                  AS (id int, tx text, num numeric)) WITH ORDINALITY x
  FULL JOIN (SELECT row_number() OVER (ORDER BY num DESC, tx) AS ordinality, num, tx
               FROM sort_data WHERE id % 3 <> 0) y USING (ordinality)
 WHERE (x.num, x.tx) IS DISTINCT FROM (y.num, y.tx);
SELECT runs > 1 AS spilled FROM xxl.last_stats();

DROP FUNCTION sort_check(text, text, text, text);
DROP TABLE sort_data, sort_num, sort_float;
\i test/include/end.sql

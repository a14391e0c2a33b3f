-- suffix_check.sql — xxl.suffix_array_check, the external checker of [T]
-- §5.7: it accepts correct suffix arrays (given as a table or as a query,
-- rows in any order, columns found by name or by position, any integer
-- type) and rejects corrupted ones (swapped, duplicated, missing, extra,
-- shifted, out of range, rotated entries), at a roomy and at the smallest
-- budget, on small texts and on texts whose sorts spill.
\i test/include/begin.sql

CREATE FUNCTION ck_gen(kind text, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(string_agg(set_byte('\x00'::bytea, 0,
    CASE kind
      WHEN 'rand4' THEN 97 + get_byte(sha256(int4send(i)), 0) % 4
      WHEN 'rand256' THEN get_byte(sha256(int4send(i)), 0)
      WHEN 'unary' THEN 0
      WHEN 'periodic' THEN 97 + i % 5
    END), ''::bytea ORDER BY i), ''::bytea)
  FROM generate_series(1, n) i
$$;

-- "verdict: reason" for one suffix array source against the text in ck_text
CREATE FUNCTION ck(sa text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ok boolean := xxl.suffix_array_check('ck_text', sa);
BEGIN
  RETURN ok || coalesce(': ' || (SELECT details->>'reason' FROM xxl.last_stats()), '');
END $$;

-- the corruptions, as queries over the correct suffix array ck_sa (n = 3000)
CREATE TABLE ck_cases (name text, sa text);
INSERT INTO ck_cases VALUES
  ('correct (table)', 'ck_sa'),
  ('correct (query, by pos)', 'SELECT * FROM ck_sa ORDER BY pos DESC'),
  ('correct (columns swapped)', 'SELECT pos, rank FROM ck_sa'),
  ('correct (integer)', 'SELECT rank::int, pos::smallint FROM ck_sa'),
  ('correct (by position)', 'SELECT rank AS a, pos AS b FROM ck_sa'),
  ('adjacent swap', 'SELECT CASE rank WHEN 10 THEN 11 WHEN 11 THEN 10 ELSE rank END AS rank, pos FROM ck_sa'),
  ('distant swap', 'SELECT CASE rank WHEN 5 THEN 2000 WHEN 2000 THEN 5 ELSE rank END AS rank, pos FROM ck_sa'),
  ('duplicate pos', 'SELECT rank, CASE WHEN rank = 7 THEN (SELECT pos FROM ck_sa WHERE rank = 8) ELSE pos END AS pos FROM ck_sa'),
  ('duplicate rank', 'SELECT CASE WHEN rank = 50 THEN 51 ELSE rank END AS rank, pos FROM ck_sa'),
  ('missing entry', 'SELECT * FROM ck_sa WHERE rank <> 100'),
  ('extra entry', 'TABLE ck_sa UNION ALL SELECT 3001, 1'),
  ('0-based pos', 'SELECT rank, pos - 1 AS pos FROM ck_sa'),
  ('pos beyond n', 'SELECT rank, CASE WHEN pos = 1 THEN 3001 ELSE pos END AS pos FROM ck_sa'),
  ('0-based rank', 'SELECT rank - 1 AS rank, pos FROM ck_sa'),
  ('negative rank', 'SELECT -rank AS rank, pos FROM ck_sa'),
  ('rank beyond n', 'SELECT CASE WHEN rank = 3000 THEN 3001 ELSE rank END AS rank, pos FROM ck_sa'),
  ('rotated', 'SELECT rank % 3000 + 1 AS rank, pos FROM ck_sa'),
  ('reversed', 'SELECT 3001 - rank AS rank, pos FROM ck_sa'),
  ('empty', 'SELECT * FROM ck_sa WHERE false');

CREATE TABLE ck_text AS SELECT ck_gen('rand4', 3000) AS d;
CREATE TABLE ck_sa AS SELECT * FROM xxl.suffix_array((SELECT d FROM ck_text));

SET xxl.memory = '64MB';
SELECT name, ck(sa) FROM ck_cases ORDER BY name;
SET xxl.memory = '1MB';
SELECT name, ck(sa) FROM ck_cases ORDER BY name;
-- the bytea form
SELECT xxl.suffix_array_check((SELECT d FROM ck_text), 'ck_sa');
SELECT xxl.suffix_array_check((SELECT d FROM ck_text), 'SELECT rank, pos + 1 FROM ck_sa');

-- texts that make comparisons long: one letter, periodic
DROP TABLE ck_text, ck_sa;
CREATE TABLE ck_text AS SELECT ck_gen('unary', 3000) AS d;
CREATE TABLE ck_sa AS SELECT * FROM xxl.suffix_array((SELECT d FROM ck_text));
SELECT name, ck(sa) FROM ck_cases WHERE name IN ('correct (table)', 'adjacent swap', 'reversed')
ORDER BY name;
DROP TABLE ck_text, ck_sa;
CREATE TABLE ck_text AS SELECT ck_gen('periodic', 3000) AS d;
CREATE TABLE ck_sa AS SELECT * FROM xxl.suffix_array((SELECT d FROM ck_text));
SELECT name, ck(sa) FROM ck_cases WHERE name IN ('correct (table)', 'distant swap', 'rotated')
ORDER BY name;

-- empty and one-byte texts
SELECT xxl.suffix_array_check('SELECT ''''::text', 'SELECT 1::bigint AS rank, 1::bigint AS pos WHERE false');
SELECT xxl.suffix_array_check('SELECT ''''::text', 'SELECT 1::bigint AS rank, 1::bigint AS pos');
SELECT xxl.suffix_array_check('SELECT ''x''::text', 'SELECT 1::bigint AS rank, 1::bigint AS pos');
SELECT xxl.suffix_array_check('\x'::bytea, 'SELECT 1 AS rank, 1 AS pos WHERE false');

-- a text whose sorts spill at the smallest budget (250 kB, split over rows)
SET xxl.memory = '1MB';
CREATE TABLE ck_rows AS
  SELECT i AS id, ck_gen('rand256', 10) || decode(md5(i::text), 'hex') AS b
  FROM generate_series(1, 10000) i;
CREATE TABLE ck_rows_sa AS SELECT * FROM xxl.suffix_array('SELECT b FROM ck_rows ORDER BY id');
SELECT count(*) FROM ck_rows_sa;
SELECT xxl.suffix_array_check('SELECT b FROM ck_rows ORDER BY id', 'ck_rows_sa');
SELECT memory_peak <= memory_limit AS within_budget, (bytes_written[1] > 0) AS spilled,
       (details->>'io_vs_thesis')::float8 < 2 AS io_near_thesis
FROM xxl.last_stats();
SELECT xxl.suffix_array_check('SELECT b FROM ck_rows ORDER BY id',
  'SELECT CASE rank WHEN 1000 THEN 200000 WHEN 200000 THEN 1000 ELSE rank END, pos FROM ck_rows_sa');
SELECT details->>'reason' FROM xxl.last_stats();
SELECT xxl.suffix_array_check('SELECT b FROM ck_rows ORDER BY id DESC', 'ck_rows_sa');

\i test/include/end.sql

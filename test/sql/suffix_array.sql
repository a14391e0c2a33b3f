-- suffix_array.sql — xxl.suffix_array and xxl.suffix_array_into against a
-- naive suffix sort: row_number() over substr(data, i), which compares bytea
-- bytewise (memcmp, then length), i.e. exactly suffix order.  Texts: random
-- over 2, 4 and 256 letters, one letter, periodic, 0x00/0x01/0xFF, empty and
-- one byte, a corpus split over many rows (text, varchar, bytea, domains,
-- multibyte UTF-8, empty rows); each at a roomy and at the smallest budget.
-- Texts of a few hundred kB at the smallest budget take the external DC3
-- path with recursion: there the oracle is the in-memory build (itself
-- checked above) and xxl.suffix_array_check.
\i test/include/begin.sql

-- deterministic texts: kind, length
CREATE FUNCTION sa_gen(kind text, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(string_agg(set_byte('\x00'::bytea, 0,
    CASE kind
      WHEN 'rand2' THEN 97 + get_byte(sha256(int4send(i)), 0) % 2
      WHEN 'rand4' THEN 97 + get_byte(sha256(int4send(i)), 0) % 4
      WHEN 'rand256' THEN get_byte(sha256(int4send(i)), 0)
      WHEN 'unary' THEN 120
      WHEN 'unary_end' THEN CASE WHEN i = n THEN 121 ELSE 120 END
      WHEN 'periodic3' THEN 97 + i % 3
      WHEN 'periodic7' THEN get_byte(sha256(int4send(i % 7)), 0)
      WHEN 'zero_ff' THEN (ARRAY[0, 255, 1, 0])[1 + get_byte(sha256(int4send(i)), 1) % 4]
    END), ''::bytea ORDER BY i), ''::bytea)
  FROM generate_series(1, n) i
$$;

CREATE FUNCTION sa_oracle(d bytea) RETURNS TABLE(rank bigint, pos bigint) LANGUAGE sql AS $$
  SELECT row_number() OVER (ORDER BY substr(d, i)), i FROM generate_series(1, length(d)) i
$$;

-- rows in which the two suffix arrays differ
CREATE FUNCTION sa_diff(d bytea) RETURNS bigint LANGUAGE sql AS $$
  WITH got AS (SELECT * FROM xxl.suffix_array(d)), want AS (SELECT * FROM sa_oracle(d))
  SELECT (SELECT count(*) FROM (TABLE got EXCEPT ALL TABLE want) a)
       + (SELECT count(*) FROM (TABLE want EXCEPT ALL TABLE got) b)
$$;

CREATE TABLE sa_cases AS
  SELECT k AS kind, n, sa_gen(k, n) AS d
  FROM unnest(ARRAY['rand2', 'rand4', 'rand256', 'unary', 'unary_end', 'periodic3',
                    'periodic7', 'zero_ff']) k,
       unnest(ARRAY[0, 1, 2, 3, 4, 5, 17, 100, 1000, 2500]) n;

-- the smallest cases in full
SELECT * FROM xxl.suffix_array('\x'::bytea);
SELECT * FROM xxl.suffix_array('\x00'::bytea);
SELECT * FROM xxl.suffix_array('\xff00ff00'::bytea);
SELECT * FROM xxl.suffix_array(convert_to('mississippi', 'UTF8'));
SELECT * FROM xxl.suffix_array(NULL::bytea);

-- every case against the oracle, roomy budget (no rows = all agree)
SET xxl.memory = '64MB';
SELECT kind, n, sa_diff(d) FROM sa_cases WHERE sa_diff(d) <> 0;
SELECT count(*) AS cases FROM sa_cases;
-- ... and the smallest budget xxl.memory allows
SET xxl.memory = '1MB';
SELECT kind, n, sa_diff(d) FROM sa_cases WHERE sa_diff(d) <> 0;
SELECT operator, completed, rows, rows_out, memory_peak <= memory_limit AS within_budget
FROM xxl.last_stats();

-- a corpus split over many rows: the rows' raw bytes concatenated in the
-- query's order, empty rows and multibyte characters included
CREATE TABLE sa_rows (id int, t text);
INSERT INTO sa_rows
  SELECT i, CASE WHEN i % 10 = 0 THEN ''
                 WHEN i % 10 = 1 THEN repeat('ä€😀', i % 4)
                 ELSE substr(md5(i::text), 1, i % 23) END
  FROM generate_series(1, 400) i;
CREATE FUNCTION sa_rows_diff(source text, d bytea) RETURNS bigint LANGUAGE sql AS $$
  WITH got AS (SELECT rank, pos FROM xxl.suffix_array(source)), want AS (SELECT * FROM sa_oracle(d))
  SELECT (SELECT count(*) FROM (TABLE got EXCEPT ALL TABLE want) a)
       + (SELECT count(*) FROM (TABLE want EXCEPT ALL TABLE got) b)
$$;
SELECT length(convert_to(string_agg(t, '' ORDER BY id), 'UTF8')) AS corpus_bytes FROM sa_rows;
SET xxl.memory = '64MB';
SELECT sa_rows_diff('SELECT t FROM sa_rows ORDER BY id',
                    (SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows));
SELECT sa_rows_diff('SELECT t FROM sa_rows ORDER BY id DESC',
                    (SELECT convert_to(string_agg(t, '' ORDER BY id DESC), 'UTF8') FROM sa_rows));
SELECT sa_rows_diff('SELECT t::varchar FROM sa_rows ORDER BY id',
                    (SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows));
SELECT sa_rows_diff('SELECT convert_to(t, ''UTF8'') || ''\xff00''::bytea FROM sa_rows ORDER BY id',
                    (SELECT string_agg(convert_to(t, 'UTF8') || '\xff00'::bytea, '' ORDER BY id) FROM sa_rows));
CREATE DOMAIN sa_doc AS text;
SELECT sa_rows_diff('SELECT t::sa_doc FROM sa_rows WHERE id % 3 = 0 ORDER BY id',
                    (SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows WHERE id % 3 = 0));
SELECT rows, rows_out FROM xxl.last_stats();
SET xxl.memory = '1MB';
SELECT sa_rows_diff('SELECT t FROM sa_rows ORDER BY id',
                    (SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows));
-- a table name is read in its physical order (here: insertion order)
CREATE TABLE sa_rows_t AS SELECT t FROM sa_rows ORDER BY id;
SELECT sa_rows_diff('sa_rows_t', (SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows));
-- zero rows, and only empty rows: an empty text
SELECT * FROM xxl.suffix_array('SELECT t FROM sa_rows WHERE false');
SELECT * FROM xxl.suffix_array('SELECT '''' FROM generate_series(1, 5)');
-- values stored out of line, compressed and not (read slice by slice)
CREATE TABLE sa_toast (id int, b bytea);
ALTER TABLE sa_toast ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO sa_toast SELECT 1, sa_gen('rand256', 3000);
INSERT INTO sa_toast SELECT 2, sa_gen('periodic3', 2500);
CREATE TABLE sa_toast_c (id int, b bytea);
INSERT INTO sa_toast_c SELECT * FROM sa_toast;
INSERT INTO sa_toast_c SELECT 3, sa_gen('rand4', 9000);
INSERT INTO sa_toast SELECT 3, sa_gen('rand4', 9000);
-- (row 3 of sa_toast_c is stored compressed and out of line, of sa_toast not compressed)
SELECT id, pg_column_size(b) < length(b) AS compressed FROM sa_toast_c ORDER BY id;
SELECT sa_rows_diff('SELECT b FROM sa_toast ORDER BY id',
                    (SELECT string_agg(b, '' ORDER BY id) FROM sa_toast));
SELECT sa_rows_diff('SELECT b FROM sa_toast_c ORDER BY id',
                    (SELECT string_agg(b, '' ORDER BY id) FROM sa_toast_c));
-- a value of several slices (1 MB each), against the checker; at 1 MB the
-- budget is below n
CREATE TABLE sa_toast_big (b bytea);
ALTER TABLE sa_toast_big ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO sa_toast_big
  SELECT string_agg(decode(md5(i::text), 'hex'), '') FROM generate_series(1, 140000) i;
SELECT length(b) FROM sa_toast_big;
SELECT xxl.suffix_array_into('sa_toast_big', 'sa_toast_big_sa');
SELECT (details->>'external_levels')::int > 0 AS external, memory_peak <= memory_limit AS within_budget
FROM xxl.last_stats();
SELECT xxl.suffix_array_check('sa_toast_big', 'sa_toast_big_sa');
SET xxl.memory = '64MB';
SELECT xxl.suffix_array_check('sa_toast_big',
  'SELECT rank, pos FROM xxl.suffix_array((SELECT b FROM sa_toast_big))');

-- suffix_array_into: a new table (rank, pos) in rank order, both forms
SET xxl.memory = '64MB';
SELECT xxl.suffix_array_into(convert_to('abracadabra', 'UTF8'), 'sa_abra');
SELECT * FROM sa_abra;
SELECT xxl.suffix_array_into('SELECT t FROM sa_rows ORDER BY id', 'sa_rows_sa');
SELECT count(*) AS differing FROM (
  (TABLE sa_rows_sa EXCEPT ALL
   SELECT * FROM sa_oracle((SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows)))
  UNION ALL
  (SELECT * FROM sa_oracle((SELECT convert_to(string_agg(t, '' ORDER BY id), 'UTF8') FROM sa_rows))
   EXCEPT ALL TABLE sa_rows_sa)) x;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'sa_rows_sa'::regclass AND attnum > 0 ORDER BY attnum;
-- rows are stored in rank order
SELECT bool_and(rank = rn) AS in_rank_order
FROM (SELECT rank, row_number() OVER () AS rn FROM sa_rows_sa) x;
SELECT xxl.suffix_array_into(''::bytea, 'sa_empty');
SELECT count(*) FROM sa_empty;

-- External DC3 at the smallest budget, with recursion: a few hundred kB per
-- text.  The reference is the in-memory build (roomy budget); the statistics
-- must show the external path, the recursion and the budget held.
CREATE FUNCTION sa_external(text_kind text, text_len int) RETURNS TABLE(
  kind text, n int, top_level text, external boolean, recursion boolean, within_budget boolean,
  io_per_byte_below_thesis boolean, same boolean, checked boolean)
LANGUAGE plpgsql AS $$
DECLARE
  st record;
BEGIN
  SET LOCAL client_min_messages = warning;
  DROP TABLE IF EXISTS sa_ext_src, sa_ext_ref, sa_ext_got;
  CREATE TABLE sa_ext_src AS SELECT sa_gen(text_kind, text_len) AS d;
  SET LOCAL xxl.memory = '64MB';
  PERFORM xxl.suffix_array_into('sa_ext_src', 'sa_ext_ref');
  SET LOCAL xxl.memory = '1MB';
  PERFORM xxl.suffix_array_into('sa_ext_src', 'sa_ext_got');
  SELECT * INTO st FROM xxl.last_stats();
  RETURN QUERY SELECT text_kind, text_len, st.details->>'top_level',
    (st.details->>'external_levels')::int > 0,
    (st.details->>'recursion_depth')::int > 0,
    st.memory_peak <= st.memory_limit,
    (st.details->>'io_vs_thesis')::float8 < 1.0,
    NOT EXISTS (SELECT * FROM sa_ext_ref r FULL JOIN sa_ext_got g USING (rank)
                WHERE r.pos IS DISTINCT FROM g.pos),
    xxl.suffix_array_check('sa_ext_src', 'sa_ext_got');
END $$;
-- top_level: induced sorting where the text suits it; 256 distinct bytes
-- (no page per bucket at 1MB) and one repeated byte (one long run) fall
-- back to DC3 at every level
SELECT * FROM sa_external('rand2', 200000);
SELECT * FROM sa_external('rand4', 250000);
SELECT * FROM sa_external('rand256', 150000);
SELECT * FROM sa_external('unary', 200000);
SELECT * FROM sa_external('periodic7', 200000);
SELECT * FROM sa_external('zero_ff', 200000);
-- ... and a corpus of many rows the same way
SET xxl.memory = '1MB';
CREATE TABLE sa_many AS
  SELECT i AS id, repeat(md5(i::text), 1 + i % 5) AS t FROM generate_series(1, 2500) i;
SELECT xxl.suffix_array_into('SELECT t FROM sa_many ORDER BY id', 'sa_many_sa');
SELECT rows, rows_out, (details->>'external_levels')::int > 0 AS external
FROM xxl.last_stats();
SELECT xxl.suffix_array_check('SELECT t FROM sa_many ORDER BY id', 'sa_many_sa');

\i test/include/end.sql

-- table_alter.sql — ALTER TABLE forms that rewrite an xxl table, each run on
-- an xxl table and on a heap copy of the same rows and compared (NULLs,
-- TOASTed values, an order key): the old rows must be read by the old row
-- type.  Reading them by the new one gave (1,512),(2,768),(3,0) for
-- int -> bigint, read memory as text, and killed the backend when a
-- column was added with a volatile default or as a stored generated one.
\i test/include/begin.sql
\i test/include/helpers.sql
CREATE FUNCTION pg_temp.pair(stmt text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(stmt, 'alt_x');
  EXECUTE format(stmt, 'alt_h');
  RETURN xt_differ('alt_x', 'alt_h');
END $$;
CREATE TABLE alt_h (i int, j int, t text, b bytea);
INSERT INTO alt_h SELECT g, g * 10, CASE WHEN g % 5 = 0 THEN NULL ELSE 'v' || g END,
  CASE WHEN g % 7 = 0 THEN NULL ELSE convert_to(repeat(md5(g::text), 1 + g % 3), 'UTF8') END
FROM generate_series(1, 3000) g;
-- values big enough to be compressed and to move to the TOAST table
INSERT INTO alt_h VALUES (NULL, NULL, repeat('long', 3000), NULL),
  (3001, NULL, NULL, (SELECT string_agg(md5(g::text), '')::bytea FROM generate_series(1, 400) g));
CREATE TABLE alt_x USING xxl AS SELECT * FROM alt_h WHERE false;
SELECT xxl.alter_table_set('alt_x', 'i DESC, t');
INSERT INTO alt_x SELECT * FROM alt_h;
SELECT xt_differ('alt_x', 'alt_h') AS before;

SELECT pg_temp.pair('ALTER TABLE %s ALTER COLUMN i TYPE bigint') AS int_to_bigint;
SELECT pg_temp.pair('ALTER TABLE %s ALTER COLUMN j TYPE text') AS int_to_text;
SELECT pg_temp.pair('ALTER TABLE %s ALTER COLUMN t TYPE varchar(20000) USING upper(t)') AS text_using;
SELECT pg_temp.pair('ALTER TABLE %s ADD COLUMN e int DEFAULT (clock_timestamp() IS NOT NULL)::int') AS add_volatile_default;
SELECT pg_temp.pair('ALTER TABLE %s ADD COLUMN g bigint GENERATED ALWAYS AS (i * 2) STORED') AS add_generated;
SELECT pg_temp.pair('ALTER TABLE %s ALTER COLUMN j TYPE int USING length(j)') AS text_to_int;
SELECT pg_temp.pair('ALTER TABLE %s DROP COLUMN e, DROP COLUMN g, ALTER COLUMN i TYPE numeric') AS drop_and_retype;
-- a serial numbers the rows in the order the rewrite reads them
ALTER TABLE alt_x ADD COLUMN s serial;
SELECT count(DISTINCT s) = count(*) AND min(s) = 1 AND max(s) = count(*) AS serial_numbers FROM alt_x;
ALTER TABLE alt_x DROP COLUMN s;
-- the key survived the retypes, and new rows go in by it
SELECT order_by FROM xxl.table_options WHERE relation = 'alt_x'::regclass;
INSERT INTO alt_x (i, j, t) VALUES (5000, 1, 'new');
INSERT INTO alt_h (i, j, t) VALUES (5000, 1, 'new');
SELECT xt_differ('alt_x', 'alt_h') AS after_insert;
SELECT i, t FROM alt_x ORDER BY i DESC NULLS LAST, t LIMIT 3;
-- into a heap and back, with a retype in the same statement
SELECT pg_temp.pair('ALTER TABLE %s ALTER COLUMN i TYPE bigint, ALTER COLUMN j TYPE numeric') AS retype_again;
ALTER TABLE alt_x SET ACCESS METHOD heap, ALTER COLUMN i TYPE numeric;
ALTER TABLE alt_h ALTER COLUMN i TYPE numeric;
SELECT xt_differ('alt_x', 'alt_h') AS to_heap_retyped;
ALTER TABLE alt_x SET ACCESS METHOD xxl, ALTER COLUMN i TYPE bigint;
ALTER TABLE alt_h ALTER COLUMN i TYPE bigint;
SELECT xt_differ('alt_x', 'alt_h') AS to_xxl_retyped;
-- and VACUUM FULL after all of it
VACUUM FULL alt_x;
SELECT xt_differ('alt_x', 'alt_h') AS after_vacuum_full;
DROP TABLE alt_x, alt_h;
DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

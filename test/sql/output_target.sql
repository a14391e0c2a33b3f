-- output_target.sql — the tables the _into functions create: no row is lost
-- when the source query itself writes into the new target (it exists from
-- the start of the call), and nothing the rows would bypass (triggers,
-- constraints, row security, rules, indexes), added by the source, is
-- silently ignored (output_target_event.sql: added by an event trigger).
\i test/include/begin.sql
SET xxl.memory = '2MB';
CREATE TABLE ot_src AS SELECT g AS a FROM generate_series(1, 300000) g;
CREATE TABLE ot_edges AS
  SELECT g AS source, g + 1 AS target FROM generate_series(1, 200000) g;

-- inserts a row (the given values) into the target, once it exists, for
-- every 1000th value
CREATE FUNCTION ot_poke(v bigint, target text, row_values text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF v % 1000 = 0 AND to_regclass(target) IS NOT NULL THEN
    EXECUTE format('INSERT INTO %I VALUES (%s)', target, row_values);
  END IF;
  RETURN v;
END $$;

SELECT xxl.sort_into('SELECT ot_poke(a, ''ot_sorted'', ''-1'')::int AS a FROM ot_src', 'a', 'ot_sorted');
SELECT count(*) AS all_rows, count(*) FILTER (WHERE a = -1) AS from_source,
       count(DISTINCT a) FILTER (WHERE a > 0) AS sorted_rows
FROM ot_sorted;
SELECT xxl.connected_components_into(
  'SELECT ot_poke(source, ''ot_cc'', ''-1, -1'') AS source, target FROM ot_edges', 'ot_cc');
SELECT count(*) AS all_rows, count(*) FILTER (WHERE node = -1) AS from_source,
       count(DISTINCT node) FILTER (WHERE node > 0) AS nodes
FROM ot_cc;
-- without such a source the rows are written as pages, in order
SELECT xxl.sort_into('ot_src', 'a DESC', 'ot_plain');
SELECT count(*), min(a), max(a) FROM ot_plain;
SELECT count(*) FROM (SELECT a, lag(a) OVER () AS p FROM ot_plain) s WHERE p < a;
DROP TABLE ot_sorted, ot_cc, ot_plain;

DROP FUNCTION ot_poke(bigint, text, text);
DROP TABLE ot_src, ot_edges;
\i test/include/end.sql

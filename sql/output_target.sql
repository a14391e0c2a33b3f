-- output_target.sql — the tables the _into functions create: no row is lost
-- when the source query itself writes into the new target (it exists from
-- the start of the call), and nothing the rows would bypass (triggers,
-- constraints, row security, rules, indexes), added by an event trigger
-- or by the source, is silently ignored.
CREATE EXTENSION pgxxl;
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

-- an event trigger that dresses up every new table
CREATE TABLE ot_audit (n int);
CREATE FUNCTION ot_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO ot_audit VALUES (1); RETURN NULL; END $$;
CREATE FUNCTION ot_dress() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE TABLE' LOOP
    CASE current_setting('ot.dress')
      WHEN 'check' THEN EXECUTE format('ALTER TABLE %s ADD CHECK (a < 10)', r.object_identity);
      WHEN 'not null' THEN EXECUTE format('ALTER TABLE %s ALTER COLUMN a SET NOT NULL', r.object_identity);
      WHEN 'trigger' THEN EXECUTE format('CREATE TRIGGER audit AFTER INSERT ON %s FOR EACH ROW EXECUTE FUNCTION ot_audit_row()', r.object_identity);
      WHEN 'index' THEN EXECUTE format('CREATE INDEX ON %s (a)', r.object_identity);
      WHEN 'rls' THEN EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', r.object_identity);
      WHEN 'rule' THEN EXECUTE format('CREATE RULE nothing AS ON INSERT TO %s DO INSTEAD NOTHING', r.object_identity);
      ELSE NULL;
    END CASE;
  END LOOP;
END $$;
CREATE EVENT TRIGGER ot_dress ON ddl_command_end EXECUTE FUNCTION ot_dress();
SET ot.dress = 'check';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
SET ot.dress = 'not null';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
SET ot.dress = 'trigger';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
SET ot.dress = 'index';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
SET ot.dress = 'rls';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
SET ot.dress = 'rule';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
-- nothing was written, nothing is left, the audit trigger never had to fire
SELECT to_regclass('ot_t') IS NULL AS no_target, (SELECT count(*) FROM ot_audit) AS audited;
SELECT count(*) AS spill_files FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp' || pg_backend_pid() || '.xxl%';
SET ot.dress = 'none';
SELECT xxl.sort_into('SELECT a FROM ot_src WHERE a <= 20', 'a', 'ot_t');
SELECT count(*) FROM ot_t;
DROP EVENT TRIGGER ot_dress;
DROP FUNCTION ot_dress(), ot_audit_row(), ot_poke(bigint, text, text);
DROP TABLE ot_t, ot_audit, ot_src, ot_edges;
DROP EXTENSION pgxxl;

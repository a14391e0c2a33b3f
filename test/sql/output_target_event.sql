-- output_target_event.sql — nothing an event trigger adds to the table an
-- _into function creates (constraints, triggers, indexes, row security,
-- rules) is silently bypassed: the call fails and leaves nothing.  Event
-- triggers are a superuser's, so this runs in the superuser pass only
-- (scripts/test.sh, SUPERUSER_ONLY).
\i test/include/begin.sql
SET xxl.memory = '2MB';
CREATE TABLE ot_src AS SELECT g AS a FROM generate_series(1, 300000) g;
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
DROP FUNCTION ot_dress(), ot_audit_row();
DROP TABLE ot_t, ot_audit, ot_src;
\i test/include/end.sql

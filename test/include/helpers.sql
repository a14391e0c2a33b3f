-- test/include/helpers.sql — functions the pg_regress tests share; a test reads
-- them with \i test/include/helpers.sql (pg_regress runs from the repository
-- root) and drops them at its end.
--   xt_try(stmt): 'SQLSTATE: message' of the error stmt raises, or 'no
--     error'; spill file names are masked (they carry the backend's pid),
--     and so is what the setting xt.hide_tables matches, as <table>.
--   xt_differ(a, b): how many rows of a and b differ, as multisets of their
--     text forms (json has no equality); a and b are queries or table names.
--   xt_leftovers(target): spill files of this backend and tables whose
--     names start with target, after an operator failed.
CREATE FUNCTION xt_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  state text;
  msg text;
  hide text := nullif(current_setting('xt.hide_tables', true), '');
BEGIN
  EXECUTE stmt;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  msg := regexp_replace(msg, 'pgsql_tmp\d+\.xxl\d+(\.\d+)+', 'pgsql_tmpPID.xxlN', 'g');
  IF hide IS NOT NULL THEN
    msg := regexp_replace(msg, hide, '<table>', 'g');
  END IF;
  RETURN state || ': ' || msg;
END $$;
CREATE FUNCTION xt_differ(a text, b text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  IF a !~ '\s' THEN a := 'TABLE ' || a; END IF;
  IF b !~ '\s' THEN b := 'TABLE ' || b; END IF;
  EXECUTE format('SELECT count(*) FROM ((SELECT x::text FROM (%1$s) x EXCEPT ALL SELECT y::text FROM (%2$s) y)
                  UNION ALL (SELECT y::text FROM (%2$s) y EXCEPT ALL SELECT x::text FROM (%1$s) x)) d',
                 a, b) INTO n;
  RETURN n;
END $$;
CREATE FUNCTION xt_leftovers(target text) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s spill files, %s targets',
    (SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp' || pg_backend_pid() || '.xxl%'),
    (SELECT count(*) FROM pg_class WHERE relname LIKE target || '%'))
$$;

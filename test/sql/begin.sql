\set ECHO none
-- test/sql/begin.sql — how every pg_regress test starts: the extensions it
-- uses, made when missing.  `make test` runs the suite twice, as a
-- superuser (who makes them here, one test at a time) and as an ordinary
-- role (for whom the superuser installed them beforehand, scripts/test.sh):
-- both passes must print the same, so nothing here says which it was.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgxxl;
RESET client_min_messages;
-- Roles a test plays: made by the superuser pass, ready (and granted to the
-- test's role) in the ordinary one; only the superuser drops them.
CREATE FUNCTION pg_temp.xt_role(r name) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
    EXECUTE format('CREATE ROLE %I', r);
  END IF;
END $$;
CREATE FUNCTION pg_temp.xt_drop_role(r name) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('DROP ROLE %I', r);
  END IF;
END $$;
\set ECHO all

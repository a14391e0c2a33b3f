\set ECHO none
-- test/include/begin.sql — how every pg_regress test starts.  pgxxl is
-- there already: pg_regress made it with the test database
-- (--load-extension=pgxxl, the Makefile's REGRESS_OPTS), or, for the pass
-- as an ordinary role, the superuser did (scripts/test.sh).  Both passes
-- must print the same, so nothing here says which it was.
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

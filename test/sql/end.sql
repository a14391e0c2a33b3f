\set ECHO none
-- test/sql/end.sql — how every pg_regress test ends: a superuser drops the
-- extensions the test used (test/sql/begin.sql); the ordinary role's pass
-- leaves them to the next test, as a database's users would.
SET client_min_messages = warning;
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    DROP EXTENSION IF EXISTS pgrouting;
    DROP EXTENSION IF EXISTS postgis;
    DROP EXTENSION IF EXISTS pg_buffercache;
    DROP EXTENSION IF EXISTS bloom;
    DROP EXTENSION pgxxl;
  END IF;
END $$;
RESET client_min_messages;
\set ECHO all

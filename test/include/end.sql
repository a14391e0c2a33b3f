\set ECHO none
-- test/include/end.sql — how every pg_regress test ends: a superuser drops the
-- other extensions the test made (pgxxl stays for the whole run); the
-- ordinary role's pass leaves them to the next test, as a database's users
-- would.
SET client_min_messages = warning;
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    DROP EXTENSION IF EXISTS pgrouting;
    DROP EXTENSION IF EXISTS postgis;
    DROP EXTENSION IF EXISTS pg_buffercache;
    DROP EXTENSION IF EXISTS bloom;
  END IF;
END $$;
RESET client_min_messages;
\set ECHO all

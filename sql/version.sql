-- version.sql — the extension installs, xxl.version() answers in the
-- documented shape, and DROP EXTENSION leaves nothing behind (schema included).
CREATE EXTENSION pgxxl;
SELECT extversion, extrelocatable FROM pg_extension WHERE extname = 'pgxxl';
-- thread count and O_DIRECT depend on the machine: check the shape only
SELECT xxl.version() ~ '^pgxxl \d+\.\d+\.\d+ \(openmp threads=[1-9]\d*, o_direct=(yes|no), block_size=\d+(B|KiB|MiB)\)$' AS version_ok;
SELECT xxl.version() = xxl.version() AS stable;
SELECT count(*) AS xxl_schemas FROM pg_namespace WHERE nspname = 'xxl';
DROP EXTENSION pgxxl;
SELECT count(*) AS xxl_schemas FROM pg_namespace WHERE nspname = 'xxl';
SELECT to_regprocedure('xxl.version()') IS NULL AS function_gone;
-- the extension must own schema xxl: a schema of that name made by someone
-- else makes CREATE EXTENSION fail instead of mixing objects into it
CREATE SCHEMA xxl;
CREATE EXTENSION pgxxl;
DROP SCHEMA xxl;

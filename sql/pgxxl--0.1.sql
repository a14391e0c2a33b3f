/*
 * pgxxl--0.1.sql — the SQL objects of pgxxl 0.1.
 *
 * Everything lives in schema xxl, created here (not named in the control
 * file) so that the schema belongs to the extension and DROP EXTENSION takes
 * it away with everything in it.  Objects are therefore always written
 * schema-qualified.
 */
\echo Use "CREATE EXTENSION pgxxl" to load this file. \quit

CREATE SCHEMA xxl;
COMMENT ON SCHEMA xxl IS 'pgxxl: external-memory algorithms';

CREATE FUNCTION xxl.version()
RETURNS text
AS 'MODULE_PATHNAME', 'pgxxl_version'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxl.version() IS
	'pgxxl version and build facts: OpenMP threads, O_DIRECT support, block size';

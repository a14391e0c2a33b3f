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

-- Sorting (src/pg/xxl_sort_sql.c) -------------------------------------------
-- The sort functions run with the caller's privileges (sources are read and
-- targets created as the caller), so any role may use them.
GRANT USAGE ON SCHEMA xxl TO PUBLIC;

-- source: a table name ('t', 'public.t', '"T"') or a query ('SELECT ...',
-- 'TABLE t', 'VALUES ...'); order_by: what follows ORDER BY (column names or
-- positions with COLLATE, ASC/DESC, NULLS FIRST/LAST).

CREATE FUNCTION xxl.sort_into(source text, order_by text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_sort_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.sort_into(text, text, text) IS
	'sort a table or query by order_by into a new table target; returns the row count';

CREATE FUNCTION xxl.sort(source text, order_by text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'xxl_sort_record'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.sort(text, text) IS
	'rows of a table or query sorted by order_by (needs a column definition list)';

CREATE FUNCTION xxl.sort(source anyelement, order_by text)
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'xxl_sort_typed'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.sort(anyelement, text) IS
	'rows of the table whose row type source has (e.g. NULL::my_table), sorted by order_by';

-- Statistics of the last operator (sort, ...) run in this session: zero rows
-- before the first one.  Times in milliseconds, sizes in bytes; the arrays
-- have one element per spill directory; details holds what only some
-- operators have (a graph's path, a suffix array's recursion depth, ...).
CREATE FUNCTION xxl.last_stats(
	OUT operator text,
	OUT completed boolean,
	OUT rows bigint,
	OUT rows_out bigint,
	OUT runs bigint,
	OUT merge_passes integer,
	OUT fan_in integer,
	OUT memory_limit bigint,
	OUT memory_peak bigint,
	OUT block_size bigint,
	OUT threads integer,
	OUT disks text[],
	OUT bytes_read bigint[],
	OUT bytes_written bigint[],
	OUT spill_peak bigint,
	OUT direct_io boolean,
	OUT io_wait_ms double precision,
	OUT input_ms double precision,
	OUT merge_ms double precision,
	OUT output_ms double precision,
	OUT total_ms double precision,
	OUT details jsonb)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'xxl_last_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION xxl.last_stats() IS
	'statistics of the last xxl operator in this session: rows, runs, merge passes, I/O per disk, times, memory';

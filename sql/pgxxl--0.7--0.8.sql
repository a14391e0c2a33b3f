/*
 * pgxxl--0.7--0.8.sql — from 0.7 to 0.8: the view xxl.progress, where every
 * running operator of every backend is.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.8'" to load this file. \quit

-- Where every running xxl operator is, in this backend and others: one row
-- per operator (an XxlSort inside the query a graph function reads is a
-- second row of that backend, at depth 1).  Visible as pg_stat_activity
-- shows backends: pid and database to everyone, the rest to members of the
-- backend's role and of pg_read_all_stats.  Needs pgxxl in
-- shared_preload_libraries.
CREATE FUNCTION xxl.progress_rows(
	OUT pid integer,
	OUT datid oid,
	OUT operator text,
	OUT query_id bigint,
	OUT started timestamptz,
	OUT phase text,
	OUT rows_read bigint,
	OUT rows_total bigint,
	OUT rows_written bigint,
	OUT bytes_read bigint,
	OUT runs bigint,
	OUT spill_bytes bigint,
	OUT spill_peak bigint,
	OUT memory bigint,
	OUT memory_peak bigint,
	OUT percent double precision,
	OUT depth integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'xxl_progress_rows'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION xxl.progress_rows() IS
	'the rows of the view xxl.progress';

CREATE VIEW xxl.progress AS
	SELECT p.pid, p.datid, d.datname, p.operator, p.query_id, p.started, p.phase,
		   p.rows_read, p.rows_total, p.rows_written, p.bytes_read, p.runs,
		   p.spill_bytes, p.spill_peak, p.memory, p.memory_peak,
		   round(p.percent::numeric, 1) AS percent, p.depth
	FROM xxl.progress_rows() p
	LEFT JOIN pg_catalog.pg_database d ON d.oid = p.datid;

COMMENT ON VIEW xxl.progress IS
	'running xxl operators of every backend: phase (reading input, merge pass k of n, level k, iteration k, writing output), rows, runs, spill, memory, percent';

GRANT SELECT ON xxl.progress TO PUBLIC;

/*
 * pgxxl--0.1--0.2.sql — from 0.1 to 0.2.
 *
 * xxl.bwt returns its primary index with the transform (it was only in
 * xxl.last_stats(), which a cached plan or a repeated call left stale).
 * Functions whose result or errors depend on settings (xxl.memory) and
 * that report through xxl.last_stats() are STABLE, not IMMUTABLE, so the
 * planner never runs them ahead of the statement.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.2'" to load this file. \quit

DROP FUNCTION xxl.bwt(bytea);
CREATE FUNCTION xxl.bwt(data bytea, OUT bwt bytea, OUT primary_index bigint)
AS 'MODULE_PATHNAME', 'xxl_bwt_bytea_v2'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION xxl.bwt(bytea) IS
	'Burrows-Wheeler transform of data (libdivsufsort''s divbwt convention) and its primary index';

ALTER FUNCTION xxl.suffix_array(bytea) STABLE;
ALTER FUNCTION xxl.bwt_inverse(bytea, bigint) STABLE;

/*
 * pgxxl--0.8--0.9.sql — from 0.8 to 0.9: what a shard sends its
 * coordinator, packed many rows to a message: xxl.shard_reduce_edges for
 * components and spanning forests of a sharded edge table, and
 * xxl.packed_rows for sorted streams.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.9'" to load this file. \quit

-- What a shard of a sharded edge table sends its coordinator for the three
-- functions above (docs/shards.md): operator's rows over edges, many packed
-- to a bytea.  The coordinator's pgxxl calls it; its rows are for it.
CREATE FUNCTION xxl.shard_reduce_edges(edges text, operator text)
RETURNS SETOF bytea
AS 'MODULE_PATHNAME', 'xxl_shard_reduce_edges'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.shard_reduce_edges(text, text) IS
	'for a coordinator: connected_components, spanning_forest or minimum_spanning_forest of edges, rows packed into blocks';

-- What a shard sends its coordinator for a sorted stream (docs/shards.md):
-- the query's rows in binary COPY's row format, many to a bytea.  Called in
-- the select list (a value per call: no tuplestore) by the coordinator's
-- pgxxl; runs the query with the caller's privileges.
CREATE FUNCTION xxl.packed_rows(query text)
RETURNS SETOF bytea
AS 'MODULE_PATHNAME', 'xxl_packed_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.packed_rows(text) IS
	'for a coordinator: the rows of query in binary COPY row format, packed into blocks';

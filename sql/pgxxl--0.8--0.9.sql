/*
 * pgxxl--0.8--0.9.sql — from 0.8 to 0.9: xxl.shard_reduce_edges, what a
 * shard sends its coordinator for components and spanning forests of a
 * sharded edge table, packed.
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

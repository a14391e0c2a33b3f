/*
 * pgxxl--0.2--0.3.sql — from 0.2 to 0.3: breadth-first search and shortest
 * paths (xxl.bfs, xxl.shortest_paths, each also from several sources and
 * _into a table, and xxl.dijkstra).
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.3'" to load this file. \quit

-- Shortest paths and BFS (src/pg/xxl_paths_sql.c) ----------------------------
-- edges: a table name or a query, pgRouting's edges SQL.  Columns found by
-- name: id, source, target (integer types), cost and an optional
-- reverse_cost (real, double precision, numeric or an integer type).  A
-- negative cost or reverse_cost: that direction does not exist; a missing
-- reverse_cost is -1.  directed = false: every existing direction is an
-- undirected edge.  See docs/graph.md.

CREATE FUNCTION xxl.shortest_paths(edges text, source bigint, directed boolean DEFAULT true,
	max_distance double precision DEFAULT 'Infinity')
RETURNS TABLE(node bigint, distance double precision, pred bigint, edge bigint)
AS 'MODULE_PATHNAME', 'xxl_shortest_paths'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.shortest_paths(text, bigint, boolean, double precision) IS
	'every node within max_distance of source, once, with its distance and a shortest-path tree (pred, edge); the source: 0, itself, -1';

CREATE FUNCTION xxl.shortest_paths(edges text, sources bigint[], directed boolean DEFAULT true,
	max_distance double precision DEFAULT 'Infinity')
RETURNS TABLE(node bigint, distance double precision, pred bigint, edge bigint)
AS 'MODULE_PATHNAME', 'xxl_shortest_paths_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.shortest_paths(text, bigint[], boolean, double precision) IS
	'every node within max_distance of the nearest of sources, with its distance and a shortest-path forest';

CREATE FUNCTION xxl.shortest_paths_into(edges text, source bigint, target text,
	directed boolean DEFAULT true, max_distance double precision DEFAULT 'Infinity')
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_shortest_paths_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.shortest_paths_into(text, bigint, text, boolean, double precision) IS
	'shortest paths from source into a new table target (node, distance, pred, edge); returns its row count';

CREATE FUNCTION xxl.shortest_paths_into(edges text, sources bigint[], target text,
	directed boolean DEFAULT true, max_distance double precision DEFAULT 'Infinity')
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_shortest_paths_many_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.shortest_paths_into(text, bigint[], text, boolean, double precision) IS
	'shortest paths from the nearest of sources into a new table target; returns its row count';

CREATE FUNCTION xxl.bfs(edges text, source bigint, directed boolean DEFAULT true,
	max_depth bigint DEFAULT NULL)
RETURNS TABLE(node bigint, depth bigint, pred bigint, edge bigint)
AS 'MODULE_PATHNAME', 'xxl_bfs'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.bfs(text, bigint, boolean, bigint) IS
	'breadth-first search: every node within max_depth edges of source, once, with its depth and a BFS tree (pred, edge)';

CREATE FUNCTION xxl.bfs(edges text, sources bigint[], directed boolean DEFAULT true,
	max_depth bigint DEFAULT NULL)
RETURNS TABLE(node bigint, depth bigint, pred bigint, edge bigint)
AS 'MODULE_PATHNAME', 'xxl_bfs_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.bfs(text, bigint[], boolean, bigint) IS
	'breadth-first search from several sources: depth from the nearest';

CREATE FUNCTION xxl.bfs_into(edges text, source bigint, target text,
	directed boolean DEFAULT true, max_depth bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_bfs_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.bfs_into(text, bigint, text, boolean, bigint) IS
	'breadth-first search into a new table target (node, depth, pred, edge); returns its row count';

CREATE FUNCTION xxl.bfs_into(edges text, sources bigint[], target text,
	directed boolean DEFAULT true, max_depth bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_bfs_many_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.bfs_into(text, bigint[], text, boolean, bigint) IS
	'breadth-first search from several sources into a new table target; returns its row count';

CREATE FUNCTION xxl.dijkstra(edges text, source bigint, target bigint,
	directed boolean DEFAULT true)
RETURNS TABLE(seq integer, path_seq integer, node bigint, edge bigint,
	cost double precision, agg_cost double precision)
AS 'MODULE_PATHNAME', 'xxl_dijkstra'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.dijkstra(text, bigint, bigint, boolean) IS
	'a shortest path from source to target, pgr_dijkstra''s rows (the last: target, edge -1, cost 0); none if unreachable';

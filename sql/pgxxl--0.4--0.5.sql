/*
 * pgxxl--0.4--0.5.sql — from 0.4 to 0.5: triangles, node triangles, the
 * maximal independent set, coloring and PageRank.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.5'" to load this file. \quit

-- Graph analytics (src/pg/xxl_analytics_sql.c, docs/graph.md) ---------------
-- edges: a table name or a query; columns source and target found by name.
-- Undirected but for PageRank: self loops and duplicate edges (either way
-- round) are ignored, a node with self loops only is a node without
-- neighbours.  PageRank reads the edges as directed links source -> target;
-- duplicates add their weights, a self loop is a link to the node itself,
-- and an optional column weight (real, double precision, numeric or an
-- integer type; finite, >= 0; 1 when absent) weights the out-links.

CREATE FUNCTION xxl.triangles(edges text)
RETURNS TABLE(a bigint, b bigint, c bigint)
AS 'MODULE_PATHNAME', 'xxl_triangles'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.triangles(text) IS
	'every triangle of the undirected edges once, as a < b < c';

CREATE FUNCTION xxl.triangles_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_triangles_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.triangles_into(text, text) IS
	'triangles into a new table target (a, b, c); returns the triangle count';

CREATE FUNCTION xxl.triangle_count(edges text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_triangle_count'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.triangle_count(text) IS
	'the number of triangles of the undirected edges (counted, never listed)';

CREATE FUNCTION xxl.node_triangles(edges text)
RETURNS TABLE(node bigint, triangles bigint, degree bigint, clustering double precision)
AS 'MODULE_PATHNAME', 'xxl_node_triangles'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.node_triangles(text) IS
	'every node with its triangles, its degree and its local clustering coefficient (0 below degree 2)';

CREATE FUNCTION xxl.node_triangles_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_node_triangles_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.node_triangles_into(text, text) IS
	'node triangles into a new table target (node, triangles, degree, clustering); returns the node count';

CREATE FUNCTION xxl.maximal_independent_set(edges text)
RETURNS TABLE(node bigint)
AS 'MODULE_PATHNAME', 'xxl_maximal_independent_set'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.maximal_independent_set(text) IS
	'a maximal independent set of the undirected edges: greedy in ascending node order';

CREATE FUNCTION xxl.maximal_independent_set_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_maximal_independent_set_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.maximal_independent_set_into(text, text) IS
	'a maximal independent set into a new table target (node); returns its size';

CREATE FUNCTION xxl.coloring(edges text)
RETURNS TABLE(node bigint, color bigint)
AS 'MODULE_PATHNAME', 'xxl_coloring'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.coloring(text) IS
	'a proper coloring of every node, colors from 1, at most max degree + 1 of them (greedy in node order)';

CREATE FUNCTION xxl.coloring_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_coloring_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.coloring_into(text, text) IS
	'a coloring into a new table target (node, color); returns the node count';

CREATE FUNCTION xxl.pagerank(edges text, damping double precision DEFAULT 0.85,
							 max_iterations integer DEFAULT 100,
							 tolerance double precision DEFAULT 1e-9)
RETURNS TABLE(node bigint, rank double precision)
AS 'MODULE_PATHNAME', 'xxl_pagerank'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.pagerank(text, double precision, integer, double precision) IS
	'PageRank of the directed edges (optional column weight); ranks sum to 1, dangling rank spread over all nodes';

CREATE FUNCTION xxl.pagerank_into(edges text, target text,
								  damping double precision DEFAULT 0.85,
								  max_iterations integer DEFAULT 100,
								  tolerance double precision DEFAULT 1e-9)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_pagerank_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.pagerank_into(text, text, double precision, integer, double precision) IS
	'PageRank into a new table target (node, rank); returns the node count';

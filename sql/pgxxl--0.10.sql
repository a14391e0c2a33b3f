/*
 * pgxxl--0.10.sql — the SQL objects of pgxxl 0.10 (a fresh install; older
 * installs move here with pgxxl--0.1--0.2.sql, ..., pgxxl--0.9--0.10.sql,
 * and test version.sql checks that every way gives the same objects).
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

-- xxl.sort() in FROM runs as a custom scan that streams its rows instead of
-- collecting them in a tuplestore first (xxl.sort_scan, src/pg/xxl_sort_scan.c).
-- The support function estimates the row count and, by being called while
-- the query is planned, makes sure the planner hook is installed in time.
CREATE FUNCTION xxl.sort_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'xxl_sort_support'
LANGUAGE C STRICT;

CREATE FUNCTION xxl.sort(source text, order_by text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'xxl_sort_record'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SUPPORT xxl.sort_support;

COMMENT ON FUNCTION xxl.sort(text, text) IS
	'rows of a table or query sorted by order_by (needs a column definition list)';

CREATE FUNCTION xxl.sort(source anyelement, order_by text)
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'xxl_sort_typed'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SUPPORT xxl.sort_support;

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

-- Graphs (src/pg/xxl_graph_sql.c) -------------------------------------------
-- edges: a table name or a query, as pgRouting's edges SQL.  Columns are
-- found by name: source and target (smallint, integer or bigint; any ids),
-- and for the minimum spanning forest id (an integer type) and cost (real,
-- double precision, numeric or an integer type).  Other columns are ignored.
-- Edges are undirected.  The ..._into forms write the result into a new
-- table target (created in the calling transaction) and return its row
-- count.  See docs/graph.md.

CREATE FUNCTION xxl.connected_components(edges text)
RETURNS TABLE(node bigint, component bigint)
AS 'MODULE_PATHNAME', 'xxl_connected_components'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.connected_components(text) IS
	'every node of the undirected edges with its component: the smallest node id in it';

CREATE FUNCTION xxl.connected_components_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_connected_components_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.connected_components_into(text, text) IS
	'connected components into a new table target (node, component); returns the node count';

CREATE FUNCTION xxl.spanning_forest(edges text)
RETURNS TABLE(source bigint, target bigint)
AS 'MODULE_PATHNAME', 'xxl_spanning_forest'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.spanning_forest(text) IS
	'a spanning forest of the undirected edges: one tree per component, edges as given';

CREATE FUNCTION xxl.spanning_forest_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_spanning_forest_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.spanning_forest_into(text, text) IS
	'a spanning forest into a new table target (source, target); returns the edge count';

CREATE FUNCTION xxl.minimum_spanning_forest(edges text)
RETURNS TABLE(id bigint, source bigint, target bigint, cost double precision)
AS 'MODULE_PATHNAME', 'xxl_minimum_spanning_forest'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.minimum_spanning_forest(text) IS
	'the minimum spanning forest of the undirected edges (ties broken by id, then input order), by ascending (cost, id)';

CREATE FUNCTION xxl.minimum_spanning_forest_into(edges text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_minimum_spanning_forest_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.minimum_spanning_forest_into(text, text) IS
	'the minimum spanning forest into a new table target (id, source, target, cost); returns the edge count';

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

-- Text: suffix arrays, BWT, locate (src/pg/xxl_text_sql.c) -------------------
-- corpus: a table name or a query returning one column of type text, varchar
-- or bytea, or two: an integer id and such a body (a corpus of documents);
-- its rows are concatenated in the order they come (give a query an ORDER
-- BY; a table is read in its physical order), as raw bytes, into one text
-- that may exceed 1 GB.  Documents are separated: no common prefix, match
-- or repeat runs from one into the next, and every position also comes as
-- (doc_id, doc_offset).  data: one bytea value.  Positions, offsets and
-- ranks are 1-based.  An untyped literal resolves to the text (corpus) form:
-- write 'abc'::bytea or convert_to('abc', 'UTF8') for a value.  Details in
-- docs/text.md.

CREATE FUNCTION xxl.suffix_array(data bytea)
RETURNS TABLE(rank bigint, pos bigint)
AS 'MODULE_PATHNAME', 'xxl_suffix_array_bytea'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION xxl.suffix_array(bytea) IS
	'the suffix array of a bytea value: rank 1..n in suffix order, pos the 1-based start of the suffix';

CREATE FUNCTION xxl.suffix_array(corpus text)
RETURNS TABLE(rank bigint, pos bigint, doc_id bigint, doc_offset bigint)
AS 'MODULE_PATHNAME', 'xxl_suffix_array_corpus'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array(text) IS
	'the suffix array of a corpus (a table or query of one text or bytea column, or of id and text); doc_id, doc_offset are null without ids';

CREATE FUNCTION xxl.suffix_array_into(corpus text, target text, lcp boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_suffix_array_into_corpus'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array_into(text, text, boolean) IS
	'the suffix array of a corpus into a new table target (rank, pos[, doc_id, doc_offset][, lcp]), in rank order; returns n';

CREATE FUNCTION xxl.suffix_array_into(data bytea, target text, lcp boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_suffix_array_into_bytea'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array_into(bytea, text, boolean) IS
	'the suffix array of a bytea value into a new table target (rank, pos[, lcp]), in rank order; returns n';

CREATE FUNCTION xxl.lcp_into(corpus text, sa text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_lcp_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.lcp_into(text, text, text) IS
	'the LCP array of the suffix array sa (rank, pos, any order) of a corpus into a new table target (rank, pos[, doc_id, doc_offset], lcp); returns n';

CREATE FUNCTION xxl.repeats(corpus text, min_length integer, min_count integer DEFAULT 2)
RETURNS TABLE(doc_id bigint, doc_offset bigint, length bigint, occurrences bigint)
AS 'MODULE_PATHNAME', 'xxl_repeats'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.repeats(text, integer, integer) IS
	'ranges covered by substrings of at least min_length bytes that occur at least min_count times in the corpus, overlapping ones merged, in text order';

CREATE FUNCTION xxl.repeats_into(corpus text, target text, min_length integer, min_count integer DEFAULT 2)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_repeats_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.repeats_into(text, text, integer, integer) IS
	'xxl.repeats into a new table target (doc_id, doc_offset, length, occurrences); returns the ranges written';

CREATE FUNCTION xxl.suffix_array_check(corpus text, sa text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'xxl_suffix_array_check_corpus'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array_check(text, text) IS
	'whether sa (a table or query of rank, pos, in any order) is the suffix array of the corpus';

CREATE FUNCTION xxl.suffix_array_check(data bytea, sa text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'xxl_suffix_array_check_bytea'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array_check(bytea, text) IS
	'whether sa (a table or query of rank, pos, in any order) is the suffix array of data';

CREATE FUNCTION xxl.bwt(data bytea, OUT bwt bytea, OUT primary_index bigint)
AS 'MODULE_PATHNAME', 'xxl_bwt_bytea_v2'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION xxl.bwt(bytea) IS
	'Burrows-Wheeler transform of data (libdivsufsort''s divbwt convention) and its primary index';

CREATE FUNCTION xxl.bwt_into(corpus text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_bwt_into_corpus'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.bwt_into(text, text) IS
	'Burrows-Wheeler transform of a corpus into a new table target (ordinal, chunk bytea); returns the primary index';

CREATE FUNCTION xxl.bwt_into(data bytea, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_bwt_into_bytea'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.bwt_into(bytea, text) IS
	'Burrows-Wheeler transform of data into a new table target (ordinal, chunk bytea); returns the primary index';

CREATE FUNCTION xxl.bwt_inverse(bwt bytea, primary_index bigint)
RETURNS bytea
AS 'MODULE_PATHNAME', 'xxl_bwt_inverse_sql'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxl.bwt_inverse(bytea, bigint) IS
	'the text whose Burrows-Wheeler transform is bwt with this primary index (in memory: 9 bytes per byte within xxl.memory)';

CREATE FUNCTION xxl.locate(corpus text, sa text, pattern bytea)
RETURNS TABLE(pos bigint, doc_id bigint, doc_offset bigint)
AS 'MODULE_PATHNAME', 'xxl_locate'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.locate(text, text, bytea) IS
	'every 1-based position (and document, offset) where pattern occurs in the corpus, in suffix order, by binary search over the suffix array table sa';

-- The table access method xxl (src/pg/table/, docs/table.md) -----------------
-- Dense storage in immutable segments, one per statement, sorted by the
-- table's order key when it has one.

CREATE FUNCTION xxl.table_am_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'xxl_table_am_handler'
LANGUAGE C;

CREATE ACCESS METHOD xxl TYPE TABLE HANDLER xxl.table_am_handler;
COMMENT ON ACCESS METHOD xxl IS
	'pgxxl tables: dense immutable segments, each sorted by the table''s order key (docs/table.md)';

-- Per-table settings.  pg_dump dumps the rows of tables that exist and are
-- not temporary (pg_extension_config_dump's condition), so a restore keeps
-- them; relation prints as a qualified name there.  Only the extension
-- writes them, with its own rights: xxl.alter_table_set, and the library's
-- object access hook when an xxl table or a key column is dropped or a key
-- column renamed (src/pg/table/xxl_table_options.c).
CREATE TABLE xxl.table_options (
	relation regclass PRIMARY KEY,
	order_by text NOT NULL
);
COMMENT ON TABLE xxl.table_options IS
	'settings of xxl tables, set with xxl.alter_table_set (order_by: what follows ORDER BY)';
SELECT pg_catalog.pg_extension_config_dump('xxl.table_options',
	'WHERE relation::oid IN (SELECT oid FROM pg_catalog.pg_class WHERE relpersistence <> ''t'')');
GRANT SELECT ON xxl.table_options TO PUBLIC;

-- The object access hook above needs the library loaded when a DROP or
-- ALTER runs, and a session that never opened an xxl table has not loaded
-- it yet: this trigger loads it before any DDL.  It does nothing else, so
-- it can neither fail nor need a right.
CREATE FUNCTION xxl.load_library()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'xxl_load_library'
LANGUAGE C;

CREATE EVENT TRIGGER xxl_load_library ON ddl_command_start
	EXECUTE FUNCTION xxl.load_library();

CREATE FUNCTION xxl.alter_table_set(relation regclass, order_by text)
RETURNS void
AS 'MODULE_PATHNAME', 'xxl_alter_table_set'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.alter_table_set(regclass, text) IS
	'declare the order key of an xxl table (ORDER BY syntax; NULL removes it): new rows go in sorted by it';

CREATE FUNCTION xxl.compact(relation regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_compact'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.compact(regclass) IS
	'merge every segment of an xxl table into one, sorted by its order key (as VACUUM FULL, under an ACCESS EXCLUSIVE lock); returns the segments merged';

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

-- Matrix products (docs/matrix.md): a and b are table names or queries
-- with columns i, j (integers) and v (a number); duplicate (i, j) entries
-- add up; result entries that are exactly 0 are left out.
CREATE FUNCTION xxl.matmul(a text, b text, transpose_a boolean DEFAULT false)
RETURNS TABLE(i bigint, j bigint, v double precision)
AS 'MODULE_PATHNAME', 'xxl_matmul'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.matmul(text, text, boolean) IS
	'the product A·B (Aᵀ·B with transpose_a) of sparse matrices of (i, j, v) entries';

CREATE FUNCTION xxl.matmul_into(a text, b text, target text, transpose_a boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_matmul_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.matmul_into(text, text, text, boolean) IS
	'the product A·B (Aᵀ·B) into a new table target (i, j, v); returns its entries';

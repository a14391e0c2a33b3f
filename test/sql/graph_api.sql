-- graph_api.sql — the SQL surface of the graph functions on small graphs
-- whose answers are written out here: the three functions and their _into
-- forms, tables and queries as edges, the column types accepted, self loops,
-- parallel edges, isolated self-loop nodes, ties, an empty edge set, ids at
-- the ends of bigint, and what xxl.last_stats() reports.  Each case runs at
-- a roomy budget and on the fully external path (xxl.memory at its minimum
-- and xxl.graph_max_semi_nodes = 2), and both must give the same rows.
\i test/include/begin.sql

CREATE TABLE roads (id bigint, source bigint, target bigint, cost float8, name text);
INSERT INTO roads VALUES
	(1, 1, 2, 4.0, 'a'), (2, 2, 3, 1.0, 'b'), (3, 3, 1, 2.0, 'c'),	-- triangle
	(4, 3, 4, 7.0, 'd'), (5, 4, 3, 3.0, 'e'),						-- parallel, reversed
	(6, 10, 11, 1.0, 'f'), (7, 11, 12, 1.0, 'g'), (8, 12, 10, 1.0, 'h'), -- equal costs
	(9, 20, 20, 0.5, 'i'),											-- isolated self loop
	(10, 4, 4, 0.1, 'j'),											-- self loop in a component
	(11, -9223372036854775808, 9223372036854775807, -2.5, 'k');	-- the ends of bigint

-- Roomy --------------------------------------------------------------------

SET xxl.memory = '64MB';
SELECT * FROM xxl.connected_components('roads');
SELECT details->'path' AS path, details->'nodes' AS nodes, details->'edges' AS edges,
	details->'self_loops' AS self_loops, details->'components' AS components, rows, rows_out
FROM xxl.last_stats();
SELECT * FROM xxl.spanning_forest('roads');
SELECT details->'path' AS path, details->'forest_edges' AS forest_edges,
	details->'components' AS components FROM xxl.last_stats();
SELECT * FROM xxl.minimum_spanning_forest('roads');
SELECT operator, completed, details->'path' AS path, details->'forest_edges' AS forest_edges,
	details->'components' AS components FROM xxl.last_stats();

-- into new tables
SELECT xxl.connected_components_into('roads', 'cc_roomy');
SELECT xxl.spanning_forest_into('roads', 'sf_roomy');
SELECT xxl.minimum_spanning_forest_into('roads', 'msf_roomy');
SELECT attrelid::regclass, attname, atttypid::regtype FROM pg_attribute
WHERE attrelid IN ('cc_roomy'::regclass, 'sf_roomy'::regclass, 'msf_roomy'::regclass) AND attnum > 0
ORDER BY attrelid::regclass::text, attnum;
SELECT (SELECT count(*) FROM (TABLE cc_roomy EXCEPT ALL SELECT * FROM xxl.connected_components('roads')) d) AS cc_diff,
	(SELECT count(*) FROM (TABLE sf_roomy EXCEPT ALL SELECT * FROM xxl.spanning_forest('roads')) d) AS sf_diff,
	(SELECT count(*) FROM (TABLE msf_roomy EXCEPT ALL SELECT * FROM xxl.minimum_spanning_forest('roads')) d) AS msf_diff;

-- External path ----------------------------------------------------------------

SET xxl.memory = '1MB';
SET xxl.graph_max_semi_nodes = 2;
SELECT * FROM xxl.connected_components('roads');
SELECT details->'path' AS path, details->'nodes' AS nodes, details->'base_nodes' AS base_nodes,
	details->'contracted_nodes' AS contracted_nodes, details->'contraction_passes' AS passes,
	details->'components' AS components, memory_limit FROM xxl.last_stats();
SELECT * FROM xxl.minimum_spanning_forest('roads');
SELECT details->'path' AS path, details->'forest_edges' AS forest_edges FROM xxl.last_stats();
-- a spanning forest, not necessarily the roomy one: check its shape
SELECT count(*) AS edges, count(*) FILTER (WHERE source = target) AS loops,
	(SELECT count(*) FROM (SELECT source, target FROM xxl.spanning_forest('roads')
		EXCEPT ALL SELECT source, target FROM roads) d) AS not_input
FROM xxl.spanning_forest('roads');
SELECT details->'path' AS path FROM xxl.last_stats();
SELECT xxl.connected_components_into('roads', 'cc_ext');
SELECT xxl.minimum_spanning_forest_into('roads', 'msf_ext');
SELECT xxl.spanning_forest_into('roads', 'sf_ext');
SELECT (SELECT count(*) FROM ((TABLE cc_ext EXCEPT ALL TABLE cc_roomy) UNION ALL (TABLE cc_roomy EXCEPT ALL TABLE cc_ext)) d) AS cc_diff,
	(SELECT count(*) FROM ((TABLE msf_ext EXCEPT ALL TABLE msf_roomy) UNION ALL (TABLE msf_roomy EXCEPT ALL TABLE msf_ext)) d) AS msf_diff,
	(SELECT count(*) FROM sf_ext) AS sf_edges;
RESET xxl.graph_max_semi_nodes;
RESET xxl.memory;

-- Ties: (cost, id), then input order ----------------------------------------------
-- Three parallel edges of cost 1 between 1 and 2: the smallest id wins; two
-- with id 7 and cost 1 between 3 and 4: the first in input order wins.
-- A VALUES list names its columns column1, ...: an error; rename them.
SELECT * FROM xxl.minimum_spanning_forest($$
	VALUES (9::bigint, 1::bigint, 2::bigint, 1.0::float8), (8, 2, 1, 1.0), (12, 1, 2, 1.0),
	       (7, 4, 3, 1.0), (7, 3, 4, 1.0), (5, 2, 3, 2.0)$$) ORDER BY id, source;
SELECT * FROM xxl.minimum_spanning_forest($$
	SELECT column1 AS id, column2 AS source, column3 AS target, column4 AS cost FROM (
	VALUES (9::bigint, 1::bigint, 2::bigint, 1.0::float8), (8, 2, 1, 1.0), (12, 1, 2, 1.0),
	       (7, 4, 3, 1.0), (7, 3, 4, 1.0), (5, 2, 3, 2.0)) v$$);
SET xxl.memory = '1MB';
SET xxl.graph_max_semi_nodes = 1;
SELECT * FROM xxl.minimum_spanning_forest($$
	SELECT column1 AS id, column2 AS source, column3 AS target, column4 AS cost FROM (
	VALUES (9::bigint, 1::bigint, 2::bigint, 1.0::float8), (8, 2, 1, 1.0), (12, 1, 2, 1.0),
	       (7, 4, 3, 1.0), (7, 3, 4, 1.0), (5, 2, 3, 2.0)) v$$);
RESET xxl.graph_max_semi_nodes;
RESET xxl.memory;
-- -0.0 sorts before +0.0, negative and infinite costs are fine
SELECT * FROM xxl.minimum_spanning_forest($$
	SELECT * FROM (VALUES (1, 1, 2, 0.0::float8), (2, 1, 2, -0.0::float8), (3, 2, 3, '-Infinity'),
		(4, 3, 1, 'Infinity'), (5, 3, 4, -1e308)) v(id, source, target, cost)$$);

-- Empty and degenerate edge sets ---------------------------------------------------

CREATE TABLE no_edges (source int, target int);
SELECT * FROM xxl.connected_components('no_edges');
SELECT * FROM xxl.spanning_forest('SELECT source, target FROM no_edges');
SELECT * FROM xxl.minimum_spanning_forest('SELECT 1 AS id, 1 AS source, 2 AS target, 1.0 AS cost WHERE false');
SELECT xxl.connected_components_into('no_edges', 'cc_none');
SELECT count(*) FROM cc_none;
SELECT details->'path' AS path, details->'nodes' AS nodes FROM xxl.last_stats();
-- only self loops: every node is its own component, the forests are empty
SELECT * FROM xxl.connected_components('SELECT i AS source, i AS target FROM generate_series(3, 1, -1) i');
SELECT count(*) FROM xxl.spanning_forest('SELECT i AS source, i AS target FROM generate_series(1, 3) i');
-- one edge
SELECT * FROM xxl.spanning_forest('SELECT 5 AS target, 6 AS source');

-- Columns: by name, in any order, of any integer type; costs of any number type ------

CREATE DOMAIN node_id AS bigint;
CREATE TABLE typed (label text, target smallint, cost numeric, id integer, source node_id, extra point);
INSERT INTO typed VALUES ('x', 2, 1.25, 1, 1, NULL), ('y', 3, 0.5, 2, 2, NULL), ('z', 1, 10, 3, 3, NULL),
	('w', 32767, 2, 4, 3, NULL);
SELECT * FROM xxl.connected_components('typed');
SELECT * FROM xxl.minimum_spanning_forest('typed');
SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, cost::real AS cost FROM typed');
SELECT * FROM xxl.minimum_spanning_forest('SELECT id::smallint, source, target, (cost * 100)::int AS cost FROM typed');
ALTER TABLE typed DROP COLUMN label;
SELECT * FROM xxl.spanning_forest('public.typed');

-- Names: quoted, schema-qualified, a view, a table with inheritance children
CREATE SCHEMA "Graph Data";
CREATE TABLE "Graph Data"."Edges" (source bigint, target bigint);
INSERT INTO "Graph Data"."Edges" VALUES (1, 2), (3, 4);
SELECT * FROM xxl.connected_components('"Graph Data"."Edges"');
CREATE TABLE child_edges () INHERITS ("Graph Data"."Edges");
INSERT INTO child_edges VALUES (2, 3);
SELECT * FROM xxl.connected_components('"Graph Data"."Edges"');
CREATE VIEW edge_view AS SELECT target AS source, source AS target FROM "Graph Data"."Edges" WHERE source > 1;
SELECT * FROM xxl.connected_components('edge_view');

-- Results in a transaction: the target table is new, visible at once, gone on rollback
BEGIN;
SELECT xxl.spanning_forest_into('roads', 'sf_tx');
SELECT count(*) FROM sf_tx;
ROLLBACK;
SELECT to_regclass('sf_tx') AS sf_tx;
SELECT xxl.spanning_forest_into('roads', '"Graph Data".sf_named');
SELECT count(*) FROM "Graph Data".sf_named;

-- 300 paths of 1000 nodes at the smallest budget: 300000 ids, more than the
-- union-find by id holds in 1MB, so in parts (the ids above the array's
-- spooled, joined at run by levels), semi-external
SET xxl.memory = '1MB';
SELECT count(*) AS nodes, count(DISTINCT component) AS components,
	bool_and(component = (node - 1) / 1000 * 1000 + 1) AS labels_ok
FROM xxl.connected_components('SELECT i AS source, i + 1 AS target FROM generate_series(1, 299999) i WHERE i % 1000 <> 0');
SELECT details->'path' AS path, details->'ids' AS ids, details->'id_parts' AS parts,
	memory_peak <= memory_limit AS within_budget,
	bytes_written[1] > 0 AS spilled FROM xxl.last_stats();

-- the spanning forest of the same ids, by id in parts: each level joins the
-- edges between its low ids, passes the others on with the low sets as
-- single indexes; a spanning forest of input edges, nodes - components of them
CREATE TABLE paths AS SELECT i AS source, i + 1 AS target FROM generate_series(1, 299999) i
	WHERE i % 1000 <> 0 ORDER BY hashint4(i);
ANALYZE paths;
SELECT count(*) AS forest_edges FROM xxl.spanning_forest('paths');
SELECT details->'path' AS path, details->'ids' AS ids, (details->>'id_parts')::int > 1 AS parts,
	memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
-- I/O per input byte: an edge counts as a pair of 8-byte ids
SELECT (details->>'input_bytes')::bigint = 16 * (details->>'edges')::bigint AS input_is_pairs,
	(details->>'written_per_input')::float8 = round(bytes_written[1]::numeric / (details->>'input_bytes')::bigint, 2)::float8
		AS written_is_ratio,
	(details->>'written_per_input')::float8 > 1 AS spooled
FROM xxl.last_stats();
SELECT xxl.spanning_forest_into('paths', 'sf_paths');
SELECT count(*) AS not_input FROM (TABLE sf_paths EXCEPT ALL TABLE paths) d;
SELECT count(*) AS nodes, count(DISTINCT component) AS components,
	bool_and(component = (node - 1) / 1000 * 1000 + 1) AS spans_the_paths
FROM xxl.connected_components('sf_paths');
-- the same edges as a query (no row estimate): kept in memory first, then in parts
SELECT count(*) AS forest_edges FROM xxl.spanning_forest('SELECT * FROM paths');
SELECT details->'path' AS path, (details->>'id_parts')::int > 1 AS parts FROM xxl.last_stats();
-- the minimum spanning forest in parts: the edges in their strict order,
-- and a set joins by an edge only while no lighter edge leaves it unjoined
-- (the cut property); the very rows of the in-memory path
CREATE TABLE wpaths AS
SELECT 2 * source AS id, source, target, (hashint4(source) & 65535)::float8 AS cost FROM paths
UNION ALL
SELECT 2 * i + 1, i, i + 2, (hashint4(-i) & 65535)::float8 FROM generate_series(1, 299998, 3) i
WHERE i % 1000 < 998
ORDER BY 4, 1;
ANALYZE wpaths;
SELECT xxl.minimum_spanning_forest_into('wpaths', 'msf_parts');
SELECT details->'path' AS path, (details->>'id_parts')::int > 1 AS parts,
	memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
SET xxl.memory = '256MB';
SELECT xxl.minimum_spanning_forest_into('wpaths', 'msf_roomy_paths');
SELECT details->'path' AS path FROM xxl.last_stats();
SELECT count(*) AS differ FROM ((TABLE msf_parts EXCEPT ALL TABLE msf_roomy_paths)
	UNION ALL (TABLE msf_roomy_paths EXCEPT ALL TABLE msf_parts)) d;
-- ... in ascending (cost, id) order, as every path returns them
SELECT bool_and(ordered) AS ordered FROM (SELECT cost >= lag(cost, 1, cost) OVER () AS ordered
	FROM xxl.minimum_spanning_forest('wpaths')) o;
SET xxl.memory = '1MB';
SELECT bool_and(ordered) AS ordered FROM (SELECT cost >= lag(cost, 1, cost) OVER () AS ordered
	FROM xxl.minimum_spanning_forest('wpaths')) o;
SELECT details->'path' AS path FROM xxl.last_stats();
-- low ids that never meet each other (every edge reaches above): the levels
-- give up and the sorters take the edges
CREATE TABLE pairs AS SELECT i AS source, i + 150000 AS target FROM generate_series(0, 149999) i;
ANALYZE pairs;
SELECT xxl.spanning_forest_into('pairs', 'sf_pairs');
SELECT details->'path' AS path FROM xxl.last_stats();
SELECT count(*) AS not_input FROM (TABLE sf_pairs EXCEPT ALL TABLE pairs) d;
SELECT count(*) AS missing FROM (TABLE pairs EXCEPT ALL TABLE sf_pairs) d;
SELECT count(*) AS msf_edges FROM xxl.minimum_spanning_forest('SELECT source AS id, *, 1.0 AS cost FROM pairs');
SELECT details->'path' AS path FROM xxl.last_stats();
-- the minimum forest's low ids that do meet each other, each by a heavier
-- edge than its lightest, which reaches above: every low set blocked from
-- its first edge, the first level defers nearly all, and gives up
CREATE TABLE hubs AS
SELECT 2 * i AS id, i AS source, i + 1 AS target, 10.0::float8 AS cost FROM generate_series(0, 149998) i
UNION ALL
SELECT 2 * i + 1, i, 200000 + i % 1000, 1.0 FROM generate_series(0, 149999) i;
ANALYZE hubs;
SELECT count(*) AS msf_edges, sum(cost) AS weight FROM xxl.minimum_spanning_forest('hubs');
SELECT details->'path' AS path FROM xxl.last_stats();
SET xxl.memory = '256MB';
SELECT count(*) AS msf_edges, sum(cost) AS weight FROM xxl.minimum_spanning_forest('hubs');
SET xxl.memory = '1MB';
DROP TABLE paths, sf_paths, pairs, sf_pairs, wpaths, msf_parts, msf_roomy_paths, hubs;
RESET xxl.memory;

-- rows for the caller stay in memory while the budget leaves room beside the
-- engine (no temporary file however small work_mem), and spill beyond it
CREATE TABLE chain AS SELECT i AS source, i + 1 AS target FROM generate_series(1, 49999) i;
SET work_mem = '64kB';
SET xxl.memory = '64MB';
SELECT pg_stat_force_next_flush();
SELECT temp_files AS files0 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT count(*) AS nodes FROM xxl.connected_components('chain');
SELECT pg_stat_force_next_flush();
SELECT temp_files - :files0 AS temp_files_roomy FROM pg_stat_database WHERE datname = current_database();
SET xxl.memory = '1MB';
SELECT pg_stat_force_next_flush();
SELECT temp_files AS files0 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT count(*) AS nodes FROM xxl.connected_components('chain');
SELECT pg_stat_force_next_flush();
SELECT temp_files - :files0 > 0 AS spilled_at_1mb FROM pg_stat_database WHERE datname = current_database();
RESET xxl.memory;
RESET work_mem;
DROP TABLE chain;

DROP SCHEMA "Graph Data" CASCADE;
DROP TABLE roads, cc_roomy, sf_roomy, msf_roomy, cc_ext, msf_ext, sf_ext, no_edges, cc_none, typed;
DROP DOMAIN node_id;
\i test/include/end.sql

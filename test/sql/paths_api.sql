-- paths_api.sql — the SQL surface of xxl.shortest_paths, xxl.bfs and
-- xxl.dijkstra beyond the oracle test: defaults, _into tables, several
-- sources, limits, sources and targets outside the graph, zero costs,
-- numeric and integer cost columns, and every bad input with its SQLSTATE
-- (the session stays usable, no half-written target is visible).
\i test/include/begin.sql
SET client_min_messages = warning;
CREATE TEMP TABLE e (id int, source int, target int, cost numeric, reverse_cost int);
INSERT INTO e VALUES (1, 1, 2, 1.5, -1), (2, 2, 3, 0, 0), (3, 3, 4, 2, 5), (4, 1, 4, 10, -1),
	(5, 7, 8, 1, 1), (6, 4, 4, 1, 1);
-- defaults: directed, no limit; the source row: 0, itself, -1
SELECT * FROM xxl.shortest_paths('e', 1) ORDER BY node;
SELECT * FROM xxl.shortest_paths('e', 4, false, 2.5) ORDER BY node;
SELECT * FROM xxl.shortest_paths('e', ARRAY[1, 7]) ORDER BY node;
SELECT * FROM xxl.bfs('e', 1) ORDER BY node;
SELECT * FROM xxl.bfs('e', 4, max_depth => 1) ORDER BY node;
SELECT * FROM xxl.bfs('e', ARRAY[3, 8], false, 0) ORDER BY node;
SELECT * FROM xxl.dijkstra('e', 1, 4);
SELECT * FROM xxl.dijkstra('e', 4, 1);
SELECT * FROM xxl.dijkstra('e', 4, 1, false);
-- no rows: source = target, an unreachable target, ids outside the graph, no sources
SELECT count(*) FROM xxl.dijkstra('e', 1, 1);
SELECT count(*) FROM xxl.dijkstra('e', 1, 8);
SELECT count(*) FROM xxl.dijkstra('e', 1, 99);
SELECT count(*) FROM xxl.shortest_paths('e', 99);
SELECT count(*) FROM xxl.bfs('e', '{}'::bigint[]);
-- a query as the edges, without reverse_cost
SELECT * FROM xxl.shortest_paths('SELECT id, target AS source, source AS target, 1 AS cost FROM e', 4)
ORDER BY node;
-- into tables
SELECT xxl.shortest_paths_into('e', 1, 'sp_out');
SELECT * FROM sp_out ORDER BY node;
SELECT xxl.bfs_into('e', ARRAY[1, 7], 'bfs_out', false, 1);
SELECT * FROM bfs_out ORDER BY node;
SELECT xxl.shortest_paths_into('e', ARRAY[2], 'sp_out2', true, 0);
SELECT * FROM sp_out2;
SELECT xxl.bfs_into('e', 3, 'bfs_out2');
SELECT count(*) FROM bfs_out2;
SELECT details->>'path' AS path, details->>'reached' AS reached FROM xxl.last_stats();

-- Bad input ----------------------------------------------------------------------
\set VERBOSITY sqlstate
SELECT * FROM xxl.shortest_paths(NULL, 1);
SELECT * FROM xxl.shortest_paths('e', NULL::bigint);
SELECT * FROM xxl.shortest_paths('e', ARRAY[1, NULL]);
SELECT * FROM xxl.shortest_paths('e', 1, NULL);
SELECT * FROM xxl.shortest_paths('e', 1, true, -1);
SELECT * FROM xxl.shortest_paths('e', 1, true, 'NaN');
SELECT * FROM xxl.bfs('e', 1, true, -1);
SELECT * FROM xxl.dijkstra('e', 1, NULL);
SELECT xxl.bfs_into('e', 1, 'bfs_out');
SELECT * FROM xxl.shortest_paths('SELECT source, target, cost FROM e', 1);
SELECT * FROM xxl.shortest_paths('SELECT id, source, target FROM e', 1);
SELECT * FROM xxl.shortest_paths('SELECT id, source, target, cost, ''x''::text AS reverse_cost FROM e', 1);
SELECT * FROM xxl.shortest_paths('SELECT id, source, target, NULL::float8 AS cost FROM e', 1);
SELECT * FROM xxl.shortest_paths('SELECT NULL::int AS id, source, target, cost FROM e', 1);
SELECT * FROM xxl.shortest_paths('SELECT id, source, target, cost, ''NaN''::float8 AS reverse_cost FROM e', 1);
SELECT * FROM xxl.bfs('SELECT id, source, target, ''NaN''::float8 AS cost FROM e', 1);
SELECT * FROM xxl.shortest_paths('no_such_table', 1);
SELECT xxl.shortest_paths_into('SELECT id, source, target, 1/0 AS cost FROM e', 1, 'half');
\set VERBOSITY default
SELECT to_regclass('half') IS NULL AS no_half_target;
-- the session still works
SELECT count(*) FROM xxl.bfs('e', 1);
-- rows for the caller stay in memory beside the engine's (no temporary file)
CREATE TABLE chain AS SELECT i AS id, i AS source, i + 1 AS target, 1.0::float8 AS cost
  FROM generate_series(1, 49999) i;
SET work_mem = '64kB';
SET xxl.memory = '64MB';
SELECT pg_stat_force_next_flush();
SELECT temp_files AS files0 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT count(*) AS reached, max(depth) AS depth FROM xxl.bfs('chain', 1);
SELECT pg_stat_force_next_flush();
SELECT temp_files - :files0 AS temp_files_roomy FROM pg_stat_database WHERE datname = current_database();
RESET xxl.memory;
RESET work_mem;
DROP TABLE chain;
\i test/include/end.sql

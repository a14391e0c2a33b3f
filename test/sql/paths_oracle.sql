-- paths_oracle.sql — xxl.shortest_paths, xxl.bfs and xxl.dijkstra against
-- pgRouting 3.4 (pgr_drivingDistance, pgr_breadthFirstSearch,
-- pgr_dijkstra) on its documentation sample graph (one-way and absent
-- directions) and on random graphs (zero costs, absent directions,
-- multi-edges, self loops): every source, directed and undirected, on the
-- in-memory path (roomy budget) and the external path (the smallest budget,
-- forced), plus graphs that go external by their budget alone, and some
-- whose nodes fit but links do not (the semi-external path, arcs paged).
--
-- Checks: the reached nodes and their distances / depths equal pgRouting's
-- (costs are small integers: sums are exact); every (pred, edge) of a tree
-- is an input edge in an allowed direction whose cost adds up; dijkstra's
-- path is such a chain from source to target with pgr_dijkstra's total and
-- its last row (target, -1, 0, total), and no row when pgRouting has none.
\i test/include/begin.sql
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
RESET client_min_messages;
SET client_min_messages = warning;
SET jit = off;
CREATE SCHEMA paths_test;
SET search_path = paths_test, public;

-- pgRouting's sample graph (documentation, 3.4)
CREATE TABLE sample (id bigint, source bigint, target bigint, cost float8, reverse_cost float8);
INSERT INTO sample VALUES
	(1, 5, 6, 1, 1), (2, 6, 10, -1, 1), (3, 10, 15, -1, 1), (4, 6, 7, 1, 1),
	(5, 10, 11, 1, -1), (6, 1, 3, 1, 1), (7, 3, 7, 1, 1), (8, 7, 11, 1, 1),
	(9, 11, 16, 1, 1), (10, 7, 8, 1, 1), (11, 11, 12, 1, -1), (12, 8, 12, 1, -1),
	(13, 12, 17, 1, -1), (14, 8, 9, 1, 1), (15, 16, 17, 1, 1), (16, 15, 16, 1, 1),
	(17, 2, 4, 1, 1), (18, 13, 14, 1, 1);

-- random graphs: 40 nodes, 160 edges, integer costs 0..4, a quarter of the
-- directions absent, self loops and parallel edges left in
SELECT setseed(0.25);
CREATE TABLE rnd AS
SELECT i::bigint AS id, (random() * 39)::bigint * 1000003 - 7 AS source,
	(random() * 39)::bigint * 1000003 - 7 AS target,
	CASE WHEN random() < 0.25 THEN -1 ELSE floor(random() * 5) END AS cost,
	CASE WHEN random() < 0.25 THEN -1 ELSE floor(random() * 5) END AS reverse_cost
FROM generate_series(1, 160) i;
-- no reverse_cost column: every edge one-way when directed
CREATE TABLE oneway AS SELECT id, source, target, cost FROM rnd WHERE cost >= 0;

-- Is every row of a tree an allowed edge whose cost adds up?
CREATE FUNCTION bad_tree_rows(tbl text, tree regclass, directed boolean, bfs boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	rc text := CASE WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = tbl::regclass
		AND attname = 'reverse_cost' AND NOT attisdropped) THEN 'reverse_cost' ELSE '-1' END;
BEGIN
	EXECUTE format($q$
		WITH arcs AS MATERIALIZED (
			SELECT id, source AS f, target AS t, cost AS w FROM %1$s WHERE cost >= 0
			UNION ALL SELECT id, target, source, %3$s FROM %1$s WHERE %3$s >= 0
			UNION ALL SELECT id, target, source, cost FROM %1$s WHERE NOT %5$L AND cost >= 0
			UNION ALL SELECT id, source, target, %3$s FROM %1$s WHERE NOT %5$L AND %3$s >= 0)
		, rows AS MATERIALIZED (
			SELECT t.node, t.d, t.pred, t.edge, p.d AS pd
			FROM %2$s t JOIN %2$s p ON p.node = t.pred WHERE t.edge <> -1)
		, good AS (
			SELECT r.node FROM rows r
			JOIN arcs a ON a.id = r.edge AND a.f = r.pred AND a.t = r.node
			WHERE %4$L OR r.pd + a.w = r.d)
		SELECT count(*) FROM rows r
		WHERE (%4$L AND r.pd + 1 <> r.d) OR r.node NOT IN (SELECT node FROM good)$q$, tbl, tree, rc, bfs, directed) INTO n;
	RETURN n;
END $$;

-- Differences between xxl and pgRouting for one source set, and bad rows.
CREATE FUNCTION compare(tbl text, srcs bigint[], directed boolean)
RETURNS TABLE(what text, bad bigint) LANGUAGE plpgsql AS $$
DECLARE
	q text := format('SELECT * FROM %s', tbl);
BEGIN
	DROP TABLE IF EXISTS x_sp, x_bfs;
	CREATE TEMP TABLE x_sp AS
		SELECT node, distance AS d, pred, edge FROM xxl.shortest_paths(tbl, srcs, directed);
	CREATE TEMP TABLE x_bfs AS
		SELECT node, depth::float8 AS d, pred, edge FROM xxl.bfs(tbl, srcs, directed);
	-- the BFS's statistics, before the checks' own plans sort
	DROP TABLE IF EXISTS x_last;
	CREATE TEMP TABLE x_last AS SELECT * FROM xxl.last_stats();
	ANALYZE x_sp;
	ANALYZE x_bfs;
	what := 'sssp'; bad := (SELECT count(*) FROM (
		(SELECT node, d FROM x_sp EXCEPT ALL
		 SELECT node, min(agg_cost) FROM pgr_drivingDistance(q, srcs, 1e15, directed) GROUP BY node)
		UNION ALL
		(SELECT node, min(agg_cost) FROM pgr_drivingDistance(q, srcs, 1e15, directed) GROUP BY node
		 EXCEPT ALL SELECT node, d FROM x_sp)) z);
	RETURN NEXT;
	what := 'bfs'; bad := (SELECT count(*) FROM (
		(SELECT node, d FROM x_bfs EXCEPT ALL
		 SELECT node, min(depth)::float8 FROM pgr_breadthFirstSearch(q, srcs, directed => directed) GROUP BY node)
		UNION ALL
		(SELECT node, min(depth)::float8 FROM pgr_breadthFirstSearch(q, srcs, directed => directed) GROUP BY node
		 EXCEPT ALL SELECT node, d FROM x_bfs)) z);
	RETURN NEXT;
	what := 'sssp tree'; bad := bad_tree_rows(tbl, 'x_sp', directed, false); RETURN NEXT;
	what := 'bfs tree'; bad := bad_tree_rows(tbl, 'x_bfs', directed, true); RETURN NEXT;
END $$;

-- dijkstra from s to every t: total, last row, chain, and rows iff pgRouting has them
CREATE FUNCTION compare_dijkstra(tbl text, s bigint, directed boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	q text := format('SELECT * FROM %s', tbl);
	t bigint;
	bad bigint := 0;
	ours float8;
	theirs float8;
	rows_ours int;
	rows_theirs int;
BEGIN
	FOR t IN EXECUTE format('SELECT source FROM %1$s UNION SELECT target FROM %1$s', tbl) LOOP
		DROP TABLE IF EXISTS x_path;
		CREATE TEMP TABLE x_path AS SELECT * FROM xxl.dijkstra(tbl, s, t, directed);
		SELECT count(*), max(agg_cost) INTO rows_ours, ours FROM x_path;
		SELECT count(*), max(agg_cost) INTO rows_theirs, theirs FROM pgr_dijkstra(q, s, t, directed);
		IF (rows_ours = 0) <> (rows_theirs = 0) OR ours IS DISTINCT FROM theirs THEN
			bad := bad + 1;
		END IF;
		IF rows_ours > 0 AND NOT EXISTS (SELECT 1 FROM x_path
				WHERE seq = rows_ours AND node = t AND edge = -1 AND cost = 0) THEN
			bad := bad + 1;
		END IF;
		-- the chain: as a tree keyed by the next node
		DROP TABLE IF EXISTS x_chain;
		CREATE TEMP TABLE x_chain AS
			SELECT b.node, b.agg_cost AS d, a.node AS pred, a.edge
			FROM x_path a JOIN x_path b ON b.seq = a.seq + 1
			UNION ALL SELECT node, agg_cost, node, -1 FROM x_path WHERE seq = 1;
		IF rows_ours > 0 AND (bad_tree_rows(tbl, 'x_chain', directed, false) > 0 OR
				(SELECT node FROM x_path WHERE seq = 1) <> s) THEN
			bad := bad + 1;
		END IF;
	END LOOP;
	RETURN bad;
END $$;

-- Every source of a graph, both directions, one sum of differences per check.
CREATE FUNCTION every_source(tbl text) RETURNS TABLE(directed boolean, what text, bad numeric)
LANGUAGE plpgsql AS $$
DECLARE
	s bigint;
	dir boolean;
BEGIN
	CREATE TEMP TABLE acc (directed boolean, what text, bad bigint);
	FOREACH dir IN ARRAY ARRAY[true, false] LOOP
		FOR s IN EXECUTE format('SELECT source FROM %1$s UNION SELECT target FROM %1$s', tbl) LOOP
			INSERT INTO acc SELECT dir, c.what, c.bad FROM compare(tbl, ARRAY[s], dir) c;
		END LOOP;
	END LOOP;
	RETURN QUERY SELECT a.directed, a.what, sum(a.bad) FROM acc a GROUP BY 1, 2 ORDER BY 1, 2;
	DROP TABLE acc;
END $$;

-- In memory -------------------------------------------------------------------
SET xxl.memory = '64MB';
SELECT * FROM every_source('sample');
SELECT details->>'path' AS path FROM x_last;
SELECT * FROM every_source('rnd');
SELECT * FROM every_source('oneway');
SELECT s, compare_dijkstra('sample', s, true) AS directed_bad,
	compare_dijkstra('sample', s, false) AS undirected_bad
FROM generate_series(1, 17, 4) s;
SELECT compare_dijkstra('rnd', -7, true) + compare_dijkstra('rnd', 1000003 * 20 - 7, false) AS rnd_bad;
-- several sources: the nearest
SELECT * FROM compare('rnd', ARRAY[-7, 1000003 * 10 - 7, 1000003 * 30 - 7], true);
SELECT * FROM compare('sample', ARRAY[1, 15, 4, 4], false);

-- External ----------------------------------------------------------------------
SET xxl.memory = '1MB';
SET xxl.graph_force_external = on;
SELECT * FROM every_source('sample');
SELECT details->>'path' AS path, details->>'ids' AS ids FROM x_last;
SELECT * FROM every_source('rnd');
SELECT s, compare_dijkstra('sample', s, true) AS directed_bad,
	compare_dijkstra('sample', s, false) AS undirected_bad
FROM generate_series(1, 17, 4) s;
SELECT compare_dijkstra('rnd', -7, true) + compare_dijkstra('rnd', 1000003 * 20 - 7, false) AS rnd_bad;
SELECT * FROM compare('rnd', ARRAY[-7, 1000003 * 10 - 7, 1000003 * 30 - 7], true);
-- the BFS as Mehlhorn-Meyer (clusters, hot pool) and the shortest paths as
-- Meyer-Osipov (the same clusters, weight categories, delayed relaxation);
-- their spanning forest needs 2MB
SET xxl.memory = '2MB';
SET xxl.bfs_algorithm = 'mm';
SET xxl.sssp_algorithm = 'mo';
SELECT * FROM every_source('sample');
SELECT * FROM every_source('rnd');
SELECT * FROM compare('rnd', ARRAY[-7, 1000003 * 10 - 7, 1000003 * 30 - 7], false);
SELECT s, compare_dijkstra('sample', s, true) AS directed_bad,
	compare_dijkstra('sample', s, false) AS undirected_bad
FROM generate_series(1, 17, 4) s;
SELECT compare_dijkstra('rnd', -7, true) + compare_dijkstra('rnd', 1000003 * 20 - 7, false) AS rnd_bad;
SELECT count(*) AS rows FROM xxl.shortest_paths('rnd', -7, false);
SELECT details->>'path' AS path, details->>'sssp' AS sssp,
	(details->>'categories')::bigint AS categories, (details->>'mo_batches')::bigint > 0 AS batched
FROM xxl.last_stats();
SELECT count(*) AS rows FROM xxl.bfs('rnd', -7, false);
SELECT details->>'path' AS path, details->>'bfs' AS bfs,
	(details->>'clusters')::bigint > 1 AS clustered,
	(details->>'cluster_loads')::bigint <= (details->>'clusters')::bigint AS loaded_once
FROM xxl.last_stats();
SET xxl.bfs_algorithm = 'mr';
SELECT count(*) AS rows FROM xxl.bfs('rnd', -7, false);
SELECT details->>'bfs' AS bfs FROM xxl.last_stats();
-- too small a budget for the forest: MR and Dijkstra
SET xxl.memory = '1MB';
SET xxl.bfs_algorithm = 'mm';
SELECT count(*) AS rows FROM xxl.bfs('rnd', -7, false);
SELECT details->>'bfs' AS bfs FROM xxl.last_stats();
SELECT count(*) AS rows FROM xxl.shortest_paths('rnd', -7, false);
SELECT details->>'sssp' AS sssp FROM xxl.last_stats();
RESET xxl.bfs_algorithm;
RESET xxl.sssp_algorithm;
RESET xxl.graph_force_external;

-- Graphs that go external by their budget alone ------------------------------------
-- a random graph of 30000 edges, ids near the bigint limits
SELECT setseed(0.5);
CREATE TABLE big AS
SELECT i::bigint AS id,
	CASE WHEN i % 2 = 0 THEN 9223372036854775807 - (random() * 8000)::bigint
		ELSE -9223372036854775807 + (random() * 8000)::bigint END AS source,
	CASE WHEN i % 3 = 0 THEN 9223372036854775807 - (random() * 8000)::bigint
		ELSE -9223372036854775807 + (random() * 8000)::bigint END AS target,
	floor(random() * 10) AS cost, floor(random() * 10) - 2 AS reverse_cost
FROM generate_series(1, 30000) i;
SELECT * FROM compare('big', ARRAY[(SELECT source FROM big WHERE id = 1)], true);
SELECT details->>'path' AS path, (details->>'pq_pushes')::bigint > 0 AS pushed,
	details->>'ids' AS ids FROM x_last;
SELECT * FROM compare('big', ARRAY[(SELECT source FROM big WHERE id = 2)], false);
-- semi-external: the nodes fit, the links do not; an arc is a head and a
-- one-byte cost code (ten costs here; a head alone for BFS) ...
SET xxl.memory = '1400kB';
SELECT * FROM compare('big', ARRAY[(SELECT source FROM big WHERE id = 1)], true);
SELECT details->>'path' AS path, details->>'arc_bytes' AS arc_bytes FROM x_last;
SELECT * FROM compare('big', ARRAY[(SELECT source FROM big WHERE id = 2)], false);
SELECT count(*) > 1000 AS reached FROM xxl.shortest_paths('big', (SELECT source FROM big WHERE id = 1));
SELECT details->>'path' AS path, details->>'arc_bytes' AS arc_bytes FROM xxl.last_stats();
-- ... or, with more costs than codes, the head and the double (exact
-- fractions: pgRouting's sums are ours)
CREATE TABLE bigw AS SELECT id, source, target, cost + (id % 997) / 1024.0 AS cost, reverse_cost FROM big;
SELECT * FROM compare('bigw', ARRAY[(SELECT source FROM big WHERE id = 1)], true);
SELECT * FROM compare('bigw', ARRAY[(SELECT source FROM big WHERE id = 2)], false);
SELECT count(*) > 1000 AS reached FROM xxl.shortest_paths('bigw', (SELECT source FROM big WHERE id = 1));
SELECT details->>'path' AS path, details->>'arc_bytes' AS arc_bytes,
	(details->>'arcs_in_memory')::bigint < (details->>'arcs')::bigint AS paged FROM xxl.last_stats();
-- a denser graph (150000 edges over 2000 ids): arcs are paged (most of
-- them for shortest paths), placed in several passes over the links
SELECT setseed(0.25);
CREATE TABLE dense AS
SELECT i::bigint AS id, (random() * 2000)::bigint * 3 - 3000 AS source,
	(random() * 2000)::bigint * 3 - 3000 AS target,
	floor(random() * 10) AS cost, floor(random() * 10) - 2 AS reverse_cost
FROM generate_series(1, 150000) i;
SET xxl.memory = '1200kB';
SELECT * FROM compare('dense', ARRAY[(SELECT source FROM dense WHERE id = 1)], true);
SELECT details->>'path' AS path, (details->>'arcs_in_memory')::bigint < (details->>'arcs')::bigint AS paged,
	(details->>'link_passes')::bigint >= 3 AS passes FROM x_last;
SELECT * FROM compare('dense', ARRAY[(SELECT source FROM dense WHERE id = 2)], false);
SELECT count(*) > 1000 AS reached FROM xxl.shortest_paths('dense', (SELECT source FROM dense WHERE id = 1), false);
SELECT details->>'path' AS path, details->>'arc_bytes' AS arc_bytes,
	(details->>'arcs_in_memory')::bigint < (details->>'arcs')::bigint / 2 AS paged,
	(details->>'link_passes')::bigint >= 3 AS passes FROM xxl.last_stats();
SET xxl.memory = '1400kB';
SELECT count(*) > 2 AS big_path_rows, max(agg_cost) = (SELECT agg_cost FROM pgr_dijkstra(
	'SELECT * FROM big', (SELECT source FROM big WHERE id = 3), (SELECT target FROM big WHERE id = 7))
	ORDER BY seq DESC LIMIT 1) AS same_total
FROM xxl.dijkstra('big', (SELECT source FROM big WHERE id = 3), (SELECT target FROM big WHERE id = 7));
SELECT details->>'path' AS path FROM xxl.last_stats();
SET xxl.memory = '1MB';
-- a long path (diameter 4000) and a 60 x 60 grid
CREATE TABLE line AS
SELECT i::bigint AS id, (i * 7919 % 4001)::bigint AS source, ((i + 1) * 7919 % 4001)::bigint AS target,
	(1 + i % 3)::float8 AS cost, -1::float8 AS reverse_cost
FROM generate_series(0, 3999) i;
SELECT * FROM compare('line', ARRAY[0::bigint], true);
SELECT * FROM compare('line', ARRAY[(2000 * 7919 % 4001)::bigint], false);
SET xxl.memory = '2MB';
SET xxl.bfs_algorithm = 'mm';
SET xxl.sssp_algorithm = 'mo';
SET xxl.graph_force_external = on;
SELECT * FROM compare('line', ARRAY[(2000 * 7919 % 4001)::bigint], false);
SELECT * FROM compare('big', ARRAY[(SELECT source FROM big WHERE id = 2)], false);
SELECT details->>'bfs' AS bfs FROM x_last;
SELECT * FROM compare('big', ARRAY[(SELECT source FROM big WHERE id = 1)], true);
RESET xxl.bfs_algorithm;
RESET xxl.sssp_algorithm;
RESET xxl.graph_force_external;
SET xxl.memory = '1MB';
SELECT (SELECT max(depth) FROM xxl.bfs('line', 0, false)) AS line_depth,
	(SELECT details->>'levels' FROM xxl.last_stats()) AS levels;
CREATE TABLE grid AS
SELECT (2 * (r * 60 + c) + k)::bigint AS id, (r * 60 + c)::bigint AS source,
	CASE k WHEN 0 THEN r * 60 + c + 1 ELSE (r + 1) * 60 + c END::bigint AS target,
	(1 + (r + c + k) % 4)::float8 AS cost, (1 + (r * c) % 3)::float8 AS reverse_cost
FROM generate_series(0, 59) r, generate_series(0, 59) c, generate_series(0, 1) k
WHERE (k = 0 AND c < 59) OR (k = 1 AND r < 59);
SELECT * FROM compare('grid', ARRAY[0::bigint], true);
SELECT * FROM compare('grid', ARRAY[1830::bigint], false);
SET xxl.memory = '2MB';
SET xxl.bfs_algorithm = 'mm';
SET xxl.sssp_algorithm = 'mo';
SET xxl.graph_force_external = on;
SELECT * FROM compare('grid', ARRAY[1830::bigint], false);
SELECT * FROM compare('grid', ARRAY[0::bigint], true);
SELECT details->>'bfs' AS bfs FROM x_last;
SELECT count(*) AS grid_path_rows, max(agg_cost) = (SELECT agg_cost FROM pgr_dijkstra(
	'SELECT * FROM grid', 0, 3599) ORDER BY seq DESC LIMIT 1) AS same_total
FROM xxl.dijkstra('grid', 0, 3599);
SELECT details->>'sssp' AS sssp FROM xxl.last_stats();
RESET xxl.bfs_algorithm;
RESET xxl.sssp_algorithm;
RESET xxl.graph_force_external;
SET xxl.memory = '1MB';
SELECT count(*) AS grid_path_rows, max(agg_cost) = (SELECT agg_cost FROM pgr_dijkstra(
	'SELECT * FROM grid', 0, 3599) ORDER BY seq DESC LIMIT 1) AS same_total
FROM xxl.dijkstra('grid', 0, 3599);

RESET xxl.memory;
RESET search_path;
DROP SCHEMA paths_test CASCADE;
\i test/include/end.sql

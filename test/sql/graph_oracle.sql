-- graph_oracle.sql — xxl.connected_components, xxl.spanning_forest and
-- xxl.minimum_spanning_forest against oracles written here: a union-find
-- and a Kruskal in PL/pgSQL, and recursive SQL (transitive closure) for the
-- components of the small graphs.  Every graph runs at a roomy budget
-- (in-memory path) and at the smallest xxl.memory with a cap on the
-- semi-external node count (fully external path: edge contraction), and
-- one larger graph goes external by its budget alone.
--
-- Checks: CC labels equal the oracle's exactly (smallest id per component);
-- the MSF is the oracle's edge set exactly (ids are unique, so the order
-- (cost, id) is strict), with the same weight and nodes - components edges;
-- the spanning forest consists of input edges, has no loop, has
-- nodes - components edges and the oracle's components.
\i test/include/begin.sql
SET client_min_messages = warning;
CREATE SCHEMA graph_test;

-- Oracles --------------------------------------------------------------------

-- Dense numbers 1..n for the distinct ids, in id order.
CREATE FUNCTION graph_test.dense(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS o_map;
	EXECUTE format('CREATE TEMP TABLE o_map AS
		SELECT id AS orig, (row_number() OVER (ORDER BY id))::int AS d
		FROM (SELECT source AS id FROM %1$s UNION SELECT target FROM %1$s) s', tbl);
	CREATE UNIQUE INDEX ON o_map (orig);
	ANALYZE o_map;
END $$;

-- Union-find with union by smaller index: a root is its set's smallest id.
CREATE FUNCTION graph_test.oracle_cc(tbl text)
RETURNS TABLE(node bigint, component bigint) LANGUAGE plpgsql AS $$
DECLARE
	parent int[];
	ids bigint[];
	n int;
	r record;
	a int;
	b int;
BEGIN
	PERFORM graph_test.dense(tbl);
	SELECT coalesce(array_agg(orig ORDER BY d), '{}') INTO ids FROM o_map;
	n := coalesce(array_length(ids, 1), 0);
	parent := array(SELECT generate_series(1, n));
	FOR r IN EXECUTE format('SELECT m1.d AS u, m2.d AS v FROM %s e
			JOIN o_map m1 ON m1.orig = e.source JOIN o_map m2 ON m2.orig = e.target', tbl) LOOP
		a := r.u;
		WHILE parent[a] <> a LOOP a := parent[a]; END LOOP;
		b := r.v;
		WHILE parent[b] <> b LOOP b := parent[b]; END LOOP;
		IF a < b THEN parent[b] := a; ELSIF b < a THEN parent[a] := b; END IF;
		parent[r.u] := least(a, b);
		parent[r.v] := least(a, b);
	END LOOP;
	FOR i IN 1 .. n LOOP
		a := i;
		WHILE parent[a] <> a LOOP a := parent[a]; END LOOP;
		parent[i] := a;
		node := ids[i];
		component := ids[a];
		RETURN NEXT;
	END LOOP;
END $$;

-- Kruskal over (cost, id): the ids of the minimum spanning forest.
CREATE FUNCTION graph_test.oracle_msf(tbl text)
RETURNS TABLE(id bigint, cost float8) LANGUAGE plpgsql AS $$
DECLARE
	parent int[];
	n int;
	r record;
	a int;
	b int;
BEGIN
	PERFORM graph_test.dense(tbl);
	SELECT count(*) INTO n FROM o_map;
	parent := array(SELECT generate_series(1, n));
	FOR r IN EXECUTE format('SELECT e.id, e.cost, m1.d AS u, m2.d AS v FROM %s e
			JOIN o_map m1 ON m1.orig = e.source JOIN o_map m2 ON m2.orig = e.target
			ORDER BY e.cost, e.id', tbl) LOOP
		a := r.u;
		WHILE parent[a] <> a LOOP a := parent[a]; END LOOP;
		b := r.v;
		WHILE parent[b] <> b LOOP b := parent[b]; END LOOP;
		IF a <> b THEN
			parent[greatest(a, b)] := least(a, b);
			id := r.id;
			cost := r.cost;
			RETURN NEXT;
		END IF;
		parent[r.u] := least(a, b);
		parent[r.v] := least(a, b);
	END LOOP;
END $$;

-- Components by recursive SQL: every node reaches its component's minimum.
CREATE FUNCTION graph_test.closure_cc(tbl text)
RETURNS TABLE(node bigint, component bigint) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format('
		WITH RECURSIVE und(a, b) AS (
			SELECT source, target FROM %1$s UNION SELECT target, source FROM %1$s),
		reach(node, r) AS (
			SELECT a, a FROM und
			UNION
			SELECT reach.node, und.b FROM reach JOIN und ON und.a = reach.r)
		SELECT node, min(r) FROM reach GROUP BY node', tbl);
END $$;

-- One graph under the current settings ------------------------------------------

-- tbl: the oracles' table or view; edges: what the xxl functions get (default tbl)
CREATE FUNCTION graph_test.check(tbl text, edges text DEFAULT NULL)
RETURNS TABLE(fn text, path text, ok boolean, detail text) LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	c bigint;
	k bigint;
	bad bigint;
	fc bigint;
BEGIN
	edges := coalesce(edges, tbl);
	DROP TABLE IF EXISTS o_cc, x_cc, o_msf, x_msf, x_sf;
	CREATE TEMP TABLE o_cc AS SELECT * FROM graph_test.oracle_cc(tbl);
	SELECT count(*), count(DISTINCT o.component) INTO n, c FROM o_cc o;

	-- components: exactly the oracle's
	CREATE TEMP TABLE x_cc AS SELECT * FROM xxl.connected_components(edges);
	fn := 'connected_components';
	path := (SELECT s.details->>'path' FROM xxl.last_stats() s);
	SELECT count(*) INTO bad FROM ((TABLE x_cc EXCEPT ALL TABLE o_cc)
		UNION ALL (TABLE o_cc EXCEPT ALL TABLE x_cc)) d;
	ok := bad = 0 AND (SELECT count(*) FROM x_cc) = n;
	detail := format('%s nodes, %s components', n, c);
	RETURN NEXT;

	-- minimum spanning forest: the oracle's edges, weight and count
	CREATE TEMP TABLE o_msf AS SELECT * FROM graph_test.oracle_msf(tbl);
	CREATE TEMP TABLE x_msf AS SELECT * FROM xxl.minimum_spanning_forest(edges);
	fn := 'minimum_spanning_forest';
	path := (SELECT s.details->>'path' FROM xxl.last_stats() s);
	EXECUTE format('SELECT count(*) FROM x_msf x LEFT JOIN %s e
		ON e.id = x.id AND e.source = x.source AND e.target = x.target AND e.cost = x.cost
		WHERE e.id IS NULL', tbl) INTO bad;
	SELECT bad + count(*) INTO bad FROM ((SELECT x.id FROM x_msf x EXCEPT SELECT o.id FROM o_msf o)
		UNION ALL (SELECT o.id FROM o_msf o EXCEPT SELECT x.id FROM x_msf x)) d;
	SELECT count(*) INTO k FROM x_msf;
	ok := bad = 0 AND k = n - c
		-- (numeric sums are exact, so the order of summation does not matter)
		AND (SELECT coalesce(sum(x.cost::numeric), 0) FROM x_msf x)
			= (SELECT coalesce(sum(o.cost::numeric), 0) FROM o_msf o)
		-- rows come in ascending (cost, id) order
		AND NOT EXISTS (SELECT 1 FROM (SELECT x.cost, x.id, lag(x.cost) OVER w AS pc, lag(x.id) OVER w AS pid
			FROM (SELECT *, row_number() OVER () AS pos FROM x_msf) x WINDOW w AS (ORDER BY pos)) s
			WHERE (s.pc, s.pid) > (s.cost, s.id));
	detail := format('%s edges, weight %s', k, (SELECT coalesce(sum(x.cost::numeric), 0) FROM x_msf x));
	RETURN NEXT;

	-- spanning forest: input edges, n - c of them, the same components
	CREATE TEMP TABLE x_sf AS SELECT * FROM xxl.spanning_forest(edges);
	fn := 'spanning_forest';
	path := (SELECT s.details->>'path' FROM xxl.last_stats() s);
	EXECUTE format('SELECT count(*) FROM (SELECT source, target FROM x_sf
		EXCEPT ALL SELECT source, target FROM %s) d', tbl) INTO bad;
	SELECT count(*) INTO k FROM x_sf;
	-- components of the forest over all n nodes: c exactly if it spans and has no cycle
	SELECT n - count(DISTINCT f.node) + count(DISTINCT f.component) INTO fc
		FROM graph_test.oracle_cc('x_sf') f;
	ok := bad = 0 AND k = n - c AND fc = c
		AND NOT EXISTS (SELECT 1 FROM x_sf WHERE source = target);
	detail := format('%s edges', k);
	RETURN NEXT;
END $$;

-- Graphs ----------------------------------------------------------------------
-- All have columns (id, source, target, cost) with unique ids.

SELECT setseed(0.25);

-- many small components: 400 edges over 600 possible ids
CREATE TABLE graph_test.sparse AS
SELECT i::bigint AS id, (random() * 600)::bigint AS source, (random() * 600)::bigint AS target,
	round((random() * 20)::numeric)::float8 AS cost
FROM generate_series(1, 400) i;

-- path, star, clique, cycle side by side, plus self loops and duplicates
CREATE TABLE graph_test.shapes (id bigserial, source bigint, target bigint, cost float8);
INSERT INTO graph_test.shapes (source, target, cost)
SELECT i, i + 1, (i * 7919) % 13 FROM generate_series(1000, 1299) i;			-- path
INSERT INTO graph_test.shapes (source, target, cost)
SELECT 5000, 5000 + i, (i * 31) % 5 FROM generate_series(1, 200) i;			-- star
INSERT INTO graph_test.shapes (source, target, cost)
SELECT a, b, (a * b) % 17 FROM generate_series(9000, 9024) a, generate_series(9000, 9024) b
WHERE a < b;																	-- clique
INSERT INTO graph_test.shapes (source, target, cost)
SELECT 20000 + i, 20000 + (i + 1) % 50, 1 FROM generate_series(0, 49) i;		-- cycle, equal costs
INSERT INTO graph_test.shapes (source, target, cost)
SELECT source, target, cost FROM graph_test.shapes WHERE id % 9 = 0;			-- duplicates
INSERT INTO graph_test.shapes (source, target, cost)
SELECT target, source, cost - 1 FROM graph_test.shapes WHERE id % 11 = 0;		-- reversed, lighter
INSERT INTO graph_test.shapes (source, target, cost)
VALUES (1000, 1000, 0), (5000, 5000, -1), (-7, -7, 3), (777777, 777777, 2);	-- self loops, two isolated

-- sparse ids at the ends of bigint
CREATE TABLE graph_test.extremes AS
SELECT i::bigint AS id,
	CASE WHEN i % 2 = 0 THEN 9223372036854775807 - (random() * 40)::bigint * 1000003
		ELSE -9223372036854775808 + (random() * 40)::bigint * 999983 END AS source,
	CASE WHEN i % 3 = 0 THEN 9223372036854775807 - (random() * 40)::bigint * 1000003
		ELSE -9223372036854775808 + (random() * 40)::bigint * 999983 END AS target,
	(random() * 1e6 - 5e5)::float8 AS cost
FROM generate_series(1, 90) i;
INSERT INTO graph_test.extremes VALUES
	(1000, 9223372036854775807, -9223372036854775808, '-Infinity'),
	(1001, 0, 1, 'Infinity'), (1002, -1, 0, -0.0), (1003, 0, 1, 0.0),
	(1004, 1, 9223372036854775807, 1e308);

-- larger random graphs: one near the giant-component threshold, one denser
CREATE TABLE graph_test.random20k AS
SELECT i::bigint AS id, (random() * 20000)::bigint AS source, (random() * 20000)::bigint AS target,
	round((random() * 1000)::numeric)::float8 AS cost
FROM generate_series(1, 12000) i;
CREATE TABLE graph_test.dense5k AS
SELECT i::bigint AS id, (random() * 5000)::bigint AS source, (random() * 5000)::bigint AS target,
	random() AS cost
FROM generate_series(1, 20000) i;

-- no edges at all
CREATE TABLE graph_test.empty (id bigint, source bigint, target bigint, cost float8);

-- The two oracles agree on the small graphs.
SELECT g, (SELECT count(*) FROM ((SELECT * FROM graph_test.oracle_cc(g) EXCEPT SELECT * FROM graph_test.closure_cc(g))
	UNION ALL (SELECT * FROM graph_test.closure_cc(g) EXCEPT SELECT * FROM graph_test.oracle_cc(g))) d) AS differences
FROM unnest(ARRAY['graph_test.sparse', 'graph_test.shapes', 'graph_test.extremes', 'graph_test.empty']) g;

-- Roomy budget: the in-memory path -------------------------------------------------

SET xxl.memory = '64MB';
SELECT g, c.* FROM unnest(ARRAY['graph_test.sparse', 'graph_test.shapes', 'graph_test.extremes',
	'graph_test.random20k', 'graph_test.dense5k', 'graph_test.empty']) g, graph_test.check(g) c;

-- Tiny budget, at most 8 nodes semi-externally: the external path -----------------

SET xxl.memory = '1MB';
SET xxl.graph_max_semi_nodes = 8;
SELECT g, c.* FROM unnest(ARRAY['graph_test.sparse', 'graph_test.shapes', 'graph_test.extremes',
	'graph_test.random20k', 'graph_test.dense5k', 'graph_test.empty']) g, graph_test.check(g) c;

-- The same through the query form of the edges argument, and through a view.
CREATE VIEW graph_test.shapes_view AS
SELECT cost, target, id, source FROM graph_test.shapes WHERE id % 3 <> 0;
SELECT c.* FROM graph_test.check('graph_test.shapes_view',
	'SELECT cost, target, id, source FROM graph_test.shapes WHERE id % 3 <> 0') c;
SELECT c.* FROM graph_test.check('graph_test.shapes_view') c;

-- The forests' ids in memory, their edges spooled: 1MB, no cap --------------------
-- Small non-negative ids are their own union-find index; the same graph with its
-- ids spread wide is numbered by the id map.

RESET xxl.graph_max_semi_nodes;
SELECT g, c.* FROM unnest(ARRAY['graph_test.random20k', 'graph_test.dense5k']) g,
	graph_test.check(g) c WHERE c.fn <> 'connected_components';
SELECT details->>'path' AS path, details->>'ids' AS ids FROM xxl.last_stats();
CREATE TABLE graph_test.spread5k AS
SELECT id, source * 1000003 AS source, target * 1000003 AS target, cost FROM graph_test.dense5k;
SELECT c.* FROM graph_test.check('graph_test.spread5k') c WHERE c.fn <> 'connected_components';
SELECT details->>'path' AS path, details->>'ids' AS ids FROM xxl.last_stats();

-- External by the budget alone: 120000 edges over 150000 spread ids at 1MB --------
-- (more nodes than the forests' 4-byte union-find holds in half of 1MB)

RESET xxl.graph_max_semi_nodes;
CREATE TABLE graph_test.random150k AS
SELECT i::bigint AS id, (random() * 150000)::bigint * 1000003 AS source,
	(random() * 150000)::bigint * 1000003 AS target,
	round((random() * 100)::numeric)::float8 AS cost
FROM generate_series(1, 120000) i;
SELECT c.* FROM graph_test.check('graph_test.random150k') c;
-- (the last operator of the check may be a sort of its oracle's)
SELECT count(*) AS forest_edges FROM xxl.spanning_forest('graph_test.random150k');
SELECT (details->>'semi_nodes_max')::bigint < (details->>'nodes')::bigint AS budget_forced_external,
	(details->>'contracted_nodes')::bigint > 0 AS contracted,
	(details->>'base_nodes')::bigint <= (details->>'semi_nodes_max')::bigint AS base_fits,
	memory_peak <= memory_limit AS within_budget
FROM xxl.last_stats();

RESET xxl.memory;
DROP SCHEMA graph_test CASCADE;
\i test/include/end.sql

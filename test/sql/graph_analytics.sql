-- graph_analytics.sql — xxl.triangles, triangle_count, node_triangles,
-- maximal_independent_set, coloring and pagerank against oracles written
-- here: SQL self-joins for triangles and per-node counts, validity checks
-- for the independent set (no edge inside, every other node has a
-- neighbour inside) and the coloring (no edge with equal colors, colors
-- from 1, at most max degree + 1), a PL/pgSQL power iteration for
-- PageRank, hand-computed small cases (clique, star, cycle, bipartite,
-- dangling nodes), and pgr_sequentialVertexColoring's color count.
-- Every graph runs at a roomy budget (nothing spilled: path in-memory), at
-- xxl.memory = 1MB (semi-external: these ids fit) and on the external path
-- (xxl.graph_force_external), and the answers must agree.
\i test/include/begin.sql
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
RESET client_min_messages;
SET client_min_messages = warning;
\i test/include/helpers.sql
CREATE SCHEMA an_test;
SET search_path = an_test, public;

-- Oracles --------------------------------------------------------------------

-- The distinct undirected edges of tbl (no self loops) as a < b.
CREATE FUNCTION und(tbl text) RETURNS TABLE(a bigint, b bigint) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format('SELECT DISTINCT least(source, target)::bigint, greatest(source, target)::bigint
		FROM %s WHERE source <> target', tbl);
END $$;

-- Triangles by self-join of the distinct edges.
CREATE FUNCTION tri_sql(tbl text) RETURNS TABLE(a bigint, b bigint, c bigint) LANGUAGE sql AS $$
	WITH e AS (SELECT * FROM und(tbl))
	SELECT e1.a, e1.b, e2.b FROM e e1 JOIN e e2 ON e2.a = e1.b JOIN e e3 ON e3.a = e1.a AND e3.b = e2.b
$$;

-- Every node with its triangles, degree and clustering coefficient.
CREATE FUNCTION node_tri_sql(tbl text) RETURNS TABLE(node bigint, triangles bigint, degree bigint,
													  clustering float8) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format($q$
		WITH nodes AS (SELECT source AS n FROM %1$s UNION SELECT target FROM %1$s),
		e AS (SELECT * FROM an_test.und(%2$L)),
		deg AS (SELECT n, count(*) AS d FROM (SELECT a AS n FROM e UNION ALL SELECT b FROM e) x GROUP BY n),
		t AS (SELECT * FROM an_test.tri_sql(%2$L)),
		tc AS (SELECT n, count(*) AS c FROM (SELECT a AS n FROM t UNION ALL SELECT b FROM t UNION ALL SELECT c FROM t) x GROUP BY n)
		SELECT nodes.n::bigint, coalesce(tc.c, 0), coalesce(deg.d, 0),
			CASE WHEN coalesce(deg.d, 0) < 2 THEN 0 ELSE 2.0 * coalesce(tc.c, 0) / (deg.d * (deg.d - 1)) END::float8
		FROM nodes LEFT JOIN deg USING (n) LEFT JOIN tc USING (n)$q$, tbl, tbl);
END $$;

-- 'ok' when set is an independent set of tbl, maximal over its nodes.
CREATE FUNCTION mis_check(tbl text, set text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE inside bigint; uncovered bigint; dup bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM an_test.und(%L) e JOIN %s x ON x.node = e.a JOIN %s y ON y.node = e.b',
				   tbl, set, set) INTO inside;
	EXECUTE format('SELECT count(*) FROM (SELECT source AS n FROM %1$s UNION SELECT target FROM %1$s) v
		WHERE NOT EXISTS (SELECT FROM %2$s s WHERE s.node = v.n)
		  AND NOT EXISTS (SELECT FROM an_test.und(%3$L) e JOIN %2$s s ON s.node IN (e.a, e.b)
						  WHERE v.n IN (e.a, e.b))', tbl, set, tbl) INTO uncovered;
	EXECUTE format('SELECT count(*) - count(DISTINCT node) FROM %s', set) INTO dup;
	RETURN format('edges inside %s, nodes uncovered %s, repeated %s', inside, uncovered, dup);
END $$;

-- 'ok' when col is a proper coloring of every node of tbl.
CREATE FUNCTION color_check(tbl text, col text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE clash bigint; missing bigint; extra bigint; bad bigint; over bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM an_test.und(%L) e JOIN %s x ON x.node = e.a JOIN %s y ON y.node = e.b
		WHERE x.color = y.color', tbl, col, col) INTO clash;
	EXECUTE format('SELECT count(*) FROM (SELECT source AS n FROM %1$s UNION SELECT target FROM %1$s) v
		WHERE NOT EXISTS (SELECT FROM %2$s c WHERE c.node = v.n)', tbl, col) INTO missing;
	EXECUTE format('SELECT count(*) - count(DISTINCT node) FROM %s', col) INTO extra;
	EXECUTE format('SELECT count(*) FROM %s WHERE color < 1', col) INTO bad;
	EXECUTE format('SELECT count(*) FROM (SELECT max(color) AS k FROM %s) c,
		(SELECT coalesce(max(d), 0) AS dmax FROM (SELECT n, count(*) AS d FROM
			(SELECT a AS n FROM an_test.und(%L) UNION ALL SELECT b FROM an_test.und(%L)) x GROUP BY n) y) m
		WHERE c.k > m.dmax + 1', col, tbl, tbl) INTO over;
	RETURN format('clashes %s, uncolored %s, repeated %s, below 1 %s, over max degree + 1 %s',
				  clash, missing, extra, bad, over);
END $$;

-- PageRank by power iteration, networkx's definition (weights summed,
-- dangling rank spread evenly), for exactly `iters` iterations.
CREATE FUNCTION pr_sql(tbl text, d float8, iters int, weighted bool)
RETURNS TABLE(node bigint, rank float8) LANGUAGE plpgsql AS $$
DECLARE cnt bigint; dang float8;
BEGIN
	DROP TABLE IF EXISTS pr_l, pr_r, pr_w;
	EXECUTE format('CREATE TEMP TABLE pr_l AS SELECT source::bigint AS u, target::bigint AS v, %s::float8 AS w FROM %s',
				   CASE WHEN weighted THEN 'weight' ELSE '1' END, tbl);
	CREATE TEMP TABLE pr_w AS
		SELECT x.n, coalesce((SELECT sum(w) FROM pr_l WHERE u = x.n), 0) AS ow
		FROM (SELECT u AS n FROM pr_l UNION SELECT v FROM pr_l) x;
	SELECT count(*) INTO cnt FROM pr_w;
	CREATE TEMP TABLE pr_r AS SELECT pr_w.n, 1.0::float8 / cnt AS r FROM pr_w;
	FOR i IN 1..iters LOOP
		SELECT coalesce(sum(r), 0) INTO dang FROM pr_r JOIN pr_w USING (n) WHERE ow = 0;
		CREATE TEMP TABLE pr_next AS
			SELECT x.n, (1 - d) / cnt + d * (dang / cnt + coalesce(s.c, 0)) AS r
			FROM pr_w x LEFT JOIN (SELECT l.v, sum(r.r * l.w / w.ow) AS c
								   FROM pr_l l JOIN pr_r r ON r.n = l.u JOIN pr_w w ON w.n = l.u
								   GROUP BY l.v) s ON s.v = x.n;
		DROP TABLE pr_r;
		ALTER TABLE pr_next RENAME TO pr_r;
	END LOOP;
	RETURN QUERY SELECT pr_r.n, pr_r.r FROM pr_r;
END $$;

-- Every function on tbl at the current budget, into tables <prefix>_*.
CREATE FUNCTION run_all(tbl text, prefix text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE paths text := '';
BEGIN
	EXECUTE format('DROP TABLE IF EXISTS %1$s_tri, %1$s_cnt, %1$s_nt, %1$s_mis, %1$s_col', prefix);
	EXECUTE format('CREATE TEMP TABLE %s_tri AS SELECT * FROM xxl.triangles(%L)', prefix, tbl);
	paths := paths || (SELECT details->>'path' FROM xxl.last_stats());
	EXECUTE format('CREATE TEMP TABLE %s_cnt AS SELECT xxl.triangle_count(%L) AS n', prefix, tbl);
	paths := paths || ' ' || (SELECT details->>'path' FROM xxl.last_stats());
	EXECUTE format('CREATE TEMP TABLE %s_nt AS SELECT * FROM xxl.node_triangles(%L)', prefix, tbl);
	paths := paths || ' ' || (SELECT details->>'path' FROM xxl.last_stats());
	EXECUTE format('CREATE TEMP TABLE %s_mis AS SELECT * FROM xxl.maximal_independent_set(%L)', prefix, tbl);
	paths := paths || ' ' || (SELECT details->>'path' FROM xxl.last_stats());
	EXECUTE format('CREATE TEMP TABLE %s_col AS SELECT * FROM xxl.coloring(%L)', prefix, tbl);
	paths := paths || ' ' || (SELECT details->>'path' FROM xxl.last_stats());
	RETURN paths;
END $$;

-- Every check of tbl's results <prefix>_* against the oracles.
CREATE FUNCTION check_all(tbl text, prefix text) RETURNS TABLE(check_name text, result text)
LANGUAGE plpgsql AS $$
BEGIN
	check_name := 'triangles differ'; result := xt_differ(prefix || '_tri', format('SELECT * FROM an_test.tri_sql(%L)', tbl)); RETURN NEXT;
	check_name := 'count'; EXECUTE format('SELECT (SELECT n FROM %s_cnt) = (SELECT count(*) FROM an_test.tri_sql(%L))', prefix, tbl) INTO result; RETURN NEXT;
	check_name := 'node triangles differ';
	EXECUTE format('SELECT count(*) FROM %s_nt x FULL JOIN an_test.node_tri_sql(%L) y USING (node)
		WHERE x.triangles IS DISTINCT FROM y.triangles OR x.degree IS DISTINCT FROM y.degree
		   OR abs(x.clustering - y.clustering) > 1e-12 OR x.node IS NULL OR y.node IS NULL', prefix, tbl) INTO result;
	RETURN NEXT;
	check_name := 'mis'; result := an_test.mis_check(tbl, prefix || '_mis'); RETURN NEXT;
	check_name := 'coloring'; result := an_test.color_check(tbl, prefix || '_col'); RETURN NEXT;
END $$;

-- tbl on the external path (xxl.graph_force_external, for this call only)
-- into <prefix>_*: its paths, every check against the oracles, and the
-- rows that differ from <ref>_*'s (node triangles, MIS, coloring).
CREATE FUNCTION check_forced(tbl text, prefix text, ref text) RETURNS TABLE(check_name text, result text)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('xxl.graph_force_external', 'on', true);
	check_name := 'paths'; result := run_all(tbl, prefix); RETURN NEXT;
	PERFORM set_config('xxl.graph_force_external', 'off', true);
	RETURN QUERY SELECT * FROM check_all(tbl, prefix);
	check_name := 'differ from ' || ref;
	result := concat_ws(' ', xt_differ(ref || '_nt', prefix || '_nt'), xt_differ(ref || '_mis', prefix || '_mis'),
						xt_differ(ref || '_col', prefix || '_col'));
	RETURN NEXT;
END $$;

-- Hand-computed cases ------------------------------------------------------------

-- a 5-clique, a star, a 5-cycle, K(3,3) with ids 1..3 | 4..6 (greedy gives 2 colors)
CREATE TABLE clique AS SELECT a AS source, b AS target FROM generate_series(1, 5) a, generate_series(1, 5) b WHERE a < b;
CREATE TABLE star AS SELECT 1 AS source, b AS target FROM generate_series(2, 6) b;
CREATE TABLE cycle AS SELECT a AS source, a % 5 + 1 AS target FROM generate_series(1, 5) a;
CREATE TABLE bip AS SELECT a AS source, b AS target FROM generate_series(1, 3) a, generate_series(4, 6) b;

SELECT xxl.triangle_count('clique') AS clique_triangles, xxl.triangle_count('star') AS star,
	   xxl.triangle_count('cycle') AS cycle, xxl.triangle_count('bip') AS bipartite;
SELECT * FROM xxl.node_triangles('clique') ORDER BY node;
SELECT * FROM xxl.node_triangles('star') ORDER BY node;
SELECT array_agg(node ORDER BY node) AS clique_mis FROM xxl.maximal_independent_set('clique');
SELECT array_agg(node ORDER BY node) AS star_mis FROM xxl.maximal_independent_set('star');
SELECT array_agg(node ORDER BY node) AS cycle_mis FROM xxl.maximal_independent_set('cycle');
SELECT array_agg(node ORDER BY node) AS bip_mis FROM xxl.maximal_independent_set('bip');
SELECT array_agg(color ORDER BY node) AS clique_colors FROM xxl.coloring('clique');
SELECT array_agg(color ORDER BY node) AS cycle_colors FROM xxl.coloring('cycle');
SELECT array_agg(color ORDER BY node) AS bip_colors FROM xxl.coloring('bip');
SELECT details->>'colors' AS colors_in_stats FROM xxl.last_stats();
-- PageRank: the directed 5-cycle and the clique's links are uniform; 1 -> 2
-- alone is 0.35088 / 0.64912 (networkx: dangling 2 spreads its rank)
SELECT node, round(rank::numeric, 10) FROM xxl.pagerank('cycle') ORDER BY node;
SELECT node, round(rank::numeric, 10) FROM xxl.pagerank('SELECT source, target FROM clique UNION ALL SELECT target, source FROM clique') ORDER BY node;
SELECT node, round(rank::numeric, 5) FROM xxl.pagerank('SELECT 1 AS source, 2 AS target') ORDER BY node;
SELECT details->>'dangling' AS dangling, details->>'converged' AS converged FROM xxl.last_stats();
-- a star pointing outwards: every leaf dangles; damping 0 is uniform; no iteration is the start
SELECT node, round(rank::numeric, 6) FROM xxl.pagerank('star') ORDER BY node;
SELECT DISTINCT round(rank::numeric, 12) FROM xxl.pagerank('star', damping => 0);
SELECT DISTINCT round(rank::numeric, 12) FROM xxl.pagerank('star', max_iterations => 0);
SELECT details->>'iterations' AS iterations FROM xxl.last_stats();
SELECT count(*) FROM xxl.pagerank('star', max_iterations => 3, tolerance => 0);
SELECT details->>'iterations' AS iterations, details->>'converged' AS converged FROM xxl.last_stats();

-- No edges, self loops only, isolated edges, duplicates both ways
CREATE TABLE none_e (source bigint, target bigint);
SELECT xxl.triangle_count('none_e') AS none, (SELECT count(*) FROM xxl.coloring('none_e')) AS colored,
	   (SELECT count(*) FROM xxl.pagerank('none_e')) AS ranked;
CREATE TABLE loops AS SELECT * FROM (VALUES (7, 7), (7, 7), (9, 9), (1, 2), (2, 1), (1, 2), (3, 4)) v(source, target);
SELECT * FROM xxl.node_triangles('loops') ORDER BY node;
SELECT details->>'self_loops' AS self_loops, details->>'duplicates' AS duplicates, details->>'links' AS links
FROM xxl.last_stats();
SELECT array_agg(node ORDER BY node) AS loops_mis FROM xxl.maximal_independent_set('loops');
SELECT array_agg(node || ':' || color ORDER BY node) AS loops_colors FROM xxl.coloring('loops');
SELECT node, round(rank::numeric, 6) FROM xxl.pagerank('loops') ORDER BY node;
SELECT xt_differ('SELECT node, round(rank::numeric, 9) FROM xxl.pagerank(''loops'')',
				 'SELECT node, round(rank::numeric, 9) FROM an_test.pr_sql(''loops'', 0.85, 100, false)') AS loops_pr_differ;

-- Random graphs with everything at once --------------------------------------------
-- 600 nodes, 4000 edges with self loops, duplicates and reversed duplicates,
-- ids spread over the whole bigint range (both ends included), a 40-clique
-- among them, and a weight column for PageRank.
SELECT setseed(0.19);
CREATE TABLE rnd AS
SELECT CASE WHEN s = 0 THEN -9223372036854775808 WHEN s = 1 THEN 9223372036854775807
			ELSE (s - 300) * 30000000000000000 + s END AS source,
	   CASE WHEN t = 0 THEN -9223372036854775808 WHEN t = 1 THEN 9223372036854775807
			ELSE (t - 300) * 30000000000000000 + t END AS target,
	   (1 + floor(random() * 5))::int AS weight
FROM (SELECT floor(random() * 600)::bigint AS s, floor(random() * 600)::bigint AS t FROM generate_series(1, 4000)) r
UNION ALL SELECT 7000 + a, 7000 + b, 1 FROM generate_series(1, 40) a, generate_series(1, 40) b WHERE a <> b
UNION ALL SELECT 5, 5, 2 FROM generate_series(1, 3);
SELECT count(*) AS edges, count(*) FILTER (WHERE source = target) AS loops FROM rnd;

SET xxl.memory = '64MB';
SELECT run_all('rnd', 'roomy') AS roomy_paths;
SELECT * FROM check_all('rnd', 'roomy');
SELECT n AS triangles FROM roomy_cnt;
SET xxl.memory = '1MB';
SELECT run_all('rnd', 'tiny') AS tiny_paths;
SELECT * FROM check_all('rnd', 'tiny');
-- both paths give the same answers (greedy in id order is deterministic)
SELECT xt_differ('roomy_mis', 'tiny_mis') AS mis_differ, xt_differ('roomy_col', 'tiny_col') AS col_differ,
	   xt_differ('roomy_nt', 'tiny_nt') AS nt_differ;
SELECT memory_peak <= memory_limit AS within_budget, (SELECT sum(b) FROM unnest(bytes_written) b) > 0 AS spilled
FROM xxl.last_stats();
SELECT * FROM check_forced('rnd', 'ext', 'roomy');

-- PageRank: in memory, semi-external by budget, external by force; against the
-- PL/pgSQL iteration (20 iterations, unweighted and weighted)
CREATE TABLE pr_oracle AS SELECT * FROM pr_sql('rnd', 0.85, 20, false);
CREATE TABLE prw_oracle AS SELECT * FROM pr_sql('rnd', 0.85, 20, true);
SET xxl.memory = '64MB';
SELECT count(*) AS off FROM xxl.pagerank('SELECT source, target FROM rnd', 0.85, 20, 0) p JOIN pr_oracle o USING (node)
WHERE abs(p.rank - o.rank) > 1e-12;
SELECT details->>'path' AS path, details->>'method' AS method, details->>'iterations' AS iterations
FROM xxl.last_stats();
SELECT count(*) AS off FROM xxl.pagerank('rnd', 0.85, 20, 0) p JOIN prw_oracle o USING (node)
WHERE abs(p.rank - o.rank) > 1e-12;
SET xxl.memory = '1MB';
SELECT count(*) AS off FROM xxl.pagerank('rnd', 0.85, 20, 0) p JOIN prw_oracle o USING (node)
WHERE abs(p.rank - o.rank) > 1e-12;
SELECT details->>'path' AS path FROM xxl.last_stats();
-- a query starts in memory and moves its links to a spool midway, weights and all
SELECT count(*) AS off FROM xxl.pagerank('SELECT * FROM rnd', 0.85, 20, 0) p JOIN prw_oracle o USING (node)
WHERE abs(p.rank - o.rank) > 1e-12;
SELECT details->>'path' AS path, details->>'method' AS method FROM xxl.last_stats();
SET xxl.memory = '64MB';
SET xxl.graph_force_external = on;
SELECT count(*) AS off FROM xxl.pagerank('SELECT source, target FROM rnd', 0.85, 20, 0) p JOIN pr_oracle o USING (node)
WHERE abs(p.rank - o.rank) > 1e-12;
SELECT details->>'method' AS method, details->>'ranges' AS ranges FROM xxl.last_stats();
RESET xxl.graph_force_external;
-- converged: ranks sum to 1, the change below the tolerance
SELECT round(sum(rank)::numeric, 12) AS total, count(*) AS nodes FROM xxl.pagerank('rnd');
SELECT details->>'converged' AS converged, (details->>'delta')::float8 < 1e-9 AS below_tolerance FROM xxl.last_stats();

-- A larger clique at the tiny budget: C(60, 3) triangles, 60 colors, a 1-node set
SET xxl.memory = '1MB';
CREATE TABLE k60 AS SELECT a AS source, b AS target FROM generate_series(1, 60) a, generate_series(1, 60) b WHERE a <> b;
SELECT xxl.triangle_count('k60') AS k60_triangles, (SELECT max(color) FROM xxl.coloring('k60')) AS k60_colors,
	   (SELECT count(*) FROM xxl.maximal_independent_set('k60')) AS k60_mis;
SELECT DISTINCT triangles, degree, clustering FROM xxl.node_triangles('k60');

-- A graph out of memory by size alone: 30000 edges over 5000 nodes at 1MB
-- (semi-external), and on the external path
SELECT setseed(0.5);
CREATE TABLE mid AS SELECT floor(random() * 5000)::int AS source, floor(random() * 5000)::int AS target
FROM generate_series(1, 30000);
SELECT run_all('mid', 'mid') AS mid_paths;
SELECT * FROM check_all('mid', 'mid');
SELECT * FROM check_forced('mid', 'midx', 'mid');
-- a query has no row estimate: the operator starts in memory and moves
-- its edges to a spool when the budget runs out
SELECT xt_differ('SELECT * FROM xxl.coloring(''SELECT source, target FROM mid'')', 'mid_col') AS col_differ,
	   xt_differ('SELECT * FROM xxl.maximal_independent_set(''SELECT source, target FROM mid'')', 'mid_mis') AS mis_differ,
	   xt_differ('SELECT * FROM xxl.node_triangles(''SELECT source, target FROM mid'')', 'mid_nt') AS nt_differ;
SELECT details->>'path' AS path FROM xxl.last_stats();
RESET xxl.memory;

-- Out-lists that do not fit beside their ids at 1MB (200000 edges over 4000
-- nodes): built and counted in ranges, with the roomy run's answers
SELECT setseed(0.75);
CREATE TABLE dense AS SELECT floor(random() * 4000)::int AS source, floor(random() * 4000)::int AS target
FROM generate_series(1, 200000);
ANALYZE dense;
SET xxl.memory = '64MB';
CREATE TABLE dense_tri AS SELECT * FROM xxl.triangles('dense');
CREATE TABLE dense_nt AS SELECT * FROM xxl.node_triangles('dense');
SELECT details->>'path' AS path, details->'ranges' AS ranges FROM xxl.last_stats();
SET xxl.memory = '1MB';
SELECT xxl.triangle_count('dense') = (SELECT count(*) FROM dense_tri) AS count_agrees;
SELECT details->>'path' AS path, (details->>'ranges')::int > 1 AS ranged,
	   memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
SELECT xt_differ('SELECT * FROM xxl.triangles(''dense'')', 'dense_tri') AS tri_differ;
SELECT details->>'path' AS path, (details->>'ranges')::int > 1 AS ranged,
	   memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
SELECT xt_differ('SELECT * FROM xxl.node_triangles(''dense'')', 'dense_nt') AS nt_differ;
SELECT details->>'path' AS path, (details->>'ranges')::int > 1 AS ranged,
	   memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
-- ... and external at 1MB: by chunks of out-lists, no queries
-- (analytics_tri_chunked.c)
SET xxl.graph_force_external = on;
SELECT xxl.triangle_count('dense') = (SELECT count(*) FROM dense_tri) AS count_agrees;
SELECT details->>'path' AS path, (details->>'ranges')::int > 1 AS chunks, details->>'queries' AS queries,
	   memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
SELECT xt_differ('SELECT * FROM xxl.triangles(''dense'')', 'dense_tri') AS tri_differ;
SELECT details->>'path' AS path, (details->>'ranges')::int > 1 AS chunks, details->>'queries' AS queries,
	   memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
SELECT xt_differ('SELECT * FROM xxl.node_triangles(''dense'')', 'dense_nt') AS nt_differ;
SELECT details->>'path' AS path, (details->>'ranges')::int > 1 AS chunks, details->>'queries' AS queries,
	   memory_peak <= memory_limit AS within_budget FROM xxl.last_stats();
RESET xxl.graph_force_external;
RESET xxl.memory;

-- Coloring against pgRouting's sequential coloring: within 1.5x its colors
SELECT (SELECT max(color) FROM xxl.coloring('mid')) <= 1.5 * (SELECT max(color_id) FROM pgr_sequentialVertexColoring(
	'SELECT row_number() OVER () AS id, source, target, 1 AS cost FROM mid WHERE source <> target')) AS within_1_5;

-- The _into forms -----------------------------------------------------------------
SELECT xxl.triangles_into('rnd', 'an_tri_t'), xxl.node_triangles_into('rnd', 'an_nt_t'),
	   xxl.maximal_independent_set_into('rnd', 'an_mis_t'), xxl.coloring_into('rnd', 'an_col_t'),
	   xxl.pagerank_into('rnd', 'an_pr_t', max_iterations => 20, tolerance => 0);
SELECT xt_differ('an_tri_t', 'roomy_tri') AS tri, xt_differ('an_nt_t', 'roomy_nt') AS nt,
	   xt_differ('an_mis_t', 'roomy_mis') AS mis, xt_differ('an_col_t', 'roomy_col') AS col,
	   (SELECT count(*) FROM an_pr_t p JOIN prw_oracle o USING (node) WHERE abs(p.rank - o.rank) > 1e-12) AS pr_off;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'an_nt_t'::regclass AND attnum > 0 ORDER BY attnum;

-- Errors ---------------------------------------------------------------------------
SELECT xt_try($$SELECT xxl.triangle_count(NULL)$$);
SELECT xt_try($$SELECT * FROM xxl.coloring('SELECT source AS a, target FROM rnd')$$);
SELECT xt_try($$SELECT * FROM xxl.maximal_independent_set('SELECT source, NULL::bigint AS target FROM rnd')$$);
SELECT xt_try($$SELECT * FROM xxl.triangles('SELECT source, target::text AS target FROM rnd')$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('rnd', damping => 1.5)$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('rnd', max_iterations => -1)$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('rnd', tolerance => 'NaN')$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('rnd', damping => NULL)$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('SELECT source, target, -1 AS weight FROM rnd')$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('SELECT source, target, ''NaN''::float8 AS weight FROM rnd')$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('SELECT source, target, ''Infinity''::float8 AS weight FROM rnd')$$);
SELECT xt_try($$SELECT * FROM xxl.pagerank('SELECT source, target, NULL::float8 AS weight FROM rnd')$$);
-- the row number of a bad weight past the first batch of rows read (256),
-- from a query and from an xxl table's pages
SELECT xt_try($$SELECT * FROM xxl.pagerank('SELECT i AS source, i + 1 AS target, CASE WHEN i = 300 THEN -2 ELSE 1 END::float8 AS weight FROM generate_series(1, 1000) i')$$);
CREATE TABLE an_bad_w (source bigint, target bigint, weight float8) USING xxl;
INSERT INTO an_bad_w SELECT i, i + 1, CASE WHEN i = 700 THEN -3 ELSE 1 END FROM generate_series(1, 1000) i;
SELECT xt_try($$SELECT * FROM xxl.pagerank('an_bad_w')$$);
DROP TABLE an_bad_w;
SELECT xt_try($$SELECT xxl.coloring_into('rnd', 'an_col_t')$$);
-- an error in the middle of the external passes leaves nothing behind
SET xxl.memory = '1MB';
SELECT xt_try($$SELECT xxl.coloring_into('SELECT source, CASE WHEN source = 5 THEN NULL ELSE target END AS target FROM rnd', 'an_bad_t')$$);
RESET xxl.memory;
SELECT xt_leftovers('an_bad') AS after_errors;

RESET search_path;
DROP SCHEMA an_test CASCADE;
DROP FUNCTION xt_try(text), xt_differ(text, text), xt_leftovers(text);
\i test/include/end.sql

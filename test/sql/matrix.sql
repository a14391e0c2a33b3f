-- matrix.sql — xxl.matmul and xxl.matmul_into against plain SQL (a join on
-- the inner index and GROUP BY (i, j) with sum(a.v * b.v)): random sparse
-- and dense-ish matrices, rectangular shapes, Aᵀ·A, integer values (exact
-- sums) and floating-point and numeric ones (relative tolerance), negative
-- indices and the ends of bigint, duplicate entries, empty inputs and a
-- result that cancels to zero; at a roomy budget and at xxl.memory = 1MB,
-- where the partial products spill and merge in several passes; bad input
-- gives a fitting SQLSTATE and leaves nothing behind.
\i test/include/begin.sql
\i test/include/helpers.sql
CREATE SCHEMA mm_test;
SET search_path = mm_test, public;

-- The oracle: entries of a·b (aᵀ·b) that are not 0, as (i, j, v); a and b
-- are table names or queries.
CREATE FUNCTION sql_product(a text, b text, transpose_a boolean DEFAULT false)
RETURNS TABLE(i bigint, j bigint, v numeric) LANGUAGE plpgsql AS $$
BEGIN
	IF a ~ '\s' THEN a := '(' || a || ')'; END IF;
	IF b ~ '\s' THEN b := '(' || b || ')'; END IF;
	RETURN QUERY EXECUTE format(
		'SELECT x.%1$s::bigint, y.j::bigint, sum(x.v * y.v)::numeric
		 FROM %3$s x JOIN %4$s y ON x.%2$s = y.i
		 GROUP BY 1, 2 HAVING sum(x.v * y.v) <> 0',
		CASE WHEN transpose_a THEN 'j' ELSE 'i' END, CASE WHEN transpose_a THEN 'i' ELSE 'j' END,
		a, b);
END $$;

-- How many entries of xxl.matmul's result and the oracle's differ (by more
-- than a relative 1e-9, or 1e-9 for sums below 1, where values are not
-- integers), and how many rows (but rounding residues).
-- Floating-point sums that cancel may leave a rounding residue where the
-- exact sum is 0: such an entry may be on one side only if it is below
-- 1e-9.
CREATE FUNCTION compare(a text, b text, transpose_a boolean DEFAULT false)
RETURNS TABLE(rows bigint, differ bigint) LANGUAGE sql AS $$
	WITH x AS (SELECT * FROM xxl.matmul(a, b, transpose_a)),
	     o AS (SELECT * FROM sql_product(a, b, transpose_a))
	SELECT (SELECT count(*) FROM x WHERE abs(v) > 1e-9),
	       (SELECT count(*) FROM x FULL JOIN o USING (i, j)
	        WHERE (x.v IS NULL AND abs(o.v) > 1e-9) OR (o.v IS NULL AND abs(x.v) > 1e-9)
	           OR abs(x.v::numeric - o.v) > 1e-9 * greatest(abs(o.v), 1))
$$;

SELECT setseed(0.5);
-- 300 x 400 times 400 x 250, integer values in [-5, 5] (zeros among them),
-- duplicate (i, j) entries
CREATE TABLE a AS SELECT (random() * 299)::int AS i, (random() * 399)::int AS j,
	(random() * 10 - 5)::int AS v FROM generate_series(1, 4000);
CREATE TABLE b AS SELECT (random() * 399)::bigint AS i, (random() * 249)::bigint AS j,
	(random() * 10 - 5)::bigint AS v FROM generate_series(1, 4000);
-- floating-point and numeric values on the same pattern
CREATE TABLE af AS SELECT i, j, v * 0.37::float8 + 0.01 AS v FROM a;
CREATE TABLE bn AS SELECT i, j, (v * 1.3 - 0.2)::numeric(10, 2) AS v FROM b;
-- a denser, square one near both ends of bigint, for Aᵀ·A
CREATE TABLE d AS SELECT -9223372036854775808 + (random() * 60)::bigint AS i,
	9223372036854775807 - (random() * 80)::bigint AS j, (random() * 8 - 4)::smallint AS v
FROM generate_series(1, 3000);

-- Roomy ---------------------------------------------------------------------

SET xxl.memory = '64MB';
SELECT * FROM compare('a', 'b');
SELECT details->'path' AS path, details->'spilled' AS spilled, details->'entries_a' AS entries_a,
	details->'zero_entries' = to_jsonb((SELECT count(*) FROM a WHERE v = 0) + (SELECT count(*) FROM b WHERE v = 0)) AS zeros_counted,
	(details->>'partial_products')::bigint =
		(SELECT count(*) FROM a JOIN b ON a.j = b.i WHERE a.v <> 0 AND b.v <> 0) AS products_counted,
	rows_out = (SELECT count(*) FROM sql_product('a', 'b')) AS rows_counted
FROM xxl.last_stats();
SELECT * FROM compare('af', 'bn');
SELECT * FROM compare('a', 'bn');
SELECT * FROM compare('d', 'd', true);
SELECT * FROM compare('SELECT j AS i, i AS j, v FROM d', 'd');
-- dense matrices (three quarters of their cells) take the tiles; forced
-- either way, the answers are the same
CREATE TABLE da AS SELECT (random() * 199)::int AS i, (random() * 149)::int AS j,
	(random() * 10 - 5)::int AS v FROM generate_series(1, 30000);
CREATE TABLE db AS SELECT (random() * 149)::int AS i, (random() * 179)::int AS j,
	(random() * 10 - 5)::int AS v FROM generate_series(1, 27000);
CREATE TABLE dbf AS SELECT i, j, v / 3.0::float8 AS v FROM db;
SELECT * FROM compare('da', 'db');
SELECT details->'path' AS path, details->'tile' AS tile FROM xxl.last_stats();
SELECT * FROM compare('da', 'dbf');
SET xxl.matmul_method = 'sparse';
SELECT * FROM compare('da', 'dbf');
SELECT details->'path' AS path FROM xxl.last_stats();
SET xxl.matmul_method = 'dense';
SELECT * FROM compare('a', 'b');
SELECT * FROM compare('SELECT j AS i, i AS j, v FROM d', 'd');
SELECT details->'path' AS path FROM xxl.last_stats();
RESET xxl.matmul_method;
-- rows come in (i, j) order (but on the dense path)
SELECT bool_and(ok) AS ordered FROM (
	SELECT (i, j) > lag((i, j)) OVER () OR lag(i) OVER () IS NULL AS ok FROM xxl.matmul('a', 'b')) s;

-- Small cases -----------------------------------------------------------------

-- exact integer sums: 2^62 * 2 - 2^62 * 2 + 3 = 3 (double precision keeps 3)
SELECT * FROM xxl.matmul('SELECT column1 AS i, column2 AS j, column3 AS v FROM (VALUES (0::bigint, 0::bigint, 4611686018427387904::bigint), (0, 1, 4611686018427387904), (0, 2, 3)) t',
	'SELECT column1 AS i, column2 AS j, column3 AS v FROM (VALUES (0::bigint, 7::bigint, 2::bigint), (1, 7, -2), (2, 7, 1)) t');
-- a result that cancels to zero: nothing comes out
SELECT count(*) FROM xxl.matmul('SELECT 0 AS i, k AS j, 1 AS v FROM generate_series(1, 2) k',
	'SELECT k AS i, 5 AS j, (-1) ^ k AS v FROM generate_series(1, 2) k');
SELECT details->'zero_results' AS zero_results FROM xxl.last_stats();
-- empty inputs
SELECT count(*) FROM xxl.matmul('SELECT 1 AS i, 1 AS j, 1 AS v WHERE false', 'b');
SELECT count(*) FROM xxl.matmul('a', 'SELECT i, j, v FROM b WHERE false');
-- negative indices
SELECT * FROM xxl.matmul('SELECT -3 AS i, -1 AS j, 2.5 AS v', 'SELECT -1 AS i, -7 AS j, 4 AS v');

-- At 1MB ----------------------------------------------------------------------

SET xxl.memory = '1MB';
-- 1000 x 100 times 100 x 1000, 31000 entries each, none 0: about 9.6M
-- partial products (over 200 times the budget, as 24-byte triples), about
-- 1M results; the sparse path (auto takes the tiles: they fill a third)
SET xxl.matmul_method = 'sparse';
CREATE TABLE big_a AS SELECT (random() * 999)::int AS i, (random() * 99)::int AS j,
	(1 + (random() * 2)::int) * (1 - 2 * (random() < 0.5)::int) AS v FROM generate_series(1, 31000);
CREATE TABLE big_b AS SELECT (random() * 99)::int AS i, (random() * 999)::int AS j,
	(1 + (random() * 2)::int) * (1 - 2 * (random() < 0.5)::int) AS v FROM generate_series(1, 31000);
SELECT xxl.matmul_into('big_a', 'big_b', 'big_c') > 800000 AS many_rows;
-- (each piece's sums one run, merged with their sums folded)
SELECT details->'path' AS path, (details->>'pieces')::int > 2 AS pieces, details->'spilled' AS spilled,
	runs = (details->>'pieces')::int AND merge_passes >= 1 AS runs_merged,
	(details->>'partial_products')::bigint > 200 * memory_limit / 24 AS products_200x_budget,
	(details->>'folded')::bigint > 0 AS folded, memory_peak <= memory_limit AS within_budget,
	written_per_input > 0 AS wrote
FROM (SELECT *, (details->>'written_per_input')::float8 AS written_per_input FROM xxl.last_stats()) s;
SELECT count(*) AS differ FROM big_c c
	FULL JOIN (SELECT x.i, y.j, sum(x.v * y.v) AS v FROM big_a x JOIN big_b y ON x.j = y.i
	           GROUP BY 1, 2 HAVING sum(x.v * y.v) <> 0) o USING (i, j)
WHERE c.v IS DISTINCT FROM o.v;
RESET xxl.matmul_method;
SELECT * FROM compare('af', 'bn');
SELECT * FROM compare('d', 'd', true);
SELECT * FROM compare('da', 'dbf');
SELECT details->'path' AS path, details->'tile' AS tile, (details->>'tile_products')::int > 1 AS tiles
FROM xxl.last_stats();
RESET xxl.memory;

-- Errors ----------------------------------------------------------------------

CREATE TABLE mm_exists (x int);
SELECT xt_try($$SELECT * FROM xxl.matmul(NULL, 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('a', 'b', NULL)$$);
SELECT xt_try($$SELECT xxl.matmul_into('a', 'b', NULL)$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('no_such_table', 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('VALUES (1, 2, 3)', 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('SELECT i, j FROM a', 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('a', 'SELECT i, j, v, v AS i FROM b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('SELECT i::float8 AS i, j, v FROM a', 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('a', 'SELECT i, j, v::text AS v FROM b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('SELECT i, j, NULLIF(v, 3) AS v FROM a', 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('SELECT NULL::int AS i, 1 AS j, 1 AS v', 'b')$$);
-- a table's rows with a NULL (read in place but for those)
CREATE TABLE a_null AS SELECT i, j, NULLIF(v, 3) AS v FROM a;
SELECT xt_try($$SELECT * FROM xxl.matmul('a_null', 'b')$$);
SELECT * FROM compare('SELECT * FROM a_null WHERE v IS NOT NULL', 'b');
SELECT xt_try($$SELECT * FROM xxl.matmul('SELECT 1 AS i, 1 AS j, ''NaN''::float8 AS v', 'b')$$);
SELECT xt_try($$SELECT * FROM xxl.matmul('SELECT 1 AS i, 1 AS j, 1e400::numeric AS v', 'b')$$);
SELECT xt_try($$SELECT xxl.matmul_into('a', 'b', 'mm_exists')$$);
SELECT xt_try($$SELECT xxl.matmul_into('a', 'SELECT i, j, 1 / (v - v) AS v FROM b', 'mm_out')$$);
SELECT xt_leftovers('mm_out');
-- the same at top level, with hint and context
SELECT * FROM xxl.matmul('a', 'SELECT i AS row, j, v FROM b');
SELECT * FROM xxl.matmul('SELECT i, j, NULLIF(v, 3) AS v FROM a', 'b');
-- the session goes on
SELECT count(*) > 0 AS works FROM xxl.matmul('a', 'b');

DROP SCHEMA mm_test CASCADE;
DROP FUNCTION xt_try(text), xt_differ(text, text), xt_leftovers(text);

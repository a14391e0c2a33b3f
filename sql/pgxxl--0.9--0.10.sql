/*
 * pgxxl--0.9--0.10.sql — from 0.9 to 0.10: matrix products, xxl.matmul
 * and xxl.matmul_into.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.10'" to load this file. \quit

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

-- shard_wire.sql — what a coordinator's pgxxl asks its shards for, packed
-- many rows to a message (docs/shards.md): xxl.shard_reduce_edges, a graph
-- function's rows as 8-byte values, and xxl.packed_rows, any query's rows
-- in binary COPY's row format.  The blocks are decoded here, in SQL, and
-- compared with what the functions and queries return themselves.
\i test/include/begin.sql

CREATE TABLE roads (id bigint, source bigint, target bigint, cost float8);
INSERT INTO roads VALUES
	(1, 1, 2, 4.0), (2, 2, 3, 1.0), (3, 3, 1, 2.0), (4, 3, 4, 7.0), (5, 4, 3, 3.0),
	(6, 10, 11, 1.0), (7, 11, 12, 1.0), (8, 12, 10, 1.0), (9, 20, 20, 0.5), (10, 4, 4, 0.1),
	(11, -9223372036854775808, 9223372036854775807, -2.5);
CREATE TABLE no_edges (source int, target int);

-- What a shard sends its coordinator: xxl.shard_reduce_edges, the rows of
-- the operator packed, each value 8 bytes little-endian, rows back to back;
-- decoded here and compared with the operator's own rows, in order
CREATE FUNCTION pg_temp.le8(b bytea, off int) RETURNS bytea LANGUAGE sql AS $$
	SELECT string_agg(substring(b FROM off + 8 - k FOR 1), ''::bytea ORDER BY k)
	FROM generate_series(0, 7) k $$;
CREATE FUNCTION pg_temp.unpack(op text, cols int) RETURNS TABLE(n bigint, v bytea[]) LANGUAGE sql AS $$
	SELECT row_number() OVER (ORDER BY b.i, r),
		   ARRAY(SELECT pg_temp.le8(b.block, r * cols * 8 + c * 8) FROM generate_series(0, cols - 1) c ORDER BY c)
	FROM (SELECT row_number() OVER () i, block FROM xxl.shard_reduce_edges('roads', op) block) b,
		 generate_series(0, length(b.block) / (cols * 8) - 1) r $$;
SELECT count(*) AS rows, bool_and(u.v = ARRAY[int8send(c.node), int8send(c.component)]) AS cc_packed_equal
FROM pg_temp.unpack('connected_components', 2) u
FULL JOIN (SELECT row_number() OVER () n, * FROM xxl.connected_components('roads')) c USING (n);
SELECT count(*) AS rows, bool_and(u.v = ARRAY[int8send(f.source), int8send(f.target)]) AS sf_packed_equal
FROM pg_temp.unpack('spanning_forest', 2) u
FULL JOIN (SELECT row_number() OVER () n, * FROM xxl.spanning_forest('roads')) f USING (n);
SELECT count(*) AS rows, bool_and(u.v = ARRAY[int8send(f.id), int8send(f.source), int8send(f.target), float8send(f.cost)])
	AS msf_packed_equal
FROM pg_temp.unpack('minimum_spanning_forest', 4) u
FULL JOIN (SELECT row_number() OVER () n, * FROM xxl.minimum_spanning_forest('roads')) f USING (n);
SELECT rows_out FROM xxl.last_stats();
SELECT count(*) AS blocks FROM xxl.shard_reduce_edges('no_edges', 'spanning_forest');
-- many blocks, each of whole rows
CREATE TABLE ring AS SELECT i AS source, (i + 1) % 40000 AS target FROM generate_series(0, 39999) i;
SELECT count(*) AS blocks, sum(length(b)) / 16 AS rows, bool_and(length(b) % 16 = 0) AS whole_rows,
	max(length(b)) <= 256 * 1024 AS within_a_block
FROM xxl.shard_reduce_edges('ring', 'connected_components') b;
DROP TABLE ring;
\set VERBOSITY sqlstate
SELECT xxl.shard_reduce_edges('roads', 'pagerank');
SELECT xxl.shard_reduce_edges('roads', NULL);
\set VERBOSITY default
SELECT xxl.shard_reduce_edges('roads', 'triangles');

-- xxl.packed_rows: per row a 16-bit field count, per field a 32-bit length
-- (-1: NULL) and the type's send form, rows back to back
SELECT encode(b, 'hex') AS block
FROM xxl.packed_rows($$SELECT 1::int, NULL::text, 'ab'::text UNION ALL SELECT -2, 'c', NULL$$) b;
-- booleans, integers and floats are packed without their send functions:
-- the bytes must be the send functions' all the same
SELECT b = (SELECT int2send(11::int2) || string_agg(int4send(length(x)) || x, ''::bytea ORDER BY i)
			FROM (VALUES (1, boolsend(true)), (2, boolsend(false)), (3, int2send('-32768'::int2)),
						 (4, int4send(-7)), (5, int8send(9223372036854775807)), (6, float4send(1.5::float4)),
						 (7, float4send('-0'::float4)), (8, float8send(-2.25::float8)), (9, float8send('NaN'::float8)),
						 (10, float8send('-Infinity'::float8)), (11, textsend('x'))) v(i, x)) AS as_sent
FROM xxl.packed_rows($$SELECT true, false, '-32768'::int2, -7, 9223372036854775807, 1.5::float4, '-0'::float4,
	-2.25::float8, 'NaN'::float8, '-Infinity'::float8, 'x'::text$$) b;
-- many rows: whole rows to a block, every row once, in the query's order
CREATE TABLE words AS SELECT g AS n, md5(g::text) AS w, CASE WHEN g % 7 = 0 THEN NULL ELSE g * 0.5 END AS x
FROM generate_series(1, 12000) g;
CREATE FUNCTION pg_temp.be4(b bytea, off int) RETURNS int LANGUAGE sql AS $$
	SELECT (get_byte(b, off) << 24) | (get_byte(b, off + 1) << 16) | (get_byte(b, off + 2) << 8) | get_byte(b, off + 3) $$;
-- each block's rows: this query's rows have 3 fields, n an int4 (4 bytes),
-- w 32 bytes of text, x a numeric of varying length or NULL
WITH RECURSIVE blocks AS (
	SELECT row_number() OVER () AS i, b FROM xxl.packed_rows('SELECT n, w, x FROM words ORDER BY w') b
), rows(i, pos, k, n) AS (
	SELECT i, 0, 0::bigint, NULL::int FROM blocks
	UNION ALL
	SELECT r.i, r.pos + 2 + 8 + 36 + 4 + greatest(pg_temp.be4(bl.b, r.pos + 2 + 8 + 36), 0),
		   r.k + 1, pg_temp.be4(bl.b, r.pos + 2 + 4)
	FROM rows r JOIN blocks bl USING (i)
	WHERE r.pos < length(bl.b)
)
SELECT count(*) AS rows, count(DISTINCT i) > 1 AS several_blocks,
	   (SELECT array_agg(n ORDER BY w) FROM words) = array_agg(n ORDER BY i, k) AS same_order
FROM rows WHERE k > 0;
SELECT count(*) AS blocks FROM xxl.packed_rows('SELECT * FROM words WHERE false');
-- wide rows: a block goes past its 256 kB by at most about a row
SELECT count(*) AS blocks, sum(length(b)) = 40 * (2 + 4 + 100000) AS every_row,
	   max(length(b)) <= 256 * 1024 + 100006 AS within_a_row_of_a_block
FROM xxl.packed_rows($$SELECT repeat('x', 100000) FROM generate_series(1, 40)$$) b;
\set VERBOSITY sqlstate
SELECT xxl.packed_rows('CREATE TABLE nope (a int)');
SELECT xxl.packed_rows(NULL);
SELECT xxl.packed_rows('SELECT 1/0');
\set VERBOSITY default
SELECT xxl.packed_rows('SELECT * FROM no_such_table');
SELECT to_regclass('nope') IS NULL AS nothing_created;

DROP TABLE roads, no_edges, words;
\i test/include/end.sql

-- suffix_bwt_locate.sql — the Burrows–Wheeler transform (xxl.bwt,
-- xxl.bwt_into, xxl.bwt_inverse) against the BWT read off a naive suffix
-- array, and xxl.locate against a naive scan for every occurrence, with the
-- suffix array reached by its physical layout or through an index, the
-- corpus in memory or in a spill file; roomy and smallest budgets.
\i test/include/begin.sql

CREATE FUNCTION bl_gen(kind text, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(string_agg(set_byte('\x00'::bytea, 0,
    CASE kind
      WHEN 'rand2' THEN 97 + get_byte(sha256(int4send(i)), 0) % 2
      WHEN 'rand4' THEN 97 + get_byte(sha256(int4send(i)), 0) % 4
      WHEN 'rand256' THEN get_byte(sha256(int4send(i)), 0)
      WHEN 'unary' THEN 255
      WHEN 'periodic' THEN 97 + i % 3
      WHEN 'zero_ff' THEN (ARRAY[0, 255, 1, 0])[1 + get_byte(sha256(int4send(i)), 1) % 4]
    END), ''::bytea ORDER BY i), ''::bytea)
  FROM generate_series(1, n) i
$$;

-- divbwt's convention from a naive suffix array: T[n-1], then T[pos-1] for
-- every suffix in order except the whole text; primary = the rank of pos 1
CREATE FUNCTION bl_bwt_oracle(d bytea, OUT bwt bytea, OUT primary_index bigint)
LANGUAGE sql AS $$
  WITH sa AS (SELECT row_number() OVER (ORDER BY substr(d, i)) AS rank, i AS pos
              FROM generate_series(1, length(d)) i)
  SELECT CASE WHEN length(d) = 0 THEN ''::bytea
              ELSE substr(d, length(d), 1) ||
                   coalesce((SELECT string_agg(substr(d, pos - 1, 1), '' ORDER BY rank)
                             FROM sa WHERE pos > 1), '') END,
         coalesce((SELECT rank FROM sa WHERE pos = 1), 0)
$$;

-- "ok" or what differs: the BWT, its primary index, the inverse
CREATE FUNCTION bl_bwt_case(d bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  want record := bl_bwt_oracle(d);
  res record := xxl.bwt(d);
  got bytea := res.bwt;
  prim bigint := res.primary_index;
BEGIN
  IF got IS DISTINCT FROM want.bwt THEN RETURN 'bwt differs'; END IF;
  IF prim IS DISTINCT FROM (SELECT (details->>'primary_index')::bigint FROM xxl.last_stats()) THEN
    RETURN 'last_stats disagrees';
  END IF;
  IF prim IS DISTINCT FROM want.primary_index THEN
    RETURN format('primary %s, want %s', prim, want.primary_index);
  END IF;
  IF xxl.bwt_inverse(got, prim) IS DISTINCT FROM d THEN RETURN 'inverse differs'; END IF;
  RETURN 'ok';
END $$;

CREATE TABLE bl_cases AS
  SELECT k AS kind, n, bl_gen(k, n) AS d
  FROM unnest(ARRAY['rand2', 'rand4', 'rand256', 'unary', 'periodic', 'zero_ff']) k,
       unnest(ARRAY[0, 1, 2, 3, 7, 100, 1500]) n;

SELECT * FROM xxl.bwt(convert_to('banana', 'UTF8'));
SELECT details->'primary_index' FROM xxl.last_stats();
-- the index is part of the result: a prepared statement (cached plan) and
-- a repeated call on other data each give their own
PREPARE bl_q(bytea) AS SELECT * FROM xxl.bwt($1);
EXECUTE bl_q('banana');
EXECUTE bl_q('abracadabra');
EXECUTE bl_q('banana');
DEALLOCATE bl_q;
SELECT (xxl.bwt(w::bytea)).* FROM unnest(ARRAY['banana', 'mississippi', 'a']) w;
SELECT convert_from(xxl.bwt_inverse('\x616e6e626161', 4), 'UTF8');
SELECT * FROM xxl.bwt('\x'::bytea);
SELECT * FROM xxl.bwt(NULL::bytea);
SELECT xxl.bwt_inverse('\x', 0);

SET xxl.memory = '64MB';
SELECT kind, n, bl_bwt_case(d) FROM bl_cases WHERE bl_bwt_case(d) <> 'ok';
SET xxl.memory = '1MB';
SELECT kind, n, bl_bwt_case(d) FROM bl_cases WHERE bl_bwt_case(d) <> 'ok';
SELECT count(*) AS cases FROM bl_cases;

-- bwt_into: chunks of 1 MB in order; returns the primary index.  A corpus
-- of 3 MB makes three chunks; at 1 MB (380 kB of it) the build is external.
CREATE TABLE bl_rows AS
  SELECT i AS id, decode(md5(i::text), 'hex') || bl_gen('periodic', i % 7) AS b
  FROM generate_series(1, 160000) i;
CREATE FUNCTION bl_into_case(budget text, max_id int) RETURNS TABLE(
  chunks bigint, bytes bigint, same_as_bwt boolean, inverse_ok boolean, external boolean)
LANGUAGE plpgsql AS $$
DECLARE
  prim bigint;
  ext boolean;
  whole bytea := (SELECT string_agg(b, '' ORDER BY id) FROM bl_rows WHERE id <= max_id);
BEGIN
  SET LOCAL client_min_messages = warning;
  DROP TABLE IF EXISTS bl_bwt_t;
  EXECUTE format('SET LOCAL xxl.memory = %L', budget);
  prim := xxl.bwt_into(format('SELECT b FROM bl_rows WHERE id <= %s ORDER BY id', max_id),
                       'bl_bwt_t');
  ext := (SELECT (details->>'external_levels')::int > 0 FROM xxl.last_stats());
  SET LOCAL xxl.memory = '64MB';
  RETURN QUERY
    SELECT count(*), sum(length(chunk))::bigint,
           string_agg(chunk, '' ORDER BY ordinal) = (xxl.bwt(whole)).bwt
             AND prim = (xxl.bwt(whole)).primary_index,
           xxl.bwt_inverse(string_agg(chunk, '' ORDER BY ordinal), prim) = whole,
           ext
    FROM bl_bwt_t;
END $$;
SELECT * FROM bl_into_case('64MB', 160000);
SELECT ordinal, length(chunk) FROM bl_bwt_t ORDER BY ordinal;
SELECT * FROM bl_into_case('1MB', 20000);
SELECT xxl.bwt_into(convert_to('banana', 'UTF8'), 'bl_banana');
SELECT * FROM bl_banana;

-- locate: every position, in suffix order, against a scan
CREATE FUNCTION bl_scan(d bytea, p bytea) RETURNS bigint[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(i ORDER BY i), '{}') FROM generate_series(1, length(d)) i
  WHERE substr(d, i, length(p)) = p
$$;
CREATE FUNCTION bl_locate(corpus text, sa text, p bytea) RETURNS bigint[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(l.pos ORDER BY l.pos), '{}') FROM xxl.locate(corpus, sa, p) l
$$;
CREATE TABLE bl_text AS SELECT bl_gen('rand4', 4000) || '\x00ff00'::bytea || bl_gen('periodic', 500) AS d;
SELECT xxl.suffix_array_into('bl_text', 'bl_sa');
CREATE TABLE bl_patterns AS
  SELECT p FROM (VALUES ('\x61'::bytea), ('\x6162'), ('\x616263'), ('\x62626262'),
    ('\x00ff00'), ('\xff'), ('\x00'), ('\x7a'), ('\x6161616161616161616161'),
    ('\x616263616263616263616263')) v(p)
  UNION ALL SELECT substr(d, 3990, 20) FROM bl_text
  UNION ALL SELECT substr(d, length(d) - 5) FROM bl_text
  UNION ALL SELECT substr(d, 1, 1000) FROM bl_text
  UNION ALL SELECT d FROM bl_text
  UNION ALL SELECT d || '\x61' FROM bl_text;
SET xxl.memory = '64MB';
SELECT encode(substr(p, 1, 12), 'hex') AS pattern, length(p), cardinality(bl_scan(d, p)) AS found
FROM bl_patterns, bl_text WHERE bl_locate('bl_text', 'bl_sa', p) <> bl_scan(d, p);
SELECT count(*) AS patterns, sum(cardinality(bl_scan(d, p))) AS occurrences FROM bl_patterns, bl_text;
-- suffix order, and the statistics
SELECT * FROM xxl.locate('bl_text', 'bl_sa', '\x00ff00'::bytea);
SELECT (SELECT array_agg(l.pos) FROM xxl.locate('bl_text', 'bl_sa', '\x626262'::bytea) l)
     = (SELECT array_agg(pos ORDER BY rank) FROM bl_sa
        WHERE substr((SELECT d FROM bl_text), pos::int, 3) = '\x626262') AS in_suffix_order;
SELECT rows_out, details->>'sa_access' AS sa_access, details->>'text_on_disk' AS text_on_disk,
       (details->>'probes')::int <= 2 * 13 AS probes_log_n
FROM xxl.last_stats();
-- the empty pattern occurs everywhere
SELECT count(*) FROM xxl.locate('bl_text', 'bl_sa', ''::bytea);
SET xxl.memory = '1MB';
SELECT encode(substr(p, 1, 12), 'hex') AS pattern FROM bl_patterns, bl_text
WHERE bl_locate('bl_text', 'bl_sa', p) <> bl_scan(d, p);

-- a suffix array not in rank order: through an index on rank, else an error
CREATE TABLE bl_sa_shuffled AS SELECT * FROM bl_sa ORDER BY md5(pos::text);
SELECT count(*) FROM xxl.locate('bl_text', 'bl_sa_shuffled', '\x6162'::bytea);
CREATE INDEX ON bl_sa_shuffled (rank);
SELECT encode(substr(p, 1, 12), 'hex') AS pattern FROM bl_patterns, bl_text
WHERE bl_locate('bl_text', 'bl_sa_shuffled', p) <> bl_scan(d, p);
SELECT details->>'sa_access' AS sa_access, (details->>'sa_index_lookups')::int > 0 AS used_index
FROM xxl.last_stats();
-- rows moved after the build: the layout is checked, the index takes over
CREATE INDEX ON bl_sa (rank);
UPDATE bl_sa SET pos = pos WHERE rank % 100 = 7;
SELECT encode(substr(p, 1, 12), 'hex') AS pattern FROM bl_patterns, bl_text
WHERE bl_locate('bl_text', 'bl_sa', p) <> bl_scan(d, p);
SELECT count(*) FROM xxl.locate('bl_text', 'bl_sa', ''::bytea);
SELECT details->>'sa_access' AS sa_access FROM xxl.last_stats();
-- narrower columns, in rank order: the layout still works
CREATE TABLE bl_sa4 AS SELECT rank::int AS rank, pos::int AS pos FROM bl_sa ORDER BY rank;
SELECT encode(substr(p, 1, 12), 'hex') AS pattern FROM bl_patterns, bl_text
WHERE bl_locate('bl_text', 'bl_sa4', p) <> bl_scan(d, p);
SELECT details->>'sa_access' AS sa_access FROM xxl.last_stats();

-- a corpus of many rows, larger than the smallest budget's share for it:
-- the text goes to a spill file and windows are read back from it
SET xxl.memory = '1MB';
CREATE TABLE bl_big AS
  SELECT i AS id, decode(md5(i::text), 'hex') AS b FROM generate_series(1, 40000) i;
SELECT xxl.suffix_array_into('SELECT b FROM bl_big ORDER BY id', 'bl_big_sa');
SELECT count(*) FROM xxl.locate('SELECT b FROM bl_big ORDER BY id', 'bl_big_sa',
                                (SELECT b FROM bl_big WHERE id = 31337));
SELECT details->>'text_on_disk' AS text_on_disk, (details->>'text_block_reads')::int > 0 AS read_blocks,
       memory_peak <= memory_limit AS within_budget
FROM xxl.last_stats();
SELECT l.pos FROM xxl.locate('SELECT b FROM bl_big ORDER BY id', 'bl_big_sa',
                         (SELECT substr(b, 5) || substr(b2, 1, 3)
                          FROM (SELECT b, lead(b) OVER (ORDER BY id) AS b2, id FROM bl_big) x
                          WHERE id = 2024)) l;
SELECT (2024 - 1) * 16 + 5 AS expected;

\i test/include/end.sql

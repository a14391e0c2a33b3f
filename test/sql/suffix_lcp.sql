-- suffix_lcp.sql — corpora of documents (id, body), LCP arrays and locate
-- by document, against oracles written here in SQL:
--   order: a document's bytes b become (0x01, b) and its end a separator
--     (0x00, 0x00), so that substr() of that encoding at a suffix's place
--     compares exactly as the separated text: bytes as bytes, a document's
--     end below every byte; row_number() over it is the suffix array;
--   LCP: a byte-by-byte loop over the oracle's neighbours, stopping at the
--     end of either document;
--   locate: every document offset where substr() equals the pattern.
-- Corpora: random documents over 2 and 256 letters, one byte repeated,
-- 0x00/0xFF, empty and one-byte documents, a repeat that would cross a
-- document boundary; each at a roomy budget and at the smallest with the
-- external paths forced (xxl.text_force_external).
\i test/include/begin.sql
\i test/include/helpers.sql

CREATE FUNCTION lc_gen(kind text, n int, seed int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(string_agg(set_byte('\x00'::bytea, 0,
    CASE kind
      WHEN 'rand2' THEN 97 + get_byte(sha256(int4send(i * 7919 + seed)), 0) % 2
      WHEN 'rand256' THEN get_byte(sha256(int4send(i * 7919 + seed)), 0)
      WHEN 'unary' THEN 113
      WHEN 'zero_ff' THEN (ARRAY[0, 255])[1 + get_byte(sha256(int4send(i + seed)), 1) % 2]
    END), ''::bytea ORDER BY i), ''::bytea)
  FROM generate_series(1, n) i
$$;

-- corpora: (corpus, id, body); ids deliberately not in document order
CREATE TABLE lc_docs (corpus text, ord int, id bigint, body bytea);
INSERT INTO lc_docs
  SELECT 'rand2', d, 1000 - d, lc_gen('rand2', (d * 37) % 61 + (d % 5) * 3, d) FROM generate_series(1, 40) d;
INSERT INTO lc_docs
  SELECT 'rand256', d, d, lc_gen('rand256', (d * 53) % 97, d) FROM generate_series(1, 25) d;
INSERT INTO lc_docs
  SELECT 'unary', d, d * 10, lc_gen('unary', (d * 29) % 41, 0) FROM generate_series(1, 20) d;
INSERT INTO lc_docs
  SELECT 'tiny_docs', d, -d, CASE WHEN d % 3 = 1 THEN ''::bytea ELSE lc_gen('zero_ff', 1, d) END
  FROM generate_series(1, 60) d;
INSERT INTO lc_docs VALUES ('boundary', 1, 1, 'abcd'), ('boundary', 2, 2, 'ab'), ('boundary', 3, 3, 'cd'),
  ('boundary', 4, 4, 'abc');
SELECT corpus, count(*) AS docs, sum(length(body)) AS bytes, count(*) FILTER (WHERE length(body) = 0) AS empty
FROM lc_docs GROUP BY corpus ORDER BY corpus;

-- the oracle's suffix array and LCP of one corpus
CREATE FUNCTION lc_lcp(a bytea, b bytea) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE k int := 0;
BEGIN
  WHILE k < length(a) AND k < length(b) AND get_byte(a, k) = get_byte(b, k) LOOP
    k := k + 1;
  END LOOP;
  RETURN k;
END $$;
CREATE FUNCTION lc_oracle(c text)
RETURNS TABLE(rank bigint, pos bigint, doc_id bigint, doc_offset bigint, lcp bigint) LANGUAGE sql AS $$
  WITH docs AS (
    SELECT id, body, ord,
           coalesce(sum(length(body)) OVER (ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start
    FROM lc_docs WHERE corpus = c),
  enc AS (
    SELECT string_agg(
             coalesce((SELECT string_agg('\x01'::bytea || substr(body, i, 1), ''::bytea ORDER BY i)
                       FROM generate_series(1, length(body)) i), ''::bytea) || '\x0000'::bytea,
             ''::bytea ORDER BY ord) AS e
    FROM docs),
  suffixes AS (
    -- the document's byte at offset o sits at place start + (ord - 1) + o of the separated text
    SELECT d.id, o, d.start + o AS pos, substr(d.body, o) AS rest,
           substr(enc.e, (2 * (d.start + d.ord - 1 + o) - 1)::int) AS key
    FROM docs d, enc, generate_series(1, length(d.body)) o),
  ranked AS (
    SELECT row_number() OVER (ORDER BY key) AS rank, pos, id, o, rest FROM suffixes)
  SELECT rank, pos, id, o, coalesce(lc_lcp(rest, lag(rest) OVER (ORDER BY rank)), 0)
  FROM ranked
$$;
CREATE TABLE lc_want AS
  SELECT c AS corpus, o.* FROM (SELECT DISTINCT corpus FROM lc_docs) x(c), lc_oracle(c) o;
SELECT corpus, count(*) AS suffixes, max(lcp) AS max_lcp FROM lc_want GROUP BY corpus ORDER BY corpus;
-- the boundary case in full: "ab" and "abc" never meet "cd"
SELECT rank, pos, doc_id, doc_offset, lcp FROM lc_want WHERE corpus = 'boundary' ORDER BY rank;

-- xxl.suffix_array with ids, suffix_array_into(lcp => true) and lcp_into
-- from that stored suffix array, at both budgets; differing rows per check
SET client_min_messages = warning;
CREATE FUNCTION lc_check(c text) RETURNS TABLE(sa bigint, sa_lcp bigint, lcp_into bigint, within_budget boolean)
LANGUAGE plpgsql AS $$
DECLARE
  src text := format('SELECT id, body FROM lc_docs WHERE corpus = %L ORDER BY ord', c);
  ok boolean;
BEGIN
  DROP TABLE IF EXISTS lc_got, lc_got_lcp;
  sa := xt_differ(format('SELECT rank, pos, doc_id, doc_offset FROM xxl.suffix_array(%L)', src),
                  format('SELECT rank, pos, doc_id, doc_offset FROM lc_want WHERE corpus = %L', c));
  PERFORM xxl.suffix_array_into(src, 'lc_got', lcp => true);
  SELECT memory_peak <= memory_limit INTO ok FROM xxl.last_stats();
  sa_lcp := xt_differ('lc_got', format('SELECT rank, pos, doc_id, doc_offset, lcp FROM lc_want WHERE corpus = %L', c));
  PERFORM xxl.lcp_into(src, 'SELECT rank, pos FROM lc_got ORDER BY md5(pos::text)', 'lc_got_lcp');
  lcp_into := xt_differ('lc_got_lcp', 'lc_got');
  SELECT ok AND memory_peak <= memory_limit INTO within_budget FROM xxl.last_stats();
  DROP TABLE lc_got, lc_got_lcp;
  RETURN NEXT;
END $$;
SET xxl.memory = '64MB';
SELECT c AS corpus, r.* FROM (SELECT DISTINCT corpus FROM lc_docs ORDER BY 1) x(c), lc_check(c) r;
SELECT details->>'lcp_method' AS method FROM xxl.last_stats();
-- on the external paths at the smallest budget users can set (the
-- documents' map takes an eighth of it)
SET xxl.memory = '1MB';
SET xxl.text_force_external = on;
SELECT c AS corpus, r.* FROM (SELECT DISTINCT corpus FROM lc_docs ORDER BY 1) x(c), lc_check(c) r;
SELECT details->>'lcp_method' AS method, (details->>'lcp_rounds')::int AS rounds,
       details->>'lcp_derived_prev' AS derived_prev
FROM xxl.last_stats();
SELECT xxl.suffix_array_into('SELECT id, body FROM lc_docs WHERE corpus = ''rand2'' ORDER BY ord', 'lc_x', lcp => true);
SELECT (details->>'external_levels')::int > 0 AS external_dc3, details->>'lcp_method' AS method,
       (details->>'documents')::int AS documents, memory_peak <= memory_limit AS within_budget
FROM xxl.last_stats();
DROP TABLE lc_x;
RESET xxl.text_force_external;

-- a one-column corpus: doc columns are null, lcp is Kasai's (divsufsort and
-- Kasai are the unit test's oracle; here the plain SQL oracle on one text)
SET xxl.memory = '64MB';
SELECT count(*) AS rows, count(doc_id) AS with_doc
FROM xxl.suffix_array('SELECT body FROM lc_docs WHERE corpus = ''rand2'' ORDER BY ord');
CREATE TABLE lc_one AS SELECT string_agg(body, ''::bytea ORDER BY ord) AS d FROM lc_docs WHERE corpus = 'rand256';
SELECT xxl.suffix_array_into('lc_one', 'lc_one_sa', lcp => true);
SELECT count(*) AS wrong_lcp FROM (
  SELECT rank, lcp, lc_lcp(substr(d, pos::int), substr(d, (lag(pos) OVER (ORDER BY rank))::int)) AS want
  FROM lc_one_sa, lc_one) x
WHERE lcp <> coalesce(want, 0);
SELECT xxl.suffix_array_into((SELECT d FROM lc_one), 'lc_one_sa_b', lcp => true);
SELECT xt_differ('lc_one_sa', 'lc_one_sa_b') AS bytea_form_differs;
SELECT attname FROM pg_attribute WHERE attrelid = 'lc_one_sa'::regclass AND attnum > 0 ORDER BY attnum;

-- locate by document: (pos, doc_id, doc_offset) of every occurrence, never across a boundary
SELECT xxl.suffix_array_into('SELECT id, body FROM lc_docs WHERE corpus = ''rand2'' ORDER BY ord', 'lc_sa2');
CREATE FUNCTION lc_scan(p bytea) RETURNS TABLE(doc_id bigint, doc_offset bigint) LANGUAGE sql AS $$
  SELECT id, o FROM lc_docs, generate_series(1, length(body) - length(p) + 1) o
  WHERE corpus = 'rand2' AND substr(body, o, length(p)) = p
$$;
SELECT p, xt_differ(format('SELECT doc_id, doc_offset FROM xxl.locate(%L, ''lc_sa2'', %L::bytea)',
                           'SELECT id, body FROM lc_docs WHERE corpus = ''rand2'' ORDER BY ord', p),
                    format('SELECT * FROM lc_scan(%L::bytea)', p)) AS differ,
       (SELECT count(*) FROM lc_scan(p::bytea)) AS occurrences
FROM unnest(ARRAY['a', 'ab', 'bab', 'aaaa', 'babab', 'abbabba', 'bbbbbbbbbbbb']) p;
-- positions are into the concatenated bodies
SELECT count(*) AS wrong_pos FROM xxl.locate('SELECT id, body FROM lc_docs WHERE corpus = ''rand2'' ORDER BY ord', 'lc_sa2', 'ab'::bytea) l
WHERE substr((SELECT string_agg(body, ''::bytea ORDER BY ord) FROM lc_docs WHERE corpus = 'rand2'), l.pos::int, 2) <> 'ab'::bytea;

-- what is not for a corpus of documents, and bad ids
SELECT xt_try($$SELECT xxl.bwt_into('SELECT id, body FROM lc_docs', 'lc_bwt')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('SELECT id, body FROM lc_docs', 'lc_sa2')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT NULL::int, body FROM lc_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT 1.5, body FROM lc_docs')$$);
SELECT xt_try($$SELECT xxl.suffix_array_into('SELECT id, body FROM lc_docs', 'lc_x', lcp => NULL)$$);
-- lcp_into with a suffix array that is not one of this corpus
SELECT xt_try($$SELECT xxl.lcp_into('lc_one', 'SELECT rank, pos FROM lc_one_sa WHERE rank > 1', 'lc_x')$$);
SELECT xt_try($$SELECT xxl.lcp_into('lc_one', 'SELECT rank, CASE WHEN rank = 2 THEN 1 ELSE pos END FROM lc_one_sa', 'lc_x')$$);
SELECT xt_try($$SELECT xxl.lcp_into('lc_one', 'SELECT rank, pos - 1 AS pos FROM lc_one_sa', 'lc_x')$$);
SELECT xt_try($$SELECT xxl.lcp_into('lc_one', 'lc_one_sa', 'lc_one_sa')$$);
SELECT to_regclass('lc_x') IS NULL AS no_half_target;

RESET xxl.memory;
RESET client_min_messages;
DROP TABLE lc_docs, lc_want, lc_one, lc_one_sa, lc_one_sa_b, lc_sa2;
DROP FUNCTION lc_gen, lc_lcp, lc_oracle, lc_check, lc_scan;
DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

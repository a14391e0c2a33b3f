-- suffix_repeats.sql — xxl.repeats and xxl.repeats_into against a naive
-- oracle in SQL: every window of min_length bytes inside a document,
-- counted by GROUP BY; windows counted at least min_count times are
-- merged where they overlap (gaps and islands), each range reporting its
-- fewest occurrences.  Corpora: prose with boilerplate, random documents,
-- one byte repeated, 0x00/0xFF with empty and one-byte documents, a repeat
-- that would cross a document boundary, one text without ids; min_length
-- above every document; each at 64MB and at 3MB with the external paths
-- forced.
\i test/include/begin.sql
\i test/include/helpers.sql

CREATE TABLE rp_docs (corpus text, ord int, id bigint, body bytea);
-- prose: sentences from a small vocabulary, a boilerplate line in some documents
INSERT INTO rp_docs
  SELECT 'prose', d, 100 + d, convert_to(
    (SELECT string_agg((ARRAY['the', 'table', 'of', 'sorted', 'suffix', 'array', 'in', 'a', 'document',
                              'external', 'memory'])[1 + get_byte(sha256(int4send(d * 1000 + w)), 0) % 11], ' ')
     FROM generate_series(1, 8 + d % 13) w)
    || CASE WHEN d % 4 = 0 THEN ' -- Copyright the authors. All rights reserved.' ELSE '' END, 'UTF8')
  FROM generate_series(1, 60) d;
INSERT INTO rp_docs
  SELECT 'rand2', d, d, (SELECT coalesce(string_agg(set_byte('\x00'::bytea, 0, 97 + get_byte(sha256(int4send(d * 977 + i)), 0) % 2),
                                                     ''::bytea ORDER BY i), ''::bytea)
                         FROM generate_series(1, (d * 31) % 47) i)
  FROM generate_series(1, 30) d;
INSERT INTO rp_docs
  SELECT 'unary', d, d, convert_to(repeat('z', (d * 17) % 23), 'UTF8') FROM generate_series(1, 15) d;
INSERT INTO rp_docs
  SELECT 'zero_ff', d, d, CASE WHEN d % 4 = 0 THEN ''::bytea
                               WHEN d % 4 = 1 THEN '\xff'::bytea
                               ELSE decode(repeat(CASE WHEN d % 3 = 0 THEN '00ff' ELSE 'ff00' END, d % 7), 'hex') END
  FROM generate_series(1, 40) d;
INSERT INTO rp_docs VALUES ('boundary', 1, 7, 'xabcdx'), ('boundary', 2, 8, 'ab'), ('boundary', 3, 9, 'cd'),
  ('boundary', 4, 10, 'yabcdy');

CREATE FUNCTION rp_oracle(c text, k int, m int)
RETURNS TABLE(doc_id bigint, doc_offset bigint, length bigint, occurrences bigint) LANGUAGE sql AS $$
  WITH w AS (
    SELECT d.ord, d.id, o, substr(d.body, o, k) AS s
    FROM rp_docs d, generate_series(1, length(d.body) - k + 1) o WHERE d.corpus = c),
  cnt AS (SELECT s, count(*) AS n FROM w GROUP BY s),
  rep AS (SELECT w.ord, w.id, w.o, cnt.n FROM w JOIN cnt USING (s) WHERE cnt.n >= m),
  marked AS (
    SELECT *, CASE WHEN o < max(o + k) OVER (PARTITION BY ord ORDER BY o
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                   THEN 0 ELSE 1 END AS first
    FROM rep),
  grp AS (SELECT *, sum(first) OVER (PARTITION BY ord ORDER BY o) AS g FROM marked)
  SELECT id, min(o), max(o) + k - min(o), min(n) FROM grp GROUP BY ord, id, g
$$;

-- the worked example of docs/text.md
CREATE TABLE rp_example (id bigint, body text);
INSERT INTO rp_example VALUES (1, 'the cat sat'), (2, 'a cat sat down'), (3, 'the cat');
SET xxl.memory = '64MB';
SELECT * FROM xxl.repeats('SELECT id, body FROM rp_example ORDER BY id', 5);
SELECT * FROM xxl.repeats('SELECT id, body FROM rp_example ORDER BY id', 4, 3);
SELECT * FROM xxl.repeats('SELECT body FROM rp_example ORDER BY id', 5);

CREATE FUNCTION rp_differ(c text, k int, m int) RETURNS bigint LANGUAGE sql AS $$
  SELECT xt_differ(format('SELECT * FROM xxl.repeats(%L, %s, %s)',
                          format('SELECT id, body FROM rp_docs WHERE corpus = %L ORDER BY ord', c), k, m),
                   format('SELECT * FROM rp_oracle(%L, %s, %s)', c, k, m))
$$;
CREATE TABLE rp_cases (corpus text, k int, m int);
INSERT INTO rp_cases VALUES ('prose', 12, 2), ('prose', 30, 2), ('prose', 6, 10), ('rand2', 5, 2), ('rand2', 8, 3),
  ('unary', 4, 2), ('unary', 21, 2), ('zero_ff', 1, 2), ('zero_ff', 3, 2), ('boundary', 2, 2), ('boundary', 3, 2),
  ('boundary', 4, 3), ('prose', 1000, 2);
SELECT c.corpus, c.k, c.m, (SELECT count(*) FROM rp_oracle(c.corpus, c.k, c.m)) AS ranges,
       rp_differ(c.corpus, c.k, c.m) AS differ
FROM rp_cases c ORDER BY 1, 2, 3;
SET xxl.memory = '3MB';
SET xxl.text_force_external = on;
SELECT c.corpus, c.k, c.m, rp_differ(c.corpus, c.k, c.m) AS differ FROM rp_cases c ORDER BY 1, 2, 3;
SELECT details->>'lcp_method' AS method, (details->>'repeat_ranges')::int AS ranges,
       memory_peak <= memory_limit AS within_budget
FROM xxl.last_stats();
RESET xxl.text_force_external;

-- one text: doc_id is null, doc_offset the position in the text
SET xxl.memory = '64MB';
CREATE TABLE rp_one AS SELECT string_agg(body, ''::bytea ORDER BY ord) AS t FROM rp_docs WHERE corpus = 'prose';
SELECT count(*) AS wrong FROM xxl.repeats('rp_one', 20) r, rp_one
WHERE r.doc_id IS NOT NULL
   OR (SELECT count(*) FROM generate_series(1, length(t) - 19) o
       WHERE substr(t, o, 20) = substr(t, r.doc_offset::int, 20)) < 2;

-- repeats_into: the same rows in a new table
SELECT xxl.repeats_into('SELECT id, body FROM rp_docs WHERE corpus = ''prose'' ORDER BY ord', 'rp_out', 12);
SELECT xt_differ('rp_out', 'SELECT * FROM rp_oracle(''prose'', 12, 2)') AS differ;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'rp_out'::regclass AND attnum > 0 ORDER BY attnum;

-- bad arguments, and nothing left behind by a failure
SELECT xt_try($$SELECT * FROM xxl.repeats('rp_one', 0)$$);
SELECT xt_try($$SELECT * FROM xxl.repeats('rp_one', 5, 1)$$);
SELECT xt_try($$SELECT * FROM xxl.repeats('rp_one', NULL)$$);
SELECT xt_try($$SELECT * FROM xxl.repeats(NULL, 5)$$);
SELECT xt_try($$SELECT xxl.repeats_into('rp_one', 'rp_out', 5)$$);
SELECT xt_try($$SELECT xxl.repeats_into('SELECT id, body FROM rp_docs WHERE 1 / (ord - 30) > -1', 'rp_fail', 5)$$);
SELECT xt_leftovers('rp_fail');
SET temp_file_limit = '64kB';
SET xxl.memory = '3MB';
SET xxl.text_force_external = on;
SELECT xt_try($$SELECT xxl.repeats_into('SELECT id, body || body || body || body || body || body || body || body FROM rp_docs ORDER BY corpus, ord', 'rp_fail', 5)$$);
SELECT xt_leftovers('rp_fail');
RESET temp_file_limit;
RESET xxl.text_force_external;
SELECT count(*) > 0 AS session_usable FROM xxl.repeats('rp_one', 30);

RESET xxl.memory;
DROP TABLE rp_docs, rp_example, rp_cases, rp_one, rp_out;
DROP FUNCTION rp_oracle, rp_differ;
DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

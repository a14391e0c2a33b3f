-- suffix_errors.sql — bad input to the text functions gets an error with a
-- fitting SQLSTATE and leaves nothing behind (no target table, no spill
-- file, a usable session): NULL rows, a non-text column, more than one
-- column, a failing query, missing tables, taken targets, bad suffix array
-- tables for locate and the checker, engine failures (temp_file_limit, a
-- full disk) and cancel.
\i test/include/begin.sql
\i test/include/helpers.sql

CREATE TABLE sx_docs (id int, body text, n int, raw bytea);
INSERT INTO sx_docs VALUES (1, 'banana', 1, '\x00'), (2, NULL, 2, '\x01'), (3, 'ana', 3, NULL);
CREATE TABLE sx_exists (a int);
CREATE TABLE sx_sa AS SELECT * FROM xxl.suffix_array('\x616263'::bytea);

-- an untyped literal is a corpus (table name or query), not a value
SELECT xt_try($$SELECT * FROM xxl.suffix_array('banana')$$);
SELECT count(*) FROM xxl.suffix_array('banana'::bytea);
SELECT count(*) FROM xxl.suffix_array('SELECT ''banana''');

-- the corpus: NULL rows, columns, types, failing and unsuitable queries
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT body FROM sx_docs ORDER BY id')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT raw FROM sx_docs ORDER BY id')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT body, raw FROM sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT n FROM sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT body::char(10) FROM sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT FROM sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELECT (1 / (n - 2))::text FROM sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('SELEC body FROM sx_docs')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('no_such_table')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('DELETE FROM sx_docs RETURNING body')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array('')$$);
SELECT xt_try($$SELECT * FROM xxl.suffix_array(NULL::text)$$);
SELECT count(*) FROM sx_docs;
-- ... the same through the other functions
SELECT xt_try($$SELECT xxl.suffix_array_into('SELECT body FROM sx_docs', 'sx_out')$$);
SELECT xt_try($$SELECT xxl.suffix_array_into('SELECT n FROM sx_docs', 'sx_out')$$);
SELECT xt_try($$SELECT xxl.bwt_into('SELECT body FROM sx_docs', 'sx_out')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('SELECT body FROM sx_docs', 'sx_sa')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT body FROM sx_docs', 'sx_sa', '\x61')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT n FROM sx_docs', 'sx_sa', '\x61')$$);
-- ... and NULL arguments
SELECT xt_try($$SELECT xxl.suffix_array_into(NULL::text, 'sx_out')$$);
SELECT xt_try($$SELECT xxl.suffix_array_into(NULL::bytea, 'sx_out')$$);
SELECT xt_try($$SELECT xxl.suffix_array_into('\x61'::bytea, NULL)$$);
SELECT xt_try($$SELECT xxl.bwt_into(NULL::bytea, 'sx_out')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('SELECT ''a''', NULL)$$);
SELECT xt_try($$SELECT xxl.suffix_array_check(NULL::bytea, 'sx_sa')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''a''', 'sx_sa', NULL)$$);
SELECT xt_try($$SELECT * FROM xxl.locate(NULL, 'sx_sa', '\x61')$$);

-- targets
SELECT xt_try($$SELECT xxl.suffix_array_into('\x61'::bytea, 'sx_exists')$$);
SELECT xt_try($$SELECT xxl.bwt_into('\x61'::bytea, 'sx_exists')$$);
SELECT xt_try($$SELECT xxl.suffix_array_into('\x61'::bytea, 'no_such_schema.sx_out')$$);
SELECT xt_try($$SELECT xxl.suffix_array_into('\x61'::bytea, 'sx out')$$);

-- the checker's suffix array
SELECT xt_try($$SELECT xxl.suffix_array_check('\x616263'::bytea, 'SELECT 1 AS a, 2 AS b, 3 AS c')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('\x616263'::bytea, 'SELECT rank::text, pos FROM sx_sa')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('\x616263'::bytea, 'SELECT rank, NULLIF(pos, 2) AS pos FROM sx_sa')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('\x616263'::bytea, 'no_such_sa')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('\x616263'::bytea, 'SELECT 1/0 AS rank, 1 AS pos')$$);

-- locate's suffix array: a table with rank and pos, readable directly
CREATE VIEW sx_sa_view AS SELECT * FROM sx_sa;
CREATE TABLE sx_sa_cols (r bigint, p bigint, x int);
CREATE TABLE sx_sa_text (rank text, pos bigint);
CREATE TABLE sx_sa_short AS SELECT * FROM sx_sa WHERE rank < 3;
CREATE TABLE sx_sa_far AS SELECT rank, pos + 10 AS pos FROM sx_sa;
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa_view', '\x61')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'SELECT * FROM sx_sa', '\x61')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'no_such_sa', '\x61')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa_cols', '\x61')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa_text', '\x61')$$);
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa_short', '\x63')$$);
-- the statistics of a locate that failed on a missing rank describe its
-- suffix-array access (they were read from the unwound stack frame)
SELECT operator, completed, details->>'sa_access' AS sa_access,
       (details->>'sa_layout_fetches')::bigint + (details->>'sa_index_lookups')::bigint
         BETWEEN 1 AND 4 AS few_probes
FROM xxl.last_stats();
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa_far', '\x61')$$);
SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa', '\x62');
ALTER TABLE sx_sa ENABLE ROW LEVEL SECURITY;
SELECT pg_temp.xt_role('regress_sx_plain');
GRANT SELECT ON sx_sa TO regress_sx_plain;
SET ROLE regress_sx_plain;
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa', '\x61')$$);
RESET ROLE;
ALTER TABLE sx_sa DISABLE ROW LEVEL SECURITY;
REVOKE SELECT ON sx_sa FROM regress_sx_plain;
SET ROLE regress_sx_plain;
SELECT xt_try($$SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa', '\x61')$$);
SELECT xt_try($$SELECT xxl.suffix_array_check('SELECT ''abc''', 'sx_sa')$$);
RESET ROLE;
SELECT pg_temp.xt_drop_role('regress_sx_plain');

-- bwt_inverse
SELECT xt_try($$SELECT xxl.bwt_inverse('\x616e6e626161', 0)$$);
SELECT xt_try($$SELECT xxl.bwt_inverse('\x616e6e626161', 7)$$);
SET xxl.memory = '1MB';
SELECT xt_try($$SELECT xxl.bwt_inverse(decode(repeat('61', 200000), 'hex'), 1)$$);
SELECT xt_leftovers('sx_out');

-- engine failures: temp_file_limit, a full disk
CREATE TABLE sx_big AS
  SELECT i AS id, decode(md5(i::text), 'hex') AS b FROM generate_series(1, 40000) i;
SET temp_file_limit = '1MB';
SELECT xt_try($$SELECT xxl.suffix_array_into('SELECT b FROM sx_big ORDER BY id', 'sx_out')$$);
RESET temp_file_limit;
SET xxl.debug_fail_writes_after = '256kB';
SELECT xt_try($$SELECT xxl.bwt_into('SELECT b FROM sx_big ORDER BY id', 'sx_out')$$);
SELECT xt_try($$SELECT count(*) FROM xxl.locate('SELECT b FROM sx_big ORDER BY id', 'sx_sa', '\x61')$$);
RESET xxl.debug_fail_writes_after;
SELECT operator, completed FROM xxl.last_stats();
SELECT xt_leftovers('sx_out');

-- a few at top level, for their detail and hint
SELECT * FROM xxl.suffix_array('SELECT body FROM sx_docs ORDER BY id');
SELECT * FROM xxl.suffix_array('SELECT n FROM sx_docs');
SELECT * FROM xxl.suffix_array('SELECT body, raw FROM sx_docs');
SELECT * FROM xxl.locate('SELECT ''abc''', 'sx_sa_short', '\x63');
SET temp_file_limit = '1MB';
SELECT xxl.suffix_array_into('SELECT b FROM sx_big ORDER BY id', 'sx_out');
RESET temp_file_limit;

-- cancel (here by statement_timeout): the real cancel error, no target, no
-- spill files, and the session goes on
SET statement_timeout = '200ms';
SELECT xxl.suffix_array_into('SELECT b FROM sx_big, generate_series(1, 200) ORDER BY id', 'sx_out');
-- (where the cancel lands, in the check or in its SPI query with a
-- CONTEXT line, is the machine's)
\set VERBOSITY terse
SELECT xxl.suffix_array_check('SELECT b FROM sx_big, generate_series(1, 20)',
                              'SELECT 1 AS rank, g AS pos FROM generate_series(1, 100000000) g');
\set VERBOSITY default
RESET statement_timeout;
SELECT operator, completed FROM xxl.last_stats();
SELECT xt_leftovers('sx_out');

-- an error later in the transaction takes the target away
BEGIN;
SELECT xxl.suffix_array_into('\x616263'::bytea, 'sx_out');
SELECT 1 / 0;
ROLLBACK;
SELECT xt_leftovers('sx_out');
-- and the session still works
RESET xxl.memory;
SELECT xxl.suffix_array_into('SELECT b FROM sx_big ORDER BY id', 'sx_out_ok');
SELECT xxl.suffix_array_check('SELECT b FROM sx_big ORDER BY id', 'sx_out_ok');

DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

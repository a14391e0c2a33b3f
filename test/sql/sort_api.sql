-- sort_api.sql — the SQL surface of sorting: xxl.sort_into, the record and
-- typed forms of xxl.sort, sources (tables, queries, views, partitioned and
-- inheritance parents), identifiers, dropped and added columns, TOAST,
-- the settings, xxl.last_stats() and xxl.log_stats, transactions and the
-- caller's privileges (including row-level security).
\i test/include/begin.sql

-- settings and their defaults
SHOW xxl.memory;
SHOW xxl.block_size;
SHOW xxl.threads;
SHOW xxl.disks;
SHOW xxl.log_stats;
SHOW xxl.direct_io;
-- nothing has run in this session yet
SELECT count(*) FROM xxl.last_stats();

CREATE TABLE sort_t (a int, b text, c numeric);
INSERT INTO sort_t VALUES (3, 'c', 1.5), (1, 'a', NULL), (2, NULL, -2), (NULL, 'n', 0),
                          (2, 'b', 2), (1, 'z', 1e20), (3, 'C', 'NaN');

-- into a new table: returns the row count, keeps names and types
SELECT xxl.sort_into('sort_t', 'a, b COLLATE "C" DESC', 'sort_t_out');
SELECT * FROM sort_t_out ORDER BY ctid;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'sort_t_out'::regclass AND attnum > 0 ORDER BY attnum;
SELECT operator, completed, rows, rows_out, runs, merge_passes,
       memory_limit = pg_size_bytes(current_setting('maintenance_work_mem')) AS memory_is_mwm,
       block_size, threads > 0 AS threads, cardinality(disks) AS ndisks, disks[1],
       bytes_read = ARRAY[0::bigint] AS nothing_read, total_ms >= 0 AS timed
  FROM xxl.last_stats();

-- to the caller: record form with a column definition list, typed form,
-- in FROM and in the select list
SELECT * FROM xxl.sort('sort_t', 'c DESC NULLS LAST') AS s(a int, b text, c numeric);
SELECT * FROM xxl.sort(NULL::sort_t, 'b COLLATE "C" NULLS FIRST');
SELECT xxl.sort(NULL::sort_t, '1 DESC, 3');
SELECT s.b, ordinality FROM xxl.sort(NULL::sort_t, 'b COLLATE "C"') WITH ORDINALITY s WHERE b IS NOT NULL;

-- queries are sources too: SELECT, TABLE, VALUES; the column names come from the query
SELECT * FROM xxl.sort('SELECT a * 10 AS x, b FROM sort_t WHERE a IS NOT NULL', 'x DESC, b COLLATE "C"')
  AS s(x int, b text);
SELECT * FROM xxl.sort('TABLE sort_t', 'c') AS s(a int, b text, c numeric);
SELECT xxl.sort_into('VALUES (2, ''x''), (1, ''y''), (3, NULL)', 'column1 DESC', 'sort_v_out');
SELECT * FROM sort_v_out ORDER BY ctid;

-- a view, an inheritance parent and a partitioned table include what a
-- query on them would
CREATE VIEW sort_view AS SELECT a, b FROM sort_t WHERE a > 1;
SELECT * FROM xxl.sort(NULL::sort_view, 'b COLLATE "C" DESC');
CREATE TABLE sort_parent (v int);
CREATE TABLE sort_child () INHERITS (sort_parent);
INSERT INTO sort_parent VALUES (3), (1);
INSERT INTO sort_child VALUES (2);
SELECT * FROM xxl.sort(NULL::sort_parent, 'v');
CREATE TABLE sort_part (v int) PARTITION BY RANGE (v);
CREATE TABLE sort_part1 PARTITION OF sort_part FOR VALUES FROM (0) TO (10);
CREATE TABLE sort_part2 PARTITION OF sort_part FOR VALUES FROM (10) TO (20);
INSERT INTO sort_part VALUES (15), (5), (12), (1);
SELECT xxl.sort_into('sort_part', 'v DESC', 'sort_part_out');
SELECT * FROM sort_part_out ORDER BY ctid;

-- identifiers: names are read as SQL names (quote mixed case), and the
-- target may be schema-qualified or temporary
CREATE SCHEMA "Sort Schema";
CREATE TABLE "Sort Schema"."Mixed Case" (id int, "Value" text, dropped int, z numeric);
INSERT INTO "Sort Schema"."Mixed Case" SELECT g, 'v' || (g % 4), g, g / 4.0 FROM generate_series(1, 10) g;
-- a dropped column disappears, a column added with a default is filled
-- for old rows as a query would see it
ALTER TABLE "Sort Schema"."Mixed Case" DROP COLUMN dropped;
ALTER TABLE "Sort Schema"."Mixed Case" ADD COLUMN added text DEFAULT 'old';
INSERT INTO "Sort Schema"."Mixed Case" VALUES (11, 'v3', 0, 'new');
SELECT xxl.sort_into('"Sort Schema"."Mixed Case"', '"Value" DESC, id DESC', '"Sort Schema"."Out Table"');
SELECT * FROM "Sort Schema"."Out Table" ORDER BY ctid;
SELECT * FROM xxl.sort(NULL::"Sort Schema"."Mixed Case", 'z DESC') LIMIT 3;
SELECT * FROM xxl.sort('"Sort Schema"."Mixed Case"', 'added, id') AS s(i int, v text, z numeric, a text) LIMIT 3;
SELECT xxl.sort_into('sort_t', 'a', 'pg_temp.sort_tmp_out');
SELECT relpersistence FROM pg_class WHERE oid = 'pg_temp.sort_tmp_out'::regclass;

-- empty input
CREATE TABLE sort_empty (a int, b text);
SELECT xxl.sort_into('sort_empty', 'a', 'sort_empty_out');
SELECT count(*) FROM sort_empty_out;
SELECT count(*) FROM xxl.sort(NULL::sort_empty, 'b');

-- TOASTed values and rows wider than a block round-trip unchanged
SET xxl.memory = '1MB';
SET xxl.block_size = '64kB';
CREATE TABLE sort_wide (k int, v text);
INSERT INTO sort_wide SELECT g, (SELECT string_agg(md5((g * 1000 + x)::text), '') FROM generate_series(1, g * 100) x)
  FROM generate_series(1, 50) g;
SELECT xxl.sort_into('sort_wide', 'k DESC', 'sort_wide_out');
SELECT count(*) AS rows, bool_and(o.v = w.v) AS equal, max(length(o.v)) AS longest
  FROM sort_wide_out o JOIN sort_wide w USING (k);
SELECT pg_relation_size(reltoastrelid) > 0 AS target_toasted FROM pg_class WHERE relname = 'sort_wide_out';
SELECT runs > 1 AS spilled, merge_passes >= 1 AS merged FROM xxl.last_stats();
-- the block size is capped at 1/16 of the budget
SET xxl.block_size = '2MB';
SELECT count(*) FROM xxl.sort(NULL::sort_wide, 'v');
SELECT block_size FROM xxl.last_stats();
RESET xxl.block_size;
RESET xxl.memory;

-- xxl.memory = -1 follows maintenance_work_mem
SET maintenance_work_mem = '3MB';
SELECT count(*) FROM xxl.sort(NULL::sort_t, 'a');
SELECT memory_limit FROM xxl.last_stats();
RESET maintenance_work_mem;

-- spill to directories named in xxl.disks, one file per "disk"
SET xxl.memory = '1MB';
SELECT set_config('xxl.disks', current_setting('data_directory') || '/base/pgsql_tmp,'
                  || current_setting('data_directory') || '/base/pgsql_tmp', false) IS NOT NULL AS set;
SELECT count(*) FROM xxl.sort('SELECT g, md5(g::text) FROM generate_series(1, 30000) g', 'md5')
  AS s(g int, m text);
SELECT cardinality(disks) AS ndisks, bytes_written[1] > 0 AS disk1, bytes_written[2] > 0 AS disk2,
       bytes_read[1] + bytes_read[2] = bytes_written[1] + bytes_written[2] AS read_all_written
  FROM xxl.last_stats();
RESET xxl.disks;
RESET xxl.memory;

-- xxl.log_stats: a NOTICE after each operator (details vary, so terse)
SET xxl.log_stats = on;
\set VERBOSITY terse
SELECT count(*) FROM xxl.sort(NULL::sort_t, 'a');
\set VERBOSITY default
RESET xxl.log_stats;

-- it all happens in the calling transaction
BEGIN;
SELECT xxl.sort_into('sort_t', 'a', 'sort_rolled_back');
SELECT count(*) FROM sort_rolled_back;
ROLLBACK;
SELECT to_regclass('sort_rolled_back');

-- sources are read and targets created with the caller's privileges, and
-- row-level security applies
SELECT pg_temp.xt_role('regress_xxl_owner');
SELECT pg_temp.xt_role('regress_xxl_reader');
CREATE SCHEMA sort_sec AUTHORIZATION regress_xxl_owner;
GRANT USAGE, CREATE ON SCHEMA sort_sec TO regress_xxl_reader;
SET ROLE regress_xxl_owner;
CREATE TABLE sort_sec.rows (owner name, v int);
INSERT INTO sort_sec.rows VALUES ('regress_xxl_owner', 1), ('regress_xxl_reader', 2), ('regress_xxl_reader', 3);
ALTER TABLE sort_sec.rows ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON sort_sec.rows USING (owner = current_user);
GRANT SELECT ON sort_sec.rows TO regress_xxl_reader;
CREATE TABLE sort_sec.private (v int);
SET ROLE regress_xxl_reader;
SELECT * FROM xxl.sort('sort_sec.rows', 'v DESC') AS s(owner name, v int);
SELECT * FROM xxl.sort(NULL::sort_sec.rows, 'v');
SELECT xxl.sort_into('sort_sec.rows', 'v', 'sort_sec.reader_out');
SELECT * FROM sort_sec.reader_out;
SELECT xxl.sort_into('sort_sec.private', 'v', 'sort_sec.stolen');
SELECT * FROM xxl.sort('SELECT * FROM sort_sec.private', 'v') AS s(v int);
SELECT xxl.sort_into('sort_sec.rows', 'v', 'public.not_allowed');
RESET ROLE;
DROP SCHEMA sort_sec CASCADE;
SELECT pg_temp.xt_drop_role('regress_xxl_owner'), pg_temp.xt_drop_role('regress_xxl_reader');

DROP SCHEMA "Sort Schema" CASCADE;
DROP VIEW sort_view;
DROP TABLE sort_t, sort_t_out, sort_v_out, sort_parent CASCADE;
DROP TABLE sort_part, sort_part_out, sort_empty, sort_empty_out, sort_wide, sort_wide_out;
\i test/include/end.sql

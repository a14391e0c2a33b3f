-- spill_limits.sql — temp_file_limit holds for an operator as a whole:
-- graph and text operators open several disk sets (a sorter each, pooled
-- files), and each set used to get the whole limit, so connected
-- components completed with 1.7 times the limit on disk.  spill_peak is
-- the operator's total, and its files count in pg_stat_database as
-- PostgreSQL's own temporary files do.
\i test/include/begin.sql
SELECT setseed(0.5);
-- ids spread out: components cannot go by id (they would stay in memory)
CREATE TABLE sl_edges AS
  SELECT (random() * 300000)::bigint * 1000 AS source, (random() * 300000)::bigint * 1000 AS target
  FROM generate_series(1, 1500000);
SET xxl.memory = '8MB';
SELECT count(*) FROM xxl.connected_components('sl_edges');
SELECT completed, spill_peak > 32 * 1024 * 1024 AS spilled FROM xxl.last_stats();
SELECT spill_peak AS peak FROM xxl.last_stats() \gset

-- 60 % of what the operator needs: refused, with PostgreSQL's error
SELECT set_config('temp_file_limit', (:peak * 6 / 10 / 1024)::text || 'kB', false) IS NOT NULL AS set;
CREATE FUNCTION sl_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '\(\d+kB\)', '(N kB)');
END $$;
SELECT sl_try($$SELECT count(*) FROM xxl.connected_components('sl_edges')$$);
SELECT completed, spill_peak <= :peak * 6 / 10 AS within_limit FROM xxl.last_stats();
SELECT sl_try($$SELECT xxl.connected_components_into('sl_edges', 'sl_cc')$$);
SELECT to_regclass('sl_cc') IS NULL AS no_target,
       (SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp' || pg_backend_pid() || '.xxl%') AS spill_files;
-- enough for the whole operator: it completes
SELECT set_config('temp_file_limit', (:peak / 1024 + 1024)::text || 'kB', false) IS NOT NULL AS set;
SELECT count(*) FROM xxl.connected_components('sl_edges');
SELECT completed FROM xxl.last_stats();
RESET temp_file_limit;

-- the suffix array's spill space is reported (it was 0)
CREATE TABLE sl_text AS SELECT g AS id, md5(g::text) || repeat('ab', g % 5) AS t FROM generate_series(1, 40000) g;
SET xxl.memory = '2MB';
SELECT xxl.suffix_array_into('SELECT t FROM sl_text ORDER BY id', 'sl_sa');
SELECT spill_peak > 0 AS spilled, (SELECT sum(b) FROM unnest(bytes_written) b) > 0 AS wrote FROM xxl.last_stats();

-- spill files count in pg_stat_database like PostgreSQL's temporary files
SELECT pg_stat_force_next_flush();
SELECT temp_files AS files_before, temp_bytes AS bytes_before
FROM pg_stat_database WHERE datname = current_database() \gset
SET xxl.memory = '8MB';
SELECT count(*) FROM xxl.connected_components('sl_edges');
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT temp_files > :files_before AS more_files, temp_bytes - :bytes_before >= :peak AS bytes_counted
FROM pg_stat_database WHERE datname = current_database();

DROP FUNCTION sl_try(text);
DROP TABLE sl_edges, sl_text, sl_sa;
\i test/include/end.sql

-- sort_memory.sql — xxl.memory is a cap, not an allocation: a budget far
-- beyond the input (as users on large servers set it) sorts a few rows
-- without asking the system for the whole budget, and memory_peak reports
-- what the sort used, not what it may use.  A LIMIT that stops the
-- streaming scan early leaves rows_out at the rows handed out.
CREATE EXTENSION pgxxl;
SET xxl.memory = '100GB';
SELECT count(*), min(g), max(g) FROM xxl.sort('SELECT g FROM generate_series(1, 3000) g', 'g DESC') AS s(g int);
SELECT memory_limit = 100::bigint * 1024 * 1024 * 1024 AS limit_is_setting,
       memory_peak < 32 * 1024 * 1024 AS peak_is_small
FROM xxl.last_stats();
SET xxl.memory = '8GB';
SELECT * FROM xxl.sort('SELECT 1 AS g', 'g') AS s(g int);
SELECT memory_peak < 32 * 1024 * 1024 AS peak_is_small FROM xxl.last_stats();
SELECT xxl.sort_into('SELECT g, md5(g::text) AS m FROM generate_series(1, 20000) g', 'm', 'sm_t');
SELECT memory_peak < 32 * 1024 * 1024 AS peak_is_small, runs FROM xxl.last_stats();
-- a small budget: many runs, the peak within the budget
SET xxl.memory = '2MB';
SELECT count(*) FROM xxl.sort('SELECT g, md5(g::text) AS m FROM generate_series(1, 300000) g', 'm') AS s(g int, m text);
SELECT runs > 1 AS external, memory_peak <= memory_limit AS within, memory_peak > memory_limit / 4 AS used
FROM xxl.last_stats();
-- a LIMIT stops the scan: rows_out counts what went out
SET xxl.memory = '64MB';
SELECT * FROM xxl.sort('SELECT g FROM generate_series(1, 3000) g', 'g') AS s(g int) LIMIT 3;
SELECT operator, completed, rows, rows_out FROM xxl.last_stats();
DROP TABLE sm_t;
DROP EXTENSION pgxxl;

-- sort_memory.sql — xxl.memory is a cap, not an allocation: a budget far
-- beyond the input (as users on large servers set it) sorts a few rows
-- without asking the system for the whole budget, and memory_peak reports
-- what the sort used, not what it may use; its I/O per input byte.  The
-- graph and text operators at the end, the same.  A LIMIT that stops the
-- streaming scan early leaves rows_out at the rows handed out.
\i test/include/begin.sql
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
-- its I/O per byte of input (the records it sorted): the runs written once,
-- read back by the merge
SELECT (details->>'input_bytes')::bigint > 300000 * 32 AS input_counted,
	(details->>'written_per_input')::float8 BETWEEN 0.9 AND 3 AS written_per_input,
	(details->>'written_per_input')::float8 = round(bytes_written[1]::numeric / (details->>'input_bytes')::bigint, 2)::float8
		AS written_is_ratio,
	(details->>'read_per_input')::float8 = round(bytes_read[1]::numeric / (details->>'input_bytes')::bigint, 2)::float8
		AS read_is_ratio
FROM xxl.last_stats();
-- a LIMIT stops the scan: rows_out counts what went out
SET xxl.memory = '64MB';
SELECT * FROM xxl.sort('SELECT g FROM generate_series(1, 3000) g', 'g') AS s(g int) LIMIT 3;
SELECT operator, completed, rows, rows_out FROM xxl.last_stats();
-- graph and text operators under a budget far beyond their input
SET xxl.memory = '100GB';
SELECT count(*) FROM xxl.connected_components('SELECT g AS source, g + 1 AS target FROM generate_series(1, 1000) g');
SELECT memory_peak < 32 * 1024 * 1024 AS peak_is_small FROM xxl.last_stats();
SELECT count(*) FROM xxl.minimum_spanning_forest('SELECT g AS id, g AS source, g + 1 AS target, 1.0 AS cost FROM generate_series(1, 1000) g');
SELECT memory_peak < 32 * 1024 * 1024 AS peak_is_small FROM xxl.last_stats();
SELECT count(*) FROM xxl.suffix_array(convert_to(repeat('abracadabra', 1000), 'UTF8'));
SELECT memory_peak < 32 * 1024 * 1024 AS peak_is_small FROM xxl.last_stats();
SELECT * FROM xxl.bwt('banana'::bytea);
-- a small budget: the graph's peak stays within it and is not just the plan
SET xxl.memory = '8MB';
SELECT count(*) FROM xxl.connected_components('SELECT (g::bigint * 7919) % 50000 AS source, (g::bigint * 104729) % 50000 AS target FROM generate_series(1, 400000) g');
SELECT memory_peak <= memory_limit AS within, memory_peak > 0 AS counted FROM xxl.last_stats();
DROP TABLE sm_t;
\i test/include/end.sql

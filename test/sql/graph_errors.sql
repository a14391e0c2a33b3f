-- graph_errors.sql — bad input to the graph functions gives an error with a
-- fitting SQLSTATE that names the problem, and leaves nothing behind: no
-- target table, no spill file, a usable session.  Errors are also raised
-- late (after much input was spilled, on the external path) and by a cancel.
--
-- xt_try() runs a statement in a subtransaction and shows
-- "SQLSTATE: message" (spill file names, which contain the backend's PID,
-- are normalized); a few errors are also shown at top level for their
-- DETAIL, HINT and CONTEXT.
\i test/include/begin.sql
\i test/include/helpers.sql
-- spill files of this backend, and targets that must not exist

CREATE TABLE graph_edges (id bigint, source bigint, target bigint, cost float8, label text);
INSERT INTO graph_edges VALUES (1, 1, 2, 1.0, 'a'), (2, 2, 3, 2.0, 'b');
CREATE TABLE graph_err_exists (a int);

-- arguments
SELECT xt_try($$SELECT * FROM xxl.connected_components(NULL)$$);
SELECT xt_try($$SELECT xxl.spanning_forest_into('graph_edges', NULL)$$);
SELECT xt_try($$SELECT xxl.minimum_spanning_forest_into(NULL, 'graph_err_out')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('')$$);

-- edges that cannot be read
SELECT xt_try($$SELECT * FROM xxl.connected_components('no_such_table')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('no_such_schema.edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELEC source, target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source, target FROM graph_edges WHERE nope')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source, target / 0 AS target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('DELETE FROM graph_edges RETURNING source, target')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT 1 AS source, 2 AS target; SELECT 3, 4')$$);

-- missing, ambiguous and mistyped columns
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.spanning_forest('SELECT source AS src, target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT source, target, cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source, target, target AS source FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT label AS source, target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source, cost AS target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source::numeric, target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT cost AS id, source, target, cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, label AS cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, cost > 1 AS cost FROM graph_edges')$$);

-- NULL ids and costs, NaN costs, costs out of range
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT source, NULLIF(target, 3) AS target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.spanning_forest('SELECT NULL::int AS source, target FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT NULLIF(id, 2) AS id, source, target, cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, NULLIF(cost, 2) AS cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, cost * ''NaN'' AS cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, ''NaN''::real AS cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, ''NaN''::numeric AS cost FROM graph_edges')$$);
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, 1e400::numeric AS cost FROM graph_edges')$$);
-- ... but a NULL cost or id is fine where they are not read
SELECT xt_try($$SELECT * FROM xxl.connected_components('SELECT NULL::int AS id, source, target, NULL::float8 AS cost FROM graph_edges')$$);

-- targets
SELECT xt_try($$SELECT xxl.connected_components_into('graph_edges', 'graph_err_exists')$$);
SELECT xt_try($$SELECT xxl.connected_components_into('graph_edges', 'graph_edges')$$);
SELECT xt_try($$SELECT xxl.connected_components_into('graph_edges', 'graph err out')$$);
SELECT xt_try($$SELECT xxl.connected_components_into('graph_edges', 'no_such_schema.graph_err_out')$$);
SELECT xt_try($$SELECT xxl.minimum_spanning_forest_into('SELECT id, source, target, NULL::float8 AS cost FROM graph_edges', 'graph_err_out')$$);
SELECT xt_leftovers('graph_err_out');

-- the same at top level, with detail, hint and context
SELECT * FROM xxl.connected_components('SELECT source AS src, target FROM graph_edges');
SELECT * FROM xxl.connected_components('SELECT label AS source, target FROM graph_edges');
SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, NULLIF(cost, 2) AS cost FROM graph_edges');
SELECT * FROM xxl.minimum_spanning_forest('SELECT id, source, target, cost * ''NaN'' AS cost FROM graph_edges');
SELECT * FROM xxl.connected_components('SELECT source, target / 0 AS target FROM graph_edges');
SELECT xxl.spanning_forest_into('no_such_table', 'graph_err_out');
SELECT xxl.connected_components_into('graph_edges', 'graph_err_exists');

-- late errors on the external path at the smallest budget, after much of
-- the input was spilled: nothing is left behind
SET xxl.memory = '1MB';
SELECT xt_try($$SELECT xxl.connected_components_into('SELECT i AS source, CASE WHEN i < 150000 THEN i + 1 END AS target FROM generate_series(1, 150000) i', 'graph_err_out')$$);
SELECT xt_try($$SELECT xxl.minimum_spanning_forest_into('SELECT i AS id, i AS source, i + 1 AS target, CASE WHEN i < 150000 THEN i::float8 ELSE ''NaN'' END AS cost FROM generate_series(1, 150000) i', 'graph_err_out')$$);
SELECT completed, rows FROM xxl.last_stats();
SELECT xt_leftovers('graph_err_out');
-- temp_file_limit, and a spill disk that fills up
SET temp_file_limit = '256kB';
SELECT xt_try($$SELECT xxl.connected_components_into('SELECT i AS source, i + 1 AS target FROM generate_series(1, 150000) i', 'graph_err_out')$$);
RESET temp_file_limit;
SET xxl.debug_fail_writes_after = '256kB';
SELECT xt_try($$SELECT * FROM xxl.minimum_spanning_forest('SELECT i AS id, i AS source, i + 1 AS target, 1.0 AS cost FROM generate_series(1, 150000) i')$$);
RESET xxl.debug_fail_writes_after;
SELECT xt_leftovers('graph_err_out');

-- cancel (here by statement_timeout) while the edges are read: the real
-- cancel error, no target, no spill files, and the session goes on
SET statement_timeout = '300ms';
SELECT xxl.connected_components_into('SELECT i AS source, i + 1 AS target FROM generate_series(1, 1000000000) i', 'graph_err_out');
RESET statement_timeout;
SELECT completed FROM xxl.last_stats();
SELECT xt_leftovers('graph_err_out');

-- an error after the function, in the same transaction, takes the target away
BEGIN;
SELECT xxl.connected_components_into('graph_edges', 'graph_err_out');
SELECT 1 / 0;
ROLLBACK;
SELECT xt_leftovers('graph_err_out');
-- and the session still works
RESET xxl.memory;
SELECT xxl.connected_components_into('graph_edges', 'graph_err_out_ok');
TABLE graph_err_out_ok;
SELECT completed, rows, rows_out FROM xxl.last_stats();

DROP TABLE graph_edges, graph_err_exists, graph_err_out_ok;
DROP FUNCTION xt_try, xt_differ, xt_leftovers;
\i test/include/end.sql

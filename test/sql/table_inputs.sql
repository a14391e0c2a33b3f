-- table_inputs.sql — the graph operators read an edge table straight from
-- its pages: an xxl table's rows of fixed width in place (others
-- unpacked, no slot), and a heap's tuples without NULLs in place when the
-- columns up to the last one read have fixed widths.  Every answer is
-- checked against the same call on a heap copy (xxl) or on the same rows
-- through a query (heap: SPI), for integer columns of each width, float and
-- integer costs, a column added after some rows were written, dropped
-- columns, a text column before or after the needed ones, deleted rows,
-- and rows with NULLs and NaN, which must fail the same way (same
-- SQLSTATE, same row number).
\i test/include/begin.sql
\i test/include/helpers.sql
-- errors name the table: the same message for the xxl table and its heap copy
SET xt.hide_tables = '"ti_[a-z0-9]+"';
-- the same call's rows on the xxl table and on the heap copy (as multisets)
CREATE FUNCTION ti_same(call text, x text, h text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; d bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM (%s) s', format(call, x)) INTO n;
  d := xt_differ(format(call, x), format(call, h));
  RETURN format('%s rows, %s differing', n, d);
END $$;

-- columns of every integer width and float costs; some rows deleted
CREATE TABLE ti_e (id bigint, source int, target smallint, cost double precision,
                   reverse_cost real) USING xxl;
INSERT INTO ti_e SELECT g, g % 500, (g * 13 + g / 500 * 37 + 5) % 500, (g % 17) / 4.0, ((g % 5) - 1)::real
FROM generate_series(1, 3000) g;
DELETE FROM ti_e WHERE id % 10 = 3;
CREATE TABLE ti_h AS SELECT * FROM ti_e;
SELECT ti_same('SELECT * FROM xxl.connected_components(%L)', 'ti_e', 'ti_h') AS components;
SELECT ti_same('SELECT * FROM xxl.spanning_forest(%L)', 'ti_e', 'ti_h') AS forest;
SELECT ti_same('SELECT * FROM xxl.minimum_spanning_forest(%L)', 'ti_e', 'ti_h') AS msf;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 7)', 'ti_e', 'ti_h') AS paths;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 7, false)', 'ti_e', 'ti_h') AS paths_undirected;
SELECT ti_same('SELECT * FROM xxl.bfs(%L, 7)', 'ti_e', 'ti_h') AS bfs;
SELECT ti_same('SELECT * FROM xxl.dijkstra(%L, 7, 300)', 'ti_e', 'ti_h') AS dijkstra;
-- integer costs
CREATE TABLE ti_ie (id int, source bigint, target bigint, cost int) USING xxl;
INSERT INTO ti_ie SELECT g, g % 200, (g * 3) % 200, g % 9 FROM generate_series(1, 1000) g;
CREATE TABLE ti_ih AS SELECT * FROM ti_ie;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 1, false)', 'ti_ie', 'ti_ih') AS int_costs;
-- a column added after rows were written: older pages lack it (its default)
CREATE TABLE ti_a (source bigint, target bigint) USING xxl;
INSERT INTO ti_a SELECT g, g + 1 FROM generate_series(1, 500) g;
ALTER TABLE ti_a ADD COLUMN cost double precision DEFAULT 2.5;
ALTER TABLE ti_a ADD COLUMN id bigint DEFAULT 0;
INSERT INTO ti_a SELECT g, g + 1, 1, g FROM generate_series(501, 1000) g;
CREATE TABLE ti_ah AS SELECT * FROM ti_a;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 1)', 'ti_a', 'ti_ah') AS added_column;
SELECT max(distance) AS farthest FROM xxl.shortest_paths('ti_a', 1);
-- a table with a column of variable width (text) goes through the scan's slots
CREATE TABLE ti_v (source bigint, label text, target bigint) USING xxl;
INSERT INTO ti_v SELECT g % 300, repeat('x', g % 7), (g * 11) % 300 FROM generate_series(1, 2000) g;
CREATE TABLE ti_vh AS SELECT * FROM ti_v;
SELECT ti_same('SELECT * FROM xxl.connected_components(%L)', 'ti_v', 'ti_vh') AS variable_rows;

-- heap tables, against the same rows read through a query (or another table)
-- (the columns read come first: in place, but for the tuples with a NULL note)
CREATE TABLE ti_hp (id bigint, source int, target smallint, cost real, note text);
INSERT INTO ti_hp SELECT g, g % 300, (g * 11 + g / 300) % 300, (g % 13) / 2.0,
  CASE WHEN g % 7 = 0 THEN NULL ELSE 'n' END FROM generate_series(1, 3000) g;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 3, false)', 'ti_hp', 'SELECT * FROM ti_hp') AS heap_in_place;
-- (a text column first: every tuple the general way)
CREATE TABLE ti_ht (note text, source int, target smallint, cost real, id bigint);
INSERT INTO ti_ht SELECT note, source, target, cost, id FROM ti_hp;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 3, false)', 'ti_ht', 'SELECT * FROM ti_hp') AS heap_text_first;
CREATE TABLE ti_hq (id bigint, source int, dropme bigint, target smallint, cost real, note text);
INSERT INTO ti_hq SELECT g, g % 300, g, (g * 11 + g / 300) % 300, (g % 13) / 2.0,
  CASE WHEN g % 5 = 0 THEN NULL ELSE 'n' END FROM generate_series(1, 3000) g;
ALTER TABLE ti_hq DROP COLUMN dropme;
INSERT INTO ti_hq SELECT g, g % 300, (g * 11 + g / 300) % 300, 1, 'new' FROM generate_series(3001, 3500) g;
ALTER TABLE ti_hq ADD COLUMN reverse_cost double precision DEFAULT 0.5;
INSERT INTO ti_hq SELECT g, g % 300, (g * 17) % 300, 2, 'newer', -1 FROM generate_series(3501, 4000) g;
SELECT ti_same('SELECT * FROM xxl.shortest_paths(%L, 3)', 'ti_hq', 'SELECT * FROM ti_hq') AS heap_dropped_added;
SELECT ti_same('SELECT * FROM xxl.minimum_spanning_forest(%L)', 'ti_hq', 'SELECT * FROM ti_hq') AS heap_msf;

-- the sorter reads xxl tables of by-value columns from their pages too:
-- its rows in order equal ORDER BY over a heap copy (NULLs, an added
-- column, deleted rows, a key that is not the table's order key)
CREATE TABLE ti_s (a bigint, b int, c double precision) USING xxl;
SELECT xxl.alter_table_set('ti_s', 'b');
INSERT INTO ti_s SELECT (g * 7919) % 10007, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 97 END, g / 3.0
FROM generate_series(1, 20000) g;
ALTER TABLE ti_s ADD COLUMN d smallint DEFAULT 7;
INSERT INTO ti_s SELECT g, g % 5, -g, (g % 3)::smallint FROM generate_series(1, 500) g;
DELETE FROM ti_s WHERE a % 13 = 0;
CREATE TABLE ti_sh AS SELECT * FROM ti_s;
SET xxl.memory = '1MB';
SELECT (SELECT md5(string_agg(format('%s %s %s %s', a, b, c, d), ','))
        FROM xxl.sort('ti_s', 'a DESC, b NULLS FIRST, c, d') AS s(a bigint, b int, c double precision, d smallint)) =
       (SELECT md5(string_agg(format('%s %s %s %s', a, b, c, d), ',' ORDER BY a DESC, b NULLS FIRST, c, d)) FROM ti_sh)
  AS sorted_same;
SELECT operator, rows = (SELECT count(*) FROM ti_sh) AS every_row FROM xxl.last_stats();
RESET xxl.memory;
SELECT count(*) AS into_rows FROM (SELECT xxl.sort_into('ti_s', 'c', 'ti_sorted')) s;
SELECT (SELECT array_agg(c ORDER BY c) FROM ti_sh) = (SELECT array_agg(c) FROM ti_sorted) AS into_same;

-- bad rows fail as on heap: the same SQLSTATE and row number
CREATE TABLE ti_n (id bigint, source bigint, target bigint, cost double precision) USING xxl;
INSERT INTO ti_n SELECT g, g, g + 1, 1 FROM generate_series(1, 100) g;
INSERT INTO ti_n VALUES (101, NULL, 5, 1);
CREATE TABLE ti_nh AS SELECT * FROM ti_n;
SELECT xt_try($$SELECT count(*) FROM xxl.connected_components('ti_n')$$) AS null_xxl;
SELECT xt_try($$SELECT count(*) FROM xxl.connected_components('ti_nh')$$) AS null_heap;
DELETE FROM ti_n WHERE id = 101;
DELETE FROM ti_nh WHERE id = 101;
INSERT INTO ti_n VALUES (102, 1, 2, 'NaN');
INSERT INTO ti_nh VALUES (102, 1, 2, 'NaN');
SELECT xt_try($$SELECT count(*) FROM xxl.shortest_paths('ti_n', 1)$$) AS nan_xxl;
SELECT xt_try($$SELECT count(*) FROM xxl.shortest_paths('ti_nh', 1)$$) AS nan_heap;
SELECT xxl.compact('ti_n') AS merged;
SELECT xt_try($$SELECT count(*) FROM xxl.shortest_paths('ti_n', 1)$$) AS nan_after_compact;

DROP TABLE ti_e, ti_h, ti_ie, ti_ih, ti_a, ti_ah, ti_v, ti_vh, ti_n, ti_nh, ti_hp, ti_ht, ti_hq, ti_s, ti_sh, ti_sorted;
DROP FUNCTION xt_try, xt_differ, xt_leftovers, ti_same;
RESET xt.hide_tables;
\i test/include/end.sql

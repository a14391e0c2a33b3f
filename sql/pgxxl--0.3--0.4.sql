/*
 * pgxxl--0.3--0.4.sql — from 0.3 to 0.4: the table access method xxl, its
 * settings table, xxl.alter_table_set and xxl.compact.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.4'" to load this file. \quit

-- The table access method xxl (src/pg/table/, docs/table.md) -----------------
-- Dense storage in immutable segments, one per statement, sorted by the
-- table's order key when it has one.

CREATE FUNCTION xxl.table_am_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'xxl_table_am_handler'
LANGUAGE C;

CREATE ACCESS METHOD xxl TYPE TABLE HANDLER xxl.table_am_handler;
COMMENT ON ACCESS METHOD xxl IS
	'pgxxl tables: dense immutable segments, each sorted by the table''s order key (docs/table.md)';

-- Per-table settings.  pg_dump dumps the rows (pg_extension_config_dump),
-- so a restore keeps them; relation prints as a qualified name there.
CREATE TABLE xxl.table_options (
	relation regclass PRIMARY KEY,
	order_by text NOT NULL
);
COMMENT ON TABLE xxl.table_options IS
	'settings of xxl tables, set with xxl.alter_table_set (order_by: what follows ORDER BY)';
SELECT pg_catalog.pg_extension_config_dump('xxl.table_options', '');
GRANT SELECT ON xxl.table_options TO PUBLIC;

CREATE FUNCTION xxl.alter_table_set(relation regclass, order_by text)
RETURNS void
AS 'MODULE_PATHNAME', 'xxl_alter_table_set'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.alter_table_set(regclass, text) IS
	'declare the order key of an xxl table (ORDER BY syntax; NULL removes it): new rows go in sorted by it';

CREATE FUNCTION xxl.compact(relation regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_compact'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.compact(regclass) IS
	'merge every segment of an xxl table into one, sorted by its order key (as VACUUM FULL, under an ACCESS EXCLUSIVE lock); returns the segments merged';

-- A dropped table's settings go with it (an OID can come back for another table).
CREATE FUNCTION xxl.forget_dropped_tables()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	DELETE FROM xxl.table_options o
	USING pg_event_trigger_dropped_objects() d
	WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0 AND o.relation::oid = d.objid;
END
$$;

CREATE EVENT TRIGGER xxl_forget_dropped_tables ON sql_drop
	EXECUTE FUNCTION xxl.forget_dropped_tables();

/*
 * pgxxl--0.6--0.7.sql — from 0.6 to 0.7: the settings of xxl tables are
 * kept in step by the library's object access hook instead of an event
 * trigger (which ran with the dropping user's rights and so refused every
 * DROP of a non-superuser); pg_dump skips rows of relations that are gone
 * or temporary; order keys are stored in canonical form (quoted names,
 * never positions), which renames of key columns rewrite.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.7'" to load this file. \quit

DROP EVENT TRIGGER xxl_forget_dropped_tables;
DROP FUNCTION xxl.forget_dropped_tables();

-- The object access hook above needs the library loaded when a DROP or
-- ALTER runs, and a session that never opened an xxl table has not loaded
-- it yet: this trigger loads it before any DDL.  It does nothing else, so
-- it can neither fail nor need a right.
CREATE FUNCTION xxl.load_library()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'xxl_load_library'
LANGUAGE C;

CREATE EVENT TRIGGER xxl_load_library ON ddl_command_start
	EXECUTE FUNCTION xxl.load_library();

SELECT pg_catalog.pg_extension_config_dump('xxl.table_options',
	'WHERE relation::oid IN (SELECT oid FROM pg_catalog.pg_class WHERE relpersistence <> ''t'')');

-- rows the event trigger missed (temporary tables dropped at session end)
DELETE FROM xxl.table_options
WHERE relation::oid NOT IN (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid = c.relam
                            WHERE a.amname = 'xxl');
-- keys in canonical form
SELECT xxl.alter_table_set(relation, order_by) FROM xxl.table_options;
